// gorge/detail/simd_math.hpp — sincos and exp for float batches, tuned for the erosion kernels.
//
// The Phacelle loop evaluates exp, sin and cos 16 times per octave and point, so these three
// dominate the cost of the filter. xsimd's own sin and cos reduce the argument twice (once each)
// and pick one of several reduction paths with `all(...)` tests over the whole batch, which means
// a lane's last bits can depend on the other lanes of its batch. The versions here:
//   - share one range reduction between sin and cos;
//   - treat every lane alike (no whole-batch branches on values), so a lane's result depends on
//     its own argument only — a prerequisite for gorge's determinism guarantee;
//   - are accurate to about 1-2 float ulps against libm (tests/test_simd.cpp measures this);
//   - come in a variant without the range check (sincos_in_range), for callers that bound many
//     arguments at once (Phacelle checks one bound per octave instead of one per cell).
//
// Technique: Cody & Waite's additive range reduction with pi/2 split in three parts, and the
// minimax polynomials of Stephen L. Moshier's Cephes library (sinf.c, cosf.c, expf.c; the
// coefficients are the published Cephes values). For |x| > sincos_reduction_limit the three-part
// reduction loses accuracy; such lanes (only reached with extreme stripe frequencies) are
// recomputed one by one with libm, which keeps them exact and lane-independent.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "../config.hpp"

