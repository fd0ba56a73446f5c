// gorge/erosion/droplet.hpp — droplet (particle) hydraulic erosion on a heightmap grid.
//
// The model is the one Hans Theobald Beyer described in his thesis "Implementation of a method for
// hydraulic erosion" (TU München, 2015) and Sebastian Lague popularised in "Coding Adventure:
// Hydraulic Erosion" (2019). Each droplet is a point that walks downhill over the bilinearly
// interpolated heightmap:
//   1. height h and gradient g at the droplet from the four corners of its cell (bilinear);
//   2. direction d = normalize(d * inertia - g * (1 - inertia)); the droplet moves one cell length;
//   3. Δh = h(new position) - h(old position); carrying capacity
//      c = max(-Δh * speed * water * capacity_factor, min_capacity);
//   4. going uphill (Δh > 0) it drops min(Δh, sediment) into the pit it leaves (filling it up to the
//      droplet's height at most); over capacity it drops (sediment - c) * deposit_rate; both are
//      spread bilinearly over the four corners of the old cell;
//   5. otherwise it picks up min((c - sediment) * erode_rate, -Δh) through a radial brush centred
//      on the old cell's node, cell weights 1 - d/r normalised to sum 1 (it never digs more than
//      the height it just descended);
//   6. speed = sqrt(max(speed² - Δh * gravity, 0)) — it grows going downhill; water *= 1 - evaporate;
//   7. it dies after `lifetime` steps, when the flow direction vanishes (flat ground) or when it
//      leaves the map.
//
// What differs from the common implementations, deliberately:
//   - Speed sign: v² grows by -Δh·gravity (energy conservation: Δh < 0 downhill); several peers
//     add Δh·gravity, which slows droplets going downhill. The radicand is clamped at 0 and the
//     speed at a finite bound, so speed is never NaN or infinite.
//   - Conservation: sediment still carried when a droplet dies inside the map is deposited at its
//     last position; sediment carried over the map edge is either removed and reported
//     (droplet_edge::outflow, the default) or deposited at the last in-map position
//     (droplet_edge::deposit). droplet_stats reports eroded, deposited and outflow, and the
//     terrain's volume changes by exactly deposited - eroded = -outflow (up to float rounding).
//   - Heights may be negative: erosion is not clamped at zero.
//   - One shared brush table for the whole map: the (index offset, cell offset, weight) of each
//     cell closer than r to the node, plus, for the interior, the same weights laid out as rows
//     of 16-byte blocks (one copy per alignment of a row within a block, see erode_blocks). At
//     the map border the brush is clipped to the map and renormalised, so the picked-up material
//     always equals what the terrain loses. No per-cell tables.
//
// Memory: besides the caller's heightmap, a run allocates the brush tables (1.2 KiB for the
// default radius 3, 9.2 KiB at radius 8, 142 KiB at the maximum radius 32, float) and, in the
// tiled schedule, 108 bytes per tile (a tile has at least (2·margin)² cells) plus the worker
// threads. droplet_workspace_bytes() returns the figure (the tests check it against what a run
// really holds at its peak); for maps of 128 × 128 cells or more with brush radius <= 8 it stays
// below half of the heightmap, so the total stays within 1.5× the heightmap. Thread stacks, which
// the operating system provides, are not counted.
//
// Random starts (documented generator): droplet k starts at a position derived from
// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
// used as a counter-based hash: z = mix64(mix64(seed) + (k + 1)·0x9E3779B97F4A7C15), the top 32
// bits of z pick x and the low 32 bits pick y uniformly in the droplet's start rectangle. Droplet k
// is therefore independent of how many droplets were requested and of any thread schedule.
//
// Schedules (droplet_options::schedule):
//   - serial: droplets k = 0 .. n-1 in order, starts uniform over [0, W-1) × [0, H-1).
//     Stopping after m droplets (cancellation) leaves the same map as a run of m droplets.
//   - tiled (parallel): the map is cut into tiles of at least 2·margin cells per side, margin =
//     lifetime + brush radius + 8 (see detail::droplet_tile_margin), which bounds how far a
//     droplet's writes can reach from the tile it starts in. Tiles are 4-coloured by the parity
//     of their column and row; tiles of one colour are at least 2·margin apart and run
//     concurrently, colours run one after another, and the whole sequence repeats `rounds`
//     times, each round taking its share of the droplets, on droplet_options::threads threads
//     (gorge's thread rule: default 1, 0 = all hardware threads). Each tile gets droplets in
//     proportion to its area, starting uniformly inside the tile (droplet indices are numbered
//     round by round, tile by tile). Droplets of a tile are confined to a position box (the
//     tile grown by lifetime + 1 cells); one reaching its side dies there like a droplet on flat
//     ground, which a droplet moving one cell per step can only do through rounding, so
//     disjointness follows from integer bounds, not from floating-point travel estimates. The result is bit-identical
//     for every thread count (including 1) and free of data races. The serial and tiled
//     schedules visit droplets in different orders and give different (statistically alike)
//     terrains. A map shorter than two tiles along an axis has one tile along it; a map of one
//     tile runs on one thread.
//   Both interleave droplets in pairs by default (droplet_options::interleave): droplets 2j and
//   2j + 1 (counted from the start of each block of droplet_chunk droplets) take their steps
//   together, and each joint step first moves both (reading the map) and then lets both erode or
//   deposit (writing it), first 2j, then 2j + 1. Two independent dependency chains stay in
//   flight, and the hard-to-predict choice between erosion and deposition of one droplet comes
//   after the other droplet's reads in program order, so a misprediction does not throw that
//   work away. The order of all reads and writes is fixed, so results stay deterministic; they
//   differ from running the droplets one by one only where the two droplets of a pair come
//   within a few cells of each other. interleave = false runs droplets strictly one after
//   another.
//
// Guarantees: deterministic for a given seed, schedule and parameters (and, tiled, any thread
// count); no NaN or infinity for finite heights within ±droplet_height_limit<T>() (checked, as
// are the parameters; both throw std::invalid_argument naming the culprit): speed and capacity
// are clamped, a vanishing direction ends the droplet. Not guaranteed: the same bits across
// compilers or CPUs (floating-point contraction may differ).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <glm/vec2.hpp>

#include "../config.hpp"
#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"

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

