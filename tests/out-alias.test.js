// Every API that takes an `out` gives the same result when out is, or overlaps, one of its inputs
// (the same array, or another view of the same buffer): matvec's x and weights, dequantize's
// bytes, quantize's values, on the one-thread codec (both staging paths) and the thread pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../js/index-node.js';
import { codec, rng, SEED, BACKEND } from './lib/helpers.js';

const r = rng(SEED);
const gauss = (/** @type {number} */ n) => new Float32Array(n).map(() => r.normal());

/** The codecs to check: the default staging, a staging too small for a row and x, and threads. */
const codecs = [
  ['staging', await codec()],
  ['tiny staging', await codec({ stagingBytes: 4096 })],
  ['threads', await init({ backend: BACKEND === 'scalar' ? 'simd128' : BACKEND, threads: 2, minSplitBytes: 0 })],
];

/** Bit-for-bit equality of two float arrays. @param {Float32Array} a @param {Float32Array} b */
const bits = (a, b) =>
  assert.deepEqual(
    new Uint32Array(a.buffer, a.byteOffset, a.length),
    new Uint32Array(b.buffer, b.byteOffset, b.length),
  );

test(`matvec with out = x gives the rows it gives with a fresh out, seed ${SEED}`, async () => {
  for (const [what, c] of codecs)
    for (const type of ['q8_0', 'q4_K', 'f32'])
      for (const exact of [false, true]) {
        const n = 2048; // square: out and x have the same length
        const w = await c.quantize(type, gauss(n * n));
        const x = gauss(n);
        const want = await c.matvec(type, w, n, x.slice(), { exact });
        const xin = x.slice();
        const got = await c.matvec(type, w, n, xin, { exact, out: xin });
        assert.equal(got, xin);
        bits(got, want);
        // out over the weights' buffer (f32 weights: the same floats).
        if (type === 'f32') {
          const wf = new Float32Array(w.buffer.slice(0));
          const want2 = await c.matvec('f32', new Uint8Array(wf.buffer), n, x.slice(0), { exact });
          const got2 = await c.matvec('f32', new Uint8Array(wf.buffer), n, x.slice(0), {
            exact,
            out: wf.subarray(5, 5 + n),
          });
          bits(got2, want2);
        }
        // A resident tensor: matvec(W, x, { out: x }) and matvecs with an out that is x.
        const W = await c.tensor(type, w, n, n);
        bits(await c.matvec(W, x.slice(), { exact, out: x.slice() }), want);
        const x2 = x.slice();
        bits(await c.matvec(W, x2, { exact, out: x2 }), want);
        const x3 = x.slice();
        const [p1, p2] = await c.matvecs([W, W], x3, { exact, out: [x3, new Float32Array(n)] });
        bits(p1, want);
        bits(p2, want);
        W.dispose();
        void what;
      }
});

test(`dequantize into an out over its own bytes, and quantize into an out over its values, seed ${SEED}`, async () => {
  for (const [, c] of codecs)
    for (const type of ['q4_0', 'q8_0', 'q6_K', 'f16']) {
      const x = gauss(256 * 64);
      const q = await c.quantize(type, x);
      const want = await c.dequantize(type, q);
      // The bytes at the start of a buffer big enough for the floats: out starts where they start.
      const buf = new ArrayBuffer(want.byteLength);
      new Uint8Array(buf).set(q);
      const got = await c.dequantize(type, new Uint8Array(buf, 0, q.length), new Float32Array(buf));
      bits(got, want);
      // The bytes at the end: the floats written from the start run over them.
      const buf2 = new ArrayBuffer(want.byteLength);
      new Uint8Array(buf2, want.byteLength - q.length).set(q);
      bits(await c.dequantize(type, new Uint8Array(buf2, want.byteLength - q.length), new Float32Array(buf2)), want);
      // quantize: out over the middle of the values.
      const vals = x.slice();
      const out = new Uint8Array(vals.buffer, 4096, q.length);
      assert.deepEqual(await c.quantize(type, vals, out), q);
    }
});

test.after(async () => {
  for (const [, c] of codecs) await /** @type {any} */ (c).close?.();
});
