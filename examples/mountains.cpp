// mountains — a mountain range grown by landscape evolution (tectonic uplift against stream
// power erosion and hillslope diffusion), then detailed with the analytic erosion filter, and
// rendered as shaded relief with its river network.
//
// Usage: mountains [size=512] [steps=300]   (writes into the current directory)
// The map is 51.2 km square (cells of 51200 / size metres) with the sea (fixed base level at 0 m)
// on every edge. What makes the drainage tree-like rather than a comb of parallel valleys:
//   - the uplift is an irregular massif, not a smooth ridge with straight contours: a ridge along
//     x at 45% of the height of the map (its line wandering with noise, ±30% in rate along it),
//     merged with broad fBm (frequency 2.5) and squashed by a smoothstep, so that sub-ranges,
//     spurs and lower basins alternate and rivers must collect tributaries from several sides.
//     Peak 2.4 mm/yr; the lowlands keep 10% of it, so they grow hills and valleys of their own
//     instead of staying a striped plain. It fades to 0 only over the 5% of the map next to each
//     edge (a wide fade left a flat strip along the coast where rivers ran along the border);
//   - the starting plain (5 m) is rough at the cell scale: ±5 m fBm plus ±3 m of white noise per
//     cell. Smooth starts make D8 routing send parallel rills straight down the uplift slope;
//     random cell-scale pits and bumps let channels wander, meet and branch;
//   - hillslope diffusion D = 0.3 m²/yr (D·dt/cell² = 0.6 at 512²) rounds the ridges and sets
//     the spacing of the smallest valleys at a few cells instead of one rill per column;
//   - stream power K = 1e-5 /yr (m = 0.5, n = 1) gives a range about 3 km high.
// Steps of 20 kyr: 300 steps (6 Myr) bring the range close to the steady state where uplift and
// erosion balance (500 steps lower the highest peak by 4%).
//   mountains_evolved.png   shaded relief of the evolved range, rivers drawn by drainage area
//   mountains_relief.png    the same after the erosion filter at twice the resolution (gullies),
//                           6 bits per colour channel (keeps the file under 2 MB at 1024²)
//   mountains.r16           the final heights (16-bit raw, twice the resolution)
// and prints the time of each stage. The output is deterministic (fixed seeds).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <gorge/gorge.hpp>

#include "image_io.hpp"

