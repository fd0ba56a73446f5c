// Depression filling, D8 flow directions, flow accumulation and river masks.
//
// Independent checks: hand-computed grids; Priority-Flood against Planchon & Darboux (two
// different algorithms for the same unique minimax surface, compared bit for bit); after the
// epsilon fill, an upward breadth-first search from the outlets that only climbs strictly must
// reach every cell; accumulation against a brute-force walk of every flow path.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gorge/gorge.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"

namespace {

template <class T>
gorge::grid<T> grid_from(std::ptrdiff_t w, std::ptrdiff_t h, const std::vector<T>& rows) {
    REQUIRE(rows.size() == std::size_t(w * h));
    gorge::grid<T> g(w, h);
    for (std::ptrdiff_t i = 0; i < w * h; ++i) g.data()[i] = rows[std::size_t(i)];
    return g;
}

template <class T>
bool same_bits(const gorge::grid<T>& a, const gorge::grid<T>& b) {
    return a.width() == b.width() && a.height() == b.height() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Terrain with many pits: a few smooth bumps plus white noise, and optionally no-data cells.
template <class T>
gorge::grid<T> random_terrain(std::ptrdiff_t w, std::ptrdiff_t h, std::uint32_t seed, double no_data_fraction = 0.0,
                              T no_data = T(-9999)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(0.0, 1.0);
    gorge::grid<T> g(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const double smooth = 10.0 * std::sin(0.3 * double(x)) * std::cos(0.21 * double(y));
            g(x, y) = T(smooth + 4.0 * noise(rng));
        }
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            if (noise(rng) < no_data_fraction) g(x, y) = no_data;
    // Quantise some cells so that exact ties and flats occur.
    for (std::ptrdiff_t y = 0; y < h; y += 3)
        for (std::ptrdiff_t x = 0; x < w; x += 2)
            if (g(x, y) != no_data) g(x, y) = T(std::floor(double(g(x, y))));
    return g;
}

/// Calls check(map, options) for three random_terrain maps of w x h cells from `seed`: float
/// heights; float with 8 % no-data cells of -9999; double with 3 % NaN no-data cells.
template <class Check>
void for_terrain_with_and_without_holes(std::ptrdiff_t w, std::ptrdiff_t h, std::uint32_t seed, Check&& check) {
    check(random_terrain<float>(w, h, seed), gorge::fill_options<float>());
    gorge::fill_options<float> holes;
    holes.no_data = -9999.0f;
    check(random_terrain<float>(w, h, seed, 0.08), holes);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    gorge::fill_options<double> nan_holes;
    nan_holes.no_data = nan;
    check(random_terrain<double>(w, h, seed, 0.03, nan), nan_holes);
}

template <class T>
bool is_no_data(T v, const std::optional<T>& nd) {
    return nd && (std::isnan(*nd) ? std::isnan(v) : v == *nd);
}

/// Outlets by definition: data cells on the edge or next to a no-data cell.
template <class T>
bool is_outlet(const gorge::grid<T>& g, std::ptrdiff_t x, std::ptrdiff_t y, const std::optional<T>& nd) {
    if (is_no_data(g(x, y), nd)) return false;
    if (x == 0 || y == 0 || x == g.width() - 1 || y == g.height() - 1) return true;
    for (int k = 0; k < 8; ++k)
        if (is_no_data(g(x + gorge::d8_dx[k], y + gorge::d8_dy[k]), nd)) return true;
    return false;
}

/// Breadth-first search from the outlets to strictly higher neighbours: returns the number of data
/// cells that have a strictly descending path to an outlet.
template <class T>
std::size_t cells_draining_strictly(const gorge::grid<T>& g, const std::optional<T>& nd) {
    std::vector<char> seen(g.size(), 0);
    std::deque<std::ptrdiff_t> todo;
    const std::ptrdiff_t w = g.width();
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            if (is_outlet(g, x, y, nd)) seen[std::size_t(y * w + x)] = 1, todo.push_back(y * w + x);
    std::size_t count = todo.size();
    while (!todo.empty()) {
        const std::ptrdiff_t c = todo.front();
        todo.pop_front();
        const std::ptrdiff_t cx = c % w, cy = c / w;
        for (int k = 0; k < 8; ++k) {
            const std::ptrdiff_t nx = cx + gorge::d8_dx[k], ny = cy + gorge::d8_dy[k];
            if (!g.contains(nx, ny) || seen[std::size_t(ny * w + nx)] || is_no_data(g(nx, ny), nd)) continue;
            if (g(nx, ny) > g(cx, cy)) {
                seen[std::size_t(ny * w + nx)] = 1;
                ++count;
                todo.push_back(ny * w + nx);
            }
        }
    }
    return count;
}

template <class T>
std::size_t data_cells(const gorge::grid<T>& g, const std::optional<T>& nd) {
    std::size_t n = 0;
    for (T v : g) n += is_no_data(v, nd) ? 0u : 1u;
    return n;
}

using gorge_test::contains;
using gorge_test::invalid_argument_message;

}  // namespace

// The 5 x 5 grid of the hand computation. Border cells are outlets; the only low outlet is
// (3, 4) = 5. The basin {(1,1)=2, (2,1)=3, (1,2)=3, (2,2)=1} spills through (3, 3) = 6 (diagonal
// from (2, 2)) to (3, 4): every path out crosses a cell >= 6, so its cells fill to 6. The cells
// 8, 7, 7, 6 around it already drain (their own height is their path maximum) and stay.
const std::vector<float> pit_5x5 = {
    9, 9, 9, 9, 9,
    9, 2, 3, 8, 9,
    9, 3, 1, 7, 9,
    9, 8, 7, 6, 9,
    9, 9, 9, 5, 9,
};

TEST_CASE("plain fill of a hand-computed 5x5 pit", "[drainage][fill]") {
    const std::vector<float> expected = {
        9, 9, 9, 9, 9,
        9, 6, 6, 8, 9,
        9, 6, 6, 7, 9,
        9, 8, 7, 6, 9,
        9, 9, 9, 5, 9,
    };
    gorge::grid<float> pf = grid_from(5, 5, pit_5x5);
    const gorge::fill_stats<float> stats = gorge::fill_depressions(pf);
    CHECK(same_bits(pf, grid_from(5, 5, expected)));
    CHECK(stats.raised_cells == 4u);
    CHECK(stats.max_gradient_rise == 0.0f);
    gorge::grid<float> pd = grid_from(5, 5, pit_5x5);
    CHECK(gorge::fill_depressions_planchon_darboux(pd).raised_cells == 4u);
    CHECK(same_bits(pd, pf));
}

TEST_CASE("epsilon fill of the 5x5 pit, step by step", "[drainage][fill]") {
    // Flood order: (3,4)=5 opens (3,3)=6; (3,3) raises (2,2) to 6+1ulp; (2,2) raises its low
    // neighbours (1,1), (2,1), (1,2) to 6+2ulp. Nothing else moves.
    const float u1 = std::nextafter(6.0f, 100.0f), u2 = std::nextafter(u1, 100.0f);
    std::vector<float> expected = pit_5x5;
    expected[2 * 5 + 2] = u1;
    expected[1 * 5 + 1] = expected[1 * 5 + 2] = expected[2 * 5 + 1] = u2;
    gorge::grid<float> g = grid_from(5, 5, pit_5x5);
    const gorge::fill_stats<float> stats = gorge::fill_depressions_epsilon(g);
    CHECK(same_bits(g, grid_from(5, 5, expected)));
    CHECK(stats.raised_cells == 4u);
    CHECK(stats.max_gradient_rise == u2 - 6.0f);
    CHECK(stats.overtaken_cells == 0u);
}

TEST_CASE("Priority-Flood equals Planchon-Darboux bit for bit on random maps", "[drainage][fill]") {
    const struct {
        std::ptrdiff_t w, h;
        double no_data_fraction;
    } cases[] = {{1, 1, 0.0}, {1, 7, 0.0}, {6, 2, 0.0}, {3, 3, 0.0}, {40, 40, 0.0}, {97, 61, 0.0}, {64, 80, 0.08}};
    std::uint32_t seed = 1;
    for (const auto& c : cases) {
        for (int rep = 0; rep < 3; ++rep, ++seed) {
            INFO("map " << c.w << " x " << c.h << ", seed " << seed);
            gorge::fill_options<float> options;
            if (c.no_data_fraction > 0) options.no_data = -9999.0f;
            const gorge::grid<float> original = random_terrain<float>(c.w, c.h, seed, c.no_data_fraction);
            gorge::grid<float> pf = original, pd = original;
            const auto pf_stats = gorge::fill_depressions(pf, options);
            const auto pd_stats = gorge::fill_depressions_planchon_darboux(pd, options);
            CHECK(same_bits(pf, pd));
            CHECK(pf_stats.raised_cells == pd_stats.raised_cells);
            // Filling never lowers a cell and leaves no-data cells alone.
            for (std::size_t i = 0; i < pf.size(); ++i) {
                if (original.data()[i] == -9999.0f && options.no_data) CHECK(pf.data()[i] == -9999.0f);
                CHECK(pf.data()[i] >= original.data()[i]);
            }
        }
    }
    // Double heights and NaN as the no-data value.
    gorge::grid<double> original = random_terrain<double>(50, 45, 99, 0.05, std::nan(""));
    gorge::fill_options<double> options;
    options.no_data = std::nan("");
    gorge::grid<double> pf = original, pd = original;
    gorge::fill_depressions(pf, options);
    gorge::fill_depressions_planchon_darboux(pd, options);
    CHECK(same_bits(pf, pd));
}

TEST_CASE("after the epsilon fill every cell drains strictly to an outlet", "[drainage][fill]") {
    std::uint32_t seed = 100;
    for (double no_data_fraction : {0.0, 0.05}) {
        for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{2, 2}, {1, 9}, {33, 17}, {120, 90}}) {
            ++seed;
            INFO("map " << size.first << " x " << size.second << ", seed " << seed);
            std::optional<float> nd;
            if (no_data_fraction > 0) nd = -9999.0f;
            gorge::fill_options<float> options;
            options.no_data = nd;
            const gorge::grid<float> original =
                random_terrain<float>(size.first, size.second, seed, no_data_fraction);
            gorge::grid<float> eps = original, plain = original;
            const auto stats = gorge::fill_depressions_epsilon(eps, options);
            gorge::fill_depressions(plain, options);
            CHECK(cells_draining_strictly(eps, nd) == data_cells(eps, nd));
            // The plain fill of random terrain leaves flats, so the same search must fail there
            // (this shows the search can fail).
            if (size.first >= 33) CHECK(cells_draining_strictly(plain, nd) < data_cells(plain, nd));
            // The epsilon surface lies on or above the plain one, by at most the reported bound.
            for (std::size_t i = 0; i < eps.size(); ++i) {
                if (is_no_data(original.data()[i], nd)) {
                    CHECK(eps.data()[i] == original.data()[i]);
                    continue;
                }
                CHECK(eps.data()[i] >= plain.data()[i]);
                CHECK(eps.data()[i] - plain.data()[i] <= stats.max_gradient_rise);
            }
        }
    }
}

TEST_CASE("fills of a map large enough for the huge-page working arrays", "[drainage][fill]") {
    // 760 x 760 floats: the padded working copy exceeds 2 MiB, so it takes the aligned
    // large-block path of the allocator. Same checks: strict drainage and plain <= epsilon.
    const gorge::grid<float> original = random_terrain<float>(760, 760, 4242);
    gorge::grid<float> eps = original, plain = original;
    const auto stats = gorge::fill_depressions_epsilon(eps);
    gorge::fill_depressions(plain);
    CHECK(stats.raised_cells > 0u);
    CHECK(cells_draining_strictly(eps, std::optional<float>()) == eps.size());
    std::size_t below = 0;
    for (std::size_t i = 0; i < eps.size(); ++i) below += eps.data()[i] < plain.data()[i] ? 1u : 0u;
    CHECK(below == 0u);
}

TEST_CASE("epsilon fill reports float precision loss on large heights", "[drainage][fill]") {
    // A corridor along row 1 at 2^24, where the float ulp is 2: the outlet (0, 1) and five flat
    // cells at 2^24, then a bump of 2^24 + 5 at its closed end (6, 1); everything else is high
    // wall. There is no depression (the bump is its own path maximum), so the plain fill changes
    // nothing. The epsilon gradient climbs 2 per cell: (1,1) 2^24+2 ... (5,1) 2^24+10, then the
    // bump (2^24+5, stored as 2^24+4, <= 2^24+12) is overtaken and raised to 2^24+12. Statistics
    // (F = Z everywhere): the largest E - F is 10 at (5,1) (the bump's is 12 - 4 = 8), and the bump
    // is the one overtaken cell (raised, with the neighbour (5,1) of F = 2^24 below its height;
    // the flat cells (1..5,1) have no neighbour with F below theirs).
    const float base = 16777216.0f, wall = base + 1000.0f;
    gorge::grid<float> g(8, 3, wall);
    for (int x = 0; x < 6; ++x) g(x, 1) = base;
    g(6, 1) = base + 5.0f;
    gorge::grid<float> plain = g;
    CHECK(gorge::fill_depressions(plain).raised_cells == 0u);
    CHECK(same_bits(plain, g));
    gorge::grid<float> eps = g;
    const auto stats = gorge::fill_depressions_epsilon(eps);
    for (int x = 1; x < 7; ++x) CHECK(eps(x, 1) == base + 2.0f * float(x));
    CHECK(stats.overtaken_cells == 1u);
    CHECK(stats.max_gradient_rise == 10.0f);
    CHECK(stats.raised_cells == 6u);
    // In double the same map is filled with steps of 2^-28 and no cell is overtaken.
    gorge::grid<double> d(8, 3, double(wall));
    for (int x = 0; x < 6; ++x) d(x, 1) = double(base);
    d(6, 1) = double(base) + 5.0;
    const auto dstats = gorge::fill_depressions_epsilon(d);
    CHECK(dstats.overtaken_cells == 0u);
    CHECK(dstats.max_gradient_rise < 1e-7);
    // The same corridor, but the bump (6, 1) also touches an outlet below it: (7, 1) on the right
    // edge at 2^24 + 2. The bump drains to the right without being raised, so it keeps its
    // height: 2^24 + 4 (its 2^24 + 5 is stored as 2^24 + 4, the nearest float) is the next float
    // above the outlet's 2^24 + 2. The flat cells (1..5, 1) at 2^24 are now drained from both
    // ends, each by its lower neighbour: from the left 2^24 + 2, + 4, + 6; from the bump 2^24 + 6
    // at (5, 1); (4, 1) between 2^24 + 6 and 2^24 + 6 gets 2^24 + 8. (Re-derived by hand for the
    // least surface; the old order-dependent flood gave 2^24 + 2x all along, because its pit
    // queue climbed from the left past the bump before the bump was taken.) Statistics: 5 raised
    // cells, none overtaken (the flat cells have no neighbour with F below their height), and
    // the largest E - F is 8, at (4, 1).
    gorge::grid<float> two_sides = g;
    two_sides(7, 1) = base + 2.0f;
    gorge::grid<float> two_plain = two_sides;
    CHECK(gorge::fill_depressions(two_plain).raised_cells == 0u);
    const auto two_stats = gorge::fill_depressions_epsilon(two_sides);
    const float two_expected[5] = {2.0f, 4.0f, 6.0f, 8.0f, 6.0f};
    for (int x = 1; x < 6; ++x) CHECK(two_sides(x, 1) == base + two_expected[x - 1]);
    CHECK(two_sides(6, 1) == base + 5.0f);
    CHECK(two_sides(7, 1) == base + 2.0f);
    CHECK(two_stats.overtaken_cells == 0u);
    CHECK(two_stats.raised_cells == 5u);
    CHECK(two_stats.max_gradient_rise == 8.0f);
    CHECK(cells_draining_strictly(two_sides, std::optional<float>()) == two_sides.size());
    // A step past the largest float overflows: reported, not turned into infinity.
    gorge::grid<float> top(3, 3, std::numeric_limits<float>::max());
    top(1, 1) = 0.0f;
    CHECK_THROWS_AS(gorge::fill_depressions_epsilon(top), std::overflow_error);
}

TEST_CASE("epsilon fill never writes -0, even when a step from a negative subnormal reaches zero",
          "[drainage][fill]") {
    // A 6 x 6 map at -2 denorm_min with a pit of -1e-40 on the inner cells x, y in 1..4, and the
    // edge cell (0, 2) at -denorm_min. The flood raises the pit's rim to -denorm_min; the next
    // step up from there is zero, which must be written as +0 (the header promises that -0 never
    // appears, so that equal heights have equal bits), and the step after it the smallest
    // positive subnormal.
    auto check = [](auto zero) {
        using T = decltype(zero);
        const T dm = std::numeric_limits<T>::denorm_min();
        gorge::grid<T> g(6, 6, T(-2) * dm);
        for (std::ptrdiff_t y = 1; y <= 4; ++y)
            for (std::ptrdiff_t x = 1; x <= 4; ++x) g(x, y) = T(-1e-40);
        g(0, 2) = -dm;
        const gorge::grid<T> original = g;
        const auto stats = gorge::fill_depressions_epsilon(g);
        CHECK(stats.raised_cells == 16u);
        std::size_t negative_zeros = 0, zeros = 0;
        for (T v : g) {
            negative_zeros += v == T(0) && std::signbit(v) ? 1u : 0u;
            zeros += v == T(0) ? 1u : 0u;
        }
        CHECK(negative_zeros == 0u);
        CHECK(zeros > 0u);  // the map does reach zero, so the check above can fail
        CHECK(cells_draining_strictly(g, std::optional<T>()) == g.size());
        for (std::size_t i = 0; i < g.size(); ++i) CHECK(g.data()[i] >= original.data()[i]);
    };
    check(0.0f);
    check(0.0);
}

