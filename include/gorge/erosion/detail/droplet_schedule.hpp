// gorge/erosion/detail/droplet_schedule.hpp — the order in which droplets run (see the header
// comment of gorge/erosion/droplet.hpp): the progress reports, the serial schedule, and the
// tiled one, as its plan (tiles, position boxes, colours) and its task graph (tile t's round r
// waits for its neighbours' rounds that come before it; threads take ready tasks, the calling
// thread also reporting).
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

/// Droplets between cancellation checks (a multiple of 4: droplets run in groups of four);
/// progress reports come after whole chunks.
constexpr std::uint64_t droplet_chunk = 256;
/// Progress reports come every count / droplet_reports_per_run droplets, rounded up to whole
/// chunks, but at least every droplet_report_interval_max droplets (a multiple of the chunk),
/// whatever the count: that bounds how long a cancellation waits.
constexpr std::uint64_t droplet_reports_per_run = 1000;
constexpr std::uint64_t droplet_report_interval_max = 64 * droplet_chunk;
/// Longest wait of the calling thread, in the tiled schedule, between checks for a due report
/// while other threads finish their tiles.
constexpr std::chrono::milliseconds droplet_report_poll{1};
/// Phases by which a ready task outside a worker's block must be earlier than one inside it
/// before the worker takes it (droplet_tiled_run::rank): two rounds. On 16 Xeon threads the
/// tasks then ran 1.19x as long as on one thread, against 1.32x when every worker took the
/// earliest task wherever it lay; a lead of one round gained less, four rounds or an unbounded
/// lead less again (benchmarks/README.md, "Tiled droplets in blocks").
constexpr std::uint64_t droplet_own_block_lead = 8;

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
    /// Scheduling state of a run (droplet_tiled_run, under its lock): rounds of this tile
    /// finished, and whether its next round is queued or running.
    std::uint32_t rounds_done;
    bool scheduled;
};

/// Colours of the tiled schedule: the parities of a tile's column and row.
constexpr int droplet_colours = 4;

/// Tile layout of the tiled schedule for a map of width × height cells.
struct droplet_tile_plan {
    std::vector<droplet_tile> tiles;  ///< row-major, `columns` per row
    std::ptrdiff_t columns = 1, rows = 1;  ///< tiles along x and y
    double total_area = 0;  ///< area of all start rectangles

    /// Colour of tile i: the parities of its column and row (0..3).
    int colour(std::size_t i) const {
        const auto tx = static_cast<std::ptrdiff_t>(i) % columns, ty = static_cast<std::ptrdiff_t>(i) / columns;
        return static_cast<int>((tx & 1) | ((ty & 1) << 1));
    }
    /// Worker that tile i belongs to when `workers` run the plan: the tiles are cut into a grid
    /// of blocks, as close to square as `workers` allows (block columns × block rows = workers),
    /// one block per worker. Neighbouring tiles write into each other's cells, so a worker that
    /// keeps to its block finds most of those cells in its own cache.
    unsigned owner(std::size_t i, unsigned workers) const {
        unsigned block_rows = 1;
        for (unsigned d = 1; std::uint64_t(d) * d <= workers; ++d)
            if (workers % d == 0) block_rows = d;
        const unsigned block_columns = workers / block_rows;
        const auto tx = static_cast<std::ptrdiff_t>(i) % columns, ty = static_cast<std::ptrdiff_t>(i) / columns;
        const auto bx = static_cast<unsigned>(tx * block_columns / columns);
        const auto by = static_cast<unsigned>(ty * block_rows / rows);
        return by * block_columns + bx;
    }
    /// Calls f(n) for each tile n next to tile i (the up to 8 around it): the only tiles whose
    /// cells tile i can read or write (see droplet_tile_margin; a tile two columns or two rows
    /// away is as far as one of the same colour).
    template <class F>
    void for_each_neighbour(std::size_t i, const F& f) const {
        const auto tx = static_cast<std::ptrdiff_t>(i) % columns, ty = static_cast<std::ptrdiff_t>(i) / columns;
        for (std::ptrdiff_t y = std::max<std::ptrdiff_t>(0, ty - 1); y <= std::min(rows - 1, ty + 1); ++y)
            for (std::ptrdiff_t x = std::max<std::ptrdiff_t>(0, tx - 1); x <= std::min(columns - 1, tx + 1); ++x)
                if (x != tx || y != ty) f(static_cast<std::size_t>(y * columns + x));
    }
};

