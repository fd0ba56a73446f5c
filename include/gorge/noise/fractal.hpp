// gorge/noise/fractal.hpp — fractal sums of any basis noise, with exact gradients: fBm, billow, ridged
// multifractal and derivative-damped ("erosion-like") fBm.
//
// Every function returns vec3(value, d/dx, d/dy) at p, and the gradient is the exact gradient of
// the returned value wherever the value is differentiable; the kinks are listed per function.
// Each has a value-only twin (fractal_sum_value, billow_value, ridged_value, damped_fbm_value)
// for callers that need heights only: it returns the same value bit for bit and skips the
// derivative work (about a third of the cost; see benchmarks/bench_noise.cpp).
// The basis noise is a policy (gradient_basis, value_basis, simplex_basis, or your own with the
// same members, see gorge/noise/gradient_noise.hpp); its default is quintic gradient noise with pcg3d hashing.
//
// Octaves: octave o samples the basis at q = freq_o p (each component clamped to +-2^62, so that any
// finite p gives a finite result) with freq_0 = frequency and
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "gradient_noise.hpp"

namespace gorge {

namespace detail {
/// The rule of one extra member of a fractal parameter struct (ridged's offset and feedback,
/// damped_fbm's damping): finite, at least `lowest`, and with `weight(value)` (the magnitude the
/// kernel derives from it) at most finite_limit<S>().
template <class S, class Weight>
bool fractal_member_ok(S value, S lowest, Weight weight) {
    return std::isfinite(value) && value >= lowest && within_finite_limit(weight(value));
}

/// The octave walk every fractal shares, as a loop cursor (plain loop code, so that the octave
/// body inlines into the caller's point loop): octave o samples q_o = octave_point(p, freq_o) with
/// seed derive_seed(seed, o), freq_0 = frequency, freq_{o+1} = lacunarity freq_o, amp_0 = 1 and
/// amp_{o+1} = gain amp_o.
///     for (octave_cursor<T> o(params, seed); o.more(); o.next()) ... o.point(p), o.seed(), o.freq, o.amp
template <class T>
struct octave_cursor {
    template <class Params>
    GORGE_FORCEINLINE octave_cursor(const Params& params, std::uint32_t fractal_seed)
        : freq(T(params.frequency)), lacunarity(T(params.lacunarity)), gain(T(params.gain)),
          count(params.octaves), base_seed(fractal_seed) {}
    GORGE_FORCEINLINE bool more() const { return index < count; }
    GORGE_FORCEINLINE void next() {
        freq *= lacunarity;
        amp *= gain;
        ++index;
    }
    GORGE_FORCEINLINE vec2<T> point(vec2<T> p) const { return octave_point(p, freq); }
    GORGE_FORCEINLINE std::uint32_t seed() const { return derive_seed(base_seed, std::uint32_t(index)); }

    T freq;       ///< freq_o
    T amp = T(1);  ///< amp_o
    T lacunarity, gain;
    int count;
    int index = 0;
    std::uint32_t base_seed;
};
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
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const glm::vec<3, T> v = Basis::template eval<T>(o.point(p), o.seed());
        n += o.amp * glm::vec<3, T>(v.x, o.freq * v.y, o.freq * v.z);
    }
    return n;
}

/// fractal_sum()'s value alone, from the basis' value-only form (Basis::eval_value, see
/// noise_basis): equals fractal_sum(p, params, seed).x bit for bit and skips the gradient's work.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE T fractal_sum_value(glm::vec<2, T> p, const fbm_params<S>& params, std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::fractal_sum_value: invalid fbm_params");
    T n = T(0);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next())
        n += o.amp * detail::basis_value<Basis>(o.point(p), o.seed());
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
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const glm::vec<3, T> v = Basis::template eval<T>(o.point(p), o.seed());
        const T s = detail::sign(v.x);
        n += o.amp * glm::vec<3, T>(detail::abs(v.x), s * o.freq * v.y, s * o.freq * v.z);
    }
    return n;
}

/// billow()'s value alone (Basis::eval_value per octave): equals billow(p, params, seed).x bit
/// for bit.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE T billow_value(glm::vec<2, T> p, const fbm_params<S>& params, std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::billow_value: invalid fbm_params");
    T n = T(0);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next())
        n += o.amp * detail::abs(detail::basis_value<Basis>(o.point(p), o.seed()));
    return n;
}

// ---- ridged multifractal -----------------------------------------------------------------------

