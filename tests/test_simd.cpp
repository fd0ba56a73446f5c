// SIMD batches (gorge/simd/simd.hpp): integer hash lanes bit-exact against the scalar hashes, the
// conversions' scalar semantics, sincos / exp accuracy against libm in double, and agreement of
// every kernel between batch and scalar evaluation (worst errors are printed).
//
// Built with the native architecture when GORGE_NATIVE_ARCH is on, so the widest batches of the
// machine are tested; the SSE2 and AVX2 widths are tested too where the compiler targets them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/csv.hpp"
#include "support/reference.hpp"
#include "support/lane_batches.hpp"
#include "support/simd_arches.hpp"

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/filter/erosion_filter.hpp>
#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/hash.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/simd/simd.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

namespace {

// Agreement bound between a batch result a and the scalar result b of the same kernel in the
// same precision: |a - b| <= agreement_tolerance * max(1, |b|). Relative above 1 and absolute
// below it, because every filter output (height delta, slope delta, ridge map) crosses zero, where
// a purely relative error is meaningless; heights and slopes of the demo terrain are of order 1,
// so 1 is their natural scale. The difference comes only from exp/sin/cos being evaluated by a
// different (1-2 ulp) polynomial, and from where the compiler fuses multiply-adds.
constexpr double agreement_tolerance = 2e-6;
// Double batches use xsimd's exp (1 ulp in double) and libm's sin/cos: far tighter agreement.
constexpr double double_agreement_tolerance = 1e-12;
// With parameters far from the defaults (see agreement_runner) the batch path must stay within
// this fraction of the scalar float path's own distance from the scalar double path.
constexpr double varied_fraction_of_rounding = 0.05;

double agreement_error(double got, double want) { return std::fabs(got - want) / std::max(1.0, std::fabs(want)); }

struct worst {
    const char* what;
    double error = 0.0;
    void add(double got, double want) {
        const double e = agreement_error(got, want);
        if (!(e <= error)) error = e;  // NaN counts as worst
    }
    void print(const char* context) const {
        std::printf("  %-36s %-14s worst error %.3e\n", context, what, error);
    }
};

}  // namespace

#if GORGE_HAS_XSIMD