/// Tiles of at least 2·margin cells per side covering the start domain [0, width-1) × [0, height-1),
/// their position boxes (the tile grown by `travel` cells, clipped to the domain) and colours.
inline droplet_tile_plan make_droplet_tile_plan(std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t travel,
                                                int brush_span) {
    const std::ptrdiff_t margin = droplet_tile_margin(travel, brush_span);
    const std::ptrdiff_t sx = width - 1, sy = height - 1;  // start domain
    const std::ptrdiff_t nx = droplet_tiles_along(sx, margin), ny = droplet_tiles_along(sy, margin);
    droplet_tile_plan plan;
    plan.columns = nx;
    plan.rows = ny;
    plan.tiles.reserve(static_cast<std::size_t>(nx * ny));
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
///
/// Its result is defined by phases: round r, colour c is phase 4r + c, and the phases run one
/// after another, the tiles of one phase side by side (they touch disjoint cells). It runs as a
/// task graph instead, without a barrier between phases: task (tile t, round r) starts once
/// every neighbouring tile (the only tiles sharing cells with t) has finished the rounds that
/// come before it in phase order (round r for a neighbour of a lower colour, round r - 1 for
/// one of a higher colour), and the neighbours wait for t in the same way. Every cell therefore
/// sees the reads and writes of the phase order in the same order, and the result is that of
/// the phases, bit for bit, on any number of threads. Threads are started once per call (the
/// calling thread being one of them) and take ready tasks from a queue, earliest phase first, so
/// a thread that finishes early moves on to tiles of later phases wherever their neighbours are
/// done instead of waiting for the slowest tile of a phase. Each worker has a block of tiles
/// (droplet_tile_plan::owner) and prefers its own ready tasks unless another is
/// droplet_own_block_lead phases earlier: neighbouring tiles write into each other's cells, and
/// those cells are then mostly in the worker's own cache.
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

    droplet_stats run() {
        cancelled_ = !progress_.start();
        if (!cancelled_ && count_ > 0) {
            ready_.reserve(plan_.tiles.size());
            const unsigned workers = resolve_threads(options_.threads, plan_.tiles.size());
            owners_.resize(plan_.tiles.size());
            for (std::size_t i = 0; i < plan_.tiles.size(); ++i) owners_[i] = plan_.owner(i, workers);
            tasks_left_ = std::uint64_t(plan_.tiles.size()) * options_.rounds;
            for (std::size_t i = 0; i < plan_.tiles.size(); ++i) schedule(i);
            run_workers(workers, [this](unsigned w) { work(w); }, [this] { request_stop(); });
        }
        droplet_stats stats;
        stats.droplets = done_.load();
        stats.cancelled = cancelled_ && stats.droplets < count_;
        for (const droplet_totals& s : totals_) s.add_to(stats);
        if (!stats.cancelled) progress_.finish();
        return stats;
    }

private:
    /// Stops every worker after its current chunk (a cancel, or a worker's exception).
    void request_stop() {
        {
            const std::lock_guard<std::mutex> hold(lock_);
            stop_.store(true, std::memory_order_relaxed);
        }
        wake_.notify_all();
    }

    /// Calling thread only, without the lock: a report when one is due; an exception from the
    /// callback goes up.
    void report_due() {
        if (stop_.load(std::memory_order_relaxed)) return;
        if (!progress_.report(done_.load(std::memory_order_relaxed))) {
            cancelled_ = true;
            request_stop();
        }
    }

    /// Phase of tile i's next task (see the class comment).
    std::uint64_t phase(std::size_t i) const {
        return std::uint64_t(plan_.tiles[i].rounds_done) * droplet_colours + std::uint64_t(plan_.colour(i));
    }
    /// Rank of ready tile i for worker w, lowest first: its phase, put droplet_own_block_lead
    /// phases later when the tile is not in w's block (droplet_tile_plan::owner). Which ready
    /// task runs first never changes the result.
    std::uint64_t rank(std::size_t i, unsigned w) const {
        return phase(i) + (owners_[i] == w ? 0u : droplet_own_block_lead);
    }

    /// Under the lock: queues tile i's next round if it has one, is not queued or running, and
    /// every neighbour has finished the rounds before it in phase order. True if queued.
    bool schedule(std::size_t i) {
        droplet_tile& t = plan_.tiles[i];
        if (t.scheduled || t.rounds_done >= options_.rounds) return false;
        const int colour = plan_.colour(i);
        bool ready = true;
        plan_.for_each_neighbour(i, [&](std::size_t n) {
            const std::uint32_t needed = plan_.colour(n) < colour ? t.rounds_done + 1 : t.rounds_done;
            if (plan_.tiles[n].rounds_done < needed) ready = false;
        });
        if (!ready) return false;
        t.scheduled = true;
        ready_.push_back(static_cast<std::uint32_t>(i));
        return true;
    }

    /// Worker w: takes ready tasks, lowest rank first (then lowest tile index), until none is
    /// left or a stop. The calling thread (w = 0) reports between its chunks and, while no task
    /// is ready, every droplet_report_poll.
    void work(unsigned w) {
        const bool caller = w == 0;
        std::unique_lock<std::mutex> hold(lock_);
        for (;;) {
            if (stop_.load(std::memory_order_relaxed) || tasks_left_ == 0) break;
            if (ready_.empty()) {
                if (!caller) {
                    wake_.wait(hold);
                    continue;
                }
                wake_.wait_for(hold, droplet_report_poll);
                hold.unlock();
                report_due();
                hold.lock();
                continue;
            }
            std::size_t best = 0;
            std::uint64_t best_rank = rank(ready_[0], w);
            for (std::size_t k = 1; k < ready_.size(); ++k) {
                const std::uint64_t rk = rank(ready_[k], w);
                if (rk < best_rank || (rk == best_rank && ready_[k] < ready_[best])) {
                    best = k;
                    best_rank = rk;
                }
            }
            const std::size_t ti = ready_[best];
            ready_[best] = ready_.back();
            ready_.pop_back();
            const std::uint32_t round = plan_.tiles[ti].rounds_done;
            hold.unlock();
            const bool whole = run_tile(ti, round, caller);
            hold.lock();
            if (!whole) break;
            plan_.tiles[ti].rounds_done = round + 1;
            plan_.tiles[ti].scheduled = false;
            --tasks_left_;
            unsigned queued = schedule(ti) ? 1u : 0u;
            plan_.for_each_neighbour(ti, [&](std::size_t n) { queued += schedule(n) ? 1u : 0u; });
            if (tasks_left_ == 0) {
                hold.unlock();
                wake_.notify_all();  // everything is done: the waiting workers return
                return;
            }
            // This worker takes one of the new tasks itself; the others are for waiting workers.
            for (unsigned k = 1; k < queued; ++k) wake_.notify_one();
        }
        hold.unlock();
        wake_.notify_all();
    }

    /// Droplets of round `round` before tile i: floor(n · area_before / total_area) of the
    /// round's n droplets, monotone in area_before; the end of the last tile is pinned to n.
    std::uint64_t share_begin(std::size_t i, std::uint64_t round_count) const {
        if (i >= plan_.tiles.size()) return round_count;
        const double exact = std::floor(double(round_count) * plan_.tiles[i].area_before / plan_.total_area);
        return std::min<std::uint64_t>(round_count, static_cast<std::uint64_t>(exact));
    }

    /// Tile ti's share of round `round`, chunk by chunk; the calling thread reports between
    /// chunks. False when a stop ended it early.
    bool run_tile(std::size_t ti, unsigned round, bool caller) {
        const droplet_tile& t = plan_.tiles[ti];
        const droplet_box<T> bounds{T(t.bx0), T(t.bx1), T(t.by0), T(t.by1)};
        const droplet_start_rect<T> rect = make_droplet_start_rect<T>(t.x0, t.x1, t.y0, t.y1);
        const std::uint64_t round_first = droplet_round_begin(count_, round, options_.rounds);
        const std::uint64_t round_count = droplet_round_begin(count_, round + 1, options_.rounds) - round_first;
        const std::uint64_t begin = share_begin(ti, round_count), end = share_begin(ti + 1, round_count);
        // The sums of this tile, kept locally while it runs (no cache line shared with other
        // tiles' sums) and stored back after every chunk: the same additions in the same order.
        droplet_totals sum = totals_[ti];
        const auto sink = [&sum](const droplet_result<T>& r) { sum.add(r); };
        for (std::uint64_t k = begin; k < end;) {
            const std::uint64_t chunk_end = std::min(end, k + droplet_chunk);
            run_droplet_range(kernel_, bounds, options_.seed, round_first + k, round_first + chunk_end, rect,
                              options_.interleave, sink);
            totals_[ti] = sum;
            done_.fetch_add(chunk_end - k, std::memory_order_relaxed);
            k = chunk_end;
            if (caller) report_due();
            if (stop_.load(std::memory_order_relaxed)) return k == end;
        }
        return true;
    }

    droplet_kernel<T> kernel_;  ///< whole-map kernel; each tile narrows its bounds
    const droplet_options& options_;
    std::uint64_t count_;
    droplet_tile_plan plan_;  ///< tiles, with their scheduling state (under lock_)
    std::vector<droplet_totals> totals_;  ///< per tile, summed in tile order at the end
    droplet_reporter progress_;
    std::mutex lock_;  ///< guards the tiles' scheduling state, ready_ and tasks_left_
    std::condition_variable wake_;  ///< tasks were queued, all are done, or a stop
    std::vector<std::uint32_t> ready_;  ///< tiles whose next task can start, in no order
    std::vector<unsigned> owners_;      ///< per tile: the worker whose block holds it
    std::uint64_t tasks_left_ = 0;      ///< tasks not finished (tiles × rounds at the start)
    std::atomic<std::uint64_t> done_{0};  ///< droplets finished
    std::atomic<bool> stop_{false};       ///< cancelled, or a worker failed (set under lock_)
    bool cancelled_ = false;              ///< the callback asked to stop (calling thread only)
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
