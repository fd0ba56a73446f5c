// Thermal erosion: a hand-computed 3×3 pass, an independent straightforward re-implementation of
// the documented model in double as an oracle (odd widths, so the SIMD body, its scalar tail and
// the checked border cells are all compared), convergence to the talus slope, volume
// conservation within the derived rounding bound, the max principle of a monotone pass,
// bit-identical results for any thread count, cancellation and progress, validation, no-data
// cells, strided views, and world units (scaling, two resolutions of one terrain).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/erosion/thermal.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"

namespace {

using gorge::thermal_options;
using gorge::thermal_params;
using gorge::thermal_stats;

template <class T>
gorge::grid<T> random_map(std::ptrdiff_t w, std::ptrdiff_t h, std::uint32_t seed, T lo, T hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist{double(lo), double(hi)};
    gorge::grid<T> g(w, h);
    for (T& v : g) v = T(dist(rng));
    return g;
}

template <class T>
double volume(const gorge::grid<T>& g) {
    double sum = 0;
    for (T v : g) sum += double(v);
    return sum;
}

template <class T>
bool same_bits(const gorge::grid<T>& a, const gorge::grid<T>& b) {
    return a.width() == b.width() && a.height() == b.height() && std::equal(a.begin(), a.end(), b.begin());
}

/// One pass of the documented model, written out plainly in double: for each cell, the sum over
/// the existing neighbours of D - clamp(D, -t, t), times rate / 9.
template <class T>
std::vector<double> oracle_pass(const gorge::grid<T>& g, double cell_size, double talus, double rate) {
    const double share = rate / 9.0;
    std::vector<double> out(g.size());
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
            double net = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    if (dx == 0 && dy == 0) continue;
                    if (!g.contains(x + dx, y + dy)) continue;
                    const double dist = (dx != 0 && dy != 0) ? cell_size * std::sqrt(2.0) : cell_size;
                    const double t = talus * dist;
                    const double d = double(g(x, y)) - double(g(x + dx, y + dy));
                    net += d - std::clamp(d, -t, t);
                }
            out[std::size_t(y * g.width() + x)] = double(g(x, y)) - share * net;
        }
    return out;
}

/// Largest slope excess over all neighbour pairs (D / d - talus), computed independently.
template <class T>
double max_slope_excess(const gorge::grid<T>& g, double cell_size, double talus) {
    double worst = 0;
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    if ((dx == 0 && dy == 0) || !g.contains(x + dx, y + dy)) continue;
                    const double dist = (dx != 0 && dy != 0) ? cell_size * std::sqrt(2.0) : cell_size;
                    const double slope = (double(g(x, y)) - double(g(x + dx, y + dy))) / dist;
                    worst = std::max(worst, slope - talus);
                }
    return worst;
}

}  // namespace

