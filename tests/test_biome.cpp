// Biomes: each rule of the classification on hand-chosen cells (including the boundaries, which
// are half-open intervals), the slope map against a hand-computed plane, and bad input.
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include <gorge/gorge.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"

namespace {

using gorge::biome;

biome classify(double e, double m, double slope = 0.0, const gorge::biome_params<double>& p = {}) {
    return gorge::classify_biome(e, m, slope, p);
}

using gorge_test::contains;
using gorge_test::invalid_argument_message;

}  // namespace

TEST_CASE("overrides: ocean, then rock, then beach, then snow", "[biome]") {
    // Ocean below sea level (0.1), even where steep.
    CHECK(classify(0.05, 0.5) == biome::ocean);
    CHECK(classify(0.0999, 0.5, 5.0) == biome::ocean);
    // Rock at slope >= 1 on land, whatever the moisture; just below 1 the table applies.
    CHECK(classify(0.45, 0.9, 1.2) == biome::rock);
    CHECK(classify(0.45, 0.0, 1.0) == biome::rock);
    CHECK(classify(0.45, 0.9, 0.99) == biome::temperate_rain_forest);
    // Beach in [0.1, 0.12); a steep coast is rock; 0.12 itself is lowland.
    CHECK(classify(0.1, 0.5) == biome::beach);
    CHECK(classify(0.11, 0.9, 0.3) == biome::beach);
    CHECK(classify(0.11, 0.9, 2.0) == biome::rock);
    CHECK(classify(0.12, 0.9) == biome::tropical_rain_forest);
    // Snow at or above 0.9 whatever the moisture (the table would say scorched at m = 0).
    CHECK(classify(0.95, 0.0) == biome::snow);
    CHECK(classify(0.9, 0.05) == biome::snow);
    CHECK(classify(0.8999, 0.05) == biome::scorched);
    CHECK(classify(0.95, 0.0, 3.0) == biome::rock);
}

TEST_CASE("zone x moisture table, including the half-open boundaries", "[biome]") {
    const std::tuple<double, double, biome> cells[] = {
        // lowland [0.12, 0.3)
        {0.2, 0.1, biome::subtropical_desert},
        {0.2, 0.16, biome::grassland},
        {0.2, 0.32, biome::grassland},
        {0.2, 0.5, biome::tropical_seasonal_forest},
        {0.2, 0.66, biome::tropical_rain_forest},
        {0.2, 1.0, biome::tropical_rain_forest},
        // upland [0.3, 0.6)
        {0.3, 0.1, biome::temperate_desert},
        {0.45, 0.3, biome::grassland},
        {0.45, 0.5, biome::temperate_deciduous_forest},
        {0.45, 0.82, biome::temperate_deciduous_forest},
        {0.5999, 0.83, biome::temperate_rain_forest},
        // highland [0.6, 0.8)
        {0.6, 0.2, biome::temperate_desert},
        {0.7, 0.33, biome::shrubland},
        {0.7, 0.8, biome::taiga},
        // alpine [0.8, 0.9)
        {0.8, 0.05, biome::scorched},
        {0.85, 0.1, biome::bare},
        {0.85, 0.3, biome::tundra},
        {0.85, 0.5, biome::snow},
        // moisture outside [0, 1] falls into the driest / wettest class
        {0.45, -0.5, biome::temperate_desert},
        {0.45, 1.5, biome::temperate_rain_forest},
    };
    for (const auto& c : cells) {
        INFO("elevation " << std::get<0>(c) << ", moisture " << std::get<1>(c));
        CHECK(classify(std::get<0>(c), std::get<1>(c)) == std::get<2>(c));
    }
}

TEST_CASE("custom thresholds move and disable the overrides", "[biome]") {
    gorge::biome_params<double> p;
    p.snow_line = 1.0;  // no snow override below 1
    CHECK(classify(0.95, 0.0, 0.0, p) == biome::scorched);
    p.rock_slope = std::numeric_limits<double>::infinity();  // never rock
    CHECK(classify(0.45, 0.9, 1e6, p) == biome::temperate_rain_forest);
    p.sea_level = 0.3;
    p.beach_top = 0.3;  // no beach band
    CHECK(classify(0.29, 0.5, 0.0, p) == biome::ocean);
    CHECK(classify(0.3, 0.5, 0.0, p) == biome::temperate_deciduous_forest);
    // float works the same way
    CHECK(gorge::classify_biome(0.7f, 0.8f, 0.0f) == biome::taiga);
}

