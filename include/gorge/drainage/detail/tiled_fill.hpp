// gorge/drainage/detail/tiled_fill.hpp — the plain depression fill of a large map, one
// cache-sized tile at a time. fill_depressions hands such maps here; not a public header.
//
// On a map much larger than the caches, a Priority-Flood takes its cells in height order from
// all over the map, and much of its time goes to waiting on memory. Cut into tiles that stay in
// the caches, the map is filled the way Barnes (2016), "Parallel Priority-Flood depression
// filling for trillion cell digital elevation models on desktops or clusters", Computers &
// Geosciences 96, 57-64, fills it across the nodes of a cluster (gorge::mpi's tiled fill does the
// same across MPI ranks):
//   1. Each tile is filled on its own, as if its perimeter were the map edge, by the whole-map
//      fill's traced Priority-Flood, with watershed labels: every perimeter cell starts a label
//      of its own (cells on the map edge or next to no-data start the outlet label 0), and a cell
//      takes the label of the cell that closed it, which is never higher in the tile's fill F.
//      Wherever two cells of different labels touch, the labels' spill graph gets an edge at the
//      higher of their two F; a minimum spanning forest of it (Kruskal) keeps every minimax path
//      value with at most one edge per label.
//   2. The labels of all tiles form one graph, with the kept edges and an edge for every pair of
//      touching cells of neighbouring tiles (both are perimeter cells, at their own heights). A
//      minimax search from the outlet label (Dijkstra's order, the largest edge instead of the
//      sum) gives every label its spill level g.
//   3. Each cell's filled height is max(F, g(its label)).
// Why this is the plain fill's surface, bit for bit: the filled height of a cell is the least,
// over paths to an outlet, of the highest F on the path. A cell's label region holds a path from
// the cell to the label's seed that never rises above the cell's F (each cell was closed from a
// cell no higher), so a path in the label graph becomes a path on the map with the same highest
// point (or the cell's own F), and a path on the map crosses from label to label only over
// edges no higher than its own highest point. Only heights the map already holds are assigned.
// Memory besides the caller's grid: F (one T per cell), labels (2 bytes per cell), one tile's
// working copy and the label graph (a few dozen bytes per perimeter cell of the tiles).
// On one thread the tiles go instead the tiled epsilon fill's way with the plain step
// (detail/tiled_epsilon_fill.hpp, plain_step): each tile's least plain fill for the values around
// it, tiles taken lowest ring values first and lowered again from their neighbours, until none
// changes. That is the same surface (the plain fill is the least surface F >= Z from which every
// cell has a path to an outlet that never climbs; the argument is the epsilon fill's), and it
// skips the labels' stores, their graph and the pass that lifts each cell to its label's level,
// for 10-13 % of the cells lowered a second time (6-10 % since the tiles' rings start from an
// upper bound, plain_fill_bound): on one core of an Intel Xeon (a 2-core virtual machine), the
// 8192^2 drainage benchmark map filled in 35.0 ns per cell instead of 43.3 (medians), the smooth
// maps 0-7 % slower (benchmarks/README.md, "The plain fill's tiles on one thread"); the bound
// then took 7-15 % off the smooth maps' time ("Tiles' rings from an upper bound"). It holds one T
// per cell (the tiles' surfaces; their heights are read from the caller's grid) and one tile's
// working copy. On several threads, where the labels' tiles are each filled once and side by
// side, the labels stay: the iteration's colour sweeps lower far more cells again (on two threads
// both took 24 ns per cell on that map).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../detail/parallel.hpp"
#include "../depression_fill.hpp"

#if defined(__AVX512BW__) && defined(__AVX512VL__)
#define GORGE_DETAIL_TILE_LABEL_MASKED_STORE 1
#include "../../detail/intrinsics.hpp"
#else
#define GORGE_DETAIL_TILE_LABEL_MASKED_STORE 0
#endif

