// gorge/erosion/landscape_evolution.hpp — landscape evolution: stream power erosion with
// tectonic uplift and hillslope diffusion, the model that grows connected, branching river
// networks from ridge to sea with valleys deepening downstream.
//
// The model (world units: heights and cell_size in one length unit, say metres; time in one time
// unit, say years):
//     ∂h/∂t = U(x, y) - K·A^m·S^n + D·∇²h
// U the uplift rate (a constant or a grid of rates; sample_uplift turns any field into one), A
// the drainage area: (number of cells whose water passes through the cell, itself included)
// × cell_size², with D8 steepest-descent routing (each cell drains to the one of its 8 neighbours
// of steepest descent, distance cell_size or cell_size·√2); S = (h - h_receiver) / distance the
// slope to that receiver (dimensionless); K the erodibility in length^(1-2m) / time, so that
// K·A^m·S^n is a rate in length / time for any n; D the diffusivity in length² / time.
// Used for terrain generation by Cordonnier, Braun, Cani, Benes, Galin, Peytavie & Guérin
// ("Large Scale Terrain Generation from Tectonic Uplift and Fluvial Erosion", Eurographics 2016).
//
// One step of length dt, in this order:
//   1. uplift: h* = h + U·dt on every free cell (base-level cells keep their height);
//   2. receivers: steepest descent on h*;
//   3. depressions: when some free cell has no lower neighbour (a sink), the basin graph of
//      Cordonnier, Bovy & Braun ("A versatile, linear complexity algorithm for flow routing in
//      topographies with depressions", Earth Surface Dynamics 7, 2019): each sink's basin (the
//      cells draining into it), linked to its neighbours at their lowest pass (the higher of two
//      adjacent cells of different basins), the minimum spanning tree of that graph rooted at base
//      level, and the receivers "carved": in each basin the receiver path from its outlet cell
//      down to the sink is reversed and the outlet drains across the pass. Every cell's path then
//      ends at base level, through the spill points of Priority-Flood (Barnes, Lehman & Mulla,
//      Computers & Geosciences 62, 2014): a basin's water level is the highest pass on its tree
//      path to base level, and the cells below it are lake cells — the cells
//      gorge::fill_depressions raises. The tree is found by Borůvka rounds of local floods
//      that visit only the lakes and their rims (each group of basins floods from its sinks in
//      height order until it meets its lowest pass); only where that fails (never on a checked
//      map) the whole basin graph is built. Without sinks nothing of this runs;
//   4. the stack: every cell after its receiver, and A, in one O(n) pass without donor lists:
//      each cell whose donors are all done (at first those without donors, listed in index
//      order and walked from the last) adds its count to its receiver and goes on the stack
//      from its end, and the walk follows the receivers downstream while it completes them
//      (Kahn's topological order, leaves first; its walks stay near each other in memory).
//      Any order with receivers first gives the same counts and the same stream power solve;
//   5. stream power, implicit (Braun & Willett, "A very efficient O(n), implicit and parallel
//      method to solve the stream power equation governing fluvial incision and landscape
//      evolution", Geomorphology 180–181, 2013), cells in stack order so each receiver is final
//      before its donors:  h - h* + dt·K·A^m·((h - w)/d)^n = 0  with w the receiver's new height
//      (its water level when it is a lake cell). n = 1: h = w + (h* - w)·g in closed form, with
//      g = 1/(1 + dt·K·A^m/d) computed before w is known (off the receiver-to-donor chain);
//      other n: Newton's method kept inside the bracket w <= h <= h*, to rounding.
//      Lake cells are not eroded (they only rise with the uplift, until filled by it or drained
//      by the incision of their outlet); a cell is never lowered below its receiver's height, so
//      no step inverts a slope;
//   6. hillslope diffusion (D > 0), implicit: backward Euler along every row, then along every
//      column (locally one-dimensional splitting), each line a tridiagonal solve (Thomas), or a
//      cyclic one (Sherman–Morrison) for a periodic line without base-level cells. The factors
//      of the non-periodic lines (which depend on dt, D, cell_size and the cell kinds along the
//      line only) are made once by the first diffusion step, once per distinct line pattern
//      (one or two on a map without no-data cells); each step then runs one forward and one
//      backward sweep per line, columns all at once row by row;
//
// Guarantees:
//   - Unconditionally stable: every stage is implicit. Stream power only moves a cell between its
//     receiver's height and its own (no overshoot for any dt); each diffusion solve is monotone
//     (an M-matrix: no new extremum for any dt). Large steps converge to the same steady state.
//   - Exact discrete steady state for stream power: when a step leaves h unchanged, every free,
//     non-lake cell satisfies K·A^m·S^n = U to rounding (U·dt = dt·K·A^m·S^n is the step's
//     equation). With diffusion the steady state of the splitting differs from U + D∇²h = K·A^m·S^n
//     by a term of order (D·dt/cell_size²)²·∂⁴h/∂x²∂y² (zero for a profile along one axis); use
//     steps with D·dt/cell_size² of order 1 or below where that matters.
//   - Volume balance of every step, to rounding: uplifted = eroded + diffused_out + change of
//     Σ h over the free cells (× cell_size²), where eroded is the stream-power material (which
//     the receivers carry to base level within the step: stream power here is
//     detachment-limited, nothing is deposited) and diffused_out the diffusion flux into
//     base-level cells, a·(h_free - h_base) over every free/base pair of every line solve
//     (evolution_stats). tests/test_evolution.cpp checks it every step against Σ h measured from
//     outside.
//   - Deterministic, and bit-identical for any thread count (threads run the uplift, receivers
//     and diffusion stages, whose results do not depend on the order; sums add up per band of
//     rows in a fixed order).
//   - Boundaries: per edge fixed (base level, default), closed or periodic; no-data cells lie
//     outside the model and the data cells next to them are base level (the sea): the same
//     outlets as gorge::fill_depressions.
//
// Limits: width × height < 2^32 - 1 cells (indices are 32-bit); at least one base-level cell
// (an edge that is fixed, or a no-data cell) reachable from every data cell; heights finite with
// |h| <= evolution_height_limit; cell_size in [evolution_min_cell_size, evolution_max_cell_size]
// and a diffusion number D·dt / cell_size² of at most evolution_max_diffusion_number (outside
// them the factors of a step can be 0 / 0 or overflow). Slope exponents other than 1 and 2 take
// Newton iterations with std::pow (several times slower per cell). Diffusion splits into rows
// then columns: first order in time; its steady state carries the splitting term above. A
// periodic axis takes the slower gathered line solves.
// The routing is D8, so rivers run along 8 directions and drainage areas carry D8's grid
// artefacts; the erosion is detachment-limited (no sediment deposition, no transport capacity).
//
// Memory: about 2·sizeof(T) + 32 bytes per cell (heights, an uplift grid when set, receivers,
// directions, counts, pending donors, stack, basin labels and marks): 40 bytes per cell for
// float, 670 MB at 4096²; diffusion adds 3·sizeof(T) per cell of each distinct line pattern of
// a non-periodic axis (a few lines on a map without no-data cells; at most 3·sizeof(T) per
// cell and axis, 24 bytes per cell for float, when no two lines match) and 8 bytes per
// free/base-level pair along a line; plus 12 bytes per cell if the global basin graph is ever
// built, and one line of scratch per thread.
// Speed: O(n) per step. On one core of a 2-core AMD EPYC VM (AVX2), float, 1024², a formed
// landscape with diffusion (whose steps keep making small pits, so depression routing runs every
// step): about 31 ms of CPU time per step (34 M cell-steps/s), measured on a loaded machine,
// 0.57× the CPU time of the previous version (whose idle step took 65 ms); by stage about 2 ms
// receivers, 2.5 depression routing, 10 stack and drainage area, 7 stream power, 3 diffusion.
// The cost per cell outside depression routing is about the same at 2048²; at 4096² (measured
// 6 steps in) it was higher, the stack walk and the stream power solve gathering from arrays
// larger than the cache; early
// steps on a rough start, with lakes over a quarter of the map, are several times slower
// (depression routing dominates). See benchmarks/bench_evolution.cpp.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <glm/vec2.hpp>

