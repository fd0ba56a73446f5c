// Value-only noise: gradient_noise_value, value_noise_value, simplex_noise_value, fbm_value and
// the fractals' *_value twins return exactly the value of the full (value, gradient) path, bit for
// bit, in float, double and the widest SIMD batches, over every basis; the fractal fields' value()
// member and evaluate_tile's heights-only path agree with the full path too; a basis without a
// value-only form falls back to its full form.
//
// Built twice with -march=native: test_value_only with one rounding per operation
// (-ffp-contract=off), where the two paths must agree bit for bit, and test_value_only_contracted
// with the compiler's default contraction of multiply-adds (a user's usual release build), where
// the compiler may fuse the two paths' shared expressions at different places: they must then
// agree to a few roundings per octave, |a - b| <= 8 eps A with A the fractal's amplitude sum
// (each octave's value is a handful of operations on numbers of magnitude <= 1, and a fused
// multiply-add changes one result by at most one rounding).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/perlin_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>
#include <gorge/simd/simd.hpp>
#include <gorge/simd/tile.hpp>

#include "support/catch.hpp"

namespace {

constexpr int point_count = 4000;

/// Random points over a wide range (negative, near lattice lines, far from the origin).
template <class S>
std::vector<glm::vec<2, S>> sample_points(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> wide(-3000.0, 3000.0), near(-4.0, 4.0);
    std::vector<glm::vec<2, S>> points;
    for (int i = 0; i < point_count; ++i) {
        const bool far = i % 4 == 0;
        points.emplace_back(S(far ? wide(rng) : near(rng)), S(far ? wide(rng) : near(rng)));
    }
    points.emplace_back(S(0), S(0));
    points.emplace_back(S(-1), S(2));  // on lattice points
    points.emplace_back(S(0.5), S(-0.5));
    return points;
}

template <class S>
bool same_bits(S a, S b) {
    return std::memcmp(&a, &b, sizeof(S)) == 0;
}

/// The largest amplitude sum of the fractals below (7 octaves at gain 0.5 is < 2; the ridged
/// defaults' (offset + 1)^2 bound makes it < 8).
constexpr double amplitude_bound = 8.0;

/// a and b agree: bit for bit without contraction, else within 8 eps A (see the header comment).
template <class S>
bool agree(S a, S b) {
#if defined(GORGE_TEST_CONTRACTED)
    return std::fabs(double(a) - double(b)) <= 8.0 * double(std::numeric_limits<S>::epsilon()) * amplitude_bound;
#else
    return same_bits(a, b);
#endif
}

/// Counts the points where value_of(p) and full_of(p).x differ in any bit, for scalar S and,
/// with xsimd, for batches of S (each lane compared).
template <class S, class Value, class Full>
int mismatches(const Value& value_of, const Full& full_of) {
    const std::vector<glm::vec<2, S>> points = sample_points<S>(0x5eedu);
    int bad = 0;
    for (const auto& p : points)
        if (!agree(value_of(p), full_of(p).x)) ++bad;
#if GORGE_HAS_XSIMD
    using B = gorge::simd_batch_t<S>;
    constexpr std::size_t lanes = gorge::simd_lanes<S>();
    for (std::size_t i = 0; i + lanes <= points.size(); i += lanes) {
        alignas(64) S xs[lanes], ys[lanes], v[lanes], f[lanes];
        for (std::size_t l = 0; l < lanes; ++l) xs[l] = points[i + l].x, ys[l] = points[i + l].y;
        const glm::vec<2, B> p(B::load_unaligned(xs), B::load_unaligned(ys));
        value_of(p).store_unaligned(v);
        full_of(p).x.store_unaligned(f);
        for (std::size_t l = 0; l < lanes; ++l) {
            if (!agree(v[l], f[l])) ++bad;
#if !defined(GORGE_TEST_CONTRACTED)
            // The batch lane also equals the scalar value (the kernels are one template). With
            // contraction the scalar and the batch code fuse at different places, and the ridged
            // fractal's weights carry such differences from octave to octave: that comparison
            // belongs to the uncontracted build only (as in test_simd).
            if (!same_bits(v[l], value_of(points[i + l]))) ++bad;
#endif
        }
    }
#endif
    return bad;
}

#define GORGE_VALUE_PAIR(value_call, full_call) \
    [&](const auto& p) { return value_call; }, [&](const auto& p) { return full_call; }

template <class S>
void check_bases() {
    const std::uint32_t seed = 1234567u;
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::gradient_noise_value(p, seed), gorge::gradient_noise(p, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::value_noise_value(p, seed), gorge::value_noise(p, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::simplex_noise_value(p, seed), gorge::simplex_noise(p, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::gradient_noise_value<gorge::shadertoy_hash>(p, seed),
                                         gorge::gradient_noise<gorge::shadertoy_hash>(p, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::perlin_noise_value(p, seed), gorge::perlin_noise(p, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::perlin_noise_value<gorge::pcg3d_hash>(p, seed),
                                         gorge::perlin_noise<gorge::pcg3d_hash>(p, seed))) == 0);
    gorge::fbm_params<S> fbm;
    fbm.octaves = 6;
    fbm.gain = S(0.5);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::fbm_value(p, fbm, seed), gorge::fbm(p, fbm, seed))) == 0);
}