namespace {

using gorge_test::for_each_arch;

template <class B>
using scalar_of = gorge::detail::scalar_t<B>;

/// Loads lanes from a vector at offset i (reading past the end wraps to the start).
template <class B>
B gather(const std::vector<scalar_of<B>>& v, std::size_t i) {
    alignas(64) scalar_of<B> buf[B::size];
    for (std::size_t l = 0; l < B::size; ++l) buf[l] = v[(i + l) % v.size()];
    return B::load_aligned(buf);
}
template <class B>
std::vector<scalar_of<B>> lanes_of(const B& b) {
    alignas(64) scalar_of<B> buf[B::size];
    b.store_aligned(buf);
    return std::vector<scalar_of<B>>(buf, buf + B::size);
}

std::uint32_t bits_of(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

const std::vector<std::int32_t> lattice_samples = {0,          1,          -1,         2,        -2,       7,
                                                   -6,         -12,        1000,       -1000,    65535,    65536,
                                                   -65537,     1 << 24,    -(1 << 24), 123456789, -987654321,
                                                   2147483647, -2147483647 - 1, 2147483646, -2147483647};

template <class Hash, class B>
void check_hash_lanes(const char* name) {
    using ops = gorge::detail::value_ops<B>;
    using U = typename ops::uint_type;
    using S = scalar_of<B>;
    std::size_t compared = 0;
    for (std::uint32_t seed : {0u, 1u, 0xdeadbeefu, 0xffffffffu}) {
        for (std::size_t i = 0; i < lattice_samples.size(); ++i) {
            // Lane l gets the lattice point (samples[i + l], samples[i + 2 l + 3]).
            alignas(64) std::uint32_t cx[U::size] = {}, cy[U::size] = {};
            for (std::size_t l = 0; l < B::size; ++l) {
                cx[l] = static_cast<std::uint32_t>(lattice_samples[(i + l) % lattice_samples.size()]);
                cy[l] = static_cast<std::uint32_t>(lattice_samples[(i + 2 * l + 3) % lattice_samples.size()]);
            }
            const glm::vec<2, B> h = Hash::template lattice2<B>(U::load_aligned(cx), U::load_aligned(cy), seed);
            const auto hx = lanes_of(h.x), hy = lanes_of(h.y);
            for (std::size_t l = 0; l < B::size; ++l) {
                const glm::vec<2, S> want = Hash::template lattice2<S>(cx[l], cy[l], seed);
                INFO(name << " lane " << l << " cell (" << std::int32_t(cx[l]) << ", " << std::int32_t(cy[l])
                          << ") seed " << seed);
                CHECK(hx[l] == want.x);
                CHECK(hy[l] == want.y);
                ++compared;
            }
        }
    }
    CHECK(compared > 0);
}

struct hash_runner {
    template <class A>
    void run() {
        check_hash_lanes<gorge::pcg3d_hash, xsimd::batch<float, A>>("pcg3d float");
        check_hash_lanes<gorge::pcg3d_hash, xsimd::batch<double, A>>("pcg3d double");
        check_hash_lanes<gorge::shadertoy_hash, xsimd::batch<float, A>>("shadertoy float");
        check_hash_lanes<gorge::shadertoy_hash, xsimd::batch<double, A>>("shadertoy double");
        check_hash_lanes<gorge::prime_mix_hash, xsimd::batch<float, A>>("prime_mix float");
        check_hash_lanes<gorge::prime_mix_hash, xsimd::batch<double, A>>("prime_mix double");
        check_hash_lanes<gorge::prime_xor_hash, xsimd::batch<float, A>>("prime_xor float");
        check_hash_lanes<gorge::prime_xor_hash, xsimd::batch<double, A>>("prime_xor double");
    }
};

template <class B>
void check_conversions() {
    using ops = gorge::detail::value_ops<B>;
    using sops = gorge::detail::value_ops<scalar_of<B>>;
    using S = scalar_of<B>;
    const S inf = std::numeric_limits<S>::infinity();
    const std::vector<S> values = {S(0),     S(-0.0),   S(1),    S(-1),   S(-2147483648.0), S(2147483520.0),
                                   S(3e9),   S(-3e9),   S(1e30), S(-1e30), inf,             -inf,
                                   std::numeric_limits<S>::quiet_NaN(),    S(16777215),     S(-16777216)};
    for (std::size_t i = 0; i < values.size(); ++i) {
        const B x = gather<B>(values, i);
        const auto got = ops::to_int(x);
        alignas(64) std::int32_t lanes[ops::int_type::size];
        got.store_aligned(lanes);
        for (std::size_t l = 0; l < B::size; ++l) {
            const S v = values[(i + l) % values.size()];
            INFO("to_int(" << v << ")");
            CHECK(lanes[l] == sops::to_int(v));
        }
    }
    // from_uint on the 24-bit values the hashes produce, and int_to_float32.
    alignas(64) std::uint32_t u[ops::uint_type::size] = {};
    for (std::size_t l = 0; l < B::size; ++l) u[l] = (0xffffffu >> l) ^ (0x5a5a5au << (l % 3));
    const auto f = lanes_of(ops::from_uint(ops::uint_type::load_aligned(u)));
    for (std::size_t l = 0; l < B::size; ++l) CHECK(f[l] == sops::from_uint(u[l]));
}

/// min and max lane by lane against the scalar rule (min(a, b) = b < a ? b : a, max(a, b) = a < b ?
/// b : a), bit for bit: NaN in either operand, signed zeros, infinities.
template <class B>
void check_min_max() {
    using ops = gorge::detail::value_ops<B>;
    using sops = gorge::detail::value_ops<scalar_of<B>>;
    using S = scalar_of<B>;
    const S inf = std::numeric_limits<S>::infinity(), nan = std::numeric_limits<S>::quiet_NaN();
    const std::vector<S> values = {S(0), S(-0.0), S(1), S(-1), S(2.5), inf, -inf, nan, -nan, S(1e-40)};
    const auto same_bits = [](S x, S y) { return std::memcmp(&x, &y, sizeof(S)) == 0; };
    for (std::size_t i = 0; i < values.size(); ++i)
        for (std::size_t j = 0; j < values.size(); ++j) {
            const B a = gather<B>(values, i), b = gather<B>(values, j);
            const auto lo = lanes_of(ops::min(a, b)), hi = lanes_of(ops::max(a, b));
            for (std::size_t l = 0; l < B::size; ++l) {
                const S x = values[(i + l) % values.size()], y = values[(j + l) % values.size()];
                INFO("min/max(" << x << ", " << y << ")");
                CHECK(same_bits(lo[l], sops::min(x, y)));
                CHECK(same_bits(hi[l], sops::max(x, y)));
            }
        }
}

struct conversion_runner {
    template <class A>
    void run() {
        check_conversions<xsimd::batch<float, A>>();
        check_conversions<xsimd::batch<double, A>>();
        check_min_max<xsimd::batch<float, A>>();
        check_min_max<xsimd::batch<double, A>>();
    }
};

/// value_ops' loads and stores of full and partial batches, against the lanes stored by xsimd.
template <class B>
void check_loads_and_stores() {
    using ops = gorge::detail::value_ops<B>;
    using S = scalar_of<B>;
    STATIC_REQUIRE(ops::lanes == B::size);
    constexpr S untouched = S(-99);
    std::vector<S> src(B::size + 1);  // one spare element: loads must work at any alignment
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = S(0.5) + S(i);
    for (std::size_t offset = 0; offset < 2; ++offset) {
        CHECK(lanes_of(ops::load(src.data() + offset)) ==
              std::vector<S>(src.begin() + std::ptrdiff_t(offset), src.begin() + std::ptrdiff_t(offset + B::size)));
        for (std::size_t count = 1; count <= B::size; ++count) {
            INFO("offset " << offset << " count " << count);
            const std::vector<S> got = lanes_of(ops::load_partial(src.data() + offset, count));
            for (std::size_t l = 0; l < B::size; ++l) CHECK(got[l] == src[offset + std::min(l, count - 1)]);
            std::vector<S> dst(B::size + 1, untouched);
            ops::store_partial(ops::load(src.data()), dst.data() + offset, count);
            for (std::size_t i = 0; i < dst.size(); ++i) {
                const bool written = i >= offset && i < offset + count;
                CHECK(dst[i] == (written ? src[i - offset] : untouched));
            }
        }
        std::vector<S> dst(B::size + 1, untouched);
        ops::store(ops::load(src.data()), dst.data() + offset);
        CHECK(dst[offset == 0 ? B::size : 0] == untouched);
        CHECK(std::equal(src.begin(), src.begin() + std::ptrdiff_t(B::size), dst.begin() + std::ptrdiff_t(offset)));
    }
}

struct load_store_runner {
    template <class A>
    void run() {
        check_loads_and_stores<xsimd::batch<float, A>>();
        check_loads_and_stores<xsimd::batch<double, A>>();
    }
};

}  // namespace

namespace {

/// Noise cells share two rows of corner hashes between the lanes of a batch whose lanes lie in one
/// cell row within lanes - 2 columns (detail::cell_corners; AVX2 and AVX-512 float batches, hashes
/// without cheap_combine): each lane of such batches, and of batches that must not share (a lane
/// west of lane 0, one in another row, too far east, NaN, columns at the int32 wrap), must equal
/// the same point evaluated alone among far-away lanes, bit for bit.
struct corner_rows_runner {
    template <class A>
    void run() const {
        using B = xsimd::batch<float, A>;
        std::size_t mismatches = 0;
        for (const gorge_test::lane_batch& b : gorge_test::band_batches(B::size, 20261202u)) {
            check<B, gorge::pcg3d_hash>(b, 7u, mismatches);
            check<B, gorge::prime_mix_hash>(b, 7u, mismatches);
            check<B, gorge::prime_xor_hash>(b, 3u, mismatches);
            check<B, gorge::shadertoy_hash>(b, 0u, mismatches);
        }
        CAPTURE(B::size);
        CHECK(mismatches == 0);
    }

