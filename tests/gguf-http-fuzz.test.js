// A seeded fuzz of openGGUF's HTTP source against a local server (127.0.0.1 only) that misbehaves
// at random on every request: the file replaced by another version of the same size (with a new
// validator, none, a weak one), validators that vanish, redirects (to the same file or to the
// other version), short, long and endless bodies, resets, stalls, 200s that ignore Range, 416s and
// wrong Content-Range. Whatever happens, every call settles (within the trial's signal), and what
// it returns is the bytes of the version first opened or an error: a GGUFError with a code, or
// the signal's reason. Never bytes of the other version, never mixed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { openGGUF, parseGGUF, writeGGUF, GGUFError, GGMLType, GGUFValueType as VT } from '../js/index.js';
import { SEED, rng } from './lib/helpers.js';
import { q8Rows } from './lib/source-fixtures.js';

const TRIALS = 160;

/** Two versions of one file: the same header and size, other tensor bytes. */
const version = (/** @type {number} */ seed) =>
  writeGGUF({
    kv: [{ key: 'general.name', type: VT.STRING, value: 'fuzz' }],
    tensors: [{ name: 'w', type: GGMLType.Q8_0, dims: [64, 256], data: q8Rows(256, seed) }],
  });
const A = version(0),
  B = version(17);
assert.equal(A.length, B.length);
const ROW = 2 * 34;
const dataOffset = parseGGUF(A).dataOffset;

const KINDS = [
  'ok',
  'ok',
  'ok',
  'ok',
  'ok',
  'ok',
  'other-version',
  'other-no-validator',
  'other-weak',
  'same-no-validator',
  'same-weak',
  'same-lm-only',
  'redirect-same',
  'redirect-other',
  'short',
  'long',
  'endless',
  'reset',
  'stall',
  'ignore-range',
  'ignore-range-other',
  '416',
  'wrong-range',
  'wrong-total',
];

/**
 * A server whose n-th request is answered as kinds(n) says (the first is always 'ok').
 * @param {(n: number) => string} kinds
 * @param {boolean} ifRange whether it honours If-Range (many servers and caches do not)
 */
async function fuzzServer(kinds, ifRange) {
  let n = 0;
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  const server = createServer((req, res) => {
    const kind = n === 0 ? 'ok' : kinds(n);
    n++;
    const other = /other|\?v=b/.test(kind) || /\?v=b/.test(req.url ?? '');
    const bytes = other ? B : A;
    const strong = other ? '"b"' : '"a"';
    const lm = other ? 'Wed, 02 Dec 2026 00:00:00 GMT' : 'Tue, 01 Dec 2026 00:00:00 GMT';
    /** @type {Record<string, string | number>} */
    const h = { etag: strong, 'last-modified': lm };
    if (/no-validator/.test(kind)) {
      delete h.etag;
      delete h['last-modified'];
    }
    if (/weak/.test(kind)) h.etag = `W/${strong}`;
    if (kind === 'same-lm-only') delete h.etag;
    if (kind === 'redirect-same' || kind === 'redirect-other') {
      res.writeHead(302, {
        location: `/model.gguf?v=${kind === 'redirect-other' ? 'b' : 'a'}&n=${n}`,
        'content-length': 0,
      });
      res.end();
      return;
    }
    if (kind === '416') {
      res.writeHead(416, { 'content-range': `bytes */${bytes.length}`, 'content-length': 0 });
      res.end();
      return;
    }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const ir = req.headers['if-range'];
    const current = !ifRange || !ir || ir === h.etag || ir === h['last-modified'];
    if (!m || !current || kind === 'ignore-range' || kind === 'ignore-range-other' || kind === 'endless') {
      if (kind === 'endless') {
        res.writeHead(200, h);
        const chunk = Buffer.alloc(1 << 16, 7);
        const pump = () => {
          while (res.write(chunk)) if (res.destroyed) return;
          res.once('drain', pump);
        };
        pump();
        return;
      }
      res.writeHead(200, { ...h, 'content-length': bytes.length });
      res.end(Buffer.from(bytes));
      return;
    }
    const a = Number(m[1]),
      b = Math.min(Number(m[2]), bytes.length - 1);
    let body = Buffer.from(bytes.subarray(a, b + 1));
    let range = `bytes ${a}-${b}/${bytes.length}`;
    if (kind === 'wrong-range') range = `bytes ${a + 1}-${b + 1}/${bytes.length}`;
    if (kind === 'wrong-total') range = `bytes ${a}-${b}/${bytes.length + 64}`;
    if (kind === 'short') body = body.subarray(0, body.length >> 1);
    if (kind === 'long') body = Buffer.concat([body, Buffer.alloc(100, 1)]);
    if (kind === 'reset' || kind === 'stall') {
      res.writeHead(206, { ...h, 'content-range': range, 'content-length': body.length });
      res.write(body.subarray(0, body.length >> 1));
      if (kind === 'reset') setTimeout(() => req.socket.destroy(), 5);
      return;
    }
    res.writeHead(206, { ...h, 'content-range': range });
    res.end(body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}/model.gguf`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((ok) => server.close(() => ok(undefined)));
    },
  };
}

test(
  `HTTP fuzz: ${TRIALS} trials of a misbehaving server, seed ${SEED}: the first version's bytes or an error, never other data`,
  { timeout: 240000 },
  async () => {
    const r = rng(SEED);
    const outcomes = new Map();
    for (let trial = 0; trial < TRIALS; trial++) {
      // Each trial: how often the server misbehaves, and which way it may.
      const rate = [0, 0.1, 0.3, 0.6][Math.floor(r.next() * 4)];
      const pick = () => (r.next() < rate ? KINDS[6 + Math.floor(r.next() * (KINDS.length - 6))] : 'ok');
      const s = await fuzzServer(pick, r.next() < 0.5);
      const signal = AbortSignal.timeout(1500);
      const opts = {
        signal,
        allowFullDownload: r.next() < 0.3,
        maxBytes: r.next() < 0.5 ? A.length * 2 : undefined,
      };
      /** @type {string} */
      let outcome;
      try {
        const f = await openGGUF(s.url, opts);
        for (let k = 0; k < 3; k++) {
          const first = Math.floor(r.next() * 250),
            count = 1 + Math.floor(r.next() * 6);
          const got = await f.readRows('w', first, count);
          const at = dataOffset + first * ROW;
          assert.deepEqual(
            Buffer.from(got),
            Buffer.from(A.subarray(at, at + count * ROW)),
            `trial ${trial}: rows ${first}+${count} are not the first version's bytes`,
          );
        }
        outcome = 'read';
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        if (e === signal.reason) outcome = 'aborted';
        else {
          assert.ok(e instanceof GGUFError, `trial ${trial}: ${e} is not a GGUFError`);
          outcome = e.code;
        }
      } finally {
        await s.close();
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    console.log(`# HTTP fuzz outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    assert.ok((outcomes.get('read') ?? 0) > 0, 'some trials read');
    assert.ok(outcomes.get('CHANGED') > 0, 'some trials met another version');
  },
);
