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

// xsimd inside the guard against GCC 12's warnings in its own intrinsics (detail/intrinsics.hpp).
#include "../detail/intrinsics.hpp"
GORGE_DETAIL_SYSTEM_SIMD_BEGIN
#include <xsimd/xsimd.hpp>
GORGE_DETAIL_SYSTEM_SIMD_END

#include "../detail/simd_math.hpp"

namespace gorge {

/// The widest float / double batch of the architecture this translation unit is compiled for.
using simd_float = xsimd::batch<float>;
using simd_double = xsimd::batch<double>;

namespace detail {

/// The members of value_ops that float and double batches share: the types, the maths (sin, cos
/// and pow from simd_math, whose routines treat every lane alike), the conversions between the
/// 32-bit lanes, the range clamp of to_int, and the loads and stores. The conversions between
/// the value lanes and the 32-bit lanes differ and stay in each specialisation.
template <class T>
struct batch_ops_base {
    using value_type = T;
    using scalar_type = typename T::value_type;
    using mask_type = typename T::batch_bool_type;
    using arch_type = typename T::arch_type;
    using int_type = xsimd::batch<std::int32_t, arch_type>;
    using uint_type = xsimd::batch<std::uint32_t, arch_type>;
    using float_type = xsimd::batch<float, arch_type>;
    static constexpr std::size_t lanes = T::size;
    /// True on the x86 architectures (SSE2 and up): xsimd::min / xsimd::max are the MINPS / MAXPS
    /// family there (see min and max), and float to int32 conversion is CVTTPS2DQ (see to_int).
    static constexpr bool is_x86 = std::is_base_of<xsimd::sse2, arch_type>::value ||
                                   std::is_base_of<xsimd::avx, arch_type>::value ||
                                   std::is_base_of<xsimd::avx512f, arch_type>::value;

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
    /// min(a, b) = b < a ? b : a and max(a, b) = a < b ? b : a in every lane, as for scalars: a NaN
    /// b gives a, a NaN a gives a (NaN), min(+0, -0) = +0. On x86 that is exactly one MINPS /
    /// MAXPS with the operands swapped (the instruction returns its second operand unless the
    /// first compares below / above it), which xsimd emits for xsimd::min / xsimd::max there;
    /// elsewhere a compare and a select.
    static T min(const T& a, const T& b) {
        if constexpr (is_x86) return xsimd::min(b, a);
        else return xsimd::select(b < a, b, a);
    }
    static T max(const T& a, const T& b) {
        if constexpr (is_x86) return xsimd::max(b, a);
        else return xsimd::select(a < b, b, a);
    }
    static T select(const mask_type& c, const T& a, const T& b) { return xsimd::select(c, a, b); }
    static bool any(const mask_type& c) { return xsimd::any(c); }
    /// sin and cos from one shared range reduction (see detail::sincos).
    static void sincos(const T& x, T& s, T& c) { simd_math::sincos(x, s, c); }

    static uint_type to_uint(const int_type& i) { return xsimd::bitwise_cast<uint_type>(i); }
    static int_type to_int_bits(const uint_type& u) { return xsimd::bitwise_cast<int_type>(u); }
    static float_type int_to_float32(const int_type& i) { return xsimd::batch_cast<float>(i); }

    /// x clamped to [INT32_MIN, int32_saturation_bound], NaN lanes to INT32_MIN: every lane is
    /// then in range of the int32 conversion, which gives the scalar to_int semantics.
    static T clamp_to_int32(const T& x) {
        const T lo = T(scalar_type(std::numeric_limits<std::int32_t>::min()));
        const T hi = T(scalar_type(int32_saturation_bound));
        return xsimd::select(x >= lo, batch_ops_base::min(x, hi), lo);  // NaN fails x >= lo
    }

