// WGSL parity test: runs include/gorge/wgsl/gorge.wgsl in headless Chromium (WebGPU, on its
// SwiftShader adapter) over the rows wgsl_rows writes, and compares each output with gorge's C++
// float path (and, where marked, its double path) with the tolerances written in manifest.json
// (those of the GLSL parity test). Chromium is driven by puppeteer-core from web/node_modules
// (web/package-lock.json pins it; scripts/install-deps.sh runs `npm ci`); no browser is downloaded.
//
// Usage: node run_parity.mjs --data DIR --gorge gorge.wgsl --harness parity.wgsl --web WEB_DIR
//                            [--chromium PATH] [--page runner.html] [--runtime chromium|dawn]
//                            [--compile FILE.wgsl]... [--fast-trig]
// Each --compile file is compiled after gorge.wgsl (no rows run; e.g. the README's example) and
// fails the test if it does not compile. --fast-trig creates the pipelines with
// gorge_accurate_trig = false (WGSL's builtin sin and cos; not what ctest runs).
// --runtime dawn runs the same shader through Node's `webgpu` package (Dawn) instead of Chromium,
// on the machine's GPU (install it with `npm install --no-save webgpu` in web/; not in the
// lockfile, and not what ctest runs).
// Exit codes: 0 pass; 1 fail (a mismatch, a shader that does not compile, no WebGPU adapter);
// 77 skipped because Chromium or web/node_modules is missing (ctest's SKIP_RETURN_CODE), unless
// GORGE_BROWSER_REQUIRED=1 is set in the environment, which makes that a failure too.
// GORGE_WGSL_BREAK=1 replaces the first `return n;` of gorge_fbm_with by `return -n;` before
// compiling (a deliberately broken port, which must fail the test).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const skipCode = 77;
const argv = process.argv.slice(2);
function arg(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}
const required = !!process.env.GORGE_BROWSER_REQUIRED && process.env.GORGE_BROWSER_REQUIRED !== '0';
const here = path.dirname(new URL(import.meta.url).pathname);
const dataDir = arg('data');
const gorgePath = arg('gorge');
const harnessPath = arg('harness', path.join(here, 'parity.wgsl'));
const webDir = arg('web', path.join(here, '..', '..', 'web'));
const chromium = arg('chromium', process.env.GORGE_CHROMIUM || '/usr/bin/chromium');
const pagePath = arg('page', path.join(here, 'runner.html'));
const runtime = arg('runtime', 'chromium');
const constants = argv.includes('--fast-trig') ? { gorge_accurate_trig: 0 } : {};
const compileOnly = argv.flatMap((a, i) => (a === '--compile' && i + 1 < argv.length ? [argv[i + 1]] : []));
if (!dataDir || !gorgePath) {
  console.error('usage: node run_parity.mjs --data DIR --gorge gorge.wgsl [--harness parity.wgsl] [--web DIR] [--chromium PATH]');
  process.exit(2);
}

function unavailable(what, hint) {
  console.log(`${required ? 'FAIL (GORGE_BROWSER_REQUIRED is set)' : 'SKIP'}: ${what}`);
  console.log(hint);
  process.exit(required ? 1 : skipCode);
}

if (runtime === 'chromium' && !existsSync(chromium)) {
  unavailable(`no Chromium at ${chromium}`,
    'This test runs gorge.wgsl in headless Chromium; install it (Debian: chromium, or run scripts/install-deps.sh test).');
}
let puppeteer;
try {
  puppeteer = createRequire(path.join(path.resolve(webDir), 'package.json'))(runtime === 'dawn' ? 'webgpu' : 'puppeteer-core');
} catch (e) {
  unavailable(`${runtime === 'dawn' ? 'webgpu' : 'puppeteer-core'} not found in ${path.resolve(webDir)}/node_modules (${e.code || e.message})`,
    'Run `npm ci` in web/ (scripts/install-deps.sh test does).');
}

