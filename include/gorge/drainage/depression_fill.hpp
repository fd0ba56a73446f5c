// gorge/drainage/depression_fill.hpp — depression filling of heightmaps, so water can run off the map.
//
// A depression (pit) is a set of cells from which no path descends to the map edge. Filling
// raises every such cell to its spill level: the lowest height at which water could leave, i.e.
// the smallest, over all 8-connected paths from the cell to an outlet, of the highest cell on the
// path (a minimax path value, so the filled surface is unique). Three algorithms are offered:
//
//   fill_depressions                   Priority-Flood with a pit queue (Barnes, Lehman & Mulla 2014,
//                                      "Priority-Flood: An optimal depression-filling and
//                                      watershed-labeling algorithm", Computers & Geosciences 62,
//                                      117-127; their "improved" variant, often called
//                                      Priority-Flood+), with slopes traced uphill outside the
//                                      priority queue (Wei, Zhou & Fu 2018; see traced_flood).
//                                      Leaves flat lakes. Maps of 4096^2 cells and more go to
//                                      tiles (fill_options::tiles; detail/tiled_fill.hpp), same
//                                      result bit for bit: on several threads filled once each
//                                      and joined by a graph of their watersheds (Barnes 2016),
//                                      on one solved again from their neighbours as below.
//   fill_depressions_epsilon           The least surface on which every cell drains strictly (an
//                                      epsilon gradient of one ulp per cell, as in their
//                                      Priority-Flood+ε, but defined so that the result does not
//                                      depend on any queue order; see "The epsilon surface"
//                                      below): no flats remain and every cell drains to an outlet.
//                                      Large maps go to tiles as for fill_depressions, solved
//                                      again from their neighbours until nothing changes
//                                      (detail/tiled_epsilon_fill.hpp), same result bit for bit.
//   fill_depressions_planchon_darboux  Planchon & Darboux (2001), "A fast, simple and versatile
//                                      algorithm to fill the depressions of digital elevation
//                                      models", Catena 46, 159-176: iterative minimisation from
//                                      an over-flooded surface. Slower (many full sweeps on
//                                      winding depressions); kept as an independent alternative.
//                                      It gives the same surface as fill_depressions, bit for bit.
//
// How Priority-Flood works: the outlets (map-edge cells, and cells next to no-data) are put in a
// priority queue keyed by height. The lowest open cell is taken; each unvisited neighbour is
// either lower than it (inside a depression: raised to its height) or higher (a new frontier
// cell). Raised cells all share the current height, so instead of the priority queue they go to a
// plain FIFO queue that is drained first — the "improved" variant: cells inside pits cost O(1)
// instead of a priority-queue operation. gorge's plain fills queue a pit's cells as row spans and
// raise a lake a span at a time, as a scan-line seed fill does (see fill_pit_span). The priority
// queue is a radix heap over the heights' bit patterns (monotone keys: the flood level never goes
// down), so the worst case is O(n b) for b-bit heights and typical maps cost a few sequential
// moves per queued cell. Memory: a padded copy of
// the heights, one bit per cell of visited flags (plus a byte per cell when there is a no-data
// value), and the queues; the epsilon fill's statistics add one height per cell (which a map
// filled in one flood holds during the flood) and a byte per cell (on such a map only when their
// search runs; see detail/epsilon_statistics.hpp). Both tiled fills hold instead one tile's
// working copy and, on several threads, the plain fill a filled copy of the map and two bytes of
// watershed label per cell; otherwise the tiles' surfaces (one height per cell; the heights
// themselves are read from the caller's grid).
//
// The epsilon surface. Let Z be the input heights and succ(v) the next representable value above
// v (std::nextafter towards +infinity: one unit in the last place, ulp), except that a step landing
// exactly on the no-data value takes one more ulp, and no step gives -0 (the step up from
// -denorm_min is +0). An outlet is a data cell on the map edge or next to a no-data cell. The epsilon
// fill returns E, the least surface with
//   E >= Z everywhere, E = Z at outlets, and every other data cell has an 8-connected data
//   neighbour with E strictly lower.
// The pointwise minimum of two such surfaces is again one (a cell keeps a strictly lower neighbour
// in the surface it took its value from, and the minimum there is no higher), so the least one
// exists and is unique. It satisfies E(c) = max(Z(c), succ(min over data neighbours n of E(n)))
// away from outlets, and is computed in Dijkstra order: outlets are settled at their heights; the
// lowest settled but unexpanded cell c gives each unsettled neighbour n the value max(Z(n),
// succ(E(c))). The first neighbour to expand n is its lowest (cells expand by non-decreasing E), so
// that value is E(n); cells of equal E may expand in any order. So the result depends on nothing
// but the map: not on the order of cells in the queues, not on mirroring or transposing the map,
// and a map cut into tiles gives the same surface in every tile when each tile is given the
// settled values around it (detail::least_epsilon_surface, the per-tile solver for tiled fills).
// The flood keeps Priority-Flood+'s pit queue: a cell raised to succ(E(c)) goes to the FIFO pit
// queue when that value is not above the smallest key in the priority queue (a lower bound of it,
// read from the radix heap's buckets without moving cells), and into the priority queue otherwise.
// The pit queue's values then never decrease from front to back and never exceed the priority
// queue's keys, so taking the pit queue first keeps the Dijkstra order. (Barnes et al.'s
// Priority-Flood+ε drains a pit's whole gradient through the pit queue even where it climbs past
// lower cells still waiting in the priority queue, so its result depended on the queue order.)
// A cell reached from c with Z(n) > succ(E(c)) keeps its height, whatever else happens: it is
// settled at once and, as in the plain fill, followed uphill outside the priority queue (see
// traced_flood); it enters the priority queue only if it has an unsettled neighbour that may need
// it.
//
// Float precision. A flat of length L rises by L ulps along its drainage. The ulp grows with the
// height: for float it is |h| * 2^-23 (about 1.2e-7 |h|), e.g. 6.1e-5 at h = 1000 and 0.0039 at
// h = 32768. A lake 4000 cells across at h = 1000 therefore tilts by about 0.25 height units, and
// on 16-bit integer heights (0..65535) by up to 16 units: the gradient stops being negligible.
// Heights stay finite and strictly drained in every case (no flat is ever produced silently); what
// degrades is how far the surface departs from the plain fill F (fill_depressions). The fill
// reports it per cell, from Z, E and F: fill_stats::max_gradient_rise = the largest E - F, and
// fill_stats::overtaken_cells = cells with E > Z that have a neighbour with F < Z (they drain
// strictly on the plain surface, but a lake's gradient climbed past them; cells on flats, which
// must rise to drain, are not counted). Only raises that are needed are made: a cell with a
// neighbour whose E is below its own height keeps its height.
// The fill finds F on the raised cells only (E = Z implies F = Z), from above: the highest input
// height on each raised cell's path down E, then lowered where that path climbed past a lower way
// out (detail/epsilon_statistics.hpp: passes over the rows, on fill_options::threads threads, and
// one more height and byte per cell while they run). A map filled in one flood gets those
// highest heights from the flood itself, which knows the cell each raised cell was raised from
// (one more height per cell during the flood); fill_options::epsilon_statistics = false skips
// all of it. When these matter, fill a grid
// of double (ulp = |h| * 2^-52) or shift heights towards 0 first. The only hard limit: a step
// above the largest finite value would be infinite; that throws std::overflow_error (and leaves
// the grid unchanged).
//
// Conventions and guarantees:
//   - 8-connectivity (the D8 neighbourhood of gorge/drainage/d8.hpp, shared with flow.hpp).
//   - Outlets: every valid cell on the map edge, and every valid cell with a no-data neighbour,
//     keeps its height; water leaves the map there.
//   - no-data (optional fill_options::no_data): cells equal to that value (every NaN cell when the
//     value is NaN) are left unchanged, are never filled and never drain through; they act as
//     holes in the map through which water leaves, like the edge. No fill ever writes the
//     no-data value into a data cell: the plain fills only assign heights that data cells already
//     hold, and where an epsilon step would land exactly on the no-data value it takes one more
//     ulp (so D8 and accumulation never mistake a filled cell for a hole).
//   - Every other cell must be finite; otherwise std::invalid_argument names the cell, and the
//     grid is left unchanged (the fill works on a copy until it has succeeded).
//   - No cell is ever written as -0 (so that equal heights have equal bits): a height of -0 is
//     written back as +0, and the epsilon step up from -denorm_min gives +0.
//   - An empty view (a default-made grid_view, or an empty grid) throws std::invalid_argument
//     naming the function, like every other grid algorithm.
//   - Deterministic: every fill's result is unique (the plain fills' minimax surface, the epsilon
//     fill's least surface), whatever the order of the queues, which are gorge's own code anyway.
//   - Progress and cancellation (optional fill_options::progress): reported from the calling
//     thread; a cancelled fill leaves the grid unchanged (the work happens on a copy) and says so
//     in fill_stats::cancelled. Unset, it costs one counter decrement per cell.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// SSE2 (every x86-64 compiler) and AVX, for window_compare's four-lane compares.
#include "../detail/intrinsics.hpp"
#if GORGE_DETAIL_HAS_X86_INTRINSICS
#define GORGE_DETAIL_FILL_SSE2 1
#endif

