// gorge/erosion/thermal.hpp — thermal erosion (talus, weathering) on a heightmap grid.
//
// Material slides downhill wherever the terrain is steeper than a talus slope (the angle of
// repose of loose rock), until no slope exceeds it: the weathering pass that World Machine and
// Gaea ship next to hydraulic erosion. It rounds off ridges and needles, fills the foot of cliffs
// with scree slopes and leaves gentle terrain untouched.
//
// The model is Musgrave, Kolb & Mace's thermal weathering ("The synthesis and rendering of eroded
// fractal terrains", SIGGRAPH 1989, section 4), as Olsen ("Realtime procedural terrain generation",
// 2004) describes it for heightmaps, over the 8 neighbours of a cell, in world units, and with
// every cell updated at once from the previous heights (a Jacobi pass, double-buffered), so the
// result depends on no evaluation order. One pass:
//   for each cell i and each neighbour j (4 axial at distance d = cell_size, 4 diagonal at
//   d = cell_size·√2; neighbours outside the map or without data do not exist):
//     D_ij = h_i - h_j                                        height difference
//     t_j  = talus_slope · d                                  the largest stable difference
//     s_ij = D_ij - clamp(D_ij, -t_j, t_j)                    signed excess: > 0 when i sends to j,
//                                                             < 0 when j sends to i, 0 within talus
//   h_i' = h_i - k · Σ_j s_ij,   k = rate / 9.
// So cell i sends each lower neighbour whose slope (D / d) exceeds the talus slope the amount
// k · (D_ij - t_j): a fraction of the excess, shared out in proportion to the excess, and gathers
// what its higher neighbours send it in the same way.
//
// The bound k <= 1/9 (rate <= 1). A cell whose eight neighbours all lie lower by the same excess
// e (a needle) sends k·e to each, dropping by 8k·e while each neighbour rises by k·e: the excess
// closes by 9k·e, exactly to the talus line for k = 1/9, past it (into the opposite slope) for
// larger k; a pit filled from eight sides is the mirror case. More generally, with k <= 1/9:
//   - every pass is monotone (∂h_i'/∂h_i = 1 - k·(active neighbours) >= 1/9 > 0 and
//     ∂h_i'/∂h_j >= 0): a cell never ends below the lowest or above the highest height of its 3×3
//     neighbourhood before the pass, so no pass creates a new peak or pit or lets an oscillation grow;
//   - a pass is a gradient step of length k on the convex energy
//     Φ(h) = Σ_pairs ½·max(|D_ij| - t_j, 0)² (∂Φ/∂h_i = Σ_j s_ij), whose gradient is
//     16-Lipschitz (twice the 8 neighbours); k <= 1/9 < 2/16 makes Φ fall by at least
//     k(1 - 8k)·|∇Φ|² per pass, so Φ, and with it every slope excess, tends to 0: the terrain
//     converges to one that satisfies the talus slope everywhere.
// Convergence is diffusive: a feature L cells across settles in about L² passes (rate 1).
//
// Guarantees:
//   - Volume: s_ji = -s_ij bit for bit (float subtraction is exactly antisymmetric and the clamp
//     symmetric), so what one cell sends is exactly what the other gathers, and Σ h changes only
//     by the rounding of each cell's update: |Σh_after - Σh_before| <= passes · cells · u ·
//     (max|h| + 8·(max h - min h)), u = 2^-24 (float) or 2^-53 (double) (the bound the tests check;
//     typical drift is far smaller). The map edge is closed: no material leaves the map.
//   - Deterministic and bit-identical for any thread count: each cell's new height depends only on
//     the previous pass, and the statistics are summed per band of rows in a fixed order.
//   - World units: scaling cell_size and all heights by the same factor scales the result by it
//     (bit for bit for powers of two); the same terrain sampled at two resolutions converges to
//     the same talus slope in world units (the shapes then differ by the discretisation only;
//     the finer map needs about 4 times the passes per halving of cell_size).
//   - The talus slope holds along the 8 neighbour directions; along other directions a
//     converged plane may be up to 1/cos(22.5°) ≈ 1.082 times steeper.
//   - Heights must be finite (or the no-data value) with |h| <= thermal_height_limit<T>(); parameters
//     are checked. Both throw std::invalid_argument naming the culprit.
//
// Memory: one extra width × height buffer of T (the second buffer of a pass) and a few numbers
// per band of rows. Speed: the interior runs on SIMD batches (gorge/simd/simd.hpp) of the width
// the translation unit is compiled for; see benchmarks/bench_thermal.cpp. Maps with a no-data
// value run every cell through the checked scalar path (slower).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"
#include "../grid/no_data.hpp"
#include "../simd/simd.hpp"

