// gorge/erosion/droplet_params.hpp — the public types of droplet erosion: parameters
// (droplet_params), batch options (droplet_options, droplet_schedule, droplet_edge), results
// (droplet_stats, droplet_result, droplet_end) and the accepted input bounds. The model, the
// schedules and the guarantees are described in gorge/erosion/droplet.hpp.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

#include <glm/vec2.hpp>

#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"

namespace gorge {

/// Largest accepted droplet_params::lifetime.
constexpr int droplet_max_lifetime = 65536;
/// Largest accepted brush radius in cells (droplet_params::brush_radius / cell_size).
constexpr int droplet_max_brush_cells = 32;
/// Accepted step length in cells (droplet_params::step_length / cell_size): [1/16, 16].
constexpr double droplet_min_step_cells = 1.0 / 16.0;
constexpr double droplet_max_step_cells = 16.0;

/// Parameters of droplet erosion, in world units: heights and horizontal lengths in the same unit
/// (the unit of the heights), one cell = cell_size of them. Defaults are Lague's (after Beyer) at
/// cell_size 1, where world units and cells coincide. Keeping every world-unit parameter and
/// changing only the resolution (cell_size with it) erodes the same world the same way; keeping
/// the droplets per unit area too keeps the eroded volume. Volumes (capacity, sediment, the
/// amounts of droplet_stats) are heights × world area. Ranges are checked by validate().
/// Presets: lague_small_map() (the defaults), lague_large_terrain(), steep_mountains().
template <class T>
struct droplet_params {
    static_assert(std::is_floating_point<T>::value, "droplet_params<T>: T must be float or double");
    /// Horizontal size of one cell in world units (the units of the heights), finite > 0
    /// (default 1). Scales the map, not the model: the other lengths stay in world units.
    T cell_size = T(1);
    /// Distance a droplet moves per step, in world units, finite > 0 and 1/16..16 cells
    /// (default 1).
    T step_length = T(1);
    /// Erosion brush radius in world units, 1..32 cells (brush_radius / cell_size; default 3):
    /// nodes closer than r to the brush centre get weight 1 - d/r, normalised to sum 1. Wider
    /// brushes carve wider, smoother valleys.
    T brush_radius = T(3);
    /// Share of the previous direction kept per step, 0..1, no unit (default 0.05): higher
    /// values give straighter, longer rills that climb over small bumps.
    T inertia = T(0.05);
    /// Sediment capacity per (height descended per step) × speed × water, in world area
    /// (capacity is a volume), finite >= 0 (default 4): how much a fast droplet can carry.
    T capacity_factor = T(4);
    /// Capacity floor, a volume (heights × world area), finite >= 0 (default 0.01): keeps droplets
    /// on gentle slopes eroding a little.
    T min_capacity = T(0.01);
    /// Fraction of the free capacity picked up per step, 0..1 (default 0.3): how fast channels cut.
    T erode_rate = T(0.3);
    /// Fraction of the sediment above capacity dropped per step, 0..1 (default 0.3): higher
    /// values build deposits close to where the flow slows.
    T deposit_rate = T(0.3);
    /// Fraction of the water lost per step, 0..1 (default 0.01): capacity shrinks with the water,
    /// so higher values make droplets drop their load sooner.
    T evaporate_rate = T(0.01);
    /// Speed² gained per unit of height descended (speed is in world units per step, squared
    /// over height units), finite >= 0 (default 4). Steep relief needs less.
    T gravity = T(4);
    /// Maximum number of steps, 1..65536 (default 30): lifetime × step_length is the longest
    /// path, in world units, a droplet can carve.
    int lifetime = 30;
    T initial_water = T(1);  ///< water a droplet starts with, no unit, finite > 0 (default 1)
    /// Speed a droplet starts with, in the units of gravity's speed, finite >= 0 (default 1).
    T initial_speed = T(1);

