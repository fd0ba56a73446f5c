// The playground's two back ends: WebGPU (a WGSL compute pass over include/gorge/wgsl/gorge.wgsl,
// then a shading pass) and WebGL2 (a GLSL ES 3.00 fragment pass over include/gorge/glsl/gorge.glsl
// into a float texture, then the same shading). Both evaluate every sample independently, so any
// view of the world is seamless, and both can read the samples back (height, ridge map, input).
// The hash (state.values.hash, params.js's `hashes`) is a uniform for WGSL (gorge.wgsl's run-time
// dispatch) and a compile-time choice for GLSL (GORGE_HASH* defines: one program per hash).
//
// SPDX-License-Identifier: MPL-2.0
import { baseHeight, defaultHash, fadeRange, glslHashDefines, hashes, hashNamed } from './params.js';

// The uniforms, in the order of the WGSL struct (std140-like offsets in 32-bit words) and named
// u_<name> in GLSL. type: f (float), i (int), u (uint); n: components.
const layout = [
  ['origin', 'f', 2, 0], ['spacing', 'f', 1, 2], ['size', 'u', 1, 3],
  ['rounding', 'f', 4, 4], ['onset', 'f', 4, 8],
  ['assumed_slope', 'f', 2, 12], ['output_offset', 'f', 2, 14],
  ['scale', 'f', 1, 16], ['strength', 'f', 1, 17], ['gully_weight', 'f', 1, 18], ['detail', 'f', 1, 19],
  ['octaves', 'i', 1, 20], ['lacunarity', 'f', 1, 21], ['gain', 'f', 1, 22], ['cell_scale', 'f', 1, 23],
  ['normalization', 'f', 1, 24], ['seed', 'u', 1, 25], ['noise_seed', 'u', 1, 26], ['noise_octaves', 'i', 1, 27],
  ['noise_frequency', 'f', 1, 28], ['noise_lacunarity', 'f', 1, 29], ['noise_gain', 'f', 1, 30],
  ['noise_amplitude', 'f', 1, 31], ['fade_denominator', 'f', 1, 32], ['view_mode', 'u', 1, 33],
  ['tint_low', 'f', 1, 34], ['tint_high', 'f', 1, 35], ['hash', 'u', 1, 36],
];
// The struct's size: 37 words rounded up to its 16-byte alignment.
const uniformWords = 40;
// The uniforms only the shading pass reads.
const shadeOnly = ['view_mode', 'tint_low', 'tint_high'];
// The uniforms that GLSL takes at compile time instead (the hash: GORGE_HASH_* defines).
const glslCompileTime = ['hash'];

// The uniform values of a state { values, view, show: { input, ridge } }.
function uniformValues(state) {
  const { values, view, show } = state;
  const amplitude = Math.fround(values.noise_amplitude);
  // The height range the altitude tint spans: the input's +-0.75 amplitude around the base.
  const tintHalf = 0.75 * 0.5 * amplitude;
  return {
    ...values,
    origin: view.origin,
    spacing: view.spacing,
    size: view.size,
    // As the C++: amplitude * fade_range in double, rounded once to float.
    fade_denominator: amplitude * fadeRange,
    view_mode: (show.input ? 1 : 0) | (show.ridge ? 2 : 0),
    // The hash's index in params.js's `hashes` (WGSL's playground_hash() maps it to gorge.wgsl's id).
    hash: hashes.indexOf(hashNamed(values.hash)),
    tint_low: baseHeight - tintHalf,
    tint_high: baseHeight + tintHalf,
  };
}

// ---- shared shading (written once per language) ------------------------------------------------
// Relief shading: the normal from central differences of the shown height (world units), lit
// from the north-west, times an altitude tint; the ridge map (view_mode & 2) tints ridges warm and
// creases cool.