namespace gorge {

/// Largest accepted |height| and |talus_slope · cell_size|: 1e18 for float, 1e150 for double.
/// Within it no difference or sum of a pass overflows.
template <class T>
constexpr T thermal_height_limit() {
    return std::is_same<T, float>::value ? T(1e18f) : T(1e150);
}

/// Smallest accepted thermal_params::cell_size: 4 · thermal_height_limit / the largest finite T,
/// so that a slope (a height difference, at most 2 · thermal_height_limit, over cell_size or the
/// diagonal run) stays finite, and with it thermal_stats::max_excess.
template <class T>
constexpr T thermal_min_cell_size() {
    return T(4) * thermal_height_limit<T>() / std::numeric_limits<T>::max();
}

/// Largest accepted thermal_params::passes.
constexpr int thermal_max_passes = 1000000000;

/// Largest stable share of a pair's slope excess moved per pass (see the header comment):
/// thermal_params::rate is in units of it.
constexpr double thermal_max_share = 1.0 / 9.0;

/// Parameters of thermal erosion, in world units: heights and cell_size in the same unit.
template <class T>
struct thermal_params {
    static_assert(std::is_floating_point<T>::value, "thermal_params<T>: T must be float or double");
    /// Horizontal size of one cell, in height units (a 1024-cell map of 10 km with heights in
    /// metres: 10000 / 1024). Finite, >= thermal_min_cell_size<T>() (1.2e-20 for float, 2.2e-158
    /// for double; default 1).
    T cell_size = T(1);
    /// Talus slope: the steepest stable slope as rise over run, tan(talus angle); 0.7 ≈ 35°, the
    /// angle of repose of loose rock. Finite, >= 0 (default 0.7); 0 flattens the map completely.
    T talus_slope = T(0.7);
    /// Share of the stable maximum moved per pass: each pair moves rate / 9 of its excess.
    /// In (0, 1] (default 1, the fastest stable setting); lower values smooth more gently per pass.
    T rate = T(1);
    /// Number of passes, 0..1e9 (default 50). Each pass touches every cell once.
    int passes = 50;
    /// Optional no-data value: such cells keep their value and neither send nor receive (as if
    /// outside the map). A NaN no-data value matches every NaN. Default: none (every cell has data).
    std::optional<T> no_data;

    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::thermal_params"); }
    /// Name and rule of the first bad parameter; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        const T limit = thermal_height_limit<T>();
        if (!(std::isfinite(cell_size) && cell_size > T(0))) return "cell_size (must be finite and > 0)";
        if (!(cell_size >= thermal_min_cell_size<T>()))
            return "cell_size (must be >= thermal_min_cell_size: slopes, height differences over cell_size, must "
                   "stay finite)";
        if (!(std::isfinite(talus_slope) && talus_slope >= T(0))) return "talus_slope (must be finite and >= 0)";
        if (!(talus_slope * cell_size <= limit))
            return "talus_slope (talus_slope * cell_size must be <= thermal_height_limit)";
        if (!(rate > T(0) && rate <= T(1))) return "rate (must be in (0, 1])";
        if (passes < 0 || passes > thermal_max_passes) return "passes (must be in 0..1000000000)";
        return {};
    }
};

