// Tests of gorge/erosion/landscape_evolution.hpp: steady states of the stream power law against
// their closed forms, stability at large steps, the volume balance of every step, diffusion
// against analytic solutions, routing across depressions against the fill functions, degenerate
// maps, parameter names, determinism across thread counts and periodic edges.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/erosion/landscape_evolution.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/finite_grid.hpp"

namespace {

using gorge::edge_boundary;
using gorge::evolution_params;
using gorge::grid;
using gorge::landscape_evolver;

/// Random heights in [0, amplitude) (distinct with probability 1).
template <class T>
grid<T> random_map(std::ptrdiff_t w, std::ptrdiff_t h, T amplitude, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    grid<T> g(w, h);
    for (T& v : g) v = T(u(rng)) * amplitude;
    return g;
}

/// Runs until a step changes no height by more than `tol` (relative to the relief), at most
/// max_steps; returns the steps run.
template <class T>
int run_to_steady(landscape_evolver<T>& model, T tol, int max_steps) {
    std::vector<T> prev(model.heights().data(), model.heights().data() + model.heights().size());
    for (int s = 1; s <= max_steps; ++s) {
        model.run(1);
        const T* h = model.heights().data();
        T change = 0, top = 0;
        for (std::size_t i = 0; i < prev.size(); ++i) {
            change = std::max(change, std::fabs(h[i] - prev[i]));
            top = std::max(top, std::fabs(h[i]));
            prev[i] = h[i];
        }
        if (change <= tol * top) return s;
    }
    return max_steps;
}

/// Distance from cell i to its receiver r (a D8 neighbour, periodic wrap allowed).
double receiver_distance(std::size_t i, std::size_t r, std::ptrdiff_t w, double cell) {
    const auto xi = std::ptrdiff_t(i) % w, yi = std::ptrdiff_t(i) / w;
    const auto xr = std::ptrdiff_t(r) % w, yr = std::ptrdiff_t(r) / w;
    const bool diagonal = xi != xr && yi != yr;
    return diagonal ? cell * std::sqrt(2.0) : cell;
}

/// Checks K·A^m·S^n = U to `rel` on every free, non-lake cell of the last step's routing, and
/// returns the least-squares slope of log S against log A over cells of A >= channel_cells cells.
double check_steady_relation(const landscape_evolver<double>& model, double rel, double channel_cells) {
    const auto& p = model.params();
    const grid<std::uint32_t> rcv = model.receivers();
    const grid<double> area = model.drainage_area();
    const grid<std::uint8_t> base = model.base_level_mask();
    const grid<std::uint8_t> lake = model.lake_mask();
    const double* h = model.heights().data();
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int channels = 0, checked = 0;
    double worst = 0;
    for (std::size_t i = 0; i < rcv.size(); ++i) {
        if (base.data()[i] || lake.data()[i]) continue;
        const std::size_t r = rcv.data()[i];
        const double s = (h[i] - h[r]) / receiver_distance(i, r, model.width(), p.cell_size);
        const double a = area.data()[i];
        const double rate = p.erodibility * std::pow(a, p.area_exponent) * std::pow(s, p.slope_exponent);
        worst = std::max(worst, std::fabs(rate - p.uplift) / p.uplift);
        ++checked;
        if (a >= channel_cells * p.cell_size * p.cell_size) {
            const double lx = std::log(a), ly = std::log(s);
            sx += lx;
            sy += ly;
            sxx += lx * lx;
            sxy += lx * ly;
            ++channels;
        }
    }
    CHECK(checked > 0);
    CHECK(worst <= rel);
    REQUIRE(channels > 10);
    return (channels * sxy - sx * sy) / (channels * sxx - sx * sx);
}

evolution_params<double> base_params() {
    evolution_params<double> p;
    p.cell_size = 100;
    p.erodibility = 2e-5;
    p.area_exponent = 0.5;
    p.slope_exponent = 1;
    p.uplift = 1e-3;
    p.time_step = 1e5;
    return p;
}

}  // namespace

TEST_CASE("evolution: steady state n = 1 satisfies K A^m S = U on every cell and the slope-area exponent is -m/n") {
    evolution_params<double> p = base_params();
    landscape_evolver<double> model(random_map<double>(40, 40, 1.0, 11).view(), p);
    const int steps = run_to_steady(model, 1e-14, 400);
    INFO("steps " << steps);
    CHECK(steps < 400);
    const double exponent = check_steady_relation(model, 1e-6, 8);
    CHECK(std::fabs(exponent - (-p.area_exponent / p.slope_exponent)) <= 1e-3);
}

TEST_CASE("evolution: steady state for n = 2 and n = 0.7 satisfies S = (U / (K A^m))^(1/n)") {
    for (const double n : {2.0, 0.7}) {
        INFO("n = " << n);
        evolution_params<double> p = base_params();
        p.slope_exponent = n;
        p.erodibility = n > 1 ? 2e-3 : 2e-6;  // similar relief for both
        p.time_step = 1e6;
        landscape_evolver<double> model(random_map<double>(32, 32, 1.0, 12).view(), p);
        const int steps = run_to_steady(model, 1e-14, 600);
        CHECK(steps < 600);
        const double exponent = check_steady_relation(model, 1e-6, 8);
        CHECK(std::fabs(exponent - (-p.area_exponent / n)) <= 1e-3);
    }
}

