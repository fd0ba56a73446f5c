// Base noises (gradient, value, simplex; perlin's own checks are in test_perlin.cpp): first and
// second derivatives against central finite differences (double), documented ranges, continuity
// across lattice and simplex edges, lattice values derived from the hash, seeds, and float/double
// agreement.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <type_traits>

#include <gorge/noise/fractal.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/perlin_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

#include "support/catch.hpp"
#include "support/gradient_check.hpp"

using gorge_test::check_gradient;
using gorge_test::check_hessian;

namespace {

template <class Hash>
struct bases {
    static glm::dvec3 gradient(glm::dvec2 p, std::uint32_t s) {
        const auto n = gorge::gradient_noise_d2<Hash>(p, s);
        return {n.value, n.gradient.x, n.gradient.y};
    }
    static glm::dvec3 value(glm::dvec2 p, std::uint32_t s) { return gorge::value_noise<Hash>(p, s); }
    static glm::dvec3 simplex(glm::dvec2 p, std::uint32_t s) { return gorge::simplex_noise<Hash>(p, s); }
};

// Unskewed position of the skewed simplex lattice coordinates (i, j).
glm::dvec2 unskew(double i, double j) {
    const double t = (i + j) * gorge::detail::simplex_unskew;
    return {i - t, j - t};
}

}  // namespace

TEST_CASE("value and simplex gradients match finite differences", "[noise][bases]") {
    for (std::uint32_t seed : {0u, 7u, 123456u}) {
        INFO("seed " << seed);
        const auto g = check_gradient([&](glm::dvec2 p) { return bases<gorge::pcg3d_hash>::gradient(p, seed); },
                                      seed + 1, -50, 50, 1000);
        const auto v = check_gradient([&](glm::dvec2 p) { return bases<gorge::pcg3d_hash>::value(p, seed); },
                                      seed + 2, -50, 50, 1000);
        const auto s = check_gradient([&](glm::dvec2 p) { return bases<gorge::pcg3d_hash>::simplex(p, seed); },
                                      seed + 3, -50, 50, 1000);
        const auto vt = check_gradient([&](glm::dvec2 p) { return bases<gorge::shadertoy_hash>::value(p, seed); },
                                       seed + 4, -50, 50, 1000);
        const auto st = check_gradient([&](glm::dvec2 p) { return bases<gorge::shadertoy_hash>::simplex(p, seed); },
                                       seed + 5, -50, 50, 1000);
        INFO("worst: gradient_d2 " << g.worst << ", value " << v.worst << ", simplex " << s.worst << ", value/toy "
                                   << vt.worst << ", simplex/toy " << st.worst);
        CHECK(g.worst < 1e-7);
        CHECK(v.worst < 1e-7);
        CHECK(s.worst < 1e-7);
        CHECK(vt.worst < 1e-7);
        CHECK(st.worst < 1e-7);
    }
}

TEST_CASE("Hessians match finite differences of the gradients", "[noise][bases]") {
    for (std::uint32_t seed : {0u, 99u}) {
        const auto g = check_hessian([&](glm::dvec2 p) { return gorge::gradient_noise_d2(p, seed); }, 11, -30, 30, 1000);
        const auto v = check_hessian([&](glm::dvec2 p) { return gorge::value_noise_d2(p, seed); }, 12, -30, 30, 1000);
        const auto s = check_hessian([&](glm::dvec2 p) { return gorge::simplex_noise_d2(p, seed); }, 13, -30, 30, 1000);
        INFO("seed " << seed << " worst: gradient " << g.worst << ", value " << v.worst << ", simplex " << s.worst);
        CHECK(g.worst < 1e-6);
        CHECK(v.worst < 1e-6);
        CHECK(s.worst < 1e-6);
    }
}

TEST_CASE("gradient_noise_d2 agrees with gradient_noise", "[noise][bases]") {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> coord(-100, 100);
    double worst = 0;
    for (int i = 0; i < 2000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const glm::dvec3 a = gorge::gradient_noise(p, 5u);
        const auto b = gorge::gradient_noise_d2(p, 5u);
        worst = std::max({worst, std::fabs(a.x - b.value), std::fabs(a.y - b.gradient.x), std::fabs(a.z - b.gradient.y)});
    }
    CHECK(worst < 1e-13);
}