#include "../config.hpp"
#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"
#include "../grid/no_data.hpp"
#include "d8.hpp"

namespace gorge {

/// Options shared by the depression fills.
template <class T>
struct fill_options {
    /// Cells holding this value have no data: unchanged, never filled, outlets for their
    /// neighbours. A NaN value marks every NaN cell as no-data. Default: none (every cell is data).
    std::optional<T> no_data;
    /// Optional progress report and cancellation, called from the calling thread only, with the
    /// fraction of the work done (0..1, non-decreasing): once with 0 after the map was copied and
    /// checked, then (Priority-Flood fills) every fill_progress_interval cells taken from the
    /// queues, i.e. the fraction of data cells settled, and a last time with 1 when the fill has
    /// succeeded, just before the result is written back. Planchon & Darboux cannot tell how many
    /// sweeps remain: it reports 0 again after every pair of sweeps (a chance to cancel) and 1 at
    /// the end. Return false to cancel: the fill stops, no further call comes, the grid is left
    /// unchanged and the stats say cancelled (raised_cells 0). Default: none (no call; the fills
    /// then cost what they cost without it). An exception it throws propagates, the grid unchanged.
    std::function<bool(double)> progress;
    /// fill_depressions_epsilon only: whether to compute fill_stats::max_gradient_rise and
    /// ::overtaken_cells, which take the plain fill of the raised cells after the flood (how: the
    /// header comment, "The epsilon surface"; on the threads of `threads`). false leaves both 0 and
    /// the surface the same. Default: true.
    bool epsilon_statistics = true;
    /// Both fills (fill_depressions_epsilon: see the end): fill a map of at least 4096^2 cells
    /// (both sides at least 2048) in tiles of 1024^2 (detail/tiled_fill.hpp), with the same result
    /// bit for bit, on any number of threads. Tiles stay in the caches, and run side by side on
    /// threads. On several threads the plain fill's tiles are filled once each and cost a
    /// watershed label per cell; on one they are solved as the epsilon fill's are (below). On one
    /// core: rough terrain, whose whole-map flood takes cells from all over the map, filled
    /// 1.12-1.71x as fast in watershed-labelled tiles at 4096^2 on a Xeon and a Zen 5, 1.27x at
    /// 16384^2 on a Xeon with a 300 MiB cache and 1.0-1.45x at 8192^2 on one with 105 MiB; smooth
    /// terrain, whose flood moves through the map in order, up to about 20 % slower; tiles solved
    /// again from their neighbours filled rough terrain another 1.12-1.24x as fast on an Intel
    /// Xeon virtual machine, smooth terrain 0-7 % slower (benchmarks/README.md, "The plain fill's
    /// tiles on one thread"). false floods the whole map at once on one thread. The progress
    /// fractions of a plain fill on several threads count the cells of the tiles done (with their
    /// own interval inside each tile the calling thread fills); otherwise the tiles solved in
    /// full. fill_depressions_epsilon goes to tiles by the same rule (detail/tiled_epsilon_fill.hpp:
    /// tiles solved again from their neighbours' values until none changes, on one thread lowest
    /// values first; the same surface and statistics bit for bit). On one Xeon core at 8192^2
    /// (benchmarks/README.md, "The epsilon fill's tiles in a Dijkstra order"), rough
    /// terrain filled 1.2-1.4x as fast in tiles as one flood, smooth terrain 3-13 % slower; 16
    /// threads of a Xeon filled rough terrain 3.5x as fast as one flood with the statistics and
    /// 5.2-5.5x without.
    /// Default: true.
    bool tiles = true;
    /// Fills in tiles (see tiles) and the epsilon statistics (epsilon_statistics, whatever the
    /// map's size): threads, the calling thread included (gorge's
    /// thread rule, gorge/detail/parallel.hpp): default 1 (none started), 0 = all hardware
    /// threads, 0..max_threads (1024); never more than one per tile. 16 threads filled 8192^2
    /// maps 6-8x as fast as one whole-map flood on a 16-core Xeon. Progress reports
    /// and the cancellation still come from the calling thread (a cancelled fill stops the others
    /// at their next tile). The result is the same for any value. Checked by every fill.
    unsigned threads = 1;

