// D8 flow directions and flow accumulation of a tiled world over MPI (include/gorge/mpi/flow.hpp),
// after Barnes (2017).
//
// SPDX-License-Identifier: MPL-2.0
#include "gorge/mpi/flow.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gorge/drainage/d8.hpp"
#include "gorge/grid/no_data.hpp"
#include "mpi_internal.hpp"

namespace gorge {
namespace mpi {
namespace {

using namespace internal;

/// "No perimeter cell" in the links between perimeter cells.
constexpr std::uint32_t no_link = std::numeric_limits<std::uint32_t>::max();

/// The ring of cells around a tile (its halo), as the perimeter of the rectangle one cell larger
/// on every side; positions outside the map are present but unused.
tile_rect halo_rect(const tile_rect& r) {
    tile_rect h = r;
    h.x = r.x - 1;
    h.y = r.y - 1;
    h.width = r.width + 2;
    h.height = r.height + 2;
    return h;
}

/// Position of ring cell i of a w x h tile (for_each_ring_position's order: the row above, the row
/// below, the column left, the column right) in halo_rect's perimeter order (route_tile's: the
/// row above, then left and right cell of each row, then the row below).
inline std::size_t ring_to_halo(std::size_t i, std::ptrdiff_t w, std::ptrdiff_t h) {
    const std::size_t row = static_cast<std::size_t>(w + 2), rows = static_cast<std::size_t>(h);
    if (i < row) return i;                                        // row above
    if (i < 2 * row) return row + 2 * rows + (i - row);           // row below
    if (i < 2 * row + rows) return row + 2 * (i - 2 * row);       // column left
    return row + 2 * (i - 2 * row - rows) + 1;                    // column right
}

/// One tile's routing: directions and local accumulation, row-major, the tile's size.
struct routed_tile {
    tile_rect rect;
    std::vector<std::uint8_t> dirs;
    std::vector<std::uint32_t> acc;
    std::size_t index(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return static_cast<std::size_t>(y * rect.width + x);
    }
    bool inside(std::ptrdiff_t x, std::ptrdiff_t y) const { return x >= 0 && y >= 0 && x < rect.width && y < rect.height; }
    bool on_perimeter(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return x == 0 || y == 0 || x == rect.width - 1 || y == rect.height - 1;
    }
};

/// Directions of tile r from its cells and halo (halo values in halo_rect perimeter order),
/// computed by gorge::flow_directions on the tile plus the part of its halo inside the map: the
/// same 3 x 3 neighbourhoods, and the same map edges, as on the whole map.
template <class T>
void route_tile(routed_tile& out, const tile_layout& layout, const grid<T>& cells, const std::vector<T>& halo,
                const tiled_flow_options<T>& options) {
    const tile_rect& r = out.rect;
    const tile_rect hr = halo_rect(r);
    const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(hr.x, 0), y0 = std::max<std::ptrdiff_t>(hr.y, 0);
    const std::ptrdiff_t x1 = std::min<std::ptrdiff_t>(hr.x + hr.width, layout.map_width);
    const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(hr.y + hr.height, layout.map_height);
    grid<T> ext(x1 - x0, y1 - y0);
    const grid_view<T> e = ext.view();
    const grid_view<const T> c = cells.view();
    for (std::ptrdiff_t gy = y0; gy < y1; ++gy) {
        T* row = e.row(gy - y0);
        const bool tile_row = gy >= r.y && gy < r.y + r.height;
        for (std::ptrdiff_t gx = x0; gx < x1; ++gx) {
            const bool in_tile = tile_row && gx >= r.x && gx < r.x + r.width;
            row[gx - x0] = in_tile ? c.row(gy - r.y)[gx - r.x]
                                   : halo[perimeter_index(gx - hr.x, gy - hr.y, hr.width, hr.height)];
        }
    }
    d8_options<T> d8;
    d8.rule = options.rule;
    d8.no_data = options.no_data;
    const grid<std::uint8_t> dirs = flow_directions(ext, d8);
    out.dirs.assign(static_cast<std::size_t>(r.width * r.height), d8_no_data);
    const grid_view<const std::uint8_t> d = dirs.view();
    for (std::ptrdiff_t y = 0; y < r.height; ++y) {
        const std::uint8_t* row = d.row(r.y + y - y0) + (r.x - x0);
        std::copy(row, row + r.width, out.dirs.begin() + static_cast<std::ptrdiff_t>(out.index(0, y)));
    }
}

/// Accumulation inside the tile (flow leaving the tile is dropped): in-degree counting, then a
/// queue of cells whose inflow is complete.
void accumulate_inside(routed_tile& t) {
    const std::ptrdiff_t w = t.rect.width, h = t.rect.height;
    const std::size_t n = t.dirs.size();
    t.acc.assign(n, 0);
    std::vector<std::uint8_t> pending(n, 0);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::uint8_t d = t.dirs[t.index(x, y)];
            if (d == d8_no_data) continue;
            t.acc[t.index(x, y)] = 1;
            if (d == d8_sink) continue;
            const std::ptrdiff_t nx = x + d8_dx[d], ny = y + d8_dy[d];
            if (t.inside(nx, ny)) ++pending[t.index(nx, ny)];
        }
    std::vector<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (pending[i] == 0 && t.dirs[i] != d8_no_data) ready.push_back(i);
    while (!ready.empty()) {
        const std::size_t i = ready.back();
        ready.pop_back();
        const std::uint8_t d = t.dirs[i];
        if (d == d8_sink) continue;
        const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(i) % w + d8_dx[d];
        const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(i) / w + d8_dy[d];
        if (!t.inside(x, y)) continue;
        const std::size_t j = t.index(x, y);
        t.acc[j] += t.acc[i];
        if (--pending[j] == 0) ready.push_back(j);
    }
}

/// For perimeter cell (x, y): the perimeter number of the first perimeter cell downstream of it
/// inside the tile, or no_link (its flow ends in the tile or leaves it from (x, y) itself).
std::uint32_t next_perimeter_cell(const routed_tile& t, std::ptrdiff_t x, std::ptrdiff_t y) {
    std::uint8_t d = t.dirs[t.index(x, y)];
    for (;;) {
        if (d >= d8_sink) return no_link;
        x += d8_dx[d];
        y += d8_dy[d];
        if (!t.inside(x, y)) return no_link;
        if (t.on_perimeter(x, y)) return static_cast<std::uint32_t>(perimeter_index(x, y, t.rect.width, t.rect.height));
        d = t.dirs[t.index(x, y)];
    }
}

/// Adds `inflow` along the flow path from tile cell (x, y) until it leaves the tile or ends.
void add_along_path(routed_tile& t, std::ptrdiff_t x, std::ptrdiff_t y, std::uint32_t inflow) {
    for (;;) {
        const std::size_t i = t.index(x, y);
        t.acc[i] += inflow;
        const std::uint8_t d = t.dirs[i];
        if (d >= d8_sink) return;
        x += d8_dx[d];
        y += d8_dy[d];
        if (!t.inside(x, y)) return;
    }
}

template <class T>
tiled_flow_stats run_tiled_flow(MPI_Comm comm, const tile_layout& layout, const tile_reader<T>& read,
                                const flow_tile_writer& write, const tiled_flow_options<T>& options) {
    layout.validate();
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (options.root < 0 || options.root >= size)
        throw std::invalid_argument("gorge::mpi::tiled_flow_options: invalid root (must be in 0..ranks-1)");
    if (!read) throw std::invalid_argument("gorge::mpi::flow_accumulation_tiled: invalid read (empty function)");
    if (!write) throw std::invalid_argument("gorge::mpi::flow_accumulation_tiled: invalid write (empty function)");
    if (static_cast<std::uint64_t>(layout.map_width) * static_cast<std::uint64_t>(layout.map_height) >
        std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument(
            "gorge::mpi::flow_accumulation_tiled: invalid layout (more than 2^32 - 1 cells; accumulation counts are 32-bit)");
    const int root = options.root;
    const int count = layout.tile_count();
    const bool keep = options.retention == tile_retention::keep;
    tiled_flow_stats stats;
    failure fail;
    const std::vector<int> mine = owned_tiles(rank, size, count);
    stats.tiles = static_cast<int>(mine.size());
    auto load = [&](int t) {
        const tile_rect r = layout.tile(t);
        grid<T> cells(r.width, r.height);
        read(r, cells.view());
        return cells;
    };

    // Step 1: halos. Each rank sends the owner of every tile around each of its tiles the piece
    // of the tile's perimeter that lies on that tile's ring (corners to the diagonal tiles), and
    // assembles its tiles' halos from the pieces it gets: neighbours talk directly, no root.
    std::vector<grid<T>> kept_cells;
    std::vector<writer> pieces(static_cast<std::size_t>(size));
    std::vector<T> perimeter;  // of the tile at hand, in perimeter order
    int current = -1;
    try {
        for (int t : mine) {
            current = t;
            grid<T> cells = load(t);
            // Checked here, with map coordinates; a bad cell would otherwise surface in the
            // directions of a neighbouring tile too.
            const tile_rect r = layout.tile(t);
            const grid_view<const T> cv = cells.view();
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                    const T v = cv.row(y)[x];
                    if (!std::isfinite(v) && !detail::is_no_data(v, options.no_data))
                        detail::throw_not_finite("gorge::mpi::flow_accumulation_tiled", r.x + x, r.y + y);
                }
            perimeter.clear();
            for_each_perimeter_cell(r.width, r.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) { perimeter.push_back(cv.row(y)[x]); });
            for_each_neighbour_tile(layout, r, [&](int u) {
                writer& w = pieces[static_cast<std::size_t>(tile_owner(u, size))];
                w.put(static_cast<std::int32_t>(u));
                w.put(static_cast<std::int32_t>(t));
                for_each_shared_cell(layout.tile(u), r, [&](std::size_t, std::size_t p) { w.put(perimeter[p]); });
            });
            if (keep) kept_cells.push_back(std::move(cells));
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    const std::vector<unsigned char> received = exchange_bytes(comm, pieces, layout, stats.bytes_sent);
    std::vector<std::vector<T>> halos(mine.size());  // outside the map: 0, unused
    try {
        for (std::size_t k = 0; k < mine.size(); ++k) {
            const tile_rect r = layout.tile(mine[k]);
            halos[k].assign(perimeter_count(r.width + 2, r.height + 2), T(0));
        }
        auto apply = [&](const unsigned char* begin, std::size_t n) {
            reader in{begin, begin + n};
            while (in.p != in.end) {
                const int u = in.get<std::int32_t>(), t = in.get<std::int32_t>();
                const auto at = std::lower_bound(mine.begin(), mine.end(), u);
                if (t < 0 || t >= count || at == mine.end() || *at != u)
                    throw std::runtime_error("gorge::mpi: malformed halo message (tile number)");
                const tile_rect to = layout.tile(u);
                std::vector<T>& halo = halos[static_cast<std::size_t>(at - mine.begin())];
                for_each_shared_cell(to, layout.tile(t), [&](std::size_t i, std::size_t) {
                    halo[ring_to_halo(i, to.width, to.height)] = in.get<T>();
                });
            }
        };
        const std::vector<unsigned char>& own = pieces[static_cast<std::size_t>(rank)].bytes;
        apply(own.data(), own.size());
        apply(received.data(), received.size());
    } catch (const std::exception& e) {
        fail.record(-1, e.what());
    }
    pieces = std::vector<writer>();
    agree(comm, fail, layout);

    // Step 2: directions and local accumulation; perimeter links to the root.
    writer out;
    std::vector<routed_tile> routed;
    try {
        for (std::size_t k = 0; k < mine.size(); ++k) {
            current = mine[k];
            const tile_rect r = layout.tile(current);
            std::vector<T>& halo = halos[k];
            routed_tile rt;
            rt.rect = r;
            if (keep) {
                route_tile(rt, layout, kept_cells[k], halo, options);
                kept_cells[k] = grid<T>();
            } else {
                route_tile(rt, layout, load(current), halo, options);
            }
            accumulate_inside(rt);
            for_each_perimeter_cell(r.width, r.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
                out.put(rt.acc[rt.index(x, y)]);
                out.put(rt.dirs[rt.index(x, y)]);
                out.put(next_perimeter_cell(rt, x, y));
            });
            if (keep) {
                routed.push_back(std::move(rt));
                halo = std::vector<T>();  // recompute routes the tile again in step 4 and keeps it
            }
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    std::vector<unsigned char> all = gather_bytes(comm, root, out.bytes, layout, stats.bytes_sent);
    out.bytes.clear();
    std::vector<std::vector<unsigned char>> parts;

    // Step 3: the root resolves the flow between tiles, in topological order of the perimeter cells.
    if (rank == root) {
        try {
            std::vector<std::uint64_t> base(static_cast<std::size_t>(count) + 1, 0);
            for (int t = 0; t < count; ++t) {
                const tile_rect r = layout.tile(t);
                base[static_cast<std::size_t>(t) + 1] = base[static_cast<std::size_t>(t)] + perimeter_count(r.width, r.height);
            }
            const std::uint64_t nodes = base.back();
            stats.links = nodes;
            constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
            std::vector<std::uint32_t> local(nodes);
            std::vector<std::uint64_t> next(nodes, none);
            std::vector<std::uint8_t> crosses(nodes, 0);  // 1: next is in another tile
            reader in{all.data(), all.data() + all.size()};
            for (int r = 0; r < size; ++r)
                for (int t : owned_tiles(r, size, count)) {
                    const tile_rect tr = layout.tile(t);
                    for_each_perimeter_cell(tr.width, tr.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
                        const std::uint64_t node = base[static_cast<std::size_t>(t)] + perimeter_index(x, y, tr.width, tr.height);
                        local[node] = in.get<std::uint32_t>();
                        const std::uint8_t d = in.get<std::uint8_t>();
                        const std::uint32_t link = in.get<std::uint32_t>();
                        if (link != no_link) {
                            next[node] = base[static_cast<std::size_t>(t)] + link;
                        } else if (d < d8_sink) {
                            const std::ptrdiff_t lx = x + d8_dx[d], ly = y + d8_dy[d];
                            if (lx < 0 || ly < 0 || lx >= tr.width || ly >= tr.height) {
                                const std::ptrdiff_t gx = tr.x + lx, gy = tr.y + ly;  // inside the map (D8 rule)
                                const int u = layout.tile_at(gx, gy);
                                const tile_rect ur = layout.tile(u);
                                next[node] = base[static_cast<std::size_t>(u)] + perimeter_index(gx - ur.x, gy - ur.y, ur.width, ur.height);
                                crosses[node] = 1;
                            }
                        }
                    });
                }
            all.clear();
            all.shrink_to_fit();
            std::vector<std::uint32_t> upstream(nodes, 0);
            for (std::uint64_t i = 0; i < nodes; ++i)
                if (next[i] != none) ++upstream[next[i]];
            // extra: flow from other tiles passing through a cell; inflow: the part entering it
            // directly across a tile border (what its owner adds along its path).
            std::vector<std::uint32_t> extra(nodes, 0), inflow(nodes, 0);
            std::vector<std::uint64_t> ready;
            for (std::uint64_t i = 0; i < nodes; ++i)
                if (upstream[i] == 0) ready.push_back(i);
            std::uint64_t done = 0;
            while (!ready.empty()) {
                const std::uint64_t i = ready.back();
                ready.pop_back();
                ++done;
                const std::uint64_t j = next[i];
                if (j == none) continue;
                if (crosses[i]) {
                    const std::uint32_t total = local[i] + extra[i];
                    inflow[j] += total;
                    extra[j] += total;
                } else {
                    extra[j] += extra[i];
                }
                if (--upstream[j] == 0) ready.push_back(j);
            }
            if (done != nodes) throw std::runtime_error("gorge::mpi: the directions between tiles form a cycle");
            std::vector<writer> inflow_out(static_cast<std::size_t>(size));
            for (int t = 0; t < count; ++t) {
                writer& w = inflow_out[static_cast<std::size_t>(tile_owner(t, size))];
                for (std::uint64_t i = base[static_cast<std::size_t>(t)]; i < base[static_cast<std::size_t>(t) + 1]; ++i)
                    w.put(inflow[i]);
            }
            for (writer& w : inflow_out) {
                as_count(w.bytes.size(), "a rank's inflows");
                parts.push_back(std::move(w.bytes));
            }
        } catch (const std::exception& e) {
            fail.record(-1, e.what());
        }
    }
    agree(comm, fail, layout);
    const std::vector<unsigned char> inflow_bytes = scatter_bytes(comm, root, parts, stats.bytes_sent);
    parts.clear();

    // Step 4: add the inflows along their paths, write.
    try {
        reader in{inflow_bytes.data(), inflow_bytes.data() + inflow_bytes.size()};
        for (std::size_t k = 0; k < mine.size(); ++k) {
            current = mine[k];
            const tile_rect r = layout.tile(current);
            routed_tile fresh;
            if (!keep) {
                fresh.rect = r;
                route_tile(fresh, layout, load(current), halos[k], options);
                accumulate_inside(fresh);
            }
            routed_tile& rt = keep ? routed[k] : fresh;
            for_each_perimeter_cell(r.width, r.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
                const std::uint32_t v = in.get<std::uint32_t>();
                if (v != 0) add_along_path(rt, x, y, v);
            });
            write(r, grid_view<const std::uint8_t>(rt.dirs.data(), r.width, r.height),
                  grid_view<const std::uint32_t>(rt.acc.data(), r.width, r.height));
            rt = routed_tile();
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    return stats;
}

}  // namespace

tiled_flow_stats flow_accumulation_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                         const flow_tile_writer& write, const tiled_flow_options<float>& options) {
    return run_tiled_flow<float>(comm, layout, read, write, options);
}
tiled_flow_stats flow_accumulation_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                         const flow_tile_writer& write, const tiled_flow_options<double>& options) {
    return run_tiled_flow<double>(comm, layout, read, write, options);
}

}  // namespace mpi
}  // namespace gorge
