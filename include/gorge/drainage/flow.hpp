// gorge/drainage/flow.hpp — D8 flow directions, flow accumulation and river masks on heightmaps.
//
// D8 (O'Callaghan & Mark 1984, "The extraction of drainage networks from digital elevation data",
// Computer Vision, Graphics, and Image Processing 28, 323-344): each cell drains to one of its 8
// neighbours, the one of steepest descent, where the drop to a diagonal neighbour is divided by
// its distance √2 (square cells). Some recipes take the lowest neighbour instead (no distance
// weighting); d8_rule::lowest does that.
//
// Direction codes (std::uint8_t, defined in gorge/drainage/d8.hpp): 0..7 name the neighbour in the
// order E, SE, S, SW, W, NW, N, NE, with x growing to the east and y growing to the south
// (row-major images); d8_dx / d8_dy give the steps. d8_sink marks a cell without a strictly lower
// neighbour, d8_no_data a no-data cell.
//
// Rules and guarantees:
//   - A direction always points to a strictly lower data cell inside the map, so directions never
//     form cycles. Water is not routed off the map edge or into no-data cells: a cell there with no
//     lower neighbour is a sink, and such edge sinks are the outlets of the map.
//   - Ties: among neighbours of exactly equal slope (or equal height for d8_rule::lowest) the first
//     in the order above wins. The slope to a diagonal neighbour is (drop × (1/√2)) rounded to T.
//   - Flats: a cell of a flat area has no strictly lower neighbour and becomes a sink; so does the
//     bottom of an unfilled pit. gorge does not route water across flats; fill with
//     fill_depressions_epsilon first (gorge/drainage/depression_fill.hpp), after which the only sinks are
//     outlets on the edge or next to no-data.
//   - flow_accumulation visits each cell once in topological order (in-degree counting, then
//     walks that follow a flow path while the next cell has received all its inflow): O(n), no
//     sorting. It counts every cell itself plus everything upstream.
//   - Bad input throws std::invalid_argument naming the cell or parameter: empty views,
//     non-finite heights, direction codes out of range or pointing off the map / into no-data,
//     cycles in caller-made directions, thresholds that are not positive.
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
#include <vector>

#include "../config.hpp"
#include "../grid/grid.hpp"
#include "../grid/no_data.hpp"
#include "d8.hpp"

