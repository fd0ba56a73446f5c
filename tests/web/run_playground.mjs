// Playground test (tests/web/CMakeLists.txt registers one ctest test per --check and back end):
// serves the repository with web/serve.mjs (what scripts/playground.sh runs), opens
// web/index.html in headless Chromium through puppeteer-core (web/node_modules; no browser is
// downloaded) and checks one feature through the page's controls.
//
// Usage: node run_playground.mjs --root REPO --work DIR --check CHECK [--backend webgpu|webgl2]
//          [--chromium PATH] [--reference gorge_playground_reference] [--gorge gorge]
//          [--cxx c++ --cxx-flags FLAGS] [--screenshot FILE.png] [--break KIND]
// CHECK: load, ui, preset, r16, snippets, screenshot (see CMakeLists.txt for what each proves).
// --break uniform|layout|preset|r16|hash|glsl_hash serves web/ with one line broken on purpose:
// the check must then fail (the *_detects_break tests).
// Exit codes: 0 pass, 1 fail, 77 skipped (no Chromium or web/node_modules) unless
// GORGE_BROWSER_REQUIRED=1.
//
// SPDX-License-Identifier: MPL-2.0
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const skipCode = 77;
const argv = process.argv.slice(2);
function arg(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}
const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(arg('root', path.join(here, '..', '..')));
const work = path.resolve(arg('work', path.join(process.cwd(), 'playground-test')));
const check = arg('check', 'load');
const backend = arg('backend', 'webgpu');
const chromium = arg('chromium', process.env.GORGE_CHROMIUM || '/usr/bin/chromium');
const breakKind = arg('break', '');
const required = !!process.env.GORGE_BROWSER_REQUIRED && process.env.GORGE_BROWSER_REQUIRED !== '0';

// Tolerances: the GPU against the C++ float path (the GLSL and WGSL parity tests' bounds).
const heightTolerance = 1e-4;
const ridgeTolerance = 1e-2;
const r16Step = 2 / 65535;  // the .r16 export maps heights -1..1 to codes 0..65535
// Samples per side of the page in the tests (SwiftShader is a CPU rasteriser).
const testSize = 96;
// The hash the checks pick besides the default (the page's #hash select, the preset key "hash").
const otherHash = 'prime_xor';
// The line of a GLSL snippet with a hash other than the default that separates what goes before
// gorge.glsl (the GORGE_HASH* defines) from what goes after it (web/params.js).
const glslAfterGorgeLine = '// ---- after gorge.glsl ----';

function unavailable(what) {
  console.log(`${required ? 'FAIL (GORGE_BROWSER_REQUIRED is set)' : 'SKIP'}: ${what}`);
  process.exit(required ? 1 : skipCode);
}
if (!existsSync(chromium)) unavailable(`no Chromium at ${chromium} (Debian: chromium; scripts/install-deps.sh test)`);
let puppeteer;
try {
  puppeteer = createRequire(path.join(root, 'web', 'package.json'))('puppeteer-core');
} catch (e) {
  unavailable(`puppeteer-core not found in ${root}/web/node_modules (${e.code || e.message}); run npm ci in web/`);
}
const { servePlayground } = await import(pathToFileURL(path.join(root, 'web', 'serve.mjs')).href);

