// gorge/noise/fractal.hpp — fractal sums of any basis noise, with exact gradients: fBm, billow, ridged
// multifractal and derivative-damped ("erosion-like") fBm.
//
// Every function returns vec3(value, d/dx, d/dy) at p, and the gradient is the exact gradient of
// the returned value wherever the value is differentiable; the kinks are listed per function.
// The basis noise is a policy (gradient_basis, value_basis, simplex_basis, or your own with the
// same members, see gorge/noise/gradient_noise.hpp); its default is quintic gradient noise with pcg3d hashing.
//
// Octaves: octave o samples the basis at q = freq_o p with freq_0 = frequency and
// freq_{o+1} = lacunarity freq_o, weighted by amp_0 = 1, amp_{o+1} = gain amp_o. Seeds: octave o
// uses derive_seed(seed, o), so octaves are independent (with one seed for all octaves, every
// integer point of octave 0 is a lattice point of all octaves when the lacunarity is an integer,
// and ridges or creases would line up there). gorge::fbm in gorge/noise/gradient_noise.hpp keeps the published
// demo's single seed; fractal_sum is the same sum with per-octave seeds.
//
// Ranges use the basis bound B (|basis| <= B, B = 1 for the three shipped bases) and
// A = sum_o |amp_o|: fractal_sum and damped_fbm lie in [-A B, A B]; billow in [0, A B] for
// gain >= 0; ridged in [0, A M] for gain >= 0, with M = max(offset, |offset - B|)^2.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../detail/math.hpp"
#include "gradient_noise.hpp"

namespace gorge {

namespace detail {
/// The checks shared by every fractal parameter struct (the same rules as fbm_params).
template <class T>
const char* fractal_first_invalid(T frequency, int octaves, T lacunarity, T gain) {
    if (!(std::isfinite(frequency) && frequency > T(0))) return "frequency (must be finite and > 0)";
    if (octaves < 0 || octaves > 32) return "octaves (must be in 0..32)";
    if (!(std::isfinite(lacunarity) && lacunarity > T(0))) return "lacunarity (must be finite and > 0)";
    if (!std::isfinite(gain)) return "gain (must be finite)";
    return nullptr;
}
[[noreturn]] inline void throw_invalid(const char* who, const char* bad) {
    throw std::invalid_argument(std::string(who) + ": invalid " + bad);
}
}  // namespace detail

/// Sum of |amp_o| over the octaves: with the basis bound, the range of fractal_sum.
template <class S>
S amplitude_sum(int octaves, S gain) {
    S sum = S(0), amp = S(1);
    for (int o = 0; o < octaves; ++o) {
        sum += std::fabs(amp);
        amp *= gain;
    }
    return sum;
}

// ---- fBm -------------------------------------------------------------------------------------

/// Fractal Brownian motion over any basis, octave o seeded with derive_seed(seed, o):
///     sum_o amp_o basis(freq_o p).
/// Smooth everywhere (as smooth as the basis). Range [-A B, A B] (see the header comment).
/// Precondition (asserted in debug builds): params.validate() passes.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> fractal_sum(glm::vec<2, T> p, const fbm_params<S>& params,
                                             std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::fractal_sum: invalid fbm_params");
    glm::vec<3, T> n(T(0), T(0), T(0));
    T freq = T(params.frequency);
    T amp = T(1);
    for (int o = 0; o < params.octaves; ++o) {
        const glm::vec<3, T> v = Basis::template eval<T>(p * freq, derive_seed(seed, std::uint32_t(o)));
        n += amp * glm::vec<3, T>(v.x, freq * v.y, freq * v.z);
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return n;
}

// ---- billow ----------------------------------------------------------------------------------

/// Billow noise: sum_o amp_o |basis(freq_o p)|, rounded bumps separated by sharp creases
/// (Perlin's "turbulence" with the absolute value, as in Ebert et al., "Texturing & Modeling").
/// Kinks: where any octave's basis value crosses 0 (a crease); there the returned gradient uses
/// sign(0) = 0 for that octave. Range [0, A B] for gain >= 0.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> billow(glm::vec<2, T> p, const fbm_params<S>& params,
                                        std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::billow: invalid fbm_params");
    glm::vec<3, T> n(T(0), T(0), T(0));
    T freq = T(params.frequency);
    T amp = T(1);
    for (int o = 0; o < params.octaves; ++o) {
        const glm::vec<3, T> v = Basis::template eval<T>(p * freq, derive_seed(seed, std::uint32_t(o)));
        const T s = detail::sign(v.x);
        n += amp * glm::vec<3, T>(detail::abs(v.x), s * freq * v.y, s * freq * v.z);
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return n;
}

// ---- ridged multifractal -----------------------------------------------------------------------

/// Parameters of ridged(): the fBm octave parameters plus Musgrave's offset and feedback.
template <class T>
struct ridged_params {
    T frequency = T(1);   ///< frequency of the first octave, finite > 0 (default 1)
    int octaves = 6;      ///< number of octaves, 0..32 (default 6); 0 gives the zero field
    T lacunarity = T(2);  ///< frequency factor per octave, finite > 0 (default 2)
    T gain = T(0.5);      ///< amplitude factor per octave, finite (default 0.5)
    /// Ridge height before squaring: each octave is (offset - |n|)^2; finite (default 1). With
    /// offset >= the basis bound the ridges are the highest points.
    T offset = T(1);
    /// How strongly an octave's signal gates the next octave's detail: weight = sat(signal *
    /// feedback); finite >= 0 (default 2; 0 keeps only the first octave).
    T feedback = T(2);