#include "../config.hpp"
#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../drainage/d8.hpp"
#include "../grid/grid.hpp"
#include "../grid/no_data.hpp"
#include "detail/evolution_diffusion.hpp"
#include "detail/evolution_routing.hpp"
#include "detail/evolution_stream_power.hpp"

namespace gorge {

/// Largest accepted |height| and |uplift · time_step|: 1e18 for float, 1e150 for double.
template <class T>
constexpr T evolution_height_limit() {
    return std::is_same<T, float>::value ? T(1e18f) : T(1e150);
}

/// Largest accepted area_exponent and slope_exponent.
constexpr double evolution_max_exponent = 10.0;

/// Accepted evolution_params::cell_size, in length units: [1e-12, 1e12]. With exponents up to
/// evolution_max_exponent, cell_size^(2m) and distance^n then lie within double's normal range,
/// so the stream power factors dt·K·cell_size^(2m) / distance^n are never 0 / 0, and drainage
/// areas (cells × cell_size², in T) and volumes stay finite.
constexpr double evolution_min_cell_size = 1e-12;
constexpr double evolution_max_cell_size = 1e12;

/// Largest accepted diffusion number D·dt / cell_size² (detail::evo_diffusion_number): the largest
/// finite T over 16 · evolution_height_limit, so that the implicit diffusion solve's products of
/// that number and a height stay finite.
template <class T>
constexpr T evolution_max_diffusion_number() {
    return std::numeric_limits<T>::max() / (T(16) * evolution_height_limit<T>());
}

/// Largest accepted number of steps of one run.
constexpr int evolution_max_steps = 1000000000;

/// receivers() value of a no-data cell.
constexpr std::uint32_t evolution_no_receiver = detail::evo_none;

/// What happens at each edge of the map (north: row 0, south: the last row, west: column 0).
struct evolution_edges {
    edge_boundary north = edge_boundary::fixed;
    edge_boundary south = edge_boundary::fixed;
    edge_boundary west = edge_boundary::fixed;
    edge_boundary east = edge_boundary::fixed;

