// GPU parity test: runs include/gorge/glsl/gorge.glsl in a Vulkan compute shader (parity.comp,
// compiled to SPIR-V at build time, once per hash policy) - or, given their directory and prefix
// (see Usage), the same rows in include/gorge/hlsl/gorge.hlsl (tests/hlsl/parity.hlsl, compiled by
// glslang's HLSL front end) - and compares each output with gorge's C++ float path on the same
// inputs:
// the rows of tests/support/parity_rows.hpp (every reference row, prime_mix and prime_xor lattice
// blocks of 64x64, the filter at steep slopes against the C++ float and double paths, the noise
// fields, a 512x512 demo tile for pcg3d and a 128x128 one for prime_mix and for prime_xor), with
// the tolerances written there.
// An output whose C++ values are all equal fails the test (the comparison would prove nothing),
// unless its group marks it constant by design (perlin noise's value at lattice points).
// It prints the worst error of every output, and, for information, the GPU's worst error against
// the double-precision reference values.
//
// Exit codes: 0 pass, 1 fail, 77 skipped because the machine has no Vulkan device (ctest's
// SKIP_RETURN_CODE), or because GORGE_PARITY_NEEDS_SUBGROUPS=1 is set (shaders built with
// GORGE_SUBGROUPS) and the device has no subgroup vote, ballot and shuffle in compute shaders.
// With GORGE_VULKAN_REQUIRED=1 in the environment a missing device is a failure instead, for CI
// machines that are meant to have one (Mesa's lavapipe).
//
// Usage: test_glsl_parity [SPIR-V directory [file prefix [port name]]]
//   runs <directory>/<prefix><hash>.spv for hash = pcg3d, shadertoy, prime_mix and prime_xor; the
//   defaults are the GLSL shaders of this build (prefix "parity_", port name "gorge.glsl"); ctest's
//   hlsl_parity passes tests/hlsl's build directory, "hlsl_parity_" and "gorge.hlsl".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/parity_rows.hpp"
#include "vulkan_compute.hpp"

#ifndef GORGE_PARITY_SPIRV_DIR
#error "GORGE_PARITY_SPIRV_DIR must name the folder of the compiled parity shaders"
#endif

