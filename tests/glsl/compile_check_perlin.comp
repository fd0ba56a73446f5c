#version 450
// Names perlin noise, which gorge.glsl declares only where the hash gives its 32-bit word
// (GORGE_HASH_COMBINE_BITS): it compiles with the default hash and with an exact hash's split form
// that names its combine bits; with the shadertoy hash the compile must stop, naming what perlin
// noise needs (ctest's glsl_compile_rejects_perlin_shadertoy).
#extension GL_GOOGLE_include_directive : require
#include "gorge.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Output { vec4 values[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    vec2 p = vec2(float(i) * 0.01, 0.5);
    gorge_noise_d2 n = gorge_perlin_noise_d2(p, i);
    vec3 v = gorge_perlin_noise(p, i) + gorge_fractal_sum(p, gorge_fbm_params_default(), gorge_basis_perlin, i);
    values[i] = vec4(v, n.dxy);
}