    static GORGE_FORCEINLINE T load(const scalar_type* src) { return T::load_unaligned(src); }
    static GORGE_FORCEINLINE void store(const T& v, scalar_type* dst) { v.store_unaligned(dst); }
    static GORGE_FORCEINLINE T load_partial(const scalar_type* src, std::size_t count) {
        if (count == lanes) return load(src);
        alignas(arch_type::alignment()) scalar_type buf[lanes];
        for (std::size_t i = 0; i < lanes; ++i) buf[i] = src[i < count ? i : count - 1];
        return T::load_aligned(buf);
    }
    static GORGE_FORCEINLINE void store_partial(const T& v, scalar_type* dst, std::size_t count) {
        if (count == lanes) {
            store(v, dst);
            return;
        }
        alignas(arch_type::alignment()) scalar_type buf[lanes];
        v.store_aligned(buf);
        for (std::size_t i = 0; i < count; ++i) dst[i] = buf[i];
    }
};

/// The first Count lanes of `from`, each converted with static_cast, as a batch To whose other
/// lanes are zero. Goes through memory: for the conversions between double batches and their
/// half-used 32-bit batches, whose lane layouts differ.
template <class To, std::size_t Count, class From>
To convert_lanes(const From& from) {
    static_assert(Count <= From::size && Count <= To::size, "gorge: convert_lanes past the last lane");
    using from_scalar = typename From::value_type;
    using to_scalar = typename To::value_type;
    alignas(From::arch_type::alignment()) from_scalar in[From::size];
    alignas(To::arch_type::alignment()) to_scalar out[To::size] = {};
    from.store_aligned(in);
    for (std::size_t i = 0; i < Count; ++i) out[i] = static_cast<to_scalar>(in[i]);
    return To::load_aligned(out);
}

/// value_ops for float batches: 32-bit integer lanes map one to one onto the float lanes.
template <class A>
struct value_ops<xsimd::batch<float, A>, void> : batch_ops_base<xsimd::batch<float, A>> {
    using T = xsimd::batch<float, A>;
    using typename batch_ops_base<T>::int_type;
    using typename batch_ops_base<T>::uint_type;
    using typename batch_ops_base<T>::float_type;

    /// exp(x) for x in [-87, 0] (see detail::exp_nonpositive); a cheaper polynomial than xsimd::exp.
    static T exp_nonpositive(const T& x) { return simd_math::exp_nonpositive(x); }
    /// pow(x, e) for x in {0} or [smallest normal, 1] and finite e > 0: pow's bits there, without
    /// its special cases (see detail::pow_inv).
    static T pow_unit_base(const T& x, const T& e) { return simd_math::pow_unit_base(x, e); }
    /// sin and cos of lanes with |x| <= sincos_range_limit, without sincos's per-call range check
    /// (see detail::sincos_in_range).
    static constexpr float sincos_range_limit = simd_math::sincos_reduction_limit;
    static void sincos_in_range(const T& x, T& s, T& c) { simd_math::sincos_in_range(x, s, c); }

    /// Same semantics as the scalar to_int: saturates to [INT32_MIN, int32_saturation_bound], NaN -> INT32_MIN.
    /// On x86 the conversion instruction itself returns INT32_MIN (its "integer indefinite") for
    /// NaN and for every lane below INT32_MIN, so only the upper bound needs a clamp.
    static int_type to_int(const T& x) {
        if constexpr (value_ops::is_x86)
            return xsimd::batch_cast<std::int32_t>(value_ops::min(x, T(float(int32_saturation_bound))));
        else
            return xsimd::batch_cast<std::int32_t>(value_ops::clamp_to_int32(x));
    }
    /// Exact below 2^24 (the contract); lanes below 2^31 convert as signed integers, which is one
    /// instruction where an unsigned conversion takes several.
    static T from_uint(const uint_type& u) { return xsimd::batch_cast<float>(xsimd::bitwise_cast<int_type>(u)); }
    static float_type to_float32(const T& x) { return x; }
    static T from_float32(const float_type& x) { return x; }
    /// Lane l loads base[index lane l].
    static T gather(const float* base, const int_type& index) { return T::gather(base, index); }
    /// Lane l is table[index lane l] (8 entries, index lanes 0..7): one permute of the table held in
    /// a register on AVX2 and AVX-512 (VPERMPS), a gather elsewhere.
    static T lookup8(const float* table, const uint_type& index) {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of<xsimd::avx512f, A>::value) {
            constexpr __mmask16 first_eight = 0x00FF;  // the table's 8 entries, the other lanes zero
            return T(_mm512_permutexvar_ps(index, _mm512_maskz_loadu_ps(first_eight, table)));
        } else
#endif
#if defined(__AVX2__)
        if constexpr (std::is_base_of<xsimd::avx2, A>::value && T::size == 8) {
            return T(_mm256_permutevar8x32_ps(_mm256_loadu_ps(table), index));
        } else
#endif
        {
            return gather(table, value_ops::to_int_bits(index));
        }
    }

