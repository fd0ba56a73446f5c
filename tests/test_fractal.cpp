// Fractals (fractal_sum, billow, ridged, damped_fbm) over every basis: gradients against central
// finite differences (double) away from the documented kinks, the documented formulas and ranges,
// seeds, float/double agreement and parameter validation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <gorge/noise/fractal.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

#include "support/catch.hpp"
#include "support/gradient_check.hpp"

using gorge_test::check_gradient;

namespace {

gorge::fbm_params<double> test_fbm() {
    gorge::fbm_params<double> p;
    p.frequency = 1.7;
    p.octaves = 6;
    p.lacunarity = 2.1;
    p.gain = 0.5;
    return p;
}

// The smallest |basis value| over the octaves at p: billow and ridged have a kink where it is 0.
// The margin a point needs grows with the octave's frequency (the value moves faster there).
template <class Basis, class Params>
bool near_abs_kink(glm::dvec2 p, const Params& params, std::uint32_t seed) {
    double freq = params.frequency;
    for (int o = 0; o < params.octaves; ++o) {
        const double v = Basis::template eval<double>(p * freq, gorge::derive_seed(seed, std::uint32_t(o))).x;
        if (std::fabs(v) < 1e-4 * freq) return true;
        freq *= params.lacunarity;
    }
    return false;
}

// ridged's other kink: where an octave's gated signal crosses 1 (the weight clamp). Follows the
// documented recurrence only to find where the clamp switches.
template <class Basis>
bool near_ridged_kink(glm::dvec2 p, const gorge::ridged_params<double>& params, std::uint32_t seed) {
    if (near_abs_kink<Basis>(p, params, seed)) return true;
    double freq = params.frequency, weight = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        const double v = Basis::template eval<double>(p * freq, gorge::derive_seed(seed, std::uint32_t(o))).x;
        const double ridge = params.offset - std::fabs(v);
        const double gated = ridge * ridge * weight * params.feedback;
        if (std::fabs(gated - 1.0) < 1e-4 * freq) return true;
        weight = std::min(gated, 1.0);
        freq *= params.lacunarity;
    }
    return false;
}

// damped_fbm is C1 with second derivatives that jump across the lattice lines of the gradient and
// value bases (C2 but not C3); a difference stencil straddling such a line measures that jump, not
// a gradient error. Simplex noise is C3, so nothing is excluded for it.
template <class Basis>
bool stencil_straddles_lattice(glm::dvec2 p, double frequency, double lacunarity, int octaves) {
    if (std::is_same<Basis, gorge::simplex_basis<>>::value) return false;
    double freq = frequency;
    for (int o = 0; o < octaves; ++o) {
        const glm::dvec2 q = p * freq;
        const double margin = 3 * gorge_test::fd_step * freq;
        if (std::fabs(q.x - std::round(q.x)) < margin || std::fabs(q.y - std::round(q.y)) < margin) return true;
        freq *= lacunarity;
    }
    return false;
}

