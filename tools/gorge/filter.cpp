// gorge filter IN OUT: the analytic erosion filter over every node of an existing heightmap.
//
// The heightmap becomes a gorge::grid_field placed by grid_placement::spanning (world size,
// height scale and offset), and the filter runs through the tile API (erode_tile) with the
// field's nodes as the sample lattice, in bands of rows (for the progress bar; tiles are
// seamless, so the result is the same bit for bit as one erode_tile call over the whole grid).
// --hash picks the filter's hash policy (with_hash, common.hpp).
// SPDX-License-Identifier: MPL-2.0
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <gorge/grid/grid_field.hpp>
#include <gorge/simd/tile.hpp>
#include <gorge/thread_pool.hpp>

#include "common.hpp"
#include "subcommands.hpp"

namespace gorge_cli {

namespace {

/// Rows per band of the filter: small enough for a smooth progress bar, large enough that the
/// threads of one band have several row blocks each.
constexpr std::ptrdiff_t filter_band_rows = 128;

struct filter_options {
    std::string input, output, ridge, preview;
    float world_size[2] = {0.0f, 0.0f};
    float height_scale = 0.0f;
    float height_offset = 0.0f;
    gorge::tile_settings<float> settings{};
    std::string hash = default_hash;
    mapping_options mapping;
    bool progress = false;
    bool timings = false;
    std::unique_ptr<parameters> params;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run_filter(filter_options& o) {
    using clock = std::chrono::steady_clock;
    o.params->resolve();
    output_kind(o.output);
    if (!o.ridge.empty()) output_kind(o.ridge);
    check_preview_path(o.preview);
    const gorge::io::height_mapping mapping = o.mapping.mapping();
    if (const gorge::invalid_parameter bad = o.settings.first_invalid())
        throw usage_error(option_of_parameter(bad.to_string()) + ": invalid " + bad.to_string());

    const clock::time_point t_read = clock::now();
    const gorge::io::heightmap map = read_input(o.input);
    refuse_no_data(o.input, count_no_data(map.heights.view(), map.no_data), "the erosion filter");
    const double read_s = seconds_since(t_read);
    const std::ptrdiff_t width = map.heights.width(), height = map.heights.height();

    glm::vec2 world(o.world_size[0], o.world_size[1]);
    if (world.x == 0.0f && world.y == 0.0f) {
        // Default: 1 across the width, square cells.
        world.x = 1.0f;
        world.y = width > 1 ? static_cast<float>(height - 1) / static_cast<float>(width - 1) : 1.0f;
    }
    const float scale = o.height_scale != 0.0f ? o.height_scale
                        : map.max_code != 0   ? 1.0f / static_cast<float>(map.max_code)
                                              : 1.0f;
    gorge::grid_placement<float> placement;
    try {
        placement = gorge::grid_placement<float>::spanning(world, width, height, glm::vec2(0.0f), scale, o.height_offset);
        placement.validate();
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--world-size, --height-scale, --height-offset: ") + e.what());
    }
    const std::unique_ptr<gorge::grid_field<float>> field = naming_input(
        o.input, [&] { return std::make_unique<gorge::grid_field<float>>(map.heights.view(), placement); });

    gorge::tile_sampling<float> sampling;
    sampling.origin = placement.origin;
    sampling.spacing = placement.cell_size;
    gorge::grid<float> eroded(width, height);
    gorge::grid<float> ridge;
    if (!o.ridge.empty()) ridge = gorge::grid<float>(width, height);

    const clock::time_point t_filter = clock::now();
    progress bar(progress_wanted(o.progress), "filter");
    // One set of threads for all bands, not one per band (gorge/thread_pool.hpp).
    gorge::thread_pool pool(o.settings.threads);
    const gorge::thread_pool_scope use_pool(pool);
    with_hash(o.hash, [&](auto policy) {
        using Hash = decltype(policy);
        for (std::ptrdiff_t y0 = 0; y0 < height; y0 += filter_band_rows) {
            const std::ptrdiff_t rows = std::min(filter_band_rows, height - y0);
            gorge::tile_buffers<float> out;
            out.height = gorge::grid_view<float>(eroded.data() + y0 * width, width, rows, width);
            if (!o.ridge.empty()) out.ridge_map = gorge::grid_view<float>(ridge.data() + y0 * width, width, rows, width);
            gorge::erode_tile<Hash>(*field, sampling, 0, static_cast<std::int64_t>(y0), out, o.settings);
            bar.update(static_cast<double>(y0 + rows) / static_cast<double>(height));
        }
    });
    bar.finish();
    const double filter_s = seconds_since(t_filter);

    const clock::time_point t_write = clock::now();
    output_set outputs;
    std::string report = write_heights(outputs.stage(o.output), o.output, eroded.view(), mapping);
    if (!o.ridge.empty())
        report += "\n" + write_heights(outputs.stage(o.ridge), o.ridge, ridge.view(),
                                       gorge::io::height_mapping::absolute(-1.0f, 1.0f, gorge::io::out_of_range::clamp));
    if (!o.preview.empty()) report += "\n" + write_preview(outputs, o.preview, eroded.view());
    if (!o.params->save_path().empty()) write_json(outputs.stage(o.params->save_path()), o.params->save_path(), o.params->to_json());
    outputs.commit();
    const double write_s = seconds_since(t_write);

    std::printf("%s\n", report.c_str());
    if (o.timings)
        std::fprintf(stderr, "gorge filter: %td x %td, read %.3f s, filter %.3f s, write %.3f s\n", width, height,
                     read_s, filter_s, write_s);
    return exit_ok;
}

}  // namespace

void add_erosion_options(parameters& p, gorge::tile_settings<float>& s, bool fade_rule) {
    gorge::erosion_params<float>& e = s.erosion;
    p.add_value("scale", e.scale, "Size of the largest gullies, world units (> 0)");
    p.add_value("strength", e.strength, "Magnitude of all octaves, height units");
    p.add_value("gully-weight", e.gully_weight, "0 only sharpens peaks and valleys, 1 full gullies");
    p.add_value("detail", e.detail, "How far fine gullies climb (> 0)");
    p.add_floats("rounding", &e.rounding.x, 4, "Rounding of ridges, creases, input peaks/valleys, per octave");
    p.add_floats("onset", &e.onset.x, 4, "Inverse slopes where gullies start: initial, per octave, ridge initial, ridge per octave (>= 0)");
    p.add_floats("assumed-slope", &e.assumed_slope.x, 2, "Assumed slope value and amount (amount in 0..1)");
    p.add_value("octaves", e.octaves, "Number of gully octaves (0..32)");
    p.add_value("lacunarity", e.lacunarity, "Frequency factor per octave (> 0)");
    p.add_value("gain", e.gain, "Strength factor per octave");
    p.add_value("cell-scale", e.cell_scale, "Cell size relative to the stripe width (> 0)");
    p.add_value("normalization", e.normalization, "Phacelle normalization (0..1)");
    p.add_value("seed", s.seed, "Hash seed of the filter (any value)");
    p.add_floats("output-offset", &s.height_offset.x, 2,
                 "(o, k) of apply_height_offset on the output (the published demo uses -0.65,0)");
    if (!fade_rule) return;
    p.add_value("valley-altitude", s.valley_altitude, "Height where the fade target is -1 (!= peak)");
    p.add_value("peak-altitude", s.peak_altitude, "Height where the fade target is +1 (!= valley)");
}

runner add_filter(CLI::App& app) {
    auto o = std::make_shared<filter_options>();
    add_heightmap_input(app, o->input);
    add_heightmap_output(app, o->output);
    add_ridge_option(app, o->ridge);
    add_preview_option(app, o->preview);
    add_progress_flag(app, o->progress);
    app.add_flag("--timings", o->timings, "Print the read, filter and write times on stderr");

    o->params = std::make_unique<parameters>(app);
    parameters& p = *o->params;
    add_mapping_options(app, p, o->mapping);
    p.add_floats("world-size", o->world_size, 2,
                 "World size x,y covered by the map, first to last node (> 0); default 0,0: 1 across the width, "
                 "square cells");
    p.add_value("height-scale", o->height_scale,
                "World height per stored unit; default 0: 1 / largest code for integer files (heights 0..1), 1 "
                "for float files");
    p.add_value("height-offset", o->height_offset, "World height added after the scale");
    add_erosion_options(p, o->settings, true);
    add_hash_option(app, p, o->hash);
    o->settings.threads = 0;
    p.add_value("threads", o->settings.threads, "Threads (0 = all hardware threads, at most 1024)");
    return [o] { return run_filter(*o); };
}

}  // namespace gorge_cli
