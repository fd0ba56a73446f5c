// The rows of the shader parity tests (tests/glsl/test_glsl_parity.cpp for GLSL and HLSL on
// Vulkan, tests/wgsl/wgsl_rows.cpp for WGSL in a browser): packed inputs (32 words a row, word 0
// the kind, as parity.comp, parity.hlsl and parity.wgsl read them), the C++ float outputs (8 a
// row), the C++ double or reference values where there are any, and the group of each row with
// what each output is held to:
//  - every row of tests/data/reference (hash policies pcg3d and shadertoy); prime_mix and
//    prime_xor have no reference rows, so they run the inputs of the pcg3d rows (groups marked
//    "*"), compared with the C++ float path only (the CSV's values belong to pcg3d);
//  - prime_mix and prime_xor hashes over square blocks of lattice points around the origin,
//    (2^30, +-2^30) and the wrap from 2^31 - 1 to -2^31, for four seeds including 0 and 0xFFFFFFFF
//    (bit-exact);
//  - the filter at steep slopes: default parameters, |slope| log-spaced from 1e-6 to 1e12 (4 per
//    decade) in 8 directions at 3 positions (every hash policy), compared with the C++ float path
//    and with the C++ double path (height_delta within 2e-5, ridge_map within 5e-3: the float/double
//    agreement test_finite.cpp requires of the C++ float path);
//  - the noise fields at 128 low-discrepancy points each (derive_seed, the four bases with
//    Hessians, the four fractals over the four bases, the island, combinators, profiles,
//    distances), and the power profile where |e|^k and its slope overflow float (both saturate at
//    the largest finite float, bit-exact). Perlin noise (the fourth basis) runs with the exact
//    hashes only (the shadertoy hash has no bits to pick its directions by): also its value and
//    gradient form at 128 points and at lattice points, where its value must be 0 and its gradient
//    the table direction of the hash's top 3 bits bit for bit (checked on the C++ side too);
//  - a tile of the demo pipeline (pcg3d, the default hash) and a coarser one (prime_mix, prime_xor).
// Tolerances:
//   pcg3d, prime_mix and prime_xor hashes, derive_seed, saturated power profile,
//   perlin gradients at lattice points (their value: exactly 0)                   bit-exact
//   shadertoy hashes                          within 1e-4 (float hash; a device may round differently)
//   heights, gradients, noise, phase          within 1e-4 absolute; Hessians 1e-4 times max(1, their
//                                             largest |C++ value|); fractal gradients 1e-4 times
//                                             their top frequency (fractal_gradient_tolerance)
//   ridge maps                                within 1e-2 absolute
// Rows far from the origin (|p| up to 1000, pcg3d noise only) are held to the same tolerances,
// reported apart: the double reference is out of float's reach there, but device and C++ are both
// float and lose the same bits of p * freq (floor and the fractional part are exact in both).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gorge/gorge.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/perlin_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

#include "reference.hpp"

