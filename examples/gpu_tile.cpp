// gpu_tile — the published erosion demo terrain generated on the GPU through Vulkan compute, with
// gorge's GLSL include (include/gorge/glsl/gorge.glsl), read back and written as the CPU demo
// writes it; prints the GPU's throughput measured with timestamp queries (compute time only).
//
// Usage: gpu_tile [size=4096] [seed=0] [repeats=20] [workgroup=16x16] [--no-images] [--hash NAME]
//                 [--no-subgroups]
//   --hash NAME                pcg3d (the default), prime_mix or prime_xor: the hash policy of the
//                              shader (gpu_tile_<NAME>.spv; gpu_tile.spv for pcg3d) and of the C++
//                              check
//   --no-subgroups             the shader without GORGE_SUBGROUPS, which is otherwise used where the
//                              device offers subgroup vote, ballot and shuffle to compute shaders
//                              (the files are then gpu_tile_subgroups.spv, gpu_tile_<NAME>_subgroups.spv)
//   gpu_tile_height.png        8-bit grayscale height
//   gpu_tile_height.r16        16-bit little-endian raw height (Unity / Unreal heightmap import)
//   gpu_tile_ridge_map.png     the filter's ridge map (black creases, white ridges)
//   gpu_tile_relief.png        shaded relief of the eroded terrain
//   gpu_tile_relief_input.png  the same render of the input fBm, before erosion
// Timings: `repeats` dispatches of each of (a) the 5-octave erosion filter alone on a fixed input
// slope and (b) the whole demo pipeline over the tile, after one warm-up dispatch each; every
// dispatch is bracketed by timestamps, and the minimum and median are reported as points per
// second. A sparse sample of the tile is also checked against gorge's C++ float path.
//
// The SPIR-V (gpu_tile.spv) is compiled at build time and looked up next to the executable, or in
// GORGE_GPU_TILE_SPIRV. The build also compiles gpu_tile.hlsl, the same shader written with gorge's
// HLSL include, to gpu_tile_hlsl.spv: GORGE_GPU_TILE_SPIRV=<that file> times the HLSL port (its
// workgroup is fixed at 16x16, the default here). Runs on any Vulkan 1.1 device, e.g. Mesa's
// lavapipe or an NVIDIA GPU; GORGE_VULKAN_DEVICE=<part of the name> picks one device among several.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gorge/gorge.hpp>

#include "image_io.hpp"
#include "vulkan_compute.hpp"

