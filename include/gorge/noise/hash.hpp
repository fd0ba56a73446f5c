// gorge/noise/hash.hpp — lattice hashes: the random numbers behind every gorge noise.
//
// A hash policy maps an integer lattice point (cx, cy) and a 32-bit seed to a 2-vector in [-1, 1).
// gorge ships four policies:
//
//   pcg3d_hash      (default) Jarzynski & Olano's pcg3d, "Hash Functions for GPU Rendering",
//                   JCGT 9(3), 2020. Pure 32-bit unsigned wrap-around arithmetic, so the C++
//                   scalar path, the SIMD path and the shader ports agree bit for bit at any
//                   distance from the origin and honour the seed. 24 bits per component.
//   prime_mix_hash  the fast exact policy: the coordinates times two odd constants (the y product
//                   rotated by 16 bits), xored with the finalised seed, then a two-round
//                   multiply-xorshift finaliser (Wellons' "lowbias32"). One
//                   32-bit result gives both components (16 bits each). A third of pcg3d's
//                   integer multiplies per corner, the same exactness and portability, seeds
//                   honoured; components step by 2^-15 instead of 2^-23. Choose it when noise
//                   speed matters more than the default's reference values (README: "Choosing a
//                   hash"; tests/test_hash.cpp measures its uniformity and independence).
//   prime_xor_hash  the cheapest exact policy: the same two coordinate products, xored with the
//                   finalised seed, then one multiply and one xorshift. One 32-bit multiply per
//                   lattice point once the kernels share the coordinate products of a row and a
//                   column (below); passes the same uniformity and independence statistics.
//                   Components step by 2^-15. The fastest noise, most of all where integer
//                   multiplies are slow (AVX-512 CPUs, GPUs); its lowest bits are mixed less than
//                   the other exact policies' (README: "Choosing a hash").
//   shadertoy_hash  the float hash of the published erosion shaders, for reproducing them exactly.
//                   It ignores the seed and works in 32-bit floats whatever the caller's type.
//
// All have the same two entry points:
//   hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) -> glm::vec2    (one point)
//   lattice2<T>(uint_t<T> cx, uint_t<T> cy, std::uint32_t seed) -> glm::vec<2,T>
// The second is what the kernels call: the lattice coordinates arrive as 32-bit unsigned lanes (a
// signed coordinate reinterpreted, so that neighbour offsets wrap instead of overflowing) and the
// result comes back in the kernel's value type T (float, double or a SIMD batch). A user-supplied
// policy only needs these two static members.
//
// Split form (optional). A kernel that hashes the corners of a lattice cell, or a 4x4 window of
// cells, visits each lattice column and row several times. The exact policies therefore also offer
//   axis_x<U>(U cx, seed) -> U,  axis_y<U>(U cy, seed) -> U      (once per column, once per row)
//   combine<T>(uint_t<T> ax, uint_t<T> ay, seed) -> glm::vec<2,T> (once per lattice point)
// with lattice2(cx, cy, seed) == combine(axis_x(cx, seed), axis_y(cy, seed), seed) bit for bit;
// their lattice2 is written that way (detail::split_lattice). Kernels reach a policy through
// detail::hash_split, which falls back to lattice2 (identity axes) for a policy without these
// members. The exact policies' axes are an affine map of the coordinate followed by a bijection,
// so they also give two neighbouring lines from one multiply (optional, same bits):
//   axis_x_pair<U>(U cx, seed, U& first, U& second) = axis_x(cx), axis_x(cx + 1); axis_y_pair alike
// The three exact policies also give the 32-bit word their components come from,
//   combine_bits<U>(U ax, U ay, seed) -> U                        (once per lattice point)
// which perlin noise (gorge/noise/perlin_noise.hpp) turns into a table index instead of floats.
// A policy whose combine is cheaper than moving its results between SIMD lanes says so with
//   static constexpr bool cheap_combine = true;                    (optional; prime_xor_hash)
// and the noise cells then hash their four corners per lane instead of sharing two rows of
// corners between the lanes of a batch (detail::cell_corners).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>
#include <type_traits>

#include "../detail/math.hpp"

