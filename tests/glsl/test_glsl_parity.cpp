// GPU parity test: runs include/gorge/glsl/gorge.glsl in a Vulkan compute shader (parity.comp,
// compiled to SPIR-V at build time, once per hash policy) - or, given their directory and prefix
// (see Usage), the same rows in include/gorge/hlsl/gorge.hlsl (tests/hlsl/parity.hlsl, compiled by
// glslang's HLSL front end) - and compares each output with gorge's C++ float path on the same
// inputs:
//  - every row of tests/data/reference (hash policies pcg3d and shadertoy); prime_mix has no
//    reference rows, so it runs the inputs of the pcg3d rows (its groups are marked "*" and have no
//    "vs ref" figure: the CSV's values belong to pcg3d);
//  - prime_mix hashes over blocks of 64x64 lattice points around the origin, (2^30, +-2^30) and
//    the wrap from 2^31 - 1 to -2^31, for four seeds including 0 and 0xFFFFFFFF (bit-exact);
//  - a 512x512 tile of the demo pipeline (pcg3d, the default hash) and a 128x128 one (prime_mix);
//  - the filter at steep slopes: default parameters, |slope| log-spaced from 1e-6 to 1e12 (4 per
//    decade) in 8 directions at 3 positions (every hash policy), compared with the C++ float
//    path as above and with the C++ double path: height_delta within 2e-5, ridge_map within 5e-3
//    (the float/double agreement test_finite.cpp requires of the C++ float path);
//  - redistribution (power profile) where |e|^k and its slope overflow float: both saturate at
//    the largest finite float, bit-exact;
//  - the noise fields (derive_seed, value/gradient/simplex noise with Hessians, the four fractals
//    over the three bases, the island recipe, combinators, profiles, falloff distances) at 128
//    low-discrepancy points each, as there is no independent reference for them.
// Tolerances:
//   pcg3d, prime_mix hashes,
//   derive_seed                        bit-exact
//   shadertoy hashes                   within 1e-4 (float hash; a device may round differently)
//   heights, gradients, noise, phase   within 1e-4 absolute (Hessians too), except the gradients
//                                      of the fractal noise fields: 1e-4 times their highest
//                                      frequency (see fractal_gradient_tolerance)
//   ridge maps                         within 1e-2 absolute
// Rows far from the origin (|p| up to 1000, pcg3d noise only) are compared the same way and with
// the same tolerances, reported apart: the double reference is out of float's reach there, but GPU
// and C++ are both float and lose the same bits of p * freq (floor and the fractional part are
// exact in both), so they still agree.
// An output whose C++ values are all equal fails the test (the comparison would prove nothing).
// It prints the worst error of every output, and, for information, the GPU's worst error against
// the double-precision reference values.
//
// Exit codes: 0 pass, 1 fail, 77 skipped because the machine has no Vulkan device (ctest's
// SKIP_RETURN_CODE). With GORGE_VULKAN_REQUIRED=1 in the environment a missing device is a
// failure instead, for CI machines that are meant to have one (Mesa's lavapipe).
//
// Usage: test_glsl_parity [SPIR-V directory [file prefix [port name]]]
//   runs <directory>/<prefix><hash>.spv for hash = pcg3d, shadertoy and prime_mix; the defaults are the
//   GLSL shaders of this build (prefix "parity_", port name "gorge.glsl"); ctest's hlsl_parity
//   passes tests/hlsl's build directory, "hlsl_parity_" and "gorge.hlsl".
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gorge/gorge.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

#include "support/reference.hpp"
#include "vulkan_compute.hpp"

#ifndef GORGE_PARITY_SPIRV_DIR
#error "GORGE_PARITY_SPIRV_DIR must name the folder of the compiled parity shaders"
#endif