namespace gorge {
namespace detail {

/// Maps of at least tiled_fill_min_cells cells, neither side shorter than tiled_fill_min_side,
/// can be filled in tiles (fill_options::tiles says when they are). At 2048^2 cells one flood
/// was faster; thin maps would make thin tiles.
constexpr std::ptrdiff_t tiled_fill_min_cells = std::ptrdiff_t(1) << 24;
constexpr std::ptrdiff_t tiled_fill_min_side = 2 * tiled_fill_tile_side;
/// Whether the fills of a width x height map go to tiles (fill_options::tiles): on any number of
/// threads, once the map is large enough. The tiles used to wait, on one thread, until the
/// heights took more than half the largest cache the C library reported; but a server reports
/// its whole L3 (a Xeon 300 MiB, a 2-core EPYC virtual machine 508 MiB, the sum of chiplets of
/// 32 MiB each), of which one core reaches only a part quickly. At 4096^2 (64 MiB of floats),
/// which both kept as one flood, rough terrain filled 1.12-1.71x as fast in tiles on one core of
/// either, and smooth terrain 0.92-1.08x on the EPYC (benchmarks/README.md, "4096^2 maps in
/// tiles").
inline bool tiled_fill_applies(std::ptrdiff_t width, std::ptrdiff_t height) {
    // width * height >= tiled_fill_min_cells, without the product (which could overflow)
    return width >= tiled_fill_min_side && height >= tiled_fill_min_side &&
           width >= (tiled_fill_min_cells + height - 1) / height;
}

/// A cell's watershed label inside its tile: tile_outlet_label for cells that drain out of the
/// whole map within the tile, 1 + perimeter number for the other perimeter cells' regions, and
/// tile_no_label for no-data cells (and the working copy's ring).
using tile_label = std::uint16_t;
constexpr tile_label tile_outlet_label = 0;
constexpr tile_label tile_no_label = std::numeric_limits<tile_label>::max();
/// The largest tile side whose perimeter numbers fit a tile_label (4 * side - 4 < tile_no_label).
constexpr std::ptrdiff_t tiled_fill_max_tile_side = (std::ptrdiff_t(tile_no_label) + 3) / 4;

/// One side of the map cut into count() tiles whose sizes differ by at most one cell.
class tile_cuts {
public:
    tile_cuts(std::ptrdiff_t cells, std::ptrdiff_t tile_side)
        : count_(cells / tile_side + (cells % tile_side != 0 ? 1 : 0)), base_(cells / count_), extra_(cells % count_) {}
    std::ptrdiff_t count() const { return count_; }
    std::ptrdiff_t begin(std::ptrdiff_t i) const { return i * base_ + std::min(i, extra_); }
    std::ptrdiff_t size(std::ptrdiff_t i) const { return base_ + (i < extra_ ? 1 : 0); }
    /// Which tile each cell of the side lies in.
    std::vector<std::uint32_t> tile_of_cells() const {
        std::vector<std::uint32_t> of;
        of.reserve(static_cast<std::size_t>(begin(count_)));
        for (std::ptrdiff_t i = 0; i < count_; ++i) of.insert(of.end(), static_cast<std::size_t>(size(i)), static_cast<std::uint32_t>(i));
        return of;
    }

private:
    std::ptrdiff_t count_, base_, extra_;
};

/// Perimeter cells of a w x h tile: the cells on its outer ring (gorge::mpi's tiles number them
/// the same way).
inline std::size_t perimeter_count(std::ptrdiff_t w, std::ptrdiff_t h) {
    if (h == 1) return static_cast<std::size_t>(w);
    const std::ptrdiff_t side = w == 1 ? 1 : 2;
    return static_cast<std::size_t>(2 * w + (h - 2) * side);
}
/// Perimeter number of tile cell (x, y), which must lie on the tile's outer ring: raster order
/// (the top row, then the west and east cells of each middle row, then the bottom row).
inline std::size_t perimeter_index(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t w, std::ptrdiff_t h) {
    const std::ptrdiff_t side = w == 1 ? 1 : 2;
    if (y == 0) return static_cast<std::size_t>(x);
    if (y == h - 1) return static_cast<std::size_t>(w + (h - 2) * side + x);
    return static_cast<std::size_t>(w + (y - 1) * side + (x == 0 ? 0 : 1));
}

/// The parts of a minimum spanning forest being built by Kruskal's algorithm over labels
/// 0 .. n - 1 (union-find with path halving; a union keeps the lower root, so the outlet label 0
/// stays a root). Taking edges by rising level, an edge that joins two parts is kept; one within a
/// part offers no minimax path value lower than the edges already kept. gorge::mpi's tiled fill
/// prunes its tiles' spill graphs with it too.
class spanning_forest {
public:
    /// n labels, each a part of its own (reusing the storage).
    void reset(std::size_t n) {
        parent_.resize(n);
        for (std::size_t i = 0; i < n; ++i) parent_[i] = static_cast<std::uint32_t>(i);
    }
    /// Joins the parts of labels a and b; false when they were one part already.
    bool join(std::uint32_t a, std::uint32_t b) {
        const std::uint32_t ra = root(a), rb = root(b);
        if (ra == rb) return false;
        parent_[std::max(ra, rb)] = std::min(ra, rb);
        return true;
    }

private:
    std::uint32_t root(std::uint32_t v) {
        while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];  // path halving
        return v;
    }
    std::vector<std::uint32_t> parent_;
};

/// traced_flood's label hooks for a tile: labels indexed like the tile's working copy.
class tile_flood_labels {
public:
    tile_flood_labels(tile_label* labels, std::ptrdiff_t pitch) : labels_(labels), pitch_(static_cast<std::size_t>(pitch)) {}
    void inherit(std::size_t to, std::size_t from) { labels_[to] = labels_[from]; }
    /// The cells of window bits `window` around `from` (window_neighbour_table's layout) take its
    /// label. No branch on the bits, and no read of the labels around: each window cell gets a
    /// store, to the cell where its bit is set and to a spare label where it is not. (Reading a
    /// window row's labels to blend them in waits on the stores of the cell traced just before,
    /// whose window overlaps: that cost more than the stores.)
    void inherit_window(std::size_t from, unsigned window) {
        constexpr int side = window_neighbour_table::window_side;
        const tile_label label = labels_[from];
        tile_label* const first = labels_ + (from - pitch_ - 1);
#if GORGE_DETAIL_TILE_LABEL_MASKED_STORE
        // AVX-512: one masked store per window row.
        constexpr unsigned row_bits = (1u << side) - 1u;
        const __m128i repeated = _mm_set1_epi16(static_cast<short>(label));
        for (int dy = 0; dy < side; ++dy)
            _mm_mask_storeu_epi16(first + static_cast<std::size_t>(dy) * pitch_,
                                  static_cast<__mmask8>((window >> (dy * side)) & row_bits), repeated);
#else
        for (int dy = 0; dy < side; ++dy) {
            tile_label* const row = first + static_cast<std::size_t>(dy) * pitch_;
            for (int dx = 0; dx < side; ++dx) *((window >> (dy * side + dx)) & 1u ? row + dx : &spare_) = label;
        }
#endif
    }

private:
    tile_label* labels_;
    std::size_t pitch_;
#if !GORGE_DETAIL_TILE_LABEL_MASKED_STORE
    tile_label spare_ = 0;  // where the stores of cells outside the window's bits go
#endif
};

/// The lowest level at which water passes between each pair of labels of one tile: an open
/// addressing table keyed by the pair, kept at most half full.
template <class T>
class label_pair_levels {
public:
    struct entry {
        T level;
        std::uint32_t key;  // smaller label << 16 | larger label
    };