namespace gorge {

namespace detail {

/// The LCG step that seeds each pcg3d lane (Numerical Recipes' 32-bit LCG constants).
constexpr std::uint32_t pcg_lcg_multiplier = 1664525u;
constexpr std::uint32_t pcg_lcg_increment = 1013904223u;
/// hash2 keeps the top 24 bits of a lane, so it converts to float exactly, then scales by 2^-23
/// and shifts by 1 into [-1, 1).
constexpr int hash_mantissa_shift = 8;
constexpr double hash_unit_scale = 1.0 / 8388608.0;  // 2^-23

/// pcg3d after its LCG step: two rounds of lane mixing around a xorshift (U is std::uint32_t or a
/// batch of them). Unsigned arithmetic wraps by definition, so there is no overflow UB.
template <class U>
GORGE_FORCEINLINE void pcg3d_mix(U& x, U& y, U& z) {
    x += y * z;
    y += z * x;
    z += x * y;
    x ^= x >> 16;
    y ^= y >> 16;
    z ^= z >> 16;
    x += y * z;
    y += z * x;
    z += x * y;
}

/// pcg3d's first step, on one lane: v * 1664525 + 1013904223 (mod 2^32).
template <class U>
GORGE_FORCEINLINE U pcg_lcg(U v) {
    return v * U(pcg_lcg_multiplier) + U(pcg_lcg_increment);
}

/// pcg3d on three unsigned 32-bit lanes: an LCG step per lane, then pcg3d_mix.
template <class U>
GORGE_FORCEINLINE void pcg3d(U& x, U& y, U& z) {
    x = pcg_lcg(x);
    y = pcg_lcg(y);
    z = pcg_lcg(z);
    pcg3d_mix(x, y, z);
}

/// Maps the top 24 bits of a lane to [-1, 1), exactly in any float type.
template <class T>
GORGE_FORCEINLINE T unit_from_bits(uint_t<T> bits) {
    return value_ops<T>::from_uint(bits >> hash_mantissa_shift) * T(hash_unit_scale) - T(1);
}

/// The two entry points of a policy written in split form (Policy has axis_x, axis_y and combine):
///   lattice2<T>(cx, cy, seed) = combine<T>(axis_x(cx, seed), axis_y(cy, seed), seed), the hash of
///                               lattice point lanes (signed coordinates reinterpreted as unsigned);
///   hash2(cx, cy, seed)       = lattice2<float> of one lattice point.
template <class Policy>
struct split_lattice {
    template <class T>
    static GORGE_FORCEINLINE vec2<T> lattice2(uint_t<T> cx, uint_t<T> cy, std::uint32_t seed) {
        return Policy::template combine<T>(Policy::axis_x(cx, seed), Policy::axis_y(cy, seed), seed);
    }
    static glm::vec2 hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
        return lattice2<float>(static_cast<std::uint32_t>(cx), static_cast<std::uint32_t>(cy), seed);
    }
};
}  // namespace detail

/// Jarzynski & Olano's pcg3d hash (the default policy). Exact integer work: every backend agrees
/// bit for bit, at any distance from the origin, and different seeds give independent fields.
/// Components in [-1, 1) with a step of 2^-23.
struct pcg3d_hash : detail::split_lattice<pcg3d_hash> {
    /// Split form: pcg3d's first step (an LCG step per lane) is done per column and per row.
    template <class U>
    static GORGE_FORCEINLINE U axis_x(U cx, std::uint32_t /*seed*/) {
        return detail::pcg_lcg(cx);
    }
    template <class U>
    static GORGE_FORCEINLINE U axis_y(U cy, std::uint32_t seed) {
        return axis_x(cy, seed);
    }
    /// axis_x(cx) and axis_x(cx + 1): the LCG step of cx + 1 is that of cx plus the multiplier.
    template <class U>
    static GORGE_FORCEINLINE void axis_x_pair(U cx, std::uint32_t seed, U& first, U& second) {
        first = axis_x(cx, seed);
        second = first + U(detail::pcg_lcg_multiplier);
    }
    template <class U>
    static GORGE_FORCEINLINE void axis_y_pair(U cy, std::uint32_t seed, U& first, U& second) {
        axis_x_pair(cy, seed, first, second);
    }
    /// The rest of pcg3d on lanes whose LCG step is done; the seed is the third lane.
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> combine(detail::uint_t<T> ax, detail::uint_t<T> ay, std::uint32_t seed) {
        using U = detail::uint_t<T>;
        U x = ax, y = ay, z = U(detail::pcg_lcg(seed));
        detail::pcg3d_mix(x, y, z);
        return {detail::unit_from_bits<T>(x), detail::unit_from_bits<T>(y)};
    }
    /// pcg3d's first output lane (the bits of the x component).
    template <class U>
    static GORGE_FORCEINLINE U combine_bits(U ax, U ay, std::uint32_t seed) {
        U x = ax, y = ay, z = U(detail::pcg_lcg(seed));
        detail::pcg3d_mix(x, y, z);
        return x;
    }
};