    /// The first bad member (threads), or an empty result.
    invalid_parameter first_invalid() const { return detail::invalid_thread_count(threads); }
};

/// Cells taken from the Priority-Flood queues between two calls of fill_options::progress (2^16:
/// a 4096 x 4096 map reports 256 times, a millisecond or so apart).
constexpr std::size_t fill_progress_interval = std::size_t(1) << 16;

/// What a fill did.
template <class T>
struct fill_stats {
    /// Cells whose height the fill changed.
    std::size_t raised_cells = 0;
    /// Epsilon fill only: the largest E - F over the data cells, where E is the epsilon-filled and F
    /// the plainly filled surface (fill_depressions) of the same map: how far the epsilon gradient
    /// lifts the surface above the spill levels, in height units (>= 0). 0 for the plain fills,
    /// and when fill_options::epsilon_statistics is false.
    T max_gradient_rise = T(0);
    /// Epsilon fill only: data cells with E > Z (Z the input height) that have a data neighbour with
    /// F < Z: cells that drain strictly on the plain surface (in no depression and on no flat), but
    /// that the epsilon gradient of a lake climbed past (every neighbour's E was >= Z). Non-zero
    /// means ulp steps were large enough to change terrain outside depressions and flats (see the
    /// header comment on precision). 0 for the plain fills, and when
    /// fill_options::epsilon_statistics is false.
    std::size_t overtaken_cells = 0;
    /// fill_options::progress returned false: the fill stopped early and the grid is unchanged
    /// (raised_cells is 0, and so are the epsilon statistics, computed once the flood is done).
    bool cancelled = false;
};

namespace detail {

/// The next representable value above finite v (std::nextafter(v, +inf)), by integer steps on
/// the bit pattern. -0 and +0 both step to the smallest positive subnormal, and the largest
/// negative subnormal (-denorm_min) steps to +0, never -0. The largest finite value steps to
/// +infinity, which the caller detects.
inline float next_up(float v) {
    const float tiny = std::numeric_limits<float>::denorm_min();
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (v > 0.0f) {
        ++bits;  // magnitude up for positives
    } else {
        if (v == 0.0f) return tiny;
        if (v == -tiny) return 0.0f;
        --bits;  // magnitude down for negatives
    }
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}
inline double next_up(double v) {
    const double tiny = std::numeric_limits<double>::denorm_min();
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (v > 0.0) {
        ++bits;
    } else {
        if (v == 0.0) return tiny;
        if (v == -tiny) return 0.0;
        --bits;
    }
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}

/// Integer whose unsigned order equals the numeric order of the (non-NaN) float or double v,
/// except that -0 sorts before +0 (the fills store -0 as +0, so that never matters).
inline std::uint32_t ordered_bits(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    // Negative values: flip every bit (larger magnitudes sort first); others: set the sign bit.
    const std::uint32_t flip = (static_cast<std::uint32_t>(0) - (bits >> 31)) | 0x80000000u;
    return bits ^ flip;
}
inline std::uint64_t ordered_bits(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint64_t flip = (static_cast<std::uint64_t>(0) - (bits >> 63)) | 0x8000000000000000u;
    return bits ^ flip;
}

/// Inverse of ordered_bits.
inline float from_ordered_bits(std::uint32_t key) {
    // Keys with the top bit set came from non-negative values (sign bit was set), others from
    // negative ones (all bits were flipped).
    const std::uint32_t flip = (key >> 31) ? 0x80000000u : ~std::uint32_t(0);
    const std::uint32_t bits = key ^ flip;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}
inline double from_ordered_bits(std::uint64_t key) {
    const std::uint64_t flip = (key >> 63) ? 0x8000000000000000u : ~std::uint64_t(0);
    const std::uint64_t bits = key ^ flip;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// Index of the highest set bit of k (k != 0).
template <class K>
inline unsigned highest_bit(K k) {
    static_assert(std::is_unsigned<K>::value && sizeof(K) <= 8, "highest_bit of an unsigned integer");
    GORGE_ASSERT(k != 0, "gorge: highest_bit of 0");
#if defined(__GNUC__) || defined(__clang__)
    constexpr unsigned top = 63;
    return top - static_cast<unsigned>(__builtin_clzll(static_cast<unsigned long long>(k)));
#else
    unsigned n = 0;
    for (; k > 1; k >>= 1) ++n;
    return n;
#endif
}

/// Index of the lowest set bit of k (k != 0).
template <class K>
inline int lowest_bit(K k) {
    static_assert(std::is_unsigned<K>::value && sizeof(K) <= 8, "lowest_bit of an unsigned integer");
    GORGE_ASSERT(k != 0, "gorge: lowest_bit of 0");
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(static_cast<unsigned long long>(k));
#else
    int n = 0;
    for (; (k & 1u) == 0; k >>= 1) ++n;
    return n;
#endif
}

/// Monotone priority queue of cells keyed by ordered height bits: a radix heap (Ahuja, Mehlhorn,
/// Orlin & Tarjan 1990, "Faster algorithms for the shortest path problem", J. ACM 37(2)) over
/// 8-bit digits. It needs every pushed key to be >= the last popped one, which holds for
/// Priority-Flood: a cell enters the queue only when it is higher than the cell being processed.
/// Cells whose key equals the last popped key wait in one bucket; any other key goes to level l,
/// the highest digit in which it differs from the last popped key, and there to the bucket of its
/// digit l (256 per level). Every key on a lower level, or in a lower bucket of the same level, is
/// smaller, so the smallest key lies in the first non-empty bucket of the lowest non-empty level
/// (found through bit masks). When the equal bucket runs empty, that bucket is moved: its minimum
/// becomes the last key and its cells go to the equal bucket or to lower levels, so a cell moves
/// at most once per digit (four times for float keys, usually once or twice), by sequential vector
/// operations instead of a binary heap's cache-missing sifts.
/// Order: cells leave by increasing key and, among equal keys, the latest pushed first. Each
/// bucket keeps its cells in push order, because cells are only ever moved into buckets that are
/// empty (every level below the one moved from, and the equal bucket). (No fill's result depends
/// on that order; it keeps runs reproducible step by step.)
/// Dead cells (pop_live): a flood's cell waits in the queue because it had a neighbour not yet
/// reached, but by the time the flood level gets to it most such neighbours have been reached
/// from elsewhere, and then the cell has nothing left to do (93 % of the queued cells on the
/// noisy 1024^2 benchmark map). A moved bucket drops those cells instead of moving them down a
/// level and popping them later; the cells left still leave in the order above.
template <class K, class I>
class radix_heap {
public:
    bool empty() const { return size_ == 0; }
    void push(K key, I cell) {
        GORGE_ASSERT(key >= last_, "gorge: radix_heap keys must not decrease");
        if (key == last_)
            equal_.push_back({key, cell});
        else
            push_to_level({key, cell});
        ++size_;
    }
    /// Key of the cell last returned by pop().
    K last_key() const { return last_; }
    /// A lower bound of the smallest key in the queue (the largest key when it is empty), read from
    /// the buckets without moving cells: the equal bucket's key, or else the smallest key the
    /// first non-empty bucket can hold. Every key on level l agrees with last_key() on the digits
    /// above l (moving a bucket keeps that true), and the bucket fixes digit l.
    K min_key_bound() const {
        if (!equal_.empty()) return last_;
        if (non_empty_levels_ == 0) return ~K(0);
        const int level = lowest_bit(non_empty_levels_);
        const K d = static_cast<K>(first_bucket(levels_[static_cast<std::size_t>(level)]));
        const int shift = level * digit_bits;
        const int above = shift + digit_bits;
        const K high = above >= key_bits ? K(0) : static_cast<K>((last_ >> above) << above);
        return static_cast<K>(high | static_cast<K>(d << shift));
    }
    /// Removes and returns a cell of the smallest key; the queue must not be empty.
    I pop() {
        GORGE_ASSERT(size_ != 0, "gorge: radix_heap pop of an empty queue");
        I cell{};
        pop_live(cell, [](I) { return true; });  // every cell live: never runs dry here
        return cell;
    }
    /// Like pop(), dropping dead cells on the way (see the class comment): a bucket that is moved
    /// keeps only the cells for which live(cell) holds. False, and nothing popped, when no cell
    /// is left. The cells in the equal bucket are not tested: the caller finds such a cell with
    /// nothing to do anyway.
    template <class Live>
    bool pop_live(I& cell, Live&& live) {
        if (equal_.empty() && !refill(live)) return false;
        cell = equal_.back().cell;
        equal_.pop_back();
        --size_;
        return true;
    }

private:
    static constexpr int digit_bits = 8;
    static constexpr std::size_t digit_values = std::size_t(1) << digit_bits;
    static constexpr int key_bits = static_cast<int>(sizeof(K)) * std::numeric_limits<unsigned char>::digits;
    static constexpr int levels = key_bits / digit_bits;
    static constexpr std::size_t mask_words = digit_values / 64;
    static_assert(key_bits % digit_bits == 0 && levels <= 32, "whole digits, one level bit each");
    struct entry {
        K key;
        I cell;
    };
    struct level_buckets {
        std::vector<entry> bucket[digit_values];
        std::uint64_t occupied[mask_words] = {};  // bit d % 64 of word d / 64: bucket d is not empty
        unsigned occupied_words = 0;              // bit w: occupied[w] is not 0
    };
    static_assert(mask_words <= 32, "one bit per occupancy word");

    /// The first non-empty bucket of lb, which must have one (no branch: refills come every pop or
    /// two on rough maps, and which word holds the first bucket is hard to predict).
    static std::size_t first_bucket(const level_buckets& lb) {
        const std::size_t w = static_cast<std::size_t>(lowest_bit(lb.occupied_words));
        return w * 64 + static_cast<std::size_t>(lowest_bit(lb.occupied[w]));
    }
    /// Empties bucket d of lb in the occupancy masks (the level's too when it was the last).
    void mark_empty(level_buckets& lb, int level, std::size_t d) {
        std::uint64_t& word = lb.occupied[d / 64];
        word &= ~(std::uint64_t(1) << (d % 64));
        lb.occupied_words &= ~(static_cast<unsigned>(word == 0) << (d / 64));
        non_empty_levels_ &= ~(static_cast<std::uint32_t>(lb.occupied_words == 0) << level);
    }
    /// Files e on level l, the highest digit in which its key differs from the last key; a key
    /// equal to the last key goes to level 0, into the bucket of the last key's own digit 0,
    /// where no other key can go (refill relies on that; push never sends such a key here).
    void push_to_level(const entry& e) {
        // `| 1` puts the equal key on level 0 without a branch, and moves no other difference.
        constexpr unsigned digit = digit_bits;
        const unsigned level = highest_bit(static_cast<K>((e.key ^ last_) | K(1))) / digit;
        const std::size_t d = static_cast<std::size_t>(e.key >> (level * digit)) & (digit_values - 1);
        level_buckets& lb = levels_[level];
        lb.bucket[d].push_back(e);
        lb.occupied[d / 64] |= std::uint64_t(1) << (d % 64);
        lb.occupied_words |= 1u << (d / 64);
        non_empty_levels_ |= std::uint32_t(1) << level;
    }
    /// Moves the first non-empty bucket down, keeping only its live cells (see pop_live), until the
    /// equal bucket holds a cell; false when the queue ran dry.
    template <class Live>
    bool refill(Live&& live) {
        while (non_empty_levels_ != 0) {
            const int level = lowest_bit(non_empty_levels_);
            level_buckets& lb = levels_[static_cast<std::size_t>(level)];
            const std::size_t d = first_bucket(lb);
            mark_empty(lb, level, d);
            std::vector<entry>& from = lb.bucket[d];
            if (level == 0) {
                // All of its keys are equal (level 0 leaves no digit to differ in): the bucket
                // becomes the equal bucket as it is (which is empty: swapped, not copied).
                last_ = from.front().key;
                equal_.swap(from);
                return true;
            }
            std::size_t kept = 0;
            K smallest = ~K(0);
            for (const entry& e : from)
                if (live(e.cell)) {
                    smallest = e.key < smallest ? e.key : smallest;
                    from[kept++] = e;
                }
            size_ -= from.size() - kept;
            from.resize(kept);
            if (kept == 0) continue;
            last_ = smallest;
            if (kept == 1) {
                equal_.swap(from);
                return true;
            }
            // Every cell now agrees with the last key on digit `level` and above: it goes to a lower
            // level, all of them empty, so the push order is kept. The cells of the smallest key land
            // together in level 0's bucket of its digit 0 (push_to_level), which then becomes the
            // equal bucket (empty, as it was popped dry): one loop without a branch on the key.
            for (const entry& e : from) push_to_level(e);
            from.clear();
            const std::size_t d0 = static_cast<std::size_t>(last_) & (digit_values - 1);
            equal_.swap(levels_[0].bucket[d0]);
            mark_empty(levels_[0], 0, d0);
            return true;
        }
        GORGE_ASSERT(size_ == 0, "gorge: radix_heap ran dry with cells counted");
        return false;
    }

    std::vector<entry> equal_;
    std::vector<level_buckets> levels_ = std::vector<level_buckets>(levels);  // 6 KiB each: not on the stack
    std::uint32_t non_empty_levels_ = 0;
    K last_ = 0;
    std::size_t size_ = 0;
};

/// One bit per cell. The flood's visited flags for a 4096 x 4096 map take 2 MiB this way, which
/// stays in cache, where a byte per cell (16 MiB) would miss for every cell taken from the
/// priority queue, whose cells lie all over the map.
class bit_set {
public:
    bit_set() = default;
    /// n bits, all set to value (plus one spare word, so that three() reads across a word
    /// boundary without a check).
    bit_set(std::size_t n, bool value) { assign(n, value); }
    /// Makes it n bits, all set to value, reusing the storage.
    void assign(std::size_t n, bool value) {
        words_.assign((n + word_bits - 1) / word_bits + 1, value ? ~std::uint64_t(0) : std::uint64_t(0));
    }
    bool test(std::size_t i) const { return (words_[i / word_bits] >> (i % word_bits)) & 1u; }
    void set(std::size_t i) { words_[i / word_bits] |= std::uint64_t(1) << (i % word_bits); }
    void reset(std::size_t i) { words_[i / word_bits] &= ~(std::uint64_t(1) << (i % word_bits)); }
    /// Clears bits begin .. end - 1 (end at most n).
    void reset_range(std::size_t begin, std::size_t end) {
        if (begin >= end) return;
        const std::size_t first = begin / word_bits, last = (end - 1) / word_bits;
        const std::uint64_t all = ~std::uint64_t(0);
        const std::uint64_t head = all << (begin % word_bits);            // bits from begin on
        const std::uint64_t tail = all >> (word_bits - 1 - (end - 1) % word_bits);  // bits up to end - 1
        if (first == last) {
            words_[first] &= ~(head & tail);
            return;
        }
        words_[first] &= ~head;
        for (std::size_t k = first + 1; k < last; ++k) words_[k] = 0;
        words_[last] &= ~tail;
    }
    /// Whether bits begin .. end - 1 are all set (end at most n).
    bool all_set(std::size_t begin, std::size_t end) const {
        if (begin >= end) return true;
        const std::size_t first = begin / word_bits, last = (end - 1) / word_bits;
        const std::uint64_t all = ~std::uint64_t(0);
        const std::uint64_t head = all << (begin % word_bits);
        const std::uint64_t tail = all >> (word_bits - 1 - (end - 1) % word_bits);
        if (first == last) return (words_[first] & head & tail) == (head & tail);
        std::uint64_t missing = ~words_[first] & head;
        for (std::size_t k = first + 1; k < last; ++k) missing |= ~words_[k];
        return (missing | (~words_[last] & tail)) == 0;
    }
    /// Sets bits i, i + 1 and i + 2 where bits 0, 1 and 2 of `bits` are set (i + 2 below n). No
    /// branch on whether they cross into the next word (the spare word is there).
    void set_three(std::size_t i, unsigned bits) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // The two bytes from i / 8 on, as three() reads them: one update instead of one per word
        // (fewer instructions on the traces' path; benchmarks/README.md, "A traced cell in fewer instructions").
        unsigned char* const at = reinterpret_cast<unsigned char*>(words_.data()) + i / byte_bits;
        std::uint16_t pair = 0;
        std::memcpy(&pair, at, sizeof pair);
        pair = static_cast<std::uint16_t>(pair | (bits << (i % byte_bits)));
        std::memcpy(at, &pair, sizeof pair);
#else
        const std::size_t w = i / word_bits, s = i % word_bits;
        words_[w] |= std::uint64_t(bits) << s;
        words_[w + 1] |= (std::uint64_t(bits) >> 1) >> (word_bits - 1 - s);  // two legal shifts
#endif
    }
    /// Bits i, i + 1 and i + 2 as bits 0, 1 and 2 of the result (i + 2 must be below n).
    unsigned three(std::size_t i) const {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // Little-endian words: bit i is bit i % 8 of byte i / 8, so the three bits lie in the two
        // bytes from i / 8 on (the spare word keeps the second byte inside the storage).
        std::uint16_t pair = 0;
        std::memcpy(&pair, reinterpret_cast<const unsigned char*>(words_.data()) + i / byte_bits, sizeof pair);
        return (static_cast<unsigned>(pair) >> (i % byte_bits)) & 7u;
#else
        const std::size_t w = i / word_bits;
        const std::size_t s = i % word_bits;
        // The second shift is split so that s == 0 shifts by 64 in two legal steps (giving 0).
        const std::uint64_t bits = (words_[w] >> s) | ((words_[w + 1] << 1) << (word_bits - 1 - s));
        return static_cast<unsigned>(bits & 7u);
#endif
    }

private:
    static constexpr std::size_t word_bits = 64;
    static constexpr std::size_t byte_bits = 8;
    std::vector<std::uint64_t, large_block_allocator<std::uint64_t>> words_;
};

/// A cell's 3 x 3 window as 9 bits (bits 0-2: the row above, 3-5: its own row, 6-8: the row
/// below; west to east in each), and the D8 neighbour mask (bit k for neighbour k) of the window
/// bits that are set (the centre bit is ignored): one look-up instead of eight tests.
struct window_neighbour_table {
    static constexpr int window_side = 3;
    static constexpr unsigned window_cells = window_side * window_side;
    static constexpr unsigned all_cells = (1u << window_cells) - 1u;
    unsigned char mask[1u << window_cells];
};
constexpr window_neighbour_table make_window_neighbour_table() {
    window_neighbour_table t{};
    for (unsigned w = 0; w < (1u << window_neighbour_table::window_cells); ++w) {
        unsigned set = 0;
        for (int k = 0; k < d8_neighbours; ++k) {
            const int bit = (d8_dy[k] + 1) * window_neighbour_table::window_side + (d8_dx[k] + 1);
            if ((w >> bit) & 1u) set |= 1u << k;
        }
        t.mask[w] = static_cast<unsigned char>(set);
    }
    return t;
}
inline constexpr window_neighbour_table window_neighbours = make_window_neighbour_table();

/// For one row pitch, the index offsets of the cells of every D8 neighbour mask, listed: eight
/// per mask, first those of its set bits k in increasing k, then neighbour 0's repeated. A queue
/// appends a mask's cells with one vector add and store (cell_fifo::push_neighbours) instead of a
/// loop whose length a branch predictor cannot guess. Offsets are added in I's modular arithmetic,
/// as the signed type of I's width (I is std::uint32_t only when the padded map has fewer than
/// 2^32 cells, so that its pitch plus one fits in 31 bits).
template <class I>
class d8_mask_offsets {
public:
    using offset = typename std::make_signed<I>::type;
    static constexpr unsigned masks = 1u << d8_neighbours;
    explicit d8_mask_offsets(std::ptrdiff_t pitch) : offsets_(masks * d8_neighbours) {
        for (unsigned m = 0; m < masks; ++m) {
            offset* list = offsets_.data() + m * d8_neighbours;
            int j = 0;
            for (int k = 0; k < d8_neighbours; ++k)
                if ((m >> k) & 1u) list[j++] = static_cast<offset>(d8_offset(k, pitch));
            for (; j < d8_neighbours; ++j) list[j] = static_cast<offset>(d8_offset(0, pitch));
        }
    }
    /// The eight offsets listed for mask.
    const offset* of(unsigned mask) const { return offsets_.data() + mask * d8_neighbours; }

private:
    std::vector<offset> offsets_;
};

/// Number of set bits of a D8 mask.
inline int mask_cells(unsigned mask) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcount(mask);
#else
    int n = 0;
    for (; mask != 0; mask &= mask - 1) ++n;
    return n;
#endif
}

/// First-in, first-out queue of cell indices: the traces' queue and the pit queues. Appending the
/// cells of a D8 mask writes all eight slots and keeps as many as the mask has cells, so the
/// storage always has eight slots of room past the tail. When it must grow while at least half of
/// it lies before the head (cells already taken), it moves the waiting cells to the front instead:
/// a trace across a whole map keeps about its wave front, not every cell it passed, and a cell is
/// moved only when the cells taken outnumber those waiting (O(1) per cell). Callers clear() a
/// queue they have emptied, so that it starts over at the front of its storage, still in cache.
template <class I>
class cell_fifo {
public:
    bool empty() const { return head_ == tail_; }
    std::size_t size() const { return tail_ - head_; }
    void push(I c) {
        make_room();
        cells_[tail_++] = c;
    }
    /// Appends the neighbours in D8 `mask` of cell c (k increasing).
    void push_neighbours(std::size_t c, unsigned mask, const d8_mask_offsets<I>& offsets) {
        make_room();
        const typename d8_mask_offsets<I>::offset* GORGE_RESTRICT off = offsets.of(mask);
        const I from = static_cast<I>(c);
        // Built in a local array, which nothing else can address, so that the compiler makes it
        // one vector add (it kept eight scalar adds when the sums went straight to the storage).
        I cells[d8_neighbours];
        for (int j = 0; j < d8_neighbours; ++j) cells[j] = static_cast<I>(from + static_cast<I>(off[j]));
        std::memcpy(cells_.data() + tail_, cells, sizeof cells);
        tail_ += static_cast<std::size_t>(mask_cells(mask));
    }
    /// Takes the front cell (the queue must not be empty).
    I pop() { return cells_[head_++]; }
    void clear() { head_ = tail_ = 0; }
    /// Cells the storage holds room for (for tests of its bound).
    std::size_t storage() const { return cells_.size(); }

private:
    void make_room() {
        if (GORGE_UNLIKELY(tail_ + d8_neighbours > cells_.size())) grow();
    }
    GORGE_COLD_NOINLINE void grow() {
        if (2 * head_ >= cells_.size()) {
            std::copy(cells_.begin() + static_cast<std::ptrdiff_t>(head_),
                      cells_.begin() + static_cast<std::ptrdiff_t>(tail_), cells_.begin());
            tail_ -= head_;
            head_ = 0;
            if (tail_ + d8_neighbours <= cells_.size()) return;
        }
        constexpr std::size_t first_size = 64;
        cells_.resize(std::max(first_size, 2 * cells_.size()));
    }

