// gorge/noise/island.hpp — island shaping after Red Blob Games, with exact gradients.
//
// Amit Patel, "Making maps with noise functions" (Red Blob Games, 2015,
// https://www.redblobgames.com/maps/terrain-from-noise/) builds islands from noise in three
// steps, all here as field combinators (gorge/noise/field.hpp) that keep the gradient exact:
//   - redistribution: e -> e^k flattens lowlands (k > 1) or raises them (k < 1);
//   - falloff: a distance d from the island centre, on coordinates n normalised to [-1, 1] at
//     the island's radius, pulls the elevation towards 1 - d: e -> mix(e, 1 - d, amount).
//     Two distances: radial (Euclidean) d = min(1, |n|), and the square bump
//     d = 1 - (1 - nx^2)(1 - ny^2) with n clamped to [-1, 1]^2;
//   - terraces: e -> flat treads joined by smooth risers.
// island_height_field() packages the whole recipe (warped fBm, redistribution, falloff), and
// island_moisture_field() the second, independent field of the same seed that biomes use.
//
// Kinks (documented where they occur; the gradient is exact elsewhere):
//   - radial distance: at the centre (a cone tip; gradient 0 there) and on the circle |n| = 1,
//     outside which d is clamped to 1 and its gradient is 0;
//   - square bump: on the square's edges |nx| = 1 or |ny| = 1, outside which d = 1, gradient 0;
//   - redistribution with k < 1 at e = 0, where the slope is infinite: the gradient returned there
//     is 0;
//   - clamped(): gradient 0 where the clamp is active.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "field.hpp"
#include "fractal.hpp"
#include "gradient_noise.hpp"

