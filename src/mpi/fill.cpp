// Depression filling of a tiled world over MPI (include/gorge/mpi/fill.hpp), after Barnes (2016).
//
// SPDX-License-Identifier: MPL-2.0
#include "gorge/mpi/fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <queue>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gorge/drainage/d8.hpp"
#include "gorge/drainage/depression_fill.hpp"
#include "gorge/grid/no_data.hpp"
#include "mpi_internal.hpp"

namespace gorge {
namespace mpi {
namespace {

using namespace internal;

using label_t = std::uint32_t;
/// Label of every outlet of the whole map (map edge, next to no-data): water leaves there.
constexpr label_t outside_label = 0;
/// Label of cells with no data (and of the working copy's border ring).
constexpr label_t no_label = std::numeric_limits<label_t>::max();
/// Label of data cells the flood has not reached yet.
constexpr label_t unvisited = no_label - 1;

// ---------------------------------------------------------------------------------------------
// Tile-local Priority-Flood with watershed labels.

template <class T>
struct edge {
    label_t a, b;  // local labels, a < b
    T level;       // lowest height at which water passes between them
};

template <class T>
struct local_fill {
    tile_rect rect;
    grid<T> original;                 // as read (no-data cells keep their value)
    std::vector<T> z;                 // padded working heights, filled
    std::vector<label_t> label;       // padded labels
    std::ptrdiff_t pitch = 0;
    std::vector<edge<T>> edges;       // spill graph (filled only when asked)
    std::size_t index(std::ptrdiff_t x, std::ptrdiff_t y) const { return static_cast<std::size_t>((y + 1) * pitch + (x + 1)); }
};

template <class T>
void flood_tile(local_fill<T>& t, const tile_layout& layout, const std::optional<T>& no_data, bool want_edges) {
    const tile_rect& r = t.rect;
    const std::ptrdiff_t w = r.width, h = r.height;
    t.pitch = w + 2;
    const std::size_t cells = static_cast<std::size_t>(t.pitch) * static_cast<std::size_t>(h + 2);
    t.z.assign(cells, T(0));
    t.label.assign(cells, no_label);
    const grid_view<const T> src = t.original.view();
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        const T* row = src.row(y);
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const T v = row[x];
            if (detail::is_no_data(v, no_data)) continue;
            if (!std::isfinite(v)) detail::throw_not_finite("gorge::mpi::fill_depressions_tiled", r.x + x, r.y + y);
            const std::size_t i = t.index(x, y);
            t.z[i] = v + T(0);  // -0 + 0 == +0, as gorge::fill_depressions writes it
            t.label[i] = unvisited;
        }
    }
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = detail::d8_offset(k, t.pitch);

    using key_t = decltype(detail::ordered_bits(T()));
    detail::radix_heap<key_t, std::size_t> open;
    detail::pit_queue<std::size_t> pit;
    // Seeds in raster order: the tile's perimeter and the cells next to a no-data cell. Outlets
    // of the whole map (map edge, next to no-data) are "outside"; the other perimeter cells each
    // start their own label, 1 + their perimeter number.
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::size_t i = t.index(x, y);
            if (t.label[i] != unvisited) continue;  // no data, or a seed already
            const bool on_perimeter = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            const std::ptrdiff_t gx = r.x + x, gy = r.y + y;
            bool outlet = gx == 0 || gy == 0 || gx == layout.map_width - 1 || gy == layout.map_height - 1;
            if (no_data) {
                for (int k = 0; k < d8_neighbours && !outlet; ++k) {
                    const std::ptrdiff_t nx = x + d8_dx[k], ny = y + d8_dy[k];
                    if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;  // other tiles: the root's part
                    const std::size_t n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(i) + off[k]);
                    outlet = t.label[n] == no_label;
                }
            }
            if (!outlet && !on_perimeter) continue;
            t.label[i] = outlet ? outside_label : static_cast<label_t>(1 + perimeter_index(x, y, w, h));
            open.push(detail::ordered_bits(t.z[i]), i);
        }
    }
    // Spill graph: lowest passing height per label pair.
    std::unordered_map<std::uint64_t, T> spill;
    T* const z = t.z.data();
    label_t* const lab = t.label.data();
    while (!open.empty() || !pit.empty()) {
        std::size_t c;
        T zc;
        if (!pit.empty()) {
            c = pit.pop();
            zc = z[c];  // written moments ago: in cache
        } else {
            c = open.pop();
            zc = detail::from_ordered_bits(open.last_key());  // no cache miss on z
        }
        const label_t lc = lab[c];
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::size_t n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(c) + off[k]);
            const label_t ln = lab[n];
            if (ln != unvisited) {
                if (want_edges && ln != no_label && ln != lc) {
                    const T level = std::max(zc, z[n]);
                    const std::uint64_t key = lc < ln ? (std::uint64_t(lc) << 32 | ln) : (std::uint64_t(ln) << 32 | lc);
                    auto it = spill.find(key);
                    if (it == spill.end())
                        spill.emplace(key, level);
                    else if (level < it->second)
                        it->second = level;
                }
                continue;
            }
            lab[n] = lc;
            if (z[n] <= zc) {
                z[n] = zc;
                pit.push(n);
            } else {
                open.push(detail::ordered_bits(z[n]), n);
            }
        }
    }
    t.edges.clear();
    if (want_edges) {
        t.edges.reserve(spill.size());
        for (const auto& e : spill)
            t.edges.push_back({static_cast<label_t>(e.first >> 32), static_cast<label_t>(e.first & 0xffffffffu), e.second});
        std::sort(t.edges.begin(), t.edges.end(), [](const edge<T>& p, const edge<T>& q) {
            return p.a != q.a ? p.a < q.a : p.b < q.b;
        });
    }
}

