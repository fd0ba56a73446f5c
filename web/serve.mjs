// A tiny read-only static file server for the playground (web/index.html). Browsers do not let a
// page fetch() files over file://, and the playground loads the shipped shader sources
// (include/gorge/wgsl/gorge.wgsl, include/gorge/glsl/gorge.glsl) at run time, so it is served
// over http://127.0.0.1 (a secure context, so WebGPU is available). Node's own http module only:
// no npm package is needed.
//
// Usage: node web/serve.mjs [--port N] [--root DIR]
//   --port N   port on 127.0.0.1 (default 8123; 0 picks a free one)
//   --root DIR directory served (default: the repository root, the parent of web/)
// Prints "gorge playground: http://127.0.0.1:PORT/web/index.html" once listening. Only GET and
// HEAD are answered; paths outside the root, and dot files, are refused.
//
// SPDX-License-Identifier: MPL-2.0
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
function arg(name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}
const defaultPort = 8123;
const port = Number(arg('port', defaultPort));
const root = path.resolve(arg('root', path.join(here, '..')));
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: ${arg('port')} (allowed: 0..65535)`);
  process.exit(2);
}

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wgsl': 'text/plain; charset=utf-8',
  '.glsl': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

function refuse(res, code, text) {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${code} ${text}\n`);
}

const server = createServer((req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'only GET and HEAD');
  let rel;
  try {
    rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return refuse(res, 400, 'bad path');
  }
  if (rel === '/') {
    res.writeHead(302, { location: '/web/index.html' });
    return res.end();
  }
  const file = path.resolve(root, '.' + rel);
  if (file !== root && !file.startsWith(root + path.sep)) return refuse(res, 403, 'outside the served directory');
  if (path.relative(root, file).split(path.sep).some((part) => part.startsWith('.'))) return refuse(res, 403, 'hidden file');
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return refuse(res, 404, 'not found');
  }
  if (!stat.isFile()) return refuse(res, 404, 'not a file');
  res.writeHead(200, {
    'content-type': types[path.extname(file).toLowerCase()] || 'application/octet-stream',
    'content-length': stat.size,
    'cache-control': 'no-cache',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
});

server.listen(port, '127.0.0.1', () => {
  console.log(`gorge playground: http://127.0.0.1:${server.address().port}/web/index.html`);
});
