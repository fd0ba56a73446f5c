// gorge/noise/perlin_noise.hpp — quintic gradient noise with table gradients: the fastest gorge
// noise, with the same analytic derivatives as gradient_noise.
//
// Perlin noise here is gradient_noise (gorge/noise/gradient_noise.hpp) with one change: a corner's
// gradient is not the hash's random 2-vector but one of 8 unit directions, at 22.5 + 45 k degrees,
// picked by the top 3 bits of the hash's 32-bit word (Hash::combine_bits). That is Ken Perlin's
// choice of a small fixed gradient set ("Improving Noise", SIGGRAPH 2002), which FastNoise and
// most game noise libraries follow. A table pick costs one shift and two register permutes per
// corner where the hash's 2-vector costs two masks, two int-to-float conversions and two scalings,
// and it leaves the hash's low bits unused, so the cheapest exact policy is the default here:
// perlin_basis<> = perlin_basis<prime_xor_hash>, whose top bits come straight out of its multiply.
//
// Guarantees: as gradient_noise's (deterministic for a seed and policy; a point's value never
// depends on other points; exact, continuous first and second derivatives; scalar and SIMD paths
// agree bit for bit). |value| < 1 by the same proof (|g_c| = 1 here). Differences from
// gradient_noise: 8 gradient directions of equal length, so the field is more regular (it can
// show a faint 45-degree grain, the usual look of Perlin noise) and its values spread a little
// wider (RMS 0.22 against 0.18; 99 % of |values| below 0.49). Hash must be an exact integer policy with
// the split form and combine_bits (pcg3d_hash, prime_mix_hash, prime_xor_hash); the float
// shadertoy_hash has no bits to pick from. The GLSL, HLSL and WGSL ports have it too
// (gorge_perlin_noise, gorge_basis_perlin), with the program's hash word (pcg3d unless chosen).
//
// The directions are stored as the nearest floats to (cos, sin) of each angle, and a double
// noise uses those same floats, so float and double differ only by their arithmetic.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>

#include "gradient_noise.hpp"

namespace gorge {

namespace detail {
/// The gradient index is the top perlin_direction_bits of the hash word.
constexpr int perlin_direction_bits = 3;
constexpr int perlin_direction_shift = 32 - perlin_direction_bits;

/// Unit directions at 22.5 + 45 k degrees, k = 0..7, as the nearest floats (cos 22.5° and
/// sin 22.5° = 0.92387953 and 0.38268343): no direction lies on an axis or a diagonal.
template <class S>
struct perlin_directions {
    alignas(64) static constexpr S x[8] = {S(0.92387953f),  S(0.38268343f),  S(-0.38268343f), S(-0.92387953f),
                                           S(-0.92387953f), S(-0.38268343f), S(0.38268343f),  S(0.92387953f)};
    alignas(64) static constexpr S y[8] = {S(0.38268343f),  S(0.92387953f),  S(0.92387953f),  S(0.38268343f),
                                           S(-0.38268343f), S(-0.92387953f), S(-0.92387953f), S(-0.38268343f)};
};

/// The top perlin_direction_bits of Hash::combine_bits(ax, ay, seed). For prime_xor_hash those are
/// the top bits of its multiply (its closing xorshift leaves the high half as it is), taken
/// directly: the compilers tried keep the xorshift otherwise.
template <class Hash>
struct direction_index {
    template <class U>
    static GORGE_FORCEINLINE U get(U ax, U ay, std::uint32_t seed) {
        return Hash::combine_bits(ax, ay, seed) >> perlin_direction_shift;
    }
};
template <>
struct direction_index<prime_xor_hash> {
    static_assert(perlin_direction_shift >= prime_xor_shift, "the index must come from the unshifted high half");
    template <class U>
    static GORGE_FORCEINLINE U get(U ax, U ay, std::uint32_t /*seed*/) {
        return prime_xor_product(ax ^ ay) >> perlin_direction_shift;
    }
};

/// Corner gradients from the direction table (see gradient_locate): cell_corners_by with the
/// word's top bits and one table pick per corner.
template <class Hash>
struct table_gradients {
    static_assert(has_combine_bits<Hash>::value,
                  "gorge::perlin_noise needs an exact integer hash policy with combine_bits "
                  "(pcg3d_hash, prime_mix_hash or prime_xor_hash)");
    /// The table direction of the lattice point with split axes ax, ay.
    template <class T>
    static GORGE_FORCEINLINE vec2<T> at(uint_t<T> ax, uint_t<T> ay, std::uint32_t seed) {
        using ops = value_ops<T>;
        using S = scalar_t<T>;
        const uint_t<T> k = direction_index<Hash>::get(ax, ay, seed);
        return {ops::lookup8(perlin_directions<S>::x, k), ops::lookup8(perlin_directions<S>::y, k)};
    }
    template <class T>
    static GORGE_FORCEINLINE void corners(uint_t<T> ix, uint_t<T> iy, std::uint32_t seed, vec2<T>& a, vec2<T>& b,
                                          vec2<T>& c, vec2<T>& d) {
        cell_corners_by<Hash, table_gradients, T>(ix, iy, seed, a, b, c, d);
    }
};
}  // namespace detail

/// Perlin noise at q with its analytic gradient: (value, d/dqx, d/dqy). Corner gradients are unit
/// directions from an 8-entry table picked by Hash's bits (see the header comment); |value| < 1.
template <class Hash = prime_xor_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> perlin_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_of<detail::table_gradients<Hash>>(q, seed);
}

/// perlin_noise()'s value alone: equal to perlin_noise(q, seed).x bit for bit, without the
/// gradient's work.
template <class Hash = prime_xor_hash, class T>
GORGE_FORCEINLINE T perlin_noise_value(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_value_of<detail::table_gradients<Hash>>(q, seed);
}

/// perlin_noise() with its Hessian (value and gradient equal to perlin_noise()'s bit for bit).
template <class Hash = prime_xor_hash, class T>
GORGE_FORCEINLINE noise_d2<T> perlin_noise_d2(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_d2_of<detail::table_gradients<Hash>>(q, seed);
}

namespace detail {
/// Perlin noise for noise_basis: |value| < 1.
struct perlin_noise_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval(vec2<T> q, std::uint32_t seed) { return perlin_noise<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval_d2(vec2<T> q, std::uint32_t seed) { return perlin_noise_d2<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE T eval_value(vec2<T> q, std::uint32_t seed) { return perlin_noise_value<Hash>(q, seed); }
};
}  // namespace detail

/// Perlin noise as a fractal basis (for fractal_sum_field, fbm over a basis, ridged, damped fBm).
/// Default hash prime_xor_hash: the fastest noise gorge has.
template <class Hash = prime_xor_hash>
using perlin_basis = noise_basis<detail::perlin_noise_forms, Hash>;

}  // namespace gorge
