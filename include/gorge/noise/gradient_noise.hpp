// gorge/noise/gradient_noise.hpp — quintic gradient noise with analytic derivatives, its fractal sum, the basis
// policy the other fractals use, and seed derivation.
//
// Every function returns glm::vec<3,T>(value, d/dx, d/dy): the erosion filter needs the height
// *and* its gradient, and finite differences would cost three more evaluations and add error.
// Callers that need heights only call the value-only twins (gradient_noise_value, fbm_value; the
// fractals' *_value in gorge/noise/fractal.hpp): the same value bit for bit, without the
// derivative work.
// The derivatives are exact (not approximations) and the noise is C2-continuous (quintic fade,
// Perlin 2002, "Improving Noise"), so its gradient is continuous across lattice lines.
//
// Guarantees: deterministic for a given seed and hash policy; a point's value does not depend on
// which other points are evaluated (chunk- and tile-friendly). Limit: the lattice coordinate
// floor(q) must fit in a signed 32-bit int; far from the origin `float` loses fractional bits
// in q, so use `double` for |q| beyond about 10^4.
//
// Range: |gradient_noise| < 1 for any hash values. Proof: the value is a convex (quintic-bilinear)
// blend of g_c · (f - c) over the four corners c, with |g_c · d| <= |d.x| + |d.y|; the x parts sum
// to (1 - u(fx)) fx + u(fx) (1 - fx) <= 1/2 (maximum at fx = 1/2), likewise y. Typical |values|
// stay below about 0.5.
//
// Evaluation: the blend is written as three lerps a + t (b - a) (bilinear in the fades), for the
// ramps and for the corner gradients, and the fade's derivative as 30 (f (f - 1))^2. That is the
// same polynomial as the spec's va + ux (vb - va) + uy (vc - va) + ux uy k and 30 f^2 (f (f - 2) + 1),
// in fewer operations (the noise is bound by floating-point throughput); results differ from
// those forms by rounding only. Every port (GLSL, HLSL, WGSL) uses the same forms.
//
// Second derivatives: gradient_noise_d2() also returns the Hessian, which the derivative-damped
// fBm of gorge/noise/fractal.hpp needs for an exact gradient. Basis policies (gradient_basis here,
// value_basis and simplex_basis in their headers) give the fractals one interface to any noise.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "hash.hpp"