// ---- deliberate breaks -------------------------------------------------------------------------
const breaks = {
  // The gully weight's uniform misspelt on the JavaScript side (WebGL2 would leave u_gully_weight 0).
  uniform: ['web/gpu.js', "['gully_weight', 'f', 1, 18]", "['gully_weigh', 'f', 1, 18]"],
  // Two WGSL uniform offsets swapped (gully weight and detail arrive in each other's place).
  layout: ['web/gpu.js', "['gully_weight', 'f', 1, 18], ['detail', 'f', 1, 19]", "['gully_weight', 'f', 1, 19], ['detail', 'f', 1, 18]"],
  // A preset key misspelt.
  preset: ['web/params.js', "gully_weight: num('gully_weight')", "gully_weigth: num('gully_weight')"],
  // The .r16 export written big-endian.
  r16: ['web/params.js', 'c > 0 ? Math.min(c, maxCode16) : 0, true)', 'c > 0 ? Math.min(c, maxCode16) : 0, false)'],
  // The WGSL filter left on pcg3d whatever the hash select says (the input noise still follows it).
  hash: ['web/gpu.js', 'gorge_erosion_filter_with(hash, p,', 'gorge_erosion_filter_with(gorge_hash_pcg3d, p,'],
  // The WebGL2 sample shader built without the hash's GORGE_HASH* defines.
  glsl_hash: ['web/gpu.js', "'#version 300 es\\n' + glslHashDefines(hash) + gorgeGlsl", "'#version 300 es\\n' + gorgeGlsl"],
};
let transform = null;
if (breakKind) {
  const b = breaks[breakKind];
  if (!b) {
    console.log(`FAIL: unknown --break ${breakKind}`);
    process.exit(1);
  }
  const [file, from, to] = b;
  if (!readFileSync(path.join(root, file), 'utf8').includes(from)) {
    console.log(`FAIL: --break ${breakKind}: "${from}" is no longer in ${file} (update the test)`);
    process.exit(1);
  }
  transform = (rel, text) => (rel === file ? text.replace(from, to) : text);
  console.log(`--break ${breakKind}: ${file} served with "${to}" (this run must fail)`);
}

// ---- browser -----------------------------------------------------------------------------------
// WebGPU on SwiftShader's Vulkan device (Chromium's WebGPU canvas needs the Vulkan feature to
// present headless) and WebGL2 on SwiftShader through ANGLE; --no-sandbox as CI runs as root.
const browserArgs = ['--no-sandbox', '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader',
  '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

let ok = true;
function fail(message) {
  console.log(`FAIL: ${message}`);
  ok = false;
}

mkdirSync(work, { recursive: true });
const downloads = path.join(work, `downloads-${check}-${backend}${breakKind ? `-${breakKind}` : ''}`);
rmSync(downloads, { recursive: true, force: true });
mkdirSync(downloads, { recursive: true });

const { server, url } = await servePlayground({ root, port: 0, transform });
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: browserArgs });
const consoleProblems = [];

async function openPage(kind, size = testSize) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn' || m.type() === 'warning') consoleProblems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleProblems.push(`page error: ${e}`));
  page.on('requestfailed', (r) => consoleProblems.push(`request failed: ${r.url()}`));
  await page.goto(`${url}?backend=${kind}&size=${size}`);
  await page.waitForFunction(() => window.playground);
  const started = await page.evaluate(() => window.playground.ready.then(() => '', (e) => String(e.message || e)));
  if (started) throw new Error(`the page did not start: ${started}`);
  const session = await page.createCDPSession();
  await session.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
  return page;
}

// Samples read back from the GPU: { size, height, ridge, input } (Float32Arrays, row 0 first).
async function samples(page) {
  const r = await page.evaluate(async () => {
    const s = await window.playground.readSamples();
    const bytes = new Uint8Array(s.data.buffer);
    let text = '';
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return { size: s.size, data: btoa(text) };
  });
  const b = Buffer.from(r.data, 'base64');
  const all = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const n = r.size * r.size;
  const pick = (c) => Float32Array.from({ length: n }, (_, k) => all[4 * k + c]);
  return { size: r.size, height: pick(0), ridge: pick(1), input: pick(2) };
}

// Clears a number box and types `text` into it (input events, as a user's keystrokes).
async function typeInto(page, id, text) {
  const box = `#${id}-number`;
  await page.click(box, { clickCount: 3 });
  await page.keyboard.press('Backspace');
  await page.type(box, text);
  await page.keyboard.press('Tab');
}

// Presses an arrow key `count` times on a slider (each press moves it one step).
async function nudgeSlider(page, id, key, count) {
  await page.focus(`#${id}-slider`);
  for (let i = 0; i < count; ++i) await page.keyboard.press(key);
}

