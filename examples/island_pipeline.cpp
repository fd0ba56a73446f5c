// island_pipeline — a game map from noise to biomes: noise island -> droplet erosion ->
// depression fill -> D8 flow -> rivers -> biomes, timing each stage.
//
// Usage: island_pipeline [size=1024] [seed=1] [droplets=1048576]   (writes into the current directory)
//   island_pipeline_biomes.png         biome colours under a light hillshade, lakes and rivers in blue
//   island_pipeline_height.png         8-bit grayscale eroded height
//   island_pipeline_height.r16         16-bit little-endian raw eroded height (Unity / Unreal import)
//   island_pipeline_relief_before.png  shaded relief of the noise island
//   island_pipeline_relief_after.png   shaded relief after droplet erosion
//
// Drainage treats the sea as no-data: coastal cells are the outlets, so every land cell drains to
// the sea through the epsilon-filled surface, and lakes are where the plain fill is deeper than
// lake_min_depth. The droplet stage needs gorge/erosion/droplet.hpp; without it the stage is skipped (and
// the program says so).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>
#include <vector>

#include <gorge/biome/biome.hpp>
#include <gorge/drainage/depression_fill.hpp>
#include <gorge/drainage/flow.hpp>
#include <gorge/grid/grid.hpp>
#include <gorge/noise/island.hpp>
#if __has_include(<gorge/erosion/droplet.hpp>)
#include <gorge/erosion/droplet.hpp>
#define GORGE_EXAMPLE_HAS_DROPLETS 1
#else
#define GORGE_EXAMPLE_HAS_DROPLETS 0
#endif

#include "image_io.hpp"

