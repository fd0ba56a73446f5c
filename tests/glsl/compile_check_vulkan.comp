#version 450
// GLSL 4.50 compute shader that includes gorge.glsl the way a Vulkan or OpenGL project would.
#extension GL_GOOGLE_include_directive : require
#include "gorge.glsl"
#include "compile_check_body.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Output { vec4 values[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    values[i] = gorge_compile_check(vec2(float(i) * 0.01, 0.5), i);
}