namespace {

using gorge_example::rgb;
using clock_type = std::chrono::steady_clock;

constexpr float map_extent = 51200.0f;  // metres
constexpr float peak_uplift = 2.4e-3f;  // metres per year on the highest massif
constexpr float lowland_uplift = 0.1f;  // fraction of peak_uplift everywhere away from the coast
constexpr float coast_width = 0.05f;    // fraction of the map over which uplift fades to 0 at each edge
constexpr float relief_levels = 63.0f;  // levels per colour channel of mountains_relief.png (6 bits:
                                         // a smaller file, no visible banding)
constexpr float cell_noise = 3.0f;      // metres: amplitude of the white noise on the starting plain
constexpr float river_area = 2.0e7f;    // m²: cells draining 20 km² and more are drawn as rivers

double seconds_since(clock_type::time_point& t) {
    const clock_type::time_point now = clock_type::now();
    const double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
}

/// Deterministic white noise in [-1, 1) for cell (x, y): an integer hash (multiply, xor-shift).
float white_noise(std::uint32_t x, std::uint32_t y, std::uint32_t seed) {
    std::uint32_t h = (x * 0x8da6b343u) ^ (y * 0xd8163841u) ^ (seed * 0xcb1ab31fu);
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return float(h >> 8) / float(1u << 24) * 2.0f - 1.0f;
}

float smoothstep01(float v) {
    const float c = std::clamp(v, 0.0f, 1.0f);
    return c * c * (3.0f - 2.0f * c);
}

/// Relief of h (metres, cells of `cell` metres) with rivers: blue where the drainage area (at the
/// nearest cell of the evolution grid, `area`, `scale` output cells per grid cell) exceeds
/// river_area, stronger for larger rivers.
std::vector<rgb> render(const gorge::grid<float>& h, float cell, const gorge::grid<float>& area, int scale,
                        float top) {
    std::vector<rgb> px(h.size());
    const gorge_example::value_range range{0.0f, top};
    for (std::ptrdiff_t y = 0; y < h.height(); ++y)
        for (std::ptrdiff_t x = 0; x < h.width(); ++x) {
            const rgb c = gorge_example::altitude_tint(gorge_example::unit(h(x, y), range));
            const float shade = 0.25f + 0.95f * gorge_example::hillshade(h.view(), x, y, 1.0f / cell);
            rgb out{c.r * shade, c.g * shade, c.b * shade};
            const float a = area(std::min(x / scale, area.width() - 1), std::min(y / scale, area.height() - 1));
            if (a >= river_area) {
                // 0 at the threshold, 1 at 100 times it.
                const float w = std::clamp(0.45f + 0.3f * std::log10(a / river_area), 0.0f, 0.95f);
                const rgb water{0.16f, 0.36f, 0.72f};
                out = {out.r + (water.r - out.r) * w, out.g + (water.g - out.g) * w, out.b + (water.b - out.b) * w};
            }
            px[std::size_t(y * h.width() + x)] = out;
        }
    return px;
}

/// px with every channel rounded to one of `levels` + 1 evenly spaced values in [0, 1].
std::vector<rgb> quantised(std::vector<rgb> px, float levels) {
    for (rgb& c : px) {
        c.r = std::round(std::clamp(c.r, 0.0f, 1.0f) * levels) / levels;
        c.g = std::round(std::clamp(c.g, 0.0f, 1.0f) * levels) / levels;
        c.b = std::round(std::clamp(c.b, 0.0f, 1.0f) * levels) / levels;
    }
    return px;
}

}  // namespace

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 512;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 300;
    if (size < 8 || size > 8192) {
        std::fprintf(stderr, "mountains: size must be in 8..8192, got %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    if (steps < 0 || steps > 100000) {
        std::fprintf(stderr, "mountains: steps must be in 0..100000, got %s\n", argc > 2 ? argv[2] : "?");
        return 2;
    }
    clock_type::time_point t = clock_type::now();
    const float cell = map_extent / float(size);

    // Uplift: a ridge along x at 45% of the height of the map, its line wandering with noise, its
    // rate varying by ±30% along it, merged with broad noise into an irregular massif; the
    // lowlands keep lowland_uplift of the peak rate; all of it fades to 0 next to the edges.
    gorge::fbm_params<float> wander;
    wander.frequency = 2;
    wander.octaves = 3;
    gorge::fbm_params<float> strength;
    strength.frequency = 4;
    strength.octaves = 4;
    gorge::fbm_params<float> massif;
    massif.frequency = 2.5f;
    massif.octaves = 5;
    const auto uplift_field = [&](glm::vec2 p) {
        const glm::vec2 u = p / map_extent;  // 0..1 across the map
        const float line = 0.45f + 0.12f * gorge::fbm(glm::vec2(u.x, 0.5f), wander, 3u).x;
        const float across = (u.y - line) / 0.3f;
        const float ridge = std::exp(-across * across) * (1.0f + 0.3f * gorge::fbm(u, strength, 5u).x);
        const float high = smoothstep01(0.55f * ridge + 0.8f * gorge::fbm(u, massif, 21u).x + 0.1f);
        const float fade = smoothstep01(std::min({u.x, 1.0f - u.x, u.y, 1.0f - u.y}) / coast_width);
        return peak_uplift * (lowland_uplift + (1.0f - lowland_uplift) * high) * fade;
    };
    const gorge::grid<float> uplift = gorge::sample_uplift<float>(size, size, cell, uplift_field);

    // Start: a plain a few metres high, rough down to the cell scale (fBm plus white noise).
    gorge::fbm_params<float> rough;
    rough.frequency = 16;
    rough.octaves = 5;
    gorge::grid<float> start(size, size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
            start(x, y) = 5.0f + 5.0f * gorge::fbm(glm::vec2(float(x), float(y)) / float(size), rough, 9u).x +
                          cell_noise * white_noise(std::uint32_t(x), std::uint32_t(y), 11u);
    const double t_setup = seconds_since(t);

    gorge::evolution_params<float> params;
    params.cell_size = cell;
    params.time_step = 2e4f;  // years
    params.erodibility = 1e-5f;
    params.area_exponent = 0.5f;
    params.slope_exponent = 1.0f;
    params.diffusivity = 0.3f;
    gorge::landscape_evolver<float> model(start.view(), params);
    model.set_uplift(uplift.view());
    gorge::evolution_options options;
    options.threads = 0;
    const gorge::evolution_stats stats = model.run(steps, options);
    const double t_evolve = seconds_since(t);
    gorge::grid<float> evolved(size, size);
    model.copy_heights(evolved.view());
    const gorge::grid<float> area = model.drainage_area();
    const float top = *std::max_element(evolved.begin(), evolved.end());

    // Gullies: the erosion filter on a bicubic field of the evolved heights, at twice the
    // resolution, in kilometres (so the filter's defaults apply at the scale of valleys).
    const int scale = 2;
    const int out_size = size * scale;
    const gorge::grid_field<float> field(evolved.view(), gorge::grid_placement<float>::spanning(
                                                             glm::vec2(map_extent - cell), size, size));
    gorge::erosion_params<float> erosion;
    erosion.scale = 1.6f;      // km: the largest gullies
    erosion.strength = 0.09f;  // of the scale: about 150 m deep at most
    erosion.validate();
    const float km = 1000.0f;
    gorge::grid<float> detailed(out_size, out_size);
    const float out_cell = (map_extent - cell) / float(out_size - 1);
    for (int y = 0; y < out_size; ++y)
        for (int x = 0; x < out_size; ++x) {
            const glm::vec2 p(float(x) * out_cell, float(y) * out_cell);
            const glm::vec3 hs = field(p);  // metres, metres per metre
            const glm::vec3 terrain(hs.x / km, hs.y, hs.z);
            const float fade = gorge::fade_target_from_altitude(terrain.x, 0.0f, top / km);
            const gorge::erosion_result<float> r = gorge::erosion_filter(p / km, terrain, fade, erosion, 17u);
            // Keep the coast and the rivers' floors: the filter's effect grows with height.
            const float keep = std::clamp(hs.x / 300.0f, 0.0f, 1.0f);
            detailed(x, y) = std::max(0.0f, hs.x + keep * r.height_delta * km);
        }
    const double t_filter = seconds_since(t);

    bool ok = gorge_example::write_rgb_png("mountains_evolved.png", size, size,
                                           render(evolved, cell, area, 1, top));
    ok = gorge_example::write_rgb_png("mountains_relief.png", out_size, out_size,
                                      quantised(render(detailed, out_cell, area, scale, top), relief_levels)) &&
         ok;
    ok = gorge_example::write_r16("mountains.r16", detailed.view(), {0.0f, top}) && ok;
    const double t_write = seconds_since(t);

    const gorge::evolution_timings& s = stats.seconds;
    std::printf("mountains: %d x %d cells of %.0f m, %d steps of %.0f years, highest peak %.0f m\n", size, size,
                double(cell), stats.steps, double(params.time_step), double(top));
    std::printf("  steps with depressions %d, lake cells in the last %zu\n", stats.depression_steps,
                stats.lake_cells);
    std::printf("  setup (uplift and start maps)  %7.3f s\n", t_setup);
    std::printf("  landscape evolution            %7.3f s  (%.1f M cell-steps/s)\n", t_evolve,
                double(size) * size * stats.steps / t_evolve / 1e6);
    std::printf("    uplift %.3f  receivers %.3f  depressions %.3f  stack %.3f  area %.3f  stream power %.3f  "
                "diffusion %.3f\n",
                s.uplift, s.receivers, s.depressions, s.stack, s.accumulation, s.stream_power, s.diffusion);
    std::printf("  erosion filter (%d x %d)     %7.3f s\n", out_size, out_size, t_filter);
    std::printf("  images and .r16                %7.3f s\n", t_write);
    return ok ? 0 : 1;
}
