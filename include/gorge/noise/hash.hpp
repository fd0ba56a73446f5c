// gorge/noise/hash.hpp — lattice hashes: the random numbers behind every gorge noise.
//
// A hash policy maps an integer lattice point (cx, cy) and a 32-bit seed to a 2-vector in [-1, 1).
// gorge ships three policies:
//
//   pcg3d_hash      (default) Jarzynski & Olano's pcg3d, "Hash Functions for GPU Rendering",
//                   JCGT 9(3), 2020. Pure 32-bit unsigned wrap-around arithmetic, so the C++
//                   scalar path, the SIMD path and the shader ports agree bit for bit at any
//                   distance from the origin and honour the seed. 24 bits per component.
//   prime_mix_hash  the fast exact policy: the coordinates times two odd constants (the y product
//                   rotated by 16 bits), xored with the finalised seed, then a two-round
//                   multiply-xorshift finaliser (Wellons' "lowbias32"). One
//                   32-bit result gives both components (16 bits each). About half of pcg3d's
//                   integer multiplies per corner, the same exactness and portability, seeds
//                   honoured; components step by 2^-15 instead of 2^-23. Choose it when noise
//                   speed matters more than the default's reference values (README: "Choosing a
//                   hash"; tests/test_hash.cpp measures its uniformity and independence).
//   shadertoy_hash  the float hash of the published erosion shaders, for reproducing them exactly.
//                   It ignores the seed and works in 32-bit floats whatever the caller's type.
//
// Both have the same two entry points:
//   hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) -> glm::vec2    (one point)
//   lattice2<T>(uint_t<T> cx, uint_t<T> cy, std::uint32_t seed) -> glm::vec<2,T>
// The second is what the kernels call: the lattice coordinates arrive as 32-bit unsigned lanes (a
// signed coordinate reinterpreted, so that neighbour offsets wrap instead of overflowing) and the
// result comes back in the kernel's value type T (float, double or a SIMD batch). A user-supplied
// policy only needs these two static members.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>

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

/// pcg3d on three unsigned 32-bit lanes (U is std::uint32_t or a batch of them): an LCG step per
/// lane, then two rounds of lane mixing around a xorshift. Unsigned arithmetic wraps by
/// definition, so there is no overflow UB.
template <class U>
GORGE_FORCEINLINE void pcg3d(U& x, U& y, U& z) {
    x = x * U(pcg_lcg_multiplier) + U(pcg_lcg_increment);
    y = y * U(pcg_lcg_multiplier) + U(pcg_lcg_increment);
    z = z * U(pcg_lcg_multiplier) + U(pcg_lcg_increment);
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

/// Maps the top 24 bits of a lane to [-1, 1), exactly in any float type.
template <class T>
GORGE_FORCEINLINE T unit_from_bits(uint_t<T> bits) {
    return value_ops<T>::from_uint(bits >> hash_mantissa_shift) * T(hash_unit_scale) - T(1);
}

}  // namespace detail

/// Jarzynski & Olano's pcg3d hash (the default policy). Exact integer work: every backend agrees
/// bit for bit, at any distance from the origin, and different seeds give independent fields.
struct pcg3d_hash {
    /// Hash of the lattice point (cx, cy) lanes (signed coordinates reinterpreted as unsigned).
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> lattice2(detail::uint_t<T> cx, detail::uint_t<T> cy,
                                                      std::uint32_t seed) {
        using U = detail::uint_t<T>;
        U x = cx, y = cy, z = U(seed);
        detail::pcg3d(x, y, z);
        return {detail::unit_from_bits<T>(x), detail::unit_from_bits<T>(y)};
    }

    /// Hash of one lattice point, each component in [-1, 1) with a step of 2^-23.
    static glm::vec2 hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
        return lattice2<float>(static_cast<std::uint32_t>(cx), static_cast<std::uint32_t>(cy), seed);
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

/// The 32-bit prime_mix result for lattice point (cx, cy) and seed:
///     finalise((cx * prime_mix_x) ^ rotl(cy * prime_mix_y, 16) ^ finalise(seed ^ salt)).
template <class U>
GORGE_FORCEINLINE U prime_mix(U cx, U cy, std::uint32_t seed) {
    const std::uint32_t seed_mask = prime_mix_finalise(seed ^ prime_mix_seed_salt);
    const U y = cy * U(prime_mix_y);
    const U y_rotated = (y << prime_mix_y_rotation) | (y >> (32 - prime_mix_y_rotation));
    return prime_mix_finalise((cx * U(prime_mix_x)) ^ y_rotated ^ U(seed_mask));
}
}  // namespace detail

/// The fast exact hash policy (see the header comment): bit-identical in C++ scalar, SIMD and every
/// shader port, seeds honoured, components in [-1, 1) with a step of 2^-15 (x from the high 16
/// bits of one 32-bit result, y from the low 16).
struct prime_mix_hash {
    template <class T>
    static GORGE_FORCEINLINE detail::vec2<T> lattice2(detail::uint_t<T> cx, detail::uint_t<T> cy,
                                                      std::uint32_t seed) {
        using U = detail::uint_t<T>;
        using ops = detail::value_ops<T>;
        const U h = detail::prime_mix(cx, cy, seed);
        const T scale = T(detail::prime_mix_unit_scale);
        return {ops::from_uint(h >> detail::prime_mix_half_bits) * scale - T(1),
                ops::from_uint(h & U(detail::prime_mix_half_mask)) * scale - T(1)};
    }

    /// Hash of one lattice point, each component in [-1, 1) with a step of 2^-15.
    static glm::vec2 hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
        return lattice2<float>(static_cast<std::uint32_t>(cx), static_cast<std::uint32_t>(cy), seed);
    }
};

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

}  // namespace gorge
