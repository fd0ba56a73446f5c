// Depression filling of a tiled world over MPI (include/gorge/mpi/fill.hpp), after Barnes (2016).
//
// SPDX-License-Identifier: MPL-2.0
#include "gorge/mpi/fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gorge/drainage/d8.hpp"
#include "gorge/drainage/detail/bucket_arena.hpp"
#include "gorge/drainage/detail/radix_heap.hpp"
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

/// Perimeter cell p of a w x h tile: its tile coordinates (inverse of perimeter_index).
inline void perimeter_cell(std::size_t p, std::ptrdiff_t w, std::ptrdiff_t h, std::ptrdiff_t& x, std::ptrdiff_t& y) {
    const std::ptrdiff_t i = static_cast<std::ptrdiff_t>(p);
    if (h == 1 || i < w) {
        x = i, y = 0;
        return;
    }
    const std::ptrdiff_t side = w == 1 ? 1 : 2;
    const std::ptrdiff_t middle = (h - 2) * side;
    if (i < w + middle) {
        const std::ptrdiff_t j = i - w;  // two cells a row (one when w == 1): no division
        y = 1 + (w == 1 ? j : j >> 1);
        x = w == 1 || (j & 1) == 0 ? 0 : w - 1;
        return;
    }
    x = i - w - middle, y = h - 1;
}

/// A data cell must be finite, as in gorge::fill_depressions: std::invalid_argument naming the
/// cell (x, y) of tile r in map coordinates otherwise.
template <class T>
void check_data_cell(T v, const tile_rect& r, std::ptrdiff_t x, std::ptrdiff_t y, const char* who) {
    if (!std::isfinite(v)) detail::throw_not_finite(who, r.x + x, r.y + y);
}

/// Drops the tile's spill edges that the root's solve cannot need. The root computes each
/// label's spill level as a minimax path value (the lowest, over paths to an outlet, of the
/// highest edge on the path), and a minimum spanning forest keeps every minimax value of its
/// graph: an edge joining two labels already joined by lower edges only offers a path no lower
/// than theirs. So Kruskal runs over the tile's whole label graph, the edges the root adds
/// itself (touching perimeter seeds, at the higher seed's height) included, and only the sent
/// edges that join two parts are kept: at most one per perimeter cell, whatever the terrain.
/// The spill levels, and so the filled map, are unchanged; the root receives and relaxes fewer
/// edges. The outlets ("outside" and every perimeter cell labelled so) are one node: the
/// root's solve starts them all at -infinity.
template <class T>
void keep_spanning_edges(local_fill<T>& t) {
    const std::ptrdiff_t w = t.rect.width, h = t.rect.height;
    const std::size_t nodes = 1 + perimeter_count(w, h);  // label l is node l; outside_label is 0
    struct candidate {
        T level;
        label_t a, b;
        std::uint32_t sent;  // 1 + index into t.edges, 0 for an edge the root adds itself
    };
    std::vector<candidate> all;
    all.reserve(t.edges.size() + 4 * nodes);
    for (std::size_t i = 0; i < t.edges.size(); ++i)
        all.push_back({t.edges[i].level, t.edges[i].a, t.edges[i].b, static_cast<std::uint32_t>(i + 1)});
    // Touching seeds (both on the perimeter, both with data): each pair once, from the cell
    // that comes first in perimeter order.
    for_each_perimeter_cell(w, h, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
        const std::size_t i = t.index(x, y);
        const label_t li = t.label[i];
        if (li == no_label) return;
        const std::size_t pi = perimeter_index(x, y, w, h);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t nx = x + d8_dx[k], ny = y + d8_dy[k];
            if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
            if (nx != 0 && ny != 0 && nx != w - 1 && ny != h - 1) continue;  // not a seed
            if (perimeter_index(nx, ny, w, h) <= pi) continue;
            const std::size_t n = t.index(nx, ny);
            if (t.label[n] == no_label || t.label[n] == li) continue;
            all.push_back({std::max(t.z[i], t.z[n]), li, t.label[n], 0});
        }
    });
    std::sort(all.begin(), all.end(), [](const candidate& p, const candidate& q) { return p.level < q.level; });
    detail::spanning_forest forest;
    forest.reset(nodes);
    std::vector<edge<T>> kept;
    for (const candidate& c : all)
        if (forest.join(c.a, c.b) && c.sent) kept.push_back(t.edges[c.sent - 1]);
    t.edges = std::move(kept);
}

/// Cells of a w x h tile padded by one cell on each side.
inline std::uint64_t padded_cells(std::ptrdiff_t width, std::ptrdiff_t height) {
    return (static_cast<std::uint64_t>(width) + 2) * (static_cast<std::uint64_t>(height) + 2);
}
inline std::uint64_t padded_cells(const tile_rect& r) { return padded_cells(r.width, r.height); }

/// Tiles of up to this many padded cells flood with 32-bit cell indices, larger ones with 64-bit.
constexpr std::uint64_t narrow_tile_cells = std::numeric_limits<std::uint32_t>::max();

/// A rank's tile floods' queues, kept from tile to tile: each flood first gives all their storage
/// back (radix_heap::clear_storage), so every tile's queue takes the same chunks again and their
/// pages stay the same. (Kept as they are, as detail/flood_queues.hpp keeps a whole-map fill's,
/// the buckets would keep their largest sizes over all tiles: 23 MiB of peak growth on the
/// out-of-core test; made afresh for every tile, the C library's heap gives the chunks new
/// places: 10-15 MiB.)
template <class T>
struct tile_flood_queues {
    using key_t = decltype(detail::ordered_bits(T()));
    /// The queues of cell indices of type I.
    template <class I>
    struct of_index {
        detail::radix_heap<key_t, I> open;
        detail::cell_fifo<I> pit;
    };
    std::unique_ptr<of_index<std::uint32_t>> narrow;  // tiles of fewer than 2^32 padded cells
    std::unique_ptr<of_index<std::size_t>> wide;      // larger tiles

    /// Frees them (made again by the next flood).
    void release() {
        narrow.reset();
        wide.reset();
    }
};

