#!/usr/bin/env node
// A small dependency-free static server for the demo page. It serves an allowlist only: demo/'s
// static files, js/'s ES modules and the wasm builds (wasm/*.wasm, js/**/*.wasm); everything else
// is 404. It answers single HTTP Range requests (RFC 9110), sends the right MIME types
// (application/wasm for .wasm) and sets COOP/COEP/CORP so the page is cross-origin isolated
// (precise timers).
//
// Hostile input: the path is split on '/' before percent-decoding, and any segment that decodes to
// something a file name must not hold ('..', '.', '/', '\', NUL or other control characters) is a
// 400, so traversal never reaches the file system. The file is then resolved with realpath and
// the resolved path must itself pass the allowlist inside the real allowed directory, so no link
// leads out of it. Every request runs inside one try/catch: an error is a 500 and one log line.
import { createServer } from 'node:http';
import { constants, promises as fsp } from 'node:fs';
import { pipeline } from 'node:stream';
import { extname, join, relative, resolve, sep, isAbsolute } from 'node:path';
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
};

/**
 * What may be served: top-level directory -> file extensions allowed anywhere below it.
 * Dot-files and dot-directories are never served.
 * @type {Record<string, Set<string>>}
 */
const ALLOW = {
  demo: new Set(['.html', '.js', '.mjs', '.css', '.json', '.wasm', '.gguf', '.png', '.svg']),
  js: new Set(['.js', '.mjs', '.wasm']),
  wasm: new Set(['.wasm']),
};

/** Requests one connection may have waiting behind the one being answered. */
const MAX_PIPELINED = 64;

/** Longest request target accepted (bytes, query included): far above any path in the repo. */
const MAX_URL = 2048;

/**
 * Headers on every answer: cross-origin isolation for the page, no caching, no sniffing. COEP is
 * credentialless, not require-corp: the page stays crossOriginIsolated (Chromium, Firefox), and a
 * no-cors request to another origin (sent without credentials) still gets its answer, which is how
 * the page tells a server without CORS from one that does not answer (url-errors.js). A browser
 * without credentialless (Safari) runs the page without isolation: the Quantize panel then offers
 * one thread (quantize-tab.js), everything else is the same.
 */
const BASE = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'credentialless',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

class HttpError extends Error {
  /** @param {number} status @param {string} message @param {Record<string, string>} [headers] */
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * Turns a request target into path segments, or throws HttpError 400/404/414.
 * Splits on '/' first and decodes each segment, so an encoded '/' or '..' cannot act as one.
 * @param {string} url the raw request target
 * @returns {string[]} decoded segments, the last one '' for a trailing slash
 */
function parseTarget(url) {
  if (url.length > MAX_URL) throw new HttpError(414, 'URI too long');
  if (url[0] !== '/') throw new HttpError(400, 'bad request target');
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const segs = path.slice(1).split('/');
  return segs.map((s, i) => {
    let d;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw new HttpError(400, 'malformed percent-encoding');
    }
    // '' is allowed only as the last segment (a directory's trailing slash).
    if ((d === '' && i < segs.length - 1) || d === '.' || d === '..' || /[/\\:\x00-\x1f\x7f]/.test(d))
      throw new HttpError(400, 'bad path segment');
    return d;
  });
}

/**
 * Whether `segs` (below a top-level directory) name a file the allowlist lets out.
 * @param {string} top @param {string[]} segs
 */
function allowed(top, segs) {
  const exts = Object.hasOwn(ALLOW, top) ? ALLOW[top] : undefined;
  if (!exts || segs.length === 0) return false;
  if (segs.some((s) => s === '' || s.startsWith('.'))) return false;
  return exts.has(extname(segs[segs.length - 1]).toLowerCase());
}

/**
 * Parses a Range header against a file of `size` bytes (RFC 9110 14.1-14.2).
 * @param {string | undefined} header
 * @param {number} size
 * @returns {null | 'unsatisfiable' | [number, number]} null: serve the whole file (no Range, a
 *   malformed one, or several ranges, which this server may ignore); otherwise [first, last] inclusive.
 */