TEST_CASE("thermal: one pass on a hand-computed 3x3 map", "[thermal]") {
    // cell_size 2, talus_slope 1 (45°), rate 1 (share k = 1/9). Thresholds: axial t = 1 · 2 = 2,
    // diagonal t = 2√2 ≈ 2.828. Heights (x to the right, y down):
    //     0  1  0
    //     3 10  0
    //     0  0  0
    // Excess s = D - clamp(D, -t, t) of each cell towards each neighbour, summed (net):
    //   centre 10: axial D = 9, 7, 10, 10 → 7 + 5 + 8 + 8 = 28; 4 diagonals D = 10 → 4(10 - 2√2)
    //              net = 68 - 8√2, h' = 10 - (68 - 8√2)/9 ≈ 3.70164
    //   (0,1) = 3: axial to (0,0), (0,2): D = 3 → 1 each; to the centre D = -7 → -5;
    //              diagonal to (1,0) = 1: D = 2 < 2√2 → 0; to (1,2) = 0: D = 3 → 3 - 2√2
    //              net = 1 + 1 - 5 + 3 - 2√2 = -2√2, h' = 3 + 2√2/9 ≈ 3.31427
    //   (1,0) = 1: axial to (0,0), (2,0): D = 1 < 2 → 0; to the centre D = -9 → -7;
    //              diagonals to (0,1) = 3 (D = -2) and (2,1) = 0 (D = 1) → 0;  h' = 1 + 7/9 = 16/9
    //   (2,1) = 0: axial to the centre D = -10 → -8; the rest within talus;    h' = 8/9
    //   (1,2) = 0: axial to the centre → -8; diagonal to (0,1) = 3: D = -3 → -(3 - 2√2)
    //              net = -11 + 2√2, h' = (11 - 2√2)/9
    //   (0,0) = 0: axial to (0,1) = 3: D = -3 → -1; to (1,0): D = -1 → 0; diagonal to the centre
    //              → -(10 - 2√2); net = -11 + 2√2, h' = (11 - 2√2)/9;  (0,2) the same by symmetry
    //   (2,0) = 0, (2,2) = 0: only the diagonal to the centre → h' = (10 - 2√2)/9
    // Sum: 14 before; after, the ninths add up to 9/9 and 10 + 3 remain: 14. Only the centre lost
    // height, so moved = (68 - 8√2)/9.
    const double r2 = std::sqrt(2.0);
    const double expected[9] = {(11 - 2 * r2) / 9, 16.0 / 9, (10 - 2 * r2) / 9,
                                3 + 2 * r2 / 9,    10 - (68 - 8 * r2) / 9, 8.0 / 9,
                                (11 - 2 * r2) / 9, (11 - 2 * r2) / 9,      (10 - 2 * r2) / 9};
    const double start[9] = {0, 1, 0, 3, 10, 0, 0, 0, 0};
    thermal_params<double> params;
    params.cell_size = 2;
    params.talus_slope = 1;
    params.rate = 1;
    params.passes = 1;
    SECTION("double") {
        gorge::grid<double> g(3, 3);
        std::copy(start, start + 9, g.begin());
        const thermal_stats stats = gorge::erode_thermal(g, params);
        for (int i = 0; i < 9; ++i) CHECK(g.data()[i] == Approx(expected[i]).epsilon(1e-14).margin(1e-14));
        CHECK(stats.passes == 1);
        CHECK_FALSE(stats.cancelled);
        CHECK(stats.moved == Approx((68 - 8 * r2) / 9).epsilon(1e-14));
        CHECK(volume(g) == Approx(14.0).epsilon(1e-15));
    }
    SECTION("float") {
        thermal_params<float> pf;
        pf.cell_size = 2;
        pf.talus_slope = 1;
        pf.passes = 1;
        gorge::grid<float> g(3, 3);
        for (int i = 0; i < 9; ++i) g.data()[i] = float(start[i]);
        gorge::erode_thermal(g, pf);
        for (int i = 0; i < 9; ++i) CHECK(double(g.data()[i]) == Approx(expected[i]).epsilon(1e-6).margin(1e-6));
    }
}

TEST_CASE("thermal: one pass matches an independent double implementation", "[thermal]") {
    // Widths around the SIMD lane counts (4, 8, 16) and heights of every size: the batch body,
    // the scalar tail and the checked border paths all against the oracle.
    for (std::ptrdiff_t w : {1, 2, 3, 5, 17, 38, 67}) {
        for (std::ptrdiff_t h : {1, 2, 3, 9}) {
            const auto g0 = random_map<double>(w, h, std::uint32_t(w * 131 + h), -20.0, 20.0);
            thermal_params<double> params;
            params.cell_size = 1.7;
            params.talus_slope = 0.6;
            params.rate = 0.8;
            params.passes = 1;
            const std::vector<double> want = oracle_pass(g0, 1.7, 0.6, 0.8);
            auto g = g0;
            gorge::erode_thermal(g, params);
            INFO("map " << w << " x " << h);
            double worst = 0;
            for (std::size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(g.data()[i] - want[i]));
            CHECK(worst < 1e-12);

            // float against the same oracle run on the float input
            gorge::grid<float> gf(w, h);
            for (std::size_t i = 0; i < g0.size(); ++i) gf.data()[i] = float(g0.data()[i]);
            const std::vector<double> want_f = oracle_pass(gf, 1.7, 0.6, 0.8);
            thermal_params<float> pf;
            pf.cell_size = 1.7f;
            pf.talus_slope = 0.6f;
            pf.rate = 0.8f;
            pf.passes = 1;
            gorge::erode_thermal(gf, pf);
            double worst_f = 0;
            for (std::size_t i = 0; i < gf.size(); ++i)
                worst_f = std::max(worst_f, std::fabs(double(gf.data()[i]) - want_f[i]));
            CHECK(worst_f < 2e-4);  // |h| <= 20, net <= 8 * 40: a few ulps of 320 in float
        }
    }
}

