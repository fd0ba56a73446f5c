// gorge/drainage/detail/planchon_darboux.hpp — the depression fill of Planchon & Darboux (2001).
// Planchon & Darboux, "A fast, simple and versatile algorithm to fill the depressions of
// digital elevation models", Catena 46, 159-176 (2001): the plain variant, without epsilon.
// Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

#include "../../detail/validate.hpp"
#include "../../grid/grid.hpp"
#include "../d8.hpp"
#include "../fill_options.hpp"
#include "padded_heights.hpp"
#include "priority_flood.hpp"

namespace gorge {
namespace detail {

/// fill_depressions_planchon_darboux (gorge/drainage/depression_fill.hpp says what it does).
template <class T>
fill_stats<T> run_planchon_darboux(grid_view<T> heights, const fill_options<T>& options, const char* who) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "gorge depression fills support float and double heights");
    validate(options, who);
    padded_heights<T> work(heights, options.no_data, who);
    // The ring and no-data cells act as outlets: a surface of -infinity there lets every neighbour
    // drop to its own height, exactly as outlets do. Data cells start over-flooded at +infinity.
    const T below_all = -std::numeric_limits<T>::infinity();
    std::vector<T> surface(work.z.size(), below_all);
    for (std::size_t i = 0; i < surface.size(); ++i)
        if (!work.closed.test(i)) surface[i] = std::numeric_limits<T>::infinity();
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = work.offset(k);

    // One relaxation of cell i; returns true when its surface changed.
    auto relax = [&](std::size_t i) {
        const T zi = work.z[i];
        T wi = surface[i];
        if (!(wi > zi)) return false;  // already at the terrain (or a ring / no-data cell)
        bool changed = false;
        for (int k = 0; k < d8_neighbours; ++k) {
            const T wn = surface[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(i) + off[k])];
            if (zi >= wn) {  // a neighbour drains below the terrain: the cell is not in a depression
                wi = zi;
                changed = true;
                break;
            }
            if (wi > wn) {  // the cell's water can leave at the neighbour's level
                wi = wn;
                changed = true;
            }
        }
        surface[i] = wi;
        return changed;
    };

    fill_stats<T> stats;
    if (!fill_report(options, 0.0, stats)) return stats;
    for (bool changed = true; changed;) {
        changed = false;
        for (std::ptrdiff_t y = 0; y < work.height; ++y)
            for (std::ptrdiff_t x = 0; x < work.width; ++x) changed |= relax(work.index(x, y));
        for (std::ptrdiff_t y = work.height - 1; y >= 0; --y)
            for (std::ptrdiff_t x = work.width - 1; x >= 0; --x) changed |= relax(work.index(x, y));
        if (changed && !fill_report(options, 0.0, stats)) return stats;
    }
    if (!fill_report(options, 1.0, stats)) return stats;
    for (std::size_t i = 0; i < surface.size(); ++i)
        if (!work.closed.test(i)) work.z[i] = surface[i];
    stats.raised_cells = work.write_back(heights);
    return stats;
}

}  // namespace detail
}  // namespace gorge