TEST_CASE("slope map of a plane, and biome_map with computed slopes", "[biome]") {
    // h = 0.5 x + 0.25 y (in cell indices) with cells 2 apart: |grad| = sqrt(0.25^2 + 0.125^2)
    // everywhere, edges included (one-sided differences are exact on a plane).
    gorge::grid<double> plane(4, 3);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x) plane(x, y) = 0.5 * x + 0.25 * y;
    const gorge::grid<double> slope = gorge::slope_map(plane.view(), 2.0);
    for (double s : slope) CHECK(s == Approx(std::sqrt(0.25 * 0.25 + 0.125 * 0.125)).epsilon(1e-12));

    // A step: elevations 0.5, 0.5, 0.9 with cells 0.1 apart. Slopes 0 (one-sided), 2 (central),
    // 4 (one-sided): the first cell follows the table, the others are rock (the snow cell too).
    gorge::grid<double> e(3, 1), m(3, 1, 0.9);
    e(0, 0) = 0.5;
    e(1, 0) = 0.5;
    e(2, 0) = 0.9;
    const gorge::grid<biome> b = gorge::biome_map(e, m, 0.1);
    CHECK(b(0, 0) == biome::temperate_rain_forest);
    CHECK(b(1, 0) == biome::rock);
    CHECK(b(2, 0) == biome::rock);
    // The same with the slope given: a gentle slope lets the summit be snow.
    const gorge::grid<double> gentle(3, 1, 0.2);
    const gorge::grid<biome> g = gorge::biome_map(e.view(), m.view(), gentle.view());
    CHECK(g(2, 0) == biome::snow);
}

TEST_CASE("palette and names: one distinct entry per biome", "[biome]") {
    std::set<std::uint32_t> colors;
    std::set<std::string> names;
    for (std::size_t i = 0; i < gorge::biome_count; ++i) {
        const gorge::biome_rgb c = gorge::biome_colour(static_cast<biome>(i));
        colors.insert(std::uint32_t(c.r) << 16 | std::uint32_t(c.g) << 8 | c.b);
        names.insert(gorge::biome_name(static_cast<biome>(i)));
    }
    CHECK(colors.size() == gorge::biome_count);
    CHECK(names.size() == gorge::biome_count);
    CHECK(std::string(gorge::biome_name(biome::tropical_rain_forest)) == "tropical rain forest");
    const gorge::biome_rgb ocean = gorge::biome_colour(biome::ocean);
    CHECK((ocean.r == gorge::biome_palette[0].r && ocean.g == gorge::biome_palette[0].g &&
           ocean.b == gorge::biome_palette[0].b));
}

TEST_CASE("biome_params reports its first bad member through the common validate rule", "[biome]") {
    gorge::biome_params<float> p;
    CHECK(p.first_invalid() == nullptr);
    CHECK_NOTHROW(p.validate());
    p.rock_slope = -1.0f;
    const gorge::invalid_parameter bad = p.first_invalid();
    CHECK(bad != nullptr);
    CHECK(contains(bad.to_string(), "rock_slope"));
    CHECK(invalid_argument_message([&] { p.validate(); }) == "gorge::biome_params: invalid " + bad.to_string());
}

TEST_CASE("biome maps reject empty views like the other grid algorithms", "[biome]") {
    const gorge::grid_view<const double> empty;
    const gorge::grid<double> one(1, 1, 0.5);
    CHECK(contains(invalid_argument_message([&] { gorge::slope_map(empty, 1.0); }),
                   "gorge::slope_map: elevation must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(empty, empty, 1.0); }),
                   "gorge::biome_map: elevation must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(empty, empty, empty); }),
                   "gorge::biome_map: elevation must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(empty, one.view(), one.view()); }),
                   "gorge::biome_map: elevation must not be empty"));
}

TEST_CASE("biomes reject bad parameters and inputs, naming them", "[biome]") {
    gorge::biome_params<double> p;
    p.beach_top = 0.05;  // below sea level
    CHECK(contains(invalid_argument_message([&] { classify(0.5, 0.5, 0.0, p); }), "elevation thresholds"));
    p = {};
    p.rock_slope = 0.0;
    CHECK(contains(invalid_argument_message([&] { classify(0.5, 0.5, 0.0, p); }), "rock_slope"));
    p = {};
    p.upland_moisture = {0.5, 0.4, 0.9};
    CHECK(contains(invalid_argument_message([&] { classify(0.5, 0.5, 0.0, p); }), "upland_moisture"));
    p = {};
    p.snow_line = std::nan("");
    CHECK(contains(invalid_argument_message([&] { classify(0.5, 0.5, 0.0, p); }), "finite"));
    CHECK(contains(invalid_argument_message([&] { classify(std::nan(""), 0.5); }), "elevation"));
    CHECK(contains(invalid_argument_message([&] { classify(0.5, std::nan("")); }), "moisture"));
    CHECK(contains(invalid_argument_message([&] { classify(0.5, 0.5, -1.0); }), "slope"));

    gorge::grid<double> e(3, 2, 0.5), m(3, 2, 0.5), small(2, 2, 0.5);
    m(2, 1) = std::numeric_limits<double>::infinity();
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(e, m, 1.0); }), "(2, 1)"));
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(e, small, 1.0); }), "size"));
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(e, e, 0.0); }), "cell_size"));
    gorge::grid<double> slope(3, 2, 0.0);
    slope(1, 0) = std::nan("");
    CHECK(contains(invalid_argument_message([&] { gorge::biome_map(e.view(), e.view(), slope.view()); }), "(1, 0)"));
}
