// A tiny read-only static file server for the playground (web/index.html). Browsers do not let a
// page fetch() files over file://, and the playground loads the shipped shader sources
// (include/gorge/wgsl/gorge.wgsl, include/gorge/glsl/gorge.glsl) at run time, so it is served
// over http://127.0.0.1 (a secure context, so WebGPU is available). Node's own http module only:
// no npm package is needed.
//
// Usage: node web/serve.mjs [--port N] [--root DIR]   (or import { servePlayground } from it)
//   --port N   port on 127.0.0.1 (default 8123; 0 picks a free one)
//   --root DIR directory served (default: the repository root, the parent of web/)
// Prints "gorge playground: http://127.0.0.1:PORT/web/index.html" once listening. Only GET and
// HEAD are answered; paths outside the root, and dot files, are refused.
//
// SPDX-License-Identifier: MPL-2.0
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const defaultPort = 8123;

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

// Starts the server; resolves to { server, url } once listening. `transform(relativePath, text)`,
// when given, may rewrite text files before they are sent (tests use it to break a file on purpose).
export function servePlayground({ root = path.join(here, '..'), port = defaultPort, transform = null } = {}) {
  root = path.resolve(root);
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
    const relative = path.relative(root, file);
    if (relative.split(path.sep).some((part) => part.startsWith('.'))) return refuse(res, 403, 'hidden file');
    let stat;
    try {
      stat = statSync(file);
    } catch {
      return refuse(res, 404, 'not found');
    }
    if (!stat.isFile()) return refuse(res, 404, 'not a file');
    const type = types[path.extname(file).toLowerCase()] || 'application/octet-stream';
    if (transform && type.startsWith('text/')) {
      const body = Buffer.from(transform(relative.split(path.sep).join('/'), readFileSync(file, 'utf8')));
      res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
      return res.end(req.method === 'HEAD' ? undefined : body);
    }
    res.writeHead(200, { 'content-type': type, 'content-length': stat.size, 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      resolve({ server, url: `http://127.0.0.1:${server.address().port}/web/index.html` });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const arg = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
  };
  const port = Number(arg('port', defaultPort));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port: ${arg('port')} (allowed: 0..65535)`);
    process.exit(2);
  }
  servePlayground({ root: arg('root', path.join(here, '..')), port }).then(
    ({ url }) => console.log(`gorge playground: ${url}`),
    (e) => {
      console.error(`gorge playground: ${e.message}`);
      process.exit(1);
    });
}
