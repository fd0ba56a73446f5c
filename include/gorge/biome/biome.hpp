// gorge/biome/biome.hpp — biomes from elevation × moisture, with slope, waterline and snow overrides.
//
// The lookup is the Whittaker-style table that Amit Patel popularised for games in Red Blob
// Games' "Making maps with noise functions" (https://www.redblobgames.com/maps/terrain-from-noise/):
// elevation picks a zone (lowland, upland, highland, alpine) and moisture a biome inside it. gorge
// keeps the article's zone and moisture thresholds as defaults and adds three overrides that
// heightmaps from erosion need:
//   1. ocean   elevation < sea_level (water, whatever the slope or moisture);
//   2. rock    slope >= rock_slope: cliffs and steep valley walls hold no soil, whatever the
//              moisture (this also turns steep coasts and steep snowfields into rock);
//   3. beach   sea_level <= elevation < beach_top: the band at the waterline;
//   4. snow    elevation >= snow_line: the highest cells, whatever the moisture;
//   5. otherwise the zone × moisture table below.
// Rules are applied in that order (the first that matches wins).
//
//   zone (elevation)                 moisture thresholds → biome
//   lowland  [beach_top, lowland_top)  < 0.16 subtropical desert, < 0.33 grassland,
//                                      < 0.66 tropical seasonal forest, else tropical rain forest
//   upland   [lowland_top, upland_top) < 0.16 temperate desert, < 0.50 grassland,
//                                      < 0.83 temperate deciduous forest, else temperate rain forest
//   highland [upland_top, alpine_top)  < 0.33 temperate desert, < 0.66 shrubland, else taiga
//   alpine   [alpine_top, snow_line)   < 0.10 scorched, < 0.20 bare, < 0.50 tundra, else snow
//
// Units: elevation and moisture are expected in [0, 1] (normalise first; values outside fall into
// the lowest or highest class). slope is rise over run, |∇h|, in elevation units per horizontal
// unit; biome_map computes it from the elevation grid and the horizontal cell size expressed in
// elevation units (e.g. 10 m cells on a map whose elevation 1 is 2000 m: cell_size = 0.005).
//
// Guarantees: pure functions, deterministic; bad parameters or non-finite inputs throw
// std::invalid_argument naming the parameter or the cell.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../detail/validate.hpp"
#include "../grid/grid.hpp"

namespace gorge {

/// Biomes, overrides first, then the table by zone from dry to wet.
enum class biome : std::uint8_t {
    ocean,
    beach,
    rock,
    snow,
    subtropical_desert,
    grassland,
    tropical_seasonal_forest,
    tropical_rain_forest,
    temperate_desert,
    temperate_deciduous_forest,
    temperate_rain_forest,
    shrubland,
    taiga,
    scorched,
    bare,
    tundra,
};
/// Number of biome values.
inline constexpr std::size_t biome_count = 16;

/// 8-bit sRGB colour of a biome for maps: red, green and blue, each 0..255.
struct biome_rgb {
    std::uint8_t r, g, b;
};

/// Map colours, indexed by the biome's value: muted tones chosen so that adjacent zones stay
/// distinguishable and rivers drawn in blue stand out.
inline constexpr std::array<biome_rgb, biome_count> biome_palette = {{
    {40, 72, 122},    // ocean
    {216, 199, 152},  // beach
    {118, 110, 104},  // rock
    {244, 246, 250},  // snow
    {214, 188, 138},  // subtropical desert
    {148, 178, 92},   // grassland
    {96, 158, 66},    // tropical seasonal forest
    {42, 118, 68},    // tropical rain forest
    {202, 198, 150},  // temperate desert
    {98, 144, 80},    // temperate deciduous forest
    {60, 112, 82},    // temperate rain forest
    {150, 160, 120},  // shrubland
    {112, 134, 100},  // taiga
    {86, 80, 76},     // scorched
    {142, 136, 126},  // bare
    {186, 190, 166},  // tundra
}};

/// Map colour of a biome: biome_palette's entry for it.
inline biome_rgb biome_colour(biome b) { return biome_palette[static_cast<std::size_t>(b)]; }

/// Lower-case English name of a biome ("tropical rain forest").
inline const char* biome_name(biome b) {
    static const char* const names[biome_count] = {
        "ocean",     "beach",           "rock",         "snow",
        "subtropical desert", "grassland", "tropical seasonal forest", "tropical rain forest",
        "temperate desert", "temperate deciduous forest", "temperate rain forest", "shrubland",
        "taiga",     "scorched",        "bare",         "tundra"};
    return names[static_cast<std::size_t>(b)];
}

/// Thresholds of the classification. Elevation thresholds must not decrease in the order
/// sea_level <= beach_top <= lowland_top <= upland_top <= alpine_top <= snow_line; moisture
/// thresholds of each zone increase and lie in [0, 1].
template <class T>
struct biome_params {
    T sea_level = T(0.1);     ///< below: ocean (default 0.1)
    T beach_top = T(0.12);    ///< [sea_level, beach_top): beach (default 0.12)
    T lowland_top = T(0.3);   ///< top of the lowland zone (default 0.3)
    T upland_top = T(0.6);    ///< top of the upland zone (default 0.6)
    T alpine_top = T(0.8);    ///< start of the alpine zone (default 0.8); named for where it begins
    T snow_line = T(0.9);     ///< at or above: snow whatever the moisture (default 0.9; 1 or more disables)
    T rock_slope = T(1);      ///< slope (rise/run) at or above which land is rock (default 1 = 45°; > 0, may be +inf)
    /// Moisture thresholds per zone (defaults: Red Blob Games' table).
    std::array<T, 3> lowland_moisture = {T(0.16), T(0.33), T(0.66)};
    std::array<T, 3> upland_moisture = {T(0.16), T(0.5), T(0.83)};
    std::array<T, 2> highland_moisture = {T(0.33), T(0.66)};
    std::array<T, 3> alpine_moisture = {T(0.1), T(0.2), T(0.5)};

