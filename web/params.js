// The playground's parameters and everything made from them without the GPU: the JSON preset of
// `gorge generate`, the C++ and GLSL snippets, and the .r16 encoding. No DOM access here.
//
// SPDX-License-Identifier: MPL-2.0

// Every parameter the page shows. `key` is the key of the `gorge generate` preset (a vector
// parameter is one entry per component, `index` giving the component); `min`/`max` are the
// values the library accepts (the number box refuses others), `lo`/`hi` the slider's range.
// Defaults are those of gorge::demo_pipeline (fBm) and gorge::erosion_params.
export const parameters = [
  // Input noise: height = 0.5 + 0.5 * amplitude * fBm (the demo recipe of `gorge generate`).
  { group: 'Input noise', key: 'noise_frequency', label: 'frequency', value: 3, lo: 0.5, hi: 12, step: 0.01, min: 0, minOpen: true },
  { group: 'Input noise', key: 'noise_octaves', label: 'octaves', value: 3, lo: 0, hi: 10, step: 1, min: 0, max: 32, int: true },
  { group: 'Input noise', key: 'noise_lacunarity', label: 'lacunarity', value: 2, lo: 1, hi: 4, step: 0.01, min: 0, minOpen: true },
  { group: 'Input noise', key: 'noise_gain', label: 'gain', value: 0.1, lo: 0, hi: 1, step: 0.01 },
  { group: 'Input noise', key: 'noise_amplitude', label: 'amplitude', value: 0.125, lo: 0.01, hi: 0.5, step: 0.001, min: 0, minOpen: true },
  { group: 'Input noise', key: 'noise_seed', label: 'seed', value: 0, lo: 0, hi: 100, step: 1, min: 0, max: 4294967295, int: true },
  // The erosion filter (gorge::erosion_params) and its seed.
  { group: 'Erosion filter', key: 'scale', label: 'scale', value: 0.15, lo: 0.01, hi: 0.6, step: 0.001, min: 0, minOpen: true },
  { group: 'Erosion filter', key: 'strength', label: 'strength', value: 0.22, lo: 0, hi: 0.6, step: 0.001 },
  { group: 'Erosion filter', key: 'gully_weight', label: 'gully weight', value: 0.5, lo: 0, hi: 1, step: 0.01 },
  { group: 'Erosion filter', key: 'detail', label: 'detail', value: 1.5, lo: 0.1, hi: 4, step: 0.01, min: 0, minOpen: true },
  { group: 'Erosion filter', key: 'rounding', index: 0, label: 'rounding: ridges', value: 0.1, lo: 0, hi: 1, step: 0.01 },
  { group: 'Erosion filter', key: 'rounding', index: 1, label: 'rounding: creases', value: 0, lo: 0, hi: 1, step: 0.01 },
  { group: 'Erosion filter', key: 'rounding', index: 2, label: 'rounding: input', value: 0.1, lo: 0, hi: 1, step: 0.01 },
  { group: 'Erosion filter', key: 'rounding', index: 3, label: 'rounding: per octave', value: 2, lo: 0, hi: 4, step: 0.01 },
  { group: 'Erosion filter', key: 'onset', index: 0, label: 'onset: initial', value: 1.25, lo: 0, hi: 5, step: 0.01, min: 0 },
  { group: 'Erosion filter', key: 'onset', index: 1, label: 'onset: per octave', value: 1.25, lo: 0, hi: 5, step: 0.01, min: 0 },
  { group: 'Erosion filter', key: 'onset', index: 2, label: 'onset: ridge initial', value: 2.8, lo: 0, hi: 6, step: 0.01, min: 0 },
  { group: 'Erosion filter', key: 'onset', index: 3, label: 'onset: ridge per octave', value: 1.5, lo: 0, hi: 5, step: 0.01, min: 0 },
  { group: 'Erosion filter', key: 'assumed_slope', index: 0, label: 'assumed slope', value: 0.7, lo: 0, hi: 2, step: 0.01 },
  { group: 'Erosion filter', key: 'assumed_slope', index: 1, label: 'assumed slope amount', value: 1, lo: 0, hi: 1, step: 0.01, min: 0, max: 1 },
  { group: 'Erosion filter', key: 'octaves', label: 'octaves', value: 5, lo: 0, hi: 10, step: 1, min: 0, max: 32, int: true },
  { group: 'Erosion filter', key: 'lacunarity', label: 'lacunarity', value: 2, lo: 1, hi: 4, step: 0.01, min: 0, minOpen: true },
  { group: 'Erosion filter', key: 'gain', label: 'gain', value: 0.5, lo: 0, hi: 1, step: 0.01 },
  { group: 'Erosion filter', key: 'cell_scale', label: 'cell scale', value: 0.7, lo: 0.1, hi: 2, step: 0.01, min: 0, minOpen: true },
  { group: 'Erosion filter', key: 'normalization', label: 'normalization', value: 0.5, lo: 0, hi: 1, step: 0.01, min: 0, max: 1 },
  { group: 'Erosion filter', key: 'seed', label: 'seed', value: 0, lo: 0, hi: 100, step: 1, min: 0, max: 4294967295, int: true },
  // apply_height_offset on the output: eroded = h + delta + mix(o, -fade, k) * magnitude.
  { group: 'Erosion filter', key: 'output_offset', index: 0, label: 'height offset o', value: -0.65, lo: -1.5, hi: 1.5, step: 0.01 },
  { group: 'Erosion filter', key: 'output_offset', index: 1, label: 'height offset k', value: 0, lo: 0, hi: 1, step: 0.01 },
];