TEST_CASE("thermal: converges until no slope exceeds the talus slope", "[thermal]") {
    // White noise of ±40 on cells of 1.5: slopes up to ~75 against a talus slope of 0.8.
    auto g = random_map<double>(23, 19, 7u, -40.0, 40.0);
    const double before = volume(g);
    thermal_params<double> params;
    params.cell_size = 1.5;
    params.talus_slope = 0.8;
    params.passes = 3000;
    const thermal_stats stats = gorge::erode_thermal(g, params);
    const double eps = 1e-6;
    CHECK(max_slope_excess(g, 1.5, 0.8) <= eps);
    CHECK(stats.max_excess <= eps);
    CHECK(stats.max_excess == Approx(std::max(0.0, max_slope_excess(g, 1.5, 0.8))).margin(1e-12));
    CHECK(stats.moved > 0);
    CHECK(volume(g) == Approx(before).margin(1e-9));
    // Not trivially flat: the terrain keeps relief where the talus slope allows it.
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    CHECK(*hi - *lo > 1.0);
}

TEST_CASE("thermal: a pass is monotone (no cell leaves the range of its neighbourhood)", "[thermal]") {
    // The max principle of the k <= 1/9 bound: after one pass every cell lies within the lowest
    // and highest heights of its 3 × 3 neighbourhood before the pass; a needle does not turn into
    // a pit. Rate 1, talus 0: the most aggressive setting.
    auto g0 = random_map<double>(23, 19, 11u, 0.0, 100.0);
    g0(5, 5) = 1e4;   // a needle
    g0(15, 10) = -1e4;  // a pit
    auto g = g0;
    thermal_params<double> params;
    params.talus_slope = 0;
    params.passes = 1;
    gorge::erode_thermal(g, params);
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
            double lo = g0(x, y), hi = g0(x, y);
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    if (g0.contains(x + dx, y + dy)) {
                        lo = std::min(lo, g0(x + dx, y + dy));
                        hi = std::max(hi, g0(x + dx, y + dy));
                    }
            INFO("cell " << x << ", " << y);
            CHECK(g(x, y) >= lo);
            CHECK(g(x, y) <= hi);
        }
    // The k = 1/9 bound is tight for a needle on flat ground (talus 0, so every neighbour has
    // the same excess 90): it sends 10 to each of its 8 neighbours and meets them at 10, exactly on
    // the talus line, neither above nor below.
    gorge::grid<double> flat(5, 5, 0.0);
    flat(2, 2) = 90;
    gorge::erode_thermal(flat, params);
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) CHECK(flat(2 + dx, 2 + dy) == Approx(10.0).epsilon(1e-14));
}

TEST_CASE("thermal: volume is conserved within the derived rounding bound", "[thermal]") {
    // Bound (header comment): |ΔV| <= passes · cells · u · (max|h| + 8 (max h - min h)).
    const auto check = [](auto zero, double u) {
        using T = decltype(zero);
        auto g = random_map<T>(61, 47, 3u, T(-50), T(150));
        const double before = volume(g);
        const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
        const double range = double(*hi) - double(*lo);
        const double max_abs = std::max(std::fabs(double(*lo)), std::fabs(double(*hi)));
        thermal_params<T> params;
        params.cell_size = T(2);
        params.talus_slope = T(0.5);
        params.passes = 300;
        const thermal_stats stats = gorge::erode_thermal(g, params);
        REQUIRE(stats.passes == 300);
        const double bound = 300.0 * double(g.size()) * u * (max_abs + 8 * range);
        const double drift = std::fabs(volume(g) - before);
        INFO("drift " << drift << ", bound " << bound << ", moved " << stats.moved);
        CHECK(drift <= bound);
        CHECK(stats.moved > 1000);  // something did move
    };
    check(float(0), std::ldexp(1.0, -24));
    check(double(0), std::ldexp(1.0, -53));
}

