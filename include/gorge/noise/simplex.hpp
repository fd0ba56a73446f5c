// gorge/noise/simplex.hpp — 2D simplex noise with analytic first and second derivatives.
//
// Ken Perlin's simplex noise (Perlin 2001, "Noise hardware", SIGGRAPH course notes), in the
// formulation Stefan Gustavson explains in "Simplex noise demystified" (2005): the plane is
// skewed so that the triangular lattice becomes the integer lattice, the point's triangle is
// found from which of its skewed fractional coordinates is larger, and each of the three corners
// contributes t^4 (g · x) with t = max(0, 1/2 - |x|^2), x the offset from the corner in unskewed
// space and g the corner's gradient. (The 2001 patent on simplex noise expired in January 2022.)
// Here g is the hash policy's 2-vector for the corner's skewed lattice coordinates, so seeding
// works exactly as for gradient_noise.
//
// Derivatives: the kernel is a polynomial in x, so the gradient
//     t^4 g - 8 t^3 (g · x) x
// and the Hessian are exact. t^4 vanishes with its first three derivatives at |x|^2 = 1/2, which
// is exactly the distance from a corner to the opposite edge of every triangle it belongs to, so
// value, gradient and Hessian are continuous everywhere.
//
// Range: |value| < 0.998 for any hash values. The worst case over gradients g in [-1, 1]^2 is
// 70 · max_x sum_corners t^4 (|x.x| + |x.y|) = 70 × 0.0142556 (a dense search over the triangle;
// the maximum is on the mid-point of the diagonal edge). Typical |values| stay below about 0.6.
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
/// Skew factor F2 = (sqrt(3) - 1) / 2: (x, y) + (x + y) F2 maps the triangular lattice to Z^2.
constexpr double simplex_skew = 0.36602540378443864676;
/// Unskew factor G2 = (3 - sqrt(3)) / 6: (i, j) - (i + j) G2 maps a lattice point back.
constexpr double simplex_unskew = 0.21132486540518711775;
/// Squared kernel radius: a corner's contribution is zero beyond |x|^2 = 1/2.
constexpr double simplex_radius_sq = 0.5;
/// Output scale; with the kernel above it keeps |value| < 0.998 (see the header comment).
constexpr double simplex_scale = 70.0;

/// Adds one corner's kernel t^4 (g · x), its gradient and Hessian to n (unscaled).
template <class T>
GORGE_FORCEINLINE void simplex_corner(noise_d2<T>& n, vec2<T> x, vec2<T> g) {
    const T t = detail::max(constant<T>(simplex_radius_sq) - detail::dot(x, x), T(0));
    const T t2 = t * t, t3 = t2 * t, t4 = t2 * t2;
    const T gx = detail::dot(g, x);
    n.value += t4 * gx;
    n.gradient += t4 * g - (T(8) * t3 * gx) * x;
    // d2/dxi dxj = -8 t^3 (gi xj + gj xi) + 48 t^2 (g·x) xi xj - 8 t^3 (g·x) δij
    const T c3 = T(8) * t3, c2 = T(48) * t2 * gx;
    n.dxx += -c3 * (T(2) * g.x * x.x + gx) + c2 * x.x * x.x;
    n.dyy += -c3 * (T(2) * g.y * x.y + gx) + c2 * x.y * x.y;
    n.dxy += -c3 * (g.x * x.y + g.y * x.x) + c2 * x.x * x.y;
}

/// One corner's kernel t^4 (g · x) alone (the value term of simplex_corner, same operations).
template <class T>
GORGE_FORCEINLINE T simplex_corner_value(vec2<T> x, vec2<T> g) {
    const T t = detail::max(constant<T>(simplex_radius_sq) - detail::dot(x, x), T(0));
    const T t2 = t * t, t4 = t2 * t2;
    return t4 * detail::dot(g, x);
}