    std::vector<I> cells_;
    std::size_t head_ = 0, tail_ = 0;
};

/// The window bits (window_neighbour_table's layout) of the cells around `at` whose value is above
/// v; `at` is a cell of a padded map (a data cell, never the ring), pitch its row length. On
/// rough terrain whether a neighbour is higher is a coin toss that a branch predictor mostly
/// loses, so there is no branch: with SSE2 (float) or AVX (double) each window row is one
/// four-lane compare, the bottom row loaded one cell to the left so that no load reaches past the
/// padded map's end (the row above and the cell's own row read one cell past the window's east
/// end, which the ring and the next row keep inside the map).
template <class T>
inline unsigned window_compare(const T* at, std::ptrdiff_t pitch, T v) {
    constexpr int side = window_neighbour_table::window_side;
    unsigned bits = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            bits |= static_cast<unsigned>(at[dy * pitch + dx] > v) << ((dy + 1) * side + dx + 1);
    return bits;
}
#if defined(GORGE_DETAIL_FILL_SSE2)
/// The window bits from the four-lane compare masks of its rows: the row above and the cell's own
/// row loaded from their west cell (lanes 0-2), the row below from one cell further west (lanes 1-3).
inline unsigned window_from_lane_masks(unsigned above, unsigned own, unsigned below) {
    constexpr int side = window_neighbour_table::window_side;
    constexpr unsigned row = (1u << side) - 1u;
    return (above & row) | (own & row) << side | (below >> 1) << (2 * side);
}
inline unsigned window_compare(const float* at, std::ptrdiff_t pitch, float v) {
    const __m128 level = _mm_set1_ps(v);
    auto row = [&](const float* from) {
        return static_cast<unsigned>(_mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(from), level)));
    };
    return window_from_lane_masks(row(at - pitch - 1), row(at - 1), row(at + pitch - 2));
}
#endif
#if defined(GORGE_DETAIL_FILL_SSE2) && defined(__AVX__)
inline unsigned window_compare(const double* at, std::ptrdiff_t pitch, double v) {
    const __m256d level = _mm256_set1_pd(v);
    auto row = [&](const double* from) {
        return static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(from), level, _CMP_GT_OQ)));
    };
    return window_from_lane_masks(row(at - pitch - 1), row(at - 1), row(at + pitch - 2));
}
#endif

