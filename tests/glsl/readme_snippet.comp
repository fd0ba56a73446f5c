// The GLSL usage snippet of README.md inside a compute shader: it must compile as written.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "gorge.glsl"                          // glslangValidator -V -I${GORGE_GLSL_DIR}
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) buffer Heights { float heights[]; };
void main() {
    vec2 p = vec2(gl_GlobalInvocationID.xy) / 512.0;
    uint seed = 7u;
    // --- README snippet ---
    vec3 h = gorge_offset(gorge_scale(gorge_fractal_sum(p, gorge_fbm_params(2.0, 5, 2.0, 0.5),
                                                        gorge_basis_simplex, seed), 0.25), 0.5);
    float fade = gorge_fade_target_from_altitude(h.x, 0.35, 0.65);
    gorge_erosion_result r = gorge_erosion_filter(p, h, fade, gorge_erosion_params_default(), seed);
    float eroded = gorge_apply_height_offset(h.x, r, fade, vec2(-0.65, 0.0));
    // or the whole published demo: gorge_demo_pipeline(p, seed).height
    // --- end of snippet ---
    heights[gl_GlobalInvocationID.y * 512u + gl_GlobalInvocationID.x] = eroded + gorge_demo_pipeline(p, seed).height;
}
