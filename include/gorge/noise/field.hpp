// gorge/noise/field.hpp — composing differentiable height fields.
//
// A field is any callable `f(glm::vec<2,T> p) -> glm::vec<3,T>(value, d/dx, d/dy)`: a lambda
// `[&](auto p) { return gorge::fractal_sum(p, params, seed); }`, one of the noise fields below, or
// a combinator built from other fields. Combinators hold their inputs by value (fields are small)
// and their parameters in a scalar type S; their call operator is a template over the value type
// T, so one composed field evaluates in float, double or a SIMD batch.
//
// Guarantee: every combinator returns the exact gradient of the value it returns, by the chain
// and product rules — sums add gradients, scaling scales them, domain transforms and warps apply
// the transpose of their Jacobian to the inner field's gradient. Where a combinator has a kink
// (clamped(), profiles with clamps) its comment says so, and the gradient there is one-sided or 0.
//
// Seeds: a field made of several noises needs a seed per noise; derive_seed(seed, stream) gives
// independent ones from one user seed (gorge/noise/gradient_noise.hpp).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "fractal.hpp"
#include "gradient_noise.hpp"

namespace gorge {

// ---- noise fields ------------------------------------------------------------------------------

/// The fractals of gorge/noise/fractal.hpp that fractal_field evaluates.
enum class fractal_kind {
    sum,     ///< fractal_sum(), parameters fbm_params
    billow,  ///< billow(), parameters fbm_params
    ridged,  ///< ridged(), parameters ridged_params
    damped,  ///< damped_fbm(), parameters damped_fbm_params
};

namespace detail {
/// The parameter struct of fractal Kind in scalar type S.
template <fractal_kind Kind, class S> struct fractal_params_of { using type = fbm_params<S>; };
template <class S> struct fractal_params_of<fractal_kind::ridged, S> { using type = ridged_params<S>; };
template <class S> struct fractal_params_of<fractal_kind::damped, S> { using type = damped_fbm_params<S>; };
}  // namespace detail

/// A fractal of gorge/noise/fractal.hpp as a field: the fractal Kind of the basis Basis, with
/// parameters in scalar type S and one seed. Constructing validates params (std::invalid_argument
/// naming the bad parameter). Usually spelled by one of the four names below.
template <fractal_kind Kind, class S, class Basis = gradient_basis<>>
struct fractal_field {
    using params_type = typename detail::fractal_params_of<Kind, S>::type;
    params_type params;  ///< the fractal's parameters, valid (checked by the constructor)
    std::uint32_t seed;  ///< seed of the fractal; octave o uses derive_seed(seed, o) (default 0)

    explicit fractal_field(const params_type& p, std::uint32_t s = 0) : params(p), seed(s) { p.validate(); }

    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        if constexpr (Kind == fractal_kind::sum) return fractal_sum<Basis>(p, params, seed);
        else if constexpr (Kind == fractal_kind::billow) return billow<Basis>(p, params, seed);
        else if constexpr (Kind == fractal_kind::ridged) return ridged<Basis>(p, params, seed);
        else return damped_fbm<Basis>(p, params, seed);
    }
    /// The value alone, from the fractal's value-only twin: equals operator()(p).x bit for bit,
    /// without the derivative work (evaluate_tile uses it when only heights are asked for).
    template <class T>
    GORGE_FORCEINLINE T value(glm::vec<2, T> p) const {
        if constexpr (Kind == fractal_kind::sum) return fractal_sum_value<Basis>(p, params, seed);
        else if constexpr (Kind == fractal_kind::billow) return billow_value<Basis>(p, params, seed);
        else if constexpr (Kind == fractal_kind::ridged) return ridged_value<Basis>(p, params, seed);
        else return damped_fbm_value<Basis>(p, params, seed);
    }
};

// The four fractal fields by name: fractal_sum_field<S, Basis>(params, seed) and so on. Each name
// is fractal_field of one kind, a class rather than an alias template only so that C++17 can
// deduce S from the parameters (`fractal_sum_field terrain(fbm_params<float>{...}, seed)`).

/// fractal_sum() as a field (fBm of a basis, per-octave seeds).
template <class S, class Basis = gradient_basis<>>
struct fractal_sum_field : fractal_field<fractal_kind::sum, S, Basis> {
    using fractal_field<fractal_kind::sum, S, Basis>::fractal_field;
};
template <class S> fractal_sum_field(const fbm_params<S>&, std::uint32_t = 0) -> fractal_sum_field<S>;