namespace gorge {

/// How a cell chooses its downstream neighbour.
enum class d8_rule {
    steepest,  ///< largest drop / distance, distance √2 for diagonals (O'Callaghan & Mark) — default
    lowest,    ///< lowest strictly lower neighbour, no distance weighting
};

/// Options of flow_directions.
template <class T>
struct d8_options {
    d8_rule rule = d8_rule::steepest;  ///< default d8_rule::steepest
    /// No-data value, as in fill_options (NaN matches every NaN cell). Default: none.
    std::optional<T> no_data;
};

namespace detail {

/// Keeps the best candidate so far without branches: the first strictly better candidate wins
/// ties, which gives the documented tie rule when candidates come in code order.
template <class T>
GORGE_FORCEINLINE void d8_consider(T score, int code, T& best, int& best_code) {
    const bool take = score > best;
    best = take ? score : best;
    best_code = take ? code : best_code;
}

/// Direction of cell (x, y), checking bounds and no-data: used on the map edge, for small maps
/// and for maps with no-data cells.
template <class T>
std::uint8_t d8_cell_checked(grid_view<const T> h, std::ptrdiff_t x, std::ptrdiff_t y, const d8_options<T>& o) {
    const T z = h(x, y);
    if (is_no_data(z, o.no_data)) return d8_no_data;
    T best = T(0);
    int best_code = d8_sink;
    for (int k = 0; k < d8_neighbours; ++k) {
        const std::ptrdiff_t nx = x + d8_dx[k], ny = y + d8_dy[k];
        if (!h.contains(nx, ny)) continue;
        const T zn = h(nx, ny);
        if (is_no_data(zn, o.no_data)) continue;
        if (o.rule == d8_rule::steepest) {
            d8_consider((z - zn) * d8_inv_distance<T>(k), k, best, best_code);
        } else {
            d8_consider(z - zn, k, best, best_code);
        }
    }
    return static_cast<std::uint8_t>(best_code);
}

/// Directions of the inner cells 1..w-2 of inner row y (all neighbours exist, no no-data).
/// Written without branches, with the D8 table's constant steps (the loop over k unrolls into
/// fixed loads), and with the running best code held as T, so that compilers vectorise the row
/// (compare and blend per neighbour).
template <d8_rule rule, class T>
void d8_inner_row(grid_view<const T> h, std::ptrdiff_t y, std::uint8_t* out) {
    const T* const rows[3] = {h.row(y - 1), h.row(y), h.row(y + 1)};  // rows[1 + d8_dy[k]]
    const T* const mid = rows[1];
    const std::ptrdiff_t last = h.width() - 1;
    const T diagonal = rule == d8_rule::steepest ? inv_sqrt2<T> : T(1);
    for (std::ptrdiff_t x = 1; x < last; ++x) {
        const T z = mid[x];
        T best = T(0);
        T code = T(d8_sink);
        // Neighbours in code order; a later one must be strictly steeper to win, which is the
        // documented tie rule.
        for (int k = 0; k < d8_neighbours; ++k) {
            const T drop = z - rows[1 + d8_dy[k]][x + d8_dx[k]];
            const T score = d8_is_diagonal(k) ? drop * diagonal : drop;
            const bool take = score > best;
            code = take ? T(k) : code;
            best = take ? score : best;
        }
        out[x] = static_cast<std::uint8_t>(code);
    }
}

[[noreturn]] inline void throw_bad_direction(const char* who, std::ptrdiff_t x, std::ptrdiff_t y, const char* why) {
    throw std::invalid_argument(std::string(who) + ": flow direction at cell (" + std::to_string(x) + ", " +
                                std::to_string(y) + ") " + why);
}

/// Topological accumulation: acc (the size of dirs, any stride) must hold each data cell's own
/// contribution on entry and holds the accumulated value on return. Throws for invalid
/// directions or cycles.
template <class A>
void accumulate_flow(grid_view<const std::uint8_t> dirs, grid_view<A> acc, const char* who) {
    const std::ptrdiff_t w = dirs.width(), h = dirs.height(), stride = acc.stride();
    // One byte per cell keeps the walk's memory traffic low: the low nibble is the direction code,
    // the high nibble the number of upstream cells that have not passed their value on yet (0..8),
    // or done_mark once the cell has passed its own value downstream.
    constexpr unsigned nibble = 4, code_mask = 0x0Fu, one_inflow = 1u << nibble;
    constexpr std::uint8_t done_mark = 0xF0;
    // The state has acc's layout (index y * stride + x), so one index serves both; cells of the
    // gaps between rows read as no-data and are skipped.
    const std::size_t span = checked_grid_span(w, h, stride, who);
    std::vector<std::uint8_t, large_block_allocator<std::uint8_t>> state(span, d8_no_data);
    std::ptrdiff_t offset[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) offset[k] = d8_offset(k, stride);
    std::size_t data_cells = 0;
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        const std::uint8_t* r = dirs.row(y);
        const bool edge_row = y == 0 || y == h - 1;
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::uint8_t code = r[x];
            const std::ptrdiff_t i = y * stride + x;
            if (code > d8_no_data) throw_bad_direction(who, x, y, "is not a valid code (0..7, d8_sink or d8_no_data)");
            std::uint8_t& cell = state[static_cast<std::size_t>(i)];  // may already count inflow
            cell = static_cast<std::uint8_t>((cell & ~code_mask) | code);
            if (code == d8_no_data) continue;
            ++data_cells;
            if (code == d8_sink) continue;
            const std::ptrdiff_t tx = x + d8_dx[code], ty = y + d8_dy[code];
            if ((edge_row || x == 0 || x == w - 1) && !dirs.contains(tx, ty))
                throw_bad_direction(who, x, y, "points off the map");
            if (dirs.row(ty)[tx] == d8_no_data) throw_bad_direction(who, x, y, "points into a no-data cell");
            state[static_cast<std::size_t>(i + offset[code])] += one_inflow;
        }
    }
    A* const a = acc.data();
    std::uint8_t* const st = state.data();
    std::size_t visited = 0;
    const std::ptrdiff_t cells = static_cast<std::ptrdiff_t>(span);

