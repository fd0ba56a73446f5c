// Field combinators: exact gradients against central finite differences (double) for arithmetic,
// domain transforms, warps, clamps and profiles; identities they must satisfy; validation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gorge/noise/fractal.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/gradient_check.hpp"

using gorge_test::check_gradient;

namespace {

gorge::fbm_params<double> small_fbm(double frequency) { return {frequency, 4, 2.0, 0.5}; }

const gorge::fractal_sum_field<double> a_field(small_fbm(1.3), 1u);
const gorge::fractal_sum_field<double, gorge::simplex_basis<>> b_field(small_fbm(0.9), 2u);
const gorge::damped_fbm_field<double, gorge::simplex_basis<>> c_field(gorge::damped_fbm_params<double>{}, 3u);

template <class F>
void expect_exact_gradient(const F& f, const char* what, std::uint64_t rng_seed, double bound = 1e-7) {
    const auto r = check_gradient(f, rng_seed, -6, 6, 1000);
    INFO(what << ": worst " << r.worst);
    CHECK(r.worst < bound);
}

using gorge_test::expect_throw_naming;

}  // namespace

TEST_CASE("arithmetic combinators keep gradients exact", "[field]") {
    expect_exact_gradient(gorge::sum(a_field, b_field), "sum", 1);
    expect_exact_gradient(gorge::product(a_field, b_field), "product", 2);
    expect_exact_gradient(gorge::scale(c_field, 2.5), "scale", 3);
    expect_exact_gradient(gorge::offset(a_field, -0.3), "offset", 4);
    expect_exact_gradient(gorge::product(gorge::sum(a_field, c_field), gorge::scale(b_field, -1.5)), "nested", 5);
}

TEST_CASE("arithmetic combinators compute what they say", "[field]") {
    std::mt19937_64 rng(6);
    std::uniform_real_distribution<double> coord(-6, 6);
    const auto s = gorge::sum(a_field, b_field);
    const auto m = gorge::product(a_field, b_field);
    const auto k = gorge::scale(a_field, 2.5);
    const auto o = gorge::offset(a_field, -0.3);
    for (int i = 0; i < 100; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const glm::dvec3 a = a_field(p), b = b_field(p);
        CHECK(s(p) == a + b);
        CHECK(m(p).x == a.x * b.x);
        CHECK(k(p) == a * 2.5);
        CHECK(o(p) == glm::dvec3(a.x - 0.3, a.y, a.z));
    }
}

TEST_CASE("domain transforms apply the transposed Jacobian", "[field]") {
    const double angle = 0.6;
    const glm::dmat2 rotate_scale(1.7 * std::cos(angle), 1.7 * std::sin(angle), -1.7 * std::sin(angle), 1.7 * std::cos(angle));
    const glm::dmat2 shear(1.0, 0.0, 0.8, 1.2);
    expect_exact_gradient(gorge::transform(a_field, rotate_scale, glm::dvec2(3.0, -1.0)), "rotate+scale", 7);
    expect_exact_gradient(gorge::transform(b_field, shear), "shear", 8);
    expect_exact_gradient(gorge::transform(c_field, 3.0, glm::dvec2(0.25, 0.5)), "uniform scale", 9);
    // Uniform scale k: value f(k p + t).
    const auto t = gorge::transform(a_field, 3.0, glm::dvec2(0.25, 0.5));
    CHECK(t(glm::dvec2(0.4, -0.2)).x == a_field(glm::dvec2(3.0 * 0.4 + 0.25, 3.0 * -0.2 + 0.5)).x);
}

TEST_CASE("domain warps keep gradients exact, one and several iterations", "[field][warp]") {
    for (int iterations : {1, 2, 3}) {
        for (double strength : {0.3, 0.8}) {
            INFO("iterations " << iterations << ", strength " << strength);
            gorge::warp_params<double> wp;
            wp.strength = strength;
            wp.iterations = iterations;
            // Alternate which field is warped and which warp, so each plays every role.
            if (iterations == 2)
                expect_exact_gradient(gorge::warp(c_field, a_field, b_field, wp), "warp", 20 + std::uint64_t(iterations), 1e-6);
            else
                expect_exact_gradient(gorge::warp(a_field, b_field, c_field, wp), "warp", 10 + std::uint64_t(iterations), 1e-6);
        }
    }
}