// The hash policy of the input noise and of the filter alike: the preset key "hash" and the
// `gorge generate --hash` names, in the order the page lists them. The name also gives the C++
// policy (gorge::<name>_hash), the prefix of gorge.glsl's split-form functions
// (gorge_<name>_axis_x, ...) and gorge.wgsl's run-time id (gorge_hash_<name>). pcg3d is the
// default everywhere. (shadertoy_hash is left out: a float hash that the GPUs do not reproduce
// exactly.)
export const hashes = [
  { name: 'pcg3d', label: 'pcg3d (default)' },
  { name: 'prime_mix', label: 'prime_mix (faster)' },
  { name: 'prime_xor', label: 'prime_xor (fastest)' },
];
export const defaultHash = 'pcg3d';

// The entry of `hashes` named `name`; throws naming the key and the choices otherwise.
export function hashNamed(name) {
  const h = hashes.find((x) => x.name === name);
  if (!h) throw new Error(`hash: '${name}' (allowed: ${hashes.map((x) => x.name).join(', ')})`);
  return h;
}

// The GLSL lines that pick `name`'s hash in gorge.glsl (they go before it); '' for the default,
// which gorge.glsl picks by itself.
export function glslHashDefines(name) {
  if (name === defaultHash) return '';
  const g = hashNamed(name).name;
  return `#define GORGE_HASH gorge_${g}_lattice2
#define GORGE_HASH_AXIS_X gorge_${g}_axis_x
#define GORGE_HASH_AXIS_Y gorge_${g}_axis_y
#define GORGE_HASH_COMBINE gorge_${g}_combine
`;
}

// The fade target is -1..+1 at fBm -0.6..+0.6 (gorge::demo::fade_range).
export const fadeRange = 0.6;
// Input height = baseHeight + 0.5 * amplitude * fBm (gorge::demo::base_height).
export const baseHeight = 0.5;

// .r16 export: the `gorge generate` default for integer outputs, heights -1..1 to codes 0..65535,
// clamped (codes = floor((h + 1) * 65535 / 2 + 0.5)).
export const r16Range = [-1, 1];
const maxCode16 = 65535;

// The id of a parameter's controls: "scale", "rounding-2".
export function parameterId(p) {
  return p.index === undefined ? p.key.replaceAll('_', '-') : `${p.key.replaceAll('_', '-')}-${p.index}`;
}

// Why `v` is not accepted for p, or '' when it is.
export function invalidReason(p, v) {
  if (!Number.isFinite(v)) return 'must be a finite number';
  if (p.int && !Number.isInteger(v)) return 'must be an integer';
  if (p.min !== undefined && (p.minOpen ? !(v > p.min) : !(v >= p.min))) return `must be ${p.minOpen ? '>' : '>='} ${p.min}`;
  if (p.max !== undefined && !(v <= p.max)) return `must be <= ${p.max}`;
  return '';
}