namespace {

/// The map shows [-map_half_extent, map_half_extent]^2 around an island of radius 1.
constexpr float map_half_extent = 1.2f;
/// Physical scale: map width and relief (elevation e = 1) in metres. The droplet model works in
/// world units: one unit here is the cell of the 1024² map (map_width_m / 1024, about 20 m), so
/// the relief is about 82 units and a cell is 1024 / size units. The world, the droplet
/// parameters and the droplets per unit area stay the same at every size, and so does the
/// erosion. The biome rules see the same slopes.
constexpr float map_width_m = 20000.0f, relief_m = 1600.0f;
constexpr int reference_cells = 1024;
/// Droplets per world unit² (one per cell of the 1024² map).
constexpr double droplets_per_unit_area = 1.0;
/// A cell is a lake where the plain fill raises it by more than this (in e units).
constexpr float lake_min_depth = 0.002f;
/// A cell is a river where at least this share of the map's cells drains through it.
constexpr double river_share = 1.0 / 600.0;
/// Rivers carrying this many times the threshold are drawn wider.
constexpr std::uint32_t wide_river_factor = 8;
/// Hillshade strength over the biome colours, and the vertical exaggeration of the renders.
constexpr float biome_shade = 0.45f;
constexpr float relief_exaggeration = 1.5f;

using gorge_example::rgb;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

rgb from_palette(gorge::biome b) {
    const gorge::biome_rgb c = gorge::biome_colour(b);
    return {float(c.r) / 255.0f, float(c.g) / 255.0f, float(c.b) / 255.0f};
}

}  // namespace

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 1024;
    const auto seed = static_cast<std::uint32_t>(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1);
    const double droplets_arg =
        argc > 3 ? std::strtod(argv[3], nullptr) : droplets_per_unit_area * reference_cells * reference_cells;
    if (size < 16 || size > 16384) {
        std::fprintf(stderr, "island_pipeline: size must be in 16..16384, got %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    if (!(droplets_arg >= 0 && droplets_arg <= 1e12)) {
        std::fprintf(stderr, "island_pipeline: droplets must be in 0..1e12\n");
        return 2;
    }
    const auto droplet_count = static_cast<std::uint64_t>(droplets_arg);
    const float world_unit_m = map_width_m / float(reference_cells);
    const float relief = relief_m / world_unit_m;                 // height of e = 1, in world units
    const float cell_size = float(reference_cells) / float(size);  // in world units
    std::printf("island_pipeline: %dx%d, seed %u\n", size, size, seed);

    // 1. Noise island (Red Blob's recipe from gorge/noise/island.hpp) and a moisture field of the same seed.
    auto start = clock_type::now();
    gorge::island_params<float> island;
    const auto elevation_field = gorge::island_height_field(island, seed);
    const auto moisture_field = gorge::island_moisture_field(island, seed);
    const float spacing = 2.0f * map_half_extent / float(size);
    gorge::grid<float> height(size, size), moisture(size, size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const glm::vec2 p(-map_half_extent + (float(x) + 0.5f) * spacing,
                              -map_half_extent + (float(y) + 0.5f) * spacing);
            height(x, y) = elevation_field(p).x * relief;
            moisture(x, y) = moisture_field(p).x;
        }
    const gorge::grid<float> before = height;
    std::printf("  %-22s %8.3f s\n", "noise island", seconds_since(start));

    // 2. Droplet erosion, with a progress bar.
    std::fflush(stdout);  // the bar goes to stderr: keep the stage lines in order
#if GORGE_EXAMPLE_HAS_DROPLETS
    start = clock_type::now();
    {
        // Steep relief: slopes of 0.1 to 1 unit per unit. Lague's small-map defaults (tuned for a
        // relief of about 1 over 256 to 1024 cells) would clamp most steps to the height just
        // descended and leave a scalloped surface.
        gorge::droplet_params<float> params = gorge::droplet_params<float>::steep_mountains();
        params.cell_size = cell_size;
        // Below 256² cells are too coarse for the preset's brush and step: keep them >= 1 and
        // >= 1/16 cell.
        params.brush_radius = std::max(params.brush_radius, cell_size);
        params.step_length = std::max(params.step_length, cell_size / 16.0f);
        gorge::droplet_eroder<float> eroder(height.view(), params);
        gorge::droplet_options options;
        options.seed = seed;
        options.schedule = gorge::droplet_schedule::tiled;  // same result for any thread count
        options.threads = std::max(1u, std::thread::hardware_concurrency());
        constexpr int bar_width = 40;
        int shown = -1;  // last percentage drawn: redraw only when it changes
        options.progress = [&shown](double done) {
            const int percent = int(done * 100.0);
            if (percent == shown) return true;
            shown = percent;
            const int filled = percent * bar_width / 100;
            std::fprintf(stderr, "\r  droplets [%.*s%*s] %3d%%", filled, "########################################",
                         bar_width - filled, "", percent);
            if (percent == 100) std::fprintf(stderr, "\n");
            return true;
        };
        const gorge::droplet_stats stats = eroder.run_batch(droplet_count, options);
        std::printf("  %-22s %8.3f s  (%llu droplets, %u threads, eroded %.4g, outflow %.4g cell volumes)\n",
                    "droplet erosion", seconds_since(start), static_cast<unsigned long long>(stats.droplets),
                    options.threads, stats.eroded / double(cell_size * cell_size),
                    stats.outflow / double(cell_size * cell_size));
    }
#else
    std::printf("  %-22s skipped (gorge/erosion/droplet.hpp is not available in this build)\n", "droplet erosion");
    (void)droplet_count;
#endif

    // Elevation in e units from here on (the biome thresholds and the sea level are in e).
    gorge::grid<float> e(size, size);
    for (std::size_t i = 0; i < e.size(); ++i) e.data()[i] = height.data()[i] / relief;
    const float nan = std::numeric_limits<float>::quiet_NaN();

    // 3. Depression fill. The sea is no-data (NaN), so the coast is the outlet.
    start = clock_type::now();
    gorge::grid<float> land = e;
    for (float& v : land)
        if (v < island.sea_level) v = nan;
    gorge::fill_options<float> fill;
    fill.no_data = nan;
    gorge::grid<float> filled = land, lakes = land;
    const gorge::fill_stats<float> eps_stats = gorge::fill_depressions_epsilon(filled, fill);
    gorge::fill_depressions(lakes, fill);
    std::printf("  %-22s %8.3f s  (%zu cells raised; epsilon gradient rise <= %.3g, %zu cells overtaken)\n",
                "depression fill", seconds_since(start), eps_stats.raised_cells, double(eps_stats.max_gradient_rise),
                eps_stats.overtaken_cells);

    // 4. D8 flow directions and accumulation.
    start = clock_type::now();
    gorge::d8_options<float> d8;
    d8.no_data = nan;
    const gorge::grid<std::uint8_t> directions = gorge::flow_directions(filled, d8);
    const gorge::grid<std::uint32_t> accumulation = gorge::flow_accumulation(directions);
    std::printf("  %-22s %8.3f s\n", "D8 + accumulation", seconds_since(start));

    // 5. Rivers.
    start = clock_type::now();
    const auto river_threshold = std::max<std::uint32_t>(2, std::uint32_t(double(e.size()) * river_share));
    const gorge::grid<std::uint8_t> rivers = gorge::river_mask(accumulation, river_threshold);
    std::size_t river_cells = 0;
    for (std::uint8_t r : rivers) river_cells += r;
    std::printf("  %-22s %8.3f s  (threshold %u cells, %zu river cells)\n", "rivers", seconds_since(start),
                river_threshold, river_cells);

    // 6. Biomes, with the zones of Red Blob's table moved up to this island's sea level.
    start = clock_type::now();
    gorge::biome_params<float> bp;
    bp.sea_level = island.sea_level;
    bp.beach_top = island.sea_level + 0.015f;
    bp.lowland_top = 0.42f;
    bp.upland_top = 0.6f;
    bp.alpine_top = 0.75f;
    bp.snow_line = 0.85f;
    const float cell_in_e = cell_size / relief;  // horizontal cell size in e units
    const gorge::grid<gorge::biome> biomes = gorge::biome_map(e, moisture, cell_in_e, bp);
    std::printf("  %-22s %8.3f s\n", "biomes", seconds_since(start));

    // Images.
    start = clock_type::now();
    const rgb lake_colour{0.22f, 0.42f, 0.66f}, river_colour{0.16f, 0.36f, 0.70f};
    std::vector<rgb> px(e.size());
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const std::size_t i = std::size_t(y) * std::size_t(size) + std::size_t(x);
            rgb c = from_palette(biomes(x, y));
            const bool on_land = e(x, y) >= island.sea_level;
            if (on_land && lakes(x, y) - land(x, y) > lake_min_depth) c = lake_colour;
            // Rivers one cell wide, widened to their 4-neighbours where wide_river_factor times the
            // threshold drains through.
            bool river = rivers(x, y) != 0;
            for (int k = 0; k < 8 && !river; k += 2) {
                const int nx = x + gorge::d8_dx[k], ny = y + gorge::d8_dy[k];
                river = accumulation.contains(nx, ny) && accumulation(nx, ny) >= wide_river_factor * river_threshold;
            }
            if (on_land && river) c = river_colour;
            const float light = gorge_example::hillshade(height.view(), x, y, relief_exaggeration / cell_size);
            const float shade = 1.0f - biome_shade + biome_shade * light;
            px[i] = {c.r * shade, c.g * shade, c.b * shade};
        }
    const gorge_example::value_range range = gorge_example::range_of(height.view(), before.view());
    bool ok = gorge_example::write_rgb_png("island_pipeline_biomes.png", size, size, px);
    ok &= gorge_example::write_gray_png("island_pipeline_height.png", height.view(), range);
    ok &= gorge_example::write_r16("island_pipeline_height.r16", height.view(), range);
    ok &= gorge_example::write_relief_png("island_pipeline_relief_before.png", before.view(), range,
                                          relief_exaggeration / cell_size);
    ok &= gorge_example::write_relief_png("island_pipeline_relief_after.png", height.view(), range,
                                          relief_exaggeration / cell_size);
    std::printf("  %-22s %8.3f s\n", "images", seconds_since(start));
    if (!ok) return 1;
    std::printf("wrote island_pipeline_biomes.png island_pipeline_height.png island_pipeline_height.r16 "
                "island_pipeline_relief_before.png island_pipeline_relief_after.png\n");
    return 0;
}