namespace gorge {

// ---- redistribution and terraces (profiles for apply_profile) ----------------------------------

/// Red Blob's redistribution e^k, extended to negative e as an odd function:
///     g(e) = sign(e) |e|^k,   g'(e) = k |e|^(k - 1),
/// so it is monotonic, keeps [-1, 1] and [0, 1] in place, and is as smooth as |e|^k at 0 (for
/// k >= 1 the slope at 0 is finite; for k < 1 it is infinite there and 0 is returned at e == 0).
/// Finite for every finite e and valid k: where |g| or g' exceeds the largest finite value of T
/// (|e| > 1 with k > 1; k < 1 at subnormal |e|) that value is returned instead. At subnormal |e|
/// the slope is computed from |e| 2^d, d = the digits of T (a normal number), and 2^(d (1 - k)),
/// so that k |e|^(k - 1) is exact wherever it is finite rather than lost to an overflow of
/// |e|^(k - 1).
template <class S>
struct power_profile {
    S exponent;  ///< k, finite > 0
    template <class T>
    GORGE_FORCEINLINE glm::vec<2, T> operator()(T e) const {
        using V = detail::scalar_t<T>;
        using limits = std::numeric_limits<V>;
        const T k = T(exponent);
        const T big = T(limits::max());
        const T a = detail::abs(e);
        const auto positive = a > T(0);
        const auto subnormal = a < T(limits::min());
        // |e|^(k - 1) = (|e| 2^d)^(k - 1) 2^(d (1 - k)); 2^(d (1 - k)) <= 2^d.
        const V lift = std::ldexp(V(1), limits::digits);
        const V unlift = std::exp2(V(limits::digits) * (V(1) - V(exponent)));
        const T base = detail::select<T>(subnormal, a * T(lift), a);
        const T slope = k * detail::pow(detail::select<T>(positive, base, T(1)), k - T(1)) *
                        detail::select<T>(subnormal, T(unlift), T(1));
        const T slope_at_zero = T(exponent == S(1) ? 1 : 0);  // k > 1: 0; k < 1: documented 0
        return {detail::sign(e) * detail::min(detail::pow(a, k), big),
                detail::select<T>(positive, detail::min(slope, big), slope_at_zero)};
    }
};

/// Smooth terraces: `steps` flat treads per unit of e joined by smoothstep risers. With
/// t = e steps, i = floor(t), f = t - i and x = sat((f - (1 - ramp)) / ramp):
///     g(e) = (i + x^2 (3 - 2x)) / steps,   g'(e) = 6 x (1 - x) / ramp.
/// g(e) = e at every tread edge i / steps, it is C1 everywhere (the risers start and end flat),
/// and ramp -> 0 approaches Red Blob's round(e steps) / steps (hard steps); ramp = 1 is a pure
/// smoothstep staircase.
template <class S>
struct terrace_profile {
    S steps;  ///< treads per unit of e, finite > 0
    S ramp;   ///< fraction of each step taken by the riser, in (0, 1]
    template <class T>
    GORGE_FORCEINLINE glm::vec<2, T> operator()(T e) const {
        const T t = e * T(steps);
        const T i = detail::floor(t);
        const T f = t - i;
        const T x = detail::saturate((f - T(S(1) - ramp)) / T(ramp));
        return {(i + x * x * (T(3) - T(2) * x)) / T(steps), T(6) * x * (T(1) - x) / T(ramp)};
    }
};

/// sign(f) |f|^k as a field (see power_profile). Throws std::invalid_argument naming `exponent`
/// unless it is finite and > 0.
template <class F, class S>
profile_field<F, power_profile<S>> redistribute(F f, S exponent) {
    if (!(std::isfinite(exponent) && exponent > S(0)))
        throw std::invalid_argument("gorge::redistribute: invalid exponent (must be finite and > 0)");
    return {std::move(f), power_profile<S>{exponent}};
}

/// Smooth terraces of f (see terrace_profile). Throws std::invalid_argument naming `steps` or
/// `ramp` when out of range.
template <class F, class S>
profile_field<F, terrace_profile<S>> terrace(F f, S steps, S ramp) {
    if (!(std::isfinite(steps) && steps > S(0)))
        throw std::invalid_argument("gorge::terrace: invalid steps (must be finite and > 0)");
    if (!(ramp > S(0) && ramp <= S(1)))
        throw std::invalid_argument("gorge::terrace: invalid ramp (must be in (0, 1])");
    return {std::move(f), terrace_profile<S>{steps, ramp}};
}

// ---- distances from the island centre ------------------------------------------------------------

/// Radial (Euclidean) distance d = min(1, |n|) with (dd/dnx, dd/dny): n / |n| inside the unit
/// circle, 0 outside it (clamp active) and at the centre itself (a cone tip).
template <class T>
GORGE_FORCEINLINE glm::vec<3, T> radial_distance(glm::vec<2, T> n) {
    const T r = detail::length(n);
    const auto inside = r < T(1);
    const auto off_centre = r > T(0);
    const T inv_r = T(1) / detail::select<T>(off_centre, r, T(1));
    const T slope = detail::select<T>(inside, detail::select<T>(off_centre, inv_r, T(0)), T(0));
    return {detail::min(r, T(1)), n.x * slope, n.y * slope};
}

/// Square bump distance d = 1 - (1 - nx^2)(1 - ny^2) with its gradient, n clamped to [-1, 1]^2:
/// 0 at the centre, 1 on and outside the square's edges (gradient 0 there). Smooth at the centre.
template <class T>
GORGE_FORCEINLINE glm::vec<3, T> square_bump_distance(glm::vec<2, T> n) {
    const T x = detail::clamp(n.x, T(-1), T(1)), y = detail::clamp(n.y, T(-1), T(1));
    const T ax = T(1) - x * x, ay = T(1) - y * y;
    const T kx = detail::select<T>(detail::abs(n.x) < T(1), T(1), T(0));
    const T ky = detail::select<T>(detail::abs(n.y) < T(1), T(1), T(0));
    return {T(1) - ax * ay, T(2) * x * ay * kx, T(2) * y * ax * ky};
}

/// Which distance island_falloff uses.
enum class falloff_shape {
    radial,       ///< d = min(1, |n|): round islands
    square_bump,  ///< d = 1 - (1 - nx^2)(1 - ny^2): fills a square map, land reaches the corners less
};

/// Parameters of island_falloff().
template <class S>
struct falloff_params {
    glm::vec<2, S> centre = glm::vec<2, S>(S(0));  ///< island centre in p units, finite (default (0, 0))
    /// p distance mapped to |n| = 1, finite > 0 with 1 / radius at most max / 2^20 of S (about
    /// 3.2e32 for float: radius >= ~3.1e-33) (default 1).
    S radius = S(1);
    falloff_shape shape = falloff_shape::radial;  ///< (default radial)
    /// How far e is pulled towards 1 - d, in [0, 1] (default 0.75): 0 leaves e alone, 1 replaces
    /// it. For e in [0, 1], the result is <= 1 - amount where d = 1 and >= amount at the centre.
    S amount = S(0.75);

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (!(std::isfinite(centre.x) && std::isfinite(centre.y))) return "centre (must be finite)";
        if (!(std::isfinite(radius) && radius > S(0) && detail::within_finite_limit(S(1) / radius)))
            return "radius (must be finite and > 0, with 1 / radius at most max / 2^20 of the scalar type)";
        if (shape != falloff_shape::radial && shape != falloff_shape::square_bump) return "shape (unknown value)";
        if (!(amount >= S(0) && amount <= S(1))) return "amount (must be in [0, 1])";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::falloff_params"); }
};

namespace detail {
/// falloff_field clamps each component of n to +-falloff_n_limit before taking the distance: both
/// distances are 1 with gradient 0 wherever some |n_i| >= 1, so the clamp changes no result, and
/// it keeps n finite where p - centre or its product with 1 / radius overflows.
constexpr double falloff_n_limit = 2.0;
}  // namespace detail

/// mix(e, 1 - d(n), amount) with n = (p - centre) / radius and e = f(p); gradient
/// (1 - amount) ∇e - amount ∇d / radius. Kinks: those of the distance (see above).
template <class F, class S>
struct falloff_field {
    F f;
    falloff_params<S> params;
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        const T inv_radius = T(S(1) / params.radius);
        const T limit = detail::constant<T>(detail::falloff_n_limit);
        const glm::vec<2, T> n(detail::clamp((p.x - T(params.centre.x)) * inv_radius, -limit, limit),
                               detail::clamp((p.y - T(params.centre.y)) * inv_radius, -limit, limit));
        // The shape is a parameter, not a value: branching on it is uniform across SIMD lanes.
        const glm::vec<3, T> d =
            params.shape == falloff_shape::radial ? radial_distance(n) : square_bump_distance(n);
        const glm::vec<3, T> e = f(p);
        const T m = T(params.amount);
        const T keep = T(1) - m;
        return {keep * e.x + m * (T(1) - d.x), keep * e.y - m * d.y * inv_radius, keep * e.z - m * d.z * inv_radius};
    }
};
/// Validates params (std::invalid_argument naming the bad parameter).
template <class F, class S>
falloff_field<F, S> island_falloff(F f, const falloff_params<S>& params) {
    params.validate();
    return {std::move(f), params};
}