    /// Every edge the same.
    static evolution_edges all(edge_boundary b) { return {b, b, b, b}; }
};

/// Parameters of landscape evolution, in world units (see the header comment): lengths in one
/// unit (e.g. metres), time in one unit (e.g. years).
template <class T>
struct evolution_params {
    static_assert(std::is_floating_point<T>::value, "evolution_params<T>: T must be float or double");
    /// Horizontal size of one cell, in height units. In [evolution_min_cell_size,
    /// evolution_max_cell_size], 1e-12..1e12 (default 100: 100 m cells).
    T cell_size = T(100);
    /// Length of one step (dt), in time units (e.g. years). Finite, > 0 (default 1e4). Any value
    /// is stable; smaller steps follow transients more closely.
    T time_step = T(1e4);
    /// Erodibility K of the stream power law, in length^(1-2m) / time (K·A^m·S^n is then a rate
    /// in length / time). Finite, >= 0 (default 2e-5: with m = 0.5 and metres, a river draining
    /// 1 km² cuts 0.02 m per year on a slope of 1). 0 switches stream power off.
    T erodibility = T(2e-5);
    /// Area exponent m. Finite, in (0, 10] (default 0.5).
    T area_exponent = T(0.5);
    /// Slope exponent n. Finite, in (0, 10] (default 1; n = 1 has a closed-form step).
    T slope_exponent = T(1);
    /// Hillslope diffusivity D, in length² / time. Finite, >= 0, with D·dt / cell_size² at most
    /// evolution_max_diffusion_number<T>() (default 0: off).
    T diffusivity = T(0);
    /// Uplift rate U where no uplift grid is set, in length / time; may be negative (subsidence).
    /// Finite, |uplift · time_step| <= evolution_height_limit (default 1e-3: 1 mm/yr).
    T uplift = T(1e-3);
    /// Edges of the map (default: all fixed base level). Periodic edges come in opposite pairs.
    evolution_edges edges;
    /// Optional no-data value: such cells are outside the model (the sea, or outside the world);
    /// the data cells next to them are base level. A NaN no-data value matches every NaN.
    /// Default: none.
    std::optional<T> no_data;

    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::evolution_params"); }
    /// Name and rule of the first bad parameter; empty when all are valid.
    invalid_parameter first_invalid() const {
        const T limit = evolution_height_limit<T>();
        const T max_exp = T(evolution_max_exponent);
        if (!(cell_size >= T(evolution_min_cell_size) && cell_size <= T(evolution_max_cell_size)))
            return "cell_size (must be in [evolution_min_cell_size, evolution_max_cell_size]: 1e-12..1e12)";
        if (!(std::isfinite(time_step) && time_step > T(0))) return "time_step (must be finite and > 0)";
        if (!(std::isfinite(erodibility) && erodibility >= T(0))) return "erodibility (must be finite and >= 0)";
        if (!(area_exponent > T(0) && area_exponent <= max_exp)) return "area_exponent (must be in (0, 10])";
        if (!(slope_exponent > T(0) && slope_exponent <= max_exp)) return "slope_exponent (must be in (0, 10])";
        if (!(std::isfinite(diffusivity) && diffusivity >= T(0))) return "diffusivity (must be finite and >= 0)";
        if (!(detail::evo_diffusion_number(diffusivity, time_step, cell_size) <= evolution_max_diffusion_number<T>()))
            return "diffusivity (diffusivity * time_step / cell_size^2 must be <= evolution_max_diffusion_number)";
        if (!std::isfinite(uplift)) return "uplift (must be finite)";
        if (!(std::fabs(uplift) * time_step <= limit))
            return "uplift (|uplift * time_step| must be <= evolution_height_limit)";
        const bool ns = edges.north == edge_boundary::periodic, ss = edges.south == edge_boundary::periodic;
        const bool ws = edges.west == edge_boundary::periodic, es = edges.east == edge_boundary::periodic;
        if (ns != ss) return "edges (north and south must both be periodic or neither)";
        if (ws != es) return "edges (west and east must both be periodic or neither)";
        return {};
    }
};

/// Options of a run (not part of the result: any value gives the same terrain).
struct evolution_options {
    /// Threads, the calling thread included (gorge's thread rule, gorge/detail/parallel.hpp):
    /// default 1 (none started), 0 = all hardware threads, 0..1024. Used by the uplift, receiver
    /// and diffusion stages; the result is the same for any value.
    unsigned threads = 1;
    /// Optional progress report and cancellation, called from the calling thread between steps
    /// with the fraction of steps done (0..1, non-decreasing): once with 0 at the start, after
    /// every max(1, steps / 256) steps, and with 1 when the run completes (no call when steps == 0).
    /// Return false to cancel: no further step starts. The terrain always holds whole steps.
    std::function<bool(double)> progress;

