// gorge/drainage/d8.hpp — the D8 neighbourhood: direction codes, steps, index offsets, distances.
//
// Every gorge algorithm that looks at a cell's 8 neighbours (flow directions, flow accumulation,
// the depression fills) takes them from this one table, in this one order.
//
// Direction codes (std::uint8_t): 0..7 name the neighbour in the order E, SE, S, SW, W, NW, N, NE,
// with x growing to the east and y growing to the south (row-major images): d8_dx[k], d8_dy[k] is
// the step to neighbour k. Odd codes are the diagonals, at distance √2 (square cells of side 1);
// even codes the cardinal neighbours, at distance 1. Two more codes describe a cell rather than a
// step: d8_sink (no strictly lower neighbour) and d8_no_data (a no-data cell).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>

namespace gorge {

/// Number of neighbours of a cell, and of step codes (0..7).
inline constexpr int d8_neighbours = 8;
/// Direction code of a cell with no strictly lower neighbour (an outlet, flat or pit bottom).
inline constexpr std::uint8_t d8_sink = 8;
/// Direction code of a no-data cell.
inline constexpr std::uint8_t d8_no_data = 9;
/// x and y steps of direction codes 0..7: E, SE, S, SW, W, NW, N, NE (y grows southwards).
inline constexpr int d8_dx[d8_neighbours] = {1, 1, 0, -1, -1, -1, 0, 1};
inline constexpr int d8_dy[d8_neighbours] = {0, 1, 1, 1, 0, -1, -1, -1};

/// True for the diagonal codes (SE, SW, NW, NE: the odd ones).
constexpr bool d8_is_diagonal(int code) { return (code & 1) != 0; }

namespace detail {

/// 1/√2 rounded to T: the reciprocal of a diagonal neighbour's distance.
template <class T>
constexpr T inv_sqrt2 = T(0.70710678118654752440084436210484903928483593768847);

/// Reciprocal distance to neighbour `code` (1 cardinal, 1/√2 diagonal): weights a height drop
/// into a slope.
template <class T>
constexpr T d8_inv_distance(int code) {
    return d8_is_diagonal(code) ? inv_sqrt2<T> : T(1);
}

/// Index offset of neighbour `code` in a row-major array with `stride` elements per row.
constexpr std::ptrdiff_t d8_offset(int code, std::ptrdiff_t stride) {
    return static_cast<std::ptrdiff_t>(d8_dy[code]) * stride + static_cast<std::ptrdiff_t>(d8_dx[code]);
}

}  // namespace detail
}  // namespace gorge