    label_pair_levels() : slots_(first_slots, slot{empty_key, T(0)}) {}

    void add(tile_label a, tile_label b, T level) {
        const std::uint32_t key = a < b ? (std::uint32_t(a) << 16 | b) : (std::uint32_t(b) << 16 | a);
        if (2 * (used_.size() + 1) > slots_.size()) grow();
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t s = spread(key) & mask;; s = (s + 1) & mask) {
            slot& e = slots_[s];
            if (e.key == key) {
                if (level < e.level) e.level = level;
                return;
            }
            if (e.key == empty_key) {
                e = slot{key, level};
                used_.push_back(s);
                return;
            }
        }
    }
    /// The pairs by rising level (then by key), and the table emptied.
    void take_sorted(std::vector<entry>& out) {
        out.clear();
        for (const std::size_t s : used_) {
            out.push_back({slots_[s].level, slots_[s].key});
            slots_[s].key = empty_key;
        }
        used_.clear();
        std::sort(out.begin(), out.end(), [](const entry& p, const entry& q) {
            return p.level != q.level ? p.level < q.level : p.key < q.key;
        });
    }

private:
    struct slot {
        std::uint32_t key;
        T level;
    };
    static constexpr std::uint32_t empty_key = std::numeric_limits<std::uint32_t>::max();  // no pair of labels
    static constexpr std::size_t first_slots = std::size_t(1) << 12;
    static std::size_t spread(std::uint32_t key) {
        constexpr std::uint32_t golden = 0x9E3779B1u;  // 2^32 / golden ratio, odd: a bijection
        return static_cast<std::size_t>((key * golden) >> 8);
    }
    void grow() {
        std::vector<slot> old(2 * slots_.size(), slot{empty_key, T(0)});
        old.swap(slots_);
        std::vector<std::size_t> was;
        was.swap(used_);
        const std::size_t mask = slots_.size() - 1;
        for (const std::size_t s : was) {
            std::size_t t = spread(old[s].key) & mask;
            while (slots_[t].key != empty_key) t = (t + 1) & mask;
            slots_[t] = old[s];
            used_.push_back(t);
        }
    }