// The parameters the UI checks set, by preset key (vectors as arrays), and how they are entered.
const typed = [
  ['noise-frequency', 'noise_frequency', '4.5'], ['noise-octaves', 'noise_octaves', '4'], ['noise-gain', 'noise_gain', '0.3'],
  ['noise-amplitude', 'noise_amplitude', '0.15'], ['noise-seed', 'noise_seed', '7'],
  ['scale', 'scale', '0.2'], ['strength', 'strength', '0.3'], ['gully-weight', 'gully_weight', '0.8'],
  ['detail', 'detail', '2.25'], ['rounding-3', 'rounding[3]', '1.5'], ['onset-0', 'onset[0]', '1.6'],
  ['onset-2', 'onset[2]', '2.2'], ['assumed-slope-0', 'assumed_slope[0]', '0.9'], ['octaves', 'octaves', '4'],
  ['cell-scale', 'cell_scale', '0.8'], ['normalization', 'normalization', '0.4'], ['seed', 'seed', '11'],
  ['output-offset-0', 'output_offset[0]', '-0.5'],
];
// Sliders moved with the keyboard: [id, key, arrow, presses, value expected after].
const slid = [
  ['lacunarity', 'lacunarity', 'ArrowRight', 5, 2.05],
  ['noise-lacunarity', 'noise_lacunarity', 'ArrowLeft', 10, 1.9],
  ['gain', 'gain', 'ArrowLeft', 10, 0.4],
];

// The defaults (params.js mirrors gorge's), changed as the UI checks change them.
function expectedValues() {
  const v = {
    noise_frequency: 3, noise_octaves: 3, noise_lacunarity: 2, noise_gain: 0.1, noise_amplitude: 0.125, noise_seed: 0,
    scale: 0.15, strength: 0.22, gully_weight: 0.5, detail: 1.5, rounding: [0.1, 0, 0.1, 2], onset: [1.25, 1.25, 2.8, 1.5],
    assumed_slope: [0.7, 1], octaves: 5, lacunarity: 2, gain: 0.5, cell_scale: 0.7, normalization: 0.5, seed: 0,
    output_offset: [-0.65, 0],
  };
  const put = (key, value) => {
    const m = /^(\w+)\[(\d)\]$/.exec(key);
    if (m) v[m[1]][Number(m[2])] = value;
    else v[key] = value;
  };
  for (const [, key, text] of typed) put(key, Number(text));
  for (const [, key, , , value] of slid) put(key, value);
  return v;
}

// Sets the parameters through the number boxes and sliders; returns the view.
async function setParameters(page) {
  for (const [id, , text] of typed) await typeInto(page, id, text);
  for (const [id, , arrow, count, value] of slid) {
    await nudgeSlider(page, id, arrow, count);
    const shown = Number(await page.$eval(`#${id}-number`, (e) => e.value));
    if (Math.abs(shown - value) > 1e-9) fail(`slider ${id}: the number box shows ${shown}, expected ${value}`);
  }
  return page.evaluate(() => window.playground.view);
}

// Pans and zooms with the mouse; returns the new view.
async function panAndZoom(page) {
  // Pan (drag left and up) and zoom in (wheel) over the canvas.
  const box = await (await page.$('#terrain')).boundingBox();
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const before = await page.evaluate(() => window.playground.view);
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  await page.mouse.move(cx - box.width / 4, cy - box.height / 8, { steps: 4 });
  await page.mouse.up();
  const panned = await page.evaluate(() => window.playground.view);
  const expectedShift = (box.width / 4) * (before.size / box.width) * before.spacing;
  if (!(Math.abs(panned.origin[0] - before.origin[0] - expectedShift) < 0.02 * expectedShift && panned.origin[1] > before.origin[1])) {
    fail(`dragging did not pan the view: origin ${before.origin} -> ${panned.origin} (expected x + ${expectedShift})`);
  }
  await page.mouse.wheel({ deltaY: -300 });
  const zoomed = await page.evaluate(() => window.playground.idle().then(() => window.playground.view));
  if (!(zoomed.spacing < 0.9 * panned.spacing)) fail(`the wheel did not zoom in: spacing ${panned.spacing} -> ${zoomed.spacing}`);
  return zoomed;
}