// ---- the recipe ----------------------------------------------------------------------------------

/// Seed streams of the island recipe: every noise gets derive_seed(seed, stream).
namespace island_stream {
constexpr std::uint32_t height = 0;    ///< the terrain fBm
constexpr std::uint32_t warp_x = 1;    ///< the warp's x offset
constexpr std::uint32_t warp_y = 2;    ///< the warp's y offset
constexpr std::uint32_t moisture = 3;  ///< the moisture fBm
}  // namespace island_stream

namespace detail {
/// A bound of |d/dx| and |d/dy| of the gradient, value and simplex bases (largest seen over 2e7
/// random points: 2.4, 3.7 and 6.2; value noise's exact bound is 2 * 15/8 = 3.75).
constexpr double basis_partial_bound = 8.0;

/// G(f) = basis_partial_bound times the sum over the octaves of |gain|^o * frequency *
/// lacunarity^o: a bound of |d/dx| and |d/dy| of an fBm of any basis. Finite for valid params.
template <class S>
S fbm_gradient_bound(const fbm_params<S>& f) {
    S freq = f.frequency, amp = S(1), sum = S(0);
    for (int o = 0; o < f.octaves; ++o) {
        sum += std::fabs(amp) * freq;
        if (o + 1 < f.octaves) freq *= f.lacunarity, amp *= f.gain;
    }
    return S(basis_partial_bound) * sum;
}
}  // namespace detail