/// Per tile, on the root: its perimeter (filled heights = original heights, labels).
template <class T>
struct perimeter {
    std::vector<T> z;
    std::vector<label_t> label;  // local labels; no_label = no data
    std::vector<edge<T>> edges;
    bool received = false;
};

/// The root's part: joins the tiles' spill graphs and solves every label's spill level.
/// Returns, per tile, the spill level of each perimeter label (index = perimeter number).
template <class T>
std::vector<std::vector<T>> solve_spill_levels(const tile_layout& layout, std::vector<perimeter<T>>& tiles,
                                               tiled_fill_stats& stats) {
    const int count = layout.tile_count();
    std::vector<std::uint64_t> base(static_cast<std::size_t>(count) + 1, 1);  // node 0 = outside
    for (int t = 0; t < count; ++t) {
        const tile_rect r = layout.tile(t);
        base[static_cast<std::size_t>(t) + 1] = base[static_cast<std::size_t>(t)] + perimeter_count(r.width, r.height);
    }
    const std::uint64_t nodes = base.back();
    auto node = [&](int t, label_t l) -> std::uint64_t {
        return l == outside_label ? 0 : base[static_cast<std::size_t>(t)] + (l - 1);
    };
    struct link {
        std::uint64_t a, b;
        T level;
    };
    std::vector<link> links;
    for (int t = 0; t < count; ++t)
        for (const edge<T>& e : tiles[static_cast<std::size_t>(t)].edges) links.push_back({node(t, e.a), node(t, e.b), e.level});
    // Joins across tile borders (8-connected: corners meet diagonal tiles too), and the border
    // cells next to a no-data cell of another tile, which are outlets.
    for (int t = 0; t < count; ++t) {
        const tile_rect r = layout.tile(t);
        const perimeter<T>& p = tiles[static_cast<std::size_t>(t)];
        for_each_perimeter_cell(r.width, r.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
            const std::size_t pi = perimeter_index(x, y, r.width, r.height);
            const label_t l = p.label[pi];
            if (l == no_label) return;
            const std::uint64_t a = node(t, l);
            const T za = p.z[pi];
            for (int k = 0; k < d8_neighbours; ++k) {
                const std::ptrdiff_t gx = r.x + x + d8_dx[k], gy = r.y + y + d8_dy[k];
                if (gx < 0 || gy < 0 || gx >= layout.map_width || gy >= layout.map_height) continue;
                const int u = layout.tile_at(gx, gy);
                if (u == t) continue;
                const tile_rect s = layout.tile(u);
                const std::size_t qi = perimeter_index(gx - s.x, gy - s.y, s.width, s.height);
                const perimeter<T>& q = tiles[static_cast<std::size_t>(u)];
                const label_t m = q.label[qi];
                if (m == no_label) {
                    if (a != 0) links.push_back({a, 0, za});
                } else if (u > t) {  // each pair once
                    const std::uint64_t b = node(u, m);
                    if (a != b) links.push_back({a, b, std::max(za, q.z[qi])});
                }
            }
        });
    }
    stats.labels = nodes;
    stats.graph_edges = links.size();
    // Adjacency in compressed rows.
    std::vector<std::uint64_t> first(nodes + 1, 0);
    for (const link& e : links) ++first[e.a + 1], ++first[e.b + 1];
    for (std::uint64_t i = 0; i < nodes; ++i) first[i + 1] += first[i];
    std::vector<std::pair<std::uint64_t, T>> adj(links.size() * 2);
    {
        std::vector<std::uint64_t> fill(first.begin(), first.end() - 1);
        for (const link& e : links) {
            adj[fill[e.a]++] = {e.b, e.level};
            adj[fill[e.b]++] = {e.a, e.level};
        }
    }
    links.clear();
    links.shrink_to_fit();
    // Priority-Flood over the label graph: the spill level of a label is the lowest, over all
    // paths to "outside", of the highest passing level on the path.
    const T unreached = std::numeric_limits<T>::infinity();
    std::vector<T> level(nodes, unreached);
    std::vector<std::uint8_t> done(nodes, 0);
    using item = std::pair<T, std::uint64_t>;
    std::priority_queue<item, std::vector<item>, std::greater<item>> queue;
    level[0] = -std::numeric_limits<T>::infinity();
    queue.push({level[0], 0});
    while (!queue.empty()) {
        const item top = queue.top();
        queue.pop();
        if (done[top.second]) continue;
        done[top.second] = 1;
        for (std::uint64_t j = first[top.second]; j < first[top.second + 1]; ++j) {
            const std::uint64_t v = adj[j].first;
            const T candidate = std::max(top.first, adj[j].second);
            if (!done[v] && candidate < level[v]) {
                level[v] = candidate;
                queue.push({candidate, v});
            }
        }
    }
    std::vector<std::vector<T>> result(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t) {
        std::vector<T>& out = result[static_cast<std::size_t>(t)];
        const std::uint64_t n = base[static_cast<std::size_t>(t) + 1] - base[static_cast<std::size_t>(t)];
        out.resize(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            // A label no path joins to "outside" cannot exist (every connected part of the map
            // has an outlet); should one, it is left as its local fill made it.
            const T v = level[base[static_cast<std::size_t>(t)] + i];
            out[i] = v == unreached ? -unreached : v;
        }
    }
    return result;
}

