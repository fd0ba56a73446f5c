// gorge/erosion/detail/droplet_brush.hpp — the erosion brush of droplet erosion: the radial
// weights 1 - d/r (r in cells, any real radius >= 1), the shared brush table (index offset, cell
// offset, normalised weight of each cell closer than r to the node) and, where the compiler has
// vector extensions, the same weights laid out as rows of blocks for the interior path of the
// step kernel (see detail/droplet_step.hpp): 16-byte blocks at aligned addresses (one copy per
// alignment of a row within a block), or, where AVX is enabled, 32-byte blocks loaded from
// wherever the row starts (one copy), which cover a row of up to 8 float cells in one block.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace gorge {
namespace detail {

/// Unnormalised brush weight of the cell at offset (dx, dy) for radius r (cells): max(0, 1 - d/r).
inline double droplet_brush_weight(int dx, int dy, double r) {
    return std::max(0.0, 1.0 - std::sqrt(double(dx) * dx + double(dy) * dy) / r);
}

/// Span of a brush of radius r cells (r >= 1): the cells of positive weight lie within span - 1
/// of the node along each axis (span = ceil(r); span = r for whole radii).
inline int droplet_brush_span(double r) { return static_cast<int>(std::ceil(r)); }

/// Number of cells with a positive weight in a brush of radius r cells (those closer than r).
inline std::size_t droplet_brush_entries(double r) {
    const int span = droplet_brush_span(r);
    std::size_t n = 0;
    for (int dy = 1 - span; dy < span; ++dy)
        for (int dx = 1 - span; dx < span; ++dx) n += droplet_brush_weight(dx, dy, r) > 0 ? 1u : 0u;
    return n;
}

/// One cell of the shared brush table: index offset from the centre (for the map's stride),
/// the offset in cells for border clipping, and the normalised weight.
template <class T>
struct droplet_brush_entry {
    std::ptrdiff_t offset;
    int dx, dy;
    T weight;
};

#if defined(__AVX__)
/// Bytes of the blocks the interior brush path reads and writes whole (see brush_blocks).
constexpr std::size_t droplet_block_bytes = 32;
/// Whether blocks sit at block-aligned addresses (true) or start near the row's first cell.
constexpr bool droplet_blocks_aligned = false;
#else
constexpr std::size_t droplet_block_bytes = 16;
constexpr bool droplet_blocks_aligned = true;
#endif
/// Cells a block may extend beyond the brush on either side: aligned, up to block lanes - 1 = 3
/// on either side; unaligned, the row's spare cells split evenly, at most 3 to the left and 4
/// to the right (see droplet_block_lead).
constexpr int droplet_block_slack = 3;

/// Values of T in one block.
template <class T>
constexpr std::size_t droplet_block_lanes() {
    return droplet_block_bytes / sizeof(T);
}

#if defined(__GNUC__) || defined(__clang__)
#define GORGE_DROPLET_BLOCKS 1
/// 16-byte vector of T (GCC/Clang vector extension) for the interior brush path.
template <class T>
struct droplet_block {
    typedef T type __attribute__((vector_size(droplet_block_bytes)));
};
#else
#define GORGE_DROPLET_BLOCKS 0
#endif

/// Brush row width, in cells, covered by whole blocks for a brush of span `brush_span`
/// (droplet_brush_span): aligned, whatever the row's alignment; unaligned, from the block row's
/// first cell.
constexpr int droplet_block_row(int brush_span, std::size_t lanes, bool aligned = droplet_blocks_aligned) {
    const int cells = 2 * brush_span - 1 + (aligned ? static_cast<int>(lanes) - 1 : 0);
    return (cells + static_cast<int>(lanes) - 1) / static_cast<int>(lanes) * static_cast<int>(lanes);
}

/// Unaligned blocks: cells a block row starts before the brush row (half the spare cells,
/// rounded down; at most 3 for 8 lanes). Aligned blocks: 0 (the alignment shift applies).
constexpr int droplet_block_lead(int brush_span, std::size_t lanes, bool aligned = droplet_blocks_aligned) {
    return aligned ? 0 : (droplet_block_row(brush_span, lanes, false) - (2 * brush_span - 1)) / 2;
}

/// Copies of the block weights: one per alignment of a row within a block, or one.
constexpr std::size_t droplet_block_copies(std::size_t lanes, bool aligned = droplet_blocks_aligned) {
    return aligned ? lanes : 1;
}

/// Bytes the brush tables of radius r cells allocate (droplet_brush_table's two vectors).
template <class T>
std::size_t droplet_brush_bytes(double r) {
    std::size_t bytes = droplet_brush_entries(r) * sizeof(droplet_brush_entry<T>);
#if GORGE_DROPLET_BLOCKS
    const int span = droplet_brush_span(r);
    constexpr std::size_t lanes = droplet_block_lanes<T>();
    bytes += droplet_block_copies(lanes) * static_cast<std::size_t>(2 * span - 1) *
             static_cast<std::size_t>(droplet_block_row(span, lanes)) * sizeof(T);
#endif
    return bytes;
}

/// The brush of one map: the entries of positive weight (row-major) and, with
/// GORGE_DROPLET_BLOCKS, the block copies and the nodes whose blocks lie inside the map.
template <class T>
struct droplet_brush_table {
    std::vector<droplet_brush_entry<T>> entries;  ///< cells of positive weight, row-major
    std::ptrdiff_t reach = 0;                      ///< brush reach around its node, span - 1
    int span = 1;                                  ///< droplet_brush_span of the radius
#if GORGE_DROPLET_BLOCKS
    static constexpr std::size_t lanes = droplet_block_lanes<T>();
    /// copies × block_rows × block_row weights (droplet_block_copies: one copy per row alignment,
    /// or one)
    std::vector<T> blocks;
    int block_rows = 0;     ///< brush rows in the block path
    int block_row = 0;      ///< cells per brush row in the block path
    int block_lead = 0;     ///< droplet_block_lead: cells a block row starts before the brush row
    std::ptrdiff_t block_x0 = 0, block_x1 = 0, block_y0 = 0, block_y1 = 0;  ///< nodes of the block path
    bool rows_share_alignment = false;  ///< row stride is a whole number of blocks
#endif

