// The demo server (demo/server.js) against hostile requests: it serves only the allowlist (demo/,
// js/ modules, the wasm builds), refuses traversal, malformed URLs, symlinks out of the allowed
// directories and other methods with a 4xx, never crashes (a thrown error is a 500 and one log
// line), answers Range requests per RFC 9110, and exits with a one-line message when its port is busy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync, readdirSync } from 'node:fs';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../demo/server.js';

const SERVER = fileURLToPath(new URL('../demo/server.js', import.meta.url));
const LIMIT = { timeout: 60000 }; // a hung server fails the test instead of hanging the suite

/**
 * Sends `text` (bytes as latin1) on a fresh connection and reads the whole answer.
 * status is 0 when the connection closed without an HTTP answer.
 * @returns {Promise<{ status: number, headers: Record<string, string>, body: Buffer }>}
 */
function raw(port, text) {
  return new Promise((ok) => {
    const chunks = [];
    const s = connect(port, '127.0.0.1', () => s.write(Buffer.from(text, 'latin1')));
    s.on('data', (c) => chunks.push(c));
    s.on('error', () => {});
    s.on('close', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all
        .subarray(0, split < 0 ? all.length : split)
        .toString('latin1')
        .split('\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '');
      const headers = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      ok({ status: m ? Number(m[1]) : 0, headers, body: split < 0 ? Buffer.alloc(0) : all.subarray(split + 4) });
    });
  });
}

/** A well-formed request for `target` with extra header lines. */
const req = (port, target, { method = 'GET', headers = [] } = {}) =>
  raw(port, [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers, '', ''].join('\r\n'));

/** Runs `node demo/server.js` with `env`; resolves once it printed its address. */
function spawnServer(env) {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  const exited = new Promise((ok) => child.on('exit', (code) => ok(code)));
  const ready = new Promise((ok, fail) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) ok(Number(m[1]));
    });
    exited.then((code) => fail(new Error(`server exited (${code}) before listening: ${err}`)));
  });
  return { child, ready, exited, output: () => ({ out, err }) };
}

// A tree of its own: allowed files, files that must never be served, and links out of the allowlist.
const dir = mkdtempSync(join(tmpdir(), 'bq-server-'));
const root = join(dir, 'root');
const outside = join(dir, 'outside');
const DATA = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) & 255));
const files = {
  'demo/index.html': '<!doctype html><title>demo</title>',
  'demo/app.js': 'export const app = 1;',
  'demo/style.css': 'body {}',
  'demo/data.gguf': DATA,
  'demo/empty.gguf': '',
  'demo/.secret.js': 'hidden',
  'js/index.js': 'export const x = 1;',
  'js/wasm/simd128.js': 'export default 1;',
  'js/blockquant-simd128.wasm': '\0asm\x01\0\0\0',
  'js/notes.txt': 'not a module',
  'wasm/blockquant-simd128.wasm': '\0asm\x01\0\0\0',
  'wasm/exports.c': 'int x;',
  '.git/config': '[core]',
  'node_modules/x/index.js': 'module',
  'tests/a.test.js': 'test',
  Makefile: 'all:',
  'package.json': '{}',
};
for (const [rel, body] of Object.entries(files)) {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), body);
}
mkdirSync(outside);
writeFileSync(join(outside, 'secret.js'), 'outside the root');
symlinkSync(join(outside, 'secret.js'), join(root, 'demo/leak.js')); // absolute link out of the root
symlinkSync('../Makefile', join(root, 'demo/up.js')); // inside the root, outside the allowlist
symlinkSync('../.git/config', join(root, 'js/config.js'));
symlinkSync(outside, join(root, 'demo/outdir')); // a directory link out of the root
symlinkSync('data.gguf', join(root, 'demo/alias.gguf')); // a link that stays inside demo/
const fifo = spawnSync('mkfifo', [join(root, 'demo/pipe.js')]).status === 0;

const logs = [];
const server = await startServer({ port: 0, root, log: (line) => logs.push(line) });
const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
test.after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('listens on 127.0.0.1 by default', () => {
  assert.equal(/** @type {import('node:net').AddressInfo} */ (server.address()).address, '127.0.0.1');
});