// ---- inputs ------------------------------------------------------------------------------------
const manifest = JSON.parse(readFileSync(path.join(dataDir, 'manifest.json'), 'utf8'));
const outWords = manifest.out_words;
function typed(file, Type) {
  const b = readFileSync(path.join(dataDir, file));
  return new Type(b.buffer, b.byteOffset, b.byteLength / Type.BYTES_PER_ELEMENT);
}
let gorgeSource = readFileSync(gorgePath, 'utf8');
if (process.env.GORGE_WGSL_BREAK === '1') {
  const start = gorgeSource.indexOf('fn gorge_fbm_with(');
  const at = gorgeSource.indexOf('return n;', start);
  gorgeSource = gorgeSource.slice(0, at) + 'return -n;' + gorgeSource.slice(at + 'return n;'.length);
  console.log('GORGE_WGSL_BREAK: gorge_fbm_with returns -n (this run must fail)');
}
const harnessTemplate = readFileSync(harnessPath, 'utf8');
const gorgeLines = gorgeSource.split('\n').length;
// The harness calls every hashing function as name$HASH(...): pcg3d and shadertoy through their
// named variants (gorge_fbm, gorge_fbm_shadertoy), every other hash (prime_mix, prime_xor, which
// have no named variants) through the run-time choice gorge_fbm_with(gorge_hash_<hash>, ...).
function shaderFor(hash) {
  const call = hash === 'pcg3d' ? '(' : hash === 'shadertoy' ? '_shadertoy(' : `_with(gorge_hash_${hash}, `;
  const harness = harnessTemplate.replaceAll('$HASH(', call).replaceAll('$LATTICE', `gorge_${hash}_lattice2`);
  if (harness.includes('$')) throw new Error(`${harnessPath}: a $HASH or $LATTICE left after substitution`);
  return gorgeSource + '\n' + harness;
}
// Maps a line of the combined module back to its file.
function where(line) {
  return line <= gorgeLines ? `${gorgePath}:${line}` : `${harnessPath}:${line - gorgeLines}`;
}

// ---- the browser side: compile, dispatch, read back ----------------------------------------------
// Runs in the page (or in Node with Dawn's gpu object). Returns {error} or {adapter, results
// (base64 of the u32 output words)}.
async function runInPage(code, rowsBase64, rowCount, outWordsPerRow, constants, gpuObject) {
  const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const toBase64 = (bytes) => {
    let s = '';
    const chunk = 0x8000;
    for (let i = 0; i < bytes.length; i += chunk) s += String.fromCharCode.apply(null, bytes.subarray(i, i + chunk));
    return btoa(s);
  };
  const gpu = gpuObject || navigator.gpu;
  if (!gpu) return { error: `navigator.gpu is missing (secure context: ${isSecureContext})` };
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return { error: 'requestAdapter() returned null: no WebGPU adapter' };
  const info = adapter.info || {};
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
  const lost = [];
  device.lost.then((l) => lost.push(l.message));
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const compilation = await module.getCompilationInfo();
  const messages = compilation.messages.map((m) => ({ type: m.type, line: m.lineNum, column: m.linePos, text: m.message }));
  if (messages.some((m) => m.type === 'error')) return { messages, error: 'the WGSL module does not compile' };
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const rowsBytes = fromBase64(rowsBase64);
  const rows = device.createBuffer({ size: rowsBytes.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(rows, 0, rowsBytes);
  const outBytes = rowCount * outWordsPerRow * 4;
  const results = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(results, 0, new Uint8Array(outBytes).fill(0xff));  // NaN until written
  const count = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(count, 0, new Uint32Array([rowCount, 0, 0, 0]));
  const readback = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const bind = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: rows } }, { binding: 1, resource: { buffer: results } },
      { binding: 2, resource: { buffer: count } }],
  });
  const validation = await device.popErrorScope();
  if (validation) return { messages, error: `WebGPU validation error: ${validation.message}` };
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(Math.ceil(rowCount / 64));  // parity.wgsl's @workgroup_size(64)
  pass.end();
  encoder.copyBufferToBuffer(results, 0, readback, 0, outBytes);
  const started = performance.now();
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const seconds = (performance.now() - started) / 1000;
  const out = new Uint8Array(readback.getMappedRange().slice(0));
  readback.unmap();
  if (lost.length) return { messages, error: `device lost: ${lost.join('; ')}` };
  device.destroy();
  return {
    messages,
    adapter: `${info.vendor || '?'} ${info.architecture || '?'} ${info.device || ''} ${info.description || ''}`.trim(),
    seconds,
    results: toBase64(out),
  };
}

