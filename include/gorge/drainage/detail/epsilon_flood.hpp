// gorge/drainage/detail/epsilon_flood.hpp — the epsilon fill's flood, whole maps and single tiles.
// epsilon_flood computes the least epsilon surface in Dijkstra order (gorge/drainage/
// depression_fill.hpp, "The epsilon surface"); flood_epsilon runs it on a map or on a tile
// given the values around it, and least_epsilon_surface is the per-tile solver of the tiled and
// the MPI fills. Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../../config.hpp"
#include "../../detail/validate.hpp"
#include "../../grid/grid.hpp"
#include "../d8.hpp"
#include "../fill_options.hpp"
#include "padded_heights.hpp"
#include "priority_flood.hpp"

namespace gorge {
namespace detail {

/// The epsilon step succ(e) of depression_fill.hpp's header comment: the next value above e
/// (next_up; -infinity steps to the lowest finite value), or one more when that is the no-data
/// value, which a data cell must never hold. Only a finite no-data value can be landed on (a step from a finite value
/// is finite, or +infinity, which the flood rejects), so NaN and infinite ones need no check.
template <class T>
class epsilon_step {
public:
    explicit epsilon_step(const std::optional<T>& no_data)
        : skip_(no_data.has_value() && std::isfinite(*no_data)), skipped_(skip_ ? *no_data : T(0)) {}
    T operator()(T e) const {
        const T s = next_up(e);
        return skip_ && s == skipped_ ? next_up(s) : s;
    }

private:
    bool skip_;
    T skipped_;
};

/// The plain fill's step: the identity. A cell reached from a settled neighbour of value v needs
/// no more than max(Z, v), so epsilon_flood and lower_epsilon_surface with this step give the
/// least plain fill for a ring of values (the minimax path value, to the ring or an outlet)
/// instead of the epsilon surface. The plain fill in tiles runs them so on one thread
/// (detail/tiled_fill.hpp). It assigns only heights the map or the ring holds, never the no-data
/// value; no_data is taken only to be built like epsilon_step.
template <class T>
class plain_step {
public:
    explicit plain_step(const std::optional<T>&) {}
    T operator()(T v) const { return v; }
};

/// Calls f(i) for the padded index i of every ring cell, in the order of least_epsilon_surface's
/// ring argument: the row above (x = -1..w), the row below (x = -1..w), the column left and the
/// column right (y = 0..h-1 each).
template <class T, class F>
void for_each_ring_cell(const padded_heights<T>& work, F&& f) {
    for (std::ptrdiff_t x = -1; x <= work.width; ++x) f(work.index(x, -1));
    for (std::ptrdiff_t x = -1; x <= work.width; ++x) f(work.index(x, work.height));
    for (std::ptrdiff_t y = 0; y < work.height; ++y) f(work.index(-1, y));
    for (std::ptrdiff_t y = 0; y < work.height; ++y) f(work.index(work.width, y));
}

/// The epsilon surface's flood in Dijkstra order (depression_fill.hpp, "The epsilon surface") on
/// the working copy. Its ring cells hold the values around the map (-infinity: an outlet side,
/// +infinity: nothing, finite: a settled neighbour of that E) and its no-data cells -infinity.
/// Settled cells are closed; a settled cell that may still lower an unsettled neighbour waits in
/// the pit queue (values never above the priority queue's keys) or in the priority queue, keyed by
/// its E. A ring cell of finite value waits there too, as index + cells (I must hold twice the
/// padded size); its neighbours are found with bounds checks, which the map's cells do not need.
/// Why the result is E: (1) a cell settled from an expanded cell c gets max(Z, succ(E(c))), and
/// any neighbour u with E(u) < E(c) would have settled it first: u settled before c expanded
/// (follow u's strictly descending neighbours down to a settled cell: that cell, settled with an
/// unsettled neighbour, waits in a queue with a key below E(c), so it expands before c, and so on
/// upwards), and once u expanded or was traced it has no unsettled neighbour; (2) a traced cell t
/// keeps Z(t), which is E(t) whatever its other neighbours: Z(t) > succ(E(p)) >= succ(min E) for
/// the neighbour p it was traced from; (3) cells leave the queues by non-decreasing E: a pit queue
/// value is succ of a value already taken, pushed only when not above the priority queue's
/// smallest key, and everything pushed later is at least that step. (The priority queue drops
/// cells that have no unsettled neighbour left, radix_heap::pop_live: they would settle nothing.)
/// With Upper (the fill of a whole map, whose ring holds only -infinity), the flood also writes
/// the epsilon statistics' U (detail/epsilon_statistics.hpp) of every cell it raises: the larger
/// of its Z and the U of the cell it was raised from, whose E is one step below its own: the
/// highest input height on a path down E, the upper bound of the plain fill that the statistics
/// start from. U holds Z before the flood, which is final on the cells that keep their height.
/// A raised cell waits in the pit queue (a raised_cell_fifo then) with its U, and stays there once
/// taken: the queue writes the U of the cells taken to U's array in one pass, when the flood ends
/// (or when a million are waiting to be written), so that the flood's loop neither waits for U's
/// lines nor shares the caches with them. (Written as the cells were taken, on lines prefetched
/// when they were queued, U cost the 1024^2 drainage map's fill 1.8-2.9 ms more on a Xeon and 0.9-
/// 4.6 ms more on a Zen 4 VM: benchmarks/README.md, "The statistics' U written after the flood".)
/// A raised cell that waits in the priority queue does so as index + cells (no ring cell waits
/// there: the ring holds -infinity), its U written at once; a cell taken from there by its plain
/// index kept its height (traced, or an outlet): its U is its Z, its E, which the key holds.
/// Step: epsilon_step, or plain_step for the plain fill's surface (the same argument with max(Z,
/// E(c)) for max(Z, succ(E(c))): a cell raised to a neighbour's value waits in the pit queue).
template <class I, class T, bool Upper, class Step = epsilon_step<T>>
class epsilon_flood {
public:
    /// upper: U's array with Upper (see above), else ignored.
    epsilon_flood(padded_heights<T>& work, const fill_options<T>& options, fill_stats<T>& stats, const char* who,
                  T* upper)
        : work_(work), who_(who), z_(work.z.data()), u_(upper), cells_(work.z.size()),
          step_(options.no_data), progress_(work, options, stats), mask_offsets_(work.pitch) {
        for (int k = 0; k < d8_neighbours; ++k) off_[k] = work.offset(k);
    }

