// gorge/wgsl/gorge.wgsl - the companion WGSL (WebGPU) source: gorge's hashes, gradient noise,
// Phacelle noise, erosion filter, demo pipeline and noise fields for WebGPU shaders.
//
// It is the GLSL include (gorge/glsl/gorge.glsl) hand-written in WGSL: the same sections in the
// same order, the same constants and the same names wherever WGSL allows them, so the C++ headers,
// gorge.glsl and this file can be read side by side:
//   hash.hpp            -> "Hashes"
//   noise.hpp           -> "Gradient noise and fBm"
//   phacelle.hpp        -> "Phacelle noise"
//   erosion_filter.hpp  -> "Erosion filter", "Fade target and height offset"
//   demo_pipeline.hpp   -> "Demo pipeline"
//   and, after those, the noise fields: noise.hpp (seeds, second derivatives), value_noise.hpp,
//   simplex.hpp, perlin_noise.hpp, fractal.hpp, field.hpp, island.hpp (see the "Noise fields"
//   banner)
// See those headers for the techniques, their authors and the guarantees; the comments here only
// note what differs on a GPU and in WGSL.
//
// Usage. WGSL has no preprocessor and no includes: prepend this file to your shader's source
// (module-scope declarations may come in any order, so your entry points can come after it):
//     const code = gorgeWgsl + "\n" + myShader;  // e.g. fetched from gorge/wgsl/gorge.wgsl
//     device.createShaderModule({ code });
// It needs no enable directive and no optional feature; it works in every shader stage. Public
// names start with `gorge_`, private helpers with `gorge_detail_`; do not declare such names
// yourself. Types are f32, i32, u32 and their vectors (vec2f is vec2<f32>, vec2u is vec2<u32>).
//
// Hash policy: chosen by function name. The C++ kernels take the hash as a template parameter and
// gorge.glsl takes it from the GORGE_HASH macro; WGSL has neither, nor overloading, so every
// function that hashes lattice points exists three ways:
//     gorge_erosion_filter(...)                      pcg3d, the default (exact integer hash,
//                                                    seeds honoured), as in C++ and GLSL
//     gorge_erosion_filter_shadertoy(...)            the published shaders' float hash (seed
//                                                    ignored)
//     gorge_erosion_filter_with(hash, ...)           hash = gorge_hash_pcg3d,
//                                                    gorge_hash_prime_mix (the fast exact hash),
//                                                    gorge_hash_prime_xor (the cheapest exact
//                                                    hash) or gorge_hash_shadertoy, chosen at run
//                                                    time (for a uniform or an `override` constant)
// The functions that exist so are gorge_gradient_noise, gorge_fbm, gorge_phacelle,
// gorge_erosion_filter, gorge_demo_pipeline, gorge_demo_pipeline_defaults,
// gorge_gradient_noise_d2, gorge_value_noise_d2, gorge_value_noise, gorge_simplex_noise_d2,
// gorge_simplex_noise, gorge_basis_eval, gorge_basis_eval_d2, gorge_fractal_sum, gorge_billow,
// gorge_ridged, gorge_damped_fbm, gorge_island_height and gorge_island_moisture. Perlin noise
// (gorge_perlin_noise, gorge_perlin_noise_d2) exists two ways, plain and _with: it needs an exact
// integer hash (see "Perlin noise"). Every hash is always available by name: gorge_pcg3d_lattice2,
// gorge_prime_mix_lattice2, gorge_prime_xor_lattice2 and gorge_shadertoy_lattice2 (and the
// gorge_lattice2(hash, ...) dispatch), and so are the exact hashes' split forms (as in hash.hpp
// and gorge.glsl): gorge_<hash>_axis_x, _axis_y, _combine and _combine_bits (the 32-bit word
// perlin noise picks its gradients by) for pcg3d, prime_mix and prime_xor, with
// gorge_hash_axis_x(hash, ...), gorge_hash_axis_y, gorge_hash_combine and gorge_hash_combine_bits,
// the run-time dispatch through which gradient noise, value noise, perlin noise and Phacelle share
// the work of a lattice column and of a row among a cell's corners and the 4x4 window (bit for bit
// the same as gorge_lattice2).
//
// Other differences from gorge.glsl, all forced by WGSL:
//  - no overloading: mix has one helper per type (gorge_detail_mix, _mix2, _mix3), and GLSL's
//    gorge_demo_pipeline(p, seed) (default parameters) is gorge_demo_pipeline_defaults(p, seed);
//  - parameter structs keep their member names and order (gorge_erosion_params has scale,
//    strength, ..., normalization as in GLSL), so gorge_erosion_params(...) takes the GLSL
//    constructor's arguments; gorge_*_params_default() give the C++ defaults;
//  - GLSL's `inout` is a ptr<function, T> argument (one private helper only);
//  - mat2 is mat2x2f, column-major, indexed m[column][row] as in GLSL.
//
// Agreement with the C++ float path (checked by tests/wgsl in headless Chromium on its
// SwiftShader WebGPU adapter, on every reference row, steep slopes, the noise fields and a demo
// tile; also run through Dawn on an NVIDIA H200):
//  - pcg3d, prime_mix, prime_xor and gorge_derive_seed are pure 32-bit unsigned arithmetic (u32
//    wraps in WGSL): bit-identical to C++;
//  - everything else is float arithmetic whose result depends on the device's exp/pow and on
//    whether it fuses multiply-adds; the test demands 1e-4 (as for GLSL), 1e-2 on ridge maps, and
//    the pcg3d paths stay within a few 1e-6 on both devices above (gradients of high-frequency
//    fractals excepted: up to 1.4e-3 on the H200, within the test's frequency-scaled bound, as in
//    GLSL). sin and cos are computed here (gorge_detail_cos_sin; see gorge_accurate_trig), as
//    WGSL's builtins may be off by 2e-4; the H200's builtins pass the test too.
//  - The shadertoy hash is float arithmetic that depends on every rounding (fract of a large
//    product), and WGSL has no `precise` qualifier: a driver that contracts multiply-adds changes
//    its lattice values by up to ~1e-2. SwiftShader does not (the test holds it to 1e-4); an
//    NVIDIA H200 through Dawn and Vulkan does, so there the shadertoy variants agree with the C++
//    shadertoy path only statistically. Use pcg3d (the default) where GPU and CPU must agree.
//
// Seeds are u32 everywhere: pass 7u (an abstract 7 converts too, but an i32 variable does not).
//
// Limits. Parameters are not validated on the GPU: validate them on the CPU with
// gorge::erosion_params<float>::validate() before uploading; parameters it accepts give finite
// results for finite inputs (the same overflow guards as the C++ kernels). Far from the origin
// float loses the fractional bits of the position exactly as the C++ float path does. Lattice
// coordinates go from f32 to i32 by WGSL's saturating conversion (as C++'s to_int) and from i32
// to u32 by reinterpreting the bits (WGSL's u32(i32)), so neighbour offsets wrap as in C++.
//
// SPDX-License-Identifier: MPL-2.0

// ---- Maths helpers (detail/math.hpp) ------------------------------------------------------------
// WGSL's floor, fract, clamp, sign, exp, pow, dot and length have the C++ semantics; sin and cos
// are gorge's own (gorge_detail_cos_sin below), as WGSL's may be far less accurate.
// mix is redefined to the C++ formula a + (b - a) t (WGSL specifies a (1 - t) + b t, which rounds
// differently).

fn gorge_detail_mix(a: f32, b: f32, t: f32) -> f32 { return a + (b - a) * t; }
fn gorge_detail_mix2(a: vec2f, b: vec2f, t: f32) -> vec2f { return a + (b - a) * t; }
fn gorge_detail_mix3(a: vec3f, b: vec3f, t: f32) -> vec3f { return a + (b - a) * t; }

// clamp(x, 0, 1).
fn gorge_detail_saturate(x: f32) -> f32 { return clamp(x, 0.0, 1.0); }

// Rotates by +90 degrees: perp((x, y)) = (-y, x).
fn gorge_detail_perp(v: vec2f) -> vec2f { return vec2f(-v.y, v.x); }

// Smallest length that safe_normalize divides by; shorter vectors are returned unchanged.
const gorge_detail_safe_normalize_min_length: f32 = 1e-10;

fn gorge_detail_safe_normalize(v: vec2f) -> vec2f {
    let len = length(v);
    return select(v, v / len, len > gorge_detail_safe_normalize_min_length);
}

// The largest and the smallest normal float (WGSL has no numeric limits).
const gorge_detail_float_max: f32 = 0x1.fffffep+127f;
const gorge_detail_float_min_normal: f32 = 0x1p-126f;

// |v| without overflow: length(v) where that is finite, else from v scaled by its largest component.
fn gorge_detail_overflow_free_length(v: vec2f) -> f32 {
    let plain = length(v);
    let big = max(abs(v.x), abs(v.y));
    let scaled = big * length(v * (1.0 / max(big, 1.0)));
    return min(select(scaled, plain, plain <= gorge_detail_float_max), gorge_detail_float_max);
}

// safe_normalize without overflow: v is scaled by its largest component first.
fn gorge_detail_overflow_free_normalize(v: vec2f) -> vec2f {
    let big = max(abs(v.x), abs(v.y));
    let u = v * (1.0 / max(big, gorge_detail_float_min_normal));
    let unit_len = length(u);
    return select(v, u * (1.0 / unit_len), big * unit_len > gorge_detail_safe_normalize_min_length);
}

// 1 - (1 - sat(t))^2.
fn gorge_detail_ease_out(t: f32) -> f32 {
    let u = 1.0 - gorge_detail_saturate(t);
    return 1.0 - u * u;
}

// Linear ramp t - k/2 with its corner rounded over the width k: t^2 / (2k) for t < k.
fn gorge_detail_smooth_start(t: f32, k: f32) -> f32 {
    if (t >= k) {
        return t - k * 0.5;
    }
    return t * t / (2.0 * k);
}

// 1 - (1 - sat(t))^e. WGSL leaves pow(0, e) undefined, so the base 0 is spelt out: 0 for e > 0
// (as in C++), 1 otherwise (C++ gives 1 for e = 0 and +inf for e < 0; the filter's `detail` is
// meant to be > 0).
fn gorge_detail_pow_inv(t: f32, e: f32) -> f32 {
    let b = 1.0 - gorge_detail_saturate(t);
    if (b > 0.0) {
        return 1.0 - pow(b, e);
    }
    return 1.0 - select(1.0, 0.0, e > 0.0);
}

