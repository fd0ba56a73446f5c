// Subcommands that work on the heightmap grid itself: gorge fill (depression filling), gorge
// thermal (talus erosion) and gorge droplets (hydraulic droplet erosion).
// SPDX-License-Identifier: MPL-2.0
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/thermal.hpp>

#include "common.hpp"
#include "subcommands.hpp"

namespace gorge_cli {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Rethrows the library's std::invalid_argument for a parameter as a usage_error naming the option.
[[noreturn]] void throw_bad_parameter(const gorge::invalid_parameter& bad) {
    throw usage_error(option_of_parameter(bad.to_string()) + ": invalid " + bad.to_string());
}

/// What every grid command does once its options are checked: reads the input, lets check(g)
/// refuse what was read, runs compute(g, progress callback) under a progress bar labelled `name`,
/// writes the result with the summary line compute returns and, with --timings, prints the three
/// times on stderr. The library's complaints about the map name the input file (naming_input).
template <class Check, class Compute>
int run_on_grid(grid_io_options& io, const char* name, Check&& check, Compute&& compute) {
    const clock_type::time_point t0 = clock_type::now();
    loaded_grid g = load_grid(io);
    check(g);
    const double read_s = seconds_since(t0);
    progress bar(progress_wanted(io.progress), name);
    const clock_type::time_point t1 = clock_type::now();
    const std::string summary = naming_input(io.input, [&] { return compute(g, bar.callback()); });
    bar.finish();
    const double run_s = seconds_since(t1);
    const clock_type::time_point t2 = clock_type::now();
    save_grid(io, g, summary);
    if (io.timings)
        std::fprintf(stderr, "gorge %s: read %.3f s, compute %.3f s, write %.3f s\n", name, read_s, run_s,
                     seconds_since(t2));
    return exit_ok;
}

/// run_on_grid's check for commands that take every input.
void any_grid(const loaded_grid&) {}

// ---- fill -----------------------------------------------------------------------------------

struct fill_command {
    grid_io_options io;
    std::string method = "epsilon";
    unsigned threads = 0;
};

int run_fill(fill_command& c) {
    c.io.params->resolve();
    if (c.method != "epsilon" && c.method != "plain")
        throw usage_error("--method: '" + c.method + "' (allowed: epsilon, plain)");
    gorge::fill_options<float> options;
    options.threads = c.threads;
    if (const gorge::invalid_parameter bad = options.first_invalid()) throw_bad_parameter(bad);
    return run_on_grid(c.io, "fill", any_grid, [&](loaded_grid& g, std::function<bool(double)> progress) {
        options.no_data = g.no_data;  // no-data cells stay as they are and drain their neighbours
        options.progress = std::move(progress);
        const gorge::fill_stats<float> stats = c.method == "epsilon"
                                                   ? gorge::fill_depressions_epsilon(g.heights, options)
                                                   : gorge::fill_depressions(g.heights, options);
        std::ostringstream summary;
        summary << "raised cells: " << stats.raised_cells;
        if (c.method == "epsilon")
            summary << ", epsilon gradient rise: " << stats.max_gradient_rise
                    << ", overtaken cells: " << stats.overtaken_cells;
        return summary.str();
    });
}

// ---- thermal --------------------------------------------------------------------------------

struct thermal_command {
    grid_io_options io;
    gorge::thermal_params<float> params{};
    unsigned threads = 0;
};

int run_thermal(thermal_command& c) {
    c.io.params->resolve();
    if (const gorge::invalid_parameter bad = c.params.first_invalid()) throw_bad_parameter(bad);
    gorge::thermal_options options;
    options.threads = c.threads;
    if (const gorge::invalid_parameter bad = options.first_invalid()) throw_bad_parameter(bad);
    return run_on_grid(c.io, "thermal", any_grid, [&](loaded_grid& g, std::function<bool(double)> progress) {
        c.params.no_data = g.no_data;  // no-data cells keep their value and neither send nor receive
        options.progress = std::move(progress);
        const gorge::thermal_stats stats = gorge::erode_thermal(g.heights, c.params, options);
        std::ostringstream summary;
        summary << "passes: " << stats.passes << ", moved: " << stats.moved << ", largest slope excess left: "
                << stats.max_excess;
        return summary.str();
    });
}

// ---- droplets -------------------------------------------------------------------------------

struct droplets_command {
    grid_io_options io;
    gorge::droplet_params<float> params{};
    std::string model = "lague-small-map";
    std::uint64_t droplets = 0;
    std::uint64_t seed = 0;
    std::string edge = "outflow";
    std::string schedule = "serial";
    unsigned threads = 0;
    unsigned rounds = gorge::droplet_options{}.rounds;
    bool interleave = true;
};

int run_droplets(droplets_command& c) {
    gorge::droplet_params<float> base;
    if (c.model == "lague-small-map")
        base = gorge::droplet_params<float>::lague_small_map();
    else if (c.model == "lague-large-terrain")
        base = gorge::droplet_params<float>::lague_large_terrain();
    else if (c.model == "steep-mountains")
        base = gorge::droplet_params<float>::steep_mountains();
    else
        throw usage_error("--model: '" + c.model + "' (allowed: lague-small-map, lague-large-terrain, steep-mountains)");
    // The model's values, then the preset, then the command line (cell_size stays the user's).
    c.io.params->resolve([&] {
        const float cell = c.params.cell_size;
        c.params = base;
        c.params.cell_size = cell;
    });
    gorge::droplet_options options;
    options.seed = c.seed;
    options.threads = c.threads;
    options.rounds = c.rounds;
    options.interleave = c.interleave;
    if (c.edge == "outflow")
        options.edge = gorge::droplet_edge::outflow;
    else if (c.edge == "deposit")
        options.edge = gorge::droplet_edge::deposit;
    else
        throw usage_error("--edge: '" + c.edge + "' (allowed: outflow, deposit)");
    if (c.schedule == "serial")
        options.schedule = gorge::droplet_schedule::serial;
    else if (c.schedule == "tiled")
        options.schedule = gorge::droplet_schedule::tiled;
    else
        throw usage_error("--schedule: '" + c.schedule + "' (allowed: serial, tiled)");
    if (const gorge::invalid_parameter bad = c.params.first_invalid()) throw_bad_parameter(bad);
    if (const gorge::invalid_parameter bad = options.first_invalid()) throw_bad_parameter(bad);

    // The droplet eroder has no notion of no-data: it would erode those cells as terrain.
    const auto refuse_holes = [&](const loaded_grid& g) {
        refuse_no_data(c.io.input, g.no_data_cells, "droplet erosion");
    };
    return run_on_grid(c.io, "droplets", refuse_holes, [&](loaded_grid& g, std::function<bool(double)> progress) {
        const std::uint64_t count = c.droplets != 0 ? c.droplets : static_cast<std::uint64_t>(g.heights.size());
        options.progress = std::move(progress);
        const gorge::droplet_stats stats = gorge::erode_droplets(g.heights, count, c.params, options);
        std::ostringstream summary;
        summary << "droplets: " << stats.droplets << ", left the map: " << stats.left_map
                << ", eroded: " << stats.eroded << ", deposited: " << stats.deposited << ", outflow: " << stats.outflow;
        return summary.str();
    });
}

}  // namespace