/// The Priority-Flood of flood_tile with cell indices of type I (wide enough for the padded tile).
template <class I, class T>
void flood_tile_indexed(local_fill<T>& t, const tile_layout& layout, const std::optional<T>& no_data, bool want_edges,
                        typename tile_flood_queues<T>::template of_index<I>& queues) {
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
            check_data_cell(v, r, x, y, "gorge::mpi::fill_depressions_tiled");
            const std::size_t i = t.index(x, y);
            t.z[i] = v + T(0);  // -0 + 0 == +0, as gorge::fill_depressions writes it
            t.label[i] = unvisited;
        }
    }
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = detail::d8_offset(k, t.pitch);

    detail::radix_heap<typename tile_flood_queues<T>::key_t, I>& open = queues.open;
    detail::cell_fifo<I>& pit = queues.pit;
    open.clear_storage();
    pit.clear();
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
            open.push(detail::ordered_bits(t.z[i]), static_cast<I>(i));
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
            pit.clear();  // emptied: start over at the front of its storage
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
                pit.push(static_cast<I>(n));
            } else {
                open.push(detail::ordered_bits(z[n]), static_cast<I>(n));
            }
        }
    }
    t.edges.clear();
    if (want_edges) {
        // Two perimeter labels whose seed cells touch always meet at the higher seed's height
        // (every cell of a label lies at or above its seed): the root adds those edges itself
        // from the perimeter heights, so they are not sent.
        t.edges.reserve(spill.size());
        for (const auto& e : spill) {
            const label_t a = static_cast<label_t>(e.first >> 32), b = static_cast<label_t>(e.first & 0xffffffffu);
            if (a != outside_label) {
                std::ptrdiff_t xa = 0, ya = 0, xb = 0, yb = 0;
                perimeter_cell(a - 1, w, h, xa, ya);
                perimeter_cell(b - 1, w, h, xb, yb);
                if (xa - xb <= 1 && xb - xa <= 1 && ya - yb <= 1 && yb - ya <= 1) continue;
            }
            t.edges.push_back({a, b, e.second});
        }
        keep_spanning_edges(t);
        std::sort(t.edges.begin(), t.edges.end(), [](const edge<T>& p, const edge<T>& q) {
            return p.a != q.a ? p.a < q.a : p.b < q.b;
        });
    }
}

/// Floods tile t from its perimeter (and its cells next to no-data), labelling watersheds and,
/// when want_edges, recording the spill graph (step 1 of the header comment). Tiles whose padded
/// cells fit in 32 bits (all but those of more than 4 G cells) queue 32-bit indices: half the
/// queue storage of 64-bit ones.
template <class T>
void flood_tile(local_fill<T>& t, const tile_layout& layout, const std::optional<T>& no_data, bool want_edges,
                tile_flood_queues<T>& queues) {
    if (padded_cells(t.rect) <= narrow_tile_cells) {
        if (!queues.narrow) queues.narrow = std::make_unique<typename tile_flood_queues<T>::template of_index<std::uint32_t>>();
        flood_tile_indexed<std::uint32_t>(t, layout, no_data, want_edges, *queues.narrow);
    } else {
        if (!queues.wide) queues.wide = std::make_unique<typename tile_flood_queues<T>::template of_index<std::size_t>>();
        flood_tile_indexed<std::size_t>(t, layout, no_data, want_edges, *queues.wide);
    }
}

/// Kind of a perimeter cell in the root's graph.
enum node_kind : std::uint8_t {
    own_label = 0,   // starts its own watershed (a node of the spill graph)
    outside_kind = 1,  // an outlet of the whole map: water leaves there (spill level -infinity)
    no_data_kind = 2,  // no data: not part of the graph
};

/// Node numbers of the root's graph: one per perimeter cell of every tile (tile t's cells are
/// base[t] .. base[t + 1] - 1, in perimeter order). The gathered messages hold at least 8 bytes
/// per perimeter cell and stay below 2^31 bytes, so 32 bits number them.
using node_t = std::uint32_t;

/// Cells of a w x h tile padded by one cell on each side; std::invalid_argument naming `who`
/// unless w, h >= 1.
std::uint64_t padded_tile_cells(std::ptrdiff_t width, std::ptrdiff_t height, const char* who) {
    if (width < 1 || height < 1)
        throw std::invalid_argument(std::string(who) + ": invalid width or height (" + std::to_string(width) + " x " +
                                    std::to_string(height) + "; both must be >= 1)");
    return padded_cells(width, height);
}

/// A tile flood's queues as the memory cap counts them (fill.hpp, tiled_fill_tile_bytes): room for
/// two entries per padded cell, of 32-bit cell indices up to `narrow_cells` padded cells (64-bit
/// past them), rounded up to the queue's storage chunks.
template <class T>
std::uint64_t queue_bytes(std::uint64_t padded, std::uint64_t narrow_cells) {
    using key_t = decltype(detail::ordered_bits(T()));
    const std::uint64_t entry = padded <= narrow_cells ? sizeof(typename detail::radix_heap<key_t, std::uint32_t>::entry)
                                                       : sizeof(typename detail::radix_heap<key_t, std::size_t>::entry);
    return detail::bucket_arena::chunk_bytes_for(2 * entry * padded);
}

/// Bytes of tile r's perimeter message at most, as tiled_fill_options::memory_cap counts it
/// (fill.hpp): its header (tile number, edge count), every perimeter cell's label and height, and
/// at most one spill edge per perimeter cell (keep_spanning_edges).
template <class T>
std::uint64_t message_bytes_bound(const tile_rect& r) {
    const std::uint64_t perimeter = perimeter_count(r.width, r.height);
    return sizeof(std::int32_t) + sizeof(std::uint64_t) + perimeter * (sizeof(label_t) + sizeof(T)) +
           perimeter * (2 * sizeof(label_t) + sizeof(T));
}

/// Bytes the root's spill graph takes, as tiled_fill_options::memory_cap counts it (fill.hpp).
template <class T>
std::uint64_t graph_bytes(std::uint64_t perimeter_cells, std::uint64_t inner_edges, std::uint64_t tiles) {
    return perimeter_cells * (6 * sizeof(T) + 22) + inner_edges * (3 * sizeof(T) + 16) + tiles * 40;
}

/// One rank's perimeter message, or a piece of it, at the root.
struct message_part {
    const unsigned char* at;
    std::size_t size;
    int rank;  // the sender
};

