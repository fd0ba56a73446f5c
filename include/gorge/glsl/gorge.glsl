// gorge/glsl/gorge.glsl - the companion GLSL include: gorge's hashes, gradient noise, Phacelle
// noise, erosion filter, demo pipeline and noise fields for shaders.
//
// It mirrors the C++ headers section by section and line by line, with the same constants and
// names (C++ `gorge::erosion_filter` is `gorge_erosion_filter` here, `gorge::detail::ease_out` is
// `gorge_detail_ease_out`), so the two can be read side by side:
//   hash.hpp            -> "Hashes"
//   noise.hpp           -> "Gradient noise and fBm"
//   phacelle.hpp        -> "Phacelle noise"
//   erosion_filter.hpp  -> "Erosion filter", "Fade target and height offset"
//   demo_pipeline.hpp   -> "Demo pipeline"
//   and, after those, the noise fields: noise.hpp (seeds, second derivatives), value_noise.hpp,
//   simplex.hpp, perlin_noise.hpp, fractal.hpp, field.hpp, island.hpp (see the "Noise fields"
//   banner)
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
//     #define GORGE_HASH gorge_prime_mix_lattice2  (the fast exact integer hash, seeds honoured)
//     #define GORGE_HASH gorge_prime_xor_lattice2  (the cheapest exact integer hash, seeds honoured)
//     #define GORGE_HASH gorge_shadertoy_lattice2  (the published shaders' float hash, seed ignored)
// A custom hash works the same way if it is declared before the include. The built-in hashes are
// always available by name, whatever GORGE_HASH says.
// Split form (optional, as in hash.hpp): the noises hash a lattice point as
// GORGE_HASH_COMBINE(GORGE_HASH_AXIS_X(cx, seed), GORGE_HASH_AXIS_Y(cy, seed), seed), so that the
// corners of a cell and the cells of Phacelle's 4x4 window share the work of a lattice column and
// of a row. Without GORGE_HASH, pcg3d's split form is used; a GORGE_HASH alone gets identity axes
// and GORGE_HASH per lattice point (the same noise, without the sharing). To share a built-in
// hash's work, name its split functions too (all three, and GORGE_HASH: anything less is an
// #error); the noise is bit for bit that of GORGE_HASH alone:
//     #define GORGE_HASH gorge_prime_xor_lattice2
//     #define GORGE_HASH_AXIS_X gorge_prime_xor_axis_x    // uint f(uint cx, uint seed)
//     #define GORGE_HASH_AXIS_Y gorge_prime_xor_axis_y    // uint f(uint cy, uint seed)
//     #define GORGE_HASH_COMBINE gorge_prime_xor_combine  // vec2 f(uint ax, uint ay, uint seed)
// (gorge_pcg3d_* and gorge_prime_mix_* alike; the shadertoy hash has no split form).
// Perlin noise picks its corner gradients by the top bits of the hash's 32-bit word (hash.hpp's
// combine_bits), which only the exact integer hashes have: it exists where
// GORGE_HASH_COMBINE_BITS names that word, which the default (pcg3d) does by itself; with another
// exact hash, add it to the split form (it needs the other three, else #error):
//     #define GORGE_HASH_COMBINE_BITS gorge_prime_xor_combine_bits  // uint f(uint ax, uint ay, uint seed)
// Without it (the shadertoy hash, a GORGE_HASH alone) gorge_perlin_noise, gorge_perlin_noise_d2
// and gorge_basis_perlin are not declared, and naming one is a compile error that says why.
//
// Subgroups (optional, Vulkan GLSL): define GORGE_SUBGROUPS before the include, after enabling
//     #extension GL_KHR_shader_subgroup_basic : require    (and _vote, _ballot and _shuffle alike)
// and Phacelle's window is hashed once per subgroup where all of its invocations share the same
// window (neighbouring pixels of a coarse octave, nearly always): the first 16 (or 8) invocations
// hash one (or two) window cells each and every invocation reads the 16 jitters with
// subgroupShuffle, the GPU side of the C++ batches' band of cells (phacelle.hpp). Same hashes, same
// results; on an NVIDIA H200 the demo pipeline ran 1.28x faster with pcg3d. It needs subgroups of
// at least 8 invocations (smaller ones, and subgroups whose invocations straddle cells, hash cell
// by cell); CPU drivers (lavapipe, SwiftShader) run it slower.
//
// Agreement with the C++ float path (checked by tests/glsl on Vulkan devices: Mesa's lavapipe, an
// NVIDIA H200):
//  - pcg3d, prime_mix, prime_xor and gorge_derive_seed are pure 32-bit unsigned arithmetic:
//    bit-identical to C++;
//  - everything else is float arithmetic whose result depends on the device's exp/sin/cos/pow and
//    on whether it fuses multiply-adds, so it agrees to about 1e-6 typically (1e-4 is what the test
//    demands); the filter's straight-gully steering uses sign(sin), so at the rare points where the
//    sine is within rounding of zero a GPU and a CPU can take different branches. Gradients of
//    high-frequency fractals differ more (up to a few 1e-5 times the top octave frequency), as a
//    fused multiply-add rounds the lattice-relative position differently.
//  - The shadertoy hash is written with `precise` where the language has it (GLSL >= 4.00, ES >=
//    3.20), which forbids fused multiply-adds and keeps it close to the C++ bits; ES 3.00/3.10 have
//    no such qualifier.
//
// Seeds are `uint` everywhere (gorge_erosion_filter(..., uint seed), gorge_fbm(..., uint seed), ...):
// pass 7u, not 7. GLSL ES 3.00 has no implicit int-to-uint conversion, so an int seed finds no
// overload there.
//
// Parameter defaults (gorge_erosion_params_default() and the others) are set field by field, so
// adding a field cannot silently shift the others.
//
// Limits. Parameters are not validated on the GPU (shaders cannot throw): validate them on the CPU
// with gorge::erosion_params<float>::validate() before uploading; parameters it accepts give
// finite results for finite inputs here too (the same overflow guards as the C++ kernels). Far from the origin float loses
// the fractional bits of the position exactly as the C++ float path does (see noise.hpp).
// On GLSL ES the file declares highp as the default float and int precision (the hashes need
// 32-bit integers, the noise 32-bit floats); redeclare lower defaults after it if you want them.
// Lattice coordinates go from int to uint and back through constructors, which keep the
// two's-complement bit pattern (as GLSL 4.50 specifies and SPIR-V's OpBitcast does).
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

// The largest and the smallest normal float (GLSL has no numeric_limits).
const float gorge_detail_float_max = 3.4028234e38;
const float gorge_detail_float_min_normal = 1.17549435e-38;

// |v| without overflow: length(v) where that is finite, else from v scaled by its largest component.
float gorge_detail_overflow_free_length(vec2 v) {
    float plain = length(v);
    float big = max(abs(v.x), abs(v.y));
    float scaled = big * length(v * (1.0 / max(big, 1.0)));
    return min(plain <= gorge_detail_float_max ? plain : scaled, gorge_detail_float_max);
}