test('serves the allowlist with its MIME types and isolation headers', LIMIT, async () => {
  const cases = [
    ['/demo/', 'text/html; charset=utf-8', files['demo/index.html']],
    ['/demo/index.html?v=2', 'text/html; charset=utf-8', files['demo/index.html']],
    ['/demo/app.js', 'text/javascript; charset=utf-8', files['demo/app.js']],
    ['/demo/style.css', 'text/css; charset=utf-8', files['demo/style.css']],
    ['/demo/alias.gguf', 'application/octet-stream', DATA],
    ['/js/index.js', 'text/javascript; charset=utf-8', files['js/index.js']],
    ['/js/wasm/simd128.js', 'text/javascript; charset=utf-8', files['js/wasm/simd128.js']],
    ['/js/blockquant-simd128.wasm', 'application/wasm', files['js/blockquant-simd128.wasm']],
    ['/wasm/blockquant-simd128.wasm', 'application/wasm', files['wasm/blockquant-simd128.wasm']],
  ];
  for (const [path, type, body] of cases) {
    const r = await req(port, path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers['content-type'], type, path);
    assert.deepEqual(r.body, Buffer.from(body, 'latin1'), path);
    assert.equal(r.headers['content-length'], String(r.body.length), path);
    assert.equal(r.headers['cross-origin-opener-policy'], 'same-origin', path);
    assert.equal(r.headers['cross-origin-embedder-policy'], 'credentialless', path);
    assert.equal(r.headers['cross-origin-resource-policy'], 'same-origin', path);
  }
  const home = await req(port, '/');
  assert.equal(home.status, 302);
  assert.equal(home.headers.location, '/demo/');
  const head = await req(port, '/demo/app.js', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], String(files['demo/app.js'].length));
  assert.equal(head.body.length, 0);
});

test('everything outside the allowlist is 404', LIMIT, async () => {
  for (const path of [
    '/.git/config',
    '/node_modules/x/index.js',
    '/Makefile',
    '/package.json',
    '/tests/a.test.js',
    '/wasm/exports.c',
    '/js/notes.txt',
    '/demo/.secret.js',
    '/demo/missing.js',
    '/js/',
    '/wasm/',
  ]) {
    const r = await req(port, path);
    assert.equal(r.status, 404, path);
    assert.equal(r.headers['cross-origin-resource-policy'], 'same-origin', path);
  }
});

test('symlinks out of the allowed directories are refused', LIMIT, async () => {
  for (const path of ['/demo/leak.js', '/demo/up.js', '/js/config.js', '/demo/outdir/secret.js']) {
    const r = await req(port, path);
    assert.ok(r.status === 403 || r.status === 404, `${path}: ${r.status}`);
    assert.doesNotMatch(r.body.toString('latin1'), /outside the root|all:|\[core\]/, path);
  }
});

test(
  'a FIFO in an allowed directory is not opened',
  { ...LIMIT, skip: !fifo && 'mkfifo is not available' },
  async () => {
    assert.equal((await req(port, '/demo/pipe.js')).status, 404);
  },
);

test('methods other than GET and HEAD are 405', LIMIT, async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
    const r = await req(port, '/demo/app.js', { method, headers: ['Content-Length: 0'] });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.allow, 'GET, HEAD', method);
  }
});

test('an absurdly long path is 414', LIMIT, async () => {
  assert.equal((await req(port, `/demo/${'a'.repeat(5000)}.js`)).status, 414);
});

test('Range: a single satisfiable range is 206 with the right bytes', LIMIT, async () => {
  for (const [range, a, b] of [
    ['bytes=10-19', 10, 19],
    ['bytes=0-0', 0, 0],
    ['bytes=990-', 990, 999],
    ['bytes=-5', 995, 999],
    ['bytes=-2000', 0, 999],
    ['bytes=995-5000', 995, 999],
    ['bytes=0-99999999999999999999999', 0, 999],
    ['BYTES=3-4', 3, 4],
  ]) {
    const r = await req(port, '/demo/data.gguf', { headers: [`Range: ${range}`] });
    assert.equal(r.status, 206, range);
    assert.equal(r.headers['content-range'], `bytes ${a}-${b}/1000`, range);
    assert.equal(r.headers['content-length'], String(b - a + 1), range);
    assert.deepEqual(r.body, DATA.subarray(a, b + 1), range);
    assert.equal(r.headers['cross-origin-embedder-policy'], 'credentialless', range);
  }
});

test('Range: unsatisfiable is 416 with the size', LIMIT, async () => {
  for (const [path, range, size] of [
    ['/demo/data.gguf', 'bytes=1000-', 1000],
    ['/demo/data.gguf', 'bytes=5000-6000', 1000],
    ['/demo/data.gguf', 'bytes=-0', 1000],
    ['/demo/data.gguf', 'bytes=99999999999999999999999-', 1000],
    ['/demo/empty.gguf', 'bytes=0-', 0],
    ['/demo/empty.gguf', 'bytes=-1', 0],
  ]) {
    const r = await req(port, path, { headers: [`Range: ${range}`] });
    assert.equal(r.status, 416, range);
    assert.equal(r.headers['content-range'], `bytes */${size}`, range);
  }
});