async function setThroughUi(page) {
  await setParameters(page);
  return panAndZoom(page);
}

function referenceArgs(values, view) {
  const list = (x) => (Array.isArray(x) ? x.join(',') : String(x));
  return [`size=${view.size}`, `spacing=${view.spacing}`, `origin=${view.origin.join(',')}`,
    ...Object.entries(values).map(([k, v]) => `${k}=${list(v)}`)];
}

// C++ reference samples of the program gorge_playground_reference.
function reference(values, view) {
  const exe = arg('reference');
  if (!exe) throw new Error('--reference gorge_playground_reference is needed');
  const out = path.join(work, `reference-${check}-${backend}.f32`);
  execFileSync(exe, [out, ...referenceArgs(values, view)], { stdio: 'inherit' });
  const b = readFileSync(out);
  const all = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const n = view.size * view.size;
  const pick = (c) => Float32Array.from({ length: n }, (_, k) => all[3 * k + c]);
  return { height: pick(0), ridge: pick(1), input: pick(2) };
}

// Largest |a - b| and where; fails when above `tolerance` or when `a` is constant.
function compare(what, a, b, tolerance, size) {
  let worst = 0;
  let at = 0;
  let bad = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 0; k < a.length; ++k) {
    const d = Math.abs(a[k] - b[k]);
    if (!(d <= tolerance)) ++bad;
    if (!(d <= worst)) {
      worst = d;
      at = k;
    }
    lo = Math.min(lo, b[k]);
    hi = Math.max(hi, b[k]);
  }
  const where = `(${at % size}, ${Math.floor(at / size)})`;
  console.log(`${what}: ${a.length} samples, worst |difference| ${worst.toExponential(3)} at ${where}, tolerance ${tolerance.toExponential(1)}, range ${lo.toFixed(4)}..${hi.toFixed(4)}`);
  if (bad) fail(`${what}: ${bad} of ${a.length} samples differ by more than ${tolerance} (worst ${worst} at ${where})`);
  if (!(hi - lo > 1e-3)) fail(`${what}: the values are nearly constant (${lo}..${hi}): the comparison proves nothing`);
}

async function waitForDownload(name) {
  const file = path.join(downloads, name);
  for (let i = 0; i < 200 && !existsSync(file); ++i) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(file)) throw new Error(`no download ${name} in ${downloads} (found: ${readdirSync(downloads).join(', ') || 'nothing'})`);
  await new Promise((r) => setTimeout(r, 100));
  return file;
}

async function clickExport(page, id, name) {
  await page.click(`#${id}`);
  return waitForDownload(name);
}

// Pixels of a clip of the page, decoded in the page: { mean, deviation, distinct } of the grey levels.
async function imageStats(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let sum = 0;
    let sum2 = 0;
    const levels = new Set();
    for (let i = 0; i < d.length; i += 4) {
      const y = (d[i] + d[i + 1] + d[i + 2]) / 3;
      sum += y;
      sum2 += y * y;
      levels.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    }
    const n = d.length / 4;
    const mean = sum / n;
    return { mean, deviation: Math.sqrt(Math.max(0, sum2 / n - mean * mean)), distinct: levels.size };
  }, Buffer.from(png).toString('base64'));
}

async function canvasShot(page) {
  const box = await (await page.$('#terrain')).boundingBox();
  return page.screenshot({ clip: box });
}