template <class Basis>
void check_fractals_for_basis(const char* name, double bound) {
    INFO("basis " << name);
    const auto fp = test_fbm();
    const std::uint32_t seed = 3;
    const auto sum = check_gradient([&](glm::dvec2 p) { return gorge::fractal_sum<Basis>(p, fp, seed); }, 1, -10, 10, 1000);
    INFO("fractal_sum worst " << sum.worst);
    CHECK(sum.worst < 1e-6);

    const auto bil = check_gradient([&](glm::dvec2 p) { return gorge::billow<Basis>(p, fp, seed); },
                                    [&](glm::dvec2 p) { return near_abs_kink<Basis>(p, fp, seed); }, 2, -10, 10, 1300);
    INFO("billow worst " << bil.worst << " over " << bil.checked << " points");
    CHECK(bil.checked >= 1000);
    CHECK(bil.worst < 1e-6);

    gorge::ridged_params<double> rp;
    rp.frequency = 1.3;
    for (double feedback : {2.0, 0.7}) {
        rp.feedback = feedback;
        rp.offset = feedback > 1 ? 1.0 : 0.8;
        const auto rid = check_gradient([&](glm::dvec2 p) { return gorge::ridged<Basis>(p, rp, seed); },
                                        [&](glm::dvec2 p) { return near_ridged_kink<Basis>(p, rp, seed); }, 3, -10, 10, 1300);
        INFO("ridged (feedback " << feedback << ") worst " << rid.worst << " over " << rid.checked << " points");
        CHECK(rid.checked >= 1000);
        CHECK(rid.worst < 1e-6);
    }

    gorge::damped_fbm_params<double> dp;
    dp.frequency = 1.1;
    for (double damping : {1.0, 4.0}) {
        dp.damping = damping;
        const auto dmp = check_gradient(
            [&](glm::dvec2 p) { return gorge::damped_fbm<Basis>(p, dp, seed); },
            [&](glm::dvec2 p) { return stencil_straddles_lattice<Basis>(p, dp.frequency, dp.lacunarity, dp.octaves); },
            4, -10, 10, 1100);
        CHECK(dmp.checked >= 1000);
        INFO("damped_fbm (damping " << damping << ") worst " << dmp.worst);
        CHECK(dmp.worst < 1e-6);
    }

    // Documented ranges, over many points and seeds.
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> coord(-200, 200);
    const double a = gorge::amplitude_sum(fp.octaves, fp.gain);
    const double a_r = gorge::amplitude_sum(rp.octaves, rp.gain);
    const double m_r = std::pow(std::max(rp.offset, std::fabs(rp.offset - bound)), 2.0);
    const double a_d = gorge::amplitude_sum(dp.octaves, dp.gain);
    double sum_max = 0, bil_lo = 1, bil_hi = 0, rid_lo = 1, rid_hi = 0, dmp_max = 0;
    for (int i = 0; i < 8000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const auto s = static_cast<std::uint32_t>(i % 13);
        sum_max = std::max(sum_max, std::fabs(gorge::fractal_sum<Basis>(p, fp, s).x));
        const double b = gorge::billow<Basis>(p, fp, s).x;
        bil_lo = std::min(bil_lo, b), bil_hi = std::max(bil_hi, b);
        const double r = gorge::ridged<Basis>(p, rp, s).x;
        rid_lo = std::min(rid_lo, r), rid_hi = std::max(rid_hi, r);
        dmp_max = std::max(dmp_max, std::fabs(gorge::damped_fbm<Basis>(p, dp, s).x));
    }
    INFO("sum " << sum_max << "/" << a * bound << ", billow " << bil_lo << ".." << bil_hi << ", ridged " << rid_lo
                << ".." << rid_hi << "/" << a_r * m_r << ", damped " << dmp_max << "/" << a_d * bound);
    CHECK(sum_max <= a * bound);
    CHECK(bil_lo >= 0.0);
    CHECK(bil_hi <= a * bound);
    CHECK(rid_lo >= 0.0);
    CHECK(rid_hi <= a_r * m_r);
    CHECK(dmp_max <= a_d * bound);
}

}  // namespace

TEST_CASE("fractal gradients match finite differences for every basis", "[fractal]") {
    check_fractals_for_basis<gorge::gradient_basis<>>("gradient", gorge::gradient_basis<>::bound);
    check_fractals_for_basis<gorge::value_basis<>>("value", gorge::value_basis<>::bound);
    check_fractals_for_basis<gorge::simplex_basis<>>("simplex", gorge::simplex_basis<>::bound);
}

TEST_CASE("fractal_sum is the documented octave sum with per-octave seeds", "[fractal]") {
    const auto fp = test_fbm();
    std::mt19937_64 rng(8);
    std::uniform_real_distribution<double> coord(-30, 30);
    for (int i = 0; i < 200; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        glm::dvec3 expected(0.0);
        double freq = fp.frequency, amp = 1;
        for (int o = 0; o < fp.octaves; ++o) {
            const glm::dvec3 n = gorge::simplex_noise(p * freq, gorge::derive_seed(11u, std::uint32_t(o)));
            expected += amp * glm::dvec3(n.x, freq * n.y, freq * n.z);
            freq *= fp.lacunarity;
            amp *= fp.gain;
        }
        const glm::dvec3 got = gorge::fractal_sum<gorge::simplex_basis<>>(p, fp, 11u);
        CHECK(glm::length(got - expected) < 1e-12);
    }
}

TEST_CASE("damped_fbm with zero damping is fractal_sum, damping lowers slopes", "[fractal]") {
    gorge::damped_fbm_params<double> dp;
    gorge::fbm_params<double> fp{dp.frequency, dp.octaves, dp.lacunarity, dp.gain};
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> coord(-30, 30);
    double slope_plain = 0, slope_damped = 0;
    for (int i = 0; i < 2000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        dp.damping = 0;
        const glm::dvec3 undamped = gorge::damped_fbm(p, dp, 2u);
        CHECK(glm::length(undamped - gorge::fractal_sum(p, fp, 2u)) < 1e-12);
        dp.damping = 1;
        const glm::dvec3 damped = gorge::damped_fbm(p, dp, 2u);
        slope_plain += std::hypot(undamped.y, undamped.z);
        slope_damped += std::hypot(damped.y, damped.z);
    }
    // The damping suppresses detail on slopes: the mean slope drops markedly.
    CHECK(slope_damped < 0.8 * slope_plain);
}