    // Walks downstream from every source, each continuing while the next cell has received all
    // its inflow. A walk is a chain of dependent loads that mostly miss the cache, so
    // `walkers` walks advance in turn, each prefetching its next cell one turn ahead: their misses
    // overlap instead of queueing. The schedule is fixed, so results are deterministic (for
    // floating-point weights the summation order is this schedule's, the same on every run).
    // A cell is marked done when its value is final (all inflow added): when a walk takes it.
    constexpr int walkers = 16;
    std::ptrdiff_t current[walkers];  // cell whose final value is passed on next
    std::ptrdiff_t target[walkers];   // its downstream cell (prefetched)
    int active = 0;
    std::ptrdiff_t scan = 0;  // next cell to examine as a possible source
    // Takes the next source in raster order and starts walker k on it; false when none is left.
    auto start_walk = [&](int k) {
        for (; scan < cells; ++scan) {
            const std::uint8_t s = st[scan];
            if ((s >> nibble) != 0 || (s & code_mask) == d8_no_data) continue;  // inflow pending, done, no data
            const unsigned code = s & code_mask;
            st[scan] = static_cast<std::uint8_t>(done_mark | code);
            ++visited;
            if (code == d8_sink) continue;  // an isolated sink: nothing to pass on
            current[k] = scan;
            target[k] = scan + offset[code];
            GORGE_PREFETCH(st + target[k]);
            GORGE_PREFETCH(a + target[k]);
            ++scan;
            return true;
        }
        return false;
    };
    while (active < walkers && start_walk(active)) ++active;
    while (active > 0) {
        for (int k = 0; k < active;) {
            const std::ptrdiff_t next = target[k];
            a[next] += a[current[k]];
            const std::uint8_t s = static_cast<std::uint8_t>(st[next] - one_inflow);
            bool alive = false;
            if ((s >> nibble) == 0) {  // all inflow received: next is final, walk on
                const unsigned code = s & code_mask;
                st[next] = static_cast<std::uint8_t>(done_mark | code);
                ++visited;
                if (code != d8_sink) {
                    current[k] = next;
                    target[k] = next + offset[code];
                    GORGE_PREFETCH(st + target[k]);
                    GORGE_PREFETCH(a + target[k]);
                    alive = true;
                }
            } else {
                st[next] = s;
            }
            if (alive || start_walk(k)) {
                ++k;
            } else {  // no source left: retire walker k by moving the last active one into its slot
                --active;
                current[k] = current[active];
                target[k] = target[active];
            }
        }
    }
    if (visited != data_cells) {
        // Cells left unvisited lie on or downstream of a cycle; name the first of them.
        for (std::ptrdiff_t i = 0; i < cells; ++i)
            if ((st[i] & done_mark) != done_mark && (st[i] & code_mask) != d8_no_data)
                throw_bad_direction(who, i % stride, i / stride, "lies on or below a cycle of directions");
    }
}

}  // namespace detail

/// D8 flow directions of a heightmap (usually filled with fill_depressions_epsilon first),
/// written into `out` (the size of heights, any stride): lets an engine reuse its buffer.
/// Throws std::invalid_argument for a size mismatch or naming the first non-finite data cell
/// (out is then unchanged).
template <class V, class T = std::remove_const_t<V>>
void flow_directions(grid_view<V> heights_view, grid_view<std::uint8_t> out, const d8_options<T>& options = {}) {
    static_assert(std::is_floating_point<T>::value, "gorge::flow_directions needs floating-point heights");
    const grid_view<const T> heights = heights_view;
    detail::require_not_empty(heights, "gorge::flow_directions");
    if (out.width() != heights.width() || out.height() != heights.height())
        throw std::invalid_argument("gorge::flow_directions: out must have the size of heights");
    detail::check_heights(heights, options.no_data, "gorge::flow_directions");
    const std::ptrdiff_t w = heights.width(), h = heights.height();
    // Cells whose neighbours all exist and hold data take the unchecked path; the edge cells, and
    // every cell of a map with a no-data value, take the checked one.
    const bool fast = !options.no_data && w >= 3 && h >= 3;
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        std::uint8_t* row = out.row(y);
        if (fast && y > 0 && y < h - 1) {
            if (options.rule == d8_rule::steepest)
                detail::d8_inner_row<d8_rule::steepest>(heights, y, row);
            else
                detail::d8_inner_row<d8_rule::lowest>(heights, y, row);
            row[0] = detail::d8_cell_checked(heights, 0, y, options);
            row[w - 1] = detail::d8_cell_checked(heights, w - 1, y, options);
        } else {
            for (std::ptrdiff_t x = 0; x < w; ++x) row[x] = detail::d8_cell_checked(heights, x, y, options);
        }
    }
}
/// As above, into a new grid.
template <class V, class T = std::remove_const_t<V>>
grid<std::uint8_t> flow_directions(grid_view<V> heights, const d8_options<T>& options = {}) {
    detail::require_not_empty(heights, "gorge::flow_directions");
    grid<std::uint8_t> dirs(heights.width(), heights.height());
    flow_directions(heights, dirs.view(), options);
    return dirs;
}
template <class T>
grid<std::uint8_t> flow_directions(const grid<T>& heights, const d8_options<T>& options = {}) {
    return flow_directions(heights.view(), options);
}

