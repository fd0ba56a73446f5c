// gorge generate OUT: a terrain tile made from noise and eroded by the filter, through the tile
// API. Tile (x, y) of size N covers the global samples [x (N - 1), x (N - 1) + N) along each axis
// of one lattice (origin + spacing * index), so neighbouring tiles share their edge row or column,
// and those shared samples are bit-identical (erode_tile's seamless guarantee).
//
// Recipes:
//   demo    the published erosion demo (gorge/filter/demo_pipeline.hpp): 3-octave fBm around
//           0.5, fade target from the noise, default filter, height offset (-0.65, 0); the
//           --noise-* options change its fBm (the playground's input noise, web/).
//   island  the Red Blob Games island recipe (gorge/noise/island.hpp; 4 octaves of gain 0.35 as
//           in examples/island.cpp) times a relief of 0.2, fade target -1 at sea level, +1 at
//           0.16; no height offset. (The example's fading of erosion under the sea is not applied.)
// --hash picks the hash policy of both the recipe's noise and the filter (with_hash, common.hpp).
// SPDX-License-Identifier: MPL-2.0
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/thread_pool.hpp>

#include "common.hpp"
#include "subcommands.hpp"

namespace gorge_cli {

namespace {

/// Rows per erode_tile call (for the progress bar; the result does not depend on it).
constexpr std::ptrdiff_t generate_band_rows = 128;
/// Largest tile side.
constexpr int generate_max_size = 16384;
/// Island recipe: relief per unit of island elevation, and the elevation of the +1 fade target.
constexpr float island_relief = 0.2f;
constexpr float island_peak_elevation = 0.8f;

struct generate_command {
    std::string output, ridge, preview;
    std::string recipe = "demo";
    std::string hash = default_hash;
    int size = 1024;
    std::int64_t tile_x = 0, tile_y = 0;
    float spacing = 0.0f;            ///< 0: 1 / 1024 (demo), 2.5 / 1024 (island)
    float origin[2] = {0.0f, 0.0f};  ///< the island recipe adds (-1.25, -1.25)
    unsigned noise_seed = 0;
    gorge::fbm_params<float> noise = gorge::demo::height_fbm<float>();  ///< demo recipe's fBm
    float noise_amplitude = static_cast<float>(gorge::demo::height_amplitude);
    gorge::tile_settings<float> settings{};
    mapping_options mapping;
    bool progress = false;
    bool timings = false;
    std::unique_ptr<parameters> params;
};

/// The published demo's terrain as a tile field with its own fade target (demo_pipeline.hpp),
/// its fBm hashed with Hash. The fBm and its amplitude are options (defaults: the demo's).
template <class Hash>
struct demo_field {
    std::uint32_t seed;
    gorge::fbm_params<float> noise;
    float amplitude;
    template <class T>
    GORGE_FORCEINLINE gorge::height_sample<T> operator()(const glm::vec<2, T>& p) const {
        const glm::vec<3, T> n = gorge::fbm<Hash>(p, noise, seed) * T(amplitude);
        const T fade = gorge::detail::clamp(
            n.x / T(static_cast<float>(double(amplitude) * gorge::demo::fade_range)), T(-1), T(1));
        return gorge::height_sample<T>{
            glm::vec<3, T>(gorge::detail::constant<T>(gorge::demo::base_height) + T(0.5) * n.x, T(0.5) * n.y,
                           T(0.5) * n.z),
            fade};
    }
};

template <class Hash, class Field>
void fill_tile(const Field& field, const generate_command& c, const gorge::tile_sampling<float>& sampling,
               gorge::grid<float>& height, gorge::grid<float>& ridge) {
    const std::ptrdiff_t n = c.size;
    const std::int64_t stride = static_cast<std::int64_t>(n - 1);
    const std::int64_t first_x = c.tile_x * stride, first_y = c.tile_y * stride;
    progress bar(progress_wanted(c.progress), "generate");
    // One set of threads for all bands, not one per band (gorge/thread_pool.hpp).
    gorge::thread_pool pool(c.settings.threads);
    const gorge::thread_pool_scope use_pool(pool);
    for (std::ptrdiff_t y0 = 0; y0 < n; y0 += generate_band_rows) {
        const std::ptrdiff_t rows = std::min(generate_band_rows, n - y0);
        gorge::tile_buffers<float> out;
        out.height = gorge::grid_view<float>(height.data() + y0 * n, n, rows, n);
        if (!c.ridge.empty()) out.ridge_map = gorge::grid_view<float>(ridge.data() + y0 * n, n, rows, n);
        gorge::erode_tile<Hash>(field, sampling, first_x, first_y + static_cast<std::int64_t>(y0), out, c.settings);
        bar.update(static_cast<double>(y0 + rows) / static_cast<double>(n));
    }
    bar.finish();
}

int run_generate(generate_command& c) {
    using clock = std::chrono::steady_clock;
    // Recipe defaults, then the preset, then the command line. The defaults depend on the recipe,
    // which the preset may set: when it does, resolve again with that recipe's defaults.
    const auto recipe_defaults = [&] {
        c.settings.height_offset = c.recipe == "island" ? glm::vec2(0.0f)
                                                        : glm::vec2(static_cast<float>(gorge::demo::height_offset_o),
                                                                    static_cast<float>(gorge::demo::height_offset_k));
        c.settings.valley_altitude = 0.0f;
        c.settings.peak_altitude = island_relief * island_peak_elevation;
    };
    const std::string recipe_before = c.recipe;
    c.params->resolve(recipe_defaults);
    if (c.recipe != recipe_before) c.params->resolve(recipe_defaults);
    const bool island = c.recipe == "island";
    if (!island && c.recipe != "demo") throw usage_error("--recipe: '" + c.recipe + "' (allowed: demo, island)");
    output_kind(c.output);
    if (!c.ridge.empty()) output_kind(c.ridge);
    check_preview_path(c.preview);
    if (c.size < 2 || c.size > generate_max_size)
        throw usage_error("--size: " + std::to_string(c.size) + " (allowed: 2.." + std::to_string(generate_max_size) + ")");
    // The tile's last global index, tile * (size - 1) + size - 1, must fit in std::int64_t.
    const std::int64_t stride = c.size - 1;
    const std::int64_t max_tile = (std::numeric_limits<std::int64_t>::max() - stride) / stride;
    if (c.tile_x < -max_tile || c.tile_x > max_tile)
        throw usage_error("--tile-x: " + std::to_string(c.tile_x) + " (allowed: -" + std::to_string(max_tile) + ".." +
                          std::to_string(max_tile) + " for this size)");
    if (c.tile_y < -max_tile || c.tile_y > max_tile)
        throw usage_error("--tile-y: " + std::to_string(c.tile_y) + " (allowed: -" + std::to_string(max_tile) + ".." +
                          std::to_string(max_tile) + " for this size)");
    if (const gorge::invalid_parameter bad = c.settings.first_invalid())
        throw usage_error(option_of_parameter(bad.to_string()) + ": invalid " + bad.to_string());
    if (const gorge::invalid_parameter bad = c.noise.first_invalid())
        throw usage_error("--noise-" + option_of_parameter(bad.to_string()).substr(2) + ": invalid noise " + bad.to_string());
    if (!(std::isfinite(c.noise_amplitude) && c.noise_amplitude > 0.0f))
        throw usage_error("--noise-amplitude: must be finite and > 0");
    const gorge::io::height_mapping mapping =
        c.mapping.mapping(gorge::io::height_mapping::absolute(-1.0f, 1.0f, gorge::io::out_of_range::clamp));

    gorge::tile_sampling<float> sampling;
    const float spacing = c.spacing != 0.0f ? c.spacing : (island ? 2.5f : 1.0f) / 1024.0f;
    sampling.spacing = glm::vec2(spacing);
    sampling.origin = glm::vec2(c.origin[0], c.origin[1]) + (island ? glm::vec2(-1.25f) : glm::vec2(0.0f));
    if (const gorge::invalid_parameter bad = sampling.first_invalid())
        throw usage_error(std::string(bad.member).find("spacing") == 0 ? "--spacing: must be finite and > 0"
                                                                         : "--origin: must be finite");

    const clock::time_point t0 = clock::now();
    gorge::grid<float> height(c.size, c.size), ridge;
    if (!c.ridge.empty()) ridge = gorge::grid<float>(c.size, c.size);
    with_hash(c.hash, [&](auto policy) {
        using Hash = decltype(policy);
        if (island) {
            gorge::island_params<float> ip;
            ip.terrain.octaves = 4;
            ip.terrain.gain = 0.35f;
            const auto field = gorge::scale(
                gorge::island_height_field<float, gorge::gradient_basis<Hash>>(ip, c.noise_seed), island_relief);
            fill_tile<Hash>(field, c, sampling, height, ridge);
        } else {
            fill_tile<Hash>(demo_field<Hash>{c.noise_seed, c.noise, c.noise_amplitude}, c, sampling, height, ridge);
        }
    });
    const double run_s = std::chrono::duration<double>(clock::now() - t0).count();

    output_set outputs;
    std::string report = write_heights(outputs.stage(c.output), c.output, height.view(), mapping);
    if (!c.ridge.empty())
        report += "\n" + write_heights(outputs.stage(c.ridge), c.ridge, ridge.view(),
                                       gorge::io::height_mapping::absolute(-1.0f, 1.0f, gorge::io::out_of_range::clamp));
    if (!c.preview.empty()) report += "\n" + write_preview(outputs, c.preview, height.view());
    if (!c.params->save_path().empty())
        write_json(outputs.stage(c.params->save_path()), c.params->save_path(), c.params->to_json());
    outputs.commit();
    std::printf("%s\n", report.c_str());
    if (c.timings) std::fprintf(stderr, "gorge generate: %d x %d, compute %.3f s\n", c.size, c.size, run_s);
    return exit_ok;
}

}  // namespace

runner add_generate(CLI::App& app) {
    auto c = std::make_shared<generate_command>();
    add_heightmap_output(app, c->output);
    add_ridge_option(app, c->ridge);
    add_preview_option(app, c->preview);
    add_progress_flag(app, c->progress);
    app.add_flag("--timings", c->timings, "Print the compute time on stderr");
    c->params = std::make_unique<parameters>(app);
    parameters& p = *c->params;
    add_mapping_options(app, p, c->mapping);
    p.add_value("recipe", c->recipe, "demo (the published erosion demo) or island (Red Blob Games island recipe)")
        ->check(CLI::IsMember({"demo", "island"}));
    p.add_value("size", c->size, "Tile side in samples (2..16384); neighbouring tiles share their edge samples");
    p.add_value("tile-x", c->tile_x, "Tile column: the tile starts at global sample tile_x * (size - 1)");
    p.add_value("tile-y", c->tile_y, "Tile row: the tile starts at global sample tile_y * (size - 1)");
    p.add_value("spacing", c->spacing,
                "World distance between samples (> 0); 0: 1/1024 (demo: the demo's unit square per 1024 samples), "
                "2.5/1024 (island: the whole island per 1024 samples)");
    p.add_floats("origin", c->origin, 2, "World position of global sample (0, 0) (island: relative to -1.25,-1.25)");
    p.add_value("noise-seed", c->noise_seed, "Seed of the terrain noise (any value)");
    p.add_value("noise-frequency", c->noise.frequency, "demo: fBm frequency, cycles per world unit (> 0)");
    p.add_value("noise-octaves", c->noise.octaves, "demo: fBm octaves (0..32)");
    p.add_value("noise-lacunarity", c->noise.lacunarity, "demo: fBm frequency factor per octave (> 0)");
    p.add_value("noise-gain", c->noise.gain, "demo: fBm amplitude factor per octave");
    p.add_value("noise-amplitude", c->noise_amplitude,
                "demo: height units per fBm unit (> 0); height = 0.5 + 0.5 amplitude fBm, fade target -1..1 at "
                "fBm -0.6..0.6");
    add_erosion_options(p, c->settings, true);
    add_hash_option(app, p, c->hash);
    c->settings.threads = 0;
    p.add_value("threads", c->settings.threads, "Threads (0 = all hardware threads, at most 1024); same result for any");
    app.footer("Integer outputs default to --range -1,1 with clamping, the same for every tile, so that tiles "
               "stitch; --normalise would map each tile to its own range.");
    return [c] { return run_generate(*c); };
}

}  // namespace gorge_cli