    invalid_parameter first_invalid() const { return detail::invalid_thread_count(threads); }
    void validate() const { detail::validate(*this, "gorge::evolution_options"); }
};

/// Seconds spent in each stage (wall clock, summed over the steps of a run).
struct evolution_timings {
    double uplift = 0;         ///< uplift, and the run's bookkeeping
    double receivers = 0;      ///< steepest-descent receivers
    double depressions = 0;    ///< basin tree, carving and lake cells (steps with sinks)
    double stack = 0;          ///< stack and drainage area (one pass)
    double accumulation = 0;   ///< 0: the drainage area is counted in `stack` (same pass)
    double stream_power = 0;   ///< the implicit solve
    double diffusion = 0;      ///< rows and columns
    double total() const {
        return uplift + receivers + depressions + stack + accumulation + stream_power + diffusion;
    }
};

/// Totals of a run. Volumes are in length³ (height × cell_size² summed over cells).
struct evolution_stats {
    int steps = 0;           ///< steps run (the requested number unless cancelled)
    bool cancelled = false;  ///< the progress callback asked to stop
    /// Volume added by uplift (as applied, i.e. after rounding of h + U·dt).
    double uplifted = 0;
    /// Volume eroded by stream power (all of it leaves through base-level cells within the step).
    double eroded = 0;
    /// Volume that diffusion carried into base-level cells.
    double diffused_out = 0;
    /// Steps that found sinks and routed across depressions.
    int depression_steps = 0;
    /// Lake cells (free cells below their lake's spill level) in the last step.
    std::size_t lake_cells = 0;
    /// Time per stage.
    evolution_timings seconds;
};

/// Samples `field` at the cell corners (x · cell_size, y · cell_size), x, y from 0, into a grid
/// of uplift rates for landscape_evolver::set_uplift. The field is a callable taking
/// glm::vec<2, T> and returning T, or a gorge field returning (value, d/dx, d/dy) (its value used).
template <class T, class Field>
grid<T> sample_uplift(std::ptrdiff_t width, std::ptrdiff_t height, T cell_size, const Field& field) {
    grid<T> out(width, height);
    for (std::ptrdiff_t y = 0; y < height; ++y)
        for (std::ptrdiff_t x = 0; x < width; ++x) {
            const auto v = field(glm::vec<2, T>(T(x) * cell_size, T(y) * cell_size));
            if constexpr (std::is_arithmetic<std::decay_t<decltype(v)>>::value)
                out(x, y) = T(v);
            else
                out(x, y) = T(v.x);
        }
    return out;
}

/// The landscape evolution model on one map: holds the heights, the uplift and the routing, and
/// runs steps. See the header comment.
template <class T>
class landscape_evolver {
    static_assert(std::is_floating_point<T>::value, "gorge::landscape_evolver: T must be float or double");

public:
    /// Copies `heights` and checks everything: std::invalid_argument for an empty view, bad
    /// parameters, a map of 2^32 - 1 cells or more, a height that is neither finite nor no-data or
    /// exceeds evolution_height_limit (naming the cell), or a map without base level (no fixed
    /// edge and no no-data cell, while some cell has data).
    landscape_evolver(grid_view<const T> heights, const evolution_params<T>& params) : params_(params) {
        constexpr const char* who = "gorge::landscape_evolver";
        detail::require_not_empty(heights, who);
        params.validate();
        if (heights.size() >= std::size_t(detail::evo_none))
            throw std::invalid_argument(std::string(who) + ": width x height must be < 2^32 - 1 cells");
        detail::check_heights<T>(heights, params.no_data, who);
        const T limit = evolution_height_limit<T>();
        width_ = heights.width();
        height_ = heights.height();
        const std::size_t n = heights.size();
        h_.resize(n);
        for (std::ptrdiff_t y = 0; y < height_; ++y)
            for (std::ptrdiff_t x = 0; x < width_; ++x) {
                const T v = heights(x, y);
                if (std::fabs(v) > limit && !detail::is_no_data(v, params.no_data))
                    throw std::invalid_argument(std::string(who) + ": height at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) + ") exceeds evolution_height_limit in magnitude");
                h_[std::size_t(y * width_ + x)] = v;
            }
        build_topology();
        std::size_t data = 0, base = 0;
        for (const std::uint8_t k : topo_.kind) {
            data += k != detail::evo_void;
            base += k == detail::evo_base;
        }
        if (data > 0 && base == 0)
            throw std::invalid_argument(std::string(who) +
                                        ": invalid edges (no base level: at least one edge must be fixed, or some "
                                        "cell no-data)");
        check_connected(who);
        rcv_.assign(n, detail::evo_none);
        code_.assign(n, d8_no_data);
        count_.assign(n, 0);
        lake_.assign(n, 0);
        prepare_coefficients();
        route(1);
    }

    /// Sets a per-cell uplift rate (length / time), replacing params.uplift. Same size as the map;
    /// values finite with |rate · time_step| <= evolution_height_limit, except at no-data cells
    /// (ignored). Throws std::invalid_argument otherwise.
    void set_uplift(grid_view<const T> rates) {
        constexpr const char* who = "gorge::landscape_evolver::set_uplift";
        detail::require_not_empty(rates, who, "rates");
        if (rates.width() != width_ || rates.height() != height_)
            throw std::invalid_argument(std::string(who) + ": rates must have the size of the map (" +
                                        std::to_string(width_) + " x " + std::to_string(height_) + ")");
        std::vector<T> u(h_.size());
        for (std::ptrdiff_t y = 0; y < height_; ++y)
            for (std::ptrdiff_t x = 0; x < width_; ++x) {
                const std::size_t i = std::size_t(y * width_ + x);
                const T r = rates(x, y);
                if (topo_.kind[i] != detail::evo_void &&
                    !(std::isfinite(r) && std::fabs(r) * params_.time_step <= evolution_height_limit<T>()))
                    throw std::invalid_argument(std::string(who) + ": rate at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) +
                                                ") must be finite with |rate * time_step| <= evolution_height_limit");
                u[i] = r;
            }
        uplift_ = std::move(u);
    }
    /// Back to the uniform rate params.uplift, set to `rate` (checked like it).
    void set_uplift(T rate) {
        evolution_params<T> p = params_;
        p.uplift = rate;
        p.validate();
        params_.uplift = rate;
        uplift_.clear();
    }

