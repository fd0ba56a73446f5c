// gorge/drainage/detail/tiled_epsilon_fill.hpp — fill_depressions_epsilon's surface on a large
// map, one cache-sized tile at a time. fill_depressions_epsilon hands such maps here, and so does
// the plain fill on one thread, with the plain step (plain_step for succ below: the same argument
// gives the plain fill, the least surface F >= Z from which every cell has a path to an outlet
// that never climbs); not a public header.
//
// The epsilon surface E (depression_fill.hpp, "The epsilon surface") is the least surface with
// E >= Z, E = Z at outlets and a strictly lower data neighbour for every other data cell. Given
// values on the ring of cells around a tile, the tile's least surface for them
// (least_epsilon_surface) is E inside the tile when the ring holds E, and is never below E when
// the ring is never below E (gorge/mpi/fill.hpp, "Epsilon filling across tiles", gives the
// argument; gorge::mpi's epsilon fill works the same way across ranks). So:
//   - every tile starts with +infinity on its ring (nothing known), -infinity off the map's edge
//     (an outlet side); its surface is +infinity, and -infinity at no-data cells. The plain step
//     starts instead from an upper bound of the plain fill wherever it knows no better
//     (plain_fill_bound: the plain fill of the map of 16 x 16 blocks' largest heights, one step
//     up), so that a tile solved before its neighbours drains over every side;
//   - a visit of a tile reads its ring from the surfaces of the tiles around it, and when a value
//     changed, its surface follows. The first time its ring holds a finite value (or at once, for
//     a tile on the map's edge or holding no-data cells) the tile is solved in full
//     (least_epsilon_surface's flood, in the caches); later, ring values only go down, and only
//     the cells that go down with them are searched (lower_epsilon_surface);
//   - when no visit would change a ring, the fill ends. Then every tile's surface is the least
//     one for its ring, read from its neighbours, and E is the only such surface: a cell whose
//     value were above E, taken with the lowest E, would have a neighbour on its drain path that
//     holds its true value, and from it the tile's least surface gives the cell no more than E.
// The order of the visits changes only the work. On one thread, the tile whose ring went down
// the lowest is visited next (a Dijkstra order over tiles, with a binary heap of tiles): a tile
// is then mostly solved after the tiles its water leaves through, and few of its cells go down
// again. On several, sweeps take the tiles by colour (colour = column parity + 2 x row parity:
// tiles of one colour never touch, not even at a corner), colours 0 to 3 and then 3 to 0 in
// turn, so values travel across several tiles in one sweep. Threads solve the tiles of one
// colour side by side; each reads only tiles of the other colours, which do not change
// meanwhile, so what each tile sees, and so the work done, is the same for any number of
// threads above one. On 8192^2 terrain, colour sweeps lowered 29 M cells after the tiles' first
// solves, the Dijkstra order 6.9 M (rough terrain) and 6.8 M (smooth).
// The statistics (fill_options::epsilon_statistics) then run as for the whole map, over the whole
// map, on the same threads (detail/epsilon_statistics.hpp).
// A tile whose solve would step above the largest finite value (possible on a ring that is not
// final yet, when heights come near it) makes the fill start again as one flood over the whole
// map, which gives the same surface or throws std::overflow_error as fill_depressions_epsilon.
// Memory besides the caller's grid, whose heights the tiles read where they are (it is written
// only at the end): each tile's surface with a border of one cell (one T per cell, in one block)
// and one tile's working copy per thread (a solved tile's surface is copied from the working copy
// its flood ran on); with the statistics, one more T per cell (a copy of the heights, then of E)
// and a byte per cell, U reusing the surfaces' block. (Pages touched for the first time cost
// more than the arithmetic on some machines: on a 2-core virtual machine, 256 MiB of fresh pages
// took 0.4 s, as long as all of the statistics' passes. Copying the heights into a block of
// their own made an 8192^2 map's plain fill 14-18 % slower on such fresh memory.)
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../detail/parallel.hpp"
#include "../depression_fill.hpp"
#include "epsilon_statistics.hpp"
#include "tiled_fill.hpp"