/// The root's part: the spill graph of all tiles, and the spill level of every perimeter label.
/// The graph is kept lean (O(perimeter cells) memory, a few bytes each): the joins across tile
/// borders are not stored but found from the layout when a node is reached.
template <class T>
class spill_graph {
public:
    /// Reads the perimeter messages; the caller frees them after.
    spill_graph(const tile_layout& layout, const std::vector<message_part>& parts) : layout_(layout) {
        const int count = layout.tile_count();
        base_.assign(static_cast<std::size_t>(count) + 1, 0);
        for (int t = 0; t < count; ++t) {
            const tile_rect r = layout.tile(t);
            base_[static_cast<std::size_t>(t) + 1] = base_[static_cast<std::size_t>(t)] + perimeter_count(r.width, r.height);
        }
        const std::uint64_t nodes = base_.back();
        if (nodes >= std::numeric_limits<node_t>::max())
            throw std::runtime_error("gorge::mpi: more than 2^32 - 2 perimeter cells (use larger tiles)");
        z_.resize(nodes);
        tile_of_.resize(nodes);
        for (int t = 0; t < count; ++t)
            std::fill(tile_of_.begin() + static_cast<std::ptrdiff_t>(base_[static_cast<std::size_t>(t)]),
                      tile_of_.begin() + static_cast<std::ptrdiff_t>(base_[static_cast<std::size_t>(t) + 1]), static_cast<std::uint32_t>(t));
        kind_.assign(nodes, no_data_kind);
        level_.assign(nodes, std::numeric_limits<T>::infinity());
        first_.assign(nodes + 1, 0);
        // Pass 1: perimeters, tile numbers, degrees of the edges inside tiles.
        std::vector<std::uint8_t> received(static_cast<std::size_t>(count), 0);
        sender_.assign(static_cast<std::size_t>(count), -1);
        struct section {
            const unsigned char* at;  // the tile's edges
            const unsigned char* end;
            int tile;
            std::uint64_t edges;
        };
        std::vector<section> edge_sections;
        for (const auto& part : parts) {
            reader in{part.at, part.at + part.size};
            while (in.p != in.end) {
                const int t = in.get<std::int32_t>();
                if (t < 0 || t >= count || received[static_cast<std::size_t>(t)])
                    throw std::runtime_error("gorge::mpi: malformed perimeter message (tile number)");
                received[static_cast<std::size_t>(t)] = 1;
                sender_[static_cast<std::size_t>(t)] = part.rank;
                const std::uint64_t edges = in.get<std::uint64_t>();
                const std::uint64_t b = base_[static_cast<std::size_t>(t)], n = base_[static_cast<std::size_t>(t) + 1] - b;
                for (std::uint64_t i = 0; i < n; ++i) {
                    const label_t l = in.get<label_t>();
                    z_[b + i] = in.get<T>();
                    if (l == outside_label)
                        kind_[b + i] = outside_kind;
                    else if (l == no_label)
                        kind_[b + i] = no_data_kind, has_no_data_ = true;
                    else if (l == 1 + i)
                        kind_[b + i] = own_label;
                    else
                        throw std::runtime_error("gorge::mpi: malformed perimeter message (label)");
                }
                edge_sections.push_back({in.p, in.end, t, edges});
                for (std::uint64_t i = 0; i < edges; ++i) {
                    const label_t a = in.get<label_t>(), c = in.get<label_t>();
                    const T level = in.get<T>();
                    if (a >= c || c > n) throw std::runtime_error("gorge::mpi: malformed perimeter message (edge)");
                    ++inner_edges_;
                    if (a == outside_label) {  // c drains outside at `level`
                        T& lc = level_[b + c - 1];
                        lc = std::min(lc, level);
                    } else {
                        ++first_[b + a], ++first_[b + c];  // degree, at index node + 1
                    }
                }
            }
        }
        for (int t = 0; t < count; ++t)
            if (!received[static_cast<std::size_t>(t)])
                throw std::runtime_error("gorge::mpi: no perimeter received for tile " + std::to_string(t));
        for (std::uint64_t i = 0; i < nodes; ++i) first_[i + 1] += first_[i];
        // Pass 2: the edges inside tiles, both ways.
        adj_.resize(first_[nodes]);
        {
            std::vector<node_t> fill(first_.begin(), first_.end() - 1);
            for (const section& part : edge_sections) {
                const std::uint64_t b = base_[static_cast<std::size_t>(part.tile)];
                reader in{part.at, part.end};
                for (std::uint64_t i = 0; i < part.edges; ++i) {
                    const label_t a = in.get<label_t>(), c = in.get<label_t>();
                    const T level = in.get<T>();
                    if (a == outside_label) continue;
                    const node_t u = static_cast<node_t>(b + a - 1), v = static_cast<node_t>(b + c - 1);
                    adj_[fill[u]++] = {v, level};
                    adj_[fill[v]++] = {u, level};
                }
            }
        }
    }

    /// Solves every node's spill level: the lowest, over all paths to an outlet, of the highest
    /// passing level on the path (a Priority-Flood over the graph; the value is unique, whatever
    /// the order of equal levels).
    void solve(tiled_fill_stats& stats) {
        const std::uint64_t nodes = z_.size();
        // Levels leave the queue in increasing order and every candidate is at least the level
        // being processed, so the keys are monotone: the radix heap of the single-machine fill.
        detail::radix_heap<decltype(detail::ordered_bits(T())), node_t> queue;
        for (node_t v = 0; v < nodes; ++v) {
            if (kind_[v] == outside_kind) {
                level_[v] = -std::numeric_limits<T>::infinity();
            } else if (kind_[v] == own_label && has_no_data_) {
                // A cross-border neighbour without data is an outlet of v at v's height.
                for_each_neighbour(v, [&](node_t u) {
                    if (kind_[u] == no_data_kind) level_[v] = std::min(level_[v], z_[v]);
                });
            }
            if (kind_[v] != no_data_kind && level_[v] != std::numeric_limits<T>::infinity())
                queue.push(detail::ordered_bits(level_[v]), v);
        }
        // The edges between perimeter cells (across tile borders, and between touching seeds of
        // one tile) are counted once each, by whichever end is settled first: an outlet or a
        // watershed and any data neighbour not settled yet, plus a watershed's no-data neighbours.
        std::uint64_t border_edges = 0;
        std::vector<std::uint8_t> done(nodes, 0);
        auto is_new_edge = [&](bool own, node_t u) {  // v (a watershed if own, else an outlet) to u
            const std::uint8_t k = kind_[u];
            return k == no_data_kind ? own : !done[u] && (own || k == own_label);
        };
        auto relax = [&](node_t u, T candidate) {
            if (done[u] || kind_[u] == no_data_kind || !(candidate < level_[u])) return;
            level_[u] = candidate;
            queue.push(detail::ordered_bits(candidate), u);
        };
        while (!queue.empty()) {
            const node_t v = queue.pop();
            if (done[v]) continue;
            done[v] = 1;
            const T lv = detail::from_ordered_bits(queue.last_key());
            const bool own = kind_[v] == own_label;
            for_each_neighbour(v, [&](node_t u) {
                border_edges += is_new_edge(own, u) ? 1u : 0u;
                relax(u, std::max(lv, std::max(z_[v], z_[u])));
            });
            for (std::uint64_t j = first_[v]; j < first_[static_cast<std::size_t>(v) + 1]; ++j)
                relax(adj_[j].first, std::max(lv, adj_[j].second));
        }
        for (node_t v = 0; v < nodes; ++v) {  // watersheds no path joins to an outlet (if any)
            if (done[v] || kind_[v] == no_data_kind) continue;
            done[v] = 1;
            const bool own = kind_[v] == own_label;
            for_each_neighbour(v, [&](node_t u) { border_edges += is_new_edge(own, u) ? 1u : 0u; });
        }
        stats.labels = nodes + 1;
        stats.graph_edges = inner_edges_ + border_edges;
    }

    /// The rank that sent tile t's perimeter (and so gets its levels).
    int sender(int t) const { return sender_[static_cast<std::size_t>(t)]; }

