#!/usr/bin/env node
// A small dependency-free static server for the demo: serves the repository (js/, wasm/, demo/),
// answers HTTP Range requests, sends the right MIME types (application/wasm for .wasm), and sets
// COOP/COEP so the page is cross-origin isolated (precise timers).
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

/**
 * Starts the server; resolves to it once it listens.
 * @param {{ port?: number, host?: string, root?: string }} [o]
 * @returns {Promise<import('node:http').Server>}
 */
export function startServer(o = {}) {
  const root = resolve(o.root ?? fileURLToPath(new URL('..', import.meta.url)));
  const server = createServer((req, res) => {
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'no-store',
    };
    let path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/') {
      res.writeHead(302, { ...headers, Location: '/demo/' });
      res.end();
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(root, path));
    if (!file.startsWith(root + sep)) {
      res.writeHead(403, headers);
      res.end('forbidden');
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      st = null;
    }
    if (!st || !st.isFile()) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' });
      res.end('not found');
      return;
    }
    const type = MIME[/** @type {keyof typeof MIME} */ (extname(file))] ?? 'application/octet-stream';
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (m && (m[1] || m[2])) {
      let a = m[1] ? Number(m[1]) : st.size - Number(m[2]);
      let b = m[1] && m[2] ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
      if (a >= st.size || a > b) {
        res.writeHead(416, { ...headers, 'Content-Range': `bytes */${st.size}` });
        res.end();
        return;
      }
      a = Math.max(0, a);
      res.writeHead(206, {
        ...headers,
        'Content-Type': type,
        'Content-Length': b - a + 1,
        'Content-Range': `bytes ${a}-${b}/${st.size}`,
      });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      createReadStream(file, { start: a, end: b }).pipe(res);
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': st.size });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(o.port ?? 8080, o.host ?? '127.0.0.1', () => ok(server)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await startServer({ port: Number(process.env.PORT ?? 8080) });
  const a = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`blockquant demo: http://${a.address}:${a.port}/  (Ctrl-C stops it)`);
}