TEST_CASE("thermal: closed edge keeps material on the map", "[thermal]") {
    // A cliff along the left edge: the pile spreads inwards only and the sum stays.
    gorge::grid<double> g(12, 6, 0.0);
    for (std::ptrdiff_t y = 0; y < 6; ++y) g(0, y) = 30;
    thermal_params<double> params;
    params.talus_slope = 1;
    params.passes = 3000;
    const thermal_stats stats = gorge::erode_thermal(g, params);
    CHECK(volume(g) == Approx(180.0).epsilon(1e-13));
    CHECK(stats.max_excess <= 1e-9);
    for (std::ptrdiff_t y = 0; y < 6; ++y)
        for (std::ptrdiff_t x = 0; x + 1 < 12; ++x) CHECK(g(x, y) >= g(x + 1, y) - 1e-9);  // a scree slope
}

TEST_CASE("thermal: bit-identical for any thread count", "[thermal][threads]") {
    // Cells for 7 threads (thermal_thread_cells = 131,072 cells a thread, thermal_band_cells =
    // 32768 a band), odd width for the SIMD tail.
    const std::ptrdiff_t w = 301, h = 3050;
    const auto g0 = random_map<float>(w, h, 5u, 0.0f, 60.0f);
    REQUIRE(w * h >= 7 * gorge::thermal_thread_cells);
    thermal_params<float> params;
    params.talus_slope = 0.9f;
    params.passes = 2;
    thermal_options options;
    auto reference = g0;
    const thermal_stats ref = gorge::erode_thermal(reference, params, options);
    for (unsigned threads : {2u, 3u, 7u, 0u}) {
        auto g = g0;
        options.threads = threads;
        const thermal_stats stats = gorge::erode_thermal(g, params, options);
        INFO("threads " << threads);
        CHECK(same_bits(g, reference));
        CHECK(stats.moved == ref.moved);
        CHECK(stats.max_excess == ref.max_excess);
        CHECK(stats.passes == 2);
    }
    CHECK_FALSE(same_bits(reference, g0));
}