const wgslCode = `
struct playground_params {
    origin: vec2f, spacing: f32, size: u32,
    rounding: vec4f, onset: vec4f,
    assumed_slope: vec2f, output_offset: vec2f,
    scale: f32, strength: f32, gully_weight: f32, detail: f32,
    octaves: i32, lacunarity: f32, gain: f32, cell_scale: f32,
    normalization: f32, seed: u32, noise_seed: u32, noise_octaves: i32,
    noise_frequency: f32, noise_lacunarity: f32, noise_gain: f32, noise_amplitude: f32,
    fade_denominator: f32, view_mode: u32, tint_low: f32, tint_high: f32,
    hash: u32,
}

@group(0) @binding(0) var<uniform> P: playground_params;
@group(0) @binding(1) var<storage, read_write> samples: array<vec4f>;      // written by compute_main
@group(0) @binding(2) var<storage, read> shade_samples: array<vec4f>;     // the same buffer, shaded

// gorge.wgsl's id of the hash the page picked (P.hash: its index in params.js's list).
fn playground_hash() -> u32 {
    switch P.hash {
${hashes.map((h, k) => `        case ${k}u: { return gorge_hash_${h.name}; }`).join('\n')}
        default: { return gorge_hash_pcg3d; }
    }
}

// (eroded height, ridge map, input height, 0) at sample (i, j).
fn playground_sample(i: u32, j: u32) -> vec4f {
    let p = P.origin + P.spacing * vec2f(f32(i), f32(j));
    let hash = playground_hash();
    let noise = gorge_fbm_params(P.noise_frequency, P.noise_octaves, P.noise_lacunarity, P.noise_gain);
    let n = gorge_fbm_with(hash, p, noise, P.noise_seed) * P.noise_amplitude;
    let fade = clamp(n.x / P.fade_denominator, -1.0, 1.0);
    let terrain = vec3f(${baseHeight.toFixed(1)} + 0.5 * n.x, 0.5 * n.y, 0.5 * n.z);
    let erosion = gorge_erosion_params(P.scale, P.strength, P.gully_weight, P.detail, P.rounding, P.onset,
                                       P.assumed_slope, P.octaves, P.lacunarity, P.gain, P.cell_scale,
                                       P.normalization);
    let r = gorge_erosion_filter_with(hash, p, terrain, fade, erosion, P.seed);
    return vec4f(gorge_apply_height_offset(terrain.x, r, fade, P.output_offset), r.ridge_map, terrain.x, 0.0);
}

@compute @workgroup_size(8, 8)
fn compute_main(@builtin(global_invocation_id) id: vec3u) {
    if (id.x >= P.size || id.y >= P.size) {
        return;
    }
    samples[id.y * P.size + id.x] = playground_sample(id.x, id.y);
}

fn playground_height(i: i32, j: i32) -> f32 {
    let last = i32(P.size) - 1;
    let s = shade_samples[u32(clamp(j, 0, last)) * P.size + u32(clamp(i, 0, last))];
    return select(s.x, s.z, (P.view_mode & 1u) != 0u);
}

fn playground_tint(t: f32) -> vec3f {
    let low = vec3f(0.22, 0.36, 0.20);
    let mid = vec3f(0.55, 0.50, 0.36);
    let high = vec3f(0.62, 0.58, 0.55);
    let snow = vec3f(0.96, 0.96, 0.98);
    let u = clamp(t, 0.0, 1.0);
    if (u < 0.45) { return mix(low, mid, u / 0.45); }
    if (u < 0.8) { return mix(mid, high, (u - 0.45) / 0.35); }
    return mix(high, snow, (u - 0.8) / 0.2);
}

@vertex
fn vertex_main(@builtin(vertex_index) v: u32) -> @builtin(position) vec4f {
    let xy = vec2f(f32((v << 1u) & 2u), f32(v & 2u));
    return vec4f(xy * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fragment_main(@builtin(position) pos: vec4f) -> @location(0) vec4f {
    let i = i32(pos.x);
    let j = i32(pos.y);
    let last = i32(P.size) - 1;
    let il = max(i - 1, 0); let ir = min(i + 1, last);
    let jt = max(j - 1, 0); let jb = min(j + 1, last);
    let gx = (playground_height(ir, j) - playground_height(il, j)) / (f32(max(ir - il, 1)) * P.spacing);
    let gy = (playground_height(i, jb) - playground_height(i, jt)) / (f32(max(jb - jt, 1)) * P.spacing);
    let normal = normalize(vec3f(-gx, -gy, 1.0));
    let light = normalize(vec3f(-1.0, -1.0, 1.4));
    let diffuse = max(dot(normal, light), 0.0);
    let h = playground_height(i, j);
    var color = playground_tint((h - P.tint_low) / (P.tint_high - P.tint_low)) * (0.3 + 0.85 * diffuse);
    if ((P.view_mode & 2u) != 0u) {
        let ridge = shade_samples[u32(clamp(j, 0, last)) * P.size + u32(clamp(i, 0, last))].y;
        color = mix(color, select(vec3f(0.15, 0.35, 0.95), vec3f(0.95, 0.3, 0.15), ridge > 0.0), 0.7 * clamp(abs(ridge), 0.0, 1.0));
    }
    return vec4f(pow(color, vec3f(1.0 / 1.2)), 1.0);
}
`;