namespace gorge {
namespace detail {
namespace simd_math {

/// |x| up to which the three-part pi/2 reduction below is accurate in float (k * pio2_hi is exact
/// for |k| < 2^16 and the reduced argument keeps ~1 ulp up to here, as in Cephes sinf).
constexpr float sincos_reduction_limit = 8192.0f;

// pi/2 = pio2_hi + pio2_mid + pio2_lo, with pio2_hi and pio2_mid short enough that k * part is
// exact in float (Cephes' DP1..DP3 scaled by 1/2).
constexpr float pio2_hi = 1.5703125f;
constexpr float pio2_mid = 4.837512969970703125e-4f;
constexpr float pio2_lo = 7.54978995489188216e-8f;
constexpr float two_over_pi = 0.636619772367581343f;
/// Adding 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer held in the low mantissa
/// bits (round to nearest even, branch-free and the same in every lane).
constexpr float round_magic = 12582912.0f;
/// The sign bit of a float.
constexpr std::uint32_t float_sign_mask = 0x80000000u;

// Cephes sinf / cosf minimax coefficients on [-pi/4, pi/4].
constexpr float sin_c1 = -1.6666654611e-1f;
constexpr float sin_c2 = 8.3321608736e-3f;
constexpr float sin_c3 = -1.9515295891e-4f;
constexpr float cos_c1 = 4.166664568298827e-2f;
constexpr float cos_c2 = -1.388731625493765e-3f;
constexpr float cos_c3 = 2.443315711809948e-5f;

/// The lanes of sincos beyond sincos_reduction_limit (or not finite): s[i] and c[i] become
/// std::sin and std::cos of x[i] there, the others are left as they are.
GORGE_COLD_NOINLINE inline void sincos_far_lanes(const float* x, float* s, float* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (!(std::fabs(x[i]) <= sincos_reduction_limit)) {
            s[i] = std::sin(x[i]);
            c[i] = std::cos(x[i]);
        }
    }
}

/// (a, b) where the sign bit of `where` is clear, (b, a) where it is set: one VBLENDVPS each on
/// AVX, a test and two masked blends on AVX-512, three bit operations elsewhere.
template <class A>
GORGE_FORCEINLINE void swap_where_sign_set(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& b,
                                           const xsimd::batch<std::uint32_t, A>& where,
                                           xsimd::batch<float, A>& first, xsimd::batch<float, A>& second) {
    using F = xsimd::batch<float, A>;
    using U = xsimd::batch<std::uint32_t, A>;
    using I = xsimd::batch<std::int32_t, A>;
#if defined(__AVX512F__)
    if constexpr (std::is_base_of<xsimd::avx512f, A>::value) {
        const __mmask16 set = _mm512_cmplt_epi32_mask(where, _mm512_setzero_si512());
        first = F(_mm512_mask_blend_ps(set, a, b));
        second = F(_mm512_mask_blend_ps(set, b, a));
        return;
    }
#endif
#if defined(__AVX__)
    if constexpr (std::is_base_of<xsimd::avx, A>::value && F::size == 8) {
        const __m256 set = _mm256_castsi256_ps(where);
        first = F(_mm256_blendv_ps(a, b, set));
        second = F(_mm256_blendv_ps(b, a, set));
        return;
    }
#endif
    const U all_where_set = xsimd::bitwise_cast<U>(xsimd::bitwise_cast<I>(where) >> 31);
    const U exchange = (xsimd::bitwise_cast<U>(a) ^ xsimd::bitwise_cast<U>(b)) & all_where_set;
    first = xsimd::bitwise_cast<F>(xsimd::bitwise_cast<U>(a) ^ exchange);
    second = xsimd::bitwise_cast<F>(xsimd::bitwise_cast<U>(b) ^ exchange);
}

/// sin(x) and cos(x) of every lane, for lanes with |x| <= sincos_reduction_limit (a lane beyond
/// it gets an inaccurate value, a NaN lane NaN). The caller checks the range once for many calls;
/// sincos below checks it per call.
template <class A>
GORGE_FORCEINLINE void sincos_in_range(const xsimd::batch<float, A>& x, xsimd::batch<float, A>& s,
                                       xsimd::batch<float, A>& c) {
    using F = xsimd::batch<float, A>;
    using U = xsimd::batch<std::uint32_t, A>;
    // Quadrant k = round(x * 2/pi), taken from the low bits of the magic-number sum.
    const F shifted = x * F(two_over_pi) + F(round_magic);
    const U k = xsimd::bitwise_cast<U>(shifted);
    const F kf = shifted - F(round_magic);
    const F r = ((x - kf * F(pio2_hi)) - kf * F(pio2_mid)) - kf * F(pio2_lo);
    const F z = r * r;
    const F ps = r + r * z * (F(sin_c1) + z * (F(sin_c2) + z * F(sin_c3)));
    const F pc = F(1) - F(0.5f) * z + z * z * (F(cos_c1) + z * (F(cos_c2) + z * F(cos_c3)));
    // sin(r + k pi/2): quadrant 0 ( ps,  pc), 1 ( pc, -ps), 2 (-ps, -pc), 3 (-pc,  ps). Odd quadrants
    // swap the two (a select on k's bit 0, moved to the sign bit); the signs are bit operations on
    // k's two low bits, moved to the sign bit by shifts (no other integer constants): sin is
    // negative in quadrants 2 and 3 (bit 1), cos in quadrants 1 and 2 (bit 1 xor bit 0).
    const U bit1_at_sign = k << 30, bit0_at_sign = k << 31;
    F swapped_s, swapped_c;
    swap_where_sign_set(ps, pc, bit0_at_sign, swapped_s, swapped_c);
    const U sign_mask(float_sign_mask);
    s = xsimd::bitwise_cast<F>(xsimd::bitwise_cast<U>(swapped_s) ^ (bit1_at_sign & sign_mask));
    c = xsimd::bitwise_cast<F>(xsimd::bitwise_cast<U>(swapped_c) ^ ((bit1_at_sign ^ bit0_at_sign) & sign_mask));
}

/// sin(x) and cos(x) of every lane. Lanes with |x| > sincos_reduction_limit (or non-finite) are
/// recomputed with std::sin / std::cos.
template <class A>
GORGE_FORCEINLINE void sincos(const xsimd::batch<float, A>& x, xsimd::batch<float, A>& s,
                              xsimd::batch<float, A>& c) {
    using F = xsimd::batch<float, A>;
    sincos_in_range(x, s, c);
    // Every lane within the limit (false for NaN and infinities) is the usual case; the others
    // go through one out-of-line call, so that the caller's loop keeps its values in registers.
    if (GORGE_UNLIKELY(!xsimd::all(xsimd::abs(x) <= F(sincos_reduction_limit)))) {
        constexpr std::size_t n = F::size;
        alignas(A::alignment()) float xs[n], ss[n], cs[n];
        x.store_aligned(xs);
        s.store_aligned(ss);
        c.store_aligned(cs);
        sincos_far_lanes(xs, ss, cs, n);
        s = F::load_aligned(ss);
        c = F::load_aligned(cs);
    }
}

// ln 2 = ln2_hi + ln2_lo (Cephes expf's C1, C2), ln2_hi short so that k * ln2_hi is exact.
constexpr float ln2_hi = 0.693359375f;
constexpr float ln2_lo = -2.12194440e-4f;
constexpr float log2e = 1.44269504088896341f;
/// The lower end of exp_nonpositive's domain: exp(x) is still a normal float here (about 1.6e-38).
constexpr float exp_min_argument = -87.0f;
constexpr int float_exponent_bias = 127;
constexpr int float_mantissa_bits = 23;
// Cephes expf minimax coefficients for exp(r) - 1 - r on [-ln2/2, ln2/2].
constexpr float exp_c0 = 5.0000001201e-1f;
constexpr float exp_c1 = 1.6666665459e-1f;
constexpr float exp_c2 = 4.1665795894e-2f;
constexpr float exp_c3 = 8.3334519073e-3f;
constexpr float exp_c4 = 1.3981999507e-3f;
constexpr float exp_c5 = 1.9875691500e-4f;
/// exp(x) overflows above this and is below the smallest normal float below exp_underflow.
constexpr float exp_overflow = 88.72283f;
constexpr float exp_underflow = -87.33654f;

/// exp(x) = p 2^k, split by the Cody-Waite range reduction shared by exp_nonpositive and exp_any:
/// k = round(x / ln 2), p = exp(x - k ln 2) from the Cephes polynomial (p in [sqrt(1/2), sqrt(2)]).
template <class A>
struct exp_reduced {
    xsimd::batch<float, A> p;
    xsimd::batch<std::int32_t, A> k;
};
/// The reduction of x in [exp_underflow, exp_overflow] (so |k| <= 128); NaN stays NaN in p.
template <class A>
GORGE_FORCEINLINE exp_reduced<A> exp_reduce(const xsimd::batch<float, A>& x) {
    using F = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    const F shifted = x * F(log2e) + F(round_magic);
    const F kf = shifted - F(round_magic);
    const I k = xsimd::bitwise_cast<I>(shifted) - xsimd::bitwise_cast<I>(F(round_magic));
    const F r = (x - kf * F(ln2_hi)) - kf * F(ln2_lo);
    const F z = r * r;
    const F p =
        F(1) + r +
        z * (F(exp_c0) + r * (F(exp_c1) + r * (F(exp_c2) + r * (F(exp_c3) + r * (F(exp_c4) + r * F(exp_c5))))));
    return {p, k};
}

/// 2^k as a float, for k in [-126, 127]: the exponent field alone.
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> exp2_int(const xsimd::batch<std::int32_t, A>& k) {
    using I = xsimd::batch<std::int32_t, A>;
    return xsimd::bitwise_cast<xsimd::batch<float, A>>((k + I(float_exponent_bias)) << float_mantissa_bits);
}

/// exp(x) for x in [exp_min_argument, 0] (NaN stays NaN), with no clamp or special case: a lane
/// outside that domain gets a meaningless value. Phacelle's bell arguments lie in [-25, 0].
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> exp_nonpositive(const xsimd::batch<float, A>& x) {
    const exp_reduced<A> e = exp_reduce(x);
    return e.p * exp2_int(e.k);  // k in [-126, 0]
}

// Cephes logf: log(1 + f) = f - f^2/2 + f^3 P(f) for m = 1 + f in [sqrt(1/2), sqrt(2)).
constexpr float log_c0 = 7.0376836292e-2f;
constexpr float log_c1 = -1.1514610310e-1f;
constexpr float log_c2 = 1.1676998740e-1f;
constexpr float log_c3 = -1.2420140846e-1f;
constexpr float log_c4 = 1.4249322787e-1f;
constexpr float log_c5 = -1.6668057665e-1f;
constexpr float log_c6 = 2.0000714765e-1f;
constexpr float log_c7 = -2.4999993993e-1f;
constexpr float log_c8 = 3.3333331174e-1f;
constexpr float sqrt_half = 0.707106781186547524f;
constexpr std::uint32_t float_mantissa_mask = 0x007fffffu;
constexpr std::uint32_t float_exponent_of_half = 0x3f000000u;  // bits of 0.5f

/// log(x) for positive, finite, normal x (no special-case handling; pow() routes the rest away).
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> log_positive(const xsimd::batch<float, A>& x) {
    using F = xsimd::batch<float, A>;
    using U = xsimd::batch<std::uint32_t, A>;
    using I = xsimd::batch<std::int32_t, A>;
    const U bits = xsimd::bitwise_cast<U>(x);
    // x = m 2^e with m in [0.5, 1); then m moves to [sqrt(1/2), sqrt(2)).
    const I e = xsimd::bitwise_cast<I>(bits >> float_mantissa_bits) - I(float_exponent_bias - 1);
    F m = xsimd::bitwise_cast<F>((bits & U(float_mantissa_mask)) | U(float_exponent_of_half));
    // (Selecting on float lanes only: xsimd 8.1's integer select does not compile for AVX-512BW
    // without optimisation.)
    const auto low = m < F(sqrt_half);
    const F ef = xsimd::select(low, xsimd::batch_cast<float>(e) - F(1), xsimd::batch_cast<float>(e));
    m = xsimd::select(low, m + m, m);
    const F f = m - F(1);
    const F z = f * f;
    const F p = ((((((((F(log_c0) * f + F(log_c1)) * f + F(log_c2)) * f + F(log_c3)) * f + F(log_c4)) * f +
                    F(log_c5)) * f + F(log_c6)) * f + F(log_c7)) * f + F(log_c8));
    F y = f * z * p + ef * F(ln2_lo) - F(0.5f) * z;
    return (f + y) + ef * F(ln2_hi);
}

/// exp(x) over the whole float range: +inf above exp_overflow, 0 below exp_underflow (results
/// that would be subnormal are flushed to zero). NaN stays NaN.
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> exp_any(const xsimd::batch<float, A>& x_in) {
    using F = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    const F x = xsimd::select(x_in > F(exp_overflow), F(exp_overflow),
                              xsimd::select(x_in < F(exp_underflow), F(exp_underflow), x_in));
    const exp_reduced<A> e = exp_reduce(x);
    // 2^k for k in [-126, 128], as two factors that both stay in the normal range.
    const I k1 = e.k >> 1;
    const F result = e.p * exp2_int(k1) * exp2_int(e.k - k1);
    return xsimd::select(x_in > F(exp_overflow), F(std::numeric_limits<float>::infinity()),
                         xsimd::select(x_in < F(exp_underflow), F(0.0f), result));
}

/// pow(x, e) as exp(e log x) for x > 0 (1 for e == 0, +0 / +inf for x == 0 and e > 0 / e < 0).
/// Lanes with x < 0, non-finite x or e, or subnormal x are recomputed with std::pow, so they
/// follow libm exactly (the kernels only raise values in [0, 1], where the fast path applies).
/// xsimd's own pow is not used: its log does not compile for AVX-512BW without optimisation in
/// xsimd 8.1, and its whole-batch branches would make a lane depend on the others.
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> pow(const xsimd::batch<float, A>& x, const xsimd::batch<float, A>& e) {
    using F = xsimd::batch<float, A>;
    const F inf(std::numeric_limits<float>::infinity());
    const auto positive = x >= F(std::numeric_limits<float>::min()) && x < inf;
    const auto zero = x == F(0.0f);
    const F safe_x = xsimd::select(positive, x, F(1.0f));
    F result = exp_any(e * log_positive(safe_x));
    result = xsimd::select(zero, xsimd::select(e > F(0.0f), F(0.0f), inf), result);
    result = xsimd::select(e == F(0.0f), F(1.0f), result);
    const auto fast = (positive || zero) && xsimd::abs(e) < inf;
    if (!xsimd::all(fast)) {
        constexpr std::size_t n = F::size;
        alignas(A::alignment()) float xs[n], es[n], rs[n];
        x.store_aligned(xs);
        e.store_aligned(es);
        result.store_aligned(rs);
        for (std::size_t i = 0; i < n; ++i) {
            const bool lane_positive = xs[i] >= std::numeric_limits<float>::min() && xs[i] < INFINITY;
            const bool lane_fast = (lane_positive || xs[i] == 0.0f) && std::fabs(es[i]) < INFINITY;
            if (!lane_fast) rs[i] = std::pow(xs[i], es[i]);
        }
        result = F::load_aligned(rs);
    }
    return result;
}

/// pow(x, e) for x that is 0 or in [smallest normal float, 1] and finite e > 0, the arguments of
/// the erosion filter's mask (1 - saturate(mask), raised to `detail`): the same bits as pow above
/// there, without its tests for the other cases (e log x <= 0 cannot overflow, and 2^k stays one
/// normal factor). Other arguments are outside the contract.
template <class A>
GORGE_FORCEINLINE xsimd::batch<float, A> pow_unit_base(const xsimd::batch<float, A>& x,
                                                       const xsimd::batch<float, A>& e) {
    using F = xsimd::batch<float, A>;
    // log_positive(0) is a finite value (about -88), replaced by the select below.
    const F y = e * log_positive(x);
    // The clamp of exp_any: y below the bound becomes the bound; max(bound, y) returns y when y is
    // NaN (x86 maxps returns its second operand then).
    const exp_reduced<A> r = exp_reduce(xsimd::max(F(exp_underflow), y));
    return xsimd::select(y < F(exp_underflow) || x == F(0.0f), F(0.0f), r.p * exp2_int(r.k));
}

/// pow of double batches, lane by lane through libm (exact, see sincos below).
template <class A>
GORGE_FORCEINLINE xsimd::batch<double, A> pow(const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& e) {
    using D = xsimd::batch<double, A>;
    constexpr std::size_t n = D::size;
    alignas(A::alignment()) double xs[n], es[n], rs[n];
    x.store_aligned(xs);
    e.store_aligned(es);
    for (std::size_t i = 0; i < n; ++i) rs[i] = std::pow(xs[i], es[i]);
    return D::load_aligned(rs);
}

/// sin and cos of double batches, lane by lane through libm: bit-identical to the scalar double
/// path and independent of the other lanes (the double batches trade speed here for exactness).
template <class A>
GORGE_FORCEINLINE void sincos(const xsimd::batch<double, A>& x, xsimd::batch<double, A>& s,
                              xsimd::batch<double, A>& c) {
    using D = xsimd::batch<double, A>;
    constexpr std::size_t n = D::size;
    alignas(A::alignment()) double xs[n], ss[n], cs[n];
    x.store_aligned(xs);
    for (std::size_t i = 0; i < n; ++i) {
        ss[i] = std::sin(xs[i]);
        cs[i] = std::cos(xs[i]);
    }
    s = D::load_aligned(ss);
    c = D::load_aligned(cs);
}

}  // namespace simd_math
}  // namespace detail
}  // namespace gorge