    std::vector<slot> slots_;
    std::vector<std::size_t> used_;
};

/// An edge of the label graph between global label numbers (0: the outlets of the whole map).
template <class T>
struct label_edge {
    std::uint32_t a, b;
    T level;
};

/// The spill level of every label: the least, over paths from the outlet label 0, of the
/// highest edge on the path (Dijkstra's order with max for +). Labels no path reaches keep
/// +infinity (no cell has them).
template <class T>
std::vector<T> spill_levels(std::size_t labels, const std::vector<label_edge<T>>& edges) {
    std::vector<std::size_t> start(labels + 1, 0);
    for (const label_edge<T>& e : edges) {
        ++start[e.a + 1];
        ++start[e.b + 1];
    }
    for (std::size_t i = 0; i < labels; ++i) start[i + 1] += start[i];
    std::vector<std::pair<std::uint32_t, T>> next(start.back());
    {
        std::vector<std::size_t> at(start.begin(), start.end() - 1);
        for (const label_edge<T>& e : edges) {
            next[at[e.a]++] = {e.b, e.level};
            next[at[e.b]++] = {e.a, e.level};
        }
    }
    // The levels taken never go down, so the fill's radix heap serves as the priority queue.
    std::vector<T> level(labels, std::numeric_limits<T>::infinity());
    radix_heap<decltype(ordered_bits(T())), std::uint32_t> open;
    level[0] = -std::numeric_limits<T>::infinity();
    open.push(ordered_bits(level[0]), 0);
    while (!open.empty()) {
        const std::uint32_t u = open.pop();
        const T reached = from_ordered_bits(open.last_key());
        if (reached != level[u]) continue;  // lowered again since it was queued
        for (std::size_t k = start[u]; k < start[u + 1]; ++k) {
            const T through = std::max(reached, next[k].second);
            if (through < level[next[k].first]) {
                level[next[k].first] = through;
                open.push(ordered_bits(through), next[k].first);
            }
        }
    }
    return level;
}

// The tiles solved from their neighbours' values (detail/tiled_epsilon_fill.hpp).
template <class Step, class T>
fill_stats<T> run_tiled_least_surface(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                      std::ptrdiff_t tile_side);