namespace {
/// Steady state of a single river along a strip of `cells` cells, base level at x = 0, closed
/// elsewhere: cell x drains cells x..cells-1, so h_x = h_(x-1) + d·(U / (K·A_x^m))^(1/n).
std::vector<double> strip_steady_state(const evolution_params<double>& p, std::ptrdiff_t cells) {
    std::vector<double> h(std::size_t(cells), 0.0);
    for (std::ptrdiff_t x = 1; x < cells; ++x) {
        const double a = double(cells - x) * p.cell_size * p.cell_size;
        h[std::size_t(x)] = h[std::size_t(x - 1)] +
                            p.cell_size * std::pow(p.uplift / (p.erodibility * std::pow(a, p.area_exponent)),
                                                   1.0 / p.slope_exponent);
    }
    return h;
}
evolution_params<double> strip_params(double n) {
    evolution_params<double> p = base_params();
    p.slope_exponent = n;
    p.edges = gorge::evolution_edges::all(edge_boundary::closed);
    p.edges.west = edge_boundary::fixed;
    return p;
}
}  // namespace

TEST_CASE("evolution: a strip river converges to its closed-form profile, also at 1000x the explicit step") {
    const std::ptrdiff_t cells = 120;
    for (const double n : {1.0, 2.0, 0.7}) {
        INFO("n = " << n);
        evolution_params<double> p = strip_params(n);
        const std::vector<double> expected = strip_steady_state(p, cells);
        // Explicit (forward Euler) stability limit of the steepest reach at steady state:
        // dt <= d / (K·A^m·n·S^(n-1)) (the advective CFL of ∂h/∂t = -K A^m S^n), smallest over cells.
        double explicit_dt = std::numeric_limits<double>::infinity();
        for (std::ptrdiff_t x = 1; x < cells; ++x) {
            const double a = double(cells - x) * p.cell_size * p.cell_size;
            const double s = (expected[std::size_t(x)] - expected[std::size_t(x - 1)]) / p.cell_size;
            explicit_dt = std::min(explicit_dt, p.cell_size / (p.erodibility * std::pow(a, p.area_exponent) * n *
                                                               std::pow(s, n - 1)));
        }
        for (const double factor : {0.5, 1000.0}) {
            INFO("dt = " << factor << " x explicit limit");
            p.time_step = factor * explicit_dt;
            landscape_evolver<double> model(grid<double>(cells, 1, 0.0).view(), p);
            run_to_steady(model, 1e-15, factor < 1 ? 200000 : 2000);
            const double* h = model.heights().data();
            double worst = 0;
            for (std::ptrdiff_t x = 0; x < cells; ++x) {
                REQUIRE(std::isfinite(h[x]));
                worst = std::max(worst, std::fabs(h[x] - expected[std::size_t(x)]));
            }
            CHECK(worst <= 1e-9 * expected.back());
        }
    }
}

namespace {
/// Σ h over free cells (non-base, data), in double.
template <class T>
double free_sum(const landscape_evolver<T>& model) {
    const grid<std::uint8_t> base = model.base_level_mask();
    const T* h = model.heights().data();
    double s = 0;
    for (std::size_t i = 0; i < base.size(); ++i)
        if (!base.data()[i] && !gorge::detail::is_no_data(h[i], model.params().no_data)) s += double(h[i]);
    return s;
}

template <class T>
void check_balance(double diffusivity, edge_boundary ew, bool with_no_data) {
    evolution_params<T> p;
    p.cell_size = T(50);
    p.time_step = T(2e4);
    p.erodibility = T(4e-5);
    p.diffusivity = T(diffusivity);
    p.edges.west = p.edges.east = ew;
    grid<T> map = random_map<T>(48, 40, T(200), 5);
    if (with_no_data) {
        p.no_data = T(-9999);
        for (std::ptrdiff_t y = 10; y < 16; ++y)
            for (std::ptrdiff_t x = 20; x < 27; ++x) map(x, y) = T(-9999);
    }
    landscape_evolver<T> model(map.view(), p);
    std::mt19937 rng(3);
    grid<T> uplift(48, 40);
    for (T& u : uplift) u = T(std::uniform_real_distribution<double>(-2e-4, 2e-3)(rng));
    model.set_uplift(uplift.view());
    const double cell_area = double(p.cell_size) * double(p.cell_size);
    const double u_t = std::numeric_limits<T>::epsilon() / 2, u_d = std::numeric_limits<double>::epsilon() / 2;
    const double alpha = double(p.diffusivity) * double(p.time_step) / cell_area;
    const double cells = double(map.size());
    int depression_steps = 0;
    for (int s = 0; s < 25; ++s) {
        const double before = free_sum(model);
        double abs_sum = 0;
        for (std::size_t i = 0; i < map.size(); ++i) abs_sum += std::fabs(double(model.heights().data()[i]));
        const gorge::evolution_stats st = model.run(1);
        depression_steps += st.depression_steps;
        const double after = free_sum(model);
        const double change = (after - before) * cell_area;
        const double error = st.uplifted - st.eroded - st.diffused_out - change;
        // Tolerance: every volume is a sum over at most `cells` terms of exact or once-rounded
        // double differences, each sum off by at most cells·u_d times the sum of magnitudes
        // (Σ|h| bounds them all, times 4 for the four sums); the diffusion solves in T leave a
        // residual of a few u_t·(1 + 4α)·|h| per cell and line pass (two passes).
        double tol = 4 * cells * u_d * (abs_sum + std::fabs(st.uplifted) / cell_area + st.eroded / cell_area) * cell_area;
        if (diffusivity > 0) tol += 2 * 8 * u_t * (1 + 4 * alpha) * abs_sum * cell_area;
        INFO("step " << s << " error " << error << " tol " << tol << " uplifted " << st.uplifted);
        CHECK(std::fabs(error) <= tol);
        CHECK(st.uplifted != 0);
        CHECK(st.eroded > 0);
    }
    CHECK(depression_steps > 0);  // the random start has pits: the lake path is covered
}
}  // namespace