    /// Runs the flood; false when cancelled (fill_options::progress returned false).
    bool run() {
        if (!seed()) return false;
        if constexpr (Upper) return run_with_upper();
        while (!open_.empty() || !pit_.empty()) {
            bool go_on;
            if (!pit_.empty()) {
                const std::size_t c = pit_.pop();
                if constexpr (spans) {
                    const std::size_t last = pit_.pop();
                    go_on = fill_pit_span(work_, mask_offsets_, pit_, trace_, c, last, z_[c],
                                          [this](std::size_t n, std::size_t) { return close(n); },
                                          [this](std::size_t n, unsigned w) {
                                              return close_window_cells(work_, progress_, n, w);
                                          }) &&
                            trace();
                } else {
                    go_on = expand(c, z_[c], T(0));  // written moments ago: in cache
                }
            } else {
                pit_.clear();  // start over at the front of its storage
                // A map cell with no unsettled neighbour left has nothing to settle (a ring cell
                // is not tested: its neighbours need bounds checks).
                I c;
                if (!open_.pop_live(c, [this](std::size_t i) { return i >= cells_ || work_.has_open_neighbour(i); }))
                    break;  // the pit queue is empty too
                // The value comes from the key: reading z[c] would be a cache miss.
                const T e = from_ordered_bits(open_.last_key());
                go_on = c < cells_ ? expand(c, e, T(0)) : expand_ring(c - cells_, e);
            }
            if (!go_on) return false;
        }
        return true;
    }

private:
    using key = decltype(ordered_bits(T()));
    /// With the plain step every cell in the pit queue holds the level of the last cell taken
    /// from the priority queue (a raised cell takes the value it was reached with, which is never
    /// above the priority queue's keys), so the pit queue holds spans (fill_pit_span) instead of
    /// cells, and a lake is raised without looking at the priority queue's keys.
    static constexpr bool spans = !Upper && std::is_same<Step, plain_step<T>>::value;