TEST_CASE("base noises stay in their documented ranges", "[noise][bases][range]") {
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> coord(-1000, 1000);
    double g_max = 0, v_lo = 0, v_hi = 0, s_max = 0;
    for (int i = 0; i < 200000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const auto seed = static_cast<std::uint32_t>(i % 17);
        g_max = std::max(g_max, std::fabs(gorge::gradient_noise(p, seed).x));
        const double v = gorge::value_noise(p, seed).x;
        v_lo = std::min(v_lo, v);
        v_hi = std::max(v_hi, v);
        s_max = std::max(s_max, std::fabs(gorge::simplex_noise(p, seed).x));
    }
    INFO("max |gradient| " << g_max << ", value " << v_lo << ".." << v_hi << ", max |simplex| " << s_max);
    CHECK(g_max < 1.0);
    CHECK(v_lo >= -1.0);
    CHECK(v_hi < 1.0);
    CHECK(s_max < 0.998);
    // The scales are not loose: the fields use a good part of their documented range.
    CHECK(g_max > 0.4);
    CHECK(v_hi > 0.9);
    CHECK(v_lo < -0.9);
    CHECK(s_max > 0.5);
}

TEST_CASE("lattice points give the hash values", "[noise][bases]") {
    // Value noise interpolates the hash's x component; simplex noise is 0 at its lattice points
    // (only that corner is in range, and its offset is zero) with gradient (1/2)^4 * 70 * g.
    for (std::uint32_t seed : {0u, 42u}) {
        for (int i = -6; i <= 6; i += 3) {
            for (int j = -5; j <= 7; j += 4) {
                const glm::vec2 h = gorge::pcg3d_hash::hash2(i, j, seed);
                CHECK(gorge::value_noise(glm::dvec2(i, j), seed).x == double(h.x));
                const glm::dvec3 s = gorge::simplex_noise(unskew(i, j), seed);
                CHECK(std::fabs(s.x) < 1e-12);
                CHECK(s.y == Approx(4.375 * double(h.x)).margin(1e-9));
                CHECK(s.z == Approx(4.375 * double(h.y)).margin(1e-9));
            }
        }
    }
}

TEST_CASE("value noise is C2 across lattice lines", "[noise][bases][continuity]") {
    const double eps = 1e-9;
    for (int k = -4; k <= 4; ++k) {
        for (double t : {0.13, 0.5, 0.77}) {
            for (int axis = 0; axis < 2; ++axis) {
                const glm::dvec2 on = axis == 0 ? glm::dvec2(k, k + t) : glm::dvec2(t - k, k);
                const glm::dvec2 step = axis == 0 ? glm::dvec2(eps, 0) : glm::dvec2(0, eps);
                for (int which = 0; which < 2; ++which) {
                    const auto a = which == 0 ? gorge::value_noise_d2(on - step, 3u) : gorge::gradient_noise_d2(on - step, 3u);
                    const auto b = which == 0 ? gorge::value_noise_d2(on + step, 3u) : gorge::gradient_noise_d2(on + step, 3u);
                    CHECK(std::fabs(a.value - b.value) < 1e-7);
                    CHECK(std::fabs(a.gradient.x - b.gradient.x) < 1e-6);
                    CHECK(std::fabs(a.gradient.y - b.gradient.y) < 1e-6);
                    CHECK(std::fabs(a.dxx - b.dxx) < 1e-6);
                    CHECK(std::fabs(a.dxy - b.dxy) < 1e-6);
                    CHECK(std::fabs(a.dyy - b.dyy) < 1e-6);
                }
            }
        }
    }
}

