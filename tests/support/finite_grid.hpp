// Whether every cell of a grid is finite: the check the erosion tests make after a run.
#pragma once

#include <algorithm>
#include <cmath>

#include <gorge/grid/grid.hpp>

namespace gorge_test {

/// True when every cell of `g` is finite (no NaN, no infinity).
template <class T>
bool all_finite(const gorge::grid<T>& g) {
    return std::all_of(g.begin(), g.end(), [](T v) { return std::isfinite(v); });
}

}  // namespace gorge_test