TEST_CASE("thermal: progress and cancellation", "[thermal]") {
    const auto g0 = random_map<float>(12, 10, 9u, 0.0f, 30.0f);
    thermal_params<float> params;
    params.passes = 1000;  // a report every 1000 / 256 = 3 passes

    SECTION("reports: 0 first, non-decreasing, 1 last, at the documented interval") {
        std::vector<double> seen;
        thermal_options options;
        options.progress = [&](double f) {
            seen.push_back(f);
            return true;
        };
        auto g = g0;
        const thermal_stats stats = gorge::erode_thermal(g, params, options);
        CHECK(stats.passes == 1000);
        REQUIRE(seen.size() == 1 + 333 + 1);
        CHECK(seen.front() == 0.0);
        CHECK(seen.back() == 1.0);
        CHECK(std::is_sorted(seen.begin(), seen.end()));
        CHECK(seen[1] == Approx(3.0 / 1000));
    }
    SECTION("false at the start runs nothing") {
        int calls = 0;
        thermal_options options;
        options.progress = [&](double) {
            ++calls;
            return false;
        };
        auto g = g0;
        const thermal_stats stats = gorge::erode_thermal(g, params, options);
        CHECK(calls == 1);
        CHECK(stats.cancelled);
        CHECK(stats.passes == 0);
        CHECK(stats.moved == 0);
        CHECK(same_bits(g, g0));
    }
    SECTION("false later stops right there, leaving whole passes") {
        for (unsigned threads : {1u, 3u}) {
            int calls = 0;
            double last = -1;
            thermal_options options;
            options.threads = threads;
            options.progress = [&](double f) {
                last = f;
                return ++calls < 5;  // the fifth call cancels
            };
            auto g = g0;
            const thermal_stats stats = gorge::erode_thermal(g, params, options);
            CHECK(calls == 5);
            CHECK(stats.cancelled);
            CHECK(stats.passes == 12);  // reports after passes 3, 6, 9, 12
            CHECK(double(stats.passes) == Approx(last * 1000));
            // The same map as a run of exactly that many passes.
            auto expect = g0;
            thermal_params<float> shorter = params;
            shorter.passes = stats.passes;
            const thermal_stats s2 = gorge::erode_thermal(expect, shorter);
            CHECK(same_bits(g, expect));
            CHECK(stats.moved == s2.moved);
        }
    }
    SECTION("an odd number of passes before the stop still lands in the caller's map") {
        params.passes = 10;  // a report after every pass
        thermal_options options;
        int calls = 0;
        options.progress = [&](double) { return ++calls < 4; };  // stops after pass 3
        auto g = g0;
        const thermal_stats stats = gorge::erode_thermal(g, params, options);
        CHECK(stats.passes == 3);
        auto expect = g0;
        params.passes = 3;
        gorge::erode_thermal(expect, params);
        CHECK(same_bits(g, expect));
    }
    SECTION("an exception from the callback propagates") {
        thermal_options options;
        options.progress = [](double f) -> bool {
            if (f > 0) throw std::runtime_error("stop");
            return true;
        };
        auto g = g0;
        CHECK_THROWS_AS(gorge::erode_thermal(g, params, options), std::runtime_error);
    }
}

