// gorge/simd/simd.hpp — SIMD value types for the gorge kernels, through xsimd.
//
// Every gorge kernel is one template over its value type (see gorge/detail/math.hpp). This header
// teaches that template xsimd batches: it specialises detail::value_ops for
// xsimd::batch<float, A> and xsimd::batch<double, A> on any architecture A, so that
//     gorge::erosion_filter(glm::vec<2, xsimd::batch<float>>(x, y), ...)
// evaluates the very same source for 4, 8 or 16 points at once. Nothing in the kernels changes.
//
// Detection. GORGE_HAS_XSIMD is 1 when <xsimd/xsimd.hpp> can be included (C++17 __has_include)
// and 0 otherwise; define GORGE_NO_XSIMD (or GORGE_HAS_XSIMD=0) to force the scalar path. With
// GORGE_HAS_XSIMD == 0 this header still compiles: gorge::simd_float / simd_double are then plain
// float / double, so code written against them (gorge/simd/batch.hpp, gorge/simd/tile.hpp) works unchanged.
// The width is whatever the translation unit is compiled for: gorge never passes -march; build
// with -march=native (or -mavx2 / -mavx512f ...) to get wider batches. The CMake package makes
// the choice once for the whole target (find_package(xsimd), option GORGE_USE_XSIMD); keep it
// the same in every translation unit of a program, since it changes what gorge's templates mean.
//
// Integer hash lanes. The hashes run on 32-bit unsigned lanes (pcg3d is defined on 32-bit
// wrap-around arithmetic). For float batches those are xsimd::batch<uint32_t, A>, lane for lane.
// A double batch has half as many lanes as a 32-bit batch of the same register width (8 versus
// 16 on AVX-512), so its integer and float32 lanes are the LOW HALF of a full-width 32-bit batch:
// lane i of the uint32 batch belongs to lane i of the double batch and the upper lanes are
// unused (zero). The integer arithmetic is therefore exactly the scalar pcg3d, bit for bit; only
// the conversions between the two lane layouts go through memory, which costs a little speed on
// the (rarely used) double path and nothing on the float path.
//
// Guarantees: conversions follow the scalar semantics of detail::value_ops exactly (to_int
// saturates and maps NaN to INT32_MIN; from_uint is exact below 2^24), so the integer hashes are
// bit-identical to the scalar ones. Float batches take sin, cos, pow and the Phacelle exp from
// gorge/detail/simd_math.hpp (1-2 ulp polynomials) and the general exp from xsimd; these differ
// from libm in the last bits, so float kernels agree with the scalar path to a few ulps, not bit
// for bit (tests/test_simd.cpp measures and bounds it). Double batches evaluate sin, cos and pow
// lane by lane through libm (bit-identical to the scalar double path) and exp through xsimd.
// Every function treats each lane alone: a lane's result never depends on the other lanes, and
// every lane runs the same operation sequence at any width, so SSE2, AVX2 and AVX-512 batches give
// the same bits (tests/test_simd.cpp checks this for the demo pipeline).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <type_traits>

#include "../detail/math.hpp"

// GORGE_NO_XSIMD wins over everything else (also over a GORGE_HAS_XSIMD set by a build system).
#if defined(GORGE_NO_XSIMD)
#undef GORGE_HAS_XSIMD
#define GORGE_HAS_XSIMD 0
#elif !defined(GORGE_HAS_XSIMD)
#if defined(__has_include)
#if __has_include(<xsimd/xsimd.hpp>)
#define GORGE_HAS_XSIMD 1
#else
#define GORGE_HAS_XSIMD 0
#endif
#else
#define GORGE_HAS_XSIMD 0
#endif
#endif

#if GORGE_HAS_XSIMD

#include <cstddef>
#include <cstdint>
#include <limits>

// GCC 12's AVX-512 intrinsics seed some results with _mm512_undefined_*(), which its
// -Wuninitialized then reports inside the system headers (GCC bug 105593); silence only that,
// only around the include.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xsimd/xsimd.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "../detail/simd_math.hpp"

namespace gorge {

/// The widest float / double batch of the architecture this translation unit is compiled for.
using simd_float = xsimd::batch<float>;
using simd_double = xsimd::batch<double>;

namespace detail {

/// Largest value below 2^31 that is exact in float and double: the saturation bound of to_int.
constexpr double int32_saturation_bound = 2147483520.0;

/// The maths members of value_ops that float and double batches share (lane conversions differ
/// and stay in each specialisation). sin, cos and pow come from simd_math, whose routines treat
/// every lane alike.
template <class T>
struct batch_math_ops {
    using mask_type = typename T::batch_bool_type;

