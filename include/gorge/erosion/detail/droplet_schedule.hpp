// gorge/erosion/detail/droplet_schedule.hpp — the order in which droplets run (see the header
// comment of gorge/erosion/droplet.hpp): the progress reports, the serial schedule, and the
// tiled one, as its plan (tiles, position boxes, colours), its colour loop (rounds × colours) and
// its worker loop (threads taking tiles of one colour, the calling thread also reporting).
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
#include <functional>
#include <mutex>
#include <vector>

#include "../../detail/parallel.hpp"
#include "../droplet_params.hpp"
#include "droplet_brush.hpp"
#include "droplet_start.hpp"
#include "droplet_step.hpp"

namespace gorge {
namespace detail {

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

/// The progress callback's schedule (see droplet_options::progress); false: cancel.
struct droplet_reporter {
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

inline droplet_reporter make_droplet_reporter(const droplet_options& options, std::uint64_t count) {
    const std::uint64_t share = (count / droplet_reports_per_run + droplet_chunk - 1) / droplet_chunk;
    const std::uint64_t interval =
        std::min(std::max<std::uint64_t>(share, 1) * droplet_chunk, droplet_report_interval_max);
    return {&options.progress, count, interval, 0};
}

/// Sums of droplet results: the one sink of both schedules (the serial one keeps one, the tiled
/// one one per tile, added up in tile order at the end so the result does not depend on threads).
struct droplet_totals {
    double eroded, deposited, outflow;
    std::uint64_t left_map;

