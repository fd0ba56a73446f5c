// Evaluates gorge.wgsl on rows packed by wgsl_rows.cpp, one invocation per row; the WGSL twin of
// tests/glsl/parity.comp (same row layout and kinds). run_parity.mjs prepends gorge.wgsl, as a
// user's shader would, and chooses the hash policy as a user would: it replaces every "$HASH(" by
// "(" (pcg3d), by "_shadertoy(" (the named variants) or by "_with(gorge_hash_<hash>, " (the
// run-time choice, for prime_mix and prime_xor, which have no named variants), and $LATTICE by
// gorge_<hash>_lattice2, before compiling, so the module is built once per hash.
//
// Row layout (32 words, floats as their bits): word 0 is the kind of row, the rest its inputs;
// each row writes up to 8 floats of output. Keep in sync with wgsl_rows.cpp.

const row_words: u32 = 32u;
const out_words: u32 = 8u;
const kind_hash: u32 = 0u;      // cx, cy (int bits), seed                -> x, y
const kind_fbm: u32 = 1u;       // px, py, freq, octaves (int), lac, gain, seed  -> value, dx, dy
const kind_phacelle: u32 = 2u;  // qx, qy, dirx, diry, cell_freq, phase_offset, normalization, seed
                                //                                        -> c, s, sidex, sidey
const kind_filter: u32 = 3u;    // 19 parameter words, px, py, h, hx, hy, fade, seed
                                //   -> height_delta, slope_delta, magnitude, ridge_map, fade_target
const kind_demo: u32 = 4u;      // px, py, seed                           -> height, ridge_map, input
const kind_seed: u32 = 5u;      // seed, stream                           -> derive_seed (bits)
const kind_basis: u32 = 6u;     // px, py, seed, basis            -> value, gradient, dxx, dxy, dyy
const kind_fractal: u32 = 7u;   // px, py, seed, which, basis, freq, octaves (int), lac, gain,
                                // extra1, extra2                         -> value, dx, dy
const kind_island: u32 = 8u;    // px, py, seed, shape, basis             -> height (3), moisture (3)
const kind_profile: u32 = 9u;   // e, exponent, steps, ramp               -> power (2), terrace (2)
const kind_distance: u32 = 10u; // nx, ny                                 -> radial (3), square bump (3)
const kind_combine: u32 = 11u;  // px, py, seed                           -> transform (3), product (3)
const kind_noise: u32 = 12u;    // px, py, seed, basis                    -> value, dx, dy

@group(0) @binding(0) var<storage, read> rows: array<u32>;
@group(0) @binding(1) var<storage, read_write> results: array<u32>;  // float bits
@group(0) @binding(2) var<uniform> row_count: vec4u;                 // x: number of rows