// (cos x, sin x). WGSL requires of its builtin sin and cos only 2^-11 absolute error on [-pi, pi]
// (Chromium's SwiftShader adapter is off by 1.9e-4 there, and further outside), which Phacelle's
// phase would carry into the filter's slopes. So by default gorge computes them itself, to about
// 1e-7 absolute for |x| < 1e5 on every device: Cody-Waite reduction by pi/2 with a three-part
// constant (the first part has 8 significant bits, so k * part is exact for |k| < 2^16), Moshier's
// (Cephes) minimax polynomials for sin and cos on [-pi/4, pi/4], then the quadrant's swap and
// signs. Where the device's builtins are known to be accurate (desktop GPUs: about 1e-6), set the
// pipeline-overridable constant to false when creating the pipeline, e.g.
//     compute: { module, entryPoint: 'main', constants: { gorge_accurate_trig: 0 } }
// which makes the demo pipeline about 1.4 times as fast on an NVIDIA H200 (7.3 instead of 5.1
// G points/s through Dawn and Vulkan).
override gorge_accurate_trig: bool = true;

const gorge_detail_two_over_pi: f32 = 0.63661977236758134308;
const gorge_detail_pi_over_2_part1: f32 = 1.5703125;
const gorge_detail_pi_over_2_part2: f32 = 4.8375129699707031e-4;
const gorge_detail_pi_over_2_part3: f32 = 7.5497899548918822e-8;
const gorge_detail_sin_c3: f32 = -1.6666654611e-1;
const gorge_detail_sin_c5: f32 = 8.3321608736e-3;
const gorge_detail_sin_c7: f32 = -1.9515295891e-4;
const gorge_detail_cos_c4: f32 = 4.166664568298827e-2;
const gorge_detail_cos_c6: f32 = -1.388731625493765e-3;
const gorge_detail_cos_c8: f32 = 2.443315711809948e-5;

fn gorge_detail_cos_sin(x: f32) -> vec2f {
    if (!gorge_accurate_trig) {
        return vec2f(cos(x), sin(x));
    }
    let k = round(x * gorge_detail_two_over_pi);
    let r = ((x - k * gorge_detail_pi_over_2_part1) - k * gorge_detail_pi_over_2_part2) - k * gorge_detail_pi_over_2_part3;
    let z = r * r;
    let s = r + r * z * (gorge_detail_sin_c3 + z * (gorge_detail_sin_c5 + z * gorge_detail_sin_c7));
    let c = 1.0 - 0.5 * z + z * z * (gorge_detail_cos_c4 + z * (gorge_detail_cos_c6 + z * gorge_detail_cos_c8));
    // Quadrant k mod 4 (two's complement, so negative k too): (c, s), (-s, c), (-c, -s), (s, -c).
    let quadrant = u32(i32(k));
    let turned = select(vec2f(c, s), vec2f(-s, c), (quadrant & 1u) != 0u);
    return select(turned, -turned, (quadrant & 2u) != 0u);
}

// ---- Hashes (hash.hpp) --------------------------------------------------------------------------

// The LCG step that seeds each pcg3d lane (Numerical Recipes' 32-bit LCG constants).
const gorge_detail_pcg_lcg_multiplier: u32 = 1664525u;
const gorge_detail_pcg_lcg_increment: u32 = 1013904223u;
fn gorge_detail_pcg_lcg(v: u32) -> u32 { return v * gorge_detail_pcg_lcg_multiplier + gorge_detail_pcg_lcg_increment; }
// A hash keeps the top 24 bits of a lane, scales them by 2^-23 and shifts by 1 into [-1, 1).
const gorge_detail_hash_mantissa_shift: u32 = 8u;
const gorge_detail_hash_unit_scale: f32 = 1.0 / 8388608.0;  // 2^-23

// Jarzynski & Olano's pcg3d ("Hash Functions for GPU Rendering", JCGT 9(3), 2020): an LCG step per
// lane, then two rounds of lane mixing around a xorshift. u32 arithmetic wraps by definition.
fn gorge_detail_pcg3d_mix(v_in: vec3u) -> vec3u {
    var v = v_in;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v ^= v >> vec3u(16u);
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    return v;
}
fn gorge_pcg3d(v: vec3u) -> vec3u {
    return gorge_detail_pcg3d_mix(
        vec3u(gorge_detail_pcg_lcg(v.x), gorge_detail_pcg_lcg(v.y), gorge_detail_pcg_lcg(v.z)));
}

// Maps the top 24 bits of each lane to [-1, 1), exactly.
fn gorge_detail_unit_from_bits(bits: vec2u) -> vec2f {
    return vec2f(bits >> vec2u(gorge_detail_hash_mantissa_shift)) * gorge_detail_hash_unit_scale - 1.0;
}

// pcg3d's split form (see gorge_hash_axis_x below): the LCG step of the x lane once per lattice
// column and of the y lane once per row; the rest of pcg3d, with the seed as the third lane, once
// per lattice point.
fn gorge_pcg3d_axis_x(cx: u32, seed: u32) -> u32 { return gorge_detail_pcg_lcg(cx); }
fn gorge_pcg3d_axis_y(cy: u32, seed: u32) -> u32 { return gorge_pcg3d_axis_x(cy, seed); }
fn gorge_pcg3d_combine(ax: u32, ay: u32, seed: u32) -> vec2f {
    return gorge_detail_unit_from_bits(gorge_detail_pcg3d_mix(vec3u(ax, ay, gorge_detail_pcg_lcg(seed))).xy);
}
// pcg3d's 32-bit word of a lattice point from its split form: the first output lane (the bits of
// the x component), which perlin noise reads its table index from. Bit-identical to C++.
fn gorge_pcg3d_combine_bits(ax: u32, ay: u32, seed: u32) -> u32 {
    return gorge_detail_pcg3d_mix(vec3u(ax, ay, gorge_detail_pcg_lcg(seed))).x;
}

// pcg3d hash of the lattice point `cell` (signed coordinates reinterpreted as unsigned, so that
// neighbour offsets wrap): each component in [-1, 1) with a step of 2^-23; bit-identical to C++.
fn gorge_pcg3d_lattice2(cell: vec2u, seed: u32) -> vec2f {
    return gorge_pcg3d_combine(gorge_pcg3d_axis_x(cell.x, seed), gorge_pcg3d_axis_y(cell.y, seed), seed);
}
fn gorge_pcg3d_hash2(cell: vec2i, seed: u32) -> vec2f { return gorge_pcg3d_lattice2(vec2u(cell), seed); }

// prime_mix: the coordinates times two odd constants (the y product rotated by 16 bits), xored with
// the finalised seed, then a two-round multiply-xorshift finaliser (Wellons' lowbias32); one 32-bit
// result gives both components, 16 bits each. Bit-identical to C++; about half of pcg3d's multiplies.
const gorge_detail_prime_mix_x: u32 = 0x9E3779B1u;
const gorge_detail_prime_mix_y: u32 = 0x85EBCA77u;
const gorge_detail_prime_mix_round1: u32 = 0x7FEB352Du;
const gorge_detail_prime_mix_round2: u32 = 0x846CA68Bu;
const gorge_detail_prime_mix_shift1: u32 = 16u;
const gorge_detail_prime_mix_shift2: u32 = 15u;
const gorge_detail_prime_mix_shift3: u32 = 16u;
const gorge_detail_prime_mix_half_bits: u32 = 16u;
const gorge_detail_prime_mix_half_mask: u32 = 0xFFFFu;
const gorge_detail_prime_mix_unit_scale: f32 = 1.0 / 32768.0;  // 2^-15
const gorge_detail_prime_mix_seed_salt: u32 = 0x27D4EB2Fu;
const gorge_detail_prime_mix_y_rotation: u32 = 16u;  // the y product is rotated (see hash.hpp)

fn gorge_detail_prime_mix_finalise(h_in: u32) -> u32 {
    var h = h_in;
    h ^= h >> gorge_detail_prime_mix_shift1;
    h *= gorge_detail_prime_mix_round1;
    h ^= h >> gorge_detail_prime_mix_shift2;
    h *= gorge_detail_prime_mix_round2;
    h ^= h >> gorge_detail_prime_mix_shift3;
    return h;
}

// The y product rotated by half a word, and the finalised seed (prime_mix and prime_xor use both).
fn gorge_detail_prime_mix_row(cy: u32) -> u32 {
    let y = cy * gorge_detail_prime_mix_y;
    return (y << gorge_detail_prime_mix_y_rotation) | (y >> (32u - gorge_detail_prime_mix_y_rotation));
}
fn gorge_detail_prime_mix_seed_mask(seed: u32) -> u32 {
    return gorge_detail_prime_mix_finalise(seed ^ gorge_detail_prime_mix_seed_salt);
}

// The 32-bit prime_mix result from a column product ax = cx * prime_mix_x and a row product
// ay = rotl(cy * prime_mix_y, 16): finalise(ax ^ ay ^ finalise(seed ^ salt)).
fn gorge_detail_prime_mix_bits(ax: u32, ay: u32, seed: u32) -> u32 {
    return gorge_detail_prime_mix_finalise(ax ^ ay ^ gorge_detail_prime_mix_seed_mask(seed));
}

// prime_mix's components: x from the high 16 bits of h, y from the low 16.
fn gorge_detail_prime_mix_components(h: u32) -> vec2f {
    return vec2f(f32(h >> gorge_detail_prime_mix_half_bits), f32(h & gorge_detail_prime_mix_half_mask)) *
               gorge_detail_prime_mix_unit_scale - 1.0;
}

// prime_mix's split form: the coordinate products once per column and per row; combine_bits is the
// 32-bit result both components come from (and perlin noise's table index).
fn gorge_prime_mix_axis_x(cx: u32, seed: u32) -> u32 { return cx * gorge_detail_prime_mix_x; }
fn gorge_prime_mix_axis_y(cy: u32, seed: u32) -> u32 { return gorge_detail_prime_mix_row(cy); }
fn gorge_prime_mix_combine_bits(ax: u32, ay: u32, seed: u32) -> u32 {
    return gorge_detail_prime_mix_bits(ax, ay, seed);
}
fn gorge_prime_mix_combine(ax: u32, ay: u32, seed: u32) -> vec2f {
    return gorge_detail_prime_mix_components(gorge_prime_mix_combine_bits(ax, ay, seed));
}

// The 32-bit prime_mix result for the lattice point `cell` (its components' source bits).
fn gorge_prime_mix(cell: vec2u, seed: u32) -> u32 {
    return gorge_detail_prime_mix_bits(gorge_prime_mix_axis_x(cell.x, seed), gorge_prime_mix_axis_y(cell.y, seed),
                                       seed);
}

// prime_mix hash of the lattice point `cell`: each component in [-1, 1) with a step of 2^-15 (x from
// the high 16 bits, y from the low 16).
fn gorge_prime_mix_lattice2(cell: vec2u, seed: u32) -> vec2f {
    return gorge_prime_mix_combine(gorge_prime_mix_axis_x(cell.x, seed), gorge_prime_mix_axis_y(cell.y, seed), seed);
}
fn gorge_prime_mix_hash2(cell: vec2i, seed: u32) -> vec2f { return gorge_prime_mix_lattice2(vec2u(cell), seed); }

