// gorge rivers IN MASK.png: D8 flow directions, flow accumulation and a river mask.
// The heights are depression-filled first (fill_depressions_epsilon, so that every cell drains
// to the map edge) unless --no-fill is given; D8 then routes each cell to its steepest lower
// neighbour, accumulation counts the cells draining through each cell, and the mask marks the
// cells where at least --threshold cells drain through (8-bit PNG: 255 river, 0 land).
// SPDX-License-Identifier: MPL-2.0
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/drainage/flow.hpp>

#include "common.hpp"
#include "subcommands.hpp"

namespace gorge_cli {

namespace {

/// Default threshold: one cell in this many of the map drains through a river cell.
constexpr std::uint64_t default_threshold_share = 1000;

/// Shares of the progress bar per stage: the CPU time of each on a 4096 x 4096 map (fill about
/// 2.1 s, D8 directions 0.08 s, accumulation 0.34 s, single-threaded). Only the fill reports
/// within its stage; the other two are short.
constexpr double fill_stage_weight = 84.0;
constexpr double directions_stage_weight = 3.0;
constexpr double accumulation_stage_weight = 13.0;

struct rivers_command {
    std::string input, mask, accumulation, directions;
    std::uint32_t threshold = 0;
    std::string rule = "steepest";
    bool no_fill = false;
    bool progress = false;
    std::unique_ptr<parameters> params;
};

void require_extension(const std::string& path, const char* option, bool png_only) {
    const file_kind kind = output_kind(path);
    if (png_only && kind != file_kind::png16)
        throw usage_error(std::string(option) + ": " + path + " must be a .png file");
}

int run_rivers(rivers_command& c) {
    c.params->resolve();
    require_extension(c.mask, "MASK", true);
    if (!c.accumulation.empty()) require_extension(c.accumulation, "--accumulation", false);
    if (!c.directions.empty()) require_extension(c.directions, "--directions", true);
    gorge::d8_options<float> d8;
    if (c.rule == "steepest")
        d8.rule = gorge::d8_rule::steepest;
    else if (c.rule == "lowest")
        d8.rule = gorge::d8_rule::lowest;
    else
        throw usage_error("--rule: '" + c.rule + "' (allowed: steepest, lowest)");

    gorge::io::heightmap map = read_input(c.input);
    d8.no_data = map.no_data;
    gorge::grid<float>& h = map.heights;
    progress bar(progress_wanted(c.progress), "rivers");
    staged_progress stages(bar, {c.no_fill ? 0.0 : fill_stage_weight, directions_stage_weight, accumulation_stage_weight});
    if (!c.no_fill) {
        gorge::fill_options<float> fill;
        fill.no_data = map.no_data;
        fill.progress = stages.callback();
        stages.begin(0);
        naming_input(c.input, [&] { return gorge::fill_depressions_epsilon(h, fill); });
    }
    stages.begin(1);
    const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(h, d8);
    stages.begin(2);
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    bar.finish();
    const std::uint64_t cells = static_cast<std::uint64_t>(h.size());
    const std::uint32_t threshold =
        c.threshold != 0 ? c.threshold
                         : static_cast<std::uint32_t>(std::max<std::uint64_t>(1, cells / default_threshold_share));
    const gorge::grid<std::uint8_t> mask = gorge::river_mask(acc, threshold);

    gorge::grid<float> mask_f(mask.width(), mask.height());
    std::size_t river_cells = 0;
    for (std::size_t i = 0; i < mask.size(); ++i) {
        mask_f.data()[i] = static_cast<float>(mask.data()[i]);
        river_cells += mask.data()[i];
    }
    output_set outputs;
    try {
        gorge::io::write_png8(outputs.stage(c.mask), mask_f.view(), gorge::io::height_mapping::absolute(0.0f, 1.0f));
        if (!c.directions.empty()) {
            gorge::grid<float> codes(dirs.width(), dirs.height());
            for (std::size_t i = 0; i < dirs.size(); ++i) codes.data()[i] = static_cast<float>(dirs.data()[i]);
            gorge::io::write_png8(outputs.stage(c.directions), codes.view(),
                                  gorge::io::height_mapping::absolute(0.0f, 255.0f));
        }
    } catch (const gorge::io::io_error& e) {
        throw usage_error(e.what());
    }
    std::string report;
    if (!c.accumulation.empty()) {
        gorge::grid<float> a(acc.width(), acc.height());
        for (std::size_t i = 0; i < acc.size(); ++i) a.data()[i] = static_cast<float>(acc.data()[i]);
        report = write_heights(outputs.stage(c.accumulation), c.accumulation, a.view(),
                               gorge::io::height_mapping::normalise()) + "\n";
    }
    if (!c.params->save_path().empty())
        write_json(outputs.stage(c.params->save_path()), c.params->save_path(), c.params->to_json());
    outputs.commit();
    std::printf("%sriver cells: %zu of %llu (threshold %u cells)\n", report.c_str(), river_cells,
                static_cast<unsigned long long>(cells), threshold);
    return exit_ok;
}

}  // namespace

runner add_rivers(CLI::App& app) {
    auto c = std::make_shared<rivers_command>();
    add_heightmap_input(app, c->input);
    app.add_option("MASK", c->mask, "River mask, 8-bit PNG: 255 where a river runs, else 0")->required();
    app.add_option("--accumulation", c->accumulation,
                   "Also write the flow accumulation (cells draining through each cell): .exr exact, .png/.r16 "
                   "normalised");
    add_progress_flag(app, c->progress);
    app.add_option("--directions", c->directions,
                   "Also write the D8 directions as an 8-bit PNG (0..7 = E, SE, S, SW, W, NW, N, NE; 8 sink, 9 no data)");
    c->params = std::make_unique<parameters>(app);
    c->params->add_value("threshold", c->threshold,
                         "Cells that must drain through a river cell (0: one thousandth of the map, at least 1)");
    c->params->add_value("rule", c->rule, "D8 rule: steepest (drop / distance) or lowest neighbour")
        ->check(CLI::IsMember({"steepest", "lowest"}));
    c->params->add_value("no-fill", c->no_fill, "Do not fill depressions first (pits and flats become sinks)");
    return [c] { return run_rivers(*c); };
}

}  // namespace gorge_cli