fn f(base: u32, i: u32) -> f32 { return bitcast<f32>(rows[base + i]); }
fn put(o: u32, v: f32) { results[o] = bitcast<u32>(v); }
fn put3(o: u32, v: vec3f) {
    put(o, v.x);
    put(o + 1u, v.y);
    put(o + 2u, v.z);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
    let r = id.x;
    if (r >= row_count.x) {
        return;
    }
    let b = r * row_words;
    let o = r * out_words;
    let kind = rows[b];
    if (kind == kind_hash) {
        let h = $LATTICE(vec2u(rows[b + 1u], rows[b + 2u]), rows[b + 3u]);
        put(o, h.x);
        put(o + 1u, h.y);
    } else if (kind == kind_fbm) {
        let fp = gorge_fbm_params(f(b, 3u), i32(rows[b + 4u]), f(b, 5u), f(b, 6u));
        put3(o, gorge_fbm$HASH(vec2f(f(b, 1u), f(b, 2u)), fp, rows[b + 7u]));
    } else if (kind == kind_phacelle) {
        let ph = gorge_phacelle$HASH(vec2f(f(b, 1u), f(b, 2u)), vec2f(f(b, 3u), f(b, 4u)), f(b, 5u), f(b, 6u),
                                     f(b, 7u), rows[b + 8u]);
        put(o, ph.phase.x);
        put(o + 1u, ph.phase.y);
        put(o + 2u, ph.side.x);
        put(o + 3u, ph.side.y);
    } else if (kind == kind_filter) {
        let ep = gorge_erosion_params(
            f(b, 1u), f(b, 2u), f(b, 3u), f(b, 4u), vec4f(f(b, 5u), f(b, 6u), f(b, 7u), f(b, 8u)),
            vec4f(f(b, 9u), f(b, 10u), f(b, 11u), f(b, 12u)), vec2f(f(b, 13u), f(b, 14u)), i32(rows[b + 15u]),
            f(b, 16u), f(b, 17u), f(b, 18u), f(b, 19u));
        let e = gorge_erosion_filter$HASH(vec2f(f(b, 20u), f(b, 21u)), vec3f(f(b, 22u), f(b, 23u), f(b, 24u)),
                                          f(b, 25u), ep, rows[b + 26u]);
        put(o, e.height_delta);
        put(o + 1u, e.slope_delta.x);
        put(o + 2u, e.slope_delta.y);
        put(o + 3u, e.magnitude);
        put(o + 4u, e.ridge_map);
        put(o + 5u, e.fade_target);
    } else if (kind == kind_demo) {
        let s = gorge_demo_pipeline_defaults$HASH(vec2f(f(b, 1u), f(b, 2u)), rows[b + 3u]);
        put(o, s.height);
        put(o + 1u, s.ridge_map);
        put(o + 2u, s.input_height);
    } else if (kind == kind_seed) {
        results[o] = gorge_derive_seed(rows[b + 1u], rows[b + 2u]);
    } else if (kind == kind_basis) {
        let n = gorge_basis_eval_d2$HASH(i32(rows[b + 4u]), vec2f(f(b, 1u), f(b, 2u)), rows[b + 3u]);
        put(o, n.value);
        put(o + 1u, n.gradient.x);
        put(o + 2u, n.gradient.y);
        put(o + 3u, n.dxx);
        put(o + 4u, n.dxy);
        put(o + 5u, n.dyy);
    } else if (kind == kind_fractal) {
        let p = vec2f(f(b, 1u), f(b, 2u));
        let seed = rows[b + 3u];
        let which = rows[b + 4u];
        let basis = i32(rows[b + 5u]);
        let octaves = i32(rows[b + 7u]);
        var v: vec3f;
        if (which == 0u) {
            v = gorge_fractal_sum$HASH(p, gorge_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u)), basis, seed);
        } else if (which == 1u) {
            v = gorge_billow$HASH(p, gorge_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u)), basis, seed);
        } else if (which == 2u) {
            v = gorge_ridged$HASH(p, gorge_ridged_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u), f(b, 10u), f(b, 11u)),
                                  basis, seed);
        } else {
            v = gorge_damped_fbm$HASH(p, gorge_damped_fbm_params(f(b, 6u), octaves, f(b, 8u), f(b, 9u), f(b, 10u)),
                                      basis, seed);
        }
        put3(o, v);
    } else if (kind == kind_island) {
        var ip = gorge_island_params_default();
        ip.falloff.shape = i32(rows[b + 4u]);
        let p = vec2f(f(b, 1u), f(b, 2u));
        put3(o, gorge_island_height$HASH(p, ip, i32(rows[b + 5u]), rows[b + 3u]));
        put3(o + 3u, gorge_island_moisture$HASH(p, ip, i32(rows[b + 5u]), rows[b + 3u]));
    } else if (kind == kind_profile) {
        let pw = gorge_power_profile(f(b, 1u), f(b, 2u));
        let te = gorge_terrace_profile(f(b, 1u), f(b, 3u), f(b, 4u));
        put(o, pw.x);
        put(o + 1u, pw.y);
        put(o + 2u, te.x);
        put(o + 3u, te.y);
    } else if (kind == kind_distance) {
        let n = vec2f(f(b, 1u), f(b, 2u));
        put3(o, gorge_radial_distance(n));
        put3(o + 3u, gorge_square_bump_distance(n));
    } else if (kind == kind_combine) {
        // Keep the matrix and shift in sync with wgsl_rows.cpp.
        let m = mat2x2f(0.8, 0.6, -0.6, 0.8) * 1.5;  // columns: a rotation scaled by 1.5
        let t = vec2f(0.25, -1.5);
        let p = vec2f(f(b, 1u), f(b, 2u));
        let seed = rows[b + 3u];
        put3(o, gorge_transform_gradient(m, gorge_gradient_noise$HASH(gorge_transform_point(m, t, p), seed)));
        put3(o + 3u, gorge_product(gorge_gradient_noise$HASH(p, seed), gorge_value_noise$HASH(p, seed)));
    } else if (kind == kind_noise) {
        put3(o, gorge_basis_eval$HASH(i32(rows[b + 4u]), vec2f(f(b, 1u), f(b, 2u)), rows[b + 3u]));
    }
}
