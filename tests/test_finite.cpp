// Finite output for finite input: every parameter set that validate() accepts gives finite
// results for every finite input, in float, double and SIMD batches, or validate() rejects it
// naming the member. Also: float agrees with double at steep slopes.
//
// The fuzz test draws parameters over the validated ranges (extreme values included; sets that
// validate() rejects are drawn again) and inputs log-uniformly over all finite magnitudes.
// Release builds make 10 million filter calls (each SIMD lane counts as one call; about 4 s of
// CPU with AVX2); builds without NDEBUG (the sanitizer build) make 1/100 of them. What keeps it
// cheap: most calls go through the float batches, most parameter sets have few octaves (all of
// 0..32 are still drawn), cell_scale values that push the phase angles onto the slow sin/cos path
// are drawn less often (still drawn up to 1e10), and the inputs come from one 64-bit draw each.
// The fractal fields (four kinds over the gradient, value and simplex bases) and the island recipe
// (height and moisture, scalars and batches) are fuzzed the same way with random valid parameters
// (400 sets each in Release, 40 otherwise).
// The simulations (droplet, thermal and landscape evolution runs) are fuzzed likewise: random
// valid parameters, small maps whose relief is drawn up to each model's height limit, and every
// height and total of the result must be finite (120 sets per model and type in Release, 12
// otherwise).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/finite_grid.hpp"

#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/landscape_evolution.hpp>
#include <gorge/erosion/thermal.hpp>
#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/filter/erosion_filter.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>
#include <gorge/simd/simd.hpp>