/// The plain fill of `heights` in tiles of at most tile_side x tile_side cells (the header
/// comment); the same result as the whole-map flood. heights must be at least 2 x 2, and
/// tile_side in [4, tiled_fill_max_tile_side] (so that every tile is at least 2 x 2).
/// Progress: the fraction of the map's cells in tiles already filled (each tile's flood reports
/// as the whole-map flood does), then 1 before the result is written; on one thread (the header
/// comment) as run_tiled_least_surface reports, by tiles solved in full.
template <class T>
fill_stats<T> run_tiled_priority_flood(grid_view<T> heights, const fill_options<T>& options, const char* who,
                                       std::ptrdiff_t tile_side) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    require_not_empty(heights, who);
    validate(options, who);
    constexpr std::ptrdiff_t min_tile_side = 4;
    if (tile_side < min_tile_side || tile_side > tiled_fill_max_tile_side || heights.width() < 2 || heights.height() < 2)
        throw std::invalid_argument(std::string(who) + ": a tiled fill needs tiles of 4.." +
                                    std::to_string(tiled_fill_max_tile_side) + " cells and a map of at least 2 x 2");
    const std::ptrdiff_t width = heights.width(), height = heights.height();
    const tile_cuts columns(width, tile_side), rows(height, tile_side);
    const std::size_t tiles = static_cast<std::size_t>(columns.count()) * static_cast<std::size_t>(rows.count());
    const unsigned workers = resolve_threads(options.threads, tiles);
    if (workers == 1) return run_tiled_least_surface<plain_step<T>>(heights, options, who, tile_side);
    // Global label numbers: tile t's label l > 0 is first_label[t] + l, the outlet label is 0.
    std::vector<std::uint64_t> first_label(tiles + 1, 0);
    for (std::ptrdiff_t ty = 0; ty < rows.count(); ++ty)
        for (std::ptrdiff_t tx = 0; tx < columns.count(); ++tx) {
            const std::size_t t = static_cast<std::size_t>(ty * columns.count() + tx);
            first_label[t + 1] = first_label[t] + perimeter_count(columns.size(tx), rows.size(ty));
        }
    if (first_label.back() >= std::numeric_limits<std::uint32_t>::max())
        throw std::overflow_error(std::string(who) + ": too many tiles for the tiled fill's label graph");
    auto global_label = [&](std::size_t t, tile_label l) {
        return l == tile_outlet_label ? std::uint32_t(0) : static_cast<std::uint32_t>(first_label[t] + l);
    };

    const std::size_t cells = checked_grid_elements<T>(width, height, who);
    std::vector<T, large_block_allocator<T>> filled(cells);
    std::vector<tile_label, large_block_allocator<tile_label>> labels(cells);
    auto at = [width](std::ptrdiff_t x, std::ptrdiff_t y) {
        return static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x);
    };
    auto is_hole = [&](std::ptrdiff_t x, std::ptrdiff_t y) { return is_no_data(heights.row(y)[x], options.no_data); };

    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;
    const double map_cells = static_cast<double>(width) * static_cast<double>(height);
    auto tile_rect_of = [&](std::size_t t, std::ptrdiff_t& x0, std::ptrdiff_t& y0, std::ptrdiff_t& w, std::ptrdiff_t& h) {
        const std::ptrdiff_t tx = static_cast<std::ptrdiff_t>(t % static_cast<std::size_t>(columns.count()));
        const std::ptrdiff_t ty = static_cast<std::ptrdiff_t>(t / static_cast<std::size_t>(columns.count()));
        x0 = columns.begin(tx), y0 = rows.begin(ty), w = columns.size(tx), h = rows.size(ty);
    };

    // 1. Each tile on its own, with labels; its spanning forest joins the label graph. Workers
    // take tiles from a counter; each tile writes only its own cells of `filled` and `labels` and
    // its own edge list, so the result does not depend on who took it. Progress reports (cells
    // of the tiles done, and inside the calling thread's tiles) and the cancellation come from
    // the calling thread (worker 0); a cancelled fill stops the others at their next tile. A
    // tile that throws (a non-finite cell) does not stop them: the error of the first such tile
    // in raster order is rethrown, as one thread taking the tiles in order would meet it.
    std::vector<std::vector<label_edge<T>>> tile_edges(tiles);
    std::vector<std::exception_ptr> tile_errors(tiles);
    std::atomic<std::size_t> next_tile{0};
    std::atomic<bool> cancelled{false};
    std::atomic<std::uint64_t> cells_done{0};
    auto flood_tiles = [&](unsigned worker) {
        padded_heights<T> work;  // one tile's, its storage reused
        std::vector<tile_label> tile_labels;
        std::vector<std::uint8_t> differs;  // read in whole words: bytes past the row cost a look, no more
        label_pair_levels<T> pairs;
        std::vector<typename label_pair_levels<T>::entry> sorted;
        spanning_forest forest;
        for (std::size_t t; !cancelled.load(std::memory_order_relaxed) && (t = next_tile++) < tiles;) {
            std::ptrdiff_t x0, y0, w, h;
            tile_rect_of(t, x0, y0, w, h);
            const double tile_cells = static_cast<double>(w) * static_cast<double>(h);
            try {
                work.load(grid_view<const T>(heights.row(y0) + x0, w, h, heights.stride()), options.no_data, who, x0, y0);
            } catch (...) {
                tile_errors[t] = std::current_exception();
                continue;
            }
            tile_labels.assign(work.z.size(), tile_no_label);
            work.for_each_outlet([&](std::size_t i) {
                const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(i % static_cast<std::size_t>(work.pitch)) - 1;
                const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(i / static_cast<std::size_t>(work.pitch)) - 1;
                const std::ptrdiff_t gx = x0 + x, gy = y0 + y;
                bool outlet = gx == 0 || gy == 0 || gx == width - 1 || gy == height - 1 ||
                              !(x == 0 || y == 0 || x == w - 1 || y == h - 1);  // inside: next to no-data
                for (int k = 0; k < d8_neighbours && !outlet && options.no_data; ++k)
                    outlet = is_hole(gx + d8_dx[k], gy + d8_dy[k]);
                tile_labels[i] = outlet ? tile_outlet_label : static_cast<tile_label>(1 + perimeter_index(x, y, w, h));
            });
            fill_options<T> tile_options;
            tile_options.no_data = options.no_data;
            if (options.progress && worker == 0) {
                const double before = static_cast<double>(cells_done.load());
                tile_options.progress = [&, before](double f) {
                    return options.progress(std::max(before + f * tile_cells, static_cast<double>(cells_done.load())) /
                                            map_cells);
                };
            }
            fill_stats<T> tile_stats;
            if (!traced_flood<std::uint32_t, T, tile_flood_labels>(work, tile_options, tile_stats,
                                                                    tile_flood_labels(tile_labels.data(), work.pitch))
                     .run()) {
                cancelled = true;
                return;
            }
            cells_done += static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h);

            // Spill pairs: each touching pair of cells once (east, and the three cells below).
            // The ring's labels are tile_no_label, so no bounds checks are needed. A row's cells
            // that differ from one of those four neighbours are found first, in vector lanes.
            const T* const f = work.z.data();
            const std::size_t pitch = static_cast<std::size_t>(work.pitch);
            const std::size_t below[] = {pitch - 1, pitch, pitch + 1};
            differs.resize(static_cast<std::size_t>(w) + sizeof(std::uint64_t));
            for (std::ptrdiff_t y = 0; y < h; ++y) {
                const std::size_t first = work.index(0, y);
                const tile_label* const l = tile_labels.data() + first;
                for (std::size_t x = 0; x < static_cast<std::size_t>(w); ++x)
                    differs[x] = static_cast<std::uint8_t>((l[x] != l[x + 1]) | (l[x] != l[x + pitch - 1]) |
                                                           (l[x] != l[x + pitch]) | (l[x] != l[x + pitch + 1]));
                for (std::size_t word = 0; word < static_cast<std::size_t>(w); word += sizeof(std::uint64_t)) {
                    std::uint64_t any;
                    std::memcpy(&any, differs.data() + word, sizeof any);
                    if (any == 0) continue;
                    for (std::size_t x = word, end = std::min(word + sizeof any, static_cast<std::size_t>(w)); x < end; ++x) {
                        if (differs[x] == 0 || l[x] == tile_no_label) continue;
                        const std::size_t i = first + x;
                        auto touch = [&](std::size_t n) {
                            const tile_label m = tile_labels[n];
                            if (m != l[x] && m != tile_no_label) pairs.add(l[x], m, std::max(f[i], f[n]));
                        };
                        touch(i + 1);
                        for (const std::size_t d : below) touch(i + d);
                    }
                }
            }
            // Kruskal: the pairs that join two parts of the forest, by rising level.
            pairs.take_sorted(sorted);
            forest.reset(perimeter_count(w, h) + 1);
            std::vector<label_edge<T>>& kept = tile_edges[t];
            for (const auto& e : sorted) {
                const tile_label a = static_cast<tile_label>(e.key >> 16), b = static_cast<tile_label>(e.key & 0xffffu);
                if (forest.join(a, b)) kept.push_back({global_label(t, a), global_label(t, b), e.level});
            }
            for (std::ptrdiff_t y = 0; y < h; ++y) {
                const std::size_t from = work.index(0, y), to = at(x0, y0 + y);
                std::copy(f + from, f + from + static_cast<std::size_t>(w), filled.begin() + static_cast<std::ptrdiff_t>(to));
                std::copy(tile_labels.begin() + static_cast<std::ptrdiff_t>(from),
                          tile_labels.begin() + static_cast<std::ptrdiff_t>(from) + w,
                          labels.begin() + static_cast<std::ptrdiff_t>(to));
            }
        }
    };
    run_workers(workers, flood_tiles, [&] { cancelled = true; });
    for (const std::exception_ptr& error : tile_errors)
        if (error) std::rethrow_exception(error);
    if (cancelled) {
        stats.cancelled = true;
        return stats;
    }
    std::vector<label_edge<T>> edges;
    for (std::vector<label_edge<T>>& kept : tile_edges) {
        edges.insert(edges.end(), kept.begin(), kept.end());
        std::vector<label_edge<T>>().swap(kept);
    }

    // 2. Touching cells of neighbouring tiles (perimeter cells, F = their height), then the levels.
    const std::vector<std::uint32_t> column_of = columns.tile_of_cells(), row_of = rows.tile_of_cells();
    auto join = [&](std::ptrdiff_t ax, std::ptrdiff_t ay, std::ptrdiff_t bx, std::ptrdiff_t by) {
        const std::size_t a = at(ax, ay), b = at(bx, by);
        if (labels[a] == tile_no_label || labels[b] == tile_no_label) return;
        const std::size_t ta = row_of[static_cast<std::size_t>(ay)] * static_cast<std::size_t>(columns.count()) + column_of[static_cast<std::size_t>(ax)];
        const std::size_t tb = row_of[static_cast<std::size_t>(by)] * static_cast<std::size_t>(columns.count()) + column_of[static_cast<std::size_t>(bx)];
        const std::uint32_t la = global_label(ta, labels[a]), lb = global_label(tb, labels[b]);
        if (la != lb) edges.push_back({la, lb, std::max(filled[a], filled[b])});
    };
    for (std::ptrdiff_t tx = 1; tx < columns.count(); ++tx) {
        const std::ptrdiff_t x = columns.begin(tx);
        for (std::ptrdiff_t y = 0; y < height; ++y)
            for (std::ptrdiff_t dy = -1; dy <= 1; ++dy)
                if (y + dy >= 0 && y + dy < height) join(x - 1, y, x, y + dy);
    }
    for (std::ptrdiff_t ty = 1; ty < rows.count(); ++ty) {
        const std::ptrdiff_t y = rows.begin(ty);
        for (std::ptrdiff_t x = 0; x < width; ++x)
            for (std::ptrdiff_t dx = -1; dx <= 1; ++dx)
                if (x + dx >= 0 && x + dx < width) join(x, y - 1, x + dx, y);
    }
    const std::vector<T> level = spill_levels(static_cast<std::size_t>(first_label.back()) + 1, edges);
    if (!fill_report(options, 1.0, stats)) return stats;

    // 3. max(F, the label's spill level), tile by tile through a table of the tile's levels, in
    // which no-data cells find -infinity (and then keep their own bits).
    std::vector<std::size_t> tile_raised(tiles, 0);
    parallel_chunks(tiles, workers, 1, [&](std::uint64_t begin, std::uint64_t end) {
        std::vector<T> tile_levels;
        for (std::size_t t = static_cast<std::size_t>(begin); t < end; ++t) {
            std::ptrdiff_t x0, y0, w, h;
            tile_rect_of(t, x0, y0, w, h);
            const std::size_t last = perimeter_count(w, h);  // the tile's largest label
            tile_levels.assign(last + 2, -std::numeric_limits<T>::infinity());
            for (std::size_t l = 1; l <= last; ++l) tile_levels[l] = level[global_label(t, static_cast<tile_label>(l))];
            std::size_t raised = 0;
            for (std::ptrdiff_t y = y0; y < y0 + h; ++y) {
                T* const out = heights.row(y) + x0;
                const T* const f = filled.data() + at(x0, y);
                const tile_label* const l = labels.data() + at(x0, y);
                for (std::ptrdiff_t x = 0; x < w; ++x) {
                    const bool data = l[x] != tile_no_label;
                    const T v = std::max(f[x], tile_levels[std::min<std::size_t>(l[x], last + 1)]);
                    raised += data && v != out[x] ? 1u : 0u;
                    out[x] = data ? v : out[x];
                }
            }
            tile_raised[t] = raised;
        }
    });
    for (const std::size_t raised : tile_raised) stats.raised_cells += raised;
    return stats;
}

}  // namespace detail
}  // namespace gorge

// The epsilon fill in tiles, which uses the tile cuts above.
#include "tiled_epsilon_fill.hpp"