TEST_CASE("simplex noise is C2 across simplex edges", "[noise][bases][continuity]") {
    // Three edge families in skewed coordinates: i = const, j = const, and the cell diagonal
    // i - j = const. Points just either side of each must agree in value, gradient and Hessian.
    const double eps = 1e-9;
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> frac(0.02, 0.98);
    std::uniform_int_distribution<int> cell(-20, 20);
    for (int n = 0; n < 300; ++n) {
        const int i = cell(rng), j = cell(rng);
        const double t = frac(rng);
        glm::dvec2 on, normal;
        switch (n % 3) {
            // The normal is perpendicular to the edge direction unskew(0, 1), unskew(1, 0) or (1, 1).
            case 0: on = unskew(i, j + t), normal = glm::dvec2(-unskew(0, 1).y, unskew(0, 1).x); break;
            case 1: on = unskew(i + t, j), normal = glm::dvec2(-unskew(1, 0).y, unskew(1, 0).x); break;
            default: on = unskew(i + t, j + t), normal = glm::dvec2(1, -1); break;
        }
        normal /= glm::length(normal);
        const auto a = gorge::simplex_noise_d2(on - eps * normal, 9u);
        const auto b = gorge::simplex_noise_d2(on + eps * normal, 9u);
        CHECK(std::fabs(a.value - b.value) < 1e-7);
        CHECK(glm::length(a.gradient - b.gradient) < 1e-6);
        CHECK(std::fabs(a.dxx - b.dxx) < 1e-5);
        CHECK(std::fabs(a.dxy - b.dxy) < 1e-5);
        CHECK(std::fabs(a.dyy - b.dyy) < 1e-5);
    }
}

TEST_CASE("base noise seeds: same seed identical, different seeds differ", "[noise][bases][seed]") {
    int value_differ = 0, simplex_differ = 0;
    for (int i = 0; i < 200; ++i) {
        const glm::vec2 p(0.37f * float(i) + 0.1f, 0.11f * float(i) - 3.3f);
        REQUIRE(gorge::value_noise(p, 1u) == gorge::value_noise(p, 1u));
        REQUIRE(gorge::simplex_noise(p, 1u) == gorge::simplex_noise(p, 1u));
        value_differ += gorge::value_noise(p, 1u).x != gorge::value_noise(p, 2u).x;
        simplex_differ += gorge::simplex_noise(p, 1u).x != gorge::simplex_noise(p, 2u).x;
    }
    CHECK(value_differ > 190);
    CHECK(simplex_differ > 190);
}

TEST_CASE("derive_seed gives distinct seeds per stream and per seed", "[noise][seed]") {
    std::set<std::uint32_t> seen;
    for (std::uint32_t seed = 0; seed < 64; ++seed)
        for (std::uint32_t stream = 0; stream < 64; ++stream) seen.insert(gorge::derive_seed(seed, stream));
    CHECK(seen.size() == 64u * 64u);
    CHECK(gorge::derive_seed(5u, 3u) == gorge::derive_seed(5u, 3u));
    CHECK(gorge::derive_seed(5u, 3u) != gorge::derive_seed(3u, 5u));
}

TEST_CASE("base noises agree in float and double", "[noise][bases][types]") {
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<float> coord(-20.0f, 20.0f);
    double worst = 0;
    for (int i = 0; i < 1000; ++i) {
        const glm::vec2 pf(coord(rng), coord(rng));
        const glm::dvec2 pd(pf);
        const glm::dvec3 diffs[] = {
            glm::dvec3(gorge::value_noise(pf, 4u)) - gorge::value_noise(pd, 4u),
            glm::dvec3(gorge::simplex_noise(pf, 4u)) - gorge::simplex_noise(pd, 4u),
        };
        for (const glm::dvec3& d : diffs) worst = std::max({worst, std::fabs(d.x), std::fabs(d.y), std::fabs(d.z)});
        const auto f2 = gorge::simplex_noise_d2(pf, 4u);
        const auto d2 = gorge::simplex_noise_d2(pd, 4u);
        worst = std::max(worst, std::fabs(double(f2.dxy) - d2.dxy) / 100.0);
    }
    CHECK(worst < 1e-4);
}