/// Options of a run (not part of the result: any value gives the same terrain).
struct thermal_options {
    /// Threads, the calling thread included (gorge's thread rule, see gorge/detail/parallel.hpp):
    /// default 1 (none started), 0 = all hardware threads, 0..max_threads (1024); never more than
    /// one per thermal_thread_cells (131,072) cells. Threads are started for each pass. The result
    /// is the same for any value.
    unsigned threads = 1;
    /// Optional progress report and cancellation, called from the calling thread only, between
    /// passes, with the fraction of passes done (0..1, non-decreasing): once at the start with 0,
    /// after every max(1, passes / 256) passes, and a last time with 1 when the run completes
    /// (no call when passes == 0). Return false to cancel: no pass starts afterwards and no
    /// further call comes, so stats.passes is exactly the fraction last reported times passes;
    /// false at the start runs nothing and leaves the map untouched. The map always holds the
    /// result of whole passes. An exception it throws propagates the same way.
    std::function<bool(double)> progress;

    /// Name and rule of the first bad option; empty when all are valid.
    invalid_parameter first_invalid() const { return detail::invalid_thread_count(threads); }
    /// Throws std::invalid_argument naming the first bad option.
    void validate() const { detail::validate(*this, "gorge::thermal_options"); }
};

/// Totals of a run.
struct thermal_stats {
    int passes = 0;          ///< passes run (thermal_params::passes unless cancelled)
    bool cancelled = false;  ///< the progress callback asked to stop
    /// Material moved: the height lost by the cells that lost height, summed over cells and
    /// passes (height units × cells; times cell_size² for a volume). Equals what the others gained.
    double moved = 0;
    /// Largest slope excess left after the run, max over neighbour pairs of D / d - talus_slope
    /// (rise over run; 0 when every slope is within the talus slope). Computed from the final map.
    double max_excess = 0;
};

/// Rows of a map are processed in bands of at least this many cells (one thread per band at
/// most); the bands, and so the summation order of the statistics, depend only on the map's size.
constexpr std::ptrdiff_t thermal_band_cells = std::ptrdiff_t(1) << 15;
/// Cells of a map per thread, at least: a map of n cells runs on at most
/// ceil(n / thermal_thread_cells) threads. Threads are started for each pass, and a pass costs
/// about 1.4 ns a cell on one core: a 256^2 map took 0.79 ms for 8 passes on one thread and
/// 1.27 ms on two when each of its two bands had a thread.
constexpr std::ptrdiff_t thermal_thread_cells = std::ptrdiff_t(1) << 17;

namespace detail {

/// Signed excess of a height difference d over the threshold t >= 0: d - clamp(d, -t, t)
/// (exactly antisymmetric in d).
template <class V>
GORGE_FORCEINLINE V thermal_excess(const V& d, const V& t) {
    return d - detail::min(detail::max(d, -t), t);
}

/// New height of one interior cell (all 8 neighbours exist and have data) for V = T or a batch of
/// consecutive cells: mid points at the cell in its row, up and down at the same column of the
/// rows above and below.
template <class V, class T>
GORGE_FORCEINLINE V thermal_interior(const T* up, const T* mid, const T* down, const V& axial, const V& diagonal,
                                     const V& share) {
    using ops = value_ops<V>;
    const V h = ops::load(mid);
    V net = thermal_excess<V>(h - ops::load(up - 1), diagonal);
    net = net + thermal_excess<V>(h - ops::load(up), axial);
    net = net + thermal_excess<V>(h - ops::load(up + 1), diagonal);
    net = net + thermal_excess<V>(h - ops::load(mid - 1), axial);
    net = net + thermal_excess<V>(h - ops::load(mid + 1), axial);
    net = net + thermal_excess<V>(h - ops::load(down - 1), diagonal);
    net = net + thermal_excess<V>(h - ops::load(down), axial);
    net = net + thermal_excess<V>(h - ops::load(down + 1), diagonal);
    return h - share * net;
}

/// The 8 neighbour offsets, axial ones first.
constexpr int thermal_dx[8] = {0, -1, 1, 0, -1, 1, -1, 1};
constexpr int thermal_dy[8] = {-1, 0, 0, 1, -1, -1, 1, 1};

/// The run over a whole map: the two buffers, the band layout, and the passes.
template <class T>
class thermal_run {
public:
    thermal_run(grid_view<T> map, const thermal_params<T>& params)
        : map_(map), params_(params), width_(map.width()), height_(map.height()) {
        axial_ = params.talus_slope * params.cell_size;
        diagonal_ = axial_ * T(1.41421356237309504880);  // √2
        share_ = params.rate * T(thermal_max_share);
        band_rows_ = std::max<std::ptrdiff_t>(1, thermal_band_cells / width_);
        bands_ = (height_ + band_rows_ - 1) / band_rows_;
        band_sums_.assign(static_cast<std::size_t>(bands_), 0.0);
        scratch_.resize(map.size());  // every pass writes every cell before any is read
    }