TEST_CASE("epsilon fill never writes the no-data value into a data cell", "[drainage][fill]") {
    // 12 x 8 cells of 2, a pit of 0 on x, y in 1..6, the outlet (0, 3) one ulp below 1, and a
    // no-data cell (10, 4) with no_data = 1. The first step up from the outlet is exactly 1: the
    // fill must step over it (to 1 + 2^-23), or D8 sees three holes next to the outlet.
    const float no_data = 1.0f;
    gorge::grid<float> g(12, 8, 2.0f);
    for (std::ptrdiff_t y = 1; y <= 6; ++y)
        for (std::ptrdiff_t x = 1; x <= 6; ++x) g(x, y) = 0.0f;
    g(0, 3) = std::nextafter(1.0f, 0.0f);
    g(10, 4) = no_data;
    gorge::fill_options<float> fill;
    fill.no_data = no_data;
    gorge::fill_depressions_epsilon(g, fill);
    std::size_t no_data_cells = 0;
    for (float v : g) no_data_cells += v == no_data ? 1u : 0u;
    CHECK(no_data_cells == 1u);
    CHECK(g(10, 4) == no_data);
    CHECK(g(1, 3) == std::nextafter(1.0f, 2.0f));
    CHECK(cells_draining_strictly(g, fill.no_data) == data_cells(g, fill.no_data));

    gorge::d8_options<float> d8;
    d8.no_data = no_data;
    const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(g, d8);
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    // Every pit cell's flow path ends at the outlet.
    for (std::ptrdiff_t y = 1; y <= 6; ++y)
        for (std::ptrdiff_t x = 1; x <= 6; ++x) {
            std::ptrdiff_t cx = x, cy = y;
            for (int steps = 0; dirs(cx, cy) < 8 && steps < 96; ++steps) {
                const std::uint8_t d = dirs(cx, cy);
                cx += gorge::d8_dx[d];
                cy += gorge::d8_dy[d];
            }
            INFO("pit cell (" << x << ", " << y << ") ends at (" << cx << ", " << cy << ")");
            CHECK((cx == 0 && cy == 3));
        }
    // Accumulation at the outlet, derived by hand: the outlet itself and the 36 pit cells (37),
    // plus the 27 other cells of the 8 x 8 block around the pit (the 2s at x <= 7: each has a pit
    // cell or the outlet as its only lower neighbours), plus (8, 1) and (8, 2). The fill raises the
    // flat 2s at x = 8..10 above 2, and a raised cell drains to its first cardinal neighbour at
    // exactly 2 in E, S, W, N order: W, i.e. column 7, for (8, 1) and (8, 2); E (the 2s next to
    // the no-data cell) for (8, 3..5); S (the edge) for (8, 6); the edge or those 2s for x = 9, 10.
    CHECK(acc(0, 3) == 37u + 27u + 2u);
}

TEST_CASE("fills reject empty views like the other entry points", "[drainage][fill]") {
    const gorge::grid_view<float> empty;
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions(empty); }),
                   "gorge::fill_depressions: heights must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions_epsilon(empty); }),
                   "gorge::fill_depressions_epsilon: heights must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions_planchon_darboux(empty); }),
                   "gorge::fill_depressions_planchon_darboux: heights must not be empty"));
    gorge::grid<float> empty_grid;
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions(empty_grid); }), "empty"));
    const gorge::grid_view<std::uint8_t> no_out;
    CHECK(contains(invalid_argument_message([&] { gorge::flow_directions(empty, no_out); }),
                   "gorge::flow_directions: heights must not be empty"));
    CHECK(contains(invalid_argument_message([&] { gorge::flow_directions(empty); }),
                   "gorge::flow_directions: heights must not be empty"));
    const gorge::grid_view<const std::uint8_t> no_dirs;
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(no_dirs); }),
                   "gorge::flow_accumulation: directions must not be empty"));
    const gorge::grid_view<const float> no_weights;
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(no_dirs, no_weights); }),
                   "gorge::flow_accumulation: directions must not be empty"));
    const gorge::grid<std::uint32_t> no_acc;
    CHECK(contains(invalid_argument_message([&] { gorge::river_mask(no_acc, 1u); }),
                   "gorge::river_mask: accumulation must not be empty"));
}

TEST_CASE("fills respect strided views and no-data outlets", "[drainage][fill]") {
    // The 5x5 pit embedded at (2, 1) of a 9 x 7 buffer of sentinels.
    const float sentinel = -1234.0f;
    std::vector<float> buffer(9 * 7, sentinel);
    for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 5; ++x) buffer[std::size_t((y + 1) * 9 + x + 2)] = pit_5x5[std::size_t(y * 5 + x)];
    gorge::grid_view<float> view(buffer.data() + 9 + 2, 5, 5, 9);
    gorge::fill_depressions(view);
    CHECK(view(2, 2) == 6.0f);
    CHECK(view(1, 1) == 6.0f);
    CHECK(view(3, 1) == 8.0f);
    std::size_t untouched = 0;
    for (float v : buffer) untouched += v == sentinel ? 1u : 0u;
    CHECK(untouched == 9u * 7u - 25u);

    // A no-data hole next to the pit bottom turns the pit into an outlet: nothing fills.
    gorge::grid<float> holed = grid_from(5, 5, pit_5x5);
    holed(1, 1) = -1.0f;  // no data
    gorge::fill_options<float> options;
    options.no_data = -1.0f;
    gorge::grid<float> filled = holed;
    CHECK(gorge::fill_depressions(filled, options).raised_cells == 0u);
    CHECK(same_bits(filled, holed));
    gorge::fill_depressions_epsilon(filled, options);
    CHECK(same_bits(filled, holed));
}

TEST_CASE("fills reject non-finite heights, naming the cell, and leave the grid unchanged", "[drainage][fill]") {
    gorge::grid<float> g = grid_from(5, 5, pit_5x5);
    g(3, 2) = std::numeric_limits<float>::quiet_NaN();
    const gorge::grid<float> before = g;
    for (auto fill : {+[](gorge::grid<float>& m) { gorge::fill_depressions(m); },
                      +[](gorge::grid<float>& m) { gorge::fill_depressions_epsilon(m); },
                      +[](gorge::grid<float>& m) { gorge::fill_depressions_planchon_darboux(m); }}) {
        const std::string message = invalid_argument_message([&] { fill(g); });
        CHECK(contains(message, "(3, 2)"));
        CHECK(same_bits(g, before));
    }
    g(3, 2) = std::numeric_limits<float>::infinity();
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions(g); }), "(3, 2)"));
    CHECK(contains(invalid_argument_message([&] { gorge::flow_directions(g); }), "(3, 2)"));
}

// D8 on a 3 x 3 grid, by hand (codes: 0 E, 1 SE, 2 S, 3 SW, 4 W, 5 NW, 6 N, 7 NE, 8 sink).
//   9   9   9
//   9  10   8
//   9   9  7.5
// Centre: E drops 2 (slope 2), SE drops 2.5 (slope 2.5/√2 = 1.77): steepest E, lowest SE.
// (1,0): only SE (8) is lower, slope 1/√2 -> SE. (2,0): S (8) -> S. (2,1): S (7.5) -> S.
// (1,2): E (7.5, slope 1.5) beats NE (8, slope 1/√2) under both rules -> E.
// Left column: no strictly lower neighbour -> sinks; (2,2) is the lowest cell -> sink.
TEST_CASE("fill progress: fractions from 0 to 1, cancellation leaves the grid unchanged", "[drainage][fill]") {
    // 400 x 400 = 160000 cells (some 1600 of them no-data): two reports between the first and
    // the last, every fill_progress_interval cells taken from the queues. The fraction counts data
    // cells only and still ends at 1.
    const gorge::grid<float> original = random_terrain<float>(400, 400, 77, 0.01);
    using fill_fn = gorge::fill_stats<float> (*)(gorge::grid<float>&, const gorge::fill_options<float>&);
    const std::pair<const char*, fill_fn> fills[] = {
        {"plain", [](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions(g, o); }},
        {"epsilon",
         [](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions_epsilon(g, o); }},
        {"planchon_darboux", [](gorge::grid<float>& g, const gorge::fill_options<float>& o) {
             return gorge::fill_depressions_planchon_darboux(g, o);
         }},
    };
    for (const auto& f : fills) {
        INFO(f.first);
        const bool flood = std::string(f.first) != "planchon_darboux";
        gorge::fill_options<float> options;
        options.no_data = -9999.0f;
        gorge::grid<float> expected = original;
        const gorge::fill_stats<float> quiet = f.second(expected, options);
        CHECK_FALSE(quiet.cancelled);
        REQUIRE(quiet.raised_cells > 0u);

        // Reported: 0 first, non-decreasing, 1 last; the result is the same as without a callback.
        std::vector<double> seen;
        options.progress = [&seen](double fraction) {
            seen.push_back(fraction);
            return true;
        };
        gorge::grid<float> reported = original;
        const gorge::fill_stats<float> stats = f.second(reported, options);
        CHECK_FALSE(stats.cancelled);
        CHECK(stats.raised_cells == quiet.raised_cells);
        CHECK(same_bits(reported, expected));
        REQUIRE(seen.size() >= 2u);
        CHECK(seen.front() == 0.0);
        CHECK(seen.back() == 1.0);
        CHECK(std::is_sorted(seen.begin(), seen.end()));
        if (flood) {
            // One report per fill_progress_interval cells settled, each one that share further on.
            const std::size_t data_cells = std::size_t(std::count_if(
                original.begin(), original.end(), [](float v) { return v != -9999.0f; }));
            CHECK(seen.size() == 2u + data_cells / gorge::fill_progress_interval);
            for (std::size_t i = 1; i + 1 < seen.size(); ++i)
                CHECK(seen[i] == Approx(double(i * gorge::fill_progress_interval) / double(data_cells)));
        } else {
            CHECK(seen.size() > 2u);  // one chance to cancel per pair of sweeps
        }

        // Cancelling at any call (the first, one in the middle, the last) stops the calls, says
        // so, and leaves the grid as it was.
        for (const std::size_t stop_at : {std::size_t(0), seen.size() / 2, seen.size() - 1}) {
            INFO("cancelled at call " << stop_at);
            std::size_t calls = 0;
            options.progress = [&calls, stop_at](double) { return calls++ != stop_at; };
            gorge::grid<float> cancelled = original;
            const gorge::fill_stats<float> c = f.second(cancelled, options);
            CHECK(c.cancelled);
            CHECK(calls == stop_at + 1);
            CHECK(c.raised_cells == 0u);
            CHECK(same_bits(cancelled, original));
        }

        // An exception from the callback propagates, the grid unchanged.
        options.progress = [](double fraction) -> bool {
            if (fraction > 0.0) throw std::runtime_error("stop");
            return true;
        };
        gorge::grid<float> thrown = original;
        CHECK_THROWS_AS(f.second(thrown, options), std::runtime_error);
        CHECK(same_bits(thrown, original));
    }
}

TEST_CASE("D8 directions and accumulation on a hand-computed 3x3 grid", "[drainage][d8]") {
    const gorge::grid<float> g = grid_from<float>(3, 3, {9, 9, 9, 9, 10, 8, 9, 9, 7.5f});
    const gorge::grid<std::uint8_t> steepest = gorge::flow_directions(g);
    CHECK(std::vector<std::uint8_t>(steepest.begin(), steepest.end()) ==
          std::vector<std::uint8_t>{8, 1, 2, 8, 0, 2, 8, 0, 8});
    gorge::d8_options<float> lowest_options;
    lowest_options.rule = gorge::d8_rule::lowest;
    const gorge::grid<std::uint8_t> lowest = gorge::flow_directions(g, lowest_options);
    CHECK(std::vector<std::uint8_t>(lowest.begin(), lowest.end()) ==
          std::vector<std::uint8_t>{8, 1, 2, 8, 1, 2, 8, 0, 8});
    // Steepest: (1,0), (2,0), (1,1) -> (2,1); (2,1), (1,2) -> (2,2). Sinks: left column and (2,2).
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(steepest);
    CHECK(std::vector<std::uint32_t>(acc.begin(), acc.end()) ==
          std::vector<std::uint32_t>{1, 1, 1, 1, 1, 4, 1, 1, 6});
    const gorge::grid<std::uint8_t> rivers = gorge::river_mask(acc, 4u);
    CHECK(std::vector<std::uint8_t>(rivers.begin(), rivers.end()) ==
          std::vector<std::uint8_t>{0, 0, 0, 0, 0, 1, 0, 0, 1});
    // Weighted: weight 0.5 everywhere halves every count.
    const gorge::grid<double> weights(3, 3, 0.5);
    const gorge::grid<double> wacc = gorge::flow_accumulation(steepest.view(), weights.view());
    for (std::size_t i = 0; i < acc.size(); ++i) CHECK(wacc.data()[i] == 0.5 * double(acc.data()[i]));
}

TEST_CASE("D8 tie rule: the first neighbour in E, SE, S, SW, W, NW, N, NE order wins", "[drainage][d8]") {
    // Centre 5; S and N both 3 (equal slopes): S (code 2) comes before N (code 6).
    gorge::grid<float> g(3, 3, 9.0f);
    g(1, 1) = 5.0f;
    g(1, 2) = 3.0f;
    g(1, 0) = 3.0f;
    CHECK(gorge::flow_directions(g)(1, 1) == 2);
    // W and NW equal heights: under lowest the tie goes to W (4) before NW (5); under steepest W
    // wins anyway (the diagonal's slope is divided by √2).
    gorge::grid<float> h(3, 3, 9.0f);
    h(1, 1) = 5.0f;
    h(0, 1) = 1.0f;
    h(0, 0) = 1.0f;
    gorge::d8_options<float> lowest;
    lowest.rule = gorge::d8_rule::lowest;
    CHECK(gorge::flow_directions(h, lowest)(1, 1) == 4);
    CHECK(gorge::flow_directions(h)(1, 1) == 4);
    // Diagonal SE with drop 4 (slope 2.83) beats cardinal E with drop 2.5 under steepest.
    gorge::grid<float> k(3, 3, 9.0f);
    k(1, 1) = 5.0f;
    k(2, 1) = 2.5f;
    k(2, 2) = 1.0f;
    CHECK(gorge::flow_directions(k)(1, 1) == 1);
}

TEST_CASE("D8 + accumulation on epsilon-filled random maps", "[drainage][d8]") {
    std::uint32_t seed = 500;
    for (double no_data_fraction : {0.0, 0.04}) {
        for (auto rule : {gorge::d8_rule::steepest, gorge::d8_rule::lowest}) {
            ++seed;
            INFO("seed " << seed);
            std::optional<float> nd;
            if (no_data_fraction > 0) nd = -9999.0f;
            gorge::grid<float> g = random_terrain<float>(70, 53, seed, no_data_fraction);
            gorge::fill_options<float> fill;
            fill.no_data = nd;
            gorge::fill_depressions_epsilon(g, fill);
            gorge::d8_options<float> options;
            options.rule = rule;
            options.no_data = nd;
            const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(g, options);
            // The unchecked inner path and the checked path agree: a no-data value absent from the
            // map forces every cell through the checked path.
            if (!nd) {
                gorge::d8_options<float> checked = options;
                checked.no_data = 12345.0f;
                CHECK(same_bits(gorge::flow_directions(g, checked), dirs));
            }
            // Every direction goes strictly downhill to a data cell; sinks only at outlets.
            for (std::ptrdiff_t y = 0; y < g.height(); ++y)
                for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
                    const std::uint8_t d = dirs(x, y);
                    if (is_no_data(g(x, y), nd)) {
                        CHECK(d == gorge::d8_no_data);
                        continue;
                    }
                    if (d == gorge::d8_sink) {
                        CHECK(is_outlet(g, x, y, nd));
                        continue;
                    }
                    REQUIRE(d < 8);
                    const std::ptrdiff_t tx = x + gorge::d8_dx[d], ty = y + gorge::d8_dy[d];
                    REQUIRE(g.contains(tx, ty));
                    CHECK(g(tx, ty) < g(x, y));
                    CHECK_FALSE(is_no_data(g(tx, ty), nd));
                }
            // Accumulation against brute force: walk every cell's path, adding one to each cell.
            const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
            gorge::grid<std::uint32_t> brute(g.width(), g.height(), 0u);
            std::uint64_t at_sinks = 0;
            for (std::ptrdiff_t y = 0; y < g.height(); ++y)
                for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
                    if (dirs(x, y) == gorge::d8_no_data) continue;
                    std::ptrdiff_t cx = x, cy = y;
                    for (;;) {
                        ++brute(cx, cy);
                        const std::uint8_t d = dirs(cx, cy);
                        if (d == gorge::d8_sink) break;
                        cx += gorge::d8_dx[d];
                        cy += gorge::d8_dy[d];
                    }
                }
            CHECK(same_bits(acc, brute));
            for (std::ptrdiff_t y = 0; y < g.height(); ++y)
                for (std::ptrdiff_t x = 0; x < g.width(); ++x)
                    if (dirs(x, y) == gorge::d8_sink) at_sinks += acc(x, y);
            CHECK(at_sinks == data_cells(g, nd));
        }
    }
}

TEST_CASE("directions and accumulation into caller buffers with a stride", "[drainage][d8]") {
    gorge::grid<float> g = random_terrain<float>(45, 31, 77);
    gorge::fill_depressions_epsilon(g);
    const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(g);
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    // Buffers 7 columns wider than the map; the gap columns hold sentinels that must survive.
    const std::ptrdiff_t stride = 45 + 7;
    std::vector<std::uint8_t> dir_buffer(std::size_t(stride * 31), 0xAB);
    std::vector<std::uint32_t> acc_buffer(std::size_t(stride * 31), 0xDEADBEEFu);
    const gorge::grid_view<std::uint8_t> dir_view(dir_buffer.data(), 45, 31, stride);
    const gorge::grid_view<std::uint32_t> acc_view(acc_buffer.data(), 45, 31, stride);
    gorge::flow_directions(g.view(), dir_view);
    gorge::flow_accumulation(dir_view, acc_view);
    for (std::ptrdiff_t y = 0; y < 31; ++y)
        for (std::ptrdiff_t x = 0; x < stride; ++x) {
            const std::size_t i = std::size_t(y * stride + x);
            if (x < 45) {
                CHECK(dir_buffer[i] == dirs(x, y));
                CHECK(acc_buffer[i] == acc(x, y));
            } else {
                CHECK(dir_buffer[i] == 0xAB);
                CHECK(acc_buffer[i] == 0xDEADBEEFu);
            }
        }
    gorge::grid<std::uint32_t> wrong(44, 31);
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(dirs.view(), wrong.view()); }), "size"));
}