test('Range: a malformed, multi-range, non-GET or If-Range request gets the whole file', LIMIT, async () => {
  for (const headers of [
    ['Range: bytes=abc'],
    ['Range: bytes='],
    ['Range: bytes=-'],
    ['Range: bytes=5-2'],
    ['Range: bytes=1-2-3'],
    ['Range: bytes=0x10-0x20'],
    ['Range: items=0-1'],
    ['Range: bytes=0-1,4-5'],
    ['Range: bytes=0-1', 'If-Range: "some-etag"'],
  ]) {
    const r = await req(port, '/demo/data.gguf', { headers });
    assert.equal(r.status, 200, headers.join());
    assert.deepEqual(r.body, DATA, headers.join());
  }
  // RFC 9110 14.2: range handling is defined for GET only.
  const head = await req(port, '/demo/data.gguf', { method: 'HEAD', headers: ['Range: bytes=0-9'] });
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], '1000');
});

test('a handler that throws answers 500, logs one line, and the server keeps serving', LIMIT, async () => {
  // Make the next request's url unreadable, from outside the server's own code.
  const trap = (/** @type {import('node:http').IncomingMessage} */ r) => {
    if (r.headers['x-trap'])
      Object.defineProperty(r, 'url', {
        get() {
          throw new Error('trap\nsecond line');
        },
      });
  };
  server.prependListener('request', trap);
  try {
    logs.length = 0;
    const r = await req(port, '/demo/app.js', { headers: ['X-Trap: 1'] });
    assert.equal(r.status, 500);
    assert.equal(logs.length, 1);
    assert.doesNotMatch(logs[0], /\n/);
    assert.match(logs[0], /500/);
  } finally {
    server.removeListener('request', trap);
  }
  assert.equal((await req(port, '/demo/app.js')).status, 200);
});