    /// Lague's defaults, tuned for small maps of heights in [0, 1] with one cell per unit
    /// (256² to 1024² cells, a relief of about 1): the default-constructed parameters.
    static droplet_params lague_small_map() { return {}; }
    /// Lague's "large terrain" scene: a wider brush and longer-lived droplets for wide maps of
    /// heights in [0, 1]: brush_radius 6, lifetime 90, capacity_factor 3, min_capacity 0,
    /// evaporate_rate 0.02, inertia 0.065, the rest as lague_small_map().
    static droplet_params lague_large_terrain() {
        droplet_params p;
        p.brush_radius = T(6);
        p.lifetime = 90;
        p.capacity_factor = T(3);
        p.min_capacity = T(0);
        p.evaporate_rate = T(0.02);
        p.inertia = T(0.065);
        return p;
    }
    /// Steep mountain relief, where a step descends a sizeable fraction of its length (slopes
    /// of 0.1 to 1 and more, e.g. a relief of 50 to 200 units over 1000): less gravity (1) so
    /// droplets do not race, a smaller capacity_factor (1) and erode_rate (0.1) so a step digs
    /// a fraction of its descent instead of all of it, more inertia (0.5) for long straight
    /// gullies, brush_radius 4, evaporate_rate 0.025 and 50 steps; the rest as lague_small_map().
    /// Inertia and the shorter life also keep the eroded volume per area within 1.1× between
    /// cell sizes 1 and 0.5 of the same world (0.3 and 60 steps gave 1.27×).
    /// Set cell_size to the map's horizontal spacing in the same unit as the heights.
    static droplet_params steep_mountains() {
        droplet_params p;
        p.brush_radius = T(4);
        p.inertia = T(0.5);
        p.capacity_factor = T(1);
        p.erode_rate = T(0.1);
        p.evaporate_rate = T(0.025);
        p.gravity = T(1);
        p.lifetime = 50;
        return p;
    }

    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::droplet_params"); }
    /// Name and rule of the first bad parameter; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        const auto in01 = [](T v) { return v >= T(0) && v <= T(1); };  // false for NaN
        const auto finite_nonneg = [](T v) { return std::isfinite(v) && v >= T(0); };
        const auto finite_pos = [](T v) { return std::isfinite(v) && v > T(0); };
        if (!finite_pos(cell_size)) return "cell_size (must be finite and > 0)";
        if (!finite_pos(step_length)) return "step_length (must be finite and > 0)";
        const double step_cells = double(step_length) / double(cell_size);
        if (!(step_cells >= droplet_min_step_cells && step_cells <= droplet_max_step_cells))
            return "step_length (must be 1/16..16 cells: step_length / cell_size)";
        const double brush_cells = double(brush_radius) / double(cell_size);
        if (!(brush_cells >= 1 && brush_cells <= double(droplet_max_brush_cells)))
            return "brush_radius (must be 1..32 cells: brush_radius / cell_size)";
        if (!in01(inertia)) return "inertia (must be in [0, 1])";
        if (!finite_nonneg(capacity_factor)) return "capacity_factor (must be finite and >= 0)";
        if (!finite_nonneg(min_capacity)) return "min_capacity (must be finite and >= 0)";
        if (!in01(erode_rate)) return "erode_rate (must be in [0, 1])";
        if (!in01(deposit_rate)) return "deposit_rate (must be in [0, 1])";
        if (!in01(evaporate_rate)) return "evaporate_rate (must be in [0, 1])";
        if (!finite_nonneg(gravity)) return "gravity (must be finite and >= 0)";
        if (lifetime < 1 || lifetime > droplet_max_lifetime) return "lifetime (must be in 1..65536)";
        if (!(std::isfinite(initial_water) && initial_water > T(0))) return "initial_water (must be finite and > 0)";
        if (!finite_nonneg(initial_speed)) return "initial_speed (must be finite and >= 0)";
        // Derived per-cell factors (capacity_factor / cell_size² and the like) must stay finite.
        const T area = cell_size * cell_size;
        if (!(area > T(0) && std::isfinite(area) && std::isfinite(capacity_factor / area) &&
              std::isfinite(min_capacity / area)))
            return "cell_size (capacity_factor / cell_size^2 and min_capacity / cell_size^2 must be finite)";
        return {};
    }
};

/// What happens to the sediment of a droplet that flows over the map edge.
enum class droplet_edge : unsigned char {
    outflow,  ///< it leaves the map; droplet_stats::outflow counts it (default)
    deposit,  ///< it is deposited at the droplet's last in-map position
};

/// Order in which droplets run; see the header comment.
enum class droplet_schedule : unsigned char {
    serial,  ///< one thread, droplets in index order over the whole map (default)
    tiled,   ///< 4-coloured tile schedule, any number of threads, same result for all
};

/// Largest accepted droplet_options::rounds.
constexpr unsigned droplet_max_rounds = 1024;