namespace gorge {
namespace detail {

/// Number of cells on the ring around a w x h tile: least_epsilon_surface's ring argument.
inline std::size_t ring_count(std::ptrdiff_t w, std::ptrdiff_t h) { return static_cast<std::size_t>(2 * (w + 2) + 2 * h); }

/// Tile coordinates of ring cell i of a w x h tile, in least_epsilon_surface's ring order: the row
/// above (x = -1..w), the row below (x = -1..w), the column left (y = 0..h-1), the column right.
inline void ring_position(std::size_t i, std::ptrdiff_t w, std::ptrdiff_t h, std::ptrdiff_t& x, std::ptrdiff_t& y) {
    const std::size_t row = static_cast<std::size_t>(w + 2), rows = static_cast<std::size_t>(h);
    if (i < 2 * row) {
        x = static_cast<std::ptrdiff_t>(i % row) - 1;
        y = i < row ? -1 : h;
    } else {
        x = i < 2 * row + rows ? -1 : w;
        y = static_cast<std::ptrdiff_t>((i - 2 * row) % rows);
    }
}

/// Ring number of the cell at tile coordinates (x, y) on the ring of a w x h tile (the inverse of
/// ring_position).
inline std::size_t ring_index(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t w, std::ptrdiff_t h) {
    const std::ptrdiff_t row = w + 2;
    if (y < 0) return static_cast<std::size_t>(x + 1);
    if (y == h) return static_cast<std::size_t>(row + x + 1);
    return static_cast<std::size_t>(2 * row + (x < 0 ? 0 : h) + y);
}

/// Calls f(i, x, y) for every ring cell i of a w x h tile at its tile coordinates, in ring order.
template <class F>
void for_each_ring_position(std::ptrdiff_t w, std::ptrdiff_t h, F&& f) {
    for (std::size_t i = 0, n = ring_count(w, h); i < n; ++i) {
        std::ptrdiff_t x, y;
        ring_position(i, w, h, x, y);
        f(i, x, y);
    }
}

/// Lowers a tile's least epsilon surface after some of its ring values went down, instead of
/// solving it again. The least surface is, at every cell, the lowest value that a chain of steps
/// v -> max(Z, succ(v)) carries there from a ring value or an outlet, so the new surface is the
/// old one wherever no chain from a lowered ring cell arrives lower, and the lower chain's value
/// where one does. A Dijkstra search from the lowered ring cells finds those chains (the step is
/// monotone and strictly increasing, so a cell's value is final when it leaves the queue), and
/// touches only the cells that go down.
///   e        the tile's surface, (w + 2) x (h + 2) row-major with a border of one cell;
///            -infinity at no-data cells (so no candidate lands there)
///   z        the tile's heights, w x h cells of rows z_pitch apart (the caller's grid, or a
///            padded copy), read only where the step alone would lower e: no candidate may land
///            on the border, which takes e's border holding -infinity (the tiled fill's, whose
///            heights end at the tile) or z's holding +infinity (gorge::mpi's padded tiles)
///   ring     the ring values now; lowered: the ring cells whose values went down since e was
///            the least surface
///   step     epsilon_step, or plain_step for the least plain fill
template <class I, class T, class Step>
void lower_epsilon_surface(T* e, const T* z, std::ptrdiff_t z_pitch, std::ptrdiff_t w, std::ptrdiff_t h, const T* ring,
                           const std::vector<std::size_t>& lowered, const Step& step) {
    const std::ptrdiff_t pitch = w + 2;
    std::ptrdiff_t off[d8_neighbours], z_off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) {
        off[k] = d8_offset(k, pitch);
        z_off[k] = d8_offset(k, z_pitch);
    }
    radix_heap<decltype(ordered_bits(T())), I> open;
    // Lowers cell n (heights index zn) to the candidate max(Z, up) when that is below its value;
    // true when it did. A candidate is never below up, so up alone rules most cells out before
    // their height is read (as +0 for -0): no-data cells always, border cells where e's border
    // holds -infinity (elsewhere z's +infinity there rules them out).
    auto lower = [&](I n, std::ptrdiff_t zn, T up) {
        if (!(up < e[n])) return false;
        const T candidate = std::max(z[zn] + T(0), up);
        if (!(candidate < e[n])) return false;
        e[n] = candidate;
        return true;
    };
    // The lowered ring cells give their neighbours inside the tile their first candidates (the
    // only place that needs bounds: the ring's own neighbours reach beyond the border).
    for (const std::size_t i : lowered) {
        const T up = step(ring[i]);
        std::ptrdiff_t rx, ry;
        ring_position(i, w, h, rx, ry);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t x = rx + d8_dx[k], y = ry + d8_dy[k];
            if (x < 0 || y < 0 || x >= w || y >= h) continue;
            const I n = static_cast<I>((y + 1) * pitch + (x + 1));
            if (lower(n, y * z_pitch + x, up)) open.push(ordered_bits(e[n]), n);
        }
    }
    // With the plain step, most lowered cells take the value they were reached with (their Z is
    // below it): they are final at once, and go to a first-in, first-out queue, taken before the
    // next key, instead of through the priority queue. (The epsilon step never gives that value.)
    // They form lakes at that value, and go down a row span at a time, as the plain flood raises
    // them (spread_row_span): the queue holds spans (first, last) of cells of one row lowered
    // to the value v; a span is widened along its row, then the cells next to it are tried, those
    // that go down to v queued by runs as spans, those that go down less to the priority queue.
    cell_fifo<I> level;
    // zi(n): n's heights index, from its place in e (an inner cell: one row and column in).
    const I row = static_cast<I>(pitch);
    auto zi = [&](I n) {
        return static_cast<std::ptrdiff_t>(n / row - 1) * z_pitch + static_cast<std::ptrdiff_t>(n % row) - 1;
    };
    if constexpr (std::is_same<Step, plain_step<T>>::value) {
        // Tries cell n (heights index zn) with value v: it joins the lake when it went down to v;
        // it does not when it went down less (queued by its value) or kept its value.
        auto try_cell = [&](I n, std::ptrdiff_t zn, T v) {
            if (!lower(n, zn, v)) return span_cell::left;
            if (e[n] == v) return span_cell::joined;
            open.push(ordered_bits(e[n]), n);
            return span_cell::left;
        };
        const std::size_t p = static_cast<std::size_t>(pitch);
        while (!open.empty()) {
            const I c = open.pop();
            if (ordered_bits(e[c]) != open.last_key()) continue;  // lowered again since pushed: done then
            const T v = e[c];
            const std::ptrdiff_t zc = zi(c);
            for (int k = 0; k < d8_neighbours; ++k) {
                const I n = static_cast<I>(static_cast<std::ptrdiff_t>(c) + off[k]);
                if (try_cell(n, zc + z_off[k], v) != span_cell::joined) continue;
                level.push(n);  // a span of one cell
                level.push(n);
            }
            while (!level.empty()) {
                const std::size_t first = level.pop(), last = level.pop();
                spread_row_span(level, first, last, p, [&](std::size_t i) {
                    const I n = static_cast<I>(i);
                    return try_cell(n, zi(n), v);
                });
            }
            level.clear();
        }
        return;
    }
    while (!open.empty()) {
        I c = open.pop();
        if (ordered_bits(e[c]) != open.last_key()) continue;  // lowered again since pushed: done then
        for (;;) {
            const T v = e[c];
            const T up = step(v);
            const std::ptrdiff_t zc = zi(c);
            for (int k = 0; k < d8_neighbours; ++k) {
                const I n = static_cast<I>(static_cast<std::ptrdiff_t>(c) + off[k]);
                if (!lower(n, zc + z_off[k], up)) continue;
                if (e[n] == v)
                    level.push(n);
                else
                    open.push(ordered_bits(e[n]), n);
            }
            if (level.empty()) break;
            c = level.pop();
        }
        level.clear();
    }
}