TEST_CASE("domain warps compute the documented points", "[field][warp]") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> coord(-6, 6);
    gorge::warp_params<double> two;
    two.strength = 0.8;
    two.iterations = 2;
    gorge::warp_params<double> none = two;
    none.iterations = 0;
    const auto w2 = gorge::warp(a_field, b_field, c_field, two);
    const auto w0 = gorge::warp(a_field, b_field, c_field, none);
    const auto still = gorge::warp(a_field, b_field, c_field, 0.0);
    for (int i = 0; i < 100; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        // p1 = p + s w(p), p2 = p + s w(p1): Quilez's nested warp.
        const glm::dvec2 p1 = p + 0.8 * glm::dvec2(b_field(p).x, c_field(p).x);
        const glm::dvec2 p2 = p + 0.8 * glm::dvec2(b_field(p1).x, c_field(p1).x);
        CHECK(w2(p).x == Approx(a_field(p2).x).margin(1e-14));
        CHECK(w0(p) == a_field(p));
        CHECK(still(p) == a_field(p));
    }
}

TEST_CASE("clamped: exact inside, zero gradient where the clamp acts", "[field]") {
    const auto c = gorge::clamped(a_field, -0.2, 0.3);
    const double margin = 1e-4;
    const auto r = check_gradient(
        c, [&](glm::dvec2 p) { const double v = a_field(p).x; return std::fabs(v + 0.2) < margin || std::fabs(v - 0.3) < margin; },
        12, -6, 6, 1100);
    CHECK(r.checked >= 1000);
    CHECK(r.worst < 1e-7);
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> coord(-6, 6);
    int clamped_points = 0;
    for (int i = 0; i < 2000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const glm::dvec3 v = c(p);
        CHECK(v.x >= -0.2);
        CHECK(v.x <= 0.3);
        if (v.x == -0.2 || v.x == 0.3) {
            ++clamped_points;
            CHECK(v.y == 0.0);
            CHECK(v.z == 0.0);
        }
    }
    CHECK(clamped_points > 100);  // the test exercises the clamp
}

TEST_CASE("redistribution: odd power with exact gradient", "[field][profile]") {
    for (double k : {0.5, 1.0, 1.8, 3.0}) {
        INFO("exponent " << k);
        const auto f = gorge::redistribute(a_field, k);
        const auto r = check_gradient(f, [&](glm::dvec2 p) { return k < 1 && std::fabs(a_field(p).x) < 1e-3; }, 14, -6, 6, 1100);
        CHECK(r.checked >= 1000);
        CHECK(r.worst < 1e-6);
        const gorge::power_profile<double> g{k};
        for (double e : {0.0, 0.1, 0.5, 1.0}) {
            CHECK(g(e).x == Approx(std::pow(e, k)).margin(1e-15));
            CHECK(g(-e).x == -g(e).x);  // odd, so defined below zero
        }
        CHECK(std::isfinite(g(0.0).y));  // no infinity or NaN at 0, even for k < 1
    }
}

TEST_CASE("terraces: C1 staircase through the tread edges", "[field][profile]") {
    for (double ramp : {0.25, 1.0}) {
        INFO("ramp " << ramp);
        const auto f = gorge::terrace(a_field, 5.0, ramp);
        const auto r = check_gradient(f, 15, -6, 6, 1000);
        CHECK(r.worst < 1e-6);
        const gorge::terrace_profile<double> g{5.0, ramp};
        for (int i = -5; i <= 5; ++i) CHECK(g(i / 5.0).x == Approx(i / 5.0).margin(1e-12));
        // Monotonic, flat on the treads, continuous slope at the tread edges.
        double previous = g(-1.0).x;
        for (int i = 1; i <= 2000; ++i) {
            const double e = -1.0 + i * 1e-3;
            const double v = g(e).x;
            CHECK(v >= previous - 1e-15);
            previous = v;
        }
        CHECK(g(0.2 + 1e-9).y == Approx(0.0).margin(1e-6));
        CHECK(g(0.2 - 1e-9).y == Approx(0.0).margin(1e-6));
    }
}