TEST_CASE("thermal: validation names the bad member", "[thermal][validation]") {
    using gorge_test::expect_throw_naming;
    gorge::grid<float> g(4, 4, 1.0f);
    const auto with = [&](auto change) {
        thermal_params<float> p;
        change(p);
        return [p, &g] { gorge::erode_thermal(g, p); };
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    expect_throw_naming(with([](auto& p) { p.cell_size = 0; }), "cell_size");
    expect_throw_naming(with([](auto& p) { p.cell_size = -1; }), "cell_size");
    expect_throw_naming(with([&](auto& p) { p.cell_size = nan; }), "cell_size");
    expect_throw_naming(with([&](auto& p) { p.cell_size = inf; }), "cell_size");
    // Below thermal_min_cell_size a slope (height difference over cell_size) would overflow: the
    // smallest positive float gave an infinite max_excess before it was rejected.
    expect_throw_naming(with([](auto& p) { p.cell_size = std::numeric_limits<float>::denorm_min(); }), "cell_size");
    expect_throw_naming(with([](auto& p) { p.cell_size = gorge::thermal_min_cell_size<float>() / 2; }), "cell_size");
    {
        thermal_params<float> p;
        p.cell_size = gorge::thermal_min_cell_size<float>();
        CHECK(p.first_invalid() == nullptr);
    }
    {
        // At the smallest accepted cell size, the steepest accepted relief keeps a finite max_excess.
        gorge::grid<float> steep(3, 3, 0.0f);
        steep(1, 1) = gorge::thermal_height_limit<float>();
        steep(0, 0) = -gorge::thermal_height_limit<float>();
        thermal_params<float> p;
        p.cell_size = gorge::thermal_min_cell_size<float>();
        p.passes = 0;
        const gorge::thermal_stats st = gorge::erode_thermal(steep, p);
        CHECK(std::isfinite(st.max_excess));
        CHECK(st.max_excess > 1e38);
    }
    expect_throw_naming(with([](auto& p) { p.talus_slope = -0.1f; }), "talus_slope");
    expect_throw_naming(with([&](auto& p) { p.talus_slope = nan; }), "talus_slope");
    expect_throw_naming(with([](auto& p) {
                            p.talus_slope = 1e10f;
                            p.cell_size = 1e10f;
                        }),
                        "talus_slope");
    expect_throw_naming(with([](auto& p) { p.rate = 0; }), "rate");
    expect_throw_naming(with([](auto& p) { p.rate = 1.01f; }), "rate");
    expect_throw_naming(with([&](auto& p) { p.rate = nan; }), "rate");
    expect_throw_naming(with([](auto& p) { p.passes = -1; }), "passes");
    expect_throw_naming(with([](auto& p) { p.passes = gorge::thermal_max_passes + 1; }), "passes");
    CHECK(thermal_params<float>{}.first_invalid() == nullptr);
    expect_throw_naming([] { thermal_params<double> p; p.rate = 2; p.validate(); }, "gorge::thermal_params");

    thermal_options bad;
    bad.threads = gorge::max_threads + 1;
    expect_throw_naming([&] { gorge::erode_thermal(g, thermal_params<float>{}, bad); }, "threads");

    expect_throw_naming([] { gorge::erode_thermal(gorge::grid_view<float>(), thermal_params<float>{}); },
                        "heights must not be empty");
    auto bad_cell = g;
    bad_cell(2, 3) = nan;
    expect_throw_naming([&] { gorge::erode_thermal(bad_cell, thermal_params<float>{}); }, "cell (2, 3)");
    bad_cell(2, 3) = 2e18f;
    expect_throw_naming([&] { gorge::erode_thermal(bad_cell, thermal_params<float>{}); }, "cell (2, 3)");
    // Nothing was changed by the failed calls.
    CHECK(g(0, 0) == 1.0f);
}

TEST_CASE("thermal: no-data cells neither send nor receive", "[thermal]") {
    auto g0 = random_map<double>(30, 20, 13u, 0.0, 50.0);
    const double hole = -9999;
    for (std::ptrdiff_t y = 5; y < 12; ++y) g0(10, y) = hole;
    g0(0, 0) = hole;
    thermal_params<double> params;
    params.no_data = hole;
    params.talus_slope = 0.5;
    params.passes = 2000;
    auto g = g0;
    const thermal_stats stats = gorge::erode_thermal(g, params);
    double before = 0, after = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        if (g0.data()[i] == hole) {
            CHECK(g.data()[i] == hole);
            continue;
        }
        before += g0.data()[i];
        after += g.data()[i];
    }
    CHECK(after == Approx(before).epsilon(1e-13));
    CHECK(stats.max_excess <= 1e-6);

    // A NaN no-data value matches NaN cells (which are otherwise rejected).
    gorge::grid<float> gn(8, 8, 5.0f);
    gn(3, 3) = std::numeric_limits<float>::quiet_NaN();
    gn(4, 4) = 40.0f;
    thermal_params<float> pn;
    pn.no_data = std::numeric_limits<float>::quiet_NaN();
    pn.passes = 10;
    gorge::erode_thermal(gn, pn);
    CHECK(std::isnan(gn(3, 3)));
    CHECK(gn(4, 4) < 40.0f);
}

TEST_CASE("thermal: a strided view erodes its rectangle only", "[thermal]") {
    auto big = random_map<float>(50, 40, 21u, 0.0f, 40.0f);
    const auto original = big;
    gorge::grid_view<float> sub(big.data() + 3 * 50 + 4, 33, 25, 50);
    gorge::grid<float> packed(33, 25);
    for (std::ptrdiff_t y = 0; y < 25; ++y)
        for (std::ptrdiff_t x = 0; x < 33; ++x) packed(x, y) = sub(x, y);
    thermal_params<float> params;
    params.passes = 7;
    gorge::erode_thermal(sub, params);
    gorge::erode_thermal(packed, params);
    for (std::ptrdiff_t y = 0; y < 40; ++y)
        for (std::ptrdiff_t x = 0; x < 50; ++x) {
            const bool inside = x >= 4 && x < 37 && y >= 3 && y < 28;
            if (inside)
                CHECK(big(x, y) == packed(x - 4, y - 3));
            else
                CHECK(big(x, y) == original(x, y));
        }
}