TEST_CASE("flow on bad input throws, naming the cell or parameter", "[drainage][d8]") {
    gorge::grid<std::uint8_t> dirs(3, 2, gorge::d8_sink);
    dirs(1, 1) = 2;  // S: off the map
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(dirs); }), "(1, 1)"));
    dirs(1, 1) = 10;  // not a code
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(dirs); }), "(1, 1)"));
    dirs(1, 1) = 4;  // W, into no-data
    dirs(0, 1) = gorge::d8_no_data;
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(dirs); }), "no-data"));
    // A two-cell cycle: (0,0) E -> (1,0), (1,0) W -> (0,0); and (2,0) drains into it.
    gorge::grid<std::uint8_t> cycle(3, 1, gorge::d8_sink);
    cycle(0, 0) = 0;
    cycle(1, 0) = 4;
    cycle(2, 0) = 4;
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(cycle); }), "cycle"));
    // Thresholds.
    const gorge::grid<std::uint32_t> acc(2, 2, 1u);
    CHECK(contains(invalid_argument_message([&] { gorge::river_mask(acc, 0u); }), "threshold"));
    const gorge::grid<float> facc(2, 2, 1.0f);
    CHECK(contains(invalid_argument_message([&] { gorge::river_mask(facc, 0.0f); }), "threshold"));
    CHECK(contains(invalid_argument_message([&] { gorge::river_mask(facc, -1.0f); }), "threshold"));
    CHECK(contains(invalid_argument_message([&] { gorge::river_mask(facc, std::nanf("")); }), "threshold"));
    // Weighted accumulation: size mismatch and non-finite weights.
    const gorge::grid<std::uint8_t> sinks(2, 2, gorge::d8_sink);
    const gorge::grid<float> small(1, 2, 1.0f);
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(sinks.view(), small.view()); }),
                   "size"));
    gorge::grid<float> bad(2, 2, 1.0f);
    bad(1, 0) = std::nanf("");
    CHECK(contains(invalid_argument_message([&] { gorge::flow_accumulation(sinks.view(), bad.view()); }),
                   "(1, 0)"));
}

TEST_CASE("fills reject maps whose working copy would not fit, naming the function", "[drainage][fill]") {
    // A one-row view as wide as ptrdiff_t allows (never read: the size check comes first). The
    // working copy adds a border of one cell on each side, which must not overflow.
    float cell = 0.0f;
    const std::ptrdiff_t widest = std::numeric_limits<std::ptrdiff_t>::max();
    const gorge::grid_view<float> wide(&cell, widest, 1);
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions(wide); }), "gorge::fill_depressions"));
    // Wide enough that the padded copy's bytes exceed the largest allocation, but no overflow.
    const gorge::grid_view<float> large(&cell, widest / 8, 1);
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions_epsilon(large); }),
                   "largest allocation"));
}

namespace {

/// A cell of the radix heap tests' reference list: its key and its push number (also the cell).
template <class K>
struct queued_cell {
    K key;
    std::uint32_t push;
};

/// The next key to push: the last popped key stepped by an amount that changes the lowest digit,
/// a middle one, the highest, or none (a third of the time), never wrapping around.
template <class K>
K next_radix_key(std::mt19937_64& rng, K last) {
    const int key_bits = int(sizeof(K)) * 8;
    const int shift = int(rng() % std::uint64_t(key_bits / 8)) * 8;  // which digit changes
    const K span = K(K(255) << shift);
    const K step = (rng() % 3 == 0) ? K(0) : K(K(rng()) & span);
    return step > K(~last) ? last : K(last + step);
}

/// Index in `list` (not empty) of the cell the heap must return next: the smallest key and,
/// among equal keys, the latest push.
template <class K>
std::size_t next_out(const std::vector<queued_cell<K>>& list) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < list.size(); ++i)
        if (list[i].key < list[best].key || (list[i].key == list[best].key && list[i].push > list[best].push))
            best = i;
    return best;
}

}  // namespace

TEST_CASE("radix heap: increasing keys, latest push first among equal keys, across digit boundaries",
          "[drainage][fill]") {
    // The queue's contract, on which the epsilon fill's result depends: against a plain list
    // searched for the smallest key and, among equal keys, the latest push. Keys step from the
    // last popped one by amounts that change the lowest digit, a middle one, the highest, or none.
    auto check = [](auto zero, std::uint32_t seed) {
        using K = decltype(zero);
        std::mt19937_64 rng(seed);
        gorge::detail::radix_heap<K, std::uint32_t> heap;
        std::vector<queued_cell<K>> list;
        K last = 0;
        std::uint32_t pushes = 0;
        std::size_t mismatches = 0, equal_pops = 0;
        for (int round = 0; round < 4000; ++round) {
            const int n = int(rng() % 4);
            for (int i = 0; i < n; ++i) {
                const K key = next_radix_key(rng, last);
                heap.push(key, pushes);
                list.push_back({key, pushes});
                ++pushes;
            }
            if (list.empty() || rng() % 5 == 0) continue;
            const std::size_t best = next_out(list);
            const std::uint32_t cell = heap.pop();
            mismatches += cell != list[best].push || heap.last_key() != list[best].key ? 1u : 0u;
            equal_pops += list[best].key == last ? 1u : 0u;
            last = list[best].key;
            list.erase(list.begin() + std::ptrdiff_t(best));
        }
        while (!list.empty()) {
            const std::size_t best = next_out(list);
            mismatches += heap.pop() != list[best].push ? 1u : 0u;
            list.erase(list.begin() + std::ptrdiff_t(best));
        }
        CHECK(heap.empty());
        CHECK(mismatches == 0u);
        CHECK(equal_pops > 100u);  // ties were exercised
        CHECK(pushes > 4000u);
    };
    check(std::uint32_t(0), 1u);
    check(std::uint32_t(0), 2u);
    check(std::uint64_t(0), 3u);
}

TEST_CASE("radix heap: pop_live keeps the order of the live cells and drops dead ones", "[drainage][fill]") {
    // Cells die at random while they wait (for good, as a flooded cell's neighbours stay reached).
    // Against a plain list: every cell that never died leaves in the order of the test above among
    // the live cells; a dead cell may still leave (from the equal bucket, which is not tested)
    // but most are dropped; and once pop_live says the queue is dry, no live cell is left.
    auto check = [](auto zero, std::uint32_t seed) {
        using K = decltype(zero);
        std::mt19937_64 rng(seed);
        gorge::detail::radix_heap<K, std::uint32_t> heap;
        std::vector<queued_cell<K>> list;  // the live cells still queued
        std::vector<char> dead;            // by push number
        auto live = [&](std::uint32_t cell) { return dead[cell] == 0; };
        K last = 0;
        std::uint32_t pushes = 0, cell = 0;
        std::size_t mismatches = 0, live_pops = 0, dead_pops = 0, kills = 0;
        // A live cell just popped must be the list's next one; it leaves the list.
        auto take_live = [&](bool check_key) {
            if (list.empty()) {
                ++mismatches;
                return;
            }
            const std::size_t best = next_out(list);
            mismatches += cell != list[best].push || (check_key && heap.last_key() != list[best].key) ? 1u : 0u;
            list.erase(list.begin() + std::ptrdiff_t(best));
        };
        for (int round = 0; round < 4000; ++round) {
            const int n = int(rng() % 4);
            for (int i = 0; i < n; ++i) {
                const K key = next_radix_key(rng, last);
                heap.push(key, pushes);
                list.push_back({key, pushes});
                dead.push_back(0);
                ++pushes;
            }
            if (!list.empty() && rng() % 2 == 0) {  // a waiting cell dies
                const std::size_t victim = std::size_t(rng() % list.size());
                dead[list[victim].push] = 1;
                list.erase(list.begin() + std::ptrdiff_t(victim));
                ++kills;
            }
            if (rng() % 5 == 0) continue;
            if (!heap.pop_live(cell, live)) {
                mismatches += list.empty() ? 0u : 1u;
                continue;
            }
            mismatches += heap.last_key() < last ? 1u : 0u;  // keys never go down
            last = heap.last_key();
            if (!live(cell)) {
                ++dead_pops;
                continue;
            }
            ++live_pops;
            take_live(true);
        }
        while (heap.pop_live(cell, live)) {
            if (!live(cell)) {
                ++dead_pops;
                continue;
            }
            take_live(false);
        }
        CHECK(list.empty());  // every live cell left
        CHECK(heap.empty());
        CHECK(mismatches == 0u);
        CHECK(live_pops > 1000u);
        CHECK(kills > 1000u);
        CHECK(dead_pops < kills / 2);  // most dead cells were dropped, not popped
    };
    check(std::uint32_t(0), 4u);
    check(std::uint32_t(0), 5u);
    check(std::uint64_t(0), 6u);
}

TEST_CASE("radix heap: clear() empties it, keeps its storage, and takes keys below the last one again",
          "[drainage][fill]") {
    gorge::detail::radix_heap<std::uint32_t, std::uint32_t> heap;
    for (std::uint32_t i = 0; i < 5000; ++i) heap.push(0x40000000u + (i * 7919u) % 100000u, i);
    for (int i = 0; i < 2000; ++i) heap.pop();
    const std::uint32_t last = heap.last_key();
    const std::size_t storage = heap.storage_bytes();
    REQUIRE(storage > 0u);
    heap.clear();
    CHECK(heap.empty());
    CHECK(heap.storage_bytes() == storage);
    CHECK(heap.min_key_bound() == ~std::uint32_t(0));  // nothing queued
    // Keys below the last popped one, as a new flood pushes them, leave in order.
    const std::uint32_t keys[] = {5u, last - 1u, 3u, 0x300u, 3u};
    for (std::uint32_t i = 0; i < 5; ++i) heap.push(keys[i], i);
    const std::uint32_t order[] = {4u, 2u, 0u, 3u, 1u};  // by key, the latest of equal keys first
    for (std::uint32_t cell : order) CHECK(heap.pop() == cell);
    CHECK(heap.empty());
}

TEST_CASE("radix heap: clear_storage() gives the buckets' storage back; the next queue takes the same chunks",
          "[drainage][fill]") {
    // Two "floods" whose keys spread over different buckets: kept with clear(), the buckets of
    // both stay allocated and the storage grows; with clear_storage() the second takes no more
    // chunks than the larger of the two alone, and the order of cells is unchanged.
    auto flood = [](gorge::detail::radix_heap<std::uint32_t, std::uint32_t>& heap, std::uint32_t base, std::uint32_t step,
                    std::vector<std::uint32_t>& popped) {
        for (std::uint32_t i = 0; i < 60000; ++i) heap.push(base + (i * step) % 250000u, i);
        popped.clear();
        while (!heap.empty()) popped.push_back(heap.pop());
    };
    std::vector<std::uint32_t> a, b, b_fresh;
    gorge::detail::radix_heap<std::uint32_t, std::uint32_t> reused, fresh;
    flood(reused, 0x10000000u, 7919u, a);
    const std::size_t first = reused.storage_bytes();
    reused.clear_storage();
    CHECK(reused.empty());
    CHECK(reused.storage_bytes() == first);  // the chunks stay, for the next flood
    flood(reused, 0x7f000000u, 104729u, b);
    flood(fresh, 0x7f000000u, 104729u, b_fresh);
    CHECK(b == b_fresh);
    CHECK(reused.storage_bytes() == std::max(first, fresh.storage_bytes()));
    gorge::detail::radix_heap<std::uint32_t, std::uint32_t> kept;
    std::vector<std::uint32_t> ignored;
    flood(kept, 0x10000000u, 7919u, ignored);
    kept.clear();
    flood(kept, 0x7f000000u, 104729u, ignored);
    CHECK(kept.storage_bytes() > reused.storage_bytes());  // what clear_storage() saves
}

TEST_CASE("bucket arena: reuse() carves from the first chunk again; chunk_bytes_for follows the chunk sizes",
          "[drainage][fill]") {
    using gorge::detail::bucket_arena;
    const std::size_t kib = 1024, mib = 1024 * kib;
    CHECK(bucket_arena::chunk_bytes_for(1) == 64 * kib);
    CHECK(bucket_arena::chunk_bytes_for(64 * kib) == 64 * kib);
    CHECK(bucket_arena::chunk_bytes_for(64 * kib + 1) == 64 * kib + 2 * mib);
    CHECK(bucket_arena::chunk_bytes_for(64 * kib + 2 * mib + 1) == 64 * kib + 6 * mib);
    CHECK(bucket_arena::chunk_bytes_for(20 * mib) == 64 * kib + 2 * mib + 20 * mib);
    bucket_arena arena;
    std::vector<void*> first;
    for (int i = 0; i < 40; ++i) first.push_back(arena.allocate(60 * kib));  // 64 KiB blocks: 1 + 32 + 7 in three chunks
    const std::size_t held = arena.storage_bytes();
    CHECK(held == bucket_arena::chunk_bytes_for(40 * 64 * kib));
    CHECK(held == 64 * kib + 6 * mib);
    arena.reuse();
    std::vector<void*> again;
    for (int i = 0; i < 40; ++i) again.push_back(arena.allocate(60 * kib));
    CHECK(again == first);  // the same blocks, in the same order
    CHECK(arena.storage_bytes() == held);
    arena.reuse();
    for (int i = 0; i < 120; ++i) arena.allocate(64 * kib);  // 97 fit in the chunks made: one more
    CHECK(arena.storage_bytes() == held + 4 * mib);
}

TEST_CASE("bucket arena: disjoint aligned blocks, freed ones reused by size, chunks counted", "[drainage][fill]") {
    gorge::detail::bucket_arena arena;
    CHECK(arena.storage_bytes() == 0u);
    // Blocks of many sizes (each rounded up to a power of two >= 16 bytes), written full: none
    // overlaps another, each is 16-byte aligned; the first chunk is 64 KiB, the ones after it
    // 2 MiB and then 4 MiB.
    std::mt19937 rng(77);
    struct block {
        unsigned char* p;
        std::size_t bytes;
    };
    std::vector<block> blocks;
    std::size_t asked = 0;
    for (int i = 0; i < 3000; ++i) {
        const std::size_t bytes = 1 + rng() % (std::size_t(1) << (4 + rng() % 13));  // up to 1 MiB
        auto* p = static_cast<unsigned char*>(arena.allocate(bytes));
        CHECK(reinterpret_cast<std::uintptr_t>(p) % 16 == 0u);
        std::memset(p, i & 0xff, bytes);
        blocks.push_back({p, bytes});
        asked += bytes;
    }
    const std::size_t held = arena.storage_bytes();
    CHECK(held >= asked);
    CHECK(held < 2 * asked + (std::size_t(4) << 20));  // rounding to powers of two, one chunk's slack
    CHECK((held - (std::size_t(64) << 10) - (std::size_t(2) << 20)) % (std::size_t(4) << 20) == 0u);
    bool intact = true;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        for (std::size_t j = 0; j < blocks[i].bytes; ++j) intact = intact && blocks[i].p[j] == (i & 0xff);
    CHECK(intact);  // no block wrote into another
    std::vector<block> sorted = blocks;
    std::sort(sorted.begin(), sorted.end(), [](const block& a, const block& b) { return a.p < b.p; });
    bool disjoint = true;
    for (std::size_t i = 1; i < sorted.size(); ++i)
        disjoint = disjoint && sorted[i - 1].p + sorted[i - 1].bytes <= sorted[i].p;
    CHECK(disjoint);
    // A freed block comes back for the next request of its size (its size rounded up: the same
    // size), and the arena holds no more for it.
    arena.deallocate(blocks[5].p, blocks[5].bytes);
    std::size_t rounded = 16;
    while (rounded < blocks[5].bytes) rounded *= 2;
    CHECK(arena.allocate(rounded) == blocks[5].p);
    CHECK(arena.storage_bytes() == held);
    // Blocks above 2 MiB are the system's, counted while held.
    void* big = arena.allocate((std::size_t(3) << 20) + 5);
    CHECK(arena.storage_bytes() == held + (std::size_t(3) << 20) + 5);
    arena.deallocate(big, (std::size_t(3) << 20) + 5);
    CHECK(arena.storage_bytes() == held);
    // A vector on the arena grows, shrinks its use and grows again on the blocks it freed.
    {
        std::vector<std::uint64_t, gorge::detail::bucket_allocator<std::uint64_t>> v{
            gorge::detail::bucket_allocator<std::uint64_t>(&arena)};
        for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i);
        CHECK(v[99999] == 99999u);
    }
    const std::size_t after_vector = arena.storage_bytes();
    {
        std::vector<std::uint64_t, gorge::detail::bucket_allocator<std::uint64_t>> v{
            gorge::detail::bucket_allocator<std::uint64_t>(&arena)};
        for (std::uint64_t i = 0; i < 100000; ++i) v.push_back(i);
    }
    CHECK(arena.storage_bytes() == after_vector);
}

