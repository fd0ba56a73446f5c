// gorge biomes IN OUT.png: a biome map (gorge/biome/biome.hpp) as an RGBA PNG in biome_colour()'s
// palette, from the heights of IN (elevation), a moisture map or a constant moisture, and the
// slope of the heights.
// SPDX-License-Identifier: MPL-2.0
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include <gorge/biome/biome.hpp>

#include "common.hpp"
#include "subcommands.hpp"

namespace gorge_cli {

namespace {

/// Shares of the progress bar per stage: the CPU time of each for a 4096 x 4096 16-bit PNG
/// (reading 0.48 s, classifying 0.85 s, writing the RGBA PNG 1.78 s). No stage reports within.
constexpr double read_stage_weight = 15.0;
constexpr double classify_stage_weight = 27.0;
constexpr double write_stage_weight = 58.0;

struct biomes_command {
    std::string input, output, moisture_file;
    float moisture = 0.5f;
    float height_scale = 0.0f, height_offset = 0.0f;
    float cell_size = 0.0f;
    gorge::biome_params<float> params{};
    bool progress = false;
    std::unique_ptr<parameters> options;
};

/// A heightmap file's values scaled to 0..1 for integer files (code / largest code).
gorge::grid<float> read_unit(const std::string& path, float scale, float offset) {
    gorge::io::heightmap map = read_input(path);
    refuse_no_data(path, count_no_data(map.heights.view(), map.no_data), "biome classification");
    const float s = scale != 0.0f ? scale : map.max_code != 0 ? 1.0f / static_cast<float>(map.max_code) : 1.0f;
    for (float& v : map.heights) v = offset + s * v;
    return std::move(map.heights);
}

int run_biomes(biomes_command& c) {
    c.options->resolve();
    if (output_kind(c.output) != file_kind::png16) throw usage_error("OUT: " + c.output + " must be a .png file");
    if (const gorge::invalid_parameter bad = c.params.first_invalid())
        throw usage_error("biome parameters (--sea-level .. --alpine-moisture): invalid " + bad.to_string());
    if (!(std::isfinite(c.moisture) && c.moisture >= 0.0f))
        throw usage_error("--moisture-value: must be finite and >= 0");
    progress bar(progress_wanted(c.progress), "biomes");
    staged_progress stages(bar, {read_stage_weight, classify_stage_weight, write_stage_weight});
    stages.begin(0);
    const gorge::grid<float> elevation = read_unit(c.input, c.height_scale, c.height_offset);
    gorge::grid<float> moisture;
    if (!c.moisture_file.empty()) {
        moisture = read_unit(c.moisture_file, 0.0f, 0.0f);
        if (moisture.width() != elevation.width() || moisture.height() != elevation.height())
            throw usage_error("--moisture: " + c.moisture_file + " must have the size of " + c.input);
    } else {
        moisture = gorge::grid<float>(elevation.width(), elevation.height(), c.moisture);
    }
    const float cell = c.cell_size != 0.0f ? c.cell_size
                       : elevation.width() > 1 ? 1.0f / static_cast<float>(elevation.width() - 1)
                                               : 1.0f;
    stages.begin(1);
    gorge::grid<gorge::biome> biomes;
    try {
        biomes = gorge::biome_map(elevation, moisture, cell, c.params);
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--cell-size, --moisture: ") + e.what());
    }
    stages.begin(2);
    output_set outputs;
    try {
        gorge::io::write_biome_png(outputs.stage(c.output), biomes.view());
    } catch (const gorge::io::io_error& e) {
        throw usage_error(e.what());
    }
    if (!c.options->save_path().empty())
        write_json(outputs.stage(c.options->save_path()), c.options->save_path(), c.options->to_json());
    outputs.commit();
    bar.finish();
    std::size_t counts[gorge::biome_count] = {};
    for (const gorge::biome b : biomes) ++counts[static_cast<std::size_t>(b)];
    std::printf("%s: biomes", c.output.c_str());
    for (std::size_t i = 0; i < gorge::biome_count; ++i)
        if (counts[i] != 0) std::printf(" %s: %zu;", gorge::biome_name(static_cast<gorge::biome>(i)), counts[i]);
    std::printf("\n");
    return exit_ok;
}

}  // namespace

runner add_biomes(CLI::App& app) {
    auto c = std::make_shared<biomes_command>();
    app.add_option("IN", c->input, "Heightmap (elevation; integer files read as 0..1)")->required();
    app.add_option("OUT", c->output, "Biome map, RGBA PNG in the library's biome palette")->required();
    app.add_option("--moisture", c->moisture_file, "Moisture map of the same size (integer files read as 0..1)");
    add_progress_flag(app, c->progress);
    c->options = std::make_unique<parameters>(app);
    parameters& p = *c->options;
    p.add_value("moisture-value", c->moisture, "Moisture everywhere when no --moisture file is given (>= 0)");
    p.add_value("height-scale", c->height_scale,
                "Elevation per stored unit; 0: 1 / largest code for integer files, 1 for float files");
    p.add_value("height-offset", c->height_offset, "Elevation added after the scale");
    p.add_value("cell-size", c->cell_size, "Horizontal size of a cell in elevation units (> 0); 0: 1 / (width - 1)");
    gorge::biome_params<float>& b = c->params;
    p.add_value("sea-level", b.sea_level, "Below: ocean");
    p.add_value("beach-top", b.beach_top, "Top of the beach band");
    p.add_value("lowland-top", b.lowland_top, "Top of the lowland zone");
    p.add_value("upland-top", b.upland_top, "Top of the upland zone");
    p.add_value("alpine-top", b.alpine_top, "Start of the alpine zone");
    p.add_value("snow-line", b.snow_line, "At or above: snow");
    p.add_value("rock-slope", b.rock_slope, "Slope (rise/run) at or above which land is rock (> 0)");
    p.add_floats("lowland-moisture", b.lowland_moisture.data(), 3, "Moisture thresholds of the lowland zone");
    p.add_floats("upland-moisture", b.upland_moisture.data(), 3, "Moisture thresholds of the upland zone");
    p.add_floats("highland-moisture", b.highland_moisture.data(), 2, "Moisture thresholds of the highland zone");
    p.add_floats("alpine-moisture", b.alpine_moisture.data(), 3, "Moisture thresholds of the alpine zone");
    return [c] { return run_biomes(*c); };
}

}  // namespace gorge_cli
