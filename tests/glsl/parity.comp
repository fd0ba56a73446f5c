#version 450
// Evaluates gorge.glsl on rows packed by test_glsl_parity.cpp, one invocation per row. The hash
// policy is chosen at build time (GORGE_HASH on the glslangValidator command line), exactly as a
// user's shader would choose it, so the test builds this shader once per hash.
//
// Row layout (32 words, floats as their bits): word 0 is the kind of row, the rest its inputs;
// each row writes up to 8 floats of output. Keep in sync with test_glsl_parity.cpp.
// With PARITY_SUBGROUPS defined, gorge.glsl's GORGE_SUBGROUPS is on (Phacelle windows shared in a
// subgroup where its invocations share one: the demo tile's neighbouring samples).
#extension GL_GOOGLE_include_directive : require
#ifdef PARITY_SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define GORGE_SUBGROUPS
#endif
#include "gorge.glsl"

const uint row_words = 32u;
const uint out_words = 8u;
const uint kind_hash = 0u;      // cx, cy (int bits), seed                -> x, y
const uint kind_fbm = 1u;       // px, py, freq, octaves (int), lac, gain, seed  -> value, dx, dy
const uint kind_phacelle = 2u;  // qx, qy, dirx, diry, cell_freq, phase_offset, normalization, seed
                                //                                        -> c, s, sidex, sidey
const uint kind_filter = 3u;    // 19 parameter words, px, py, h, hx, hy, fade, seed
                                //   -> height_delta, slope_delta, magnitude, ridge_map, fade_target
const uint kind_demo = 4u;      // px, py, seed                           -> height, ridge_map, input
const uint kind_seed = 5u;      // seed, stream                           -> derive_seed (bits)
const uint kind_basis = 6u;     // px, py, seed, basis            -> value, gradient, dxx, dxy, dyy
const uint kind_fractal = 7u;   // px, py, seed, which, basis, freq, octaves (int), lac, gain,
                                // extra1, extra2                         -> value, dx, dy
const uint kind_island = 8u;    // px, py, seed, shape, basis             -> height (3), moisture (3)
const uint kind_profile = 9u;   // e, exponent, steps, ramp               -> power (2), terrace (2)
const uint kind_distance = 10u; // nx, ny                                 -> radial (3), square bump (3)
const uint kind_combine = 11u;  // px, py, seed                           -> transform (3), product (3)
const uint kind_noise = 12u;    // px, py, seed, basis                    -> value, dx, dy

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Rows { uint rows[]; };
layout(std430, binding = 1) writeonly buffer Results { uint results[]; };  // float bits
layout(push_constant) uniform Push { uint row_count; };