// Compiles a module and returns its compilation messages (in the page, or in Node with Dawn).
async function compileInPage(code, gpuObject) {
  const gpu = gpuObject || navigator.gpu;
  const adapter = gpu && await gpu.requestAdapter();
  if (!adapter) return { error: 'no WebGPU adapter' };
  const device = await adapter.requestDevice();
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  device.destroy();
  return { messages: info.messages.map((m) => ({ type: m.type, line: m.lineNum, column: m.linePos, text: m.message })) };
}

// Flags: WebGPU is behind --enable-unsafe-webgpu on Linux; SwiftShader is the CPU adapter that
// needs no GPU (GORGE_WEBGPU_ADAPTER=default leaves the choice to Chromium, e.g. to try a real
// GPU); --no-sandbox because CI containers run as root.
const adapterChoice = process.env.GORGE_WEBGPU_ADAPTER || 'swiftshader';
const browserArgs = ['--no-sandbox', '--enable-unsafe-webgpu'];
if (adapterChoice !== 'default') browserArgs.push(`--use-webgpu-adapter=${adapterChoice}`);

// ---- comparison (the GLSL parity test's rules) -------------------------------------------------
function f32bits(x) {
  return new Uint32Array(new Float32Array([x]).buffer)[0];
}

const groups = manifest.groups.map((g) => ({
  ...g,
  outputs: g.outputs.map((o) => ({ ...o, worst: 0, worstLine: 0, mismatches: 0, compared: 0, min: Infinity, max: -Infinity })),
}));

