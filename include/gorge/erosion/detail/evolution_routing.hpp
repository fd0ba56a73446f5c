// gorge/erosion/detail/evolution_routing.hpp — flow routing of the landscape evolution model:
// the map's topology (boundaries, base-level cells), steepest-descent receivers, routing across
// depressions (Priority-Flood+epsilon on a copy), the stack and the drainage area.
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
#include "../../drainage/depression_fill.hpp"

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
    for (std::ptrdiff_t y = y0; y < y1; ++y) {
        const bool inner_row = y > 0 && y + 1 < topo.height;
        for (std::ptrdiff_t x = 0; x < topo.width; ++x) {
            const std::ptrdiff_t i = y * topo.width + x;
            const auto ui = static_cast<std::size_t>(i);
            if (kind[ui] != evo_free) {
                rcv[ui] = kind[ui] == evo_base ? static_cast<evo_index>(i) : evo_none;
                code[ui] = kind[ui] == evo_base ? d8_sink : d8_no_data;
                continue;
            }
            const T h = z[ui];
            T best = T(0);
            std::ptrdiff_t to = i;
            std::uint8_t best_code = d8_sink;
            if (inner_row && x > 0 && x + 1 < topo.width) {
                // Free cells never neighbour no-data cells (those neighbours are base level).
                for (int k = 0; k < d8_neighbours; ++k) {
                    const std::ptrdiff_t j = i + topo.offsets[k];
                    const T drop = h - z[static_cast<std::size_t>(j)];
                    const T slope = (k & 1) ? drop * inv_diag : drop;
                    if (slope > best) {
                        best = slope;
                        to = j;
                        best_code = static_cast<std::uint8_t>(k);
                    }
                }
            } else {
                for (int k = 0; k < d8_neighbours; ++k) {
                    const std::ptrdiff_t j = topo.neighbour(x, y, k);
                    if (j < 0 || j == i) continue;
                    const T drop = h - z[static_cast<std::size_t>(j)];
                    const T slope = (k & 1) ? drop * inv_diag : drop;
                    if (slope > best) {
                        best = slope;
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

/// Priority-Flood+epsilon (Barnes, Lehman & Mulla 2014, "Priority-flood: An optimal
/// depression-filling and watershed-labeling algorithm for digital elevation models", Computers &
/// Geosciences 62) from the base-level cells over the topology (periodic edges included): writes
/// into `filled` the lowest surface >= z on which every free cell has a strictly lower neighbour
/// (each raised cell one ulp above the cell that reached it).
template <class T>
void evo_epsilon_fill(const evo_topology& topo, const T* z, std::vector<T>& filled, std::vector<std::uint8_t>& seen,
                      std::vector<evo_index>& pit) {
    using key_type = decltype(ordered_bits(T()));
    const std::size_t n = topo.cells();
    filled.assign(z, z + n);
    seen.assign(n, 0);
    pit.clear();
    radix_heap<key_type, evo_index> open;
    for (std::size_t i = 0; i < n; ++i) {
        if (topo.kind[i] == evo_void) seen[i] = 1;
        if (topo.kind[i] == evo_base) {
            seen[i] = 1;
            open.push(ordered_bits(z[i] == T(0) ? T(0) : z[i]), static_cast<evo_index>(i));
        }
    }
    std::size_t pit_read = 0;
    while (pit_read < pit.size() || !open.empty()) {
        evo_index c;
        if (pit_read < pit.size()) {
            c = pit[pit_read++];
            if (pit_read == pit.size()) {
                pit.clear();
                pit_read = 0;
            }
        } else {
            c = open.pop();
        }
        const std::ptrdiff_t x = static_cast<std::ptrdiff_t>(c) % topo.width;
        const std::ptrdiff_t y = static_cast<std::ptrdiff_t>(c) / topo.width;
        const T step = next_up(filled[c]);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::ptrdiff_t j = topo.neighbour(x, y, k);
            if (j < 0) continue;
            const auto uj = static_cast<std::size_t>(j);
            if (seen[uj]) continue;
            seen[uj] = 1;
            if (z[uj] <= step) {
                filled[uj] = step;
                pit.push_back(static_cast<evo_index>(j));
            } else {
                open.push(ordered_bits(z[uj]), static_cast<evo_index>(j));
            }
        }
    }
}

/// The stack: every data cell, each receiver before its donors (a breadth-first walk from the
/// base-level cells in index order over the donor lists). Returns false when some free cell was
/// not reached (its receivers form a cycle or end in a sink), which the routing rules out.
inline bool evo_build_stack(const evo_topology& topo, const evo_index* rcv, std::vector<evo_index>& donor_start,
                            std::vector<evo_index>& donors, std::vector<evo_index>& stack) {
    const std::size_t n = topo.cells();
    donor_start.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const evo_index r = rcv[i];
        if (r != evo_none && r != i) ++donor_start[std::size_t(r) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) donor_start[i + 1] += donor_start[i];
    donors.resize(donor_start[n]);
    {
        std::vector<evo_index>& fill_at = stack;  // reused as the write positions
        fill_at.assign(donor_start.begin(), donor_start.end() - 1);
        for (std::size_t i = 0; i < n; ++i) {
            const evo_index r = rcv[i];
            if (r != evo_none && r != i) donors[fill_at[r]++] = static_cast<evo_index>(i);
        }
    }
    stack.clear();
    for (std::size_t i = 0; i < n; ++i)
        if (topo.kind[i] == evo_base) stack.push_back(static_cast<evo_index>(i));
    for (std::size_t read = 0; read < stack.size(); ++read) {
        const evo_index c = stack[read];
        for (evo_index d = donor_start[c]; d < donor_start[std::size_t(c) + 1]; ++d) stack.push_back(donors[d]);
    }
    std::size_t data_cells = 0;
    for (std::size_t i = 0; i < n; ++i) data_cells += topo.kind[i] != evo_void;
    return stack.size() == data_cells;
}

/// Upstream cell counts (the cell itself included) in reverse stack order.
inline void evo_accumulate(const std::vector<evo_index>& stack, const evo_index* rcv, std::uint32_t* count) {
    for (const evo_index c : stack) count[c] = 1;
    for (std::size_t s = stack.size(); s-- > 0;) {
        const evo_index c = stack[s];
        const evo_index r = rcv[c];
        if (r != c) count[r] += count[c];
    }
}

}  // namespace detail
}  // namespace gorge