float f(uint base, uint i) { return uintBitsToFloat(rows[base + i]); }
void put(uint o, float v) { results[o] = floatBitsToUint(v); }
void put3(uint o, vec3 v) {
    put(o, v.x);
    put(o + 1u, v.y);
    put(o + 2u, v.z);
}

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= row_count) return;
    uint b = r * row_words;
    uint o = r * out_words;
    uint kind = rows[b];
    if (kind == kind_hash) {
        vec2 h = GORGE_HASH(uvec2(rows[b + 1u], rows[b + 2u]), rows[b + 3u]);
        put(o, h.x);
        put(o + 1u, h.y);
    } else if (kind == kind_fbm) {
        gorge_fbm_params fp = gorge_fbm_params(f(b, 3u), int(rows[b + 4u]), f(b, 5u), f(b, 6u));
        vec3 n = gorge_fbm(vec2(f(b, 1u), f(b, 2u)), fp, rows[b + 7u]);
        put(o, n.x);
        put(o + 1u, n.y);
        put(o + 2u, n.z);
    } else if (kind == kind_phacelle) {
        gorge_phacelle_result ph = gorge_phacelle(vec2(f(b, 1u), f(b, 2u)), vec2(f(b, 3u), f(b, 4u)), f(b, 5u),
                                                  f(b, 6u), f(b, 7u), rows[b + 8u]);
        put(o, ph.phase.x);
        put(o + 1u, ph.phase.y);
        put(o + 2u, ph.side.x);
        put(o + 3u, ph.side.y);
    } else if (kind == kind_filter) {
        gorge_erosion_params ep = gorge_erosion_params(
            f(b, 1u), f(b, 2u), f(b, 3u), f(b, 4u), vec4(f(b, 5u), f(b, 6u), f(b, 7u), f(b, 8u)),
            vec4(f(b, 9u), f(b, 10u), f(b, 11u), f(b, 12u)), vec2(f(b, 13u), f(b, 14u)), int(rows[b + 15u]),
            f(b, 16u), f(b, 17u), f(b, 18u), f(b, 19u));
        gorge_erosion_result e = gorge_erosion_filter(vec2(f(b, 20u), f(b, 21u)), vec3(f(b, 22u), f(b, 23u), f(b, 24u)),
                                                      f(b, 25u), ep, rows[b + 26u]);
        put(o, e.height_delta);
        put(o + 1u, e.slope_delta.x);
        put(o + 2u, e.slope_delta.y);
        put(o + 3u, e.magnitude);
        put(o + 4u, e.ridge_map);
        put(o + 5u, e.fade_target);
    } else if (kind == kind_demo) {
        gorge_demo_sample s = gorge_demo_pipeline(vec2(f(b, 1u), f(b, 2u)), rows[b + 3u]);
        put(o, s.height);
        put(o + 1u, s.ridge_map);
        put(o + 2u, s.input_height);
    } else if (kind == kind_seed) {
        results[o] = gorge_derive_seed(rows[b + 1u], rows[b + 2u]);
    } else if (kind == kind_basis) {
        gorge_noise_d2 n = gorge_basis_eval_d2(int(rows[b + 4u]), vec2(f(b, 1u), f(b, 2u)), rows[b + 3u]);
        put(o, n.value);
        put(o + 1u, n.gradient.x);
        put(o + 2u, n.gradient.y);
        put(o + 3u, n.dxx);
        put(o + 4u, n.dxy);
        put(o + 5u, n.dyy);
    } else if (kind == kind_fractal) {
        vec2 p = vec2(f(b, 1u), f(b, 2u));
        uint seed = rows[b + 3u];
        uint which = rows[b + 4u];
        int basis = int(rows[b + 5u]);
        int octaves = int(rows[b + 7u]);
        vec3 v;
        if (which == 0u) {
            v = gorge_fractal_sum(p, gorge_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u)), basis, seed);
        } else if (which == 1u) {
            v = gorge_billow(p, gorge_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u)), basis, seed);
        } else if (which == 2u) {
            v = gorge_ridged(p, gorge_ridged_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u), f(b, 10u), f(b, 11u)), basis,
                             seed);
        } else {
            v = gorge_damped_fbm(p, gorge_damped_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u), f(b, 10u)), basis, seed);
        }
        put3(o, v);
    } else if (kind == kind_island) {
        gorge_island_params ip = gorge_island_params_default();
        ip.falloff.shape = int(rows[b + 4u]);
        vec2 p = vec2(f(b, 1u), f(b, 2u));
        put3(o, gorge_island_height(p, ip, int(rows[b + 5u]), rows[b + 3u]));
        put3(o + 3u, gorge_island_moisture(p, ip, int(rows[b + 5u]), rows[b + 3u]));
    } else if (kind == kind_profile) {
        vec2 pw = gorge_power_profile(f(b, 1u), f(b, 2u));
        vec2 te = gorge_terrace_profile(f(b, 1u), f(b, 3u), f(b, 4u));
        put(o, pw.x);
        put(o + 1u, pw.y);
        put(o + 2u, te.x);
        put(o + 3u, te.y);
    } else if (kind == kind_distance) {
        vec2 n = vec2(f(b, 1u), f(b, 2u));
        put3(o, gorge_radial_distance(n));
        put3(o + 3u, gorge_square_bump_distance(n));
    } else if (kind == kind_combine) {
        // Keep the matrix and shift in sync with test_glsl_parity.cpp.
        mat2 m = mat2(0.8, 0.6, -0.6, 0.8) * 1.5;  // columns: a rotation scaled by 1.5
        vec2 t = vec2(0.25, -1.5);
        vec2 p = vec2(f(b, 1u), f(b, 2u));
        uint seed = rows[b + 3u];
        put3(o, gorge_transform_gradient(m, gorge_gradient_noise(gorge_transform_point(m, t, p), seed)));
        put3(o + 3u, gorge_product(gorge_gradient_noise(p, seed), gorge_value_noise(p, seed)));
    } else if (kind == kind_noise) {
        put3(o, gorge_basis_eval(int(rows[b + 4u]), vec2(f(b, 1u), f(b, 2u)), rows[b + 3u]));
    }
}