    thermal_stats run(const thermal_options& options) {
        const call_thread_pool threads_for_call(workers(options.threads));  // started once, not per pass
        thermal_stats stats;
        const int passes = params_.passes;
        if (passes == 0) {
            stats.max_excess = measure(options.threads);
            return stats;
        }
        const auto report = [&options](double fraction) { return !options.progress || options.progress(fraction); };
        const int interval = std::max(1, passes / reports_per_run);
        if (!report(0.0)) {
            stats.cancelled = true;
            stats.max_excess = measure(options.threads);
            return stats;
        }
        // Pass p reads buffer p % 2 and writes the other; buffer 0 is the caller's map.
        for (int p = 0; p < passes; ++p) {
            const bool from_map = p % 2 == 0;
            const view src = from_map ? map_view() : scratch_view();
            const view dst = from_map ? scratch_view() : map_view();
            for_bands(options.threads, [&](std::ptrdiff_t band) {
                double lost = 0;
                const std::ptrdiff_t y1 = std::min(height_, (band + 1) * band_rows_);
                for (std::ptrdiff_t y = band * band_rows_; y < y1; ++y) lost += pass_row(src, dst, y);
                band_sums_[static_cast<std::size_t>(band)] = lost;
            });
            for (double s : band_sums_) stats.moved += s;
            stats.passes = p + 1;
            if (stats.passes < passes && stats.passes % interval == 0 &&
                !report(double(stats.passes) / double(passes))) {
                stats.cancelled = true;
                break;
            }
        }
        if (stats.passes % 2 == 1) copy_back();
        if (!stats.cancelled) report(1.0);
        stats.max_excess = measure(options.threads);
        return stats;
    }

private:
    static constexpr int reports_per_run = 256;

    /// A buffer: its first element and row stride.
    struct view {
        T* data;
        std::ptrdiff_t stride;
        T* row(std::ptrdiff_t y) const { return data + y * stride; }
    };
    view map_view() const { return {map_.data(), map_.stride()}; }
    view scratch_view() { return {scratch_.data(), width_}; }

    bool has_data(T v) const { return !is_no_data(v, params_.no_data); }

    /// New height of cell (x, y) through the checked path: neighbours outside the map or without
    /// data are skipped; a no-data cell keeps its value.
    T checked_cell(const view& src, std::ptrdiff_t x, std::ptrdiff_t y) const {
        const T h = src.row(y)[x];
        if (!has_data(h)) return h;
        T net = T(0);
        for (int n = 0; n < 8; ++n) {
            const std::ptrdiff_t nx = x + thermal_dx[n], ny = y + thermal_dy[n];
            if (nx < 0 || ny < 0 || nx >= width_ || ny >= height_) continue;
            const T hn = src.row(ny)[nx];
            if (!has_data(hn)) continue;
            net = net + thermal_excess<T>(h - hn, n < 4 ? axial_ : diagonal_);
        }
        return h - share_ * net;
    }