// safe_normalize without overflow: v is scaled by its largest component first.
vec2 gorge_detail_overflow_free_normalize(vec2 v) {
    float big = max(abs(v.x), abs(v.y));
    vec2 u = v * (1.0 / max(big, gorge_detail_float_min_normal));
    float unit_len = length(u);
    return big * unit_len > gorge_detail_safe_normalize_min_length ? u * (1.0 / unit_len) : v;
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
uint gorge_detail_pcg_lcg(uint v) { return v * gorge_detail_pcg_lcg_multiplier + gorge_detail_pcg_lcg_increment; }
// A hash keeps the top 24 bits of a lane, scales them by 2^-23 and shifts by 1 into [-1, 1).
const uint gorge_detail_hash_mantissa_shift = 8u;
const float gorge_detail_hash_unit_scale = 1.0 / 8388608.0;  // 2^-23

// Jarzynski & Olano's pcg3d ("Hash Functions for GPU Rendering", JCGT 9(3), 2020): an LCG step per
// lane, then two rounds of lane mixing around a xorshift. uint arithmetic wraps by definition.
uvec3 gorge_detail_pcg3d_mix(uvec3 v) {
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v ^= v >> 16u;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    return v;
}
uvec3 gorge_pcg3d(uvec3 v) {
    return gorge_detail_pcg3d_mix(
        uvec3(gorge_detail_pcg_lcg(v.x), gorge_detail_pcg_lcg(v.y), gorge_detail_pcg_lcg(v.z)));
}

// Maps the top 24 bits of each lane to [-1, 1), exactly.
vec2 gorge_detail_unit_from_bits(uvec2 bits) {
    return vec2(bits >> gorge_detail_hash_mantissa_shift) * gorge_detail_hash_unit_scale - 1.0;
}

// pcg3d's split form (see GORGE_HASH_AXIS_X below): the LCG step of the x lane once per lattice
// column and of the y lane once per row; the rest of pcg3d, with the seed as the third lane, once
// per lattice point.
uint gorge_pcg3d_axis_x(uint cx, uint seed) { return gorge_detail_pcg_lcg(cx); }
uint gorge_pcg3d_axis_y(uint cy, uint seed) { return gorge_pcg3d_axis_x(cy, seed); }
vec2 gorge_pcg3d_combine(uint ax, uint ay, uint seed) {
    return gorge_detail_unit_from_bits(gorge_detail_pcg3d_mix(uvec3(ax, ay, gorge_detail_pcg_lcg(seed))).xy);
}
// pcg3d's 32-bit word of a lattice point from its split form: the first output lane (the bits of
// the x component), which perlin noise reads its table index from. Bit-identical to C++.
uint gorge_pcg3d_combine_bits(uint ax, uint ay, uint seed) {
    return gorge_detail_pcg3d_mix(uvec3(ax, ay, gorge_detail_pcg_lcg(seed))).x;
}

// pcg3d hash of the lattice point `cell` (signed coordinates reinterpreted as unsigned, so that
// neighbour offsets wrap): each component in [-1, 1) with a step of 2^-23; bit-identical to C++.
vec2 gorge_pcg3d_lattice2(uvec2 cell, uint seed) {
    return gorge_pcg3d_combine(gorge_pcg3d_axis_x(cell.x, seed), gorge_pcg3d_axis_y(cell.y, seed), seed);
}
vec2 gorge_pcg3d_hash2(ivec2 cell, uint seed) { return gorge_pcg3d_lattice2(uvec2(cell), seed); }

// prime_mix: the coordinates times two odd constants (the y product rotated by 16 bits), xored with
// the finalised seed, then a two-round multiply-xorshift finaliser (Wellons' lowbias32); one 32-bit
// result gives both components, 16 bits each. Bit-identical to C++; about half of pcg3d's multiplies.
const uint gorge_detail_prime_mix_x = 0x9E3779B1u;
const uint gorge_detail_prime_mix_y = 0x85EBCA77u;
const uint gorge_detail_prime_mix_round1 = 0x7FEB352Du;
const uint gorge_detail_prime_mix_round2 = 0x846CA68Bu;
const uint gorge_detail_prime_mix_shift1 = 16u;
const uint gorge_detail_prime_mix_shift2 = 15u;
const uint gorge_detail_prime_mix_shift3 = 16u;
const uint gorge_detail_prime_mix_half_bits = 16u;
const uint gorge_detail_prime_mix_half_mask = 0xFFFFu;
const float gorge_detail_prime_mix_unit_scale = 1.0 / 32768.0;  // 2^-15
const uint gorge_detail_prime_mix_seed_salt = 0x27D4EB2Fu;
const uint gorge_detail_prime_mix_y_rotation = 16u;  // the y product is rotated (see hash.hpp)

uint gorge_detail_prime_mix_finalise(uint h) {
    h ^= h >> gorge_detail_prime_mix_shift1;
    h *= gorge_detail_prime_mix_round1;
    h ^= h >> gorge_detail_prime_mix_shift2;
    h *= gorge_detail_prime_mix_round2;
    h ^= h >> gorge_detail_prime_mix_shift3;
    return h;
}

// The y product rotated by half a word, and the finalised seed (prime_mix and prime_xor use both).
uint gorge_detail_prime_mix_row(uint cy) {
    uint y = cy * gorge_detail_prime_mix_y;
    return (y << gorge_detail_prime_mix_y_rotation) | (y >> (32u - gorge_detail_prime_mix_y_rotation));
}
uint gorge_detail_prime_mix_seed_mask(uint seed) {
    return gorge_detail_prime_mix_finalise(seed ^ gorge_detail_prime_mix_seed_salt);
}

// The 32-bit prime_mix result from a column product ax = cx * prime_mix_x and a row product
// ay = rotl(cy * prime_mix_y, 16): finalise(ax ^ ay ^ finalise(seed ^ salt)).
uint gorge_detail_prime_mix_bits(uint ax, uint ay, uint seed) {
    return gorge_detail_prime_mix_finalise(ax ^ ay ^ gorge_detail_prime_mix_seed_mask(seed));
}

// prime_mix's components: x from the high 16 bits of h, y from the low 16.
vec2 gorge_detail_prime_mix_components(uint h) {
    return vec2(float(h >> gorge_detail_prime_mix_half_bits), float(h & gorge_detail_prime_mix_half_mask)) *
               gorge_detail_prime_mix_unit_scale - 1.0;
}

// prime_mix's split form: the coordinate products once per column and per row; combine_bits is the
// 32-bit result both components come from (and perlin noise's table index).
uint gorge_prime_mix_axis_x(uint cx, uint seed) { return cx * gorge_detail_prime_mix_x; }
uint gorge_prime_mix_axis_y(uint cy, uint seed) { return gorge_detail_prime_mix_row(cy); }
uint gorge_prime_mix_combine_bits(uint ax, uint ay, uint seed) { return gorge_detail_prime_mix_bits(ax, ay, seed); }
vec2 gorge_prime_mix_combine(uint ax, uint ay, uint seed) {
    return gorge_detail_prime_mix_components(gorge_prime_mix_combine_bits(ax, ay, seed));
}

// The 32-bit prime_mix result for the lattice point `cell` (its components' source bits).
uint gorge_prime_mix(uvec2 cell, uint seed) {
    return gorge_detail_prime_mix_bits(gorge_prime_mix_axis_x(cell.x, seed), gorge_prime_mix_axis_y(cell.y, seed),
                                       seed);
}

// prime_mix hash of the lattice point `cell`: each component in [-1, 1) with a step of 2^-15 (x from
// the high 16 bits, y from the low 16).
vec2 gorge_prime_mix_lattice2(uvec2 cell, uint seed) {
    return gorge_prime_mix_combine(gorge_prime_mix_axis_x(cell.x, seed), gorge_prime_mix_axis_y(cell.y, seed), seed);
}
vec2 gorge_prime_mix_hash2(ivec2 cell, uint seed) { return gorge_prime_mix_lattice2(uvec2(cell), seed); }

// prime_xor: the x product xored with the finalised seed and the rotated y product (prime_mix's
// constants), then one multiply and one xorshift; x from the high 16 bits read as a signed value,
// y from the low 16. Bit-identical to C++; the cheapest exact hash (one multiply per lattice point
// once the products of a row and a column are shared: its split form).
const uint gorge_detail_prime_xor_shift = 16u;
const uint gorge_detail_prime_xor_high_mask = 0xFFFF0000u;
const float gorge_detail_prime_xor_signed_scale = 1.0 / 2147483648.0;  // 2^-31

uint gorge_detail_prime_xor_mix(uint h) {
    h *= gorge_detail_prime_mix_round1;
    return h ^ (h >> gorge_detail_prime_xor_shift);
}

// prime_xor's components: x is the high 16 bits as a signed 32-bit integer times 2^-31, y the low
// 16 as in prime_mix; both exact.
vec2 gorge_detail_prime_xor_components(uint h) {
    return vec2(float(int(h & gorge_detail_prime_xor_high_mask)) * gorge_detail_prime_xor_signed_scale,
                float(h & gorge_detail_prime_mix_half_mask) * gorge_detail_prime_mix_unit_scale - 1.0);
}

// prime_xor's split form: the seed joins the column product, so a lattice point costs one multiply;
// combine_bits is the 32-bit result both components come from (and perlin noise's table index).
uint gorge_prime_xor_axis_x(uint cx, uint seed) {
    return gorge_prime_mix_axis_x(cx, seed) ^ gorge_detail_prime_mix_seed_mask(seed);
}
uint gorge_prime_xor_axis_y(uint cy, uint seed) { return gorge_prime_mix_axis_y(cy, seed); }
uint gorge_prime_xor_combine_bits(uint ax, uint ay, uint seed) { return gorge_detail_prime_xor_mix(ax ^ ay); }
vec2 gorge_prime_xor_combine(uint ax, uint ay, uint seed) {
    return gorge_detail_prime_xor_components(gorge_prime_xor_combine_bits(ax, ay, seed));
}

uint gorge_prime_xor(uvec2 cell, uint seed) {
    return gorge_detail_prime_xor_mix(gorge_prime_xor_axis_x(cell.x, seed) ^ gorge_prime_xor_axis_y(cell.y, seed));
}

// prime_xor hash of the lattice point `cell`: each component in [-1, 1) with a step of 2^-15.
vec2 gorge_prime_xor_lattice2(uvec2 cell, uint seed) {
    return gorge_prime_xor_combine(gorge_prime_xor_axis_x(cell.x, seed), gorge_prime_xor_axis_y(cell.y, seed), seed);
}
vec2 gorge_prime_xor_hash2(ivec2 cell, uint seed) { return gorge_prime_xor_lattice2(uvec2(cell), seed); }

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

// The hash policy every noise below uses (see the file's header), and its split form: the noises
// hash a lattice point as GORGE_HASH_COMBINE(GORGE_HASH_AXIS_X(cx, seed), GORGE_HASH_AXIS_Y(cy,
// seed), seed), which equals GORGE_HASH(uvec2(cx, cy), seed) bit for bit, so that the corners of a
// cell and the cells of Phacelle's window share the work of a column and of a row (as the C++
// kernels do). A hash given by GORGE_HASH alone gets identity axes and GORGE_HASH per point.
// GORGE_HASH_COMBINE_BITS(ax, ay, seed), where defined, is the 32-bit word of the same lattice
// point that GORGE_HASH_COMBINE's components come from (perlin noise's table index): defined for
// the default hash, optional beside a split form, and meaningless without one.
#if defined(GORGE_HASH_COMBINE_BITS) && !defined(GORGE_HASH_COMBINE)
#error gorge: GORGE_HASH_COMBINE_BITS needs the split form: GORGE_HASH_AXIS_X, _AXIS_Y, _COMBINE and GORGE_HASH
#endif
#if defined(GORGE_HASH_AXIS_X) || defined(GORGE_HASH_AXIS_Y) || defined(GORGE_HASH_COMBINE)
#if !defined(GORGE_HASH) || !defined(GORGE_HASH_AXIS_X) || !defined(GORGE_HASH_AXIS_Y) || !defined(GORGE_HASH_COMBINE)
#error gorge: define GORGE_HASH_AXIS_X, GORGE_HASH_AXIS_Y and GORGE_HASH_COMBINE together, and GORGE_HASH with them
#endif
#elif defined(GORGE_HASH)
#define GORGE_HASH_AXIS_X(cx, seed) (cx)
#define GORGE_HASH_AXIS_Y(cy, seed) (cy)
#define GORGE_HASH_COMBINE(ax, ay, seed) GORGE_HASH(uvec2(ax, ay), seed)
#else
#define GORGE_HASH gorge_pcg3d_lattice2
#define GORGE_HASH_AXIS_X gorge_pcg3d_axis_x
#define GORGE_HASH_AXIS_Y gorge_pcg3d_axis_y
#define GORGE_HASH_COMBINE gorge_pcg3d_combine
#define GORGE_HASH_COMBINE_BITS gorge_pcg3d_combine_bits
#endif

// ---- Gradient noise and fBm (noise.hpp) ---------------------------------------------------------

// Octave sample points are clamped to +-2^62 so that p * freq stays finite (see noise.hpp).
const float gorge_detail_lattice_coordinate_limit = 4611686018427387904.0;  // 2^62
vec2 gorge_detail_octave_point(vec2 p, float freq) {
    return clamp(p * freq, -gorge_detail_lattice_coordinate_limit, gorge_detail_lattice_coordinate_limit);
}

// The split-form axes of lattice cell c's two columns and two rows (as cell_axes does):
// (axis_x(c.x), axis_x(c.x + 1), axis_y(c.y), axis_y(c.y + 1)).
uvec4 gorge_detail_cell_axes(uvec2 c, uint seed) {
    return uvec4(GORGE_HASH_AXIS_X(c.x, seed), GORGE_HASH_AXIS_X(c.x + 1u, seed), GORGE_HASH_AXIS_Y(c.y, seed),
                 GORGE_HASH_AXIS_Y(c.y + 1u, seed));
}

// The hashes of lattice cell c's corners (0, 0), (1, 0), (0, 1) and (1, 1): the hash's column and
// row work once each, shared by the two corners on that line (as gradient_locate does).
struct gorge_detail_corner_hashes {
    vec2 a, b, c, d;
};
gorge_detail_corner_hashes gorge_detail_cell_corners(uvec2 c, uint seed) {
    uvec4 axes = gorge_detail_cell_axes(c, seed);  // x0, x1, y0, y1
    gorge_detail_corner_hashes h;
    h.a = GORGE_HASH_COMBINE(axes.x, axes.z, seed);
    h.b = GORGE_HASH_COMBINE(axes.y, axes.z, seed);
    h.c = GORGE_HASH_COMBINE(axes.x, axes.w, seed);
    h.d = GORGE_HASH_COMBINE(axes.y, axes.w, seed);
    return h;
}

// Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its first and second derivatives.
struct gorge_detail_quintic_fade {
    vec2 u;
    vec2 du;
    vec2 ddu;
};

gorge_detail_quintic_fade gorge_detail_quintic(vec2 f) {
    // u' = 30 f^2 (f - 1)^2 = 30 t^2 with t = f (f - 1).
    vec2 t = f * f - f;
    return gorge_detail_quintic_fade(f * f * f * (f * (f * 6.0 - 15.0) + 10.0), 30.0 * t * t,
                                     60.0 * f * (f * (2.0 * f - 3.0) + 1.0));
}

// Four corner quantities blended by the fade u (as blend_by_fade does): (value, d value / d u.x,
// d value / d u.y), value = lerp(lerp(va, vb, u.x), lerp(vc, vd, u.x), u.y), each lerp a + t (b - a).
// Gradient noise blends its ramps, value noise its corner values.
vec3 gorge_detail_blend_by_fade(float va, float vb, float vc, float vd, vec2 u) {
    float bottom = va + u.x * (vb - va);
    float top = vc + u.x * (vd - vc);
    return vec3(bottom + u.y * (top - bottom), (vb - va) + u.y * ((vd - vc) - (vb - va)), top - bottom);
}

// A cell's corner gradients blended by the fade u (as gradient_cell_blend_gradients does).
vec2 gorge_detail_blend_gradients(gorge_detail_corner_hashes h, vec2 u) {
    vec2 bottom = h.a + u.x * (h.b - h.a);
    vec2 top = h.c + u.x * (h.d - h.c);
    return bottom + u.y * (top - bottom);
}

// A gradient noise at the position f in its lattice cell, from the cell's corner gradients h (as
// gradient_noise_of does): (value, d/dqx, d/dqy). Gradient noise and perlin noise differ only in
// where h comes from.
vec3 gorge_detail_gradient_noise_of(vec2 f, gorge_detail_corner_hashes h) {
    gorge_detail_quintic_fade w = gorge_detail_quintic(f);

    float va = dot(h.a, f);
    float vb = dot(h.b, f - vec2(1.0, 0.0));
    float vc = dot(h.c, f - vec2(0.0, 1.0));
    float vd = dot(h.d, f - vec2(1.0, 1.0));
    vec3 r = gorge_detail_blend_by_fade(va, vb, vc, vd, w.u);
    return vec3(r.x, gorge_detail_blend_gradients(h, w.u) + w.du * r.yz);
}

// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy).
vec3 gorge_gradient_noise(vec2 q, uint seed) {
    vec2 i = floor(q);
    return gorge_detail_gradient_noise_of(q - i, gorge_detail_cell_corners(uvec2(ivec2(i)), seed));
}

// Parameters of a fractal (fBm) sum; gorge_fbm_params_default() gives the C++ defaults.
struct gorge_fbm_params {
    float frequency;   // frequency of the first octave, > 0 (default 3)
    int octaves;       // number of octaves, 0..32 (default 3)
    float lacunarity;  // frequency factor per octave, > 0 (default 2)
    float gain;        // amplitude factor per octave (default 0.1)
};

gorge_fbm_params gorge_fbm_params_default() {
    gorge_fbm_params p;
    p.frequency = 3.0;
    p.octaves = 3;
    p.lacunarity = 2.0;
    p.gain = 0.1;
    return p;
}

// Fractal sum of gradient noise with its exact gradient with respect to p.
vec3 gorge_fbm(vec2 p, gorge_fbm_params params, uint seed) {
    vec3 n = vec3(0.0);
    float freq = params.frequency;
    float amp = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        vec3 v = gorge_gradient_noise(gorge_detail_octave_point(p, freq), seed);
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
// Squared pivot distance from which the weight is certainly 0 (exp(-2 * 2.26) lies 2% below the
// floor): such cells add exactly 0 and are skipped, saving exp, sin and cos (as phacelle.hpp does).
const float gorge_detail_phacelle_skip_distance_sq = 2.26;
// Lower bound of the length the blend is divided by (keeps an exact cancellation at 0, not NaN).
const float gorge_detail_phacelle_min_length = 1e-20;
// The window: cells -1..2 around the point's cell on each axis.
const int gorge_detail_phacelle_window_side = 4;

// One window cell's wave, v the point relative to the cell's pivot, added to the sums unless its
// weight is certainly 0.
void gorge_detail_phacelle_add(vec2 v, vec2 side, float phase0, inout float weight_sum, inout vec2 sum) {
    float d2 = dot(v, v);
    if (d2 >= gorge_detail_phacelle_skip_distance_sq) return;
    float w = max(0.0, exp(-gorge_detail_phacelle_bell_falloff * d2) - gorge_detail_phacelle_weight_floor);
    float angle = dot(v, side) + phase0;
    weight_sum += w;
    sum += w * vec2(cos(angle), sin(angle));
}

#ifdef GORGE_SUBGROUPS
// The window's cells as subgroup invocations hash them: invocation k (k < 16) hashes cell
// (k % 4 - 1, k / 4 - 1); in subgroups of 8 invocation k hashes cells k and k + 8. The masks name
// the subgroup's first 16 and 8 invocations (bits of subgroupBallot).
const uint gorge_detail_phacelle_window_cells = 16u;
const uint gorge_detail_phacelle_half_window_cells = 8u;
const uint gorge_detail_phacelle_window_lanes = (1u << gorge_detail_phacelle_window_cells) - 1u;
const uint gorge_detail_phacelle_half_window_lanes = (1u << gorge_detail_phacelle_half_window_cells) - 1u;

// The window's waves, when every active invocation of the subgroup has the same window (cell c)
// and the subgroup's first 16 (or 8) invocations are active: each of those hashes one (or two)
// cells, every invocation reads the jitters from them. False (nothing added) otherwise.
bool gorge_detail_phacelle_subgroup_window(uvec2 c, vec2 f, vec2 side, float phase0, uint seed,
                                           inout float weight_sum, inout vec2 sum) {
    uint awake = subgroupBallot(true).x;  // the invocations running this call
    uint w = uint(gorge_detail_phacelle_window_side);
    // The conditions are evaluated without short-circuit branches (faster on the H200).
    bool same_window = subgroupAllEqual(c);
    if (all(bvec3(gl_SubgroupSize >= gorge_detail_phacelle_window_cells,
                  (awake & gorge_detail_phacelle_window_lanes) == gorge_detail_phacelle_window_lanes, same_window))) {
        uint k = gl_SubgroupInvocationID % gorge_detail_phacelle_window_cells;
        vec2 mine = gorge_detail_phacelle_jitter *
                    GORGE_HASH_COMBINE(GORGE_HASH_AXIS_X(c.x + k % w - 1u, seed), GORGE_HASH_AXIS_Y(c.y + k / w - 1u, seed), seed);
        for (int gj = -1; gj <= 2; ++gj) {
            for (int gi = -1; gi <= 2; ++gi) {
                vec2 jitter = subgroupShuffle(mine, uint(gj + 1) * w + uint(gi + 1));
                gorge_detail_phacelle_add(f - vec2(float(gi), float(gj)) - jitter, side, phase0, weight_sum, sum);
            }
        }
        return true;
    }
    if (all(bvec3(gl_SubgroupSize >= gorge_detail_phacelle_half_window_cells,
                  (awake & gorge_detail_phacelle_half_window_lanes) == gorge_detail_phacelle_half_window_lanes, same_window))) {
        uint k = gl_SubgroupInvocationID % gorge_detail_phacelle_half_window_cells;
        uint ax = GORGE_HASH_AXIS_X(c.x + k % w - 1u, seed);
        vec2 north = gorge_detail_phacelle_jitter * GORGE_HASH_COMBINE(ax, GORGE_HASH_AXIS_Y(c.y + k / w - 1u, seed), seed);
        vec2 south = gorge_detail_phacelle_jitter * GORGE_HASH_COMBINE(ax, GORGE_HASH_AXIS_Y(c.y + k / w + 1u, seed), seed);
        // Rows -1 and 0 from `north`, rows 1 and 2 from `south` (two loops: a select per cell is slower).
        for (int gj = -1; gj <= 0; ++gj) {
            for (int gi = -1; gi <= 2; ++gi) {
                vec2 jitter = subgroupShuffle(north, uint(gj + 1) * w + uint(gi + 1));
                gorge_detail_phacelle_add(f - vec2(float(gi), float(gj)) - jitter, side, phase0, weight_sum, sum);
            }
        }
        for (int gj_south = 1; gj_south <= 2; ++gj_south) {
            for (int gi = -1; gi <= 2; ++gi) {
                vec2 jitter = subgroupShuffle(south, uint(gj_south - 1) * w + uint(gi + 1));
                gorge_detail_phacelle_add(f - vec2(float(gi), float(gj_south)) - jitter, side, phase0, weight_sum, sum);
            }
        }
        return true;
    }
    return false;
}
#endif

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
#ifdef GORGE_SUBGROUPS
    if (!gorge_detail_phacelle_subgroup_window(c, f, side, phase0, seed, weight_sum, sum))
#endif
    {
        // The hash's work for each window column and row is done once (its split form); neighbour
        // offsets are added as uint, so they wrap.
        uint column[gorge_detail_phacelle_window_side];
        uint row[gorge_detail_phacelle_window_side];
        for (int g = -1; g <= 2; ++g) {
            column[g + 1] = GORGE_HASH_AXIS_X(c.x + uint(g), seed);
            row[g + 1] = GORGE_HASH_AXIS_Y(c.y + uint(g), seed);
        }
        for (int gj = -1; gj <= 2; ++gj) {
            for (int gi = -1; gi <= 2; ++gi) {
                vec2 cell_offset = vec2(float(gi), float(gj));
                vec2 jitter = gorge_detail_phacelle_jitter * GORGE_HASH_COMBINE(column[gi + 1], row[gj + 1], seed);
                gorge_detail_phacelle_add(f - cell_offset - jitter, side, phase0, weight_sum, sum);  // relative to the pivot
            }
        }
    }
    vec2 m = sum / weight_sum;
    float len = max(max(1.0 - normalization, length(m)), gorge_detail_phacelle_min_length);
    return gorge_phacelle_result(m / len, side);
}

// ---- Erosion filter (erosion_filter.hpp) --------------------------------------------------------

// The steering slope is clamped to +-float max / 16 per component (keeps it finite).
const float gorge_detail_steering_slope_divisor = 16.0;

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
    gorge_erosion_params p;
    p.scale = 0.15;
    p.strength = 0.22;
    p.gully_weight = 0.5;
    p.detail = 1.5;
    p.rounding = vec4(0.1, 0.0, 0.1, 2.0);
    p.onset = vec4(1.25, 1.25, 2.8, 1.5);
    p.assumed_slope = vec2(0.7, 1.0);
    p.octaves = 5;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.cell_scale = 0.7;
    p.normalization = 0.5;
    return p;
}

