#version 450
// Evaluates gorge.glsl on rows packed by test_glsl_parity.cpp, one invocation per row. The hash
// policy is chosen at build time (GORGE_HASH on the glslangValidator command line), exactly as a
// user's shader would choose it, so the test builds this shader once per hash.
//
// Row layout (32 words, floats as their bits): word 0 is the kind of row, the rest its inputs;
// each row writes up to 8 floats of output. Keep in sync with test_glsl_parity.cpp.
#extension GL_GOOGLE_include_directive : require
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

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Rows { uint rows[]; };
layout(std430, binding = 1) writeonly buffer Results { float results[]; };
layout(push_constant) uniform Push { uint row_count; };

float f(uint base, uint i) { return uintBitsToFloat(rows[base + i]); }

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= row_count) return;
    uint b = r * row_words;
    uint o = r * out_words;
    uint kind = rows[b];
    if (kind == kind_hash) {
        vec2 h = GORGE_HASH(uvec2(rows[b + 1u], rows[b + 2u]), rows[b + 3u]);
        results[o] = h.x;
        results[o + 1u] = h.y;
    } else if (kind == kind_fbm) {
        gorge_fbm_params fp = gorge_fbm_params(f(b, 3u), int(rows[b + 4u]), f(b, 5u), f(b, 6u));
        vec3 n = gorge_fbm(vec2(f(b, 1u), f(b, 2u)), fp, rows[b + 7u]);
        results[o] = n.x;
        results[o + 1u] = n.y;
        results[o + 2u] = n.z;
    } else if (kind == kind_phacelle) {
        gorge_phacelle_result ph = gorge_phacelle(vec2(f(b, 1u), f(b, 2u)), vec2(f(b, 3u), f(b, 4u)), f(b, 5u),
                                                  f(b, 6u), f(b, 7u), rows[b + 8u]);
        results[o] = ph.phase.x;
        results[o + 1u] = ph.phase.y;
        results[o + 2u] = ph.side.x;
        results[o + 3u] = ph.side.y;
    } else if (kind == kind_filter) {
        gorge_erosion_params ep = gorge_erosion_params(
            f(b, 1u), f(b, 2u), f(b, 3u), f(b, 4u), vec4(f(b, 5u), f(b, 6u), f(b, 7u), f(b, 8u)),
            vec4(f(b, 9u), f(b, 10u), f(b, 11u), f(b, 12u)), vec2(f(b, 13u), f(b, 14u)), int(rows[b + 15u]),
            f(b, 16u), f(b, 17u), f(b, 18u), f(b, 19u));
        gorge_erosion_result e = gorge_erosion_filter(vec2(f(b, 20u), f(b, 21u)), vec3(f(b, 22u), f(b, 23u), f(b, 24u)),
                                                      f(b, 25u), ep, rows[b + 26u]);
        results[o] = e.height_delta;
        results[o + 1u] = e.slope_delta.x;
        results[o + 2u] = e.slope_delta.y;
        results[o + 3u] = e.magnitude;
        results[o + 4u] = e.ridge_map;
        results[o + 5u] = e.fade_target;
    } else if (kind == kind_demo) {
        gorge_demo_sample s = gorge_demo_pipeline(vec2(f(b, 1u), f(b, 2u)), rows[b + 3u]);
        results[o] = s.height;
        results[o + 1u] = s.ridge_map;
        results[o + 2u] = s.input_height;
    }
}
