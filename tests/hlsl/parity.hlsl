// Evaluates gorge.hlsl on rows packed by tests/glsl/test_glsl_parity.cpp, one invocation per row:
// the HLSL twin of tests/glsl/parity.comp, with the same row layout, kinds and outputs. The hash
// policy is chosen at build time (GORGE_HASH on the glslangValidator command line), exactly as a
// user's shader would choose it, so the test builds this shader once per hash.
//
// Compiled by glslang's HLSL front end for Vulkan: glslangValidator -D -V -S comp -e main. The
// [[vk::...]] attributes place the buffers and push constants where the harness binds them
// (DXC's -spirv reads them too).
//
// Row layout (32 words, floats as their bits): word 0 is the kind of row, the rest its inputs;
// each row writes up to 8 floats of output. Keep in sync with test_glsl_parity.cpp.
// With PARITY_SUBGROUPS defined, gorge.hlsl's GORGE_SUBGROUPS is on (wave intrinsics; see
// tests/glsl/parity.comp).
#ifdef PARITY_SUBGROUPS
#define GORGE_SUBGROUPS
#endif
#include "gorge.hlsl"

static const uint row_words = 32u;
static const uint out_words = 8u;
static const uint kind_hash = 0u;      // cx, cy (int bits), seed                -> x, y
static const uint kind_fbm = 1u;       // px, py, freq, octaves (int), lac, gain, seed  -> value, dx, dy
static const uint kind_phacelle = 2u;  // qx, qy, dirx, diry, cell_freq, phase_offset, normalization, seed
                                       //                                        -> c, s, sidex, sidey
static const uint kind_filter = 3u;    // 19 parameter words, px, py, h, hx, hy, fade, seed
                                       //   -> height_delta, slope_delta, magnitude, ridge_map, fade_target
static const uint kind_demo = 4u;      // px, py, seed                           -> height, ridge_map, input
static const uint kind_seed = 5u;      // seed, stream                           -> derive_seed (bits)
static const uint kind_basis = 6u;     // px, py, seed, basis            -> value, gradient, dxx, dxy, dyy
static const uint kind_fractal = 7u;   // px, py, seed, which, basis, freq, octaves (int), lac, gain,
                                       // extra1, extra2                         -> value, dx, dy
static const uint kind_island = 8u;    // px, py, seed, shape, basis             -> height (3), moisture (3)
static const uint kind_profile = 9u;   // e, exponent, steps, ramp               -> power (2), terrace (2)
static const uint kind_distance = 10u; // nx, ny                                 -> radial (3), square bump (3)
static const uint kind_combine = 11u;  // px, py, seed                           -> transform (3), product (3)
static const uint kind_noise = 12u;    // px, py, seed, basis                    -> value, dx, dy

[[vk::binding(0)]] StructuredBuffer<uint> rows;
[[vk::binding(1)]] RWStructuredBuffer<uint> results;  // float bits
struct push_block {
    uint row_count;
};
[[vk::push_constant]] ConstantBuffer<push_block> push;

float arg(uint base, uint i) { return asfloat(rows[base + i]); }
void put(uint o, float v) { results[o] = asuint(v); }
void put3(uint o, float3 v) {
    put(o, v.x);
    put(o + 1u, v.y);
    put(o + 2u, v.z);
}