    /// Runs `steps` steps (0..1e9). Afterwards receivers(), drainage_area() and lake_mask() hold
    /// the routing of the last step (on its uplifted heights, before erosion: the one its stream
    /// power solve used). Throws std::invalid_argument for bad steps or options.
    evolution_stats run(int steps, const evolution_options& options = {}) {
        if (steps < 0 || steps > evolution_max_steps)
            detail::throw_invalid("gorge::landscape_evolver::run", "steps (must be in 0..1000000000)");
        options.validate();
        evolution_stats stats;
        if (steps == 0) return stats;
        const auto report = [&options](double f) { return !options.progress || options.progress(f); };
        if (!report(0.0)) {
            stats.cancelled = true;
            return stats;
        }
        const int interval = std::max(1, steps / reports_per_run);
        // The steps' threads start once for the run, not in every stage of every step.
        const detail::call_thread_pool threads_for_call(
            detail::resolve_threads(options.threads, static_cast<std::uint64_t>(bands())));
        for (int s = 0; s < steps; ++s) {
            step(options.threads, stats);
            stats.steps = s + 1;
            elapsed_ += double(params_.time_step);
            if (stats.steps < steps && stats.steps % interval == 0 && !report(double(stats.steps) / double(steps))) {
                stats.cancelled = true;
                break;
            }
        }
        if (!stats.cancelled) report(1.0);
        return stats;
    }

    std::ptrdiff_t width() const { return width_; }
    std::ptrdiff_t height() const { return height_; }
    const evolution_params<T>& params() const { return params_; }
    /// Model time run so far (steps × time_step, summed in double).
    double elapsed() const { return elapsed_; }

    /// The current heights (no-data cells hold their original value).
    grid_view<const T> heights() const { return grid_view<const T>(h_.data(), width_, height_); }
    /// Copies the current heights into `out` (same size).
    void copy_heights(grid_view<T> out) const {
        if (out.width() != width_ || out.height() != height_)
            throw std::invalid_argument("gorge::landscape_evolver::copy_heights: out must have the size of the map");
        for (std::ptrdiff_t y = 0; y < height_; ++y)
            std::copy(h_.data() + y * width_, h_.data() + (y + 1) * width_, out.row(y));
    }
    /// Drainage area of every cell (length², the cell itself included; 0 for no-data cells), of
    /// the routing of the last step (before any step: of the initial heights), depressions
    /// routed across.
    grid<T> drainage_area() const {
        grid<T> out(width_, height_);
        const T cell_area = params_.cell_size * params_.cell_size;
        for (std::size_t i = 0; i < h_.size(); ++i) out.data()[i] = T(count_[i]) * cell_area;
        return out;
    }
    /// Upstream cell count of every cell (itself included; 0 for no-data cells).
    const std::vector<std::uint32_t>& upstream_cells() const { return count_; }
    /// Receiver of every cell as a flat index y · width + x: the cell itself for base-level cells,
    /// evolution_no_receiver for no-data cells.
    grid<std::uint32_t> receivers() const {
        grid<std::uint32_t> out(width_, height_);
        std::copy(rcv_.begin(), rcv_.end(), out.data());
        return out;
    }
    /// 1 where the drainage area is at least min_area (length²): the river network.
    grid<std::uint8_t> river_mask(T min_area) const {
        grid<std::uint8_t> out(width_, height_);
        const double cell_area = double(params_.cell_size) * double(params_.cell_size);
        for (std::size_t i = 0; i < h_.size(); ++i)
            out.data()[i] = std::uint8_t(count_[i] > 0 && double(count_[i]) * cell_area >= double(min_area));
        return out;
    }
    /// 1 for lake cells of the last step's routing (before any step: of the initial heights):
    /// free cells below the spill level of their depression.
    grid<std::uint8_t> lake_mask() const {
        grid<std::uint8_t> out(width_, height_);
        std::copy(lake_.begin(), lake_.end(), out.data());
        return out;
    }
    /// 1 for base-level cells (fixed edges, cells next to no-data).
    grid<std::uint8_t> base_level_mask() const {
        grid<std::uint8_t> out(width_, height_);
        for (std::size_t i = 0; i < h_.size(); ++i) out.data()[i] = std::uint8_t(topo_.kind[i] == detail::evo_base);
        return out;
    }

private:
    static constexpr int reports_per_run = 256;
    /// Upstream counts below this take A^m from a table instead of std::pow.
    static constexpr std::uint32_t power_table_size = 4096;
    using clock = std::chrono::steady_clock;

    static double since(clock::time_point& t) {
        const clock::time_point now = clock::now();
        const double s = std::chrono::duration<double>(now - t).count();
        t = now;
        return s;
    }

    std::ptrdiff_t band_rows() const { return std::max<std::ptrdiff_t>(1, detail::evo_band_cells / width_); }
    std::ptrdiff_t bands() const { return (height_ + band_rows() - 1) / band_rows(); }

    void build_topology() {
        const evolution_edges& e = params_.edges;
        topo_.width = width_;
        topo_.height = height_;
        topo_.wrap_x = e.west == edge_boundary::periodic;
        topo_.wrap_y = e.north == edge_boundary::periodic;
        for (int k = 0; k < d8_neighbours; ++k) topo_.offsets[k] = detail::d8_offset(k, width_);
        const std::size_t n = h_.size();
        topo_.kind.assign(n, detail::evo_free);
        for (std::size_t i = 0; i < n; ++i)
            if (detail::is_no_data(h_[i], params_.no_data)) topo_.kind[i] = detail::evo_void;
        for (std::ptrdiff_t y = 0; y < height_; ++y)
            for (std::ptrdiff_t x = 0; x < width_; ++x) {
                const std::size_t i = std::size_t(y * width_ + x);
                if (topo_.kind[i] == detail::evo_void) continue;
                bool base = (x == 0 && e.west == edge_boundary::fixed) ||
                            (x + 1 == width_ && e.east == edge_boundary::fixed) ||
                            (y == 0 && e.north == edge_boundary::fixed) ||
                            (y + 1 == height_ && e.south == edge_boundary::fixed);
                for (int k = 0; k < d8_neighbours && !base; ++k) {
                    const std::ptrdiff_t j = topo_.neighbour(x, y, k);
                    if (j >= 0 && topo_.kind[std::size_t(j)] == detail::evo_void) base = true;
                }
                if (base) topo_.kind[i] = detail::evo_base;
            }
        for (std::size_t i = 0; i < n; ++i) {
            if (topo_.kind[i] == detail::evo_base) topo_.base_cells.push_back(static_cast<detail::evo_index>(i));
            if (topo_.kind[i] == detail::evo_void) topo_.void_cells.push_back(static_cast<detail::evo_index>(i));
        }
        topo_.data_cells = n - topo_.void_cells.size();
    }

