// gorge/glsl/gorge.glsl - the companion GLSL include: gorge's hashes, gradient noise, Phacelle
// noise, erosion filter and demo pipeline for shaders.
//
// It mirrors the C++ headers section by section and line by line, with the same constants and
// names (C++ `gorge::erosion_filter` is `gorge_erosion_filter` here, `gorge::detail::ease_out` is
// `gorge_detail_ease_out`), so the two can be read side by side:
//   hash.hpp            -> "Hashes"
//   noise.hpp           -> "Gradient noise and fBm"
//   phacelle.hpp        -> "Phacelle noise"
//   erosion_filter.hpp  -> "Erosion filter", "Fade target and height offset"
//   demo_pipeline.hpp   -> "Demo pipeline"
// See those headers for the techniques, their authors and the guarantees; the comments here only
// note what differs on a GPU.
//
// Usage: include (or paste) this file after your #version line; it has no #version of its own and
// works as GLSL 4.50 (Vulkan and OpenGL), GLSL ES 3.10 and GLSL ES 3.00 (WebGL2), in any shader
// stage. Public names start with `gorge_`, private helpers with `gorge_detail_`; the file is
// guarded by GORGE_GLSL, so including it twice is harmless.
//
// Hash policy. The C++ kernels take the hash as a template parameter; here it is chosen when the
// shader is compiled, by defining GORGE_HASH before the include to the name of a lattice function
// `vec2 f(uvec2 cell, uint seed)` returning a vector in [-1, 1)^2:
//     #define GORGE_HASH gorge_pcg3d_lattice2      (the default: exact integer hash, seeds honoured)
//     #define GORGE_HASH gorge_shadertoy_lattice2  (the published shaders' float hash, seed ignored)
// A custom hash works the same way if it is declared before the include. Both built-in hashes are
// always available by name, whatever GORGE_HASH says.
//
// Agreement with the C++ float path (checked by tests/glsl on a real Vulkan device):
//  - pcg3d is pure 32-bit unsigned arithmetic: bit-identical to C++ on every conforming device;
//  - everything else is float arithmetic whose result depends on the device's exp/sin/cos/pow and
//    on whether it fuses multiply-adds, so it agrees to about 1e-6 typically (1e-4 is what the test
//    demands); the filter's straight-gully steering uses sign(sin), so at the rare points where the
//    sine is within rounding of zero a GPU and a CPU can take different branches.
//  - The shadertoy hash is written with `precise` where the language has it (GLSL >= 4.00, ES >=
//    3.20), which forbids fused multiply-adds and keeps it close to the C++ bits; ES 3.00/3.10 have
//    no such qualifier.
//
// Limits. Parameters are not validated on the GPU (shaders cannot throw): validate them on the CPU
// with gorge::erosion_params<float>::validate() before uploading. Far from the origin float loses
// the fractional bits of the position exactly as the C++ float path does (see noise.hpp).
// On GLSL ES the file declares highp as the default float and int precision (the hashes need
// 32-bit integers, the noise 32-bit floats); redeclare lower defaults after it if you want them.
//
// SPDX-License-Identifier: MPL-2.0

#ifndef GORGE_GLSL
#define GORGE_GLSL 1

#ifdef GL_ES
precision highp float;
precision highp int;
#endif

// `precise` (no fused multiply-add contraction) exists in GLSL 4.00+ and GLSL ES 3.20+.
#if (defined(GL_ES) && __VERSION__ >= 320) || (!defined(GL_ES) && __VERSION__ >= 400)
#define GORGE_DETAIL_PRECISE precise
#else
#define GORGE_DETAIL_PRECISE
#endif

// ---- Maths helpers (detail/math.hpp) ------------------------------------------------------------
// GLSL's own floor, fract, clamp, sign, exp, sin, cos, pow, dot and length have the C++ semantics.
// mix is redefined to the C++ formula a + (b - a) t (GLSL specifies a (1 - t) + b t, which rounds
// differently).

float gorge_detail_mix(float a, float b, float t) { return a + (b - a) * t; }
vec2 gorge_detail_mix(vec2 a, vec2 b, float t) { return a + (b - a) * t; }
vec3 gorge_detail_mix(vec3 a, vec3 b, float t) { return a + (b - a) * t; }

// clamp(x, 0, 1).
float gorge_detail_saturate(float x) { return clamp(x, 0.0, 1.0); }

