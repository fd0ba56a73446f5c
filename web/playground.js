// gorge playground: the controls, the view (pan and zoom) and the exports around web/gpu.js.
// window.playground exposes the state to scripts (tests/web drives the page through it and the
// controls): ready (a promise), backend, idle(), readSamples(), values, view.
//
// SPDX-License-Identifier: MPL-2.0
import { createBackend } from './gpu.js';
import {
  cppSnippet, defaultValues, defaultView, fromPreset, glslSnippet, hashes, invalidReason, parameterId, parameters,
  presetOf, r16Bytes,
} from './params.js';

const query = new URLSearchParams(location.search);
const backendKind = query.get('backend') || 'auto';
const minSize = 64;
const maxSize = 2048;
const defaultSize = 512;
const size = Math.min(maxSize, Math.max(minSize, Math.round(Number(query.get('size')) || defaultSize)));
// Zoom per wheel unit (a notch is about 100 units), and the spacing limits of the view.
const zoomPerWheelUnit = 0.0015;
const minSpacing = 1e-6;
const maxSpacing = 1;

const state = {
  values: defaultValues(),
  view: defaultView(size),
  show: { input: false, ridge: false },
};
const statusLine = document.getElementById('status');
let canvas = document.getElementById('terrain');
canvas.width = size;
canvas.height = size;
let backend = null;

function setStatus(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

function fail(e) {
  setStatus(String(e.message || e), true);
  console.error(`gorge playground: ${e.message || e}`);
}

// ---- rendering: one frame at a time, always of the latest state -------------------------------
let dirty = false;
let rendering = null;
let frames = 0;

function requestRender() {
  dirty = true;
  if (!rendering && backend) rendering = renderLoop();
}

async function renderLoop() {
  try {
    while (dirty) {
      dirty = false;
      await new Promise((r) => requestAnimationFrame(r));
      const t0 = performance.now();
      await backend.render(state);
      ++frames;
      const v = state.view;
      setStatus(`${backend.description}: ${v.size}² samples in ${(performance.now() - t0).toFixed(0)} ms`);
      document.getElementById('position').textContent =
        `origin (${v.origin[0].toPrecision(6)}, ${v.origin[1].toPrecision(6)}), spacing ${v.spacing.toPrecision(4)}: drag to pan, wheel to zoom`;
    }
  } catch (e) {
    fail(e);
  } finally {
    rendering = null;
  }
}

// Resolves once the latest state has been rendered.
async function idle() {
  while (rendering || dirty) {
    if (!rendering) rendering = renderLoop();
    await rendering;
  }
}

// ---- controls ----------------------------------------------------------------------------------
const controls = [];

function getValue(p) {
  return p.index === undefined ? state.values[p.key] : state.values[p.key][p.index];
}

function setValue(p, v) {
  if (p.index === undefined) state.values[p.key] = v;
  else state.values[p.key][p.index] = v;
}

// The hash select (#hash): the policy of the input noise and the filter alike.
function buildHashControl(root) {
  const h = document.createElement('h2');
  h.textContent = 'Hash (noise and filter)';
  const row = document.createElement('div');
  row.className = 'parameter';
  const label = document.createElement('label');
  label.textContent = 'hash';
  label.htmlFor = 'hash';
  const select = document.createElement('select');
  select.id = 'hash';
  for (const x of hashes) select.append(Object.assign(document.createElement('option'), { value: x.name, textContent: x.label }));
  select.title = 'The hash policy of gorge generate --hash: each gives its own terrain; prime_xor is the fastest';
  row.append(label, select);
  root.append(h, row);
  select.addEventListener('change', () => {
    state.values.hash = select.value;
    requestRender();
  });
  const show = () => { select.value = state.values.hash; };
  controls.push(show);
  show();
}

function buildControls() {
  const root = document.getElementById('parameters');
  buildHashControl(root);
  let group = null;
  for (const p of parameters) {
    if (p.group !== group) {
      group = p.group;
      const h = document.createElement('h2');
      h.textContent = group;
      root.append(h);
    }
    const id = parameterId(p);
    const row = document.createElement('div');
    row.className = 'parameter';
    const label = document.createElement('label');
    label.textContent = p.label;
    label.htmlFor = `${id}-number`;
    const slider = Object.assign(document.createElement('input'), {
      type: 'range', id: `${id}-slider`, min: p.lo, max: p.hi, step: p.step,
    });
    slider.setAttribute('aria-label', `${p.label} slider`);
    const number = Object.assign(document.createElement('input'), { type: 'number', id: `${id}-number`, step: 'any' });
    row.append(label, slider, number);
    root.append(row);
    const show = () => {
      const v = getValue(p);
      slider.value = String(v);
      number.value = String(v);
      number.classList.remove('invalid');
      number.title = '';
    };
    slider.addEventListener('input', () => {
      const v = Number(slider.value);
      setValue(p, v);
      number.value = String(v);
      number.classList.remove('invalid');
      requestRender();
    });
    number.addEventListener('input', () => {
      const v = number.value.trim() === '' ? NaN : Number(number.value);
      const why = invalidReason(p, v);
      number.classList.toggle('invalid', !!why);
      number.title = why;
      if (why) return;
      setValue(p, v);
      slider.value = String(v);
      requestRender();
    });
    number.addEventListener('change', show);  // an invalid entry goes back to the value in use
    controls.push(show);
    show();
  }
  const toggle = (id, key) => {
    const box = document.getElementById(id);
    box.checked = state.show[key];
    box.addEventListener('change', () => {
      state.show[key] = box.checked;
      requestRender();
    });
  };
  toggle('show-ridge', 'ridge');
  toggle('show-input', 'input');
  document.getElementById('reset-view').addEventListener('click', () => {
    state.view = defaultView(size);
    requestRender();
  });
  document.getElementById('reset-parameters').addEventListener('click', () => {
    state.values = defaultValues();
    controls.forEach((show) => show());
    requestRender();
  });
}

// ---- pan and zoom: the view's origin and spacing, kept as float32 (what the GPU and the C++ use)
function samplesPerCssPixel() {
  return size / canvas.getBoundingClientRect().width;
}

function attachViewControls() {
  let drag = null;
  canvas.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, y: e.clientY, origin: [...state.view.origin] };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const k = samplesPerCssPixel() * state.view.spacing;
    state.view.origin = [Math.fround(drag.origin[0] - (e.clientX - drag.x) * k),
      Math.fround(drag.origin[1] - (e.clientY - drag.y) * k)];
    requestRender();
  });
  const end = () => { drag = null; };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    const at = [(e.clientX - r.left) * samplesPerCssPixel(), (e.clientY - r.top) * samplesPerCssPixel()];
    const v = state.view;
    const world = [v.origin[0] + v.spacing * at[0], v.origin[1] + v.spacing * at[1]];
    const spacing = Math.fround(Math.min(maxSpacing, Math.max(minSpacing, v.spacing * Math.exp(e.deltaY * zoomPerWheelUnit))));
    state.view = { ...v, spacing, origin: [Math.fround(world[0] - spacing * at[0]), Math.fround(world[1] - spacing * at[1])] };
    requestRender();
  }, { passive: false });
}