TEST_CASE("evolution: volume balance of every step (uplifted = eroded + diffused out + storage change)") {
    check_balance<double>(0.0, edge_boundary::fixed, false);
    check_balance<double>(5.0, edge_boundary::fixed, false);
    check_balance<double>(5.0, edge_boundary::periodic, true);
    check_balance<float>(5.0, edge_boundary::closed, true);
}

TEST_CASE("evolution: a wrong sediment sum breaks the balance check (the check can fail)") {
    // The balance of a step with an eroded volume off by one part in 1e6 exceeds the tolerance.
    evolution_params<double> p = base_params();
    landscape_evolver<double> model(random_map<double>(30, 30, 100.0, 8).view(), p);
    const double before = free_sum(model);
    const gorge::evolution_stats st = model.run(1);
    const double change = (free_sum(model) - before) * p.cell_size * p.cell_size;
    CHECK(std::fabs(st.uplifted - st.eroded - change) < 1e-6 * st.eroded);
    CHECK_FALSE(std::fabs(st.uplifted - st.eroded * (1 + 1e-6) - change) < 1e-7 * st.eroded);
}

TEST_CASE("evolution: diffusion alone spreads a Gaussian bump as the heat equation does") {
    // h(r, t) = A·s0² / s² · exp(-r² / (2 s²)), s² = s0² + 2 D t, on a map wide enough that the
    // fixed edges (at 0) see < 1e-8 of the peak.
    const std::ptrdiff_t n = 97;
    const double s0 = 6, amp = 1, dif = 1, total = 20;
    evolution_params<double> p;
    p.cell_size = 1;
    p.erodibility = 0;
    p.uplift = 0;
    p.diffusivity = dif;
    p.time_step = 0.05;
    grid<double> map(n, n);
    const double c = double(n / 2);
    for (std::ptrdiff_t y = 0; y < n; ++y)
        for (std::ptrdiff_t x = 0; x < n; ++x) {
            const double r2 = (double(x) - c) * (double(x) - c) + (double(y) - c) * (double(y) - c);
            map(x, y) = amp * std::exp(-r2 / (2 * s0 * s0));
        }
    landscape_evolver<double> model(map.view(), p);
    model.run(int(total / p.time_step));
    const double s2 = s0 * s0 + 2 * dif * total;
    double worst = 0;
    for (std::ptrdiff_t y = 0; y < n; ++y)
        for (std::ptrdiff_t x = 0; x < n; ++x) {
            const double r2 = (double(x) - c) * (double(x) - c) + (double(y) - c) * (double(y) - c);
            const double exact = amp * s0 * s0 / s2 * std::exp(-r2 / (2 * s2));
            worst = std::max(worst, std::fabs(model.heights()(x, y) - exact));
        }
    // Errors: backward Euler O(dt) ≈ dt·D²·|∇⁴h| ~ 0.05 · 2/s⁴ · peak, and the 5-point Laplacian's
    // O(dx²/12)·|h_xxxx| · D·t ~ t·3/(12 s⁴) · peak: both below 0.2% of the initial peak here.
    CHECK(worst <= 2e-3 * amp);
    // And the peak did go down (diffusion ran): the bump at t is s0²/s² = 0.47 of the start.
    CHECK(model.heights()(n / 2, n / 2) < 0.5 * amp);
}

TEST_CASE("evolution: diffusion with uplift reaches the parabolic hillslope profile") {
    // Both ends fixed at 0, uplift U, diffusion D: h(x) = U/(2D)·x·(L - x), which the 3-point
    // Laplacian reproduces exactly, so the discrete steady state matches to rounding.
    const std::ptrdiff_t n = 61;
    for (const bool along_y : {false, true}) {
        evolution_params<double> p;
        p.cell_size = 10;
        p.erodibility = 0;
        p.uplift = 2e-3;
        p.diffusivity = 0.05;
        p.time_step = 1e6;
        p.edges = gorge::evolution_edges::all(edge_boundary::closed);
        if (along_y)
            p.edges.north = p.edges.south = edge_boundary::fixed;
        else
            p.edges.west = p.edges.east = edge_boundary::fixed;
        const std::ptrdiff_t w = along_y ? 3 : n, h = along_y ? n : 3;
        landscape_evolver<double> model(grid<double>(w, h, 0.0).view(), p);
        run_to_steady(model, 1e-15, 2000);
        const double length = double(n - 1) * p.cell_size;
        double worst = 0, top = 0;
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) {
                const double pos = double(along_y ? y : x) * p.cell_size;
                const double exact = p.uplift / (2 * p.diffusivity) * pos * (length - pos);
                worst = std::max(worst, std::fabs(model.heights()(x, y) - exact));
                top = std::max(top, exact);
            }
        CHECK(top > 100);
        CHECK(worst <= 1e-9 * top);
    }
}

namespace {
/// Follows receivers from every data cell; true when each reaches a base-level cell within
/// `cells` moves.
bool every_cell_drains(const landscape_evolver<double>& model) {
    const grid<std::uint32_t> rcv = model.receivers();
    const grid<std::uint8_t> base = model.base_level_mask();
    for (std::size_t i = 0; i < rcv.size(); ++i) {
        if (rcv.data()[i] == gorge::evolution_no_receiver) continue;
        std::size_t c = i;
        std::size_t moves = 0;
        while (!base.data()[c]) {
            const std::size_t r = rcv.data()[c];
            if (r == c || ++moves > rcv.size()) return false;
            c = r;
        }
    }
    return true;
}
}  // namespace