/// Parameters of island_height_field() and island_moisture_field(). p is in units of the island
/// radius around the centre by default (the island spans about [-1, 1]^2).
///
/// Derived limits (checked by first_invalid(), so that every finite p gives finite results): with
/// G(f) = 8 sum_o |gain|^o frequency lacunarity^o, a bound of the partial derivatives of fBm f
/// (see detail::fbm_gradient_bound), and L = max / 2^20 of S (about 3.2e32 for float),
///   - warp: J_0 = 1, J_{k+1} = 1 + 2 |warp.strength| G(warp_noise) J_k, and 2 J G(terrain) for
///     J = J_iterations, are at most L (bounds of the entries of the warp's Jacobian and of the
///     warped terrain's partial derivatives);
///   - contrast times 2 J G(terrain) (the gradient of e = sat(0.5 + contrast fBm)), and contrast
///     times G(moisture), are at most L;
///   - that gradient of e times the redistribution's steepest slope is at most L: the slope is
///     at most exponent for exponent >= 1, and below 1 it is at most 2^(2 digits + 2) of S
///     (2^50 for float), as e is either 0 or at least 2^-(2 digits + 2) (0.5 + contrast fBm
///     rounds to a multiple of that, fused multiply-add or not).
///   - falloff.radius: 1 / radius is at most L (see falloff_params).
template <class S>
struct island_params {
    /// Terrain fBm (default frequency 2, 6 octaves, lacunarity 2, gain 0.5).
    fbm_params<S> terrain = fbm_params<S>{S(2), 6, S(2), S(0.5)};
    /// Warp offset fBm, one per axis (default frequency 1.5, 4 octaves, lacunarity 2, gain 0.5).
    fbm_params<S> warp_noise = fbm_params<S>{S(1.5), 4, S(2), S(0.5)};
    /// Warp strength and iterations (default 0.35, 1).
    warp_params<S> warp = warp_params<S>{S(0.35), 1};
    /// e = sat(0.5 + contrast · fBm) maps the fBm to [0, 1]; finite > 0 (default 1.5; the fBm's
    /// values mostly stay within ±0.4).
    S contrast = S(1.5);
    /// Redistribution exponent k of e^k, finite > 0 (default 1.8: wide lowlands, steeper peaks).
    S exponent = S(1.8);
    /// Falloff towards the border (default radial, amount 0.75, radius 1, centre (0, 0)).
    falloff_params<S> falloff = falloff_params<S>{};
    /// Moisture fBm (default frequency 1.5, 4 octaves, lacunarity 2, gain 0.5); its value is
    /// mapped by sat(0.5 + contrast · fBm) too.
    fbm_params<S> moisture = fbm_params<S>{S(1.5), 4, S(2), S(0.5)};
    /// Sea level in e units, in [0, 1] (default 0.3). Not used by the fields; it is the level
    /// the guarantee below refers to.
    S sea_level = S(0.3);