    /// Gradient and value noise of the batch against each lane alone; counts differing lanes.
    template <class B, class Hash>
    static void check(const gorge_test::lane_batch& b, std::uint32_t seed, std::size_t& mismatches) {
        constexpr std::size_t n = B::size;
        const auto eval = [&](const gorge_test::lane_batch& points, float* out) {
            const glm::vec<2, B> q(B::load_unaligned(points.x.data()), B::load_unaligned(points.y.data()));
            const glm::vec<3, B> g = gorge::gradient_noise<Hash>(q, seed);
            const glm::vec<3, B> v = gorge::value_noise<Hash>(q, seed);
            const B parts[] = {g.x, g.y, g.z, v.x, v.y, v.z};
            for (std::size_t k = 0; k < 6; ++k) parts[k].store_unaligned(out + k * n);
        };
        std::vector<float> all(6 * n), alone(6 * n);
        eval(b, all.data());
        for (std::size_t l = 0; l < n; ++l) {
            eval(gorge_test::lane_alone(b, l), alone.data());
            bool same = true;
            for (std::size_t k = 0; k < 6; ++k) {
                const float u = all[k * n + l], w = alone[k * n + l];
                same = same && (std::memcmp(&u, &w, sizeof u) == 0 || (std::isnan(u) && std::isnan(w)));
            }
            mismatches += same ? 0 : 1;
        }
    }
};

}  // namespace

TEST_CASE("simd: hash lanes are bit-identical to the scalar hashes", "[simd]") { for_each_arch(hash_runner{}); }

TEST_CASE("simd: noise lanes sharing corner hashes equal each lane alone", "[simd]") { for_each_arch(corner_rows_runner{}); }

TEST_CASE("simd: conversions, min and max follow the scalar semantics exactly", "[simd]") { for_each_arch(conversion_runner{}); }

TEST_CASE("simd: value_ops loads and stores whole and partial batches", "[simd]") {
    for_each_arch(load_store_runner{});
    STATIC_REQUIRE(gorge::simd_lanes<float>() == gorge::simd_float::size);
    STATIC_REQUIRE(gorge::simd_lanes<double>() == gorge::simd_double::size);
}

TEST_CASE("simd: sincos and exp_nonpositive against libm in double", "[simd]") {
    using B = gorge::simd_float;
    using ops = gorge::detail::value_ops<B>;
    // Absolute error of sin/cos (values in [-1, 1]) and relative error of exp, against double libm.
    double sin_err = 0, cos_err = 0, exp_err = 0;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> angle(-200.0f, 200.0f), expo(-87.0f, 0.0f);
    for (int i = 0; i < 20000; ++i) {
        alignas(64) float xs[B::size], es[B::size];
        for (std::size_t l = 0; l < B::size; ++l) xs[l] = angle(rng), es[l] = expo(rng);
        xs[0] = float(i) * 0.25f;  // hits the quadrant boundaries k pi/2 closely now and then
        B s, c;
        ops::sincos(B::load_aligned(xs), s, c);
        const auto sl = lanes_of(s), cl = lanes_of(c), el = lanes_of(ops::exp_nonpositive(B::load_aligned(es)));
        for (std::size_t l = 0; l < B::size; ++l) {
            sin_err = std::max(sin_err, std::fabs(sl[l] - std::sin(double(xs[l]))));
            cos_err = std::max(cos_err, std::fabs(cl[l] - std::cos(double(xs[l]))));
            const double e = std::exp(double(es[l]));
            exp_err = std::max(exp_err, std::fabs(el[l] - e) / e);
        }
    }
    std::printf("  simd sincos |x| <= 200: worst |sin error| %.3e, |cos error| %.3e; exp relative %.3e\n", sin_err,
                cos_err, exp_err);
    // Two float ulps at 1 (2^-23 each) for sin/cos; two ulps relative for exp.
    CHECK(sin_err <= 2.4e-7);
    CHECK(cos_err <= 2.4e-7);
    CHECK(exp_err <= 2.4e-7);

    // The ends of the domain [-87, 0] (exp(-87) is still a normal float); NaN stays NaN.
    const float lowest = lanes_of(ops::exp_nonpositive(B(gorge::detail::simd_math::exp_min_argument)))[0];
    CHECK(std::fabs(double(lowest) / std::exp(-87.0) - 1.0) < 3e-7);
    CHECK(lanes_of(ops::exp_nonpositive(B(0.0f)))[0] == 1.0f);
    CHECK(std::isnan(lanes_of(ops::exp_nonpositive(B(std::numeric_limits<float>::quiet_NaN())))[0]));

    // pow on the kernels' domain (bases in [0, 1], moderate exponents), relative to libm in
    // double. Like any float pow built on exp(e log x), its relative error grows with the size
    // of y = e log x (one float ulp of y is an absolute error of y in exp's argument): the bound is
    // two ulps times (1 + |y|). The kernels only need it where the result is not tiny (|y| < 5).
    double pow_err = 0;
    std::uniform_real_distribution<float> base(0.0f, 1.0f), expo2(-3.0f, 6.0f);
    for (int i = 0; i < 5000; ++i) {
        alignas(64) float xs[B::size], es[B::size];
        for (std::size_t l = 0; l < B::size; ++l) xs[l] = base(rng), es[l] = expo2(rng);
        const auto pl = lanes_of(ops::pow(B::load_aligned(xs), B::load_aligned(es)));
        for (std::size_t l = 0; l < B::size; ++l) {
            const double want = std::pow(double(xs[l]), double(es[l]));
            if (want < 1e-30 || want > 1e30) continue;
            const double y = std::fabs(double(es[l]) * std::log(double(xs[l])));
            pow_err = std::max(pow_err, std::fabs(pl[l] - want) / want / (1.0 + y));
        }
    }
    std::printf("  simd pow on [0, 1]^[-3, 6]: worst relative error / (1 + |e log x|) %.3e\n", pow_err);
    CHECK(pow_err <= 2.4e-7);
    // Zero, negative, subnormal and non-finite bases or exponents: libm's float results exactly.
    const std::vector<float> special_x = {0.0f, -0.0f, -2.0f, -0.5f, 1e-40f, INFINITY, NAN, 0.25f, 4.0f};
    const std::vector<float> special_e = {2.0f, -1.0f, 0.0f, 3.0f, 0.5f, NAN, INFINITY, -INFINITY, 1.5f};
    for (std::size_t i = 0; i < special_x.size(); ++i) {
        const auto pl = lanes_of(ops::pow(gather<B>(special_x, i), gather<B>(special_e, 2 * i + 1)));
        for (std::size_t l = 0; l < B::size; ++l) {
            const float x = special_x[(i + l) % special_x.size()], e = special_e[(2 * i + 1 + l) % special_e.size()];
            const float want = std::pow(x, e);
            INFO("pow(" << x << ", " << e << ") = " << pl[l] << ", libm " << want);
            if (std::isnan(want)) {
                CHECK(std::isnan(pl[l]));
            } else if (x > 0.0f && std::isfinite(x) && x >= std::numeric_limits<float>::min() && std::isfinite(e)) {
                CHECK(std::fabs(pl[l] - want) <= 1e-6f * std::fabs(want));  // fast path
            } else {
                CHECK(std::fabs(pl[l]) == std::fabs(want));  // pow(-0, odd) may differ in sign only
            }
        }
    }

    // pow_unit_base, pow without its special cases for bases 0 or in [smallest normal, 1] and finite
    // positive exponents, gives pow's bits there: random bases of every binade down to the smallest
    // normal, the bases 1 - s of pow_inv, both ends, and exponents from 1e-6 to 1e4 (results that
    // underflow to 0 or to subnormals included).
    const std::vector<float> unit_ends = {0.0f, 1.0f, std::numeric_limits<float>::min(), 0x1p-24f,
                                          std::nextafter(1.0f, 0.0f), 0.5f};
    std::uniform_real_distribution<float> mantissa(0.5f, 1.0f), unit(0.0f, 1.0f), log_exponent(-6.0f, 4.0f);
    std::uniform_int_distribution<int> binade(-125, 0);
    for (int i = 0; i < 20000; ++i) {
        alignas(64) float xs[B::size], es[B::size];
        for (std::size_t l = 0; l < B::size; ++l) {
            switch ((i + int(l)) % 3) {
                case 0: xs[l] = std::ldexp(mantissa(rng), binade(rng)); break;
                case 1: xs[l] = 1.0f - unit(rng); break;
                default: xs[l] = unit_ends[std::size_t(i + int(l)) / 3 % unit_ends.size()]; break;
            }
            es[l] = std::pow(10.0f, log_exponent(rng));
        }
        const auto general = lanes_of(ops::pow(B::load_aligned(xs), B::load_aligned(es)));
        const auto unit_base = lanes_of(ops::pow_unit_base(B::load_aligned(xs), B::load_aligned(es)));
        for (std::size_t l = 0; l < B::size; ++l) {
            INFO("pow_unit_base(" << xs[l] << ", " << es[l] << ") = " << unit_base[l] << ", pow " << general[l]);
            REQUIRE(bits_of(unit_base[l]) == bits_of(general[l]));
        }
    }

    // Beyond the reduction limit (and for non-finite input) the lanes are libm's own float results.
    const std::vector<float> far = {1e4f, -3e5f, 1e20f, 8192.5f, std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::quiet_NaN(), 0.5f, -1.0f};
    for (std::size_t i = 0; i < far.size(); ++i) {
        B s, c;
        ops::sincos(gather<B>(far, i), s, c);
        const auto sl = lanes_of(s), cl = lanes_of(c);
        for (std::size_t l = 0; l < B::size; ++l) {
            const float x = far[(i + l) % far.size()];
            if (std::fabs(x) <= gorge::detail::simd_math::sincos_reduction_limit) continue;
            INFO("x = " << x);
            if (std::isnan(std::sin(x))) {
                CHECK(std::isnan(sl[l]));
                CHECK(std::isnan(cl[l]));
            } else {
                CHECK(sl[l] == std::sin(x));
                CHECK(cl[l] == std::cos(x));
            }
        }
    }
}

namespace {

/// Random points and terrain inputs for the agreement tests.
struct sample_set {
    std::vector<double> x, y, h, dx, dy, fade;
    explicit sample_set(std::size_t n, double extent, std::uint32_t seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> pos(-extent, extent), slope(-2.0, 2.0), unit(-1.0, 1.0);
        for (std::size_t i = 0; i < n; ++i) {
            x.push_back(pos(rng)), y.push_back(pos(rng));
            h.push_back(0.5 + 0.2 * unit(rng));
            dx.push_back(slope(rng)), dy.push_back(slope(rng));
            fade.push_back(1.2 * unit(rng));
        }
        // Flat input: the filter's slope normalisation guards must agree too.
        dx[0] = 0, dy[0] = 0;
    }
};

template <class V>
std::vector<V> cast_all(const std::vector<double>& v) {
    return std::vector<V>(v.begin(), v.end());
}

/// Batch-versus-scalar agreement of the erosion filter for value type B (a float or double batch).
/// Also measures how far the scalar path in this precision is from the scalar double path on the
/// same points (float rounding itself), returned as the worst over all outputs.
template <class Hash, class B>
double check_filter_agreement(const char* context, const gorge::erosion_params<scalar_of<B>>& params, double tol,
                              const gorge::erosion_params<double>& params_double, double* rounding_error = nullptr) {
    using S = scalar_of<B>;
    const sample_set d(2000, 6.0, 11);
    const auto x = cast_all<S>(d.x), y = cast_all<S>(d.y), h = cast_all<S>(d.h), dx = cast_all<S>(d.dx),
               dy = cast_all<S>(d.dy), fade = cast_all<S>(d.fade);
    worst dh{"height_delta"}, sx{"slope_delta.x"}, sy{"slope_delta.y"}, rm{"ridge_map"}, ft{"fade_target"},
        mg{"magnitude"};
    worst own{"all outputs"};  // scalar S versus scalar double
    for (std::size_t i = 0; i < x.size(); i += B::size) {
        const gorge::erosion_result<B> r = gorge::erosion_filter<Hash>(
            glm::vec<2, B>(gather<B>(x, i), gather<B>(y, i)),
            glm::vec<3, B>(gather<B>(h, i), gather<B>(dx, i), gather<B>(dy, i)), gather<B>(fade, i), params, 3u);
        const auto a = lanes_of(r.height_delta), b = lanes_of(r.slope_delta.x), c = lanes_of(r.slope_delta.y),
                   e = lanes_of(r.ridge_map), f = lanes_of(r.fade_target), m = lanes_of(r.magnitude);
        for (std::size_t l = 0; l < B::size; ++l) {
            const std::size_t k = (i + l) % x.size();
            const gorge::erosion_result<S> s = gorge::erosion_filter<Hash>(
                glm::vec<2, S>(x[k], y[k]), glm::vec<3, S>(h[k], dx[k], dy[k]), fade[k], params, 3u);
            dh.add(a[l], s.height_delta), sx.add(b[l], s.slope_delta.x), sy.add(c[l], s.slope_delta.y);
            rm.add(e[l], s.ridge_map), ft.add(f[l], s.fade_target), mg.add(m[l], s.magnitude);
            if (rounding_error) {
                const gorge::erosion_result<double> sd = gorge::erosion_filter<Hash>(
                    glm::dvec2(x[k], y[k]), glm::dvec3(h[k], dx[k], dy[k]), double(fade[k]), params_double, 3u);
                own.add(s.height_delta, sd.height_delta), own.add(s.slope_delta.x, sd.slope_delta.x);
                own.add(s.slope_delta.y, sd.slope_delta.y), own.add(s.ridge_map, sd.ridge_map);
                own.add(s.fade_target, sd.fade_target);
            }
        }
    }
    double overall = 0;
    for (const worst* w : {&dh, &sx, &sy, &rm, &ft, &mg}) {
        w->print(context);
        if (tol > 0) CHECK(w->error <= tol);
        overall = std::max(overall, w->error);
    }
    if (rounding_error) {
        own.print((std::string(context) + " (scalar vs double)").c_str());
        *rounding_error = own.error;
    }
    return overall;
}

template <class B>
void check_noise_agreement(const char* context, double tol) {
    using S = scalar_of<B>;
    const sample_set d(4000, 40.0, 5);
    const auto x = cast_all<S>(d.x), y = cast_all<S>(d.y);
    gorge::fbm_params<S> fp;
    fp.octaves = 5;
    fp.gain = S(0.5);
    worst v{"fbm value"}, gx{"fbm d/dx"}, gy{"fbm d/dy"};
    for (std::size_t i = 0; i < x.size(); i += B::size) {
        const glm::vec<3, B> n = gorge::fbm(glm::vec<2, B>(gather<B>(x, i), gather<B>(y, i)), fp, 9u);
        const auto a = lanes_of(n.x), b = lanes_of(n.y), c = lanes_of(n.z);
        for (std::size_t l = 0; l < B::size; ++l) {
            const std::size_t k = (i + l) % x.size();
            const glm::vec<3, S> s = gorge::fbm(glm::vec<2, S>(x[k], y[k]), fp, 9u);
            // Derivatives scale with the top octave's frequency (3 * 2^4): compare relative to it.
            v.add(a[l], s.x), gx.add(b[l] / 48, s.y / 48), gy.add(c[l] / 48, s.z / 48);
        }
    }
    for (const worst* w : {&v, &gx, &gy}) {
        w->print(context);
        CHECK(w->error <= tol);
    }
}

/// Parameters far from the defaults: more octaves, wider cells, sharper masks, full
/// normalisation (which divides by the blended phase length and so amplifies rounding).
template <class S>
gorge::erosion_params<S> varied_params() {
    gorge::erosion_params<S> p;
    p.octaves = 8;
    p.scale = S(0.4);
    p.detail = S(0.7);
    p.normalization = S(1);
    p.rounding = {S(0.3), S(0.2), S(0.5), S(1.5)};
    p.cell_scale = S(1.3);
    return p;
}

struct agreement_runner {
    template <class A>
    void run() {
        using F = xsimd::batch<float, A>;
        using D = xsimd::batch<double, A>;
        std::printf("  architecture %s: %zu float lanes, %zu double lanes\n", A::name(), F::size, D::size);
        // Default parameters (the published demo's, used by the benchmarks): the 2e-6 bound.
        check_filter_agreement<gorge::pcg3d_hash, F>("filter float, defaults", gorge::erosion_params<float>{},
                                                     agreement_tolerance, gorge::erosion_params<double>{});
        check_filter_agreement<gorge::shadertoy_hash, F>("filter float, shadertoy hash",
                                                         gorge::erosion_params<float>{}, agreement_tolerance,
                                                         gorge::erosion_params<double>{});
        check_filter_agreement<gorge::prime_xor_hash, F>("filter float, prime_xor hash",
                                                         gorge::erosion_params<float>{}, agreement_tolerance,
                                                         gorge::erosion_params<double>{});
        check_filter_agreement<gorge::prime_xor_hash, D>("filter double, prime_xor hash",
                                                         gorge::erosion_params<double>{}, double_agreement_tolerance,
                                                         gorge::erosion_params<double>{});
        // Far from the defaults the filter is worse conditioned: one ulp of difference in a sin or
        // exp, amplified over 8 octaves and by the phase renormalisation, reaches a few 1e-6 on the
        // ridge map. The meaningful bound there: the batch path stays within a small fraction of
        // the distance float rounding alone puts between the scalar float and double paths.
        double rounding = 0;
        const double varied = check_filter_agreement<gorge::pcg3d_hash, F>(
            "filter float, 8 octaves varied", varied_params<float>(), 0.0, varied_params<double>(), &rounding);
        std::printf("  varied parameters: batch-vs-scalar %.3e is %.2f%% of float-vs-double %.3e\n", varied,
                    100.0 * varied / rounding, rounding);
        CHECK(varied <= varied_fraction_of_rounding * rounding);
        CHECK(varied <= 10 * agreement_tolerance);
        check_filter_agreement<gorge::pcg3d_hash, D>("filter double, defaults", gorge::erosion_params<double>{},
                                                     double_agreement_tolerance, gorge::erosion_params<double>{});
        check_filter_agreement<gorge::pcg3d_hash, D>("filter double, varied", varied_params<double>(),
                                                     double_agreement_tolerance, varied_params<double>());
        check_noise_agreement<F>("fbm float", agreement_tolerance);
        check_noise_agreement<D>("fbm double", double_agreement_tolerance);
    }
};

}  // namespace

TEST_CASE("simd: batch kernels agree with the scalar kernels", "[simd]") { for_each_arch(agreement_runner{}); }

namespace {

/// Demo pipeline heights and ridge maps of a fixed point set, evaluated with architecture A.
template <class A>
std::vector<float> demo_bits(const std::vector<float>& x, const std::vector<float>& y) {
    using B = xsimd::batch<float, A>;
    std::vector<float> out(2 * x.size());
    for (std::size_t i = 0; i + B::size <= x.size(); i += B::size) {
        const auto s = gorge::demo_pipeline(glm::vec<2, B>(B::load_unaligned(&x[i]), B::load_unaligned(&y[i])), 6u);
        s.height.store_unaligned(&out[i]);
        s.ridge_map.store_unaligned(&out[x.size() + i]);
    }
    return out;
}

}  // namespace

TEST_CASE("simd: results do not depend on the batch width", "[simd]") {
    // Every lane runs the same operation sequence at any width, so SSE2, AVX2 and AVX-512 batches
    // must give the same bits (this build has no FMA contraction; see tests/CMakeLists.txt).
    std::vector<float> x(1024), y(1024);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = float(i % 64) / 64.0f + 0.001f * float(i / 64);
        y[i] = float(i / 64) / 16.0f - 0.3f;
    }
    const std::vector<float> widest = demo_bits<xsimd::default_arch>(x, y);
    std::size_t compared = 0, differing = 0;
    const auto compare = [&](const std::vector<float>& other) {
        for (std::size_t i = 0; i < widest.size(); ++i, ++compared)
            differing += std::memcmp(&widest[i], &other[i], sizeof(float)) == 0 ? 0 : 1;
    };
#if XSIMD_WITH_AVX2
    compare(demo_bits<xsimd::avx2>(x, y));
#endif
#if XSIMD_WITH_SSE2
    compare(demo_bits<xsimd::sse2>(x, y));
#endif
    std::printf("  batch widths: %zu demo outputs compared against %zu-lane batches, %zu differ\n", compared,
                xsimd::batch<float>::size, differing);
    CHECK(differing == 0);
}