/// 1 when v is finite, else 0: |v| <= the largest finite value is false for infinities and NaN;
/// unlike std::isfinite it is a plain comparison, which GCC vectorizes in the loops below.
template <class T>
std::int32_t finite_flag(T v) {
    return static_cast<std::int32_t>(std::fabs(v) <= std::numeric_limits<T>::max());
}

/// Copies n heights from `in` to `out` in one branch-free pass, -0 as +0 (equal heights get equal
/// bits), and tells whether all were finite (a caller that gets false looks for the cell).
template <class T>
bool copy_finite_row(const T* in, T* out, std::ptrdiff_t n) {
    std::int32_t finite = 1;
    for (std::ptrdiff_t x = 0; x < n; ++x) {
        const T v = in[x];
        finite &= finite_flag(v);
        out[x] = v + T(0);
    }
    return finite != 0;
}

/// Whether n heights from `in` are all finite, in one branch-free pass (copy_finite_row's check
/// without the copy).
template <class T>
bool all_finite(const T* in, std::ptrdiff_t n) {
    std::int32_t finite = 1;
    for (std::ptrdiff_t x = 0; x < n; ++x) finite &= finite_flag(in[x]);
    return finite != 0;
}

/// Working copy of a heightmap with a one-cell border ring: element (x, y) of the map is at
/// (y + 1) * pitch + (x + 1). The ring and the no-data cells start "closed" (already visited), so
/// neighbour loops need no bounds checks.
template <class T>
struct padded_heights {
    std::ptrdiff_t width = 0, height = 0, pitch = 0;
    std::vector<T, uninitialized_block_allocator<T>> z;
    bit_set closed;                    // set = ring, no-data, or already reached by the flood
    std::vector<std::uint8_t> valid;   // 1 = data cell (used only when there is a no-data value)
    bool has_no_data = false;
    std::size_t data_cells = 0;        // cells that are not no-data (each leaves a queue once)

