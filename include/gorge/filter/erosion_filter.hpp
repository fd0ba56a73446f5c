// gorge/filter/erosion_filter.hpp — the analytic erosion filter.
//
// Rune Skovbo Johansen's "Advanced Terrain Erosion Filter" (2025–2026), which grew from Clay
// John's "Eroded Terrain Noise" (Shadertoy, 2018) and Felix Westin's "Terrain Erosion Noise"
// (Shadertoy, 2023). Given any height function with a known gradient, it adds branching gullies
// that run downhill and sharpens ridges and creases, using nothing but the local height, slope and
// position: every point is evaluated alone, so tiles, chunks, threads and GPUs agree.
//
// How: octave by octave, Phacelle stripes (gorge/filter/phacelle.hpp) are laid across the current
// downhill direction; their phase is a gully profile whose gradient bends the direction used by
// the next, finer octave, so small gullies branch off along bigger ones. Three refinements by
// Johansen are named where they happen in the code:
//   - stacked fades: each octave fades towards the previous octave's profile (the "fade target",
//     -1 in creases, +1 on ridges) by a mask that carries over from octave to octave, so fine
//     detail disappears on flat ground and in the creases and ridges of coarser octaves;
//   - normalized gullies: the Phacelle blend is renormalised so gully depth does not fade where
//     stripes of neighbouring cells disagree;
//   - straight gullies: the direction is steered by sign(sin) rather than sin, which keeps the
//     gullies straight between ridge and crease instead of curling.
// The output gradient is an approximation by design (the mask's own derivative is ignored), and
// the steering slope g is deliberately not faded.
//
// Guarantees: finite outputs for finite inputs and parameters that validate() accepts (see
// erosion_params for the limits it enforces); deterministic; seamless across tiles. Limits: see gorge/noise/gradient_noise.hpp about float precision far from the origin.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "../noise/gradient_noise.hpp"
#include "../noise/hash.hpp"
#include "phacelle.hpp"