// prime_xor: the x product xored with the finalised seed and the rotated y product (prime_mix's
// constants), then one multiply and one xorshift; x from the high 16 bits read as a signed value,
// y from the low 16. Bit-identical to C++; the cheapest exact hash (one multiply per lattice point
// once the products of a row and a column are shared: its split form).
const gorge_detail_prime_xor_shift: u32 = 16u;
const gorge_detail_prime_xor_high_mask: u32 = 0xFFFF0000u;
const gorge_detail_prime_xor_signed_scale: f32 = 1.0 / 2147483648.0;  // 2^-31

fn gorge_detail_prime_xor_mix(h_in: u32) -> u32 {
    let h = h_in * gorge_detail_prime_mix_round1;
    return h ^ (h >> gorge_detail_prime_xor_shift);
}

// prime_xor's components: x is the high 16 bits as a signed 32-bit integer times 2^-31, y the low
// 16 as in prime_mix; both exact.
fn gorge_detail_prime_xor_components(h: u32) -> vec2f {
    return vec2f(f32(bitcast<i32>(h & gorge_detail_prime_xor_high_mask)) * gorge_detail_prime_xor_signed_scale,
                 f32(h & gorge_detail_prime_mix_half_mask) * gorge_detail_prime_mix_unit_scale - 1.0);
}

// prime_xor's split form: the seed joins the column product, so a lattice point costs one multiply;
// combine_bits is the 32-bit result both components come from (and perlin noise's table index).
fn gorge_prime_xor_axis_x(cx: u32, seed: u32) -> u32 {
    return gorge_prime_mix_axis_x(cx, seed) ^ gorge_detail_prime_mix_seed_mask(seed);
}
fn gorge_prime_xor_axis_y(cy: u32, seed: u32) -> u32 { return gorge_prime_mix_axis_y(cy, seed); }
fn gorge_prime_xor_combine_bits(ax: u32, ay: u32, seed: u32) -> u32 { return gorge_detail_prime_xor_mix(ax ^ ay); }
fn gorge_prime_xor_combine(ax: u32, ay: u32, seed: u32) -> vec2f {
    return gorge_detail_prime_xor_components(gorge_prime_xor_combine_bits(ax, ay, seed));
}

fn gorge_prime_xor(cell: vec2u, seed: u32) -> u32 {
    return gorge_detail_prime_xor_mix(gorge_prime_xor_axis_x(cell.x, seed) ^ gorge_prime_xor_axis_y(cell.y, seed));
}

// prime_xor hash of the lattice point `cell`: each component in [-1, 1) with a step of 2^-15.
fn gorge_prime_xor_lattice2(cell: vec2u, seed: u32) -> vec2f {
    return gorge_prime_xor_combine(gorge_prime_xor_axis_x(cell.x, seed), gorge_prime_xor_axis_y(cell.y, seed), seed);
}
fn gorge_prime_xor_hash2(cell: vec2i, seed: u32) -> vec2f { return gorge_prime_xor_lattice2(vec2u(cell), seed); }

// The float hash of the published erosion shaders (Clay John, Felix Westin, Rune Skovbo Johansen):
//     x = cell * k + k.yx,  k = (0.3183099, 0.3678794)
//     hash = -1 + 2 * fract(16 * k * fract(x.x * x.y * (x.x + x.y)))
// The seed is ignored; quality degrades a few thousand cells from the origin (see hash.hpp).
const gorge_detail_shadertoy_k: vec2f = vec2f(0.3183099, 0.3678794);
const gorge_detail_shadertoy_scale: f32 = 16.0;

fn gorge_shadertoy_lattice2(cell: vec2u, seed: u32) -> vec2f {
    let x = vec2f(vec2i(cell)) * gorge_detail_shadertoy_k + gorge_detail_shadertoy_k.yx;
    let t = fract(x.x * x.y * (x.x + x.y));
    return -1.0 + 2.0 * fract(gorge_detail_shadertoy_scale * gorge_detail_shadertoy_k * t);
}
fn gorge_shadertoy_hash2(cell: vec2i, seed: u32) -> vec2f { return gorge_shadertoy_lattice2(vec2u(cell), seed); }

// The hash policies (see the file's header): every noise below hashes through gorge_lattice2 or
// its split form (gorge_hash_axis_x, gorge_hash_axis_y, gorge_hash_combine).
const gorge_hash_pcg3d: u32 = 0u;
const gorge_hash_shadertoy: u32 = 1u;
const gorge_hash_prime_mix: u32 = 2u;
const gorge_hash_prime_xor: u32 = 3u;

fn gorge_lattice2(hash: u32, cell: vec2u, seed: u32) -> vec2f {
    if (hash == gorge_hash_shadertoy) {
        return gorge_shadertoy_lattice2(cell, seed);
    }
    if (hash == gorge_hash_prime_mix) {
        return gorge_prime_mix_lattice2(cell, seed);
    }
    if (hash == gorge_hash_prime_xor) {
        return gorge_prime_xor_lattice2(cell, seed);
    }
    return gorge_pcg3d_lattice2(cell, seed);
}

// The split form of the hash chosen at run time: gorge_lattice2(hash, cell, seed) equals
// gorge_hash_combine(hash, gorge_hash_axis_x(hash, cell.x, seed), gorge_hash_axis_y(hash, cell.y,
// seed), seed) bit for bit, so the noises do the work of a lattice column and of a row once each
// and share it among the corners of a cell and the cells of Phacelle's window (as the C++ kernels
// do). The shadertoy hash has no split form: identity axes, the whole hash per lattice point.
fn gorge_hash_axis_x(hash: u32, cx: u32, seed: u32) -> u32 {
    if (hash == gorge_hash_shadertoy) {
        return cx;
    }
    if (hash == gorge_hash_prime_mix) {
        return gorge_prime_mix_axis_x(cx, seed);
    }
    if (hash == gorge_hash_prime_xor) {
        return gorge_prime_xor_axis_x(cx, seed);
    }
    return gorge_pcg3d_axis_x(cx, seed);
}
fn gorge_hash_axis_y(hash: u32, cy: u32, seed: u32) -> u32 {
    if (hash == gorge_hash_shadertoy) {
        return cy;
    }
    if (hash == gorge_hash_prime_mix) {
        return gorge_prime_mix_axis_y(cy, seed);
    }
    if (hash == gorge_hash_prime_xor) {
        return gorge_prime_xor_axis_y(cy, seed);
    }
    return gorge_pcg3d_axis_y(cy, seed);
}
fn gorge_hash_combine(hash: u32, ax: u32, ay: u32, seed: u32) -> vec2f {
    if (hash == gorge_hash_shadertoy) {
        return gorge_shadertoy_lattice2(vec2u(ax, ay), seed);
    }
    if (hash == gorge_hash_prime_mix) {
        return gorge_prime_mix_combine(ax, ay, seed);
    }
    if (hash == gorge_hash_prime_xor) {
        return gorge_prime_xor_combine(ax, ay, seed);
    }
    return gorge_pcg3d_combine(ax, ay, seed);
}
// The 32-bit word of the lattice point whose split-form lanes are ax and ay, whose bits
// gorge_hash_combine's components come from (perlin noise's table index). The shadertoy hash is
// float arithmetic and has no such word: 0 for it (perlin noise does not use it; see there).
fn gorge_hash_combine_bits(hash: u32, ax: u32, ay: u32, seed: u32) -> u32 {
    if (hash == gorge_hash_shadertoy) {
        return 0u;
    }
    if (hash == gorge_hash_prime_mix) {
        return gorge_prime_mix_combine_bits(ax, ay, seed);
    }
    if (hash == gorge_hash_prime_xor) {
        return gorge_prime_xor_combine_bits(ax, ay, seed);
    }
    return gorge_pcg3d_combine_bits(ax, ay, seed);
}

// ---- Gradient noise and fBm (noise.hpp) ---------------------------------------------------------

// Octave sample points are clamped to +-2^62 so that p * freq stays finite (see noise.hpp).
const gorge_detail_lattice_coordinate_limit: f32 = 4611686018427387904.0;  // 2^62
fn gorge_detail_octave_point(p: vec2f, freq: f32) -> vec2f {
    return clamp(p * freq, vec2f(-gorge_detail_lattice_coordinate_limit), vec2f(gorge_detail_lattice_coordinate_limit));
}

// The split-form axes of lattice cell c's two columns and two rows (as cell_axes does):
// (axis_x(c.x), axis_x(c.x + 1), axis_y(c.y), axis_y(c.y + 1)).
fn gorge_detail_cell_axes(hash: u32, c: vec2u, seed: u32) -> vec4u {
    return vec4u(gorge_hash_axis_x(hash, c.x, seed), gorge_hash_axis_x(hash, c.x + 1u, seed),
                 gorge_hash_axis_y(hash, c.y, seed), gorge_hash_axis_y(hash, c.y + 1u, seed));
}

// The hashes of lattice cell c's corners (0, 0), (1, 0), (0, 1) and (1, 1): the hash's column and
// row work once each, shared by the two corners on that line (as gradient_locate does).
struct gorge_detail_corner_hashes {
    a: vec2f,
    b: vec2f,
    c: vec2f,
    d: vec2f,
}
fn gorge_detail_cell_corners(hash: u32, c: vec2u, seed: u32) -> gorge_detail_corner_hashes {
    let axes = gorge_detail_cell_axes(hash, c, seed);  // x0, x1, y0, y1
    var h: gorge_detail_corner_hashes;
    h.a = gorge_hash_combine(hash, axes.x, axes.z, seed);
    h.b = gorge_hash_combine(hash, axes.y, axes.z, seed);
    h.c = gorge_hash_combine(hash, axes.x, axes.w, seed);
    h.d = gorge_hash_combine(hash, axes.y, axes.w, seed);
    return h;
}

// Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its first and second derivatives.
struct gorge_detail_quintic_fade {
    u: vec2f,
    du: vec2f,
    ddu: vec2f,
}

fn gorge_detail_quintic(f: vec2f) -> gorge_detail_quintic_fade {
    // u' = 30 f^2 (f - 1)^2 = 30 t^2 with t = f (f - 1).
    let t = f * f - f;
    return gorge_detail_quintic_fade(f * f * f * (f * (f * 6.0 - 15.0) + 10.0), 30.0 * t * t,
                                     60.0 * f * (f * (2.0 * f - 3.0) + 1.0));
}

// Four corner quantities blended by the fade u (as blend_by_fade does): (value, d value / d u.x,
// d value / d u.y), value = lerp(lerp(va, vb, u.x), lerp(vc, vd, u.x), u.y), each lerp a + t (b - a).
// Gradient noise blends its ramps, value noise its corner values.
fn gorge_detail_blend_by_fade(va: f32, vb: f32, vc: f32, vd: f32, u: vec2f) -> vec3f {
    let bottom = va + u.x * (vb - va);
    let top = vc + u.x * (vd - vc);
    return vec3f(bottom + u.y * (top - bottom), (vb - va) + u.y * ((vd - vc) - (vb - va)), top - bottom);
}