const glslSampleCode = `
uniform vec2 u_origin;
uniform float u_spacing;
uniform vec4 u_rounding;
uniform vec4 u_onset;
uniform vec2 u_assumed_slope;
uniform vec2 u_output_offset;
uniform float u_scale, u_strength, u_gully_weight, u_detail;
uniform int u_octaves;
uniform float u_lacunarity, u_gain, u_cell_scale, u_normalization;
uniform uint u_seed, u_noise_seed;
uniform int u_noise_octaves;
uniform float u_noise_frequency, u_noise_lacunarity, u_noise_gain, u_noise_amplitude, u_fade_denominator;
out vec4 out_sample;

// (eroded height, ridge map, input height, 0) at sample (i, j) = the fragment's pixel; texture
// row j holds sample row j. The hash is gorge.glsl's GORGE_HASH* (one program per hash).
void main() {
    uvec2 ij = uvec2(gl_FragCoord.xy);
    vec2 p = u_origin + u_spacing * vec2(ij);
    gorge_fbm_params noise = gorge_fbm_params(u_noise_frequency, u_noise_octaves, u_noise_lacunarity, u_noise_gain);
    vec3 n = gorge_fbm(p, noise, u_noise_seed) * u_noise_amplitude;
    float fade = clamp(n.x / u_fade_denominator, -1.0, 1.0);
    vec3 terrain = vec3(${baseHeight.toFixed(1)} + 0.5 * n.x, 0.5 * n.y, 0.5 * n.z);
    gorge_erosion_params erosion = gorge_erosion_params(u_scale, u_strength, u_gully_weight, u_detail, u_rounding,
        u_onset, u_assumed_slope, u_octaves, u_lacunarity, u_gain, u_cell_scale, u_normalization);
    gorge_erosion_result r = gorge_erosion_filter(p, terrain, fade, erosion, u_seed);
    out_sample = vec4(gorge_apply_height_offset(terrain.x, r, fade, u_output_offset), r.ridge_map, terrain.x, 0.0);
}
`;

const glslVertex = `#version 300 es
void main() {
    vec2 xy = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    gl_Position = vec4(xy * 2.0 - 1.0, 0.0, 1.0);
}
`;

