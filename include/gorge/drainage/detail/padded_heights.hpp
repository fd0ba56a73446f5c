// gorge/drainage/detail/padded_heights.hpp — the depression fills' working copy of a map.
// The heights with a one-cell ring around them, the visited flags and the no-data cells, checked
// as they are copied (a non-finite data cell is named before anything changes). Not a public
// header.
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
#include <vector>

#include "../../grid/grid.hpp"
#include "../../grid/no_data.hpp"
#include "../d8.hpp"
#include "bit_set.hpp"
#include "d8_window.hpp"

namespace gorge {
namespace detail {

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
        fill_ring(ring_value);
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
        // Each of the map's cells is written below: only the ring is set here (zeroing the whole
        // block first wrote every cell twice).
        z.resize(cells);
        fill_ring(T(0));
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

    /// Sets z on the ring of cells around the map (z must hold the padded map).
    void fill_ring(T value) {
        const std::size_t cells = z.size();
        std::fill_n(z.data(), pitch, value);
        std::fill_n(z.data() + cells - static_cast<std::size_t>(pitch), pitch, value);
        for (std::ptrdiff_t y = 0; y < height; ++y) z[index(-1, y)] = z[index(width, y)] = value;
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

}  // namespace detail
}  // namespace gorge