namespace detail {

/// SplitMix64's finaliser (Steele, Lea & Flood 2014; constants from Vigna's splitmix64.c).
inline std::uint64_t splitmix64_mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/// SplitMix64's golden-ratio increment.
constexpr std::uint64_t splitmix64_gamma = 0x9E3779B97F4A7C15ull;

/// 64 random bits for droplet `index` of the stream `seed` (unsigned arithmetic wraps by design).
inline std::uint64_t droplet_bits(std::uint64_t seed, std::uint64_t index) {
    return splitmix64_mix(splitmix64_mix(seed) + (index + 1) * splitmix64_gamma);
}

/// Uniform value in [lo, hi) from 32 random bits; `below_hi` is the largest T below hi.
template <class T>
inline T droplet_uniform(std::uint32_t bits, std::ptrdiff_t lo, std::ptrdiff_t hi, T below_hi) {
    constexpr double two_pow_minus_32 = 1.0 / 4294967296.0;
    const T v = T(double(lo) + double(bits) * two_pow_minus_32 * double(hi - lo));
    return v < below_hi ? v : below_hi;
}

/// Unnormalised brush weight of the cell at offset (dx, dy) for radius r: max(0, 1 - d/r).
inline double droplet_brush_weight(int dx, int dy, int r) {
    return std::max(0.0, 1.0 - std::sqrt(double(dx) * dx + double(dy) * dy) / r);
}

/// Number of cells with a positive weight in a brush of radius r (those closer than r).
inline std::size_t droplet_brush_entries(int r) {
    std::size_t n = 0;
    for (int dy = 1 - r; dy < r; ++dy)
        for (int dx = 1 - r; dx < r; ++dx) n += droplet_brush_weight(dx, dy, r) > 0 ? 1u : 0u;
    return n;
}

/// One cell of the shared brush table: index offset from the centre (for the map's stride),
/// the offset in cells for border clipping, and the normalised weight.
template <class T>
struct droplet_brush_entry {
    std::ptrdiff_t offset;
    int dx, dy;
    T weight;
};

/// Bytes of the aligned blocks the interior brush path reads and writes whole (see erode_brush).
constexpr std::size_t droplet_block_bytes = 16;
/// Cells a block may extend beyond the brush on either side (block lanes - 1, at most 3).
constexpr int droplet_block_slack = 3;

#if defined(__GNUC__)
#define GORGE_DROPLET_LAMBDA_INLINE __attribute__((always_inline))
#else
#define GORGE_DROPLET_LAMBDA_INLINE
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GORGE_DROPLET_BLOCKS 1
/// 16-byte vector of T (GCC/Clang vector extension) for the interior brush path.
template <class T>
struct droplet_block {
    typedef T type __attribute__((vector_size(droplet_block_bytes)));
};
#else
#define GORGE_DROPLET_BLOCKS 0
#endif

/// Cells a tile needs around its start rectangle [x0, x1) so that tiles of one colour never
/// write the same cell. Positions stay in the position box [x0 - L - 1, x1 + L + 1) (L = lifetime),
/// so nodes lie in [x0 - L - 1, x1 + L]. From a node, writes reach left by the brush (r - 1) plus
/// up to droplet_block_slack cells of its first aligned block, i.e. r + 2, and right by the last
/// block, at most block_row - r <= r + 5 cells (the deposit corner is +1). Writes therefore stay
/// in [x0 - L - r - 3, x1 + L + r + 5]; the margin L + r + 8 covers both sides with a cell to
/// spare, and tiles of one colour are at least 2·margin apart.
inline std::ptrdiff_t droplet_tile_margin(int lifetime, int brush_radius) {
    constexpr int reach_beyond_radius = 8;
    return std::ptrdiff_t(lifetime) + std::ptrdiff_t(brush_radius) + reach_beyond_radius;
}

/// Brush row width, in cells, covered by whole aligned blocks whatever the row's alignment.
constexpr int droplet_block_row(int brush_radius, std::size_t lanes) {
    const int span = 2 * brush_radius - 1 + static_cast<int>(lanes) - 1;
    return (span + static_cast<int>(lanes) - 1) / static_cast<int>(lanes) * static_cast<int>(lanes);
}

/// Droplets between cancellation checks (even: droplets run in pairs); progress reports come
/// after whole chunks.
constexpr std::uint64_t droplet_chunk = 256;
/// Progress reports come every count / droplet_reports_per_run droplets, rounded up to whole
/// chunks, but at least every droplet_report_interval_max droplets (a multiple of the chunk),
/// whatever the count: that bounds how long a cancellation waits.
constexpr std::uint64_t droplet_reports_per_run = 1000;
constexpr std::uint64_t droplet_report_interval_max = 64 * droplet_chunk;
/// Longest wait of the calling thread, in the tiled schedule, between checks for a due report
/// while other threads finish their tiles.
constexpr std::chrono::milliseconds droplet_report_poll{1};

/// Tiles along one axis of `side` cells: as many as fit with at least 2·margin cells each.
inline std::ptrdiff_t droplet_tiles_along(std::ptrdiff_t side, std::ptrdiff_t margin) {
    return std::max<std::ptrdiff_t>(1, side / (2 * margin));
}

/// Tile edge i of n along an axis of `side` cells (floor(i·side/n), no overflow for sides < 2^24).
inline std::ptrdiff_t droplet_tile_edge(std::ptrdiff_t i, std::ptrdiff_t n, std::ptrdiff_t side) {
    return i * side / n;
}

/// First droplet index of round r of `rounds` for n droplets: floor(n·r/rounds) without overflow.
inline std::uint64_t droplet_round_begin(std::uint64_t n, unsigned r, unsigned rounds) {
    return n / rounds * r + n % rounds * r / rounds;
}

/// Per-tile description of the tiled schedule.
struct droplet_tile {
    std::ptrdiff_t x0, x1, y0, y1;  ///< start rectangle [x0, x1) × [y0, y1) (cell coordinates)
    std::ptrdiff_t bx0, bx1, by0, by1;  ///< position box, [bx0, bx1) × [by0, by1)
    double area_before;             ///< start area of the tiles before this one (row-major order)
};

/// Per-tile totals of the tiled schedule.
struct droplet_tile_total {
    double eroded, deposited, outflow;
    std::uint64_t left_map;
};

}  // namespace detail

