// gorge/detail/math.hpp — GLSL-named maths over any gorge value type.
//
// Every kernel in gorge is one template over its value type T: `float`, `double`, or (through
// gorge/simd/simd.hpp) an `xsimd::batch`. The kernels never call std:: directly and never branch on a
// value; they go through the functions below, which forward to `value_ops<T>`. A new value type
// only needs a specialisation of `value_ops` (declared before the kernels are instantiated), which
// is how the SIMD glue plugs in without the scalar headers knowing about it.
//
// Names and semantics follow GLSL (and glm): `mix`, `fract`, `clamp`, `sign(0) == 0`, so the C++
// kernels and include/gorge/glsl/gorge.glsl read line for line alike.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <glm/glm.hpp>

#include "../config.hpp"

namespace gorge {
namespace detail {

/// Largest value below 2^31 that is exact in float and double (2^31 - 2^7, the largest float
/// below 2^31): the upper saturation bound of value_ops::to_int, for scalars and batches alike.
constexpr double int32_saturation_bound = 2147483520.0;

/// Operations on one value type: the only place where gorge code meets a value type's own API
/// (std:: for scalars, xsimd for batches). Specialised for float and double here and for xsimd
/// batches in gorge/simd/simd.hpp. Members (scalar names mirror the batch names):
///   value_type, scalar_type (one lane), mask_type (result of a comparison), int_type /
///   uint_type (32-bit integer lanes), float_type (32-bit float lanes, for the float-only
///   shadertoy hash), lanes (number of scalar_type values in one value_type; 1 for scalars);
///   floor, abs, sqrt, exp, sin, cos, pow, min, max, select(mask, a, b), any(mask);
///   to_int (floored value to int32, saturating), to_uint / to_int_bits (two's-complement
///   reinterpretation), int_to_float32, from_uint (exact below 2^24), to_float32 / from_float32;
///   load(src) / store(v, dst): all lanes from / to `lanes` consecutive scalars (any alignment),
///   load_partial(src, count) / store_partial(v, dst, count): the first count (1..lanes) lanes,
///   the lanes past count loaded as copies of src[count - 1];
///   gather(base, index): lane l loads base[index lane l] (every index must address an element);
///   lookup8(table, index): lane l is table[index lane l] for an 8-entry table, index lanes 0..7
///   (a register permute where the architecture has one, gather otherwise).
template <class T, class Enable = void>
struct value_ops;

template <class T>
struct value_ops<T, std::enable_if_t<std::is_floating_point<T>::value>> {
    using value_type = T;
    using scalar_type = T;
    using mask_type = bool;
    using int_type = std::int32_t;
    using uint_type = std::uint32_t;
    using float_type = float;
    static constexpr std::size_t lanes = 1;

    static T floor(T x) { return std::floor(x); }
    static T abs(T x) { return std::fabs(x); }
    static T sqrt(T x) { return std::sqrt(x); }
    static T exp(T x) { return std::exp(x); }
    static T sin(T x) { return std::sin(x); }
    static T cos(T x) { return std::cos(x); }
    static T pow(T x, T e) { return std::pow(x, e); }
    static T min(T a, T b) { return b < a ? b : a; }
    static T max(T a, T b) { return a < b ? b : a; }
    static T select(bool c, T a, T b) { return c ? a : b; }
    /// True when the mask holds in at least one lane (for a scalar: the mask itself).
    static bool any(bool c) { return c; }

    /// Converts an already-floored value to int32. Out-of-range values saturate and NaN maps to
    /// INT32_MIN, so the conversion is never undefined behaviour (the SIMD conversion instructions
    /// behave the same way for NaN).
    static int_type to_int(T x) {
        constexpr T lo = T(std::numeric_limits<std::int32_t>::min());
        constexpr T hi = T(int32_saturation_bound);
        if (!(x >= lo)) return std::numeric_limits<std::int32_t>::min();  // also catches NaN
        return static_cast<int_type>(x <= hi ? x : hi);
    }
    /// Two's-complement reinterpretation, both ways (wrap-around arithmetic happens on uint lanes).
    static uint_type to_uint(int_type i) { return static_cast<uint_type>(i); }
    static int_type to_int_bits(uint_type u) { return static_cast<int_type>(u); }
    static float_type int_to_float32(int_type i) { return static_cast<float>(i); }
    static T from_uint(uint_type u) { return static_cast<T>(u); }
    static float_type to_float32(T x) { return static_cast<float>(x); }
    static T from_float32(float_type x) { return static_cast<T>(x); }