    /// The lane moves of detail::has_lane_permute: one VPERMPS or VPBROADCASTD on AVX2 (8 lanes) and
    /// AVX-512 (16 lanes), where lane_permute is true; through memory elsewhere.
#if defined(__AVX512F__)
    static constexpr bool avx512_lanes = std::is_base_of<xsimd::avx512f, A>::value;
#else
    static constexpr bool avx512_lanes = false;
#endif
#if defined(__AVX2__)
    static constexpr bool avx2_lanes = !avx512_lanes && std::is_base_of<xsimd::avx2, A>::value && T::size == 8;
#else
    static constexpr bool avx2_lanes = false;
#endif
    static constexpr bool lane_permute = avx512_lanes || avx2_lanes;
    /// Lane l is lane (index lane l) of table (index lanes 0..lanes-1).
    static T permute_lanes(const T& table, const uint_type& index) {
#if defined(__AVX512F__)
        if constexpr (avx512_lanes) return T(_mm512_permutexvar_ps(index, table));
#endif
#if defined(__AVX2__)
        if constexpr (avx2_lanes) return T(_mm256_permutevar8x32_ps(table, index));
#endif
        alignas(A::alignment()) float values[T::size];
        alignas(A::alignment()) std::uint32_t lanes_from[T::size];
        table.store_aligned(values);
        index.store_aligned(lanes_from);
        alignas(A::alignment()) float out[T::size];
        for (std::size_t l = 0; l < T::size; ++l) out[l] = values[lanes_from[l] % T::size];
        return T::load_aligned(out);  // (elsewhere, through memory; phacelle does not use it there)
    }
    /// Every lane is lane 0 of u.
    static uint_type first_lane(const uint_type& u) {
#if defined(__AVX512F__)
        if constexpr (avx512_lanes) return uint_type(_mm512_broadcastd_epi32(_mm512_castsi512_si128(u)));
#endif
#if defined(__AVX2__)
        if constexpr (avx2_lanes) return uint_type(_mm256_broadcastd_epi32(_mm256_castsi256_si128(u)));
#endif
        alignas(A::alignment()) std::uint32_t values[T::size];
        u.store_aligned(values);
        return uint_type(values[0]);
    }
    /// The lanes' own indices, 0, 1, 2, ...
    static uint_type lane_sequence() {
        alignas(64) static constexpr std::uint32_t sequence[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        static_assert(T::size <= 16, "gorge: lane_sequence holds 16 lanes");
        return uint_type::load_aligned(sequence);
    }
    /// Whether every lane of u is <= limit (unsigned).
    static bool all_at_most(const uint_type& u, std::uint32_t limit) {
        return xsimd::all(xsimd::min(u, uint_type(limit)) == u);
    }
};

/// value_ops for double batches. Integer and float32 lanes are the low half of full-width 32-bit
/// batches of the same architecture (see the header comment); the upper lanes are zero.
template <class A>
struct value_ops<xsimd::batch<double, A>, void> : batch_ops_base<xsimd::batch<double, A>> {
    using T = xsimd::batch<double, A>;
    using typename batch_ops_base<T>::int_type;
    using typename batch_ops_base<T>::uint_type;
    using typename batch_ops_base<T>::float_type;
    static_assert(uint_type::size == 2 * T::size, "gorge: unexpected xsimd register layout");

    /// Same semantics as the scalar to_int (the clamped lanes convert exactly).
    static int_type to_int(const T& x) { return convert_lanes<int_type, T::size>(value_ops::clamp_to_int32(x)); }
    static T from_uint(const uint_type& u) { return convert_lanes<T, T::size>(u); }
    static float_type to_float32(const T& x) { return convert_lanes<float_type, T::size>(x); }
    static T from_float32(const float_type& x) { return convert_lanes<T, T::size>(x); }
    /// Lane l loads base[index lane l] (the index lanes widened to 64 bits first).
    static T gather(const double* base, const int_type& index) {
        return T::gather(base, convert_lanes<xsimd::batch<std::int64_t, A>, T::size>(index));
    }
    /// Lane l is table[index lane l] (8 entries, index lanes 0..7), through gather.
    static T lookup8(const double* table, const uint_type& index) { return gather(table, value_ops::to_int_bits(index)); }
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
/// The SIMD batch gorge uses for scalar type S: simd_float for float, simd_double for double.
template <class S>
using simd_batch_t = std::conditional_t<std::is_same<S, float>::value, simd_float, simd_double>;

/// Number of points in one simd_batch_t<S> (1 without xsimd).
template <class S>
constexpr std::size_t simd_lanes() {
    return detail::value_ops<simd_batch_t<S>>::lanes;
}
}  // namespace gorge
