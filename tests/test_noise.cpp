// Gradient noise and fBm: analytic derivatives against central finite differences (double),
// continuity across lattice lines, seeds, and fbm_params validation.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gorge/gorge.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"

namespace {

// Central differences with step h have truncation error ~ h^2 |f'''| / 6 and rounding error
// ~ eps |f| / h. For a single octave h = 1e-5 balances them near 1e-10; f''' grows with the cube
// of the frequency, so fractal sums with octaves near frequency 70 use h = 1e-6.
constexpr double fd_step_single = 1e-5;
constexpr double fd_step_fractal = 1e-6;

template <class F>
glm::dvec2 central_difference(F&& f, glm::dvec2 p, double fd_step) {
    const double dx = (f(p + glm::dvec2(fd_step, 0)).x - f(p - glm::dvec2(fd_step, 0)).x) / (2 * fd_step);
    const double dy = (f(p + glm::dvec2(0, fd_step)).x - f(p - glm::dvec2(0, fd_step)).x) / (2 * fd_step);
    return {dx, dy};
}

template <class F>
double worst_gradient_error(F&& f, std::uint32_t rng_seed, double extent, int points,
                            double fd_step = fd_step_single) {
    std::mt19937_64 rng(rng_seed);
    std::uniform_real_distribution<double> coord(-extent, extent);
    double worst = 0.0;
    for (int i = 0; i < points; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const glm::dvec3 n = f(p);
        const glm::dvec2 fd = central_difference(f, p, fd_step);
        // Relative to the gradient's size, so steep fractal octaves are held to the same standard.
        const double scale = std::max(1.0, std::hypot(n.y, n.z));
        worst = std::max(worst, std::max(std::fabs(n.y - fd.x), std::fabs(n.z - fd.y)) / scale);
    }
    return worst;
}

}  // namespace

TEST_CASE("gradient noise derivatives match finite differences", "[noise]") {
    for (std::uint32_t seed : {0u, 7u, 123456u}) {
        const double pcg = worst_gradient_error(
            [&](glm::dvec2 p) { return gorge::gradient_noise<gorge::pcg3d_hash>(p, seed); }, seed + 1, 50.0, 1000);
        const double toy = worst_gradient_error(
            [&](glm::dvec2 p) { return gorge::gradient_noise<gorge::shadertoy_hash>(p, seed); }, seed + 2, 50.0, 1000);
        INFO("seed " << seed << ": worst pcg3d " << pcg << ", shadertoy " << toy);
        CHECK(pcg < 1e-7);
        CHECK(toy < 1e-7);
    }
}

TEST_CASE("fBm derivatives match finite differences", "[noise]") {
    gorge::fbm_params<double> fp;
    fp.frequency = 1.7;
    fp.octaves = 6;
    fp.lacunarity = 2.1;
    fp.gain = 0.5;
    const double err = worst_gradient_error([&](glm::dvec2 p) { return gorge::fbm(p, fp, 3u); }, 99, 10.0, 1000, fd_step_fractal);
    INFO("worst relative fBm gradient error " << err);
    CHECK(err < 1e-6);
    const double demo_err =
        worst_gradient_error([&](glm::dvec2 p) { return gorge::fbm(p, gorge::fbm_params<double>{}); }, 5, 3.0, 1000);
    CHECK(demo_err < 1e-7);
}

TEST_CASE("gradient noise is continuous across lattice lines", "[noise]") {
    // On both sides of x = k (and y = k) the value and gradient agree to within what the step moves.
    const double eps = 1e-9;
    for (int k = -5; k <= 5; ++k) {
        for (double t : {0.1, 0.37, 0.8}) {
            const glm::dvec3 a = gorge::gradient_noise(glm::dvec2(k - eps, t + k));
            const glm::dvec3 b = gorge::gradient_noise(glm::dvec2(k + eps, t + k));
            CHECK(std::fabs(a.x - b.x) < 1e-7);
            CHECK(std::fabs(a.y - b.y) < 1e-6);
            CHECK(std::fabs(a.z - b.z) < 1e-6);
            const glm::dvec3 c = gorge::gradient_noise(glm::dvec2(t - k, k - eps));
            const glm::dvec3 d = gorge::gradient_noise(glm::dvec2(t - k, k + eps));
            CHECK(std::fabs(c.x - d.x) < 1e-7);
            CHECK(std::fabs(c.z - d.z) < 1e-6);
        }
    }
    // At lattice points themselves the value is zero (gradient noise passes through 0 there).
    CHECK(gorge::gradient_noise(glm::dvec2(3.0, -4.0)).x == 0.0);
}

TEST_CASE("seeds select independent fields, same seed is identical", "[noise]") {
    int differ = 0;
    for (int i = 0; i < 100; ++i) {
        const glm::vec2 p(0.37f * float(i), 0.11f * float(i) - 3.0f);
        const glm::vec3 a = gorge::fbm(p, gorge::fbm_params<float>{}, 1u);
        const glm::vec3 b = gorge::fbm(p, gorge::fbm_params<float>{}, 1u);
        const glm::vec3 c = gorge::fbm(p, gorge::fbm_params<float>{}, 2u);
        REQUIRE(a == b);
        differ += (a.x != c.x);
    }
    CHECK(differ > 95);
}

TEST_CASE("fbm_params::validate names the bad parameter", "[noise][validation]") {
    const auto expect_throw = [](gorge::fbm_params<float> p, const std::string& name) {
        gorge_test::expect_throw_naming([&] { p.validate(); }, name);
    };
    gorge::fbm_params<float> ok;
    CHECK_NOTHROW(ok.validate());
    auto p = ok;
    p.frequency = 0;
    expect_throw(p, "frequency");
    p = ok;
    p.frequency = NAN;
    expect_throw(p, "frequency");
    p = ok;
    p.octaves = 33;
    expect_throw(p, "octaves");
    p = ok;
    p.octaves = -1;
    expect_throw(p, "octaves");
    p = ok;
    p.lacunarity = INFINITY;
    expect_throw(p, "lacunarity");
    p = ok;
    p.gain = NAN;
    expect_throw(p, "gain");
}