/// Parameters of ridged(): the fBm octave parameters plus Musgrave's offset and feedback. The
/// octave parameters follow fbm_params' rules, derived limits included (see fbm_params).
template <class T>
struct ridged_params {
    T frequency = T(1);   ///< frequency of the first octave, finite > 0 (default 1)
    int octaves = 6;      ///< number of octaves, 0..32 (default 6); 0 gives the zero field
    T lacunarity = T(2);  ///< frequency factor per octave, finite > 0 (default 2)
    T gain = T(0.5);      ///< amplitude factor per octave, finite (default 0.5)
    /// Ridge height before squaring: each octave is (offset - |n|)^2; finite with (|offset| + 1)^2
    /// at most max / 2^20 of T (default 1). With offset >= the basis bound the ridges are the
    /// highest points.
    T offset = T(1);
    /// How strongly an octave's signal gates the next octave's detail: weight = sat(signal *
    /// feedback); finite, >= 0 and at most max / 2^20 of T (default 2; 0 keeps only the first octave).
    T feedback = T(2);

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (const invalid_parameter bad = detail::fractal_first_invalid(frequency, octaves, lacunarity, gain))
            return bad;
        const auto ridge_squared = [](T o) { return (std::fabs(o) + T(1)) * (std::fabs(o) + T(1)); };
        if (!detail::fractal_member_ok(offset, std::numeric_limits<T>::lowest(), ridge_squared))
            return "offset (must be finite with (|offset| + 1)^2 at most max / 2^20 of the scalar type)";
        if (!detail::fractal_member_ok(feedback, T(0), [](T f) { return f; }))
            return "feedback (must be finite, >= 0 and at most max / 2^20 of the scalar type)";
        return gradient_invalid();
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::ridged_params"); }

private:
    /// Worst case of the gradient that ridged() carries through the weights, octave by octave with
    /// R = |offset| + 1 and w <= 1: |signal_grad_o| <= 2 R freq_o + R^2 feedback |signal_grad_{o-1}|,
    /// and the sums of |amp_o signal_grad_o| and of |amp_o| R^2 must stay at most max / 2^20.
    invalid_parameter gradient_invalid() const {
        const T ridge = std::fabs(offset) + T(1);
        T freq = frequency, amp = T(1), signal_grad = T(0), sum = T(0), value_sum = T(0);
        for (int o = 0; o < octaves; ++o) {
            signal_grad = T(2) * ridge * freq + ridge * ridge * feedback * signal_grad;
            sum += std::fabs(amp) * signal_grad;
            value_sum += std::fabs(amp) * ridge * ridge;
            if (!(detail::within_finite_limit(signal_grad) && detail::within_finite_limit(sum) &&
                  detail::within_finite_limit(value_sum)))
                return "feedback (the value bound sum_o |gain^o| (|offset| + 1)^2 and the gradient bound sum_o "
                       "|gain^o| G_o, G_o = 2 (|offset| + 1) frequency_o + (|offset| + 1)^2 feedback G_(o-1), must "
                       "be at most max / 2^20 of the scalar type)";
            freq *= lacunarity;
            amp *= gain;
        }
        return nullptr;
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
    const T offset = T(params.offset), feedback = T(params.feedback);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const glm::vec<3, T> v = Basis::template eval<T>(o.point(p), o.seed());
        const T ridge = offset - detail::abs(v.x);
        const V2 ridge_grad = V2(v.y, v.z) * (-detail::sign(v.x) * o.freq);
        const T signal = ridge * ridge * weight;
        const V2 signal_grad = (T(2) * ridge * weight) * ridge_grad + (ridge * ridge) * weight_grad;
        value += o.amp * signal;
        grad += o.amp * signal_grad;
        const T gated = signal * feedback;
        const auto inside = gated < T(1);  // gated >= 0 always, so only the upper clamp acts
        weight = detail::min(gated, T(1));
        weight_grad = detail::select<T>(inside, feedback, T(0)) * signal_grad;
    }
    return {value, grad.x, grad.y};
}

/// ridged()'s value alone (Basis::eval_value per octave, no chain rule through the weights):
/// equals ridged(p, params, seed).x bit for bit.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE T ridged_value(glm::vec<2, T> p, const ridged_params<S>& params, std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::ridged_value: invalid ridged_params");
    T value = T(0);
    T weight = T(1);
    const T offset = T(params.offset), feedback = T(params.feedback);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const T ridge = offset - detail::abs(detail::basis_value<Basis>(o.point(p), o.seed()));
        const T signal = ridge * ridge * weight;
        value += o.amp * signal;
        weight = detail::min(signal * feedback, T(1));
    }
    return value;
}

