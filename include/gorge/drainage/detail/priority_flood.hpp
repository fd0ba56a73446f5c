// gorge/drainage/detail/priority_flood.hpp — the plain Priority-Flood of the depression fills.
// Progress counting, the uphill traces both floods share, lakes raised a row span at a time, and
// traced_flood, the plain fill's flood (Barnes, Lehman & Mulla 2014; Wei, Zhou & Fu 2018). Not a
// public header; gorge/drainage/depression_fill.hpp says what the fills do.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "../../config.hpp"
#include "../d8.hpp"
#include "../fill_options.hpp"
#include "cell_fifo.hpp"
#include "d8_window.hpp"
#include "flood_queues.hpp"
#include "height_bits.hpp"
#include "padded_heights.hpp"
#include "radix_heap.hpp"

namespace gorge {
namespace detail {

/// Calls fill_options::progress (when set) and records a cancellation; true to go on.
template <class T>
bool fill_report(const fill_options<T>& options, double fraction, fill_stats<T>& stats) {
    if (!options.progress || options.progress(fraction)) return true;
    stats.cancelled = true;
    return false;
}

/// Cells closed by a Priority-Flood, counted for fill_options::progress: a report every
/// fill_progress_interval cells (each data cell is closed at most once, so the reports come at
/// the same fractions in every fill). Unset, it costs one counter decrement per cell.
template <class T>
class flood_progress {
public:
    flood_progress(const padded_heights<T>& work, const fill_options<T>& options, fill_stats<T>& stats)
        : options_(options), stats_(stats),
          until_report_(options.progress ? fill_progress_interval : std::numeric_limits<std::size_t>::max()),
          total_(static_cast<double>(work.data_cells)) {}
    /// Counts one closed cell; false when cancelled.
    bool count() { return count(1); }
    /// Counts n closed cells (n at most d8_neighbours); false when cancelled. A report that falls
    /// inside the n cells comes after all of them, with the same fraction.
    bool count(std::size_t n) {
        if (until_report_ > n) {
            until_report_ -= n;
            return true;
        }
        return report_after(n);
    }

private:
    GORGE_COLD_NOINLINE bool report_after(std::size_t n) {
        until_report_ = fill_progress_interval - (n - until_report_);
        settled_ += fill_progress_interval;
        return fill_report(options_, static_cast<double>(settled_) / total_, stats_);
    }

private:
    const fill_options<T>& options_;
    fill_stats<T>& stats_;
    std::size_t until_report_;
    std::size_t settled_ = 0;
    double total_;
};

/// Closes the cells of window bits w around map cell c and counts them; false when cancelled.
template <class T>
bool close_window_cells(padded_heights<T>& work, flood_progress<T>& progress, std::size_t c, unsigned w) {
    work.close_window(c, w);
    return progress.count(static_cast<std::size_t>(mask_cells(window_neighbours.mask[w])));
}

/// Index of D8 neighbour k of padded cell c, given the offsets padded_heights::offset(0..7).
inline std::size_t neighbour_index(std::size_t c, const std::ptrdiff_t (&off)[d8_neighbours], int k) {
    return static_cast<std::size_t>(static_cast<std::ptrdiff_t>(c) + off[k]);
}

/// Follows the cells on `trace` uphill, for both floods: an open neighbour m of traced cell t
/// with z[m] > step(z[t]) keeps its height too, is closed and traced in turn; t waits in the
/// priority queue only if some open neighbour is not that high (t may have to raise it). step is
/// the identity for the plain fill, succ for the epsilon fill; count(n) counts n closed cells
/// (false: cancelled). Which neighbours are higher comes from one mask (window_compare), and that
/// mask is then closed (one bit set update per window row) and queued (one vector add and store,
/// cell_fifo::push_neighbours) as a whole: on rough terrain a loop over a cell's higher neighbours
/// ended after a count that the branch predictor mostly got wrong (8-15 % of the time of both
/// fills on the noisy 1024^2 benchmark map).
/// The cells are followed in the order they were reached (first in, first out, as in Wei et al.'s
/// trace queue), so a trace spreads up a slope as a wave: by the time t is looked at, the wave has
/// usually reached t's neighbours along the contour and below it, and t has no open neighbour
/// left that is not above it. A stack would climb a narrow path instead and leave those beside
/// it open: on smooth terrain twice as many traced cells would enter the priority queue. The
/// order changes no result (a traced cell keeps its height, and one with no open neighbour has
/// nothing to flood), only the work. Wei et al. also keep t out of the queue when each such open
/// neighbour already has a visited neighbour below t, which floods it no higher than t would.
/// That test cost more than the queue operations it saved, on one core of an AMD EPYC (Zen 5) and
/// of an Intel Xeon alike: without it the plain fill of the 1024^2 and 2048^2 benchmark maps took
/// up to 26 % less time, and no more on any (benchmarks/README.md, "Depression fills: the trace
/// without Wei et al.'s test"), so neither fill makes it.
/// mark(t, w) is told that t closed the cells of window bits w (the plain fill's watershed labels,
/// see no_flood_labels). `trace` is empty on return, unless count() cancelled the fill.
template <class I, class T, class Key, class Step, class Count, class Mark>
bool trace_uphill(padded_heights<T>& work, const d8_mask_offsets<I>& mask_offsets, cell_fifo<I>& trace,
                  radix_heap<Key, I>& open, Step&& step, Count&& count, Mark&& mark) {
    T* const z = work.z.data();
    while (!trace.empty()) {
        const std::size_t t = trace.pop();
        const T zt = z[t];
        const unsigned open_w = work.open_window(t);
        const unsigned up_w = open_w & work.window_above(t, step(zt));
        const unsigned up = window_neighbours.mask[up_w];
        work.close_window(t, up_w);
        mark(t, up_w);
        if (!count(static_cast<std::size_t>(mask_cells(up)))) return false;
        trace.push_neighbours(t, up, mask_offsets);
        if (up != window_neighbours.mask[open_w]) open.push(ordered_bits(zt), static_cast<I>(t));
    }
    trace.clear();
    return true;
}

/// What a row span fill's visit(i) did with cell i (spread_row_span): i joined the lake, so it
/// widens the span or extends a run; or it did not (a closed cell, or one that keeps its height);
/// or the visit cancelled the fill.
enum class span_cell { joined, left, cancelled };

/// One step of a scan-line seed fill (Smith 1979, "Tint fill", SIGGRAPH '79; Heckbert 1990, "A
/// seed fill algorithm", Graphics Gems) for span first..last of one row of a map of row length
/// `pitch`: the span is widened along its row while the next cell joins (visit also takes the
/// cell that ends each side), then the rows above and below it are visited from one cell west of
/// it to one cell east, diagonals included, and each of their runs of cells that joined is queued
/// on `spans` as the pair (first, last). visit(i) decides what joins and does the work: the plain
/// fill raises a lake (fill_pit_row_span), the tiled fill lowers one (lower_epsilon_surface).
/// False when a visit cancelled the fill.
template <class I, class Visit>
bool spread_row_span(cell_fifo<I>& spans, std::size_t first, std::size_t last, std::size_t pitch, Visit&& visit) {
    span_cell side;
    while ((side = visit(first - 1)) == span_cell::joined) --first;
    if (side == span_cell::cancelled) return false;
    while ((side = visit(last + 1)) == span_cell::joined) ++last;
    if (side == span_cell::cancelled) return false;
    for (const std::size_t from : {first - 1 - pitch, first - 1 + pitch}) {
        const std::size_t to = from + (last - first) + 2;
        std::size_t run = 0;  // first cell of the run being collected, or 0 (a ring cell) for none
        for (std::size_t i = from; i <= to; ++i) {
            const span_cell cell = visit(i);
            if (cell == span_cell::joined) {
                if (run == 0) run = i;
                continue;
            }
            if (cell == span_cell::cancelled) return false;
            if (run != 0) {
                spans.push(static_cast<I>(run));
                spans.push(static_cast<I>(i - 1));
                run = 0;
            }
        }
        if (run != 0) {
            spans.push(static_cast<I>(run));
            spans.push(static_cast<I>(to));
        }
    }
    return true;
}

/// Raises a lake to its spill level a row span at a time (spread_row_span): the plain fill's pit
/// queue, whose cells all lie at one level, holds spans as pairs (first, last) of cells of one
/// row, closed and raised to `level`. An open cell next to a span is closed; one not above
/// `level` joins the lake (raised), a higher one goes to `trace` (it keeps its height, as a cell
/// reached from a lower one always does). Each cell is then read once per span that borders it,
/// instead of each lake cell reading its whole window and testing its neighbours one by one: on
/// a flat lake this costs about a quarter as much. close(n, from) closes cell n reached from cell
/// `from` of the lake (the flood's count and labels); false when it cancels the fill.
template <class I, class T, class Close>
bool fill_pit_row_span(padded_heights<T>& work, cell_fifo<I>& pit, cell_fifo<I>& trace, std::size_t first,
                       std::size_t last, T level, Close&& close) {
    const bit_set& closed = work.closed;
    T* const z = work.z.data();
    const std::size_t lake = first;
    return spread_row_span(pit, first, last, static_cast<std::size_t>(work.pitch), [&](std::size_t i) {
        if (closed.test(i)) return span_cell::left;
        if (!close(i, lake)) return span_cell::cancelled;
        if (z[i] <= level) {
            z[i] = level;
            return span_cell::joined;
        }
        trace.push(static_cast<I>(i));
        return span_cell::left;
    });
}

/// fill_pit_row_span, except for a span of one cell whose west and east neighbours are not lake
/// cells (most pits of rough terrain are a few cells): that one is done from its 3 x 3 window, as
/// trace_uphill does a cell, with one read of its open and its higher neighbours, closed at once.
/// close_window(c, w) closes the cells of window bits w around c (the flood's count and labels;
/// false when it cancels the fill).
template <class I, class T, class Close, class CloseWindow>
GORGE_FORCEINLINE bool fill_pit_span(padded_heights<T>& work, const d8_mask_offsets<I>& mask_offsets,
                                     cell_fifo<I>& pit, cell_fifo<I>& trace, std::size_t first, std::size_t last,
                                     T level, Close&& close, CloseWindow&& close_window) {
    if (first == last) {
        constexpr int side = window_neighbour_table::window_side;
        constexpr unsigned west_and_east = (1u << side) | (1u << (side + 2));
        const unsigned open_w = work.open_window(first);
        if (open_w == 0) return true;
        const unsigned high_w = open_w & work.window_above(first, level);
        const unsigned lake_w = open_w & ~high_w;
        if ((lake_w & west_and_east) == 0) {
            if (!close_window(first, open_w)) return false;
            trace.push_neighbours(first, window_neighbours.mask[high_w], mask_offsets);
            const unsigned lake = window_neighbours.mask[lake_w];
            const typename d8_mask_offsets<I>::offset* off = mask_offsets.of(lake);
            T* const z = work.z.data();
            for (int j = 0, cells = mask_cells(lake); j < cells; ++j) {
                const I n = static_cast<I>(static_cast<I>(first) + static_cast<I>(off[j]));
                z[n] = level;
                pit.push(n);
                pit.push(n);
            }
            return true;
        }
    }
    return fill_pit_row_span(work, pit, trace, first, last, level, close);
}

/// Watershed labels of the plain flood when none are wanted (the fill of a whole map): each hook
/// is empty. The tiled fill's labels (detail/tiled_fill.hpp) have the same three: a cell closed
/// from cell `from` takes from's label (inherit), and so do the cells of window bits `window`
/// around a traced cell (inherit_window); outlets are labelled before the flood starts.
struct no_flood_labels {
    void inherit(std::size_t /*to*/, std::size_t /*from*/) {}
    void inherit_window(std::size_t /*from*/, unsigned /*window*/) {}
};

/// The plain Priority-Flood+ with slope tracing, after the idea of Wei, Zhou & Fu (2018),
/// "Efficient Priority-Flood depression filling in raster digital elevation models", International
/// Journal of Digital Earth 12(4), 415-427: a cell reached from a lower one is not in a depression
/// (it keeps its height), and neither is any unvisited neighbour higher than it, so such cells are
/// followed uphill at once (trace_uphill), while their rows are in cache, instead of each waiting
/// in the priority queue until the flood level reaches it. A traced cell enters the priority
/// queue only if it has an unvisited neighbour not above it (which it may have to flood at its
/// own level, as any Priority-Flood cell does). The plain fill's surface is the unique minimax
/// surface, so the result is the same as without tracing, bit for bit; only the work differs: on
/// long slopes (smooth terrain) most cells skip the queue, on rough terrain few do. The epsilon
/// fill traces the same way (see epsilon_flood). Labels (no_flood_labels, or the tiled fill's)
/// hears which cell closed which.
template <class I, class T, class Labels = no_flood_labels>
class traced_flood {
public:
    traced_flood(padded_heights<T>& work, const fill_options<T>& options, fill_stats<T>& stats, Labels labels = {})
        : work_(work), z_(work.z.data()), progress_(work, options, stats), mask_offsets_(work.pitch),
          labels_(labels) {
        for (int k = 0; k < d8_neighbours; ++k) off_[k] = work.offset(k);
    }

