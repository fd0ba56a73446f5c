// gorge/erosion/detail/evolution_routing.hpp — flow routing of the landscape evolution model:
// the map's topology (boundaries, base-level cells), steepest-descent receivers, routing across
// depressions (the basin graph of Cordonnier, Bovy & Braun 2019), the stack and the drainage area.
//
// Internal to gorge/erosion/landscape_evolution.hpp; see its header comment for the model.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "../../detail/parallel.hpp"
#include "../../drainage/d8.hpp"

namespace gorge {

/// What happens at one edge of the map in landscape evolution.
enum class edge_boundary : std::uint8_t {
    fixed,     ///< the edge cells are base level: fixed height, water and material leave there
    closed,    ///< no flow crosses the edge (a wall); the edge cells evolve like the interior
    periodic,  ///< the edge joins the opposite one (both must be periodic): tileable maps
};

namespace detail {

/// Cell index type of the evolution arrays, and the "no cell" value.
using evo_index = std::uint32_t;
constexpr evo_index evo_none = std::numeric_limits<evo_index>::max();

/// Kind of a cell.
enum : std::uint8_t {
    evo_free = 0,  ///< evolves: uplift, erosion, diffusion
    evo_base = 1,  ///< base level: a data cell on a fixed edge or next to a no-data cell
    evo_void = 2,  ///< no-data: outside the model
};

/// Rows are processed in bands of at least this many cells (one thread per band at most); the
/// bands depend only on the map's size, so per-band sums add up in a fixed order.
constexpr std::ptrdiff_t evo_band_cells = std::ptrdiff_t(1) << 15;

/// The map's topology: size, per-edge boundaries, cell kinds, and the neighbour rule.
struct evo_topology {
    std::ptrdiff_t width = 0, height = 0;
    bool wrap_x = false, wrap_y = false;  ///< periodic west/east, north/south
    bool closed_w = false, closed_e = false, closed_n = false, closed_s = false;
    std::vector<std::uint8_t> kind;  ///< evo_free / evo_base / evo_void per cell
    std::vector<evo_index> base_cells;  ///< the base-level cells, in index order
    std::vector<evo_index> void_cells;  ///< the no-data cells, in index order
    std::size_t data_cells = 0;         ///< cells with data
    std::ptrdiff_t offsets[d8_neighbours] = {};

    std::size_t cells() const { return kind.size(); }