    /// Throws when some data cell has no path to a base-level cell. (Every data region that
    /// touches a no-data cell or a fixed edge holds base-level cells, so this is a safeguard of
    /// the routing's precondition rather than a case of its own.)
    void check_connected(const char* who) const {
        const std::size_t n = h_.size();
        std::vector<std::uint8_t> reached(n, 0);
        std::vector<detail::evo_index> queue;
        for (std::size_t i = 0; i < n; ++i)
            if (topo_.kind[i] == detail::evo_base) {
                reached[i] = 1;
                queue.push_back(static_cast<detail::evo_index>(i));
            }
        for (std::size_t read = 0; read < queue.size(); ++read) {
            const std::ptrdiff_t c = std::ptrdiff_t(queue[read]);
            for (int k = 0; k < d8_neighbours; ++k) {
                const std::ptrdiff_t j = topo_.neighbour(c % width_, c / width_, k);
                if (j < 0 || reached[std::size_t(j)] || topo_.kind[std::size_t(j)] == detail::evo_void) continue;
                reached[std::size_t(j)] = 1;
                queue.push_back(static_cast<detail::evo_index>(j));
            }
        }
        for (std::size_t i = 0; i < n; ++i)
            if (topo_.kind[i] == detail::evo_free && !reached[i])
                throw std::invalid_argument(std::string(who) + ": invalid edges (cell (" +
                                            std::to_string(std::ptrdiff_t(i) % width_) + ", " +
                                            std::to_string(std::ptrdiff_t(i) / width_) +
                                            ") has no path to base level: closed edges and no-data cells cut it off)");
    }

    /// Per-direction factors dt·K·cell_size^(2m) / distance^n, and the table of count^m.
    void prepare_coefficients() {
        const double m = double(params_.area_exponent), nexp = double(params_.slope_exponent);
        const double cs = double(params_.cell_size);
        for (int k = 0; k < d8_neighbours; ++k) {
            const double dist = cs * (d8_is_diagonal(k) ? 1.41421356237309504880 : 1.0);
            coef_[k] = T(double(params_.time_step) * double(params_.erodibility) * std::pow(cs * cs, m) /
                         std::pow(dist, nexp));
        }
        power_.resize(power_table_size);
        for (std::uint32_t c = 0; c < power_table_size; ++c) power_[c] = T(std::pow(double(c), m));
    }

    T count_power(std::uint32_t c) const {
        return c < power_table_size ? power_[c] : T(std::pow(double(c), double(params_.area_exponent)));
    }

    /// Receivers (across depressions), stack, counts and lake flags of the current heights.
    void route(unsigned threads) {
        const std::size_t sinks = find_receivers(threads);
        depressions(sinks);
        stack_and_area();
    }

    /// Steepest-descent receivers of the current heights; returns the number of sinks.
    std::size_t find_receivers(unsigned threads) {
        const std::ptrdiff_t rows = band_rows();
        sink_counts_.assign(std::size_t(bands()), 0);
        detail::evo_for_pieces(threads, bands(), [&](std::ptrdiff_t b) {
            sink_counts_[std::size_t(b)] = detail::evo_receivers_rows(topo_, h_.data(), rcv_.data(), code_.data(),
                                                                      b * rows, std::min(height_, (b + 1) * rows));
        });
        std::size_t total = 0;
        for (const std::size_t s : sink_counts_) total += s;
        return total;
    }

    /// Routes across depressions when there are sinks (lake flags, carved receivers).
    void depressions(std::size_t sinks) {
        if (lakes_)  // the last routing's lake cells, the only ones set
            for (const detail::evo_index c : dep_.lakes) lake_[c] = 0;
        lakes_ = sinks > 0;
        lake_count_ = 0;
        if (!lakes_) return;
        detail::evo_route_depressions(topo_, h_.data(), rcv_.data(), code_.data(), dep_, lake_.data());
        lake_count_ = dep_.lake_cells;
    }

    void stack_and_area() {
        if (!detail::evo_stack_and_count(topo_, rcv_.data(), pending_, stack_, count_.data()))
            throw std::logic_error("gorge::landscape_evolver: routing left a cell without a path to base level");
    }