TEST_CASE("evolution: closed basins drain across their spill points, the lakes those of fill_depressions") {
    // A bowl well below its rim, and random pits: the routing of the initial heights.
    const std::ptrdiff_t w = 60, h = 50;
    grid<double> map = random_map<double>(w, h, 5.0, 21);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const double dx = double(x) - 30, dy = double(y) - 25;
            map(x, y) += 100.0 - 80.0 * std::exp(-(dx * dx + dy * dy) / 60.0) + 0.5 * double(x);
        }
    evolution_params<double> p = base_params();
    landscape_evolver<double> model(map.view(), p);
    CHECK(every_cell_drains(model));
    grid<double> filled = map;
    gorge::fill_depressions(filled.view());
    const grid<std::uint8_t> lake = model.lake_mask();
    std::size_t lakes = 0, mismatches = 0;
    for (std::size_t i = 0; i < map.size(); ++i) {
        const bool raised = filled.data()[i] > map.data()[i];
        lakes += raised;
        mismatches += raised != bool(lake.data()[i]);
    }
    CHECK(lakes > 100);
    CHECK(mismatches == 0);
    // The bowl's bottom drains through the plain fill's outlet: its path leaves the lake at a
    // cell whose height is the lake's spill level.
    const grid<std::uint32_t> rcv = model.receivers();
    std::size_t c = std::size_t(25 * w + 30);
    while (lake.data()[rcv.data()[c]]) c = rcv.data()[c];
    const std::size_t outlet = rcv.data()[c];
    CHECK(map.data()[outlet] == Approx(filled.data()[std::size_t(25 * w + 30)]).epsilon(1e-12));

    // Then a subsiding basin in the uplift field (a closed basin that keeps forming) while the
    // rest rises: every step routes across it, and every cell still reaches base level.
    grid<double> uplift(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const double dx = double(x) - 30, dy = double(y) - 25;
            uplift(x, y) = 1e-3 - 3e-3 * std::exp(-(dx * dx + dy * dy) / 30.0);
        }
    model.set_uplift(uplift.view());
    for (int s = 0; s < 10; ++s) {
        const gorge::evolution_stats st = model.run(1);
        CHECK(st.depression_steps == 1);
        CHECK(st.lake_cells > 0);
        CHECK(every_cell_drains(model));
    }
}

TEST_CASE("evolution: tiny and degenerate maps") {
    evolution_params<double> p = base_params();
    SECTION("1x1: a base-level cell, unchanged") {
        landscape_evolver<double> model(grid<double>(1, 1, 7.0).view(), p);
        model.run(5);
        CHECK(model.heights()(0, 0) == 7.0);
    }
    SECTION("1xN and Nx1 with fixed edges: all base level, unchanged") {
        landscape_evolver<double> row(grid<double>(9, 1, 3.0).view(), p);
        row.run(3);
        landscape_evolver<double> col(grid<double>(1, 9, 3.0).view(), p);
        col.run(3);
        for (std::ptrdiff_t i = 0; i < 9; ++i) {
            CHECK(row.heights()(i, 0) == 3.0);
            CHECK(col.heights()(0, i) == 3.0);
        }
    }
    SECTION("1xN with one fixed end: a river that rises upstream") {
        p.edges = gorge::evolution_edges::all(edge_boundary::closed);
        p.edges.east = edge_boundary::fixed;
        p.diffusivity = 1;
        landscape_evolver<double> row(grid<double>(9, 1, 0.0).view(), p);
        row.run(20);
        for (std::ptrdiff_t i = 0; i + 1 < 9; ++i) CHECK(row.heights()(i, 0) > row.heights()(i + 1, 0));
        // Cell i drains cells 0..i: area (i + 1)·cell²; the receiver is the next cell east.
        const grid<double> area = row.drainage_area();
        const grid<std::uint32_t> rcv = row.receivers();
        const grid<std::uint8_t> river = row.river_mask(5 * p.cell_size * p.cell_size);
        for (std::ptrdiff_t i = 0; i < 9; ++i) {
            CHECK(area(i, 0) == double(i + 1) * p.cell_size * p.cell_size);
            CHECK(rcv(i, 0) == std::uint32_t(i + 1 < 9 ? i + 1 : i));
            CHECK(river(i, 0) == (i + 1 >= 5 ? 1 : 0));
        }
    }
    SECTION("2x2 periodic in x: wraps onto itself without trouble") {
        p.edges.west = p.edges.east = edge_boundary::periodic;
        p.diffusivity = 1;
        landscape_evolver<double> model(random_map<double>(2, 3, 1.0, 1).view(), p);
        model.run(10);
        for (const double v : std::vector<double>(model.heights().data(), model.heights().data() + 6))
            CHECK(std::isfinite(v));
    }
    SECTION("all no-data: nothing to do") {
        p.no_data = -1.0;
        landscape_evolver<double> model(grid<double>(4, 3, -1.0).view(), p);
        const gorge::evolution_stats st = model.run(4);
        CHECK(st.steps == 4);
        CHECK(st.uplifted == 0);
        CHECK(model.heights()(2, 1) == -1.0);
    }
    SECTION("no base level: a named error") {
        p.edges = gorge::evolution_edges::all(edge_boundary::closed);
        gorge_test::expect_throw_naming([&] { landscape_evolver<double>(grid<double>(4, 4, 0.0).view(), p); },
                                        "edges (no base level");
        p.edges = gorge::evolution_edges::all(edge_boundary::periodic);
        CHECK_THROWS_AS(landscape_evolver<double>(grid<double>(4, 4, 0.0).view(), p), std::invalid_argument);
        // ... but a no-data cell is base level for its neighbours (an island in a periodic sea).
        p.no_data = -1.0;
        grid<double> map(4, 4, 1.0);
        map(0, 0) = -1.0;
        CHECK_NOTHROW(landscape_evolver<double>(map.view(), p));
    }
    SECTION("empty view") {
        CHECK_THROWS_AS(landscape_evolver<double>(gorge::grid_view<const double>(), p), std::invalid_argument);
    }
}