TEST_CASE("fills keep their queues on the calling thread: the same ones again, empty at every start",
          "[drainage][fill]") {
    using queues = gorge::detail::borrowed_flood_queues<std::uint32_t, std::uint32_t>;
    // A 320 x 320 map (float heights, 32-bit cells; a progress report after 65,536 of its 102,400
    // cells): the plain and the epsilon fill, the expected surfaces first.
    const gorge::grid<float> original = random_terrain<float>(320, 320, 4242);
    gorge::grid<float> plain = original, epsilon = original;
    gorge::fill_depressions(plain);
    gorge::fill_depressions_epsilon(epsilon);
    {
        queues q;  // the fills gave theirs back: kept, with storage
        CHECK(q->open.storage_bytes() > 0u);
        CHECK(q->open.empty());
    }
    const void* kept = nullptr;
    {
        queues q;
        kept = &*q;
    }
    {
        queues q;  // the same ones again
        CHECK(&*q == kept);
        queues nested;  // while the thread's are out: others
        CHECK(&*nested != kept);
    }

    // A fill cancelled, or stopped by its callback's exception, mid-flood leaves cells in its
    // queues; the next fill on this thread starts from empty ones and gives the same surface.
    using fill_fn = gorge::fill_stats<float> (*)(gorge::grid<float>&, const gorge::fill_options<float>&);
    const std::pair<fill_fn, const gorge::grid<float>*> fills[] = {
        {[](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions(g, o); }, &plain},
        {[](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions_epsilon(g, o); },
         &epsilon},
    };
    for (const auto& f : fills)
        for (int stop = 0; stop < 2; ++stop) {
            INFO((f.second == &plain ? "plain" : "epsilon") << (stop == 0 ? ", cancelled" : ", thrown"));
            gorge::fill_options<float> options;
            std::size_t counted = 0;
            options.progress = [&](double) {
                ++counted;
                if (counted < 2) return true;  // stops at the report in the middle of the flood
                if (stop == 1) throw std::runtime_error("stop");
                return false;
            };
            gorge::grid<float> stopped = original;
            if (stop == 0)
                CHECK(f.first(stopped, options).cancelled);
            else
                CHECK_THROWS_AS(f.first(stopped, options), std::runtime_error);
            {
                queues q;
                CHECK(q->open.empty());  // emptied when taken
            }
            gorge::grid<float> again = original;
            CHECK_FALSE(f.first(again, {}).cancelled);
            CHECK(same_bits(again, *f.second));
        }

    // A fill run from another fill's progress callback (the other kind, on its own grid) floods
    // with queues of its own while the outer one holds the thread's: both surfaces as expected.
    for (const auto& f : fills) {
        const auto& other = &f == &fills[0] ? fills[1] : fills[0];
        gorge::grid<float> inner = original;
        bool ran = false;
        gorge::fill_options<float> options;
        options.progress = [&](double fraction) {
            if (fraction > 0.0 && fraction < 1.0 && !ran) {
                ran = true;
                other.first(inner, {});
            }
            return true;
        };
        gorge::grid<float> outer = original;
        f.first(outer, options);
        REQUIRE(ran);
        CHECK(same_bits(outer, *f.second));
        CHECK(same_bits(inner, *other.second));
    }

    // release_fill_memory frees them; the next fill makes new ones.
    gorge::release_fill_memory();
    {
        queues q;
        CHECK(q->open.storage_bytes() == 0u);
    }
    gorge::grid<float> after = original;
    gorge::fill_depressions_epsilon(after);
    CHECK(same_bits(after, epsilon));
}

TEST_CASE("a thread keeps no flood queues above flood_queues_kept_bytes", "[drainage][fill]") {
    using queues = gorge::detail::borrowed_flood_queues<std::uint32_t, std::size_t>;
    constexpr std::size_t cells = gorge::detail::flood_queues_kept_bytes / sizeof(std::size_t) + 1;
    {
        queues q;
        for (std::size_t i = 0; i < cells; ++i) q->trace.push(i);
        REQUIRE(q->storage_bytes() > gorge::detail::flood_queues_kept_bytes);
    }
    queues q;
    CHECK(q->storage_bytes() == 0u);  // freed, not kept
}

TEST_CASE("bit_set::reset_range clears exactly the bits of its range", "[drainage][fill]") {
    // Ranges starting and ending at every offset of a word, within one word and across several.
    const std::size_t n = 4 * 64 + 5;
    std::size_t ranges = 0, mismatches = 0;
    for (std::size_t begin = 0; begin <= 130; ++begin)
        for (std::size_t end = begin; end <= n; end += 1 + end % 7) {
            gorge::detail::bit_set bits(n, true);
            bits.reset_range(begin, end);
            for (std::size_t i = 0; i < n; ++i) mismatches += bits.test(i) != (i < begin || i >= end) ? 1u : 0u;
            ++ranges;
        }
    CHECK(ranges > 1000u);
    CHECK(mismatches == 0u);
}

TEST_CASE("bit_set::all_set tells whether every bit of its range is set", "[drainage][fill]") {
    // Every range starting and ending at a word boundary or inside a word, against a bit-by-bit
    // check, with one bit cleared at each place in and around the range.
    const std::size_t n = 3 * 64 + 9;
    std::size_t ranges = 0, mismatches = 0, cleared_inside = 0;
    for (std::size_t begin = 0; begin <= 140; begin += 1 + begin % 5)
        for (std::size_t end = begin; end <= n; end += 1 + end % 6)
            for (std::size_t cleared = 0; cleared <= n; cleared += 1 + cleared % 9) {
                gorge::detail::bit_set bits(n, true);
                if (cleared < n) bits.reset(cleared);
                bool expected = true;
                for (std::size_t i = begin; i < end; ++i) expected &= bits.test(i);
                cleared_inside += expected ? 0u : 1u;
                mismatches += bits.all_set(begin, end) != expected ? 1u : 0u;
                ++ranges;
            }
    CHECK(ranges > 10000u);
    CHECK(cleared_inside > 1000u);  // both answers are asked for
    CHECK(mismatches == 0u);
}

TEMPLATE_TEST_CASE("copy_finite_row copies a row (-0 as +0) and tells whether every value was finite", "[drainage][fill]",
                   float, double) {
    // Each special value at each place of rows long enough for the vectorized loop and its tail,
    // against std::isfinite and the value's own + 0, bit for bit.
    using T = TestType;
    using limits = std::numeric_limits<T>;
    const T specials[] = {T(0), -T(0), limits::denorm_min(), -limits::denorm_min(), limits::min(), limits::max(),
                          limits::lowest(), limits::infinity(), -limits::infinity(), limits::quiet_NaN(),
                          -limits::quiet_NaN(), T(1.5)};
    std::size_t rows = 0, mismatches = 0, non_finite_rows = 0;
    for (const std::ptrdiff_t n : {1, 7, 16, 33, 70})
        for (std::ptrdiff_t at = 0; at < n; ++at)
            for (const T special : specials) {
                std::vector<T> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n), T(7));
                for (std::ptrdiff_t x = 0; x < n; ++x) in[static_cast<std::size_t>(x)] = T(0.25) * T(x % 5) - T(0.5);
                in[static_cast<std::size_t>(at)] = special;
                bool finite = true;
                for (const T v : in) finite = finite && std::isfinite(v);
                non_finite_rows += finite ? 0u : 1u;
                mismatches += gorge::detail::copy_finite_row(in.data(), out.data(), n) != finite ? 1u : 0u;
                for (std::size_t x = 0; x < in.size(); ++x) {
                    const T expected = in[x] + T(0);
                    mismatches += std::memcmp(&expected, &out[x], sizeof(T)) != 0 ? 1u : 0u;
                }
                ++rows;
            }
    CHECK(rows > 1500u);
    CHECK(non_finite_rows > 400u);  // both answers are asked for
    CHECK(mismatches == 0u);
}

TEST_CASE("padded_heights for a surface written in later takes over a block large enough", "[drainage][fill]") {
    using block = std::vector<float, gorge::detail::uninitialized_block_allocator<float>>;
    const std::ptrdiff_t width = 37, height = 23;
    const std::size_t cells = static_cast<std::size_t>(width + 2) * static_cast<std::size_t>(height + 2);
    for (const std::size_t given : {cells + 100, cells, cells - 1, std::size_t(0)}) {
        block storage(given, 5.0f);
        const float* const before = storage.data();
        const gorge::detail::padded_heights<float> work(width, height, -1.0f, "test", std::move(storage));
        REQUIRE(work.z.size() == cells);
        if (given >= cells) CHECK(work.z.data() == before);  // no new block, no fresh pages
        std::size_t wrong_ring = 0, written_inside = 0, wrong_closed = 0;
        for (std::ptrdiff_t y = -1; y <= height; ++y)
            for (std::ptrdiff_t x = -1; x <= width; ++x) {
                const std::size_t i = work.index(x, y);
                const bool ring = x < 0 || y < 0 || x == width || y == height;
                if (ring)
                    wrong_ring += work.z[i] != -1.0f ? 1u : 0u;
                else if (i < given)  // the block's own values: the map's cells are left to the caller
                    written_inside += work.z[i] != 5.0f ? 1u : 0u;
                wrong_closed += work.closed.test(i) != ring ? 1u : 0u;
            }
        CHECK(wrong_ring == 0u);
        CHECK(written_inside == 0u);
        CHECK(wrong_closed == 0u);
        CHECK(work.data_cells == static_cast<std::size_t>(width * height));
    }
}

TEST_CASE("bit_set::set_three sets exactly its three bits, at every offset of a word", "[drainage][fill]") {
    const std::size_t n = 3 * 64;
    std::size_t checked = 0, mismatches = 0;
    for (std::size_t i = 0; i + 2 < n; ++i)
        for (unsigned bits = 0; bits < 8u; ++bits) {
            gorge::detail::bit_set set(n, false), expected(n, false);
            set.set_three(i, bits);
            for (unsigned b = 0; b < 3u; ++b)
                if ((bits >> b) & 1u) expected.set(i + b);
            for (std::size_t j = 0; j < n; ++j) mismatches += set.test(j) != expected.test(j) ? 1u : 0u;
            ++checked;
        }
    CHECK(checked == (n - 2) * 8u);
    CHECK(mismatches == 0u);
}

TEST_CASE("cell_fifo: first in, first out through growth and compaction; a mask's cells in D8 order",
          "[drainage][fill]") {
    // Random pushes, mask pushes and pops against a std::deque, in phases that grow the queue, drain
    // it, and hold it about steady for many times its storage (where it must move its waiting cells
    // to the front rather than grow). The cells of a mask are its neighbours k = 0..7 in order,
    // from d8_dx and d8_dy (independent of the offset table's listing).
    auto check = [](auto zero) {
        using I = decltype(zero);
        const std::ptrdiff_t pitch = 1000;
        const gorge::detail::d8_mask_offsets<I> offsets(pitch);
        gorge::detail::cell_fifo<I> fifo;
        std::deque<I> expected;
        std::mt19937_64 rng(21);
        std::size_t pops = 0, mismatches = 0, most_waiting = 0, pushed = 0;
        bool storage_bounded = true;
        // Per phase: the share of pushes in percent (-1: push while fewer than `steady` cells wait,
        // else pop), and the number of steps.
        const std::size_t steady = 3000;
        const int phases[][2] = {{-1, 1000000}, {70, 20000}, {20, 40000}, {80, 3000}, {0, 100000}};
        std::size_t steady_storage = 0;  // at the end of the steady phase
        for (const auto& phase : phases) {
            for (int step = 0; step < phase[1]; ++step) {
                const bool push = phase[0] < 0 ? expected.size() < steady : int(rng() % 100) < phase[0];
                if (push) {
                    const std::size_t c = std::size_t(pitch + 1) + std::size_t(rng() % 1000000);
                    if (rng() % 2 == 0) {
                        fifo.push(static_cast<I>(c));
                        expected.push_back(static_cast<I>(c));
                        ++pushed;
                    } else {
                        const unsigned mask = unsigned(rng() % 256);
                        fifo.push_neighbours(c, mask, offsets);
                        for (int k = 0; k < gorge::d8_neighbours; ++k)
                            if ((mask >> k) & 1u) {
                                expected.push_back(static_cast<I>(std::ptrdiff_t(c) + gorge::d8_dy[k] * pitch + gorge::d8_dx[k]));
                                ++pushed;
                            }
                    }
                } else if (!expected.empty()) {
                    mismatches += fifo.pop() != expected.front() ? 1u : 0u;
                    expected.pop_front();
                    ++pops;
                    if (expected.empty()) fifo.clear();
                }
                mismatches += fifo.size() != expected.size() ? 1u : 0u;
                mismatches += fifo.empty() != expected.empty() ? 1u : 0u;
                most_waiting = std::max(most_waiting, expected.size());
                // It grows only when fewer than half of its cells have been taken: never to more
                // than four times the cells waiting (plus the room for a mask).
                storage_bounded = storage_bounded && fifo.storage() <= 4 * (most_waiting + 8) + 64;
            }
            if (phase[0] < 0) {
                steady_storage = fifo.storage();
                CHECK(pushed > 20 * steady_storage);  // the steady phase went through its storage many times
            }
        }
        CHECK(mismatches == 0u);
        CHECK(expected.empty());
        CHECK(pops == pushed);
        CHECK(storage_bounded);
        CHECK(steady_storage <= 4 * (steady + 8) + 64);
    };
    check(std::uint32_t(0));
    check(std::size_t(0));
}

TEST_CASE("raised_cell_fifo: first in, first out, each cell's U written once it was taken", "[drainage][fill]") {
    // Distinct cells with random finite U (±0, ±denorm_min and ±max among them) pushed and popped
    // against a std::deque, through phases that grow the queue, drain it and hold it steady. U's
    // array must receive exactly the U of the cells taken, bit for bit, and nothing else: some of
    // them while the queue runs (it writes when its storage is full and `kept` cells were taken),
    // every one after the last write_taken(); its storage stays within about twice `kept` plus the
    // cells waiting.
    auto check = [](auto zero) {
        using T = decltype(zero);
        using B = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        const std::size_t cells = 300000, kept = 1000;
        const B untouched = B(0x5a5a5a5a);
        std::vector<T> upper(cells);
        for (T& u : upper) std::memcpy(&u, &untouched, sizeof u);
        auto bits_at = [&](std::size_t c) {
            B b;
            std::memcpy(&b, &upper[c], sizeof b);
            return b;
        };
        std::vector<std::uint32_t> order(cells);
        for (std::size_t c = 0; c < cells; ++c) order[c] = std::uint32_t(c);
        std::mt19937_64 rng(37);
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<B> pushed_bits(cells);
        std::vector<std::uint8_t> taken(cells, 0);
        gorge::detail::raised_cell_fifo<std::uint32_t, B> fifo;
        fifo.start(upper.data(), kept);
        std::deque<std::uint32_t> expected;
        std::size_t next = 0, mismatches = 0, most_waiting = 0, written_early = 0;
        bool storage_bounded = true;
        const int phases[][2] = {{-1, 100000}, {70, 20000}, {30, 40000}, {100, 5000}, {0, 200000}};
        for (const auto& phase : phases)
            for (int step = 0; step < phase[1]; ++step) {
                const bool push = phase[0] < 0 ? expected.size() < 500 : int(rng() % 100) < phase[0];
                if (push && next < cells) {
                    const std::uint32_t c = order[next++];
                    const T sign = rng() % 2 == 0 ? T(1) : T(-1);
                    const T special[] = {T(0), -T(0), std::numeric_limits<T>::denorm_min() * sign,
                                         std::numeric_limits<T>::max() * sign};
                    const T u = rng() % 8 == 0 ? special[rng() % 4]
                                                : T(std::ldexp(double(rng() % 2000000) - 1e6, -int(rng() % 40)));
                    std::memcpy(&pushed_bits[c], &u, sizeof u);
                    fifo.push(c, u);
                    expected.push_back(c);
                } else if (!push && !expected.empty()) {
                    std::size_t c = 0;
                    const T u = fifo.template pop<T>(c);
                    B b;
                    std::memcpy(&b, &u, sizeof b);
                    mismatches += c != expected.front() || b != pushed_bits[c] ? 1u : 0u;
                    taken[c] = 1;
                    expected.pop_front();
                }
                mismatches += fifo.empty() != expected.empty() ? 1u : 0u;
                most_waiting = std::max(most_waiting, expected.size());
                storage_bounded = storage_bounded &&
                                  fifo.storage_bytes() <= 2 * sizeof(B) * (2 * (kept + most_waiting) + 64);
            }
        // Before the last write: only cells taken hold a U, and that U is theirs.
        for (std::size_t c = 0; c < cells; ++c) {
            if (bits_at(c) == untouched) continue;
            mismatches += taken[c] == 0 || bits_at(c) != pushed_bits[c] ? 1u : 0u;
            ++written_early;
        }
        fifo.write_taken();
        std::size_t taken_count = 0;
        for (std::size_t c = 0; c < cells; ++c) {
            taken_count += taken[c];
            mismatches += taken[c] ? bits_at(c) != pushed_bits[c] : bits_at(c) != untouched;
        }
        CHECK(mismatches == 0u);
        CHECK(expected.empty());
        CHECK(taken_count == next);
        CHECK(next > 50 * kept);  // the phases went through many times `kept`
        CHECK(written_early > 20 * kept);
        CHECK(written_early < taken_count);
        CHECK(storage_bounded);
    };
    check(0.0f);
    check(0.0);
}

TEST_CASE("the working copy opens exactly the map's cells and names its first non-finite cell",
          "[drainage][fill]") {
    gorge::grid<float> map(67, 5, 2.0f);
    map(3, 1) = -0.0f;
    gorge::detail::padded_heights<float> work(map.view(), std::nullopt, "test");
    std::size_t mismatches = 0;
    for (std::ptrdiff_t y = -1; y <= work.height; ++y)
        for (std::ptrdiff_t x = -1; x <= work.width; ++x) {
            const bool inside = x >= 0 && y >= 0 && x < work.width && y < work.height;
            mismatches += work.closed.test(work.index(x, y)) == inside ? 1u : 0u;
        }
    CHECK(mismatches == 0u);
    CHECK(work.data_cells == 67u * 5u);
    CHECK(std::signbit(work.z[work.index(3, 1)]) == false);
    CHECK(work.z[work.index(66, 4)] == 2.0f);
    map(40, 3) = std::numeric_limits<float>::infinity();
    map(5, 3) = std::numeric_limits<float>::quiet_NaN();
    map(60, 2) = -std::numeric_limits<float>::infinity();
    try {
        gorge::detail::padded_heights<float> bad(map.view(), std::nullopt, "test");
        FAIL("a non-finite cell was accepted");
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        CHECK(what.find("(60, 2)") != std::string::npos);  // raster order: row 2 comes first
    }
}