/// Bytes a batch run allocates besides the heightmap (brush table, tile tables, thread objects).
/// Thread stacks are not included. Throws like droplet_params::validate() for bad parameters.
template <class T>
std::size_t droplet_workspace_bytes(std::ptrdiff_t width, std::ptrdiff_t height, const droplet_params<T>& params,
                                    const droplet_options& options = {}) {
    params.validate();
    detail::checked_grid_span(width, height, width, "gorge::droplet_workspace_bytes");
    std::size_t bytes = detail::droplet_brush_entries(params.brush_radius) * sizeof(detail::droplet_brush_entry<T>);
#if GORGE_DROPLET_BLOCKS
    constexpr std::size_t lanes = detail::droplet_block_bytes / sizeof(T);
    bytes += lanes * static_cast<std::size_t>(2 * params.brush_radius - 1) *
             static_cast<std::size_t>(detail::droplet_block_row(params.brush_radius, lanes)) * sizeof(T);
#endif
    if (options.schedule == droplet_schedule::tiled) {
        const std::ptrdiff_t margin = detail::droplet_tile_margin(params.lifetime, params.brush_radius);
        const auto tiles = static_cast<std::size_t>(detail::droplet_tiles_along(width - 1, margin) *
                                                    detail::droplet_tiles_along(height - 1, margin));
        // tile table, per-tile totals (4 doubles), colour order (one index per tile)
        bytes += tiles * (sizeof(detail::droplet_tile) + sizeof(detail::droplet_tile_total) + sizeof(std::uint32_t));
        bytes += std::size_t(detail::resolve_threads(options.threads, tiles)) * sizeof(std::thread);
    }
    return bytes;
}

/// Droplet erosion bound to one heightmap. Construction validates the parameters, the map size
/// (2..2^24 cells per side) and the heights (finite, |h| <= droplet_height_limit<T>()), and builds
/// the brush table; the view's memory is modified in place by run() and run_batch().
/// Not thread-safe: one run at a time per eroder (run_batch uses threads internally).
template <class T>
class droplet_eroder {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "droplet_eroder<T>: T must be float or double");

public:
    droplet_eroder(grid_view<T> heights, const droplet_params<T>& params)
        : map_(heights), params_(params) {
        params.validate();
        if (heights.empty()) throw std::invalid_argument("gorge::droplet_eroder: heights must not be empty");
        if (heights.width() < 2 || heights.height() < 2)
            throw std::invalid_argument("gorge::droplet_eroder: heights must be at least 2 x 2 cells, got " +
                                        std::to_string(heights.width()) + " x " + std::to_string(heights.height()));
        if (heights.width() > droplet_max_side || heights.height() > droplet_max_side)
            throw std::invalid_argument("gorge::droplet_eroder: heights wider or taller than 2^24 cells");
        check_heights();
        build_brush();
    }

    grid_view<T> heights() const { return map_; }
    const droplet_params<T>& params() const { return params_; }

    /// One droplet from `start`, which must lie in [0, width-1) × [0, height-1) (throws
    /// std::invalid_argument otherwise). Uses the whole map as its position box.
    droplet_result<T> run(glm::vec<2, T> start, droplet_edge edge = droplet_edge::outflow) {
        const T hx = T(map_.width() - 1), hy = T(map_.height() - 1);
        if (!(start.x >= T(0) && start.x < hx && start.y >= T(0) && start.y < hy))
            throw std::invalid_argument("gorge::droplet_eroder::run: start must lie in [0, width-1) x [0, height-1)");
        return simulate(start, map_box(), edge);
    }

    /// Start position of droplet `index` in the serial schedule (see the header comment).
    glm::vec<2, T> serial_start(std::uint64_t seed, std::uint64_t index) const {
        return start_at(seed, index, serial_rect());
    }

    /// `count` droplets (at most 2^53) in the schedule of `options`; see the header comment.
    droplet_stats run_batch(std::uint64_t count, const droplet_options& options = {}) {
        constexpr std::uint64_t max_count = std::uint64_t(1) << 53;
        if (count > max_count)
            detail::throw_invalid("gorge::droplet_eroder::run_batch", "count of droplets (must be <= 2^53)");
        options.validate();
        if (options.schedule == droplet_schedule::tiled) return run_tiled(count, options);
        return run_serial(count, options);
    }

