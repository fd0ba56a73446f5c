// Island shaping (Red Blob Games recipe): falloff distances and the falloff combinator against
// finite differences, their documented values and ranges, the whole recipe end to end (sea at the
// border, land at the centre), the independent moisture field, float/double, and validation
// (including the derived limits that keep the recipe finite); redistribution and the falloff at
// subnormal, huge and far inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/gradient_check.hpp"

using gorge_test::check_gradient;

namespace {

glm::dvec3 radial(glm::dvec2 n) { return gorge::radial_distance(n); }
glm::dvec3 square(glm::dvec2 n) { return gorge::square_bump_distance(n); }

using gorge_test::expect_throw_naming;

// The recipe's clamped stage before the clamp, rebuilt from the documented formula, to keep the
// gradient check away from the clamp's kinks.
double recipe_before_clamp(const gorge::island_params<double>& ip, std::uint32_t seed, glm::dvec2 p) {
    const gorge::fractal_sum_field<double> terrain(ip.terrain, gorge::derive_seed(seed, gorge::island_stream::height));
    const gorge::fractal_sum_field<double> wx(ip.warp_noise, gorge::derive_seed(seed, gorge::island_stream::warp_x));
    const gorge::fractal_sum_field<double> wy(ip.warp_noise, gorge::derive_seed(seed, gorge::island_stream::warp_y));
    const glm::dvec2 q = p + ip.warp.strength * glm::dvec2(wx(p).x, wy(p).x);
    return 0.5 + ip.contrast * terrain(q).x;
}

}  // namespace

TEST_CASE("falloff distances: values, ranges and gradients", "[island]") {
    // Away from the kinks: the centre of the radial cone, its rim |n| = 1, the square's edges.
    const double margin = 1e-4;
    const auto rr = check_gradient(radial, [&](glm::dvec2 n) {
        const double r = glm::length(n);
        return r < margin || std::fabs(r - 1) < margin;
    }, 1, -1.5, 1.5, 1200);
    CHECK(rr.checked >= 1000);
    CHECK(rr.worst < 1e-8);
    const auto sr = check_gradient(square, [&](glm::dvec2 n) {
        return std::fabs(std::fabs(n.x) - 1) < margin || std::fabs(std::fabs(n.y) - 1) < margin;
    }, 2, -1.5, 1.5, 1200);
    CHECK(sr.checked >= 1000);
    CHECK(sr.worst < 1e-8);

    CHECK(radial(glm::dvec2(0, 0)) == glm::dvec3(0, 0, 0));
    CHECK(radial(glm::dvec2(0.6, 0.8)).x == Approx(1.0));
    CHECK(radial(glm::dvec2(0.3, -0.4)) == glm::dvec3(0.5, 0.6, -0.8));
    CHECK(square(glm::dvec2(0, 0)) == glm::dvec3(0, 0, 0));
    CHECK(square(glm::dvec2(0.5, 0.0)).x == Approx(0.25));  // 1 - (1 - 0.25)(1 - 0)
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> coord(-3, 3);
    for (int i = 0; i < 5000; ++i) {
        const glm::dvec2 n(coord(rng), coord(rng));
        const glm::dvec3 r = radial(n), s = square(n);
        CHECK(r.x >= 0.0);
        CHECK(r.x <= 1.0);
        CHECK(s.x >= 0.0);
        CHECK(s.x <= 1.0);
        if (glm::length(n) >= 1) {  // clamp active: d = 1 and a zero gradient
            CHECK(r == glm::dvec3(1, 0, 0));
        }
        if (std::fabs(n.x) >= 1 || std::fabs(n.y) >= 1) {
            CHECK(s == glm::dvec3(1, 0, 0));
        }
    }
}