    /// Copies and validates the map; throws (naming the cell) before anything is modified.
    padded_heights(grid_view<const T> src, const std::optional<T>& no_data, const char* who) { load(src, no_data, who); }
    /// Empty, for load().
    padded_heights() = default;
    /// The working copy of a width x height map of data cells only, for a surface the caller
    /// writes in afterwards (the tiled epsilon fill's statistics): the ring's z is `ring_value`
    /// and closed, the map's cells are open and their z left unwritten (a block taken over keeps
    /// its values there; the caller writes every one before it is read).
    /// `storage` is a block to reuse for z (no allocation when it holds enough elements).
    padded_heights(std::ptrdiff_t w, std::ptrdiff_t h, T ring_value, const char* who,
                   std::vector<T, uninitialized_block_allocator<T>> storage = {})
        : width(w), height(h), pitch(padded_side(w, who)), z(std::move(storage)) {
        const std::size_t cells = checked_grid_elements<T>(pitch, padded_side(h, who), who);
        z.resize(cells);
        std::fill_n(z.data(), pitch, ring_value);
        std::fill_n(z.data() + cells - static_cast<std::size_t>(pitch), pitch, ring_value);
        for (std::ptrdiff_t y = 0; y < height; ++y) z[index(-1, y)] = z[index(width, y)] = ring_value;
        closed.assign(cells, true);
        for (std::ptrdiff_t y = 0; y < height; ++y) closed.reset_range(index(0, y), index(0, y) + static_cast<std::size_t>(width));
        data_cells = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
    }

    /// Makes this the working copy of src, reusing the storage (load's tiles of one map); throws
    /// (naming the cell) before anything is modified. A tile gives its origin in the map, so that
    /// messages name the map's cell.
    void load(grid_view<const T> src, const std::optional<T>& no_data, const char* who, std::ptrdiff_t origin_x = 0,
              std::ptrdiff_t origin_y = 0) {
        require_not_empty(src, who);
        width = src.width();
        height = src.height();
        pitch = padded_side(src.width(), who);
        const std::size_t cells = checked_grid_elements<T>(pitch, padded_side(height, who), who);
        z.assign(cells, T(0));
        closed.assign(cells, true);
        has_no_data = no_data.has_value();
        data_cells = 0;
        if (has_no_data) valid.assign(cells, 0);
        if (!has_no_data) {
            // Every cell is a data cell: rows are copied and opened whole, and checked for
            // non-finite values in one branch-free pass each (the cell is looked for only on failure).
            const std::size_t w = static_cast<std::size_t>(width);
            for (std::ptrdiff_t y = 0; y < height; ++y) {
                const T* r = src.row(y);
                if (!copy_finite_row(r, z.data() + index(0, y), width))
                    for (std::ptrdiff_t x = 0; x < width; ++x)
                        if (!std::isfinite(r[x])) throw_not_finite(who, origin_x + x, origin_y + y);
                closed.reset_range(index(0, y), index(0, y) + w);
            }
            data_cells = w * static_cast<std::size_t>(height);
            return;
        }
        for (std::ptrdiff_t y = 0; y < height; ++y) {
            const T* r = src.row(y);
            const std::size_t base = index(0, y);
            for (std::ptrdiff_t x = 0; x < width; ++x) {
                const T v = r[x];
                const std::size_t i = base + static_cast<std::size_t>(x);
                if (has_no_data && is_no_data(v, no_data)) {
                    z[i] = v;  // never read by the fills: the cell stays closed
                    continue;
                }
                if (!std::isfinite(v)) throw_not_finite(who, origin_x + x, origin_y + y);
                z[i] = v + T(0);  // -0 + 0 == +0: equal heights get equal bits
                closed.reset(i);
                ++data_cells;
                if (has_no_data) valid[i] = 1;
            }
        }
    }

    /// n + 2 (the map plus the ring on both sides), or std::invalid_argument if that overflows.
    static std::ptrdiff_t padded_side(std::ptrdiff_t n, const char* who) {
        constexpr std::ptrdiff_t ring = 2;
        if (n > std::numeric_limits<std::ptrdiff_t>::max() - ring)
            throw std::invalid_argument(std::string(who) + ": width or height " + std::to_string(n) +
                                        " plus the working copy's border overflows the addressable size");
        return n + ring;
    }
    std::size_t index(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return static_cast<std::size_t>((y + 1) * pitch + (x + 1));
    }
    /// Index offset of D8 neighbour k (gorge/drainage/d8.hpp).
    std::ptrdiff_t offset(int k) const { return d8_offset(k, pitch); }
    /// The window bits (window_neighbour_table) of the cells around map cell c that are not
    /// closed: three reads of the bit set, one per row.
    unsigned open_window(std::size_t c) const {
        const std::size_t p = static_cast<std::size_t>(pitch);
        constexpr int row_shift = window_neighbour_table::window_side;
        const unsigned closed_bits = closed.three(c - p - 1) | (closed.three(c - 1) << row_shift) |
                                     (closed.three(c + p - 1) << (2 * row_shift));
        return ~closed_bits & window_neighbour_table::all_cells;
    }
    /// Closes the cells of window bits w around map cell c: one bit set update per row.
    void close_window(std::size_t c, unsigned w) {
        const std::size_t p = static_cast<std::size_t>(pitch);
        constexpr int row_shift = window_neighbour_table::window_side;
        constexpr unsigned row = (1u << row_shift) - 1u;
        closed.set_three(c - p - 1, w & row);
        closed.set_three(c - 1, (w >> row_shift) & row);
        closed.set_three(c + p - 1, w >> (2 * row_shift));
    }
    /// The D8 neighbours of map cell c that are not closed: bit k set for neighbour k. The loops
    /// that follow visit only these, still in the order k = 0..7.
    unsigned open_neighbours(std::size_t c) const { return window_neighbours.mask[open_window(c)]; }
    /// The window bits of the cells around map cell c whose height is above v (closed or not).
    unsigned window_above(std::size_t c, T v) const {
        return window_compare(z.data() + c, pitch, v);
    }
    /// Whether map cell c has a neighbour that is not closed (open_neighbours(c) != 0).
    bool has_open_neighbour(std::size_t c) const {
        constexpr unsigned centre = 1u << (window_neighbour_table::window_cells / 2);
        return (open_window(c) & ~centre) != 0;
    }
    /// Calls seed(i) for every outlet cell in raster order: valid cells on the map edge or next
    /// to a no-data cell.
    template <class F>
    void for_each_outlet(F&& seed) const {
        for (std::ptrdiff_t y = 0; y < height; ++y) {
            const bool edge_row = y == 0 || y == height - 1;
            for (std::ptrdiff_t x = 0; x < width; ++x) {
                const std::size_t i = index(x, y);
                if (has_no_data && valid[i] == 0) continue;
                bool outlet = edge_row || x == 0 || x == width - 1;
                if (!outlet && !has_no_data) {
                    x = width - 2;  // an inner row without no-data: only its last cell is an outlet
                    continue;
                }
                for (int k = 0; k < d8_neighbours && !outlet; ++k)
                    outlet = valid[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(i) + offset(k))] == 0;
                if (outlet) seed(i);
            }
        }
    }

    /// Writes the data cells back into dst (no-data cells are untouched) and counts changes.
    std::size_t write_back(grid_view<T> dst) const {
        std::size_t changed = 0;
        for (std::ptrdiff_t y = 0; y < height; ++y) {
            T* r = dst.row(y);
            const std::size_t base = index(0, y);
            for (std::ptrdiff_t x = 0; x < width; ++x) {
                const std::size_t i = base + static_cast<std::size_t>(x);
                if (has_no_data && valid[i] == 0) continue;
                changed += z[i] != r[x] ? 1u : 0u;
                r[x] = z[i];
            }
        }
        return changed;
    }
};

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
    radix_heap<decltype(ordered_bits(T())), I> open_;
    cell_fifo<I> pit_;
    cell_fifo<I> trace_;
    Labels labels_;
};