    /// Index of neighbour `code` of cell (x, y), or -1 where it does not exist (past a closed or
    /// fixed edge). Periodic edges wrap.
    std::ptrdiff_t neighbour(std::ptrdiff_t x, std::ptrdiff_t y, int code) const {
        std::ptrdiff_t nx = x + d8_dx[code], ny = y + d8_dy[code];
        if (nx < 0 || nx >= width) {
            if (!wrap_x) return -1;
            nx = nx < 0 ? nx + width : nx - width;
        }
        if (ny < 0 || ny >= height) {
            if (!wrap_y) return -1;
            ny = ny < 0 ? ny + height : ny - height;
        }
        return ny * width + nx;
    }
    /// True when every neighbour of (x, y) lies inside the map without wrapping.
    bool interior(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return x > 0 && y > 0 && x + 1 < width && y + 1 < height;
    }
    /// Calls f(j) for every neighbour j of cell c that exists and has data, in D8 code order (an
    /// interior cell by its offsets, one on an edge by neighbour()).
    template <class F>
    void for_each_data_neighbour(evo_index c, F&& f) const {
        const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(c) % width;
        const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(c) / width;
        const bool inner = interior(x, y);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t j = inner ? std::ptrdiff_t(c) + offsets[k] : neighbour(x, y, k);
            if (j < 0) continue;
            const auto uj = static_cast<evo_index>(j);
            if (kind[uj] != evo_void) f(uj);
        }
    }
};

/// Runs work(piece) for piece in [0, pieces) on up to `threads` threads (gorge's thread rule);
/// each piece must write only its own outputs, so the result does not depend on the thread count.
template <class Work>
void evo_for_pieces(unsigned threads, std::ptrdiff_t pieces, const Work& work) {
    if (pieces <= 0) return;
    const unsigned workers = resolve_threads(threads, static_cast<std::uint64_t>(pieces));
    if (workers == 1) {
        for (std::ptrdiff_t p = 0; p < pieces; ++p) work(p);
        return;
    }
    std::atomic<std::ptrdiff_t> next{0};
    std::atomic<bool> stop{false};
    run_workers(
        workers,
        [&](unsigned) {
            for (;;) {
                if (stop.load(std::memory_order_relaxed)) return;
                const std::ptrdiff_t p = next.fetch_add(1, std::memory_order_relaxed);
                if (p >= pieces) return;
                work(p);
            }
        },
        [&] { stop.store(true, std::memory_order_relaxed); });
}

/// Steepest-descent receivers of the rows [y0, y1) on the surface z: rcv[i] is the neighbour of
/// largest positive slope (z_i - z_j) / distance (the first in code order on ties), or i itself
/// for a base-level cell and a cell without a lower neighbour (a sink); code[i] its direction
/// (d8_sink when none). No-data cells get evo_none and d8_no_data. Returns the number of sinks
/// among the free cells.
template <class T>
std::size_t evo_receivers_rows(const evo_topology& topo, const T* z, evo_index* rcv, std::uint8_t* code,
                               std::ptrdiff_t y0, std::ptrdiff_t y1) {
    constexpr T inv_diag = inv_sqrt2<T>;
    std::size_t sinks = 0;
    const std::uint8_t* kind = topo.kind.data();
    const std::ptrdiff_t w = topo.width;
    // Inner cells: each cell's 8 slopes are compared in registers, keeping the first largest in
    // code order as the scalar rule does, and its receiver, direction and kind rule are applied
    // with masks (branch-free, vectorisable across the row). Offsets and indices are taken
    // modulo 2^32 (the map has fewer than 2^32 - 1 cells, so the sums are exact). The cells on
    // the map's edges take the scalar rule.
    std::vector<std::uint32_t> pick(static_cast<std::size_t>(w));
    std::uint32_t step[d8_neighbours];
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) {
        step[k] = static_cast<std::uint32_t>(topo.offsets[k]);
        off[k] = topo.offsets[k];
    }
    for (std::ptrdiff_t y = y0; y < y1; ++y) {
        const bool inner_row = y > 0 && y + 1 < topo.height && w > 2;
        const std::ptrdiff_t row = y * w;
        if (inner_row) {
            const T* h = z + row;
            const std::uint8_t* kind_row = kind + row;
            std::uint8_t* code_row = code + row;
            evo_index* r = rcv + row;
            std::uint32_t* p = pick.data();
            const auto first = static_cast<std::uint32_t>(row);
            std::uint32_t row_sinks = 0;
            for (std::ptrdiff_t x = 1; x + 1 < w; ++x) {
                const T here = h[x];
                T best = T(0);
                std::uint32_t move = 0, dir = d8_sink;
                // Written out per direction (no inner loop: the row loop vectorises).
                // (Masks rather than branches, which the compiler would thread into paths.)
                const auto consider = [&](int k, T slope) {
                    const std::uint32_t better = 0u - static_cast<std::uint32_t>(slope > best);
                    best = slope > best ? slope : best;
                    move = (step[k] & better) | (move & ~better);
                    dir = (static_cast<std::uint32_t>(k) & better) | (dir & ~better);
                };
                consider(0, here - h[x + off[0]]);
                consider(1, (here - h[x + off[1]]) * inv_diag);
                consider(2, here - h[x + off[2]]);
                consider(3, (here - h[x + off[3]]) * inv_diag);
                consider(4, here - h[x + off[4]]);
                consider(5, (here - h[x + off[5]]) * inv_diag);
                consider(6, here - h[x + off[6]]);
                consider(7, (here - h[x + off[7]]) * inv_diag);
                // The cell's kind: free cells take the steepest descent (free cells never
                // neighbour no-data cells: those neighbours are base level), base-level cells
                // drain to themselves, no-data cells nowhere.
                const std::uint32_t kd = kind_row[x];
                const std::uint32_t is_free = 0u - std::uint32_t(kd == evo_free);
                const std::uint32_t is_base = 0u - std::uint32_t(kd == evo_base);
                const std::uint32_t self = first + static_cast<std::uint32_t>(x);
                const std::uint32_t other = (self & is_base) | (evo_none & ~is_base);
                r[x] = ((self + move) & is_free) | (other & ~is_free);
                const std::uint32_t other_code =
                    (std::uint32_t(d8_sink) & is_base) | (std::uint32_t(d8_no_data) & ~is_base);
                p[x] = (dir & is_free) | (other_code & ~is_free);
                row_sinks += std::uint32_t(dir == d8_sink) & is_free & 1u;
            }
            for (std::ptrdiff_t x = 1; x + 1 < w; ++x) code_row[x] = static_cast<std::uint8_t>(p[x]);
            sinks += row_sinks;
        }
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            if (inner_row && x == 1) x = w - 1;  // (the inner cells are done: the last one)
            const std::ptrdiff_t i = row + x;
            const auto ui = static_cast<std::size_t>(i);
            if (kind[ui] != evo_free) {
                rcv[ui] = kind[ui] == evo_base ? static_cast<evo_index>(i) : evo_none;
                code[ui] = kind[ui] == evo_base ? d8_sink : d8_no_data;
                continue;
            }
            std::ptrdiff_t to = i;
            std::uint8_t best_code = d8_sink;
            {
                const T h = z[ui];
                T top = T(0);
                for (int k = 0; k < d8_neighbours; ++k) {
                    const std::ptrdiff_t j = topo.neighbour(x, y, k);
                    if (j < 0 || j == i) continue;
                    const T drop = h - z[static_cast<std::size_t>(j)];
                    const T slope = (k & 1) ? drop * inv_diag : drop;
                    if (slope > top) {
                        top = slope;
                        to = j;
                        best_code = static_cast<std::uint8_t>(k);
                    }
                }
            }
            rcv[ui] = static_cast<evo_index>(to);
            code[ui] = best_code;
            if (to == i) ++sinks;
        }
    }
    return sinks;
}

