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

    // Noise fields.
    uint s1 = gorge_derive_seed(seed, 1u);
    gorge_noise_d2 g2 = gorge_gradient_noise_d2(p, s1);
    gorge_noise_d2 v2 = gorge_value_noise_d2(p, s1);
    gorge_noise_d2 x2 = gorge_simplex_noise_d2(p, s1);
    vec3 fields = gorge_value_noise(p, seed) + gorge_simplex_noise(p, seed) +
                  gorge_fractal_sum(p, gorge_fbm_params_default(), gorge_basis_simplex, seed) +
                  gorge_billow(p, gorge_fbm_params_default(), gorge_basis_value, seed) +
                  gorge_ridged(p, gorge_ridged_params_default(), gorge_basis_gradient, seed) +
                  gorge_damped_fbm(p, gorge_damped_fbm_params_default(), gorge_basis_gradient, seed);
    vec3 combined = gorge_product(gorge_sum(fields, n), gorge_scale(gorge_offset(fields, 0.5), 2.0));
    combined = gorge_terrace(gorge_clamped(combined, 0.0, 1.0), 4.0, 0.5);
    mat2 m = mat2(0.8, 0.6, -0.6, 0.8);
    vec3 t = gorge_transform_gradient(m, gorge_gradient_noise(gorge_transform_point(m, vec2(1.0), p), seed));
    gorge_warp w = gorge_warp_begin(p);
    w = gorge_warp_step(w, p, gorge_value_noise(w.q, 1u), gorge_value_noise(w.q, 2u), 0.5);
    vec3 warped = gorge_warp_end(w, gorge_gradient_noise(w.q, seed));
    gorge_island_params ip = gorge_island_params_default();
    vec3 island = gorge_island_height(p, ip, gorge_basis_gradient, seed) +
                  gorge_island_moisture(p, ip, gorge_basis_value, seed) +
                  gorge_island_falloff(n, p, gorge_falloff_params_default()) +
                  vec3(gorge_square_bump_distance(p).x, gorge_power_profile(n.x, 2.0));
    float noise_sum = g2.value + v2.dxy + x2.dyy + combined.x + t.y + warped.z + island.x;
#ifdef GORGE_HASH_COMBINE_BITS
    // Perlin noise (declared where the hash gives its 32-bit word: not with the shadertoy hash).
    gorge_noise_d2 p2 = gorge_perlin_noise_d2(p, s1);
    vec3 perlin = gorge_perlin_noise(p, seed) +
                  gorge_ridged(p, gorge_ridged_params_default(), gorge_basis_perlin, seed) +
                  gorge_damped_fbm(p, gorge_damped_fbm_params_default(), gorge_basis_perlin, seed);
    noise_sum += p2.dxx + perlin.y + float(gorge_pcg3d_combine_bits(uint(p.x), uint(p.y), seed) >> 29u);
#endif
    return vec4(demo.height + demo_default.ridge_map + h + noise_sum, ph.phase + hashes, float(bits.x & 1u));
}