TEST_CASE("thermal: world units", "[thermal][units]") {
    const auto g0 = random_map<float>(45, 33, 17u, 0.0f, 30.0f);
    thermal_params<float> params;
    params.cell_size = 1.25f;
    params.talus_slope = 0.7f;
    params.passes = 40;
    auto base = g0;
    const thermal_stats s1 = gorge::erode_thermal(base, params);

    SECTION("scaling cell_size and heights by 4 scales the result by 4, bit for bit") {
        auto scaled = g0;
        for (float& v : scaled) v *= 4.0f;
        thermal_params<float> p4 = params;
        p4.cell_size *= 4.0f;
        const thermal_stats s4 = gorge::erode_thermal(scaled, p4);
        for (std::size_t i = 0; i < base.size(); ++i) CHECK(scaled.data()[i] == 4.0f * base.data()[i]);
        CHECK(s4.moved == Approx(4 * s1.moved).epsilon(1e-6));
        CHECK(s4.max_excess == Approx(s1.max_excess).epsilon(1e-6));
    }
    SECTION("scaling by 3 gives the same result up to rounding") {
        auto scaled = g0;
        for (float& v : scaled) v *= 3.0f;
        thermal_params<float> p3 = params;
        p3.cell_size *= 3.0f;
        gorge::erode_thermal(scaled, p3);
        for (std::size_t i = 0; i < base.size(); ++i)
            CHECK(double(scaled.data()[i]) == Approx(3.0 * double(base.data()[i])).margin(1e-3));
    }
    SECTION("the same hill at two resolutions converges to the same slopes") {
        // A Gaussian hill 30 high, σ = 6, on a square of 48 units (steepest slope ≈ 4.3), talus 1:
        // sampled with cells of 2 (24²) and of 1 (48²), run to convergence (about 350 and 1600
        // passes: the passes grow with the square of the resolution). The converged shapes differ
        // by the discretisation only (peaks 13.7 and 14.3, mean slopes 0.357 and 0.330).
        const auto hill = [](std::ptrdiff_t n, double cell) {
            gorge::grid<double> g(n, n);
            for (std::ptrdiff_t y = 0; y < n; ++y)
                for (std::ptrdiff_t x = 0; x < n; ++x) {
                    const double px = (double(x) + 0.5) * cell - 24, py = (double(y) + 0.5) * cell - 24;
                    g(x, y) = 30 * std::exp(-(px * px + py * py) / 36);
                }
            return g;
        };
        auto coarse = hill(24, 2.0), fine = hill(48, 1.0);
        thermal_params<double> p;
        p.talus_slope = 1;
        p.cell_size = 2;
        p.passes = 500;
        const thermal_stats sc = gorge::erode_thermal(coarse, p);
        p.cell_size = 1;
        p.passes = 2000;
        const thermal_stats sf = gorge::erode_thermal(fine, p);
        CHECK(sc.max_excess <= 1e-4);
        CHECK(sf.max_excess <= 1e-4);
        // The steepest slope along the axes through the summit is the talus slope at both
        // resolutions, and the summits agree (the hill collapsed the same way).
        const auto peak = [](const gorge::grid<double>& g) { return *std::max_element(g.begin(), g.end()); };
        INFO("peaks " << peak(coarse) << " and " << peak(fine));
        CHECK(peak(coarse) < 20.0);  // it did collapse from 30
        CHECK(peak(coarse) == Approx(peak(fine)).epsilon(0.06));
        // Mean slope magnitude over the map (central differences in world units) agrees.
        const auto mean_slope = [](const gorge::grid<double>& g, double cell) {
            double sum = 0;
            int count = 0;
            for (std::ptrdiff_t y = 1; y + 1 < g.height(); ++y)
                for (std::ptrdiff_t x = 1; x + 1 < g.width(); ++x) {
                    const double gx = (g(x + 1, y) - g(x - 1, y)) / (2 * cell);
                    const double gy = (g(x, y + 1) - g(x, y - 1)) / (2 * cell);
                    sum += std::sqrt(gx * gx + gy * gy);
                    ++count;
                }
            return sum / count;
        };
        CHECK(mean_slope(coarse, 2.0) == Approx(mean_slope(fine, 1.0)).epsilon(0.1));
    }
}