    /// Spill levels of tile t's perimeter labels (index = perimeter number), appended to `out`;
    /// -infinity for outlets, no-data cells and (should one exist) a label no path joins to an
    /// outlet, which then keeps its local fill.
    void put_levels(int t, writer& out) const {
        for (std::uint64_t i = base_[static_cast<std::size_t>(t)]; i < base_[static_cast<std::size_t>(t) + 1]; ++i) {
            const T v = level_[i];
            out.put(kind_[i] != own_label || v == std::numeric_limits<T>::infinity() ? -std::numeric_limits<T>::infinity() : v);
        }
    }

private:
    /// Calls f(u) for each perimeter cell u 8-adjacent to node v's cell: in other tiles, and on
    /// v's own tile's perimeter (the edges between touching seeds, which the tiles do not send).
    /// A neighbour across a border lies in the tile next door, at the near edge of that tile: no
    /// division on this path, which the root's solve runs for every node.
    template <class F>
    void for_each_neighbour(node_t v, F&& f) const {
        const int t = static_cast<int>(tile_of_[v]);
        const std::ptrdiff_t tiles_x = layout_.tiles_x(), tiles_y = layout_.tiles_y();
        const std::ptrdiff_t tx = t % tiles_x, ty = t / tiles_x;
        auto extent = [](std::ptrdiff_t i, std::ptrdiff_t n, std::ptrdiff_t size, std::ptrdiff_t map) {
            return i + 1 < n ? size : map - i * size;  // the last tile of a row or column may be narrower
        };
        const std::ptrdiff_t w = extent(tx, tiles_x, layout_.tile_width, layout_.map_width);
        const std::ptrdiff_t h = extent(ty, tiles_y, layout_.tile_height, layout_.map_height);
        std::ptrdiff_t x = 0, y = 0;
        perimeter_cell(v - base_[static_cast<std::size_t>(t)], w, h, x, y);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t nx = x + d8_dx[k], ny = y + d8_dy[k];
            const int sx = nx < 0 ? -1 : (nx >= w ? 1 : 0), sy = ny < 0 ? -1 : (ny >= h ? 1 : 0);
            if (sx == 0 && sy == 0) {
                if (nx == 0 || ny == 0 || nx == w - 1 || ny == h - 1)
                    f(static_cast<node_t>(base_[static_cast<std::size_t>(t)] + perimeter_index(nx, ny, w, h)));
                continue;
            }
            const std::ptrdiff_t ux = tx + sx, uy = ty + sy;
            if (ux < 0 || uy < 0 || ux >= tiles_x || uy >= tiles_y) continue;  // off the map
            const std::ptrdiff_t uw = extent(ux, tiles_x, layout_.tile_width, layout_.map_width);
            const std::ptrdiff_t uh = extent(uy, tiles_y, layout_.tile_height, layout_.map_height);
            const std::ptrdiff_t cx = sx < 0 ? uw - 1 : (sx > 0 ? 0 : nx), cy = sy < 0 ? uh - 1 : (sy > 0 ? 0 : ny);
            const std::size_t u = static_cast<std::size_t>(uy * tiles_x + ux);
            f(static_cast<node_t>(base_[u] + perimeter_index(cx, cy, uw, uh)));
        }
    }

    const tile_layout& layout_;
    std::vector<std::uint64_t> base_;
    std::vector<T> z_;
    std::vector<std::uint32_t> tile_of_;  // tile number of each node
    std::vector<int> sender_;             // rank that sent each tile
    std::vector<std::uint8_t> kind_;
    std::vector<T> level_;
    std::vector<node_t> first_;  // edges inside tiles: fewer than 2^28 (12 message bytes each)
    std::vector<std::pair<node_t, T>> adj_;
    std::uint64_t inner_edges_ = 0;
    bool has_no_data_ = false;  // some perimeter cell has no data
};

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

/// Checks what every tiled fill needs before any communication (std::invalid_argument on every
/// rank together) and returns this rank and the rank count.
template <class T>
void check_arguments(MPI_Comm comm, const tile_layout& layout, const tile_reader<T>& read, const tile_writer<T>& write,
                     const tiled_fill_options<T>& options, const char* who, bool dynamic_dealing, int& rank, int& size) {
    layout.validate();
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (options.root < 0 || options.root >= size)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid root (must be in 0..ranks-1)");
    if (options.dealing != tile_dealing::fixed && options.dealing != tile_dealing::dynamic)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid dealing (not a tile_dealing value)");
    if (options.dealing == tile_dealing::dynamic && !dynamic_dealing)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid dealing (" + std::string(who) +
                                    " deals tiles by tile_owner only: use tile_dealing::fixed)");
    if (options.dealing == tile_dealing::dynamic && options.retention == tile_retention::keep && options.memory_cap != 0)
        throw std::invalid_argument(
            "gorge::mpi::tiled_fill_options: invalid dealing (tile_dealing::dynamic with tile_retention::keep and a "
            "memory_cap: a rank could keep more tiles than the cap allows; use tile_dealing::fixed or tile_retention::recompute)");
    if (!read) throw std::invalid_argument(std::string(who) + ": invalid read (empty function)");
    if (!write) throw std::invalid_argument(std::string(who) + ": invalid write (empty function)");
}

/// The memory cap's check of tiles (fill.hpp, tiled_fill_options::memory_cap): the largest
/// working set of one tile, work(r) bytes, alone, and with it everything a rank keeps for all its
/// tiles whatever the one being worked on: kept_per_cell bytes per padded cell (0 when the rank
/// keeps no tiles) and per_tile(r) bytes for every tile r of the rank. A rank's tiles are its
/// tile_owner share, or with dynamic dealing (which may give one rank every tile) all tiles.
/// Every rank checks every rank's tiles, so that all throw (std::invalid_argument) together.
/// Returns the bytes of this rank's kept tiles, per_tile not included (0 without a cap).
template <class Work, class PerTile>
std::uint64_t check_tile_memory(const tile_layout& layout, int rank, int size, std::size_t memory_cap, bool dynamic,
                                Work&& work, std::uint64_t kept_per_cell, PerTile&& per_tile) {
    if (memory_cap == 0) return 0;
    const int count = layout.tile_count();
    std::uint64_t largest = 0, all_tiles = 0, tiles_of_rank = 0;
    std::vector<std::uint64_t> kept_of(static_cast<std::size_t>(size), 0);
    for (int t = 0; t < count; ++t) {
        const tile_rect r = layout.tile(t);
        largest = std::max<std::uint64_t>(largest, work(r));
        const std::uint64_t tile = padded_cells(r) * kept_per_cell;
        const std::uint64_t kept = tile + per_tile(r);
        const int owner = tile_owner(t, size);
        kept_of[static_cast<std::size_t>(owner)] += kept;
        all_tiles += kept;
        if (owner == rank) tiles_of_rank += tile;
    }
    if (dynamic) std::fill(kept_of.begin(), kept_of.end(), all_tiles);
    const auto worst = std::max_element(kept_of.begin(), kept_of.end());
    const std::uint64_t cap = memory_cap;
    if (largest > cap)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid memory_cap (" + std::to_string(cap) +
                                    " bytes; a tile of " + std::to_string(layout.tile_width) + " x " +
                                    std::to_string(layout.tile_height) + " cells needs " + std::to_string(largest) +
                                    ": use smaller tiles)");
    if (*worst + largest > cap)
        throw std::invalid_argument("gorge::mpi::tiled_fill_options: invalid memory_cap (" + std::to_string(cap) +
                                    " bytes; rank " + std::to_string(worst - kept_of.begin()) + " needs " +
                                    std::to_string(*worst + largest) + " for a tile with what it keeps of all its tiles" +
                                    (kept_per_cell != 0 ? ": use tile_retention::recompute, more ranks or a larger cap)"
                                                        : ": use more ranks or a larger cap)"));
    return tiles_of_rank;
}