TEST_CASE("open neighbours from three bit-set reads agree with eight single tests", "[drainage][fill]") {
    // Rows of 67 + 2 cells, so that the three-bit reads start at every offset within a 64-bit word
    // and cross word boundaries; random closed flags.
    const gorge::grid<float> map(67, 9, 1.0f);
    gorge::detail::padded_heights<float> work(map.view(), std::nullopt, "test");
    std::mt19937 rng(5);
    for (std::size_t i = 0; i < work.z.size(); ++i)
        if (rng() % 2 == 0) work.closed.set(i);
    std::size_t checked = 0, mismatches = 0;
    for (std::ptrdiff_t y = 0; y < work.height; ++y)
        for (std::ptrdiff_t x = 0; x < work.width; ++x) {
            const std::size_t c = work.index(x, y);
            unsigned expected = 0;
            for (int k = 0; k < gorge::d8_neighbours; ++k)
                if (!work.closed.test(std::size_t(std::ptrdiff_t(c) + work.offset(k)))) expected |= 1u << k;
            mismatches += work.open_neighbours(c) != expected ? 1u : 0u;
            for (std::size_t b = 0; b < 3; ++b)
                mismatches += ((work.closed.three(c - 1) >> b) & 1u) != unsigned(work.closed.test(c - 1 + b)) ? 1u : 0u;
            ++checked;
        }
    CHECK(checked == 67u * 9u);
    CHECK(mismatches == 0u);
}

TEST_CASE("open and higher neighbours from window compares agree with eight single tests", "[drainage][fill]") {
    // Every cell of small maps (1 x 1 up to 7 x 5, so that the compares' loads meet the working
    // copy's first and last element), random heights from a few values (ties with the level are
    // common), random closed flags, the ring and a no-data cell holding +-infinity and NaN, levels
    // from the same values: the open neighbours, and those above the level, must be exactly what a
    // scalar test of each neighbour finds. float takes the SSE2 path on x86, double the AVX one
    // when compiled for AVX, the scalar loop otherwise.
    auto check = [](auto zero) {
        using T = decltype(zero);
        const T values[] = {T(-1), T(0), T(0.5), T(1), T(2)};
        std::mt19937 rng(11);
        std::size_t checked = 0, mismatches = 0, above_found = 0;
        for (std::ptrdiff_t w = 1; w <= 7; ++w)
            for (std::ptrdiff_t h = 1; h <= 5; ++h) {
                const gorge::grid<T> map(w, h, T(0));
                gorge::detail::padded_heights<T> work(map.view(), std::nullopt, "test");
                const T specials[] = {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                                      std::numeric_limits<T>::quiet_NaN()};
                for (std::size_t i = 0; i < work.z.size(); ++i) {
                    work.z[i] = rng() % 8 == 0 ? specials[rng() % 3] : values[rng() % 5];
                    if (rng() % 3 == 0) work.closed.set(i);
                }
                for (std::ptrdiff_t y = 0; y < h; ++y)
                    for (std::ptrdiff_t x = 0; x < w; ++x)
                        for (const T level : values) {
                            const std::size_t c = work.index(x, y);
                            unsigned open_expected = 0, above_expected = 0;
                            for (int k = 0; k < gorge::d8_neighbours; ++k) {
                                const std::size_t n = std::size_t(std::ptrdiff_t(c) + work.offset(k));
                                if (work.closed.test(n)) continue;
                                open_expected |= 1u << k;
                                if (work.z[n] > level) above_expected |= 1u << k;
                            }
                            const unsigned open = work.open_neighbours(c);
                            const unsigned above = gorge::detail::window_neighbours
                                                       .mask[work.open_window(c) & work.window_above(c, level)];
                            mismatches += open != open_expected || above != above_expected ? 1u : 0u;
                            above_found += above_expected != 0 ? 1u : 0u;
                            ++checked;
                        }
            }
        CHECK(checked == 5u * 28u * 15u);
        CHECK(mismatches == 0u);
        CHECK(above_found > checked / 4);  // cells with and without open neighbours above, many times
        CHECK(above_found < checked * 3 / 4);
    };
    check(0.0f);
    check(0.0);
}

namespace {

/// Priority-Flood+ (plain) written out directly, for maps without no-data: a binary heap ordered
/// by height and then by the latest push, a FIFO pit queue drained first, neighbours in D8 order.
/// The plain fill must equal it bit for bit.
template <class T>
gorge::grid<T> reference_flood(const gorge::grid<T>& original) {
    gorge::grid<T> z = original;
    for (T& v : z) v = v + T(0);  // -0 as +0, like the fills
    const std::ptrdiff_t w = z.width(), h = z.height();
    std::vector<char> closed(z.size(), 0);
    struct entry {
        T z;
        std::uint64_t push;
        std::ptrdiff_t cell;
    };
    auto later = [](const entry& a, const entry& b) { return a.z > b.z || (a.z == b.z && a.push < b.push); };
    std::vector<entry> open;  // a binary heap through std::push_heap / std::pop_heap
    std::deque<std::ptrdiff_t> pit;
    std::uint64_t pushes = 0;
    auto push_open = [&](std::ptrdiff_t c) {
        open.push_back({z.data()[c], pushes++, c});
        std::push_heap(open.begin(), open.end(), later);
    };
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
                closed[std::size_t(y * w + x)] = 1;
                push_open(y * w + x);
            }
    while (!open.empty() || !pit.empty()) {
        std::ptrdiff_t c;
        if (!pit.empty()) {
            c = pit.front();
            pit.pop_front();
        } else {
            std::pop_heap(open.begin(), open.end(), later);
            c = open.back().cell;
            open.pop_back();
        }
        const T zc = z.data()[c];
        for (int k = 0; k < gorge::d8_neighbours; ++k) {
            const std::ptrdiff_t nx = c % w + gorge::d8_dx[k], ny = c / w + gorge::d8_dy[k];
            if (!z.contains(nx, ny) || closed[std::size_t(ny * w + nx)]) continue;
            closed[std::size_t(ny * w + nx)] = 1;
            T& zn = z.data()[ny * w + nx];
            if (zn <= zc) {
                zn = zc;
                pit.push_back(ny * w + nx);
            } else {
                push_open(ny * w + nx);
            }
        }
    }
    return z;
}

/// The least epsilon surface computed from its definition alone (independent of the fill's flood):
/// E starts at the height on outlets (data cells on the edge or next to no-data) and at +infinity
/// on the other data cells, then sweeps E(c) = max(Z(c), succ(min over data neighbours of E)) in
/// alternating raster directions until nothing changes (Bellman-Ford style: E only decreases,
/// never below the least surface, and every fixed point is it). succ is std::nextafter towards
/// +infinity, one more when that is the no-data value; -0 heights count as +0, and a step from
/// -denorm_min gives +0 (std::nextafter's result there compares equal to 0 and is normalised).
template <class T>
gorge::grid<T> least_surface_reference(const gorge::grid<T>& original, const std::optional<T>& nd) {
    gorge::grid<T> z = original, e = original;
    const std::ptrdiff_t w = z.width(), h = z.height();
    const T inf = std::numeric_limits<T>::infinity();
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            if (is_no_data(z(x, y), nd)) continue;
            z(x, y) = z(x, y) + T(0);
            e(x, y) = is_outlet(original, x, y, nd) ? z(x, y) : inf;
        }
    auto succ = [&](T v) {
        T s = std::nextafter(v, inf) + T(0);
        if (nd && s == *nd) s = std::nextafter(s, inf) + T(0);
        return s;
    };
    auto relax = [&](std::ptrdiff_t x, std::ptrdiff_t y) {
        if (is_no_data(z(x, y), nd) || is_outlet(original, x, y, nd)) return false;
        T low = inf;
        for (int k = 0; k < gorge::d8_neighbours; ++k) {
            const std::ptrdiff_t nx = x + gorge::d8_dx[k], ny = y + gorge::d8_dy[k];
            if (z.contains(nx, ny) && !is_no_data(z(nx, ny), nd)) low = std::min(low, e(nx, ny));
        }
        if (low == inf) return false;
        const T v = std::max(z(x, y), succ(low));
        if (v == e(x, y)) return false;
        e(x, y) = v;
        return true;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) changed |= relax(x, y);
        for (std::ptrdiff_t y = h - 1; y >= 0; --y)
            for (std::ptrdiff_t x = w - 1; x >= 0; --x) changed |= relax(x, y);
    }
    return e;
}

}  // namespace

TEST_CASE("fills equal a directly written Priority-Flood bit for bit, ties included", "[drainage][fill]") {
    // Random terrain with exact ties and flats (quantised cells), sizes whose padded rows start at
    // many offsets within the bit set's words, and the 760 x 760 map of the huge-page test. The
    // epsilon fill is compared with its definition (least_surface_reference) on the smaller maps
    // and in the test case that follows.
    std::uint32_t seed = 300;
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{3, 3}, {5, 70}, {63, 20}, {130, 97}, {760, 760}}) {
        ++seed;
        INFO("map " << size.first << " x " << size.second << ", seed " << seed);
        const gorge::grid<float> original = random_terrain<float>(size.first, size.second, seed);
        gorge::grid<float> eps = original, plain = original;
        gorge::fill_depressions_epsilon(eps);
        gorge::fill_depressions(plain);
        if (size.first < 700) CHECK(same_bits(eps, least_surface_reference(original, std::optional<float>())));
        CHECK(same_bits(plain, reference_flood(original)));
    }
    // Smooth terrain without noise: long slopes, which the plain fill traces uphill outside the
    // priority queue, around a few large nested depressions (bumps of two wavelengths).
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{200, 150}, {97, 301}}) {
        gorge::grid<float> smooth(size.first, size.second);
        for (std::ptrdiff_t y = 0; y < smooth.height(); ++y)
            for (std::ptrdiff_t x = 0; x < smooth.width(); ++x)
                smooth(x, y) = float(10.0 * std::sin(0.05 * double(x)) * std::cos(0.043 * double(y)) +
                                     3.0 * std::sin(0.31 * double(x + 2 * y)));
        gorge::grid<float> eps_s = smooth, plain_s = smooth, pd_s = smooth;
        gorge::fill_depressions_epsilon(eps_s);
        const auto stats = gorge::fill_depressions(plain_s);
        gorge::fill_depressions_planchon_darboux(pd_s);
        CHECK(stats.raised_cells > 0u);
        CHECK(same_bits(eps_s, least_surface_reference(smooth, std::optional<float>())));
        CHECK(same_bits(plain_s, reference_flood(smooth)));
        CHECK(same_bits(plain_s, pd_s));
    }
    // A map in which no cell lies in a depression (a bowl turned over: every cell rises towards
    // the centre), so the plain fill reaches everything by tracing, and an inverted one (one
    // depression holding every inner cell).
    gorge::grid<double> dome(41, 33), bowl(41, 33);
    for (std::ptrdiff_t y = 0; y < dome.height(); ++y)
        for (std::ptrdiff_t x = 0; x < dome.width(); ++x) {
            const double r2 = double((x - 20) * (x - 20) + (y - 16) * (y - 16));
            dome(x, y) = 1000.0 - r2;
            bowl(x, y) = r2;
        }
    gorge::grid<double> dome_plain = dome, bowl_plain = bowl;
    CHECK(gorge::fill_depressions(dome_plain).raised_cells == 0u);
    CHECK(same_bits(dome_plain, dome));
    CHECK(gorge::fill_depressions(bowl_plain).raised_cells > 0u);
    CHECK(same_bits(bowl_plain, reference_flood(bowl)));
    // Heights with long exact flats: a staircase of integer steps, pits of many cells at one level.
    gorge::grid<double> steps(90, 70);
    std::mt19937 rng(11);
    for (std::ptrdiff_t y = 0; y < steps.height(); ++y)
        for (std::ptrdiff_t x = 0; x < steps.width(); ++x) steps(x, y) = double((x / 7 + y / 5 + int(rng() % 3)) % 6);
    gorge::grid<double> eps = steps, plain = steps;
    gorge::fill_depressions_epsilon(eps);
    gorge::fill_depressions(plain);
    CHECK(same_bits(eps, least_surface_reference(steps, std::optional<double>())));
    CHECK(same_bits(plain, reference_flood(steps)));
}

namespace {

/// Small random maps of the kinds the epsilon surface must handle: flats and plateaus (heights
/// drawn from a few levels), nested pits, pits touching the edge, no-data holes, heights one ulp
/// around the no-data value, negative heights and -0.
template <class T>
gorge::grid<T> tricky_map(std::ptrdiff_t w, std::ptrdiff_t h, std::mt19937& rng, const std::optional<T>& nd) {
    gorge::grid<T> g(w, h);
    const int style = int(rng() % 4);
    const T near = nd && std::isfinite(*nd) ? *nd : T(3);
    const T inf = std::numeric_limits<T>::infinity();
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            T v;
            switch (style) {
            case 0: v = T(int(rng() % 4)); break;                             // flats and plateaus
            case 1: v = T(int(rng() % 7) - 3) * T(0.5); break;                // negative, zero
            case 2: v = T(std::abs(double(x) - double(w) / 2) + std::abs(double(y) - double(h) / 2)) -
                        T(int(rng() % 3)); break;                            // nested pits in a cone
            default: v = T(int(rng() % 1000)) / T(64); break;
            }
            const unsigned r = unsigned(rng() % 16);
            if (r == 0) v = -T(0);
            if (r == 1) v = std::nextafter(near, -inf);  // just below the no-data value
            if (r == 2) v = std::nextafter(near, inf);   // just above it
            if (r == 3) v = near;                        // the no-data value itself (or 3)
            g(x, y) = v;
        }
    return g;
}

/// Image of (x, y) under symmetry s of the square (bit 0: mirror x, bit 1: mirror y, bit 2:
/// transpose, applied in that order) for a w x h map.
gorge::grid<float> transformed(const gorge::grid<float>& g, int s) {
    const std::ptrdiff_t w = g.width(), h = g.height();
    const bool swap = (s & 4) != 0;
    gorge::grid<float> out(swap ? h : w, swap ? w : h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            std::ptrdiff_t tx = (s & 1) ? w - 1 - x : x, ty = (s & 2) ? h - 1 - y : y;
            if (swap) std::swap(tx, ty);
            out(tx, ty) = g(x, y);
        }
    return out;
}

}  // namespace

TEST_CASE("fills of a slope traced in one go, longer than the trace queue keeps", "[drainage][fill]") {
    // A tilted plane, lowest at the corner (0, 0), with four bowls cut into it: the flood's first
    // cell traces almost the whole map uphill in one go, a wave whose queue moves its waiting
    // cells to the front of its storage many times (gorge::detail::cell_fifo), and the bowls'
    // rims leave traced cells that must still enter the priority queue to fill them.
    const std::ptrdiff_t w = 420, h = 330;
    gorge::grid<float> slope(w, h);
    const double bowls[4][2] = {{60, 70}, {300, 80}, {150, 250}, {380, 290}};
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            double z = 0.02 * double(x) + 0.015 * double(y);
            for (const auto& b : bowls) {
                const double r = std::hypot(double(x) - b[0], double(y) - b[1]);
                if (r < 25.0) z -= 0.04 * (25.0 - r);
            }
            slope(x, y) = float(z);
        }
    gorge::grid<float> plain = slope, pd = slope, eps = slope;
    const auto stats = gorge::fill_depressions(plain);
    gorge::fill_depressions_planchon_darboux(pd);
    gorge::fill_depressions_epsilon(eps);
    CHECK(stats.raised_cells > 0u);
    for (const auto& b : bowls) {  // each bowl's centre lies in a depression
        const auto bx = std::ptrdiff_t(b[0]), by = std::ptrdiff_t(b[1]);
        CHECK(plain(bx, by) > slope(bx, by));
    }
    CHECK(same_bits(plain, pd));
    CHECK(same_bits(plain, reference_flood(slope)));
    CHECK(same_bits(eps, least_surface_reference(slope, std::optional<float>())));
}

namespace {

/// A tilted plane (lowest along one side or corner, by the seed) with bowls cut into it and
/// rough noise on top; terraced (heights rounded to a step: wide flats and ties) when `terraces`,
/// and with no-data holes when `no_data` is set. The slopes are long, so the fills' traces are.
template <class T>
gorge::grid<T> tilted_rough_map(std::ptrdiff_t w, std::ptrdiff_t h, std::uint32_t seed, bool terraces,
                                const std::optional<T>& no_data) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double sx = (seed & 1u) ? 0.05 : -0.04, sy = (seed & 2u) ? 0.03 : 0.0;
    const double bx = 0.3 * double(w) + 0.4 * u(rng) * double(w), by = 0.3 * double(h) + 0.4 * u(rng) * double(h);
    gorge::grid<T> g(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            double z = sx * double(x) + sy * double(y) + 0.08 * u(rng);
            const double r = std::hypot(double(x) - bx, double(y) - by);
            if (r < 20.0) z -= 0.1 * (20.0 - r);
            if (terraces) z = 0.1 * std::floor(z / 0.1);
            g(x, y) = T(z);
            if (no_data && u(rng) < 0.02) g(x, y) = *no_data;
        }
    return g;
}

}  // namespace

TEST_CASE("fills of tilted rough maps, with terraces and no-data: long traces", "[drainage][fill]") {
    // Long traces up slopes, ties along the terraces: both fills against their references, bit
    // for bit.
    auto run = [](auto zero, std::uint32_t seed, bool terraces, bool holes) {
        using T = decltype(zero);
        const std::optional<T> nd = holes ? std::optional<T>(T(-9999)) : std::nullopt;
        const gorge::grid<T> original = tilted_rough_map<T>(90 + std::ptrdiff_t(seed) * 7, 80, seed, terraces, nd);
        INFO("seed " << seed << (terraces ? ", terraces" : "") << (holes ? ", no-data" : ""));
        gorge::fill_options<T> options;
        options.no_data = nd;
        gorge::grid<T> plain = original, pd = original, eps = original;
        const auto stats = gorge::fill_depressions(plain, options);
        gorge::fill_depressions_planchon_darboux(pd, options);
        gorge::fill_depressions_epsilon(eps, options);
        if (!holes) {  // the bowl is a depression (holes may drain it)
            CHECK(stats.raised_cells > 0u);
            CHECK(same_bits(plain, reference_flood(original)));
        }
        CHECK(same_bits(plain, pd));
        CHECK(same_bits(eps, least_surface_reference(original, nd)));
    };
    for (std::uint32_t seed = 1; seed <= 4; ++seed)
        for (const bool terraces : {false, true})
            for (const bool holes : {false, true}) {
                run(0.0f, seed, terraces, holes);
                if (seed == 1) run(0.0, seed, terraces, holes);
            }
}