// ---- derivative-damped fBm ---------------------------------------------------------------------

/// Parameters of damped_fbm(): the fBm octave parameters plus the damping strength. The octave
/// parameters follow fbm_params' rules, derived limits included (see fbm_params).
template <class T>
struct damped_fbm_params {
    T frequency = T(1);   ///< frequency of the first octave, finite > 0 (default 1)
    int octaves = 6;      ///< number of octaves, 0..32 (default 6); 0 gives the zero field
    T lacunarity = T(2);  ///< frequency factor per octave, finite > 0 (default 2)
    T gain = T(0.5);      ///< amplitude factor per octave, finite (default 0.5)
    /// Strength c of the slope damping 1 / (1 + c |D|^2); finite, >= 0 and at most max / 2^20 of T
    /// (default 1, Quilez's formula; 0 gives fractal_sum).
    T damping = T(1);

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (const invalid_parameter bad = detail::fractal_first_invalid(frequency, octaves, lacunarity, gain))
            return bad;
        if (!detail::fractal_member_ok(damping, T(0), [](T c) { return c; }))
            return "damping (must be finite, >= 0 and at most max / 2^20 of the scalar type)";
        return gradient_invalid();
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::damped_fbm_params"); }

private:
    /// Worst case of damped_fbm()'s gradient: octave o adds at most |amp_o| (freq_o + 2 J_o (o + 1)
    /// max(1, damping)) basis-gradient units, J_o = sum_{k <= o} freq_k (the damping's own
    /// derivative), and the sum must stay at most max / 2^20.
    invalid_parameter gradient_invalid() const {
        const T c = std::max(T(1), damping);
        T freq = frequency, amp = T(1), jacobian = T(0), sum = T(0);
        for (int o = 0; o < octaves; ++o) {
            jacobian += freq;
            sum += std::fabs(amp) * (freq + T(2) * jacobian * T(o + 1) * c);
            if (!detail::within_finite_limit(sum))
                return "damping (the gradient bound sum_o |gain^o| (frequency_o + 2 (o + 1) max(1, damping) "
                       "sum_(k <= o) frequency_k) must be at most max / 2^20 of the scalar type)";
            freq *= lacunarity;
            amp *= gain;
        }
        return nullptr;
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
    const T c = T(params.damping);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const noise_d2<T> n = Basis::template eval_d2<T>(o.point(p), o.seed());
        d += n.gradient;
        jxx += o.freq * n.dxx;
        jxy += o.freq * n.dxy;
        jyy += o.freq * n.dyy;
        const T inv = T(1) / (T(1) + c * detail::dot(d, d));
        // grad |D|^2 = 2 J D
        const V2 grad_d2(T(2) * (jxx * d.x + jxy * d.y), T(2) * (jxy * d.x + jyy * d.y));
        value += o.amp * n.value * inv;
        grad += o.amp * (n.gradient * (o.freq * inv) - grad_d2 * (n.value * c * inv * inv));
    }
    return {value, grad.x, grad.y};
}

/// damped_fbm()'s value alone: the damping needs each octave's gradient but not its Hessian, so
/// this takes Basis::eval instead of Basis::eval_d2. For the three shipped bases both forms
/// compute value and gradient with the same operations, so this equals damped_fbm(p, params,
/// seed).x bit for bit; a basis of your own whose eval rounds differently from its eval_d2
/// gets the difference of those roundings.
template <class Basis = gradient_basis<>, class T, class S>
GORGE_FORCEINLINE T damped_fbm_value(glm::vec<2, T> p, const damped_fbm_params<S>& params, std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::damped_fbm_value: invalid damped_fbm_params");
    using V2 = detail::vec2<T>;
    T value = T(0);
    V2 d(T(0), T(0));  // D_o
    const T c = T(params.damping);
    for (detail::octave_cursor<T> o(params, seed); o.more(); o.next()) {
        const glm::vec<3, T> n = Basis::template eval<T>(o.point(p), o.seed());
        d += V2(n.y, n.z);
        const T inv = T(1) / (T(1) + c * detail::dot(d, d));
        value += o.amp * n.x * inv;
    }
    return value;
}

}  // namespace gorge