/// Donor lists of the receivers: the donors of cell c are donors[donor_start[c] ..
/// donor_start[c + 1]), in index order.
inline void evo_build_donors(std::size_t n, const evo_index* rcv, std::vector<evo_index>& donor_start,
                             std::vector<evo_index>& donors, std::vector<evo_index>& fill_at) {
    donor_start.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const evo_index r = rcv[i];
        if (r != evo_none && r != i) ++donor_start[std::size_t(r) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) donor_start[i + 1] += donor_start[i];
    donors.resize(donor_start[n]);
    fill_at.assign(donor_start.begin(), donor_start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const evo_index r = rcv[i];
        if (r != evo_none && r != i) donors[fill_at[r]++] = static_cast<evo_index>(i);
    }
}

/// Appends to `order` every cell upstream of the cells already in it (from position `from`),
/// each after its receiver: a breadth-first walk over the donor lists.
inline void evo_walk_up(const std::vector<evo_index>& donor_start, const std::vector<evo_index>& donors,
                        std::vector<evo_index>& order, std::size_t from) {
    for (std::size_t read = from; read < order.size(); ++read) {
        const evo_index c = order[read];
        for (evo_index d = donor_start[c]; d < donor_start[std::size_t(c) + 1]; ++d) order.push_back(donors[d]);
    }
}

/// Number of donors of every cell (neighbours whose receiver it is, itself excluded) into
/// `left`. Inside the map each cell compares its 8 neighbours' receivers with itself (no
/// scattered increments, vectorisable); the cells on the map's edge, whose donors may lie across
/// a periodic edge, count the donors found among the cells within one cell of the edges.
inline void evo_count_donors(const evo_topology& topo, const evo_index* rcv, evo_index* left) {
    const std::ptrdiff_t w = topo.width, h = topo.height;
    const bool inner = w > 2 && h > 2;
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = topo.offsets[k];
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        evo_index* l = left + y * w;
        if (!inner || y == 0 || y + 1 == h) {
            std::fill(l, l + w, evo_index(0));
            continue;
        }
        const evo_index* r = rcv + y * w;
        const auto first = static_cast<evo_index>(y * w);
        l[0] = 0;
        l[w - 1] = 0;
        for (std::ptrdiff_t x = 1; x + 1 < w; ++x) {
            const evo_index self = first + static_cast<evo_index>(x);
            l[x] = evo_index(r[x + off[0]] == self) + evo_index(r[x + off[1]] == self) +
                   evo_index(r[x + off[2]] == self) + evo_index(r[x + off[3]] == self) +
                   evo_index(r[x + off[4]] == self) + evo_index(r[x + off[5]] == self) +
                   evo_index(r[x + off[6]] == self) + evo_index(r[x + off[7]] == self);
        }
    }
    const auto on_edge = [&](evo_index c) {
        const std::ptrdiff_t x = std::ptrdiff_t(c) % w, y = std::ptrdiff_t(c) / w;
        return !inner || x == 0 || y == 0 || x + 1 == w || y + 1 == h;
    };
    const auto donate = [&](std::ptrdiff_t j) {
        const evo_index r = rcv[j];
        if (r != evo_none && r != evo_index(j) && on_edge(r)) ++left[r];
    };
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        if (!inner || w <= 4 || y <= 1 || y + 2 >= h) {
            for (std::ptrdiff_t x = 0; x < w; ++x) donate(y * w + x);
            continue;
        }
        for (const std::ptrdiff_t x : {std::ptrdiff_t(0), std::ptrdiff_t(1), w - 2, w - 1}) donate(y * w + x);
    }
}