// A cell's corner gradients blended by the fade u (as gradient_cell_blend_gradients does).
fn gorge_detail_blend_gradients(h: gorge_detail_corner_hashes, u: vec2f) -> vec2f {
    let bottom = h.a + u.x * (h.b - h.a);
    let top = h.c + u.x * (h.d - h.c);
    return bottom + u.y * (top - bottom);
}

// A gradient noise at the position f in its lattice cell, from the cell's corner gradients h (as
// gradient_noise_of does): (value, d/dqx, d/dqy). Gradient noise and perlin noise differ only in
// where h comes from.
fn gorge_detail_gradient_noise_of(f: vec2f, h: gorge_detail_corner_hashes) -> vec3f {
    let w = gorge_detail_quintic(f);

    let va = dot(h.a, f);
    let vb = dot(h.b, f - vec2f(1.0, 0.0));
    let vc = dot(h.c, f - vec2f(0.0, 1.0));
    let vd = dot(h.d, f - vec2f(1.0, 1.0));
    let r = gorge_detail_blend_by_fade(va, vb, vc, vd, w.u);
    return vec3f(r.x, gorge_detail_blend_gradients(h, w.u) + w.du * r.yz);
}

// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy).
fn gorge_gradient_noise_with(hash: u32, q: vec2f, seed: u32) -> vec3f {
    let i = floor(q);
    return gorge_detail_gradient_noise_of(q - i, gorge_detail_cell_corners(hash, vec2u(vec2i(i)), seed));
}
fn gorge_gradient_noise(q: vec2f, seed: u32) -> vec3f { return gorge_gradient_noise_with(gorge_hash_pcg3d, q, seed); }
fn gorge_gradient_noise_shadertoy(q: vec2f, seed: u32) -> vec3f {
    return gorge_gradient_noise_with(gorge_hash_shadertoy, q, seed);
}

// Parameters of a fractal (fBm) sum; gorge_fbm_params_default() gives the C++ defaults.
struct gorge_fbm_params {
    frequency: f32,   // frequency of the first octave, > 0 (default 3)
    octaves: i32,     // number of octaves, 0..32 (default 3)
    lacunarity: f32,  // frequency factor per octave, > 0 (default 2)
    gain: f32,        // amplitude factor per octave (default 0.1)
}

fn gorge_fbm_params_default() -> gorge_fbm_params {
    var p: gorge_fbm_params;
    p.frequency = 3.0;
    p.octaves = 3;
    p.lacunarity = 2.0;
    p.gain = 0.1;
    return p;
}