TEST_CASE("evolution: parameter validation names the parameter") {
    const grid<double> map(4, 4, 0.0);
    const auto expect = [&](const evolution_params<double>& p, const char* name) {
        INFO(name);
        gorge_test::expect_throw_naming([&] { landscape_evolver<double>(map.view(), p); }, name);
    };
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (const double bad : {0.0, -1.0, nan, inf}) {
        evolution_params<double> p;
        p.cell_size = bad;
        expect(p, "cell_size");
        p = {};
        p.time_step = bad;
        expect(p, "time_step");
        p = {};
        p.area_exponent = bad;
        expect(p, "area_exponent");
        p = {};
        p.slope_exponent = bad;
        expect(p, "slope_exponent");
    }
    // Outside 1e-12..1e12 the stream power factors could be 0 / 0 and the volumes overflow: the
    // smallest and largest positive doubles gave NaN heights or totals before they were rejected.
    for (const double bad : {std::numeric_limits<double>::denorm_min(), gorge::evolution_min_cell_size / 2,
                             gorge::evolution_max_cell_size * 2, std::numeric_limits<double>::max()}) {
        evolution_params<double> p;
        p.cell_size = bad;
        expect(p, "cell_size");
    }
    for (const double good : {gorge::evolution_min_cell_size, gorge::evolution_max_cell_size}) {
        evolution_params<double> p;
        p.cell_size = good;
        CHECK(p.first_invalid() == nullptr);
    }
    {
        // A diffusion number D·dt / cell_size² above evolution_max_diffusion_number (here the
        // largest double as D) gave NaN heights; at the bound the run stays finite.
        evolution_params<double> p;
        p.diffusivity = std::numeric_limits<double>::max();
        expect(p, "diffusivity");
        p.diffusivity = 1e300;
        p.time_step = 1e300;
        expect(p, "diffusivity");  // D·dt overflows to infinity
        p = {};
        p.cell_size = 1;
        p.time_step = 1;
        p.diffusivity = gorge::evolution_max_diffusion_number<double>();
        CHECK(p.first_invalid() == nullptr);
        grid<double> bumpy(8, 8, 0.0);
        for (std::ptrdiff_t y = 0; y < 8; ++y)
            for (std::ptrdiff_t x = 0; x < 8; ++x) bumpy(x, y) = (x * 7 + y * 3) % 5 == 0 ? 1e150 : -1e150;
        const gorge::evolution_stats st = evolve_landscape(bumpy.view(), p, 3);
        CHECK(gorge_test::all_finite(bumpy));
        CHECK(std::isfinite(st.diffused_out));
    }
    for (const double bad : {-1e-9, nan, inf}) {
        evolution_params<double> p;
        p.erodibility = bad;
        expect(p, "erodibility");
        p = {};
        p.diffusivity = bad;
        expect(p, "diffusivity");
    }
    evolution_params<double> p;
    p.uplift = nan;
    expect(p, "uplift");
    p = {};
    p.uplift = 1e300;
    expect(p, "uplift");
    p = {};
    p.area_exponent = 11;
    expect(p, "area_exponent");
    p = {};
    p.edges.west = edge_boundary::periodic;
    expect(p, "edges");
    p = {};
    p.edges.south = edge_boundary::periodic;
    expect(p, "edges");
    // Zero K and D are valid (switch the processes off).
    p = {};
    p.erodibility = 0;
    p.diffusivity = 0;
    CHECK_NOTHROW(landscape_evolver<double>(map.view(), p));
    // Heights, uplift grids, steps and threads.
    grid<double> bad_map(4, 4, 0.0);
    bad_map(2, 3) = nan;
    gorge_test::expect_throw_naming([&] { landscape_evolver<double>(bad_map.view(), evolution_params<double>{}); },
                                    "(2, 3)");
    landscape_evolver<double> model(map.view(), evolution_params<double>{});
    gorge_test::expect_throw_naming([&] { model.set_uplift(grid<double>(3, 4, 0.0).view()); }, "size");
    grid<double> bad_uplift(4, 4, 0.0);
    bad_uplift(1, 2) = inf;
    gorge_test::expect_throw_naming([&] { model.set_uplift(bad_uplift.view()); }, "(1, 2)");
    gorge_test::expect_throw_naming([&] { model.run(-1); }, "steps");
    gorge::evolution_options o;
    o.threads = 5000;
    gorge_test::expect_throw_naming([&] { model.run(1, o); }, "threads");
}

TEST_CASE("evolution: bit-identical for any thread count") {
    // 200 x 200 cells: two bands of rows, thirteen column blocks.
    evolution_params<float> p;
    p.cell_size = 30;
    p.time_step = 5e3f;
    p.diffusivity = 0.5f;
    p.edges.north = p.edges.south = edge_boundary::periodic;
    const grid<float> map = random_map<float>(200, 200, 50.0f, 31);
    std::vector<float> reference;
    for (const unsigned threads : {1u, 2u, 3u}) {
        landscape_evolver<float> model(map.view(), p);
        gorge::evolution_options o;
        o.threads = threads;
        const gorge::evolution_stats st = model.run(6, o);
        CHECK(st.depression_steps > 0);
        const std::vector<float> h(model.heights().data(), model.heights().data() + map.size());
        if (reference.empty())
            reference = h;
        else
            CHECK(h == reference);
    }
}