    /// Name and rule of the first bad parameter, or nullptr when all are valid.
    const char* first_invalid() const {
        if (const char* bad = detail::fractal_first_invalid(frequency, octaves, lacunarity, gain)) return bad;
        if (!std::isfinite(offset)) return "offset (must be finite)";
        if (!(std::isfinite(feedback) && feedback >= T(0))) return "feedback (must be finite and >= 0)";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const {
        if (const char* bad = first_invalid()) detail::throw_invalid("gorge::ridged_params", bad);
    }
};

/// Ridged multifractal (F. Kenton Musgrave, in Ebert et al., "Texturing & Modeling: A Procedural
/// Approach", 1998/2003): octave o contributes amp_o s_o with
///     s_o = (offset - |n_o|)^2 w_o,   w_0 = 1,   w_{o+1} = sat(s_o feedback),
/// so fine ridges grow only on the high parts of coarse ridges. The gradient carries the chain
/// rule through the weights. Kinks: where an octave's basis value n_o crosses 0 (the ridge line,
/// gradient there uses sign(0) = 0), and where s_o feedback crosses 1 (the clamp of the weight:
/// where it is active the weight's gradient is 0). Range [0, A M] for gain >= 0 (header comment).
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> ridged(glm::vec<2, T> p, const ridged_params<S>& params,
                                        std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::ridged: invalid ridged_params");
    using V2 = detail::vec2<T>;
    T value = T(0);
    V2 grad(T(0), T(0));
    T weight = T(1);
    V2 weight_grad(T(0), T(0));
    T freq = T(params.frequency);
    T amp = T(1);
    const T offset = T(params.offset), feedback = T(params.feedback);
    for (int o = 0; o < params.octaves; ++o) {
        const glm::vec<3, T> v = Basis::template eval<T>(p * freq, derive_seed(seed, std::uint32_t(o)));
        const T ridge = offset - detail::abs(v.x);
        const V2 ridge_grad = V2(v.y, v.z) * (-detail::sign(v.x) * freq);
        const T signal = ridge * ridge * weight;
        const V2 signal_grad = (T(2) * ridge * weight) * ridge_grad + (ridge * ridge) * weight_grad;
        value += amp * signal;
        grad += amp * signal_grad;
        const T gated = signal * feedback;
        const auto inside = gated < T(1);  // gated >= 0 always, so only the upper clamp acts
        weight = detail::min(gated, T(1));
        weight_grad = detail::select<T>(inside, feedback, T(0)) * signal_grad;
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return {value, grad.x, grad.y};
}

// ---- derivative-damped fBm ---------------------------------------------------------------------

/// Parameters of damped_fbm(): the fBm octave parameters plus the damping strength.
template <class T>
struct damped_fbm_params {
    T frequency = T(1);   ///< frequency of the first octave, finite > 0 (default 1)
    int octaves = 6;      ///< number of octaves, 0..32 (default 6); 0 gives the zero field
    T lacunarity = T(2);  ///< frequency factor per octave, finite > 0 (default 2)
    T gain = T(0.5);      ///< amplitude factor per octave, finite (default 0.5)
    /// Strength c of the slope damping 1 / (1 + c |D|^2); finite >= 0 (default 1, Quilez's
    /// formula; 0 gives fractal_sum).
    T damping = T(1);

    /// Name and rule of the first bad parameter, or nullptr when all are valid.
    const char* first_invalid() const {
        if (const char* bad = detail::fractal_first_invalid(frequency, octaves, lacunarity, gain)) return bad;
        if (!(std::isfinite(damping) && damping >= T(0))) return "damping (must be finite and >= 0)";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const {
        if (const char* bad = first_invalid()) detail::throw_invalid("gorge::damped_fbm_params", bad);
    }
};

/// Derivative-damped fBm after Inigo Quilez (https://iquilezles.org/articles/morenoise/, 2008):
/// each octave is divided by 1 + c |D_o|^2, where D_o = sum_{k <= o} grad_q n_k is the running
/// sum of the octaves' gradients in their own coordinates q_k = freq_k p (Quilez's `d`). Steep
/// places accumulate a large D and lose their fine detail, which reads as erosion:
///     value = sum_o amp_o n_o / (1 + c |D_o|^2).
/// Unlike Quilez's shader, the returned gradient is the exact gradient of that value: the
/// damping's own derivative, -amp_o n_o c 2 J_o D_o / (1 + c |D_o|^2)^2 with
/// J_o = sum_{k <= o} freq_k Hessian_q(n_k), is included, which is why the basis provides
/// second derivatives. Continuity: C1 everywhere; with the gradient and value bases (C2, not C3)
/// its second derivatives jump across their lattice lines, with the simplex basis (C3) it is C2.
/// Range [-A B, A B].
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> damped_fbm(glm::vec<2, T> p, const damped_fbm_params<S>& params,
                                            std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::damped_fbm: invalid damped_fbm_params");
    using V2 = detail::vec2<T>;
    T value = T(0);
    V2 grad(T(0), T(0));
    V2 d(T(0), T(0));                     // D_o
    T jxx = T(0), jxy = T(0), jyy = T(0);  // J_o = dD_o/dp (symmetric)
    T freq = T(params.frequency);
    T amp = T(1);
    const T c = T(params.damping);
    for (int o = 0; o < params.octaves; ++o) {
        const noise_d2<T> n = Basis::template eval_d2<T>(p * freq, derive_seed(seed, std::uint32_t(o)));
        d += n.gradient;
        jxx += freq * n.dxx;
        jxy += freq * n.dxy;
        jyy += freq * n.dyy;
        const T inv = T(1) / (T(1) + c * detail::dot(d, d));
        // grad |D|^2 = 2 J D
        const V2 grad_d2(T(2) * (jxx * d.x + jxy * d.y), T(2) * (jxy * d.x + jyy * d.y));
        value += amp * n.value * inv;
        grad += amp * (n.gradient * (freq * inv) - grad_d2 * (n.value * c * inv * inv));
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return {value, grad.x, grad.y};
}

}  // namespace gorge