namespace {

/// Checks that Basis evaluates exactly noise(q, seed), noise_value(q, seed) and
/// noise_d2(q, seed) of its noise.
template <class Basis, class T, class Noise, class NoiseValue, class NoiseD2>
void check_basis_forwards(Noise noise, NoiseValue noise_value, NoiseD2 noise_d2) {
    STATIC_REQUIRE(Basis::bound == 1.0);
    for (int i = 0; i < 64; ++i) {
        const glm::vec<2, T> q(T(-7.3 + 0.37 * i), T(5.1 - 0.29 * i));
        const std::uint32_t seed = std::uint32_t(i) * 2654435761u;
        CHECK(Basis::template eval<T>(q, seed) == noise(q, seed));
        CHECK(Basis::template eval_value<T>(q, seed) == noise_value(q, seed));
        const gorge::noise_d2<T> got = Basis::template eval_d2<T>(q, seed), want = noise_d2(q, seed);
        CHECK(got.value == want.value);
        CHECK(got.gradient == want.gradient);
        CHECK(got.dxx == want.dxx);
        CHECK(got.dxy == want.dxy);
        CHECK(got.dyy == want.dyy);
    }
}

template <class Hash, class T>
void check_shipped_bases() {
    using V2 = glm::vec<2, T>;
    check_basis_forwards<gorge::gradient_basis<Hash>, T>(
        [](V2 q, std::uint32_t s) { return gorge::gradient_noise<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::gradient_noise_value<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::gradient_noise_d2<Hash>(q, s); });
    check_basis_forwards<gorge::value_basis<Hash>, T>(
        [](V2 q, std::uint32_t s) { return gorge::value_noise<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::value_noise_value<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::value_noise_d2<Hash>(q, s); });
    check_basis_forwards<gorge::simplex_basis<Hash>, T>(
        [](V2 q, std::uint32_t s) { return gorge::simplex_noise<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::simplex_noise_value<Hash>(q, s); },
        [](V2 q, std::uint32_t s) { return gorge::simplex_noise_d2<Hash>(q, s); });
}

}  // namespace

TEST_CASE("the shipped bases are noise_basis of their noise", "[noise][bases]") {
    using gorge::noise_basis;
    STATIC_REQUIRE(std::is_same<gorge::gradient_basis<>, noise_basis<gorge::detail::gradient_noise_forms>>::value);
    STATIC_REQUIRE(std::is_same<gorge::value_basis<gorge::shadertoy_hash>,
                                noise_basis<gorge::detail::value_noise_forms, gorge::shadertoy_hash>>::value);
    STATIC_REQUIRE(std::is_same<gorge::simplex_basis<>, noise_basis<gorge::detail::simplex_noise_forms>>::value);
    check_shipped_bases<gorge::pcg3d_hash, double>();
    check_shipped_bases<gorge::pcg3d_hash, float>();
    check_shipped_bases<gorge::shadertoy_hash, float>();
    // Perlin noise takes exact hashes only, prime_xor by default.
    STATIC_REQUIRE(std::is_same<gorge::perlin_basis<>,
                                noise_basis<gorge::detail::perlin_noise_forms, gorge::prime_xor_hash>>::value);
    check_basis_forwards<gorge::perlin_basis<>, float>(
        [](glm::vec2 q, std::uint32_t s) { return gorge::perlin_noise(q, s); },
        [](glm::vec2 q, std::uint32_t s) { return gorge::perlin_noise_value(q, s); },
        [](glm::vec2 q, std::uint32_t s) { return gorge::perlin_noise_d2(q, s); });
    check_basis_forwards<gorge::perlin_basis<gorge::pcg3d_hash>, double>(
        [](glm::dvec2 q, std::uint32_t s) { return gorge::perlin_noise<gorge::pcg3d_hash>(q, s); },
        [](glm::dvec2 q, std::uint32_t s) { return gorge::perlin_noise_value<gorge::pcg3d_hash>(q, s); },
        [](glm::dvec2 q, std::uint32_t s) { return gorge::perlin_noise_d2<gorge::pcg3d_hash>(q, s); });
}