/// An upper bound of the plain fill F, the same for the cells of a block of at most
/// plain_fill_bound_block x plain_fill_bound_block cells (each tile cut into such blocks): the
/// plain fill of the map of the blocks' largest heights (8-connected blocks, the edge blocks as
/// outlets), one step up (next_up). Why it bounds F: inside a block every cell reaches every other
/// one through cells no higher than the block's largest height, and neighbouring blocks touch
/// (diagonal ones at a corner), so a path of blocks to an edge block whose largest heights stay
/// at or below a value becomes a path of cells to the map's edge that stays at or below it. The
/// step up makes the bound strictly above F: a tile's ring value that starts from it is lowered
/// below it once the neighbour's surface is final, so the fill ends where it would without it,
/// bit for bit. On maps with no-data cells (a block may then be cut in parts) there is none.
/// The tiled plain fill reads it where a neighbouring tile is not solved yet, or is solved
/// higher: on the smooth 4096^2 benchmark map, a tile solved before the tiles its water leaves
/// through used to hold its basins at +infinity (or at a spill over a side it knew) until they
/// were, and 13 % of the map's cells were lowered a second time.
constexpr std::ptrdiff_t plain_fill_bound_block = 16;
template <class T>
class plain_fill_bound {
public:
    /// Cuts each tile of the map into blocks (the last ones of a tile narrower or shorter).
    void cut(const tile_cuts& columns, const tile_cuts& rows) {
        columns_ = cut_side(columns, block_column_);
        rows_ = cut_side(rows, block_row_);
        max_.assign(static_cast<std::size_t>(columns_) * static_cast<std::size_t>(rows_), T(0));
    }
    /// Folds cells x0 .. x0 + n - 1 of map row y (one tile's row, all finite) into their blocks'
    /// largest heights. A tile's rows come in order, each tile's on one thread, with the same
    /// `scratch` (n values of the block row so far, the caller's).
    void add_row(std::ptrdiff_t x0, std::ptrdiff_t y, const T* in, std::ptrdiff_t n, std::vector<T>& scratch) {
        const std::size_t row = static_cast<std::size_t>(y), first = static_cast<std::size_t>(x0);
        const std::size_t cells = static_cast<std::size_t>(n);
        const std::uint32_t block_row = block_row_[row];
        scratch.resize(cells);
        if (row == 0 || block_row_[row - 1] != block_row) {
            std::copy_n(in, n, scratch.data());
        } else {
            for (std::size_t x = 0; x < cells; ++x) scratch[x] = std::max(scratch[x], in[x]);
        }
        if (row + 1 < block_row_.size() && block_row_[row + 1] == block_row) return;
        for (std::size_t x = 0; x < cells;) {  // the block row is complete
            const std::uint32_t block_column = block_column_[first + x];
            T m = scratch[x];
            for (++x; x < cells && block_column_[first + x] == block_column; ++x) m = std::max(m, scratch[x]);
            max_[static_cast<std::size_t>(block_row) * static_cast<std::size_t>(columns_) + block_column] = m + T(0);  // -0 as +0
        }
    }
    /// Turns the blocks' largest heights into the bound, once every row was added.
    void solve(const char* who) {
        grid_view<T> blocks(max_.data(), columns_, rows_);
        fill_options<T> one_thread;
        one_thread.threads = 1;
        run_whole_map_flood(blocks, one_thread, who);
        for (T& v : max_) v = next_up(v);
    }
    /// The bound at map cell (x, y).
    T at(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return max_[static_cast<std::size_t>(block_row_[static_cast<std::size_t>(y)]) * static_cast<std::size_t>(columns_) +
                    block_column_[static_cast<std::size_t>(x)]];
    }

private:
    static std::ptrdiff_t cut_side(const tile_cuts& tiles, std::vector<std::uint32_t>& block_of) {
        block_of.clear();
        std::uint32_t blocks = 0;
        for (std::ptrdiff_t i = 0; i < tiles.count(); ++i)
            for (std::ptrdiff_t c = 0; c < tiles.size(i); ++c) {
                if (c % plain_fill_bound_block == 0 && (c > 0 || i > 0)) ++blocks;  // a tile starts a block
                block_of.push_back(blocks);
            }
        return static_cast<std::ptrdiff_t>(blocks) + 1;
    }
    std::vector<std::uint32_t> block_column_, block_row_;  // each map column's and row's block
    std::ptrdiff_t columns_ = 0, rows_ = 0;
    std::vector<T> max_;  // the blocks' largest heights, then the bound, row-major
};