    static T floor(const T& x) { return xsimd::floor(x); }
    static T abs(const T& x) { return xsimd::abs(x); }
    static T sqrt(const T& x) { return xsimd::sqrt(x); }
    static T exp(const T& x) { return xsimd::exp(x); }
    static T sin(const T& x) {
        T s, c;
        simd_math::sincos(x, s, c);
        return s;
    }
    static T cos(const T& x) {
        T s, c;
        simd_math::sincos(x, s, c);
        return c;
    }
    static T pow(const T& x, const T& e) { return simd_math::pow(x, e); }
    static T min(const T& a, const T& b) { return xsimd::select(b < a, b, a); }
    static T max(const T& a, const T& b) { return xsimd::select(a < b, b, a); }
    static T select(const mask_type& c, const T& a, const T& b) { return xsimd::select(c, a, b); }
    static bool any(const mask_type& c) { return xsimd::any(c); }
    /// sin and cos from one shared range reduction (see detail::sincos).
    static void sincos(const T& x, T& s, T& c) { simd_math::sincos(x, s, c); }
};

/// value_ops for float batches: 32-bit integer lanes map one to one onto the float lanes.
template <class A>
struct value_ops<xsimd::batch<float, A>, void> : batch_math_ops<xsimd::batch<float, A>> {
    using value_type = xsimd::batch<float, A>;
    using scalar_type = float;
    using mask_type = xsimd::batch_bool<float, A>;
    using int_type = xsimd::batch<std::int32_t, A>;
    using uint_type = xsimd::batch<std::uint32_t, A>;
    using float_type = value_type;
    using T = value_type;

    /// exp(x) for x <= 0 (see detail::exp_nonpositive); a cheaper polynomial than xsimd::exp.
    static T exp_nonpositive(const T& x) { return simd_math::exp_nonpositive(x); }

    /// Same semantics as the scalar to_int: saturates to [INT32_MIN, 2147483520], NaN -> INT32_MIN.
    static int_type to_int(const T& x) {
        const T lo = T(float(std::numeric_limits<std::int32_t>::min()));
        const T hi = T(float(int32_saturation_bound));
        const T clamped = xsimd::select(x >= lo, value_ops::min(x, hi), lo);  // NaN fails x >= lo
        return xsimd::batch_cast<std::int32_t>(clamped);
    }
    static uint_type to_uint(const int_type& i) { return xsimd::bitwise_cast<uint_type>(i); }
    static int_type to_int_bits(const uint_type& u) { return xsimd::bitwise_cast<int_type>(u); }
    static float_type int_to_float32(const int_type& i) { return xsimd::batch_cast<float>(i); }
    static T from_uint(const uint_type& u) { return xsimd::batch_cast<float>(u); }
    static float_type to_float32(const T& x) { return x; }
    static T from_float32(const float_type& x) { return x; }
};

/// value_ops for double batches. Integer and float32 lanes are the low half of full-width 32-bit
/// batches of the same architecture (see the header comment); the upper lanes are zero.
template <class A>
struct value_ops<xsimd::batch<double, A>, void> : batch_math_ops<xsimd::batch<double, A>> {
    using value_type = xsimd::batch<double, A>;
    using scalar_type = double;
    using mask_type = xsimd::batch_bool<double, A>;
    using int_type = xsimd::batch<std::int32_t, A>;
    using uint_type = xsimd::batch<std::uint32_t, A>;
    using float_type = xsimd::batch<float, A>;
    using T = value_type;
    static constexpr std::size_t lanes = T::size;
    static constexpr std::size_t lanes32 = uint_type::size;
    static_assert(lanes32 == 2 * lanes, "gorge: unexpected xsimd register layout");

    static int_type to_int(const T& x) {
        const T lo = T(double(std::numeric_limits<std::int32_t>::min()));
        const T hi = T(int32_saturation_bound);
        const T clamped = xsimd::select(x >= lo, value_ops::min(x, hi), lo);  // NaN fails x >= lo
        alignas(A::alignment()) double in[lanes];
        alignas(A::alignment()) std::int32_t out[lanes32] = {};
        clamped.store_aligned(in);
        for (std::size_t i = 0; i < lanes; ++i) out[i] = static_cast<std::int32_t>(in[i]);  // in range
        return int_type::load_aligned(out);
    }
    static uint_type to_uint(const int_type& i) { return xsimd::bitwise_cast<uint_type>(i); }
    static int_type to_int_bits(const uint_type& u) { return xsimd::bitwise_cast<int_type>(u); }
    static float_type int_to_float32(const int_type& i) { return xsimd::batch_cast<float>(i); }
    static T from_uint(const uint_type& u) {
        alignas(A::alignment()) std::uint32_t in[lanes32];
        alignas(A::alignment()) double out[lanes];
        u.store_aligned(in);
        for (std::size_t i = 0; i < lanes; ++i) out[i] = static_cast<double>(in[i]);
        return T::load_aligned(out);
    }
    static float_type to_float32(const T& x) {
        alignas(A::alignment()) double in[lanes];
        alignas(A::alignment()) float out[lanes32] = {};
        x.store_aligned(in);
        for (std::size_t i = 0; i < lanes; ++i) out[i] = static_cast<float>(in[i]);
        return float_type::load_aligned(out);
    }
    static T from_float32(const float_type& x) {
        alignas(A::alignment()) float in[lanes32];
        alignas(A::alignment()) double out[lanes];
        x.store_aligned(in);
        for (std::size_t i = 0; i < lanes; ++i) out[i] = static_cast<double>(in[i]);
        return T::load_aligned(out);
    }
};

}  // namespace detail
}  // namespace gorge

#else  // !GORGE_HAS_XSIMD

namespace gorge {
/// Without xsimd the "batches" are single values and every API built on them stays the same.
using simd_float = float;
using simd_double = double;
}  // namespace gorge

#endif

namespace gorge {
/// Number of points in one simd_float / simd_double (1 without xsimd).
template <class S>
constexpr std::size_t simd_lanes() {
#if GORGE_HAS_XSIMD
    return std::is_same<S, float>::value ? simd_float::size : simd_double::size;
#else
    return 1;
#endif
}
}  // namespace gorge