namespace {

// Push constants of gpu_tile.comp.
struct push_constants {
    std::uint32_t size;
    float spacing;
    std::uint32_t seed;
    std::uint32_t mode;
};
enum : std::uint32_t { mode_demo = 0, mode_filter_only = 1 };

struct timing {
    double min_ms, median_ms;
};

/// The hash policies gpu_tile is built with. Each has its --hash name and its SPIR-V file, looked up
/// next to the executable: gpu_tile.spv uses the default hash, the others were compiled with
/// GORGE_HASH=gorge_<name>_lattice2.
enum class hash_choice { pcg3d, prime_mix, prime_xor };

struct hash_entry {
    hash_choice hash;
    const char* name;
    const char* spirv_file;
};

constexpr hash_entry hash_table[] = {
    {hash_choice::pcg3d, "pcg3d", "gpu_tile.spv"},
    {hash_choice::prime_mix, "prime_mix", "gpu_tile_prime_mix.spv"},
    {hash_choice::prime_xor, "prime_xor", "gpu_tile_prime_xor.spv"},
};

/// Row k of hash_table is hash_choice k, so a choice finds its row by index.
constexpr bool hash_table_in_enum_order() {
    for (std::size_t k = 0; k < sizeof hash_table / sizeof hash_table[0]; ++k) {
        if (std::size_t(hash_table[k].hash) != k) return false;
    }
    return true;
}
static_assert(hash_table_in_enum_order(), "hash_table rows must follow hash_choice's order");

bool parse_hash(const std::string& name, hash_choice& out) {
    for (const hash_entry& e : hash_table) {
        if (name == e.name) {
            out = e.hash;
            return true;
        }
    }
    return false;
}

/// The names --hash accepts, for its error message ("pcg3d, prime_mix or prime_xor").
std::string hash_names() {
    const std::size_t count = sizeof hash_table / sizeof hash_table[0];
    std::string names;
    for (std::size_t i = 0; i < count; ++i) {
        if (i > 0) names += i + 1 == count ? " or " : ", ";
        names += hash_table[i].name;
    }
    return names;
}

std::string spirv_path(const char* argv0, hash_choice hash, bool subgroups) {
    if (const char* env = std::getenv("GORGE_GPU_TILE_SPIRV")) return env;
    std::string dir(argv0);
    const std::size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
    std::string file = hash_table[std::size_t(hash)].spirv_file;
    if (subgroups) file.insert(file.size() - std::strlen(".spv"), "_subgroups");
    return dir + "/" + file;
}

/// The C++ float demo sample at p with the shader's hash policy.
gorge::demo_sample<float> cpu_demo_sample(glm::vec2 p, std::uint32_t seed, hash_choice hash) {
    switch (hash) {
        case hash_choice::prime_mix: return gorge::demo_pipeline<gorge::prime_mix_hash>(p, seed);
        case hash_choice::prime_xor: return gorge::demo_pipeline<gorge::prime_xor_hash>(p, seed);
        case hash_choice::pcg3d: break;
    }
    return gorge::demo_pipeline<gorge::pcg3d_hash>(p, seed);
}

/// Runs `repeats` timed dispatches (after one warm-up) and returns their min and median.
timing time_dispatches(gorge_vk::context& ctx, const gorge_vk::compute_pipeline& pipeline, const push_constants& pc,
                       std::uint32_t groups_x, std::uint32_t groups_y, int repeats) {
    gorge_vk::timestamps ts(ctx, std::uint32_t(repeats) + 1);
    gorge_vk::command_buffer cmd(ctx);
    VkCommandBuffer c = cmd.begin();
    ts.reset(c);
    pipeline.record_dispatch(c, &pc, groups_x, groups_y);  // warm-up
    gorge_vk::compute_write_barrier(c);
    ts.write(c, 0);
    for (int r = 0; r < repeats; ++r) {
        pipeline.record_dispatch(c, &pc, groups_x, groups_y);
        gorge_vk::compute_write_barrier(c);
        ts.write(c, std::uint32_t(r) + 1);
    }
    cmd.submit_and_wait();
    const std::vector<std::uint64_t> t = ts.read();
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) ms.push_back(double(t[std::size_t(r) + 1] - t[std::size_t(r)]) * ctx.timestamp_period_ns() * 1e-6);
    std::sort(ms.begin(), ms.end());
    return {ms.front(), ms[ms.size() / 2]};
}

/// Points per second in G, M or k units.
std::string rate(double points_per_second) {
    const char* unit = "G";
    double scale = 1e9;
    if (points_per_second < 1e6) unit = "k", scale = 1e3;
    else if (points_per_second < 1e9) unit = "M", scale = 1e6;
    char text[48];
    std::snprintf(text, sizeof text, "%.3f %s points/s", points_per_second / scale, unit);
    return text;
}