/// The skewed cell of q and the offsets of its three corners: what simplex_noise_d2 and
/// simplex_noise_value share.
template <class T>
struct simplex_cell {
    vec2<T> x0, x1, x2;        ///< q minus each corner
    uint_t<T> ix, iy, sx, sy;  ///< the first corner's lattice point and the middle corner's step
};
template <class T>
GORGE_FORCEINLINE simplex_cell<T> simplex_locate(vec2<T> q) {
    using ops = value_ops<T>;
    using V2 = vec2<T>;
    const T skew = (q.x + q.y) * constant<T>(simplex_skew);
    const V2 cell = detail::floor(V2(q.x + skew, q.y + skew));
    const T unskew = (cell.x + cell.y) * constant<T>(simplex_unskew);
    simplex_cell<T> c;
    c.x0 = q - (cell - V2(unskew, unskew));
    // Lower triangle (x0.x > x0.y) takes the middle corner (1, 0), the upper one (0, 1). On the
    // diagonal either choice is exact: the middle corner is then at the kernel radius.
    const T step_x = detail::select<T>(c.x0.x > c.x0.y, T(1), T(0));
    const T step_y = T(1) - step_x;
    c.x1 = c.x0 - V2(step_x, step_y) + V2(constant<T>(simplex_unskew), constant<T>(simplex_unskew));
    const T far = constant<T>(2 * simplex_unskew - 1);
    c.x2 = c.x0 + V2(far, far);
    c.ix = ops::to_uint(ops::to_int(cell.x));
    c.iy = ops::to_uint(ops::to_int(cell.y));
    c.sx = ops::to_uint(ops::to_int(step_x));
    c.sy = ops::to_uint(ops::to_int(step_y));
    return c;
}
}  // namespace detail

/// 2D simplex noise and its Hessian at q.
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE noise_d2<T> simplex_noise_d2(glm::vec<2, T> q, std::uint32_t seed = 0) {
    using V2 = detail::vec2<T>;
    using U = detail::uint_t<T>;
    const detail::simplex_cell<T> c = detail::simplex_locate(q);
    const U one = U(1u);

    noise_d2<T> n{T(0), V2(T(0), T(0)), T(0), T(0), T(0)};
    detail::simplex_corner(n, c.x0, Hash::template lattice2<T>(c.ix, c.iy, seed));
    detail::simplex_corner(n, c.x1, Hash::template lattice2<T>(c.ix + c.sx, c.iy + c.sy, seed));
    detail::simplex_corner(n, c.x2, Hash::template lattice2<T>(c.ix + one, c.iy + one, seed));

    const T s = detail::constant<T>(detail::simplex_scale);
    n.value *= s;
    n.gradient = n.gradient * s;
    n.dxx *= s;
    n.dxy *= s;
    n.dyy *= s;
    return n;
}

/// simplex_noise()'s value alone (the same operations, without the derivatives'): equals
/// simplex_noise(q, seed).x bit for bit.
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE T simplex_noise_value(glm::vec<2, T> q, std::uint32_t seed = 0) {
    using U = detail::uint_t<T>;
    const detail::simplex_cell<T> c = detail::simplex_locate(q);
    const U one = U(1u);
    T value = T(0);
    value += detail::simplex_corner_value(c.x0, Hash::template lattice2<T>(c.ix, c.iy, seed));
    value += detail::simplex_corner_value(c.x1, Hash::template lattice2<T>(c.ix + c.sx, c.iy + c.sy, seed));
    value += detail::simplex_corner_value(c.x2, Hash::template lattice2<T>(c.ix + one, c.iy + one, seed));
    return value * detail::constant<T>(detail::simplex_scale);
}

/// 2D simplex noise at q: (value, d/dqx, d/dqy), |value| < 0.998.
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> simplex_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    const noise_d2<T> n = simplex_noise_d2<Hash>(q, seed);
    return {n.value, n.gradient.x, n.gradient.y};
}

namespace detail {
/// 2D simplex noise for noise_basis: |value| < 0.998, bounded by 1 like the other bases.
struct simplex_noise_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval(vec2<T> q, std::uint32_t seed) { return simplex_noise<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval_d2(vec2<T> q, std::uint32_t seed) { return simplex_noise_d2<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE T eval_value(vec2<T> q, std::uint32_t seed) { return simplex_noise_value<Hash>(q, seed); }
};
}  // namespace detail

/// 2D simplex noise as a fractal basis (gorge/noise/fractal.hpp).
template <class Hash = pcg3d_hash>
using simplex_basis = noise_basis<detail::simplex_noise_forms, Hash>;

}  // namespace gorge