struct gorge_erosion_result {
    float height_delta;  // eroded height minus input height
    vec2 slope_delta;    // eroded gradient minus input gradient (approximate by design)
    float magnitude;     // sum of |octave strength|; |height_delta| <= magnitude * max(1, |gully_weight|)
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
    float slope_len = max(gorge_detail_overflow_free_length(slope), gorge_detail_safe_normalize_min_length);

    // Initial mask: no gullies where the input is flat; rounded peaks and valleys of the input.
    float input_rounding = gorge_detail_mix(crease_rounding, ridge_rounding, gorge_detail_saturate(fade + 0.5)) *
                           params.rounding.z;
    float mask = gorge_detail_ease_out(gorge_detail_smooth_start(slope_len * params.onset.x,
                                                                 input_rounding * params.onset.x));
    float ridge_mask = gorge_detail_ease_out(slope_len * params.onset.z);
    float ridge_fade = fade;

    // Gully steering slope: the real slope direction with an assumed magnitude, written as
    // slope (1 - amount) + direction value amount (the mix cancels catastrophically on steep slopes).
    float steer_limit = gorge_detail_float_max / gorge_detail_steering_slope_divisor;
    vec2 steer = clamp(slope, -steer_limit, steer_limit);
    vec2 g = steer * (1.0 - params.assumed_slope.y) +
             slope / slope_len * (params.assumed_slope.x * params.assumed_slope.y);