/// The stack and the upstream cell counts in one pass, without donor lists: every cell whose
/// donors are all done (at first the cells without donors, the leaves) is put on the stack from
/// its end backwards and adds its count to its receiver, and the walk follows the receivers
/// downstream while it completes them (a leaf-to-root topological order, Kahn's algorithm, whose
/// walks stay near each other in memory). The leaves are listed first, in index order, at the
/// front of `stack`, and walked from the last to the first: each walk writes at least its leaf,
/// so the writes from the end never reach a leaf not yet read, and no pass has to branch on
/// every cell's donor count. stack then lists every data cell, each receiver before its donors
/// (any such order gives the same counts, and the same stream power solve since each cell's
/// update reads only its receiver's final height); count[c] is the number of cells whose water
/// passes through c, c included (0 for no-data cells). `pending` is scratch (one entry per
/// cell). Returns false when some data cell was not reached (its receivers end in a cycle, or
/// in a free cell that is its own receiver).
inline bool evo_stack_and_count(const evo_topology& topo, const evo_index* rcv, std::vector<evo_index>& pending,
                                std::vector<evo_index>& stack, std::uint32_t* count) {
    const std::size_t n = topo.cells();
    const std::uint8_t* kind = topo.kind.data();
    pending.resize(n);
    evo_index* left = pending.data();
    for (std::size_t i = 0; i < n; ++i) count[i] = kind[i] == evo_void ? 0u : 1u;
    evo_count_donors(topo, rcv, left);
    stack.resize(topo.data_cells);
    evo_index* out = stack.data();
    // The leaves, branch-free: each cell is written, and kept when it is one.
    std::size_t leaves = 0;
    for (std::size_t i = 0; i < n && leaves < topo.data_cells; ++i) {
        out[leaves] = static_cast<evo_index>(i);
        leaves += std::size_t(left[i] == 0) & std::size_t(kind[i] != evo_void);
    }
    std::size_t pos = topo.data_cells;
    for (std::size_t next = leaves; next-- > 0;) {
        evo_index c = out[next];
        for (;;) {
            if (pos == 0) return false;
            out[--pos] = c;
            const evo_index r = rcv[c];
            if (r == c) {
                if (kind[c] != evo_base) return false;
                break;
            }
            count[r] += count[c];
            if (--left[r] != 0) break;
            c = r;
        }
    }
    return pos == 0;
}

/// A link between two adjacent cells of different basins: water rising in either crosses at
/// `level` = the higher of the two heights.
template <class T>
struct evo_link {
    T level;
    T low;           ///< the lower of the two heights (breaks ties of level by geometry, not index)
    evo_index a, b;  ///< the two cells
};

/// Scratch and results of routing across depressions.
template <class T>
struct evo_depressions {
    std::vector<evo_index> label;    ///< per cell: 0 = drains to base level, k + 1 = basin of sink k
    std::vector<evo_index> sinks;    ///< the sink cells, in index order
    std::vector<evo_index> members;  ///< the cells of the sink basins (label > 0)
    std::vector<T> level;            ///< per basin: the water level (spill level), -inf for basin 0
    std::vector<evo_link<T>> links;
    std::vector<evo_index> uf, parent, adj_start, adj, fill_at, path, donor_start, donors;
    std::vector<evo_index> pass_in, pass_out;  ///< per basin: its outlet cell and the cell beyond
    std::vector<evo_index> lakes;    ///< the lake cells (below their basin's water level)
    std::size_t lake_cells = 0;
    // The local search: labels valid where stamp == epoch, flood marks where seen == epoch.
    std::vector<std::uint32_t> stamp, seen;
    std::uint32_t epoch = 0;
    std::vector<evo_index> walk;
    std::vector<T> pass_level;
    std::vector<std::uint8_t> state;
    /// An entry of the local flood's queue: a cell (b == evo_none) at its height, or a link
    /// between a basin cell a and a cell b of another basin at the higher of the two heights.
    struct entry {
        T key, low;
        evo_index a, b;
    };
    std::vector<entry> heap;
    std::vector<std::pair<evo_index, evo_index>> groups;
    std::vector<evo_link<T>> found;