private:
    /// Position box [x0, x1) × [y0, y1) in which droplets may move.
    struct box {
        T x0, x1, y0, y1;
    };

    box map_box() const { return {T(0), T(map_.width() - 1), T(0), T(map_.height() - 1)}; }

    void check_heights() const {
        const T limit = droplet_height_limit<T>();
        for (std::ptrdiff_t y = 0; y < map_.height(); ++y) {
            const T* row = map_.row(y);
            for (std::ptrdiff_t x = 0; x < map_.width(); ++x)
                if (!(std::abs(row[x]) <= limit))  // also rejects NaN
                    throw std::invalid_argument("gorge::droplet_eroder: height at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) + ") is " +
                                                (std::isfinite(row[x]) ? "beyond droplet_height_limit" : "not finite"));
        }
    }

    void build_brush() {
        const int r = params_.brush_radius;
        brush_.clear();
        double sum = 0;
        for (int dy = 1 - r; dy < r; ++dy)
            for (int dx = 1 - r; dx < r; ++dx) {
                const double weight = detail::droplet_brush_weight(dx, dy, r);
                if (weight > 0) sum += weight;
            }
        brush_.reserve(detail::droplet_brush_entries(r));
        for (int dy = 1 - r; dy < r; ++dy)
            for (int dx = 1 - r; dx < r; ++dx) {
                const double weight = detail::droplet_brush_weight(dx, dy, r);
                if (weight > 0) brush_.push_back({dy * map_.stride() + dx, dx, dy, T(weight / sum)});
            }
        reach_ = r - 1;
#if GORGE_DROPLET_BLOCKS
        // One copy of the weight rows per alignment of a row's first cell within a block: copy
        // `shift` starts `shift` cells into its block-aligned row.
        block_rows_ = 2 * r - 1;
        block_row_ = detail::droplet_block_row(r, lanes);
        // Nodes whose blocks (up to droplet_block_slack cells before the brush's first column)
        // lie inside the map.
        block_x0_ = reach_ + detail::droplet_block_slack;
        block_x1_ = map_.width() - block_row_ + reach_ + 1;
        block_y0_ = reach_;
        block_y1_ = map_.height() - block_rows_ + reach_ + 1;
        rows_share_alignment_ =
            (static_cast<std::size_t>(map_.stride()) * sizeof(T)) % detail::droplet_block_bytes == 0;
        const auto rows = static_cast<std::size_t>(block_rows_), width = static_cast<std::size_t>(block_row_);
        blocks_.assign(lanes * rows * width, T(0));
        for (std::size_t shift = 0; shift < lanes; ++shift) {
            for (const detail::droplet_brush_entry<T>& e : brush_)
                blocks_[(shift * rows + static_cast<std::size_t>(e.dy + reach_)) * width + shift +
                        static_cast<std::size_t>(e.dx + reach_)] = e.weight;
        }
#endif
    }

    /// Start rectangle [x0, x1) × [y0, y1) and the largest T below each upper end.
    struct start_rect {
        std::ptrdiff_t x0, x1, y0, y1;
        T below_x1, below_y1;
    };
    static start_rect make_rect(std::ptrdiff_t x0, std::ptrdiff_t x1, std::ptrdiff_t y0, std::ptrdiff_t y1) {
        return {x0, x1, y0, y1, std::nextafter(T(x1), T(x0)), std::nextafter(T(y1), T(y0))};
    }
    start_rect serial_rect() const { return make_rect(0, map_.width() - 1, 0, map_.height() - 1); }
    static glm::vec<2, T> start_at(std::uint64_t seed, std::uint64_t index, const start_rect& r) {
        const std::uint64_t bits = detail::droplet_bits(seed, index);
        return {detail::droplet_uniform<T>(static_cast<std::uint32_t>(bits >> 32), r.x0, r.x1, r.below_x1),
                detail::droplet_uniform<T>(static_cast<std::uint32_t>(bits), r.y0, r.y1, r.below_y1)};
    }

    /// State of a droplet in flight.
    struct droplet {
        T px, py, dx, dy, speed, water, sediment;
        int step;
        droplet_result<T> out;
        // Between move() and settle(): the step's new position, height change and the cell left.
        T nx, ny, dh, capacity, fx, fy;
        std::ptrdiff_t cx, cy;
        // Cell the next move() starts from and the position's fractions in it, kept from the
        // step that got there (no second float-to-integer conversion): those of (px, py), or
        // already of (nx, ny) between move() and settle().
        std::ptrdiff_t start_cx, start_cy;
        T start_fx, start_fy;
    };

    /// The per-step code with every constant copied into one local object: stores through the
    /// heightmap pointer cannot alias a local whose address never escapes, so the compiler keeps
    /// the constants in registers instead of reloading them after every store.
    struct kernel {
        T* data;
        std::ptrdiff_t stride, width, height;
        T inertia, take_gradient, capacity_factor, min_capacity, erode_rate, deposit_rate, gravity, keep_water,
            initial_speed, initial_water;
        int lifetime;
        const detail::droplet_brush_entry<T>* brush;
        std::size_t brush_count;
        std::ptrdiff_t reach;
#if GORGE_DROPLET_BLOCKS
        const T* blocks;
        int block_rows, block_row;
        std::ptrdiff_t block_x0, block_x1, block_y0, block_y1;
        bool rows_share_alignment;
#endif
        box whole, bounds;
        droplet_edge edge;

        droplet spawn(glm::vec<2, T> start) const {
            droplet d{};
            d.px = start.x;
            d.py = start.y;
            d.dx = d.dy = d.sediment = T(0);
            d.speed = initial_speed;
            d.water = initial_water;
            d.step = 0;
            // px, py >= 0, so truncation is floor.
            d.start_cx = static_cast<std::ptrdiff_t>(d.px);
            d.start_cy = static_cast<std::ptrdiff_t>(d.py);
            d.start_fx = d.px - T(d.start_cx);
            d.start_fy = d.py - T(d.start_cy);
            return d;
        }

#if GORGE_DROPLET_BLOCKS
        static GORGE_FORCEINLINE std::size_t shift_of(const T* cell) {
            return (reinterpret_cast<std::uintptr_t>(cell) / sizeof(T)) % lanes;
        }

        /// Interior part of erode(): every brush row as whole 16-byte blocks at 16-byte-aligned
        /// addresses, with the weight copy for the row's alignment; zero weights leave their
        /// cells unchanged. Fixed alignment matters: the next step's blocks either coincide with
        /// this step's or miss them, so their loads are forwarded from these stores instead of
        /// stalling on partly overlapping ones. R > 0 fixes the brush radius at compile time
        /// (fully unrolled); R == 0 reads it.
        template <int R>
        GORGE_FORCEINLINE void erode_blocks(T* centre, T amount) const {
            using block = typename detail::droplet_block<T>::type;
            const int reach_cells = R > 0 ? R - 1 : static_cast<int>(reach);
            const int rows = R > 0 ? 2 * R - 1 : block_rows;
            const int width_cells = R > 0 ? detail::droplet_block_row(R, lanes) : block_row;
            T* const first = centre - reach_cells * stride - reach_cells;
            const auto row_blocks = [&](T* aligned, const T* weights) GORGE_DROPLET_LAMBDA_INLINE {
                for (int j = 0; j < width_cells; j += static_cast<int>(lanes)) {
                    block cells, w;
                    std::memcpy(&cells, aligned + j, sizeof(block));
                    std::memcpy(&w, weights + j, sizeof(block));
                    cells -= amount * w;
                    std::memcpy(aligned + j, &cells, sizeof(block));
                }
            };
            const auto table_for = [&](std::size_t shift) GORGE_DROPLET_LAMBDA_INLINE {
                return blocks + shift * static_cast<std::size_t>(rows) * static_cast<std::size_t>(width_cells);
            };
            if (rows_share_alignment) {
                const std::size_t shift = shift_of(first);
                T* aligned = first - shift;
                const T* weights = table_for(shift);
                for (int row = 0; row < rows; ++row, aligned += stride, weights += width_cells)
                    row_blocks(aligned, weights);
            } else {
                T* row_first = first;
                for (int row = 0; row < rows; ++row, row_first += stride) {
                    const std::size_t shift = shift_of(row_first);
                    row_blocks(row_first - shift, table_for(shift) + row * width_cells);
                }
            }
        }
#endif

        /// Subtracts amount × weight through the brush centred on node (cx, cy) at `centre`.
        template <int R>
        GORGE_FORCEINLINE void erode(T* centre, std::ptrdiff_t cx, std::ptrdiff_t cy, T amount) const {
#if GORGE_DROPLET_BLOCKS
            if (cx >= block_x0 && cx < block_x1 && cy >= block_y0 && cy < block_y1) {
                erode_blocks<R>(centre, amount);
                return;
            }
#endif
            if (cx >= reach && cx < width - reach && cy >= reach && cy < height - reach) {
                for (std::size_t e = 0; e < brush_count; ++e) centre[brush[e].offset] -= amount * brush[e].weight;
                return;
            }
            // Border: clip the brush to the map and renormalise the remaining weights.
            const auto on_map = [&](const detail::droplet_brush_entry<T>& e) {
                const std::ptrdiff_t x = cx + e.dx, y = cy + e.dy;
                return x >= 0 && y >= 0 && x < width && y < height;
            };
            T inside = T(0);
            for (std::size_t e = 0; e < brush_count; ++e)
                if (on_map(brush[e])) inside += brush[e].weight;
            const T scale = amount / inside;  // inside >= the centre's weight > 0: the centre node is on the map
            for (std::size_t e = 0; e < brush_count; ++e)
                if (on_map(brush[e])) centre[brush[e].offset] -= scale * brush[e].weight;
        }

        /// Adds amount bilinearly to the four corners of the cell at `cell` with fractions (fx, fy).
        static GORGE_FORCEINLINE void deposit_bilinear(T* cell, std::ptrdiff_t row_stride, T fx, T fy, T amount) {
            const T lower = amount * fy, upper = amount - lower;  // shares of rows y+1 and y
            cell[0] += upper - upper * fx;
            cell[1] += upper * fx;
            cell[row_stride] += lower - lower * fx;
            cell[row_stride + 1] += lower * fx;
        }

        /// Ends droplet d: its remaining sediment goes to its (in-map) position.
        void finish(droplet& d, droplet_end why) const {
            if (d.sediment != T(0)) {
                const auto cx = static_cast<std::ptrdiff_t>(d.px), cy = static_cast<std::ptrdiff_t>(d.py);
                deposit_bilinear(data + cy * stride + cx, stride, d.px - T(cx), d.py - T(cy), d.sediment);
                d.out.deposited += double(d.sediment);
                d.sediment = T(0);
            }
            d.out.position = {d.px, d.py};
            d.out.speed = d.speed;
            d.out.water = d.water;
            d.out.steps = d.step;
            d.out.end = why;
        }

        /// One step of the model of the header comment, confined to `bounds` (inside the map).
        /// Returns false once the droplet has ended (finish() done).
        template <int R>
        GORGE_FORCEINLINE bool advance(droplet& d) const {
            return move(d) && settle<R>(d);
        }

        /// First half of a step: direction, new position and height change, reading the map
        /// only. Returns false if the droplet ended (finish() done); otherwise settle() must follow.
        GORGE_FORCEINLINE bool move(droplet& d) const {
            // Below this squared length the direction counts as vanished; normal floats keep
            // normalisation accurate, so each step moves one cell length up to rounding.
            const T tiny_length2 = std::numeric_limits<T>::min();
            // Clamps that keep capacity finite whatever the heights (see droplet_height_limit).
            constexpr int clamp_headroom = 4;
            const T max_capacity = std::numeric_limits<T>::max() / T(clamp_headroom * clamp_headroom);

            const std::ptrdiff_t cx = d.start_cx, cy = d.start_cy;
            const T fx = d.start_fx, fy = d.start_fy;
            const T* const cell = data + cy * stride + cx;
            const T h00 = cell[0], h10 = cell[1], h01 = cell[stride], h11 = cell[stride + 1];
            const T gx = (h10 - h00) * (T(1) - fy) + (h11 - h01) * fy;
            const T gy = (h01 - h00) * (T(1) - fx) + (h11 - h10) * fx;
            const T top = h00 + fx * (h10 - h00), bottom = h01 + fx * (h11 - h01);
            const T h = top + fy * (bottom - top);

            const T carry = d.speed * d.water * capacity_factor;  // off the critical path
            T dx = d.dx * inertia - gx * take_gradient;
            T dy = d.dy * inertia - gy * take_gradient;
            const T length2 = dx * dx + dy * dy;
            if (!(length2 >= tiny_length2)) {
                finish(d, droplet_end::stopped);
                return false;
            }
            const T inv_length = T(1) / std::sqrt(length2);  // 0 if length2 overflowed: the droplet stays
            dx *= inv_length;
            dy *= inv_length;
            const T nx = d.px + dx, ny = d.py + dy;
            if (!(nx >= bounds.x0 && nx < bounds.x1 && ny >= bounds.y0 && ny < bounds.y1)) {
                if (nx >= whole.x0 && nx < whole.x1 && ny >= whole.y0 && ny < whole.y1) {
                    finish(d, droplet_end::stopped);  // side of a tile's position box: die here
                } else {
                    if (edge == droplet_edge::outflow) {
                        d.out.outflow += double(d.sediment);
                        d.sediment = T(0);
                    }
                    finish(d, droplet_end::left_map);
                }
                return false;
            }
            d.dx = dx;
            d.dy = dy;

            const auto ncx = static_cast<std::ptrdiff_t>(nx), ncy = static_cast<std::ptrdiff_t>(ny);
            const T nfx = nx - T(ncx), nfy = ny - T(ncy);
            const T* const ncell = data + ncy * stride + ncx;
            const T ntop = ncell[0] + nfx * (ncell[1] - ncell[0]);
            const T nbottom = ncell[stride] + nfx * (ncell[stride + 1] - ncell[stride]);
            const T dh = (ntop + nfy * (nbottom - ntop)) - h;

            T capacity = -dh * carry;
            capacity = capacity > min_capacity ? capacity : min_capacity;  // NaN (0·inf) -> floor
            capacity = capacity < max_capacity ? capacity : max_capacity;
            d.nx = nx;
            d.ny = ny;
            d.dh = dh;
            d.capacity = capacity;
            d.fx = fx;
            d.fy = fy;
            d.cx = cx;
            d.cy = cy;
            prefetch_ahead(ncx, ncy);
            d.start_cx = ncx;  // nx, ny >= 0, so truncation is floor
            d.start_cy = ncy;
            d.start_fx = nfx;
            d.start_fy = nfy;
            return true;
        }

        /// Second half of a step after move(): erosion or deposition at the cell left, speed,
        /// water, the move itself and the lifetime. Returns false once the droplet has ended.
        template <int R>
        GORGE_FORCEINLINE bool settle(droplet& d) const {
            constexpr int clamp_headroom = 4;
            const T max_speed = std::sqrt(std::numeric_limits<T>::max()) / T(clamp_headroom);
            const T dh = d.dh, capacity = d.capacity;
            T* const cell = data + d.cy * stride + d.cx;
            if (d.sediment > capacity || dh > T(0)) {
                // Uphill: fill the pit behind, at most up to the droplet's height; else drop a
                // share of the excess.
                const T amount = dh > T(0) ? std::min(dh, d.sediment) : (d.sediment - capacity) * deposit_rate;
                deposit_bilinear(cell, stride, d.fx, d.fy, amount);
                d.sediment -= amount;
                d.out.deposited += double(amount);
            } else {
                // Never dig deeper than the height just descended.
                const T amount = std::min((capacity - d.sediment) * erode_rate, -dh);
                erode<R>(cell, d.cx, d.cy, amount);
                d.sediment += amount;
                d.out.eroded += double(amount);
            }

            const T radicand = d.speed * d.speed - dh * gravity;
            const T speed = std::sqrt(radicand > T(0) ? radicand : T(0));
            d.speed = speed < max_speed ? speed : max_speed;
            d.water *= keep_water;
            d.px = d.nx;
            d.py = d.ny;
            if (++d.step == lifetime) {
                finish(d, droplet_end::lifetime);
                return false;
            }
            return true;
        }

        // Cache hints. Droplets start at random cells of a map that is usually larger than the
        // core's own caches, and a droplet's next brush rows are new to it whenever it changes
        // row, so without hints most steps wait for a cache miss somewhere on their dependency
        // chain. Hints read nothing in the C++ sense (no data race, no out-of-map address: they
        // are clipped to the map) and change no result.

        /// Prefetches the first and last cell of every row of the region written around the cell
        /// of a start position (brush rows and block slack). Up to radius 3 a row spans at most 12
        /// cells, so these two cover all of its cache lines; wider brushes leave middle lines to
        /// the hardware.
        GORGE_FORCEINLINE void prefetch_start(glm::vec<2, T> start) const {
#if defined(__GNUC__)
            const auto cx = static_cast<std::ptrdiff_t>(start.x), cy = static_cast<std::ptrdiff_t>(start.y);
            const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, cx - reach - detail::droplet_block_slack);
            const std::ptrdiff_t x1 =
                std::min<std::ptrdiff_t>(width - 1, cx + reach + 1 + detail::droplet_block_slack);
            const std::ptrdiff_t y0 = std::max<std::ptrdiff_t>(0, cy - reach);
            const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(height - 1, cy + reach + 1);
            for (std::ptrdiff_t y = y0; y <= y1; ++y) {
                __builtin_prefetch(data + y * stride + x0, 1);
                __builtin_prefetch(data + y * stride + x1, 1);
            }
#else
            (void)start;
#endif
        }

        /// Prefetches, around the node (cx, cy) the droplet has just reached, the row just above
        /// its brush and the second row below it (the cell's lower corners lie a row below the
        /// node): rows that a droplet changing row reaches within a step or two.
        GORGE_FORCEINLINE void prefetch_ahead(std::ptrdiff_t cx, std::ptrdiff_t cy) const {
#if defined(__GNUC__)
            const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, cx - reach - detail::droplet_block_slack);
            const std::ptrdiff_t x1 =
                std::min<std::ptrdiff_t>(width - 1, cx + reach + 1 + detail::droplet_block_slack);
            const std::ptrdiff_t y0 = std::max<std::ptrdiff_t>(0, cy - reach - 1);
            const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(height - 1, cy + reach + 2);
            __builtin_prefetch(data + y0 * stride + x0, 1);
            __builtin_prefetch(data + y0 * stride + x1, 1);
            __builtin_prefetch(data + y1 * stride + x0, 1);
            __builtin_prefetch(data + y1 * stride + x1, 1);