namespace gorge_test {
namespace parity {

using gorge_test::csv_table;

// Keep in sync with parity.comp, parity.hlsl, parity.wgsl and run_parity.mjs.
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
    kind_noise = 12,
};
enum basis_id : std::uint32_t { basis_gradient = 0, basis_value = 1, basis_simplex = 2, basis_perlin = 3 };
enum fractal_id : std::uint32_t { fractal_sum = 0, fractal_billow = 1, fractal_ridged = 2, fractal_damped = 3 };

constexpr double bit_exact = -1.0;
constexpr double value_tolerance = 1e-4;
constexpr double ridge_tolerance = 1e-2;
constexpr double steep_height_tolerance = 2e-5;
constexpr double steep_ridge_tolerance = 5e-3;
constexpr double near_coordinate = 8.0;  // reference rows beyond this are reported apart ("far")
constexpr int field_points = 128;

inline std::uint32_t bits_of(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

/// One compared output of a group of rows.
struct output_spec {
    std::string name;
    int slot;          // which of the row's 8 output floats
    double tolerance;  // absolute; < 0 (bit_exact): bit for bit
    bool relative_to_range = false;  // tolerance times max(1, largest |C++ value| in the group)
    bool vs_double = false;          // compared with the reference (double) values
    /// The C++ values are all equal by design (perlin noise's value at lattice points, 0): the
    /// check that an output varies, so that its comparison proves something, is skipped.
    bool constant = false;
};

struct group {
    std::string name;
    std::string line_kind;  // "line" (CSV line), "point" or "sample" (tile index)
    std::vector<output_spec> outputs;
};

struct batch {
    std::string hash;
    /// The hash whose rows of tests/data/reference give this batch its inputs: its own, or pcg3d's
    /// for prime_mix and prime_xor, which have no reference rows.
    std::string csv_hash;
    /// Whether the CSV's values are this hash's reference; false for borrowed rows (then no row of
    /// the batch carries them, and nothing is compared with them).
    bool csv_reference = true;
    std::vector<std::uint32_t> words;
    std::vector<std::array<float, out_words>> cpu;
    std::vector<std::array<double, out_words>> reference;
    std::vector<std::uint32_t> group_of;
    std::vector<std::uint32_t> line;

    std::uint32_t* add_row(row_kind kind, std::size_t g, std::size_t where) {
        words.resize(words.size() + row_words, 0u);
        std::uint32_t* w = &words[words.size() - row_words];
        w[0] = kind;
        cpu.emplace_back();
        cpu.back().fill(0.0f);
        reference.emplace_back();
        reference.back().fill(std::nan(""));
        group_of.push_back(static_cast<std::uint32_t>(g));
        line.push_back(static_cast<std::uint32_t>(where));
        return w;
    }
};

/// Every group of rows of all batches; a row names its group by index.
struct group_table {
    std::vector<group> groups;
    std::size_t add(std::string name, const char* line_kind, std::vector<output_spec> outputs) {
        groups.push_back({std::move(name), line_kind, std::move(outputs)});
        return groups.size() - 1;
    }
};

/// How many rows the generated parts get: the Vulkan tests run more than the browser test, whose
/// software adapter is slower.
struct row_sizes {
    /// Side of the demo tile (pcg3d); sample indices are y * tile_size + x for every tile.
    int tile_size;
    /// Side of the demo tile of prime_mix and of prime_xor (same area, coarser: keeps the runtime).
    int coarse_tile_size;
    /// Side of each block of lattice points (prime_mix, prime_xor).
    std::uint32_t lattice_block_side;
};

/// Whether a hash policy is exact integer arithmetic, so that its hashes must agree bit for bit.
inline bool exact_hash(const std::string& hash) {
    return hash == "pcg3d" || hash == "prime_mix" || hash == "prime_xor";
}

/// The hashes without reference rows of their own (tests/data/reference holds pcg3d's and
/// shadertoy's): they borrow pcg3d's inputs and get the lattice blocks and the coarse demo tile.
inline bool borrows_pcg3d_rows(const std::string& hash) { return hash == "prime_mix" || hash == "prime_xor"; }

/// Name of the group of a batch's rows of a reference file; "*" marks rows borrowed from another hash.
inline std::string csv_group_name(const batch& b, const char* file) {
    return std::string(file) + " " + b.hash + (b.csv_reference ? "" : "*");
}

inline std::vector<output_spec> outputs3(const char* a, const char* b, const char* c, int first = 0,
                                  double gradient_tolerance = value_tolerance) {
    return {{a, first, value_tolerance}, {b, first + 1, gradient_tolerance}, {c, first + 2, gradient_tolerance}};
}

inline void put_params(std::uint32_t* w, const gorge::erosion_params<float>& ep) {
    const float params[] = {ep.scale,      ep.strength,   ep.gully_weight, ep.detail,          ep.rounding.x,
                            ep.rounding.y, ep.rounding.z, ep.rounding.w,   ep.onset.x,         ep.onset.y,
                            ep.onset.z,    ep.onset.w,    ep.assumed_slope.x, ep.assumed_slope.y};
    for (std::size_t i = 0; i < 14; ++i) w[1 + i] = bits_of(params[i]);
    w[15] = static_cast<std::uint32_t>(ep.octaves);
    w[16] = bits_of(ep.lacunarity), w[17] = bits_of(ep.gain), w[18] = bits_of(ep.cell_scale);
    w[19] = bits_of(ep.normalization);
}

inline void put_filter_inputs(std::uint32_t* w, glm::vec2 p, glm::vec3 h, float fade, std::uint32_t seed) {
    w[20] = bits_of(p.x), w[21] = bits_of(p.y), w[22] = bits_of(h.x), w[23] = bits_of(h.y), w[24] = bits_of(h.z);
    w[25] = bits_of(fade), w[26] = seed;
}

// ---- reference rows -------------------------------------------------------------------------------

inline void fill_reference_rows(batch& b, group_table& groups) {
    {
        const csv_table t("hash.csv");
        const double tol = exact_hash(b.hash) ? bit_exact : value_tolerance;
        const std::size_t g = groups.add(csv_group_name(b, "hash.csv"), "line", {{"x", 0, tol}, {"y", 1, tol}});
        for (std::size_t r = 0; r < t.size(); ++r) {
            if (t.text(r, "hash") != b.csv_hash) continue;
            const auto cx = static_cast<std::int32_t>(t.number(r, "cx"));
            const auto cy = static_cast<std::int32_t>(t.number(r, "cy"));
            const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
            std::uint32_t* w = b.add_row(kind_hash, g, r + 2);
            w[1] = static_cast<std::uint32_t>(cx), w[2] = static_cast<std::uint32_t>(cy), w[3] = seed;
            const glm::vec2 h =
                gorge_test::with_hash(b.hash, [&](auto hash) { return decltype(hash)::hash2(cx, cy, seed); });
            b.cpu.back()[0] = h.x, b.cpu.back()[1] = h.y;
            if (!b.csv_reference) continue;
            b.reference.back()[0] = t.number(r, "x"), b.reference.back()[1] = t.number(r, "y");
        }
    }
    {
        const csv_table t("noise.csv");
        const std::size_t g_near =
            groups.add(csv_group_name(b, "noise.csv") + " |p| <= 8", "line", outputs3("value", "dx", "dy"));
        const std::size_t g_far =
            groups.add(csv_group_name(b, "noise.csv") + " |p| > 8", "line", outputs3("value", "dx", "dy"));
        for (std::size_t r = 0; r < t.size(); ++r) {
            if (t.text(r, "hash") != b.csv_hash) continue;
            const double px = t.number(r, "px"), py = t.number(r, "py");
            gorge::fbm_params<float> fp;
            fp.frequency = float(t.number(r, "freq"));
            fp.octaves = static_cast<int>(t.number(r, "octaves"));
            fp.lacunarity = float(t.number(r, "lacunarity"));
            fp.gain = float(t.number(r, "gain"));
            const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
            const bool far = std::max(std::fabs(px), std::fabs(py)) > near_coordinate;
            std::uint32_t* w = b.add_row(kind_fbm, far ? g_far : g_near, r + 2);
            const glm::vec2 p{float(px), float(py)};
            w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = bits_of(fp.frequency);
            w[4] = static_cast<std::uint32_t>(fp.octaves), w[5] = bits_of(fp.lacunarity), w[6] = bits_of(fp.gain);
            w[7] = seed;
            const glm::vec3 n =
                gorge_test::with_hash(b.hash, [&](auto hash) { return gorge::fbm<decltype(hash)>(p, fp, seed); });
            b.cpu.back() = {n.x, n.y, n.z};
            if (!b.csv_reference) continue;
            b.reference.back()[0] = t.number(r, "value");
            b.reference.back()[1] = t.number(r, "dx");
            b.reference.back()[2] = t.number(r, "dy");
        }
    }
    {
        const csv_table t("phacelle.csv");
        const std::size_t g = groups.add(csv_group_name(b, "phacelle.csv"), "line",
                                        {{"c", 0, value_tolerance}, {"s", 1, value_tolerance},
                                         {"sidex", 2, value_tolerance}, {"sidey", 3, value_tolerance}});
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
            b.reference.back()[0] = t.number(r, "c");
            b.reference.back()[1] = t.number(r, "s");
            b.reference.back()[2] = t.number(r, "sidex");
            b.reference.back()[3] = t.number(r, "sidey");
        }
    }
    {
        const csv_table t("erosion_filter.csv");
        const std::size_t g = groups.add(csv_group_name(b, "erosion_filter.csv"), "line",
                                        {{"height_delta", 0, value_tolerance},
                                         {"slope_delta_x", 1, value_tolerance},
                                         {"slope_delta_y", 2, value_tolerance},
                                         {"magnitude", 3, value_tolerance},
                                         {"ridge_map", 4, ridge_tolerance},
                                         {"fade_target", 5, value_tolerance}});
        const char* const columns[] = {"height_delta", "slope_delta_x", "slope_delta_y", "magnitude", "ridge_map",
                                       "fade_target"};
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
            put_params(w, ep);
            put_filter_inputs(w, p, h, fade, seed);
            const gorge::erosion_result<float> e = gorge_test::with_hash(
                b.hash, [&](auto hash) { return gorge::erosion_filter<decltype(hash)>(p, h, fade, ep, seed); });
            b.cpu.back() = {e.height_delta, e.slope_delta.x, e.slope_delta.y, e.magnitude, e.ridge_map, e.fade_target};
            if (!b.csv_reference) continue;
            for (std::size_t i = 0; i < 6; ++i) b.reference.back()[i] = t.number(r, columns[i]);
        }
    }
}