/// The epsilon step succ(e) of the header comment: the next value above e (next_up; -infinity
/// steps to the lowest finite value), or one more when that is the no-data value, which a data
/// cell must never hold. Only a finite no-data value can be landed on (a step from a finite value
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

/// The epsilon surface's flood in Dijkstra order (header comment, "The epsilon surface") on the
/// working copy. Its ring cells hold the values around the map (-infinity: an outlet side,
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
                    go_on = expand(c, z_[c]);  // written moments ago: in cache
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
                go_on = c < cells_ ? expand(c, e) : expand_ring(c - cells_, e);
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

    /// Expands map cell c of value e: settles its unsettled neighbours.
    bool expand(std::size_t c, T e) {
        const T s = step_(e);
        key bound = 0;
        bool bound_known = false;
        for (unsigned open_n = work_.open_neighbours(c); open_n != 0; open_n &= open_n - 1)
            if (!settle(neighbour_index(c, off_, lowest_bit(open_n)), s, c, bound, bound_known))
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
            if (!settle(static_cast<std::size_t>(q), s, r, bound, bound_known)) return false;
        }
        return trace();
    }

    /// Settles unsettled cell n, reached from cell `parent` (of the map with Upper, whose U is
    /// then read) whose step value is s: raised to s when not above it (into the pit queue when s
    /// is not above the priority queue's smallest key, whose lower bound is read once per
    /// expansion: everything pushed meanwhile is >= s), else kept and traced.
    bool settle(std::size_t n, T s, std::size_t parent, key& bound, bool& bound_known) {
        if (!close(n)) return false;
        if (z_[n] > s) {
            trace_.push(static_cast<I>(n));
            return true;
        }
        if (!std::isfinite(s))
            throw std::overflow_error(std::string(who_) +
                                      ": raising a cell one step above the largest finite value would make it infinite");
        if constexpr (Upper) {
            const T parent_upper = u_[parent];
            u_[n] = z_[n] > parent_upper ? z_[n] : parent_upper;
        }
        z_[n] = s;
        const key ks = ordered_bits(s);
        if (!bound_known) {
            bound = open_.min_key_bound();
            bound_known = true;
        }
        if (ks <= bound) {
            pit_.push(static_cast<I>(n));
            if constexpr (spans) pit_.push(static_cast<I>(n));  // a span of one cell
        } else
            open_.push(ks, static_cast<I>(n));
        return true;
    }

    /// Follows the traced cells uphill: a neighbour m of traced cell t with Z(m) > succ(Z(t)) keeps
    /// its height too; t waits in the priority queue only if some unsettled neighbour is not that
    /// high (t may have to raise it).
    bool trace() {
        // Most expansions trace nothing: the test here spares them the call (not inlined here).
        return trace_.empty() ||
               trace_uphill(work_, mask_offsets_, trace_, open_, step_, [this](std::size_t n) { return progress_.count(n); },
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
    radix_heap<key, I> open_;
    cell_fifo<I> pit_;
    cell_fifo<I> trace_;
};

/// fill_stats' epsilon statistics, the rules in one place (detail/epsilon_statistics.hpp applies
/// them), for a data cell of input height z, epsilon surface value e and plain fill value f.
/// Whether the cell counts in fill_stats::overtaken_cells, given the lowest plain fill value of its
/// data neighbours (+infinity when it has none).
template <class T>
bool is_overtaken(T z, T e, T lowest_neighbour_f) {
    return e > z && lowest_neighbour_f < z;
}
/// Takes the cell's E - F into fill_stats::max_gradient_rise.
template <class T>
void add_gradient_rise(T e, T f, fill_stats<T>& stats) {
    const T rise = e - f;
    if (rise > stats.max_gradient_rise) stats.max_gradient_rise = rise;
}

/// fill_stats' epsilon statistics of a filled map (detail/epsilon_statistics.hpp), on bands of at
/// least this many rows per thread (a band's walks that leave it are finished later on one
/// thread, so bands are not cut thin)
constexpr std::uint64_t epsilon_statistics_min_rows = 64;
/// and of at least this many cells: each of the statistics' three threaded steps starts its
/// threads, which costs tens of microseconds; 65,536 cells take some 100-200 µs a step. (A
/// 128 x 128 map took 352 µs on one thread and 590 µs on two when bands were only 64 rows.)
constexpr std::uint64_t epsilon_statistics_min_band_cells = std::uint64_t(1) << 16;
/// Rows per band of the statistics for a map `width` cells wide.
inline std::uint64_t epsilon_statistics_band_rows(std::ptrdiff_t width) {
    const auto w = static_cast<std::uint64_t>(std::max<std::ptrdiff_t>(width, 1));
    return std::max(epsilon_statistics_min_rows, (epsilon_statistics_min_band_cells + w - 1) / w);
}
template <class T>
std::size_t epsilon_statistics(const padded_heights<T>& work, grid_view<const T> heights, unsigned workers,
                               fill_stats<T>& stats, std::uint64_t band_rows = epsilon_statistics_min_rows,
                               std::vector<T, uninitialized_block_allocator<T>> storage = {},
                               bool upper_given = false);

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
    // Ring cells wait in the priority queue as index + cells: I must hold twice the padded size.
    if (work.z.size() <= std::numeric_limits<std::uint32_t>::max() / 2)
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

/// Side of the tiled plain fill's tiles, in cells (detail/tiled_fill.hpp): a tile's float
/// heights (4 MiB) and labels (2 MiB) stay in a server's L3 cache. 1024 was as fast as 512 or
/// faster on the machines measured (benchmarks/README.md).
constexpr std::ptrdiff_t tiled_fill_tile_side = 1024;
inline bool tiled_fill_applies(std::ptrdiff_t width, std::ptrdiff_t height);
template <class T>
fill_stats<T> run_tiled_priority_flood(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                       std::ptrdiff_t tile_side);

/// The plain fill as one flood over the whole map.
template <class T>
fill_stats<T> run_whole_map_flood(grid_view<T> heights, const fill_options<T>& options, const char* who) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    padded_heights<T> work(heights, options.no_data, who);
    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;
    const bool run = work.z.size() <= std::numeric_limits<std::uint32_t>::max()
                         ? traced_flood<std::uint32_t, T>(work, options, stats).run()
                         : traced_flood<std::size_t, T>(work, options, stats).run();
    if (!run || !fill_report(options, 1.0, stats)) return stats;
    stats.raised_cells = work.write_back(heights);
    return stats;
}