TEST_CASE("island_falloff keeps the gradient exact", "[island]") {
    const gorge::fractal_sum_field<double> e(gorge::fbm_params<double>{2.0, 5, 2.0, 0.5}, 4u);
    for (auto shape : {gorge::falloff_shape::radial, gorge::falloff_shape::square_bump}) {
        gorge::falloff_params<double> fp;
        fp.centre = glm::dvec2(0.3, -0.2);
        fp.radius = 1.7;
        fp.shape = shape;
        fp.amount = 0.6;
        const auto f = gorge::island_falloff(e, fp);
        const double margin = 1e-4;
        const auto r = check_gradient(f, [&](glm::dvec2 p) {
            const glm::dvec2 n = (p - fp.centre) / fp.radius;
            const double len = glm::length(n);
            return shape == gorge::falloff_shape::radial
                       ? (len < margin || std::fabs(len - 1) < margin)
                       : (std::fabs(std::fabs(n.x) - 1) < margin || std::fabs(std::fabs(n.y) - 1) < margin);
        }, 5, -2.5, 2.5, 1200);
        CHECK(r.checked >= 1000);
        CHECK(r.worst < 1e-7);
        // The documented blend, at one point: mix(e, 1 - d, amount).
        const glm::dvec2 p(0.9, 0.4);
        const glm::dvec2 n = (p - fp.centre) / fp.radius;
        const double d = shape == gorge::falloff_shape::radial ? glm::length(n)
                                                               : 1 - (1 - n.x * n.x) * (1 - n.y * n.y);
        CHECK(f(p).x == Approx(0.4 * e(p).x + 0.6 * (1 - d)).margin(1e-14));
    }
}

TEST_CASE("island recipe: sea at the border, land at the centre", "[island][recipe]") {
    for (auto shape : {gorge::falloff_shape::radial, gorge::falloff_shape::square_bump}) {
        gorge::island_params<double> ip;
        ip.falloff.shape = shape;
        REQUIRE(ip.guarantees_island());
        for (std::uint32_t seed = 0; seed < 8; ++seed) {
            INFO("seed " << seed << (shape == gorge::falloff_shape::radial ? " radial" : " square"));
            const auto island = gorge::island_height_field(ip, seed);
            CHECK(island(glm::dvec2(0, 0)).x > ip.sea_level);
            // The border, where d = 1: rings (radial) or squares (square bump) at and outside the
            // radius, and the corners of the map.
            double border_max = 0;
            for (int i = 0; i < 360; ++i) {
                const double a = i * (2 * 3.14159265358979 / 360);
                const glm::dvec2 dir(std::cos(a), std::sin(a));
                const double to_edge = shape == gorge::falloff_shape::radial
                                           ? 1.0
                                           : 1.0 / std::max(std::fabs(dir.x), std::fabs(dir.y));
                for (double r : {1.0, 1.2, 1.45}) border_max = std::max(border_max, island(r * to_edge * dir).x);
            }
            for (double x : {-1.5, 1.5})
                for (double y : {-1.5, 1.5}) border_max = std::max(border_max, island(glm::dvec2(x, y)).x);
            CHECK(border_max < ip.sea_level);
            // Inside: values in [0, 1], a real island (some land, some sea), not a disc.
            int land = 0, total = 0;
            for (int y = -20; y <= 20; ++y)
                for (int x = -20; x <= 20; ++x) {
                    const glm::dvec2 p(x / 20.0, y / 20.0);
                    if (glm::length(p) >= 1) continue;
                    const double h = island(p).x;
                    CHECK(h >= 0.0);
                    CHECK(h <= 1.0);
                    land += h > ip.sea_level;
                    ++total;
                }
            CHECK(land > total / 10);
            CHECK(land < total * 95 / 100);
        }
    }
}

TEST_CASE("island recipe gradient is exact away from its clamps", "[island][recipe]") {
    const gorge::island_params<double> ip;
    const std::uint32_t seed = 5;
    const auto island = gorge::island_height_field(ip, seed);
    const double margin = 1e-4;
    const auto r = check_gradient(island, [&](glm::dvec2 p) {
        const double e = recipe_before_clamp(ip, seed, p);
        const double len = glm::length(p);
        return std::fabs(e) < margin || std::fabs(e - 1) < margin || len < margin || std::fabs(len - 1) < margin;
    }, 6, -1.3, 1.3, 1200);
    CHECK(r.checked >= 1000);
    CHECK(r.worst < 1e-6);
    // The rebuilt stage really is the recipe's: away from clamps and inside the radius, the
    // island is mix(e^k, 1 - |p|, amount).
    const glm::dvec2 p(0.21, -0.33);
    const double e = recipe_before_clamp(ip, seed, p);
    REQUIRE(e > 0.0);
    REQUIRE(e < 1.0);
    const double expected = (1 - ip.falloff.amount) * std::pow(e, ip.exponent) + ip.falloff.amount * (1 - glm::length(p));
    CHECK(island(p).x == Approx(expected).margin(1e-12));
}

