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
// themselves are read from the caller's grid). The queues outlive the call: each thread keeps
// its last flood's for the next one (emptied; up to 32 MiB; detail/flood_queues.hpp), so that a
// map filled again needs no new memory for its queues, whatever the caller allocates in between
// (the working copy and the statistics' U are allocated at every call); threads that
// end free theirs (a gorge::thread_pool's when the pool is destroyed, a call's own workers when
// the call returns), and release_fill_memory frees the calling thread's.
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
// above the largest finite value would be infinite; that throws std::overflow_error naming the
// cell (and leaves the grid unchanged).
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
// Where the parts are: this header holds the three fills and the dispatch to tiles;
// fill_options.hpp their options and report. In detail/: height_bits.hpp (ulp steps, ordered keys),
// radix_heap.hpp (the priority queue), bit_set.hpp, d8_window.hpp (a 3 x 3 window as bits),
// cell_fifo.hpp and flood_queues.hpp (the queues a thread keeps); padded_heights.hpp (the working
// copy); priority_flood.hpp (progress, traces, lakes raised a row span at a time, the plain
// flood); epsilon_flood.hpp (the epsilon flood, the per-tile solver); epsilon_statistics.hpp;
// planchon_darboux.hpp; tiled_fill.hpp and tiled_epsilon_fill.hpp.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/thread_count.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"
#include "d8.hpp"
#include "fill_options.hpp"
#include "detail/epsilon_flood.hpp"
#include "detail/epsilon_statistics.hpp"
#include "detail/flood_queues.hpp"
#include "detail/planchon_darboux.hpp"
#include "detail/priority_flood.hpp"

namespace gorge {
namespace detail {
// The fills' dispatch, defined at the end of this header: maps large enough go to tiles.
template <class T>
fill_stats<T> run_priority_flood(grid_view<T> heights, const fill_options<T>& options, const char* who);
template <class T>
fill_stats<T> run_epsilon_fill(grid_view<T> heights, const fill_options<T>& options, const char* who,
                               bool may_tile = true);
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
/// non-finite data cell; std::overflow_error (cell named, grid unchanged) if a step would exceed
/// the largest finite value.
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
    return detail::run_planchon_darboux(heights, options, "gorge::fill_depressions_planchon_darboux");
}
template <class T>
fill_stats<T> fill_depressions_planchon_darboux(grid<T>& heights, const fill_options<T>& options = {}) {
    return fill_depressions_planchon_darboux(heights.view(), options);
}

/// Frees the queues the fills above keep on the calling thread for its next fill (at most 32 MiB;
/// see the header comment, "Memory"). For a program done with filling for a while; the next fill
/// on this thread makes them anew. Other threads keep theirs until they end.
inline void release_fill_memory() {
    detail::borrowed_flood_queues<std::uint32_t, std::uint32_t>::release_kept();  // float heights
    detail::borrowed_flood_queues<std::uint32_t, std::size_t>::release_kept();
    detail::borrowed_flood_queues<std::uint64_t, std::uint32_t>::release_kept();  // double heights
    detail::borrowed_flood_queues<std::uint64_t, std::size_t>::release_kept();
}

namespace detail {

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
fill_stats<T> run_epsilon_fill(grid_view<T> heights, const fill_options<T>& options, const char* who, bool may_tile) {
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
}  // namespace gorge

// The tiled fills that run_priority_flood and run_epsilon_fill hand large maps to (tiled_fill.hpp
// includes tiled_epsilon_fill.hpp at its end, so that either header may come first).
#include "detail/tiled_fill.hpp"