namespace {

using gorge_test::expect_throw_naming;

template <class T>
bool finite_result(const gorge::erosion_result<T>& r) {
    return std::isfinite(r.height_delta) && std::isfinite(r.slope_delta.x) && std::isfinite(r.slope_delta.y) &&
           std::isfinite(r.magnitude) && std::isfinite(r.ridge_map) && std::isfinite(r.fade_target);
}

template <class T>
bool finite3(const glm::vec<3, T>& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

}  // namespace

// ---- the repros ----------------------------------------------------------------------------

TEST_CASE("validate rejects a detail <= 0 (pow(0, negative) gave NaN and inf)", "[finite][validation]") {
    for (float d : {-0.5f, -1e-30f, 0.0f}) {
        gorge::erosion_params<float> e;
        e.detail = d;
        INFO("detail = " << d);
        expect_throw_naming([&] { e.validate(); }, "detail");
    }
    gorge::erosion_params<float> e;
    e.detail = 1e-30f;  // tiny but positive stays valid and finite
    REQUIRE(e.first_invalid() == nullptr);
    CHECK(finite_result(gorge::erosion_filter(glm::vec2(.3f, .7f), glm::vec3(.5f, .8f, -.3f), .2f, e, 1)));
}

TEST_CASE("validate rejects a scale below the smallest normal number", "[finite][validation]") {
    gorge::erosion_params<float> e;
    e.scale = 1e-40f;
    expect_throw_naming([&] { e.validate(); }, "scale");
    e.scale = std::numeric_limits<float>::min();
    CHECK(e.first_invalid() != nullptr);  // accepted scale, but 1 / (scale * cell_scale) is too large
    expect_throw_naming([&] { e.validate(); }, "cell_scale");
}

TEST_CASE("validate rejects 32 octaves whose gain, lacunarity or rounding.w overflow", "[finite][validation]") {
    gorge::erosion_params<float> e;
    e.octaves = 32;
    REQUIRE(e.first_invalid() == nullptr);
    gorge::erosion_params<float> g = e;
    g.gain = 20;
    expect_throw_naming([&] { g.validate(); }, "gain");
    gorge::erosion_params<float> l = e;
    l.lacunarity = 20;
    expect_throw_naming([&] { l.validate(); }, "lacunarity");
    gorge::erosion_params<float> r = e;
    r.rounding.w = 1e3f;
    expect_throw_naming([&] { r.validate(); }, "rounding");
}

TEST_CASE("validate rejects an assumed_slope amount outside [0, 1]", "[finite][validation]") {
    gorge::erosion_params<float> e;
    e.assumed_slope.y = 1e30f;
    expect_throw_naming([&] { e.validate(); }, "assumed_slope");
    e.assumed_slope.y = -0.01f;
    expect_throw_naming([&] { e.validate(); }, "assumed_slope");
    e.assumed_slope.y = 0.0f;
    CHECK_NOTHROW(e.validate());
}

TEST_CASE("onset 0 with a slope whose square overflows stays finite", "[finite]") {
    for (int component : {0, 2}) {
        gorge::erosion_params<float> e;
        e.onset[component] = 0;
        REQUIRE(e.first_invalid() == nullptr);
        INFO("onset component " << component);
        CHECK(finite_result(gorge::erosion_filter(glm::vec2(.3f, .7f), glm::vec3(.5f, 2e19f, 0.f), .2f, e, 1)));
        CHECK(finite_result(
            gorge::erosion_filter(glm::vec2(.3f, .7f), glm::vec3(.5f, -3e38f, 3e38f), -.4f, e, 1)));
    }
}

TEST_CASE("far coordinates give finite (meaningless) values", "[finite]") {
    const gorge::erosion_params<float> defaults;
    CHECK(finite_result(gorge::erosion_filter(glm::vec2(1e37f, 0.f), glm::vec3(.5f, .8f, -.3f), .2f, defaults, 1)));
    gorge::erosion_params<float> many = defaults;
    many.octaves = 32;
    REQUIRE(many.first_invalid() == nullptr);
    CHECK(finite_result(gorge::erosion_filter(glm::vec2(1e29f, 0.f), glm::vec3(.5f, .8f, -.3f), .2f, many, 1)));
    const gorge::fbm_params<float> fp{3, 32, 2, .5f};
    REQUIRE(fp.first_invalid() == nullptr);
    CHECK(finite3(gorge::fbm(glm::vec2(1e30f, 0.f), fp)));
    CHECK(finite3(gorge::fractal_sum(glm::vec2(-3e38f, 1e30f), fp)));
    CHECK(finite3(gorge::billow(glm::vec2(1e30f, 0.f), fp)));
    CHECK(finite3(gorge::ridged(glm::vec2(1e30f, 0.f), gorge::ridged_params<float>{3, 32, 2, .5f, 1, 2})));
    CHECK(finite3(gorge::damped_fbm(glm::vec2(1e30f, 0.f), gorge::damped_fbm_params<float>{3, 32, 2, .5f, 1})));
    CHECK(gorge::demo_pipeline(glm::vec2(3e38f, -3e38f)).height == gorge::demo_pipeline(glm::vec2(3e38f, -3e38f)).height);
    CHECK(std::isfinite(gorge::demo_pipeline(glm::vec2(3e38f, -3e38f)).height));
}

TEST_CASE("fractal parameters whose octaves overflow are rejected by name", "[finite][validation]") {
    gorge::fbm_params<float> f{3, 32, 20, .5f};
    expect_throw_naming([&] { f.validate(); }, "lacunarity");
    f = {3, 32, 2, 20};
    expect_throw_naming([&] { f.validate(); }, "gain");
    f = {1e38f, 1, 2, .5f};
    expect_throw_naming([&] { f.validate(); }, "frequency");
    gorge::ridged_params<float> r;
    r.offset = 1e30f;
    expect_throw_naming([&] { r.validate(); }, "offset");
    r = {};
    r.lacunarity = 1e3f;
    r.octaves = 32;
    expect_throw_naming([&] { r.validate(); }, "lacunarity");
    gorge::damped_fbm_params<float> d;
    d.damping = 1e37f;
    expect_throw_naming([&] { d.validate(); }, "damping");
}

TEST_CASE("magnitude is the sum of |octave strength| and bounds |height_delta|", "[finite]") {
    for (double strength : {0.22, -0.22}) {
        for (double gain : {0.5, -0.5}) {
            gorge::erosion_params<double> e;
            e.strength = strength;
            e.gain = gain;
            const auto r = gorge::erosion_filter(glm::dvec2(.3, .7), glm::dvec3(.5, .8, -.3), .2, e, 1);
            // |0.22 * 0.15| * (1 + 0.5 + 0.25 + 0.125 + 0.0625)
            INFO("strength " << strength << ", gain " << gain);
            CHECK(r.magnitude == Approx(0.033 * 1.9375).epsilon(1e-12));
            CHECK(std::fabs(r.height_delta) <= r.magnitude);
        }
    }
}

// ---- float at steep slopes ----------------------------------------------------------------------------

namespace {
// Required agreement of float with double (the bounds).
constexpr double steep_height_tolerance = 2e-5;
constexpr double steep_ridge_tolerance = 5e-3;

struct steep_case {
    glm::dvec2 p;
    glm::dvec3 h;
    double fade;
};

std::vector<steep_case> steep_cases() {
    std::vector<steep_case> out;
    std::mt19937 rng(20250117u);
    std::uniform_real_distribution<double> pos(-3.0, 3.0), angle(0.0, 6.283185307179586), unit(-1.0, 1.0);
    for (int e = -6; e <= 12; ++e)
        for (int k = 0; k < 64; ++k) {
            const double len = std::pow(10.0, e + (k % 8) / 8.0);
            const double a = angle(rng);
            // Float inputs, so that float and double see the same values.
            const glm::dvec3 h(0.5, double(float(len * std::cos(a))), double(float(len * std::sin(a))));
            out.push_back({glm::dvec2(double(float(pos(rng))), double(float(pos(rng)))), h, double(float(unit(rng)))});
        }
    return out;
}
}  // namespace

TEST_CASE("float agrees with double at slopes from 1e-6 to 1e12", "[finite][steep]") {
    const gorge::erosion_params<float> pf;
    const gorge::erosion_params<double> pd;
    double worst_h = 0, worst_r = 0;
    std::size_t n = 0;
    for (const steep_case& c : steep_cases()) {
        const auto d = gorge::erosion_filter(c.p, c.h, c.fade, pd, 5u);
        const auto f = gorge::erosion_filter(glm::vec2(c.p), glm::vec3(c.h), float(c.fade), pf, 5u);
        worst_h = std::max(worst_h, std::fabs(double(f.height_delta) - d.height_delta));
        worst_r = std::max(worst_r, std::fabs(double(f.ridge_map) - d.ridge_map));
        ++n;
    }
    INFO(n << " points; worst height_delta error " << worst_h << ", ridge_map " << worst_r);
    CHECK(worst_h <= steep_height_tolerance);
    CHECK(worst_r <= steep_ridge_tolerance);
    // The figures: at |slope| 5e6, 2e7 and 1e9 on the default parameters.
    for (double len : {5e6, 2e7, 1e9, 1e12}) {
        const auto d = gorge::erosion_filter(glm::dvec2(0.3, 0.7), glm::dvec3(0.5, len * 0.6, len * 0.8), 0.2, pd, 1u);
        const auto f = gorge::erosion_filter(glm::vec2(0.3f, 0.7f), glm::vec3(0.5f, float(len * 0.6), float(len * 0.8)),
                                             0.2f, pf, 1u);
        INFO("|slope| " << len << ": double " << d.height_delta << " / " << d.ridge_map << ", float "
                        << f.height_delta << " / " << f.ridge_map);
        CHECK(std::fabs(double(f.height_delta) - d.height_delta) <= steep_height_tolerance);
        CHECK(std::fabs(double(f.ridge_map) - d.ridge_map) <= steep_ridge_tolerance);
    }
}

#if GORGE_HAS_XSIMD
TEST_CASE("float batches agree with double at slopes from 1e-6 to 1e12", "[finite][steep][simd]") {
    using B = gorge::simd_float;
    constexpr std::size_t L = B::size;
    const gorge::erosion_params<float> pf;
    const gorge::erosion_params<double> pd;
    const std::vector<steep_case> cases = steep_cases();
    double worst_h = 0, worst_r = 0;
    for (std::size_t i = 0; i + L <= cases.size(); i += L) {
        alignas(64) float px[L], py[L], h[L], hx[L], hy[L], fd[L], hd[L], rm[L];
        for (std::size_t l = 0; l < L; ++l) {
            const steep_case& c = cases[i + l];
            px[l] = float(c.p.x), py[l] = float(c.p.y), h[l] = float(c.h.x), hx[l] = float(c.h.y), hy[l] = float(c.h.z);
            fd[l] = float(c.fade);
        }
        const auto r = gorge::erosion_filter(glm::vec<2, B>(B::load_aligned(px), B::load_aligned(py)),
                                             glm::vec<3, B>(B::load_aligned(h), B::load_aligned(hx), B::load_aligned(hy)),
                                             B::load_aligned(fd), pf, 5u);
        r.height_delta.store_aligned(hd);
        r.ridge_map.store_aligned(rm);
        for (std::size_t l = 0; l < L; ++l) {
            const steep_case& c = cases[i + l];
            const auto d = gorge::erosion_filter(c.p, c.h, c.fade, pd, 5u);
            worst_h = std::max(worst_h, std::fabs(double(hd[l]) - d.height_delta));
            worst_r = std::max(worst_r, std::fabs(double(rm[l]) - d.ridge_map));
        }
    }
    INFO("worst height_delta error " << worst_h << ", ridge_map " << worst_r);
    CHECK(worst_h <= steep_height_tolerance);
    CHECK(worst_r <= steep_ridge_tolerance);
}
#endif

// ---- fuzz ------------------------------------------------------------------------------------------

namespace {

#ifdef NDEBUG
constexpr std::size_t fuzz_calls = 10000000;
#else
constexpr std::size_t fuzz_calls = 10000000 / 100;  // sanitizer / debug builds
#endif
constexpr std::uint32_t fuzz_seed = 0x5eed2025u;
constexpr std::size_t points_per_param_set = 256;

/// Random values over all finite magnitudes of S: |x| log-uniform between 10^lo and 10^hi by
/// binade (uniform within each binade; clamped to the finite range), with a random sign when
/// signed, and now and then an exact 0 or one of the extremes. One 64-bit draw per value and no
/// pow: generating the inputs must stay cheap next to the filter calls it feeds.
template <class S>
struct wide {
    std::mt19937_64& rng;
    static constexpr double zero_share = 0.03, max_share = 0.03, denorm_min_share = 0.02;
    static constexpr int pick_bits = 16, magnitude_bits = 47;  // + 1 sign bit = 64
    static constexpr double pick_unit = 1.0 / double(std::uint64_t(1) << pick_bits);
    static constexpr double magnitude_unit = 1.0 / double(std::uint64_t(1) << magnitude_bits);
    S draw(double lo, double hi, bool is_signed) {
        constexpr double log2_10 = 3.321928094887362;
        const std::uint64_t r = rng();
        const double pick = double(r & ((std::uint64_t(1) << pick_bits) - 1)) * pick_unit;
        const bool negative = is_signed && ((r >> pick_bits) & 1u) != 0;
        const double u = double(r >> (pick_bits + 1)) * magnitude_unit;  // [0, 1)
        double x;
        if (pick < zero_share) {
            x = 0.0;
        } else if (pick < zero_share + max_share) {
            x = double(std::numeric_limits<S>::max());
        } else if (pick < zero_share + max_share + denorm_min_share) {
            x = double(std::numeric_limits<S>::denorm_min());
        } else {
            // (1 + f) 2^b with b = floor(t), f = t - b: 2^b from its exponent bits, as every |b|
            // drawn here (at most 40 decades) is far inside double's normal range.
            const double t = (lo + (hi - lo) * u) * log2_10;  // log2 |x|
            const double binade = std::floor(t);
            constexpr int double_exponent_bias = 1023, double_mantissa_bits = 52;
            const std::uint64_t bits = std::uint64_t(std::int64_t(binade) + double_exponent_bias)
                                       << double_mantissa_bits;
            double power;
            std::memcpy(&power, &bits, sizeof power);
            x = (1.0 + (t - binade)) * power;
        }
        x = std::min(x, double(std::numeric_limits<S>::max()));
        return S(negative ? -x : x);
    }
    S coordinate() { return draw(-45, 39, true); }
};

/// Erosion parameters over the validated ranges: each member either its default or a wide draw,
/// redrawn until validate() accepts the set. Returns the number of rejected draws via `rejected`.
template <class S>
gorge::erosion_params<S> fuzz_params(std::mt19937_64& rng, std::size_t& rejected) {
    wide<S> w{rng};
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (;;) {
        gorge::erosion_params<S> e;
        const auto maybe = [&](S& member, double lo, double hi, bool is_signed) {
            if (u(rng) < 0.4) member = w.draw(lo, hi, is_signed);
        };
        maybe(e.scale, -38, 38, false);
        maybe(e.strength, -30, 30, true);
        maybe(e.gully_weight, -10, 10, true);
        maybe(e.detail, -38, 38, false);
        for (int i = 0; i < 4; ++i) maybe(e.rounding[i], -30, 30, true);
        for (int i = 0; i < 4; ++i) maybe(e.onset[i], -30, 38, false);
        maybe(e.assumed_slope.x, -30, 33, true);
        if (u(rng) < 0.4) e.assumed_slope.y = S(u(rng) < 0.2 ? std::round(u(rng)) : u(rng));
        // Mostly few octaves (the cost of a call grows with them; the overflows at stake show in
        // the first ones), the default 5 in 3 of 20 sets, and any of 0..32 in 1 of 20.
        const double octave_pick = u(rng);
        if (octave_pick < 0.05) e.octaves = int(u(rng) * 33.0) % 33;
        else if (octave_pick < 0.85) e.octaves = int(u(rng) * 4.0) % 4;
        maybe(e.lacunarity, -3, 3, false);
        maybe(e.gain, -3, 3, true);
        // cell_scale above ~1e3 sends the phase angles beyond the SIMD sincos's fast range (a
        // slow per-lane fallback): drawn from 1e3..1e10 in 1 of 10 draws only.
        if (u(rng) < 0.4) e.cell_scale = u(rng) < 0.1 ? w.draw(3, 10, false) : w.draw(-10, 3, false);
        if (u(rng) < 0.4) e.normalization = S(u(rng) < 0.2 ? std::round(u(rng)) : u(rng));
        if (e.first_invalid() == nullptr) return e;
        ++rejected;
    }
}

template <class S>
std::string describe(const gorge::erosion_params<S>& e) {
    std::ostringstream o;
    o.precision(9);
    o << " scale " << e.scale << " strength " << e.strength << " gully_weight " << e.gully_weight << " detail "
      << e.detail << " rounding (" << e.rounding.x << ", " << e.rounding.y << ", " << e.rounding.z << ", "
      << e.rounding.w << ") onset (" << e.onset.x << ", " << e.onset.y << ", " << e.onset.z << ", " << e.onset.w
      << ") assumed_slope (" << e.assumed_slope.x << ", " << e.assumed_slope.y << ") octaves " << e.octaves
      << " lacunarity " << e.lacunarity << " gain " << e.gain << " cell_scale " << e.cell_scale
      << " normalization " << e.normalization;
    return o.str();
}

struct fuzz_input {
    double px, py, h, hx, hy, fade;
};

template <class S>
fuzz_input fuzz_point(std::mt19937_64& rng) {
    wide<S> w{rng};
    return {double(w.coordinate()), double(w.coordinate()), double(w.coordinate()),
            double(w.coordinate()), double(w.coordinate()), double(w.draw(-10, 39, true))};
}

/// Scalar fuzz in S; returns the number of non-finite results (and reports the first).
template <class S>
std::size_t fuzz_scalar(std::size_t calls, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::size_t bad = 0, rejected = 0, done = 0;
    while (done < calls) {
        const gorge::erosion_params<S> e = fuzz_params<S>(rng, rejected);
        for (std::size_t k = 0; k < points_per_param_set && done < calls; ++k, ++done) {
            const fuzz_input in = fuzz_point<S>(rng);
            const auto r = gorge::erosion_filter(glm::vec<2, S>(S(in.px), S(in.py)),
                                                 glm::vec<3, S>(S(in.h), S(in.hx), S(in.hy)), S(in.fade), e,
                                                 std::uint32_t(done));
            if (!finite_result(r)) {
                if (bad == 0)
                    UNSCOPED_INFO("first non-finite: p (" << in.px << ", " << in.py << ") h (" << in.h << ", " << in.hx
                                  << ", " << in.hy << ") fade " << in.fade << describe(e));
                ++bad;
            }
        }
    }
    UNSCOPED_INFO(calls << " calls, " << rejected << " parameter sets rejected by validate()");
    return bad;
}

#if GORGE_HAS_XSIMD
/// Batch fuzz: every lane counts as one call.
template <class B>
std::size_t fuzz_batch(std::size_t calls, std::uint64_t seed) {
    using S = gorge::detail::scalar_t<B>;
    constexpr std::size_t L = B::size;
    std::mt19937_64 rng(seed);
    std::size_t bad = 0, rejected = 0, done = 0;
    while (done < calls) {
        const gorge::erosion_params<S> e = fuzz_params<S>(rng, rejected);
        for (std::size_t k = 0; k < points_per_param_set && done < calls; k += L, done += L) {
            alignas(64) S px[L], py[L], h[L], hx[L], hy[L], fd[L];
            for (std::size_t l = 0; l < L; ++l) {
                const fuzz_input in = fuzz_point<S>(rng);
                px[l] = S(in.px), py[l] = S(in.py), h[l] = S(in.h), hx[l] = S(in.hx), hy[l] = S(in.hy);
                fd[l] = S(in.fade);
            }
            const auto r = gorge::erosion_filter(glm::vec<2, B>(B::load_aligned(px), B::load_aligned(py)),
                                                 glm::vec<3, B>(B::load_aligned(h), B::load_aligned(hx),
                                                                B::load_aligned(hy)),
                                                 B::load_aligned(fd), e, std::uint32_t(done));
            alignas(64) S out[6][L];
            r.height_delta.store_aligned(out[0]);
            r.slope_delta.x.store_aligned(out[1]);
            r.slope_delta.y.store_aligned(out[2]);
            r.magnitude.store_aligned(out[3]);
            r.ridge_map.store_aligned(out[4]);
            r.fade_target.store_aligned(out[5]);
            for (std::size_t l = 0; l < L; ++l) {
                bool ok = true;
                for (int o = 0; o < 6; ++o) ok = ok && std::isfinite(out[o][l]);
                if (!ok) {
                    if (bad == 0)
                        UNSCOPED_INFO("first non-finite lane: p (" << px[l] << ", " << py[l] << ") h (" << h[l]
                                      << ", " << hx[l] << ", " << hy[l] << ") fade " << fd[l] << describe(e));
                    ++bad;
                }
            }
        }
    }
    UNSCOPED_INFO(calls << " lanes, " << rejected << " parameter sets rejected by validate()");
    return bad;
}
#endif

}  // namespace

TEST_CASE("fuzz: the filter is finite for valid parameters and finite input", "[finite][fuzz]") {
#if GORGE_HAS_XSIMD
    // Most calls go through the float batches (cheapest per call, by far: the double batches
    // call libm's sin, cos and pow lane by lane, as scalar double does); scalar float and the two
    // double paths get 1/20 each.
    const std::size_t scalar_float = fuzz_calls / 20, scalar_double = fuzz_calls / 20;
    const std::size_t batch_double = fuzz_calls / 20;
    const std::size_t batch_float = fuzz_calls - scalar_float - scalar_double - batch_double;
    CHECK(fuzz_batch<gorge::simd_float>(batch_float, fuzz_seed + 2) == 0);
    CHECK(fuzz_batch<gorge::simd_double>(batch_double, fuzz_seed + 3) == 0);
#else
    const std::size_t scalar_float = fuzz_calls / 2, scalar_double = fuzz_calls - scalar_float;
#endif
    CHECK(fuzz_scalar<float>(scalar_float, fuzz_seed) == 0);
    CHECK(fuzz_scalar<double>(scalar_double, fuzz_seed + 1) == 0);
}

TEST_CASE("fuzz: fractals and the island recipe are finite for valid parameters", "[finite][fuzz]") {
    std::mt19937_64 rng(fuzz_seed + 4);
    wide<float> w{rng};
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::size_t bad = 0, sets = 0;
    const std::size_t total_sets = fuzz_calls / 2000;
    while (sets < total_sets) {
        gorge::fbm_params<float> f;
        f.frequency = w.draw(-10, 35, false);
        f.octaves = int(u(rng) * 33.0) % 33;
        f.lacunarity = w.draw(-3, 3, false);
        f.gain = w.draw(-3, 3, true);
        gorge::ridged_params<float> r{f.frequency, f.octaves, f.lacunarity, f.gain, w.draw(-5, 10, true),
                                      w.draw(-5, 30, false)};
        gorge::damped_fbm_params<float> d{f.frequency, f.octaves, f.lacunarity, f.gain, w.draw(-5, 30, false)};
        if (f.first_invalid() != nullptr || r.first_invalid() != nullptr || d.first_invalid() != nullptr) continue;
        ++sets;
        for (int k = 0; k < 16; ++k) {
            const glm::vec2 p(w.coordinate(), w.coordinate());
            const auto seed = std::uint32_t(sets);
            const int which = !finite3(gorge::fbm(p, f, seed))            ? 1
                              : !finite3(gorge::fractal_sum(p, f, seed)) ? 2
                              : !finite3(gorge::billow(p, f, seed))      ? 3
                              : !finite3(gorge::ridged(p, r, seed))      ? 4
                              : !finite3(gorge::damped_fbm(p, d, seed))  ? 5
                                                                         : 0;
            if (which != 0 && bad++ == 0)
                UNSCOPED_INFO("first non-finite (1 fbm, 2 fractal_sum, 3 billow, 4 ridged, 5 damped): " << which
                              << " at p (" << p.x << ", " << p.y << ") frequency " << f.frequency
                              << " octaves " << f.octaves << " lacunarity " << f.lacunarity << " gain " << f.gain
                              << " offset " << r.offset << " feedback " << r.feedback << " damping " << d.damping);
        }
    }
    CHECK(bad == 0);
    // The island recipe with its defaults, over all finite coordinates.
    const auto island = gorge::island_height_field(gorge::island_params<float>{}, 9u);
    std::size_t island_bad = 0;
    for (int k = 0; k < 20000; ++k) island_bad += !finite3(island(glm::vec2(w.coordinate(), w.coordinate())));
    CHECK(island_bad == 0);
}

// ---- fractal fields and the island recipe with random valid parameters -----------------------------

namespace {

#ifdef NDEBUG
constexpr std::size_t field_param_sets = 400;
#else
constexpr std::size_t field_param_sets = 40;  // sanitizer / debug builds
#endif
constexpr int field_points_per_set = 16;

/// Calls f(Basis{}) for the gradient, value and simplex bases.
template <class F>
void for_each_basis(F&& f) {
    f(gorge::gradient_basis<>{});
    f(gorge::value_basis<>{});
    f(gorge::simplex_basis<>{});
}

/// Each member of an fBm parameter set either its default or a wide draw (not yet validated).
template <class S>
void fuzz_fbm_members(std::mt19937_64& rng, gorge::fbm_params<S>& f) {
    wide<S> w{rng};
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (u(rng) < 0.4) f.frequency = w.draw(-10, 35, false);
    // As for the filter: mostly few octaves, now and then any of 0..32.
    const double octave_pick = u(rng);
    if (octave_pick < 0.1) f.octaves = int(u(rng) * 33.0) % 33;
    else if (octave_pick < 0.5) f.octaves = int(u(rng) * 4.0) % 4;
    if (u(rng) < 0.4) f.lacunarity = w.draw(-3, 3, false);
    if (u(rng) < 0.4) f.gain = w.draw(-3, 3, true);
}

/// Island parameters over the validated ranges, redrawn until validate() accepts them.
template <class S>
gorge::island_params<S> fuzz_island_params(std::mt19937_64& rng, std::size_t& rejected) {
    wide<S> w{rng};
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (;;) {
        gorge::island_params<S> ip;
        const auto maybe = [&](S& member, double lo, double hi, bool is_signed) {
            if (u(rng) < 0.4) member = w.draw(lo, hi, is_signed);
        };
        fuzz_fbm_members(rng, ip.terrain);
        fuzz_fbm_members(rng, ip.warp_noise);
        fuzz_fbm_members(rng, ip.moisture);
        maybe(ip.warp.strength, -10, 38, true);
        if (u(rng) < 0.4) ip.warp.iterations = int(u(rng) * 17.0) % 17;
        maybe(ip.contrast, -10, 38, false);
        maybe(ip.exponent, -45, 38, false);
        maybe(ip.falloff.centre.x, -10, 38, true);
        maybe(ip.falloff.centre.y, -10, 38, true);
        maybe(ip.falloff.radius, -38, 38, false);
        if (u(rng) < 0.4) ip.falloff.shape = u(rng) < 0.5 ? gorge::falloff_shape::radial : gorge::falloff_shape::square_bump;
        if (u(rng) < 0.4) ip.falloff.amount = S(u(rng) < 0.2 ? std::round(u(rng)) : u(rng));
        if (u(rng) < 0.4) ip.sea_level = S(u(rng));
        if (ip.first_invalid() == nullptr) return ip;
        ++rejected;
    }
}

template <class S>
std::string describe(const gorge::fbm_params<S>& f) {
    std::ostringstream o;
    o.precision(9);
    o << "{frequency " << f.frequency << ", octaves " << f.octaves << ", lacunarity " << f.lacunarity << ", gain "
      << f.gain << "}";
    return o.str();
}

template <class S>
std::string describe(const gorge::island_params<S>& ip) {
    std::ostringstream o;
    o.precision(9);
    o << " terrain " << describe(ip.terrain) << " warp_noise " << describe(ip.warp_noise) << " moisture "
      << describe(ip.moisture) << " warp {" << ip.warp.strength << ", " << ip.warp.iterations << "} contrast "
      << ip.contrast << " exponent " << ip.exponent << " falloff {centre (" << ip.falloff.centre.x << ", "
      << ip.falloff.centre.y << "), radius " << ip.falloff.radius << ", shape " << int(ip.falloff.shape)
      << ", amount " << ip.falloff.amount << "}";
    return o.str();
}

/// A point for a field: half the time anywhere (wide), half the time within 1.5 radii of `centre`
/// (where the island and its clamps are).
template <class S>
glm::vec<2, S> fuzz_field_point(std::mt19937_64& rng, glm::vec<2, S> centre, S radius) {
    wide<S> w{rng};
    std::uniform_real_distribution<double> u(0.0, 1.0), near(-1.5, 1.5);
    if (u(rng) < 0.5) return {w.coordinate(), w.coordinate()};
    const double big = double(std::numeric_limits<S>::max());  // keep the point finite
    const auto around = [&](S c) { return S(std::max(-big, std::min(big, double(c) + double(radius) * near(rng)))); };
    const S x = around(centre.x);
    return {x, around(centre.y)};
}

/// Fractal fields of every kind over every basis with random valid parameters; returns the number
/// of non-finite samples (and reports the first).
template <class S>
std::size_t fuzz_fractal_fields(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    wide<S> w{rng};
    std::size_t bad = 0, rejected = 0;
    for (std::size_t set = 0; set < field_param_sets;) {
        gorge::fbm_params<S> f;
        fuzz_fbm_members(rng, f);
        const gorge::ridged_params<S> r{f.frequency, f.octaves, f.lacunarity, f.gain, w.draw(-5, 10, true),
                                        w.draw(-5, 30, false)};
        const gorge::damped_fbm_params<S> d{f.frequency, f.octaves, f.lacunarity, f.gain, w.draw(-5, 30, false)};
        if (f.first_invalid() != nullptr || r.first_invalid() != nullptr || d.first_invalid() != nullptr) {
            ++rejected;
            continue;
        }
        ++set;
        const auto field_seed = std::uint32_t(rng());
        for_each_basis([&](auto basis) {
            using Basis = decltype(basis);
            const gorge::fractal_sum_field<S, Basis> sum(f, field_seed);
            const gorge::billow_field<S, Basis> billow(f, field_seed);
            const gorge::ridged_field<S, Basis> ridged(r, field_seed);
            const gorge::damped_fbm_field<S, Basis> damped(d, field_seed);
            for (int k = 0; k < field_points_per_set; ++k) {
                const glm::vec<2, S> p = fuzz_field_point(rng, glm::vec<2, S>(S(0)), S(1));
                const int which = !finite3(sum(p))      ? 1
                                  : !finite3(billow(p)) ? 2
                                  : !finite3(ridged(p)) ? 3
                                  : !finite3(damped(p)) ? 4
                                                        : 0;
                if (which != 0 && bad++ == 0)
                    UNSCOPED_INFO("first non-finite (1 sum, 2 billow, 3 ridged, 4 damped) field: "
                                  << which << " at p (" << p.x << ", " << p.y << ") " << describe(f) << " offset "
                                  << r.offset << " feedback " << r.feedback << " damping " << d.damping);
            }
        });
    }
    UNSCOPED_INFO(field_param_sets << " parameter sets, " << rejected << " rejected by validate()");
    return bad;
}

#if GORGE_HAS_XSIMD
/// The number of lanes of v with a non-finite component.
template <class B>
std::size_t non_finite_lanes(const glm::vec<3, B>& v) {
    using S = gorge::detail::scalar_t<B>;
    alignas(64) S c[3][B::size];
    v.x.store_aligned(c[0]);
    v.y.store_aligned(c[1]);
    v.z.store_aligned(c[2]);
    std::size_t bad = 0;
    for (std::size_t l = 0; l < B::size; ++l)
        bad += !(std::isfinite(c[0][l]) && std::isfinite(c[1][l]) && std::isfinite(c[2][l]));
    return bad;
}
#endif

/// The island recipe (height and moisture) over every basis with random valid parameters, on
/// scalars and (with xsimd) on the widest batches of S, one batch per basis and set.
template <class S>
std::size_t fuzz_islands(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::size_t bad = 0, rejected = 0;
    for (std::size_t set = 0; set < field_param_sets; ++set) {
        const gorge::island_params<S> ip = fuzz_island_params<S>(rng, rejected);
        const auto island_seed = std::uint32_t(rng());
        for_each_basis([&](auto basis) {
            using Basis = decltype(basis);
            const auto height = gorge::island_height_field<S, Basis>(ip, island_seed);
            const auto moisture = gorge::island_moisture_field<S, Basis>(ip, island_seed);
            for (int k = 0; k < field_points_per_set; ++k) {
                const glm::vec<2, S> p = fuzz_field_point(rng, ip.falloff.centre, ip.falloff.radius);
                const glm::vec<3, S> h = height(p), m = moisture(p);
                if (!(finite3(h) && finite3(m)) && bad++ == 0)
                    UNSCOPED_INFO("first non-finite island: height (" << h.x << ", " << h.y << ", " << h.z
                                  << ") moisture (" << m.x << ", " << m.y << ", " << m.z << ") at p (" << p.x
                                  << ", " << p.y << ")" << describe(ip));
            }
#if GORGE_HAS_XSIMD
            using B = std::conditional_t<std::is_same<S, float>::value, gorge::simd_float, gorge::simd_double>;
            alignas(64) S px[B::size], py[B::size];
            for (std::size_t l = 0; l < B::size; ++l) {
                const glm::vec<2, S> p = fuzz_field_point(rng, ip.falloff.centre, ip.falloff.radius);
                px[l] = p.x, py[l] = p.y;
            }
            const glm::vec<2, B> pb(B::load_aligned(px), B::load_aligned(py));
            const std::size_t bad_lanes = non_finite_lanes(height(pb)) + non_finite_lanes(moisture(pb));
            if (bad_lanes != 0 && bad == 0)
                UNSCOPED_INFO("first non-finite island batch, at p (" << px[0] << ", " << py[0] << ") ..."
                              << describe(ip));
            bad += bad_lanes;
#endif
        });
    }
    UNSCOPED_INFO(field_param_sets << " parameter sets, " << rejected << " rejected by validate()");
    return bad;
}

}  // namespace

#if GORGE_HAS_XSIMD
TEST_CASE("redistribution batches stay finite and agree with scalars at subnormal and huge inputs",
          "[finite][island][simd]") {
    // power_profile with exponent < 1 overflowed its slope at subnormal inputs (scalar and SIMD).
    const auto check = [](auto batch) {
        using B = decltype(batch);
        using S = gorge::detail::scalar_t<B>;
        using limits = std::numeric_limits<S>;
        constexpr std::size_t L = B::size;
        const S inputs[] = {limits::denorm_min(), -S(3) * limits::denorm_min(), limits::min() / S(3), -limits::min(),
                            S(0),                 S(1e-20),                     S(0.7),               -S(1),
                            S(1e20),              -limits::max()};
        constexpr std::size_t n = sizeof inputs / sizeof inputs[0];
        for (S k : {S(1e-6), S(0.01), S(0.5), S(1), S(1.8), S(40)}) {
            const gorge::power_profile<S> g{k};
            for (std::size_t i = 0; i < n; i += L) {
                alignas(64) S in[L], value[L], slope[L];
                for (std::size_t l = 0; l < L; ++l) in[l] = inputs[(i + l) % n];
                const glm::vec<2, B> r = g(B::load_aligned(in));
                r.x.store_aligned(value);
                r.y.store_aligned(slope);
                for (std::size_t l = 0; l < L; ++l) {
                    const glm::vec<2, S> want = g(in[l]);
                    INFO("exponent " << k << ", e " << in[l] << ": batch " << value[l] << ", " << slope[l]
                                     << "; scalar " << want.x << ", " << want.y);
                    REQUIRE(std::isfinite(value[l]));
                    REQUIRE(std::isfinite(slope[l]));
                    // The float batches' pow is within a few ulp of std::pow (relative 1e-5 here);
                    // results below the smallest normal may be flushed to 0.
                    CHECK(double(value[l]) == Approx(double(want.x)).epsilon(1e-5).margin(double(limits::min())));
                    CHECK(double(slope[l]) == Approx(double(want.y)).epsilon(1e-5).margin(double(limits::min())));
                }
            }
        }
    };
    check(gorge::simd_float{});
    check(gorge::simd_double{});
}
#endif

TEST_CASE("fuzz: fractal fields over every basis are finite for valid parameters", "[finite][fuzz]") {
    CHECK(fuzz_fractal_fields<float>(fuzz_seed + 5) == 0);
    CHECK(fuzz_fractal_fields<double>(fuzz_seed + 6) == 0);
}

TEST_CASE("fuzz: the island recipe is finite for valid parameters", "[finite][fuzz][island]") {
    CHECK(fuzz_islands<float>(fuzz_seed + 7) == 0);
    CHECK(fuzz_islands<double>(fuzz_seed + 8) == 0);
}

// ---- the simulations -------------------------------------------------------------------------------

namespace {

#ifdef NDEBUG
constexpr int simulation_sets = 120;
#else
constexpr int simulation_sets = 12;  // sanitizer / debug builds
#endif
/// Draws of a parameter set before the test gives up on finding one that validate() accepts.
constexpr int simulation_max_draws = 10000;

/// Random draws for the simulation fuzz: wide magnitudes (wide<S>), factors in [0, 1] that are
/// 0 or 1 now and then, map sides and counts.
template <class T>
struct simulation_draws {
    std::mt19937_64& rng;
    wide<T> w{rng};
    double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }
    /// 0 or 1 in one draw of four each, else uniform in [0, 1].
    T fraction() {
        const double pick = unit();
        return pick < 0.25 ? T(0) : pick < 0.5 ? T(1) : T(unit());
    }
    int below(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
    /// A map of `width` x `height` cells: a smooth wave plus white noise, scaled to a
    /// relief drawn from 1e-30 up to `limit` (the model's largest accepted height).
    gorge::grid<T> map(int width, int height, T limit) {
        const double relief = std::min(double(w.draw(-30, std::log10(double(limit)), false)), double(limit));
        gorge::grid<T> g(width, height);
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x)
                g(x, y) = T(relief * (0.5 * std::sin(0.3 * x) * std::cos(0.2 * y) + 0.5 * (2.0 * unit() - 1.0)));
        return g;
    }
};

/// Draws parameters with `draw_set` until first_invalid() accepts them; fails the test after
/// simulation_max_draws tries.
template <class P, class Draw>
P draw_valid(Draw&& draw_set) {
    for (int tries = 0; tries < simulation_max_draws; ++tries) {
        const P p = draw_set();
        if (!p.first_invalid()) return p;
    }
    FAIL("no valid parameter set in " << simulation_max_draws << " draws");
    return P();
}

/// simulation_sets runs of one model: each draws parameters with draw(d) until validate()
/// accepts them, then run(d, p) runs the model on a map of its own and describes what came out
/// non-finite (empty when everything is finite). Returns the number of such runs.
template <class T, class P, class Draw, class Run>
int fuzz_simulation(std::uint32_t seed, const Draw& draw, const Run& run) {
    std::mt19937_64 rng(seed);
    simulation_draws<T> d{rng};
    int bad = 0;
    for (int set = 0; set < simulation_sets; ++set) {
        const P p = draw_valid<P>([&] { return draw(d); });
        const std::string failure = run(d, p);
        if (!failure.empty()) {
            UNSCOPED_INFO("set " << set << ": " << failure);
            ++bad;
        }
    }
    return bad;
}

/// "what: " and the named values, for a failure description.
template <class... V>
std::string describe(const char* what, const V&... values) {
    std::ostringstream out;
    out << what << ':';
    ((out << ' ' << values), ...);
    return out.str();
}

template <class T>
int fuzz_droplet_runs(std::uint32_t seed) {
    using P = gorge::droplet_params<T>;
    const auto draw = [](simulation_draws<T>& d) {
        P q;
        q.cell_size = d.w.draw(-6, 6, false);
        q.step_length = q.cell_size * T(std::exp2(8.0 * d.unit() - 4.0));    // 1/16..16 cells
        q.brush_radius = q.cell_size * T(1.0 + 31.0 * d.unit() * d.unit());  // 1..32 cells
        q.inertia = d.fraction();
        q.erode_rate = d.fraction();
        q.deposit_rate = d.fraction();
        q.evaporate_rate = d.fraction();
        q.capacity_factor = d.w.draw(-10, 30, false);
        q.min_capacity = d.w.draw(-10, 30, false);
        q.gravity = d.w.draw(-10, 30, false);
        q.initial_water = d.w.draw(-10, 30, false);
        q.initial_speed = d.w.draw(-10, 30, false);
        q.lifetime = 1 + d.below(100);
        return q;
    };
    const auto run = [](simulation_draws<T>& d, const P& p) {
        gorge::grid<T> g = d.map(2 + d.below(40), 2 + d.below(40), gorge::droplet_height_limit<T>());
        gorge::droplet_options o;
        o.seed = d.rng();
        o.schedule = d.below(2) != 0 ? gorge::droplet_schedule::tiled : gorge::droplet_schedule::serial;
        o.edge = d.below(2) != 0 ? gorge::droplet_edge::deposit : gorge::droplet_edge::outflow;
        const gorge::droplet_stats st = gorge::erode_droplets(g, 200, p, o);
        if (gorge_test::all_finite(g) && std::isfinite(st.eroded) && std::isfinite(st.deposited) &&
            std::isfinite(st.outflow))
            return std::string();
        return describe("droplets (cell_size, step_length, capacity_factor, gravity; eroded, deposited)",
                        p.cell_size, p.step_length, p.capacity_factor, p.gravity, st.eroded, st.deposited);
    };
    return fuzz_simulation<T, P>(seed, draw, run);
}

template <class T>
int fuzz_thermal_runs(std::uint32_t seed) {
    using P = gorge::thermal_params<T>;
    const auto draw = [](simulation_draws<T>& d) {
        P q;
        q.cell_size = d.w.draw(-6, 6, false);
        q.talus_slope = d.w.draw(-10, 30, false);
        q.rate = d.fraction();
        q.passes = d.below(40);
        return q;
    };
    const auto run = [](simulation_draws<T>& d, const P& p) {
        gorge::grid<T> g = d.map(2 + d.below(60), 2 + d.below(60), gorge::thermal_height_limit<T>());
        const gorge::thermal_stats st = gorge::erode_thermal(g.view(), p);
        if (gorge_test::all_finite(g) && std::isfinite(st.moved) && std::isfinite(st.max_excess)) return std::string();
        return describe("thermal (cell_size, talus_slope, rate; moved, max_excess)", p.cell_size, p.talus_slope, p.rate,
                        st.moved, st.max_excess);
    };
    return fuzz_simulation<T, P>(seed, draw, run);
}

template <class T>
int fuzz_evolution_runs(std::uint32_t seed) {
    using P = gorge::evolution_params<T>;
    const auto draw = [](simulation_draws<T>& d) {
        P q;
        q.cell_size = d.w.draw(-6, 6, false);
        q.time_step = d.w.draw(-6, 12, false);
        q.erodibility = d.w.draw(-15, 5, false);
        q.area_exponent = T(gorge::evolution_max_exponent * d.unit());
        const double n = d.unit();
        q.slope_exponent = n < 0.3 ? T(1) : n < 0.6 ? T(2) : T(gorge::evolution_max_exponent * d.unit());
        q.diffusivity = d.w.draw(-15, 8, false);
        q.uplift = d.w.draw(-15, 30, true);
        return q;
    };
    const auto run = [](simulation_draws<T>& d, const P& p) {
        gorge::grid<T> g = d.map(2 + d.below(30), 2 + d.below(30), gorge::evolution_height_limit<T>());
        const int steps = 1 + d.below(15);
        const gorge::evolution_stats st = gorge::evolve_landscape(g.view(), p, steps);
        if (gorge_test::all_finite(g) && std::isfinite(st.uplifted) && std::isfinite(st.eroded) &&
            std::isfinite(st.diffused_out))
            return std::string();
        return describe("evolution (cell_size, time_step, erodibility, m, n, diffusivity, uplift, steps; heights "
                        "finite, uplifted, eroded, diffused_out)",
                        p.cell_size, p.time_step, p.erodibility, p.area_exponent, p.slope_exponent, p.diffusivity,
                        p.uplift, steps, gorge_test::all_finite(g), st.uplifted, st.eroded, st.diffused_out);
    };
    return fuzz_simulation<T, P>(seed, draw, run);
}

}  // namespace

TEST_CASE("fuzz: droplet, thermal and landscape evolution runs are finite for valid parameters",
          "[finite][fuzz][simulation]") {
    CHECK(fuzz_droplet_runs<float>(fuzz_seed + 9) == 0);
    CHECK(fuzz_droplet_runs<double>(fuzz_seed + 10) == 0);
    CHECK(fuzz_thermal_runs<float>(fuzz_seed + 11) == 0);
    CHECK(fuzz_thermal_runs<double>(fuzz_seed + 12) == 0);
    CHECK(fuzz_evolution_runs<float>(fuzz_seed + 13) == 0);
    CHECK(fuzz_evolution_runs<double>(fuzz_seed + 14) == 0);
}