    evo_index find(evo_index b) {
        while (uf[b] != b) {
            uf[b] = uf[uf[b]];
            b = uf[b];
        }
        return b;
    }
};

/// Orients the tree links dep.links[dep.path[..]] from base level (basin 0): each sink basin's
/// parent, outlet cell (pass_in, in the basin), the cell beyond (pass_out) and water level (the
/// highest pass on its way to base level).
template <class T>
void evo_orient_tree(evo_depressions<T>& dep, std::size_t basins) {
    const std::vector<evo_index>& tree = dep.path;
    dep.adj_start.assign(basins + 1, 0);
    for (const evo_index l : tree) {
        ++dep.adj_start[std::size_t(dep.label[dep.links[l].a]) + 1];
        ++dep.adj_start[std::size_t(dep.label[dep.links[l].b]) + 1];
    }
    for (std::size_t b = 0; b < basins; ++b) dep.adj_start[b + 1] += dep.adj_start[b];
    dep.adj.resize(dep.adj_start[basins]);
    dep.fill_at.assign(dep.adj_start.begin(), dep.adj_start.end() - 1);
    for (const evo_index l : tree) {
        dep.adj[dep.fill_at[dep.label[dep.links[l].a]]++] = l;
        dep.adj[dep.fill_at[dep.label[dep.links[l].b]]++] = l;
    }
    // Orient the tree from base level (basin 0): each basin's outlet and water level.
    dep.level.assign(basins, -std::numeric_limits<T>::infinity());
    dep.parent.assign(basins, evo_none);
    dep.pass_in.assign(basins, evo_none);
    dep.pass_out.assign(basins, evo_none);
    std::vector<evo_index>& queue = dep.fill_at;
    queue.clear();
    queue.push_back(0);
    dep.parent[0] = 0;
    for (std::size_t read = 0; read < queue.size(); ++read) {
        const evo_index b = queue[read];
        for (evo_index e = dep.adj_start[b]; e < dep.adj_start[std::size_t(b) + 1]; ++e) {
            const evo_link<T>& link = dep.links[dep.adj[e]];
            const bool a_in_b = dep.label[link.a] == b;
            const evo_index inside = a_in_b ? link.b : link.a;  // the cell in the child basin
            const evo_index outside = a_in_b ? link.a : link.b;
            const evo_index child = dep.label[inside];
            if (dep.parent[child] != evo_none) continue;
            dep.parent[child] = b;
            dep.pass_in[child] = inside;
            dep.pass_out[child] = outside;
            dep.level[child] = std::max(link.level, dep.level[b]);
            queue.push_back(child);
        }
    }
}