/// fill_stats' epsilon statistics by their definition, cell by cell from the input Z, the epsilon
/// fill E and the plain fill F: the largest E - F, and the raised cells with a data neighbour
/// whose F is below their Z.
template <class T>
std::pair<T, std::size_t> epsilon_statistics_by_definition(const gorge::grid<T>& original, const gorge::grid<T>& eps,
                                                          const gorge::grid<T>& plain, const std::optional<T>& nd) {
    T rise = T(0);
    std::size_t overtaken = 0;
    for (std::ptrdiff_t y = 0; y < original.height(); ++y)
        for (std::ptrdiff_t x = 0; x < original.width(); ++x) {
            if (is_no_data(original(x, y), nd)) continue;
            rise = std::max(rise, eps(x, y) - plain(x, y));
            bool lower = false;
            for (int k = 0; k < gorge::d8_neighbours; ++k) {
                const std::ptrdiff_t nx = x + gorge::d8_dx[k], ny = y + gorge::d8_dy[k];
                lower = lower || (original.contains(nx, ny) && !is_no_data(original(nx, ny), nd) &&
                                  plain(nx, ny) < original(x, y));
            }
            overtaken += eps(x, y) > original(x, y) && lower ? 1u : 0u;
        }
    return {rise, overtaken};
}

TEST_CASE("epsilon fill equals the least epsilon surface computed from its definition", "[drainage][fill]") {
    // Many small random maps against least_surface_reference, bit for bit, float and double, with
    // no no-data value, a finite one (the maps hold heights one ulp either side of it) and NaN;
    // and the statistics against their definition.
    std::mt19937 rng(2024);
    std::size_t maps = 0, raised = 0, differing_from_plain = 0, overtaken_total = 0;
    auto run = [&](auto zero, std::optional<decltype(zero)> nd, double hole_fraction) {
        using T = decltype(zero);
        const std::ptrdiff_t w = 1 + std::ptrdiff_t(rng() % 14), h = 1 + std::ptrdiff_t(rng() % 14);
        gorge::grid<T> original = tricky_map<T>(w, h, rng, nd);
        if (nd)
            for (T& v : original)
                if (double(rng() % 1000) < 1000.0 * hole_fraction) v = *nd;
        gorge::fill_options<T> options;
        options.no_data = nd;
        gorge::grid<T> eps = original, plain = original;
        const auto stats = gorge::fill_depressions_epsilon(eps, options);
        gorge::fill_depressions(plain, options);
        INFO("map " << maps << ": " << w << " x " << h);
        CHECK(same_bits(eps, least_surface_reference(original, nd)));
        CHECK(cells_draining_strictly(eps, nd) == data_cells(eps, nd));
        const auto [rise, overtaken] = epsilon_statistics_by_definition(original, eps, plain, nd);
        CHECK(stats.max_gradient_rise == rise);
        CHECK(stats.overtaken_cells == overtaken);
        // Without the statistics: the same surface and raised cells, both statistics 0.
        gorge::fill_options<T> without = options;
        without.epsilon_statistics = false;
        gorge::grid<T> eps_without = original;
        const auto stats_without = gorge::fill_depressions_epsilon(eps_without, without);
        CHECK(same_bits(eps_without, eps));
        CHECK(stats_without.raised_cells == stats.raised_cells);
        CHECK(stats_without.max_gradient_rise == T(0));
        CHECK(stats_without.overtaken_cells == 0u);
        overtaken_total += overtaken;
        ++maps;
        raised += stats.raised_cells;
        differing_from_plain += same_bits(eps, plain) ? 0u : 1u;
    };
    for (int i = 0; i < 300; ++i) {
        run(0.0f, std::optional<float>(), 0.0);
        run(0.0f, std::optional<float>(1.0f), 0.1);
        run(0.0, std::optional<double>(std::nan("")), 0.1);
        run(0.0, std::optional<double>(-0.5), 0.05);
    }
    CHECK(maps == 1200u);
    CHECK(raised > 1000u);                // the maps do have depressions and flats
    CHECK(differing_from_plain > 500u);
    CHECK(overtaken_total > 0u);  // the statistics' second rule was exercised
}

TEST_CASE("epsilon statistics match their definition on terraces of several ulps", "[drainage][fill]") {
    // Heights 2^24 + 2k (float steps of one ulp, 2) and small integers with steps of a few
    // denormals: the epsilon gradients climb past neighbouring cells (terraces: raised cells above
    // the plain fill level around them). An earlier statistics pass, a Priority-Flood of
    // the raised cells from seeds queued by height, once queued a seed whose raised neighbours were
    // all reached from lower cells, dropped it, and went on past the seeds still to come:
    // statistics off by a few cells on about 2 % of these maps. The first map is one of those,
    // written out. (The statistics are now found from above, detail/epsilon_statistics.hpp.)
    const float base = 16777216.0f;  // 2^24
    const float first_map[5][10] = {{0, 0, 4, 0, 2, 0, 10, 4, 6, 6},
                                    {10, 2, 0, 8, 6, 10, 0, 4, 0, 0},
                                    {2, 2, 2, 4, 8, 4, 4, 0, 6, 8},
                                    {10, 6, 10, 6, 6, 0, 4, 2, 8, 4},
                                    {4, 6, 8, 4, 2, 10, 8, 8, 8, 6}};
    std::mt19937 rng(767);
    std::size_t maps = 0, terraced = 0;
    for (int m = 0; m < 3000; ++m) {
        const bool written = m == 0;
        const std::ptrdiff_t w = written ? 10 : 2 + std::ptrdiff_t(rng() % 12), h = written ? 5 : 2 + std::ptrdiff_t(rng() % 12);
        const std::uint32_t levels = 2 + std::uint32_t(rng() % 5);
        const bool wide = written || rng() % 2 == 0;
        gorge::grid<float> original(w, h);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) {
                if (written)
                    original(x, y) = base + first_map[y][x];
                else if (wide)
                    original(x, y) = base + 2.0f * float(rng() % levels);
                else
                    original(x, y) = float(rng() % levels) +
                                     (rng() % 4 == 0 ? std::numeric_limits<float>::denorm_min() * float(rng() % 3) : 0.0f);
            }
        gorge::grid<float> eps = original, plain = original;
        const auto stats = gorge::fill_depressions_epsilon(eps);
        gorge::fill_depressions(plain);
        const auto [rise, overtaken] = epsilon_statistics_by_definition(original, eps, plain, std::optional<float>());
        INFO("map " << m << ": " << w << " x " << h);
        CHECK(stats.max_gradient_rise == rise);
        CHECK(stats.overtaken_cells == overtaken);
        if (written) CHECK(overtaken == 4u);
        terraced += overtaken > 0 ? 1u : 0u;
        ++maps;
    }
    CHECK(maps == 3000u);
    CHECK(terraced > 300u);  // the maps do have terraces
}

TEST_CASE("epsilon statistics on threads and bands of 1-3 rows match their definition", "[drainage][fill]") {
    // The fills' own bands: at least 64 rows and 65,536 cells a thread, so that a small map is
    // not slowed by thread starts (one band: the calling thread alone).
    using gorge::detail::epsilon_statistics_band_rows;
    CHECK(epsilon_statistics_band_rows(4096) == 64);
    CHECK(epsilon_statistics_band_rows(1024) == 64);
    CHECK(epsilon_statistics_band_rows(1000) == 66);
    CHECK(epsilon_statistics_band_rows(128) == 512);
    CHECK(epsilon_statistics_band_rows(1) == 65536);
    // detail::epsilon_statistics walks each raised cell's path down E in bands of rows (walks that
    // leave a band are finished afterwards), then lowers the cells whose walk climbed past a lower
    // way out. Thin bands on 1-3 threads make most walks leave their band; terraces of one ulp
    // and heights a few ulps apart make many walks climb (the search then lowers cells: checked).
    std::mt19937 rng(2029);
    std::size_t lowering_maps = 0, lowering_from_flood_maps = 0, overtaken_maps = 0;
    for (int m = 0; m < 600; ++m) {
        const std::ptrdiff_t w = 2 + std::ptrdiff_t(rng() % 30), h = 2 + std::ptrdiff_t(rng() % 30);
        const int kind = m % 3;
        gorge::grid<float> original(w, h);
        for (float& v : original)
            v = kind == 0   ? 16777216.0f + 2.0f * float(rng() % 6)                  // steps of one ulp
                : kind == 1 ? 1000.0f + 0.00006103515625f * float(rng() % 4)   // one ulp at 1000
                            : float(rng() % 8);
        std::optional<float> nd;
        if (m % 4 == 3) {
            nd = -1.0f;
            for (int k = 0; k < 4; ++k) original.data()[rng() % original.size()] = -1.0f;
        }
        gorge::fill_options<float> options;
        options.no_data = nd;
        gorge::detail::padded_heights<float> work(original, nd, "test");
        gorge::fill_stats<float> flood_stats;
        REQUIRE(gorge::detail::flood_epsilon<float>(work, nullptr, options, flood_stats, "test"));
        // The same flood writing U, as fill_depressions_epsilon runs it (steps 1 and 2 skipped).
        gorge::detail::padded_heights<float> work_with_upper(original, nd, "test");
        std::vector<float, gorge::detail::uninitialized_block_allocator<float>> upper(work_with_upper.z.size());
        REQUIRE(gorge::detail::flood_epsilon<float>(work_with_upper, nullptr, options, flood_stats, "test", upper.data()));
        REQUIRE(work_with_upper.z == work.z);
        gorge::grid<float> eps = original, plain = original;
        gorge::fill_depressions_epsilon(eps, options);
        gorge::fill_depressions(plain, options);
        const auto [rise, overtaken] = epsilon_statistics_by_definition(original, eps, plain, nd);
        overtaken_maps += overtaken > 0 ? 1u : 0u;
        for (unsigned threads = 1; threads <= 3; ++threads)
            for (std::uint64_t band = 1; band <= 3; ++band) {
                INFO("map " << m << ": " << w << " x " << h << ", " << threads << " threads, bands of " << band);
                gorge::fill_stats<float> stats;
                const std::size_t lowered = gorge::detail::epsilon_statistics<float>(work, original, threads, stats, band);
                CHECK(stats.max_gradient_rise == rise);
                CHECK(stats.overtaken_cells == overtaken);
                if (threads == 1 && band == 1) lowering_maps += lowered > 0 ? 1u : 0u;
                gorge::fill_stats<float> from_flood;
                const std::size_t lowered_from_flood = gorge::detail::epsilon_statistics<float>(
                    work_with_upper, original, threads, from_flood, band, upper, true);
                CHECK(from_flood.max_gradient_rise == rise);
                CHECK(from_flood.overtaken_cells == overtaken);
                if (threads == 1 && band == 1) lowering_from_flood_maps += lowered_from_flood > 0 ? 1u : 0u;
            }
    }
    CHECK(lowering_maps > 30u);  // step 3's search ran
    CHECK(lowering_from_flood_maps > 30u);  // and from the flood's U
    CHECK(overtaken_maps > 30u);
}

TEST_CASE("epsilon fill commutes with the 8 mirrors and transpositions of the map", "[drainage][fill]") {
    // The least surface depends on the map alone, so filling a mirrored or transposed map gives
    // the mirrored or transposed fill. Random terrain with flats and ties, including a map on
    // which the gradients of several lakes meet.
    std::mt19937 rng(77);
    std::size_t compared = 0;
    for (int rep = 0; rep < 40; ++rep) {
        const std::ptrdiff_t w = 2 + std::ptrdiff_t(rng() % 40), h = 2 + std::ptrdiff_t(rng() % 30);
        const gorge::grid<float> original =
            rep % 2 == 0 ? random_terrain<float>(w, h, std::uint32_t(500 + rep)) : tricky_map<float>(w, h, rng, {});
        gorge::grid<float> filled = original;
        gorge::fill_depressions_epsilon(filled);
        for (int s = 1; s < 8; ++s) {
            INFO("map " << rep << " (" << w << " x " << h << "), symmetry " << s);
            gorge::grid<float> t = transformed(original, s);
            gorge::fill_depressions_epsilon(t);
            CHECK(same_bits(t, transformed(filled, s)));
            ++compared;
        }
    }
    CHECK(compared == 40u * 7u);
}

namespace {

/// Map `rep` of the ring tests: 10-69 x 10-59 cells of random terrain, without no-data, with
/// -9999 or with NaN as no-data (rep % 3).
struct ring_test_map {
    gorge::grid<float> heights;
    std::optional<float> no_data;
};
ring_test_map random_ring_test_map(std::mt19937& rng, int rep, std::uint32_t seed) {
    const std::ptrdiff_t w = 10 + std::ptrdiff_t(rng() % 60), h = 10 + std::ptrdiff_t(rng() % 50);
    std::optional<float> nd;
    if (rep % 3 == 1) nd = -9999.0f;
    if (rep % 3 == 2) nd = std::numeric_limits<float>::quiet_NaN();
    return {random_terrain<float>(w, h, seed, nd ? 0.05 : 0.0, nd ? *nd : -9999.0f), nd};
}

/// Cuts `map` into tiles of random sizes (1 to 20 cells a side) and calls f(x0, y0, tile, ring)
/// for each: `ring` holds `surface` around the tile in least_epsilon_surface's ring order,
/// -infinity off the map and on no-data cells. Returns the number of tiles.
template <class F>
std::size_t for_each_random_tile(std::mt19937& rng, const ring_test_map& map, const gorge::grid<float>& surface, F&& f) {
    const gorge::grid<float>& z = map.heights;
    auto surface_at = [&](std::ptrdiff_t x, std::ptrdiff_t y) {
        if (!z.contains(x, y) || is_no_data(z(x, y), map.no_data)) return -std::numeric_limits<float>::infinity();
        return surface(x, y);
    };
    std::size_t tiles = 0;
    for (std::ptrdiff_t y0 = 0; y0 < z.height();) {
        const std::ptrdiff_t th = std::min(z.height() - y0, 1 + std::ptrdiff_t(rng() % 20));
        for (std::ptrdiff_t x0 = 0; x0 < z.width();) {
            const std::ptrdiff_t tw = std::min(z.width() - x0, 1 + std::ptrdiff_t(rng() % 20));
            std::vector<float> ring;
            for (std::ptrdiff_t x = -1; x <= tw; ++x) ring.push_back(surface_at(x0 + x, y0 - 1));
            for (std::ptrdiff_t x = -1; x <= tw; ++x) ring.push_back(surface_at(x0 + x, y0 + th));
            for (std::ptrdiff_t y = 0; y < th; ++y) ring.push_back(surface_at(x0 - 1, y0 + y));
            for (std::ptrdiff_t y = 0; y < th; ++y) ring.push_back(surface_at(x0 + tw, y0 + y));
            f(x0, y0, gorge::grid_view<const float>(&z(x0, y0), tw, th, z.width()), ring);
            ++tiles;
            x0 += tw;
        }
        y0 += th;
    }
    return tiles;
}

}  // namespace

TEST_CASE("least_epsilon_surface: tiles given their ring reproduce the whole map's fill", "[drainage][fill]") {
    // The whole map's fill E, cut into tiles of random sizes: each tile, given as ring the E of
    // the cells around it (-infinity off the map and on no-data cells), must give E inside it.
    std::mt19937 rng(909);
    const float inf = std::numeric_limits<float>::infinity();
    std::size_t tiles = 0;
    for (int rep = 0; rep < 12; ++rep) {
        const ring_test_map map = random_ring_test_map(rng, rep, std::uint32_t(700 + rep));
        const gorge::grid<float>& original = map.heights;
        const std::ptrdiff_t w = original.width(), h = original.height();
        gorge::fill_options<float> options;
        options.no_data = map.no_data;
        gorge::grid<float> whole = original;
        const auto whole_stats = gorge::fill_depressions_epsilon(whole, options);
        // All -infinity around the whole map: the fill itself.
        {
            std::vector<float> ring(std::size_t(2 * (w + 2) + 2 * h), -inf);
            gorge::grid<float> out(w, h, 0.0f);
            const auto stats =
                gorge::detail::least_epsilon_surface<float>(original.view(), ring.data(), out.view(), options, "test");
            CHECK(same_bits(out, whole));
            CHECK(stats.raised_cells == whole_stats.raised_cells);
        }
        tiles += for_each_random_tile(rng, map, whole, [&](std::ptrdiff_t x0, std::ptrdiff_t y0,
                                                          gorge::grid_view<const float> tile, const std::vector<float>& ring) {
            gorge::grid<float> out(tile.width(), tile.height(), 0.0f);
            gorge::detail::least_epsilon_surface<float>(tile, ring.data(), out.view(), options, "test");
            std::size_t wrong = 0;
            for (std::ptrdiff_t y = 0; y < tile.height(); ++y)
                for (std::ptrdiff_t x = 0; x < tile.width(); ++x) {
                    const float a = out(x, y), b = whole(x0 + x, y0 + y);
                    wrong += std::memcmp(&a, &b, sizeof a) == 0 ? 0u : 1u;
                }
            INFO("map " << rep << ", tile at " << x0 << ", " << y0 << " of " << tile.width() << " x " << tile.height());
            CHECK(wrong == 0u);
        });
    }
    CHECK(tiles > 100u);
    // A ring of +infinity (nothing drains out yet): only cells next to a no-data cell are outlets;
    // the cells no outlet reaches are +infinity, and the others are the map's fill with those
    // outlets alone. Here a 5 x 4 tile with one no-data cell at (1, 1).
    gorge::grid<float> tile(5, 4, 2.0f), out(5, 4, 0.0f);
    tile(1, 1) = -9999.0f;
    tile(4, 3) = 1.0f;
    gorge::fill_options<float> options;
    options.no_data = -9999.0f;
    std::vector<float> ring(2 * 7 + 2 * 4, inf);
    gorge::detail::least_epsilon_surface<float>(tile.view(), ring.data(), out.view(), options, "test");
    CHECK(out(1, 1) == -9999.0f);
    CHECK(out(0, 0) == 2.0f);  // next to the hole: an outlet
    CHECK(out(2, 2) == 2.0f);
    CHECK(out(3, 0) == std::nextafter(2.0f, 3.0f));
    CHECK(out(4, 3) == std::nextafter(std::nextafter(2.0f, 3.0f), 3.0f));  // two steps from the outlets
    // No outlet, no finite ring value: nothing is reached.
    gorge::grid<float> closed_tile(3, 3, 1.0f), closed_out(3, 3, 0.0f);
    std::vector<float> closed_ring(2 * 5 + 2 * 3, inf);
    const auto none = gorge::detail::least_epsilon_surface<float>(closed_tile.view(), closed_ring.data(),
                                                                 closed_out.view(), {}, "test");
    for (float v : closed_out) CHECK(v == inf);
    CHECK(none.raised_cells == 0u);
    // A single finite ring value drains the tile through that side: the cell next to it rises to
    // one step above it, or keeps its height when higher.
    closed_ring[0] = 0.5f;  // above-left of (0, 0)
    gorge::detail::least_epsilon_surface<float>(closed_tile.view(), closed_ring.data(), closed_out.view(), {}, "test");
    CHECK(closed_out(0, 0) == 1.0f);
    CHECK(closed_out(1, 1) == std::nextafter(1.0f, 2.0f));
    CHECK(closed_out(2, 2) == std::nextafter(std::nextafter(1.0f, 2.0f), 2.0f));
    closed_ring[0] = 1.0f;
    gorge::detail::least_epsilon_surface<float>(closed_tile.view(), closed_ring.data(), closed_out.view(), {}, "test");
    CHECK(closed_out(0, 0) == std::nextafter(1.0f, 2.0f));
    // Bad arguments name themselves.
    closed_ring[3] = std::numeric_limits<float>::quiet_NaN();
    CHECK(contains(invalid_argument_message([&] {
                       gorge::detail::least_epsilon_surface<float>(closed_tile.view(), closed_ring.data(),
                                                                   closed_out.view(), {}, "tile");
                   }),
                   "tile: ring value 3 is NaN"));
    gorge::grid<float> small_out(2, 3);
    CHECK(contains(invalid_argument_message([&] {
                       gorge::detail::least_epsilon_surface<float>(closed_tile.view(), closed_ring.data(),
                                                                   small_out.view(), {}, "tile");
                   }),
                   "tile: out must have the size of heights"));
}