/// billow() as a field.
template <class S, class Basis = gradient_basis<>>
struct billow_field : fractal_field<fractal_kind::billow, S, Basis> {
    using fractal_field<fractal_kind::billow, S, Basis>::fractal_field;
};
template <class S> billow_field(const fbm_params<S>&, std::uint32_t = 0) -> billow_field<S>;

/// ridged() as a field.
template <class S, class Basis = gradient_basis<>>
struct ridged_field : fractal_field<fractal_kind::ridged, S, Basis> {
    using fractal_field<fractal_kind::ridged, S, Basis>::fractal_field;
};
template <class S> ridged_field(const ridged_params<S>&, std::uint32_t = 0) -> ridged_field<S>;

/// damped_fbm() as a field.
template <class S, class Basis = gradient_basis<>>
struct damped_fbm_field : fractal_field<fractal_kind::damped, S, Basis> {
    using fractal_field<fractal_kind::damped, S, Basis>::fractal_field;
};
template <class S> damped_fbm_field(const damped_fbm_params<S>&, std::uint32_t = 0) -> damped_fbm_field<S>;

// ---- arithmetic ----------------------------------------------------------------------------------

/// a + b.
template <class A, class B>
struct sum_field {
    A a;
    B b;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        return a(p) + b(p);
    }
};
template <class A, class B>
sum_field<A, B> sum(A a, B b) {
    return {std::move(a), std::move(b)};
}

/// a · b, gradient by the product rule.
template <class A, class B>
struct product_field {
    A a;
    B b;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const glm::vec<3, T> u = a(p), v = b(p);
        return {u.x * v.x, u.y * v.x + u.x * v.y, u.z * v.x + u.x * v.z};
    }
};
template <class A, class B>
product_field<A, B> product(A a, B b) {
    return {std::move(a), std::move(b)};
}

/// factor · f (value and gradient scaled).
template <class F, class S>
struct scale_field {
    F f;
    S factor;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        return f(p) * T(factor);
    }
};
template <class F, class S>
scale_field<F, S> scale(F f, S factor) {
    return {std::move(f), factor};
}

/// f + constant (the gradient is unchanged).
template <class F, class S>
struct offset_field {
    F f;
    S constant;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const glm::vec<3, T> v = f(p);
        return {v.x + T(constant), v.y, v.z};
    }
};
template <class F, class S>
offset_field<F, S> offset(F f, S constant) {
    return {std::move(f), constant};
}

/// clamp(f, lo, hi). Kink: where the clamp is active the value is constant and the gradient is 0
/// (also on the boundary value itself, which is reached only on a set of measure zero).
template <class F, class S>
struct clamped_field {
    F f;
    S lo, hi;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const glm::vec<3, T> v = f(p);
        const T keep = detail::select<T>(v.x > T(lo), detail::select<T>(v.x < T(hi), T(1), T(0)), T(0));
        return {detail::clamp(v.x, T(lo), T(hi)), v.y * keep, v.z * keep};
    }
};
/// Precondition: lo <= hi, both finite (throws std::invalid_argument naming lo/hi otherwise).
template <class F, class S>
clamped_field<F, S> clamped(F f, S lo, S hi) {
    if (!std::isfinite(lo)) throw std::invalid_argument("gorge::clamped: invalid lo (must be finite)");
    if (!(std::isfinite(hi) && hi >= lo)) throw std::invalid_argument("gorge::clamped: invalid hi (must be finite and >= lo)");
    return {std::move(f), lo, hi};
}

/// A scalar profile applied to a field's value: g(f(p)) with gradient g'(f) ∇f. A profile is a
/// callable `g(T v) -> glm::vec<2,T>(g(v), g'(v))` (see gorge/noise/island.hpp for redistribution and
/// terraces).
template <class F, class G>
struct profile_field {
    F f;
    G g;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const glm::vec<3, T> v = f(p);
        const glm::vec<2, T> r = g(v.x);
        return {r.x, r.y * v.y, r.y * v.z};
    }
};
template <class F, class G>
profile_field<F, G> apply_profile(F f, G g) {
    return {std::move(f), std::move(g)};
}

// ---- domain transforms and warps ---------------------------------------------------------------