    /// One row of a pass; returns the height the row's cells lost.
    double pass_row(const view& src, const view& dst, std::ptrdiff_t y) const {
        const T* mid = src.row(y);
        T* out = dst.row(y);
        T lost = T(0);
        const auto put = [&](std::ptrdiff_t x, T v) {
            lost += std::max(mid[x] - v, T(0));
            out[x] = v;
        };
        const bool interior_row = y > 0 && y + 1 < height_ && width_ >= 3 && !params_.no_data;
        if (!interior_row) {
            for (std::ptrdiff_t x = 0; x < width_; ++x) put(x, checked_cell(src, x, y));
            return double(lost);
        }
        const T* up = src.row(y - 1);
        const T* down = src.row(y + 1);
        put(0, checked_cell(src, 0, y));
        using batch = simd_batch_t<T>;
        using ops = value_ops<batch>;
        constexpr std::ptrdiff_t lanes = static_cast<std::ptrdiff_t>(ops::lanes);
        const batch axial(axial_), diagonal(diagonal_), share(share_);
        batch lost_lanes(T(0));
        std::ptrdiff_t x = 1;
        for (; x + lanes <= width_ - 1; x += lanes) {
            const batch v = thermal_interior<batch>(up + x, mid + x, down + x, axial, diagonal, share);
            lost_lanes = lost_lanes + detail::max(ops::load(mid + x) - v, batch(T(0)));
            ops::store(v, out + x);
        }
        for (; x < width_ - 1; ++x) put(x, thermal_interior<T>(up + x, mid + x, down + x, axial_, diagonal_, share_));
        put(width_ - 1, checked_cell(src, width_ - 1, y));
        T lanes_sum[ops::lanes];
        ops::store(lost_lanes, lanes_sum);
        double total = double(lost);
        for (const T v : lanes_sum) total += double(v);
        return total;
    }

    /// Largest slope excess of the caller's map (see thermal_stats::max_excess).
    double measure(unsigned threads) {
        const view src = map_view();
        const T diagonal_run = params_.cell_size * T(1.41421356237309504880);
        for_bands(threads, [&](std::ptrdiff_t band) {
            T worst = T(0);
            const std::ptrdiff_t y1 = std::min(height_, (band + 1) * band_rows_);
            if (!params_.no_data) {
                // Without no-data every pair counts: the largest height difference along the
                // axes and along the diagonals, then the excess of each. The same value as the
                // loop below, bit for bit: d / run - talus_slope never decreases as d grows, so
                // the excess of the largest difference is the largest excess.
                T axial = T(0), diag = T(0);
                for (std::ptrdiff_t y = band * band_rows_; y < y1; ++y) {
                    const T* row = src.row(y);
                    axial = largest_difference(row, row + 1, width_ - 1, axial);  // to the right
                    if (y + 1 == height_) continue;
                    const T* below = src.row(y + 1);
                    axial = largest_difference(row, below, width_, axial);              // down
                    diag = largest_difference(row, below + 1, width_ - 1, diag);        // down-right
                    diag = largest_difference(row + 1, below, width_ - 1, diag);        // down-left
                }
                worst = std::max(worst, axial / params_.cell_size - params_.talus_slope);
                worst = std::max(worst, diag / diagonal_run - params_.talus_slope);
                band_sums_[static_cast<std::size_t>(band)] = double(worst);
                return;
            }
            for (std::ptrdiff_t y = band * band_rows_; y < y1; ++y)
                for (std::ptrdiff_t x = 0; x < width_; ++x) {
                    const T h = src.row(y)[x];
                    if (!has_data(h)) continue;
                    // Each pair once: the neighbours after the cell in row-major order.
                    for (int n : {2, 3, 6, 7}) {
                        const std::ptrdiff_t nx = x + thermal_dx[n], ny = y + thermal_dy[n];
                        if (nx < 0 || nx >= width_ || ny >= height_) continue;
                        const T hn = src.row(ny)[nx];
                        if (!has_data(hn)) continue;
                        const T run = n < 4 ? params_.cell_size : diagonal_run;
                        worst = std::max(worst, std::fabs(h - hn) / run - params_.talus_slope);
                    }
                }
            band_sums_[static_cast<std::size_t>(band)] = double(worst);
        });
        double worst = 0;
        for (double s : band_sums_) worst = std::max(worst, s);
        return worst;
    }