/// Routes across depressions after Cordonnier, Bovy & Braun ("A versatile, linear complexity
/// algorithm for flow routing in topographies with depressions", Earth Surface Dynamics 7, 2019):
/// the basins of the sinks (cells upstream of each sink), the links between adjacent basins at
/// the height of their lowest pass, the minimum spanning tree of the basin graph rooted at base
/// level (Kruskal), and the receivers carved: in each sink basin the receiver path from its
/// outlet cell down to the sink is reversed and the outlet cell drains across the pass. The
/// water level of a basin is the highest pass on its tree path to base level: the level
/// Priority-Flood fills it to. Writes lake[c] = 1 for cells below their basin's water level.
/// `rcv`/`code` are the steepest-descent receivers with their donor lists; they are modified.
template <class T>
void evo_basin_tree_global(const evo_topology& topo, const T* h, const evo_index* rcv, evo_depressions<T>& dep) {
    const std::size_t n = topo.cells();
    evo_build_donors(n, rcv, dep.donor_start, dep.donors, dep.fill_at);
    const std::vector<evo_index>&donor_start = dep.donor_start, &donors = dep.donors;
    const std::size_t basins = dep.sinks.size() + 1;
    dep.label.assign(n, 0);
    dep.members.assign(dep.sinks.begin(), dep.sinks.end());
    evo_walk_up(donor_start, donors, dep.members, 0);
    // The walk lists every receiver before its donors: labels flow up from the sinks.
    for (std::size_t k = 0; k < dep.sinks.size(); ++k) dep.label[dep.sinks[k]] = static_cast<evo_index>(k + 1);
    for (const evo_index c : dep.members)
        if (rcv[c] != c) dep.label[c] = dep.label[rcv[c]];
    // Links: every adjacent pair with different labels, once (from the cell of the smaller
    // non-zero label, or from the sink-basin side of a pair with basin 0).
    dep.links.clear();
    for (const evo_index c : dep.members) {
        const evo_index bc = dep.label[c];
        topo.for_each_data_neighbour(c, [&](evo_index j) {
            const evo_index bj = dep.label[j];
            if (bj == bc || (bj != 0 && bj < bc)) return;
            dep.links.push_back({std::max(h[c], h[j]), std::min(h[c], h[j]), c, j});
        });
    }
    std::sort(dep.links.begin(), dep.links.end(), [](const evo_link<T>& p, const evo_link<T>& q) {
        if (p.level != q.level) return p.level < q.level;
        if (p.low != q.low) return p.low < q.low;
        if (p.a != q.a) return p.a < q.a;
        return p.b < q.b;
    });
    // Kruskal: the tree links, as an adjacency list.
    dep.uf.resize(basins);
    for (std::size_t b = 0; b < basins; ++b) dep.uf[b] = static_cast<evo_index>(b);
    std::vector<evo_index>& tree = dep.path;  // indices of the accepted links
    tree.clear();
    for (std::size_t l = 0; l < dep.links.size() && tree.size() + 1 < basins; ++l) {
        const evo_index ra = dep.find(dep.label[dep.links[l].a]), rb = dep.find(dep.label[dep.links[l].b]);
        if (ra == rb) continue;
        dep.uf[ra] = rb;
        tree.push_back(static_cast<evo_index>(l));
    }
    evo_orient_tree(dep, basins);
    dep.lakes.clear();
    dep.lake_cells = 0;
    for (const evo_index c : dep.members) {
        const bool below = h[c] < dep.level[dep.label[c]];
        dep.lake_cells += below;
        if (below) dep.lakes.push_back(c);
    }
}

/// Carves the receivers of every sink basin to its outlet (see evo_route_depressions).
template <class T>
void evo_carve(const evo_topology& topo, evo_index* rcv, std::uint8_t* code, const evo_depressions<T>& dep) {
    const std::size_t basins = dep.sinks.size() + 1;
    for (std::size_t b = 1; b < basins; ++b) {
        const evo_index in = dep.pass_in[b], out = dep.pass_out[b];
        if (in == evo_none) continue;  // unreachable: the topology check rules it out
        evo_index prev = out;
        const std::ptrdiff_t px = static_cast<std::ptrdiff_t>(in) % topo.width;
        const std::ptrdiff_t py = static_cast<std::ptrdiff_t>(in) / topo.width;
        std::uint8_t prev_code = d8_sink;
        for (int k = 0; k < d8_neighbours; ++k)
            if (topo.neighbour(px, py, k) == std::ptrdiff_t(out)) {
                prev_code = static_cast<std::uint8_t>(k);
                break;
            }
        evo_index c = in;
        for (;;) {
            const evo_index next = rcv[c];
            const std::uint8_t next_code = code[c];
            rcv[c] = prev;
            code[c] = prev_code;
            if (next == c) break;  // the sink
            prev = c;
            prev_code = static_cast<std::uint8_t>((next_code + 4) % d8_neighbours);  // the way back
            c = next;
        }
    }
}

/// Basin label of cell c for the local search: follows the (uncarved) receivers down to a cell
/// already labelled or a base-level cell (label 0), and labels the path on the way back.
template <class T>
evo_index evo_label_of(const evo_index* rcv, evo_depressions<T>& dep, evo_index c) {
    dep.walk.clear();
    while (dep.stamp[c] != dep.epoch) {
        if (rcv[c] == c) {  // a base-level cell (the sinks are labelled up front)
            dep.stamp[c] = dep.epoch;
            dep.label[c] = 0;
            break;
        }
        dep.walk.push_back(c);
        c = rcv[c];
    }
    const evo_index l = dep.label[c];
    for (const evo_index w : dep.walk) {
        dep.stamp[w] = dep.epoch;
        dep.label[w] = l;
    }
    return l;
}

/// Advances the stamp epoch of the local search (labels and flood marks), clearing the stamps
/// when the counter wraps.
template <class T>
void evo_next_epoch(evo_depressions<T>& dep) {
    if (++dep.epoch == 0) {
        std::fill(dep.stamp.begin(), dep.stamp.end(), 0u);
        std::fill(dep.seen.begin(), dep.seen.end(), 0u);
        dep.epoch = 1;
    }
}

