// Body shared by the compile checks: touches every public function of gorge.glsl so that the
// compiler type-checks (and, for SPIR-V targets, generates code for) the whole include.
vec4 gorge_compile_check(vec2 p, uint seed) {
    gorge_erosion_params params = gorge_erosion_params_default();
    gorge_demo_sample demo = gorge_demo_pipeline(p, params, seed);
    gorge_demo_sample demo_default = gorge_demo_pipeline(p, seed);
    vec3 n = gorge_fbm(p, gorge_fbm_params_default(), seed) + gorge_gradient_noise(p, seed);
    gorge_phacelle_result ph = gorge_phacelle(p, vec2(1.0, 0.0), 1.0, 0.25, 0.5, seed);
    float fade = gorge_fade_target_from_altitude(n.x, -0.5, 0.5);
    gorge_erosion_result r = gorge_erosion_filter(p, n, fade, params, seed);
    float h = gorge_apply_height_offset(n.x, r, fade, vec2(-0.65, 0.0));
    vec2 hashes = gorge_pcg3d_hash2(ivec2(p), seed) + gorge_shadertoy_hash2(ivec2(p), seed) +
                  gorge_pcg3d_lattice2(uvec2(p), seed) + gorge_shadertoy_lattice2(uvec2(p), seed);
    uvec3 bits = gorge_pcg3d(uvec3(uvec2(p), seed));
    return vec4(demo.height + demo_default.ridge_map + h, ph.phase + hashes, float(bits.x & 1u));
}