/// The plain fill: in tiles on a map much larger than the caches (detail/tiled_fill.hpp; the same
/// surface, bit for bit), as one flood otherwise.
template <class T>
fill_stats<T> run_priority_flood(grid_view<T> heights, const fill_options<T>& options, const char* who) {
    validate(options, who);
    if (options.tiles && tiled_fill_applies(heights.width(), heights.height()))
        return run_tiled_priority_flood(heights, options, who, tiled_fill_tile_side);
    return run_whole_map_flood(heights, options, who);
}

template <class T>
fill_stats<T> run_tiled_epsilon_fill(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                     std::ptrdiff_t tile_side);

/// fill_depressions_epsilon: in tiles on a map the plain fill would tile (detail/
/// tiled_epsilon_fill.hpp; the same surface and statistics, bit for bit), unless may_tile is
/// false; otherwise flood_epsilon with the map edge as outlet side, then the statistics.
template <class T>
fill_stats<T> run_epsilon_fill(grid_view<T> heights, const fill_options<T>& options, const char* who, bool may_tile = true) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    validate(options, who);
    const unsigned workers = resolve_threads(options.threads, std::numeric_limits<std::uint64_t>::max());
    if (may_tile && options.tiles && tiled_fill_applies(heights.width(), heights.height()))
        return run_tiled_epsilon_fill(heights, options, who, tiled_fill_tile_side);
    padded_heights<T> work(heights, options.no_data, who);
    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;
    // The statistics' U comes from the flood: it knows which cell raised which.
    std::vector<T, uninitialized_block_allocator<T>> upper;
    if (options.epsilon_statistics) upper.resize(work.z.size());
    if (!flood_epsilon<T>(work, nullptr, options, stats, who, options.epsilon_statistics ? upper.data() : nullptr))
        return stats;
    if (options.epsilon_statistics)
        epsilon_statistics<T>(work, heights, workers, stats, epsilon_statistics_band_rows(heights.width()),
                              std::move(upper), true);
    if (!fill_report(options, 1.0, stats)) return stats;
    stats.raised_cells = work.write_back(heights);
    return stats;
}

}  // namespace detail

/// Fills every depression to its spill level, in place (Priority-Flood+, plain). Flat lakes
/// remain; see fill_depressions_epsilon for a surface on which every cell drains.
/// Throws std::invalid_argument for an empty view, and (cell named, grid unchanged) for a
/// non-finite data cell.
template <class T>
fill_stats<T> fill_depressions(grid_view<T> heights, const fill_options<T>& options = {}) {
    return detail::run_priority_flood(heights, options, "gorge::fill_depressions");
}
template <class T>
fill_stats<T> fill_depressions(grid<T>& heights, const fill_options<T>& options = {}) {
    return fill_depressions(heights.view(), options);
}

/// Fills every depression, in place, with the least surface on which every data cell that is not
/// an outlet is strictly higher than a neighbour (one-ulp steps; see "The epsilon surface" in the
/// header comment): following the lowest neighbour from any cell reaches an outlet. The result is
/// unique: it does not depend on any processing order, and mirroring or transposing the map
/// mirrors or transposes it. Never writes -0 or the no-data value (a step landing on it takes one
/// ulp more). See the header comment for the precision limits of float heights, which fill_stats
/// reports (max_gradient_rise, overtaken_cells).
/// Throws std::invalid_argument for an empty view, and (cell named, grid unchanged) for a
/// non-finite data cell; std::overflow_error if a step would exceed the largest finite value.
template <class T>
fill_stats<T> fill_depressions_epsilon(grid_view<T> heights, const fill_options<T>& options = {}) {
    return detail::run_epsilon_fill(heights, options, "gorge::fill_depressions_epsilon");
}
template <class T>
fill_stats<T> fill_depressions_epsilon(grid<T>& heights, const fill_options<T>& options = {}) {
    return fill_depressions_epsilon(heights.view(), options);
}

/// Fills every depression to its spill level, in place, by Planchon & Darboux's method (direct
/// implementation, plain variant without epsilon): the surface W starts at +infinity on data
/// cells and at the height on outlets, then sweeps in alternating raster directions lower W(c)
/// to max(Z(c), min over neighbours of W(n)) until nothing changes. Only existing heights are
/// ever assigned, so the result equals fill_depressions bit for bit. Time: a few sweeps on most
/// terrain, but up to O(n) sweeps on long winding depressions — prefer fill_depressions.
/// Throws like fill_depressions.
template <class T>
fill_stats<T> fill_depressions_planchon_darboux(grid_view<T> heights, const fill_options<T>& options = {}) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    const char* who = "gorge::fill_depressions_planchon_darboux";
    detail::validate(options, who);
    detail::padded_heights<T> work(heights, options.no_data, who);
    // The ring and no-data cells act as outlets: a surface of -infinity there lets every neighbour
    // drop to its own height, exactly as outlets do. Data cells start over-flooded at +infinity.
    const T below_all = -std::numeric_limits<T>::infinity();
    std::vector<T> surface(work.z.size(), below_all);
    for (std::size_t i = 0; i < surface.size(); ++i)
        if (!work.closed.test(i)) surface[i] = std::numeric_limits<T>::infinity();
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = work.offset(k);

    // One relaxation of cell i; returns true when its surface changed.
    auto relax = [&](std::size_t i) {
        const T zi = work.z[i];
        T wi = surface[i];
        if (!(wi > zi)) return false;  // already at the terrain (or a ring / no-data cell)
        bool changed = false;
        for (int k = 0; k < d8_neighbours; ++k) {
            const T wn = surface[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(i) + off[k])];
            if (zi >= wn) {  // a neighbour drains below the terrain: the cell is not in a depression
                wi = zi;
                changed = true;
                break;
            }
            if (wi > wn) {  // the cell's water can leave at the neighbour's level
                wi = wn;
                changed = true;
            }
        }
        surface[i] = wi;
        return changed;
    };

    fill_stats<T> stats;
    if (!detail::fill_report(options, 0.0, stats)) return stats;
    for (bool changed = true; changed;) {
        changed = false;
        for (std::ptrdiff_t y = 0; y < work.height; ++y)
            for (std::ptrdiff_t x = 0; x < work.width; ++x) changed |= relax(work.index(x, y));
        for (std::ptrdiff_t y = work.height - 1; y >= 0; --y)
            for (std::ptrdiff_t x = work.width - 1; x >= 0; --x) changed |= relax(work.index(x, y));
        if (changed && !detail::fill_report(options, 0.0, stats)) return stats;
    }
    if (!detail::fill_report(options, 1.0, stats)) return stats;
    for (std::size_t i = 0; i < surface.size(); ++i)
        if (!work.closed.test(i)) work.z[i] = surface[i];
    stats.raised_cells = work.write_back(heights);
    return stats;
}
template <class T>
fill_stats<T> fill_depressions_planchon_darboux(grid<T>& heights, const fill_options<T>& options = {}) {
    return fill_depressions_planchon_darboux(heights.view(), options);
}

}  // namespace gorge

// The epsilon statistics, and the tiled fills that run_priority_flood and run_epsilon_fill hand
// large maps to (tiled_fill.hpp includes tiled_epsilon_fill.hpp at its end, so that either header
// may come first).
#include "detail/epsilon_statistics.hpp"
#include "detail/tiled_fill.hpp"