namespace gorge {

// ---- finite output: the limits every kernel and parameter check share ----------------------------

namespace detail {
/// Parameter checks keep every magnitude a kernel derives from its parameters alone (octave
/// frequencies, amplitude sums, gradient sums) at most max() / finite_headroom of the scalar type
/// (2^20: about 3.2e32 for float, 1.7e302 for double). The headroom absorbs the bounded factors
/// the kernels multiply those by (basis values and gradients, 2 pi, 32 octaves, Hessians), so
/// finite input then gives finite output.
constexpr double finite_headroom = 1048576.0;  // 2^20

/// The largest derived magnitude a parameter check accepts: max() / finite_headroom of S.
template <class S>
constexpr S finite_limit() {
    return std::numeric_limits<S>::max() / S(finite_headroom);
}

/// True when x is finite and |x| <= finite_limit<S>() (also false for NaN).
template <class S>
bool within_finite_limit(S x) {
    return std::fabs(x) <= finite_limit<S>();
}

/// Octave sample points are clamped to +-lattice_coordinate_limit (2^62). Beyond 2^31 the lattice
/// index saturates anyway (see value_ops::to_int), so the clamp changes no result that means
/// anything; it keeps p * frequency finite when it would overflow, so that floor(q) and q - floor(q)
/// stay finite instead of turning into inf - inf = NaN.
constexpr double lattice_coordinate_limit = 4611686018427387904.0;  // 2^62

/// p * freq with each component clamped to +-lattice_coordinate_limit.
template <class T>
GORGE_FORCEINLINE vec2<T> octave_point(vec2<T> p, T freq) {
    const T lim = detail::constant<T>(lattice_coordinate_limit);
    return {detail::clamp(p.x * freq, -lim, lim), detail::clamp(p.y * freq, -lim, lim)};
}

/// The checks shared by every fractal parameter struct (fbm_params, ridged_params,
/// damped_fbm_params): the member rules, then the derived limits. With freq_o = frequency
/// lacunarity^o and amp_o = gain^o for o < octaves, both freq_o and the sums of |amp_o| and of
/// |amp_o| freq_o (the value and gradient ranges, up to the basis bounds) must be at most
/// finite_limit<S>().
template <class S>
invalid_parameter fractal_first_invalid(S frequency, int octaves, S lacunarity, S gain) {
    if (!(std::isfinite(frequency) && frequency > S(0))) return "frequency (must be finite and > 0)";
    if (octaves < 0 || octaves > 32) return "octaves (must be in 0..32)";
    if (!(std::isfinite(lacunarity) && lacunarity > S(0))) return "lacunarity (must be finite and > 0)";
    if (!std::isfinite(gain)) return "gain (must be finite)";
    if (octaves > 0 && !within_finite_limit(frequency))
        return "frequency (must be at most max / 2^20 of the scalar type)";
    S freq = frequency, amp = S(1), value_sum = S(0), gradient_sum = S(0);
    for (int o = 0; o < octaves; ++o) {
        if (!within_finite_limit(freq))
            return "lacunarity (frequency * lacunarity^(octaves - 1) must be at most max / 2^20 of the scalar type)";
        value_sum += std::fabs(amp);
        gradient_sum += std::fabs(amp) * freq;
        if (!(within_finite_limit(value_sum) && within_finite_limit(gradient_sum)))
            return "gain (the sums of |gain|^o and of |gain|^o * frequency * lacunarity^o over the octaves "
                   "must be at most max / 2^20 of the scalar type)";
        if (o + 1 < octaves) freq *= lacunarity, amp *= gain;
    }
    return nullptr;
}

/// Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3.
template <class T>
GORGE_FORCEINLINE vec2<T> quintic_u(vec2<T> f) {
    return f * f * f * (f * (f * T(6) - T(15)) + T(10));
}

/// Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its first and second derivatives.
template <class T>
struct quintic_fade {
    vec2<T> u, du, ddu;
};
template <class T>
GORGE_FORCEINLINE quintic_fade<T> quintic(vec2<T> f) {
    quintic_fade<T> q;
    q.u = quintic_u(f);
    // u' = 30 f^2 (f - 1)^2 = 30 t^2 with t = f (f - 1): three operations.
    const vec2<T> t = f * f - f;
    q.du = T(30) * t * t;
    // u'' = 60 f (f - 1)(2f - 1) = 60 (2f^3 - 3f^2 + f), zero at both lattice lines (C2 noise).
    q.ddu = T(60) * f * (f * (T(2) * f - T(3)) + T(1));
    return q;
}

/// What every form of gradient noise computes first: the position f in the lattice cell, the
/// fade u(f), the four corner gradients and their ramps v_c = g_c · (f - c). The forms use what
/// they need; the compiler drops the rest once they are inlined.
template <class T>
struct gradient_cell {
    vec2<T> f, u;
    vec2<T> ga, gb, gc, gd;  ///< corner gradients at (0, 0), (1, 0), (0, 1), (1, 1)
    T va, vb, vc, vd;        ///< ramps
};

/// Where a gradient noise takes its corner gradients from (Corners::corners<T>(ix, iy, seed, a, b,
/// c, d) for the cell with lower corner (ix, iy)): gradient noise uses the hash's 2-vectors
/// themselves; perlin noise (gorge/noise/perlin_noise.hpp) picks table directions by hash bits.
template <class Hash>
struct hashed_gradients {
    template <class T>
    static GORGE_FORCEINLINE void corners(uint_t<T> ix, uint_t<T> iy, std::uint32_t seed, vec2<T>& a, vec2<T>& b,
                                          vec2<T>& c, vec2<T>& d) {
        cell_corners<Hash, T>(ix, iy, seed, a, b, c, d);
    }
};

template <class Corners, class T>
GORGE_FORCEINLINE gradient_cell<T> gradient_locate(vec2<T> q, std::uint32_t seed) {
    using ops = value_ops<T>;
    using V2 = vec2<T>;
    using U = uint_t<T>;
    const V2 i = detail::floor(q);
    gradient_cell<T> c;
    c.f = q - i;
    c.u = quintic_u(c.f);
    const U ix = ops::to_uint(ops::to_int(i.x));
    const U iy = ops::to_uint(ops::to_int(i.y));
    Corners::template corners<T>(ix, iy, seed, c.ga, c.gb, c.gc, c.gd);
    c.va = detail::dot(c.ga, c.f);
    c.vb = detail::dot(c.gb, c.f - V2(T(1), T(0)));
    c.vc = detail::dot(c.gc, c.f - V2(T(0), T(1)));
    c.vd = detail::dot(c.gd, c.f - V2(T(1), T(1)));
    return c;
}
/// Four corner quantities a (0, 0), b (1, 0), c (0, 1), d (1, 1) blended by the fade u, value =
/// lerp(lerp(a, b, ux), lerp(c, d, ux), uy) with each lerp written a + t (b - a), and the value's
/// partial derivatives by ux and uy, which reuse the lerps' differences. Gradient noise blends its
/// ramps, value noise its corner values; the value-only forms use .value alone (same operations).
template <class T>
struct fade_blend {
    T value;
    vec2<T> by_u;  ///< (d value / d ux, d value / d uy)
};
template <class T>
GORGE_FORCEINLINE fade_blend<T> blend_by_fade(T a, T b, T c, T d, vec2<T> u) {
    const T bottom = a + u.x * (b - a);
    const T top = c + u.x * (d - c);
    return {bottom + u.y * (top - bottom), vec2<T>((b - a) + u.y * ((d - c) - (b - a)), top - bottom)};
}

/// A cell's corner gradients blended by the fade, lerp(lerp(ga, gb, ux), lerp(gc, gd, ux), uy): the
/// part of the noise's gradient that does not come from the fade's derivative.
template <class T>
GORGE_FORCEINLINE vec2<T> gradient_cell_blend_gradients(const gradient_cell<T>& c) {
    const vec2<T> bottom = c.ga + c.u.x * (c.gb - c.ga);
    const vec2<T> top = c.gc + c.u.x * (c.gd - c.gc);
    return bottom + c.u.y * (top - bottom);
}

/// The three forms of a gradient noise whose corner gradients come from Corners: value and
/// gradient; value alone (the same operations without the gradient's, so equal bit for bit);
/// value, gradient and Hessian. The gradient is blend(g) + u'(f) * (d value / d u).
template <class Corners, class T>
GORGE_FORCEINLINE glm::vec<3, T> gradient_noise_of(vec2<T> q, std::uint32_t seed) {
    const gradient_cell<T> c = gradient_locate<Corners>(q, seed);
    const fade_blend<T> r = blend_by_fade(c.va, c.vb, c.vc, c.vd, c.u);
    const vec2<T> grad = gradient_cell_blend_gradients(c) + quintic(c.f).du * r.by_u;
    return {r.value, grad.x, grad.y};
}
template <class Corners, class T>
GORGE_FORCEINLINE T gradient_noise_value_of(vec2<T> q, std::uint32_t seed) {
    const gradient_cell<T> c = gradient_locate<Corners>(q, seed);
    return blend_by_fade(c.va, c.vb, c.vc, c.vd, c.u).value;
}
}  // namespace detail

/// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy). Lattice
/// gradients are Hash::lattice2 vectors (components in [-1, 1), not normalised), so the value lies
/// well inside [-1, 1] (about ±0.5 in practice).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> gradient_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_of<detail::hashed_gradients<Hash>>(q, seed);
}