/// Number of cells draining through each cell, itself included (0 for no-data cells), from D8
/// directions, written into `out` (the size of directions, any stride, not overlapping it): lets
/// an engine reuse its buffer. O(n). Throws std::invalid_argument for a size mismatch, invalid
/// directions (cell named), cycles, or more than 2^32 - 1 cells; out's contents are then
/// unspecified.
inline void flow_accumulation(grid_view<const std::uint8_t> directions, grid_view<std::uint32_t> out) {
    const char* who = "gorge::flow_accumulation";
    detail::require_not_empty(directions, who, "directions");
    if (out.width() != directions.width() || out.height() != directions.height())
        throw std::invalid_argument(std::string(who) + ": out must have the size of directions");
    if (directions.size() > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument(std::string(who) + ": the map has more than 2^32 - 1 cells; "
                                    "use the weighted overload with double weights");
    for (std::ptrdiff_t y = 0; y < directions.height(); ++y) {
        const std::uint8_t* r = directions.row(y);
        std::uint32_t* a = out.row(y);
        for (std::ptrdiff_t x = 0; x < directions.width(); ++x) a[x] = r[x] == d8_no_data ? 0u : 1u;
    }
    detail::accumulate_flow(directions, out, who);
}
/// As above, into a new grid.
inline grid<std::uint32_t> flow_accumulation(grid_view<const std::uint8_t> directions) {
    detail::require_not_empty(directions, "gorge::flow_accumulation", "directions");
    grid<std::uint32_t> acc(directions.width(), directions.height());
    flow_accumulation(directions, acc.view());
    return acc;
}
inline grid<std::uint32_t> flow_accumulation(const grid<std::uint8_t>& directions) {
    return flow_accumulation(directions.view());
}

/// Weighted accumulation: the sum of weights (e.g. rainfall) over each cell and everything
/// upstream of it (0 for no-data cells). weights must have the size of directions and be finite.
template <class W, class T = std::remove_const_t<W>>
grid<T> flow_accumulation(grid_view<const std::uint8_t> directions, grid_view<W> weights_view) {
    const grid_view<const T> weights = weights_view;
    static_assert(std::is_floating_point<T>::value, "gorge::flow_accumulation: weights must be floating-point");
    const char* who = "gorge::flow_accumulation";
    detail::require_not_empty(directions, who, "directions");
    if (weights.width() != directions.width() || weights.height() != directions.height())
        throw std::invalid_argument(std::string(who) + ": weights must have the size of directions");
    weights.check_finite("flow accumulation weight");
    grid<T> acc(directions.width(), directions.height());
    for (std::ptrdiff_t y = 0; y < directions.height(); ++y)
        for (std::ptrdiff_t x = 0; x < directions.width(); ++x)
            acc(x, y) = directions(x, y) == d8_no_data ? T(0) : weights(x, y);
    detail::accumulate_flow(directions, acc.view(), who);
    return acc;
}

/// 1 where at least `threshold` cells drain through the cell, else 0. threshold >= 1.
inline grid<std::uint8_t> river_mask(grid_view<const std::uint32_t> accumulation, std::uint32_t threshold) {
    detail::require_not_empty(accumulation, "gorge::river_mask", "accumulation");
    if (threshold < 1) throw std::invalid_argument("gorge::river_mask: threshold must be >= 1, got 0");
    grid<std::uint8_t> mask(accumulation.width(), accumulation.height());
    for (std::ptrdiff_t y = 0; y < accumulation.height(); ++y)
        for (std::ptrdiff_t x = 0; x < accumulation.width(); ++x)
            mask(x, y) = accumulation(x, y) >= threshold ? 1 : 0;
    return mask;
}
inline grid<std::uint8_t> river_mask(const grid<std::uint32_t>& accumulation, std::uint32_t threshold) {
    return river_mask(accumulation.view(), threshold);
}

/// 1 where the weighted accumulation reaches `threshold`, else 0. threshold finite and > 0.
template <class A, class T = std::remove_const_t<A>, std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
grid<std::uint8_t> river_mask(grid_view<A> accumulation, T threshold) {
    detail::require_not_empty(accumulation, "gorge::river_mask", "accumulation");
    if (!(std::isfinite(threshold) && threshold > T(0)))
        throw std::invalid_argument("gorge::river_mask: threshold must be finite and > 0, got " +
                                    std::to_string(threshold));
    grid<std::uint8_t> mask(accumulation.width(), accumulation.height());
    for (std::ptrdiff_t y = 0; y < accumulation.height(); ++y)
        for (std::ptrdiff_t x = 0; x < accumulation.width(); ++x)
            mask(x, y) = accumulation(x, y) >= threshold ? 1 : 0;
    return mask;
}
template <class T, std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
grid<std::uint8_t> river_mask(const grid<T>& accumulation, T threshold) {
    return river_mask(accumulation.view(), threshold);
}

}  // namespace gorge