    /// Runs the flood; false when cancelled (fill_options::progress returned false).
    bool run() {
        bool go_on = true;
        work_.for_each_outlet([&](std::size_t i) {
            if (!go_on) return;
            go_on = close(i);
            open_.push(ordered_bits(z_[i]), static_cast<I>(i));
        });
        if (!go_on) return false;
        I c;
        while (open_.pop_live(c, [this](std::size_t i) { return work_.has_open_neighbour(i); })) {
            const T level = from_ordered_bits(open_.last_key());  // no cache miss on z
            if (!flood_from(c, level)) return false;
            while (!pit_.empty()) {
                const std::size_t first = pit_.pop();
                const std::size_t last = pit_.pop();
                if (!fill_pit_span(work_, mask_offsets_, pit_, trace_, first, last, level,
                                   [this](std::size_t n, std::size_t from) { return close(n, from); },
                                   [this](std::size_t at, unsigned w) { return close_window(at, w); }) ||
                    !trace())
                    return false;
            }
            pit_.clear();
        }
        return true;
    }

private:
    /// Closes cell i (each data cell exactly once). False when cancelled.
    bool close(std::size_t i) {
        work_.closed.set(i);
        return progress_.count();
    }

    /// Closes cell n, reached from cell `from`, whose label it takes. False when cancelled.
    bool close(std::size_t n, std::size_t from) {
        labels_.inherit(n, from);
        return close(n);
    }
    /// Closes the cells of window bits w around c, which take c's label. False when cancelled.
    bool close_window(std::size_t c, unsigned w) {
        labels_.inherit_window(c, w);
        return close_window_cells(work_, progress_, c, w);
    }