    droplet_brush_table() = default;
    /// Brush of radius r cells (1..32) for a map of width × height cells with `stride` cells per row.
    droplet_brush_table(double r, std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t stride) {
        span = droplet_brush_span(r);
        double sum = 0;
        for (int dy = 1 - span; dy < span; ++dy)
            for (int dx = 1 - span; dx < span; ++dx) {
                const double weight = droplet_brush_weight(dx, dy, r);
                if (weight > 0) sum += weight;
            }
        entries.reserve(droplet_brush_entries(r));
        for (int dy = 1 - span; dy < span; ++dy)
            for (int dx = 1 - span; dx < span; ++dx) {
                const double weight = droplet_brush_weight(dx, dy, r);
                if (weight > 0) entries.push_back({dy * stride + dx, dx, dy, T(weight / sum)});
            }
        reach = span - 1;
#if GORGE_DROPLET_BLOCKS
        // Aligned: one copy of the weight rows per alignment of a row's first cell within a
        // block, copy `shift` starting `shift` cells into its block-aligned row. Unaligned: one
        // copy, each row starting block_lead cells before the brush row.
        block_rows = 2 * span - 1;
        block_row = droplet_block_row(span, lanes);
        block_lead = droplet_block_lead(span, lanes);
        // Nodes whose blocks lie inside the map: aligned, up to droplet_block_slack cells before
        // the brush's first column; unaligned, from block_lead cells before it.
        const std::ptrdiff_t before = droplet_blocks_aligned ? droplet_block_slack : block_lead;
        block_x0 = reach + before;
        block_x1 = width - block_row + reach + (droplet_blocks_aligned ? 0 : block_lead) + 1;
        block_y0 = reach;
        block_y1 = height - block_rows + reach + 1;
        rows_share_alignment = (static_cast<std::size_t>(stride) * sizeof(T)) % droplet_block_bytes == 0;
        const auto rows = static_cast<std::size_t>(block_rows), row_cells = static_cast<std::size_t>(block_row);
        const std::size_t copies = droplet_block_copies(lanes);
        blocks.assign(copies * rows * row_cells, T(0));
        for (std::size_t shift = 0; shift < copies; ++shift) {
            for (const droplet_brush_entry<T>& e : entries)
                blocks[(shift * rows + static_cast<std::size_t>(e.dy + reach)) * row_cells + shift +
                       static_cast<std::size_t>(block_lead + e.dx + reach)] = e.weight;
        }
#else
        (void)width;
        (void)height;
#endif
    }
};

}  // namespace detail
}  // namespace gorge