    template <class T>
    void add(const droplet_result<T>& r) {
        eroded += r.eroded;
        deposited += r.deposited;
        outflow += r.outflow;
        left_map += r.end == droplet_end::left_map ? 1 : 0;
    }
    /// Adds these sums to `stats` (whose droplet count is the caller's).
    void add_to(droplet_stats& stats) const {
        stats.eroded += eroded;
        stats.deposited += deposited;
        stats.outflow += outflow;
        stats.left_map += left_map;
    }
};

/// The serial schedule: droplets 0..count-1 over the whole map of `kernel`, in chunks of
/// droplet_chunk with a progress check after each.
template <class T>
droplet_stats run_droplets_serial(const droplet_kernel<T>& kernel, std::uint64_t count,
                                  const droplet_options& options) {
    droplet_stats stats;
    droplet_reporter progress = make_droplet_reporter(options, count);
    if (!progress.start()) {
        stats.cancelled = true;
        return stats;
    }
    const droplet_start_rect<T> rect = make_droplet_start_rect<T>(0, kernel.width - 1, 0, kernel.height - 1);
    droplet_totals totals{0, 0, 0, 0};
    const auto sink = [&totals](const droplet_result<T>& r) { totals.add(r); };
    // Chunks start at multiples of the (even) chunk size, so a run cancelled after m droplets
    // pairs droplets exactly like a run of m droplets.
    for (std::uint64_t k = 0; k < count;) {
        const std::uint64_t end = std::min(count, k + droplet_chunk);
        run_droplet_range(kernel, kernel.whole, options.seed, k, end, rect, options.interleave, sink);
        k = end;
        if (!progress.report(k)) {
            stats.cancelled = true;
            stats.droplets = k;
            totals.add_to(stats);
            return stats;
        }
    }
    stats.droplets = count;
    totals.add_to(stats);
    progress.finish();
    return stats;
}

/// Cells a tile needs around its start rectangle [x0, x1) so that tiles of one colour never
/// write the same cell, for droplets that travel at most `travel` cells (droplet_travel: L steps
/// of s cells, ceil(L·s) + 1) and a brush of span r (droplet_brush_span). Positions stay in the
/// position box [x0 - travel, x1 + travel), so the corners of their cells and the nodes nearest
/// to them (the brush centres) lie in [x0 - travel, x1 + travel]. From a node, writes reach left by the brush (r - 1) plus up to
/// droplet_block_slack cells of its first block, i.e. r + 2, and right by the last block, at
/// most r + 5 cells (aligned blocks: block_row - r; unaligned: r - 1 + 4; the deposit corner is
/// +1; the test "both block layouts stay within..." checks both layouts). Writes therefore stay
/// in [x0 - travel - r - 2, x1 + travel + r + 5]; the margin travel + r + 7 covers both sides with
/// a cell to spare, and tiles of one colour are at least 2·margin apart.
inline std::ptrdiff_t droplet_tile_margin(std::ptrdiff_t travel, int brush_span) {
    constexpr int reach_beyond_span = 7;
    return travel + std::ptrdiff_t(brush_span) + reach_beyond_span;
}

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

/// Colours of the tiled schedule: the parities of a tile's column and row.
constexpr int droplet_colours = 4;

/// Tile layout of the tiled schedule for a map of width × height cells.
struct droplet_tile_plan {
    std::vector<droplet_tile> tiles;  ///< row-major
    std::vector<std::uint32_t> order;  ///< tile indices grouped by colour
    std::size_t colour_begin[droplet_colours + 1] = {};  ///< colour c is order[colour_begin[c] .. colour_begin[c + 1])
    double total_area = 0;  ///< area of all start rectangles
};

/// Tiles of at least 2·margin cells per side covering the start domain [0, width-1) × [0, height-1),
/// their position boxes (the tile grown by `travel` cells, clipped to the domain) and colours.
inline droplet_tile_plan make_droplet_tile_plan(std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t travel,
                                                int brush_span) {
    const std::ptrdiff_t margin = droplet_tile_margin(travel, brush_span);
    const std::ptrdiff_t sx = width - 1, sy = height - 1;  // start domain
    const std::ptrdiff_t nx = droplet_tiles_along(sx, margin), ny = droplet_tiles_along(sy, margin);
    droplet_tile_plan plan;
    plan.tiles.reserve(static_cast<std::size_t>(nx * ny));
    plan.order.reserve(static_cast<std::size_t>(nx * ny));
    double area = 0;
    for (std::ptrdiff_t ty = 0; ty < ny; ++ty)
        for (std::ptrdiff_t tx = 0; tx < nx; ++tx) {
            droplet_tile t{};
            t.x0 = droplet_tile_edge(tx, nx, sx);
            t.x1 = droplet_tile_edge(tx + 1, nx, sx);
            t.y0 = droplet_tile_edge(ty, ny, sy);
            t.y1 = droplet_tile_edge(ty + 1, ny, sy);
            t.bx0 = std::max<std::ptrdiff_t>(0, t.x0 - travel);
            t.bx1 = std::min<std::ptrdiff_t>(sx, t.x1 + travel);
            t.by0 = std::max<std::ptrdiff_t>(0, t.y0 - travel);
            t.by1 = std::min<std::ptrdiff_t>(sy, t.y1 + travel);
            t.area_before = area;
            area += double(t.x1 - t.x0) * double(t.y1 - t.y0);
            plan.tiles.push_back(t);
        }
    plan.total_area = area;
    const auto colour_of = [nx](std::size_t i) {
        const auto tx = static_cast<std::ptrdiff_t>(i) % nx, ty = static_cast<std::ptrdiff_t>(i) / nx;
        return static_cast<int>((tx & 1) | ((ty & 1) << 1));
    };
    for (int c = 0; c < droplet_colours; ++c) {
        plan.colour_begin[c] = plan.order.size();
        for (std::size_t i = 0; i < plan.tiles.size(); ++i)
            if (colour_of(i) == c) plan.order.push_back(static_cast<std::uint32_t>(i));
    }
    plan.colour_begin[droplet_colours] = plan.order.size();
    return plan;
}

/// Number of tiles make_droplet_tile_plan() makes (for droplet_workspace_bytes).
inline std::size_t droplet_tile_count(std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t travel,
                                      int brush_span) {
    const std::ptrdiff_t margin = droplet_tile_margin(travel, brush_span);
    return static_cast<std::size_t>(droplet_tiles_along(width - 1, margin) * droplet_tiles_along(height - 1, margin));
}

/// The tiled schedule for `count` droplets over the map of `kernel` (see the header comment of
/// gorge/erosion/droplet.hpp).
template <class T>
class droplet_tiled_run {
public:
    droplet_tiled_run(const droplet_kernel<T>& kernel, std::uint64_t count, const droplet_options& options)
        : kernel_(kernel),
          options_(options),
          count_(count),
          plan_(make_droplet_tile_plan(kernel.width, kernel.height, kernel.travel, kernel.brush_span)),
          totals_(plan_.tiles.size(), droplet_totals{0, 0, 0, 0}),
          progress_(make_droplet_reporter(options, count)) {}

    /// The colour loop: every round runs the four colours one after another.
    droplet_stats run() {
        cancelled_ = !progress_.start();
        for (unsigned round = 0; round < options_.rounds && !cancelled_ && !stop_.load(); ++round) {
            round_first_ = droplet_round_begin(count_, round, options_.rounds);
            round_count_ = droplet_round_begin(count_, round + 1, options_.rounds) - round_first_;
            for (int colour = 0; colour < droplet_colours && !stop_.load(); ++colour) {
                run_colour(colour);
                report_due();
            }
        }
        droplet_stats stats;
        stats.droplets = done_.load();
        stats.cancelled = cancelled_ && stats.droplets < count_;
        for (const droplet_totals& s : totals_) s.add_to(stats);
        if (!stats.cancelled) progress_.finish();
        return stats;
    }

private:
    /// Calling thread only: a report when one is due; an exception from the callback goes up.
    void report_due() {
        if (stop_.load(std::memory_order_relaxed)) return;
        if (!progress_.report(done_.load(std::memory_order_relaxed))) {
            cancelled_ = true;
            stop_.store(true, std::memory_order_relaxed);
        }
    }