// The default values: { key: number | number[], hash: name }.
export function defaultValues() {
  const v = { hash: defaultHash };
  for (const p of parameters) {
    if (p.index === undefined) v[p.key] = p.value;
    else (v[p.key] ||= [])[p.index] = p.value;
  }
  return v;
}

// The shortest decimal that reads back as the float32 nearest to x (what the C++ side parses).
export function float32Text(x) {
  const f = Math.fround(x);
  for (let digits = 1; digits <= 9; ++digits) {
    const s = Number(f.toPrecision(digits));
    if (Math.fround(s) === f) return String(s);
  }
  return String(f);
}
const f32 = (x) => Number(float32Text(x));

// The view: size x size samples, sample (i, j) at origin + spacing * (i, j), row j = 0 at the top.
export function defaultView(size) {
  return { origin: [0, 0], spacing: 1 / size, size };
}

// The `gorge generate` preset of the view: every key `gorge generate --save-preset` writes, with
// the values that reproduce the page (noise_* for the input noise, the filter's keys, the view as
// size/spacing/origin of tile (0, 0), the recipe defaults for the rest). `.r16`/`.png` outputs use
// the command's default mapping (-1..1, clamped), as the page's .r16 export does.
export function presetOf(values, view) {
  const num = (k) => f32(values[k]);
  const vec = (k) => values[k].map(f32);
  return {
    range: [],
    normalise: false,
    clamp: false,
    recipe: 'demo',
    size: view.size,
    tile_x: 0,
    tile_y: 0,
    spacing: f32(view.spacing),
    origin: view.origin.map(f32),
    noise_seed: values.noise_seed,
    noise_frequency: num('noise_frequency'),
    noise_octaves: values.noise_octaves,
    noise_lacunarity: num('noise_lacunarity'),
    noise_gain: num('noise_gain'),
    noise_amplitude: num('noise_amplitude'),
    scale: num('scale'),
    strength: num('strength'),
    gully_weight: num('gully_weight'),
    detail: num('detail'),
    rounding: vec('rounding'),
    onset: vec('onset'),
    assumed_slope: vec('assumed_slope'),
    octaves: values.octaves,
    lacunarity: num('lacunarity'),
    gain: num('gain'),
    cell_scale: num('cell_scale'),
    normalization: num('normalization'),
    seed: values.seed,
    output_offset: vec('output_offset'),
    valley_altitude: 0,
    peak_altitude: 0.16000001,  // the demo recipe ignores both (its fade target comes from the noise)
    hash: hashNamed(values.hash).name,
    threads: 0,
  };
}

// The values and view of a `gorge generate` preset (as exported, or written by --save-preset):
// the keys the page shows, and the view from size, spacing, origin and the tile (tile_x, tile_y
// move the origin by tile * (size - 1) samples). Missing keys keep `values` and `view`; throws
// naming a bad key. Keys the page does not show (range, threads, ...) are ignored.
export function fromPreset(preset, values, view) {
  if (typeof preset !== 'object' || preset === null || Array.isArray(preset)) throw new Error('a preset is a JSON object');
  if ('recipe' in preset && preset.recipe !== 'demo') throw new Error(`recipe: '${preset.recipe}' (the playground shows the demo recipe)`);
  const out = structuredClone(values);
  if ('hash' in preset) out.hash = hashNamed(preset.hash).name;
  for (const p of parameters) {
    if (!(p.key in preset)) continue;
    const v = p.index === undefined ? preset[p.key] : (preset[p.key] || [])[p.index];
    const why = invalidReason(p, v);
    if (why) throw new Error(`${p.key}${p.index === undefined ? '' : `[${p.index}]`}: ${why}`);
    if (p.index === undefined) out[p.key] = v;
    else out[p.key][p.index] = v;
  }
  const size = 'size' in preset ? preset.size : view.size;
  const spacing = 'spacing' in preset ? preset.spacing : view.spacing;
  const origin = 'origin' in preset ? preset.origin : view.origin;
  if (!(Number.isInteger(size) && size >= 2)) throw new Error('size: must be an integer >= 2');
  if (!(Number.isFinite(spacing) && spacing > 0)) throw new Error('spacing: must be finite and > 0 (0, the command\'s default, is 1/1024)');
  if (!(Array.isArray(origin) && origin.length === 2 && origin.every(Number.isFinite))) throw new Error('origin: must be two finite numbers');
  const tile = [preset.tile_x || 0, preset.tile_y || 0];
  if (!tile.every(Number.isInteger)) throw new Error('tile_x, tile_y: must be integers');
  const f = (x) => Math.fround(x);
  return {
    values: out,
    view: { size, spacing: f(spacing), origin: [0, 1].map((c) => f(f(origin[c]) + f(spacing) * tile[c] * (size - 1))) },
  };
}