/// Finishes a flooded tile: max(local fill, spill level of the label), no-data cells as read.
template <class T>
std::size_t finish_tile(const local_fill<T>& t, const std::vector<T>& levels, grid<T>& out) {
    const std::ptrdiff_t w = t.rect.width, h = t.rect.height;
    out = grid<T>(w, h);
    std::size_t changed = 0;
    const grid_view<const T> src = t.original.view();
    const grid_view<T> dst = out.view();
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        const T* s = src.row(y);
        T* d = dst.row(y);
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::size_t i = t.index(x, y);
            const label_t l = t.label[i];
            if (l == no_label) {
                d[x] = s[x];
                continue;
            }
            T v = t.z[i];
            if (l != outside_label) v = std::max(v, levels[l - 1]);
            changed += v != s[x] ? 1u : 0u;
            d[x] = v;
        }
    }
    return changed;
}

template <class T>
tiled_fill_stats run_tiled_fill(MPI_Comm comm, const tile_layout& layout, const tile_reader<T>& read,
                                const tile_writer<T>& write, const tiled_fill_options<T>& options) {
    layout.validate();
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (options.root < 0 || options.root >= size)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid root (must be in 0..ranks-1)");
    if (!read) throw std::invalid_argument("gorge::mpi::fill_depressions_tiled: invalid read (empty function)");
    if (!write) throw std::invalid_argument("gorge::mpi::fill_depressions_tiled: invalid write (empty function)");
    const int root = options.root;
    const int count = layout.tile_count();
    tiled_fill_stats stats;
    failure fail;

    std::vector<int> mine;
    for (int t = 0; t < count; ++t)
        if (tile_owner(t, size) == rank) mine.push_back(t);
    stats.tiles = static_cast<int>(mine.size());

    auto load_and_flood = [&](int t, local_fill<T>& lf, bool want_edges) {
        lf.rect = layout.tile(t);
        lf.original = grid<T>(lf.rect.width, lf.rect.height);
        read(lf.rect, lf.original.view());
        flood_tile(lf, layout, options.no_data, want_edges);
    };

    // Step 1: local fills; perimeters and spill graphs packed for the root.
    const bool keep = options.retention == tile_retention::keep;
    std::vector<local_fill<T>> kept;
    writer out;
    int current = -1;
    try {
        for (int t : mine) {
            current = t;
            local_fill<T> lf;
            load_and_flood(t, lf, true);
            const std::ptrdiff_t w = lf.rect.width, h = lf.rect.height;
            out.put(static_cast<std::int32_t>(t));
            out.put(static_cast<std::uint64_t>(lf.edges.size()));
            for_each_perimeter_cell(w, h, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
                const std::size_t i = lf.index(x, y);
                out.put(lf.label[i]);
                out.put(lf.z[i]);
            });
            for (const edge<T>& e : lf.edges) {
                out.put(e.a);
                out.put(e.b);
                out.put(e.level);
            }
            lf.edges.clear();
            lf.edges.shrink_to_fit();
            if (keep) kept.push_back(std::move(lf));
        }
        current = -1;
        as_count(out.bytes.size(), "a rank's perimeter message");
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);

    // Step 2: gather at the root.
    const int send_count = static_cast<int>(out.bytes.size());
    std::vector<int> counts(rank == root ? static_cast<std::size_t>(size) : 0), displs;
    check_mpi(MPI_Gather(&send_count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm), "MPI_Gather");
    std::vector<unsigned char> all;
    if (rank == root) {
        displs.assign(static_cast<std::size_t>(size), 0);
        std::size_t total = 0;
        for (int i = 0; i < size; ++i) {
            displs[static_cast<std::size_t>(i)] = static_cast<int>(total);
            total += static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
            if (total > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
                fail.record(-1, "the perimeters of all tiles exceed 2^31 - 1 bytes at the root (use larger tiles)");
                break;
            }
        }
        if (!fail.failed) all.resize(total);
    }
    agree(comm, fail, layout);
    check_mpi(MPI_Gatherv(out.bytes.data(), send_count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                          root, comm),
              "MPI_Gatherv");
    if (rank != root) stats.bytes_sent += static_cast<std::uint64_t>(send_count);
    out.bytes.clear();
    out.bytes.shrink_to_fit();

    // Step 3: the root solves the spill levels and sends each rank those of its tiles.
    std::vector<unsigned char> levels_out;
    std::vector<int> level_counts, level_displs;
    if (rank == root) {
        try {
            std::vector<perimeter<T>> tiles(static_cast<std::size_t>(count));
            reader in{all.data(), all.data() + all.size()};
            while (in.p != in.end) {
                const int t = in.get<std::int32_t>();
                if (t < 0 || t >= count || tiles[static_cast<std::size_t>(t)].received)
                    throw std::runtime_error("gorge::mpi: malformed perimeter message (tile number)");
                perimeter<T>& p = tiles[static_cast<std::size_t>(t)];
                p.received = true;
                const tile_rect r = layout.tile(t);
                const std::uint64_t edges = in.get<std::uint64_t>();
                const std::size_t n = perimeter_count(r.width, r.height);
                p.z.resize(n);
                p.label.resize(n);
                for (std::size_t i = 0; i < n; ++i) {
                    p.label[i] = in.get<label_t>();
                    p.z[i] = in.get<T>();
                }
                for (std::uint64_t i = 0; i < edges; ++i) {
                    edge<T> e;
                    e.a = in.get<label_t>();
                    e.b = in.get<label_t>();
                    e.level = in.get<T>();
                    p.edges.push_back(e);
                }
            }
            all.clear();
            all.shrink_to_fit();
            for (int t = 0; t < count; ++t)
                if (!tiles[static_cast<std::size_t>(t)].received)
                    throw std::runtime_error("gorge::mpi: no perimeter received for tile " + std::to_string(t));
            const std::vector<std::vector<T>> levels = solve_spill_levels(layout, tiles, stats);
            level_counts.assign(static_cast<std::size_t>(size), 0);
            level_displs.assign(static_cast<std::size_t>(size), 0);
            writer w;
            for (int r = 0; r < size; ++r) {
                const std::size_t start = w.bytes.size();
                for (int t = r; t < count; t += size)
                    for (const T v : levels[static_cast<std::size_t>(t)]) w.put(v);
                level_displs[static_cast<std::size_t>(r)] = as_count(start, "the spill levels");
                level_counts[static_cast<std::size_t>(r)] = as_count(w.bytes.size() - start, "the spill levels");
                if (r != root) stats.bytes_sent += w.bytes.size() - start;
            }
            as_count(w.bytes.size(), "the spill levels");
            levels_out = std::move(w.bytes);
        } catch (const std::exception& e) {
            fail.record(-1, e.what());
        }
    }
    agree(comm, fail, layout);
    std::size_t expected = 0;
    for (int t : mine) {
        const tile_rect r = layout.tile(t);
        expected += perimeter_count(r.width, r.height) * sizeof(T);
    }
    std::vector<unsigned char> levels_in(expected);
    check_mpi(MPI_Scatterv(levels_out.data(), level_counts.data(), level_displs.data(), MPI_BYTE, levels_in.data(),
                           as_count(expected, "the spill levels"), MPI_BYTE, root, comm),
              "MPI_Scatterv");
    levels_out.clear();

    // Step 4: finish and write the tiles.
    try {
        reader in{levels_in.data(), levels_in.data() + levels_in.size()};
        for (std::size_t k = 0; k < mine.size(); ++k) {
            current = mine[k];
            const tile_rect r = layout.tile(current);
            std::vector<T> levels(perimeter_count(r.width, r.height));
            for (T& v : levels) v = in.get<T>();
            local_fill<T> fresh;
            if (!keep) load_and_flood(current, fresh, false);
            local_fill<T>& lf = keep ? kept[k] : fresh;
            grid<T> done;
            stats.raised_cells += finish_tile(lf, levels, done);
            if (keep) lf = local_fill<T>();  // release the tile
            write(r, done.view());
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    return stats;
}

}  // namespace

tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                        const tile_writer<float>& write, const tiled_fill_options<float>& options) {
    return run_tiled_fill<float>(comm, layout, read, write, options);
}
tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                        const tile_writer<double>& write, const tiled_fill_options<double>& options) {
    return run_tiled_fill<double>(comm, layout, read, write, options);
}

tiled_fill_stats fill_depressions_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                             const std::string& out_dir, const tiled_fill_options<float>& options) {
    std::vector<std::string> written;  // this rank's partial files
    auto remove_partials = [&] {
        for (const std::string& p : written) std::remove(p.c_str());
        written.clear();
    };
    const tile_reader<float> read = [&](const tile_rect& r, grid_view<float> cells) {
        const std::string path = raw_tile_path(in_dir, r.tx, r.ty);
        const grid<float> tile = read_raw_tile_float(path);
        if (tile.width() != r.width || tile.height() != r.height)
            throw tile_file_error(path, "is " + std::to_string(tile.width()) + " x " + std::to_string(tile.height()) +
                                            " cells, the layout needs " + std::to_string(r.width) + " x " +
                                            std::to_string(r.height));
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            std::copy(tile.view().row(y), tile.view().row(y) + r.width, cells.row(y));
    };
    const tile_writer<float> write = [&](const tile_rect& r, grid_view<const float> cells) {
        const std::string path = raw_tile_path(out_dir, r.tx, r.ty) + ".partial";
        write_raw_tile(path, cells);  // removes what it wrote when it fails
        written.push_back(path);
    };
    tiled_fill_stats stats;
    try {
        stats = fill_depressions_tiled(comm, layout, read, write, options);
    } catch (...) {
        remove_partials();
        throw;
    }
    // Every rank has written all its tiles: rename.
    failure fail;
    for (const std::string& p : written) {
        const std::string final_name = p.substr(0, p.size() - std::string(".partial").size());
        if (std::rename(p.c_str(), final_name.c_str()) != 0) fail.record(-1, "cannot rename " + p + " to " + final_name);
    }
    written.clear();
    agree(comm, fail, layout);
    return stats;
}

}  // namespace mpi
}  // namespace gorge