TEST_CASE("evolution: periodic edges: a shifted map gives the shifted result") {
    const std::ptrdiff_t w = 36, h = 30, shift = 13;
    for (const double dif : {0.0, 2.0}) {
        INFO("diffusivity " << dif);
        evolution_params<double> p = base_params();
        p.time_step = 2e4;
        p.diffusivity = dif;
        p.edges.west = p.edges.east = edge_boundary::periodic;
        const grid<double> map = random_map<double>(w, h, 30.0, 41);
        grid<double> moved(w, h);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) moved((x + shift) % w, y) = map(x, y);
        landscape_evolver<double> a(map.view(), p), b(moved.view(), p);
        a.run(15);
        b.run(15);
        double worst = 0, top = 0;
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) {
                worst = std::max(worst, std::fabs(a.heights()(x, y) - b.heights()((x + shift) % w, y)));
                top = std::max(top, std::fabs(a.heights()(x, y)));
            }
        // Without diffusion every cell's update is the same arithmetic: equal bit for bit. The
        // cyclic solves start at another column, so diffusion rounds differently (1e-12 relative).
        if (dif == 0)
            CHECK(worst == 0);
        else
            CHECK(worst <= 1e-12 * top);
        // And water crossed the seam: some cell's receiver lies across it.
        const grid<std::uint32_t> rcv = a.receivers();
        bool crosses = false;
        for (std::size_t i = 0; i < rcv.size(); ++i) {
            const auto xi = std::ptrdiff_t(i) % w, xr = std::ptrdiff_t(rcv.data()[i]) % w;
            crosses = crosses || std::abs(xi - xr) > 1;
        }
        CHECK(crosses);
    }
}

TEST_CASE("evolution: progress and cancel") {
    evolution_params<double> p = base_params();
    landscape_evolver<double> model(random_map<double>(16, 16, 1.0, 2).view(), p);
    std::vector<double> calls;
    gorge::evolution_options o;
    o.progress = [&](double f) {
        calls.push_back(f);
        return f < 0.5;
    };
    const gorge::evolution_stats st = model.run(10, o);
    CHECK(st.cancelled);
    CHECK(st.steps == 5);
    REQUIRE(!calls.empty());
    CHECK(calls.front() == 0.0);
    CHECK(std::is_sorted(calls.begin(), calls.end()));
    CHECK(model.elapsed() == Approx(5 * p.time_step));
}

namespace {

/// Topology of a w x h map whose edge cells are all base level (listed in index order) and whose
/// other cells are free.
gorge::detail::evo_topology edge_base_topology(std::ptrdiff_t w, std::ptrdiff_t h) {
    namespace d = gorge::detail;
    d::evo_topology topo;
    topo.width = w;
    topo.height = h;
    for (int k = 0; k < gorge::d8_neighbours; ++k) topo.offsets[k] = d::d8_offset(k, w);
    topo.kind.assign(std::size_t(w * h), d::evo_free);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            if (x == 0 || y == 0 || x + 1 == w || y + 1 == h) {
                topo.kind[std::size_t(y * w + x)] = d::evo_base;
                topo.base_cells.push_back(d::evo_index(y * w + x));
            }
    return topo;
}

/// Reference stack for the one-pass evo_stack_and_count: every data cell, each receiver before its
/// donors, breadth-first from the base-level cells over the donor lists. False when some data
/// cell was not reached.
bool reference_stack(const gorge::detail::evo_topology& topo, const gorge::detail::evo_index* rcv,
                     std::vector<gorge::detail::evo_index>& stack) {
    namespace d = gorge::detail;
    std::vector<d::evo_index> donor_start, donors;
    d::evo_build_donors(topo.cells(), rcv, donor_start, donors, stack);
    stack.assign(topo.base_cells.begin(), topo.base_cells.end());
    d::evo_walk_up(donor_start, donors, stack, 0);
    return stack.size() == topo.data_cells;
}

/// Reference upstream cell counts (the cell itself included; 0 for no-data cells), accumulated in
/// reverse stack order.
void reference_counts(const gorge::detail::evo_topology& topo, const std::vector<gorge::detail::evo_index>& stack,
                      const gorge::detail::evo_index* rcv, std::uint32_t* count) {
    std::fill(count, count + topo.cells(), std::uint32_t(1));
    for (const gorge::detail::evo_index c : topo.void_cells) count[c] = 0;
    for (std::size_t s = stack.size(); s-- > 0;) {
        const gorge::detail::evo_index c = stack[s];
        const gorge::detail::evo_index r = rcv[c];
        if (r != c) count[r] += count[c];
    }
}

}  // namespace

TEST_CASE("evolution: the local depression search gives the global basin tree's routing") {
    // Same receivers, directions and lakes from the local search (lakes and rims only) as from
    // the global minimum spanning tree over every basin, on maps where the local search applies.
    namespace d = gorge::detail;
    int local_used = 0;
    for (std::uint32_t seed = 1; seed <= 12; ++seed) {
        const std::ptrdiff_t w = 48, h = 40;
        grid<double> map = random_map<double>(w, h, seed % 3 == 0 ? 20.0 : 2.0, seed);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) map(x, y) += 3.0 * std::fabs(double(x) - 24) + double(y);
        d::evo_topology topo = edge_base_topology(w, h);
        topo.data_cells = map.size();
        std::vector<d::evo_index> rcv(map.size());
        std::vector<std::uint8_t> code(map.size());
        const std::size_t sinks = d::evo_receivers_rows(topo, map.data(), rcv.data(), code.data(), 0, h);
        REQUIRE(sinks > 0);
        std::vector<d::evo_index> rcv_local = rcv, rcv_global = rcv;
        std::vector<std::uint8_t> code_local = code, code_global = code;
        std::vector<std::uint8_t> lake_local(map.size(), 0), lake_global(map.size(), 0);
        d::evo_depressions<double> dep_local, dep_global;
        const bool local = d::evo_route_depressions(topo, map.data(), rcv_local.data(), code_local.data(), dep_local,
                                                    lake_local.data(), true);
        d::evo_route_depressions(topo, map.data(), rcv_global.data(), code_global.data(), dep_global,
                                 lake_global.data(), false);
        INFO("seed " << seed);
        CHECK(local);  // the local search falls back only for a basin without a way out
        if (!local) continue;
        ++local_used;
        CHECK(rcv_local == rcv_global);
        CHECK(code_local == code_global);
        CHECK(lake_local == lake_global);
        std::vector<d::evo_index> stack;
        CHECK(reference_stack(topo, rcv_local.data(), stack));
    }
    CHECK(local_used == 12);
}