/// gradient_noise()'s value alone, for callers that need heights only: the same operations on
/// the same corners without the gradient's, so it equals gradient_noise(q, seed).x bit for bit
/// (tests/test_value_only.cpp checks it in float, double and SIMD batches).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE T gradient_noise_value(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_value_of<detail::hashed_gradients<Hash>>(q, seed);
}

/// Parameters of a fractal (fBm) sum. Defaults are the published erosion demo's height function.
/// Besides the member rules, validate() enforces the derived limits of
/// detail::fractal_first_invalid: frequency * lacunarity^(octaves - 1), the sum of |gain|^o and
/// the sum of |gain|^o * frequency * lacunarity^o must each be at most max / 2^20 of T (about
/// 3.2e32 for float), which keeps every output finite.
template <class T>
struct fbm_params {
    T frequency = T(3);   ///< frequency of the first octave in cycles per p unit, finite > 0 (default 3)
    int octaves = 3;      ///< number of octaves, 0..32 (default 3); 0 gives the zero field
    /// Frequency factor per octave, finite > 0, with frequency * lacunarity^(octaves - 1) at most
    /// max / 2^20 (default 2).
    T lacunarity = T(2);
    /// Amplitude factor per octave, finite, with the amplitude sums above at most max / 2^20
    /// (default 0.1; 0.5 is classic fBm).
    T gain = T(0.1);

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        return detail::fractal_first_invalid(frequency, octaves, lacunarity, gain);
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::fbm_params"); }
};

