// gorge/grid/no_data.hpp — no-data cells of heightmaps: recognising them, and rejecting other
// non-finite cells.
//
// A grid algorithm that accepts an optional no-data value (std::optional<T>) treats every cell
// equal to it as having no data. A NaN no-data value matches every NaN cell (NaN never compares
// equal, so "equal" would match none). Any other cell must be finite.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "grid.hpp"

namespace gorge {
namespace detail {

/// True when v is the no-data value (NaN no-data matches every NaN).
template <class T>
inline bool is_no_data(T v, const std::optional<T>& no_data) {
    if (!no_data) return false;
    return std::isnan(*no_data) ? std::isnan(v) : v == *no_data;
}

/// Throws std::invalid_argument: the height at cell (x, y) is neither finite nor no-data.
[[noreturn]] inline void throw_not_finite(const char* who, std::ptrdiff_t x, std::ptrdiff_t y) {
    throw std::invalid_argument(std::string(who) + ": height at cell (" + std::to_string(x) + ", " +
                                std::to_string(y) + ") is not finite (NaN or infinite) and is not the no-data value");
}

/// Throws std::invalid_argument naming the first data (not no-data) cell that is not finite.
template <class T>
void check_heights(grid_view<const T> heights, const std::optional<T>& no_data, const char* who) {
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const T* r = heights.row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x)
            if (!std::isfinite(r[x]) && !is_no_data(r[x], no_data)) throw_not_finite(who, x, y);
    }
}

/// True when every cell of `heights` is no-data or finite with |h| <= limit. One pass without
/// branches per cell, for checks whose error (naming the first bad cell) is worked out only when
/// this fails.
template <class T>
bool heights_within(grid_view<const T> heights, T limit, const std::optional<T>& no_data) {
    const bool nan_marks = no_data && std::isnan(*no_data);
    const bool value_marks = no_data && !nan_marks;
    const T marker = value_marks ? *no_data : T(0);
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const T* r = heights.row(y);
        bool ok = true;
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x) {
            const T h = r[x];
            ok &= (std::fabs(h) <= limit) | (nan_marks & (h != h)) | (value_marks & (h == marker));
        }
        if (!ok) return false;
    }
    return true;
}

}  // namespace detail
}  // namespace gorge