TEST_CASE("simd: double batches reproduce the reference data", "[simd]") {
    // The independent reference implementation's rows (tests/data/reference/erosion_filter.csv),
    // replayed through double batches, one row per lane: within the scalar double bound of 1e-9.
    using B = gorge::simd_double;
    const gorge_test::csv_table t("erosion_filter.csv");
    double worst_delta = 0;
    std::size_t compared = 0;
    for (std::size_t r = 0; r < t.size(); ++r) {
        const auto params = gorge_test::erosion_params_of<double>(t, r);
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const glm::vec<2, B> p(B(t.number(r, "px")), B(t.number(r, "py")));
        const glm::vec<3, B> h(B(t.number(r, "h")), B(t.number(r, "hx")), B(t.number(r, "hy")));
        const auto res = gorge_test::with_hash(t.text(r, "hash"), [&](auto hash) {
            return gorge::erosion_filter<decltype(hash)>(p, h, B(t.number(r, "fade_target_in")), params, seed);
        });
        for (double got : lanes_of(res.height_delta))
            worst_delta = std::max(worst_delta, std::fabs(got - t.number(r, "height_delta")));
        ++compared;
    }
    std::printf("  erosion_filter.csv through double batches: %zu rows, worst |height_delta error| %.3e\n", compared,
                worst_delta);
    CHECK(compared > 0);
    CHECK(worst_delta <= 1e-9);
}

