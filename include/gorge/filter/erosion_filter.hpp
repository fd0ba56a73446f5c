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
// Guarantees: finite outputs for finite inputs and valid parameters; deterministic; seamless
// across tiles. Limits: see gorge/noise/gradient_noise.hpp about float precision far from the origin.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../detail/math.hpp"
#include "../noise/hash.hpp"
#include "phacelle.hpp"

namespace gorge {

/// Parameters of the erosion filter. Defaults are the published demo's.
template <class T>
struct erosion_params {
    /// Horizontal and vertical size of the largest gullies, finite > 0 (default 0.15).
    T scale = T(0.15);
    /// Magnitude of all octaves together, finite (default 0.22).
    T strength = T(0.22);
    /// 0 only sharpens peaks and valleys, 1 gives full gullies; finite, usually 0..1 (default 0.5).
    T gully_weight = T(0.5);
    /// How far fine gullies climb: lower values keep them to steeper slopes; finite (default 1.5).
    T detail = T(1.5);
    /// Rounding of (ridges, creases, the input's own peaks and valleys as a multiplier, per-octave
    /// multiplier); finite, usually >= 0 (default (0.1, 0.0, 0.1, 2.0)).
    glm::vec<4, T> rounding = glm::vec<4, T>(T(0.1), T(0.0), T(0.1), T(2.0));
    /// Slope at which gullies start: (initial, per octave, ridge-map initial, ridge-map per
    /// octave); finite (default (1.25, 1.25, 2.8, 1.5)).
    glm::vec<4, T> onset = glm::vec<4, T>(T(1.25), T(1.25), T(2.8), T(1.5));
    /// (assumed slope value, amount 0..1 by which it replaces the real slope for steering the
    /// gullies); finite (default (0.7, 1.0)).
    glm::vec<2, T> assumed_slope = glm::vec<2, T>(T(0.7), T(1.0));
    /// Number of gully octaves, 0..32 (default 5).
    int octaves = 5;
    /// Frequency factor per octave, finite > 0 (default 2).
    T lacunarity = T(2);
    /// Strength factor per octave, finite (default 0.5).
    T gain = T(0.5);
    /// Cell size relative to the stripe width (Phacelle cell_freq), finite > 0 (default 0.7).
    T cell_scale = T(0.7);
    /// Phacelle normalization ("normalized gullies"), 0..1 (default 0.5).
    T normalization = T(0.5);

    /// Name and rule of the first bad parameter, or nullptr when all are valid.
    const char* first_invalid() const {
        using std::isfinite;
        if (!(isfinite(scale) && scale > T(0))) return "scale (must be finite and > 0)";
        if (!isfinite(strength)) return "strength (must be finite)";
        if (!isfinite(gully_weight)) return "gully_weight (must be finite)";
        if (!isfinite(detail)) return "detail (must be finite)";
        for (int i = 0; i < 4; ++i)
            if (!isfinite(rounding[i])) return "rounding (every component must be finite)";
        for (int i = 0; i < 4; ++i)
            if (!isfinite(onset[i])) return "onset (every component must be finite)";
        if (!(isfinite(assumed_slope.x) && isfinite(assumed_slope.y)))
            return "assumed_slope (both components must be finite)";
        if (octaves < 0 || octaves > 32) return "octaves (must be in 0..32)";
        if (!(isfinite(lacunarity) && lacunarity > T(0))) return "lacunarity (must be finite and > 0)";
        if (!isfinite(gain)) return "gain (must be finite)";
        if (!(isfinite(cell_scale) && cell_scale > T(0))) return "cell_scale (must be finite and > 0)";
        if (!(normalization >= T(0) && normalization <= T(1))) return "normalization (must be in [0, 1])";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const {
        if (const char* bad = first_invalid()) {
            throw std::invalid_argument(std::string("gorge::erosion_params: invalid ") + bad);
        }
    }
};

/// Output of erosion_filter() at one point (or one batch of points).
template <class T>
struct erosion_result {
    T height_delta;               ///< eroded height minus input height
    glm::vec<2, T> slope_delta;   ///< eroded gradient minus input gradient (approximate by design)
    T magnitude;                  ///< sum of the octave strengths: the largest possible |height_delta|
    T ridge_map;                  ///< -1 on creases, +1 on ridges, 0 where no gully forms
    T fade_target;                ///< the stacked fade target after the last octave
};

/// The analytic erosion filter at p.
///   height_and_slope  (h, dh/dx, dh/dy) of the input terrain at p
///   fade_target       about -1 in valleys, +1 on peaks (see fade_target_from_altitude); clamped
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
    const T slope_len = detail::max(detail::length(slope), detail::constant<T>(detail::safe_normalize_min_length));

    // Initial mask: no gullies where the input is flat; rounded peaks and valleys of the input.
    const T input_rounding = mix(crease_rounding, ridge_rounding, saturate(fade + T(0.5))) *
                             T(params.rounding.z);
    T mask = ease_out(smooth_start(slope_len * T(params.onset.x), input_rounding * T(params.onset.x)));
    T ridge_mask = ease_out(slope_len * T(params.onset.z));
    T ridge_fade = fade;

    // Gully steering slope: the real slope direction with an assumed magnitude.
    V2 g = mix(slope, slope / slope_len * T(params.assumed_slope.x), T(params.assumed_slope.y));

    V3 result = height_and_slope;
    T magnitude = T(0);
    T rounding_mult = T(1);
    for (int octave = 0; octave < params.octaves; ++octave) {
        // Normalized gullies: Phacelle's normalization keeps the stripes' depth where cells disagree.
        const phacelle_result<T> ph =
            phacelle<Hash>(p * freq, detail::safe_normalize(g), T(params.cell_scale), T(0.25),
                           T(params.normalization), seed);
        const T c = ph.phase.x, sn = ph.phase.y;
        const V2 side = ph.side * (-freq);  // back to p units; negative so slopes point downhill

        // Straight gullies: steer by the sign of the sine, not the sine itself.
        g += detail::sign(sn) * side * (s * T(params.gully_weight));

        // Stacked fades: fade from the previous profile (fade, flat) towards this octave's gully.
        const V3 gully(c, sn * side.x, sn * side.y);
        const V3 faded = mix(V3(fade, T(0), T(0)), gully * T(params.gully_weight), mask);
        result += faded * s;
        magnitude += s;
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
    out.height_delta = result.x - height_and_slope.x;
    out.slope_delta = V2(result.y - height_and_slope.y, result.z - height_and_slope.z);
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