export function parseRange(header, size) {
  if (header === undefined) return null;
  const m = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  // Digits beyond 2^53 round, and Infinity compares correctly; neither can reach a read.
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return [Math.max(0, size - n), size - 1];
  }
  const first = Number(m[1]);
  const last = m[2] === '' ? Infinity : Number(m[2]);
  if (last < first) return null; // an invalid range-spec: ignored
  if (first >= size) return 'unsatisfiable';
  return [first, Math.min(last, size - 1)];
}

/**
 * Resolves the segments to a real file inside an allowed directory, or throws HttpError 404.
 * @param {string} root real path of the served tree
 * @param {string[]} segs
 * @returns {Promise<string>} the file's real path
 */
async function resolveFile(root, segs) {
  if (!allowed(segs[0], segs.slice(1))) throw new HttpError(404, 'not found');
  let real;
  let top;
  try {
    real = await fsp.realpath(join(root, ...segs));
    top = await fsp.realpath(join(root, segs[0]));
  } catch {
    throw new HttpError(404, 'not found');
  }
  // Where the link really leads must pass the same rule, inside the real allowed directory.
  const rel = relative(top, real);
  if (rel === '' || isAbsolute(rel) || !allowed(segs[0], rel.split(sep))) throw new HttpError(404, 'not found');
  return real;
}

/**
 * Creates the demo server (not listening yet). Request handling never throws: bad requests are
 * 4xx, unexpected errors are a 500 and one line passed to `log`.
 * @param {{ root?: string, log?: (line: string) => void }} [o] root: the repository to serve
 *   (default: this file's parent directory); log: where 500s are reported (default: stderr).
 * @returns {import('node:http').Server}
 */