namespace {

/// Evaluates a field (gorge/noise/field.hpp) on batches of B and lane by lane on B's scalar type, and
/// returns the worst agreement error over value and gradient (the gradient relative to
/// `gradient_scale`, the field's typical gradient magnitude).
template <class B, class Field>
double field_agreement(const Field& field, double gradient_scale) {
    using S = scalar_of<B>;
    const sample_set d(600, 3.0, 17);
    const auto x = cast_all<S>(d.x), y = cast_all<S>(d.y);
    worst w{"field"};
    for (std::size_t i = 0; i < x.size(); i += B::size) {
        const glm::vec<3, B> n = field(glm::vec<2, B>(gather<B>(x, i), gather<B>(y, i)));
        const auto a = lanes_of(n.x), b = lanes_of(n.y), c = lanes_of(n.z);
        for (std::size_t l = 0; l < B::size; ++l) {
            const std::size_t k = (i + l) % x.size();
            const glm::vec<3, S> s = field(glm::vec<2, S>(x[k], y[k]));
            w.add(a[l], s.x);
            w.add(b[l] / gradient_scale, s.y / gradient_scale);
            w.add(c[l] / gradient_scale, s.z / gradient_scale);
        }
    }
    return w.error;
}

template <class S>
struct toolkit_fields {
    gorge::fbm_params<S> fbm{S(2), 5, S(2), S(0.5)};
    gorge::fractal_sum_field<S> gradient_fbm{fbm, 1u};
    gorge::fractal_sum_field<S, gorge::value_basis<>> value_fbm{fbm, 2u};
    gorge::fractal_sum_field<S, gorge::simplex_basis<>> simplex_fbm{fbm, 3u};
    gorge::billow_field<S> billow{fbm, 4u};
    gorge::ridged_field<S> ridged{gorge::ridged_params<S>{}, 5u};
    gorge::damped_fbm_field<S> damped{gorge::damped_fbm_params<S>{}, 6u};
    decltype(gorge::island_height_field(gorge::island_params<S>{}, 7u)) island =
        gorge::island_height_field(gorge::island_params<S>{}, 7u);
    decltype(gorge::island_moisture_field(gorge::island_params<S>{}, 7u)) moisture =
        gorge::island_moisture_field(gorge::island_params<S>{}, 7u);
};

template <class B>
void check_toolkit(const char* precision, double tol) {
    using S = scalar_of<B>;
    const toolkit_fields<S> f;
    // Gradient scales: about the top octave's frequency (2 * 2^4) for the 5-octave sums, 32 for
    // the 6-octave defaults of ridged and damped fBm, a few units for the island.
    const struct {
        const char* name;
        double error;
    } rows[] = {{"fBm (gradient basis)", field_agreement<B>(f.gradient_fbm, 32)},
                {"fBm (value basis)", field_agreement<B>(f.value_fbm, 32)},
                {"fBm (simplex basis)", field_agreement<B>(f.simplex_fbm, 32)},
                {"billow", field_agreement<B>(f.billow, 32)},
                {"ridged", field_agreement<B>(f.ridged, 32)},
                {"damped fBm", field_agreement<B>(f.damped, 32)},
                {"island height (warp, profile)", field_agreement<B>(f.island, 8)},
                {"island moisture", field_agreement<B>(f.moisture, 8)}};
    for (const auto& r : rows) {
        std::printf("  toolkit %-6s %-30s worst error %.3e\n", precision, r.name, r.error);
        INFO(precision << " " << r.name);
        CHECK(r.error <= tol);
    }
}

}  // namespace