    /// run's loop with Upper (see the class comment): a cell from the pit queue brings its U,
    /// which the queue writes to U's array later; a cell from the priority queue as index + cells
    /// is a raised one, whose U is read, else its U is its E, the key.
    bool run_with_upper() {
        raised_.start(u_);
        for (;;) {
            std::size_t c;
            T e, upper;
            if (!raised_.empty()) {
                upper = raised_.template pop<T>(c);
                e = z_[c];  // written moments ago: in cache
            } else {
                I i;
                if (!open_.pop_live(i, [this](std::size_t j) { return work_.has_open_neighbour(j < cells_ ? j : j - cells_); })) {
                    raised_.write_taken();
                    return true;  // both queues are empty
                }
                e = from_ordered_bits(open_.last_key());  // z[c] would be a cache miss
                c = i;
                upper = e;
                if (c >= cells_) {
                    c -= cells_;
                    upper = u_[c];
                }
            }
            if (!expand(c, e, upper)) return false;
        }
    }

    /// Settles the outlets (data cells next to a ring or no-data cell holding -infinity) at their
    /// heights, and queues the ring cells of finite value.
    bool seed() {
        const T below_all = -std::numeric_limits<T>::infinity();
        for (std::ptrdiff_t y = 0; y < work_.height; ++y) {
            const bool edge_row = y == 0 || y == work_.height - 1;
            for (std::ptrdiff_t x = 0; x < work_.width; ++x) {
                // Without no-data, an inner row's inner cells have no closed neighbour.
                if (!edge_row && !work_.has_no_data && x > 0 && x < work_.width - 1) x = work_.width - 1;
                const std::size_t i = work_.index(x, y);
                if (work_.closed.test(i)) continue;  // no-data
                bool outlet = false;
                for (int k = 0; k < d8_neighbours && !outlet; ++k) {
                    const std::size_t q = neighbour_index(i, off_, k);
                    outlet = work_.closed.test(q) && z_[q] == below_all;
                }
                if (!outlet) continue;
                if (!close(i)) return false;
                open_.push(ordered_bits(z_[i]), static_cast<I>(i));
            }
        }
        for_each_ring_cell(work_, [&](std::size_t r) {
            if (std::isfinite(z_[r])) open_.push(ordered_bits(z_[r]), static_cast<I>(r + cells_));
        });
        return true;
    }

    /// Closes cell i (each data cell at most once). False when cancelled.
    bool close(std::size_t i) {
        work_.closed.set(i);
        return progress_.count();
    }

    /// Expands map cell c of value e (with Upper, of U `upper`; else ignored): settles its
    /// unsettled neighbours.
    bool expand(std::size_t c, T e, T upper) {
        const T s = step_(e);
        key bound = 0;
        bool bound_known = false;
        for (unsigned open_n = work_.open_neighbours(c); open_n != 0; open_n &= open_n - 1)
            if (!settle(neighbour_index(c, off_, lowest_bit(open_n)), s, upper, bound, bound_known))
                return false;
        return trace();
    }

    /// Expands ring cell r of value e (its neighbours may lie outside the padded map; those that
    /// wrap around a row end land on ring cells, which are closed).
    bool expand_ring(std::size_t r, T e) {
        GORGE_ASSERT(!Upper, "gorge: the flood's U is for a whole map, whose ring cells are never expanded");
        const T s = step_(e);
        key bound = 0;
        bool bound_known = false;
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t q = static_cast<std::ptrdiff_t>(r) + off_[k];
            if (q < 0 || static_cast<std::size_t>(q) >= cells_ || work_.closed.test(static_cast<std::size_t>(q)))
                continue;
            if (!settle(static_cast<std::size_t>(q), s, T(0), bound, bound_known)) return false;
        }
        return trace();
    }

    /// Settles unsettled cell n, reached from a cell whose step value is s (and, with Upper, whose
    /// U is parent_upper): raised to s when not above it (into the pit queue when s is not above
    /// the priority queue's smallest key, whose lower bound is read once per expansion:
    /// everything pushed meanwhile is >= s), else kept and traced.
    bool settle(std::size_t n, T s, T parent_upper, key& bound, bool& bound_known) {
        if (!close(n)) return false;
        if (z_[n] > s) {
            trace_.push(static_cast<I>(n));
            return true;
        }
        if (!std::isfinite(s)) throw_step_overflow(n);
        const T upper = z_[n] > parent_upper ? z_[n] : parent_upper;  // U, with Upper
        z_[n] = s;
        const key ks = ordered_bits(s);
        if (!bound_known) {
            bound = open_.min_key_bound();
            bound_known = true;
        }
        if (ks <= bound) {
            if constexpr (Upper) {
                raised_.push(n, upper);  // its U written after the flood
            } else {
                pit_.push(static_cast<I>(n));
                if constexpr (spans) pit_.push(static_cast<I>(n));  // a span of one cell
            }
        } else if constexpr (Upper) {
            u_[n] = upper;
            open_.push(ks, static_cast<I>(n + cells_));  // a raised cell
        } else {
            open_.push(ks, static_cast<I>(n));
        }
        return true;
    }