TEST_CASE("thermal: max_excess is the largest pair excess, bit for bit, at every map shape", "[thermal]") {
    // The definition in T: over every pair of neighbouring data cells, |h - hn| / run -
    // talus_slope (run = cell_size along the axes, cell_size * sqrt(2) along the diagonals), the
    // largest, and 0 when none is larger. Widths around the SIMD widths, thin maps, no-data.
    const auto definition = [](const gorge::grid<float>& g, const gorge::thermal_params<float>& p) {
        const float diagonal_run = p.cell_size * 1.41421356237309504880f;
        float worst = 0.0f;
        for (std::ptrdiff_t y = 0; y < g.height(); ++y)
            for (std::ptrdiff_t x = 0; x < g.width(); ++x)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        if ((dx == 0 && dy == 0) || !g.contains(x + dx, y + dy)) continue;
                        const float h = g(x, y), hn = g(x + dx, y + dy);
                        if (gorge::detail::is_no_data(h, p.no_data) || gorge::detail::is_no_data(hn, p.no_data)) continue;
                        const float run = dx != 0 && dy != 0 ? diagonal_run : p.cell_size;
                        worst = std::max(worst, std::fabs(h - hn) / run - p.talus_slope);
                    }
        return worst;
    };
    int compared = 0;
    for (const std::ptrdiff_t w : {1, 2, 3, 15, 16, 17, 33, 70})
        for (const std::ptrdiff_t h : {1, 2, 5, 40}) {
            // Noise, where the largest excess is nearly always along an axis (the shorter run), and
            // ramps along x - y and x + y, where it lies along one diagonal or the other.
            for (const int shape : {0, 1, 2})
            for (const bool with_no_data : {false, true}) {
                INFO(w << " x " << h << ", shape " << shape << (with_no_data ? ", no-data" : ""));
                gorge::grid<float> g = random_map<float>(w, h, std::uint32_t(w * 97 + h), -30.0f, 30.0f);
                if (shape > 0)
                    for (std::ptrdiff_t y = 0; y < h; ++y)
                        for (std::ptrdiff_t x = 0; x < w; ++x)
                            g(x, y) = 3.0f * float(shape == 1 ? x - y : x + y) + 0.001f * g(x, y);
                gorge::thermal_params<float> p;
                p.cell_size = 1.3f;
                p.talus_slope = 0.6f;
                p.passes = 0;
                if (with_no_data) {
                    p.no_data = -9999.0f;
                    g(w / 2, h / 2) = -9999.0f;
                }
                const float want = definition(g, p);
                CHECK(gorge::erode_thermal(g, p).max_excess == double(want));
                ++compared;
            }
        }
    CHECK(compared == 192);
}

TEST_CASE("thermal: zero passes and tiny maps", "[thermal]") {
    gorge::grid<float> g(1, 1, 3.0f);
    thermal_params<float> params;
    const thermal_stats s = gorge::erode_thermal(g, params);
    CHECK(g(0, 0) == 3.0f);
    CHECK(s.passes == 50);
    CHECK(s.max_excess == 0);

    gorge::grid<float> line(6, 1, 0.0f);
    line(2, 0) = 12.0f;
    params.passes = 0;
    int calls = 0;
    thermal_options options;
    options.progress = [&](double) { return ++calls > 0; };
    const thermal_stats s0 = gorge::erode_thermal(line, params, options);
    CHECK(calls == 0);
    CHECK(s0.passes == 0);
    CHECK(s0.max_excess == Approx(12.0 - 0.7));
    params.passes = 500;
    gorge::erode_thermal(line, params);
    CHECK(volume(line) == Approx(12.0).epsilon(1e-6));
    for (std::ptrdiff_t x = 0; x + 1 < 6; ++x) CHECK(std::fabs(line(x, 0) - line(x + 1, 0)) <= 0.7f + 1e-4f);
}
