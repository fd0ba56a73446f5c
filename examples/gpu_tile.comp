#version 450
// gpu_tile's compute shader: one invocation per sample of a size x size tile, sample (x, y) at
// ((x + 0.5) * spacing, (y + 0.5) * spacing) as in the CPU demo. The workgroup size is a
// specialization constant so the host can tune it per device without recompiling.
//   mode 0: the published demo pipeline (fBm height, fade target, filter, height offset)
//   mode 1: the 5-octave erosion filter alone on a fixed input height and slope
//   GPU_TILE_SUBGROUPS defined: gorge.glsl's GORGE_SUBGROUPS (Phacelle windows shared in a subgroup)
#extension GL_GOOGLE_include_directive : require
#ifdef GPU_TILE_SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#define GORGE_SUBGROUPS
#endif
#include "gorge.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(std430, binding = 0) writeonly buffer Height { float height[]; };
layout(std430, binding = 1) writeonly buffer Ridge { float ridge_map[]; };
layout(std430, binding = 2) writeonly buffer Input { float input_height[]; };
layout(push_constant) uniform Push {
    uint size;
    float spacing;
    uint seed;
    uint mode;
};

const uint mode_demo = 0u;
// Input of the filter-only mode: a plane of height 0.5 rising with slope (0.6, -0.3), mid-altitude.
const vec3 filter_input = vec3(0.5, 0.6, -0.3);
const float filter_fade_target = 0.0;

void main() {
    uvec2 xy = gl_GlobalInvocationID.xy;
    if (xy.x >= size || xy.y >= size) return;
    uint i = xy.y * size + xy.x;
    vec2 p = (vec2(xy) + 0.5) * spacing;
    if (mode == mode_demo) {
        gorge_demo_sample s = gorge_demo_pipeline(p, seed);
        height[i] = s.height;
        ridge_map[i] = s.ridge_map;
        input_height[i] = s.input_height;
    } else {
        gorge_erosion_result r =
            gorge_erosion_filter(p, filter_input, filter_fade_target, gorge_erosion_params_default(), seed);
        height[i] = gorge_apply_height_offset(filter_input.x, r, filter_fade_target,
                                              vec2(gorge_demo_height_offset_o, gorge_demo_height_offset_k));
        ridge_map[i] = r.ridge_map;
        input_height[i] = filter_input.x;
    }
}