    /// The unvisited neighbours of c, whose spill level is `level`: those not above it are raised
    /// to it and drained through the pit queue (as spans of one cell, fill_pit_span), the others
    /// are traced uphill.
    bool flood_from(std::size_t c, T level) {
        for (unsigned open_n = work_.open_neighbours(c); open_n != 0; open_n &= open_n - 1) {
            const std::size_t n = neighbour_index(c, off_, lowest_bit(open_n));
            if (!close(n, c)) return false;
            if (z_[n] <= level) {
                z_[n] = level;
                pit_.push(static_cast<I>(n));
                pit_.push(static_cast<I>(n));
            } else {
                trace_.push(static_cast<I>(n));
            }
        }
        return trace();
    }

    /// Follows the traced cells uphill until none is left.
    bool trace() {
        return trace_.empty() ||
               trace_uphill(work_, mask_offsets_, trace_, open_, [](T zt) { return zt; },
                            [this](std::size_t n) { return progress_.count(n); },
                            [this](std::size_t t, unsigned w) { labels_.inherit_window(t, w); });
    }

    padded_heights<T>& work_;
    T* z_;
    flood_progress<T> progress_;
    std::ptrdiff_t off_[d8_neighbours];
    d8_mask_offsets<I> mask_offsets_;
    borrowed_flood_queues<decltype(ordered_bits(T())), I> queues_;  // the three below
    radix_heap<decltype(ordered_bits(T())), I>& open_ = queues_->open;
    cell_fifo<I>& pit_ = queues_->pit;
    cell_fifo<I>& trace_ = queues_->trace;
    Labels labels_;
};

}  // namespace detail
}  // namespace gorge