    static T load(const T* src) { return *src; }
    static void store(T v, T* dst) { *dst = v; }
    static T load_partial(const T* src, std::size_t /*count, always 1*/) { return *src; }
    static void store_partial(T v, T* dst, std::size_t /*count, always 1*/) { *dst = v; }
    static T gather(const T* base, int_type index) { return base[index]; }
    static T lookup8(const T* table, uint_type index) { return table[index]; }
};

template <class T> using scalar_t = typename value_ops<T>::scalar_type;
template <class T> using mask_t = typename value_ops<T>::mask_type;
template <class T> using int_t = typename value_ops<T>::int_type;
template <class T> using uint_t = typename value_ops<T>::uint_type;
template <class T> using float32_t = typename value_ops<T>::float_type;

/// The constant c as a T, rounded once to T's scalar type. Same value as T(c) for float and
/// double; spelled out so that SIMD batch types convert explicitly (no narrowing warning).
template <class T> GORGE_FORCEINLINE T constant(double c) {
    return T(static_cast<typename value_ops<T>::scalar_type>(c));
}

// ---- scalar functions (GLSL names) ---------------------------------------------------------

template <class T> GORGE_FORCEINLINE T floor(T x) { return value_ops<T>::floor(x); }
template <class T> GORGE_FORCEINLINE T abs(T x) { return value_ops<T>::abs(x); }
template <class T> GORGE_FORCEINLINE T sqrt(T x) { return value_ops<T>::sqrt(x); }
template <class T> GORGE_FORCEINLINE T exp(T x) { return value_ops<T>::exp(x); }
template <class T> GORGE_FORCEINLINE T sin(T x) { return value_ops<T>::sin(x); }
template <class T> GORGE_FORCEINLINE T cos(T x) { return value_ops<T>::cos(x); }
template <class T> GORGE_FORCEINLINE T pow(T x, T e) { return value_ops<T>::pow(x, e); }
template <class T> GORGE_FORCEINLINE T min(T a, T b) { return value_ops<T>::min(a, b); }
template <class T> GORGE_FORCEINLINE T max(T a, T b) { return value_ops<T>::max(a, b); }
template <class T> GORGE_FORCEINLINE T select(mask_t<T> c, T a, T b) {
    return value_ops<T>::select(c, a, b);
}
/// Whether mask c holds in any lane. Kernels use it only for exact early-outs: skipping work
/// whose result would be multiplied by zero in every lane, never to choose between formulas.
template <class T> GORGE_FORCEINLINE bool any(mask_t<T> c) { return value_ops<T>::any(c); }

// Optional fast paths. A value_ops may provide `sincos(x, s, c)` (sin and cos from one range
// reduction), `exp_nonpositive(x)` (exp restricted to x in [-87, 0], free of overflow handling)
// and `pow_unit_base(x, e)` (pow restricted to x in {0} or [smallest normal, 1] and finite e > 0);
// the SIMD glue does. Types without them fall back to the plain functions, so for float and double
// these are exactly std::sin / std::cos / std::exp / std::pow.
template <class Ops, class = void> struct has_sincos : std::false_type {};
template <class Ops>
struct has_sincos<Ops, decltype(Ops::sincos(std::declval<const typename Ops::value_type&>(),
                                             std::declval<typename Ops::value_type&>(),
                                             std::declval<typename Ops::value_type&>()))>
    : std::true_type {};
template <class Ops, class = void> struct has_exp_nonpositive : std::false_type {};
template <class Ops>
struct has_exp_nonpositive<Ops, std::enable_if_t<std::is_same<
    decltype(Ops::exp_nonpositive(std::declval<const typename Ops::value_type&>())),
    typename Ops::value_type>::value>> : std::true_type {};

template <class Ops, class = void> struct has_pow_unit_base : std::false_type {};
template <class Ops>
struct has_pow_unit_base<Ops, std::enable_if_t<std::is_same<
    decltype(Ops::pow_unit_base(std::declval<const typename Ops::value_type&>(),
                                std::declval<const typename Ops::value_type&>())),
    typename Ops::value_type>::value>> : std::true_type {};

// A value_ops may also set `lane_permute = true` where moving values between lanes is one register
// instruction, and then provide permute_lanes(table, index) (lane l is lane (index lane l) of the
// value batch `table`, index lanes 0..lanes-1), first_lane(u) (every lane of a uint batch is its
// lane 0), lane_sequence() (the uint batch 0, 1, 2, ...) and all_at_most(u, limit) (whether
// every lane of u is <= limit, unsigned): the Phacelle window then hashes a band of cells once
// for all lanes (see gorge/filter/phacelle.hpp).
template <class Ops, class = void> struct has_lane_permute : std::false_type {};
template <class Ops> struct has_lane_permute<Ops, std::enable_if_t<Ops::lane_permute>> : std::true_type {};

// A value_ops may also provide `sincos_in_range(x, s, c)`, sincos without its per-call range
// check, valid where every lane has |x| <= `sincos_range_limit` (see detail::sincos_in_range).
template <class Ops, class = void> struct has_sincos_in_range : std::false_type {};
template <class Ops>
struct has_sincos_in_range<Ops, decltype(Ops::sincos_in_range(std::declval<const typename Ops::value_type&>(),
                                                               std::declval<typename Ops::value_type&>(),
                                                               std::declval<typename Ops::value_type&>()))>
    : std::true_type {};

/// s = sin(x), c = cos(x).
template <class T> GORGE_FORCEINLINE void sincos(T x, T& s, T& c) {
    using ops = value_ops<T>;
    if constexpr (has_sincos<ops>::value) {
        ops::sincos(x, s, c);
    } else {
        s = ops::sin(x);
        c = ops::cos(x);
    }
}
/// Whether every lane of `bound` (an upper bound of some arguments' magnitudes) lies within the
/// range of sincos_in_range, so that those arguments may skip sincos's per-call check. Always
/// false for types without sincos_in_range, whose sincos has no such check.
template <class T> GORGE_FORCEINLINE bool within_sincos_range(T bound) {
    using ops = value_ops<T>;
    if constexpr (has_sincos_in_range<ops>::value)
        return !any<T>(!(bound <= T(ops::sincos_range_limit)));
    else
        return false;
}
/// s = sin(x), c = cos(x) for arguments that within_sincos_range said true for: sincos without
/// its range check where the type has one, else sincos itself. Same results as sincos there.
template <class T> GORGE_FORCEINLINE void sincos_in_range(T x, T& s, T& c) {
    using ops = value_ops<T>;
    if constexpr (has_sincos_in_range<ops>::value)
        ops::sincos_in_range(x, s, c);
    else
        detail::sincos(x, s, c);
}
/// exp(x) for x in [-87, 0] (or NaN); batch types may give meaningless values below -87.
template <class T> GORGE_FORCEINLINE T exp_nonpositive(T x) {
    using ops = value_ops<T>;
    if constexpr (has_exp_nonpositive<ops>::value)
        return ops::exp_nonpositive(x);
    else
        return ops::exp(x);
}

// The functions below call each other qualified (detail::): an unqualified call with an xsimd
// batch argument would also find xsimd's functions of the same name by argument-dependent
// lookup, and those would win overload resolution over value_ops.
template <class T> GORGE_FORCEINLINE T fract(T x) { return x - detail::floor(x); }
template <class T> GORGE_FORCEINLINE T clamp(T x, T lo, T hi) { return detail::min(detail::max(x, lo), hi); }
/// clamp(x, 0, 1) — HLSL's saturate, the spec's sat().
template <class T> GORGE_FORCEINLINE T saturate(T x) { return detail::clamp(x, T(0), T(1)); }
/// Linear interpolation a + (b - a) t, GLSL's mix (the spec's lerp).
template <class T> GORGE_FORCEINLINE T mix(T a, T b, T t) { return a + (b - a) * t; }
/// GLSL sign: -1, 0 or +1; sign(0) == 0.
template <class T> GORGE_FORCEINLINE T sign(T x) {
    return detail::select<T>(x > T(0), T(1), detail::select<T>(x < T(0), T(-1), T(0)));
}

// ---- vector functions ------------------------------------------------------------------------

template <class T> using vec2 = glm::vec<2, T, glm::defaultp>;
template <class T> using vec3 = glm::vec<3, T, glm::defaultp>;

template <class T> GORGE_FORCEINLINE vec2<T> floor(vec2<T> v) { return {detail::floor(v.x), detail::floor(v.y)}; }
template <class T> GORGE_FORCEINLINE T dot(vec2<T> a, vec2<T> b) { return a.x * b.x + a.y * b.y; }
template <class T> GORGE_FORCEINLINE T length(vec2<T> v) { return detail::sqrt(detail::dot(v, v)); }
/// Rotates by +90 degrees: perp((x, y)) = (-y, x).
template <class T> GORGE_FORCEINLINE vec2<T> perp(vec2<T> v) { return {-v.y, v.x}; }
template <class T> GORGE_FORCEINLINE vec2<T> mix(vec2<T> a, vec2<T> b, T t) { return a + (b - a) * t; }
template <class T> GORGE_FORCEINLINE vec3<T> mix(vec3<T> a, vec3<T> b, T t) { return a + (b - a) * t; }
template <class T> GORGE_FORCEINLINE vec2<T> select(mask_t<T> c, vec2<T> a, vec2<T> b) {
    return {detail::select<T>(c, a.x, b.x), detail::select<T>(c, a.y, b.y)};
}

/// Smallest length that safe_normalize divides by; shorter vectors are returned unchanged.
constexpr double safe_normalize_min_length = 1e-10;

/// v / |v| when |v| > 1e-10, else v unchanged (no NaN for the zero vector).
template <class T> GORGE_FORCEINLINE vec2<T> safe_normalize(vec2<T> v) {
    const T len = detail::length(v);
    const auto ok = len > detail::constant<T>(safe_normalize_min_length);
    const T inv = T(1) / detail::select<T>(ok, len, T(1));
    return detail::select<T>(ok, v * inv, v);
}

// ---- easing curves used by the erosion filter --------------------------------------------------

/// 1 - (1 - sat(t))^2: starts moderately and reaches 1 at t = 1.
template <class T> GORGE_FORCEINLINE T ease_out(T t) {
    const T u = T(1) - detail::saturate(t);
    return T(1) - u * u;
}

/// A linear ramp t - k/2 whose corner at the origin is rounded over the width k: t^2 / (2k) for
/// t < k. Continuous with a continuous first derivative at t = k; 0 for k = 0 and t = 0.
template <class T> GORGE_FORCEINLINE T smooth_start(T t, T k) {
    const auto linear = t >= k;
    // In the quadratic lanes k > t >= 0, so the divisor is never zero there; the guard only keeps
    // the discarded lanes finite.
    const T safe_k = detail::select<T>(linear, T(1), k);
    return detail::select<T>(linear, t - k * T(0.5), t * t / (T(2) * safe_k));
}

/// 1 - (1 - sat(t))^e, for finite e > 0.
template <class T> GORGE_FORCEINLINE T pow_inv(T t, T e) {
    // 1 - saturate(t) is 0 or at least 2^-24 (1 - s is exact for s >= 1/2), so with e finite and
    // positive (the filter's `detail`) the base lies where pow_unit_base gives pow's bits.
    const T base = T(1) - detail::saturate(t);
    using ops = value_ops<T>;
    if constexpr (has_pow_unit_base<ops>::value)
        return T(1) - ops::pow_unit_base(base, e);
    else
        return T(1) - detail::pow(base, e);
}


}  // namespace detail
}  // namespace gorge