inline void add_demo_row(batch& b, std::size_t g, std::size_t where, glm::vec2 p, std::uint32_t seed) {
    std::uint32_t* w = b.add_row(kind_demo, g, where);
    w[1] = bits_of(p.x), w[2] = bits_of(p.y), w[3] = seed;
    const gorge::demo_sample<float> s =
        gorge_test::with_hash(b.hash, [&](auto hash) { return gorge::demo_pipeline<decltype(hash)>(p, seed); });
    b.cpu.back() = {s.height, s.ridge_map, s.input_height};
}

inline void fill_demo_rows(batch& b, group_table& groups) {
    const csv_table t("demo.csv");
    const std::size_t g = groups.add(csv_group_name(b, "demo.csv"), "line",
                                    {{"eroded_height", 0, value_tolerance}, {"ridge_map", 1, ridge_tolerance}});
    for (std::size_t r = 0; r < t.size(); ++r) {
        if (t.text(r, "hash") != b.csv_hash) continue;
        add_demo_row(b, g, r + 2, glm::vec2(float(t.number(r, "px")), float(t.number(r, "py"))),
                     static_cast<std::uint32_t>(t.number(r, "seed")));
        if (!b.csv_reference) continue;
        b.reference.back()[0] = t.number(r, "eroded_height");
        b.reference.back()[1] = t.number(r, "ridge_map");
    }
}