TEST_CASE("moisture is a second, independent field of the same seed", "[island][recipe]") {
    const gorge::island_params<double> ip;
    const auto height = gorge::island_height_field(ip, 7u);
    const auto moisture = gorge::island_moisture_field(ip, 7u);
    const auto moisture_other = gorge::island_moisture_field(ip, 8u);
    // Correlation of moisture with the un-shaped terrain noise over a grid: near zero.
    const gorge::fractal_sum_field<double> terrain(ip.terrain, gorge::derive_seed(7u, gorge::island_stream::height));
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    int n = 0, differ = 0;
    for (int y = 0; y < 60; ++y)
        for (int x = 0; x < 60; ++x) {
            const glm::dvec2 p(x / 10.0 - 3, y / 10.0 - 3);
            const double a = terrain(p).x, m = moisture(p).x;
            CHECK(m >= 0.0);
            CHECK(m <= 1.0);
            sx += a, sy += m, sxx += a * a, syy += m * m, sxy += a * m, ++n;
            differ += m != moisture_other(p).x;
            CHECK(moisture(p) == gorge::island_moisture_field(ip, 7u)(p));
            (void)height;
        }
    const double cov = sxy / n - sx / n * sy / n;
    const double corr = cov / std::sqrt((sxx / n - sx / n * sx / n) * (syy / n - sy / n * sy / n));
    INFO("correlation " << corr);
    CHECK(std::fabs(corr) < 0.15);
    CHECK(differ > n * 9 / 10);
}

TEST_CASE("island recipe instantiates for float and agrees with double", "[island][types]") {
    const gorge::island_params<float> ipf;
    const gorge::island_params<double> ipd;
    const auto hf = gorge::island_height_field(ipf, 2u);
    const auto hd = gorge::island_height_field(ipd, 2u);
    const auto mf = gorge::island_moisture_field(ipf, 2u);
    const auto md = gorge::island_moisture_field(ipd, 2u);
    double worst = 0;
    for (int y = -15; y <= 15; ++y)
        for (int x = -15; x <= 15; ++x) {
            const glm::vec2 p(float(x) / 12.0f, float(y) / 12.0f);
            worst = std::max(worst, std::fabs(double(hf(p).x) - hd(glm::dvec2(p)).x));
            worst = std::max(worst, std::fabs(double(mf(p).x) - md(glm::dvec2(p)).x));
        }
    CHECK(worst < 1e-4);
}

TEST_CASE("island parameters are validated by name", "[island][validation]") {
    const gorge::island_params<double> ok;
    CHECK_NOTHROW(ok.validate());
    CHECK(ok.first_invalid() == nullptr);
    auto p = ok;
    p.contrast = 0;
    expect_throw_naming([&] { p.validate(); }, "contrast");
    p = ok, p.exponent = -1;
    expect_throw_naming([&] { p.validate(); }, "exponent");
    p = ok, p.sea_level = 1.5;
    expect_throw_naming([&] { p.validate(); }, "sea_level");
    p = ok, p.terrain.octaves = 50;
    expect_throw_naming([&] { p.validate(); }, "terrain.octaves");
    p = ok, p.warp_noise.frequency = NAN;
    expect_throw_naming([&] { p.validate(); }, "warp_noise.frequency");
    p = ok, p.warp.iterations = 99;
    expect_throw_naming([&] { p.validate(); }, "warp.iterations");
    p = ok, p.moisture.gain = INFINITY;
    expect_throw_naming([&] { p.validate(); }, "moisture.gain");
    p = ok, p.falloff.radius = 0;
    expect_throw_naming([&] { p.validate(); }, "falloff.radius");
    p = ok, p.falloff.amount = 1.2;
    expect_throw_naming([&] { (void)gorge::island_height_field(p, 0u); }, "falloff.amount");
    p = ok, p.falloff.centre.x = NAN;
    expect_throw_naming([&] { (void)gorge::island_moisture_field(p, 0u); }, "falloff.centre");

    gorge::falloff_params<float> fp;
    fp.shape = static_cast<gorge::falloff_shape>(7);
    expect_throw_naming([&] { fp.validate(); }, "shape");
    fp = {};
    fp.radius = -1;
    expect_throw_naming([&] { (void)gorge::island_falloff([](auto q) { return glm::vec<3, decltype(q.x)>(0); }, fp); },
                        "radius");
}