namespace gorge {

namespace detail {
/// The filter steers by the input slope clamped to +-max / steering_slope_divisor of its scalar
/// type per component, so that the steering vector stays finite however steep the input is (the
/// direction of a slope that large is all that matters, and the clamp keeps it to within a few
/// degrees only where a component is that large).
constexpr double steering_slope_divisor = 16.0;

/// |v| without overflow: sqrt(x^2 + y^2) where that is finite, else |v| from v scaled by its
/// largest component; at most max() of the scalar type.
template <class T>
GORGE_FORCEINLINE T overflow_free_length(vec2<T> v) {
    const T largest = detail::constant<T>(double(std::numeric_limits<scalar_t<T>>::max()));
    const T plain = detail::length(v);
    const T big = detail::max(detail::abs(v.x), detail::abs(v.y));
    const T scaled = big * detail::length(v * (T(1) / detail::max(big, T(1))));
    return detail::min(detail::select<T>(plain <= largest, plain, scaled), largest);
}

/// safe_normalize without overflow: v / |v| when |v| > safe_normalize_min_length, else v
/// unchanged; v is scaled by its largest component first, so huge vectors normalise too.
template <class T>
GORGE_FORCEINLINE vec2<T> overflow_free_normalize(vec2<T> v) {
    const T big = detail::max(detail::abs(v.x), detail::abs(v.y));
    const T smallest = detail::constant<T>(double(std::numeric_limits<scalar_t<T>>::min()));
    const vec2<T> u = v * (T(1) / detail::max(big, smallest));  // largest component +-1 (or v = 0)
    const T unit_len = detail::length(u);                        // in [1, sqrt 2] unless v = 0
    const auto ok = big * unit_len > detail::constant<T>(safe_normalize_min_length);
    return detail::select<T>(ok, u * (T(1) / detail::select<T>(ok, unit_len, T(1))), v);
}
}  // namespace detail

/// Parameters of the erosion filter. Defaults are the published demo's.
///
/// Finite output: with parameters that validate() accepts, erosion_filter() returns finite values
/// for every finite input (position, height, slope, fade target) when it is evaluated in the
/// parameters' scalar type T (float parameters for float and float batches, double for double).
/// Besides each member's own rule, validate() enforces limits on what the filter derives from
/// several members: each of the following must be at most L = max / 2^20 of T (about 3.2e32 for
/// float, 1.7e302 for double), for every octave o < octaves:
///   - cell_scale: 2 pi cell_scale and the first octave's frequency 1 / (scale cell_scale);
///   - strength: |strength| scale max(1, |gully_weight|);
///   - lacunarity: the stripe frequency 2 pi lacunarity^o / scale, times max(1, |gully_weight|);
///   - gain: the sum over octaves of |strength scale gain^o| max(1, |gully_weight|) (the height
///     range) and the sum of 2 pi |strength gully_weight| |gain lacunarity|^o (the slope range);
///   - rounding: (|rounding.x| + |rounding.y|) |rounding.z|, the same times onset.x,
///     |rounding.w|^o, (|rounding.x| + |rounding.y|) |rounding.w|^o and the same times onset.y.
template <class T>
struct erosion_params {
    /// Horizontal and vertical size of the largest gullies, in p units; finite, at least the
    /// smallest normal number of T (about 1.2e-38 for float), within the derived limits above
    /// (default 0.15).
    T scale = T(0.15);
    /// Magnitude of all octaves together, in height units; finite, within the derived limits
    /// above (default 0.22). Negative values invert the gullies.
    T strength = T(0.22);
    /// 0 only sharpens peaks and valleys, 1 gives full gullies; finite with |gully_weight| at most
    /// max / 2^20 of T, usually 0..1, within the derived limits above (default 0.5).
    T gully_weight = T(0.5);
    /// How far fine gullies climb: lower values keep them to steeper slopes; the exponent of the
    /// mask carried from octave to octave, finite > 0 (default 1.5).
    T detail = T(1.5);
    /// Rounding of (ridges, creases, the input's own peaks and valleys as a multiplier, per-octave
    /// multiplier); finite, usually >= 0, within the derived limits above (default
    /// (0.1, 0.0, 0.1, 2.0)).
    glm::vec<4, T> rounding = glm::vec<4, T>(T(0.1), T(0.0), T(0.1), T(2.0));
    /// Slope at which gullies start, as inverse slopes: (initial, per octave, ridge-map initial,
    /// ridge-map per octave); every component finite and >= 0 (default (1.25, 1.25, 2.8, 1.5)).
    glm::vec<4, T> onset = glm::vec<4, T>(T(1.25), T(1.25), T(2.8), T(1.5));
    /// (assumed slope value, amount by which it replaces the real slope for steering the
    /// gullies): the value finite with |value| at most max / 2^20 of T, the amount in [0, 1]
    /// (default (0.7, 1.0)).
    glm::vec<2, T> assumed_slope = glm::vec<2, T>(T(0.7), T(1.0));
    /// Number of gully octaves, 0..32 (default 5).
    int octaves = 5;
    /// Frequency factor per octave, finite > 0, within the derived limits above (default 2).
    T lacunarity = T(2);
    /// Strength factor per octave, finite, within the derived limits above (default 0.5).
    T gain = T(0.5);
    /// Cell size relative to the stripe width (Phacelle cell_freq), finite > 0, within the derived
    /// limits above (default 0.7).
    T cell_scale = T(0.7);
    /// Phacelle normalization ("normalized gullies"), 0..1 (default 0.5).
    T normalization = T(0.5);

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        using std::isfinite;
        using detail::within_finite_limit;
        if (!(isfinite(scale) && scale >= std::numeric_limits<T>::min()))
            return "scale (must be finite and at least the smallest normal number of the scalar type)";
        if (!isfinite(strength)) return "strength (must be finite)";
        if (!within_finite_limit(gully_weight))
            return "gully_weight (must be finite with |gully_weight| at most max / 2^20 of the scalar type)";
        if (!(isfinite(detail) && detail > T(0))) return "detail (must be finite and > 0)";
        for (int i = 0; i < 4; ++i)
            if (!isfinite(rounding[i])) return "rounding (every component must be finite)";
        for (int i = 0; i < 4; ++i)
            if (!(isfinite(onset[i]) && onset[i] >= T(0))) return "onset (every component must be finite and >= 0)";
        if (!within_finite_limit(assumed_slope.x))
            return "assumed_slope (the value x must be finite with |x| at most max / 2^20 of the scalar type)";
        if (!(assumed_slope.y >= T(0) && assumed_slope.y <= T(1)))
            return "assumed_slope (the amount y must be in [0, 1])";
        if (octaves < 0 || octaves > 32) return "octaves (must be in 0..32)";
        if (!(isfinite(lacunarity) && lacunarity > T(0))) return "lacunarity (must be finite and > 0)";
        if (!isfinite(gain)) return "gain (must be finite)";
        if (!(isfinite(cell_scale) && cell_scale > T(0))) return "cell_scale (must be finite and > 0)";
        if (!(normalization >= T(0) && normalization <= T(1))) return "normalization (must be in [0, 1])";
        return derived_invalid();
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const { detail::validate(*this, "gorge::erosion_params"); }

private:
    /// The derived limits of the class comment, evaluated octave by octave as the filter does.
    invalid_parameter derived_invalid() const {
        using detail::within_finite_limit;
        const T two_pi = T(detail::two_pi);
        const T weight = std::max(T(1), std::fabs(gully_weight));
        const T span = std::fabs(rounding.x) + std::fabs(rounding.y);
        T freq = T(1) / (scale * cell_scale);
        if (!(within_finite_limit(two_pi * cell_scale) && within_finite_limit(freq)))
            return "cell_scale (2 pi cell_scale and 1 / (scale * cell_scale) must be at most max / 2^20 of the "
                   "scalar type)";
        T amp = std::fabs(strength) * scale;
        if (!within_finite_limit(amp * weight))
            return "strength (|strength| * scale * max(1, |gully_weight|) must be at most max / 2^20 of the "
                   "scalar type)";
        if (!(within_finite_limit(span * std::fabs(rounding.z)) &&
              within_finite_limit(span * std::fabs(rounding.z) * onset.x)))
            return "rounding ((|x| + |y|) * |z| and that times onset.x must be at most max / 2^20 of the scalar "
                   "type)";
        T rounding_mult = T(1), height_sum = T(0), slope_sum = T(0);
        for (int o = 0; o < octaves; ++o) {
            const T stripe = two_pi * cell_scale * freq;  // |side| of this octave, in p units
            if (!within_finite_limit(stripe * weight))
                return "lacunarity (2 pi * lacunarity^(octaves - 1) / scale * max(1, |gully_weight|) must be at "
                       "most max / 2^20 of the scalar type)";
            height_sum += amp * weight;
            slope_sum += amp * std::fabs(gully_weight) * stripe;
            if (!(within_finite_limit(height_sum) && within_finite_limit(slope_sum)))
                return "gain (the sums over the octaves of |strength * scale * gain^o| * max(1, |gully_weight|) "
                       "and of 2 pi |strength * gully_weight| |gain * lacunarity|^o must be at most max / 2^20 of "
                       "the scalar type)";
            if (!(within_finite_limit(rounding_mult) && within_finite_limit(span * rounding_mult) &&
                  within_finite_limit(span * rounding_mult * onset.y)))
                return "rounding (|w|^(octaves - 1), that times |x| + |y|, and that times onset.y must be at most "
                       "max / 2^20 of the scalar type)";
            if (o + 1 < octaves) {
                amp *= std::fabs(gain);
                freq *= lacunarity;
                rounding_mult *= std::fabs(rounding.w);
            }
        }
        return nullptr;
    }
};

/// Output of erosion_filter() at one point (or one batch of points).
template <class T>
struct erosion_result {
    T height_delta;               ///< eroded height minus input height
    glm::vec<2, T> slope_delta;   ///< eroded gradient minus input gradient (approximate by design)
    /// Sum of the octave strengths' magnitudes, |strength scale gain^o| over the octaves (>= 0):
    /// |height_delta| <= magnitude * max(1, |gully_weight|), i.e. <= magnitude for |gully_weight| <= 1.
    T magnitude;
    T ridge_map;                  ///< -1 on creases, +1 on ridges, 0 where no gully forms
    T fade_target;                ///< the stacked fade target after the last octave
};

/// The analytic erosion filter at p.
///   height_and_slope  (h, dh/dx, dh/dy) of the input terrain at p
///   fade_target       about -1 in valleys, +1 on peaks (see fade_target_from_altitude); clamped
/// Finite output for finite input and valid parameters (see erosion_params); far from the origin
/// (|p| times the top octave's frequency beyond 2^62) the result is finite but meaningless.
/// Precondition (asserted in debug builds): params.first_invalid() == nullptr.
template <class Hash = pcg3d_hash, class T, class S>
GORGE_FORCEINLINE erosion_result<T> erosion_filter(glm::vec<2, T> p, glm::vec<3, T> height_and_slope,
                                                   T fade_target, const erosion_params<S>& params,
                                                   std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::erosion_filter: invalid erosion_params");
    using V2 = detail::vec2<T>;
    using V3 = detail::vec3<T>;
    using detail::ease_out;
    using detail::mix;
    using detail::saturate;
    using detail::smooth_start;

    const T ridge_rounding = T(params.rounding.x), crease_rounding = T(params.rounding.y);
    const V2 slope(height_and_slope.y, height_and_slope.z);

    T s = T(params.strength * params.scale);
    T fade = detail::clamp(fade_target, T(-1), T(1));
    T freq = T(S(1) / (params.scale * params.cell_scale));
    // |slope| without overflow (a plain x^2 + y^2 overflows from about 1.8e19 in float).
    const T slope_len = detail::max(detail::overflow_free_length(slope),
                                    detail::constant<T>(detail::safe_normalize_min_length));

    // Initial mask: no gullies where the input is flat; rounded peaks and valleys of the input.
    const T input_rounding = mix(crease_rounding, ridge_rounding, saturate(fade + T(0.5))) *
                             T(params.rounding.z);
    T mask = ease_out(smooth_start(slope_len * T(params.onset.x), input_rounding * T(params.onset.x)));
    T ridge_mask = ease_out(slope_len * T(params.onset.z));
    T ridge_fade = fade;

    // Gully steering slope: the real slope direction with an assumed magnitude,
    // mix(slope, slope / |slope| * value, amount) written as slope (1 - amount) + direction value
    // amount: the mix itself cancels catastrophically in float on steep slopes (slope - slope), while
    // this form is exact for amount = 1 and keeps the direction for any slope.
    const T steer_limit =
        detail::constant<T>(double(std::numeric_limits<detail::scalar_t<T>>::max()) / detail::steering_slope_divisor);
    const V2 steer(detail::clamp(slope.x, -steer_limit, steer_limit), detail::clamp(slope.y, -steer_limit, steer_limit));
    const T amount = T(params.assumed_slope.y);
    V2 g = steer * (T(1) - amount) + slope / slope_len * T(params.assumed_slope.x * params.assumed_slope.y);

    // The deltas are accumulated from zero rather than from the input and subtracted at the end:
    // that would lose them in float under a large height or slope.
    V3 delta(T(0), T(0), T(0));
    T magnitude = T(0);
    T rounding_mult = T(1);
    for (int octave = 0; octave < params.octaves; ++octave) {
        // Normalized gullies: Phacelle's normalization keeps the stripes' depth where cells disagree.
        const phacelle_result<T> ph =
            phacelle<Hash>(detail::octave_point(p, freq), detail::overflow_free_normalize(g),
                           T(params.cell_scale), T(0.25), T(params.normalization), seed);
        const T c = ph.phase.x, sn = ph.phase.y;
        const V2 side = ph.side * (-freq);  // back to p units; negative so slopes point downhill

        // Straight gullies: steer by the sign of the sine, not the sine itself.
        g += detail::sign(sn) * side * (s * T(params.gully_weight));

        // Stacked fades: fade from the previous profile (fade, flat) towards this octave's gully.
        const V3 gully(c, sn * side.x, sn * side.y);
        const V3 faded = mix(V3(fade, T(0), T(0)), gully * T(params.gully_weight), mask);
        delta += faded * s;
        magnitude += detail::abs(s);
        fade = faded.x;

        const T octave_rounding = mix(crease_rounding, ridge_rounding, saturate(c + T(0.5))) * rounding_mult;
        mask = detail::pow_inv(mask, T(params.detail)) *
               ease_out(smooth_start(detail::abs(sn) * T(params.onset.y), octave_rounding * T(params.onset.y)));
        ridge_fade = mix(ridge_fade, c, ridge_mask);
        ridge_mask = ridge_mask * ease_out(detail::abs(sn) * T(params.onset.w));

        s *= T(params.gain);
        freq *= T(params.lacunarity);
        rounding_mult *= T(params.rounding.w);
    }

    erosion_result<T> out;
    out.height_delta = delta.x;
    out.slope_delta = V2(delta.y, delta.z);
    out.magnitude = magnitude;
    out.ridge_map = ridge_fade * (T(1) - ridge_mask);
    out.fade_target = fade;
    return out;
}

/// Fade target from altitude: -1 at valley_altitude and below, +1 at peak_altitude and above,
/// linear between. Precondition: peak_altitude != valley_altitude.
template <class T>
GORGE_FORCEINLINE T fade_target_from_altitude(T height, T valley_altitude, T peak_altitude) {
    return detail::clamp(T(2) * (height - valley_altitude) / (peak_altitude - valley_altitude) - T(1),
                         T(-1), T(1));
}

/// Applies the filter's result with a height offset (o, k), the way the published demo does:
///     eroded = h + height_delta + mix(o, -clamp(F0), k) * magnitude
/// where F0 is the fade target that was passed to the filter. o shifts the whole eroded surface
/// (the demo uses -0.65 so gullies cut down rather than build up); k in 0..1 makes the shift follow
/// the fade target instead (raising valleys, lowering peaks). The demo uses (-0.65, 0).
template <class T>
GORGE_FORCEINLINE T apply_height_offset(T height, const erosion_result<T>& r, T fade_target,
                                        glm::vec<2, T> offset) {
    const T f0 = detail::clamp(fade_target, T(-1), T(1));
    return height + r.height_delta + detail::mix(offset.x, -f0, offset.y) * r.magnitude;
}

}  // namespace gorge