TEST_CASE("fractal seeds: same seed identical, different seeds differ", "[fractal][seed]") {
    const gorge::fbm_params<float> fp{1.5f, 5, 2.0f, 0.5f};
    const gorge::ridged_params<float> rp;
    const gorge::damped_fbm_params<float> dp;
    int differ[4] = {0, 0, 0, 0};
    for (int i = 0; i < 200; ++i) {
        const glm::vec2 p(0.31f * float(i) - 7.0f, 0.17f * float(i) + 0.2f);
        REQUIRE(gorge::fractal_sum(p, fp, 4u) == gorge::fractal_sum(p, fp, 4u));
        REQUIRE(gorge::billow(p, fp, 4u) == gorge::billow(p, fp, 4u));
        REQUIRE(gorge::ridged(p, rp, 4u) == gorge::ridged(p, rp, 4u));
        REQUIRE(gorge::damped_fbm(p, dp, 4u) == gorge::damped_fbm(p, dp, 4u));
        differ[0] += gorge::fractal_sum(p, fp, 4u).x != gorge::fractal_sum(p, fp, 5u).x;
        differ[1] += gorge::billow(p, fp, 4u).x != gorge::billow(p, fp, 5u).x;
        differ[2] += gorge::ridged(p, rp, 4u).x != gorge::ridged(p, rp, 5u).x;
        differ[3] += gorge::damped_fbm(p, dp, 4u).x != gorge::damped_fbm(p, dp, 5u).x;
    }
    for (int d : differ) CHECK(d > 190);
}

TEST_CASE("fractals agree in float and double", "[fractal][types]") {
    const gorge::fbm_params<float> fpf{1.5f, 5, 2.0f, 0.5f};
    const gorge::fbm_params<double> fpd{1.5, 5, 2.0, 0.5};
    const gorge::ridged_params<float> rpf;
    const gorge::ridged_params<double> rpd;
    const gorge::damped_fbm_params<float> dpf;
    const gorge::damped_fbm_params<double> dpd;
    std::mt19937_64 rng(10);
    std::uniform_real_distribution<float> coord(-8.0f, 8.0f);
    double worst_value = 0, worst_gradient = 0;
    for (int i = 0; i < 500; ++i) {
        const glm::vec2 pf(coord(rng), coord(rng));
        const glm::dvec2 pd(pf);
        // Smooth fractals: value and gradient. Billow and ridged: the value only, since a point
        // within float rounding of a crease (n = 0) may take the other side's gradient.
        const glm::dvec3 smooth[] = {
            glm::dvec3(gorge::fractal_sum<gorge::value_basis<>>(pf, fpf, 1u)) -
                gorge::fractal_sum<gorge::value_basis<>>(pd, fpd, 1u),
            glm::dvec3(gorge::damped_fbm(pf, dpf, 1u)) - gorge::damped_fbm(pd, dpd, 1u),
        };
        const double creased[] = {
            double(gorge::billow<gorge::simplex_basis<>>(pf, fpf, 1u).x) - gorge::billow<gorge::simplex_basis<>>(pd, fpd, 1u).x,
            double(gorge::ridged(pf, rpf, 1u).x) - gorge::ridged(pd, rpd, 1u).x,
        };
        for (const glm::dvec3& d : smooth) {
            worst_value = std::max(worst_value, std::fabs(d.x));
            worst_gradient = std::max({worst_gradient, std::fabs(d.y), std::fabs(d.z)});
        }
        for (double d : creased) worst_value = std::max(worst_value, std::fabs(d));
    }
    INFO("worst value difference " << worst_value << ", gradient " << worst_gradient);
    CHECK(worst_value < 1e-4);
    CHECK(worst_gradient < 1e-3);
}

TEST_CASE("fractal parameter validation names the bad parameter", "[fractal][validation]") {
    auto expect_throw = [](auto params, const std::string& name) {
        try {
            params.validate();
            FAIL("validate() accepted a bad " << name);
        } catch (const std::invalid_argument& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(name) != std::string::npos);
        }
    };
    const gorge::ridged_params<float> r_ok;
    CHECK_NOTHROW(r_ok.validate());
    auto r = r_ok;
    r.frequency = -1;
    expect_throw(r, "frequency");
    r = r_ok, r.octaves = 33;
    expect_throw(r, "octaves");
    r = r_ok, r.octaves = -2;
    expect_throw(r, "octaves");
    r = r_ok, r.lacunarity = 0;
    expect_throw(r, "lacunarity");
    r = r_ok, r.gain = INFINITY;
    expect_throw(r, "gain");
    r = r_ok, r.offset = NAN;
    expect_throw(r, "offset");
    r = r_ok, r.feedback = -0.5f;
    expect_throw(r, "feedback");
    r = r_ok, r.feedback = NAN;
    expect_throw(r, "feedback");

    const gorge::damped_fbm_params<double> d_ok;
    CHECK_NOTHROW(d_ok.validate());
    auto d = d_ok;
    d.frequency = NAN;
    expect_throw(d, "frequency");
    d = d_ok, d.octaves = 40;
    expect_throw(d, "octaves");
    d = d_ok, d.lacunarity = -2;
    expect_throw(d, "lacunarity");
    d = d_ok, d.gain = NAN;
    expect_throw(d, "gain");
    d = d_ok, d.damping = -1;
    expect_throw(d, "damping");
    d = d_ok, d.damping = INFINITY;
    expect_throw(d, "damping");
}