namespace detail {
/// prime_mix_hash: odd multipliers that spread each lattice coordinate over all 32 bits before the
/// two are combined (2^32 / golden ratio, and an odd constant with well-spread bits).
constexpr std::uint32_t prime_mix_x = 0x9E3779B1u;
constexpr std::uint32_t prime_mix_y = 0x85EBCA77u;
/// The finaliser's multipliers and shifts (C. Wellons, "Prospecting for Hash Functions", 2018:
/// lowbias32, a two-round xorshift-multiply with a measured bias of about 0.17).
constexpr std::uint32_t prime_mix_round1 = 0x7FEB352Du;
constexpr std::uint32_t prime_mix_round2 = 0x846CA68Bu;
constexpr int prime_mix_shift1 = 16;
constexpr int prime_mix_shift2 = 15;
constexpr int prime_mix_shift3 = 16;
/// Each component takes 16 bits of the 32-bit result: scaled by 2^-15 and shifted by 1 into [-1, 1).
constexpr int prime_mix_half_bits = 16;
constexpr std::uint32_t prime_mix_half_mask = 0xFFFFu;
constexpr double prime_mix_unit_scale = 1.0 / 32768.0;  // 2^-15

/// Salt of the seed: the seed is finalised once (seed ^ salt) before it meets the coordinates, so
/// that neighbouring seeds give unrelated fields and seed 0 has no fixed point at the origin.
constexpr std::uint32_t prime_mix_seed_salt = 0x27D4EB2Fu;

/// The finaliser (U: std::uint32_t or a batch of them).
template <class U>
GORGE_FORCEINLINE U prime_mix_finalise(U h) {
    h ^= h >> prime_mix_shift1;
    h *= U(prime_mix_round1);
    h ^= h >> prime_mix_shift2;
    h *= U(prime_mix_round2);
    h ^= h >> prime_mix_shift3;
    return h;
}

/// The y product is rotated by half a word before it meets the x product. Without the rotation
/// any two linear terms repeat along a diagonal: cx + 2^31 and cy + 2^31 flip the same top bit
/// of both products, and the xor cancels the flips (points 2^31 apart on the diagonal would hash
/// alike, 2^30 apart about half of them).
constexpr int prime_mix_y_rotation = 16;

/// A word rotated by half its width (see prime_mix_y_rotation).
template <class U>
GORGE_FORCEINLINE U prime_mix_rotate(U y) {
    return (y << prime_mix_y_rotation) | (y >> (32 - prime_mix_y_rotation));
}

/// The y product rotated by half a word.
template <class U>
GORGE_FORCEINLINE U prime_mix_row(U cy) {
    return prime_mix_rotate(cy * U(prime_mix_y));
}

/// The finalised seed both prime policies xor into every lattice point.
GORGE_FORCEINLINE std::uint32_t prime_mix_seed_mask(std::uint32_t seed) {
    return prime_mix_finalise(seed ^ prime_mix_seed_salt);
}

/// The 32-bit prime_mix result from a column product ax = cx * prime_mix_x and a row product
/// ay = rotl(cy * prime_mix_y, 16):  finalise(ax ^ ay ^ finalise(seed ^ salt)).
template <class U>
GORGE_FORCEINLINE U prime_mix_bits(U ax, U ay, std::uint32_t seed) {
    return prime_mix_finalise(ax ^ ay ^ U(prime_mix_seed_mask(seed)));
}

/// prime_mix's components from 16 bits each of one 32-bit result h: x from the high half, y from
/// the low half, both scaled by 2^-15 and shifted by 1 into [-1, 1).
template <class T>
GORGE_FORCEINLINE vec2<T> prime_mix_components(uint_t<T> h) {
    using ops = value_ops<T>;
    using U = uint_t<T>;
    const T scale = T(prime_mix_unit_scale);
    return {ops::from_uint(h >> prime_mix_half_bits) * scale - T(1), ops::from_uint(h & U(prime_mix_half_mask)) * scale - T(1)};
}

/// prime_xor_hash's components: x is the high half read as a signed 16-bit fraction (the low half
/// cleared, the word converted as a signed 32-bit integer, exact with 16 significant bits, then
/// scaled by 2^-31): no shift and no offset. y = (h & 0xFFFF) / 2^15 - 1 as in prime_mix.
constexpr std::uint32_t prime_xor_high_mask = 0xFFFF0000u;
constexpr double prime_xor_signed_scale = 1.0 / 2147483648.0;  // 2^-31
template <class T>
GORGE_FORCEINLINE vec2<T> prime_xor_components(uint_t<T> h) {
    using ops = value_ops<T>;
    using U = uint_t<T>;
    const T high = ops::from_float32(ops::int_to_float32(ops::to_int_bits(h & U(prime_xor_high_mask))));
    return {high * T(prime_xor_signed_scale), ops::from_uint(h & U(prime_mix_half_mask)) * T(prime_mix_unit_scale) - T(1)};
}

/// prime_xor_hash's single mixing round: one multiply (lowbias32's first multiplier) and a xorshift
/// that folds the well-mixed high half of the product into its low half.
constexpr int prime_xor_shift = 16;
template <class U>
GORGE_FORCEINLINE U prime_xor_product(U h) {
    return h * U(prime_mix_round1);
}
template <class U>
GORGE_FORCEINLINE U prime_xor_mix(U h) {
    h = prime_xor_product(h);
    return h ^ (h >> prime_xor_shift);
}
}  // namespace detail