#else
            (void)cx;
            (void)cy;
#endif
        }

        /// Droplets first..last-1 of stream `seed` starting in `rect`, in index order; with
        /// `interleave`, in pairs (first + 2j, first + 2j + 1) that step together: move a, move
        /// b (reads), settle a, settle b (writes); the survivor finishes alone. Two independent
        /// dependency chains keep the core busy, and the order of every read and write is fixed.
        template <int R, class Sink>
        void run_range(std::uint64_t seed, std::uint64_t first, std::uint64_t last, const start_rect& rect,
                       bool interleave, Sink& sink) const {
            std::uint64_t k = first;
            if (interleave) {
                for (; last - k >= 2; k += 2) {
                    if (last - k >= 4) {
                        prefetch_start(start_at(seed, k + 2, rect));
                        prefetch_start(start_at(seed, k + 3, rect));
                    }
                    droplet a = spawn(start_at(seed, k, rect)), b = spawn(start_at(seed, k + 1, rect));
                    bool a_alive = true, b_alive = true;
                    while (a_alive & b_alive) {
                        // Both droplets read the map before either writes it: the branch between
                        // erosion and deposition of `a`, hard to predict, then comes after the
                        // work of `b` in program order, so a misprediction no longer discards it.
                        const bool a_moved = move(a), b_moved = move(b);
                        a_alive = a_moved && settle<R>(a);
                        b_alive = b_moved && settle<R>(b);
                    }
                    while (a_alive) a_alive = advance<R>(a);
                    while (b_alive) b_alive = advance<R>(b);
                    sink(a.out);
                    sink(b.out);
                }
            }
            for (; k < last; ++k) {
                if (last - k >= 2) prefetch_start(start_at(seed, k + 1, rect));
                droplet d = spawn(start_at(seed, k, rect));
                while (advance<R>(d)) {
                }
                sink(d.out);
            }
        }
    };

    kernel make_kernel(const box& bounds, droplet_edge edge) const {
        kernel k{};
        k.data = map_.data();
        k.stride = map_.stride();
        k.width = map_.width();
        k.height = map_.height();
        k.inertia = params_.inertia;
        k.take_gradient = T(1) - params_.inertia;
        k.capacity_factor = params_.capacity_factor;
        k.min_capacity = params_.min_capacity;
        k.erode_rate = params_.erode_rate;
        k.deposit_rate = params_.deposit_rate;
        k.gravity = params_.gravity;
        k.keep_water = T(1) - params_.evaporate_rate;
        k.initial_speed = params_.initial_speed;
        k.initial_water = params_.initial_water;
        k.lifetime = params_.lifetime;
        k.brush = brush_.data();
        k.brush_count = brush_.size();
        k.reach = reach_;
#if GORGE_DROPLET_BLOCKS
        k.blocks = blocks_.data();
        k.block_rows = block_rows_;
        k.block_row = block_row_;
        k.block_x0 = block_x0_;
        k.block_x1 = block_x1_;
        k.block_y0 = block_y0_;
        k.block_y1 = block_y1_;
        k.rows_share_alignment = rows_share_alignment_;
#endif
        k.whole = map_box();
        k.bounds = bounds;
        k.edge = edge;
        return k;
    }

    droplet_result<T> simulate(glm::vec<2, T> start, const box& bounds, droplet_edge edge) const {
        const kernel k = make_kernel(bounds, edge);
        droplet d = k.spawn(start);
        while (k.template advance<0>(d)) {
        }
        return d.out;
    }

    /// Droplets first..last-1 of stream `seed` starting in `rect`, in index order; the common
    /// brush radii are compiled in (the arithmetic is identical either way).
    template <class Sink>
    void run_range(std::uint64_t seed, std::uint64_t first, std::uint64_t last, const start_rect& rect,
                   const box& bounds, const droplet_options& options, Sink&& sink) const {
        const kernel k = make_kernel(bounds, options.edge);
        const bool pairs = options.interleave;
        switch (params_.brush_radius) {
            case 2: return k.template run_range<2>(seed, first, last, rect, pairs, sink);
            case 3: return k.template run_range<3>(seed, first, last, rect, pairs, sink);
            case 4: return k.template run_range<4>(seed, first, last, rect, pairs, sink);
            default: return k.template run_range<0>(seed, first, last, rect, pairs, sink);
        }
    }

    static void add(droplet_stats& total, const droplet_result<T>& r) {
        ++total.droplets;
        total.left_map += r.end == droplet_end::left_map ? 1 : 0;
        total.eroded += r.eroded;
        total.deposited += r.deposited;
        total.outflow += r.outflow;
    }

    /// The progress callback's schedule (see droplet_options::progress); false: cancel.
    struct reporter {
        const std::function<bool(double)>* callback;
        std::uint64_t total, interval, next;
        /// The report at the start (none without droplets or callback).
        bool start() {
            if (!*callback || total == 0) return true;
            next = interval;
            return (*callback)(0.0);
        }
        /// A report if `done` droplets reach the next one due (the one at the end is finish()'s).
        bool report(std::uint64_t done) {
            if (!*callback || done < next || done >= total) return true;
            next = (done / interval + 1) * interval;
            return (*callback)(double(done) / double(total));
        }
        void finish() {
            if (*callback) (*callback)(1.0);
        }
    };
    static reporter make_reporter(const droplet_options& options, std::uint64_t count) {
        using detail::droplet_chunk;
        const std::uint64_t share = (count / detail::droplet_reports_per_run + droplet_chunk - 1) / droplet_chunk;
        const std::uint64_t interval =
            std::min(std::max<std::uint64_t>(share, 1) * droplet_chunk, detail::droplet_report_interval_max);
        return {&options.progress, count, interval, 0};
    }

    droplet_stats run_serial(std::uint64_t count, const droplet_options& options) {
        droplet_stats total;
        reporter progress = make_reporter(options, count);
        if (!progress.start()) {
            total.cancelled = true;
            return total;
        }
        const box whole = map_box();
        const start_rect rect = serial_rect();
        const auto sink = [&total](const droplet_result<T>& r) { add(total, r); };
        // Chunks start at multiples of the (even) chunk size, so a run cancelled after m droplets
        // pairs droplets exactly like a run of m droplets.
        for (std::uint64_t k = 0; k < count;) {
            const std::uint64_t end = std::min(count, k + detail::droplet_chunk);
            run_range(options.seed, k, end, rect, whole, options, sink);
            k = end;
            if (!progress.report(k)) {
                total.cancelled = true;
                return total;
            }
        }
        progress.finish();
        return total;
    }

    droplet_stats run_tiled(std::uint64_t count, const droplet_options& options) {
        using detail::droplet_tile;
        const std::ptrdiff_t margin = detail::droplet_tile_margin(params_.lifetime, params_.brush_radius);
        const std::ptrdiff_t sx = map_.width() - 1, sy = map_.height() - 1;  // start domain
        const std::ptrdiff_t nx = detail::droplet_tiles_along(sx, margin), ny = detail::droplet_tiles_along(sy, margin);
        const std::ptrdiff_t travel = std::ptrdiff_t(params_.lifetime) + 1;
        std::vector<droplet_tile> tiles;
        tiles.reserve(static_cast<std::size_t>(nx * ny));
        std::vector<std::uint32_t> order;  // tile indices grouped by colour
        order.reserve(static_cast<std::size_t>(nx * ny));
        std::size_t colour_begin[5] = {0, 0, 0, 0, 0};
        double area = 0;
        for (std::ptrdiff_t ty = 0; ty < ny; ++ty)
            for (std::ptrdiff_t tx = 0; tx < nx; ++tx) {
                droplet_tile t{};
                t.x0 = detail::droplet_tile_edge(tx, nx, sx);
                t.x1 = detail::droplet_tile_edge(tx + 1, nx, sx);
                t.y0 = detail::droplet_tile_edge(ty, ny, sy);
                t.y1 = detail::droplet_tile_edge(ty + 1, ny, sy);
                t.bx0 = std::max<std::ptrdiff_t>(0, t.x0 - travel);
                t.bx1 = std::min<std::ptrdiff_t>(sx, t.x1 + travel);
                t.by0 = std::max<std::ptrdiff_t>(0, t.y0 - travel);
                t.by1 = std::min<std::ptrdiff_t>(sy, t.y1 + travel);
                t.area_before = area;
                area += double(t.x1 - t.x0) * double(t.y1 - t.y0);
                tiles.push_back(t);
            }
        const auto colour_of = [nx](std::size_t i) {
            const auto tx = static_cast<std::ptrdiff_t>(i) % nx, ty = static_cast<std::ptrdiff_t>(i) / nx;
            return static_cast<int>((tx & 1) | ((ty & 1) << 1));
        };
        for (int c = 0; c < 4; ++c) {
            colour_begin[c] = order.size();
            for (std::size_t i = 0; i < tiles.size(); ++i)
                if (colour_of(i) == c) order.push_back(static_cast<std::uint32_t>(i));
        }
        colour_begin[4] = order.size();

        // Per-tile totals, summed in tile order at the end so the result does not depend on threads.
        using tile_total = detail::droplet_tile_total;
        std::vector<tile_total> totals(tiles.size(), tile_total{0, 0, 0, 0});

        std::atomic<std::uint64_t> done{0};
        std::atomic<bool> stop{false};
        reporter progress = make_reporter(options, count);
        bool cancelled = !progress.start();
        // Calling thread only: a report when one is due; an exception from the callback goes up.
        const auto report_due = [&]() {
            if (stop.load(std::memory_order_relaxed)) return;
            if (!progress.report(done.load(std::memory_order_relaxed))) {
                cancelled = true;
                stop.store(true, std::memory_order_relaxed);
            }
        };

        const double total_area = area;
        for (unsigned round = 0; round < options.rounds && !cancelled && !stop.load(); ++round) {
            const std::uint64_t round_first = detail::droplet_round_begin(count, round, options.rounds);
            const std::uint64_t round_count =
                detail::droplet_round_begin(count, round + 1, options.rounds) - round_first;
            // Droplets of this round before tile i: floor(round_count · area_before / total_area),
            // monotone in area_before; the end of the last tile is pinned to round_count.
            const auto share_begin = [&](std::size_t i) -> std::uint64_t {
                if (i >= tiles.size()) return round_count;
                const double exact = std::floor(double(round_count) * tiles[i].area_before / total_area);
                return std::min<std::uint64_t>(round_count, static_cast<std::uint64_t>(exact));
            };
            for (int colour = 0; colour < 4 && !stop.load(); ++colour) {
                const std::size_t first = colour_begin[colour], last = colour_begin[colour + 1];
                std::atomic<std::size_t> next{first};
                // Tiles of this colour finished (or given up after a stop), under `lock`; the
                // calling thread waits on `finished_one` for the last ones, reporting meanwhile.
                std::mutex lock;
                std::condition_variable finished_one;
                std::size_t finished = 0;
                const auto run_tile = [&](std::size_t ti, bool caller) {
                    const droplet_tile& t = tiles[ti];
                    const box bounds{T(t.bx0), T(t.bx1), T(t.by0), T(t.by1)};
                    const start_rect rect = make_rect(t.x0, t.x1, t.y0, t.y1);
                    const std::uint64_t begin = share_begin(ti), end = share_begin(ti + 1);
                    tile_total& sum = totals[ti];
                    const auto sink = [&sum](const droplet_result<T>& r) {
                        sum.eroded += r.eroded;
                        sum.deposited += r.deposited;
                        sum.outflow += r.outflow;
                        sum.left_map += r.end == droplet_end::left_map ? 1 : 0;
                    };
                    for (std::uint64_t k = begin; k < end;) {
                        const std::uint64_t chunk_end = std::min(end, k + detail::droplet_chunk);
                        run_range(options.seed, round_first + k, round_first + chunk_end, rect, bounds, options,
                                  sink);
                        done.fetch_add(chunk_end - k, std::memory_order_relaxed);
                        k = chunk_end;
                        if (caller) report_due();
                        if (stop.load(std::memory_order_relaxed)) return;
                    }
                };
                const auto work = [&](unsigned worker) {
                    const bool caller = worker == 0;
                    for (;;) {
                        if (stop.load(std::memory_order_relaxed)) break;
                        const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed);
                        if (slot >= last) break;
                        run_tile(order[slot], caller);
                        {
                            const std::lock_guard<std::mutex> hold(lock);
                            ++finished;
                        }
                        finished_one.notify_one();
                    }
                    if (!caller) return;
                    // Every tile is taken; report while the other threads finish theirs.
                    std::unique_lock<std::mutex> hold(lock);
                    while (finished < last - first && !stop.load(std::memory_order_relaxed)) {
                        finished_one.wait_for(hold, detail::droplet_report_poll);
                        hold.unlock();
                        report_due();
                        hold.lock();
                    }
                };
                detail::run_workers(detail::resolve_threads(options.threads, last - first), work, [&] {
                    stop.store(true, std::memory_order_relaxed);
                });
                report_due();
            }
        }

        droplet_stats total;
        total.droplets = done.load();
        total.cancelled = cancelled && total.droplets < count;
        for (const tile_total& s : totals) {
            total.eroded += s.eroded;
            total.deposited += s.deposited;
            total.outflow += s.outflow;
            total.left_map += s.left_map;
        }
        if (!total.cancelled) progress.finish();
        return total;
    }

    grid_view<T> map_;
    droplet_params<T> params_;
    std::vector<detail::droplet_brush_entry<T>> brush_;  ///< cells of positive weight, row-major
    std::ptrdiff_t reach_ = 0;                            ///< brush reach around its node, r - 1