runner add_fill(CLI::App& app) {
    auto c = std::make_shared<fill_command>();
    add_grid_io(app, c->io);
    c->io.params->add_value("method", c->method,
                            "epsilon: every cell drains (Priority-Flood+epsilon); plain: flat lakes (Priority-Flood)")
        ->check(CLI::IsMember({"epsilon", "plain"}));
    c->io.params->add_value("threads", c->threads,
                            "Threads of the fill of large maps, filled in tiles (0 = all hardware threads, at "
                            "most 1024); same result for any");
    return [c] { return run_fill(*c); };
}

runner add_thermal(CLI::App& app) {
    auto c = std::make_shared<thermal_command>();
    add_grid_io(app, c->io);
    parameters& p = *c->io.params;
    p.add_value("cell-size", c->params.cell_size, "Horizontal size of one cell, in height units (> 0)");
    p.add_value("talus-slope", c->params.talus_slope, "Steepest stable slope, rise over run (>= 0)");
    p.add_value("rate", c->params.rate, "Share of the excess moved per pass, (0, 1]");
    p.add_value("passes", c->params.passes, "Number of passes (0..1e9)");
    p.add_value("threads", c->threads, "Threads (0 = all hardware threads, at most 1024); same result for any");
    return [c] { return run_thermal(*c); };
}

runner add_droplets(CLI::App& app) {
    auto c = std::make_shared<droplets_command>();
    add_grid_io(app, c->io);
    app.add_option("--model", c->model,
                   "Library parameter preset the other options start from: lague-small-map (the defaults), "
                   "lague-large-terrain, steep-mountains")
        ->capture_default_str()
        ->check(CLI::IsMember({"lague-small-map", "lague-large-terrain", "steep-mountains"}));
    parameters& p = *c->io.params;
    gorge::droplet_params<float>& d = c->params;
    p.add_value("droplets", c->droplets, "Number of droplets (0 = one per cell)");
    p.add_value("cell-size", d.cell_size, "Horizontal size of one cell in world units (> 0)");
    p.add_value("step-length", d.step_length, "Distance per step, world units (1/16..16 cells)");
    p.add_value("brush-radius", d.brush_radius, "Erosion brush radius, world units (1..32 cells)");
    p.add_value("inertia", d.inertia, "Share of the previous direction kept per step (0..1)");
    p.add_value("capacity-factor", d.capacity_factor, "Sediment capacity factor (>= 0)");
    p.add_value("min-capacity", d.min_capacity, "Capacity floor (>= 0)");
    p.add_value("erode-rate", d.erode_rate, "Fraction of free capacity picked up per step (0..1)");
    p.add_value("deposit-rate", d.deposit_rate, "Fraction of excess sediment dropped per step (0..1)");
    p.add_value("evaporate-rate", d.evaporate_rate, "Fraction of water lost per step (0..1)");
    p.add_value("gravity", d.gravity, "Speed squared gained per unit of height descended (>= 0)");
    p.add_value("lifetime", d.lifetime, "Maximum number of steps (1..65536)");
    p.add_value("initial-water", d.initial_water, "Water a droplet starts with (> 0)");
    p.add_value("initial-speed", d.initial_speed, "Speed a droplet starts with (>= 0)");
    p.add_value("seed", c->seed, "Start-position seed (any value)");
    p.add_value("edge", c->edge, "Sediment crossing the map edge: outflow (leaves) or deposit")
        ->check(CLI::IsMember({"outflow", "deposit"}));
    p.add_value("schedule", c->schedule, "serial (one thread) or tiled (any number of threads, same result for all)")
        ->check(CLI::IsMember({"serial", "tiled"}));
    p.add_value("threads", c->threads, "Threads of the tiled schedule (0 = all hardware threads, at most 1024)");
    p.add_value("rounds", c->rounds, "Tiled schedule: passes over the 4 colours (1..1024)");
    p.add_value("interleave", c->interleave, "Run droplets in groups of four (faster; true or false)");
    return [c] { return run_droplets(*c); };
}

}  // namespace gorge_cli