// ---- exports -----------------------------------------------------------------------------------
function download(name, bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function showSnippet(text) {
  const pre = document.getElementById('snippet');
  pre.textContent = text;
  pre.hidden = false;
}

async function heights() {
  await idle();
  const { data } = await backend.readSamples();
  const h = new Float32Array(data.length / 4);
  for (let k = 0; k < h.length; ++k) h[k] = data[4 * k];
  return h;
}

const exporters = {
  'export-preset': async () => download('gorge-view.json', JSON.stringify(presetOf(state.values, state.view), null, 2) + '\n', 'application/json'),
  'export-cpp': async () => {
    const text = cppSnippet(state.values, state.view);
    showSnippet(text);
    download('gorge-view.cpp', text, 'text/plain');
  },
  'export-glsl': async () => {
    const text = glslSnippet(state.values, state.view);
    showSnippet(text);
    download('gorge-view.glsl', text, 'text/plain');
  },
  'export-r16': async () => download(`gorge-view-${size}x${size}.r16`, r16Bytes(await heights()), 'application/octet-stream'),
};

// A preset file (exported here, or written by gorge generate --save-preset): its parameters and
// view. The page keeps its own ?size; a preset of another size is shown with its origin and
// spacing (the same samples, fewer or more of them).
async function importPreset(file) {
  const loaded = fromPreset(JSON.parse(await file.text()), state.values, state.view);
  state.values = loaded.values;
  state.view = { ...loaded.view, size };
  controls.forEach((show) => show());
  requestRender();
  await idle();
  if (loaded.view.size !== size) {
    setStatus(`${statusLine.textContent} (the preset's size ${loaded.view.size} differs from ?size=${size})`);
  }
}

// ---- start -------------------------------------------------------------------------------------
async function start() {
  buildControls();
  const created = await createBackend(backendKind, canvas, {
    wgsl: new URL('../include/gorge/wgsl/gorge.wgsl', import.meta.url).href,
    glsl: new URL('../include/gorge/glsl/gorge.glsl', import.meta.url).href,
  });
  backend = created.backend;
  if (created.canvas) canvas = created.canvas;
  for (const why of created.tried) console.info(`gorge playground: ${why}; using WebGL2`);
  attachViewControls();
  for (const [id, run] of Object.entries(exporters)) {
    document.getElementById(id).addEventListener('click', () => run().catch(fail));
  }
  const picker = document.getElementById('import-preset');
  picker.addEventListener('change', () => {
    if (picker.files.length) importPreset(picker.files[0]).catch(fail).finally(() => { picker.value = ''; });
  });
  requestRender();
  await idle();
}

const ready = start();
ready.catch(fail);
window.playground = {
  ready,
  get backend() { return backend && backend.name; },
  get frames() { return frames; },
  get values() { return structuredClone(state.values); },
  get view() { return structuredClone(state.view); },
  idle,
  async readSamples() {
    await idle();
    return backend.readSamples();
  },
  heights,
};