/// The fast exact hash policy (see the header comment): bit-identical in C++ scalar, SIMD and every
/// shader port, seeds honoured, components in [-1, 1) with a step of 2^-15 (x from the high 16
/// bits of one 32-bit result, y from the low 16).
struct prime_mix_hash : detail::split_lattice<prime_mix_hash> {
    /// Split form: the coordinate products are made per column and per row.
    template <class U>
    static GORGE_FORCEINLINE U axis_x(U cx, std::uint32_t /*seed*/) {
        return cx * U(detail::prime_mix_x);
    }
    template <class U>
    static GORGE_FORCEINLINE U axis_y(U cy, std::uint32_t /*seed*/) {
        return detail::prime_mix_row(cy);
    }
    /// axis_x(cx), axis_x(cx + 1) and axis_y(cy), axis_y(cy + 1) from one product each:
    /// (c + 1) * m = c * m + m.
    template <class U>
    static GORGE_FORCEINLINE void axis_x_pair(U cx, std::uint32_t seed, U& first, U& second) {
        first = axis_x(cx, seed);
        second = first + U(detail::prime_mix_x);
    }
    template <class U>
    static GORGE_FORCEINLINE void axis_y_pair(U cy, std::uint32_t /*seed*/, U& first, U& second) {
        const U product = cy * U(detail::prime_mix_y);
        first = detail::prime_mix_rotate(product);
        second = detail::prime_mix_rotate(product + U(detail::prime_mix_y));
    }
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> combine(detail::uint_t<T> ax, detail::uint_t<T> ay, std::uint32_t seed) {
        return detail::prime_mix_components<T>(combine_bits(ax, ay, seed));
    }
    /// The 32-bit result both components come from.
    template <class U>
    static GORGE_FORCEINLINE U combine_bits(U ax, U ay, std::uint32_t seed) {
        return detail::prime_mix_bits(ax, ay, seed);
    }
};

namespace detail {
/// The 32-bit prime_mix result for lattice point (cx, cy) and seed (its components' source bits).
template <class U>
GORGE_FORCEINLINE U prime_mix(U cx, U cy, std::uint32_t seed) {
    return prime_mix_bits(prime_mix_hash::axis_x(cx, seed), prime_mix_hash::axis_y(cy, seed), seed);
}
}  // namespace detail