TEST_CASE("evolution: the one-pass stack and counts match the breadth-first stack and its accumulation") {
    // evo_stack_and_count lists every data cell once, each receiver before its donors, with the
    // counts reference_counts finds over reference_stack's breadth-first stack; a cycle fails.
    namespace d = gorge::detail;
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
        const std::ptrdiff_t w = 37, h = 29;
        grid<double> map = random_map<double>(w, h, 5.0, seed);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) map(x, y) += 2.0 * std::fabs(double(x) - 18) + double(y);
        d::evo_topology topo = edge_base_topology(w, h);
        // One no-data cell on the edge (its data neighbours are base level already).
        topo.kind[0] = d::evo_void;
        topo.base_cells.erase(topo.base_cells.begin());
        topo.void_cells.push_back(0);
        topo.data_cells = map.size() - 1;
        std::vector<d::evo_index> rcv(map.size());
        std::vector<std::uint8_t> code(map.size()), lake(map.size(), 0);
        d::evo_receivers_rows(topo, map.data(), rcv.data(), code.data(), 0, h);
        d::evo_depressions<double> dep;
        d::evo_route_depressions(topo, map.data(), rcv.data(), code.data(), dep, lake.data());
        std::vector<d::evo_index> bfs, pending, stack;
        REQUIRE(reference_stack(topo, rcv.data(), bfs));
        std::vector<std::uint32_t> count_bfs(map.size()), count(map.size(), 7u);
        reference_counts(topo, bfs, rcv.data(), count_bfs.data());
        INFO("seed " << seed);
        REQUIRE(d::evo_stack_and_count(topo, rcv.data(), pending, stack, count.data()));
        CHECK(count == count_bfs);
        REQUIRE(stack.size() == topo.data_cells);
        std::vector<std::size_t> position(map.size(), map.size());
        for (std::size_t s = 0; s < stack.size(); ++s) {
            CHECK(topo.kind[stack[s]] != d::evo_void);
            CHECK(position[stack[s]] == map.size());  // listed once
            position[stack[s]] = s;
        }
        for (const d::evo_index c : stack)
            if (rcv[c] != c) CHECK(position[rcv[c]] < position[c]);
        // A cycle of two free cells: neither is reached.
        std::vector<d::evo_index> broken = rcv;
        const auto a = d::evo_index(5 * w + 5), b = d::evo_index(5 * w + 6);
        broken[a] = b;
        broken[b] = a;
        CHECK_FALSE(d::evo_stack_and_count(topo, broken.data(), pending, stack, count.data()));
        // A free cell that is its own receiver (an unrouted sink): not a root.
        broken = rcv;
        broken[a] = a;
        CHECK_FALSE(d::evo_stack_and_count(topo, broken.data(), pending, stack, count.data()));
    }
}

TEST_CASE("evolution: the factored row and column solves match the line-by-line Thomas solves") {
    // evo_solve_rows / evo_solve_columns with the factors of evo_factor_lines against
    // evo_diffuse_open_line on every row and column, on a map with base-level cells and NaN
    // no-data cells (which must stay NaN and must not leak into their neighbours).
    namespace d = gorge::detail;
    const std::ptrdiff_t w = 23, h = 19;
    const double a = 0.7;
    grid<double> map = random_map<double>(w, h, 10.0, 5u);
    std::vector<std::uint8_t> kind(map.size(), d::evo_free);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const std::size_t i = std::size_t(y * w + x);
            if (x == 0 || y + 1 == h || (x == 9 && y > 3 && y < 12)) kind[i] = d::evo_base;
            if (x == 10 && y > 4 && y < 11) {
                kind[i] = d::evo_void;
                map.data()[i] = nan;
            }
        }
    for (std::ptrdiff_t y = 4; y < 12; ++y) kind[std::size_t(y * w + 11)] = d::evo_base;
    for (const bool rows : {true, false}) {
        INFO((rows ? "rows" : "columns"));
        std::vector<double> got(map.begin(), map.end()), expected = got, line, c;
        // The reference solve multiplies no-data values by zero coefficients: give it zeros.
        for (std::size_t i = 0; i < expected.size(); ++i)
            if (kind[i] == d::evo_void) expected[i] = 0.0;
        const std::ptrdiff_t lines = rows ? h : w, len = rows ? w : h, stride = rows ? 1 : w;
        for (std::ptrdiff_t l = 0; l < lines; ++l) {
            const std::ptrdiff_t first = rows ? l * w : l;
            line.resize(std::size_t(len));
            c.resize(std::size_t(len));
            std::vector<std::uint8_t> k(static_cast<std::size_t>(len));
            for (std::ptrdiff_t j = 0; j < len; ++j) {
                line[std::size_t(j)] = expected[std::size_t(first + j * stride)];
                k[std::size_t(j)] = kind[std::size_t(first + j * stride)];
            }
            d::evo_diffuse_open_line(line.data(), k.data(), c.data(), std::size_t(len), a);
            for (std::ptrdiff_t j = 0; j < len; ++j) expected[std::size_t(first + j * stride)] = line[std::size_t(j)];
        }
        d::evo_line_factors<double> fz;
        d::evo_factor_lines(kind.data(), w, h, rows, a, fz);
        if (rows)
            d::evo_solve_rows(got.data(), fz, w, 0, h);
        else
            d::evo_solve_columns(got.data(), fz, w, h, 0, w);
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (kind[i] == d::evo_void) {
                CHECK(std::isnan(got[i]));
                continue;
            }
            REQUIRE(std::isfinite(got[i]));
            CHECK(got[i] == Approx(expected[i]).epsilon(1e-12).margin(1e-12));
            if (kind[i] == d::evo_base) CHECK(got[i] == map.data()[i]);  // unchanged, exactly
        }
    }
}