const glslShade = `#version 300 es
precision highp float;
precision highp int;
uniform highp sampler2D u_samples;
uniform uint u_size;
uniform float u_spacing;
uniform uint u_view_mode;
uniform float u_tint_low, u_tint_high;
out vec4 color_out;

float playground_height(int i, int j) {
    int last = int(u_size) - 1;
    vec4 s = texelFetch(u_samples, ivec2(clamp(i, 0, last), clamp(j, 0, last)), 0);
    return (u_view_mode & 1u) != 0u ? s.z : s.x;
}

vec3 playground_tint(float t) {
    vec3 low = vec3(0.22, 0.36, 0.20), mid = vec3(0.55, 0.50, 0.36);
    vec3 high = vec3(0.62, 0.58, 0.55), snow = vec3(0.96, 0.96, 0.98);
    float u = clamp(t, 0.0, 1.0);
    if (u < 0.45) return mix(low, mid, u / 0.45);
    if (u < 0.8) return mix(mid, high, (u - 0.45) / 0.35);
    return mix(high, snow, (u - 0.8) / 0.2);
}

void main() {
    // Screen row 0 is at the top; sample row 0 too.
    int last = int(u_size) - 1;
    int i = int(gl_FragCoord.x);
    int j = last - int(gl_FragCoord.y);
    int il = max(i - 1, 0), ir = min(i + 1, last), jt = max(j - 1, 0), jb = min(j + 1, last);
    float gx = (playground_height(ir, j) - playground_height(il, j)) / (float(max(ir - il, 1)) * u_spacing);
    float gy = (playground_height(i, jb) - playground_height(i, jt)) / (float(max(jb - jt, 1)) * u_spacing);
    vec3 normal = normalize(vec3(-gx, -gy, 1.0));
    vec3 light = normalize(vec3(-1.0, -1.0, 1.4));
    float diffuse = max(dot(normal, light), 0.0);
    float h = playground_height(i, j);
    vec3 color = playground_tint((h - u_tint_low) / (u_tint_high - u_tint_low)) * (0.3 + 0.85 * diffuse);
    if ((u_view_mode & 2u) != 0u) {
        float ridge = texelFetch(u_samples, ivec2(i, j), 0).y;
        color = mix(color, ridge > 0.0 ? vec3(0.95, 0.3, 0.15) : vec3(0.15, 0.35, 0.95), 0.7 * clamp(abs(ridge), 0.0, 1.0));
    }
    color_out = vec4(pow(color, vec3(1.0 / 1.2)), 1.0);
}
`;

async function fetchText(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
}

// ---- WebGPU ------------------------------------------------------------------------------------