// Rotates by +90 degrees: perp((x, y)) = (-y, x).
vec2 gorge_detail_perp(vec2 v) { return vec2(-v.y, v.x); }

// Smallest length that safe_normalize divides by; shorter vectors are returned unchanged.
const float gorge_detail_safe_normalize_min_length = 1e-10;

vec2 gorge_detail_safe_normalize(vec2 v) {
    float len = length(v);
    return len > gorge_detail_safe_normalize_min_length ? v / len : v;
}

// 1 - (1 - sat(t))^2.
float gorge_detail_ease_out(float t) {
    float u = 1.0 - gorge_detail_saturate(t);
    return 1.0 - u * u;
}

// Linear ramp t - k/2 with its corner rounded over the width k: t^2 / (2k) for t < k.
float gorge_detail_smooth_start(float t, float k) {
    return t >= k ? t - k * 0.5 : t * t / (2.0 * k);
}

// 1 - (1 - sat(t))^e. GLSL leaves pow(0, e) undefined for e <= 0, so the base 0 is spelt out:
// 0 for e > 0 (as in C++), 1 otherwise (C++ gives 1 for e = 0 and +inf for e < 0; the filter's
// `detail` is meant to be > 0).
float gorge_detail_pow_inv(float t, float e) {
    float b = 1.0 - gorge_detail_saturate(t);
    return 1.0 - (b > 0.0 ? pow(b, e) : (e > 0.0 ? 0.0 : 1.0));
}

// ---- Hashes (hash.hpp) --------------------------------------------------------------------------

// The LCG step that seeds each pcg3d lane (Numerical Recipes' 32-bit LCG constants).
const uint gorge_detail_pcg_lcg_multiplier = 1664525u;
const uint gorge_detail_pcg_lcg_increment = 1013904223u;
// A hash keeps the top 24 bits of a lane, scales them by 2^-23 and shifts by 1 into [-1, 1).
const uint gorge_detail_hash_mantissa_shift = 8u;
const float gorge_detail_hash_unit_scale = 1.0 / 8388608.0;  // 2^-23

// Jarzynski & Olano's pcg3d ("Hash Functions for GPU Rendering", JCGT 9(3), 2020): an LCG step per
// lane, then two rounds of lane mixing around a xorshift. uint arithmetic wraps by definition.
uvec3 gorge_pcg3d(uvec3 v) {
    v = v * gorge_detail_pcg_lcg_multiplier + gorge_detail_pcg_lcg_increment;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v ^= v >> 16u;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    return v;
}

// Maps the top 24 bits of each lane to [-1, 1), exactly.
vec2 gorge_detail_unit_from_bits(uvec2 bits) {
    return vec2(bits >> gorge_detail_hash_mantissa_shift) * gorge_detail_hash_unit_scale - 1.0;
}

// pcg3d hash of the lattice point `cell` (signed coordinates reinterpreted as unsigned, so that
// neighbour offsets wrap): each component in [-1, 1) with a step of 2^-23; bit-identical to C++.
vec2 gorge_pcg3d_lattice2(uvec2 cell, uint seed) {
    return gorge_detail_unit_from_bits(gorge_pcg3d(uvec3(cell, seed)).xy);
}
vec2 gorge_pcg3d_hash2(ivec2 cell, uint seed) { return gorge_pcg3d_lattice2(uvec2(cell), seed); }

// The float hash of the published erosion shaders (Clay John, Felix Westin, Rune Skovbo Johansen):
//     x = cell * k + k.yx,  k = (0.3183099, 0.3678794)
//     hash = -1 + 2 * fract(16 * k * fract(x.x * x.y * (x.x + x.y)))
// The seed is ignored; quality degrades a few thousand cells from the origin (see hash.hpp).
const vec2 gorge_detail_shadertoy_k = vec2(0.3183099, 0.3678794);
const float gorge_detail_shadertoy_scale = 16.0;

vec2 gorge_shadertoy_lattice2(uvec2 cell, uint seed) {
    GORGE_DETAIL_PRECISE vec2 x = vec2(ivec2(cell)) * gorge_detail_shadertoy_k + gorge_detail_shadertoy_k.yx;
    GORGE_DETAIL_PRECISE float t = fract(x.x * x.y * (x.x + x.y));
    GORGE_DETAIL_PRECISE vec2 h = -1.0 + 2.0 * fract(gorge_detail_shadertoy_scale * gorge_detail_shadertoy_k * t);
    return h;
}
vec2 gorge_shadertoy_hash2(ivec2 cell, uint seed) { return gorge_shadertoy_lattice2(uvec2(cell), seed); }

