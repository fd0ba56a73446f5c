// gorge/noise/gradient_noise.hpp — quintic gradient noise with analytic derivatives, its fractal sum, the basis
// policy the other fractals use, and seed derivation.
//
// Every function returns glm::vec<3,T>(value, d/dx, d/dy): the erosion filter needs the height
// *and* its gradient, and finite differences would cost three more evaluations and add error.
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
// Second derivatives: gradient_noise_d2() also returns the Hessian, which the derivative-damped
// fBm of gorge/noise/fractal.hpp needs for an exact gradient. Basis policies (gradient_basis here,
// value_basis and simplex_basis in their headers) give the fractals one interface to any noise.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

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
}  // namespace detail

/// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy). Lattice
/// gradients are Hash::lattice2 vectors (components in [-1, 1), not normalised), so the value lies
/// well inside [-1, 1] (about ±0.5 in practice).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> gradient_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    using ops = detail::value_ops<T>;
    using V2 = detail::vec2<T>;
    const V2 i = detail::floor(q);
    const V2 f = q - i;
    const auto ix = ops::to_uint(ops::to_int(i.x));
    const auto iy = ops::to_uint(ops::to_int(i.y));
    using U = detail::uint_t<T>;
    const U one = U(1u);

    // Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its derivative 30f^2 (f - 1)^2.
    const V2 u = f * f * f * (f * (f * T(6) - T(15)) + T(10));
    const V2 du = T(30) * f * f * (f * (f - T(2)) + T(1));

    const V2 ga = Hash::template lattice2<T>(ix, iy, seed);
    const V2 gb = Hash::template lattice2<T>(ix + one, iy, seed);
    const V2 gc = Hash::template lattice2<T>(ix, iy + one, seed);
    const V2 gd = Hash::template lattice2<T>(ix + one, iy + one, seed);

    const T va = detail::dot(ga, f);
    const T vb = detail::dot(gb, f - V2(T(1), T(0)));
    const T vc = detail::dot(gc, f - V2(T(0), T(1)));
    const T vd = detail::dot(gd, f - V2(T(1), T(1)));
    const T k = va - vb - vc + vd;

    const T value = va + u.x * (vb - va) + u.y * (vc - va) + u.x * u.y * k;
    const V2 grad = ga + u.x * (gb - ga) + u.y * (gc - ga) + u.x * u.y * (ga - gb - gc + gd) +
                    du * V2(u.y * k + vb - va, u.x * k + vc - va);
    return {value, grad.x, grad.y};
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
/// Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its first and second derivatives.
template <class T>
struct quintic_fade {
    vec2<T> u, du, ddu;
};
template <class T>
GORGE_FORCEINLINE quintic_fade<T> quintic(vec2<T> f) {
    quintic_fade<T> q;
    q.u = f * f * f * (f * (f * T(6) - T(15)) + T(10));
    q.du = T(30) * f * f * (f * (f - T(2)) + T(1));
    // u'' = 60 f (f - 1)(2f - 1) = 60 (2f^3 - 3f^2 + f), zero at both lattice lines (C2 noise).
    q.ddu = T(60) * f * (f * (T(2) * f - T(3)) + T(1));
    return q;
}
}  // namespace detail

/// gradient_noise() with its Hessian. Value and gradient are the same expressions as
/// gradient_noise() (equal up to rounding); the Hessian is exact and continuous (the noise is C2).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE noise_d2<T> gradient_noise_d2(glm::vec<2, T> q, std::uint32_t seed = 0) {
    using ops = detail::value_ops<T>;
    using V2 = detail::vec2<T>;
    using U = detail::uint_t<T>;
    const V2 i = detail::floor(q);
    const V2 f = q - i;
    const U ix = ops::to_uint(ops::to_int(i.x));
    const U iy = ops::to_uint(ops::to_int(i.y));
    const U one = U(1u);
    const detail::quintic_fade<T> w = detail::quintic(f);

    const V2 ga = Hash::template lattice2<T>(ix, iy, seed);
    const V2 gb = Hash::template lattice2<T>(ix + one, iy, seed);
    const V2 gc = Hash::template lattice2<T>(ix, iy + one, seed);
    const V2 gd = Hash::template lattice2<T>(ix + one, iy + one, seed);

    const T va = detail::dot(ga, f);
    const T vb = detail::dot(gb, f - V2(T(1), T(0)));
    const T vc = detail::dot(gc, f - V2(T(0), T(1)));
    const T vd = detail::dot(gd, f - V2(T(1), T(1)));
    // value = va + ux A + uy B + ux uy k, with A, B, k linear in f (gradients gA, gB, gk).
    const T a = vb - va, b = vc - va, k = va - vb - vc + vd;
    const V2 ga_ = gb - ga, gb_ = gc - ga, gk = ga - gb - gc + gd;

    noise_d2<T> n;
    n.value = va + w.u.x * a + w.u.y * b + w.u.x * w.u.y * k;
    n.gradient = ga + w.u.x * ga_ + w.u.y * gb_ + w.u.x * w.u.y * gk +
                 w.du * V2(w.u.y * k + a, w.u.x * k + b);
    n.dxx = T(2) * w.du.x * (ga_.x + w.u.y * gk.x) + w.ddu.x * (a + w.u.y * k);
    n.dyy = T(2) * w.du.y * (gb_.y + w.u.x * gk.y) + w.ddu.y * (b + w.u.x * k);
    n.dxy = w.du.x * (ga_.y + w.u.y * gk.y) + w.du.y * (gb_.x + w.u.x * gk.x) + w.du.x * w.du.y * k;
    return n;
}

/// Basis policy: how a fractal samples its noise. A basis B provides
///   B::eval(q, seed)     -> vec3(value, d/dqx, d/dqy)
///   B::eval_d2(q, seed)  -> noise_d2 (value, gradient, Hessian)
///   B::bound             a number with |value| <= bound for every q, seed and hash value
/// noise_basis<Noise, Hash> is that policy for a noise hashed with Hash. Noise names the noise's
/// two forms and its bound: Noise::eval<Hash, T>(q, seed), Noise::eval_d2<Hash, T>(q, seed) and
/// Noise::bound. gradient_basis, value_basis and simplex_basis are noise_basis of the three
/// shipped noises; a noise of your own needs only its Noise class (or a basis written out).
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
};

namespace detail {
/// Quintic gradient noise for noise_basis: |value| < 1 (typically within ±0.5).
struct gradient_noise_forms {
    static constexpr double bound = 1.0;
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval(vec2<T> q, std::uint32_t seed) { return gradient_noise<Hash>(q, seed); }
    template <class Hash, class T>
    static GORGE_FORCEINLINE auto eval_d2(vec2<T> q, std::uint32_t seed) { return gradient_noise_d2<Hash>(q, seed); }
};
}  // namespace detail

/// Quintic gradient noise as a fractal basis.
template <class Hash = pcg3d_hash>
using gradient_basis = noise_basis<detail::gradient_noise_forms, Hash>;

}  // namespace gorge