async function createWebGPU(canvas, gorgeWgslUrl) {
  if (!navigator.gpu) throw new Error('WebGPU is not available (navigator.gpu is missing)');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('WebGPU: no adapter');
  const device = await adapter.requestDevice();
  const code = (await fetchText(gorgeWgslUrl)) + '\n' + wgslCode;
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) throw new Error(`WGSL: ${errors.map((m) => `line ${m.lineNum}: ${m.message}`).join('; ')}`);
  const format = navigator.gpu.getPreferredCanvasFormat();
  const context = canvas.getContext('webgpu');
  context.configure({ device, format, alphaMode: 'opaque' });
  const bindLayout = device.createBindGroupLayout({
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE | GPUShaderStage.FRAGMENT, buffer: { type: 'uniform' } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
    ],
  });
  const shadeLayout = device.createBindGroupLayout({
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE | GPUShaderStage.FRAGMENT, buffer: { type: 'uniform' } },
      { binding: 2, visibility: GPUShaderStage.FRAGMENT, buffer: { type: 'read-only-storage' } },
    ],
  });
  const computePipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [bindLayout] }),
    compute: { module, entryPoint: 'compute_main' },
  });
  const renderPipeline = device.createRenderPipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [shadeLayout] }),
    vertex: { module, entryPoint: 'vertex_main' },
    fragment: { module, entryPoint: 'fragment_main', targets: [{ format }] },
    primitive: { topology: 'triangle-list' },
  });
  const uniforms = device.createBuffer({ size: uniformWords * 4, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const validation = await device.popErrorScope();
  if (validation) throw new Error(`WebGPU: ${validation.message}`);
  let size = 0;
  let samples = null;
  let computeBind = null;
  let shadeBind = null;
  const words = new ArrayBuffer(uniformWords * 4);
  const asF = new Float32Array(words);
  const asI = new Int32Array(words);
  const asU = new Uint32Array(words);

  return {
    name: 'webgpu',
    description: `WebGPU (${[adapter.info?.vendor, adapter.info?.architecture, adapter.info?.description].filter(Boolean).join(' ') || 'adapter'})`,
    async render(state) {
      const u = uniformValues(state);
      if (u.size !== size) {
        size = u.size;
        if (samples) samples.destroy();
        samples = device.createBuffer({ size: size * size * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
        computeBind = device.createBindGroup({ layout: bindLayout, entries: [
          { binding: 0, resource: { buffer: uniforms } }, { binding: 1, resource: { buffer: samples } }] });
        shadeBind = device.createBindGroup({ layout: shadeLayout, entries: [
          { binding: 0, resource: { buffer: uniforms } }, { binding: 2, resource: { buffer: samples } }] });
      }
      for (const [name, type, n, at] of layout) {
        const vals = n === 1 ? [u[name]] : u[name];
        const arr = type === 'f' ? asF : type === 'i' ? asI : asU;
        for (let c = 0; c < n; ++c) arr[at + c] = vals[c];
      }
      device.queue.writeBuffer(uniforms, 0, words);
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(computePipeline);
      pass.setBindGroup(0, computeBind);
      pass.dispatchWorkgroups(Math.ceil(size / 8), Math.ceil(size / 8));
      pass.end();
      const draw = encoder.beginRenderPass({ colorAttachments: [{
        view: context.getCurrentTexture().createView(), loadOp: 'clear', storeOp: 'store', clearValue: [0, 0, 0, 1] }] });
      draw.setPipeline(renderPipeline);
      draw.setBindGroup(0, shadeBind);
      draw.draw(3);
      draw.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    },
    // Float32Array of size * size * 4: (height, ridge map, input height, 0), row 0 first.
    async readSamples() {
      const bytes = size * size * 16;
      const read = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(samples, 0, read, 0, bytes);
      device.queue.submit([encoder.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(read.getMappedRange().slice(0));
      read.unmap();
      read.destroy();
      return { size, data: out };
    },
  };
}

// ---- WebGL2 ------------------------------------------------------------------------------------

function compile(gl, type, source, what) {
  const s = gl.createShader(type);
  gl.shaderSource(s, source);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`${what}: ${gl.getShaderInfoLog(s)}`);
  return s;
}

function link(gl, vs, fs, what) {
  const p = gl.createProgram();
  gl.attachShader(p, vs);
  gl.attachShader(p, fs);
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`${what}: ${gl.getProgramInfoLog(p)}`);
  return p;
}

// How often a WebGL2 read-back polls its fence.
const readPollMs = 4;

async function createWebGL2(canvas, gorgeGlslUrl) {
  const gl = canvas.getContext('webgl2', { antialias: false, preserveDrawingBuffer: true });
  if (!gl) throw new Error('WebGL2 is not available');
  if (!gl.getExtension('EXT_color_buffer_float')) throw new Error('WebGL2: EXT_color_buffer_float is missing (float render targets)');
  const gorgeGlsl = await fetchText(gorgeGlslUrl);
  const vs = compile(gl, gl.VERTEX_SHADER, glslVertex, 'vertex shader');
  const shadeProgram = link(gl, vs, compile(gl, gl.FRAGMENT_SHADER, glslShade, 'shading shader'), 'shading program');
  const vao = gl.createVertexArray();
  const locations = (program) => {
    const loc = {};
    const count = gl.getProgramParameter(program, gl.ACTIVE_UNIFORMS);
    for (let k = 0; k < count; ++k) {
      const name = gl.getActiveUniform(program, k).name.replace(/^u_/, '');
      loc[name] = gl.getUniformLocation(program, `u_${name}`);
    }
    return loc;
  };
  const shadeLoc = locations(shadeProgram);
  const types = Object.fromEntries(layout.map(([name, type, n]) => [name, [type, n]]));
  const setUniforms = (loc, u) => {
    for (const [name, where] of Object.entries(loc)) {
      if (name === 'samples') continue;
      if (!(name in types)) throw new Error(`WebGL2: uniform u_${name} has no value`);
      const [type, n] = types[name];
      const vals = n === 1 ? [u[name]] : u[name];
      const fn = `uniform${n}${type === 'f' ? 'f' : type === 'i' ? 'i' : 'ui'}v`;
      gl[fn](where, type === 'f' ? new Float32Array(vals) : type === 'i' ? new Int32Array(vals) : new Uint32Array(vals));
    }
  };
  // The sample program of each hash, built when that hash is first shown: gorge.glsl after the
  // defines that pick it. { program, loc } by hash name.
  const samplePrograms = {};
  const sampleProgramFor = (hash) => {
    if (samplePrograms[hash]) return samplePrograms[hash];
    const program = link(gl, vs, compile(gl, gl.FRAGMENT_SHADER,
      '#version 300 es\n' + glslHashDefines(hash) + gorgeGlsl + '\n' + glslSampleCode, `gorge.glsl sample shader (${hash})`),
    `sample program (${hash})`);
    const loc = locations(program);
    // Every parameter must reach the sample shader (a misspelt uniform would silently read as 0).
    for (const [name] of layout) {
      if (name !== 'size' && !shadeOnly.includes(name) && !glslCompileTime.includes(name) && !(name in loc)) {
        throw new Error(`WebGL2: the sample shader has no uniform u_${name}`);
      }
    }
    samplePrograms[hash] = { program, loc };
    return samplePrograms[hash];
  };
  sampleProgramFor(defaultHash);
  let size = 0;
  let texture = null;
  let framebuffer = null;

  return {
    name: 'webgl2',
    description: `WebGL2 (${gl.getParameter(gl.VERSION)})`,
    async render(state) {
      const u = uniformValues(state);
      if (u.size !== size) {
        size = u.size;
        if (texture) gl.deleteTexture(texture);
        if (framebuffer) gl.deleteFramebuffer(framebuffer);
        texture = gl.createTexture();
        gl.bindTexture(gl.TEXTURE_2D, texture);
        gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32F, size, size);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
        framebuffer = gl.createFramebuffer();
        gl.bindFramebuffer(gl.FRAMEBUFFER, framebuffer);
        gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, texture, 0);
        if (gl.checkFramebufferStatus(gl.FRAMEBUFFER) !== gl.FRAMEBUFFER_COMPLETE) throw new Error('WebGL2: RGBA32F framebuffer incomplete');
      }
      gl.bindVertexArray(vao);
      gl.bindFramebuffer(gl.FRAMEBUFFER, framebuffer);
      gl.viewport(0, 0, size, size);
      const sample = sampleProgramFor(hashNamed(state.values.hash).name);
      gl.useProgram(sample.program);
      setUniforms(sample.loc, u);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.useProgram(shadeProgram);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.uniform1i(shadeLoc.samples, 0);
      setUniforms(shadeLoc, u);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      const error = gl.getError();
      if (error !== gl.NO_ERROR) throw new Error(`WebGL2: error 0x${error.toString(16)}`);
    },
    // Through a pixel-pack buffer and a fence, so that reading does not stall the GPU.
    async readSamples() {
      const out = new Float32Array(size * size * 4);
      const pack = gl.createBuffer();
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pack);
      gl.bufferData(gl.PIXEL_PACK_BUFFER, out.byteLength, gl.STREAM_READ);
      gl.bindFramebuffer(gl.FRAMEBUFFER, framebuffer);
      gl.readPixels(0, 0, size, size, gl.RGBA, gl.FLOAT, 0);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
      gl.flush();
      while (gl.clientWaitSync(sync, 0, 0) === gl.TIMEOUT_EXPIRED) await new Promise((r) => setTimeout(r, readPollMs));
      gl.deleteSync(sync);
      gl.getBufferSubData(gl.PIXEL_PACK_BUFFER, 0, out);
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
      gl.deleteBuffer(pack);
      return { size, data: out };
    },
  };
}

// The back end asked for: 'webgpu', 'webgl2' or 'auto' (WebGPU where it starts, else WebGL2).
// `urls` holds the shipped shader sources' URLs { wgsl, glsl }. Returns the back end and the
// reasons the ones tried before it failed.
export async function createBackend(kind, canvas, urls) {
  const tried = [];
  if (kind === 'webgpu' || kind === 'auto') {
    try {
      return { backend: await createWebGPU(canvas, urls.wgsl), tried };
    } catch (e) {
      if (kind === 'webgpu') throw e;
      tried.push(`WebGPU: ${e.message}`);
    }
  }
  if (kind === 'webgl2' || kind === 'auto') {
    // A canvas that WebGPU configured cannot give a WebGL2 context: use a fresh one.
    if (tried.length) {
      const fresh = canvas.cloneNode(false);
      canvas.replaceWith(fresh);
      canvas = fresh;
    }
    return { backend: await createWebGL2(canvas, urls.glsl), tried, canvas };
  }
  throw new Error(`unknown back end '${kind}' (allowed: auto, webgpu, webgl2)`);
}