/// The cheapest exact hash policy (see the header comment):
///     h = ((cx * prime_mix_x) ^ finalise(seed ^ salt) ^ rotl(cy * prime_mix_y, 16)) * 0x7FEB352D
///     h ^= h >> 16;   x = int32(h & 0xFFFF0000) / 2^31,  y = (h & 0xFFFF) / 2^15 - 1
/// The seed joins the column product, so a lattice point costs one multiply, an xor and a
/// xorshift once its row and column products are known. Bit-identical in C++ scalar, SIMD and
/// every shader port; components in [-1, 1) with a step of 2^-15. The x component comes from the
/// product's high half, where every input bit has mixed; the y component is the low half xored
/// with the high half.
struct prime_xor_hash : detail::split_lattice<prime_xor_hash> {
    /// One multiply and a xorshift per lattice point: cheaper than the lane permutes that sharing
    /// corner rows between batch lanes takes (measured: 14 % slower fBm on AVX2 shared).
    static constexpr bool cheap_combine = true;
    /// Split form: prime_mix's column product with the finalised seed xored in, and its row product.
    template <class U>
    static GORGE_FORCEINLINE U axis_x(U cx, std::uint32_t seed) {
        return prime_mix_hash::axis_x(cx, seed) ^ U(detail::prime_mix_seed_mask(seed));
    }
    template <class U>
    static GORGE_FORCEINLINE U axis_y(U cy, std::uint32_t seed) {
        return prime_mix_hash::axis_y(cy, seed);
    }
    /// axis_x(cx), axis_x(cx + 1) and axis_y(cy), axis_y(cy + 1) from one product each.
    template <class U>
    static GORGE_FORCEINLINE void axis_x_pair(U cx, std::uint32_t seed, U& first, U& second) {
        prime_mix_hash::axis_x_pair(cx, seed, first, second);
        const U mask(detail::prime_mix_seed_mask(seed));
        first ^= mask;
        second ^= mask;
    }
    template <class U>
    static GORGE_FORCEINLINE void axis_y_pair(U cy, std::uint32_t seed, U& first, U& second) {
        prime_mix_hash::axis_y_pair(cy, seed, first, second);
    }
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> combine(detail::uint_t<T> ax, detail::uint_t<T> ay, std::uint32_t seed) {
        return detail::prime_xor_components<T>(combine_bits(ax, ay, seed));
    }
    /// The 32-bit result both components come from.
    template <class U>
    static GORGE_FORCEINLINE U combine_bits(U ax, U ay, std::uint32_t /*seed*/) {
        return detail::prime_xor_mix(ax ^ ay);
    }
};

namespace detail {
/// The 32-bit prime_xor result for lattice point (cx, cy) and seed (its components' source bits).
template <class U>
GORGE_FORCEINLINE U prime_xor(U cx, U cy, std::uint32_t seed) {
    return prime_xor_mix(prime_xor_hash::axis_x(cx, seed) ^ prime_xor_hash::axis_y(cy, seed));
}
}  // namespace detail

/// The float hash of the published erosion shaders (Clay John, Felix Westin, Rune Skovbo
/// Johansen), for reproducing their output exactly:
///     x = (cx, cy) * k + (k.y, k.x),  k = (0.3183099, 0.3678794)
///     hash2 = -1 + 2 * fract(16 * k * fract(x.x * x.y * (x.x + x.y)))
/// Limits, by design of the original:
///  - the seed is ignored (every seed gives the same field);
///  - it is evaluated in 32-bit float arithmetic whatever the caller's type; the lattice point
///    is converted to float, so it is exact only for |cx|, |cy| < 2^24, and its quality degrades
///    well before that (x.x * x.y * (x.x + x.y) grows cubically, and fract() of a large float has
///    few bits left): prefer pcg3d_hash beyond a few thousand cells from the origin;
///  - results are bit-exact only without FMA contraction: a compiler that fuses `x * k + k.yx`
///    (GCC's default -ffp-contract=fast in GNU mode when FMA is enabled, e.g. with -march=native)
///    rounds once instead of twice and changes the last bits, which fract() can magnify. Build
///    with -ffp-contract=off where exact agreement with another implementation matters.
struct shadertoy_hash {
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> lattice2(detail::uint_t<T> cx, detail::uint_t<T> cy,
                                                      std::uint32_t /*seed: ignored*/) {
        using ops = detail::value_ops<T>;
        using F = detail::float32_t<T>;
        const F kx = F(0.3183099f), ky = F(0.3678794f);
        const F x0 = ops::int_to_float32(ops::to_int_bits(cx));
        const F y0 = ops::int_to_float32(ops::to_int_bits(cy));
        const F x = x0 * kx + ky;
        const F y = y0 * ky + kx;
        const F t = detail::fract(x * y * (x + y));
        const F hx = F(-1) + F(2) * detail::fract(F(16) * kx * t);
        const F hy = F(-1) + F(2) * detail::fract(F(16) * ky * t);
        return {ops::from_float32(hx), ops::from_float32(hy)};
    }