/// Fractal sum of gradient noise with its exact gradient with respect to p:
///     n = sum_o amp_o * (value, freq_o * gradient) at q = p * freq_o,
/// freq_0 = params.frequency, freq_{o+1} = freq_o * lacunarity, amp_0 = 1, amp_{o+1} = amp_o * gain.
/// Octave sample points are clamped to +-2^62 (detail::octave_point), so any finite p gives a
/// finite result (meaningless where |p| freq_o is beyond float's or int32's precision).
/// Precondition (asserted in debug builds): params.validate() passes.
template <class Hash = pcg3d_hash, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> fbm(glm::vec<2, T> p, const fbm_params<S>& params,
                                     std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::fbm: invalid fbm_params");
    glm::vec<3, T> n(T(0), T(0), T(0));
    T freq = T(params.frequency);
    T amp = T(1);
    for (int o = 0; o < params.octaves; ++o) {
        const glm::vec<3, T> v = gradient_noise<Hash>(detail::octave_point(p, freq), seed);
        n += amp * glm::vec<3, T>(v.x, freq * v.y, freq * v.z);
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return n;
}

/// fbm()'s value alone (gradient_noise_value per octave): equals fbm(p, params, seed).x bit for
/// bit and skips the gradient's work. Precondition (asserted in debug builds): params.validate()
/// passes.
template <class Hash = pcg3d_hash, class T, class S>
GORGE_FORCEINLINE T fbm_value(glm::vec<2, T> p, const fbm_params<S>& params, std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::fbm_value: invalid fbm_params");
    T n = T(0);
    T freq = T(params.frequency);
    T amp = T(1);
    for (int o = 0; o < params.octaves; ++o) {
        n += amp * gradient_noise_value<Hash>(detail::octave_point(p, freq), seed);
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return n;
}

// ---- seeds ---------------------------------------------------------------------------------------

namespace detail {
/// Third pcg3d lane of derive_seed: a fixed odd constant (the 32-bit golden ratio) so that
/// derive_seed(s, i) never equals the lattice hash of any cell with the same (s, i).
constexpr std::uint32_t derive_seed_salt = 0x9E3779B9u;
}  // namespace detail

/// An independent seed for stream `stream` of `seed`: the first lane of pcg3d(seed, stream, salt).
/// Fields that need several noises (octaves, warp offsets, a moisture map beside the height) use
/// one stream each, so a single user seed drives them all without the fields repeating one another.
/// Pure 32-bit unsigned arithmetic: identical on every platform and in GLSL.
inline std::uint32_t derive_seed(std::uint32_t seed, std::uint32_t stream) {
    std::uint32_t x = seed, y = stream, z = detail::derive_seed_salt;
    detail::pcg3d(x, y, z);
    return x;
}

// ---- second derivatives --------------------------------------------------------------------------

/// A noise sample with first and second derivatives: value, gradient (d/dx, d/dy) and the three
/// distinct Hessian entries.
template <class T>
struct noise_d2 {
    T value;
    glm::vec<2, T> gradient;
    T dxx, dxy, dyy;
};


namespace detail {
/// gradient_noise_of() with its Hessian (see gradient_noise_d2).
template <class Corners, class T>
GORGE_FORCEINLINE noise_d2<T> gradient_noise_d2_of(vec2<T> q, std::uint32_t seed) {
    using V2 = vec2<T>;
    const gradient_cell<T> c = gradient_locate<Corners>(q, seed);
    const quintic_fade<T> w = quintic(c.f);
    // value = va + ux A + uy B + ux uy k, with A, B, k linear in f (gradients ga_, gb_, gk), and
    // d value / d u = (A + uy k, B + ux k) = r.by_u. Value and gradient come from the same
    // operations as gradient_noise_of's, so they agree bit for bit.
    const T k = c.va - c.vb - c.vc + c.vd;
    const V2 ga_ = c.gb - c.ga, gb_ = c.gc - c.ga, gk = c.ga - c.gb - c.gc + c.gd;
    const fade_blend<T> r = blend_by_fade(c.va, c.vb, c.vc, c.vd, c.u);

    noise_d2<T> n;
    n.value = r.value;
    n.gradient = gradient_cell_blend_gradients(c) + w.du * r.by_u;
    n.dxx = T(2) * w.du.x * (ga_.x + w.u.y * gk.x) + w.ddu.x * r.by_u.x;
    n.dyy = T(2) * w.du.y * (gb_.y + w.u.x * gk.y) + w.ddu.y * r.by_u.y;
    n.dxy = w.du.x * (ga_.y + w.u.y * gk.y) + w.du.y * (gb_.x + w.u.x * gk.x) + w.du.x * w.du.y * k;
    return n;
}
}  // namespace detail

/// gradient_noise() with its Hessian. Value and gradient are computed by the same operations as
/// gradient_noise()'s (equal bit for bit); the Hessian is exact and continuous (the noise is C2).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE noise_d2<T> gradient_noise_d2(glm::vec<2, T> q, std::uint32_t seed = 0) {
    return detail::gradient_noise_d2_of<detail::hashed_gradients<Hash>>(q, seed);
}

namespace detail {
/// Noise::eval_value<Hash, T>(q, seed) when the noise provides it, else Noise::eval(q, seed).x
/// (a noise written before value-only forms existed keeps working, at the full path's cost).
template <class Noise, class Hash, class T, class = void>
struct noise_value_form {
    static GORGE_FORCEINLINE T eval(vec2<T> q, std::uint32_t seed) { return Noise::template eval<Hash, T>(q, seed).x; }
};
template <class Noise, class Hash, class T>
struct noise_value_form<Noise, Hash, T,
                        std::void_t<decltype(Noise::template eval_value<Hash, T>(std::declval<vec2<T>>(), 0u))>> {
    static GORGE_FORCEINLINE T eval(vec2<T> q, std::uint32_t seed) { return Noise::template eval_value<Hash, T>(q, seed); }
};
}  // namespace detail

/// Basis policy: how a fractal samples its noise. A basis B provides
///   B::eval(q, seed)        -> vec3(value, d/dqx, d/dqy)
///   B::eval_d2(q, seed)     -> noise_d2 (value, gradient, Hessian)
///   B::eval_value(q, seed)  -> the value alone (optional: the value-only fractals fall back to
///                              eval(q, seed).x without it)
///   B::bound                a number with |value| <= bound for every q, seed and hash value
/// noise_basis<Noise, Hash> is that policy for a noise hashed with Hash. Noise names the noise's
/// forms and its bound: Noise::eval<Hash, T>(q, seed), Noise::eval_d2<Hash, T>(q, seed),
/// optionally Noise::eval_value<Hash, T>(q, seed), and Noise::bound. gradient_basis, value_basis
/// and simplex_basis are noise_basis of the three shipped noises; a noise of your own needs only
/// its Noise class (or a basis written out).
template <class Noise, class Hash = pcg3d_hash>
struct noise_basis {
    static constexpr double bound = Noise::bound;
    template <class T>
    static GORGE_FORCEINLINE glm::vec<3, T> eval(glm::vec<2, T> q, std::uint32_t seed) {
        return Noise::template eval<Hash, T>(q, seed);
    }
    template <class T>
    static GORGE_FORCEINLINE noise_d2<T> eval_d2(glm::vec<2, T> q, std::uint32_t seed) {
        return Noise::template eval_d2<Hash, T>(q, seed);
    }
    template <class T>
    static GORGE_FORCEINLINE T eval_value(glm::vec<2, T> q, std::uint32_t seed) {
        return detail::noise_value_form<Noise, Hash, T>::eval(q, seed);
    }
};

namespace detail {
/// Basis::eval_value(q, seed) when the basis provides it, else Basis::eval(q, seed).x.
template <class Basis, class T, class = void>
struct basis_value_form {
    static GORGE_FORCEINLINE T eval(vec2<T> q, std::uint32_t seed) { return Basis::template eval<T>(q, seed).x; }
};
template <class Basis, class T>
struct basis_value_form<Basis, T, std::void_t<decltype(Basis::template eval_value<T>(std::declval<vec2<T>>(), 0u))>> {
    static GORGE_FORCEINLINE T eval(vec2<T> q, std::uint32_t seed) { return Basis::template eval_value<T>(q, seed); }
};
template <class Basis, class T>
GORGE_FORCEINLINE T basis_value(vec2<T> q, std::uint32_t seed) {
    return basis_value_form<Basis, T>::eval(q, seed);
}
}  // namespace detail

namespace detail {
/// Quintic gradient noise for noise_basis: |value| < 1 (typically within ±0.5).
struct gradient_noise_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval(vec2<T> q, std::uint32_t seed) { return gradient_noise<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval_d2(vec2<T> q, std::uint32_t seed) { return gradient_noise_d2<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE T eval_value(vec2<T> q, std::uint32_t seed) { return gradient_noise_value<Hash>(q, seed); }
};
}  // namespace detail

/// Quintic gradient noise as a fractal basis.
template <class Hash = pcg3d_hash>
using gradient_basis = noise_basis<detail::gradient_noise_forms, Hash>;

}  // namespace gorge