TEST_CASE("evolution: NaN no-data cells do not leak into the map through diffusion") {
    // The zero coefficients of the identity rows next to no-data cells must not multiply a NaN:
    // the data cells stay finite and the no-data cells keep their value.
    const std::ptrdiff_t w = 12, h = 10;
    grid<double> map(w, h);
    const auto hole = [](std::ptrdiff_t x, std::ptrdiff_t y) { return x == 5 && y > 2 && y < 7; };
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            map(x, y) = hole(x, y) ? std::numeric_limits<double>::quiet_NaN() : 10.0 + double(x) + 0.5 * double(y);
    evolution_params<double> p;
    p.diffusivity = 100;
    p.no_data = std::numeric_limits<double>::quiet_NaN();
    landscape_evolver<double> model(map.view(), p);
    model.run(3);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            INFO("cell " << x << ", " << y);
            if (hole(x, y))
                CHECK(std::isnan(model.heights()(x, y)));
            else
                CHECK(std::isfinite(model.heights()(x, y)));
        }
}

TEST_CASE("evolution: the vectorised receivers and donor counts match the cell-by-cell rules") {
    // evo_receivers_rows (branch-free inner rows) against the steepest-descent rule applied cell
    // by cell through evo_topology::neighbour, and evo_count_donors against counting every
    // cell's receiver, on maps with ties (heights on a coarse lattice), no-data holes, and
    // fixed, closed or periodic edges, down to one cell wide.
    namespace d = gorge::detail;
    const std::ptrdiff_t sizes[][2] = {{1, 1}, {1, 7}, {6, 1},   {2, 2},  {3, 3},
                                       {4, 5}, {5, 4}, {17, 13}, {40, 31}};
    std::uint32_t seed = 11;
    for (const auto& size : sizes)
        for (int edges = 0; edges < 4; ++edges) {
            const std::ptrdiff_t w = size[0], h = size[1];
            ++seed;
            INFO("map " << w << " x " << h << ", edges " << edges << ", seed " << seed);
            grid<double> map = random_map<double>(w, h, 4.0, seed);
            for (double& v : map) v = std::round(v);  // many equal heights: ties
            d::evo_topology topo;
            topo.width = w;
            topo.height = h;
            topo.wrap_x = edges == 1 || edges == 3;
            topo.wrap_y = edges == 2 || edges == 3;
            for (int k = 0; k < gorge::d8_neighbours; ++k) topo.offsets[k] = d::d8_offset(k, w);
            topo.kind.assign(map.size(), d::evo_free);
            std::mt19937 rng(seed);
            for (std::size_t i = 0; i < map.size(); ++i)
                if (rng() % 9 == 0) topo.kind[i] = d::evo_void;
            for (std::ptrdiff_t y = 0; y < h; ++y)
                for (std::ptrdiff_t x = 0; x < w; ++x) {
                    const std::size_t i = std::size_t(y * w + x);
                    if (topo.kind[i] == d::evo_void) continue;
                    bool base = (!topo.wrap_x && (x == 0 || x + 1 == w)) || (!topo.wrap_y && (y == 0 || y + 1 == h));
                    for (int k = 0; k < gorge::d8_neighbours; ++k) {
                        const std::ptrdiff_t j = topo.neighbour(x, y, k);
                        if (j >= 0 && topo.kind[std::size_t(j)] == d::evo_void) base = true;
                    }
                    if (base) topo.kind[i] = d::evo_base;
                }
            std::vector<d::evo_index> rcv(map.size()), left(map.size());
            std::vector<std::uint8_t> code(map.size());
            const std::size_t sinks = d::evo_receivers_rows(topo, map.data(), rcv.data(), code.data(), 0, h);
            std::size_t expected_sinks = 0;
            std::vector<d::evo_index> donors(map.size(), 0);
            for (std::ptrdiff_t y = 0; y < h; ++y)
                for (std::ptrdiff_t x = 0; x < w; ++x) {
                    const std::ptrdiff_t i = y * w + x;
                    const std::uint8_t kind = topo.kind[std::size_t(i)];
                    d::evo_index to = kind == d::evo_void ? d::evo_none : d::evo_index(i);
                    std::uint8_t dir = kind == d::evo_void ? gorge::d8_no_data : gorge::d8_sink;
                    if (kind == d::evo_free) {
                        double top = 0;
                        for (int k = 0; k < gorge::d8_neighbours; ++k) {
                            const std::ptrdiff_t j = topo.neighbour(x, y, k);
                            if (j < 0 || j == i) continue;
                            const double drop = map.data()[i] - map.data()[j];
                            const double slope = drop * gorge::detail::d8_inv_distance<double>(k);
                            if (slope > top) {
                                top = slope;
                                to = d::evo_index(j);
                                dir = std::uint8_t(k);
                            }
                        }
                        if (to == d::evo_index(i)) ++expected_sinks;
                    }
                    CHECK(rcv[std::size_t(i)] == to);
                    CHECK(int(code[std::size_t(i)]) == int(dir));
                    if (to != d::evo_none && to != d::evo_index(i)) ++donors[to];
                }
            CHECK(sinks == expected_sinks);
            d::evo_count_donors(topo, rcv.data(), left.data());
            CHECK(left == donors);
        }
}