TEST_CASE("the epsilon flood with the plain step gives the plain fill, of a map and of a tile given its ring",
          "[drainage][fill]") {
    // The flood that the plain fill's tiles run on one thread. The whole map's plain fill F, cut
    // into tiles of random sizes: each tile, given as ring the F of the cells around it (-infinity
    // off the map and on no-data cells), must give F inside it; with -infinity all round, the map.
    std::mt19937 rng(919);
    std::size_t tiles = 0, raised = 0;
    for (int rep = 0; rep < 12; ++rep) {
        const ring_test_map map = random_ring_test_map(rng, rep, std::uint32_t(720 + rep));
        const gorge::grid<float>& original = map.heights;
        gorge::fill_options<float> options;
        options.no_data = map.no_data;
        gorge::grid<float> f = original;
        raised += gorge::fill_depressions(f, options).raised_cells;
        // The data cells of a flood's working copy against F (x0, y0: the copy's place in the map).
        auto wrong_cells = [&](const gorge::detail::padded_heights<float>& work, std::ptrdiff_t x0, std::ptrdiff_t y0) {
            std::size_t wrong = 0;
            for (std::ptrdiff_t y = 0; y < work.height; ++y)
                for (std::ptrdiff_t x = 0; x < work.width; ++x) {
                    if (is_no_data(original(x0 + x, y0 + y), map.no_data)) continue;
                    const float a = work.z[work.index(x, y)], b = f(x0 + x, y0 + y);
                    wrong += std::memcmp(&a, &b, sizeof a) == 0 ? 0u : 1u;
                }
            return wrong;
        };
        auto plain_flood = [&](gorge::detail::padded_heights<float>& work, const float* ring) {
            gorge::fill_stats<float> stats;
            return gorge::detail::flood_epsilon<float, gorge::detail::plain_step<float>>(work, ring, options, stats, "test");
        };
        {
            gorge::detail::padded_heights<float> work(original.view(), map.no_data, "test");
            REQUIRE(plain_flood(work, nullptr));
            INFO("map " << rep);
            CHECK(wrong_cells(work, 0, 0) == 0u);
        }
        tiles += for_each_random_tile(rng, map, f, [&](std::ptrdiff_t x0, std::ptrdiff_t y0,
                                                      gorge::grid_view<const float> tile, const std::vector<float>& ring) {
            gorge::detail::padded_heights<float> work(tile, map.no_data, "test");
            REQUIRE(plain_flood(work, ring.data()));
            INFO("map " << rep << ", tile at " << x0 << ", " << y0 << " of " << tile.width() << " x " << tile.height());
            CHECK(wrong_cells(work, x0, y0) == 0u);
        });
    }
    CHECK(tiles > 100u);
    CHECK(raised > 1000u);  // the maps have depressions to fill
}

namespace {

/// The plain fill in tiles of `side` cells and as one flood over the whole map, with the same
/// options: the surfaces must have the same bits and the same count of raised cells.
template <class T>
void check_tiled_fill(const gorge::grid<T>& original, std::ptrdiff_t side, const gorge::fill_options<T>& options = {}) {
    INFO("map " << original.width() << " x " << original.height() << ", tiles of " << side);
    gorge::grid<T> whole = original;
    const auto w = gorge::detail::run_whole_map_flood(whole.view(), options, "test");
    for (const unsigned threads : {1u, 2u, 3u}) {
        INFO(threads << " threads");
        gorge::fill_options<T> threaded = options;
        threaded.threads = threads;
        gorge::grid<T> tiled = original;
        const auto t = gorge::detail::run_tiled_priority_flood(tiled.view(), threaded, "test", side);
        CHECK(same_bits(tiled, whole));
        CHECK(t.raised_cells == w.raised_cells);
        CHECK_FALSE(t.cancelled);
    }
}

/// Progress reports as a fill gives them: 0 first, 1 last, never decreasing.
void check_progress_reports(const std::vector<double>& seen) {
    REQUIRE(seen.size() >= 2u);
    CHECK(seen.front() == 0.0);
    CHECK(seen.back() == 1.0);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
}

/// The tiled fill of `original` in tiles of `side`, cancelled at progress call stop_at: it says
/// so, calls no more, raised nothing and left the grid as it was.
void check_tiled_fill_cancelled(const gorge::grid<float>& original, gorge::fill_options<float> options,
                                std::ptrdiff_t side, std::size_t stop_at) {
    INFO("cancelled at call " << stop_at);
    std::size_t calls = 0;
    options.progress = [&calls, stop_at](double) { return calls++ != stop_at; };
    gorge::grid<float> cancelled = original;
    const auto c = gorge::detail::run_tiled_priority_flood(cancelled.view(), options, "test", side);
    CHECK(c.cancelled);
    CHECK(calls == stop_at + 1);
    CHECK(c.raised_cells == 0u);
    CHECK(same_bits(cancelled, original));
}

}  // namespace

TEST_CASE("the tiled plain fill equals the whole-map flood bit for bit", "[drainage][fill]") {
    // Tiles from 4 cells (every cell on a tile's perimeter or next to it) up to more than the map,
    // on random terrain with ties and flats, with and without no-data (a number and NaN).
    std::uint32_t seed = 900;
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{2, 2}, {5, 70}, {63, 20}, {130, 97}, {257, 130}}) {
        for (const std::ptrdiff_t side : {4, 5, 7, 16, 33, 64, 300}) {
            for_terrain_with_and_without_holes(size.first, size.second, ++seed, [side](const auto& map, const auto& options) {
                check_tiled_fill(map, side, options);
            });
        }
    }
    // One depression across many tiles (a bowl with a single notch in its rim, far from most
    // tiles' perimeters), and one map with nothing to fill (the bowl turned over).
    gorge::grid<float> bowl(150, 120), dome(150, 120);
    for (std::ptrdiff_t y = 0; y < bowl.height(); ++y)
        for (std::ptrdiff_t x = 0; x < bowl.width(); ++x) {
            const double r = std::hypot(double(x) - 75.0, double(y) - 60.0);
            const bool rim = x == 0 || y == 0 || x == bowl.width() - 1 || y == bowl.height() - 1;
            bowl(x, y) = rim && !(x == 0 && y == 60) ? 100.0f : float(0.1 * r + std::sin(0.7 * double(x * y)));
            dome(x, y) = float(-r);
        }
    for (const std::ptrdiff_t side : {4, 9, 32}) {
        check_tiled_fill(bowl, side);
        check_tiled_fill(dome, side);
    }
    gorge::grid<float> filled = bowl;
    CHECK(gorge::detail::run_tiled_priority_flood(filled.view(), gorge::fill_options<float>(), "test", 8).raised_cells > 5000u);
    CHECK(gorge::detail::run_tiled_priority_flood(dome.view(), gorge::fill_options<float>(), "test", 8).raised_cells == 0u);
    // Heights of zero with both signs, in flats and pits (the fills read -0 as +0, and the
    // tiles' rings start from bounds, plain_fill_bound, which may be zero too).
    gorge::grid<float> zeros = random_terrain<float>(130, 97, 4242);
    std::mt19937 zero_rng(77);
    for (float& v : zeros)
        if (v < 3.0f || zero_rng() % 4 == 0) v = zero_rng() % 2 == 0 ? 0.0f : -0.0f;
    for (const std::ptrdiff_t side : {16, 33, 64}) check_tiled_fill(zeros, side);
    // Against a fill written independently of both floods.
    const gorge::grid<float> rough = random_terrain<float>(97, 83, 4711);
    gorge::grid<float> tiled = rough;
    gorge::detail::run_tiled_priority_flood(tiled.view(), gorge::fill_options<float>(), "test", 10);
    CHECK(same_bits(tiled, reference_flood(rough)));
}

namespace {

/// Maps whose lakes split into many row spans and join again (detail::fill_pit_span): a rim of
/// 10 with one notch at 6 around a floor of heights in [0, 5), cut by
///   0: teeth from the top and the bottom in turn (one lake winding through the whole map),
///   1: walls of 9 on every other cell, chequered (the floor cells touch only at their corners),
///   2: square islands of 7, each around a pit of 6.5 (filled later, at a level of its own),
///   3: heights drawn from four levels, 5 a wall (lakes at several levels, with ties), no rim.
gorge::grid<float> lake_map(std::ptrdiff_t w, std::ptrdiff_t h, int style, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> floor_height(0.0f, 5.0f);
    gorge::grid<float> g(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            float v = floor_height(rng);
            if (style == 0 && x % 4 == 2 && y < h - 3) v = 8.0f;
            if (style == 0 && x % 4 == 0 && y > 2) v = 8.0f;
            if (style == 1 && (x + y) % 2 == 1) v = 9.0f;
            if (style == 3) v = std::array<float, 4>{0.0f, 1.0f, 2.0f, 5.0f}[rng() % 4];
            g(x, y) = v;
        }
    if (style == 2)
        for (std::ptrdiff_t cy = 5; cy + 3 < h; cy += 9)
            for (std::ptrdiff_t cx = 4 + cy % 5; cx + 3 < w; cx += 11)
                for (std::ptrdiff_t dy = -2; dy <= 2; ++dy)
                    for (std::ptrdiff_t dx = -2; dx <= 2; ++dx) g(cx + dx, cy + dy) = dx == 0 && dy == 0 ? 6.5f : 7.0f;
    if (style != 3) {
        for (std::ptrdiff_t y = 0; y < h; ++y) g(0, y) = g(w - 1, y) = 10.0f;
        for (std::ptrdiff_t x = 0; x < w; ++x) g(x, 0) = g(x, h - 1) = 10.0f;
        g(0, h / 2) = 6.0f;
    }
    return g;
}

}  // namespace

TEST_CASE("lakes filled a row span at a time: winding, diagonal, with islands and holes", "[drainage][fill]") {
    // The plain fills raise a lake a row span at a time: the whole-map flood, the tiles' floods on
    // threads and the one-thread tiled fill's epsilon flood with the plain step. Each is compared
    // with Planchon-Darboux (an independent method), and without no-data with Priority-Flood as
    // written out in reference_flood.
    std::uint32_t seed = 5150;
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{67, 45}, {130, 97}})
        for (int style = 0; style < 4; ++style)
            for (const bool holes : {false, true}) {
                ++seed;
                INFO("map " << size.first << " x " << size.second << ", style " << style << ", holes " << holes);
                gorge::grid<float> map = lake_map(size.first, size.second, style, seed);
                gorge::fill_options<float> options;
                if (holes) {
                    options.no_data = -9999.0f;
                    std::mt19937 rng(seed);
                    for (float& v : map)
                        if (rng() % 40 == 0) v = -9999.0f;
                }
                options.tiles = false;
                gorge::grid<float> whole = map, pd = map;
                const auto stats = gorge::fill_depressions(whole, options);
                gorge::fill_depressions_planchon_darboux(pd, options);
                CHECK(same_bits(whole, pd));
                if (!holes) {
                    CHECK(same_bits(whole, reference_flood(map)));
                    // A third of the map at least lies in the lake behind the rim (about half of
                    // it is floor in styles 0 and 1; holes drain much of it).
                    if (style != 3) CHECK(stats.raised_cells > map.size() / 3u);
                }
                options.tiles = true;
                for (const std::ptrdiff_t side : {5, 16, 64}) check_tiled_fill(map, side, options);
            }
}

TEST_CASE("the tiled plain fill's upper bound: blocks' largest heights filled, one step up", "[drainage][fill]") {
    // plain_fill_bound against a relaxation over cells written for this test: a block is the
    // cells of one tile with the same (x - tile x) / 16 and (y - tile y) / 16; G of a block is
    // its largest height on the map's edge and else the least over its cells' neighbours' blocks
    // of the larger of its own largest height and their G, until nothing changes. The bound must
    // be next_up(G) bit for bit, and above the plain fill everywhere.
    constexpr std::ptrdiff_t block = gorge::detail::plain_fill_bound_block;
    std::uint32_t seed = 300;
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{40, 40}, {97, 70}, {130, 33}}) {
        for (const std::ptrdiff_t side : {16, 20, 33, 64, 300}) {
            const gorge::grid<float> map = random_terrain<float>(size.first, size.second, ++seed);
            const std::ptrdiff_t w = map.width(), h = map.height();
            INFO("map " << w << " x " << h << ", tiles of " << side);
            const gorge::detail::tile_cuts columns(w, side), rows(h, side);
            gorge::detail::plain_fill_bound<float> bound;
            bound.cut(columns, rows);
            std::vector<float> scratch;
            for (std::ptrdiff_t ty = 0; ty < rows.count(); ++ty)
                for (std::ptrdiff_t tx = 0; tx < columns.count(); ++tx)
                    for (std::ptrdiff_t y = rows.begin(ty); y < rows.begin(ty) + rows.size(ty); ++y)
                        bound.add_row(columns.begin(tx), y, &map(columns.begin(tx), y), columns.size(tx), scratch);
            bound.solve("test");

            // Each cell's block as a number, from its tile and its place in it.
            auto tile_and_block = [&](const gorge::detail::tile_cuts& cuts, std::ptrdiff_t v) {
                std::ptrdiff_t t = 0;
                while (v >= cuts.begin(t) + cuts.size(t)) ++t;
                return t * 1000 + (v - cuts.begin(t)) / block;
            };
            std::map<std::ptrdiff_t, float> largest, g;
            auto block_of = [&](std::ptrdiff_t x, std::ptrdiff_t y) { return tile_and_block(columns, x) * 1000000 + tile_and_block(rows, y); };
            for (std::ptrdiff_t y = 0; y < h; ++y)
                for (std::ptrdiff_t x = 0; x < w; ++x) {
                    const auto b = block_of(x, y);
                    largest[b] = largest.count(b) ? std::max(largest[b], map(x, y)) : map(x, y);
                }
            for (const auto& b : largest) g[b.first] = std::numeric_limits<float>::infinity();
            for (std::ptrdiff_t y = 0; y < h; ++y)
                for (std::ptrdiff_t x = 0; x < w; ++x)
                    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) g[block_of(x, y)] = largest[block_of(x, y)];
            for (bool changed = true; changed;) {
                changed = false;
                for (std::ptrdiff_t y = 0; y < h; ++y)
                    for (std::ptrdiff_t x = 0; x < w; ++x)
                        for (int k = 0; k < 8; ++k) {
                            const std::ptrdiff_t nx = x + gorge::d8_dx[k], ny = y + gorge::d8_dy[k];
                            if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
                            const auto b = block_of(x, y);
                            const float via = std::max(largest[b], g[block_of(nx, ny)]);
                            if (via < g[b]) {
                                g[b] = via;
                                changed = true;
                            }
                        }
            }
            gorge::grid<float> filled = map;
            gorge::fill_depressions(filled);
            std::size_t wrong = 0, below = 0;
            for (std::ptrdiff_t y = 0; y < h; ++y)
                for (std::ptrdiff_t x = 0; x < w; ++x) {
                    const float expected = std::nextafter(g[block_of(x, y)] + 0.0f, std::numeric_limits<float>::infinity());
                    const float got = bound.at(x, y);
                    wrong += std::memcmp(&got, &expected, sizeof got) == 0 ? 0u : 1u;
                    below += got > filled(x, y) ? 0u : 1u;
                }
            CHECK(wrong == 0u);
            CHECK(below == 0u);
        }
    }
}