namespace {

using gorge_test::csv_table;

// Keep in sync with parity.comp.
constexpr std::size_t row_words = 32;
constexpr std::size_t out_words = 8;
enum row_kind : std::uint32_t {
    kind_hash = 0,
    kind_fbm = 1,
    kind_phacelle = 2,
    kind_filter = 3,
    kind_demo = 4,
    kind_seed = 5,
    kind_basis = 6,
    kind_fractal = 7,
    kind_island = 8,
    kind_profile = 9,
    kind_distance = 10,
    kind_combine = 11,
};
enum basis_id : std::uint32_t { basis_gradient = 0, basis_value = 1, basis_simplex = 2 };
enum fractal_id : std::uint32_t { fractal_sum = 0, fractal_billow = 1, fractal_ridged = 2, fractal_damped = 3 };

constexpr double value_tolerance = 1e-4;  // heights, gradients, noise, phase vectors
constexpr double ridge_tolerance = 1e-2;  // ridge maps
constexpr double near_coordinate = 8.0;   // rows beyond this are the "far" rows of the reference data
constexpr int tile_size = 512;
constexpr int prime_mix_tile_size = 128;  // the prime_mix tile (same area, coarser: keeps the runtime)

/// Whether a hash policy is exact integer arithmetic, so that its hashes must agree bit for bit.
bool exact_hash(const std::string& hash) { return hash == "pcg3d" || hash == "prime_mix"; }

std::uint32_t bits_of(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

/// Rows for one hash policy: packed inputs, the C++ float outputs, and what each output is.
struct batch {
    std::string hash;
    /// The hash whose rows of tests/data/reference give this batch its inputs: its own, or pcg3d's
    /// for prime_mix, which has no reference rows.
    std::string csv_hash;
    /// Whether the CSV's values are this hash's reference ("vs ref"); false for borrowed rows.
    bool csv_reference = true;
    std::vector<std::uint32_t> words;
    std::vector<std::array<float, out_words>> cpu;        // C++ float path
    std::vector<std::array<double, out_words>> reference; // double reference (NaN: none)
    std::vector<int> group;                                // index into the group table
    std::vector<std::size_t> line;                         // CSV line or tile index

    std::uint32_t* add_row(row_kind kind, int g, std::size_t where) {
        words.resize(words.size() + row_words, 0u);
        std::uint32_t* w = &words[words.size() - row_words];
        w[0] = kind;
        cpu.emplace_back();
        cpu.back().fill(0.0f);
        reference.emplace_back();
        reference.back().fill(std::nan(""));
        group.push_back(g);
        line.push_back(where);
        return w;
    }
    std::size_t rows() const { return group.size(); }
};

/// One compared output of one kind of row: its tolerance and its worst errors.
struct output_check {
    std::string name;
    int slot;
    double tolerance;  // < 0: bit-exact
    /// Tolerance times max(1, largest |C++ value| of this output over the group). For Hessians:
    /// they are third derivatives times the float rounding of the position, which on a device
    /// that fuses multiply-adds makes the simplex Hessians (magnitudes up to ~100) differ by
    /// ~9e-5 on an NVIDIA H200 at |q| <= 6.
    bool relative_to_range = false;
    /// Compared with the C++ double path (the row's reference values) instead of the float path.
    bool vs_double = false;
    double worst = 0.0;
    std::size_t worst_line = 0;
    double worst_reference = 0.0;
    std::size_t mismatches = 0;
    std::size_t compared = 0;
    std::size_t referenced = 0;  // rows with a reference value (for "vs ref")
    float cpu_min = INFINITY, cpu_max = -INFINITY;  // a constant output would make the check vacuous
};

/// Name of the group of a batch's rows of a reference file; "*" marks rows borrowed from another hash.
std::string csv_group_name(const batch& b, const char* file) {
    return std::string(file) + " " + b.hash + (b.csv_reference ? "" : "*");
}

struct group {
    std::string name;       // e.g. "noise.csv pcg3d near"
    const char* line_kind;  // "line" (CSV) or "sample" (tile index)
    std::vector<output_check> outputs;
};

void fill_hash_rows(batch& b, std::vector<group>& groups) {
    const csv_table t("hash.csv");
    const bool exact = exact_hash(b.hash);
    const int g = int(groups.size());
    groups.push_back({csv_group_name(b, "hash.csv"), "line",
                      {{"x", 0, exact ? -1.0 : value_tolerance}, {"y", 1, exact ? -1.0 : value_tolerance}}});
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        const auto cx = static_cast<std::int32_t>(t.number(r, "cx"));
        const auto cy = static_cast<std::int32_t>(t.number(r, "cy"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        std::uint32_t* w = b.add_row(kind_hash, g, r + 2);
        w[1] = static_cast<std::uint32_t>(cx);
        w[2] = static_cast<std::uint32_t>(cy);
        w[3] = seed;
        const glm::vec2 h = gorge_test::with_hash(b.hash, [&](auto hash) { return decltype(hash)::hash2(cx, cy, seed); });
        b.cpu.back()[0] = h.x;
        b.cpu.back()[1] = h.y;
        if (!b.csv_reference) continue;
        b.reference.back()[0] = t.number(r, "x");
        b.reference.back()[1] = t.number(r, "y");
    }
}

void fill_noise_rows(batch& b, std::vector<group>& groups) {
    const csv_table t("noise.csv");
    const int g_near = int(groups.size());
    groups.push_back({csv_group_name(b, "noise.csv") + " |p| <= 8", "line",
                      {{"value", 0, value_tolerance}, {"dx", 1, value_tolerance}, {"dy", 2, value_tolerance}}});
    int g_far = -1;
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        const double px = t.number(r, "px"), py = t.number(r, "py");
        gorge::fbm_params<float> fp;
        fp.frequency = float(t.number(r, "freq"));
        fp.octaves = static_cast<int>(t.number(r, "octaves"));
        fp.lacunarity = float(t.number(r, "lacunarity"));
        fp.gain = float(t.number(r, "gain"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        int g = g_near;
        if (std::max(std::fabs(px), std::fabs(py)) > near_coordinate) {
            if (g_far < 0) {
                g_far = int(groups.size());
                groups.push_back({csv_group_name(b, "noise.csv") + " |p| > 8", "line",
                                  {{"value", 0, value_tolerance}, {"dx", 1, value_tolerance}, {"dy", 2, value_tolerance}}});
            }
            g = g_far;
        }
        std::uint32_t* w = b.add_row(kind_fbm, g, r + 2);
        const glm::vec2 p{float(px), float(py)};
        w[1] = bits_of(p.x);
        w[2] = bits_of(p.y);
        w[3] = bits_of(fp.frequency);
        w[4] = static_cast<std::uint32_t>(fp.octaves);
        w[5] = bits_of(fp.lacunarity);
        w[6] = bits_of(fp.gain);
        w[7] = seed;
        const glm::vec3 n = gorge_test::with_hash(b.hash, [&](auto hash) { return gorge::fbm<decltype(hash)>(p, fp, seed); });
        b.cpu.back() = {n.x, n.y, n.z};
        if (!b.csv_reference) continue;
        b.reference.back()[0] = t.number(r, "value");
        b.reference.back()[1] = t.number(r, "dx");
        b.reference.back()[2] = t.number(r, "dy");
    }
}

void fill_phacelle_rows(batch& b, std::vector<group>& groups) {
    const csv_table t("phacelle.csv");
    const int g = int(groups.size());
    groups.push_back({csv_group_name(b, "phacelle.csv"), "line",
                      {{"c", 0, value_tolerance}, {"s", 1, value_tolerance}, {"sidex", 2, value_tolerance},
                       {"sidey", 3, value_tolerance}}});
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        const glm::vec2 q(float(t.number(r, "qx")), float(t.number(r, "qy")));
        const glm::vec2 dir(float(t.number(r, "dirx")), float(t.number(r, "diry")));
        const float cell_freq = float(t.number(r, "cell_freq"));
        const float phase_offset = float(t.number(r, "phase_offset"));
        const float normalization = float(t.number(r, "normalization"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        std::uint32_t* w = b.add_row(kind_phacelle, g, r + 2);
        w[1] = bits_of(q.x), w[2] = bits_of(q.y), w[3] = bits_of(dir.x), w[4] = bits_of(dir.y);
        w[5] = bits_of(cell_freq), w[6] = bits_of(phase_offset), w[7] = bits_of(normalization), w[8] = seed;
        const auto ph = gorge_test::with_hash(b.hash, [&](auto hash) {
            return gorge::phacelle<decltype(hash)>(q, dir, cell_freq, phase_offset, normalization, seed);
        });
        b.cpu.back() = {ph.phase.x, ph.phase.y, ph.side.x, ph.side.y};
        if (!b.csv_reference) continue;
        b.reference.back() = {t.number(r, "c"), t.number(r, "s"), t.number(r, "sidex"), t.number(r, "sidey")};
        b.reference.back()[4] = b.reference.back()[5] = b.reference.back()[6] = b.reference.back()[7] = std::nan("");
    }
}

void fill_filter_rows(batch& b, std::vector<group>& groups) {
    const csv_table t("erosion_filter.csv");
    const int g = int(groups.size());
    groups.push_back({csv_group_name(b, "erosion_filter.csv"), "line",
                      {{"height_delta", 0, value_tolerance},
                       {"slope_delta_x", 1, value_tolerance},
                       {"slope_delta_y", 2, value_tolerance},
                       {"magnitude", 3, value_tolerance},
                       {"ridge_map", 4, ridge_tolerance},
                       {"fade_target", 5, value_tolerance}}});
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        const gorge::erosion_params<float> ep = gorge_test::erosion_params_of<float>(t, r);
        if (const gorge::invalid_parameter bad = ep.first_invalid())
            throw std::runtime_error("reference row has invalid " + bad.to_string());
        const glm::vec2 p(float(t.number(r, "px")), float(t.number(r, "py")));
        const glm::vec3 h(float(t.number(r, "h")), float(t.number(r, "hx")), float(t.number(r, "hy")));
        const float fade = float(t.number(r, "fade_target_in"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        std::uint32_t* w = b.add_row(kind_filter, g, r + 2);
        const float params[] = {ep.scale,      ep.strength,   ep.gully_weight, ep.detail,     ep.rounding.x,
                                ep.rounding.y, ep.rounding.z, ep.rounding.w,   ep.onset.x,    ep.onset.y,
                                ep.onset.z,    ep.onset.w,    ep.assumed_slope.x, ep.assumed_slope.y};
        for (std::size_t i = 0; i < 14; ++i) w[1 + i] = bits_of(params[i]);
        w[15] = static_cast<std::uint32_t>(ep.octaves);
        w[16] = bits_of(ep.lacunarity), w[17] = bits_of(ep.gain), w[18] = bits_of(ep.cell_scale);
        w[19] = bits_of(ep.normalization);
        w[20] = bits_of(p.x), w[21] = bits_of(p.y), w[22] = bits_of(h.x), w[23] = bits_of(h.y), w[24] = bits_of(h.z);
        w[25] = bits_of(fade), w[26] = seed;
        const gorge::erosion_result<float> e = gorge_test::with_hash(b.hash, [&](auto hash) {
            return gorge::erosion_filter<decltype(hash)>(p, h, fade, ep, seed);
        });
        b.cpu.back() = {e.height_delta, e.slope_delta.x, e.slope_delta.y, e.magnitude, e.ridge_map, e.fade_target};
        if (!b.csv_reference) continue;
        b.reference.back() = {t.number(r, "height_delta"), t.number(r, "slope_delta_x"), t.number(r, "slope_delta_y"),
                              t.number(r, "magnitude"),    t.number(r, "ridge_map"),     t.number(r, "fade_target")};
        b.reference.back()[6] = b.reference.back()[7] = std::nan("");
    }
}

// ---- the filter at steep slopes: generated inputs, compared with C++ float and double ----------

// Required agreement of the float GPU path with the C++ double path at every |slope| from 1e-6 to
// 1e12 (the same bounds as the C++ float path in test_finite.cpp).
constexpr double steep_height_tolerance = 2e-5;
constexpr double steep_ridge_tolerance = 5e-3;
constexpr int steep_first_decade = -6, steep_last_decade = 12;  // |slope| from 1e-6 to 1e12
constexpr int steep_steps_per_decade = 4;
constexpr int steep_directions = 8;

/// Default parameters at |slope| log-spaced over 1e-6..1e12, in several directions, at a few
/// positions, seeds and fade targets. Every input is a float, so that the double path sees exactly
/// the values the float paths see.
void fill_steep_rows(batch& b, std::vector<group>& groups) {
    const int g = int(groups.size());
    groups.push_back({"steep slopes " + b.hash, "point",
                      {{"height_delta", 0, value_tolerance},
                       {"slope_delta_x", 1, value_tolerance},
                       {"slope_delta_y", 2, value_tolerance},
                       {"ridge_map", 4, ridge_tolerance},
                       {"fade_target", 5, value_tolerance},
                       {"height_delta vs double", 0, steep_height_tolerance, false, true},
                       {"ridge_map vs double", 4, steep_ridge_tolerance, false, true}}});
    const glm::vec2 positions[] = {{0.3f, 0.7f}, {-1.7f, 2.2f}, {5.1f, -3.4f}};
    const float fades[] = {-0.6f, 0.2f, 0.9f};
    const std::uint32_t seeds[] = {0u, 7u, 4000000000u};
    const gorge::erosion_params<float> pf;
    const gorge::erosion_params<double> pd;
    const float params[] = {pf.scale,      pf.strength,   pf.gully_weight, pf.detail,     pf.rounding.x,
                            pf.rounding.y, pf.rounding.z, pf.rounding.w,   pf.onset.x,    pf.onset.y,
                            pf.onset.z,    pf.onset.w,    pf.assumed_slope.x, pf.assumed_slope.y};
    constexpr double two_pi = 6.283185307179586;
    std::size_t index = 0;
    for (int step = steep_first_decade * steep_steps_per_decade; step <= steep_last_decade * steep_steps_per_decade;
         ++step) {
        const double len = std::pow(10.0, double(step) / steep_steps_per_decade);
        for (int d = 0; d < steep_directions; ++d) {
            // Off the axes, so that neither slope component is zero.
            const double angle = two_pi * (d + 0.3) / steep_directions;
            for (std::size_t k = 0; k < 3; ++k, ++index) {
                const glm::vec2 p = positions[k];
                const glm::vec3 h(0.5f, float(len * std::cos(angle)), float(len * std::sin(angle)));
                const float fade = fades[(k + std::size_t(d)) % 3];
                const std::uint32_t seed = seeds[(k + std::size_t(step + 100)) % 3];
                std::uint32_t* w = b.add_row(kind_filter, g, index);
                for (std::size_t i = 0; i < 14; ++i) w[1 + i] = bits_of(params[i]);
                w[15] = static_cast<std::uint32_t>(pf.octaves);
                w[16] = bits_of(pf.lacunarity), w[17] = bits_of(pf.gain), w[18] = bits_of(pf.cell_scale);
                w[19] = bits_of(pf.normalization);
                w[20] = bits_of(p.x), w[21] = bits_of(p.y), w[22] = bits_of(h.x), w[23] = bits_of(h.y);
                w[24] = bits_of(h.z), w[25] = bits_of(fade), w[26] = seed;
                gorge_test::with_hash(b.hash, [&](auto hash) {
                    using Hash = decltype(hash);
                    const gorge::erosion_result<float> f = gorge::erosion_filter<Hash>(p, h, fade, pf, seed);
                    const gorge::erosion_result<double> e =
                        gorge::erosion_filter<Hash>(glm::dvec2(p), glm::dvec3(h), double(fade), pd, seed);
                    b.cpu.back() = {f.height_delta, f.slope_delta.x, f.slope_delta.y, f.magnitude, f.ridge_map,
                                    f.fade_target};
                    b.reference.back()[0] = e.height_delta;
                    b.reference.back()[4] = e.ridge_map;
                    return 0;
                });
            }
        }
    }
}

void add_demo_row(batch& b, int g, std::size_t where, glm::vec2 p, std::uint32_t seed) {
    std::uint32_t* w = b.add_row(kind_demo, g, where);
    w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = seed;
    const gorge::demo_sample<float> s =
        gorge_test::with_hash(b.hash, [&](auto hash) { return gorge::demo_pipeline<decltype(hash)>(p, seed); });
    b.cpu.back() = {s.height, s.ridge_map, s.input_height};
}

void fill_demo_rows(batch& b, std::vector<group>& groups) {
    const csv_table t("demo.csv");
    const int g = int(groups.size());
    groups.push_back({csv_group_name(b, "demo.csv"), "line", {{"eroded_height", 0, value_tolerance}, {"ridge_map", 1, ridge_tolerance}}});
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        add_demo_row(b, g, r + 2, glm::vec2(float(t.number(r, "px")), float(t.number(r, "py"))),
                     static_cast<std::uint32_t>(t.number(r, "seed")));
        if (!b.csv_reference) continue;
        b.reference.back()[0] = t.number(r, "eroded_height");
        b.reference.back()[1] = t.number(r, "ridge_map");
    }
}

// ---- noise fields: no reference data, so generated inputs, compared with C++ only ----------------

constexpr int field_points = 128;

/// Point i of the R2 low-discrepancy sequence, scaled to [lo, hi]^2.
glm::vec2 r2_point(int i, float lo, float hi) {
    const double a = std::fmod(0.5 + 0.7548776662466927 * i, 1.0), b = std::fmod(0.5 + 0.5698402909980532 * i, 1.0);
    return {float(lo + (hi - lo) * a), float(lo + (hi - lo) * b)};
}

std::uint32_t field_seed(int i) {
    const std::uint32_t seeds[] = {0u, 7u, 2024u, 4000000000u};
    return seeds[i % 4];
}

const char* const basis_names[] = {"gradient", "value", "simplex"};

/// Calls f(Basis{}) for a basis id, with the batch's hash policy.
template <class Hash, class F>
decltype(auto) with_basis(std::uint32_t basis, F&& f) {
    if (basis == basis_value) return f(gorge::value_basis<Hash>{});
    if (basis == basis_simplex) return f(gorge::simplex_basis<Hash>{});
    return f(gorge::gradient_basis<Hash>{});
}

// Gradient tolerance of a fractal field: 1e-4 times its highest octave frequency. In float, the
// lattice-relative position of octave o carries an absolute rounding error of about
// ulp(freq_o |p|), and a device that fuses multiply-adds rounds it differently from the C++ path;
// the gradient (freq_o times the basis gradient) then differs by about freq_o * Hessian * that
// error, i.e. in proportion to the frequency. On an NVIDIA H200 the simplex fractals differ by up
// to ~1.5e-3 at a top frequency of 64 (the island); lavapipe stays near 1e-5. Values are held to
// the plain 1e-4.
double fractal_gradient_tolerance(double frequency, int octaves, double lacunarity) {
    return value_tolerance * std::max(1.0, frequency * std::pow(lacunarity, octaves - 1));
}

std::vector<output_check> outputs3(const char* a, const char* b, const char* c, int first = 0,
                                   double gradient_tolerance = value_tolerance) {
    return {{a, first, value_tolerance}, {b, first + 1, gradient_tolerance}, {c, first + 2, gradient_tolerance}};
}

void fill_noise_field_rows(batch& b, std::vector<group>& groups) {
    // derive_seed: exact integer arithmetic.
    int g = int(groups.size());
    groups.push_back({"derive_seed " + b.hash, "point", {{"seed", 0, -1.0}}});
    for (int i = 0; i < field_points; ++i) {
        const std::uint32_t seed = field_seed(i) + std::uint32_t(i) * 2654435761u, stream = std::uint32_t(i % 7);
        std::uint32_t* w = b.add_row(kind_seed, g, std::size_t(i));
        w[1] = seed, w[2] = stream;
        const std::uint32_t want = gorge::derive_seed(seed, stream);
        std::memcpy(&b.cpu.back()[0], &want, sizeof want);
    }

    gorge_test::with_hash(b.hash, [&](auto hash) {
        using Hash = decltype(hash);
        // Base noises with Hessians.
        for (std::uint32_t basis : {basis_gradient, basis_value, basis_simplex}) {
            g = int(groups.size());
            std::vector<output_check> outs = outputs3("value", "dx", "dy");
            // Hessians: 1e-4 relative to their largest magnitude over the points (see relative_to_range).
            for (const char* h : {"dxx", "dxy", "dyy"}) outs.push_back({h, int(outs.size()), value_tolerance, true});
            groups.push_back({std::string(basis_names[basis]) + " noise d2 " + b.hash, "point", outs});
            for (int i = 0; i < field_points; ++i) {
                const glm::vec2 q = r2_point(i, -6.0f, 6.0f);
                const std::uint32_t seed = field_seed(i);
                std::uint32_t* w = b.add_row(kind_basis, g, std::size_t(i));
                w[1] = bits_of(q.x), w[2] = bits_of(q.y), w[3] = seed, w[4] = basis;
                const gorge::noise_d2<float> n =
                    with_basis<Hash>(basis, [&](auto B) { return decltype(B)::template eval_d2<float>(q, seed); });
                b.cpu.back() = {n.value, n.gradient.x, n.gradient.y, n.dxx, n.dxy, n.dyy};
            }
        }
        // Fractals over every basis.
        const char* const fractal_names[] = {"fractal_sum", "billow", "ridged", "damped_fbm"};
        for (std::uint32_t which : {fractal_sum, fractal_billow, fractal_ridged, fractal_damped}) {
            for (std::uint32_t basis : {basis_gradient, basis_value, basis_simplex}) {
                // fBm-like parameters: 5 octaves from frequency 1.5; ridged and damped defaults.
                const gorge::fbm_params<float> fp{1.5f, 5, 2.0f, 0.5f};
                const gorge::ridged_params<float> rp{};
                const gorge::damped_fbm_params<float> dp{};
                const double grad_tol =
                    which == fractal_ridged   ? fractal_gradient_tolerance(rp.frequency, rp.octaves, rp.lacunarity)
                    : which == fractal_damped ? fractal_gradient_tolerance(dp.frequency, dp.octaves, dp.lacunarity)
                                              : fractal_gradient_tolerance(fp.frequency, fp.octaves, fp.lacunarity);
                g = int(groups.size());
                groups.push_back({std::string(fractal_names[which]) + " " + basis_names[basis] + " " + b.hash, "point",
                                  outputs3("value", "dx", "dy", 0, grad_tol)});
                for (int i = 0; i < field_points; ++i) {
                    const glm::vec2 p = r2_point(i, -2.0f, 2.0f);
                    const std::uint32_t seed = field_seed(i);
                    std::uint32_t* w = b.add_row(kind_fractal, g, std::size_t(i));
                    w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = seed, w[4] = which, w[5] = basis;
                    if (which == fractal_ridged) {
                        w[6] = bits_of(rp.frequency), w[7] = std::uint32_t(rp.octaves), w[8] = bits_of(rp.lacunarity);
                        w[9] = bits_of(rp.gain), w[10] = bits_of(rp.offset), w[11] = bits_of(rp.feedback);
                    } else if (which == fractal_damped) {
                        w[6] = bits_of(dp.frequency), w[7] = std::uint32_t(dp.octaves), w[8] = bits_of(dp.lacunarity);
                        w[9] = bits_of(dp.gain), w[10] = bits_of(dp.damping);
                    } else {
                        w[6] = bits_of(fp.frequency), w[7] = std::uint32_t(fp.octaves), w[8] = bits_of(fp.lacunarity);
                        w[9] = bits_of(fp.gain);
                    }
                    const glm::vec3 v = with_basis<Hash>(basis, [&](auto B) {
                        using Basis = decltype(B);
                        if (which == fractal_sum) return gorge::fractal_sum<Basis>(p, fp, seed);
                        if (which == fractal_billow) return gorge::billow<Basis>(p, fp, seed);
                        if (which == fractal_ridged) return gorge::ridged<Basis>(p, rp, seed);
                        return gorge::damped_fbm<Basis>(p, dp, seed);
                    });
                    b.cpu.back() = {v.x, v.y, v.z};
                }
            }
        }
        // The island recipe, both falloff shapes (warp, clamp, offset, scale, redistribution, falloff).
        for (gorge::falloff_shape shape : {gorge::falloff_shape::radial, gorge::falloff_shape::square_bump}) {
            const std::uint32_t basis = shape == gorge::falloff_shape::radial ? basis_gradient : basis_simplex;
            gorge::island_params<float> ip;
            ip.falloff.shape = shape;
            g = int(groups.size());
            std::vector<output_check> outs = outputs3(
                "height", "height dx", "height dy", 0,
                fractal_gradient_tolerance(ip.terrain.frequency, ip.terrain.octaves, ip.terrain.lacunarity));
            for (const output_check& o :
                 outputs3("moisture", "moisture dx", "moisture dy", 3,
                          fractal_gradient_tolerance(ip.moisture.frequency, ip.moisture.octaves, ip.moisture.lacunarity)))
                outs.push_back(o);
            groups.push_back({std::string("island ") + (basis == basis_gradient ? "radial gradient " : "square simplex ") +
                                  b.hash,
                              "point", outs});
            for (int i = 0; i < field_points; ++i) {
                const glm::vec2 p = r2_point(i, -1.3f, 1.3f);
                const std::uint32_t seed = field_seed(i);
                std::uint32_t* w = b.add_row(kind_island, g, std::size_t(i));
                w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = seed;
                w[4] = shape == gorge::falloff_shape::radial ? 0u : 1u, w[5] = basis;
                const auto pair = with_basis<Hash>(basis, [&](auto B) {
                    using Basis = decltype(B);
                    return std::make_pair(gorge::island_height_field<float, Basis>(ip, seed)(p),
                                          gorge::island_moisture_field<float, Basis>(ip, seed)(p));
                });
                b.cpu.back() = {pair.first.x, pair.first.y, pair.first.z, pair.second.x, pair.second.y, pair.second.z};
            }
        }
        // Domain transform and product.
        g = int(groups.size());
        {
            std::vector<output_check> outs = outputs3("transform", "transform dx", "transform dy");
            for (const output_check& o : outputs3("product", "product dx", "product dy", 3)) outs.push_back(o);
            groups.push_back({"transform, product " + b.hash, "point", outs});
        }
        const glm::mat2 m = glm::mat2(0.8f, 0.6f, -0.6f, 0.8f) * 1.5f;  // as in parity.comp
        const glm::vec2 t(0.25f, -1.5f);
        for (int i = 0; i < field_points; ++i) {
            const glm::vec2 p = r2_point(i, -4.0f, 4.0f);
            const std::uint32_t seed = field_seed(i);
            std::uint32_t* w = b.add_row(kind_combine, g, std::size_t(i));
            w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = seed;
            const auto grad_noise = [seed](auto q) { return gorge::gradient_noise<Hash>(q, seed); };
            const auto value_noise = [seed](auto q) { return gorge::value_noise<Hash>(q, seed); };
            const glm::vec3 tv = gorge::transform(grad_noise, m, t)(p);
            const glm::vec3 pv = gorge::product(grad_noise, value_noise)(p);
            b.cpu.back() = {tv.x, tv.y, tv.z, pv.x, pv.y, pv.z};
        }
        return 0;
    });

    // Profiles and distances (no hash involved).
    g = int(groups.size());
    groups.push_back({"power, terrace profiles " + b.hash, "point",
                      {{"power", 0, value_tolerance}, {"power slope", 1, value_tolerance},
                       {"terrace", 2, value_tolerance}, {"terrace slope", 3, value_tolerance}}});
    const float exponents[] = {0.5f, 1.0f, 1.8f, 3.0f};
    for (int i = 0; i < field_points; ++i) {
        const float e = r2_point(i, -1.0f, 1.5f).x;
        const float k = exponents[i % 4], steps = 4.0f, ramp = (i % 2) ? 0.3f : 1.0f;
        std::uint32_t* w = b.add_row(kind_profile, g, std::size_t(i));
        w[1] = bits_of(e), w[2] = bits_of(k), w[3] = bits_of(steps), w[4] = bits_of(ramp);
        const glm::vec2 pw = gorge::power_profile<float>{k}(e);
        const glm::vec2 te = gorge::terrace_profile<float>{steps, ramp}(e);
        b.cpu.back() = {pw.x, pw.y, te.x, te.y};
    }
    // Redistribution where sign(e) |e|^k and its slope overflow float: both saturate at the largest
    // finite float (bit-exact), with rows at e = 0 (0 and 0) so that neither output is constant.
    g = int(groups.size());
    groups.push_back({"power profile saturation " + b.hash, "point", {{"power", 0, -1.0}, {"power slope", 1, -1.0}}});
    {
        const float huge_inputs[] = {1e20f, -1e20f, 3e38f, -3e38f, 0.0f};
        const float steep_exponents[] = {3.0f, 5.0f, 40.0f};  // |e|^(k - 1) > float max at |e| = 1e20
        std::size_t index = 0;
        for (float e : huge_inputs)
            for (float k : steep_exponents) {
                std::uint32_t* w = b.add_row(kind_profile, g, index++);
                w[1] = bits_of(e), w[2] = bits_of(k), w[3] = bits_of(1.0f), w[4] = bits_of(1.0f);
                const glm::vec2 pw = gorge::power_profile<float>{k}(e);
                b.cpu.back() = {pw.x, pw.y, 0.0f, 0.0f};
            }
    }
    g = int(groups.size());
    {
        std::vector<output_check> outs = outputs3("radial", "radial dx", "radial dy");
        for (const output_check& o : outputs3("square bump", "square dx", "square dy", 3)) outs.push_back(o);
        groups.push_back({"falloff distances " + b.hash, "point", outs});
    }
    for (int i = 0; i < field_points; ++i) {
        const glm::vec2 n = r2_point(i, -1.5f, 1.5f);
        std::uint32_t* w = b.add_row(kind_distance, g, std::size_t(i));
        w[1] = bits_of(n.x), w[2] = bits_of(n.y);
        const glm::vec3 r = gorge::radial_distance(n), q = gorge::square_bump_distance(n);
        b.cpu.back() = {r.x, r.y, r.z, q.x, q.y, q.z};
    }
}

// The demo example's tile: sample (x, y) at ((x + 0.5) / size, (y + 0.5) / size), seed 0. Sample
// indices are y * tile_size + x whatever the size, so that the report names (x, y).
void fill_demo_tile(batch& b, std::vector<group>& groups, int size) {
    const int g = int(groups.size());
    groups.push_back({"demo tile " + std::to_string(size) + "x" + std::to_string(size) + " " + b.hash, "sample",
                      {{"height", 0, value_tolerance}, {"ridge_map", 1, ridge_tolerance}, {"input_height", 2, value_tolerance}}});
    const float spacing = 1.0f / float(size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
            add_demo_row(b, g, std::size_t(y) * tile_size + std::size_t(x),
                         glm::vec2((float(x) + 0.5f) * spacing, (float(y) + 0.5f) * spacing), 0u);
}

// ---- lattice blocks: an exact hash over many lattice points, not just the CSV's few ---------------

constexpr std::uint32_t lattice_block_side = 64;
constexpr std::uint32_t lattice_half_block = lattice_block_side / 2;
constexpr std::uint32_t lattice_far = 1u << 30;
constexpr std::uint32_t lattice_wrap = 1u << 31;  // as unsigned: where 2^31 - 1 wraps to -2^31
struct lattice_block {
    const char* name;
    std::uint32_t x, y;  // lowest corner, as the 32-bit unsigned lattice coordinates the kernels pass
};
/// Blocks centred on the origin, on (2^30, 2^30), on (2^30, -2^30), and on (2^31, 0), where x wraps
/// from 2^31 - 1 to -2^31. No block is centred on (-2^30, -2^30) or (-2^30, 2^30): prime_mix is
/// unchanged when both coordinates move by 2^31 (each product with an odd constant flips its top
/// bit, and the xor cancels the two flips), so those would repeat the second and third blocks.
constexpr lattice_block lattice_blocks[] = {
    {"origin", 0u - lattice_half_block, 0u - lattice_half_block},
    {"(2^30,2^30)", lattice_far - lattice_half_block, lattice_far - lattice_half_block},
    {"(2^30,-2^30)", lattice_far - lattice_half_block, 0u - lattice_far - lattice_half_block},
    {"x wrap 2^31", lattice_wrap - lattice_half_block, 0u - lattice_half_block},
};
constexpr std::uint32_t lattice_seeds[] = {0u, 1u, 2024u, 0xFFFFFFFFu};

/// Rows of kind_hash over side x side lattice points of every block, for every seed (bit-exact, as
/// the hash is integer arithmetic); point index (seed index * side + y) * side + x.
void fill_lattice_block_rows(batch& b, std::vector<group>& groups, std::uint32_t side) {
    for (const lattice_block& block : lattice_blocks) {
        const int g = int(groups.size());
        groups.push_back({"hash " + std::to_string(side) + "^2 " + block.name + " " + b.hash, "point",
                          {{"x", 0, -1.0}, {"y", 1, -1.0}}});
        std::size_t index = 0;
        for (std::uint32_t seed : lattice_seeds)
            for (std::uint32_t y = 0; y < side; ++y)
                for (std::uint32_t x = 0; x < side; ++x, ++index) {
                    // Unsigned, so that the wrap block crosses 2^31 - 1 -> -2^31 as the kernels' offsets do.
                    const std::uint32_t cx = block.x + x, cy = block.y + y;
                    std::uint32_t* w = b.add_row(kind_hash, g, index);
                    w[1] = cx, w[2] = cy, w[3] = seed;
                    const glm::vec2 h = gorge_test::with_hash(
                        b.hash, [&](auto hash) { return decltype(hash)::template lattice2<float>(cx, cy, seed); });
                    b.cpu.back()[0] = h.x;
                    b.cpu.back()[1] = h.y;
                }
    }
}

std::vector<float> run_on_gpu(gorge_vk::context& ctx, const std::string& spirv, const batch& b) {
    using gorge_vk::buffer;
    const std::size_t n = b.rows();
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

void compare(const batch& b, const std::vector<float>& gpu, std::vector<group>& groups) {
    for (std::size_t r = 0; r < b.rows(); ++r) {
        for (output_check& o : groups[std::size_t(b.group[r])].outputs) {
            if (!o.relative_to_range) continue;
            o.cpu_min = std::min(o.cpu_min, b.cpu[r][std::size_t(o.slot)]);
            o.cpu_max = std::max(o.cpu_max, b.cpu[r][std::size_t(o.slot)]);
        }
    }
    for (group& g : groups)
        for (output_check& o : g.outputs)
            if (o.relative_to_range && o.compared == 0 && o.cpu_max >= o.cpu_min)
                o.tolerance *= std::max({1.0, std::fabs(double(o.cpu_min)), std::fabs(double(o.cpu_max))});
    for (std::size_t r = 0; r < b.rows(); ++r) {
        group& g = groups[std::size_t(b.group[r])];
        const float* got = &gpu[r * out_words];
        for (output_check& o : g.outputs) {
            const float gv = got[o.slot];
            const float cv = b.cpu[r][std::size_t(o.slot)];
            ++o.compared;
            if (o.vs_double) {
                const double dv = b.reference[r][std::size_t(o.slot)];
                o.cpu_min = std::min(o.cpu_min, float(dv));
                o.cpu_max = std::max(o.cpu_max, float(dv));
                const double err = std::fabs(double(gv) - dv);
                if (!(err <= o.tolerance)) ++o.mismatches;
                if (!(err <= o.worst)) {
                    o.worst = err;
                    o.worst_line = b.line[r];
                }
                continue;
            }
            o.cpu_min = std::min(o.cpu_min, cv);
            o.cpu_max = std::max(o.cpu_max, cv);
            const double err = o.tolerance < 0 ? (bits_of(gv) == bits_of(cv) ? 0.0 : std::fabs(double(gv) - double(cv)))
                                               : std::fabs(double(gv) - double(cv));
            const bool bad = o.tolerance < 0 ? bits_of(gv) != bits_of(cv) : !(err <= o.tolerance);
            if (bad) ++o.mismatches;
            if (!(err <= o.worst)) {
                o.worst = err;
                o.worst_line = b.line[r];
            }
            const double ref = b.reference[r][std::size_t(o.slot)];
            if (std::isnan(ref)) continue;
            ++o.referenced;
            o.worst_reference = std::max(o.worst_reference, std::fabs(double(gv) - ref));
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

        std::vector<group> groups;
        bool ok = true;
        for (const char* hash : {"pcg3d", "shadertoy", "prime_mix"}) {
            batch b;
            b.hash = hash;
            // prime_mix has no reference rows: it runs the pcg3d rows' inputs, compared with the C++
            // float path only (the CSV's values are pcg3d's, so there is no "vs ref" for it).
            b.csv_reference = b.hash != "prime_mix";
            b.csv_hash = b.csv_reference ? b.hash : "pcg3d";
            fill_hash_rows(b, groups);
            if (b.hash == "prime_mix") fill_lattice_block_rows(b, groups, lattice_block_side);
            fill_noise_rows(b, groups);
            fill_phacelle_rows(b, groups);
            fill_filter_rows(b, groups);
            fill_steep_rows(b, groups);
            fill_demo_rows(b, groups);
            // The tile uses gorge's default hash, as examples/demo.cpp and gpu_tile do; the
            // shadertoy variant of the pipeline is covered by demo.csv (and one tile is what keeps
            // this test within its time budget in a sanitizer build).
            if (b.hash == "pcg3d") fill_demo_tile(b, groups, tile_size);
            // prime_mix's tile is coarser (same area), to keep the sanitizer build's runtime.
            if (b.hash == "prime_mix") fill_demo_tile(b, groups, prime_mix_tile_size);
            fill_noise_field_rows(b, groups);
            const std::vector<float> gpu = run_on_gpu(*ctx, spirv_dir + "/" + spirv_prefix + hash + ".spv", b);
            compare(b, gpu, groups);
        }

        std::printf("\nGPU (%s) against the C++ float path (\"vs double\": the C++ double path) on the same inputs:\n",
                    port.c_str());
        std::printf("  %-34s %-22s %9s %11s %-10s %9s %9s\n", "rows", "output", "compared", "worst", "at", "tolerance",
                    "vs ref");
        double worst_value = 0.0, worst_ridge = 0.0, worst_scaled = 0.0, worst_scaled_share = 0.0;
        double worst_steep_height = 0.0, worst_steep_ridge = 0.0;
        for (const group& g : groups) {
            for (const output_check& o : g.outputs) {
                if (o.compared == 0) continue;
                char tol[32];
                if (o.tolerance < 0)
                    std::snprintf(tol, sizeof tol, "bit-exact");
                else
                    std::snprintf(tol, sizeof tol, "%.1e", o.tolerance);
                char at[32] = "-";
                if (o.worst == 0.0)
                    ;
                else if (std::strcmp(g.line_kind, "point") == 0)
                    std::snprintf(at, sizeof at, "point %zu", o.worst_line);
                else if (std::strcmp(g.line_kind, "sample") == 0)
                    std::snprintf(at, sizeof at, "(%zu,%zu)", o.worst_line % tile_size, o.worst_line / tile_size);
                else
                    std::snprintf(at, sizeof at, "line %zu", o.worst_line);
                char ref[32] = "-";
                if (g.line_kind[0] == 'l' && o.referenced > 0)
                    std::snprintf(ref, sizeof ref, "%.2e", o.worst_reference);
                std::printf("  %-34s %-22s %9zu %11.3e %-10s %9s %9s%s\n", g.name.c_str(), o.name.c_str(), o.compared,
                            o.worst, at, tol, ref, o.mismatches ? "   <-- FAIL" : "");
                if (o.mismatches) {
                    std::printf("    %zu of %zu outside the tolerance\n", o.mismatches, o.compared);
                    ok = false;
                }
                if (!(o.cpu_max > o.cpu_min)) {
                    std::printf("    the C++ values are all equal (%g): the comparison would prove nothing   <-- FAIL\n",
                                double(o.cpu_min));
                    ok = false;
                }
                if (o.vs_double) {
                    double& worst = o.tolerance == steep_ridge_tolerance ? worst_steep_ridge : worst_steep_height;
                    worst = std::max(worst, o.worst);
                } else if (o.tolerance == ridge_tolerance) {
                    worst_ridge = std::max(worst_ridge, o.worst);
                } else if (o.tolerance <= value_tolerance) {
                    worst_value = std::max(worst_value, o.worst);
                } else {  // frequency- or range-scaled tolerances
                    worst_scaled = std::max(worst_scaled, o.worst);
                    worst_scaled_share = std::max(worst_scaled_share, o.worst / o.tolerance);
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
                    " \"*\": the inputs of the pcg3d rows, run with prime_mix, which has no reference values)\n");
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