// The hash policy every noise below uses (see the file's header).
#ifndef GORGE_HASH
#define GORGE_HASH gorge_pcg3d_lattice2
#endif

// ---- Gradient noise and fBm (noise.hpp) ---------------------------------------------------------

// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy).
vec3 gorge_gradient_noise(vec2 q, uint seed) {
    vec2 i = floor(q);
    vec2 f = q - i;
    uvec2 c = uvec2(ivec2(i));

    // Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its derivative 30f^2 (f - 1)^2.
    vec2 u = f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
    vec2 du = 30.0 * f * f * (f * (f - 2.0) + 1.0);

    vec2 ga = GORGE_HASH(c, seed);
    vec2 gb = GORGE_HASH(c + uvec2(1u, 0u), seed);
    vec2 gc = GORGE_HASH(c + uvec2(0u, 1u), seed);
    vec2 gd = GORGE_HASH(c + uvec2(1u, 1u), seed);

    float va = dot(ga, f);
    float vb = dot(gb, f - vec2(1.0, 0.0));
    float vc = dot(gc, f - vec2(0.0, 1.0));
    float vd = dot(gd, f - vec2(1.0, 1.0));
    float k = va - vb - vc + vd;

    float value = va + u.x * (vb - va) + u.y * (vc - va) + u.x * u.y * k;
    vec2 grad = ga + u.x * (gb - ga) + u.y * (gc - ga) + u.x * u.y * (ga - gb - gc + gd) +
                du * vec2(u.y * k + vb - va, u.x * k + vc - va);
    return vec3(value, grad);
}

// Parameters of a fractal (fBm) sum; gorge_fbm_params_default() gives the C++ defaults.
struct gorge_fbm_params {
    float frequency;   // frequency of the first octave, > 0 (default 3)
    int octaves;       // number of octaves, 0..32 (default 3)
    float lacunarity;  // frequency factor per octave, > 0 (default 2)
    float gain;        // amplitude factor per octave (default 0.1)
};

gorge_fbm_params gorge_fbm_params_default() { return gorge_fbm_params(3.0, 3, 2.0, 0.1); }