/// f(M p + t): rotate, scale or shift the domain. Gradient M^T ∇f(M p + t).
template <class F, class S>
struct transform_field {
    F f;
    glm::mat<2, 2, S> m;  ///< glm is column-major: m[c][r]
    glm::vec<2, S> t;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const T m00 = static_cast<T>(m[0][0]), m01 = static_cast<T>(m[1][0]);  // row 0
        const T m10 = static_cast<T>(m[0][1]), m11 = static_cast<T>(m[1][1]);  // row 1
        const glm::vec<2, T> q(m00 * p.x + m01 * p.y + static_cast<T>(t.x), m10 * p.x + m11 * p.y + static_cast<T>(t.y));
        const glm::vec<3, T> v = f(q);
        return {v.x, m00 * v.y + m10 * v.z, m01 * v.y + m11 * v.z};
    }
};
template <class F, class S>
transform_field<F, S> transform(F f, glm::mat<2, 2, S> m, glm::vec<2, S> t = glm::vec<2, S>(S(0))) {
    return {std::move(f), m, t};
}
/// f(k p + t): uniform domain scale (frequency) k and shift t.
template <class F, class S>
transform_field<F, S> transform(F f, S k, glm::vec<2, S> t = glm::vec<2, S>(S(0))) {
    return {std::move(f), glm::mat<2, 2, S>(k), t};
}

/// Parameters of a domain warp (Inigo Quilez, "Domain Warping",
/// https://iquilezles.org/articles/warp/).
template <class S>
struct warp_params {
    /// s in p' = p + s (wx(p), wy(p)), finite (default 0.5; 0 is the identity). Scale it with the
    /// warp fields' range and the inner field's feature size.
    S strength = S(0.5);
    /// Number of nested warps, 0..max_iterations = 16 (default 1): p_0 = p,
    /// p_{k+1} = p + s w(p_k), f(p_n).
    int iterations = 1;
    static constexpr int max_iterations = 16;

    /// The first bad parameter with its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (!std::isfinite(strength)) return "strength (must be finite)";
        if (iterations < 0 || iterations > max_iterations) return "iterations (must be in 0..16)";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::warp_params"); }
};

/// Domain warp f(p_n) with p_0 = p, p_{k+1} = p + s (wx(p_k).value, wy(p_k).value); one iteration
/// is the plain warp f(p + s w(p)), two is Quilez's f(p + s r(p + s q(p))) with r = q = w.
/// Exact gradient: the Jacobian J_{k+1} = I + s N(p_k) J_k, J_0 = I, with N the 2x2 matrix whose
/// rows are ∇wx and ∇wy, and ∇ = J_n^T ∇f(p_n). wx and wy should be independent fields (different
/// seeds) or the warp only shifts along the diagonal.
template <class F, class WX, class WY, class S>
struct warp_field {
    F f;
    WX wx;
    WY wy;
    warp_params<S> params;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const T s = T(params.strength);
        glm::vec<2, T> q = p;
        // J = [[jxx, jxy], [jyx, jyy]] = dq/dp, rows are the gradients of q.x and q.y.
        T jxx = T(1), jxy = T(0), jyx = T(0), jyy = T(1);
        for (int k = 0; k < params.iterations; ++k) {
            const glm::vec<3, T> a = wx(q), b = wy(q);
            const T nxx = jxx * a.y + jyx * a.z, nxy = jxy * a.y + jyy * a.z;  // ∇wx(q)^T J
            const T nyx = jxx * b.y + jyx * b.z, nyy = jxy * b.y + jyy * b.z;  // ∇wy(q)^T J
            q = glm::vec<2, T>(p.x + s * a.x, p.y + s * b.x);
            jxx = T(1) + s * nxx;
            jxy = s * nxy;
            jyx = s * nyx;
            jyy = T(1) + s * nyy;
        }
        const glm::vec<3, T> v = f(q);
        return {v.x, jxx * v.y + jyx * v.z, jxy * v.y + jyy * v.z};
    }
};
/// Validates params (std::invalid_argument naming the bad parameter).
template <class F, class WX, class WY, class S>
warp_field<F, WX, WY, S> warp(F f, WX wx, WY wy, const warp_params<S>& params) {
    params.validate();
    return {std::move(f), std::move(wx), std::move(wy), params};
}
/// One warp iteration of the given strength.
template <class F, class WX, class WY, class S>
warp_field<F, WX, WY, S> warp(F f, WX wx, WY wy, S strength) {
    warp_params<S> params;
    params.strength = strength;
    return warp(std::move(f), std::move(wx), std::move(wy), params);
}

}  // namespace gorge