/// The same tree as evo_basin_tree_global, found by a local search that touches only the lakes
/// and their rims: Borůvka's algorithm on the basin graph. In each round every group of basins
/// not yet joined to base level floods, in height order, the cells of its basins from their
/// sinks; the queue also holds the links to other groups met on the way, keyed by their level,
/// and the first link taken is the group's lowest pass: an edge of the minimum spanning tree.
/// The groups joined by these edges flood again in the next round, until every basin is joined
/// to base level. Each round at least halves the groups. Returns false (the caller then takes
/// the global route) only when some basin has no way out, which the topology check rules out.
template <class T>
bool evo_basin_tree_local(const evo_topology& topo, const T* h, const evo_index* rcv, evo_depressions<T>& dep) {
    using entry = typename evo_depressions<T>::entry;
    const std::size_t n = topo.cells(), basins = dep.sinks.size() + 1;
    if (dep.stamp.size() != n) {
        dep.stamp.assign(n, 0);
        dep.seen.assign(n, 0);
        dep.label.assign(n, 0);
        dep.epoch = 0;
    }
    evo_next_epoch(dep);
    for (std::size_t k = 0; k < dep.sinks.size(); ++k) {
        dep.stamp[dep.sinks[k]] = dep.epoch;
        dep.label[dep.sinks[k]] = static_cast<evo_index>(k + 1);
    }
    // Cells before links at equal keys; links by (level, low, lower cell, higher cell), the
    // global order, so that both sides of a pass rank it alike.
    const auto later = [](const entry& p, const entry& q) {
        if (p.key != q.key) return p.key > q.key;
        const bool pl = p.b != evo_none, ql = q.b != evo_none;
        if (pl != ql) return pl;
        if (p.low != q.low) return p.low > q.low;
        if (p.a != q.a) return p.a > q.a;
        return p.b > q.b;
    };
    dep.uf.resize(basins);
    for (std::size_t b = 0; b < basins; ++b) dep.uf[b] = static_cast<evo_index>(b);
    dep.links.clear();
    dep.path.clear();
    std::vector<std::pair<evo_index, evo_index>>& groups = dep.groups;  // (group root, sink)
    std::vector<evo_link<T>>& found = dep.found;                          // this round's passes
    for (;;) {
        groups.clear();
        const evo_index sea = dep.find(0);
        for (std::size_t k = 0; k < dep.sinks.size(); ++k) {
            const evo_index r = dep.find(static_cast<evo_index>(k + 1));
            if (r != sea) groups.push_back({r, dep.sinks[k]});
        }
        if (groups.empty()) break;
        std::sort(groups.begin(), groups.end());
        found.clear();
        evo_next_epoch(dep);  // fresh flood marks (labels are re-stamped below as needed)
        for (std::size_t k = 0; k < dep.sinks.size(); ++k) {
            dep.stamp[dep.sinks[k]] = dep.epoch;
            dep.label[dep.sinks[k]] = static_cast<evo_index>(k + 1);
        }
        for (std::size_t g0 = 0; g0 < groups.size();) {
            const evo_index group = groups[g0].first;
            std::size_t g1 = g0;
            dep.heap.clear();
            for (; g1 < groups.size() && groups[g1].first == group; ++g1) {
                const evo_index s = groups[g1].second;
                dep.seen[s] = dep.epoch;
                dep.heap.push_back({h[s], h[s], s, evo_none});
            }
            std::make_heap(dep.heap.begin(), dep.heap.end(), later);
            g0 = g1;
            bool out = false;
            while (!dep.heap.empty()) {
                std::pop_heap(dep.heap.begin(), dep.heap.end(), later);
                const entry e = dep.heap.back();
                dep.heap.pop_back();
                if (e.b != evo_none) {
                    found.push_back({e.key, e.low, e.a, e.b});
                    out = true;
                    break;
                }
                const evo_index c = e.a;
                topo.for_each_data_neighbour(c, [&](evo_index j) {
                    if (dep.find(evo_label_of(rcv, dep, j)) == group) {
                        if (dep.seen[j] == dep.epoch) return;  // (marks only this group's cells)
                        dep.seen[j] = dep.epoch;
                        dep.heap.push_back({h[j], h[j], j, evo_none});
                    } else {
                        dep.heap.push_back({std::max(h[c], h[j]), std::min(h[c], h[j]), std::min(c, j), std::max(c, j)});
                    }
                    std::push_heap(dep.heap.begin(), dep.heap.end(), later);
                });
            }
            if (!out) return false;  // no way out: cannot happen on a checked map
        }
        // Join the groups along their passes (two groups that chose the same pass join once).
        for (const evo_link<T>& link : found) {
            const evo_index ra = dep.find(dep.label[link.a]), rb = dep.find(dep.label[link.b]);
            if (ra == rb) continue;
            dep.uf[ra] = rb;
            dep.path.push_back(static_cast<evo_index>(dep.links.size()));
            dep.links.push_back(link);
        }
    }
    // The labels of every link's cells are current (this epoch) for the orientation.
    for (const evo_link<T>& link : dep.links) {
        evo_label_of(rcv, dep, link.a);
        evo_label_of(rcv, dep, link.b);
    }
    evo_orient_tree(dep, basins);
    // Lake cells: the cells of each basin below its level, a flood from the sink (every cell of
    // a basin below a height is connected to the sink through lower cells: its receiver path).
    dep.lakes.clear();
    dep.lake_cells = 0;
    if (++dep.epoch == 0) {
        std::fill(dep.stamp.begin(), dep.stamp.end(), 0u);
        std::fill(dep.seen.begin(), dep.seen.end(), 0u);
        dep.epoch = 1;
        // Labels were lost: relabel the sinks; evo_label_of rebuilds the rest.
    }
    for (std::size_t k = 0; k < dep.sinks.size(); ++k) {
        dep.stamp[dep.sinks[k]] = dep.epoch;
        dep.label[dep.sinks[k]] = static_cast<evo_index>(k + 1);
    }
    for (std::size_t k = 0; k < dep.sinks.size(); ++k) {
        const evo_index basin = static_cast<evo_index>(k + 1), s = dep.sinks[k];
        const T top = dep.level[basin];
        if (!(h[s] < top)) continue;
        const std::size_t first = dep.lakes.size();
        dep.lakes.push_back(s);
        dep.seen[s] = dep.epoch;
        for (std::size_t read = first; read < dep.lakes.size(); ++read) {
            const evo_index c = dep.lakes[read];
            topo.for_each_data_neighbour(c, [&](evo_index j) {
                if (dep.seen[j] == dep.epoch || !(h[j] < top) || evo_label_of(rcv, dep, j) != basin) return;
                dep.seen[j] = dep.epoch;
                dep.lakes.push_back(j);
            });
        }
    }
    dep.lake_cells = dep.lakes.size();
    return true;
}