/// The dynamic dealer (tile_dealing::dynamic): a tile counter in a one-int window on the root,
/// which every rank advances with MPI_Fetch_and_op in one passive-target epoch, so that no rank
/// waits for the root to answer. Collective to make and to close; close() must be reached by
/// every rank (the callers catch every failure in between).
class tile_counter {
public:
    tile_counter(MPI_Comm comm, int root) : root_(root) {
        int rank = 0;
        check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
        const MPI_Aint bytes = rank == root ? static_cast<MPI_Aint>(sizeof(int)) : 0;
        check_mpi(MPI_Win_allocate(bytes, static_cast<int>(sizeof(int)), MPI_INFO_NULL, comm, &base_, &window_),
                  "MPI_Win_allocate");
        if (rank == root) *static_cast<int*>(base_) = 0;
        check_mpi(MPI_Win_lock_all(0, window_), "MPI_Win_lock_all");
        check_mpi(MPI_Win_sync(window_), "MPI_Win_sync");  // the root's 0 is public before any rank takes
        check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    }
    tile_counter(const tile_counter&) = delete;
    tile_counter& operator=(const tile_counter&) = delete;

    /// The next tile number (counts up from 0 over all ranks; >= the tile count once all are taken).
    int next() {
        const int one = 1;
        int taken = 0;
        check_mpi(MPI_Fetch_and_op(&one, &taken, MPI_INT, root_, 0, MPI_SUM, window_), "MPI_Fetch_and_op");
        check_mpi(MPI_Win_flush(root_, window_), "MPI_Win_flush");
        return taken;
    }
    /// Collective: ends the epoch and frees the window.
    void close() {
        check_mpi(MPI_Win_unlock_all(window_), "MPI_Win_unlock_all");
        check_mpi(MPI_Win_free(&window_), "MPI_Win_free");
    }

private:
    int root_;
    void* base_ = nullptr;
    MPI_Win window_ = MPI_WIN_NULL;
};