    /// Name and rule of the first bad parameter; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        const std::array<T, 6> levels = {sea_level, beach_top, lowland_top, upland_top, alpine_top, snow_line};
        for (T v : levels)
            if (!std::isfinite(v)) return "elevation thresholds (must be finite)";
        for (std::size_t i = 1; i < levels.size(); ++i)
            if (levels[i] < levels[i - 1])
                return "elevation thresholds (need sea_level <= beach_top <= lowland_top <= upland_top <= "
                       "alpine_top <= snow_line)";
        if (!(rock_slope > T(0))) return "rock_slope (must be > 0; +inf disables the rock override)";
        if (!increasing_unit(lowland_moisture)) return "lowland_moisture (must increase within [0, 1])";
        if (!increasing_unit(upland_moisture)) return "upland_moisture (must increase within [0, 1])";
        if (!increasing_unit(highland_moisture)) return "highland_moisture (must increase within [0, 1])";
        if (!increasing_unit(alpine_moisture)) return "alpine_moisture (must increase within [0, 1])";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::biome_params"); }

private:
    template <std::size_t N>
    static bool increasing_unit(const std::array<T, N>& t) {
        for (std::size_t i = 0; i < N; ++i) {
            if (!(t[i] >= T(0) && t[i] <= T(1))) return false;
            if (i > 0 && !(t[i] > t[i - 1])) return false;
        }
        return true;
    }
};

namespace detail {

/// Index of the first threshold that m lies below (N when none): the moisture class.
template <class T, std::size_t N>
std::size_t moisture_class(T m, const std::array<T, N>& thresholds) {
    std::size_t i = 0;
    while (i < N && !(m < thresholds[i])) ++i;
    return i;
}

template <class T>
biome classify_unchecked(T elevation, T moisture, T slope, const biome_params<T>& p) {
    if (elevation < p.sea_level) return biome::ocean;
    if (slope >= p.rock_slope) return biome::rock;
    if (elevation < p.beach_top) return biome::beach;
    if (elevation >= p.snow_line) return biome::snow;
    if (elevation < p.lowland_top) {
        constexpr biome table[] = {biome::subtropical_desert, biome::grassland, biome::tropical_seasonal_forest,
                                   biome::tropical_rain_forest};
        return table[moisture_class(moisture, p.lowland_moisture)];
    }
    if (elevation < p.upland_top) {
        constexpr biome table[] = {biome::temperate_desert, biome::grassland, biome::temperate_deciduous_forest,
                                   biome::temperate_rain_forest};
        return table[moisture_class(moisture, p.upland_moisture)];
    }
    if (elevation < p.alpine_top) {
        constexpr biome table[] = {biome::temperate_desert, biome::shrubland, biome::taiga};
        return table[moisture_class(moisture, p.highland_moisture)];
    }
    constexpr biome table[] = {biome::scorched, biome::bare, biome::tundra, biome::snow};
    return table[moisture_class(moisture, p.alpine_moisture)];
}

}  // namespace detail

/// Biome of one cell. Throws std::invalid_argument for bad params or a non-finite elevation,
/// moisture, or a slope that is negative or NaN (+inf is allowed: a vertical wall).
template <class T>
biome classify_biome(T elevation, T moisture, T slope, const biome_params<T>& params = {}) {
    static_assert(std::is_floating_point<T>::value, "gorge::classify_biome needs floating-point inputs");
    params.validate();
    if (!std::isfinite(elevation)) throw std::invalid_argument("gorge::classify_biome: elevation is not finite");
    if (!std::isfinite(moisture)) throw std::invalid_argument("gorge::classify_biome: moisture is not finite");
    if (!(slope >= T(0))) throw std::invalid_argument("gorge::classify_biome: slope must be >= 0 (not NaN)");
    return detail::classify_unchecked(elevation, moisture, slope, params);
}

/// Slope |∇h| (rise over run) of every cell: central differences inside, one-sided differences
/// on the map edge (a 1-cell-wide map has zero slope across), with cells cell_size apart in the
/// elevation's units. Throws std::invalid_argument for an empty elevation view, a cell_size that
/// is not finite and > 0, or a non-finite elevation (cell named).
template <class V, class T = std::remove_const_t<V>>
grid<T> slope_map(grid_view<V> elevation_view, T cell_size) {
    static_assert(std::is_floating_point<T>::value, "gorge::slope_map needs floating-point heights");
    const grid_view<const T> e = elevation_view;
    detail::require_not_empty(e, "gorge::slope_map", "elevation");
    if (!(std::isfinite(cell_size) && cell_size > T(0)))
        throw std::invalid_argument("gorge::slope_map: cell_size must be finite and > 0, got " +
                                    std::to_string(cell_size));
    e.check_finite("elevation");
    const std::ptrdiff_t w = e.width(), h = e.height();
    grid<T> slope(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        const std::ptrdiff_t y0 = y > 0 ? y - 1 : y, y1 = y + 1 < h ? y + 1 : y;
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::ptrdiff_t x0 = x > 0 ? x - 1 : x, x1 = x + 1 < w ? x + 1 : x;
            const T dx = x1 > x0 ? (e(x1, y) - e(x0, y)) / (T(x1 - x0) * cell_size) : T(0);
            const T dy = y1 > y0 ? (e(x, y1) - e(x, y0)) / (T(y1 - y0) * cell_size) : T(0);
            slope(x, y) = std::sqrt(dx * dx + dy * dy);
        }
    }
    return slope;
}