namespace {

using namespace gorge_test::parity;

constexpr row_sizes vulkan_sizes{512, 128, 64};

/// What the comparison found for one output of one group.
struct output_tally {
    double worst = 0.0;
    std::size_t worst_line = 0;
    double worst_reference = 0.0;
    std::size_t mismatches = 0;
    std::size_t compared = 0;
    std::size_t referenced = 0;                     // rows with a reference value (for "vs ref")
    float cpu_min = INFINITY, cpu_max = -INFINITY;  // a constant output would make the check vacuous
};

std::vector<float> run_on_gpu(gorge_vk::context& ctx, const std::string& spirv, const batch& b) {
    using gorge_vk::buffer;
    const std::size_t n = b.group_of.size();
    buffer rows(ctx, b.words.size() * sizeof(std::uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, buffer::memory::host_visible);
    buffer results(ctx, n * out_words * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, buffer::memory::host_visible);
    std::memcpy(rows.data(), b.words.data(), b.words.size() * sizeof(std::uint32_t));
    std::memset(results.data(), 0xff, n * out_words * sizeof(float));  // NaN until written
    gorge_vk::compute_pipeline pipeline(ctx, spirv, 2, sizeof(std::uint32_t));
    pipeline.bind({&rows, &results});
    gorge_vk::command_buffer cmd(ctx);
    VkCommandBuffer c = cmd.begin();
    const std::uint32_t count = static_cast<std::uint32_t>(n);
    const std::uint32_t local_size = 64;  // parity.comp's local_size_x
    pipeline.record_dispatch(c, &count, (count + local_size - 1) / local_size);
    gorge_vk::transfer_to_host_barrier(c);
    cmd.submit_and_wait();
    std::vector<float> out(n * out_words);
    std::memcpy(out.data(), results.data(), out.size() * sizeof(float));
    return out;
}

void compare(const batch& b, const std::vector<float>& gpu, const group_table& table,
             std::vector<std::vector<output_tally>>& tallies) {
    for (std::size_t r = 0; r < b.group_of.size(); ++r) {
        const group& g = table.groups[b.group_of[r]];
        const float* got = &gpu[r * out_words];
        for (std::size_t oi = 0; oi < g.outputs.size(); ++oi) {
            const output_spec& o = g.outputs[oi];
            output_tally& t = tallies[b.group_of[r]][oi];
            const float gv = got[o.slot];
            const float cv = b.cpu[r][std::size_t(o.slot)];
            ++t.compared;
            if (o.vs_double) {
                const double dv = b.reference[r][std::size_t(o.slot)];
                t.cpu_min = std::min(t.cpu_min, float(dv));
                t.cpu_max = std::max(t.cpu_max, float(dv));
                const double err = std::fabs(double(gv) - dv);
                if (!(err <= o.tolerance)) ++t.mismatches;
                if (!(err <= t.worst)) {
                    t.worst = err;
                    t.worst_line = b.line[r];
                }
                continue;
            }
            t.cpu_min = std::min(t.cpu_min, cv);
            t.cpu_max = std::max(t.cpu_max, cv);
            const double err = o.tolerance < 0 ? (bits_of(gv) == bits_of(cv) ? 0.0 : std::fabs(double(gv) - double(cv)))
                                               : std::fabs(double(gv) - double(cv));
            const bool bad = o.tolerance < 0 ? bits_of(gv) != bits_of(cv) : !(err <= o.tolerance);
            if (bad) ++t.mismatches;
            if (!(err <= t.worst)) {
                t.worst = err;
                t.worst_line = b.line[r];
            }
            const double ref = b.reference[r][std::size_t(o.slot)];
            if (std::isnan(ref)) continue;
            ++t.referenced;
            t.worst_reference = std::max(t.worst_reference, std::fabs(double(gv) - ref));
        }
    }
}

// Size of the block GORGE_PARITY_LEAK_PROBE leaks.
constexpr std::size_t gpu_probe_floats = 1000;
volatile std::uintptr_t leak_probe_sink = 0;

}  // namespace

int main(int argc, char** argv) {
    const std::string spirv_dir = argc > 1 ? argv[1] : GORGE_PARITY_SPIRV_DIR;
    const std::string spirv_prefix = argc > 2 ? argv[2] : "parity_";
    const std::string port = argc > 3 ? argv[3] : "gorge.glsl";
    const char* required = std::getenv("GORGE_VULKAN_REQUIRED");
    const bool must_run = required && *required && std::strcmp(required, "0") != 0;
    // GORGE_PARITY_LEAK_PROBE=1 leaks one block on purpose after the comparison: ctest runs the
    // test so in sanitizer builds and expects it to fail, which proves that keeping the driver
    // libraries loaded (keep_driver_modules.cpp) and lsan.supp leave a leak of this program visible.
    const char* probe = std::getenv("GORGE_PARITY_LEAK_PROBE");
    const bool leak_probe = probe && std::strcmp(probe, "1") == 0;
    try {
        std::unique_ptr<gorge_vk::context> ctx;
        try {
            ctx = std::make_unique<gorge_vk::context>("gorge shader parity test");
        } catch (const gorge_vk::no_device& e) {
            std::printf("%s: %s\n", must_run ? "FAIL (GORGE_VULKAN_REQUIRED is set)" : "SKIP", e.what());
            std::printf("This test runs %s on a Vulkan device; install a driver (e.g. Mesa's lavapipe,\n"
                        "Debian: mesa-vulkan-drivers) to run it.\n",
                        port.c_str());
            return must_run ? 1 : 77;
        }
        std::printf("Vulkan device: %s\n", ctx->description().c_str());
        const char* needs_subgroups = std::getenv("GORGE_PARITY_NEEDS_SUBGROUPS");
        if (needs_subgroups && std::strcmp(needs_subgroups, "1") == 0) {
            const std::uint32_t subgroup_size = ctx->compute_subgroup_size();
            if (subgroup_size == 0) {
                std::printf("SKIP: the device offers no subgroup vote, ballot and shuffle to compute shaders, "
                            "which these shaders (GORGE_SUBGROUPS) need\n");
                return 77;
            }
            std::printf("subgroups of %u invocations\n", subgroup_size);
        }

        group_table table;
        const std::vector<batch> batches = build_batches(vulkan_sizes, table);
        std::vector<std::vector<output_tally>> tallies;
        for (const group& g : table.groups) tallies.emplace_back(g.outputs.size());
        bool ok = true;
        for (const batch& b : batches) {
            const std::vector<float> gpu = run_on_gpu(*ctx, spirv_dir + "/" + spirv_prefix + b.hash + ".spv", b);
            compare(b, gpu, table, tallies);
        }

        std::printf("\nGPU (%s) against the C++ float path (\"vs double\": the C++ double path) on the same inputs:\n",
                    port.c_str());
        std::printf("  %-34s %-22s %9s %11s %-10s %9s %9s\n", "rows", "output", "compared", "worst", "at", "tolerance",
                    "vs ref");
        double worst_value = 0.0, worst_ridge = 0.0, worst_scaled = 0.0, worst_scaled_share = 0.0;
        double worst_steep_height = 0.0, worst_steep_ridge = 0.0;
        for (std::size_t gi = 0; gi < table.groups.size(); ++gi) {
            const group& g = table.groups[gi];
            for (std::size_t oi = 0; oi < g.outputs.size(); ++oi) {
                const output_spec& o = g.outputs[oi];
                const output_tally& t = tallies[gi][oi];
                if (t.compared == 0) continue;
                char tol[32];
                if (o.tolerance < 0)
                    std::snprintf(tol, sizeof tol, "bit-exact");
                else
                    std::snprintf(tol, sizeof tol, "%.1e", o.tolerance);
                char at[32] = "-";
                const std::size_t side = std::size_t(vulkan_sizes.tile_size);
                if (t.worst == 0.0)
                    ;
                else if (g.line_kind == "point")
                    std::snprintf(at, sizeof at, "point %zu", t.worst_line);
                else if (g.line_kind == "sample")
                    std::snprintf(at, sizeof at, "(%zu,%zu)", t.worst_line % side, t.worst_line / side);
                else
                    std::snprintf(at, sizeof at, "line %zu", t.worst_line);
                char ref[32] = "-";
                if (g.line_kind[0] == 'l' && t.referenced > 0)
                    std::snprintf(ref, sizeof ref, "%.2e", t.worst_reference);
                std::printf("  %-34s %-22s %9zu %11.3e %-10s %9s %9s%s\n", g.name.c_str(), o.name.c_str(), t.compared,
                            t.worst, at, tol, ref, t.mismatches ? "   <-- FAIL" : "");
                if (t.mismatches) {
                    std::printf("    %zu of %zu outside the tolerance\n", t.mismatches, t.compared);
                    ok = false;
                }
                if (!(t.cpu_max > t.cpu_min) && !o.constant) {
                    std::printf("    the C++ values are all equal (%g): the comparison would prove nothing   <-- FAIL\n",
                                double(t.cpu_min));
                    ok = false;
                }
                if (o.vs_double) {
                    double& worst = o.tolerance == steep_ridge_tolerance ? worst_steep_ridge : worst_steep_height;
                    worst = std::max(worst, t.worst);
                } else if (o.tolerance == ridge_tolerance) {
                    worst_ridge = std::max(worst_ridge, t.worst);
                } else if (o.tolerance <= value_tolerance) {
                    worst_value = std::max(worst_value, t.worst);
                } else {  // frequency- or range-scaled tolerances
                    worst_scaled = std::max(worst_scaled, t.worst);
                    worst_scaled_share = std::max(worst_scaled_share, t.worst / o.tolerance);
                }
            }
        }
        std::printf("\nworst |GPU - C++ float|: %.3e on the outputs held to 1e-4 (or bit-exact); %.3e on ridge maps;\n"
                    "%.3e on fractal gradients and Hessians (scaled tolerances), at most %.1f%% of its tolerance\n",
                    worst_value, worst_ridge, worst_scaled, 100.0 * worst_scaled_share);
        std::printf("worst |GPU - C++ double| at |slope| 1e-6..1e12: %.3e on height_delta (tolerance %.0e), %.3e on\n"
                    "ridge_map (tolerance %.0e)\n",
                    worst_steep_height, steep_height_tolerance, worst_steep_ridge, steep_ridge_tolerance);
        std::printf("(\"vs ref\" is the GPU's worst error against the double-precision reference, for information;\n"
                    " \"*\": the inputs of the pcg3d rows, run with a hash that has no reference values)\n");
        std::printf("%s\n", ok ? "PASS" : "FAIL");
        if (leak_probe) {
            // Hide the only pointer (stored inverted) so that no root keeps the block reachable.
            leak_probe_sink = reinterpret_cast<std::uintptr_t>(new std::vector<float>(gpu_probe_floats)) ^
                              ~std::uintptr_t(0);
            std::printf("GORGE_PARITY_LEAK_PROBE: leaked %zu floats on purpose\n", gpu_probe_floats);
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
}