template <class T>
tiled_fill_stats run_tiled_fill(MPI_Comm comm, const tile_layout& layout, const tile_reader<T>& read,
                                const tile_writer<T>& write, const tiled_fill_options<T>& options) {
    int rank = 0, size = 0;
    check_arguments(comm, layout, read, write, options, "gorge::mpi::fill_depressions_tiled", true, rank, size);
    const int root = options.root;
    const int count = layout.tile_count();
    tiled_fill_stats stats;
    failure fail;

    // The tiles this rank fills, in increasing order: known now (fixed dealing) or taken one by
    // one in step 1 (dynamic dealing).
    const bool dynamic = options.dealing == tile_dealing::dynamic;
    std::vector<int> mine = dynamic ? std::vector<int>() : owned_tiles(rank, size, count);

    // Memory cap: the largest tile's working set, the messages and the kept tiles (fill.hpp).
    const bool keep = options.retention == tile_retention::keep;
    const std::uint64_t kept_bytes = check_tile_memory(
        layout, rank, size, options.memory_cap, dynamic,
        [](const tile_rect& r) { return tiled_fill_tile_bytes<T>(r.width, r.height); }, keep ? 3 * sizeof(T) + 4 : 0,
        message_bytes_bound<T>);
    auto notify = [&](fill_event e, int t) {
        if (options.progress) options.progress(e, t);
    };

    tile_flood_queues<T> queues;
    auto load_and_flood = [&](int t, local_fill<T>& lf, bool want_edges) {
        lf.rect = layout.tile(t);
        lf.original = grid<T>(lf.rect.width, lf.rect.height);
        read(lf.rect, lf.original.view());
        flood_tile(lf, layout, options.no_data, want_edges, queues);
    };

    // Step 1: local fills; perimeters and spill graphs packed for the root.
    std::vector<local_fill<T>> kept;
    // This rank's message, one exactly sized chunk per tile (no copies while it grows); sent
    // without concatenation through an MPI datatype; the root keeps its own in place.
    std::vector<std::vector<unsigned char>> chunks;
    std::size_t message_bytes = 0;
    int current = -1;
    std::unique_ptr<tile_counter> counter;
    if (dynamic) counter = std::make_unique<tile_counter>(comm, root);
    std::size_t fixed_next = 0;
    auto next_tile = [&]() -> int {  // count when this rank has no more tiles
        if (dynamic) return std::min(counter->next(), count);
        return fixed_next < mine.size() ? mine[fixed_next++] : count;
    };
    try {
        for (int t = next_tile(); t < count; t = next_tile()) {
            current = t;
            if (dynamic) mine.push_back(t);
            local_fill<T> lf;
            load_and_flood(t, lf, true);
            const std::ptrdiff_t w = lf.rect.width, h = lf.rect.height;
            writer out;
            out.bytes.reserve(sizeof(std::int32_t) + sizeof(std::uint64_t) +
                              perimeter_count(w, h) * (sizeof(label_t) + sizeof(T)) +
                              lf.edges.size() * (2 * sizeof(label_t) + sizeof(T)));
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
            message_bytes += out.bytes.size();
            chunks.push_back(std::move(out.bytes));
            lf.edges.clear();
            lf.edges.shrink_to_fit();
            if (keep) kept.push_back(std::move(lf));
            notify(fill_event::tile_read, t);
        }
        current = -1;
        as_count(message_bytes, "a rank's perimeter message");
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    queues.release();  // not needed again before step 4, and the root's graph comes first
    if (counter) counter->close();
    stats.tiles = static_cast<int>(mine.size());
    agree(comm, fail, layout);

    // Step 2: gather at the root.
    const int send_count = rank == root ? 0 : static_cast<int>(message_bytes);
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
        if (!fail.failed && options.memory_cap != 0) {
            // Perimeter cells are known from the layout; the rest of the messages are edges.
            std::uint64_t perimeter_cells = 0;
            for (int t = 0; t < count; ++t) {
                const tile_rect r = layout.tile(t);
                perimeter_cells += perimeter_count(r.width, r.height);
            }
            const std::uint64_t fixed = static_cast<std::uint64_t>(count) * (sizeof(std::int32_t) + sizeof(std::uint64_t)) +
                                        perimeter_cells * (sizeof(label_t) + sizeof(T));
            const std::uint64_t message = total + message_bytes;  // the others' and the root's own
            const std::uint64_t edges = message > fixed ? (message - fixed) / (2 * sizeof(label_t) + sizeof(T)) : 0;
            const std::uint64_t need =
                graph_bytes<T>(perimeter_cells, edges, static_cast<std::uint64_t>(count)) + message + kept_bytes;
            if (need > options.memory_cap)
                fail.record(-1, "memory_cap of " + std::to_string(options.memory_cap) + " bytes exceeded: the spill graph of " +
                                    std::to_string(perimeter_cells) + " perimeter cells and " + std::to_string(edges) +
                                    " edges needs " + std::to_string(need) + " bytes at the root (use larger tiles)");
        }
        if (!fail.failed) all.resize(total);
    }
    agree(comm, fail, layout);
    {
        // The chunks as one MPI datatype (absolute addresses from MPI_BOTTOM); the root sends none.
        MPI_Datatype message_type = MPI_BYTE;
        int send_items = 0;
        if (send_count > 0) {
            std::vector<int> lengths;
            std::vector<MPI_Aint> addresses;
            for (const std::vector<unsigned char>& c : chunks) {
                MPI_Aint a;
                check_mpi(MPI_Get_address(c.data(), &a), "MPI_Get_address");
                lengths.push_back(static_cast<int>(c.size()));
                addresses.push_back(a);
            }
            check_mpi(MPI_Type_create_hindexed(static_cast<int>(chunks.size()), lengths.data(), addresses.data(), MPI_BYTE,
                                               &message_type),
                      "MPI_Type_create_hindexed");
            check_mpi(MPI_Type_commit(&message_type), "MPI_Type_commit");
            send_items = 1;
        }
        const int code = MPI_Gatherv(send_items ? MPI_BOTTOM : nullptr, send_items, message_type, all.data(), counts.data(),
                                     displs.data(), MPI_BYTE, root, comm);
        if (message_type != MPI_BYTE) MPI_Type_free(&message_type);
        check_mpi(code, "MPI_Gatherv");
    }
    if (rank != root) stats.bytes_sent += static_cast<std::uint64_t>(send_count);
    if (rank != root) chunks = std::vector<std::vector<unsigned char>>();

    // Step 3: the root solves the spill levels and sends each rank those of its tiles.
    std::vector<unsigned char> levels_out;
    std::vector<int> level_counts, level_displs;
    if (rank == root) {
        try {
            std::vector<message_part> parts;
            for (int r = 0; r < size; ++r) {
                const std::size_t i = static_cast<std::size_t>(r);
                if (r == root)
                    for (const std::vector<unsigned char>& c : chunks) parts.push_back({c.data(), c.size(), r});
                else
                    parts.push_back({all.data() + displs[i], static_cast<std::size_t>(counts[i]), r});
            }
            spill_graph<T> graph(layout, parts);
            chunks = std::vector<std::vector<unsigned char>>();
            all = std::vector<unsigned char>();
            graph.solve(stats);
            level_counts.assign(static_cast<std::size_t>(size), 0);
            level_displs.assign(static_cast<std::size_t>(size), 0);
            std::vector<std::vector<int>> tiles_of(static_cast<std::size_t>(size));  // in increasing order
            for (int t = 0; t < count; ++t) tiles_of[static_cast<std::size_t>(graph.sender(t))].push_back(t);
            writer w;
            for (int r = 0; r < size; ++r) {
                const std::size_t start = w.bytes.size();
                for (int t : tiles_of[static_cast<std::size_t>(r)]) graph.put_levels(t, w);
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
    levels_out.shrink_to_fit();

    // Step 4: finish and write the tiles.
    try {
        notify(fill_event::levels_solved, -1);
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
            notify(fill_event::tile_written, current);
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    return stats;
}

// ---------------------------------------------------------------------------------------------
// Epsilon filling across tiles (fill.hpp, "Epsilon filling across tiles"): rounds of tile solves
// with detail::least_epsilon_surface, rings fed by the neighbouring tiles' perimeters.

/// One tile of this rank in the epsilon fill.
template <class T>
struct epsilon_tile {
    tile_rect rect;
    std::vector<T> ring;       // current values around the tile (least_epsilon_surface's ring)
    std::vector<T> perimeter;  // last published perimeter, as the neighbours see it: E, -infinity
                               // at no-data cells, +infinity where nothing reached yet
    // tile_retention::keep: the heights and the last surface, both padded by one cell all round
    // ((w + 2) x (h + 2), row-major; see inside()). z: the heights as read (-0 as +0), +infinity
    // around. e: E, -infinity at no-data cells (outlet sides), +infinity around (unused).
    std::vector<T> z, e;
    std::vector<std::size_t> lowered;  // ring cells lowered since the last solve
    bool dirty = true;         // the ring changed since the last solve (all tiles in round 0)
    bool full = true;          // the next solve starts from scratch (see detail::lower_epsilon_surface)
};

/// The w x h inside of a tile's padded heights or surface (epsilon_tile::z, ::e).
template <class T>
grid_view<T> inside(std::vector<T>& padded, std::ptrdiff_t w, std::ptrdiff_t h) {
    return grid_view<T>(padded.data() + (w + 2) + 1, w, h, w + 2);
}

template <class T>
tiled_fill_stats run_tiled_epsilon(MPI_Comm comm, const tile_layout& layout, const tile_reader<T>& read,
                                   const tile_writer<T>& write, const tiled_fill_options<T>& options) {
    static const char* const who = "gorge::mpi::fill_depressions_epsilon_tiled";
    int rank = 0, size = 0;
    check_arguments(comm, layout, read, write, options, who, false, rank, size);
    const int count = layout.tile_count();
    tiled_fill_stats stats;
    failure fail;
    const std::vector<int> mine = owned_tiles(rank, size, count);
    stats.tiles = static_cast<int>(mine.size());
    const bool keep = options.retention == tile_retention::keep;
    check_tile_memory(layout, rank, size, options.memory_cap, false,
                      [](const tile_rect& r) { return tiled_epsilon_fill_tile_bytes<T>(r.width, r.height); },
                      keep ? 2 * sizeof(T) : 0,
                      [](const tile_rect& r) { return static_cast<std::uint64_t>(3 * sizeof(T) * ring_count(r.width, r.height)); });
    auto notify = [&](fill_event e, int t) {
        if (options.progress) options.progress(e, t);
    };
    auto slot_of = [&](int t) -> std::size_t {  // index of own tile t in `mine`
        const auto it = std::lower_bound(mine.begin(), mine.end(), t);
        if (it == mine.end() || *it != t) throw std::runtime_error("gorge::mpi: malformed perimeter message (tile number)");
        return static_cast<std::size_t>(it - mine.begin());
    };

    constexpr T outlet_side = -std::numeric_limits<T>::infinity();
    constexpr T unknown = std::numeric_limits<T>::infinity();
    std::vector<epsilon_tile<T>> tiles(mine.size());
    for (std::size_t k = 0; k < mine.size(); ++k) {
        epsilon_tile<T>& et = tiles[k];
        et.rect = layout.tile(mine[k]);
        const tile_rect& r = et.rect;
        et.ring.resize(ring_count(r.width, r.height));
        for_each_ring_position(r.width, r.height, [&](std::size_t i, std::ptrdiff_t x, std::ptrdiff_t y) {
            const std::ptrdiff_t gx = r.x + x, gy = r.y + y;
            const bool off_map = gx < 0 || gy < 0 || gx >= layout.map_width || gy >= layout.map_height;
            et.ring[i] = off_map ? outlet_side : unknown;
        });
        et.perimeter.assign(perimeter_count(r.width, r.height), unknown);
    }
    fill_options<T> solve_options;
    solve_options.no_data = options.no_data;
    const detail::epsilon_step<T> step(options.no_data);
    // Solves tile et with its current ring into e (padded; epsilon_tile), reading its heights into
    // z (padded) first when z is empty: from scratch (least_epsilon_surface) when et.full or e is
    // new, else by lowering the kept surface from the lowered ring cells (detail::lower_epsilon_surface).
    auto solve = [&](epsilon_tile<T>& et, std::vector<T>& z, std::vector<T>& e) {
        const tile_rect& r = et.rect;
        const std::size_t padded = static_cast<std::size_t>(padded_cells(r));
        if (z.empty()) {
            z.assign(padded, unknown);
            const grid_view<T> zi = inside(z, r.width, r.height);
            read(r, zi);
            for (std::ptrdiff_t y = 0; y < r.height; ++y) {
                T* row = zi.row(y);
                for (std::ptrdiff_t x = 0; x < r.width; ++x)
                    if (!detail::is_no_data(row[x], options.no_data)) {
                        check_data_cell(row[x], r, x, y, who);
                        row[x] += T(0);  // -0 as +0, as the fill writes it
                    }
            }
        }
        if (e.empty()) {
            e.assign(padded, unknown);
            et.full = true;
        }
        if (et.full) {
            const grid_view<const T> zi = inside(z, r.width, r.height);
            const grid_view<T> ei = inside(e, r.width, r.height);
            detail::least_epsilon_surface<T>(zi, et.ring.data(), ei, solve_options, who);
            // Under a memory cap, the flood's queues go with the solve: kept on the thread for the
            // next tile, they would keep every bucket's largest size over all tiles.
            if (options.memory_cap != 0) release_fill_memory();
            if (options.no_data)
                for (std::ptrdiff_t y = 0; y < r.height; ++y)
                    for (std::ptrdiff_t x = 0; x < r.width; ++x)
                        if (detail::is_no_data(zi.row(y)[x], options.no_data)) ei.row(y)[x] = outlet_side;
            et.full = !keep;
        } else {
            // The heights' +infinity border keeps candidates off the surface's border.
            const grid_view<const T> zi = inside(et.z, r.width, r.height);
            if (padded <= std::numeric_limits<std::uint32_t>::max())
                detail::lower_epsilon_surface<std::uint32_t>(et.e.data(), zi.data(), zi.stride(), r.width, r.height, et.ring.data(),
                                                             et.lowered, step);
            else
                detail::lower_epsilon_surface<std::size_t>(et.e.data(), zi.data(), zi.stride(), r.width, r.height, et.ring.data(),
                                                           et.lowered, step);
        }
        et.lowered.clear();
        et.dirty = false;
    };

    // Rounds: solve the dirty tiles, send the changed perimeter pieces, apply the received ones.
    std::vector<writer> out(static_cast<std::size_t>(size));
    std::vector<T> fresh;
    int current = -1;
    for (int round = 0;; ++round) {
        for (writer& w : out) w.bytes.clear();
        try {
            for (std::size_t k = 0; k < tiles.size(); ++k) {
                epsilon_tile<T>& et = tiles[k];
                if (!et.dirty) continue;
                current = mine[k];
                const tile_rect& r = et.rect;
                std::vector<T> z_read, e_solved;
                std::vector<T>& z = keep ? et.z : z_read;
                std::vector<T>& e = keep ? et.e : e_solved;
                solve(et, z, e);
                if (round == 0) notify(fill_event::tile_read, current);
                fresh.resize(et.perimeter.size());
                const grid_view<const T> ev = inside(e, r.width, r.height);  // -infinity at no-data cells
                for_each_perimeter_cell(r.width, r.height, [&](std::ptrdiff_t x, std::ptrdiff_t y) {
                    fresh[perimeter_index(x, y, r.width, r.height)] = ev.row(y)[x];
                });
                for_each_neighbour_tile(layout, r, [&](int u) {
                    const tile_rect to = layout.tile(u);
                    bool changed = false;
                    for_each_shared_cell(to, r, [&](std::size_t, std::size_t p) { changed = changed || fresh[p] != et.perimeter[p]; });
                    if (!changed) return;
                    writer& w = out[static_cast<std::size_t>(tile_owner(u, size))];
                    w.put(static_cast<std::int32_t>(u));
                    w.put(static_cast<std::int32_t>(current));
                    for_each_shared_cell(to, r, [&](std::size_t, std::size_t p) { w.put(fresh[p]); });
                });
                et.perimeter.swap(fresh);
            }
            current = -1;
        } catch (const std::exception& e) {
            fail.record(current, e.what());
        }
        agree(comm, fail, layout);

        // Exchange the pieces: each rank gets those of the tiles around its own.
        const std::vector<unsigned char> recv_all = exchange_bytes(comm, out, layout, stats.bytes_sent);

        // Apply this rank's own pieces and the received ones to the rings.
        long long dirty = 0;
        try {
            auto apply = [&](const unsigned char* begin, std::size_t n) {
                reader in{begin, begin + n};
                while (in.p != in.end) {
                    const int u = in.get<std::int32_t>(), t = in.get<std::int32_t>();
                    if (t < 0 || t >= count) throw std::runtime_error("gorge::mpi: malformed perimeter message (tile number)");
                    epsilon_tile<T>& et = tiles[slot_of(u)];
                    for_each_shared_cell(et.rect, layout.tile(t), [&](std::size_t i, std::size_t) {
                        const T v = in.get<T>();
                        if (v != et.ring[i]) {
                            // Values only go down (fill.hpp); should one rise, solve afresh.
                            if (v < et.ring[i])
                                et.lowered.push_back(i);
                            else
                                et.full = true;
                            et.ring[i] = v;
                            et.dirty = true;
                        }
                    });
                }
            };
            const std::vector<unsigned char>& own = out[static_cast<std::size_t>(rank)].bytes;
            apply(own.data(), own.size());
            apply(recv_all.data(), recv_all.size());
            for (const epsilon_tile<T>& et : tiles) dirty += et.dirty ? 1 : 0;
        } catch (const std::exception& e) {
            fail.record(-1, e.what());
        }
        agree(comm, fail, layout);
        long long any = 0;
        check_mpi(MPI_Allreduce(&dirty, &any, 1, MPI_LONG_LONG, MPI_SUM, comm), "MPI_Allreduce");
        if (any == 0) {
            stats.rounds = round + 1;
            break;
        }
    }

    // Every ring holds its true values: the last surfaces are final. Write them (recompute: read
    // and solve each tile once more).
    try {
        notify(fill_event::levels_solved, -1);
        for (std::size_t k = 0; k < tiles.size(); ++k) {
            epsilon_tile<T>& et = tiles[k];
            current = mine[k];
            std::vector<T> z_read, e_solved;
            if (!keep) solve(et, z_read, e_solved);
            const tile_rect& r = et.rect;
            const grid_view<const T> z = inside(keep ? et.z : z_read, r.width, r.height);
            const grid_view<T> e = inside(keep ? et.e : e_solved, r.width, r.height);
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                    const T zc = z.row(y)[x], ec = e.row(y)[x];
                    if (detail::is_no_data(zc, options.no_data)) {
                        e.row(y)[x] = zc;  // no-data cells as read
                        continue;
                    }
                    // Every data cell drains somewhere; one left unreached needed a step above the
                    // largest finite value, as the single-machine fill reports.
                    if (ec == unknown)
                        throw std::overflow_error(std::string(who) + ": an epsilon step above the largest finite value at (" +
                                                  std::to_string(r.x + x) + ", " + std::to_string(r.y + y) + ")");
                    stats.raised_cells += ec != zc ? 1u : 0u;
                }
            write(r, grid_view<const T>(e));
            et = epsilon_tile<T>();  // release the tile
            notify(fill_event::tile_written, current);
        }
        current = -1;
    } catch (const std::exception& e) {
        fail.record(current, e.what());
    }
    agree(comm, fail, layout);
    return stats;
}

}  // namespace

template <class T>
std::uint64_t tiled_fill_tile_bytes(std::ptrdiff_t width, std::ptrdiff_t height) {
    const std::uint64_t padded = padded_tile_cells(width, height, "gorge::mpi::tiled_fill_tile_bytes");
    return padded * tiled_fill_bytes_per_cell<T> + queue_bytes<T>(padded, narrow_tile_cells);
}
template <class T>
std::uint64_t tiled_epsilon_fill_tile_bytes(std::ptrdiff_t width, std::ptrdiff_t height) {
    const std::uint64_t padded = padded_tile_cells(width, height, "gorge::mpi::tiled_epsilon_fill_tile_bytes");
    return padded * tiled_epsilon_fill_bytes_per_cell<T> + queue_bytes<T>(padded, detail::epsilon_flood_narrow_cells);
}
template std::uint64_t tiled_fill_tile_bytes<float>(std::ptrdiff_t width, std::ptrdiff_t height);
template std::uint64_t tiled_fill_tile_bytes<double>(std::ptrdiff_t width, std::ptrdiff_t height);
template std::uint64_t tiled_epsilon_fill_tile_bytes<float>(std::ptrdiff_t width, std::ptrdiff_t height);
template std::uint64_t tiled_epsilon_fill_tile_bytes<double>(std::ptrdiff_t width, std::ptrdiff_t height);

tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                        const tile_writer<float>& write, const tiled_fill_options<float>& options) {
    return run_tiled_fill<float>(comm, layout, read, write, options);
}
tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                        const tile_writer<double>& write, const tiled_fill_options<double>& options) {
    return run_tiled_fill<double>(comm, layout, read, write, options);
}