// Fractal sum of gradient noise with its exact gradient with respect to p.
fn gorge_fbm_with(hash: u32, p: vec2f, params: gorge_fbm_params, seed: u32) -> vec3f {
    var n = vec3f(0.0);
    var freq = params.frequency;
    var amp = 1.0;
    for (var o = 0; o < params.octaves; o++) {
        let v = gorge_gradient_noise_with(hash, gorge_detail_octave_point(p, freq), seed);
        n += amp * vec3f(v.x, freq * v.y, freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}
fn gorge_fbm(p: vec2f, params: gorge_fbm_params, seed: u32) -> vec3f {
    return gorge_fbm_with(gorge_hash_pcg3d, p, params, seed);
}
fn gorge_fbm_shadertoy(p: vec2f, params: gorge_fbm_params, seed: u32) -> vec3f {
    return gorge_fbm_with(gorge_hash_shadertoy, p, params, seed);
}

// ---- Phacelle noise (phacelle.hpp) --------------------------------------------------------------

struct gorge_phacelle_result {
    phase: vec2f,  // (cos, sin) of the blended phase; length in [1 - normalization, 1]
    side: vec2f,   // perp(dir) * cell_freq * 2 pi: d(phase angle)/dq of every wave
}

const gorge_detail_two_pi: f32 = 6.283185307179586476925286766559;
// Pivots are jittered by phacelle_jitter * hash, within [-0.5, 0.5) of the cell corner.
const gorge_detail_phacelle_jitter: f32 = 0.5;
// Bell weight exp(-2 |v|^2) - 0.01111 is exactly 0 at |v| = 1.5, outside the 4x4 window.
const gorge_detail_phacelle_bell_falloff: f32 = 2.0;
const gorge_detail_phacelle_weight_floor: f32 = 0.01111;
// Squared pivot distance from which the weight is certainly 0 (exp(-2 * 2.26) lies 2% below the
// floor): such cells add exactly 0 and are skipped, saving exp, sin and cos (as phacelle.hpp does).
const gorge_detail_phacelle_skip_distance_sq: f32 = 2.26;
// Lower bound of the length the blend is divided by (keeps an exact cancellation at 0, not NaN).
const gorge_detail_phacelle_min_length: f32 = 1e-20;
// The window: cells -1..2 around the point's cell on each axis.
const gorge_detail_phacelle_window_side: i32 = 4;

// Rune Skovbo Johansen's Phacelle noise at q (in cell units); `dir` is a unit vector (or zero).
fn gorge_phacelle_with(hash: u32, q: vec2f, dir: vec2f, cell_freq: f32, phase_offset: f32,
                       normalization: f32, seed: u32) -> gorge_phacelle_result {
    let side = gorge_detail_perp(dir) * (cell_freq * gorge_detail_two_pi);
    let phase0 = phase_offset * gorge_detail_two_pi;
    let i0 = floor(q);
    let f = q - i0;
    let c = vec2u(vec2i(i0));

    // The hash's work for each window column and row is done once (its split form); neighbour
    // offsets are added as u32, so they wrap.
    var column: array<u32, gorge_detail_phacelle_window_side>;
    var row: array<u32, gorge_detail_phacelle_window_side>;
    for (var g = -1; g <= 2; g++) {
        column[g + 1] = gorge_hash_axis_x(hash, c.x + u32(g), seed);
        row[g + 1] = gorge_hash_axis_y(hash, c.y + u32(g), seed);
    }
    var weight_sum = 0.0;
    var sum = vec2f(0.0);
    for (var gj = -1; gj <= 2; gj++) {
        for (var gi = -1; gi <= 2; gi++) {
            let cell_offset = vec2f(f32(gi), f32(gj));
            let jitter = gorge_detail_phacelle_jitter * gorge_hash_combine(hash, column[gi + 1], row[gj + 1], seed);
            let v = f - cell_offset - jitter;  // point relative to the cell's pivot
            let d2 = dot(v, v);
            if (d2 >= gorge_detail_phacelle_skip_distance_sq) { continue; }
            let w = max(0.0, exp(-gorge_detail_phacelle_bell_falloff * d2) - gorge_detail_phacelle_weight_floor);
            let angle = dot(v, side) + phase0;
            weight_sum += w;
            sum += w * gorge_detail_cos_sin(angle);
        }
    }
    let m = sum / weight_sum;
    let len = max(max(1.0 - normalization, length(m)), gorge_detail_phacelle_min_length);
    return gorge_phacelle_result(m / len, side);
}
fn gorge_phacelle(q: vec2f, dir: vec2f, cell_freq: f32, phase_offset: f32, normalization: f32,
                  seed: u32) -> gorge_phacelle_result {
    return gorge_phacelle_with(gorge_hash_pcg3d, q, dir, cell_freq, phase_offset, normalization, seed);
}
fn gorge_phacelle_shadertoy(q: vec2f, dir: vec2f, cell_freq: f32, phase_offset: f32, normalization: f32,
                            seed: u32) -> gorge_phacelle_result {
    return gorge_phacelle_with(gorge_hash_shadertoy, q, dir, cell_freq, phase_offset, normalization, seed);
}

// ---- Erosion filter (erosion_filter.hpp) --------------------------------------------------------

// The steering slope is clamped to +-float max / 16 per component (keeps it finite).
const gorge_detail_steering_slope_divisor: f32 = 16.0;

// Parameters of the erosion filter, field for field gorge::erosion_params; ranges and meanings are
// documented there. gorge_erosion_params_default() returns the published demo's values.
struct gorge_erosion_params {
    scale: f32,          // size of the largest gullies, > 0 (default 0.15)
    strength: f32,       // magnitude of all octaves together (default 0.22)
    gully_weight: f32,   // 0 sharpens only, 1 full gullies (default 0.5)
    detail: f32,         // how far fine gullies climb, > 0 (default 1.5)
    rounding: vec4f,     // (ridges, creases, input multiplier, per octave) (default (0.1, 0, 0.1, 2))
    onset: vec4f,        // (initial, per octave, ridge-map initial, ridge-map per octave)
                         // (default (1.25, 1.25, 2.8, 1.5))
    assumed_slope: vec2f, // (value, amount 0..1) (default (0.7, 1))
    octaves: i32,        // 0..32 (default 5)
    lacunarity: f32,     // frequency factor per octave, > 0 (default 2)
    gain: f32,           // strength factor per octave (default 0.5)
    cell_scale: f32,     // Phacelle cell size relative to the stripe width, > 0 (default 0.7)
    normalization: f32,  // Phacelle normalization, 0..1 (default 0.5)
}

fn gorge_erosion_params_default() -> gorge_erosion_params {
    var p: gorge_erosion_params;
    p.scale = 0.15;
    p.strength = 0.22;
    p.gully_weight = 0.5;
    p.detail = 1.5;
    p.rounding = vec4f(0.1, 0.0, 0.1, 2.0);
    p.onset = vec4f(1.25, 1.25, 2.8, 1.5);
    p.assumed_slope = vec2f(0.7, 1.0);
    p.octaves = 5;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.cell_scale = 0.7;
    p.normalization = 0.5;
    return p;
}

struct gorge_erosion_result {
    height_delta: f32,  // eroded height minus input height
    slope_delta: vec2f, // eroded gradient minus input gradient (approximate by design)
    magnitude: f32,     // sum of |octave strength|; |height_delta| <= magnitude * max(1, |gully_weight|)
    ridge_map: f32,     // -1 on creases, +1 on ridges, 0 where no gully forms
    fade_target: f32,   // the stacked fade target after the last octave
}

// The analytic erosion filter at p. height_and_slope = (h, dh/dx, dh/dy) of the input terrain;
// fade_target is about -1 in valleys and +1 on peaks (clamped).
fn gorge_erosion_filter_with(hash: u32, p: vec2f, height_and_slope: vec3f, fade_target: f32,
                             params: gorge_erosion_params, seed: u32) -> gorge_erosion_result {
    let ridge_rounding = params.rounding.x;
    let crease_rounding = params.rounding.y;
    let slope = height_and_slope.yz;

    var s = params.strength * params.scale;
    var fade = clamp(fade_target, -1.0, 1.0);
    var freq = 1.0 / (params.scale * params.cell_scale);
    let slope_len = max(gorge_detail_overflow_free_length(slope), gorge_detail_safe_normalize_min_length);

    // Initial mask: no gullies where the input is flat; rounded peaks and valleys of the input.
    let input_rounding = gorge_detail_mix(crease_rounding, ridge_rounding, gorge_detail_saturate(fade + 0.5)) *
                         params.rounding.z;
    var mask = gorge_detail_ease_out(gorge_detail_smooth_start(slope_len * params.onset.x,
                                                               input_rounding * params.onset.x));
    var ridge_mask = gorge_detail_ease_out(slope_len * params.onset.z);
    var ridge_fade = fade;

    // Gully steering slope: the real slope direction with an assumed magnitude, written as
    // slope (1 - amount) + direction value amount (the mix cancels catastrophically on steep slopes).
    let steer_limit = gorge_detail_float_max / gorge_detail_steering_slope_divisor;
    let steer = clamp(slope, vec2f(-steer_limit), vec2f(steer_limit));
    var g = steer * (1.0 - params.assumed_slope.y) +
            slope / slope_len * (params.assumed_slope.x * params.assumed_slope.y);

    // The deltas are accumulated from zero (subtracting the input at the end loses them in float).
    var result = vec3f(0.0);
    var magnitude = 0.0;
    var rounding_mult = 1.0;
    for (var octave = 0; octave < params.octaves; octave++) {
        // Normalized gullies: Phacelle's normalization keeps the stripes' depth where cells disagree.
        let ph = gorge_phacelle_with(hash, gorge_detail_octave_point(p, freq),
                                     gorge_detail_overflow_free_normalize(g), params.cell_scale, 0.25,
                                     params.normalization, seed);
        let c = ph.phase.x;
        let sn = ph.phase.y;
        let side = ph.side * (-freq);  // back to p units; negative so slopes point downhill

        // Straight gullies: steer by the sign of the sine, not the sine itself.
        g += sign(sn) * side * (s * params.gully_weight);

        // Stacked fades: fade from the previous profile (fade, flat) towards this octave's gully.
        let gully = vec3f(c, sn * side.x, sn * side.y);
        let faded = gorge_detail_mix3(vec3f(fade, 0.0, 0.0), gully * params.gully_weight, mask);
        result += faded * s;
        magnitude += abs(s);
        fade = faded.x;

        let octave_rounding = gorge_detail_mix(crease_rounding, ridge_rounding, gorge_detail_saturate(c + 0.5)) *
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

    return gorge_erosion_result(result.x, result.yz, magnitude, ridge_fade * (1.0 - ridge_mask), fade);
}
fn gorge_erosion_filter(p: vec2f, height_and_slope: vec3f, fade_target: f32, params: gorge_erosion_params,
                        seed: u32) -> gorge_erosion_result {
    return gorge_erosion_filter_with(gorge_hash_pcg3d, p, height_and_slope, fade_target, params, seed);
}
fn gorge_erosion_filter_shadertoy(p: vec2f, height_and_slope: vec3f, fade_target: f32,
                                  params: gorge_erosion_params, seed: u32) -> gorge_erosion_result {
    return gorge_erosion_filter_with(gorge_hash_shadertoy, p, height_and_slope, fade_target, params, seed);
}

// ---- Fade target and height offset (erosion_filter.hpp) -----------------------------------------

// -1 at valley_altitude and below, +1 at peak_altitude and above, linear between.
fn gorge_fade_target_from_altitude(height: f32, valley_altitude: f32, peak_altitude: f32) -> f32 {
    return clamp(2.0 * (height - valley_altitude) / (peak_altitude - valley_altitude) - 1.0, -1.0, 1.0);
}

// eroded = h + height_delta + mix(o, -clamp(fade_target), k) * magnitude, offset = (o, k).
fn gorge_apply_height_offset(height: f32, r: gorge_erosion_result, fade_target: f32, offset: vec2f) -> f32 {
    let f0 = clamp(fade_target, -1.0, 1.0);
    return height + r.height_delta + gorge_detail_mix(offset.x, -f0, offset.y) * r.magnitude;
}

// ---- Demo pipeline (demo_pipeline.hpp) ----------------------------------------------------------

const gorge_demo_height_amplitude: f32 = 0.125;  // fBm output scale
const gorge_demo_fade_range: f32 = 0.6;          // |fBm| / amplitude at which the fade target is +-1
const gorge_demo_base_height: f32 = 0.5;         // terrain height = base_height + 0.5 * fBm
const gorge_demo_height_offset_o: f32 = -0.65;   // height offset o of gorge_apply_height_offset
const gorge_demo_height_offset_k: f32 = 0.0;     // height offset k of gorge_apply_height_offset

struct gorge_demo_sample {
    height: f32,        // eroded height, around 0.4..0.6
    ridge_map: f32,     // filter ridge map, -1 creases .. +1 ridges
    input_height: f32,  // height before erosion
}

// The published demo pipeline at p: fBm height, fade target, erosion filter, height offset.
fn gorge_demo_pipeline_with(hash: u32, p: vec2f, params: gorge_erosion_params, seed: u32) -> gorge_demo_sample {
    let n = gorge_fbm_with(hash, p, gorge_fbm_params_default(), seed) * gorge_demo_height_amplitude;
    let fade_target = clamp(n.x / (gorge_demo_height_amplitude * gorge_demo_fade_range), -1.0, 1.0);
    let terrain = vec3f(gorge_demo_base_height + 0.5 * n.x, 0.5 * n.y, 0.5 * n.z);
    let r = gorge_erosion_filter_with(hash, p, terrain, fade_target, params, seed);
    let height = gorge_apply_height_offset(terrain.x, r, fade_target,
                                           vec2f(gorge_demo_height_offset_o, gorge_demo_height_offset_k));
    return gorge_demo_sample(height, r.ridge_map, terrain.x);
}
fn gorge_demo_pipeline(p: vec2f, params: gorge_erosion_params, seed: u32) -> gorge_demo_sample {
    return gorge_demo_pipeline_with(gorge_hash_pcg3d, p, params, seed);
}
fn gorge_demo_pipeline_shadertoy(p: vec2f, params: gorge_erosion_params, seed: u32) -> gorge_demo_sample {
    return gorge_demo_pipeline_with(gorge_hash_shadertoy, p, params, seed);
}

// The demo pipeline with the published default erosion parameters (GLSL's two-argument
// gorge_demo_pipeline; WGSL has no overloading).
fn gorge_demo_pipeline_defaults_with(hash: u32, p: vec2f, seed: u32) -> gorge_demo_sample {
    return gorge_demo_pipeline_with(hash, p, gorge_erosion_params_default(), seed);
}
fn gorge_demo_pipeline_defaults(p: vec2f, seed: u32) -> gorge_demo_sample {
    return gorge_demo_pipeline_defaults_with(gorge_hash_pcg3d, p, seed);
}
fn gorge_demo_pipeline_defaults_shadertoy(p: vec2f, seed: u32) -> gorge_demo_sample {
    return gorge_demo_pipeline_defaults_with(gorge_hash_shadertoy, p, seed);
}

// ================================================================================================
// Noise fields (noise.hpp seeds and second derivatives, value_noise.hpp, simplex.hpp,
// perlin_noise.hpp, fractal.hpp, field.hpp, island.hpp). WGSL has no templates or closures, so two
// things read differently:
//  - the basis policy of the fractals is an i32 argument (gorge_basis_gradient, gorge_basis_value,
//    gorge_basis_simplex, gorge_basis_perlin); pass a constant and the compiler folds the choice
//    away;
//  - field combinators are functions on vec3f (value, d/dx, d/dy) samples the caller has already
//    evaluated, and the domain warp is a small state (gorge_warp) stepped by the caller's loop.
// ================================================================================================

// ---- Seeds (noise.hpp) --------------------------------------------------------------------------

// Third pcg3d lane of derive_seed: a fixed odd constant (the 32-bit golden ratio).
const gorge_detail_derive_seed_salt: u32 = 0x9E3779B9u;

// An independent seed for stream `stream` of `seed`: the first lane of pcg3d(seed, stream, salt).
// Bit-identical to gorge::derive_seed (whatever the hash policy: it is always pcg3d).
fn gorge_derive_seed(seed: u32, stream: u32) -> u32 {
    return gorge_pcg3d(vec3u(seed, stream, gorge_detail_derive_seed_salt)).x;
}

// ---- Second derivatives (noise.hpp) -------------------------------------------------------------

// A noise sample with first and second derivatives.
struct gorge_noise_d2 {
    value: f32,
    gradient: vec2f,
    dxx: f32,
    dxy: f32,
    dyy: f32,
}

// gorge_detail_gradient_noise_of() with its Hessian (as gradient_noise_d2_of does).
fn gorge_detail_gradient_noise_d2_of(f: vec2f, h: gorge_detail_corner_hashes) -> gorge_noise_d2 {
    let w = gorge_detail_quintic(f);

    let ga = h.a;
    let gb = h.b;
    let gc = h.c;
    let gd = h.d;

    let va = dot(ga, f);
    let vb = dot(gb, f - vec2f(1.0, 0.0));
    let vc = dot(gc, f - vec2f(0.0, 1.0));
    let vd = dot(gd, f - vec2f(1.0, 1.0));
    let k = va - vb - vc + vd;
    let ga_ = gb - ga;
    let gb_ = gc - ga;
    let gk = ga - gb - gc + gd;

    let r = gorge_detail_blend_by_fade(va, vb, vc, vd, w.u);

    var n: gorge_noise_d2;
    n.value = r.x;
    n.gradient = gorge_detail_blend_gradients(h, w.u) + w.du * r.yz;
    n.dxx = 2.0 * w.du.x * (ga_.x + w.u.y * gk.x) + w.ddu.x * r.y;
    n.dyy = 2.0 * w.du.y * (gb_.y + w.u.x * gk.y) + w.ddu.y * r.z;
    n.dxy = w.du.x * (ga_.y + w.u.y * gk.y) + w.du.y * (gb_.x + w.u.x * gk.x) + w.du.x * w.du.y * k;
    return n;
}

// gorge_gradient_noise() with its Hessian.
fn gorge_gradient_noise_d2_with(hash: u32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    let i = floor(q);
    return gorge_detail_gradient_noise_d2_of(q - i, gorge_detail_cell_corners(hash, vec2u(vec2i(i)), seed));
}
fn gorge_gradient_noise_d2(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_gradient_noise_d2_with(gorge_hash_pcg3d, q, seed);
}
fn gorge_gradient_noise_d2_shadertoy(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_gradient_noise_d2_with(gorge_hash_shadertoy, q, seed);
}

// ---- Value noise (value_noise.hpp) --------------------------------------------------------------

// Quintic value noise and its Hessian; the lattice values are the hash's x components.
fn gorge_value_noise_d2_with(hash: u32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    let i = floor(q);
    let f = q - i;
    let c = vec2u(vec2i(i));
    let w = gorge_detail_quintic(f);

    let h = gorge_detail_cell_corners(hash, c, seed);
    let a = h.a.x;
    let b = h.b.x;
    let cc = h.c.x;
    let d = h.d.x;
    let r = gorge_detail_blend_by_fade(a, b, cc, d, w.u);

    var n: gorge_noise_d2;
    n.value = r.x;
    n.gradient = w.du * r.yz;
    n.dxx = w.ddu.x * r.y;
    n.dyy = w.ddu.y * r.z;
    n.dxy = w.du.x * w.du.y * (a - b - cc + d);
    return n;
}
fn gorge_value_noise_d2(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_value_noise_d2_with(gorge_hash_pcg3d, q, seed);
}
fn gorge_value_noise_d2_shadertoy(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_value_noise_d2_with(gorge_hash_shadertoy, q, seed);
}

// Quintic value noise at q: (value, d/dqx, d/dqy), value in [-1, 1).
fn gorge_value_noise_with(hash: u32, q: vec2f, seed: u32) -> vec3f {
    let n = gorge_value_noise_d2_with(hash, q, seed);
    return vec3f(n.value, n.gradient);
}
fn gorge_value_noise(q: vec2f, seed: u32) -> vec3f { return gorge_value_noise_with(gorge_hash_pcg3d, q, seed); }
fn gorge_value_noise_shadertoy(q: vec2f, seed: u32) -> vec3f {
    return gorge_value_noise_with(gorge_hash_shadertoy, q, seed);
}

// ---- Simplex noise (simplex.hpp) ----------------------------------------------------------------

// Skew F2 = (sqrt(3) - 1) / 2, unskew G2 = (3 - sqrt(3)) / 6, far corner 2 G2 - 1 (each rounded
// once from its exact value, as in C++), kernel radius^2 1/2, output scale 70.
const gorge_detail_simplex_skew: f32 = 0.36602540378443864676;
const gorge_detail_simplex_unskew: f32 = 0.21132486540518711775;
const gorge_detail_simplex_far: f32 = -0.57735026918962576451;
const gorge_detail_simplex_radius_sq: f32 = 0.5;
const gorge_detail_simplex_scale: f32 = 70.0;

// Adds one corner's kernel t^4 (g . x), its gradient and Hessian to n (unscaled).
fn gorge_detail_simplex_corner(n: ptr<function, gorge_noise_d2>, x: vec2f, g: vec2f) {
    let t = max(gorge_detail_simplex_radius_sq - dot(x, x), 0.0);
    let t2 = t * t;
    let t3 = t2 * t;
    let t4 = t2 * t2;
    let gx = dot(g, x);
    (*n).value += t4 * gx;
    (*n).gradient += t4 * g - (8.0 * t3 * gx) * x;
    let c3 = 8.0 * t3;
    let c2 = 48.0 * t2 * gx;
    (*n).dxx += -c3 * (2.0 * g.x * x.x + gx) + c2 * x.x * x.x;
    (*n).dyy += -c3 * (2.0 * g.y * x.y + gx) + c2 * x.y * x.y;
    (*n).dxy += -c3 * (g.x * x.y + g.y * x.x) + c2 * x.x * x.y;
}

// 2D simplex noise (Perlin 2001, Gustavson's formulation) and its Hessian.
fn gorge_simplex_noise_d2_with(hash: u32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    let skew = (q.x + q.y) * gorge_detail_simplex_skew;
    let cell = floor(vec2f(q.x + skew, q.y + skew));
    let unskew = (cell.x + cell.y) * gorge_detail_simplex_unskew;
    let x0 = q - (cell - vec2f(unskew, unskew));

    let step_x = select(0.0, 1.0, x0.x > x0.y);
    let step_y = 1.0 - step_x;
    let x1 = x0 - vec2f(step_x, step_y) + vec2f(gorge_detail_simplex_unskew, gorge_detail_simplex_unskew);
    let x2 = x0 + vec2f(gorge_detail_simplex_far, gorge_detail_simplex_far);

    let c = vec2u(vec2i(cell));
    let middle = vec2u(vec2i(i32(step_x), i32(step_y)));

    var n = gorge_noise_d2(0.0, vec2f(0.0), 0.0, 0.0, 0.0);
    gorge_detail_simplex_corner(&n, x0, gorge_lattice2(hash, c, seed));
    gorge_detail_simplex_corner(&n, x1, gorge_lattice2(hash, c + middle, seed));
    gorge_detail_simplex_corner(&n, x2, gorge_lattice2(hash, c + vec2u(1u, 1u), seed));

    let s = gorge_detail_simplex_scale;
    n.value *= s;
    n.gradient = n.gradient * s;
    n.dxx *= s;
    n.dxy *= s;
    n.dyy *= s;
    return n;
}
fn gorge_simplex_noise_d2(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_simplex_noise_d2_with(gorge_hash_pcg3d, q, seed);
}
fn gorge_simplex_noise_d2_shadertoy(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_simplex_noise_d2_with(gorge_hash_shadertoy, q, seed);
}

// 2D simplex noise at q: (value, d/dqx, d/dqy), |value| < 0.998.
fn gorge_simplex_noise_with(hash: u32, q: vec2f, seed: u32) -> vec3f {
    let n = gorge_simplex_noise_d2_with(hash, q, seed);
    return vec3f(n.value, n.gradient);
}
fn gorge_simplex_noise(q: vec2f, seed: u32) -> vec3f { return gorge_simplex_noise_with(gorge_hash_pcg3d, q, seed); }
fn gorge_simplex_noise_shadertoy(q: vec2f, seed: u32) -> vec3f {
    return gorge_simplex_noise_with(gorge_hash_shadertoy, q, seed);
}

// ---- Perlin noise (perlin_noise.hpp) ------------------------------------------------------------
// Gradient noise whose corner gradients are 8 unit directions, at 22.5 + 45 k degrees, picked by
// the top 3 bits of the corner's 32-bit hash word (Perlin's fixed gradient set, "Improving Noise",
// 2002): the same fade, ramps, value, gradient and Hessian as gorge_gradient_noise, |value| < 1.
// The word is gorge_hash_combine_bits of the hash chosen: where the C++ perlin_basis<> defaults
// to prime_xor_hash, this file defaults to pcg3d like every other noise here (pass
// gorge_hash_prime_xor to a _with variant to get the C++ default's field). The table index is
// integer arithmetic, bit-identical to C++ for the same hash; value and derivatives agree with the
// C++ float path as gradient noise's do. Perlin noise needs an exact integer hash (C++ refuses
// perlin_noise<shadertoy_hash> with a static_assert): there is no _shadertoy variant, and with
// gorge_hash_shadertoy (no bits to pick from) the _with variants return the zero sample (value
// and every derivative 0), a choice made at run time that WGSL cannot refuse at compile time.

// The gradient index is the top perlin_direction_bits of the hash word.
const gorge_detail_perlin_direction_bits: u32 = 3u;
const gorge_detail_perlin_direction_shift: u32 = 32u - gorge_detail_perlin_direction_bits;

// Unit directions at 22.5 + 45 k degrees, k = 0..7, as the nearest floats (cos 22.5 degrees and
// sin 22.5 degrees = 0.92387953 and 0.38268343): no direction lies on an axis or a diagonal.
const gorge_detail_perlin_directions_x = array<f32, 8>(0.92387953, 0.38268343, -0.38268343, -0.92387953,
                                                       -0.92387953, -0.38268343, 0.38268343, 0.92387953);
const gorge_detail_perlin_directions_y = array<f32, 8>(0.38268343, 0.92387953, 0.92387953, 0.38268343,
                                                       -0.38268343, -0.92387953, -0.92387953, -0.38268343);

// The table index of the lattice point whose split-form lanes are ax and ay: the top
// perlin_direction_bits of gorge_hash_combine_bits(hash, ax, ay, seed). (For prime_xor these are
// the top bits of its multiply, which C++ reads before the closing xorshift: the same bits.)
fn gorge_detail_perlin_direction_index(hash: u32, ax: u32, ay: u32, seed: u32) -> u32 {
    return gorge_hash_combine_bits(hash, ax, ay, seed) >> gorge_detail_perlin_direction_shift;
}

// The corner gradient of that lattice point: the table direction of its index.
fn gorge_detail_table_gradients_pick(hash: u32, ax: u32, ay: u32, seed: u32) -> vec2f {
    let k = gorge_detail_perlin_direction_index(hash, ax, ay, seed);
    return vec2f(gorge_detail_perlin_directions_x[k], gorge_detail_perlin_directions_y[k]);
}

// The table gradients of lattice cell c's corners (0, 0), (1, 0), (0, 1) and (1, 1): the hash's
// column and row work once each (gorge_detail_cell_axes), as in gorge_detail_cell_corners.
fn gorge_detail_table_gradients_corners(hash: u32, c: vec2u, seed: u32) -> gorge_detail_corner_hashes {
    let axes = gorge_detail_cell_axes(hash, c, seed);  // x0, x1, y0, y1
    var h: gorge_detail_corner_hashes;
    h.a = gorge_detail_table_gradients_pick(hash, axes.x, axes.z, seed);
    h.b = gorge_detail_table_gradients_pick(hash, axes.y, axes.z, seed);
    h.c = gorge_detail_table_gradients_pick(hash, axes.x, axes.w, seed);
    h.d = gorge_detail_table_gradients_pick(hash, axes.y, axes.w, seed);
    return h;
}

// Perlin noise and its Hessian (exact and continuous: the noise is C2); the zero sample for
// gorge_hash_shadertoy (see above).
fn gorge_perlin_noise_d2_with(hash: u32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    if (hash == gorge_hash_shadertoy) {
        return gorge_noise_d2(0.0, vec2f(0.0), 0.0, 0.0, 0.0);
    }
    let i = floor(q);
    return gorge_detail_gradient_noise_d2_of(q - i, gorge_detail_table_gradients_corners(hash, vec2u(vec2i(i)), seed));
}
fn gorge_perlin_noise_d2(q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_perlin_noise_d2_with(gorge_hash_pcg3d, q, seed);
}

// Perlin noise at q with its analytic gradient: (value, d/dqx, d/dqy), |value| < 1. At a lattice
// point the value is 0 and the gradient is the point's table direction exactly. The zero sample
// for gorge_hash_shadertoy (see above).
fn gorge_perlin_noise_with(hash: u32, q: vec2f, seed: u32) -> vec3f {
    if (hash == gorge_hash_shadertoy) {
        return vec3f(0.0);
    }
    let i = floor(q);
    return gorge_detail_gradient_noise_of(q - i, gorge_detail_table_gradients_corners(hash, vec2u(vec2i(i)), seed));
}
fn gorge_perlin_noise(q: vec2f, seed: u32) -> vec3f { return gorge_perlin_noise_with(gorge_hash_pcg3d, q, seed); }

// ---- Basis selection (the basis policies of noise.hpp, value_noise.hpp, simplex.hpp,
// perlin_noise.hpp) -------------------------------------------------------------------------------
// An id that names no basis selects gradient noise.

const gorge_basis_gradient: i32 = 0;  // quintic gradient noise (C++ gradient_basis)
const gorge_basis_value: i32 = 1;     // quintic value noise (value_basis)
const gorge_basis_simplex: i32 = 2;   // 2D simplex noise (simplex_basis)
// Perlin noise (perlin_basis, with the hash chosen: see "Perlin noise"; the zero field with
// gorge_hash_shadertoy, e.g. through gorge_fractal_sum_shadertoy).
const gorge_basis_perlin: i32 = 3;

fn gorge_basis_eval_with(hash: u32, basis: i32, q: vec2f, seed: u32) -> vec3f {
    if (basis == gorge_basis_value) {
        return gorge_value_noise_with(hash, q, seed);
    }
    if (basis == gorge_basis_simplex) {
        return gorge_simplex_noise_with(hash, q, seed);
    }
    if (basis == gorge_basis_perlin) {
        return gorge_perlin_noise_with(hash, q, seed);
    }
    return gorge_gradient_noise_with(hash, q, seed);
}
fn gorge_basis_eval(basis: i32, q: vec2f, seed: u32) -> vec3f {
    return gorge_basis_eval_with(gorge_hash_pcg3d, basis, q, seed);
}
fn gorge_basis_eval_shadertoy(basis: i32, q: vec2f, seed: u32) -> vec3f {
    return gorge_basis_eval_with(gorge_hash_shadertoy, basis, q, seed);
}

fn gorge_basis_eval_d2_with(hash: u32, basis: i32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    if (basis == gorge_basis_value) {
        return gorge_value_noise_d2_with(hash, q, seed);
    }
    if (basis == gorge_basis_simplex) {
        return gorge_simplex_noise_d2_with(hash, q, seed);
    }
    if (basis == gorge_basis_perlin) {
        return gorge_perlin_noise_d2_with(hash, q, seed);
    }
    return gorge_gradient_noise_d2_with(hash, q, seed);
}
fn gorge_basis_eval_d2(basis: i32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_basis_eval_d2_with(gorge_hash_pcg3d, basis, q, seed);
}
fn gorge_basis_eval_d2_shadertoy(basis: i32, q: vec2f, seed: u32) -> gorge_noise_d2 {
    return gorge_basis_eval_d2_with(gorge_hash_shadertoy, basis, q, seed);
}

// ---- Fractals (fractal.hpp) ---------------------------------------------------------------------
// Octave o samples the basis at freq_o p with seed gorge_derive_seed(seed, o).

// fBm over any basis with per-octave seeds.
fn gorge_fractal_sum_with(hash: u32, p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    var n = vec3f(0.0);
    var freq = params.frequency;
    var amp = 1.0;
    for (var o = 0; o < params.octaves; o++) {
        let v = gorge_basis_eval_with(hash, basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, u32(o)));
        n += amp * vec3f(v.x, freq * v.y, freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}
fn gorge_fractal_sum(p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_fractal_sum_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_fractal_sum_shadertoy(p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_fractal_sum_with(gorge_hash_shadertoy, p, params, basis, seed);
}

// Billow: sum of amp_o |basis|; creases where an octave crosses 0 (gradient there uses sign(0) = 0).
fn gorge_billow_with(hash: u32, p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    var n = vec3f(0.0);
    var freq = params.frequency;
    var amp = 1.0;
    for (var o = 0; o < params.octaves; o++) {
        let v = gorge_basis_eval_with(hash, basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, u32(o)));
        let s = sign(v.x);
        n += amp * vec3f(abs(v.x), s * freq * v.y, s * freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}
fn gorge_billow(p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_billow_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_billow_shadertoy(p: vec2f, params: gorge_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_billow_with(gorge_hash_shadertoy, p, params, basis, seed);
}

// Parameters of gorge_ridged(); gorge_ridged_params_default() gives the C++ defaults.
struct gorge_ridged_params {
    frequency: f32,   // > 0 (default 1)
    octaves: i32,     // 0..32 (default 6)
    lacunarity: f32,  // > 0 (default 2)
    gain: f32,        // (default 0.5)
    offset: f32,      // ridge height before squaring (default 1)
    feedback: f32,    // >= 0, how strongly an octave gates the next (default 2)
}

fn gorge_ridged_params_default() -> gorge_ridged_params {
    var p: gorge_ridged_params;
    p.frequency = 1.0;
    p.octaves = 6;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.offset = 1.0;
    p.feedback = 2.0;
    return p;
}

// Musgrave's ridged multifractal with the exact gradient (chain rule through the weights).
fn gorge_ridged_with(hash: u32, p: vec2f, params: gorge_ridged_params, basis: i32, seed: u32) -> vec3f {
    var value = 0.0;
    var grad = vec2f(0.0);
    var weight = 1.0;
    var weight_grad = vec2f(0.0);
    var freq = params.frequency;
    var amp = 1.0;
    for (var o = 0; o < params.octaves; o++) {
        let v = gorge_basis_eval_with(hash, basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, u32(o)));
        let ridge = params.offset - abs(v.x);
        let ridge_grad = v.yz * (-sign(v.x) * freq);
        let signal = ridge * ridge * weight;
        let signal_grad = (2.0 * ridge * weight) * ridge_grad + (ridge * ridge) * weight_grad;
        value += amp * signal;
        grad += amp * signal_grad;
        let gated = signal * params.feedback;
        weight = min(gated, 1.0);
        weight_grad = select(0.0, params.feedback, gated < 1.0) * signal_grad;
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return vec3f(value, grad);
}
fn gorge_ridged(p: vec2f, params: gorge_ridged_params, basis: i32, seed: u32) -> vec3f {
    return gorge_ridged_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_ridged_shadertoy(p: vec2f, params: gorge_ridged_params, basis: i32, seed: u32) -> vec3f {
    return gorge_ridged_with(gorge_hash_shadertoy, p, params, basis, seed);
}

// Parameters of gorge_damped_fbm(); gorge_damped_fbm_params_default() gives the C++ defaults.
struct gorge_damped_fbm_params {
    frequency: f32,   // > 0 (default 1)
    octaves: i32,     // 0..32 (default 6)
    lacunarity: f32,  // > 0 (default 2)
    gain: f32,        // (default 0.5)
    damping: f32,     // >= 0, strength c of 1 / (1 + c |D|^2) (default 1)
}

fn gorge_damped_fbm_params_default() -> gorge_damped_fbm_params {
    var p: gorge_damped_fbm_params;
    p.frequency = 1.0;
    p.octaves = 6;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.damping = 1.0;
    return p;
}

// Derivative-damped fBm after Inigo Quilez, with the exact gradient (damping's derivative included).
fn gorge_damped_fbm_with(hash: u32, p: vec2f, params: gorge_damped_fbm_params, basis: i32, seed: u32) -> vec3f {
    var value = 0.0;
    var grad = vec2f(0.0);
    var d = vec2f(0.0);
    var jxx = 0.0;
    var jxy = 0.0;
    var jyy = 0.0;
    var freq = params.frequency;
    var amp = 1.0;
    let c = params.damping;
    for (var o = 0; o < params.octaves; o++) {
        let n = gorge_basis_eval_d2_with(hash, basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, u32(o)));
        d += n.gradient;
        jxx += freq * n.dxx;
        jxy += freq * n.dxy;
        jyy += freq * n.dyy;
        let inv = 1.0 / (1.0 + c * dot(d, d));
        let grad_d2 = vec2f(2.0 * (jxx * d.x + jxy * d.y), 2.0 * (jxy * d.x + jyy * d.y));
        value += amp * n.value * inv;
        grad += amp * (n.gradient * (freq * inv) - grad_d2 * (n.value * c * inv * inv));
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return vec3f(value, grad);
}
fn gorge_damped_fbm(p: vec2f, params: gorge_damped_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_damped_fbm_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_damped_fbm_shadertoy(p: vec2f, params: gorge_damped_fbm_params, basis: i32, seed: u32) -> vec3f {
    return gorge_damped_fbm_with(gorge_hash_shadertoy, p, params, basis, seed);
}

// ---- Field combinators (field.hpp) --------------------------------------------------------------
// On samples v = (value, d/dx, d/dy) already evaluated at the same p; each keeps the gradient exact.

fn gorge_sum(a: vec3f, b: vec3f) -> vec3f { return a + b; }
fn gorge_scale(v: vec3f, factor: f32) -> vec3f { return v * factor; }
fn gorge_offset(v: vec3f, constant: f32) -> vec3f { return vec3f(v.x + constant, v.y, v.z); }

// a * b by the product rule.
fn gorge_product(a: vec3f, b: vec3f) -> vec3f {
    return vec3f(a.x * b.x, a.y * b.x + a.x * b.y, a.z * b.x + a.x * b.z);
}

// clamp(v, lo, hi); the gradient is 0 where the clamp is active.
fn gorge_clamped(v: vec3f, lo: f32, hi: f32) -> vec3f {
    let keep = select(0.0, select(0.0, 1.0, v.x < hi), v.x > lo);
    return vec3f(clamp(v.x, lo, hi), v.y * keep, v.z * keep);
}

// A profile g applied to the value: g = (g(v.x), g'(v.x)), e.g. from gorge_power_profile.
fn gorge_apply_profile(v: vec3f, g: vec2f) -> vec3f { return vec3f(g.x, g.y * v.y, g.y * v.z); }

// Domain transform f(M p + t): evaluate f at gorge_transform_point(m, t, p), then pass the sample
// through gorge_transform_gradient(m, v) (gradient M^T grad f). mat2x2f is column-major as in glm.
fn gorge_transform_point(m: mat2x2f, t: vec2f, p: vec2f) -> vec2f {
    return vec2f(m[0][0] * p.x + m[1][0] * p.y + t.x, m[0][1] * p.x + m[1][1] * p.y + t.y);
}
fn gorge_transform_gradient(m: mat2x2f, v: vec3f) -> vec3f {
    return vec3f(v.x, m[0][0] * v.y + m[0][1] * v.z, m[1][0] * v.y + m[1][1] * v.z);
}

// Domain warp f(p_n), p_0 = p, p_{k+1} = p + s (wx(p_k), wy(p_k)), with its exact gradient
// J_n^T grad f(p_n). Without closures the caller runs the loop:
//     var w = gorge_warp_begin(p);
//     for (var k = 0; k < iterations; k++) {
//         w = gorge_warp_step(w, p, wx_field(w.q), wy_field(w.q), strength);
//     }
//     let result = gorge_warp_end(w, f_field(w.q));
struct gorge_warp {
    q: vec2f,  // current warped point p_k
    jxx: f32,  // J = dq/dp; rows are the gradients of q.x and q.y
    jxy: f32,
    jyx: f32,
    jyy: f32,
}

fn gorge_warp_begin(p: vec2f) -> gorge_warp { return gorge_warp(p, 1.0, 0.0, 0.0, 1.0); }

fn gorge_warp_step(w: gorge_warp, p: vec2f, a: vec3f, b: vec3f, s: f32) -> gorge_warp {
    let nxx = w.jxx * a.y + w.jyx * a.z;
    let nxy = w.jxy * a.y + w.jyy * a.z;
    let nyx = w.jxx * b.y + w.jyx * b.z;
    let nyy = w.jxy * b.y + w.jyy * b.z;
    return gorge_warp(vec2f(p.x + s * a.x, p.y + s * b.x), 1.0 + s * nxx, s * nxy, s * nyx, 1.0 + s * nyy);
}

fn gorge_warp_end(w: gorge_warp, v: vec3f) -> vec3f {
    return vec3f(v.x, w.jxx * v.y + w.jyx * v.z, w.jxy * v.y + w.jyy * v.z);
}

// ---- Island shaping (island.hpp) ----------------------------------------------------------------

// Redistribution sign(e) |e|^k and its slope k |e|^(k - 1) (0 at e = 0 unless k = 1). WGSL's pow
// is undefined at 0, so e = 0 is spelt out (C++ gets the same 0 from sign(0)). Both saturate at
// the largest finite float where they would overflow (|e| > 1 with k > 1; k < 1 at subnormal |e|);
// at subnormal |e| the slope is (|e| 2^24)^(k - 1) 2^(24 (1 - k)), 24 being float's digits, so it
// is not lost to an overflow of |e|^(k - 1) where it is finite itself. A device may flush
// subnormals to zero (WGSL allows it): the lifted base is then kept at the smallest normal float,
// so pow never sees 0 with a negative exponent.
const gorge_detail_float_digits: f32 = 24.0;
const gorge_detail_subnormal_lift: f32 = 16777216.0;  // 2^24
fn gorge_power_profile(e: f32, exponent: f32) -> vec2f {
    let a = abs(e);
    let positive = a > 0.0;
    let subnormal = a < gorge_detail_float_min_normal;
    let base = max(select(a, a * gorge_detail_subnormal_lift, subnormal), gorge_detail_float_min_normal);
    let unlift = select(1.0, exp2(gorge_detail_float_digits * (1.0 - exponent)), subnormal);
    let slope = min(exponent * pow(base, exponent - 1.0) * unlift, gorge_detail_float_max);
    let slope_at_zero = select(0.0, 1.0, exponent == 1.0);
    return vec2f(select(0.0, sign(e) * min(pow(a, exponent), gorge_detail_float_max), positive),
                 select(slope_at_zero, slope, positive));
}

// Smooth terraces: `steps` treads per unit, risers taking the fraction `ramp` in (0, 1].
fn gorge_terrace_profile(e: f32, steps: f32, ramp: f32) -> vec2f {
    let t = e * steps;
    let i = floor(t);
    let f = t - i;
    let x = gorge_detail_saturate((f - (1.0 - ramp)) / ramp);
    return vec2f((i + x * x * (3.0 - 2.0 * x)) / steps, 6.0 * x * (1.0 - x) / ramp);
}

fn gorge_redistribute(v: vec3f, exponent: f32) -> vec3f {
    return gorge_apply_profile(v, gorge_power_profile(v.x, exponent));
}
fn gorge_terrace(v: vec3f, steps: f32, ramp: f32) -> vec3f {
    return gorge_apply_profile(v, gorge_terrace_profile(v.x, steps, ramp));
}

// d = min(1, |n|) with its gradient (0 outside the unit circle and at the centre).
fn gorge_radial_distance(n: vec2f) -> vec3f {
    let r = length(n);
    let inv_r = 1.0 / select(1.0, r, r > 0.0);
    let slope = select(0.0, select(0.0, inv_r, r > 0.0), r < 1.0);
    return vec3f(min(r, 1.0), n.x * slope, n.y * slope);
}

// d = 1 - (1 - nx^2)(1 - ny^2), n clamped to [-1, 1]^2, with its gradient (0 outside the square).
fn gorge_square_bump_distance(n: vec2f) -> vec3f {
    let x = clamp(n.x, -1.0, 1.0);
    let y = clamp(n.y, -1.0, 1.0);
    let ax = 1.0 - x * x;
    let ay = 1.0 - y * y;
    let kx = select(0.0, 1.0, abs(n.x) < 1.0);
    let ky = select(0.0, 1.0, abs(n.y) < 1.0);
    return vec3f(1.0 - ax * ay, 2.0 * x * ay * kx, 2.0 * y * ax * ky);
}

const gorge_falloff_radial: i32 = 0;       // round islands
const gorge_falloff_square_bump: i32 = 1;  // fills a square map

struct gorge_falloff_params {
    centre: vec2f,  // island centre in p units (default (0, 0))
    radius: f32,    // p distance mapped to |n| = 1, > 0 with 1 / radius <= ~3.2e32 (default 1)
    shape: i32,     // gorge_falloff_radial or gorge_falloff_square_bump (default radial)
    amount: f32,    // 0..1, how far e is pulled towards 1 - d (default 0.75)
}

fn gorge_falloff_params_default() -> gorge_falloff_params {
    var p: gorge_falloff_params;
    p.centre = vec2f(0.0);
    p.radius = 1.0;
    p.shape = gorge_falloff_radial;
    p.amount = 0.75;
    return p;
}

// mix(e, 1 - d(n), amount) with n = (p - centre) / radius; e is the field sampled at p. n is
// clamped to [-2, 2]^2, which changes no result (both distances are 1 with gradient 0 wherever
// some |n_i| >= 1) and keeps it finite where (p - centre) / radius overflows.
const gorge_detail_falloff_n_limit: f32 = 2.0;
fn gorge_island_falloff(e: vec3f, p: vec2f, params: gorge_falloff_params) -> vec3f {
    let inv_radius = 1.0 / params.radius;
    let n = clamp(vec2f((p.x - params.centre.x) * inv_radius, (p.y - params.centre.y) * inv_radius),
                  vec2f(-gorge_detail_falloff_n_limit), vec2f(gorge_detail_falloff_n_limit));
    var d: vec3f;
    if (params.shape == gorge_falloff_radial) {
        d = gorge_radial_distance(n);
    } else {
        d = gorge_square_bump_distance(n);
    }
    let m = params.amount;
    let keep = 1.0 - m;
    return vec3f(keep * e.x + m * (1.0 - d.x), keep * e.y - m * d.y * inv_radius, keep * e.z - m * d.z * inv_radius);
}

// Seed streams of the island recipe.
const gorge_island_stream_height: u32 = 0u;
const gorge_island_stream_warp_x: u32 = 1u;
const gorge_island_stream_warp_y: u32 = 2u;
const gorge_island_stream_moisture: u32 = 3u;

// Parameters of the island recipe, field for field gorge::island_params (warp_params flattened).
// Nothing is checked here: keep to what gorge::island_params<float> accepts (its ranges and its
// derived limits on warp strength, contrast, exponent and radius), under which the C++ recipe is
// finite for every finite p (fuzz-tested); this one computes the same formulas.
struct gorge_island_params {
    terrain: gorge_fbm_params,      // (default frequency 2, 6 octaves, lacunarity 2, gain 0.5)
    warp_noise: gorge_fbm_params,   // (default 1.5, 4, 2, 0.5)
    warp_strength: f32,             // (default 0.35)
    warp_iterations: i32,           // 0..16 (default 1)
    contrast: f32,                  // e = sat(0.5 + contrast * fBm), > 0 (default 1.5)
    exponent: f32,                  // redistribution k, > 0 (default 1.8)
    falloff: gorge_falloff_params,  // (default radial, amount 0.75)
    moisture: gorge_fbm_params,     // (default 1.5, 4, 2, 0.5)
    sea_level: f32,                 // 0..1 (default 0.3; not used by the fields)
}

fn gorge_island_params_default() -> gorge_island_params {
    var p: gorge_island_params;
    p.terrain.frequency = 2.0;
    p.terrain.octaves = 6;
    p.terrain.lacunarity = 2.0;
    p.terrain.gain = 0.5;
    p.warp_noise.frequency = 1.5;
    p.warp_noise.octaves = 4;
    p.warp_noise.lacunarity = 2.0;
    p.warp_noise.gain = 0.5;
    p.warp_strength = 0.35;
    p.warp_iterations = 1;
    p.contrast = 1.5;
    p.exponent = 1.8;
    p.falloff = gorge_falloff_params_default();
    p.moisture = p.warp_noise;
    p.sea_level = 0.3;
    return p;
}

// Red Blob Games' island: e = sat(0.5 + contrast * warped fBm), redistributed, then the falloff.
fn gorge_island_height_with(hash: u32, p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    let terrain_seed = gorge_derive_seed(seed, gorge_island_stream_height);
    let wx_seed = gorge_derive_seed(seed, gorge_island_stream_warp_x);
    let wy_seed = gorge_derive_seed(seed, gorge_island_stream_warp_y);
    var w = gorge_warp_begin(p);
    for (var k = 0; k < params.warp_iterations; k++) {
        w = gorge_warp_step(w, p, gorge_fractal_sum_with(hash, w.q, params.warp_noise, basis, wx_seed),
                            gorge_fractal_sum_with(hash, w.q, params.warp_noise, basis, wy_seed), params.warp_strength);
    }
    let warped = gorge_warp_end(w, gorge_fractal_sum_with(hash, w.q, params.terrain, basis, terrain_seed));
    let e = gorge_clamped(gorge_offset(gorge_scale(warped, params.contrast), 0.5), 0.0, 1.0);
    return gorge_island_falloff(gorge_redistribute(e, params.exponent), p, params.falloff);
}
fn gorge_island_height(p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    return gorge_island_height_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_island_height_shadertoy(p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    return gorge_island_height_with(gorge_hash_shadertoy, p, params, basis, seed);
}

// Moisture in [0, 1] from the same seed, independent of the height field.
fn gorge_island_moisture_with(hash: u32, p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    let m = gorge_fractal_sum_with(hash, p, params.moisture, basis,
                                   gorge_derive_seed(seed, gorge_island_stream_moisture));
    return gorge_clamped(gorge_offset(gorge_scale(m, params.contrast), 0.5), 0.0, 1.0);
}
fn gorge_island_moisture(p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    return gorge_island_moisture_with(gorge_hash_pcg3d, p, params, basis, seed);
}
fn gorge_island_moisture_shadertoy(p: vec2f, params: gorge_island_params, basis: i32, seed: u32) -> vec3f {
    return gorge_island_moisture_with(gorge_hash_shadertoy, p, params, basis, seed);
}
