// Throughput of gorge.wgsl: the demo pipeline (fBm, erosion filter with the default 5 octaves,
// height offset) over a size x size tile in a WebGPU compute shader, in points per second.
//
// Two runtimes:
//   --runtime chromium  headless Chromium through puppeteer-core (web/node_modules), on the adapter
//                       GORGE_WEBGPU_ADAPTER names (default swiftshader, the CPU one; `default`
//                       lets Chromium choose, e.g. a real GPU with --enable-features=Vulkan)
//   --runtime dawn      Node's `webgpu` package (Dawn), if installed in web/node_modules
//                       (`npm install --no-save webgpu` in web/; it is not in the lockfile)
// Usage: node bench_wgsl.mjs [--runtime chromium|dawn] [--size N] [--reps R] [--hash pcg3d|shadertoy]
//                            [--fast-trig] [--gorge include/gorge/wgsl/gorge.wgsl] [--web web]
//                            [--chromium PATH]
// Prints the adapter, the time of each timed dispatch (after one untimed warm-up) and the best and
// median throughput. With the adapter's timestamp-query feature the times are the GPU's (start to
// end of the compute pass); without it they are host-side (submit to onSubmittedWorkDone), which
// counts the submission too: use size >= 2048 on a GPU. --fast-trig creates the pipeline with
// gorge_accurate_trig = false (WGSL's builtin sin and cos instead of gorge's own).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
function arg(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}
const here = path.dirname(new URL(import.meta.url).pathname);
const runtime = arg('runtime', 'chromium');
const size = Number(arg('size', runtime === 'dawn' ? 4096 : 512));
const reps = Number(arg('reps', 5));
const hash = arg('hash', 'pcg3d');
const fastTrig = argv.includes('--fast-trig');
const gorgePath = arg('gorge', path.join(here, '..', '..', 'include', 'gorge', 'wgsl', 'gorge.wgsl'));
const webDir = path.resolve(arg('web', path.join(here, '..', '..', 'web')));
const chromium = arg('chromium', process.env.GORGE_CHROMIUM || '/usr/bin/chromium');
const requireWeb = createRequire(path.join(webDir, 'package.json'));

const kernel = `
@group(0) @binding(0) var<storage, read_write> heights: array<f32>;
@group(0) @binding(1) var<uniform> tile: vec4u;  // x: size
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3u) {
    let n = tile.x;
    if (id.x >= n || id.y >= n) {
        return;
    }
    let p = (vec2f(id.xy) + 0.5) / f32(n);
    heights[id.y * n + id.x] = gorge_demo_pipeline_defaults${hash === 'pcg3d' ? '' : '_' + hash}(p, 0u).height;
}
`;
const code = readFileSync(gorgePath, 'utf8') + '\n' + kernel;
const constants = fastTrig ? { gorge_accurate_trig: 0 } : {};

// Runs in the page (Chromium) or in Node (Dawn): self-contained, takes the GPU object.
async function bench(gpu, code, size, reps, constants) {
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return { error: 'no WebGPU adapter' };
  const info = adapter.info || {};
  const timestamps = adapter.features.has('timestamp-query');
  const device = await adapter.requestDevice({
    requiredFeatures: timestamps ? ['timestamp-query'] : [],
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize },
  });
  const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
  const resolved = timestamps ? device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }) : null;
  const stamps = timestamps ? device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) : null;
  const module = device.createShaderModule({ code });
  const compilation = await module.getCompilationInfo();
  const errors = compilation.messages.filter((m) => m.type === 'error');
  if (errors.length) return { error: errors.map((m) => `line ${m.lineNum}: ${m.message}`).join('\n') };
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const bytes = size * size * 4;
  const heights = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const tile = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(tile, 0, new Uint32Array([size, 0, 0, 0]));
  const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: heights } }, { binding: 1, resource: { buffer: tile } }] });
  const groups = Math.ceil(size / 8);
  const run = async () => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass(timestamps
      ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(groups, groups);
    pass.end();
    if (timestamps) {
      encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
      encoder.copyBufferToBuffer(resolved, 0, stamps, 0, 16);
    }
    const t0 = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    const host = (performance.now() - t0) / 1000;
    if (!timestamps) return host;
    await stamps.mapAsync(GPUMapMode.READ);
    const t = new BigInt64Array(stamps.getMappedRange().slice(0));
    stamps.unmap();
    return Number(t[1] - t[0]) / 1e9;
  };
  await run();  // warm-up (pipeline compilation on some back ends)
  const seconds = [];
  for (let i = 0; i < reps; ++i) seconds.push(await run());
  // A sample height, so that the work cannot be skipped and the result can be eyeballed.
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(heights, 0, readback, 0, 16);
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const first = new Float32Array(readback.getMappedRange().slice(0))[0];
  readback.unmap();
  device.destroy();
  return { adapter: `${info.vendor || '?'} ${info.architecture || '?'} ${info.device || ''} ${info.description || ''}`.trim(),
    seconds, first, timing: timestamps ? 'GPU timestamps' : 'host clock' };
}

let result;
let version;
if (runtime === 'dawn') {
  let webgpu;
  try {
    webgpu = requireWeb('webgpu');
  } catch (e) {
    console.error(`Node's webgpu package is not installed in ${webDir}/node_modules: run \`npm install --no-save webgpu\` there (${e.code || e.message})`);
    process.exit(1);
  }
  Object.assign(globalThis, webgpu.globals);
  const gpu = webgpu.create([]);
  version = 'Dawn (npm webgpu)';
  result = await bench(gpu, code, size, reps, constants);
} else {
  const puppeteer = requireWeb('puppeteer-core');
  const adapterChoice = process.env.GORGE_WEBGPU_ADAPTER || 'swiftshader';
  const args = ['--no-sandbox', '--enable-unsafe-webgpu'];
  if (adapterChoice !== 'default') args.push(`--use-webgpu-adapter=${adapterChoice}`);
  else args.push('--enable-features=Vulkan');
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args, protocolTimeout: 0 });
  try {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(here, 'runner.html')).href);
    version = `Chromium ${await browser.version()}`;
    result = await page.evaluate(async (c, s, r, k, benchSource) => {
      const f = new Function(`return (${benchSource});`)();
      return f(navigator.gpu, c, s, r, k);
    }, code, size, reps, constants, bench.toString());
  } finally {
    await browser.close();
  }
}
if (result.error) {
  console.error(`bench_wgsl: ${result.error}`);
  process.exit(1);
}
const points = size * size;
const sorted = [...result.seconds].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(`${version}, adapter "${result.adapter}"`);
console.log(`demo pipeline (${hash}${fastTrig ? ', gorge_accurate_trig = false' : ''}), ${result.timing}, ${size}x${size} = ${points} points, ${reps} timed dispatches: ` +
  result.seconds.map((t) => `${(t * 1000).toFixed(1)} ms`).join(', '));
console.log(`best ${(points / sorted[0] / 1e6).toFixed(2)} Mpoints/s, median ${(points / median / 1e6).toFixed(2)} Mpoints/s` +
  ` (height at the first sample: ${result.first.toFixed(6)})`);