tiled_fill_stats fill_depressions_epsilon_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                                const tile_writer<float>& write, const tiled_fill_options<float>& options) {
    return run_tiled_epsilon<float>(comm, layout, read, write, options);
}
tiled_fill_stats fill_depressions_epsilon_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                                const tile_writer<double>& write, const tiled_fill_options<double>& options) {
    return run_tiled_epsilon<double>(comm, layout, read, write, options);
}

std::string staging_dir(const std::string& out_dir) {
    namespace fs = std::filesystem;
    auto strip = [](fs::path p) { return p.has_filename() || !p.has_relative_path() ? p : p.parent_path(); };
    fs::path p = strip(fs::path(out_dir).lexically_normal());  // "a/out/" -> "a/out"
    if (p.empty() || p.filename() == "." || p.filename() == "..") p = strip(fs::absolute(p).lexically_normal());
    return (p.parent_path() / ("." + p.filename().string() + ".gorge-staging")).string();
}

namespace {

/// The file variants (fill.hpp, fill_depressions_tile_files): `fill(read, write)` runs a tiled
/// fill with readers of in_dir's tiles and writers of staged outputs, renamed into out_dir only
/// when every rank has staged all its tiles.
template <class Fill>
tiled_fill_stats run_with_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                     const std::string& out_dir, const tiled_fill_options<float>& options, Fill&& fill) {
    layout.validate();
    int rank = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    const std::string staging = staging_dir(out_dir);
    // The staging directory: made by the root; files a killed earlier job left there removed
    // (only plain files: they are the staged tiles).
    failure fail;
    if (rank == options.root) {
        try {
            std::filesystem::create_directories(staging);
            for (const auto& e : std::filesystem::directory_iterator(staging))
                if (e.is_regular_file()) std::filesystem::remove(e.path());
        } catch (const std::exception& e) {
            fail.record(-1, "cannot prepare the staging directory " + staging + ": " + e.what());
        }
    }
    agree(comm, fail, layout);
    auto remove_staging = [&] {  // collective: the root removes the directory once every rank emptied it
        MPI_Barrier(comm);
        if (rank == options.root) {
            std::error_code ec;
            std::filesystem::remove(staging, ec);  // only when empty
        }
    };
    std::vector<std::pair<std::string, std::string>> staged;  // this rank's (staged, final) names
    auto remove_staged = [&] {
        for (const auto& f : staged) std::remove(f.first.c_str());
        staged.clear();
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
        const std::string path = raw_tile_path(staging, r.tx, r.ty);
        write_raw_tile(path, cells);  // removes what it wrote when it fails
        staged.emplace_back(path, raw_tile_path(out_dir, r.tx, r.ty));
    };
    tiled_fill_stats stats;
    try {
        stats = fill(read, write);
    } catch (const job_error&) {  // thrown by every rank together
        remove_staged();
        remove_staging();
        throw;
    } catch (const std::invalid_argument&) {  // thrown by every rank before any communication
        remove_staging();
        throw;
    } catch (...) {  // not collective (an MPI failure): no barrier; remove what can be removed
        remove_staged();
        if (rank == options.root) {
            std::error_code ec;
            std::filesystem::remove(staging, ec);
        }
        throw;
    }
    // Every rank has staged all its tiles.
    try {
        if (options.progress) options.progress(fill_event::outputs_staged, -1);
    } catch (const std::exception& e) {
        fail.record(-1, e.what());
    }
    try {
        agree(comm, fail, layout);
    } catch (const job_error&) {
        remove_staged();
        remove_staging();
        throw;
    }
    for (const auto& f : staged)
        if (std::rename(f.first.c_str(), f.second.c_str()) != 0)
            fail.record(-1, "cannot rename " + f.first + " to " + f.second);
    remove_staged();  // those not renamed
    remove_staging();
    agree(comm, fail, layout);
    return stats;
}

}  // namespace

tiled_fill_stats fill_depressions_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                             const std::string& out_dir, const tiled_fill_options<float>& options) {
    return run_with_tile_files(comm, layout, in_dir, out_dir, options,
                               [&](const tile_reader<float>& read, const tile_writer<float>& write) {
                                   return fill_depressions_tiled(comm, layout, read, write, options);
                               });
}

tiled_fill_stats fill_depressions_epsilon_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                                     const std::string& out_dir, const tiled_fill_options<float>& options) {
    return run_with_tile_files(comm, layout, in_dir, out_dir, options,
                               [&](const tile_reader<float>& read, const tile_writer<float>& write) {
                                   return fill_depressions_epsilon_tiled(comm, layout, read, write, options);
                               });
}

}  // namespace mpi
}  // namespace gorge
