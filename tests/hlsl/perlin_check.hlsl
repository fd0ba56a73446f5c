// Names perlin noise, which gorge.hlsl declares only where the hash gives its 32-bit word
// (GORGE_HASH_COMBINE_BITS): it compiles with the default hash and with an exact hash's split form
// that names its combine bits; with the shadertoy hash the compile must stop, naming what perlin
// noise needs (ctest's hlsl_compile_rejects_perlin_shadertoy).
#include "gorge.hlsl"

RWStructuredBuffer<float4> values;

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    float2 p = float2(float(id.x) * 0.01, 0.5);
    gorge_noise_d2 n = gorge_perlin_noise_d2(p, id.x);
    float3 v = gorge_perlin_noise(p, id.x) + gorge_billow(p, gorge_fbm_params_default(), gorge_basis_perlin, id.x);
    values[id.x] = float4(v, n.dxy);
}