    void step(unsigned threads, evolution_stats& stats) {
        clock::time_point t = clock::now();
        const double cell_area = double(params_.cell_size) * double(params_.cell_size);
        const std::ptrdiff_t rows = band_rows();
        band_sums_.assign(std::size_t(bands()), 0.0);
        // 1. Uplift.
        const T dt = params_.time_step;
        detail::evo_for_pieces(threads, bands(), [&](std::ptrdiff_t b) {
            double added = 0;
            const std::size_t i0 = std::size_t(b * rows * width_);
            const std::size_t i1 = std::size_t(std::min(height_, (b + 1) * rows) * width_);
            const std::uint8_t* kind = topo_.kind.data();
            T* h = h_.data();
            if (uplift_.empty()) {
                const T du = params_.uplift * dt;
                for (std::size_t i = i0; i < i1; ++i)
                    if (kind[i] == detail::evo_free) {
                        const T before = h[i];
                        h[i] = before + du;
                        added += double(h[i]) - double(before);
                    }
            } else {
                const T* u = uplift_.data();
                for (std::size_t i = i0; i < i1; ++i)
                    if (kind[i] == detail::evo_free) {
                        const T before = h[i];
                        h[i] = before + u[i] * dt;
                        added += double(h[i]) - double(before);
                    }
            }
            band_sums_[std::size_t(b)] = added;
        });
        for (const double s : band_sums_) stats.uplifted += s * cell_area;
        stats.seconds.uplift += since(t);

        // 2. Receivers.
        const std::size_t sinks = find_receivers(threads);
        stats.seconds.receivers += since(t);

        // 3. Depressions.
        depressions(sinks);
        if (lakes_) ++stats.depression_steps;
        stats.lake_cells = lake_count_;
        stats.seconds.depressions += since(t);

        // 4. Stack and 5. accumulation, in one pass (timed as the stack).
        stack_and_area();
        stats.seconds.stack += since(t);

        // 6. Stream power, receivers first.
        stats.eroded += stream_power() * cell_area;
        stats.seconds.stream_power += since(t);

        // 7. Diffusion.
        if (params_.diffusivity > T(0)) stats.diffused_out += diffuse(threads) * cell_area;
        stats.seconds.diffusion += since(t);
    }

    /// The implicit stream power solve; returns the height (× cells) it removed, all of which the
    /// receivers carry to base level within the step.
    double stream_power() {
        const bool linear = params_.slope_exponent == T(1), quadratic = params_.slope_exponent == T(2);
        const T nexp = params_.slope_exponent;
        T* h = h_.data();
        const evo_index_t* rcv = rcv_.data();
        const std::uint8_t* kind = topo_.kind.data();
        const std::uint8_t* lake = lake_.data();
        const std::uint8_t* code = code_.data();
        const std::uint32_t* count = count_.data();
        double removed = 0;
        if (linear) {
            // n = 1: h = w + (h* - w)·g with g = 1 / (1 + f) made before w is known, so that the
            // chain from a receiver to its donor (the next cell of the stack, often) is one
            // subtraction, one multiply and one add.
            for (const evo_index_t c : stack_) {
                if (kind[c] != detail::evo_free) continue;
                if (lakes_ && lake[c]) continue;
                const T gain = detail::evo_spl_linear_gain(coef_[code[c]] * count_power(count[c]));
                const evo_index_t r = rcv[c];
                const T w = (lakes_ && lake[r]) ? dep_.level[dep_.label[r]] : h[r];
                const T before = h[c];
                const T x0 = before - w;
                if (!(x0 > T(0))) continue;
                const T next = w + detail::evo_spl_linear(x0, gain);
                if (next < before) {
                    removed += double(before) - double(next);
                    h[c] = next;
                }
            }
            return removed;
        }
        for (const evo_index_t c : stack_) {
            if (kind[c] != detail::evo_free) continue;
            if (lakes_ && lake[c]) continue;
            const evo_index_t r = rcv[c];
            const T w = (lakes_ && lake[r]) ? dep_.level[dep_.label[r]] : h[r];
            const T x0 = h[c] - w;
            if (!(x0 > T(0))) continue;
            const T f = coef_[code[c]] * count_power(count[c]);
            const T x = quadratic ? detail::evo_spl_quadratic(x0, f) : detail::evo_spl_newton(x0, f, nexp);
            const T next = w + x;
            if (next < h[c]) {
                removed += double(h[c]) - double(next);
                h[c] = next;
            }
        }
        return removed;
    }