export function createDemoServer(o = {}) {
  const root = resolve(o.root ?? fileURLToPath(new URL('..', import.meta.url)));
  const log = o.log ?? ((line) => process.stderr.write(line + '\n'));

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  async function handle(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new HttpError(405, 'method not allowed', { Allow: 'GET, HEAD' });
    const segs = parseTarget(req.url ?? '');
    if (segs.length === 1 && (segs[0] === '' || segs[0] === 'demo')) {
      res.writeHead(302, { ...BASE, Location: '/demo/', 'Content-Length': 0 });
      res.end();
      return;
    }
    if (segs[segs.length - 1] === '') segs[segs.length - 1] = 'index.html';
    const realRoot = await fsp.realpath(root).catch(() => {
      throw new HttpError(404, 'not found');
    });
    const file = await resolveFile(realRoot, segs);
    // Only regular files: a FIFO or device must not even be opened (open() on a FIFO blocks).
    // O_NONBLOCK makes open() return at once if the file was swapped for one since the stat.
    const before = await fsp.stat(file).catch(() => null);
    if (!before?.isFile()) throw new HttpError(404, 'not found');
    const fh = await fsp.open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)).catch(() => {
      throw new HttpError(404, 'not found');
    });
    let handed = false;
    try {
      const big = await fh.stat({ bigint: true });
      if (!big.isFile()) throw new HttpError(404, 'not found');
      const st = { size: Number(big.size) };
      // A strong validator: the file's identity and version (inode, size, modification time in ns),
      // so a client reading in pieces can tell the pieces come from one version of the file.
      const etag = `"${big.ino.toString(16)}-${big.size.toString(16)}-${big.mtimeNs.toString(16)}"`;
      const lastModified = new Date(Number(big.mtimeMs)).toUTCString();
      const headers = {
        ...BASE,
        'Accept-Ranges': 'bytes',
        'Content-Type': MIME[/** @type {keyof typeof MIME} */ (extname(file).toLowerCase())],
        ETag: etag,
        'Last-Modified': lastModified,
      };
      // Range handling is defined for GET only; with If-Range, only while the validator matches
      // (the ETag, or the Last-Modified date exactly: RFC 9110 13.1.5).
      const ifRange = req.headers['if-range'];
      const current = ifRange === undefined || ifRange === etag || ifRange === lastModified;
      const range = req.method === 'GET' && current ? parseRange(req.headers.range, st.size) : null;
      if (range === 'unsatisfiable')
        throw new HttpError(416, 'range not satisfiable', { 'Content-Range': `bytes */${st.size}` });
      const [a, b] = range ?? [0, st.size - 1];
      if (range) {
        res.writeHead(206, { ...headers, 'Content-Length': b - a + 1, 'Content-Range': `bytes ${a}-${b}/${st.size}` });
      } else {
        res.writeHead(200, { ...headers, 'Content-Length': st.size });
      }
      if (req.method === 'HEAD' || st.size === 0) {
        res.end();
        return;
      }
      handed = true;
      // pipeline closes the file when the client goes away, and ends the answer on a read error.
      await new Promise((ok) => pipeline(fh.createReadStream({ start: a, end: b }), res, () => ok(undefined)));
    } finally {
      if (!handed) await fh.close();
    }
  }

  /**
   * One request, answered; resolves when its answer is finished or the connection is gone.
   * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
   */
  const answer = (req, res) =>
    handle(req, res).catch((e) => {
      const known = e instanceof HttpError;
      if (!known) {
        let what = '?';
        try {
          what = `${req.method} ${JSON.stringify(String(req.url).slice(0, 200))}`;
        } catch {}
        log(`blockquant demo: 500 ${what}: ${String(e?.message ?? e).replace(/\s+/g, ' ')}`);
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const status = known ? e.status : 500;
      const body = known ? e.message : 'internal error';
      res.writeHead(status, {
        ...BASE,
        ...(known ? e.headers : {}),
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
    });

  // Requests pipelined on one connection are answered one at a time, each starting (and opening
  // its file) only once the one before has finished; a connection with more than MAX_PIPELINED
  // waiting is closed, and once a connection is gone its waiting requests are dropped unopened.
  /** @type {WeakMap<import('node:net').Socket, { tail: Promise<void>, waiting: number }>} */
  const queues = new WeakMap();
  return createServer((req, res) => {
    const socket = req.socket;
    let q = queues.get(socket);
    if (!q) queues.set(socket, (q = { tail: Promise.resolve(), waiting: 0 }));
    if (q.waiting >= MAX_PIPELINED) {
      socket.destroy();
      return;
    }
    const queue = q;
    queue.waiting++;
    queue.tail = queue.tail
      .then(() => (socket.destroyed ? undefined : answer(req, res)))
      .finally(() => {
        queue.waiting--;
      });
  });
}

/**
 * Creates the demo server and listens; resolves to it once it listens, rejects with the listen
 * error (EADDRINUSE, ...). Port 0 picks a free port; read it from server.address().
 * @param {{ port?: number, host?: string, root?: string, log?: (line: string) => void }} [o]
 *   port (default 8080), host (default 127.0.0.1), and createDemoServer's options.
 * @returns {Promise<import('node:http').Server>}
 */
export function startServer(o = {}) {
  const server = createDemoServer(o);
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port ?? 8080, o.host ?? '127.0.0.1', () => {
      server.off('error', fail);
      ok(server);
    });
  });
}

/** `node demo/server.js` (make demo): PORT and HOST from the environment; errors are one line, exit 1. */
async function main() {
  const env = process.env.PORT ?? '8080';
  const host = process.env.HOST || '127.0.0.1';
  const port = /^\d{1,5}$/.test(env) ? Number(env) : NaN;
  if (!(port <= 65535)) {
    console.error(`blockquant demo: PORT=${JSON.stringify(env)} is not a port number (0-65535)`);
    process.exit(1);
  }
  let server;
  try {
    server = await startServer({ port, host });
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e);
    const next = port === 0 ? 8081 : port < 65535 ? port + 1 : 8081;
    const why =
      err.code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use`
        : err.code === 'EACCES'
          ? `no permission to listen on port ${port} on ${host}`
          : `cannot listen on ${host}:${port} (${err.code ?? err.message})`;
    console.error(`blockquant demo: ${why}; pick another with PORT=..., e.g. PORT=${next} make demo`);
    process.exit(1);
  }
  const a = /** @type {import('node:net').AddressInfo} */ (server.address());
  const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  console.log(`blockquant demo: http://${h}:${a.port}/  (Ctrl-C stops it)`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