// Fractal sum of gradient noise with its exact gradient with respect to p.
vec3 gorge_fbm(vec2 p, gorge_fbm_params params, uint seed) {
    vec3 n = vec3(0.0);
    float freq = params.frequency;
    float amp = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        vec3 v = gorge_gradient_noise(p * freq, seed);
        n += amp * vec3(v.x, freq * v.y, freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}

// ---- Phacelle noise (phacelle.hpp) --------------------------------------------------------------

struct gorge_phacelle_result {
    vec2 phase;  // (cos, sin) of the blended phase; length in [1 - normalization, 1]
    vec2 side;   // perp(dir) * cell_freq * 2 pi: d(phase angle)/dq of every wave
};

const float gorge_detail_two_pi = 6.283185307179586476925286766559;
// Pivots are jittered by phacelle_jitter * hash, within [-0.5, 0.5) of the cell corner.
const float gorge_detail_phacelle_jitter = 0.5;
// Bell weight exp(-2 |v|^2) - 0.01111 is exactly 0 at |v| = 1.5, outside the 4x4 window.
const float gorge_detail_phacelle_bell_falloff = 2.0;
const float gorge_detail_phacelle_weight_floor = 0.01111;
// Lower bound of the length the blend is divided by (keeps an exact cancellation at 0, not NaN).
const float gorge_detail_phacelle_min_length = 1e-20;

// Rune Skovbo Johansen's Phacelle noise at q (in cell units); `dir` is a unit vector (or zero).
gorge_phacelle_result gorge_phacelle(vec2 q, vec2 dir, float cell_freq, float phase_offset,
                                     float normalization, uint seed) {
    vec2 side = gorge_detail_perp(dir) * (cell_freq * gorge_detail_two_pi);
    float phase0 = phase_offset * gorge_detail_two_pi;
    vec2 i0 = floor(q);
    vec2 f = q - i0;
    uvec2 c = uvec2(ivec2(i0));

    float weight_sum = 0.0;
    vec2 sum = vec2(0.0);
    for (int gj = -1; gj <= 2; ++gj) {
        for (int gi = -1; gi <= 2; ++gi) {
            vec2 cell_offset = vec2(float(gi), float(gj));
            vec2 jitter = gorge_detail_phacelle_jitter * GORGE_HASH(c + uvec2(ivec2(gi, gj)), seed);
            vec2 v = f - cell_offset - jitter;  // point relative to the cell's pivot
            float w = max(0.0, exp(-gorge_detail_phacelle_bell_falloff * dot(v, v)) -
                                   gorge_detail_phacelle_weight_floor);
            float angle = dot(v, side) + phase0;
            weight_sum += w;
            sum += w * vec2(cos(angle), sin(angle));
        }
    }
    vec2 m = sum / weight_sum;
    float len = max(max(1.0 - normalization, length(m)), gorge_detail_phacelle_min_length);
    return gorge_phacelle_result(m / len, side);
}

// ---- Erosion filter (erosion_filter.hpp) --------------------------------------------------------

// Parameters of the erosion filter, field for field gorge::erosion_params; ranges and meanings are
// documented there. gorge_erosion_params_default() returns the published demo's values.
struct gorge_erosion_params {
    float scale;          // size of the largest gullies, > 0 (default 0.15)
    float strength;       // magnitude of all octaves together (default 0.22)
    float gully_weight;   // 0 sharpens only, 1 full gullies (default 0.5)
    float detail;         // how far fine gullies climb, > 0 (default 1.5)
    vec4 rounding;        // (ridges, creases, input multiplier, per octave) (default (0.1, 0, 0.1, 2))
    vec4 onset;           // (initial, per octave, ridge-map initial, ridge-map per octave)
                          // (default (1.25, 1.25, 2.8, 1.5))
    vec2 assumed_slope;   // (value, amount 0..1) (default (0.7, 1))
    int octaves;          // 0..32 (default 5)
    float lacunarity;     // frequency factor per octave, > 0 (default 2)
    float gain;           // strength factor per octave (default 0.5)
    float cell_scale;     // Phacelle cell size relative to the stripe width, > 0 (default 0.7)
    float normalization;  // Phacelle normalization, 0..1 (default 0.5)
};

gorge_erosion_params gorge_erosion_params_default() {
    return gorge_erosion_params(0.15, 0.22, 0.5, 1.5, vec4(0.1, 0.0, 0.1, 2.0),
                                vec4(1.25, 1.25, 2.8, 1.5), vec2(0.7, 1.0), 5, 2.0, 0.5, 0.7, 0.5);
}

struct gorge_erosion_result {
    float height_delta;  // eroded height minus input height
    vec2 slope_delta;    // eroded gradient minus input gradient (approximate by design)
    float magnitude;     // sum of the octave strengths: the largest possible |height_delta|
    float ridge_map;     // -1 on creases, +1 on ridges, 0 where no gully forms
    float fade_target;   // the stacked fade target after the last octave
};

// The analytic erosion filter at p. height_and_slope = (h, dh/dx, dh/dy) of the input terrain;
// fade_target is about -1 in valleys and +1 on peaks (clamped).
gorge_erosion_result gorge_erosion_filter(vec2 p, vec3 height_and_slope, float fade_target,
                                          gorge_erosion_params params, uint seed) {
    float ridge_rounding = params.rounding.x, crease_rounding = params.rounding.y;
    vec2 slope = height_and_slope.yz;

    float s = params.strength * params.scale;
    float fade = clamp(fade_target, -1.0, 1.0);
    float freq = 1.0 / (params.scale * params.cell_scale);
    float slope_len = max(length(slope), gorge_detail_safe_normalize_min_length);

    // Initial mask: no gullies where the input is flat; rounded peaks and valleys of the input.
    float input_rounding = gorge_detail_mix(crease_rounding, ridge_rounding, gorge_detail_saturate(fade + 0.5)) *
                           params.rounding.z;
    float mask = gorge_detail_ease_out(gorge_detail_smooth_start(slope_len * params.onset.x,
                                                                 input_rounding * params.onset.x));
    float ridge_mask = gorge_detail_ease_out(slope_len * params.onset.z);
    float ridge_fade = fade;

    // Gully steering slope: the real slope direction with an assumed magnitude.
    vec2 g = gorge_detail_mix(slope, slope / slope_len * params.assumed_slope.x, params.assumed_slope.y);

    vec3 result = height_and_slope;
    float magnitude = 0.0;
    float rounding_mult = 1.0;
    for (int octave = 0; octave < params.octaves; ++octave) {
        // Normalized gullies: Phacelle's normalization keeps the stripes' depth where cells disagree.
        gorge_phacelle_result ph = gorge_phacelle(p * freq, gorge_detail_safe_normalize(g), params.cell_scale,
                                                  0.25, params.normalization, seed);
        float c = ph.phase.x, sn = ph.phase.y;
        vec2 side = ph.side * (-freq);  // back to p units; negative so slopes point downhill

        // Straight gullies: steer by the sign of the sine, not the sine itself.
        g += sign(sn) * side * (s * params.gully_weight);

        // Stacked fades: fade from the previous profile (fade, flat) towards this octave's gully.
        vec3 gully = vec3(c, sn * side.x, sn * side.y);
        vec3 faded = gorge_detail_mix(vec3(fade, 0.0, 0.0), gully * params.gully_weight, mask);
        result += faded * s;
        magnitude += s;
        fade = faded.x;

        float octave_rounding = gorge_detail_mix(crease_rounding, ridge_rounding, gorge_detail_saturate(c + 0.5)) *
                                rounding_mult;
        mask = gorge_detail_pow_inv(mask, params.detail) *
               gorge_detail_ease_out(gorge_detail_smooth_start(abs(sn) * params.onset.y,
                                                               octave_rounding * params.onset.y));
        ridge_fade = gorge_detail_mix(ridge_fade, c, ridge_mask);
        ridge_mask = ridge_mask * gorge_detail_ease_out(abs(sn) * params.onset.w);

        s *= params.gain;
        freq *= params.lacunarity;
        rounding_mult *= params.rounding.w;
    }

    return gorge_erosion_result(result.x - height_and_slope.x, result.yz - height_and_slope.yz, magnitude,
                                ridge_fade * (1.0 - ridge_mask), fade);
}

// ---- Fade target and height offset (erosion_filter.hpp) -----------------------------------------

// -1 at valley_altitude and below, +1 at peak_altitude and above, linear between.
float gorge_fade_target_from_altitude(float height, float valley_altitude, float peak_altitude) {
    return clamp(2.0 * (height - valley_altitude) / (peak_altitude - valley_altitude) - 1.0, -1.0, 1.0);
}

// eroded = h + height_delta + mix(o, -clamp(fade_target), k) * magnitude, offset = (o, k).
float gorge_apply_height_offset(float height, gorge_erosion_result r, float fade_target, vec2 offset) {
    float f0 = clamp(fade_target, -1.0, 1.0);
    return height + r.height_delta + gorge_detail_mix(offset.x, -f0, offset.y) * r.magnitude;
}

// ---- Demo pipeline (demo_pipeline.hpp) ----------------------------------------------------------

const float gorge_demo_height_amplitude = 0.125;  // fBm output scale
const float gorge_demo_fade_range = 0.6;          // |fBm| / amplitude at which the fade target is +-1
const float gorge_demo_base_height = 0.5;         // terrain height = base_height + 0.5 * fBm
const float gorge_demo_height_offset_o = -0.65;   // height offset o of gorge_apply_height_offset
const float gorge_demo_height_offset_k = 0.0;     // height offset k of gorge_apply_height_offset

struct gorge_demo_sample {
    float height;        // eroded height, around 0.4..0.6
    float ridge_map;     // filter ridge map, -1 creases .. +1 ridges
    float input_height;  // height before erosion
};

// The published demo pipeline at p: fBm height, fade target, erosion filter, height offset.
gorge_demo_sample gorge_demo_pipeline(vec2 p, gorge_erosion_params params, uint seed) {
    vec3 n = gorge_fbm(p, gorge_fbm_params_default(), seed) * gorge_demo_height_amplitude;
    float fade_target = clamp(n.x / (gorge_demo_height_amplitude * gorge_demo_fade_range), -1.0, 1.0);
    vec3 terrain = vec3(gorge_demo_base_height + 0.5 * n.x, 0.5 * n.y, 0.5 * n.z);
    gorge_erosion_result r = gorge_erosion_filter(p, terrain, fade_target, params, seed);
    float height = gorge_apply_height_offset(terrain.x, r, fade_target,
                                             vec2(gorge_demo_height_offset_o, gorge_demo_height_offset_k));
    return gorge_demo_sample(height, r.ridge_map, terrain.x);
}

// The demo pipeline with the published default erosion parameters.
gorge_demo_sample gorge_demo_pipeline(vec2 p, uint seed) {
    return gorge_demo_pipeline(p, gorge_erosion_params_default(), seed);
}

#endif  // GORGE_GLSL