    /// Droplets of the current round before tile i: floor(round_count · area_before / total_area),
    /// monotone in area_before; the end of the last tile is pinned to round_count.
    std::uint64_t share_begin(std::size_t i) const {
        if (i >= plan_.tiles.size()) return round_count_;
        const double exact = std::floor(double(round_count_) * plan_.tiles[i].area_before / plan_.total_area);
        return std::min<std::uint64_t>(round_count_, static_cast<std::uint64_t>(exact));
    }

    /// Tile ti's share of the current round, chunk by chunk; the calling thread reports between
    /// chunks. Returns early after a stop.
    void run_tile(std::size_t ti, bool caller) {
        const droplet_tile& t = plan_.tiles[ti];
        const droplet_box<T> bounds{T(t.bx0), T(t.bx1), T(t.by0), T(t.by1)};
        const droplet_start_rect<T> rect = make_droplet_start_rect<T>(t.x0, t.x1, t.y0, t.y1);
        const std::uint64_t begin = share_begin(ti), end = share_begin(ti + 1);
        droplet_totals& sum = totals_[ti];
        const auto sink = [&sum](const droplet_result<T>& r) { sum.add(r); };
        for (std::uint64_t k = begin; k < end;) {
            const std::uint64_t chunk_end = std::min(end, k + droplet_chunk);
            run_droplet_range(kernel_, bounds, options_.seed, round_first_ + k, round_first_ + chunk_end, rect,
                              options_.interleave, sink);
            done_.fetch_add(chunk_end - k, std::memory_order_relaxed);
            k = chunk_end;
            if (caller) report_due();
            if (stop_.load(std::memory_order_relaxed)) return;
        }
    }

    /// The worker loop of one colour: threads take its tiles from a shared counter; the calling
    /// thread (worker 0) then waits for the others, reporting meanwhile.
    void run_colour(int colour) {
        const std::size_t first = plan_.colour_begin[colour], last = plan_.colour_begin[colour + 1];
        std::atomic<std::size_t> next{first};
        // Tiles of this colour finished (or given up after a stop), under `lock`; the calling
        // thread waits on `finished_one` for the last ones, reporting meanwhile.
        std::mutex lock;
        std::condition_variable finished_one;
        std::size_t finished = 0;
        const auto work = [&](unsigned worker) {
            const bool caller = worker == 0;
            for (;;) {
                if (stop_.load(std::memory_order_relaxed)) break;
                const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed);
                if (slot >= last) break;
                run_tile(plan_.order[slot], caller);
                {
                    const std::lock_guard<std::mutex> hold(lock);
                    ++finished;
                }
                finished_one.notify_one();
            }
            if (!caller) return;
            // Every tile is taken; report while the other threads finish theirs.
            std::unique_lock<std::mutex> hold(lock);
            while (finished < last - first && !stop_.load(std::memory_order_relaxed)) {
                finished_one.wait_for(hold, droplet_report_poll);
                hold.unlock();
                report_due();
                hold.lock();
            }
        };
        run_workers(resolve_threads(options_.threads, last - first), work,
                    [&] { stop_.store(true, std::memory_order_relaxed); });
    }

    droplet_kernel<T> kernel_;  ///< whole-map kernel; each tile narrows its bounds
    const droplet_options& options_;
    std::uint64_t count_;
    droplet_tile_plan plan_;
    std::vector<droplet_totals> totals_;  ///< per tile, summed in tile order at the end
    droplet_reporter progress_;
    std::atomic<std::uint64_t> done_{0};  ///< droplets finished
    std::atomic<bool> stop_{false};       ///< cancelled, or a worker failed
    bool cancelled_ = false;              ///< the callback asked to stop (calling thread only)
    std::uint64_t round_first_ = 0, round_count_ = 0;  ///< the current round's droplets
};

/// The tiled schedule (see droplet_tiled_run).
template <class T>
droplet_stats run_droplets_tiled(const droplet_kernel<T>& kernel, std::uint64_t count,
                                 const droplet_options& options) {
    droplet_tiled_run<T> schedule(kernel, count, options);
    return schedule.run();
}

}  // namespace detail
}  // namespace gorge