    /// The larger of `start` and the largest |a[i] - b[i]| for i in [0, n) (heights: no NaN).
    static T largest_difference(const T* a, const T* b, std::ptrdiff_t n, T start) {
        using batch = simd_batch_t<T>;
        using ops = value_ops<batch>;
        constexpr std::ptrdiff_t lanes = static_cast<std::ptrdiff_t>(ops::lanes);
        batch largest(start);
        std::ptrdiff_t i = 0;
        for (; i + lanes <= n; i += lanes) largest = detail::max(largest, detail::abs(ops::load(a + i) - ops::load(b + i)));
        T lanes_largest[ops::lanes];
        ops::store(largest, lanes_largest);
        T result = start;
        for (const T v : lanes_largest) result = std::max(result, v);
        for (; i < n; ++i) result = std::max(result, std::fabs(a[i] - b[i]));
        return result;
    }

    void copy_back() {
        for (std::ptrdiff_t y = 0; y < height_; ++y)
            std::copy(scratch_.data() + y * width_, scratch_.data() + (y + 1) * width_, map_.row(y));
    }

    /// Runs band_work(b) for every band on up to `threads` threads.
    template <class Work>
    void for_bands(unsigned threads, const Work& band_work) {
        std::atomic<std::ptrdiff_t> next{0};
        std::atomic<bool> stop{false};
        const auto work = [&](unsigned) {
            for (;;) {
                if (stop.load(std::memory_order_relaxed)) return;
                const std::ptrdiff_t band = next.fetch_add(1, std::memory_order_relaxed);
                if (band >= bands_) return;
                band_work(band);
            }
        };
        run_workers(workers(threads), work, [&] { stop.store(true, std::memory_order_relaxed); });
    }

    /// Threads of a pass when `threads` are asked for: one per thermal_thread_cells cells, at
    /// most one per band.
    unsigned workers(unsigned threads) const {
        const std::ptrdiff_t cells = width_ * height_;
        const std::ptrdiff_t worth = std::min(bands_, (cells + thermal_thread_cells - 1) / thermal_thread_cells);
        return resolve_threads(threads, static_cast<std::uint64_t>(worth));
    }

    grid_view<T> map_;
    thermal_params<T> params_;
    std::ptrdiff_t width_, height_;
    T axial_, diagonal_, share_;
    std::ptrdiff_t band_rows_ = 1, bands_ = 1;
    std::vector<double> band_sums_;  ///< per band: lost height (passes) or largest excess (measure)
    std::vector<T, uninitialized_block_allocator<T>> scratch_;  ///< the second buffer, stride = width
};

}  // namespace detail

/// Runs thermal erosion on `heights` in place; see the header comment. Throws
/// std::invalid_argument for an empty view, bad parameters or options, or a height that is
/// neither finite nor no-data or exceeds thermal_height_limit<T>() (naming the cell).
template <class T>
thermal_stats erode_thermal(grid_view<T> heights, const thermal_params<T>& params = {},
                            const thermal_options& options = {}) {
    static_assert(std::is_floating_point<T>::value, "gorge::erode_thermal: T must be float or double");
    constexpr const char* who = "gorge::erode_thermal";
    detail::require_not_empty(heights, who);
    params.validate();
    options.validate();
    const T limit = thermal_height_limit<T>();
    if (!detail::heights_within<T>(heights, limit, params.no_data)) {
        // Something is wrong: name the first non-finite cell, else the first beyond the limit.
        detail::check_heights<T>(heights, params.no_data, who);
        for (std::ptrdiff_t y = 0; y < heights.height(); ++y)
            for (std::ptrdiff_t x = 0; x < heights.width(); ++x) {
                const T h = heights(x, y);
                if (std::fabs(h) > limit && !detail::is_no_data(h, params.no_data))
                    throw std::invalid_argument(std::string(who) + ": height at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) + ") exceeds thermal_height_limit in magnitude");
            }
    }
    detail::thermal_run<T> run(heights, params);
    return run.run(options);
}

/// Same for an owning grid.
template <class T>
thermal_stats erode_thermal(grid<T>& heights, const thermal_params<T>& params = {},
                            const thermal_options& options = {}) {
    return erode_thermal(heights.view(), params, options);
}

}  // namespace gorge