const cppFloat = (x) => {
  const s = float32Text(x);
  return (/[.e]/.test(s) ? s : `${s}.0`) + 'f';
};
const cppVec = (a) => a.map(cppFloat).join(', ');
const glslFloat = (x) => {
  const s = float32Text(x);
  return /[.e]/.test(s) ? s : `${s}.0`;
};
const glslVec = (a) => a.map(glslFloat).join(', ');

// A C++ program that computes the view (the same heights as the page and `gorge generate`).
// A hash other than the default is the template argument of gorge::fbm and gorge::erosion_filter.
export function cppSnippet(values, view) {
  const v = values;
  const hash = hashNamed(v.hash);
  const cppPolicy = `gorge::${hash.name}_hash`;
  const policy = hash.name === defaultHash ? '' : `<${cppPolicy}>`;
  const hashLine = hash.name === defaultHash ? '' : `
// Hash: ${hash.name} (${cppPolicy}), for the input noise and the filter alike.`;
  return `// The gorge playground's view as C++ (gorge's float path; the page and the GPU agree to 1e-4).${hashLine}
// Build: c++ -std=c++17 -O2 -I<gorge>/include view.cpp   (needs glm)
// Run:   ./a.out [i j]...   prints the eroded height at samples (i, j) of the view
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gorge/filter/demo_pipeline.hpp>  // gorge::fbm, erosion_filter, apply_height_offset

// Input noise: height = 0.5 + 0.5 * amplitude * fBm, fade target -1..1 at fBm -0.6..0.6.
float view_height(glm::vec2 p) {
    gorge::fbm_params<float> noise;
    noise.frequency = ${cppFloat(v.noise_frequency)};
    noise.octaves = ${v.noise_octaves};
    noise.lacunarity = ${cppFloat(v.noise_lacunarity)};
    noise.gain = ${cppFloat(v.noise_gain)};
    const float amplitude = ${cppFloat(v.noise_amplitude)};
    const std::uint32_t noise_seed = ${v.noise_seed}u;

    gorge::erosion_params<float> erosion;
    erosion.scale = ${cppFloat(v.scale)};
    erosion.strength = ${cppFloat(v.strength)};
    erosion.gully_weight = ${cppFloat(v.gully_weight)};
    erosion.detail = ${cppFloat(v.detail)};
    erosion.rounding = glm::vec4(${cppVec(v.rounding)});
    erosion.onset = glm::vec4(${cppVec(v.onset)});
    erosion.assumed_slope = glm::vec2(${cppVec(v.assumed_slope)});
    erosion.octaves = ${v.octaves};
    erosion.lacunarity = ${cppFloat(v.lacunarity)};
    erosion.gain = ${cppFloat(v.gain)};
    erosion.cell_scale = ${cppFloat(v.cell_scale)};
    erosion.normalization = ${cppFloat(v.normalization)};
    const std::uint32_t filter_seed = ${v.seed}u;
    const glm::vec2 height_offset(${cppVec(v.output_offset)});

    const glm::vec3 n = gorge::fbm${policy}(p, noise, noise_seed) * amplitude;
    const float fade = glm::clamp(n.x / static_cast<float>(double(amplitude) * ${fadeRange}), -1.0f, 1.0f);
    const glm::vec3 terrain(${cppFloat(baseHeight)} + 0.5f * n.x, 0.5f * n.y, 0.5f * n.z);
    const gorge::erosion_result<float> r = gorge::erosion_filter${policy}(p, terrain, fade, erosion, filter_seed);
    return gorge::apply_height_offset(terrain.x, r, fade, height_offset);
}

// The view: ${view.size} x ${view.size} samples, sample (i, j) at origin + spacing * (i, j).
const glm::vec2 origin(${cppVec(view.origin)});
const float spacing = ${cppFloat(view.spacing)};

int main(int argc, char** argv) {
    for (int a = 1; a + 1 < argc; a += 2) {
        const double i = std::atof(argv[a]), j = std::atof(argv[a + 1]);
        const glm::vec2 p(static_cast<float>(double(origin.x) + double(spacing) * i),
                          static_cast<float>(double(origin.y) + double(spacing) * j));
        std::printf("%.9g\\n", static_cast<double>(view_height(p)));
    }
    return 0;
}
`;
}

