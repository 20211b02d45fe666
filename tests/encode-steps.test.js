// demo/encode-steps.js teaches each encoder step with a block's own numbers; the bytes it builds
// from them must be bq.quantize's bytes (ggml's, checked against libggml elsewhere), on seeded
// random blocks and on edge blocks (the K-quants with their whole scale searches): zeros, ties of |max|, negative
// max, tiny (down to 1 / amax overflowing) and huge values, exact ternary ties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codec, rng, SEED } from './lib/helpers.js';
import { ENCODABLE, BLOCK_VALUES, encode, toHalf, toUE4M3, ue4m3Value, blockError } from '../demo/encode-steps.js';

const bq = await codec();

/** Blocks of n values: seeded random ones at several scales, and edge cases. */
function blocks(/** @type {number} */ n) {
  const r = rng(SEED);
  /** @type {Float32Array[]} */
  const out = [];
  for (let k = 0; k < 300; k++) {
    const s = 10 ** (r.next() * 10 - 6);
    out.push(Float32Array.from({ length: n }, () => s * r.normal() * (r.next() > 0.9 ? 8 : 1)));
  }
  out.push(new Float32Array(n)); // zeros
  out.push(new Float32Array(n).fill(-0)); // negative zeros (Q1_0: -0 ≥ 0 sets the bit)
  out.push(new Float32Array(n).fill(0.25)); // constant
  out.push(Float32Array.from({ length: n }, (_, i) => (i % 2 ? -1 : 1))); // |max| ties, first positive
  out.push(Float32Array.from({ length: n }, (_, i) => (i % 2 ? 1 : -1))); // first negative
  out.push(Float32Array.from({ length: n }, (_, i) => -i / 7)); // negative max
  out.push(Float32Array.from({ length: n }, (_, i) => (i - n / 2) * 1e-8)); // fp16-subnormal scales
  out.push(Float32Array.from({ length: n }, (_, i) => (i - n / 2) * 3000)); // scales near fp16's top
  out.push(Float32Array.from({ length: n }, (_, i) => (i === 3 ? 1e6 : i / 100))); // an outlier
  out.push(Float32Array.from({ length: n }, (_, i) => (i - n / 2) * 1e-39)); // float32 subnormals (E8M0 below 2^-125)
  out.push(Float32Array.from({ length: n }, (_, i) => (i - n / 2) * 1e-42)); // amax below 2^-128: 1 / amax is Inf
  out.push(Float32Array.from({ length: n }, (_, i) => (i % 4) - 1.5)); // x / amax exactly ±1/3 and ±1 (ties elsewhere)
  out.push(Float32Array.from({ length: n }, (_, i) => (i % 3) - 1)); // exactly ternary
  out.push(Float32Array.from({ length: n }, (_, i) => (i % 5 ? 0.5 : -1))); // x / amax exactly ±1/2: halves away from zero
  out.push(Float32Array.from({ length: n }, (_, i) => (i === 5 ? -0.99999994 * 4 : Math.sin(i)))); // amax just below 2^2
  return out;
}

test(`encode's bytes equal bq.quantize's for every taught format (seed ${SEED})`, () => {
  // The list the loop runs over holds every format taught (issue 25's too), each with its block size.
  const taught = ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q4_K', 'q5_K', 'q6_K', 'iq4_nl', 'nvfp4'];
  taught.push('mxfp4', 'tq2_0', 'tq1_0', 'q3_K', 'q2_K', 'q1_0', 'q2_0');
  assert.deepEqual([...ENCODABLE].sort(), taught.sort());
  assert.deepEqual(Object.keys(BLOCK_VALUES).sort(), taught);
  for (const fmt of ENCODABLE) {
    const n = BLOCK_VALUES[fmt];
    for (const x of blocks(n)) {
      const e = encode(fmt, x);
      const want = bq.quantize(fmt, x);
      assert.deepEqual([...e.bytes], [...want], `${fmt} of [${x.slice(0, 4).join(', ')}, …]`);
      assert.equal(e.codes.length, n);
      assert.ok(
        e.steps.length >= 3 && e.steps.every((s) => !/NaN|undefined/.test(s)),
        `${fmt}: ${e.steps.join(' | ')}`,
      );
    }
  }
});

// NaN and ±Inf inputs, where ggml's bytes follow C's tests of a NaN (true in `d ? … : 0`, not 0 in
// `!d`) and x86-64's conversions.
test("NaN and ±Inf inputs: encode's bytes equal bq.quantize's", () => {
  for (const fmt of ENCODABLE) {
    const n = BLOCK_VALUES[fmt];
    /** @type {Float32Array[]} */
    const xs = [new Float32Array(n).fill(NaN), new Float32Array(n).fill(-Infinity)];
    xs.push(Float32Array.from({ length: n }, (_, i) => (i === 0 ? Infinity : i === 5 ? -Infinity : Math.cos(i))));
    xs.push(Float32Array.from({ length: n }, (_, i) => (i === 0 ? NaN : i === n - 1 ? Infinity : Math.cos(i))));
    for (const sp of [NaN, Infinity, -Infinity])
      for (const at of [0, 5, n - 1])
        xs.push(Float32Array.from({ length: n }, (_, i) => (i === at ? sp : Math.sin(i) * 2)));
    for (const x of xs)
      assert.deepEqual(
        [...encode(fmt, x).bytes],
        [...bq.quantize(fmt, x)],
        `${fmt} of [${x.slice(0, 6).join(', ')}, …]`,
      );
  }
});

test("IQ4_NL with an importance matrix: the weighted search gives bq.quantize's bytes", () => {
  const r = rng(SEED + 1);
  for (let k = 0; k < 200; k++) {
    const x = Float32Array.from({ length: 32 }, () => r.normal());
    const w = Float32Array.from({ length: 32 }, () => r.next() * (r.next() > 0.8 ? 50 : 1));
    assert.deepEqual([...encode('iq4_nl', x, { imatrix: w }).bytes], [...bq.quantize('iq4_nl', x, { imatrix: w })]);
  }
});

test("toHalf equals the codec's f16 conversion; UE4M3 round trip", () => {
  const r = rng(SEED + 2);
  const xs = Float32Array.from({ length: 4096 }, (_, i) =>
    i < 64 ? [0, -0, 65504, 65520, 1e-8, 6e-8, -3e-5, 1e9][i % 8] : r.normal() * 10 ** (r.next() * 12 - 8),
  );
  const want = new Uint16Array(bq.quantize('f16', xs).buffer.slice(0));
  assert.deepEqual(Array.from(xs, toHalf), [...want]);
  // Every byte ggml writes (exponent 15 only as 0x7E, where it saturates) reads back to a value
  // that encodes to itself.
  for (const b of [...Array.from({ length: 0x77 }, (_, i) => i + 1), 0x7e])
    assert.equal(toUE4M3(ue4m3Value(b) * 2), b, `byte ${b}`);
  assert.equal(toUE4M3(1e9), 0x7e);
  assert.equal(toUE4M3(-1), 0);
});

test('blockError: RMSE, max and weighted mean square', () => {
  const e = blockError([1, 2, 3, 4], [1, 2.5, 2, 4], [1, 1, 2, 0]);
  assert.equal(e.rmse, Math.sqrt((0.25 + 1) / 4));
  assert.equal(e.maxAbs, 1);
  assert.equal(e.weighted, (0.25 + 2) / 4);
  assert.throws(() => encode('iq2_xxs', new Float32Array(256)), TypeError);
  assert.throws(() => encode('q4_0', new Float32Array(31)), RangeError);
});