void print_timing(const char* what, timing t, double points) {
    std::printf("  %-34s min %9.3f ms  median %9.3f ms  -> %s (best), %s (median)\n", what, t.min_ms, t.median_ms,
                rate(points / (t.min_ms * 1e-3)).c_str(), rate(points / (t.median_ms * 1e-3)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
    int size = 4096, repeats = 20;
    std::uint32_t seed = 0, wg_x = 16, wg_y = 16;
    bool images = true, subgroups_allowed = true;
    hash_choice hash = hash_choice::pcg3d;
    int positional = 0;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--no-images") {
            images = false;
            continue;
        }
        if (arg == "--no-subgroups") {
            subgroups_allowed = false;
            continue;
        }
        if (arg == "--hash") {
            if (a + 1 >= argc || !parse_hash(argv[a + 1], hash)) {
                std::fprintf(stderr, "gpu_tile: --hash needs %s\n", hash_names().c_str());
                return 2;
            }
            ++a;
            continue;
        }
        switch (positional++) {
            case 0: size = std::atoi(argv[a]); break;
            case 1: seed = static_cast<std::uint32_t>(std::strtoul(argv[a], nullptr, 10)); break;
            case 2: repeats = std::atoi(argv[a]); break;
            case 3:
                if (std::sscanf(argv[a], "%ux%u", &wg_x, &wg_y) != 2) wg_x = wg_y = 0;
                break;
            default: std::fprintf(stderr, "gpu_tile: unexpected argument '%s'\n", argv[a]); return 2;
        }
    }
    if (size < 2 || size > 16384) {
        std::fprintf(stderr, "gpu_tile: size must be in 2..16384, got %d\n", size);
        return 2;
    }
    if (repeats < 1 || repeats > 1000) {
        std::fprintf(stderr, "gpu_tile: repeats must be in 1..1000, got %d\n", repeats);
        return 2;
    }
    if (wg_x < 1 || wg_y < 1 || wg_x * wg_y > 1024) {
        std::fprintf(stderr, "gpu_tile: workgroup must be WxH with 1 <= W*H <= 1024, e.g. 16x16\n");
        return 2;
    }

    try {
        gorge_vk::context ctx("gorge gpu_tile");
        std::printf("gpu_tile: %dx%d tile, seed %u, Vulkan device %s\n", size, size, seed, ctx.description().c_str());
        const auto& limits = ctx.properties().limits;
        if (wg_x * wg_y > limits.maxComputeWorkGroupInvocations || wg_x > limits.maxComputeWorkGroupSize[0] ||
            wg_y > limits.maxComputeWorkGroupSize[1]) {
            std::fprintf(stderr, "gpu_tile: workgroup %ux%u exceeds the device's limits\n", wg_x, wg_y);
            return 2;
        }

        using gorge_vk::buffer;
        const std::size_t n = std::size_t(size) * std::size_t(size);
        const VkDeviceSize bytes = n * sizeof(float);
        const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        buffer height_gpu(ctx, bytes, usage, buffer::memory::device_local);
        buffer ridge_gpu(ctx, bytes, usage, buffer::memory::device_local);
        buffer input_gpu(ctx, bytes, usage, buffer::memory::device_local);
        const std::uint32_t subgroup_size = ctx.compute_subgroup_size();
        const bool subgroups = subgroups_allowed && subgroup_size > 0;
        std::printf("shader: %s hash, %s", hash_table[std::size_t(hash)].name,
                    subgroups ? "Phacelle windows shared in subgroups (GORGE_SUBGROUPS)" : "without subgroups");
        if (subgroups) std::printf(" of %u invocations", subgroup_size);
        std::printf("\n");
        gorge_vk::compute_pipeline pipeline(ctx, spirv_path(argv[0], hash, subgroups), 3, sizeof(push_constants),
                                            {wg_x, wg_y});
        pipeline.bind({&height_gpu, &ridge_gpu, &input_gpu});
        for (const std::string& line : pipeline.statistics()) std::printf("  pipeline: %s\n", line.c_str());
        const std::uint32_t groups_x = (std::uint32_t(size) + wg_x - 1) / wg_x;
        const std::uint32_t groups_y = (std::uint32_t(size) + wg_y - 1) / wg_y;
        // The demo's unit square, sampled as in examples/demo.cpp.
        const float spacing = 1.0f / float(size);

        if (ctx.timestamp_period_ns() > 0.0) {
            std::printf("compute time (timestamp queries, %d dispatches each, workgroup %ux%u):\n", repeats, wg_x, wg_y);
            print_timing("erosion filter (5 octaves) alone",
                         time_dispatches(ctx, pipeline, {std::uint32_t(size), spacing, seed, mode_filter_only}, groups_x,
                                         groups_y, repeats),
                         double(n));
            print_timing("demo pipeline (fBm + filter)",
                         time_dispatches(ctx, pipeline, {std::uint32_t(size), spacing, seed, mode_demo}, groups_x, groups_y,
                                         repeats),
                         double(n));
        } else {
            std::printf("this device's compute queue has no timestamps: no timings\n");
        }

        // The tile itself: one demo dispatch, copied to host memory.
        buffer staging(ctx, 3 * bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, buffer::memory::host_visible);
        {
            gorge_vk::command_buffer cmd(ctx);
            VkCommandBuffer c = cmd.begin();
            const push_constants pc{std::uint32_t(size), spacing, seed, mode_demo};
            pipeline.record_dispatch(c, &pc, groups_x, groups_y);
            gorge_vk::compute_write_barrier(c);
            const buffer* sources[] = {&height_gpu, &ridge_gpu, &input_gpu};
            for (VkDeviceSize i = 0; i < 3; ++i) {
                const VkBufferCopy region{0, i * bytes, bytes};
                vkCmdCopyBuffer(c, sources[i]->handle(), staging.handle(), 1, &region);
            }
            gorge_vk::transfer_to_host_barrier(c);
            cmd.submit_and_wait();
        }
        gorge::grid<float> height(size, size), ridge(size, size), input(size, size);
        const float* mapped = static_cast<const float*>(staging.data());
        std::memcpy(height.data(), mapped, bytes);
        std::memcpy(ridge.data(), mapped + n, bytes);
        std::memcpy(input.data(), mapped + 2 * n, bytes);

        // Spot check against the C++ float path on a sparse lattice of samples.
        const int step = std::max(1, size / 256);
        double worst_height = 0.0, worst_ridge = 0.0;
        std::size_t checked = 0;
        for (int y = step / 2; y < size; y += step)
            for (int x = step / 2; x < size; x += step) {
                const glm::vec2 p((float(x) + 0.5f) * spacing, (float(y) + 0.5f) * spacing);
                const gorge::demo_sample<float> s = cpu_demo_sample(p, seed, hash);
                worst_height = std::max(worst_height, double(std::fabs(s.height - height(x, y))));
                worst_ridge = std::max(worst_ridge, double(std::fabs(s.ridge_map - ridge(x, y))));
                ++checked;
            }
        std::printf("GPU vs C++ float on %zu samples: worst |height error| %.3e, worst |ridge map error| %.3e\n", checked,
                    worst_height, worst_ridge);

        if (images) {
            const gorge_example::value_range range = gorge_example::range_of(height.view(), input.view());
            const float vertical_exaggeration = 1.0f / spacing;
            bool ok = true;
            ok &= gorge_example::write_gray_png("gpu_tile_height.png", height.view(), range);
            ok &= gorge_example::write_r16("gpu_tile_height.r16", height.view(), range);
            ok &= gorge_example::write_gray_png("gpu_tile_ridge_map.png", ridge.view(), {-1.0f, 1.0f});
            ok &= gorge_example::write_relief_png("gpu_tile_relief.png", height.view(), range, vertical_exaggeration);
            ok &= gorge_example::write_relief_png("gpu_tile_relief_input.png", input.view(), range, vertical_exaggeration);
            if (!ok) return 1;
            std::printf("heights %.4f..%.4f; wrote gpu_tile_height.png gpu_tile_height.r16 gpu_tile_ridge_map.png "
                        "gpu_tile_relief.png gpu_tile_relief_input.png\n",
                        range.lo, range.hi);
        }
        return 0;
    } catch (const gorge_vk::no_device& e) {
        std::fprintf(stderr, "gpu_tile: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpu_tile: %s\n", e.what());
        return 1;
    }
}