// Exports the page's C++ and GLSL snippets (hash `hash` selected) and checks that they give the
// page's heights.
async function snippetsOf(page, hash) {
  const s = await samples(page);
  const points = [];
  for (let k = 0; k < 40; ++k) points.push([(k * 37) % s.size, (k * 53 + 11) % s.size]);
  points.push([0, 0], [s.size - 1, s.size - 1]);
  // C++: compile the exported program and run it at the points.
  const cpp = await clickExport(page, 'export-cpp', 'gorge-view.cpp');
  const cppText = readFileSync(cpp, 'utf8');
  rmSync(cpp);  // the next export downloads the same name
  if ((hash !== 'pcg3d') !== cppText.includes(`gorge::${hash}_hash`)) fail(`the C++ snippet ${hash === 'pcg3d' ? 'names a hash' : `does not name gorge::${hash}_hash`}`);
  const cppFile = path.join(work, `gorge-view-${hash}.cpp`);
  writeFileSync(cppFile, cppText);
  const cxx = arg('cxx', 'c++');
  const exe = path.join(work, 'gorge-view-snippet');
  const flags = arg('cxx-flags', `-I${path.join(root, 'include')}`).split(' ').filter(Boolean);
  try {
    execFileSync(cxx, ['-std=c++17', '-O1', '-ffp-contract=off', ...flags, cppFile, '-o', exe], { stdio: 'pipe' });
  } catch (e) {
    fail(`the C++ snippet (${hash}) does not compile: ${String(e.stderr || e.message).slice(0, 2000)}`);
    return;
  }
  const printed = execFileSync(exe, points.flat().map(String), { encoding: 'utf8' }).trim().split('\n').map(Number);
  compare(`C++ snippet (${hash}) vs page heights`, Float32Array.from(printed), Float32Array.from(points, ([i, j]) => s.height[j * s.size + i]),
    heightTolerance, s.size);
  // GLSL: the exported function after gorge.glsl, run in a WebGL2 fragment shader over the view.
  const glslFile = await clickExport(page, 'export-glsl', 'gorge-view.glsl');
  const glsl = readFileSync(glslFile, 'utf8');
  rmSync(glslFile);
  // With a hash other than the default, the snippet's defines go before gorge.glsl.
  const split = glsl.indexOf(glslAfterGorgeLine);
  if ((hash !== 'pcg3d') !== (split >= 0)) fail(`the GLSL snippet ${hash === 'pcg3d' ? 'has' : 'lacks'} the part before gorge.glsl`);
  if (hash !== 'pcg3d' && !glsl.includes(`#define GORGE_HASH gorge_${hash}_lattice2`)) fail(`the GLSL snippet does not define GORGE_HASH as gorge_${hash}_lattice2`);
  const [beforeGorge, afterGorge] = split >= 0 ? [glsl.slice(0, split), glsl.slice(split)] : ['', glsl];
  const r = await page.evaluate(async (prefix, snippet, size) => {
    const gorge = await (await fetch('../include/gorge/glsl/gorge.glsl')).text();
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl2');
    if (!gl || !gl.getExtension('EXT_color_buffer_float')) return { error: 'no WebGL2 with float targets' };
    const shader = (type, text) => {
      const sh = gl.createShader(type);
      gl.shaderSource(sh, text);
      gl.compileShader(sh);
      if (!gl.getShaderParameter(sh, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(sh));
      return sh;
    };
    try {
      const program = gl.createProgram();
      gl.attachShader(program, shader(gl.VERTEX_SHADER, '#version 300 es\nvoid main() { vec2 xy = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2)); gl_Position = vec4(xy * 2.0 - 1.0, 0.0, 1.0); }'));
      gl.attachShader(program, shader(gl.FRAGMENT_SHADER, `#version 300 es\n${prefix}${gorge}\n${snippet}\nout vec4 o;\nvoid main() { o = vec4(view_height(view_origin + view_spacing * vec2(uvec2(gl_FragCoord.xy))), 1.0); }`));
      gl.linkProgram(program);
      if (!gl.getProgramParameter(program, gl.LINK_STATUS)) return { error: gl.getProgramInfoLog(program) };
      const tex = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, tex);
      gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32F, size, size);
      const fb = gl.createFramebuffer();
      gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
      gl.viewport(0, 0, size, size);
      gl.useProgram(program);
      gl.bindVertexArray(gl.createVertexArray());
      gl.drawArrays(gl.TRIANGLES, 0, 3);
      // Read through a pixel-pack buffer and a fence (a direct read-back stalls, and says so).
      const out = new Float32Array(size * size * 4);
      const pack = gl.createBuffer();
      gl.bindBuffer(gl.PIXEL_PACK_BUFFER, pack);
      gl.bufferData(gl.PIXEL_PACK_BUFFER, out.byteLength, gl.STREAM_READ);
      gl.readPixels(0, 0, size, size, gl.RGBA, gl.FLOAT, 0);
      const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
      gl.flush();
      while (gl.clientWaitSync(sync, 0, 0) === gl.TIMEOUT_EXPIRED) await new Promise((done) => setTimeout(done, 4));
      gl.getBufferSubData(gl.PIXEL_PACK_BUFFER, 0, out);
      return { heights: Array.from({ length: size * size }, (_, k) => out[4 * k]) };
    } catch (e) {
      return { error: String(e.message || e) };
    }
  }, beforeGorge, afterGorge, s.size);
  if (r.error) {
    fail(`the GLSL snippet (${hash}): ${r.error}`);
    return;
  }
  compare(`GLSL snippet (${hash}, WebGL2) vs page heights`, Float32Array.from(r.heights), s.height, heightTolerance, s.size);
}

