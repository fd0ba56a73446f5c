// gorge/drainage/detail/d8_window.hpp — a cell's 3 x 3 window as bits, for the depression fills.
// The window's bit layout and its D8 neighbour masks (window_neighbour_table), the index offsets
// of a mask's cells (d8_mask_offsets) and the branch-free compare of a window against a height
// (window_compare; SSE2 for float, AVX for double). Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

// SSE2 (every x86-64 compiler) and AVX, for window_compare's four-lane compares.
#include "../../detail/intrinsics.hpp"
#if GORGE_DETAIL_HAS_X86_INTRINSICS
#define GORGE_DETAIL_FILL_SSE2 1
#endif

#include "../d8.hpp"

namespace gorge {
namespace detail {

/// A cell's 3 x 3 window as 9 bits (bits 0-2: the row above, 3-5: its own row, 6-8: the row
/// below; west to east in each), and the D8 neighbour mask (bit k for neighbour k) of the window
/// bits that are set (the centre bit is ignored): one look-up instead of eight tests.
struct window_neighbour_table {
    static constexpr int window_side = 3;
    static constexpr unsigned window_cells = window_side * window_side;
    static constexpr unsigned all_cells = (1u << window_cells) - 1u;
    unsigned char mask[1u << window_cells];
};
constexpr window_neighbour_table make_window_neighbour_table() {
    window_neighbour_table t{};
    for (unsigned w = 0; w < (1u << window_neighbour_table::window_cells); ++w) {
        unsigned set = 0;
        for (int k = 0; k < d8_neighbours; ++k) {
            const int bit = (d8_dy[k] + 1) * window_neighbour_table::window_side + (d8_dx[k] + 1);
            if ((w >> bit) & 1u) set |= 1u << k;
        }
        t.mask[w] = static_cast<unsigned char>(set);
    }
    return t;
}
inline constexpr window_neighbour_table window_neighbours = make_window_neighbour_table();

/// For one row pitch, the index offsets of the cells of every D8 neighbour mask, listed: eight
/// per mask, first those of its set bits k in increasing k, then neighbour 0's repeated. A queue
/// appends a mask's cells with one vector add and store (cell_fifo::push_neighbours) instead of a
/// loop whose length a branch predictor cannot guess. Offsets are added in I's modular arithmetic,
/// as the signed type of I's width (I is std::uint32_t only when the padded map has fewer than
/// 2^32 cells, so that its pitch plus one fits in 31 bits).
template <class I>
class d8_mask_offsets {
public:
    using offset = typename std::make_signed<I>::type;
    static constexpr unsigned masks = 1u << d8_neighbours;
    explicit d8_mask_offsets(std::ptrdiff_t pitch) : offsets_(masks * d8_neighbours) {
        for (unsigned m = 0; m < masks; ++m) {
            offset* list = offsets_.data() + m * d8_neighbours;
            int j = 0;
            for (int k = 0; k < d8_neighbours; ++k)
                if ((m >> k) & 1u) list[j++] = static_cast<offset>(d8_offset(k, pitch));
            for (; j < d8_neighbours; ++j) list[j] = static_cast<offset>(d8_offset(0, pitch));
        }
    }
    /// The eight offsets listed for mask.
    const offset* of(unsigned mask) const { return offsets_.data() + mask * d8_neighbours; }

private:
    std::vector<offset> offsets_;
};

/// Number of set bits of a D8 mask.
inline int mask_cells(unsigned mask) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcount(mask);
#else
    int n = 0;
    for (; mask != 0; mask &= mask - 1) ++n;
    return n;
#endif
}

/// The window bits (window_neighbour_table's layout) of the cells around `at` whose value is above
/// v; `at` is a cell of a padded map (a data cell, never the ring), pitch its row length. On
/// rough terrain whether a neighbour is higher is a coin toss that a branch predictor mostly
/// loses, so there is no branch: with SSE2 (float) or AVX (double) each window row is one
/// four-lane compare, the bottom row loaded one cell to the left so that no load reaches past the
/// padded map's end (the row above and the cell's own row read one cell past the window's east
/// end, which the ring and the next row keep inside the map).
template <class T>
inline unsigned window_compare(const T* at, std::ptrdiff_t pitch, T v) {
    constexpr int side = window_neighbour_table::window_side;
    unsigned bits = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            bits |= static_cast<unsigned>(at[dy * pitch + dx] > v) << ((dy + 1) * side + dx + 1);
    return bits;
}
#if defined(GORGE_DETAIL_FILL_SSE2)
/// The window bits from the four-lane compare masks of its rows: the row above and the cell's own
/// row loaded from their west cell (lanes 0-2), the row below from one cell further west (lanes 1-3).
inline unsigned window_from_lane_masks(unsigned above, unsigned own, unsigned below) {
    constexpr int side = window_neighbour_table::window_side;
    constexpr unsigned row = (1u << side) - 1u;
    return (above & row) | (own & row) << side | (below >> 1) << (2 * side);
}
inline unsigned window_compare(const float* at, std::ptrdiff_t pitch, float v) {
    const __m128 level = _mm_set1_ps(v);
    auto row = [&](const float* from) {
        return static_cast<unsigned>(_mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(from), level)));
    };
    return window_from_lane_masks(row(at - pitch - 1), row(at - 1), row(at + pitch - 2));
}
#endif
#if defined(GORGE_DETAIL_FILL_SSE2) && defined(__AVX__)
inline unsigned window_compare(const double* at, std::ptrdiff_t pitch, double v) {
    const __m256d level = _mm256_set1_pd(v);
    auto row = [&](const double* from) {
        return static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(from), level, _CMP_GT_OQ)));
    };
    return window_from_lane_masks(row(at - pitch - 1), row(at - 1), row(at + pitch - 2));
}
#endif

}  // namespace detail
}  // namespace gorge