    /// Implicit diffusion along rows, then columns; returns the height (× cells) carried into
    /// base-level cells.
    double diffuse(unsigned threads) {
        const T a = detail::evo_diffusion_number(params_.diffusivity, params_.time_step, params_.cell_size);
        const std::size_t lines = std::size_t(height_) + std::size_t(width_);
        line_out_.assign(lines, 0.0);
        // Rows.
        const std::ptrdiff_t rows = band_rows();
        if (!topo_.wrap_x && row_factors_.empty())
            detail::evo_factor_lines(topo_.kind.data(), width_, height_, true, a, row_factors_);
        if (!topo_.wrap_y && column_factors_.empty())
            detail::evo_factor_lines(topo_.kind.data(), width_, height_, false, a, column_factors_);
        detail::evo_for_pieces(threads, bands(), [&](std::ptrdiff_t b) {
            const std::ptrdiff_t y0 = b * rows, y1 = std::min(height_, (b + 1) * rows);
            if (!topo_.wrap_x) {
                detail::evo_solve_rows(h_.data(), row_factors_, width_, y0, y1);
                for (std::ptrdiff_t y = y0; y < y1; ++y)
                    line_out_[std::size_t(y)] = detail::evo_line_outflow(h_.data(), row_factors_, std::size_t(y), a);
                return;
            }
            detail::evo_line_scratch<T> s;
            s.resize(std::size_t(width_));
            for (std::ptrdiff_t y = y0; y < y1; ++y) {
                T* row = h_.data() + y * width_;
                const std::uint8_t* kind = topo_.kind.data() + y * width_;
                std::copy(row, row + width_, s.value.begin());
                std::copy(kind, kind + width_, s.kind.begin());
                line_out_[std::size_t(y)] = detail::evo_diffuse_line(s, std::size_t(width_), a, true);
                std::copy(s.value.begin(), s.value.begin() + width_, row);
            }
        });
        if (!topo_.wrap_y) {
            // Columns: all at once, row by row, in strips of columns (one per thread at most).
            const std::ptrdiff_t strips = (width_ + column_strip - 1) / column_strip;
            detail::evo_for_pieces(threads, strips, [&](std::ptrdiff_t b) {
                const std::ptrdiff_t x0 = b * column_strip, x1 = std::min(width_, x0 + column_strip);
                detail::evo_solve_columns(h_.data(), column_factors_, width_, height_, x0, x1);
                for (std::ptrdiff_t x = x0; x < x1; ++x)
                    line_out_[std::size_t(height_ + x)] =
                        detail::evo_line_outflow(h_.data(), column_factors_, std::size_t(x), a);
            });
            double out = 0;
            for (const double v : line_out_) out += v;
            return out;
        }
        // Columns, in blocks gathered row by row (cache lines, not strides).
        const std::ptrdiff_t blocks = (width_ + column_block - 1) / column_block;
        detail::evo_for_pieces(threads, blocks, [&](std::ptrdiff_t b) {
            const std::ptrdiff_t x0 = b * column_block, x1 = std::min(width_, x0 + column_block);
            const std::size_t hh = std::size_t(height_);
            std::vector<T> vals(std::size_t(x1 - x0) * hh);
            std::vector<std::uint8_t> kinds(vals.size());
            for (std::ptrdiff_t y = 0; y < height_; ++y)
                for (std::ptrdiff_t x = x0; x < x1; ++x) {
                    const std::size_t i = std::size_t(y * width_ + x), o = std::size_t(x - x0) * hh + std::size_t(y);
                    vals[o] = h_[i];
                    kinds[o] = topo_.kind[i];
                }
            detail::evo_line_scratch<T> s;
            s.resize(hh);
            for (std::ptrdiff_t x = x0; x < x1; ++x) {
                const std::size_t o = std::size_t(x - x0) * hh;
                std::copy(vals.begin() + std::ptrdiff_t(o), vals.begin() + std::ptrdiff_t(o + hh), s.value.begin());
                std::copy(kinds.begin() + std::ptrdiff_t(o), kinds.begin() + std::ptrdiff_t(o + hh), s.kind.begin());
                line_out_[std::size_t(height_ + x)] = detail::evo_diffuse_line(s, hh, a, topo_.wrap_y);
                std::copy(s.value.begin(), s.value.begin() + std::ptrdiff_t(hh), vals.begin() + std::ptrdiff_t(o));
            }
            for (std::ptrdiff_t y = 0; y < height_; ++y)
                for (std::ptrdiff_t x = x0; x < x1; ++x)
                    h_[std::size_t(y * width_ + x)] = vals[std::size_t(x - x0) * hh + std::size_t(y)];
        });
        double out = 0;
        for (const double v : line_out_) out += v;
        return out;
    }

    using evo_index_t = detail::evo_index;
    /// Columns solved per block of the periodic column pass (one cache line of doubles or more).
    static constexpr std::ptrdiff_t column_block = 16;
    /// Columns per strip of the open column pass (a piece of work for one thread).
    static constexpr std::ptrdiff_t column_strip = 256;

    evolution_params<T> params_;
    std::ptrdiff_t width_ = 0, height_ = 0;
    double elapsed_ = 0;
    detail::evo_topology topo_;
    std::vector<T> h_, uplift_;
    /// LU factors of the open row and column solves (made by the first diffusion step).
    detail::evo_line_factors<T> row_factors_, column_factors_;
    std::vector<evo_index_t> rcv_, pending_, stack_;
    std::vector<std::uint8_t> code_, lake_;
    std::vector<std::uint32_t> count_;
    std::vector<double> band_sums_, line_out_;
    detail::evo_depressions<T> dep_;
    std::vector<std::size_t> sink_counts_;
    std::vector<T> power_;
    T coef_[d8_neighbours] = {};
    bool lakes_ = false;
    std::size_t lake_count_ = 0;
};

/// One call: evolves `heights` in place for `steps` steps with the uniform uplift params.uplift
/// (see landscape_evolver for the checks and the model).
template <class T>
evolution_stats evolve_landscape(grid_view<T> heights, const evolution_params<T>& params, int steps,
                                 const evolution_options& options = {}) {
    landscape_evolver<T> model(grid_view<const T>(heights), params);
    const evolution_stats stats = model.run(steps, options);
    model.copy_heights(heights);
    return stats;
}

/// Same with a grid of uplift rates (length / time, the size of the map).
template <class T>
evolution_stats evolve_landscape(grid_view<T> heights, grid_view<const T> uplift, const evolution_params<T>& params,
                                 int steps, const evolution_options& options = {}) {
    landscape_evolver<T> model(grid_view<const T>(heights), params);
    model.set_uplift(uplift);
    const evolution_stats stats = model.run(steps, options);
    model.copy_heights(heights);
    return stats;
}

}  // namespace gorge
