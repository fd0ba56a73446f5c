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

/// Parameters of droplet erosion. Defaults are Lague's (after Beyer); ranges are checked by
/// validate(). Heights and distances are in the units of the map, one cell = 1.
template <class T>
struct droplet_params {
    static_assert(std::is_floating_point<T>::value, "droplet_params<T>: T must be float or double");
    /// erosion brush radius in cells, 1..32 (default 3); cells closer than r get weight 1 - d/r
    int brush_radius = 3;
    T inertia = T(0.05);         ///< share of the previous direction kept per step, 0..1 (default 0.05)
    T capacity_factor = T(4);    ///< sediment capacity per unit of descent·speed·water, finite >= 0 (default 4)
    /// capacity floor, keeps droplets on gentle slopes eroding a little, finite >= 0 (default 0.01)
    T min_capacity = T(0.01);
    T erode_rate = T(0.3);       ///< fraction of the free capacity picked up per step, 0..1 (default 0.3)
    T deposit_rate = T(0.3);     ///< fraction of the excess sediment dropped per step, 0..1 (default 0.3)
    T evaporate_rate = T(0.01);  ///< fraction of the water lost per step, 0..1 (default 0.01)
    T gravity = T(4);            ///< speed² gained per unit of descent, finite >= 0 (default 4)
    int lifetime = 30;           ///< maximum number of steps, 1..65536 (default 30)
    T initial_water = T(1);      ///< water a droplet starts with, finite > 0 (default 1)
    T initial_speed = T(1);      ///< speed a droplet starts with, finite >= 0 (default 1)

    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::droplet_params"); }
    /// Name and rule of the first bad parameter; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        const auto in01 = [](T v) { return v >= T(0) && v <= T(1); };  // false for NaN
        const auto finite_nonneg = [](T v) { return std::isfinite(v) && v >= T(0); };
        if (brush_radius < 1 || brush_radius > 32) return "brush_radius (must be in 1..32)";
        if (!in01(inertia)) return "inertia (must be in [0, 1])";
        if (!finite_nonneg(capacity_factor)) return "capacity_factor (must be finite and >= 0)";
        if (!finite_nonneg(min_capacity)) return "min_capacity (must be finite and >= 0)";
        if (!in01(erode_rate)) return "erode_rate (must be in [0, 1])";
        if (!in01(deposit_rate)) return "deposit_rate (must be in [0, 1])";
        if (!in01(evaporate_rate)) return "evaporate_rate (must be in [0, 1])";
        if (!finite_nonneg(gravity)) return "gravity (must be finite and >= 0)";
        if (lifetime < 1 || lifetime > 65536) return "lifetime (must be in 1..65536)";
        if (!(std::isfinite(initial_water) && initial_water > T(0))) return "initial_water (must be finite and > 0)";
        if (!finite_nonneg(initial_speed)) return "initial_speed (must be finite and >= 0)";
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
    /// Run droplets in pairs that step together, both reading the map before either writes it
    /// (default true; 1.4 to 1.6 times as fast on one core, see the header comment). false runs
    /// them strictly one after another, exactly like droplet_eroder::run() called in index
    /// order. Either is deterministic; they differ where two paired droplets meet within their
    /// lifetimes.
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

/// Totals of a batch run (or of one droplet). Amounts are heights × cells (volume).
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