    /// The first bad member and its rule (a nested one with its enclosing member, e.g.
    /// "terrain.octaves (must be in 0..32)"), or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (const invalid_parameter bad = detail::nested_invalid("terrain", terrain.first_invalid())) return bad;
        if (const invalid_parameter bad = detail::nested_invalid("warp_noise", warp_noise.first_invalid())) return bad;
        if (const invalid_parameter bad = detail::nested_invalid("warp", warp.first_invalid())) return bad;
        if (!(std::isfinite(contrast) && contrast > S(0))) return "contrast (must be finite and > 0)";
        if (!(std::isfinite(exponent) && exponent > S(0))) return "exponent (must be finite and > 0)";
        if (const invalid_parameter bad = detail::nested_invalid("falloff", falloff.first_invalid())) return bad;
        if (const invalid_parameter bad = detail::nested_invalid("moisture", moisture.first_invalid())) return bad;
        if (!(sea_level >= S(0) && sea_level <= S(1))) return "sea_level (must be in [0, 1])";
        return derived_invalid();
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::island_params"); }
    /// True when the falloff alone guarantees an island: e <= 1 - amount < sea_level wherever
    /// d = 1 (outside the radius) and e >= amount > sea_level at the centre. The defaults do.
    bool guarantees_island() const { return S(1) - falloff.amount < sea_level && sea_level < falloff.amount; }

private:
    /// The derived limits of the class comment (the members themselves already valid).
    invalid_parameter derived_invalid() const {
        using detail::within_finite_limit;
        const S warp_gradient = detail::fbm_gradient_bound(warp_noise);
        // A warp noise without octaves is 0, whatever the strength.
        const S growth = warp_gradient == S(0) ? S(0) : S(2) * std::fabs(warp.strength) * warp_gradient;
        S jacobian = S(1);
        for (int k = 0; k < warp.iterations; ++k) {
            jacobian = S(1) + growth * jacobian;
            if (!within_finite_limit(jacobian)) break;
        }
        const S terrain_gradient = S(2) * jacobian * detail::fbm_gradient_bound(terrain);
        if (!(within_finite_limit(jacobian) && within_finite_limit(terrain_gradient)))
            return "warp.strength (the warp's Jacobian bound J and 2 J G(terrain) must be at most max / 2^20 of "
                   "the scalar type, see island_params)";
        const S e_gradient = contrast * terrain_gradient;
        if (!(within_finite_limit(e_gradient) && within_finite_limit(contrast * detail::fbm_gradient_bound(moisture))))
            return "contrast (contrast * 2 J G(terrain) and contrast * G(moisture) must be at most max / 2^20 of the "
                   "scalar type, see island_params)";
        constexpr int digits = std::numeric_limits<S>::digits;
        const S steepest_slope = exponent >= S(1) ? exponent : std::ldexp(S(1), 2 * digits + 2);
        if (!within_finite_limit(e_gradient * steepest_slope))
            return "exponent (contrast * 2 J G(terrain) times the steepest redistribution slope, exponent or "
                   "2^(2 digits + 2) below 1, must be at most max / 2^20 of the scalar type, see island_params)";
        return nullptr;
    }
};

/// Red Blob's island: e = sat(0.5 + contrast · warped fBm), redistributed as e^k, then pulled
/// towards 1 - d by the falloff. The warp moves only the noise, never the falloff (d is measured
/// at the unwarped p), so the border guarantee of island_params::guarantees_island() holds
/// whatever the noise does. Values in [0, 1]; gradient exact except at the kinks of the clamp
/// (sat) and of the falloff distance. Throws std::invalid_argument for invalid params.
template <class S, class Basis = gradient_basis<>>
auto island_height_field(const island_params<S>& params, std::uint32_t seed = 0) {
    params.validate();
    const fractal_sum_field<S, Basis> terrain(params.terrain, derive_seed(seed, island_stream::height));
    const fractal_sum_field<S, Basis> wx(params.warp_noise, derive_seed(seed, island_stream::warp_x));
    const fractal_sum_field<S, Basis> wy(params.warp_noise, derive_seed(seed, island_stream::warp_y));
    auto e = clamped(offset(scale(warp(terrain, wx, wy, params.warp), params.contrast), S(0.5)), S(0), S(1));
    return island_falloff(redistribute(e, params.exponent), params.falloff);
}

/// Moisture in [0, 1] from the same seed: sat(0.5 + contrast · fBm) on stream
/// island_stream::moisture, independent of the height field.
template <class S, class Basis = gradient_basis<>>
auto island_moisture_field(const island_params<S>& params, std::uint32_t seed = 0) {
    params.validate();
    const fractal_sum_field<S, Basis> moisture(params.moisture, derive_seed(seed, island_stream::moisture));
    return clamped(offset(scale(moisture, params.contrast), S(0.5)), S(0), S(1));
}

}  // namespace gorge