TEST_CASE("the recipe written out with combinators is island_height_field", "[island][recipe]") {
    // The README's few-line version of the recipe, with the seeds derived as documented.
    using namespace gorge;
    const std::uint32_t seed = 12;
    const fractal_sum_field terrain(fbm_params<float>{2, 6, 2, 0.5f}, derive_seed(seed, island_stream::height));
    const fractal_sum_field warp_x(fbm_params<float>{1.5f, 4, 2, 0.5f}, derive_seed(seed, island_stream::warp_x));
    const fractal_sum_field warp_y(fbm_params<float>{1.5f, 4, 2, 0.5f}, derive_seed(seed, island_stream::warp_y));
    const auto e = clamped(offset(scale(warp(terrain, warp_x, warp_y, 0.35f), 1.5f), 0.5f), 0.0f, 1.0f);
    const auto island = island_falloff(redistribute(e, 1.8f), falloff_params<float>{});

    const auto packaged = island_height_field(island_params<float>{}, seed);
    for (int y = -10; y <= 10; ++y)
        for (int x = -10; x <= 10; ++x) {
            const glm::vec2 p(float(x) / 8.0f, float(y) / 8.0f);
            CHECK(island(p) == packaged(p));
        }
}

namespace {

/// k |e|^(k - 1) from long double logarithms: the slope power_profile must give, independently
/// of the formula it uses (inf where it exceeds every finite double).
long double exact_power_slope(long double e, long double k) {
    return std::exp(std::log(k) + (k - 1) * std::log(std::fabs(e)));
}

template <class T>
void check_power_profile_finite() {
    using limits = std::numeric_limits<T>;
    const T big = limits::max();
    // Exponents below 1 have an infinite slope at 0; at subnormal e it overflowed before.
    const T exponents[] = {T(0.9), T(0.5), T(0.1), T(0.01), T(1e-6), limits::min(), limits::denorm_min(), T(1),
                           T(1.8), T(3), T(1e3)};
    const T inputs[] = {limits::denorm_min(),     T(3) * limits::denorm_min(), limits::min() / T(1024),
                        limits::min() / T(2),     limits::min(),               T(1e-30),
                        T(0.25),                  T(1),                        T(1e10),
                        T(1e30),                  big};
    for (T k : exponents) {
        const gorge::power_profile<T> g{k};
        T previous_slope = big;  // the slope falls with |e| for k < 1, so starts at most at max
        for (T a : inputs) {
            for (T e : {a, -a}) {
                const glm::vec<2, T> r = g(e);
                INFO("exponent " << k << ", e " << e << ": value " << r.x << ", slope " << r.y);
                REQUIRE(std::isfinite(r.x));
                REQUIRE(std::isfinite(r.y));
                // Exact, or saturated at max where the exact value is not finite.
                const long double want_value = std::pow(static_cast<long double>(a), static_cast<long double>(k));
                const long double want_slope = exact_power_slope(a, k);
                if (want_value > static_cast<long double>(big))
                    CHECK(std::fabs(r.x) == big);
                else
                    CHECK(static_cast<long double>(std::fabs(r.x)) ==
                          Approx(static_cast<double>(want_value)).epsilon(1e-5).margin(double(limits::min())));
                CHECK((e < T(0) ? r.x <= T(0) : r.x >= T(0)));  // odd (|e|^k may underflow to 0)
                if (want_slope > static_cast<long double>(big))
                    CHECK(r.y == big);
                else
                    CHECK(static_cast<double>(r.y) ==
                          Approx(static_cast<double>(want_slope)).epsilon(1e-5).margin(double(limits::min())));
            }
            if (k < T(1)) {
                CHECK(g(a).y <= previous_slope);
                previous_slope = g(a).y;
            }
        }
    }
}

}  // namespace