test('node demo/server.js survives hostile request lines', LIMIT, async (t) => {
  const s = spawnServer({ PORT: '0' });
  t.after(() => s.child.kill());
  const p = await s.ready;
  const hostile = [
    'GET /%E0%A4%A HTTP/1.1',
    'GET /%ff HTTP/1.1',
    'GET /demo/%E0%A4%A.js HTTP/1.1',
    'GET /../../etc/passwd HTTP/1.1',
    'GET /demo/../../../etc/passwd HTTP/1.1',
    'GET /%2e%2e/ HTTP/1.1',
    'GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1',
    'GET /demo/..%2f..%2f.git/config HTTP/1.1',
    'GET /demo/..%2F..%2FMakefile HTTP/1.1',
    'GET /demo/%2e%2e/Makefile HTTP/1.1',
    'GET /demo/./index.html HTTP/1.1',
    'GET /demo//index.html HTTP/1.1',
    'GET /demo\\..\\Makefile HTTP/1.1',
    'GET /demo/%5c..%5cMakefile HTTP/1.1',
    'GET /demo/%00.js HTTP/1.1',
    'GET /demo/index.html%00 HTTP/1.1',
    'GET /demo/\0 HTTP/1.1',
    'GET /demo/%0a.js HTTP/1.1',
    'GET demo/index.html HTTP/1.1',
    'GET * HTTP/1.1',
    'GET http://127.0.0.1/../Makefile HTTP/1.1',
    `GET /demo/${'%2e%2e/'.repeat(3000)} HTTP/1.1`,
    `GET /${'a'.repeat(100000)} HTTP/1.1`,
    'BREW /demo/ HTTP/1.1',
    'GET /demo/ HTTP/9.9',
  ];
  for (const line of hostile) {
    const r = await raw(p, `${line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const label = JSON.stringify(line.slice(0, 60));
    assert.ok(r.status >= 400 && r.status < 500, `${label}: ${r.status}`);
    assert.equal(s.child.exitCode, null, `${label} killed the server: ${s.output().err}`);
    assert.equal((await req(p, '/demo/')).status, 200, `after ${label}`);
  }
  for (const range of ['bytes=99999999999999999999999-', `bytes=${'9'.repeat(5000)}-`, 'bytes=--1', 'bytes=-1-']) {
    const r = await req(p, '/demo/index.html', { headers: [`Range: ${range}`] });
    assert.ok(r.status === 200 || r.status === 416, `${range.slice(0, 40)}: ${r.status}`);
  }
  // The real repository: the page's files are there, the rest is not.
  assert.equal((await req(p, '/demo/app.js')).status, 200);
  assert.equal((await req(p, '/js/index.js')).status, 200);
  for (const path of ['/.git/config', '/Makefile', '/package.json', '/tests/demo-server.test.js', '/wasm/exports.c'])
    assert.equal((await req(p, path)).status, 404, path);
  assert.equal(s.output().err, '');
});

test('a busy port is a one-line message and exit status 1', LIMIT, async (t) => {
  const holder = createNetServer();
  await new Promise((ok) => holder.listen(0, '127.0.0.1', () => ok(undefined)));
  t.after(() => holder.close());
  const busy = /** @type {import('node:net').AddressInfo} */ (holder.address()).port;
  const s = spawnServer({ PORT: String(busy) });
  s.ready.catch(() => {});
  assert.equal(await s.exited, 1);
  const { out, err } = s.output();
  assert.equal(out, '');
  const lines = err.trimEnd().split('\n');
  assert.equal(lines.length, 1, err);
  assert.match(lines[0], new RegExp(`\\b${busy}\\b`));
  assert.match(lines[0], /PORT=/);
});

test('a bad PORT is a one-line message and exit status 1', LIMIT, async () => {
  for (const bad of ['abc', '70000', '-1', '1.5']) {
    const s = spawnServer({ PORT: bad });
    s.ready.catch(() => {});
    assert.equal(await s.exited, 1, bad);
    const lines = s.output().err.trimEnd().split('\n');
    assert.equal(lines.length, 1, s.output().err);
    assert.match(lines[0], /PORT/);
  }
});

test('answers carry a strong ETag and Last-Modified, and If-Range with either gets the range', LIMIT, async () => {
  const r = await req(port, '/demo/data.gguf', { headers: ['Range: bytes=0-9'] });
  assert.equal(r.status, 206);
  const etag = r.headers.etag;
  assert.match(etag ?? '', /^"[^"]+"$/, 'a strong ETag');
  assert.ok(r.headers['last-modified'], 'Last-Modified');
  for (const v of [etag, r.headers['last-modified']]) {
    const c = await req(port, '/demo/data.gguf', { headers: ['Range: bytes=5-9', `If-Range: ${v}`] });
    assert.equal(c.status, 206, v);
    assert.deepEqual(c.body, DATA.subarray(5, 10));
  }
  // A file rewritten in place gets a new ETag, and If-Range with the old one the whole new file.
  const p = join(root, 'demo/changing.gguf');
  writeFileSync(p, DATA);
  const before = (await req(port, '/demo/changing.gguf', { headers: ['Range: bytes=0-0'] })).headers.etag;
  await new Promise((ok) => setTimeout(ok, 20));
  writeFileSync(p, Buffer.from(DATA).reverse());
  const after = await req(port, '/demo/changing.gguf', { headers: ['Range: bytes=0-9', `If-Range: ${before}`] });
  assert.notEqual(after.headers.etag, before);
  assert.equal(after.status, 200);
  assert.deepEqual(after.body, Buffer.from(DATA).reverse());
});

/** File descriptors this process holds now (the server runs in it). */
const fds = () => readdirSync('/proc/self/fd').length;

test(
  'requests pipelined on one connection are served one at a time, and nothing outlives the socket',
  LIMIT,
  async () => {
    const base = fds();
    let peak = base;
    const watch = setInterval(() => (peak = Math.max(peak, fds())), 1);
    const n = 500;
    const text = Array.from({ length: n }, () => 'GET /demo/data.gguf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n').join('');
    // A client that sends them all and never reads: the server must not open 500 files at once.
    const s = connect(port, '127.0.0.1', () => s.write(text));
    s.on('error', () => {});
    await new Promise((ok) => setTimeout(ok, 300));
    const during = fds();
    s.destroy();
    for (let i = 0; i < 100 && fds() > base + 2; i++) await new Promise((ok) => setTimeout(ok, 20));
    clearInterval(watch);
    assert.ok(
      peak <= base + 40,
      `open descriptors rose from ${base} to ${peak} (${during} while the client did not read)`,
    );
    assert.ok(fds() <= base + 2, `after the socket closed ${fds()} descriptors are open, ${base} before`);
    // A client that reads gets every answer (up to the per-connection bound).
    const few = Array.from(
      { length: 20 },
      (_, i) => `GET /demo/data.gguf HTTP/1.1\r\nHost: 127.0.0.1\r\n${i === 19 ? 'Connection: close\r\n' : ''}\r\n`,
    ).join('');
    const all = await raw(port, few);
    assert.equal(all.status, 200);
    assert.equal(all.body.toString('latin1').split('HTTP/1.1 200 OK').length - 1, 19, 'the 19 answers after the first');
    // And the server still serves a real file afterwards.
    assert.equal((await req(port, '/demo/data.gguf')).status, 200);
  },
);