/// Biome of every cell from elevation, moisture and slope grids of equal size.
/// Throws std::invalid_argument for bad params, an empty elevation view, mismatched sizes, or a
/// non-finite elevation or moisture, or a negative / NaN slope (cell named).
template <class VE, class VM, class VS, class T = std::remove_const_t<VE>>
grid<biome> biome_map(grid_view<VE> elevation_view, grid_view<VM> moisture_view, grid_view<VS> slope_view,
                      const biome_params<T>& params = {}) {
    static_assert(std::is_floating_point<T>::value, "gorge::biome_map needs floating-point inputs");
    const grid_view<const T> elevation = elevation_view, moisture = moisture_view, slope = slope_view;
    params.validate();
    detail::require_not_empty(elevation, "gorge::biome_map", "elevation");
    const std::ptrdiff_t w = elevation.width(), h = elevation.height();
    if (moisture.width() != w || moisture.height() != h)
        throw std::invalid_argument("gorge::biome_map: moisture must have the size of elevation");
    if (slope.width() != w || slope.height() != h)
        throw std::invalid_argument("gorge::biome_map: slope must have the size of elevation");
    elevation.check_finite("elevation");
    moisture.check_finite("moisture");
    grid<biome> out(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const T s = slope(x, y);
            if (!(s >= T(0)))
                throw std::invalid_argument("gorge::biome_map: slope at cell (" + std::to_string(x) + ", " +
                                            std::to_string(y) + ") is negative or NaN");
            out(x, y) = detail::classify_unchecked(elevation(x, y), moisture(x, y), s, params);
        }
    return out;
}

/// Biome of every cell, with the slope computed by slope_map(elevation, cell_size).
template <class VE, class VM, class T = std::remove_const_t<VE>>
grid<biome> biome_map(grid_view<VE> elevation, grid_view<VM> moisture, T cell_size,
                      const biome_params<T>& params = {}) {
    params.validate();
    detail::require_not_empty(elevation, "gorge::biome_map", "elevation");
    const grid<T> slope = slope_map(elevation, cell_size);
    return biome_map(elevation, moisture, slope.view(), params);
}
template <class T>
grid<biome> biome_map(const grid<T>& elevation, const grid<T>& moisture, T cell_size,
                      const biome_params<T>& params = {}) {
    return biome_map(elevation.view(), moisture.view(), cell_size, params);
}

}  // namespace gorge
