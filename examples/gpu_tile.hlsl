// gpu_tile's compute shader in HLSL, with gorge's HLSL include: the twin of gpu_tile.comp (same
// buffers, push constants, modes and sample positions), compiled to SPIR-V by glslang's HLSL front
// end so that gpu_tile can time the HLSL port through Vulkan next to the GLSL one:
//   GORGE_GPU_TILE_SPIRV=<build>/examples/gpu_tile_hlsl.spv <build>/examples/gpu_tile [size] [seed] [repeats]
// One difference: the workgroup size is fixed when compiling (GORGE_TILE_GROUP_X/Y, 16x16 by
// default) because glslang cannot take HLSL's [numthreads] from specialization constants; keep
// gpu_tile's workgroup argument at that size (its default, 16x16).
//   mode 0: the published demo pipeline (fBm height, fade target, filter, height offset)
//   mode 1: the 5-octave erosion filter alone on a fixed input height and slope
//   GPU_TILE_SUBGROUPS defined: gorge.hlsl's GORGE_SUBGROUPS (Phacelle windows shared in a wave)
#ifdef GPU_TILE_SUBGROUPS
#define GORGE_SUBGROUPS
#endif
#include "gorge.hlsl"

#ifndef GORGE_TILE_GROUP_X
#define GORGE_TILE_GROUP_X 16
#endif
#ifndef GORGE_TILE_GROUP_Y
#define GORGE_TILE_GROUP_Y 16
#endif

[[vk::binding(0)]] RWStructuredBuffer<float> height;
[[vk::binding(1)]] RWStructuredBuffer<float> ridge_map;
[[vk::binding(2)]] RWStructuredBuffer<float> input_height;
struct push_block {
    uint size;
    float spacing;
    uint seed;
    uint mode;
};
[[vk::push_constant]] ConstantBuffer<push_block> push;

static const uint mode_demo = 0u;
// Input of the filter-only mode: a plane of height 0.5 rising with slope (0.6, -0.3), mid-altitude.
static const float3 filter_input = float3(0.5, 0.6, -0.3);
static const float filter_fade_target = 0.0;

[numthreads(GORGE_TILE_GROUP_X, GORGE_TILE_GROUP_Y, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint2 xy = id.xy;
    if (xy.x >= push.size || xy.y >= push.size) return;
    uint i = xy.y * push.size + xy.x;
    float2 p = (float2(xy) + 0.5) * push.spacing;
    if (push.mode == mode_demo) {
        gorge_demo_sample s = gorge_demo_pipeline(p, push.seed);
        height[i] = s.height;
        ridge_map[i] = s.ridge_map;
        input_height[i] = s.input_height;
    } else {
        gorge_erosion_result r =
            gorge_erosion_filter(p, filter_input, filter_fade_target, gorge_erosion_params_default(), push.seed);
        height[i] = gorge_apply_height_offset(filter_input.x, r, filter_fade_target,
                                              float2(gorge_demo_height_offset_o, gorge_demo_height_offset_k));
        ridge_map[i] = r.ridge_map;
        input_height[i] = filter_input.x;
    }
}