// ---- checks ------------------------------------------------------------------------------------
const checks = {
  async load() {
    const page = await openPage(backend);
    const name = await page.evaluate(() => window.playground.backend);
    if (name !== backend) fail(`?backend=${backend} started ${name}`);
    const s = await samples(page);
    const finite = s.height.every(Number.isFinite) && s.ridge.every(Number.isFinite) && s.input.every(Number.isFinite);
    if (!finite) fail('non-finite heights read back');
    const range = Math.max(...s.height) - Math.min(...s.height);
    console.log(`${name}: ${s.size}² samples, heights span ${range.toFixed(4)}`);
    if (!(range > 0.01)) fail(`the heights are flat (span ${range})`);
    const stats = await imageStats(page, await canvasShot(page));
    console.log(`canvas: mean grey ${stats.mean.toFixed(1)}, deviation ${stats.deviation.toFixed(1)}, ${stats.distinct} colours`);
    if (!(stats.deviation > 10 && stats.distinct > 500)) fail('the canvas shows no shaded relief');
    if (backend === 'webgpu') {
      const auto = await openPage('auto');
      const chosen = await auto.evaluate(() => window.playground.backend);
      console.log(`?backend=auto chose ${chosen}`);
      if (chosen !== 'webgpu') fail(`?backend=auto chose ${chosen} where WebGPU works`);
    }
  },

  async ui() {
    const page = await openPage(backend);
    const before = await samples(page);
    const values = expectedValues();
    // The parameters typed and slid, in the first view, then the view panned and zoomed.
    const first = await setParameters(page);
    const shown = await page.evaluate(() => window.playground.values);
    for (const [k, v] of Object.entries(values)) {
      if (JSON.stringify(shown[k]) !== JSON.stringify(v)) fail(`the page holds ${k} = ${JSON.stringify(shown[k])}, expected ${JSON.stringify(v)}`);
    }
    const set = await samples(page);
    compare(`${backend} heights vs C++ (parameters set)`, set.height, reference(values, first).height, heightTolerance, first.size);
    const view = await panAndZoom(page);
    const after = await samples(page);
    const ref = reference(values, view);
    compare(`${backend} heights vs C++`, after.height, ref.height, heightTolerance, view.size);
    compare(`${backend} input heights vs C++`, after.input, ref.input, heightTolerance, view.size);
    compare(`${backend} ridge map vs C++`, after.ridge, ref.ridge, ridgeTolerance, view.size);
    let changed = 0;
    for (let k = 0; k < after.height.length; ++k) changed = Math.max(changed, Math.abs(after.height[k] - before.height[k]));
    if (!(changed > 0.01)) fail(`the parameters set through the UI did not change the heights (at most ${changed})`);
    // The toggles change the picture.
    const plain = await imageStats(page, await canvasShot(page));
    await page.click('#show-ridge');
    await page.evaluate(() => window.playground.idle());
    const ridge = await imageStats(page, await canvasShot(page));
    await page.click('#show-ridge');
    await page.click('#show-input');
    await page.evaluate(() => window.playground.idle());
    const input = await imageStats(page, await canvasShot(page));
    console.log(`mean grey: plain ${plain.mean.toFixed(2)}, ridge map ${ridge.mean.toFixed(2)}, input ${input.mean.toFixed(2)}`);
    if (Math.abs(ridge.mean - plain.mean) < 0.5 && Math.abs(ridge.deviation - plain.deviation) < 0.5) fail('the ridge map toggle changes nothing');
    if (Math.abs(input.mean - plain.mean) < 0.2 && Math.abs(input.deviation - plain.deviation) < 0.2) fail('the input toggle changes nothing');
    // The hash select drives the input noise and the filter alike: the C++ with prime_xor_hash.
    await page.select('#hash', otherHash);
    const hashed = await samples(page);
    const hashedRef = reference({ ...values, hash: otherHash }, view);
    compare(`${backend} heights vs C++ (${otherHash})`, hashed.height, hashedRef.height, heightTolerance, view.size);
    compare(`${backend} input heights vs C++ (${otherHash})`, hashed.input, hashedRef.input, heightTolerance, view.size);
    compare(`${backend} ridge map vs C++ (${otherHash})`, hashed.ridge, hashedRef.ridge, ridgeTolerance, view.size);
    let hashChanged = 0;
    for (let k = 0; k < after.height.length; ++k) hashChanged = Math.max(hashChanged, Math.abs(hashed.height[k] - after.height[k]));
    console.log(`${otherHash} vs pcg3d: heights differ by up to ${hashChanged.toFixed(4)}`);
    if (!(hashChanged > 0.01)) fail(`the hash select did not change the heights (at most ${hashChanged})`);
    await page.select('#hash', 'pcg3d');
    compare(`${backend} heights back on pcg3d vs the first render`, (await samples(page)).height, after.height, 0, view.size);
  },

  async preset() {
    const gorge = arg('gorge');
    if (!gorge) throw new Error('--gorge (the gorge command line) is needed');
    const page = await openPage(backend);
    await setThroughUi(page);
    await page.select('#hash', otherHash);
    const s = await samples(page);
    const file = await clickExport(page, 'export-preset', 'gorge-view.json');
    const preset = JSON.parse(readFileSync(file, 'utf8'));
    if (preset.hash !== otherHash) fail(`the exported preset has hash ${JSON.stringify(preset.hash)}, expected "${otherHash}"`);
    const out = path.join(work, 'preset-cli.r16');
    const back = path.join(work, 'preset-back.json');
    rmSync(out, { force: true });
    try {
      execFileSync(gorge, ['generate', out, '--preset', file, '--save-preset', back], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      fail(`gorge generate --preset ${file}: ${(e.stderr || e.message).trim()}`);
      return;
    }
    const b = readFileSync(out);
    if (b.length !== s.size * s.size * 2) fail(`gorge generate wrote ${b.length} bytes, expected ${s.size * s.size * 2}`);
    const cli = Float32Array.from({ length: b.length / 2 }, (_, k) => -1 + b.readUInt16LE(2 * k) * r16Step);
    compare('gorge generate --preset (exported) vs page heights', cli, s.height, heightTolerance + r16Step / 2, s.size);
    const saved = JSON.parse(readFileSync(back, 'utf8'));
    const same = (a, c) => (Array.isArray(a) ? Array.isArray(c) && a.length === c.length && a.every((x, i) => same(x, c[i]))
      : typeof a === 'number' ? typeof c === 'number' && Math.fround(a) === Math.fround(c) : a === c);
    const keys = new Set([...Object.keys(preset), ...Object.keys(saved)]);
    let differing = 0;
    for (const k of keys) {
      if (!same(preset[k], saved[k])) {
        ++differing;
        fail(`--save-preset gives ${k} = ${JSON.stringify(saved[k])}, the page exported ${JSON.stringify(preset[k])}`);
      }
    }
    console.log(`--save-preset: ${keys.size} keys, ${differing} differ from the exported preset`);
    // The preset --save-preset wrote, loaded into a fresh page, gives the same parameters, view
    // and heights.
    const fresh = await openPage(backend);
    const picker = await fresh.$('#import-preset');
    await picker.uploadFile(back);
    await fresh.waitForFunction(() => window.playground.view.origin[0] !== 0);
    const loaded = await fresh.evaluate(() => window.playground.idle().then(() => ({ values: window.playground.values, view: window.playground.view })));
    for (const [k, v] of Object.entries({ ...expectedValues(), hash: otherHash })) {
      if (!same(v, loaded.values[k])) fail(`the loaded preset gives ${k} = ${JSON.stringify(loaded.values[k])}, expected ${JSON.stringify(v)}`);
    }
    const select = await fresh.$eval('#hash', (e) => e.value);
    if (select !== otherHash) fail(`the loaded preset shows the hash ${select}, expected ${otherHash}`);
    const view = await page.evaluate(() => window.playground.view);
    if (!same(view.origin, loaded.view.origin) || !same(view.spacing, loaded.view.spacing)) {
      fail(`the loaded preset gives the view ${JSON.stringify(loaded.view)}, expected ${JSON.stringify(view)}`);
    }
    compare('page with the loaded --save-preset vs the page that exported it', (await samples(fresh)).height, s.height, 0, s.size);
  },

  async r16() {
    const page = await openPage(backend);
    await typeInto(page, 'strength', '0.3');
    await typeInto(page, 'noise-seed', '5');
    const s = await samples(page);
    const file = await clickExport(page, 'export-r16', `gorge-view-${s.size}x${s.size}.r16`);
    const b = readFileSync(file);
    if (b.length !== s.size * s.size * 2) fail(`.r16 has ${b.length} bytes, expected ${s.size * s.size * 2}`);
    const decoded = Float32Array.from({ length: b.length / 2 }, (_, k) => -1 + b.readUInt16LE(2 * k) * r16Step);
    const before = ok;
    compare('.r16 (decoded, -1..1) vs page heights', decoded, s.height, r16Step / 2 + 1e-7, s.size);
    if (before && !ok) console.log('FAIL: .r16 export does not decode to the page heights');
  },

  async snippets() {
    const page = await openPage(backend);
    await setThroughUi(page);
    // The default hash, then another: its snippets carry the hash.
    for (const hash of ['pcg3d', otherHash]) {
      await page.select('#hash', hash);
      await snippetsOf(page, hash);
    }
  },

  async screenshot() {
    const out = arg('screenshot', path.join(work, 'playground.png'));
    const size = 512;
    const page = await openPage(backend, size);
    // The control panel scrolls inside the viewport: make the viewport tall enough to show all of it.
    const panel = await page.evaluate(() => document.getElementById('controls').scrollHeight);
    const margin = 24;  // the page's padding around the panel (playground.css: calc(100vh - 24px))
    const viewport = page.viewport();
    await page.setViewport({ width: viewport.width, height: Math.max(viewport.height, panel + margin) });
    await page.evaluate(() => window.playground.idle());
    await page.screenshot({ path: out });
    const stats = await imageStats(page, await canvasShot(page));
    console.log(`${out}: canvas mean grey ${stats.mean.toFixed(1)}, deviation ${stats.deviation.toFixed(1)}, ${stats.distinct} colours`);
    if (!(stats.deviation > 10 && stats.distinct > 2000)) fail('the screenshot shows no shaded relief');
  },
};

try {
  if (!checks[check]) throw new Error(`unknown --check ${check} (allowed: ${Object.keys(checks).join(', ')})`);
  await checks[check]();
} catch (e) {
  fail(e.message || String(e));
} finally {
  await browser.close();
  server.close();
}
// Console output of the page: every error and warning fails the test.
if (consoleProblems.length) fail(`page console:\n  ${consoleProblems.join('\n  ')}`);
console.log(ok ? 'PASS' : 'FAIL');
process.exit(ok ? 0 : 1);