/// Routes across depressions after Cordonnier, Bovy & Braun (see evo_basin_tree_global): the
/// basin tree by the local search, or the global one when the local search meets basins that
/// spill into each other; then the carved receivers, and lake[c] = 1 for the lake cells (the
/// caller clears lake beforehand). `rcv`/`code` are the steepest-descent receivers; they are
/// modified. Returns whether the local search sufficed.
template <class T>
bool evo_route_depressions(const evo_topology& topo, const T* h, evo_index* rcv, std::uint8_t* code,
                           evo_depressions<T>& dep, std::uint8_t* lake, bool allow_local = true) {
    const std::size_t n = topo.cells();
    dep.sinks.clear();
    // The sinks, by blocks of cells: a branch-free test of the whole block first (sinks are few).
    constexpr std::size_t block = 256;
    const std::uint8_t* kind = topo.kind.data();
    for (std::size_t b = 0; b < n; b += block) {
        const std::size_t e = std::min(n, b + block);
        std::uint32_t any = 0;
        for (std::size_t i = b; i < e; ++i)
            any |= std::uint32_t(kind[i] == evo_free) & std::uint32_t(rcv[i] == static_cast<evo_index>(i));
        if (any == 0) continue;
        for (std::size_t i = b; i < e; ++i)
            if (kind[i] == evo_free && rcv[i] == i) dep.sinks.push_back(static_cast<evo_index>(i));
    }
    dep.lakes.clear();
    dep.lake_cells = 0;
    const bool local = allow_local && evo_basin_tree_local(topo, h, rcv, dep);
    if (!local) {
        dep.lakes.clear();
        dep.stamp.clear();  // the global labels overwrite the local ones
        evo_basin_tree_global(topo, h, rcv, dep);
    }
    evo_carve(topo, rcv, code, dep);
    for (const evo_index c : dep.lakes) lake[c] = 1;
    return local;
}

}  // namespace detail
}  // namespace gorge