/// Options of a batch run.
struct droplet_options {
    std::uint64_t seed = 0;                              ///< start-position seed (any value, default 0)
    droplet_edge edge = droplet_edge::outflow;           ///< sediment crossing the edge (default outflow)
    droplet_schedule schedule = droplet_schedule::serial;  ///< serial (default) or tiled
    /// tiled only: threads running tiles, the calling thread included (gorge's thread rule, see
    /// gorge/detail/parallel.hpp): default 1 (none started), 0 = all hardware threads,
    /// 0..max_threads (1024), never more than the tiles of one colour. The result is the same for
    /// any value.
    unsigned threads = 1;
    /// tiled only: passes over the 4 colours, 1..1024 (default 8); more rounds mix the order of
    /// neighbouring tiles better, at one thread start and join per colour and round
    unsigned rounds = 8;
    /// Run droplets in groups of four that step together, all reading the map before any writes
    /// it (default true; faster on one core, see the header comment of gorge/erosion/droplet.hpp).
    /// false runs them strictly one after another, exactly like droplet_eroder::run() called in
    /// index order. Either is deterministic; they differ where droplets of a group meet within
    /// their lifetimes.
    bool interleave = true;
    /// Optional progress report and cancellation, called from the calling thread only with the
    /// fraction of droplets done (0..1, non-decreasing):
    ///   - once at the start with 0 (unless there are no droplets);
    ///   - then each time the number of finished droplets passes a multiple of the interval
    ///     min(count / 1000, 16384), rounded up to a multiple of 256 (serially exactly at the
    ///     multiples; in the tiled schedule the calling thread checks after each of its blocks of
    ///     256 droplets and, while it waits for other threads, at least every millisecond);
    ///   - a last time with 1 when the run completes.
    /// Return false to cancel: no droplet starts afterwards and no further call comes; droplets
    /// already running finish (the terrain never holds half a droplet): none in the serial
    /// schedule, so stats.droplets is exactly the fraction last reported times the count; in the
    /// tiled one, each other thread finishes at most its current block of 256 after the callback
    /// returned. false at the start runs no droplet at all.
    /// An exception it throws stops the run the same way and propagates after the workers have
    /// been joined.
    std::function<bool(double)> progress;

    /// Name and rule of the first bad option (rounds only with the tiled schedule); empty when
    /// all are valid.
    invalid_parameter first_invalid() const {
        if (const invalid_parameter bad = detail::invalid_thread_count(threads)) return bad;
        if (schedule == droplet_schedule::tiled && (rounds < 1 || rounds > droplet_max_rounds))
            return "rounds (must be in 1..1024)";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad option.
    void validate() const { detail::validate(*this, "gorge::droplet_options"); }
};

/// Totals of a batch run (or of one droplet). Amounts are volumes: heights × world area
/// (heights × cells at cell_size 1).
/// Conservation: deposited + outflow == eroded, and the terrain's volume changes by
/// deposited - eroded == -outflow, both up to floating-point rounding.
struct droplet_stats {
    std::uint64_t droplets = 0;  ///< droplets simulated (the requested count unless cancelled)
    std::uint64_t left_map = 0;  ///< droplets that flowed over the map edge
    bool cancelled = false;      ///< the progress callback asked to stop
    double eroded = 0;           ///< material picked up from the terrain
    double deposited = 0;        ///< material put down, including sediment dropped by dying droplets
    double outflow = 0;          ///< sediment carried over the edge (droplet_edge::outflow only)
};

/// Why a single droplet stopped.
enum class droplet_end : unsigned char {
    lifetime,  ///< it took `lifetime` steps
    stopped,   ///< its flow direction vanished (flat ground) or it reached its tile's position box
    left_map,  ///< it flowed over the map edge
};

/// Result of one droplet (droplet_eroder::run).
template <class T>
struct droplet_result {
    glm::vec<2, T> position{T(0), T(0)};  ///< last in-map position
    T speed = T(0);                       ///< speed after the last step
    T water = T(0);                       ///< water after the last step
    int steps = 0;                        ///< steps taken
    droplet_end end = droplet_end::lifetime;
    double eroded = 0, deposited = 0, outflow = 0;  ///< as in droplet_stats
};

/// Largest accepted |height|: 1e18 for float, 1e150 for double. Within it the gradient's squared
/// length cannot overflow; speed and capacity are clamped, so no intermediate becomes NaN.
template <class T>
constexpr T droplet_height_limit() {
    return std::is_same<T, float>::value ? T(1e18f) : T(1e150);
}

/// Largest accepted width or height (every cell coordinate must be exact in float).
constexpr std::ptrdiff_t droplet_max_side = std::ptrdiff_t(1) << 24;

}  // namespace gorge