TEST_CASE("combinators instantiate for float and agree with double", "[field][types]") {
    const gorge::fractal_sum_field<float> af(gorge::fbm_params<float>{1.3f, 4, 2.0f, 0.5f}, 1u);
    const gorge::fractal_sum_field<float, gorge::simplex_basis<>> bf(gorge::fbm_params<float>{0.9f, 4, 2.0f, 0.5f}, 2u);
    const auto ff = gorge::terrace(gorge::redistribute(gorge::warp(gorge::sum(af, gorge::scale(bf, 0.5f)), af, bf, 0.5f), 1.5f), 4.0f, 1.0f);
    const auto fd = gorge::terrace(gorge::redistribute(gorge::warp(gorge::sum(a_field, gorge::scale(b_field, 0.5)), a_field, b_field, 0.5), 1.5), 4.0, 1.0);
    std::mt19937_64 rng(16);
    std::uniform_real_distribution<float> coord(-6.0f, 6.0f);
    double worst = 0;
    for (int i = 0; i < 500; ++i) {
        const glm::vec2 p(coord(rng), coord(rng));
        // The float-parameter field evaluated in float and in double, and the double field.
        worst = std::max(worst, std::fabs(double(ff(p).x) - fd(glm::dvec2(p)).x));
        worst = std::max(worst, std::fabs(ff(glm::dvec2(p)).x - fd(glm::dvec2(p)).x));
    }
    CHECK(worst < 1e-4);
}

TEST_CASE("combinator parameters are validated by name", "[field][validation]") {
    gorge::warp_params<float> wp;
    CHECK_NOTHROW(wp.validate());
    wp.strength = NAN;
    expect_throw_naming([&] { wp.validate(); }, "strength");
    wp = {};
    wp.iterations = 17;
    expect_throw_naming([&] { wp.validate(); }, "iterations");
    wp.iterations = -1;
    expect_throw_naming([&] { (void)gorge::warp(a_field, a_field, a_field, gorge::warp_params<double>{0.5, -1}); }, "iterations");
    expect_throw_naming([&] { (void)gorge::clamped(a_field, double(NAN), 1.0); }, "lo");
    expect_throw_naming([&] { (void)gorge::clamped(a_field, 1.0, 0.0); }, "hi");
    expect_throw_naming([&] { (void)gorge::redistribute(a_field, 0.0); }, "exponent");
    expect_throw_naming([&] { (void)gorge::redistribute(a_field, INFINITY); }, "exponent");
    expect_throw_naming([&] { (void)gorge::terrace(a_field, -3.0, 0.5); }, "steps");
    expect_throw_naming([&] { (void)gorge::terrace(a_field, 3.0, 0.0); }, "ramp");
    expect_throw_naming([&] { (void)gorge::terrace(a_field, 3.0, 1.5); }, "ramp");
    expect_throw_naming([&] { (void)gorge::fractal_sum_field<double>(gorge::fbm_params<double>{0.0, 4, 2.0, 0.5}); }, "frequency");
    expect_throw_naming([&] { (void)gorge::billow_field<double>(gorge::fbm_params<double>{1.0, 99, 2.0, 0.5}); }, "octaves");
    gorge::ridged_params<double> rp;
    rp.feedback = -1;
    expect_throw_naming([&] { (void)gorge::ridged_field<double>(rp); }, "feedback");
    gorge::damped_fbm_params<double> dp;
    dp.damping = NAN;
    expect_throw_naming([&] { (void)gorge::damped_fbm_field<double>(dp); }, "damping");
}

namespace {

/// f (a field or a lambda of a dvec2) at a few points, exact values.
template <class F>
std::vector<glm::dvec3> samples_of(const F& f) {
    std::vector<glm::dvec3> out;
    for (int i = 0; i < 16; ++i) out.push_back(f(glm::dvec2(-3.7 + 0.61 * i, 2.9 - 0.43 * i)));
    return out;
}

}  // namespace

