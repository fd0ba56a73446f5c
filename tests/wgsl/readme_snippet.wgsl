// The README's WGSL example (compiled by wgsl_parity after gorge.wgsl, as a user would prepend it):
// one erosion-filtered height per invocation.
@group(0) @binding(0) var<storage, read_write> heights: array<f32>;
@group(0) @binding(1) var<uniform> size: u32;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3u) {
    if (id.x >= size || id.y >= size) {
        return;
    }
    let p = (vec2f(id.xy) + 0.5) / f32(size);
    // Input terrain with its gradient: (height, d/dx, d/dy).
    let terrain = gorge_fbm(p, gorge_fbm_params_default(), 7u) * 0.125;
    var params = gorge_erosion_params_default();
    params.strength = 0.3;
    let fade = gorge_fade_target_from_altitude(terrain.x, -0.075, 0.075);
    // pcg3d hash; gorge_erosion_filter_shadertoy(...) for the published shaders' hash.
    let r = gorge_erosion_filter(p, terrain, fade, params, 7u);
    heights[id.y * size + id.x] = gorge_apply_height_offset(terrain.x, r, fade, vec2f(-0.65, 0.0));
}