#if GORGE_DROPLET_BLOCKS
    static constexpr std::size_t lanes = detail::droplet_block_bytes / sizeof(T);
    std::vector<T> blocks_;  ///< lanes × block_rows_ × block_row_ weights, one copy per row alignment
    int block_rows_ = 0;     ///< brush rows in the block path
    int block_row_ = 0;      ///< cells per brush row in the block path
    std::ptrdiff_t block_x0_ = 0, block_x1_ = 0, block_y0_ = 0, block_y1_ = 0;  ///< nodes of the block path
    bool rows_share_alignment_ = false;  ///< row stride is a whole number of blocks
#endif
};

/// Erodes `heights` in place with `droplets` droplets; see droplet_eroder and the header comment.
template <class T>
droplet_stats erode_droplets(grid_view<T> heights, std::uint64_t droplets, const droplet_params<T>& params = {},
                             const droplet_options& options = {}) {
    droplet_eroder<T> eroder(heights, params);
    return eroder.run_batch(droplets, options);
}
/// Same for an owning grid.
template <class T>
droplet_stats erode_droplets(grid<T>& heights, std::uint64_t droplets, const droplet_params<T>& params = {},
                             const droplet_options& options = {}) {
    return erode_droplets(heights.view(), droplets, params, options);
}

}  // namespace gorge
