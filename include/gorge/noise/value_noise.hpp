// gorge/noise/value_noise.hpp — quintic value noise with analytic first and second derivatives.
//
// Value noise blends random values stored at the integer lattice points with the quintic fade
// u(f) = 6f^5 - 15f^4 + 10f^3 (Perlin 2002, "Improving Noise"), which makes it C2: value, gradient
// and Hessian are continuous across lattice lines. Each lattice value is the x component of the
// hash policy's 2-vector for that point, so the noise is seeded exactly like gradient_noise (and
// with the same seed the two fields are not independent: use derive_seed() to combine them).
// Compared with gradient noise it has more low-frequency energy and visible lattice alignment, the
// "blobby" look some terrains want; Inigo Quilez builds his derivative-damped fBm on it
// (https://iquilezles.org/articles/morenoise/, 2008; gorge/noise/fractal.hpp's damped_fbm).
//
// Range: the value is a convex combination of lattice values in [-1, 1), so it lies in [-1, 1).
// Limits: as gorge/noise/gradient_noise.hpp (lattice coordinates must fit in int32; prefer double far away).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>

#include "../detail/math.hpp"
#include "hash.hpp"
#include "gradient_noise.hpp"

namespace gorge {

namespace detail {
/// The lattice cell of q for value noise: the position f in the cell and the corner values
/// a (0, 0), b (1, 0), c (0, 1), d (1, 1) (the first hash component of each corner).
template <class T>
struct value_cell {
    vec2<T> f;
    T a, b, c, d;
};
template <class Hash, class T>
GORGE_FORCEINLINE value_cell<T> value_locate(vec2<T> q, std::uint32_t seed) {
    using ops = value_ops<T>;
    using U = uint_t<T>;
    const vec2<T> i = detail::floor(q);
    const U ix = ops::to_uint(ops::to_int(i.x));
    const U iy = ops::to_uint(ops::to_int(i.y));
    vec2<T> ha, hb, hc, hd;
    cell_corners<Hash, T>(ix, iy, seed, ha, hb, hc, hd);
    value_cell<T> cell;
    cell.f = q - i;
    cell.a = ha.x;
    cell.b = hb.x;
    cell.c = hc.x;
    cell.d = hd.x;
    return cell;
}
}  // namespace detail

/// Quintic value noise and its Hessian at q: the corner values a, b, c, d blended by the fade u,
/// value = a + ux (b - a) + uy (c - a) + ux uy k with k = a - b - c + d (evaluated as three lerps,
/// detail::blend_by_fade), gradient u' * (d value / d u).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE noise_d2<T> value_noise_d2(glm::vec<2, T> q, std::uint32_t seed = 0) {
    const detail::value_cell<T> cell = detail::value_locate<Hash>(q, seed);
    const detail::quintic_fade<T> w = detail::quintic(cell.f);
    const detail::fade_blend<T> r = detail::blend_by_fade(cell.a, cell.b, cell.c, cell.d, w.u);

    noise_d2<T> n;
    n.value = r.value;
    n.gradient = w.du * r.by_u;
    n.dxx = w.ddu.x * r.by_u.x;
    n.dyy = w.ddu.y * r.by_u.y;
    n.dxy = w.du.x * w.du.y * (cell.a - cell.b - cell.c + cell.d);
    return n;
}

/// Quintic value noise at q: (value, d/dqx, d/dqy), value in [-1, 1).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> value_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    const noise_d2<T> n = value_noise_d2<Hash>(q, seed);
    return {n.value, n.gradient.x, n.gradient.y};
}

/// value_noise()'s value alone (the same operations, without the derivatives'): equals
/// value_noise(q, seed).x bit for bit.
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE T value_noise_value(glm::vec<2, T> q, std::uint32_t seed = 0) {
    const detail::value_cell<T> cell = detail::value_locate<Hash>(q, seed);
    return detail::blend_by_fade(cell.a, cell.b, cell.c, cell.d, detail::quintic_u(cell.f)).value;
}

namespace detail {
/// Quintic value noise for noise_basis: |value| < 1.
struct value_noise_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval(vec2<T> q, std::uint32_t seed) { return value_noise<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval_d2(vec2<T> q, std::uint32_t seed) { return value_noise_d2<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE T eval_value(vec2<T> q, std::uint32_t seed) { return value_noise_value<Hash>(q, seed); }
};
}  // namespace detail

/// Quintic value noise as a fractal basis (gorge/noise/fractal.hpp).
template <class Hash = pcg3d_hash>
using value_basis = noise_basis<detail::value_noise_forms, Hash>;

}  // namespace gorge