let ok = true;
let browser = null;
let page = null;
let dawnGpu = null;
const consoleErrors = [];
if (runtime === 'dawn') {
  Object.assign(globalThis, puppeteer.globals);  // the webgpu module (GPUBufferUsage, ...)
  dawnGpu = puppeteer.create([]);
  console.log('Dawn (npm webgpu)');
} else {
  browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: browserArgs });
}
try {
  if (browser) {
    page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await page.goto(pathToFileURL(pagePath).href);
    console.log(`Chromium ${await browser.version()}`);
  }
  for (const file of compileOnly) {
    const code = gorgeSource + '\n' + readFileSync(file, 'utf8');
    const r = page ? await page.evaluate(compileInPage, code) : await compileInPage(code, dawnGpu);
    const errors = (r.messages || []).filter((m) => m.type === 'error');
    for (const m of r.messages || []) {
      const at = m.line <= gorgeLines ? `${gorgePath}:${m.line}` : `${file}:${m.line - gorgeLines}`;
      console.log(`${at}:${m.column}: ${m.type}: ${m.text}`);
    }
    if (r.error || errors.length) {
      console.log(`FAIL: ${file} ${r.error || 'does not compile after gorge.wgsl'}`);
      ok = false;
    } else {
      console.log(`${file}: compiles after gorge.wgsl`);
    }
  }
  for (const batch of manifest.batches) {
    const rows = typed(`${batch.hash}.rows.u32`, Uint32Array);
    const cpu = typed(`${batch.hash}.cpu.f32`, Float32Array);
    const cpuBits = typed(`${batch.hash}.cpu.f32`, Uint32Array);
    const ref = typed(`${batch.hash}.ref.f64`, Float64Array);
    const groupOf = typed(`${batch.hash}.group.u32`, Uint32Array);
    const lineOf = typed(`${batch.hash}.line.u32`, Uint32Array);
    const code = shaderFor(batch.hash);
    const rowsBase64 = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).toString('base64');
    const r = page ? await page.evaluate(runInPage, code, rowsBase64, batch.rows, outWords, constants)
      : await runInPage(code, rowsBase64, batch.rows, outWords, constants, dawnGpu);
    for (const m of r.messages || []) console.log(`${where(m.line)}:${m.column}: ${m.type}: ${m.text}`);
    if (r.error) {
      console.log(`FAIL (${batch.hash}): ${r.error}`);
      ok = false;
      break;
    }
    console.log(`${batch.hash}: ${batch.rows} rows on WebGPU adapter "${r.adapter}" in ${r.seconds.toFixed(2)} s`);
    const bytes = Buffer.from(r.results, 'base64');
    const gpu = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const gpuBits = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    for (let row = 0; row < batch.rows; ++row) {
      const g = groups[groupOf[row]];
      for (const o of g.outputs) {
        const k = row * outWords + o.slot;
        const got = gpu[k];
        ++o.compared;
        let err, bad;
        if (o.vs_double) {
          o.min = Math.min(o.min, ref[k]);
          o.max = Math.max(o.max, ref[k]);
          err = Math.abs(got - ref[k]);
          bad = !(err <= o.tolerance);
        } else {
          o.min = Math.min(o.min, cpu[k]);
          o.max = Math.max(o.max, cpu[k]);
          if (o.tolerance < 0) {
            bad = gpuBits[k] !== cpuBits[k];
            err = bad ? (Number.isNaN(got - cpu[k]) ? NaN : Math.abs(got - cpu[k]) || Number.MIN_VALUE) : 0;
          } else {
            err = Math.abs(got - cpu[k]);
            bad = !(err <= o.tolerance);
          }
        }
        if (bad) ++o.mismatches;
        if (!(err <= o.worst)) {
          o.worst = err;
          o.worstLine = lineOf[row];
        }
      }
    }
  }
  if (consoleErrors.length) {
    console.log(`page console errors:\n  ${consoleErrors.join('\n  ')}`);
    ok = false;
  }
} finally {
  if (browser) await browser.close();
}

if (ok) {
  const pad = (s, n) => String(s).padEnd(n);
  console.log('\nWebGPU (gorge.wgsl) against the C++ float path ("vs double": the C++ double path) on the same inputs:');
  if (groups.some((g) => g.name.includes('*'))) {
    console.log('("*": the inputs of the pcg3d reference rows, run with a hash that has no reference rows)');
  }
  console.log(`  ${pad('rows', 34)} ${pad('output', 22)} ${'compared'.padStart(9)} ${'worst'.padStart(11)} ${pad('at', 12)} tolerance`);
  for (const g of groups) {
    for (const o of g.outputs) {
      if (o.compared === 0) continue;
      let at = '-';
      if (o.worst !== 0) {
        if (g.line_kind === 'sample') at = `(${o.worstLine % manifest.tile_size},${Math.floor(o.worstLine / manifest.tile_size)})`;
        else at = `${g.line_kind} ${o.worstLine}`;
      }
      const tol = o.tolerance < 0 ? 'bit-exact' : o.tolerance.toExponential(1);
      const fail = o.mismatches ? '   <-- FAIL' : '';
      console.log(`  ${pad(g.name, 34)} ${pad(o.name, 22)} ${String(o.compared).padStart(9)} ${o.worst.toExponential(3).padStart(11)} ${pad(at, 12)} ${tol}${fail}`);
      if (o.mismatches) {
        console.log(`    ${o.mismatches} of ${o.compared} outside the tolerance`);
        ok = false;
      }
      if (!(o.max > o.min) && !o.constant) {  // constant: all equal by design (manifest.json)
        console.log(`    the C++ values are all equal (${o.min}): the comparison would prove nothing   <-- FAIL`);
        ok = false;
      }
    }
  }
}
console.log(ok ? 'PASS' : 'FAIL');
process.exit(ok ? 0 : 1);