TEST_CASE("redistribution stays finite at subnormal and huge inputs", "[island][profile][finite]") {
    SECTION("float") { check_power_profile_finite<float>(); }
    SECTION("double") { check_power_profile_finite<double>(); }
    // The reported case: k < 1 at a subnormal input overflowed the slope k e^(k - 1).
    CHECK(std::isfinite(gorge::power_profile<float>{0.01f}(1e-45f).y));
    CHECK(std::isfinite(gorge::power_profile<double>{0.001}(5e-324).y));
}

TEST_CASE("island parameters whose gradients overflow are rejected by name", "[island][validation][finite]") {
    const gorge::island_params<float> ok;
    REQUIRE(ok.first_invalid() == nullptr);
    // Each of these gave infinite or NaN gradients (found by the fuzz test in test_finite.cpp).
    auto p = ok;
    p.warp.strength = 1e30f;  // the warp's Jacobian overflows
    expect_throw_naming([&] { p.validate(); }, "warp.strength");
    p = ok, p.warp.strength = 1e3f, p.warp.iterations = 16;  // (1 + 2 * 1e3 * G)^16
    expect_throw_naming([&] { p.validate(); }, "warp.strength");
    p = ok, p.terrain.frequency = 839483.7f, p.terrain.gain = -820.7f, p.contrast = 5.78e7f;
    expect_throw_naming([&] { p.validate(); }, "contrast");
    p = ok, p.contrast = 1e33f;  // also the moisture's gradient
    p.terrain.octaves = 0;
    expect_throw_naming([&] { p.validate(); }, "contrast");
    p = ok, p.exponent = 1e36f;  // slope exponent e^(exponent - 1) up to exponent
    expect_throw_naming([&] { p.validate(); }, "exponent");
    // Below 1 the slope near e = 0 is far steeper than the exponent itself.
    p = ok, p.contrast = 1e20f;
    REQUIRE(p.first_invalid() == nullptr);
    p.exponent = 0.5f;
    expect_throw_naming([&] { p.validate(); }, "exponent");
    // A warp noise without octaves is 0: any finite strength is fine.
    p = ok, p.warp_noise.octaves = 0, p.warp.strength = 3e38f, p.warp.iterations = 16;
    CHECK(p.first_invalid() == nullptr);

    gorge::falloff_params<float> fp;
    fp.radius = 1e-35f;  // 1 / radius above max / 2^20
    expect_throw_naming([&] { fp.validate(); }, "radius");
    p = ok, p.falloff.radius = 1e-45f;  // 1 / radius is inf
    expect_throw_naming([&] { p.validate(); }, "falloff.radius");
    fp.radius = 1e-32f;
    CHECK(fp.first_invalid() == nullptr);
}

TEST_CASE("falloff far from a small island stays finite", "[island][finite]") {
    // n = (p - centre) / radius overflowed to infinity and the distance's 0 gradient times it was NaN.
    const auto flat = [](auto q) {
        using T = decltype(q.x);
        return glm::vec<3, T>(T(0.4), T(0.2), T(-0.1));
    };
    for (gorge::falloff_shape shape : {gorge::falloff_shape::radial, gorge::falloff_shape::square_bump}) {
        gorge::falloff_params<double> fp;
        fp.radius = 1e-290;
        fp.shape = shape;
        const auto f = gorge::island_falloff(flat, fp);
        for (const glm::dvec2 p : {glm::dvec2(1e300, 0.0), glm::dvec2(-1.7e308, 1.7e308), glm::dvec2(0.0, -1e20)}) {
            const glm::dvec3 v = f(p);
            INFO("shape " << int(shape) << ", p (" << p.x << ", " << p.y << ")");
            // Outside the island: d = 1 with gradient 0, so (1 - amount) e.
            CHECK(v.x == Approx(0.25 * 0.4));
            CHECK(v.y == Approx(0.25 * 0.2));
            CHECK(v.z == Approx(0.25 * -0.1));
        }
    }
    gorge::falloff_params<float> fp;
    fp.centre = glm::vec2(-3e38f, 0.0f);  // p - centre overflows float
    const glm::vec3 v = gorge::island_falloff(flat, fp)(glm::vec2(3e38f, 0.0f));
    CHECK(v.x == Approx(0.25f * 0.4f));
    CHECK(v.y == Approx(0.25f * 0.2f));
}