template <class S, class Basis>
void check_fractals() {
    const std::uint32_t seed = 99u;
    gorge::fbm_params<S> fbm;
    fbm.frequency = S(0.7);
    fbm.octaves = 7;
    fbm.lacunarity = S(2.1);
    fbm.gain = S(0.5);
    const gorge::ridged_params<S> ridged{};
    const gorge::damped_fbm_params<S> damped{};
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::fractal_sum_value<Basis>(p, fbm, seed),
                                         gorge::fractal_sum<Basis>(p, fbm, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::billow_value<Basis>(p, fbm, seed), gorge::billow<Basis>(p, fbm, seed))) == 0);
#if defined(GORGE_TEST_CONTRACTED)
    // Ridged and damped fBm feed each octave's value into the next octave's weight or damping, so
    // a contraction difference early on is multiplied octave after octave (by up to
    // 2 feedback (offset + 1)^2 = 16 per octave for ridged's defaults; simplex's corner choice
    // near its cell diagonals adds its own): no useful fixed bound exists, and the uncontracted
    // build checks them bit for bit.
    (void)ridged, (void)damped;
#else
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::ridged_value<Basis>(p, ridged, seed),
                                         gorge::ridged<Basis>(p, ridged, seed))) == 0);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(gorge::damped_fbm_value<Basis>(p, damped, seed),
                                         gorge::damped_fbm<Basis>(p, damped, seed))) == 0);
    // The fields' value() member is the same value.
    const gorge::ridged_field<S, Basis> field(ridged, seed);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(field.value(p), field(p))) == 0);
    const gorge::damped_fbm_field<S, Basis> damped_field(damped, seed);
    CHECK(mismatches<S>(GORGE_VALUE_PAIR(damped_field.value(p), damped_field(p))) == 0);
#endif
}

/// A basis written before value-only forms existed: eval and eval_d2 only (gradient noise with
/// its value negated, so that a fallback to the wrong basis would show).
struct legacy_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static glm::vec<3, T> eval(gorge::detail::vec2<T> q, std::uint32_t seed) {
        return -gorge::gradient_noise<Hash>(q, seed);
    }
    template <class Hash, class T>
    static gorge::noise_d2<T> eval_d2(gorge::detail::vec2<T> q, std::uint32_t seed) {
        gorge::noise_d2<T> n = gorge::gradient_noise_d2<Hash>(q, seed);
        n.value = -n.value;
        return n;
    }
};
using legacy_basis = gorge::noise_basis<legacy_forms>;

}  // namespace

TEST_CASE("value-only noise equals the full path's value bit for bit", "[value_only]") {
    check_bases<float>();
    check_bases<double>();
}

TEST_CASE("value-only fractals equal the full path's value bit for bit, every basis", "[value_only]") {
    check_fractals<float, gorge::gradient_basis<>>();
    check_fractals<float, gorge::value_basis<>>();
    check_fractals<float, gorge::simplex_basis<>>();
    check_fractals<double, gorge::gradient_basis<>>();
    check_fractals<double, gorge::simplex_basis<>>();
    check_fractals<float, gorge::perlin_basis<>>();
    check_fractals<double, gorge::perlin_basis<>>();
    check_fractals<float, gorge::perlin_basis<gorge::prime_mix_hash>>();
    check_fractals<float, gorge::gradient_basis<gorge::shadertoy_hash>>();
}

TEST_CASE("a basis without a value-only form falls back to its full form", "[value_only]") {
    check_fractals<float, legacy_basis>();
    // And the fallback really is that basis (negated gradient noise), not the shipped one.
    gorge::fbm_params<float> fbm;
    fbm.octaves = 4;
    const glm::vec2 p(0.37f, -1.21f);
    CHECK(gorge::fractal_sum_value<legacy_basis>(p, fbm, 5u) == -gorge::fractal_sum_value(p, fbm, 5u));
    CHECK(gorge::fractal_sum_value(p, fbm, 5u) != 0.0f);
}

TEST_CASE("evaluate_tile's heights-only path equals the full path", "[value_only][tile]") {
    gorge::fbm_params<float> fbm;
    fbm.frequency = 0.01f;
    fbm.octaves = 5;
    fbm.gain = 0.5f;
    const gorge::fractal_sum_field<float> field(fbm, 42u);
    gorge::tile_sampling<float> sampling;
    sampling.origin = glm::vec2(-37.0f, 1000.0f);
    constexpr std::ptrdiff_t width = 61, height = 23;  // a row tail that is not a whole batch
    gorge::grid<float> heights_only(width, height), full(width, height), gx(width, height), gy(width, height);
    gorge::tile_buffers<float> only;
    only.height = heights_only.view();
    gorge::tile_buffers<float> all;
    all.height = full.view();
    all.gradient_x = gx.view();
    all.gradient_y = gy.view();
    gorge::evaluate_tile(field, sampling, 5, -7, only, 2);
    gorge::evaluate_tile(field, sampling, 5, -7, all, 1);
    int bad = 0;
    for (std::ptrdiff_t y = 0; y < height; ++y)
        for (std::ptrdiff_t x = 0; x < width; ++x)
            if (!agree(heights_only(x, y), full(x, y))) ++bad;
    CHECK(bad == 0);
    // And the heights are the field's (not, say, zeros): one scalar spot check.
    const float expected = gorge::fractal_sum_value(glm::vec2(-37.0f + 5.0f + 3.0f, 1000.0f - 7.0f + 4.0f), fbm, 42u);
    CHECK(agree(heights_only(3, 4), expected));
}