/// One tile of the tiled epsilon fill.
template <class T>
struct epsilon_fill_tile {
    std::ptrdiff_t x0 = 0, y0 = 0, w = 0, h = 0;
    std::vector<T> ring;  // the ring values its surface is the least one for
    // The surface with a border of one cell (lower_epsilon_surface's e): padded_cells() elements
    // of the fill's block, from `first` on; null until the tile is solved in full. The heights
    // are the caller's, read where they are.
    std::size_t first = 0;
    T* e = nullptr;
    bool has_outlet = false;  // on the map's edge, or holding no-data cells
    /// Solved in full once (its ring held a finite value, or it holds an outlet).
    bool solved() const { return e != nullptr; }
    std::size_t padded_cells() const { return static_cast<std::size_t>(w + 2) * static_cast<std::size_t>(h + 2); }
    std::size_t padded_index(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return static_cast<std::size_t>((y + 1) * (w + 2) + (x + 1));
    }
};

/// The least surface for Step in tiles of at most tile_side x tile_side cells (the header
/// comment): with epsilon_step, fill_depressions_epsilon (the same surface and statistics, bit for
/// bit); with plain_step, fill_depressions (the same surface; options.epsilon_statistics is not
/// read). heights must be at least 2 x 2 and tile_side at least 2. Progress: the fraction of
/// tiles solved in full (each tile's flood reports inside it), then 1 before the statistics and
/// the result are written.
template <class Step, class T>
fill_stats<T> run_tiled_least_surface(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                      std::ptrdiff_t tile_side) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    constexpr bool epsilon = std::is_same<Step, epsilon_step<T>>::value;
    static_assert(epsilon || std::is_same<Step, plain_step<T>>::value, "the epsilon step or the plain one");
    require_not_empty(heights, who);
    validate(options, who);
    constexpr std::ptrdiff_t min_tile_side = 2;
    if (tile_side < min_tile_side || heights.width() < 2 || heights.height() < 2)
        throw std::invalid_argument(std::string(who) + ": a tiled epsilon fill needs tiles of at least 2 cells and a map of at least 2 x 2");
    const std::ptrdiff_t width = heights.width(), height = heights.height();
    const tile_cuts columns(width, tile_side), rows(height, tile_side);
    const std::vector<std::uint32_t> column_of = columns.tile_of_cells(), row_of = rows.tile_of_cells();
    const std::size_t tile_columns = static_cast<std::size_t>(columns.count());
    const std::size_t tile_count = tile_columns * static_cast<std::size_t>(rows.count());
    constexpr T outlet_side = -std::numeric_limits<T>::infinity();
    constexpr T unknown = std::numeric_limits<T>::infinity();
    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;

    // The tiles' surfaces, in one block (the statistics reuse it for the whole map's U: at least
    // as large, as every tile adds its own border). The heights stay in the caller's grid, which
    // is written only at the end, checked here as the whole-map fill checks them, tile by tile.
    // With the statistics, whose copy of E takes a second such block, that block is taken now and
    // holds the tiles' heights until then (in the tiles' layout, as their surfaces): memory first
    // touched at the end of a long fill cost more on a virtual machine whose host takes freed
    // pages back after a few seconds (an 8192^2 map's copy of E: 0.3-0.6 s, against 0.05 s when
    // it is the block that took the heights). A tile that throws (a non-finite cell) does not stop
    // the others: the error of the first such tile in raster order is rethrown.
    std::vector<epsilon_fill_tile<T>> tiles(tile_count);
    std::size_t block_cells = 0;
    for (std::size_t t = 0; t < tile_count; ++t) {
        epsilon_fill_tile<T>& tile = tiles[t];
        const std::ptrdiff_t tx = static_cast<std::ptrdiff_t>(t % tile_columns), ty = static_cast<std::ptrdiff_t>(t / tile_columns);
        tile.x0 = columns.begin(tx), tile.y0 = rows.begin(ty), tile.w = columns.size(tx), tile.h = rows.size(ty);
        tile.first = block_cells;
        block_cells += tile.padded_cells();  // no overflow: the map's cells plus borders fit in memory below
    }
    const bool heights_copied = epsilon && options.epsilon_statistics;
    std::vector<T, uninitialized_block_allocator<T>> surface_block(block_cells);  // each tile writes its own when solved
    std::vector<T, uninitialized_block_allocator<T>> heights_block(heights_copied ? block_cells : 0);
    // Tile t's heights: in the caller's grid, or their copy.
    auto tile_heights = [&](const epsilon_fill_tile<T>& tile) {
        if (heights_copied)
            return grid_view<const T>(heights_block.data() + tile.first + tile.padded_index(0, 0), tile.w, tile.h, tile.w + 2);
        return grid_view<const T>(heights.row(tile.y0) + tile.x0, tile.w, tile.h, heights.stride());
    };
    const unsigned workers = resolve_threads(options.threads, tile_count);
    // The plain fill's ring values start from an upper bound (the header comment): the blocks'
    // maxima, found in the check's pass, each tile's own blocks.
    const bool bounded = !epsilon && !options.no_data;
    plain_fill_bound<T> bound;
    if (bounded) bound.cut(columns, rows);
    {
        std::vector<std::exception_ptr> errors(tile_count);
        parallel_chunks(tile_count, workers, 1, [&](std::uint64_t begin, std::uint64_t end) {
            std::vector<T> row_max;
            for (std::size_t t = static_cast<std::size_t>(begin); t < end; ++t) {
                epsilon_fill_tile<T>& tile = tiles[t];
                tile.has_outlet = tile.x0 == 0 || tile.y0 == 0 || tile.x0 + tile.w == width || tile.y0 + tile.h == height;
                tile.ring.assign(ring_count(tile.w, tile.h), unknown);  // the first visit reads the map's edge
                try {
                    for (std::ptrdiff_t y = 0; y < tile.h; ++y) {
                        const T* in = heights.row(tile.y0 + y) + tile.x0;
                        T* const copy = heights_copied ? heights_block.data() + tile.first + tile.padded_index(0, y) : nullptr;
                        // One branch-free pass; a row that fails is gone over again.
                        if (!options.no_data && (copy ? copy_finite_row(in, copy, tile.w) : all_finite(in, tile.w))) {
                            if (bounded) bound.add_row(tile.x0, tile.y0 + y, in, tile.w, row_max);
                            continue;
                        }
                        if (copy) std::copy_n(in, tile.w, copy);  // as they are: readers take -0 as +0
                        for (std::ptrdiff_t x = 0; x < tile.w; ++x) {
                            if (is_no_data(in[x], options.no_data)) {
                                tile.has_outlet = true;
                                continue;
                            }
                            if (!std::isfinite(in[x])) throw_not_finite(who, tile.x0 + x, tile.y0 + y);
                        }
                    }
                } catch (...) {
                    errors[t] = std::current_exception();
                }
            }
        });
        for (const std::exception_ptr& error : errors)
            if (error) std::rethrow_exception(error);
    }
    if (bounded) bound.solve(who);
    auto surface_at = [&](std::ptrdiff_t gx, std::ptrdiff_t gy) {
        if (gx < 0 || gy < 0 || gx >= width || gy >= height) return outlet_side;
        const epsilon_fill_tile<T>& u = tiles[row_of[static_cast<std::size_t>(gy)] * tile_columns + column_of[static_cast<std::size_t>(gx)]];
        const std::size_t i = u.padded_index(gx - u.x0, gy - u.y0);
        T v = u.solved() ? u.e[i] : is_no_data(heights.row(gy)[gx], options.no_data) ? outlet_side : unknown;  // not solved yet
        if (bounded) v = std::min(v, bound.at(gx, gy));  // the surface where equal (it is never: see plain_fill_bound)
        return v;
    };

    // Each visit of a tile reads its ring and brings its surface up to date.
    fill_options<T> solve_options;
    solve_options.no_data = options.no_data;
    const Step step(options.no_data);
    std::atomic<bool> cancelled{false}, overflowed{false};
    std::atomic<std::size_t> solved{0};
    double reported = 0.0;  // by the calling thread only
    auto visit = [&](std::size_t t, padded_heights<T>& work, std::vector<T>& fresh, std::vector<std::size_t>& lowered, bool report) {
        epsilon_fill_tile<T>& tile = tiles[t];
        fresh.resize(tile.ring.size());
        lowered.clear();
        bool rose = false, finite = false;
        for_each_ring_position(tile.w, tile.h, [&](std::size_t i, std::ptrdiff_t x, std::ptrdiff_t y) {
            const T v = surface_at(tile.x0 + x, tile.y0 + y);
            fresh[i] = v;
            finite |= v != unknown;
            if (v < tile.ring[i]) lowered.push_back(i);
            rose |= v > tile.ring[i];
        });
        if (lowered.empty() && !rose && (tile.solved() || !tile.has_outlet)) return false;
        tile.ring.swap(fresh);
        const grid_view<const T> z = tile_heights(tile);
        if (tile.solved() && !rose) {
            if (tile.padded_cells() <= std::numeric_limits<std::uint32_t>::max())
                lower_epsilon_surface<std::uint32_t>(tile.e, z.data(), z.stride(), tile.w, tile.h, tile.ring.data(), lowered, step);
            else
                lower_epsilon_surface<std::size_t>(tile.e, z.data(), z.stride(), tile.w, tile.h, tile.ring.data(), lowered, step);
            return true;
        }
        if (!finite && !tile.has_outlet) return false;  // nothing reaches the tile yet
        // In full: the first time, or (never seen: values only go down) after a value rose.
        fill_options<T> tile_options = solve_options;
        if (report && options.progress) {
            const double before = static_cast<double>(solved.load()), tiles_total = static_cast<double>(tile_count);
            tile_options.progress = [&, before, tiles_total](double f) {
                const double now = std::max(reported, (before + f) / tiles_total);
                if (now < 1.0) reported = now;  // 1 is reported once, at the end
                return options.progress(reported);
            };
        }
        // least_epsilon_surface's flood on the worker's working copy, whose storage goes from tile
        // to tile: the copy then holds the surface (-infinity at no-data cells, the ring values
        // on its border, Z at the cells nothing reached), copied in as the tile's (same layout),
        // with -infinity on the border for lower_epsilon_surface.
        try {
            work.load(z, options.no_data, who, tile.x0, tile.y0);
            fill_stats<T> flood_stats;
            if (!flood_epsilon<T, Step>(work, tile.ring.data(), tile_options, flood_stats, who)) {
                cancelled = true;
                return false;
            }
        } catch (const std::overflow_error&) {
            overflowed = true;
            return false;
        }
        for (std::ptrdiff_t y = 0; y < tile.h; ++y) {
            const std::size_t first = work.index(0, y), end = first + static_cast<std::size_t>(tile.w);
            if (work.closed.all_set(first, end)) continue;
            for (std::size_t i = first; i < end; ++i)
                if (!work.closed.test(i)) work.z[i] = unknown;
        }
        if (!tile.solved()) ++solved;
        tile.e = surface_block.data() + tile.first;
        std::copy_n(work.z.data(), tile.padded_cells(), tile.e);
        const std::ptrdiff_t pitch = tile.w + 2;
        std::fill_n(tile.e, pitch, outlet_side);
        std::fill_n(tile.e + (tile.h + 1) * pitch, pitch, outlet_side);
        for (std::ptrdiff_t y = 0; y < tile.h; ++y) tile.e[tile.padded_index(-1, y)] = tile.e[tile.padded_index(tile.w, y)] = outlet_side;
        return true;
    };
    // Starting again as one flood (only the epsilon step can overflow; its progress goes on from
    // where the tiles' stopped).
    auto flood_whole_map = [&] {
        fill_options<T> again = options;
        if (options.progress) again.progress = [&](double f) { return options.progress(std::max(reported, f)); };
        if constexpr (epsilon)
            return run_epsilon_fill(heights, again, who, false);
        else
            return run_whole_map_flood(heights, again, who);
    };
    auto stopped = [&] { return cancelled.load(std::memory_order_relaxed) || overflowed.load(std::memory_order_relaxed); };
    if (workers == 1) {
        // One thread: the tile whose ring went down the lowest goes next (the header comment).
        using key = decltype(ordered_bits(T()));
        const key none = ordered_bits(unknown);  // above every lowered value
        std::vector<key> waiting(tile_count, none);  // the key each tile waits in the queue with
        using entry = std::pair<key, std::size_t>;
        std::priority_queue<entry, std::vector<entry>, std::greater<entry>> queue;
        auto wait = [&](std::size_t t, T least) {
            const key k = ordered_bits(least);
            if (k >= waiting[t]) return;
            waiting[t] = k;
            queue.emplace(k, t);
        };
        for (std::size_t t = 0; t < tile_count; ++t)
            if (tiles[t].has_outlet) wait(t, outlet_side);
        padded_heights<T> work;
        std::vector<T> fresh;
        std::vector<std::size_t> lowered;
        while (!queue.empty() && !stopped()) {
            const std::size_t t = queue.top().second;
            const bool stale = queue.top().first != waiting[t];  // waits again with a lower key
            queue.pop();
            if (stale) continue;
            waiting[t] = none;
            if (!visit(t, work, fresh, lowered, true)) continue;
            // The neighbours whose ring cells in t went down wait with the lowest such value.
            const epsilon_fill_tile<T>& from = tiles[t];
            const std::ptrdiff_t tx = static_cast<std::ptrdiff_t>(t % tile_columns), ty = static_cast<std::ptrdiff_t>(t / tile_columns);
            for (int k = 0; k < d8_neighbours; ++k) {
                const std::ptrdiff_t ux = tx + d8_dx[k], uy = ty + d8_dy[k];
                if (ux < 0 || uy < 0 || ux >= columns.count() || uy >= rows.count()) continue;
                const std::size_t u = static_cast<std::size_t>(uy) * tile_columns + static_cast<std::size_t>(ux);
                const epsilon_fill_tile<T>& to = tiles[u];
                // t's cells on u's ring: t's cells within one cell of u.
                T least = unknown;
                for (std::ptrdiff_t gy = std::max(from.y0, to.y0 - 1); gy < std::min(from.y0 + from.h, to.y0 + to.h + 1); ++gy)
                    for (std::ptrdiff_t gx = std::max(from.x0, to.x0 - 1); gx < std::min(from.x0 + from.w, to.x0 + to.w + 1); ++gx) {
                        const T v = from.e[from.padded_index(gx - from.x0, gy - from.y0)];
                        if (v < to.ring[ring_index(gx - to.x0, gy - to.y0, to.w, to.h)]) least = std::min(least, v);
                    }
                if (least != unknown) wait(u, least);
            }
        }
    } else {
        // Several threads: sweeps by colour (the header comment).
        std::vector<std::vector<std::size_t>> by_colour(4);
        for (std::size_t t = 0; t < tile_count; ++t)
            by_colour[(t % tile_columns) % 2 + 2 * ((t / tile_columns) % 2)].push_back(t);
        std::vector<padded_heights<T>> works(workers);  // each worker's, kept from colour to colour
        for (int sweep = 0;; ++sweep) {
            std::atomic<bool> changed{false};
            for (int k = 0; k < 4 && !stopped(); ++k) {
                const std::vector<std::size_t>& colour = by_colour[static_cast<std::size_t>(sweep % 2 == 0 ? k : 3 - k)];
                std::atomic<std::size_t> next{0};
                run_workers(
                    resolve_threads(options.threads, colour.size()),
                    [&](unsigned worker) {
                        std::vector<T> fresh;
                        std::vector<std::size_t> lowered;
                        for (std::size_t j; !stopped() && (j = next++) < colour.size();)
                            if (visit(colour[j], works[worker], fresh, lowered, worker == 0)) changed = true;
                    },
                    [&] { cancelled = true; });
            }
            if (!changed || stopped()) break;
        }
    }
    if (overflowed) return flood_whole_map();
    if (cancelled) {
        stats.cancelled = true;
        return stats;
    }
    for (const epsilon_fill_tile<T>& tile : tiles) {
        if (!tile.solved()) return flood_whole_map();  // only a step above the largest value leaves one
        unsigned unreached = 0;  // as an unsolved tile (one pass, without a branch per cell)
        for (std::ptrdiff_t y = 0; y < tile.h; ++y) {
            const T* const e = tile.e + tile.padded_index(0, y);
            for (std::ptrdiff_t x = 0; x < tile.w; ++x) unreached |= e[x] == unknown ? 1u : 0u;
        }
        if (unreached != 0) return flood_whole_map();
    }
    if (!fill_report(options, 1.0, stats)) return stats;

    // E into the caller's grid (no-data cells as they are), rows of n cells from `from` on.
    auto write_row = [&](std::ptrdiff_t gx, std::ptrdiff_t gy, const T* from, std::ptrdiff_t n) {
        T* out = heights.row(gy) + gx;
        if (!options.no_data) {
            std::size_t raised = 0;
            for (std::ptrdiff_t x = 0; x < n; ++x) {
                raised += from[x] != out[x] ? 1u : 0u;
                out[x] = from[x];
            }
            stats.raised_cells += raised;
            return;
        }
        for (std::ptrdiff_t x = 0; x < n; ++x) {
            if (is_no_data(out[x], options.no_data)) continue;
            stats.raised_cells += from[x] != out[x] ? 1u : 0u;
            out[x] = from[x];
        }
    };
    if (!epsilon || !options.epsilon_statistics) {
        for (epsilon_fill_tile<T>& tile : tiles) {
            for (std::ptrdiff_t y = 0; y < tile.h; ++y) write_row(tile.x0, tile.y0 + y, tile.e + tile.padded_index(0, y), tile.w);
            tile = epsilon_fill_tile<T>();
        }
        return stats;
    }
    // The statistics, over the whole map (detail/epsilon_statistics.hpp), from a working copy
    // holding E (its ring an outlet side, as after the one flood): the heights' copy is done
    // with, so its block takes E, and the surfaces' block then takes U.
    padded_heights<T> work(width, height, outlet_side, who, std::move(heights_block));
    parallel_chunks(tile_count, workers, 1, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::size_t t = static_cast<std::size_t>(begin); t < end; ++t) {  // tiles own distinct cells
            epsilon_fill_tile<T>& tile = tiles[t];
            for (std::ptrdiff_t y = 0; y < tile.h; ++y)
                std::copy_n(tile.e + tile.padded_index(0, y), tile.w, work.z.data() + work.index(tile.x0, tile.y0 + y));
            tile = epsilon_fill_tile<T>();
        }
    });
    epsilon_statistics<T>(work, heights, workers, stats, epsilon_statistics_band_rows(width), std::move(surface_block));
    for (std::ptrdiff_t y = 0; y < height; ++y) write_row(0, y, work.z.data() + work.index(0, y), width);
    return stats;
}

/// fill_depressions_epsilon in tiles of at most tile_side x tile_side cells: the same surface and
/// statistics, bit for bit (run_tiled_least_surface with the epsilon step).
template <class T>
fill_stats<T> run_tiled_epsilon_fill(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                     std::ptrdiff_t tile_side) {
    return run_tiled_least_surface<epsilon_step<T>>(heights, options, who, tile_side);
}

}  // namespace detail
}  // namespace gorge