gorge_fbm_params fbm_params(float frequency, int octaves, float lacunarity, float gain) {
    gorge_fbm_params p;
    p.frequency = frequency;
    p.octaves = octaves;
    p.lacunarity = lacunarity;
    p.gain = gain;
    return p;
}

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint r = id.x;
    if (r >= push.row_count) return;
    uint b = r * row_words;
    uint o = r * out_words;
    uint kind = rows[b];
    if (kind == kind_hash) {
        float2 h = GORGE_HASH(uint2(rows[b + 1u], rows[b + 2u]), rows[b + 3u]);
        put(o, h.x);
        put(o + 1u, h.y);
    } else if (kind == kind_fbm) {
        gorge_fbm_params fp = fbm_params(arg(b, 3u), int(rows[b + 4u]), arg(b, 5u), arg(b, 6u));
        float3 n = gorge_fbm(float2(arg(b, 1u), arg(b, 2u)), fp, rows[b + 7u]);
        put(o, n.x);
        put(o + 1u, n.y);
        put(o + 2u, n.z);
    } else if (kind == kind_phacelle) {
        gorge_phacelle_result ph = gorge_phacelle(float2(arg(b, 1u), arg(b, 2u)), float2(arg(b, 3u), arg(b, 4u)),
                                                  arg(b, 5u), arg(b, 6u), arg(b, 7u), rows[b + 8u]);
        put(o, ph.phase.x);
        put(o + 1u, ph.phase.y);
        put(o + 2u, ph.side.x);
        put(o + 3u, ph.side.y);
    } else if (kind == kind_filter) {
        gorge_erosion_params ep;
        ep.scale = arg(b, 1u);
        ep.strength = arg(b, 2u);
        ep.gully_weight = arg(b, 3u);
        ep.detail = arg(b, 4u);
        ep.rounding = float4(arg(b, 5u), arg(b, 6u), arg(b, 7u), arg(b, 8u));
        ep.onset = float4(arg(b, 9u), arg(b, 10u), arg(b, 11u), arg(b, 12u));
        ep.assumed_slope = float2(arg(b, 13u), arg(b, 14u));
        ep.octaves = int(rows[b + 15u]);
        ep.lacunarity = arg(b, 16u);
        ep.gain = arg(b, 17u);
        ep.cell_scale = arg(b, 18u);
        ep.normalization = arg(b, 19u);
        gorge_erosion_result e = gorge_erosion_filter(float2(arg(b, 20u), arg(b, 21u)),
                                                      float3(arg(b, 22u), arg(b, 23u), arg(b, 24u)), arg(b, 25u), ep,
                                                      rows[b + 26u]);
        put(o, e.height_delta);
        put(o + 1u, e.slope_delta.x);
        put(o + 2u, e.slope_delta.y);
        put(o + 3u, e.magnitude);
        put(o + 4u, e.ridge_map);
        put(o + 5u, e.fade_target);
    } else if (kind == kind_demo) {
        gorge_demo_sample s = gorge_demo_pipeline(float2(arg(b, 1u), arg(b, 2u)), rows[b + 3u]);
        put(o, s.height);
        put(o + 1u, s.ridge_map);
        put(o + 2u, s.input_height);
    } else if (kind == kind_seed) {
        results[o] = gorge_derive_seed(rows[b + 1u], rows[b + 2u]);
    } else if (kind == kind_basis) {
        gorge_noise_d2 n = gorge_basis_eval_d2(int(rows[b + 4u]), float2(arg(b, 1u), arg(b, 2u)), rows[b + 3u]);
        put(o, n.value);
        put(o + 1u, n.gradient.x);
        put(o + 2u, n.gradient.y);
        put(o + 3u, n.dxx);
        put(o + 4u, n.dxy);
        put(o + 5u, n.dyy);
    } else if (kind == kind_fractal) {
        float2 p = float2(arg(b, 1u), arg(b, 2u));
        uint seed = rows[b + 3u];
        uint which = rows[b + 4u];
        int basis = int(rows[b + 5u]);
        int octaves = int(rows[b + 7u]);
        float3 v;
        if (which == 0u) {
            v = gorge_fractal_sum(p, fbm_params(arg(b, 6u), octaves, arg(b, 8u), arg(b, 9u)), basis, seed);
        } else if (which == 1u) {
            v = gorge_billow(p, fbm_params(arg(b, 6u), octaves, arg(b, 8u), arg(b, 9u)), basis, seed);
        } else if (which == 2u) {
            gorge_ridged_params rp;
            rp.frequency = arg(b, 6u);
            rp.octaves = octaves;
            rp.lacunarity = arg(b, 8u);
            rp.gain = arg(b, 9u);
            rp.offset = arg(b, 10u);
            rp.feedback = arg(b, 11u);
            v = gorge_ridged(p, rp, basis, seed);
        } else {
            gorge_damped_fbm_params dp;
            dp.frequency = arg(b, 6u);
            dp.octaves = octaves;
            dp.lacunarity = arg(b, 8u);
            dp.gain = arg(b, 9u);
            dp.damping = arg(b, 10u);
            v = gorge_damped_fbm(p, dp, basis, seed);
        }
        put3(o, v);
    } else if (kind == kind_island) {
        gorge_island_params ip = gorge_island_params_default();
        ip.falloff.shape = int(rows[b + 4u]);
        float2 p = float2(arg(b, 1u), arg(b, 2u));
        put3(o, gorge_island_height(p, ip, int(rows[b + 5u]), rows[b + 3u]));
        put3(o + 3u, gorge_island_moisture(p, ip, int(rows[b + 5u]), rows[b + 3u]));
    } else if (kind == kind_profile) {
        float2 pw = gorge_power_profile(arg(b, 1u), arg(b, 2u));
        float2 te = gorge_terrace_profile(arg(b, 1u), arg(b, 3u), arg(b, 4u));
        put(o, pw.x);
        put(o + 1u, pw.y);
        put(o + 2u, te.x);
        put(o + 3u, te.y);
    } else if (kind == kind_distance) {
        float2 n = float2(arg(b, 1u), arg(b, 2u));
        put3(o, gorge_radial_distance(n));
        put3(o + 3u, gorge_square_bump_distance(n));
    } else if (kind == kind_combine) {
        // Keep the matrix and shift in sync with test_glsl_parity.cpp (and parity.comp, whose mat2
        // takes the same matrix column by column).
        float2x2 m = float2x2(0.8, -0.6, 0.6, 0.8) * 1.5;  // rows: a rotation scaled by 1.5
        float2 t = float2(0.25, -1.5);
        float2 p = float2(arg(b, 1u), arg(b, 2u));
        uint seed = rows[b + 3u];
        put3(o, gorge_transform_gradient(m, gorge_gradient_noise(gorge_transform_point(m, t, p), seed)));
        put3(o + 3u, gorge_product(gorge_gradient_noise(p, seed), gorge_value_noise(p, seed)));
    } else if (kind == kind_noise) {
        put3(o, gorge_basis_eval(int(rows[b + 4u]), float2(arg(b, 1u), arg(b, 2u)), rows[b + 3u]));
    }
}