    /// Cell n (padded index) would have to be raised above the largest finite value: names it by
    /// its column and row in the heights the flood was given.
    [[noreturn]] void throw_step_overflow(std::size_t n) const {
        const auto pitch = static_cast<std::size_t>(work_.pitch);
        throw std::overflow_error(std::string(who_) + ": raising cell (" + std::to_string(n % pitch - 1) + ", " +
                                  std::to_string(n / pitch - 1) +
                                  ") one step above the largest finite value would make it infinite");
    }

    /// Follows the traced cells uphill: a neighbour m of traced cell t with Z(m) > succ(Z(t)) keeps
    /// its height too; t waits in the priority queue only if some unsettled neighbour is not that
    /// high (t may have to raise it).
    bool trace() {
        // Most expansions trace nothing: the test here spares them the call.
        return trace_.empty() || trace_queued();
    }
    /// trace() when cells wait in the trace queue; out of line, so that the flood's loop keeps
    /// its registers (inlined into the loop with Upper by GCC 12, it made U's share of the fill
    /// twice as long).
    GORGE_NOINLINE bool trace_queued() {
        return trace_uphill(work_, mask_offsets_, trace_, open_, step_, [this](std::size_t n) { return progress_.count(n); },
                            [](std::size_t, unsigned) {});
    }