    /// Hash of one lattice point in [-1, 1); the seed is ignored (see the struct's comment).
    static glm::vec2 hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
        return lattice2<float>(static_cast<std::uint32_t>(cx), static_cast<std::uint32_t>(cy), seed);
    }
};

namespace detail {
/// A hash policy's split form (see the header comment): its own axis_x, axis_y and combine when it
/// has them, otherwise identity axes and lattice2.
template <class Hash, class = void>
struct hash_split {
    template <class U>
    static GORGE_FORCEINLINE U axis_x(U cx, std::uint32_t /*seed*/) {
        return cx;
    }
    template <class U>
    static GORGE_FORCEINLINE U axis_y(U cy, std::uint32_t /*seed*/) {
        return cy;
    }
    template <class T>
    static GORGE_FORCEINLINE vec2<T> combine(uint_t<T> ax, uint_t<T> ay, std::uint32_t seed) {
        return Hash::template lattice2<T>(ax, ay, seed);
    }
};
template <class Hash>
struct hash_split<Hash, std::void_t<decltype(Hash::template axis_x<std::uint32_t>(0u, 0u)),
                                    decltype(Hash::template axis_y<std::uint32_t>(0u, 0u)),
                                    decltype(Hash::template combine<float>(0u, 0u, 0u))>> : Hash {};

/// True when Hash gives the 32-bit word of a lattice point (combine_bits, with axis_x and axis_y).
template <class Hash, class = void>
struct has_combine_bits : std::false_type {};
template <class Hash>
struct has_combine_bits<Hash, std::void_t<decltype(Hash::template axis_x<std::uint32_t>(0u, 0u)),
                                          decltype(Hash::template axis_y<std::uint32_t>(0u, 0u)),
                                          decltype(Hash::template combine_bits<std::uint32_t>(0u, 0u, 0u))>>
    : std::true_type {};

/// True when Hash gives the axes of two neighbouring lines at once (axis_x_pair, axis_y_pair).
template <class Hash, class = void>
struct has_axis_pairs : std::false_type {};
template <class Hash>
struct has_axis_pairs<Hash, std::void_t<decltype(Hash::axis_x_pair(0u, 0u, std::declval<std::uint32_t&>(),
                                                                   std::declval<std::uint32_t&>())),
                                        decltype(Hash::axis_y_pair(0u, 0u, std::declval<std::uint32_t&>(),
                                                                   std::declval<std::uint32_t&>()))>>
    : std::true_type {};

/// True when Hash declares cheap_combine = true (see the header comment).
template <class Hash, class = void>
struct has_cheap_combine : std::false_type {};
template <class Hash>
struct has_cheap_combine<Hash, std::enable_if_t<Hash::cheap_combine>> : std::true_type {};

/// The split axes of two neighbouring lines, c and c + 1: the policy's pairs when it has them (one
/// coordinate multiply per pair), else two axis calls.
template <class Hash, class U>
GORGE_FORCEINLINE void axis_x_pair(U cx, std::uint32_t seed, U& first, U& second) {
    if constexpr (has_axis_pairs<Hash>::value) {
        Hash::axis_x_pair(cx, seed, first, second);
    } else {
        first = hash_split<Hash>::axis_x(cx, seed);
        second = hash_split<Hash>::axis_x(cx + U(1u), seed);
    }
}
template <class Hash, class U>
GORGE_FORCEINLINE void axis_y_pair(U cy, std::uint32_t seed, U& first, U& second) {
    if constexpr (has_axis_pairs<Hash>::value) {
        Hash::axis_y_pair(cy, seed, first, second);
    } else {
        first = hash_split<Hash>::axis_y(cy, seed);
        second = hash_split<Hash>::axis_y(cy + U(1u), seed);
    }
}

/// The split axes of a lattice cell's two columns ix, ix + 1 and two rows iy, iy + 1.
template <class Hash, class U>
GORGE_FORCEINLINE void cell_axes(U ix, U iy, std::uint32_t seed, U& ax0, U& ax1, U& ay0, U& ay1) {
    axis_x_pair<Hash>(ix, seed, ax0, ax1);
    axis_y_pair<Hash>(iy, seed, ay0, ay1);
}

/// Four values of a lattice cell's corners (0, 0), (1, 0), (0, 1) and (1, 1) into a, b, c and d,
/// from its lower corner (ix, iy): the hash's column and row work once per pair of lines
/// (cell_axes), shared by the two corners on each line, then Pick::at<T>(ax, ay, seed) per corner.
/// (Results go to references: returned in a struct, GCC kept them in memory in the gradient
/// noise's derivative form, at half the speed with AVX2.)
template <class Hash, class Pick, class T>
GORGE_FORCEINLINE void cell_corners_by(uint_t<T> ix, uint_t<T> iy, std::uint32_t seed, vec2<T>& a, vec2<T>& b,
                                       vec2<T>& c, vec2<T>& d) {
    using U = uint_t<T>;
    U ax0, ax1, ay0, ay1;
    cell_axes<Hash>(ix, iy, seed, ax0, ax1, ay0, ay1);
    a = Pick::template at<T>(ax0, ay0, seed);
    b = Pick::template at<T>(ax1, ay0, seed);
    c = Pick::template at<T>(ax0, ay1, seed);
    d = Pick::template at<T>(ax1, ay1, seed);
}

/// The hash's own 2-vector of a lattice point from its split axes (its combine).
template <class Hash>
struct hash_combine_pick {
    template <class T>
    static GORGE_FORCEINLINE vec2<T> at(uint_t<T> ax, uint_t<T> ay, std::uint32_t seed) {
        return hash_split<Hash>::template combine<T>(ax, ay, seed);
    }
};

/// Whether every lane's lattice cell (ix, iy) lies in lane 0's cell row, at most `span` columns
/// east of lane 0's cell, so that the lanes can share the hashes of one band of cells (needs
/// has_lane_permute). `lane_column` receives each lane's column minus lane 0's (a lane west of
/// lane 0 wraps to a large value and fails the test).
template <class T>
GORGE_FORCEINLINE bool lanes_in_band(uint_t<T> ix, uint_t<T> iy, std::uint32_t span, uint_t<T>& lane_column) {
    using ops = value_ops<T>;
    lane_column = ix - ops::first_lane(ix);
    return ops::all_at_most(lane_column, span) && ops::all_at_most(iy ^ ops::first_lane(iy), 0u);
}

/// The hashes of a lattice cell's four corners (see cell_corners_by). Where the value type moves
/// values between lanes in one instruction (has_lane_permute), the hash's combine is not cheap
/// (has_cheap_combine) and every lane's cell lies in lane 0's cell row, at most lanes - 2 columns
/// east of it, the cell's two rows are hashed once for all lanes (one column per lane) and each
/// lane takes its corners from there: two combines instead of four, the same bits (as Phacelle's
/// window does; gorge/filter/phacelle.hpp).
template <class Hash, class T>
GORGE_FORCEINLINE void cell_corners(uint_t<T> ix, uint_t<T> iy, std::uint32_t seed, vec2<T>& a, vec2<T>& b,
                                    vec2<T>& c, vec2<T>& d) {
    using ops = value_ops<T>;
    using U = uint_t<T>;
    if constexpr (has_lane_permute<ops>::value && !has_cheap_combine<Hash>::value) {
        U lane_column;
        if (lanes_in_band<T>(ix, iy, std::uint32_t(ops::lanes - 2), lane_column)) {
            using split = hash_split<Hash>;
            // Band column k (lane k) is lane 0's column + k.
            const U band_column = split::axis_x(ops::first_lane(ix) + ops::lane_sequence(), seed);
            U ay0, ay1;
            axis_y_pair<Hash>(iy, seed, ay0, ay1);
            const vec2<T> low = split::template combine<T>(band_column, ay0, seed);
            const vec2<T> high = split::template combine<T>(band_column, ay1, seed);
            const U east = lane_column + U(1u);
            a = {ops::permute_lanes(low.x, lane_column), ops::permute_lanes(low.y, lane_column)};
            b = {ops::permute_lanes(low.x, east), ops::permute_lanes(low.y, east)};
            c = {ops::permute_lanes(high.x, lane_column), ops::permute_lanes(high.y, lane_column)};
            d = {ops::permute_lanes(high.x, east), ops::permute_lanes(high.y, east)};
            return;
        }
    }
    cell_corners_by<Hash, hash_combine_pick<Hash>, T>(ix, iy, seed, a, b, c, d);
}
}  // namespace detail

}  // namespace gorge