TEST_CASE("simd: the noise toolkit's fields run on batches and agree with scalars", "[simd]") {
    check_toolkit<gorge::simd_float>("float", agreement_tolerance);
    check_toolkit<gorge::simd_double>("double", double_agreement_tolerance);
}

#else  // !GORGE_HAS_XSIMD

TEST_CASE("simd: without xsimd the batch types are the scalar types", "[simd]") {
    STATIC_REQUIRE(std::is_same<gorge::simd_float, float>::value);
    STATIC_REQUIRE(std::is_same<gorge::simd_double, double>::value);
    STATIC_REQUIRE(gorge::simd_lanes<float>() == 1);
}

#endif

TEST_CASE("value_ops of scalars: one lane, loads and stores one value", "[simd]") {
    using ops = gorge::detail::value_ops<double>;
    STATIC_REQUIRE(ops::lanes == 1);
    STATIC_REQUIRE(gorge::detail::value_ops<float>::lanes == 1);
    const double src[2] = {1.25, -7.5};
    double dst[2] = {0.0, 0.0};
    CHECK(ops::load(src + 1) == -7.5);
    CHECK(ops::load_partial(src, 1) == 1.25);
    ops::store(3.5, dst);
    ops::store_partial(4.5, dst + 1, 1);
    CHECK(dst[0] == 3.5);
    CHECK(dst[1] == 4.5);
    // The int32 saturation bound is the largest float below 2^31, exact in float and double.
    CHECK(double(float(gorge::detail::int32_saturation_bound)) == gorge::detail::int32_saturation_bound);
    CHECK(std::nextafter(float(gorge::detail::int32_saturation_bound), 3e9f) == 2147483648.0f);
    CHECK(ops::to_int(3e9) == std::int32_t(gorge::detail::int32_saturation_bound));
}