    padded_heights<T>& work_;
    const char* who_;
    T* z_;
    T* u_;
    std::size_t cells_;
    Step step_;
    flood_progress<T> progress_;
    std::ptrdiff_t off_[d8_neighbours];
    d8_mask_offsets<I> mask_offsets_;
    borrowed_flood_queues<key, I> queues_;  // the four below
    radix_heap<key, I>& open_ = queues_->open;
    cell_fifo<I>& pit_ = queues_->pit;  // the pit queue, without Upper
    cell_fifo<I>& trace_ = queues_->trace;
    raised_cell_fifo<I, key>& raised_ = queues_->raised;  // the pit queue, with Upper
};

/// Padded maps of up to this many cells flood with 32-bit cell indices, larger ones with 64-bit:
/// ring cells (and, with U, raised cells) wait in the priority queue as index + cells, so an
/// index must hold twice the padded size.
constexpr std::size_t epsilon_flood_narrow_cells = std::numeric_limits<std::uint32_t>::max() / 2;

/// Runs epsilon_flood with cell indices of type I.
template <class I, class T, class Step>
bool flood_epsilon_with(padded_heights<T>& work, const fill_options<T>& options, fill_stats<T>& stats,
                        const char* who, T* upper) {
    if (upper) return epsilon_flood<I, T, true, Step>(work, options, stats, who, upper).run();
    return epsilon_flood<I, T, false, Step>(work, options, stats, who, nullptr).run();
}

/// Loads the ring into the working copy (ring == nullptr: -infinity all round, the map's own
/// edge), marks no-data cells as outlet sides (-infinity) and runs epsilon_flood. False when
/// cancelled. The one code path of fill_depressions_epsilon and least_epsilon_surface.
/// With `upper` (one T per cell of the padded map; only with ring == nullptr), the flood writes
/// the statistics' U there (see epsilon_flood), and -infinity on the ring and the no-data cells.
/// Step: epsilon_step, or plain_step for the least plain fill for the ring (see plain_step).
template <class T, class Step = epsilon_step<T>>
bool flood_epsilon(padded_heights<T>& work, const T* ring, const fill_options<T>& options, fill_stats<T>& stats,
                   const char* who, T* upper = nullptr) {
    GORGE_ASSERT(upper == nullptr || ring == nullptr, "gorge: the flood's U is for a whole map");
    const T below_all = -std::numeric_limits<T>::infinity();
    std::size_t r = 0;
    for_each_ring_cell(work, [&](std::size_t i) {
        const T v = ring ? ring[r] : below_all;
        if (std::isnan(v))
            throw std::invalid_argument(std::string(who) + ": ring value " + std::to_string(r) +
                                        " is NaN (use -infinity for an outlet side, +infinity for none)");
        work.z[i] = v;
        ++r;
    });
    if (work.has_no_data)
        for (std::ptrdiff_t y = 0; y < work.height; ++y)
            for (std::ptrdiff_t x = 0; x < work.width; ++x)
                if (work.valid[work.index(x, y)] == 0) work.z[work.index(x, y)] = below_all;
    // U starts as Z everywhere (-infinity on the ring and no-data cells, like E: never raised),
    // in one sequential copy: the flood then writes only the raised cells'.
    if (upper) std::copy(work.z.begin(), work.z.end(), upper);
    if (work.z.size() <= epsilon_flood_narrow_cells)
        return flood_epsilon_with<std::uint32_t, T, Step>(work, options, stats, who, upper);
    return flood_epsilon_with<std::size_t, T, Step>(work, options, stats, who, upper);
}

/// Least epsilon surface of one tile given fixed values on the ring of cells around it (header
/// comment, "The epsilon surface"); the per-tile solver of a tiled epsilon fill.
///   heights  the tile's input, w x h (not empty; data cells finite, like the fill's).
///   ring     2 * (w + 2) + 2 * h values, in this order: the row above (y = -1, x = -1..w), the
///            row below (y = h, x = -1..w), the column left (x = -1, y = 0..h-1), the column
///            right (x = w, y = 0..h-1). A value v acts as a settled neighbour with E = v:
///              -infinity  an outlet side (map edge, or no-data outside the tile): the tile
///                         cells next to it are outlets and keep their heights;
///              +infinity  nothing drains through there (yet);
///              finite     that neighbour's E (a data cell outside the tile).
///            NaN throws std::invalid_argument. Pass -infinity, never the no-data value, for a
///            no-data cell outside the tile.
///   out      w x h: E, or +infinity for data cells that no outlet or finite ring value reaches;
///            no-data cells (options.no_data) are copied unchanged. May be the same grid as
///            heights (the input is copied first).
///   options  no_data as in fill_depressions_epsilon (no-data cells inside the tile are outlet
///            sides for their neighbours); progress as there (fractions of the tile's data cells).
///   who      the name used in exception messages.
/// Returns raised_cells = reached data cells whose value changed; the epsilon statistics are left
/// 0 (they need the plain fill F; is_overtaken and add_gradient_rise give one cell's share from Z,
/// E, F and the lowest F of its neighbours).
/// Throws std::overflow_error like the fill, and std::invalid_argument for an empty tile, a
/// non-finite data cell, a NaN ring value or an out of another size.
/// With every ring value -infinity the result equals fill_depressions_epsilon bit for bit (both
/// run flood_epsilon); with the ring taken from the single-machine E around the tile (-infinity
/// on the map edge and at no-data cells), it equals the single-machine E inside the tile. With a
/// ring of values that are not yet final (an iteration across tiles), every cell's value is
/// the least surface for that ring, and lowering ring values never raises a cell.
template <class T>
fill_stats<T> least_epsilon_surface(grid_view<const T> heights, const T* ring, grid_view<T> out,
                                    const fill_options<T>& options, const char* who) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    validate(options, who);
    padded_heights<T> work(heights, options.no_data, who);
    if (out.width() != heights.width() || out.height() != heights.height())
        throw std::invalid_argument(std::string(who) + ": out must have the size of heights");
    if (ring == nullptr) throw std::invalid_argument(std::string(who) + ": ring must not be null");
    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;
    if (!flood_epsilon(work, ring, options, stats, who)) return stats;
    if (!fill_report(options, 1.0, stats)) return stats;
    const T unreached = std::numeric_limits<T>::infinity();
    for (std::ptrdiff_t y = 0; y < work.height; ++y) {
        T* r = out.row(y);
        const T* in = heights.row(y);
        for (std::ptrdiff_t x = 0; x < work.width; ++x) {
            const std::size_t i = work.index(x, y);
            const T z = in[x];
            if (work.has_no_data && work.valid[i] == 0) {
                r[x] = z;
                continue;
            }
            const bool reached = work.closed.test(i);
            stats.raised_cells += reached && work.z[i] != z ? 1u : 0u;
            r[x] = reached ? work.z[i] : unreached;
        }
    }
    return stats;
}

}  // namespace detail
}  // namespace gorge