TEST_CASE("the four fractal fields are fractal_field of their kind", "[field][fractal_field]") {
    using gorge::fractal_field;
    using gorge::fractal_kind;
    using simplex = gorge::simplex_basis<>;
    STATIC_REQUIRE(std::is_base_of<fractal_field<fractal_kind::sum, float>, gorge::fractal_sum_field<float>>::value);
    STATIC_REQUIRE(std::is_base_of<fractal_field<fractal_kind::billow, double, simplex>,
                                   gorge::billow_field<double, simplex>>::value);
    STATIC_REQUIRE(std::is_base_of<fractal_field<fractal_kind::ridged, double>, gorge::ridged_field<double>>::value);
    STATIC_REQUIRE(std::is_base_of<fractal_field<fractal_kind::damped, float>, gorge::damped_fbm_field<float>>::value);
    STATIC_REQUIRE(std::is_same<fractal_field<fractal_kind::ridged, float>::params_type, gorge::ridged_params<float>>::value);
    STATIC_REQUIRE(std::is_same<fractal_field<fractal_kind::damped, double>::params_type,
                                gorge::damped_fbm_params<double>>::value);

    // Each evaluates exactly its fractal function, with its seed.
    const gorge::fbm_params<double> fp = small_fbm(1.1);
    const gorge::ridged_params<double> rp{};
    const gorge::damped_fbm_params<double> dp{};
    CHECK(samples_of(gorge::fractal_sum_field<double, simplex>(fp, 9u)) ==
          samples_of([&](glm::dvec2 p) { return gorge::fractal_sum<simplex>(p, fp, 9u); }));
    CHECK(samples_of(gorge::billow_field<double>(fp, 9u)) ==
          samples_of([&](glm::dvec2 p) { return gorge::billow(p, fp, 9u); }));
    CHECK(samples_of(gorge::ridged_field<double>(rp, 9u)) ==
          samples_of([&](glm::dvec2 p) { return gorge::ridged(p, rp, 9u); }));
    CHECK(samples_of(gorge::damped_fbm_field<double>(dp, 9u)) ==
          samples_of([&](glm::dvec2 p) { return gorge::damped_fbm(p, dp, 9u); }));
    CHECK(samples_of(fractal_field<fractal_kind::billow, double>(fp, 9u)) ==
          samples_of(gorge::billow_field<double>(fp, 9u)));
    // Seed 0 by default, and the seed matters.
    CHECK(samples_of(gorge::ridged_field<double>(rp)) == samples_of(gorge::ridged_field<double>(rp, 0u)));
    CHECK(samples_of(gorge::ridged_field<double>(rp, 1u)) != samples_of(gorge::ridged_field<double>(rp, 0u)));
}

TEST_CASE("fractal fields deduce their scalar type from the parameters", "[field][fractal_field]") {
    const gorge::fractal_sum_field a(gorge::fbm_params<float>{2, 6, 2, 0.5f}, 3u);
    const gorge::billow_field b(gorge::fbm_params<double>{});
    const gorge::ridged_field c(gorge::ridged_params<float>{}, 1u);
    const gorge::damped_fbm_field d(gorge::damped_fbm_params<double>{});
    STATIC_REQUIRE(std::is_same<decltype(a), const gorge::fractal_sum_field<float>>::value);
    STATIC_REQUIRE(std::is_same<decltype(b), const gorge::billow_field<double>>::value);
    STATIC_REQUIRE(std::is_same<decltype(c), const gorge::ridged_field<float>>::value);
    STATIC_REQUIRE(std::is_same<decltype(d), const gorge::damped_fbm_field<double>>::value);
    CHECK(a.seed == 3u);
    CHECK(b.seed == 0u);
    CHECK(c.params.octaves == gorge::ridged_params<float>{}.octaves);
    CHECK(std::isfinite(d(glm::dvec2(0.3, 0.4)).x));
}

TEST_CASE("warp_params reports through the common invalid_parameter rule", "[field][validation]") {
    gorge::warp_params<double> wp;
    CHECK(wp.first_invalid() == nullptr);
    wp.iterations = gorge::warp_params<double>::max_iterations;
    CHECK(wp.first_invalid() == nullptr);
    wp.iterations = gorge::warp_params<double>::max_iterations + 1;
    const gorge::invalid_parameter bad = wp.first_invalid();
    CHECK(bad != nullptr);
    CHECK(bad.to_string() == "iterations (must be in 0..16)");
    CHECK(gorge_test::invalid_argument_message([&] { wp.validate(); }) ==
          "gorge::warp_params: invalid iterations (must be in 0..16)");
}