// The demo example's tile: sample (x, y) at ((x + 0.5) / size, (y + 0.5) / size), seed 0. Sample
// indices are y * tile_size + x whatever the size, so that the report names (x, y).
inline void fill_demo_tile(batch& b, group_table& groups, int size, int tile_size) {
    const std::size_t g = groups.add("demo tile " + std::to_string(size) + "x" + std::to_string(size) + " " + b.hash,
                                    "sample",
                                    {{"height", 0, value_tolerance},
                                     {"ridge_map", 1, ridge_tolerance},
                                     {"input_height", 2, value_tolerance}});
    const float spacing = 1.0f / float(size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
            add_demo_row(b, g, std::size_t(y) * std::size_t(tile_size) + std::size_t(x),
                         glm::vec2((float(x) + 0.5f) * spacing, (float(y) + 0.5f) * spacing), 0u);
}

// ---- lattice blocks: an exact hash over many lattice points, not just the CSV's few ---------------

constexpr std::uint32_t lattice_far = 1u << 30;
constexpr std::uint32_t lattice_wrap = 1u << 31;  // as unsigned: where 2^31 - 1 wraps to -2^31
struct lattice_block {
    const char* name;
    std::uint32_t x, y;  // centre, as the 32-bit unsigned lattice coordinates the kernels pass
};
/// Blocks centred on the origin, on (2^30, 2^30), on (2^30, -2^30), and on (2^31, 0), where x wraps
/// from 2^31 - 1 to -2^31. Four blocks keep the runtime; that points 2^31 or (2^30, +-2^30) apart do
/// not hash alike (the rotated y product's purpose) is tested on the C++ side (test_hash.cpp).
constexpr lattice_block lattice_blocks[] = {
    {"origin", 0u, 0u},
    {"(2^30,2^30)", lattice_far, lattice_far},
    {"(2^30,-2^30)", lattice_far, 0u - lattice_far},
    {"x wrap 2^31", lattice_wrap, 0u},
};
constexpr std::uint32_t lattice_seeds[] = {0u, 1u, 2024u, 0xFFFFFFFFu};

/// Rows of kind_hash over side x side lattice points of every block, for every seed (bit-exact, as
/// the hash is integer arithmetic); point index (seed index * side + y) * side + x.
inline void fill_lattice_block_rows(batch& b, group_table& groups, std::uint32_t side) {
    for (const lattice_block& block : lattice_blocks) {
        const std::size_t g = groups.add("hash " + std::to_string(side) + "^2 " + block.name + " " + b.hash, "point",
                                         {{"x", 0, bit_exact}, {"y", 1, bit_exact}});
        // Unsigned, so that the wrap block crosses 2^31 - 1 -> -2^31 as the kernels' offsets do.
        const std::uint32_t x0 = block.x - side / 2, y0 = block.y - side / 2;
        std::size_t index = 0;
        for (std::uint32_t seed : lattice_seeds)
            for (std::uint32_t y = 0; y < side; ++y)
                for (std::uint32_t x = 0; x < side; ++x, ++index) {
                    const std::uint32_t cx = x0 + x, cy = y0 + y;
                    std::uint32_t* w = b.add_row(kind_hash, g, index);
                    w[1] = cx, w[2] = cy, w[3] = seed;
                    const glm::vec2 h = gorge_test::with_hash(
                        b.hash, [&](auto hash) { return decltype(hash)::template lattice2<float>(cx, cy, seed); });
                    b.cpu.back()[0] = h.x, b.cpu.back()[1] = h.y;
                }
    }
}

// ---- steep slopes ---------------------------------------------------------------------------------

constexpr int steep_first_decade = -6, steep_last_decade = 12;
constexpr int steep_steps_per_decade = 4;
constexpr int steep_directions = 8;

inline void fill_steep_rows(batch& b, group_table& groups) {
    const std::size_t g = groups.add("steep slopes " + b.hash, "point",
                                    {{"height_delta", 0, value_tolerance},
                                     {"slope_delta_x", 1, value_tolerance},
                                     {"slope_delta_y", 2, value_tolerance},
                                     {"ridge_map", 4, ridge_tolerance},
                                     {"fade_target", 5, value_tolerance},
                                     {"height_delta vs double", 0, steep_height_tolerance, false, true},
                                     {"ridge_map vs double", 4, steep_ridge_tolerance, false, true}});
    const glm::vec2 positions[] = {{0.3f, 0.7f}, {-1.7f, 2.2f}, {5.1f, -3.4f}};
    const float fades[] = {-0.6f, 0.2f, 0.9f};
    const std::uint32_t seeds[] = {0u, 7u, 4000000000u};
    const gorge::erosion_params<float> pf;
    const gorge::erosion_params<double> pd;
    constexpr double two_pi = 6.283185307179586;
    std::size_t index = 0;
    for (int step = steep_first_decade * steep_steps_per_decade; step <= steep_last_decade * steep_steps_per_decade;
         ++step) {
        const double len = std::pow(10.0, double(step) / steep_steps_per_decade);
        for (int d = 0; d < steep_directions; ++d) {
            const double angle = two_pi * (d + 0.3) / steep_directions;  // off the axes
            for (std::size_t k = 0; k < 3; ++k, ++index) {
                const glm::vec2 p = positions[k];
                const glm::vec3 h(0.5f, float(len * std::cos(angle)), float(len * std::sin(angle)));
                const float fade = fades[(k + std::size_t(d)) % 3];
                const std::uint32_t seed = seeds[(k + std::size_t(step + 100)) % 3];
                std::uint32_t* w = b.add_row(kind_filter, g, index);
                put_params(w, pf);
                put_filter_inputs(w, p, h, fade, seed);
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

// ---- noise fields ---------------------------------------------------------------------------------

/// Point i of the R2 low-discrepancy sequence, scaled to [lo, hi]^2.
inline glm::vec2 r2_point(int i, float lo, float hi) {
    const double a = std::fmod(0.5 + 0.7548776662466927 * i, 1.0), b = std::fmod(0.5 + 0.5698402909980532 * i, 1.0);
    return {float(lo + (hi - lo) * a), float(lo + (hi - lo) * b)};
}

inline std::uint32_t field_seed(int i) {
    const std::uint32_t seeds[] = {0u, 7u, 2024u, 4000000000u};
    return seeds[i % 4];
}

constexpr const char* basis_names[] = {"gradient", "value", "simplex", "perlin"};

/// Whether a hash policy can drive perlin noise (it gives its 32-bit word: the exact policies).
template <class Hash>
inline constexpr bool has_perlin = gorge::detail::has_combine_bits<Hash>::value;

/// The bases a hash policy's rows run: all four, or the first three where it has no perlin noise.
template <class Hash>
std::vector<std::uint32_t> bases_of() {
    std::vector<std::uint32_t> bases{basis_gradient, basis_value, basis_simplex};
    if constexpr (has_perlin<Hash>) bases.push_back(basis_perlin);
    return bases;
}

/// Calls f with the C++ basis policy of a port's basis id, hashed with the policy the port runs.
template <class Hash, class F>
decltype(auto) with_basis(std::uint32_t basis, F&& f) {
    if (basis == basis_value) return f(gorge::value_basis<Hash>{});
    if (basis == basis_simplex) return f(gorge::simplex_basis<Hash>{});
    if (basis == basis_perlin) {
        if constexpr (has_perlin<Hash>)
            return f(gorge::perlin_basis<Hash>{});
        else
            throw std::logic_error("perlin noise needs a hash policy with combine_bits");
    }
    return f(gorge::gradient_basis<Hash>{});
}

/// Perlin noise's directions, written out here rather than taken from perlin_noise.hpp, so that a
/// wrong table on either side shows.
constexpr float perlin_table_x[8] = {0.92387953f,  0.38268343f,  -0.38268343f, -0.92387953f,
                                     -0.92387953f, -0.38268343f, 0.38268343f,  0.92387953f};
constexpr float perlin_table_y[8] = {0.38268343f,  0.92387953f,  0.92387953f,  0.38268343f,
                                     -0.38268343f, -0.92387953f, -0.92387953f, -0.38268343f};

/// The table index perlin noise must pick at lattice point (cx, cy): the top 3 bits of the
/// policy's word of that point, from its split form.
template <class Hash>
std::uint32_t perlin_lattice_index(std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
    const std::uint32_t ax = Hash::axis_x(static_cast<std::uint32_t>(cx), seed);
    const std::uint32_t ay = Hash::axis_y(static_cast<std::uint32_t>(cy), seed);
    return Hash::combine_bits(ax, ay, seed) >> 29;
}

/// Lattice points of the perlin lattice rows: a 9 x 9 block around the origin and a few far
/// points (floats hold these integers exactly, so floor(q) = q and the fade is exactly 0).
inline std::vector<glm::ivec2> perlin_lattice_points() {
    std::vector<glm::ivec2> points;
    for (int y = -4; y <= 4; ++y)
        for (int x = -4; x <= 4; ++x) points.emplace_back(x, y);
    const glm::ivec2 far[] = {{1000003, -77}, {-1000003, 77}, {8388607, -8388608}, {-8388608, 8388607},
                              {16777216, -16777216}, {-16777216, 16777216}};
    for (const glm::ivec2& p : far) points.push_back(p);
    return points;
}

// Gradient tolerance of a fractal field: 1e-4 times its highest octave frequency. In float, the
// lattice-relative position of octave o carries an absolute rounding error of about
// ulp(freq_o |p|), and a device that fuses multiply-adds rounds it differently from the C++ path;
// the gradient (freq_o times the basis gradient) then differs by about freq_o * Hessian * that
// error, i.e. in proportion to the frequency. On an NVIDIA H200 the simplex fractals differ by up
// to ~1.5e-3 at a top frequency of 64 (the island); lavapipe stays near 1e-5. Values are held to
// the plain 1e-4.
inline double fractal_gradient_tolerance(double frequency, int octaves, double lacunarity) {
    return value_tolerance * std::max(1.0, frequency * std::pow(lacunarity, octaves - 1));
}

/// Adds a row of the point layout the kind_basis and kind_noise rows share: the point q, its seed
/// and the basis id.
inline void add_basis_point_row(batch& b, row_kind kind, std::size_t g, std::size_t where, glm::vec2 q,
                                std::uint32_t seed, std::uint32_t basis) {
    std::uint32_t* w = b.add_row(kind, g, where);
    w[1] = bits_of(q.x), w[2] = bits_of(q.y), w[3] = seed, w[4] = basis;
}

/// Perlin noise's value and gradient form (kind_noise: the port's gorge_basis_eval; its d2 form
/// runs with the other bases) at 128 points over many cells, and both forms at lattice points,
/// where the value must be exactly 0 and the gradient the table direction of the hash word's top 3
/// bits, bit for bit. The C++ path is held to that as well (against perlin_table_x and _y), and
/// the lattice points must reach all 8 directions, so a wrong index or table on either side shows.
template <class Hash>
void fill_perlin_rows(batch& b, group_table& groups) {
    std::size_t g = groups.add("perlin noise " + b.hash, "point", outputs3("value", "dx", "dy"));
    for (int i = 0; i < field_points; ++i) {
        const glm::vec2 q = r2_point(i, -40.0f, 40.0f);
        const std::uint32_t seed = field_seed(i);
        add_basis_point_row(b, kind_noise, g, std::size_t(i), q, seed, basis_perlin);
        const glm::vec3 n = gorge::perlin_noise<Hash>(q, seed);
        b.cpu.back() = {n.x, n.y, n.z};
    }

    output_spec value{"value", 0, 0.0};  // exactly 0 (either sign) wherever it is evaluated
    value.constant = true;
    g = groups.add("perlin lattice " + b.hash, "point", {value, {"dx", 1, bit_exact}, {"dy", 2, bit_exact}});
    const std::vector<glm::ivec2> points = perlin_lattice_points();
    bool seen[8] = {};
    for (std::size_t i = 0; i < points.size(); ++i) {
        const glm::ivec2 c = points[i];
        const std::uint32_t seed = field_seed(int(i));
        const std::uint32_t k = perlin_lattice_index<Hash>(c.x, c.y, seed);
        seen[k] = true;
        const glm::vec2 q(float(c.x), float(c.y));
        const glm::vec3 n = gorge::perlin_noise<Hash>(q, seed);
        const gorge::noise_d2<float> d = gorge::perlin_noise_d2<Hash>(q, seed);
        const bool exact = n.x == 0.0f && d.value == 0.0f && bits_of(n.y) == bits_of(perlin_table_x[k]) &&
                           bits_of(n.z) == bits_of(perlin_table_y[k]) && bits_of(d.gradient.x) == bits_of(n.y) &&
                           bits_of(d.gradient.y) == bits_of(n.z);
        if (!exact)
            throw std::runtime_error("C++ perlin noise (" + b.hash + ") at lattice point (" + std::to_string(c.x) +
                                     ", " + std::to_string(c.y) + ") is not 0 with table direction " +
                                     std::to_string(k));
        add_basis_point_row(b, kind_noise, g, i, q, seed, basis_perlin);
        b.cpu.back() = {n.x, n.y, n.z};
        add_basis_point_row(b, kind_basis, g, i, q, seed, basis_perlin);
        b.cpu.back() = {d.value, d.gradient.x, d.gradient.y, d.dxx, d.dxy, d.dyy};
    }
    if (std::find(std::begin(seen), std::end(seen), false) != std::end(seen))
        throw std::runtime_error("the perlin lattice points of " + b.hash + " do not reach all 8 directions");
}

inline void fill_noise_field_rows(batch& b, group_table& groups) {
    std::size_t g = groups.add("derive_seed " + b.hash, "point", {{"seed", 0, bit_exact}});
    for (int i = 0; i < field_points; ++i) {
        const std::uint32_t seed = field_seed(i) + std::uint32_t(i) * 2654435761u, stream = std::uint32_t(i % 7);
        std::uint32_t* w = b.add_row(kind_seed, g, std::size_t(i));
        w[1] = seed, w[2] = stream;
        const std::uint32_t want = gorge::derive_seed(seed, stream);
        std::memcpy(&b.cpu.back()[0], &want, sizeof want);
    }

    gorge_test::with_hash(b.hash, [&](auto hash) {
        using Hash = decltype(hash);
        for (std::uint32_t basis : bases_of<Hash>()) {
            std::vector<output_spec> outs = outputs3("value", "dx", "dy");
            for (const char* h : {"dxx", "dxy", "dyy"}) outs.push_back({h, int(outs.size()), value_tolerance, true});
            g = groups.add(std::string(basis_names[basis]) + " noise d2 " + b.hash, "point", outs);
            for (int i = 0; i < field_points; ++i) {
                const glm::vec2 q = r2_point(i, -6.0f, 6.0f);
                const std::uint32_t seed = field_seed(i);
                add_basis_point_row(b, kind_basis, g, std::size_t(i), q, seed, basis);
                const gorge::noise_d2<float> n =
                    with_basis<Hash>(basis, [&](auto B) { return decltype(B)::template eval_d2<float>(q, seed); });
                b.cpu.back() = {n.value, n.gradient.x, n.gradient.y, n.dxx, n.dxy, n.dyy};
            }
        }
        if constexpr (has_perlin<Hash>) fill_perlin_rows<Hash>(b, groups);
        const char* const fractal_names[] = {"fractal_sum", "billow", "ridged", "damped_fbm"};
        for (std::uint32_t which : {fractal_sum, fractal_billow, fractal_ridged, fractal_damped}) {
            for (std::uint32_t basis : bases_of<Hash>()) {
                const gorge::fbm_params<float> fp{1.5f, 5, 2.0f, 0.5f};
                const gorge::ridged_params<float> rp{};
                const gorge::damped_fbm_params<float> dp{};
                const double grad_tol =
                    which == fractal_ridged   ? fractal_gradient_tolerance(rp.frequency, rp.octaves, rp.lacunarity)
                    : which == fractal_damped ? fractal_gradient_tolerance(dp.frequency, dp.octaves, dp.lacunarity)
                                              : fractal_gradient_tolerance(fp.frequency, fp.octaves, fp.lacunarity);
                g = groups.add(std::string(fractal_names[which]) + " " + basis_names[basis] + " " + b.hash, "point",
                              outputs3("value", "dx", "dy", 0, grad_tol));
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
        // The island: radial over gradient noise, square over simplex noise, and (exact hashes)
        // radial over perlin noise.
        std::vector<std::pair<gorge::falloff_shape, std::uint32_t>> islands{
            {gorge::falloff_shape::radial, basis_gradient}, {gorge::falloff_shape::square_bump, basis_simplex}};
        if constexpr (has_perlin<Hash>) islands.emplace_back(gorge::falloff_shape::radial, basis_perlin);
        for (const auto& [shape, basis] : islands) {
            gorge::island_params<float> ip;
            ip.falloff.shape = shape;
            std::vector<output_spec> outs = outputs3(
                "height", "height dx", "height dy", 0,
                fractal_gradient_tolerance(ip.terrain.frequency, ip.terrain.octaves, ip.terrain.lacunarity));
            for (const output_spec& o :
                 outputs3("moisture", "moisture dx", "moisture dy", 3,
                          fractal_gradient_tolerance(ip.moisture.frequency, ip.moisture.octaves, ip.moisture.lacunarity)))
                outs.push_back(o);
            g = groups.add(std::string("island ") +
                               (shape == gorge::falloff_shape::radial ? "radial " : "square ") + basis_names[basis] +
                               " " + b.hash,
                           "point", outs);
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
        {
            std::vector<output_spec> outs = outputs3("transform", "transform dx", "transform dy");
            for (const output_spec& o : outputs3("product", "product dx", "product dy", 3)) outs.push_back(o);
            g = groups.add("transform, product " + b.hash, "point", outs);
        }
        const glm::mat2 m = glm::mat2(0.8f, 0.6f, -0.6f, 0.8f) * 1.5f;  // as in the parity shaders
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

    g = groups.add("power, terrace profiles " + b.hash, "point",
                  {{"power", 0, value_tolerance}, {"power slope", 1, value_tolerance},
                   {"terrace", 2, value_tolerance}, {"terrace slope", 3, value_tolerance}});
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
    g = groups.add("power profile saturation " + b.hash, "point", {{"power", 0, bit_exact}, {"power slope", 1, bit_exact}});
    {
        const float huge_inputs[] = {1e20f, -1e20f, 3e38f, -3e38f, 0.0f};
        const float steep_exponents[] = {3.0f, 5.0f, 40.0f};
        std::size_t index = 0;
        for (float e : huge_inputs)
            for (float k : steep_exponents) {
                std::uint32_t* w = b.add_row(kind_profile, g, index++);
                w[1] = bits_of(e), w[2] = bits_of(k), w[3] = bits_of(1.0f), w[4] = bits_of(1.0f);
                const glm::vec2 pw = gorge::power_profile<float>{k}(e);
                b.cpu.back() = {pw.x, pw.y, 0.0f, 0.0f};
            }
    }
    {
        std::vector<output_spec> outs = outputs3("radial", "radial dx", "radial dy");
        for (const output_spec& o : outputs3("square bump", "square dx", "square dy", 3)) outs.push_back(o);
        g = groups.add("falloff distances " + b.hash, "point", outs);
    }
    for (int i = 0; i < field_points; ++i) {
        const glm::vec2 n = r2_point(i, -1.5f, 1.5f);
        std::uint32_t* w = b.add_row(kind_distance, g, std::size_t(i));
        w[1] = bits_of(n.x), w[2] = bits_of(n.y);
        const glm::vec3 r = gorge::radial_distance(n), q = gorge::square_bump_distance(n);
        b.cpu.back() = {r.x, r.y, r.z, q.x, q.y, q.z};
    }
}

// Scales the relative_to_range tolerances by max(1, largest |C++ value| of the output in its group).
inline void resolve_relative_tolerances(const std::vector<batch>& batches, group_table& table) {
    for (std::size_t gi = 0; gi < table.groups.size(); ++gi)
        for (output_spec& o : table.groups[gi].outputs) {
            if (!o.relative_to_range) continue;
            double largest = 1.0;
            for (const batch& b : batches)
                for (std::size_t r = 0; r < b.group_of.size(); ++r)
                    if (b.group_of[r] == gi)
                        largest = std::max(largest, std::fabs(double(b.cpu[r][std::size_t(o.slot)])));
            o.tolerance *= largest;
        }
}

/// Every row of every hash policy (pcg3d, shadertoy, prime_mix, prime_xor), with its group and
/// resolved tolerances.
inline std::vector<batch> build_batches(const row_sizes& sizes, group_table& groups) {
    std::vector<batch> batches;
    for (const char* hash : {"pcg3d", "shadertoy", "prime_mix", "prime_xor"}) {
        batch b;
        b.hash = hash;
        // prime_mix and prime_xor have no reference rows: they run the pcg3d rows' inputs, compared
        // with the C++ float path only (the CSV's values are pcg3d's, so there is no "vs ref").
        b.csv_reference = !borrows_pcg3d_rows(b.hash);
        b.csv_hash = b.csv_reference ? b.hash : "pcg3d";
        fill_reference_rows(b, groups);
        if (borrows_pcg3d_rows(b.hash)) fill_lattice_block_rows(b, groups, sizes.lattice_block_side);
        fill_steep_rows(b, groups);
        fill_demo_rows(b, groups);
        // The tile uses gorge's default hash, as examples/demo.cpp and gpu_tile do; the shadertoy
        // variant of the pipeline is covered by demo.csv (one tile keeps the sanitizer build's
        // runtime); prime_mix and prime_xor get a coarser tile over the same area.
        if (b.hash == "pcg3d") fill_demo_tile(b, groups, sizes.tile_size, sizes.tile_size);
        if (borrows_pcg3d_rows(b.hash)) fill_demo_tile(b, groups, sizes.coarse_tile_size, sizes.tile_size);
        fill_noise_field_rows(b, groups);
        batches.push_back(std::move(b));
    }
    resolve_relative_tolerances(batches, groups);
    return batches;
}

}  // namespace parity
}  // namespace gorge_test