// The line that splits a GLSL snippet with a hash other than the default: what comes before it
// goes before gorge.glsl, the rest after it.
export const glslAfterGorgeLine = '// ---- after gorge.glsl ----';

// A GLSL function that computes the view's heights (after #version and gorge.glsl). With a hash
// other than the default, the snippet starts with the #defines that pick it, to be placed before
// gorge.glsl (they apply to every gorge function of the shader).
export function glslSnippet(values, view) {
  const v = values;
  const defines = glslHashDefines(hashNamed(v.hash).name);
  const head = defines ? `// The gorge playground's view as GLSL, hash ${v.hash}: after your #version line, paste the
// #defines below, then gorge.glsl (include/gorge/glsl/gorge.glsl; GLSL 4.50, ES 3.10 or ES 3.00),
// then the rest. The defines pick the hash of every gorge function in the shader.
${defines}${glslAfterGorgeLine}
` : `// The gorge playground's view as GLSL: paste after your #version line and gorge.glsl
// (include/gorge/glsl/gorge.glsl; GLSL 4.50, ES 3.10 or ES 3.00).
`;
  return `${head}// Sample (i, j) of the view is at p = view_origin + view_spacing * vec2(i, j).
const vec2 view_origin = vec2(${glslVec(view.origin)});
const float view_spacing = ${glslFloat(view.spacing)};

// Eroded height at p (x: height, y: ridge map, z: height before erosion).
vec3 view_height(vec2 p) {
    gorge_fbm_params noise = gorge_fbm_params(${glslFloat(v.noise_frequency)}, ${v.noise_octaves}, ${glslFloat(v.noise_lacunarity)}, ${glslFloat(v.noise_gain)});
    const float amplitude = ${glslFloat(v.noise_amplitude)};
    gorge_erosion_params erosion = gorge_erosion_params(
        ${glslFloat(v.scale)}, ${glslFloat(v.strength)}, ${glslFloat(v.gully_weight)}, ${glslFloat(v.detail)},  // scale, strength, gully weight, detail
        vec4(${glslVec(v.rounding)}),  // rounding
        vec4(${glslVec(v.onset)}),  // onset
        vec2(${glslVec(v.assumed_slope)}),  // assumed slope
        ${v.octaves}, ${glslFloat(v.lacunarity)}, ${glslFloat(v.gain)}, ${glslFloat(v.cell_scale)}, ${glslFloat(v.normalization)});  // octaves, lacunarity, gain, cell scale, normalization
    vec3 n = gorge_fbm(p, noise, ${v.noise_seed}u) * amplitude;
    float fade = clamp(n.x / (amplitude * ${glslFloat(fadeRange)}), -1.0, 1.0);
    vec3 terrain = vec3(${glslFloat(baseHeight)} + 0.5 * n.x, 0.5 * n.y, 0.5 * n.z);
    gorge_erosion_result r = gorge_erosion_filter(p, terrain, fade, erosion, ${v.seed}u);
    return vec3(gorge_apply_height_offset(terrain.x, r, fade, vec2(${glslVec(v.output_offset)})), r.ridge_map, terrain.x);
}
`;
}

// Heights (row-major, row 0 first) as .r16: little-endian 16-bit codes, heights r16Range mapped
// to 0..65535 and clamped, rounded to the nearest code (gorge::io::write_r16's rule).
export function r16Bytes(heights) {
  const [lo, hi] = r16Range;
  const scale = maxCode16 / (hi - lo);
  const out = new Uint8Array(heights.length * 2);
  const view = new DataView(out.buffer);
  for (let k = 0; k < heights.length; ++k) {
    const c = Math.floor((heights[k] - lo) * scale + 0.5);
    view.setUint16(2 * k, c > 0 ? Math.min(c, maxCode16) : 0, true);
  }
  return out;
}