    // The deltas are accumulated from zero (subtracting the input at the end loses them in float).
    vec3 result = vec3(0.0);
    float magnitude = 0.0;
    float rounding_mult = 1.0;
    for (int octave = 0; octave < params.octaves; ++octave) {
        // Normalized gullies: Phacelle's normalization keeps the stripes' depth where cells disagree.
        gorge_phacelle_result ph = gorge_phacelle(gorge_detail_octave_point(p, freq),
                                                  gorge_detail_overflow_free_normalize(g), params.cell_scale,
                                                  0.25, params.normalization, seed);
        float c = ph.phase.x, sn = ph.phase.y;
        vec2 side = ph.side * (-freq);  // back to p units; negative so slopes point downhill

        // Straight gullies: steer by the sign of the sine, not the sine itself.
        g += sign(sn) * side * (s * params.gully_weight);

        // Stacked fades: fade from the previous profile (fade, flat) towards this octave's gully.
        vec3 gully = vec3(c, sn * side.x, sn * side.y);
        vec3 faded = gorge_detail_mix(vec3(fade, 0.0, 0.0), gully * params.gully_weight, mask);
        result += faded * s;
        magnitude += abs(s);
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

    return gorge_erosion_result(result.x, result.yz, magnitude, ridge_fade * (1.0 - ridge_mask), fade);
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

// ================================================================================================
// Noise fields (noise.hpp seeds and second derivatives, value_noise.hpp, simplex.hpp,
// perlin_noise.hpp, fractal.hpp, field.hpp, island.hpp). GLSL has no templates or closures, so two
// things read differently:
//  - the basis policy of the fractals is an int argument (gorge_basis_gradient, gorge_basis_value,
//    gorge_basis_simplex, gorge_basis_perlin); pass a constant and the compiler folds the choice
//    away;
//  - field combinators are functions on vec3 (value, d/dx, d/dy) samples the caller has already
//    evaluated, and the domain warp is a small state (gorge_warp) stepped by the caller's loop.
// ================================================================================================

// ---- Seeds (noise.hpp) --------------------------------------------------------------------------

// Third pcg3d lane of derive_seed: a fixed odd constant (the 32-bit golden ratio).
const uint gorge_detail_derive_seed_salt = 0x9E3779B9u;

// An independent seed for stream `stream` of `seed`: the first lane of pcg3d(seed, stream, salt).
// Bit-identical to gorge::derive_seed (whatever GORGE_HASH says: it is always pcg3d).
uint gorge_derive_seed(uint seed, uint stream) {
    return gorge_pcg3d(uvec3(seed, stream, gorge_detail_derive_seed_salt)).x;
}

// ---- Second derivatives (noise.hpp) -------------------------------------------------------------

// A noise sample with first and second derivatives.
struct gorge_noise_d2 {
    float value;
    vec2 gradient;
    float dxx;
    float dxy;
    float dyy;
};

// gorge_detail_gradient_noise_of() with its Hessian (as gradient_noise_d2_of does).
gorge_noise_d2 gorge_detail_gradient_noise_d2_of(vec2 f, gorge_detail_corner_hashes h) {
    gorge_detail_quintic_fade w = gorge_detail_quintic(f);

    vec2 ga = h.a, gb = h.b, gc = h.c, gd = h.d;

    float va = dot(ga, f);
    float vb = dot(gb, f - vec2(1.0, 0.0));
    float vc = dot(gc, f - vec2(0.0, 1.0));
    float vd = dot(gd, f - vec2(1.0, 1.0));
    float k = va - vb - vc + vd;
    vec2 ga_ = gb - ga, gb_ = gc - ga, gk = ga - gb - gc + gd;

    vec3 r = gorge_detail_blend_by_fade(va, vb, vc, vd, w.u);

    gorge_noise_d2 n;
    n.value = r.x;
    n.gradient = gorge_detail_blend_gradients(h, w.u) + w.du * r.yz;
    n.dxx = 2.0 * w.du.x * (ga_.x + w.u.y * gk.x) + w.ddu.x * r.y;
    n.dyy = 2.0 * w.du.y * (gb_.y + w.u.x * gk.y) + w.ddu.y * r.z;
    n.dxy = w.du.x * (ga_.y + w.u.y * gk.y) + w.du.y * (gb_.x + w.u.x * gk.x) + w.du.x * w.du.y * k;
    return n;
}

// gorge_gradient_noise() with its Hessian.
gorge_noise_d2 gorge_gradient_noise_d2(vec2 q, uint seed) {
    vec2 i = floor(q);
    return gorge_detail_gradient_noise_d2_of(q - i, gorge_detail_cell_corners(uvec2(ivec2(i)), seed));
}

// ---- Value noise (value_noise.hpp) --------------------------------------------------------------

// Quintic value noise and its Hessian; the lattice values are the hash's x components.
gorge_noise_d2 gorge_value_noise_d2(vec2 q, uint seed) {
    vec2 i = floor(q);
    vec2 f = q - i;
    uvec2 c = uvec2(ivec2(i));
    gorge_detail_quintic_fade w = gorge_detail_quintic(f);

    gorge_detail_corner_hashes h = gorge_detail_cell_corners(c, seed);
    float a = h.a.x, b = h.b.x, cc = h.c.x, d = h.d.x;
    vec3 r = gorge_detail_blend_by_fade(a, b, cc, d, w.u);

    gorge_noise_d2 n;
    n.value = r.x;
    n.gradient = w.du * r.yz;
    n.dxx = w.ddu.x * r.y;
    n.dyy = w.ddu.y * r.z;
    n.dxy = w.du.x * w.du.y * (a - b - cc + d);
    return n;
}

// Quintic value noise at q: (value, d/dqx, d/dqy), value in [-1, 1).
vec3 gorge_value_noise(vec2 q, uint seed) {
    gorge_noise_d2 n = gorge_value_noise_d2(q, seed);
    return vec3(n.value, n.gradient);
}

// ---- Simplex noise (simplex.hpp) ----------------------------------------------------------------

// Skew F2 = (sqrt(3) - 1) / 2, unskew G2 = (3 - sqrt(3)) / 6, far corner 2 G2 - 1 (each rounded
// once from its exact value, as in C++), kernel radius^2 1/2, output scale 70.
const float gorge_detail_simplex_skew = 0.36602540378443864676;
const float gorge_detail_simplex_unskew = 0.21132486540518711775;
const float gorge_detail_simplex_far = -0.57735026918962576451;
const float gorge_detail_simplex_radius_sq = 0.5;
const float gorge_detail_simplex_scale = 70.0;

// Adds one corner's kernel t^4 (g . x), its gradient and Hessian to n (unscaled).
void gorge_detail_simplex_corner(inout gorge_noise_d2 n, vec2 x, vec2 g) {
    float t = max(gorge_detail_simplex_radius_sq - dot(x, x), 0.0);
    float t2 = t * t, t3 = t2 * t, t4 = t2 * t2;
    float gx = dot(g, x);
    n.value += t4 * gx;
    n.gradient += t4 * g - (8.0 * t3 * gx) * x;
    float c3 = 8.0 * t3, c2 = 48.0 * t2 * gx;
    n.dxx += -c3 * (2.0 * g.x * x.x + gx) + c2 * x.x * x.x;
    n.dyy += -c3 * (2.0 * g.y * x.y + gx) + c2 * x.y * x.y;
    n.dxy += -c3 * (g.x * x.y + g.y * x.x) + c2 * x.x * x.y;
}

// 2D simplex noise (Perlin 2001, Gustavson's formulation) and its Hessian.
gorge_noise_d2 gorge_simplex_noise_d2(vec2 q, uint seed) {
    float skew = (q.x + q.y) * gorge_detail_simplex_skew;
    vec2 cell = floor(vec2(q.x + skew, q.y + skew));
    float unskew = (cell.x + cell.y) * gorge_detail_simplex_unskew;
    vec2 x0 = q - (cell - vec2(unskew, unskew));

    float step_x = x0.x > x0.y ? 1.0 : 0.0;
    float step_y = 1.0 - step_x;
    vec2 x1 = x0 - vec2(step_x, step_y) + vec2(gorge_detail_simplex_unskew, gorge_detail_simplex_unskew);
    vec2 x2 = x0 + vec2(gorge_detail_simplex_far, gorge_detail_simplex_far);

    uvec2 c = uvec2(ivec2(cell));
    uvec2 middle = uvec2(ivec2(step_x, step_y));

    gorge_noise_d2 n = gorge_noise_d2(0.0, vec2(0.0), 0.0, 0.0, 0.0);
    gorge_detail_simplex_corner(n, x0, GORGE_HASH(c, seed));
    gorge_detail_simplex_corner(n, x1, GORGE_HASH(c + middle, seed));
    gorge_detail_simplex_corner(n, x2, GORGE_HASH(c + uvec2(1u, 1u), seed));

    float s = gorge_detail_simplex_scale;
    n.value *= s;
    n.gradient = n.gradient * s;
    n.dxx *= s;
    n.dxy *= s;
    n.dyy *= s;
    return n;
}

// 2D simplex noise at q: (value, d/dqx, d/dqy), |value| < 0.998.
vec3 gorge_simplex_noise(vec2 q, uint seed) {
    gorge_noise_d2 n = gorge_simplex_noise_d2(q, seed);
    return vec3(n.value, n.gradient);
}

// ---- Perlin noise (perlin_noise.hpp) ------------------------------------------------------------
// Gradient noise whose corner gradients are 8 unit directions, at 22.5 + 45 k degrees, picked by
// the top 3 bits of the corner's 32-bit hash word (Perlin's fixed gradient set, "Improving Noise",
// 2002): the same fade, ramps, value, gradient and Hessian as gorge_gradient_noise, |value| < 1.
// The word is GORGE_HASH_COMBINE_BITS, the program's hash: where the C++ perlin_basis<> defaults
// to prime_xor_hash, this file defaults to pcg3d like every other noise here (define prime_xor's
// split form and gorge_prime_xor_combine_bits to get the C++ default's field). The table index is
// integer arithmetic, bit-identical to C++ for the same hash; value and derivatives agree with the
// C++ float path as gradient noise's do. Perlin noise needs an exact integer hash: with the
// shadertoy hash (no bits to pick from) or a GORGE_HASH without GORGE_HASH_COMBINE_BITS it is not
// declared (C++ refuses perlin_noise<shadertoy_hash> with a static_assert likewise).

#ifdef GORGE_HASH_COMBINE_BITS

// The gradient index is the top perlin_direction_bits of the hash word.
const uint gorge_detail_perlin_direction_bits = 3u;
const uint gorge_detail_perlin_direction_shift = 32u - gorge_detail_perlin_direction_bits;

// Unit directions at 22.5 + 45 k degrees, k = 0..7, as the nearest floats (cos 22.5 degrees and
// sin 22.5 degrees = 0.92387953 and 0.38268343): no direction lies on an axis or a diagonal.
const float gorge_detail_perlin_directions_x[8] = float[8](0.92387953, 0.38268343, -0.38268343, -0.92387953,
                                                           -0.92387953, -0.38268343, 0.38268343, 0.92387953);
const float gorge_detail_perlin_directions_y[8] = float[8](0.38268343, 0.92387953, 0.92387953, 0.38268343,
                                                           -0.38268343, -0.92387953, -0.92387953, -0.38268343);

// The table index of the lattice point whose split-form lanes are ax and ay: the top
// perlin_direction_bits of GORGE_HASH_COMBINE_BITS(ax, ay, seed). (For prime_xor these are the top
// bits of its multiply, which C++ reads before the closing xorshift: the same bits.)
uint gorge_detail_perlin_direction_index(uint ax, uint ay, uint seed) {
    return GORGE_HASH_COMBINE_BITS(ax, ay, seed) >> gorge_detail_perlin_direction_shift;
}

// The corner gradient of that lattice point: the table direction of its index.
vec2 gorge_detail_table_gradients_pick(uint ax, uint ay, uint seed) {
    uint k = gorge_detail_perlin_direction_index(ax, ay, seed);
    return vec2(gorge_detail_perlin_directions_x[k], gorge_detail_perlin_directions_y[k]);
}

// The table gradients of lattice cell c's corners (0, 0), (1, 0), (0, 1) and (1, 1): the hash's
// column and row work once each (gorge_detail_cell_axes), as in gorge_detail_cell_corners.
gorge_detail_corner_hashes gorge_detail_table_gradients_corners(uvec2 c, uint seed) {
    uvec4 axes = gorge_detail_cell_axes(c, seed);  // x0, x1, y0, y1
    gorge_detail_corner_hashes h;
    h.a = gorge_detail_table_gradients_pick(axes.x, axes.z, seed);
    h.b = gorge_detail_table_gradients_pick(axes.y, axes.z, seed);
    h.c = gorge_detail_table_gradients_pick(axes.x, axes.w, seed);
    h.d = gorge_detail_table_gradients_pick(axes.y, axes.w, seed);
    return h;
}

// Perlin noise at q with its analytic gradient: (value, d/dqx, d/dqy), |value| < 1. At a lattice
// point the value is 0 and the gradient is the point's table direction exactly.
vec3 gorge_perlin_noise(vec2 q, uint seed) {
    vec2 i = floor(q);
    return gorge_detail_gradient_noise_of(q - i, gorge_detail_table_gradients_corners(uvec2(ivec2(i)), seed));
}

// gorge_perlin_noise() with its Hessian (exact and continuous: the noise is C2).
gorge_noise_d2 gorge_perlin_noise_d2(vec2 q, uint seed) {
    vec2 i = floor(q);
    return gorge_detail_gradient_noise_d2_of(q - i, gorge_detail_table_gradients_corners(uvec2(ivec2(i)), seed));
}

#else
// No hash word to pick directions by: naming perlin noise is a compile error that says why.
#define gorge_perlin_noise gorge_perlin_noise_needs_an_exact_integer_hash_with_GORGE_HASH_COMBINE_BITS
#define gorge_perlin_noise_d2 gorge_perlin_noise_d2_needs_an_exact_integer_hash_with_GORGE_HASH_COMBINE_BITS
#define gorge_basis_perlin gorge_basis_perlin_needs_an_exact_integer_hash_with_GORGE_HASH_COMBINE_BITS
#endif

// ---- Basis selection (the basis policies of noise.hpp, value_noise.hpp, simplex.hpp,
// perlin_noise.hpp) -------------------------------------------------------------------------------
// An id that names no basis (3 as well, where perlin noise is not declared) selects gradient noise.

const int gorge_basis_gradient = 0;  // quintic gradient noise (C++ gradient_basis)
const int gorge_basis_value = 1;     // quintic value noise (value_basis)
const int gorge_basis_simplex = 2;   // 2D simplex noise (simplex_basis)
#ifdef GORGE_HASH_COMBINE_BITS
// Perlin noise (perlin_basis, with the program's hash: see "Perlin noise"); declared only where
// perlin noise is.
const int gorge_basis_perlin = 3;
#endif

vec3 gorge_basis_eval(int basis, vec2 q, uint seed) {
    if (basis == gorge_basis_value) return gorge_value_noise(q, seed);
    if (basis == gorge_basis_simplex) return gorge_simplex_noise(q, seed);
#ifdef GORGE_HASH_COMBINE_BITS
    if (basis == gorge_basis_perlin) return gorge_perlin_noise(q, seed);
#endif
    return gorge_gradient_noise(q, seed);
}

gorge_noise_d2 gorge_basis_eval_d2(int basis, vec2 q, uint seed) {
    if (basis == gorge_basis_value) return gorge_value_noise_d2(q, seed);
    if (basis == gorge_basis_simplex) return gorge_simplex_noise_d2(q, seed);
#ifdef GORGE_HASH_COMBINE_BITS
    if (basis == gorge_basis_perlin) return gorge_perlin_noise_d2(q, seed);
#endif
    return gorge_gradient_noise_d2(q, seed);
}

// ---- Fractals (fractal.hpp) ---------------------------------------------------------------------
// Octave o samples the basis at freq_o p with seed gorge_derive_seed(seed, o).

// fBm over any basis with per-octave seeds.
vec3 gorge_fractal_sum(vec2 p, gorge_fbm_params params, int basis, uint seed) {
    vec3 n = vec3(0.0);
    float freq = params.frequency;
    float amp = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        vec3 v = gorge_basis_eval(basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, uint(o)));
        n += amp * vec3(v.x, freq * v.y, freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}

// Billow: sum of amp_o |basis|; creases where an octave crosses 0 (gradient there uses sign(0) = 0).
vec3 gorge_billow(vec2 p, gorge_fbm_params params, int basis, uint seed) {
    vec3 n = vec3(0.0);
    float freq = params.frequency;
    float amp = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        vec3 v = gorge_basis_eval(basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, uint(o)));
        float s = sign(v.x);
        n += amp * vec3(abs(v.x), s * freq * v.y, s * freq * v.z);
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return n;
}

// Parameters of gorge_ridged(); gorge_ridged_params_default() gives the C++ defaults.
struct gorge_ridged_params {
    float frequency;   // > 0 (default 1)
    int octaves;       // 0..32 (default 6)
    float lacunarity;  // > 0 (default 2)
    float gain;        // (default 0.5)
    float offset;      // ridge height before squaring (default 1)
    float feedback;    // >= 0, how strongly an octave gates the next (default 2)
};

gorge_ridged_params gorge_ridged_params_default() {
    gorge_ridged_params p;
    p.frequency = 1.0;
    p.octaves = 6;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.offset = 1.0;
    p.feedback = 2.0;
    return p;
}

// Musgrave's ridged multifractal with the exact gradient (chain rule through the weights).
vec3 gorge_ridged(vec2 p, gorge_ridged_params params, int basis, uint seed) {
    float value = 0.0;
    vec2 grad = vec2(0.0);
    float weight = 1.0;
    vec2 weight_grad = vec2(0.0);
    float freq = params.frequency;
    float amp = 1.0;
    for (int o = 0; o < params.octaves; ++o) {
        vec3 v = gorge_basis_eval(basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, uint(o)));
        float ridge = params.offset - abs(v.x);
        vec2 ridge_grad = v.yz * (-sign(v.x) * freq);
        float signal = ridge * ridge * weight;
        vec2 signal_grad = (2.0 * ridge * weight) * ridge_grad + (ridge * ridge) * weight_grad;
        value += amp * signal;
        grad += amp * signal_grad;
        float gated = signal * params.feedback;
        weight = min(gated, 1.0);
        weight_grad = (gated < 1.0 ? params.feedback : 0.0) * signal_grad;
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return vec3(value, grad);
}

// Parameters of gorge_damped_fbm(); gorge_damped_fbm_params_default() gives the C++ defaults.
struct gorge_damped_fbm_params {
    float frequency;   // > 0 (default 1)
    int octaves;       // 0..32 (default 6)
    float lacunarity;  // > 0 (default 2)
    float gain;        // (default 0.5)
    float damping;     // >= 0, strength c of 1 / (1 + c |D|^2) (default 1)
};

gorge_damped_fbm_params gorge_damped_fbm_params_default() {
    gorge_damped_fbm_params p;
    p.frequency = 1.0;
    p.octaves = 6;
    p.lacunarity = 2.0;
    p.gain = 0.5;
    p.damping = 1.0;
    return p;
}

// Derivative-damped fBm after Inigo Quilez, with the exact gradient (damping's derivative included).
vec3 gorge_damped_fbm(vec2 p, gorge_damped_fbm_params params, int basis, uint seed) {
    float value = 0.0;
    vec2 grad = vec2(0.0);
    vec2 d = vec2(0.0);
    float jxx = 0.0, jxy = 0.0, jyy = 0.0;
    float freq = params.frequency;
    float amp = 1.0;
    float c = params.damping;
    for (int o = 0; o < params.octaves; ++o) {
        gorge_noise_d2 n = gorge_basis_eval_d2(basis, gorge_detail_octave_point(p, freq), gorge_derive_seed(seed, uint(o)));
        d += n.gradient;
        jxx += freq * n.dxx;
        jxy += freq * n.dxy;
        jyy += freq * n.dyy;
        float inv = 1.0 / (1.0 + c * dot(d, d));
        vec2 grad_d2 = vec2(2.0 * (jxx * d.x + jxy * d.y), 2.0 * (jxy * d.x + jyy * d.y));
        value += amp * n.value * inv;
        grad += amp * (n.gradient * (freq * inv) - grad_d2 * (n.value * c * inv * inv));
        freq *= params.lacunarity;
        amp *= params.gain;
    }
    return vec3(value, grad);
}

// ---- Field combinators (field.hpp) --------------------------------------------------------------
// On samples v = (value, d/dx, d/dy) already evaluated at the same p; each keeps the gradient exact.

vec3 gorge_sum(vec3 a, vec3 b) { return a + b; }
vec3 gorge_scale(vec3 v, float factor) { return v * factor; }
vec3 gorge_offset(vec3 v, float constant) { return vec3(v.x + constant, v.y, v.z); }

// a * b by the product rule.
vec3 gorge_product(vec3 a, vec3 b) { return vec3(a.x * b.x, a.y * b.x + a.x * b.y, a.z * b.x + a.x * b.z); }

// clamp(v, lo, hi); the gradient is 0 where the clamp is active.
vec3 gorge_clamped(vec3 v, float lo, float hi) {
    float keep = v.x > lo ? (v.x < hi ? 1.0 : 0.0) : 0.0;
    return vec3(clamp(v.x, lo, hi), v.y * keep, v.z * keep);
}

// A profile g applied to the value: g = (g(v.x), g'(v.x)), e.g. from gorge_power_profile.
vec3 gorge_apply_profile(vec3 v, vec2 g) { return vec3(g.x, g.y * v.y, g.y * v.z); }

// Domain transform f(M p + t): evaluate f at gorge_transform_point(m, t, p), then pass the sample
// through gorge_transform_gradient(m, v) (gradient M^T grad f). mat2 is column-major as in glm.
vec2 gorge_transform_point(mat2 m, vec2 t, vec2 p) {
    return vec2(m[0][0] * p.x + m[1][0] * p.y + t.x, m[0][1] * p.x + m[1][1] * p.y + t.y);
}
vec3 gorge_transform_gradient(mat2 m, vec3 v) {
    return vec3(v.x, m[0][0] * v.y + m[0][1] * v.z, m[1][0] * v.y + m[1][1] * v.z);
}

// Domain warp f(p_n), p_0 = p, p_{k+1} = p + s (wx(p_k), wy(p_k)), with its exact gradient
// J_n^T grad f(p_n). Without closures the caller runs the loop:
//     gorge_warp w = gorge_warp_begin(p);
//     for (int k = 0; k < iterations; ++k)
//         w = gorge_warp_step(w, p, wx_field(w.q), wy_field(w.q), strength);
//     vec3 result = gorge_warp_end(w, f_field(w.q));
struct gorge_warp {
    vec2 q;                     // current warped point p_k
    float jxx, jxy, jyx, jyy;   // J = dq/dp; rows are the gradients of q.x and q.y
};

gorge_warp gorge_warp_begin(vec2 p) { return gorge_warp(p, 1.0, 0.0, 0.0, 1.0); }

gorge_warp gorge_warp_step(gorge_warp w, vec2 p, vec3 a, vec3 b, float s) {
    float nxx = w.jxx * a.y + w.jyx * a.z, nxy = w.jxy * a.y + w.jyy * a.z;
    float nyx = w.jxx * b.y + w.jyx * b.z, nyy = w.jxy * b.y + w.jyy * b.z;
    return gorge_warp(vec2(p.x + s * a.x, p.y + s * b.x), 1.0 + s * nxx, s * nxy, s * nyx, 1.0 + s * nyy);
}

vec3 gorge_warp_end(gorge_warp w, vec3 v) {
    return vec3(v.x, w.jxx * v.y + w.jyx * v.z, w.jxy * v.y + w.jyy * v.z);
}

// ---- Island shaping (island.hpp) ----------------------------------------------------------------

// Redistribution sign(e) |e|^k and its slope k |e|^(k - 1) (0 at e = 0 unless k = 1). GLSL's pow
// is undefined at 0, so e = 0 is spelt out (C++ gets the same 0 from sign(0)). Both saturate at
// the largest finite float where they would overflow (|e| > 1 with k > 1; k < 1 at subnormal |e|);
// at subnormal |e| the slope is (|e| 2^24)^(k - 1) 2^(24 (1 - k)), 24 being float's digits, so it
// is not lost to an overflow of |e|^(k - 1) where it is finite itself. A device may flush subnormals to zero: the lifted base is
// then kept at the smallest normal float, so pow never sees 0 with a negative exponent.
const float gorge_detail_float_digits = 24.0;
const float gorge_detail_subnormal_lift = 16777216.0;  // 2^24
vec2 gorge_power_profile(float e, float exponent) {
    float a = abs(e);
    bool positive = a > 0.0;
    bool subnormal = a < gorge_detail_float_min_normal;
    float base = max(subnormal ? a * gorge_detail_subnormal_lift : a, gorge_detail_float_min_normal);
    float unlift = subnormal ? exp2(gorge_detail_float_digits * (1.0 - exponent)) : 1.0;
    float slope = min(exponent * pow(base, exponent - 1.0) * unlift, gorge_detail_float_max);
    float slope_at_zero = exponent == 1.0 ? 1.0 : 0.0;
    return vec2(positive ? sign(e) * min(pow(a, exponent), gorge_detail_float_max) : 0.0,
                positive ? slope : slope_at_zero);
}

// Smooth terraces: `steps` treads per unit, risers taking the fraction `ramp` in (0, 1].
vec2 gorge_terrace_profile(float e, float steps, float ramp) {
    float t = e * steps;
    float i = floor(t);
    float f = t - i;
    float x = gorge_detail_saturate((f - (1.0 - ramp)) / ramp);
    return vec2((i + x * x * (3.0 - 2.0 * x)) / steps, 6.0 * x * (1.0 - x) / ramp);
}

vec3 gorge_redistribute(vec3 v, float exponent) { return gorge_apply_profile(v, gorge_power_profile(v.x, exponent)); }
vec3 gorge_terrace(vec3 v, float steps, float ramp) { return gorge_apply_profile(v, gorge_terrace_profile(v.x, steps, ramp)); }

// d = min(1, |n|) with its gradient (0 outside the unit circle and at the centre).
vec3 gorge_radial_distance(vec2 n) {
    float r = length(n);
    float inv_r = 1.0 / (r > 0.0 ? r : 1.0);
    float slope = r < 1.0 ? (r > 0.0 ? inv_r : 0.0) : 0.0;
    return vec3(min(r, 1.0), n.x * slope, n.y * slope);
}

// d = 1 - (1 - nx^2)(1 - ny^2), n clamped to [-1, 1]^2, with its gradient (0 outside the square).
vec3 gorge_square_bump_distance(vec2 n) {
    float x = clamp(n.x, -1.0, 1.0), y = clamp(n.y, -1.0, 1.0);
    float ax = 1.0 - x * x, ay = 1.0 - y * y;
    float kx = abs(n.x) < 1.0 ? 1.0 : 0.0;
    float ky = abs(n.y) < 1.0 ? 1.0 : 0.0;
    return vec3(1.0 - ax * ay, 2.0 * x * ay * kx, 2.0 * y * ax * ky);
}

const int gorge_falloff_radial = 0;       // round islands
const int gorge_falloff_square_bump = 1;  // fills a square map

struct gorge_falloff_params {
    vec2 centre;     // island centre in p units (default (0, 0))
    float radius;    // p distance mapped to |n| = 1, > 0 with 1 / radius <= ~3.2e32 (default 1)
    int shape;       // gorge_falloff_radial or gorge_falloff_square_bump (default radial)
    float amount;    // 0..1, how far e is pulled towards 1 - d (default 0.75)
};

gorge_falloff_params gorge_falloff_params_default() {
    gorge_falloff_params p;
    p.centre = vec2(0.0);
    p.radius = 1.0;
    p.shape = gorge_falloff_radial;
    p.amount = 0.75;
    return p;
}

// mix(e, 1 - d(n), amount) with n = (p - centre) / radius; e is the field sampled at p. n is
// clamped to [-2, 2]^2, which changes no result (both distances are 1 with gradient 0 wherever
// some |n_i| >= 1) and keeps it finite where (p - centre) / radius overflows.
const float gorge_detail_falloff_n_limit = 2.0;
vec3 gorge_island_falloff(vec3 e, vec2 p, gorge_falloff_params params) {
    float inv_radius = 1.0 / params.radius;
    vec2 n = clamp(vec2((p.x - params.centre.x) * inv_radius, (p.y - params.centre.y) * inv_radius),
                   -gorge_detail_falloff_n_limit, gorge_detail_falloff_n_limit);
    vec3 d = params.shape == gorge_falloff_radial ? gorge_radial_distance(n) : gorge_square_bump_distance(n);
    float m = params.amount;
    float keep = 1.0 - m;
    return vec3(keep * e.x + m * (1.0 - d.x), keep * e.y - m * d.y * inv_radius, keep * e.z - m * d.z * inv_radius);
}

// Seed streams of the island recipe.
const uint gorge_island_stream_height = 0u;
const uint gorge_island_stream_warp_x = 1u;
const uint gorge_island_stream_warp_y = 2u;
const uint gorge_island_stream_moisture = 3u;

// Parameters of the island recipe, field for field gorge::island_params (warp_params flattened).
// Nothing is checked here: keep to what gorge::island_params<float> accepts (its ranges and its
// derived limits on warp strength, contrast, exponent and radius), under which the C++ recipe is
// finite for every finite p (fuzz-tested); this one computes the same formulas.
struct gorge_island_params {
    gorge_fbm_params terrain;      // (default frequency 2, 6 octaves, lacunarity 2, gain 0.5)
    gorge_fbm_params warp_noise;   // (default 1.5, 4, 2, 0.5)
    float warp_strength;           // (default 0.35)
    int warp_iterations;           // 0..16 (default 1)
    float contrast;                // e = sat(0.5 + contrast * fBm), > 0 (default 1.5)
    float exponent;                // redistribution k, > 0 (default 1.8)
    gorge_falloff_params falloff;  // (default radial, amount 0.75)
    gorge_fbm_params moisture;     // (default 1.5, 4, 2, 0.5)
    float sea_level;               // 0..1 (default 0.3; not used by the fields)
};

gorge_island_params gorge_island_params_default() {
    gorge_island_params p;
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
vec3 gorge_island_height(vec2 p, gorge_island_params params, int basis, uint seed) {
    uint terrain_seed = gorge_derive_seed(seed, gorge_island_stream_height);
    uint wx_seed = gorge_derive_seed(seed, gorge_island_stream_warp_x);
    uint wy_seed = gorge_derive_seed(seed, gorge_island_stream_warp_y);
    gorge_warp w = gorge_warp_begin(p);
    for (int k = 0; k < params.warp_iterations; ++k) {
        w = gorge_warp_step(w, p, gorge_fractal_sum(w.q, params.warp_noise, basis, wx_seed),
                            gorge_fractal_sum(w.q, params.warp_noise, basis, wy_seed), params.warp_strength);
    }
    vec3 warped = gorge_warp_end(w, gorge_fractal_sum(w.q, params.terrain, basis, terrain_seed));
    vec3 e = gorge_clamped(gorge_offset(gorge_scale(warped, params.contrast), 0.5), 0.0, 1.0);
    return gorge_island_falloff(gorge_redistribute(e, params.exponent), p, params.falloff);
}

// Moisture in [0, 1] from the same seed, independent of the height field.
vec3 gorge_island_moisture(vec2 p, gorge_island_params params, int basis, uint seed) {
    vec3 m = gorge_fractal_sum(p, params.moisture, basis, gorge_derive_seed(seed, gorge_island_stream_moisture));
    return gorge_clamped(gorge_offset(gorge_scale(m, params.contrast), 0.5), 0.0, 1.0);
}

#endif  // GORGE_GLSL