TEST_CASE("the tiled plain fill: progress, cancellation, and the map's cell named on bad input", "[drainage][fill]") {
    const gorge::grid<float> original = random_terrain<float>(100, 90, 31, 0.01);
    gorge::fill_options<float> options;
    options.no_data = -9999.0f;
    gorge::grid<float> expected = original;
    gorge::detail::run_whole_map_flood(expected.view(), options, "test");

    std::vector<double> seen;
    options.progress = [&seen](double fraction) {
        seen.push_back(fraction);
        return true;
    };
    gorge::grid<float> reported = original;
    CHECK_FALSE(gorge::detail::run_tiled_priority_flood(reported.view(), options, "test", 16).cancelled);
    CHECK(same_bits(reported, expected));
    check_progress_reports(seen);
    for (const std::size_t stop_at : {std::size_t(0), seen.size() / 2, seen.size() - 1})
        check_tiled_fill_cancelled(original, options, 16, stop_at);

    // A non-finite cell in a tile other than the first is named in the map's coordinates.
    gorge::grid<float> bad = original;
    bad(57, 41) = std::numeric_limits<float>::infinity();
    const gorge::grid<float> before = bad;
    options.progress = nullptr;
    const std::string message =
        invalid_argument_message([&] { gorge::detail::run_tiled_priority_flood(bad.view(), options, "test", 16); });
    CHECK(contains(message, "(57, 41)"));
    CHECK(same_bits(bad, before));
    CHECK_THROWS_AS(gorge::detail::run_tiled_priority_flood(bad.view(), options, "test", 3), std::invalid_argument);
    // With threads the error is the one of the first bad tile in raster order, as with one.
    bad(90, 3) = std::numeric_limits<float>::quiet_NaN();
    const gorge::grid<float> two_bad = bad;
    for (const unsigned threads : {1u, 3u, 8u}) {
        options.threads = threads;
        const std::string first =
            invalid_argument_message([&] { gorge::detail::run_tiled_priority_flood(bad.view(), options, "test", 16); });
        CHECK(contains(first, "(90, 3)"));
        CHECK(same_bits(bad, two_bad));
    }
    options.threads = gorge::max_threads + 1;
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions(bad, options); }), "threads"));
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions_epsilon(bad, options); }), "threads"));
    CHECK(contains(invalid_argument_message([&] { gorge::fill_depressions_planchon_darboux(bad, options); }), "threads"));
}

TEST_CASE("the tiled plain fill on threads: progress from the calling thread, cancellation", "[drainage][fill]") {
    const gorge::grid<float> original = random_terrain<float>(300, 260, 57);
    gorge::fill_options<float> options;
    options.threads = 3;
    gorge::grid<float> expected = original;
    gorge::detail::run_whole_map_flood(expected.view(), options, "test");
    const std::thread::id caller = std::this_thread::get_id();
    std::vector<double> seen;
    bool other_thread = false;
    options.progress = [&](double fraction) {
        other_thread |= std::this_thread::get_id() != caller;
        seen.push_back(fraction);
        return true;
    };
    gorge::grid<float> reported = original;
    // 64-cell tiles: 4096 cells each, no report inside a tile; one after each of the caller's.
    CHECK_FALSE(gorge::detail::run_tiled_priority_flood(reported.view(), options, "test", 64).cancelled);
    CHECK(same_bits(reported, expected));
    CHECK_FALSE(other_thread);
    check_progress_reports(seen);
    // How many reports come from the caller's tiles depends on the threads' timing: cancel at the
    // first call (0, before any tile), the second (a tile's, or the last one) and at 1.
    for (const std::size_t stop_at : {std::size_t(0), std::size_t(1)}) check_tiled_fill_cancelled(original, options, 16, stop_at);
    options.progress = [](double fraction) { return fraction < 1.0; };
    gorge::grid<float> at_end = original;
    CHECK(gorge::detail::run_tiled_priority_flood(at_end.view(), options, "test", 16).cancelled);
    CHECK(same_bits(at_end, original));
}

namespace {

/// The epsilon fill in tiles of `side` cells on 1, 2 and 3 threads and as one flood over the whole
/// map, with the same options: the same bits, raised cells and statistics.
template <class T>
void check_tiled_epsilon_fill(const gorge::grid<T>& original, std::ptrdiff_t side, gorge::fill_options<T> options = {}) {
    INFO("map " << original.width() << " x " << original.height() << ", tiles of " << side);
    for (const bool statistics : {true, false}) {
        INFO("statistics " << statistics);
        options.epsilon_statistics = statistics;
        gorge::grid<T> whole = original;
        const auto w = gorge::detail::run_epsilon_fill(whole.view(), options, "test", false);
        for (const unsigned threads : {1u, 2u, 3u}) {
            INFO(threads << " threads");
            gorge::fill_options<T> threaded = options;
            threaded.threads = threads;
            gorge::grid<T> tiled = original;
            const auto t = gorge::detail::run_tiled_epsilon_fill(tiled.view(), threaded, "test", side);
            CHECK(same_bits(tiled, whole));
            CHECK(t.raised_cells == w.raised_cells);
            CHECK(t.max_gradient_rise == w.max_gradient_rise);
            CHECK(t.overtaken_cells == w.overtaken_cells);
            CHECK_FALSE(t.cancelled);
        }
    }
}

}  // namespace

TEST_CASE("the tiled epsilon fill equals the one flood bit for bit, statistics included", "[drainage][fill]") {
    // Tiles from 2 cells up to more than the map, on random terrain with ties and flats, with and
    // without no-data (a number and NaN), and on terraces of one ulp (heights 2^24 + 2k), where
    // lakes' gradients climb past their neighbours and cross many tile borders.
    std::uint32_t seed = 1300;
    for (auto size : {std::pair<std::ptrdiff_t, std::ptrdiff_t>{2, 2}, {5, 40}, {63, 20}, {97, 80}}) {
        for (const std::ptrdiff_t side : {2, 3, 7, 16, 100}) {
            for_terrain_with_and_without_holes(size.first, size.second, ++seed, [side](const auto& map, const auto& options) {
                check_tiled_epsilon_fill(map, side, options);
            });
        }
    }
    std::mt19937 rng(1301);
    std::size_t overtaken_maps = 0;
    for (int m = 0; m < 200; ++m) {
        const std::ptrdiff_t w = 2 + std::ptrdiff_t(rng() % 30), h = 2 + std::ptrdiff_t(rng() % 30);
        gorge::grid<float> terraces(w, h);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) terraces(x, y) = 16777216.0f + 2.0f * float(rng() % 4);
        check_tiled_epsilon_fill(terraces, 2 + std::ptrdiff_t(rng() % 9));
        gorge::grid<float> filled = terraces;
        overtaken_maps += gorge::detail::run_epsilon_fill(filled.view(), gorge::fill_options<float>(), "test", false)
                                  .overtaken_cells > 0 ? 1u : 0u;
    }
    CHECK(overtaken_maps > 20u);  // the statistics have something to count
    // One lake across many tiles, draining through a single notch in its rim; and against the
    // epsilon surface computed from its definition.
    gorge::grid<float> bowl(150, 120);
    for (std::ptrdiff_t y = 0; y < bowl.height(); ++y)
        for (std::ptrdiff_t x = 0; x < bowl.width(); ++x) {
            const bool rim = x == 0 || y == 0 || x == bowl.width() - 1 || y == bowl.height() - 1;
            bowl(x, y) = rim && !(x == 0 && y == 60) ? 100.0f : float(0.1 * std::hypot(double(x) - 75.0, double(y) - 60.0));
        }
    for (const std::ptrdiff_t side : {4, 9, 32}) check_tiled_epsilon_fill(bowl, side);
    const gorge::grid<float> rough = random_terrain<float>(61, 47, 4712);
    gorge::grid<float> tiled = rough;
    gorge::detail::run_tiled_epsilon_fill(tiled.view(), gorge::fill_options<float>(), "test", 8);
    CHECK(same_bits(tiled, least_surface_reference(rough, std::optional<float>())));
}

TEST_CASE("the tiled epsilon fill: progress, cancellation, bad input named, steps past the largest value", "[drainage][fill]") {
    const gorge::grid<float> original = random_terrain<float>(100, 90, 32, 0.01);
    gorge::fill_options<float> options;
    options.no_data = -9999.0f;
    gorge::grid<float> expected = original;
    gorge::detail::run_epsilon_fill(expected.view(), options, "test", false);
    for (const unsigned threads : {1u, 3u}) {
        options.threads = threads;
        std::vector<double> seen;
        options.progress = [&seen](double fraction) {
            seen.push_back(fraction);
            return true;
        };
        gorge::grid<float> reported = original;
        CHECK_FALSE(gorge::detail::run_tiled_epsilon_fill(reported.view(), options, "test", 16).cancelled);
        CHECK(same_bits(reported, expected));
        check_progress_reports(seen);
        // On threads, how many reports come from the caller's tiles depends on the timing.
        const std::vector<std::size_t> stops =
            threads == 1 ? std::vector<std::size_t>{0, seen.size() / 2, seen.size() - 1} : std::vector<std::size_t>{0, 1};
        for (const std::size_t stop_at : stops) {
            INFO(threads << " threads, cancelled at call " << stop_at);
            std::size_t calls = 0;
            options.progress = [&calls, stop_at](double) { return calls++ != stop_at; };
            gorge::grid<float> cancelled = original;
            const auto c = gorge::detail::run_tiled_epsilon_fill(cancelled.view(), options, "test", 16);
            CHECK(c.cancelled);
            CHECK(calls == stop_at + 1);
            CHECK(c.raised_cells == 0u);
            CHECK(same_bits(cancelled, original));
        }
    }
    options.progress = nullptr;
    // A non-finite cell in a tile other than the first is named in the map's coordinates; with
    // two, the one of the first tile in raster order, whatever the threads.
    gorge::grid<float> bad = original;
    bad(57, 41) = std::numeric_limits<float>::infinity();
    bad(90, 3) = std::numeric_limits<float>::quiet_NaN();
    const gorge::grid<float> before = bad;
    for (const unsigned threads : {1u, 3u}) {
        options.threads = threads;
        const std::string message =
            invalid_argument_message([&] { gorge::detail::run_tiled_epsilon_fill(bad.view(), options, "test", 16); });
        CHECK(contains(message, "(90, 3)"));
        CHECK(same_bits(bad, before));
    }
    CHECK_THROWS_AS(gorge::detail::run_tiled_epsilon_fill(bad.view(), options, "test", 1), std::invalid_argument);
    // Heights at the largest finite value: a pit there cannot be raised (std::overflow_error, the
    // grid unchanged, as from the one flood); beside a lower outlet the fill succeeds, even where
    // a tile whose ring is not final yet would step past the largest value on its own.
    const float top = std::numeric_limits<float>::max();
    gorge::grid<float> pit(20, 20, top);
    pit(12, 9) = 0.0f;
    const gorge::grid<float> pit_before = pit;
    // The message names the cell, in the map's coordinates also when a tile overflowed first: a
    // pit walled in by the largest value on a ramp (the walls drain down the ramp).
    gorge::grid<float> walled(20, 20);
    for (std::ptrdiff_t y = 0; y < 20; ++y)
        for (std::ptrdiff_t x = 0; x < 20; ++x) walled(x, y) = float(x + y);
    for (std::ptrdiff_t y = 8; y <= 10; ++y)
        for (std::ptrdiff_t x = 11; x <= 13; ++x) walled(x, y) = top;
    walled(12, 9) = 0.0f;
    const auto overflow_message = [&](bool tiled) {
        return gorge_test::thrown_message<std::overflow_error>([&] {
            if (tiled)
                gorge::detail::run_tiled_epsilon_fill(walled.view(), gorge::fill_options<float>(), "test", 5);
            else
                gorge::detail::run_epsilon_fill(walled.view(), gorge::fill_options<float>(), "test", false);
        });
    };
    CHECK(contains(overflow_message(false), "test: raising cell (12, 9) "));
    CHECK(contains(overflow_message(true), "test: raising cell (12, 9) "));
    CHECK(same_bits(pit, pit_before));
    // A pit at the corner of the first tile, next to three cells at the largest value there and
    // to lower cells in the tiles around: solved before those, the tile would have to step above
    // the largest value (the fill then starts again as one flood).
    gorge::grid<float> high(20, 20);
    for (std::ptrdiff_t y = 0; y < 20; ++y)
        for (std::ptrdiff_t x = 0; x < 20; ++x) high(x, y) = float(1000 + 19 - y);
    high(3, 3) = high(4, 3) = high(3, 4) = top;
    high(4, 4) = 0.0f;
    std::vector<float> first_ring(gorge::detail::ring_count(5, 5));
    gorge::detail::for_each_ring_position(5, 5, [&](std::size_t i, std::ptrdiff_t x, std::ptrdiff_t y) {
        first_ring[i] = x < 0 || y < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    });
    gorge::grid<float> corner(5, 5), corner_out(5, 5);
    for (std::ptrdiff_t y = 0; y < 5; ++y)
        for (std::ptrdiff_t x = 0; x < 5; ++x) corner(x, y) = high(x, y);
    CHECK_THROWS_AS(gorge::detail::least_epsilon_surface<float>(corner.view(), first_ring.data(), corner_out.view(), {}, "test"),
                    std::overflow_error);
    // Starting again as one flood, the progress goes on without stepping back.
    std::vector<double> seen_again;
    gorge::fill_options<float> reporting;
    reporting.progress = [&seen_again](double fraction) {
        seen_again.push_back(fraction);
        return true;
    };
    gorge::grid<float> again = high, whole_high = high;
    gorge::detail::run_tiled_epsilon_fill(again.view(), reporting, "test", 5);
    gorge::detail::run_epsilon_fill(whole_high.view(), gorge::fill_options<float>(), "test", false);
    CHECK(same_bits(again, whole_high));
    check_progress_reports(seen_again);
    check_tiled_epsilon_fill(high, 5);
}

TEST_CASE("fill_depressions fills maps of 4096^2 cells and more in tiles, with the same surface", "[drainage][fill]") {
    // 4096 x 4096, the smallest square map cut into tiles: hashed noise on a gentle slope.
    const std::ptrdiff_t side = 4096;
    gorge::grid<float> map(side, side);
    for (std::ptrdiff_t y = 0; y < side; ++y)
        for (std::ptrdiff_t x = 0; x < side; ++x) {
            const std::uint32_t h = (std::uint32_t(x) * 7919u ^ std::uint32_t(y) * 104729u) * 2654435761u;
            map(x, y) = float(h >> 22) * 0.01f + 0.002f * float(x + y);
        }
    // Which maps go to tiles: 4096^2 cells or more, both sides at least 2048.
    using gorge::detail::tiled_fill_applies;
    CHECK(tiled_fill_applies(4096, 4096));
    CHECK_FALSE(tiled_fill_applies(4095, 4096));  // too few cells
    CHECK_FALSE(tiled_fill_applies(4096, 4095));
    CHECK_FALSE(tiled_fill_applies(4095, 4097));  // 4096^2 - 1 cells
    CHECK_FALSE(tiled_fill_applies(4097, 4095));
    CHECK(tiled_fill_applies(4098, 4095));         // more than 4096^2 cells
    CHECK(tiled_fill_applies(2048, 8192));
    CHECK(tiled_fill_applies(8192, 2048));
    CHECK_FALSE(tiled_fill_applies(2047, 8200));  // a side too short
    CHECK_FALSE(tiled_fill_applies(8200, 2047));
    // The same surface and statistics in tiles (the default, here on two threads) and as one
    // flood (tiles = false, which ignores threads), for fill_depressions and, which goes to tiles
    // by the same rule, fill_depressions_epsilon. The progress reports tell which ran: one flood
    // reports every fill_progress_interval cells of the map, 258 calls in all; the tiled fills
    // report only inside the tiles the calling thread fills (16 per tile; the epsilon fill's
    // tiles solved in full), and the other thread takes some: each report waits a millisecond on
    // the calling thread.
    const std::size_t cells = map.size();
    const auto check_tiles_against_one_flood = [&map, cells](auto&& fill) {
        std::vector<double> seen_tiled, seen_whole;
        gorge::fill_options<float> two_threads;
        two_threads.threads = 2;
        two_threads.progress = [&seen_tiled](double f) {
            seen_tiled.push_back(f);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return true;
        };
        gorge::grid<float> tiled = map, whole = map;
        const auto t = fill(tiled, two_threads);
        two_threads.tiles = false;
        two_threads.progress = [&seen_whole](double f) {
            seen_whole.push_back(f);
            return true;
        };
        const auto w = fill(whole, two_threads);
        CHECK(w.raised_cells > 100000u);
        CHECK(t.raised_cells == w.raised_cells);
        CHECK(t.max_gradient_rise == w.max_gradient_rise);
        CHECK(t.overtaken_cells == w.overtaken_cells);
        CHECK(same_bits(tiled, whole));
        REQUIRE(seen_whole.size() == 2u + cells / gorge::fill_progress_interval);
        CHECK(seen_whole[1] == Approx(double(gorge::fill_progress_interval) / double(cells)));
        CHECK(seen_tiled.size() < seen_whole.size());
        CHECK(std::is_sorted(seen_tiled.begin(), seen_tiled.end()));
        CHECK(seen_tiled.back() == 1.0);
    };
    check_tiles_against_one_flood(
        [](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions(g, o); });
    check_tiles_against_one_flood(
        [](gorge::grid<float>& g, const gorge::fill_options<float>& o) { return gorge::fill_depressions_epsilon(g, o); });
    // On one thread both fills go to tiles too: the reports are the tiles' (on 4096 x 4097 cells,
    // 20 tiles of 12 reports, not the whole-map flood's 256 and two).
    gorge::grid<float> taller(side, side + 1);
    for (std::ptrdiff_t y = 0; y <= side; ++y)
        for (std::ptrdiff_t x = 0; x < side; ++x) taller(x, y) = map(x, std::min(y, side - 1)) + 0.001f * float(y == side);
    std::vector<double> seen_one_thread;
    gorge::fill_options<float> options;  // one thread, tiles
    options.progress = [&seen_one_thread](double f) {
        seen_one_thread.push_back(f);
        return true;
    };
    gorge::grid<float> one_thread = taller, one_flood = taller;
    const auto eo = gorge::fill_depressions_epsilon(one_thread, options);
    options.tiles = false;
    options.progress = nullptr;
    const auto ef = gorge::fill_depressions_epsilon(one_flood, options);
    const std::size_t flood_reports = 2u + taller.size() / gorge::fill_progress_interval;
    CHECK(seen_one_thread.size() < flood_reports);
    CHECK(std::is_sorted(seen_one_thread.begin(), seen_one_thread.end()));
    CHECK(seen_one_thread.back() == 1.0);
    CHECK(eo.raised_cells == ef.raised_cells);
    CHECK(eo.overtaken_cells == ef.overtaken_cells);
    CHECK(eo.max_gradient_rise == ef.max_gradient_rise);
    CHECK(same_bits(one_thread, one_flood));
}
