// The SIMD128 Q2_K, Q3_K and Q6_K kernels (src/simd128/q2_K.c, q3_K.c, q6_K.c) against their
// references, through the build's raw exports: dequantize bit for bit, the Q8_K dots within 1e-5 of
// the sum of the reference's |terms| (NaN exactly where a reference term is NaN or infinite terms of
// both signs meet), dots fed in pieces equal to uncut ones, the fused f32 dots, matvec rows equal
// to dots. A kernel the SIMD build does not
// export fails its test; on the scalar build only the check that it has no SIMD kernels runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND, SEED, testCodec, firstDiff, rng } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { EDGE_HALVES, gaussian, randomBytes, simdKernels } from './lib/simd-kernels.js';
import * as ok from './lib/oracle-k.js';

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);

/** Block bytes and the offsets of d (and dmin) (src/kquants.h). */
const FMT = {
  q2_K: { bytes: 84, d: 80, dmin: 82 },
  q3_K: { bytes: 110, d: 108, dmin: -1 },
  q6_K: { bytes: 210, d: 208, dmin: -1 },
};
const TYPES = /** @type {(keyof typeof FMT)[]} */ (Object.keys(FMT));
const Q8K = 292; // float d, 256 codes, 16 bsums
const QK = 256;
const COUNTS = [1, 2, 3, 7, 8, 9, 64, 65]; // 65: longer than the matvec prepares (64)
const OPS = ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K'];
const { presenceTest, kernelTest, quantizeRef, dequantizeWith, dotState, f32DotCase } = simdKernels(X, raw);

console.log(`kquants-simd-236: seed ${SEED} (BQ_SEED replays), backend ${BACKEND}`);

presenceTest(
  `the ${BACKEND} build has every Q2_K/Q3_K/Q6_K SIMD kernel once the format's reference is exported`,
  Object.fromEntries(TYPES.map((f) => [f, OPS])),
  true,
);

/** Sets d (and dmin) of block i. */
function setScales(t, dv, i, d, dmin) {
  const f = FMT[t];
  dv.setUint16(i * f.bytes + f.d, d, true);
  if (f.dmin >= 0) dv.setUint16(i * f.bytes + f.dmin, dmin, true);
}

/** Edge blocks: the edge halves as d and dmin, with codes and scales random, all 0 bits or all 1
 * bits (codes and scales at their maxima: Q6_K scale -1, Q3_K scale 31, Q2_K scale and min 15). */
function edgeBlocks(t, nb, r) {
  const { bytes, d } = FMT[t];
  const b = randomBytes(nb * bytes, r);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < nb; i++) {
    if (i % 3 === 1) b.fill(0, i * bytes, i * bytes + d);
    if (i % 3 === 2) b.fill(255, i * bytes, i * bytes + d);
    setScales(t, dv, i, EDGE_HALVES[i % EDGE_HALVES.length], EDGE_HALVES[(i * 5 + 3) % EDGE_HALVES.length]);
  }
  return b;
}

/** Blocks with finite, normal d and dmin, codes and scales random. */
function finiteBlocks(t, nb, r) {
  const b = randomBytes(nb * FMT[t].bytes, r);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < nb; i++)
    setScales(t, dv, i, 0x1c00 + ((r.next() * 0x1000) | 0), 0x1800 + ((r.next() * 0x1000) | 0));
  return b;
}

const KINDS = {
  'random bytes': (t, nb, r) => randomBytes(nb * FMT[t].bytes, r),
  'edge blocks': edgeBlocks,
  'finite scales': finiteBlocks,
};
/** @returns {[string, Uint8Array][]} */
const blockSets = (t, nb, r) => Object.entries(KINDS).map(([kind, make]) => [kind, make(t, nb, r)]);

/** Q8_K activations of x by the reference quantizer; with scramble, bsums replaced by random
 * values (Q3_K and Q6_K must not read them; Q2_K reads them as ggml does). */
function q8K(x, r, scramble) {
  const b = quantizeRef('q8_K', x, QK, Q8K);
  if (scramble) for (let i = 0; i < b.length / Q8K; i++) b.set(randomBytes(32, r), i * Q8K + 260);
  return b;
}

const dequantizeRef = (t, a) => dequantizeWith(`bq_${t}_dequantize__ref`, a, (a.length / FMT[t].bytes) * QK);

const FLT_MAX = 3.4028234663852886e38;

/** got against the reference's want, given the model's sum |terms| and NaN verdict. */
function assertClose(got, want, model, what) {
  if (model.nan) assert.ok(Number.isNaN(got) && Number.isNaN(want), `${what}: ${got} vs ${want}, expected NaN`);
  else if (Number.isFinite(model.abs) && model.abs > FLT_MAX) {
    // Finite terms whose sum of magnitudes passes FLT_MAX: whether a float sum overflows depends on
    // its order (the reference's eight lanes, the SIMD kernel's four), so either may be infinite;
    // where neither is, they still agree within the bound.
    if (Number.isFinite(want) && Number.isFinite(got))
      assert.ok(Math.abs(got - want) <= 1e-5 * model.abs, `${what}: ${got} vs reference ${want}`);
    else assert.ok(!Number.isNaN(got) && !Number.isNaN(want), `${what}: ${got} vs reference ${want}`);
  } else if (Number.isFinite(model.abs)) {
    assert.ok(Number.isFinite(want), `${what}: reference ${want} with finite terms`);
    assert.ok(
      Math.abs(got - want) <= 1e-5 * model.abs,
      `${what}: ${got} vs reference ${want} (sum |terms| ${model.abs})`,
    );
  } else assert.ok(got === want, `${what}: ${got} vs reference ${want}, infinite terms of one sign`);
}

for (const t of TYPES) {
  const xs = FMT[t].bytes;

  kernelTest(
    `${t} dequantize: SIMD128 equals the reference bit for bit`,
    [`bq_${t}_dequantize__simd128`, `bq_${t}_dequantize__ref`],
    () => {
      const r = rng(SEED ^ 0x2361);
      const check = (a, what) => {
        const want = dequantizeRef(t, a);
        raw.reset();
        const n = (a.length / xs) * QK,
          ap = raw.put(a),
          yp = raw.alloc(4 * n);
        assert.equal(X[`bq_${t}_dequantize__simd128`](ap, yp, n), 0);
        const d = firstDiff(raw.floats(yp, n), want);
        assert.equal(d, -1, `${t} ${what}: element ${d} differs (seed ${SEED})`);
      };
      for (const nb of COUNTS) for (const [kind, a] of blockSets(t, nb, r)) check(a, `${kind}, ${nb} super-blocks`);
      // Every d (and dmin) bit pattern once.
      const a = randomBytes(65536 * xs, r),
        dv = new DataView(a.buffer);
      for (let i = 0; i < 65536; i++) setScales(t, dv, i, i, (i * 7919) & 0xffff);
      check(a, 'every half as d and dmin');
      raw.reset();
      const yp = raw.alloc(4 * QK);
      new Float32Array(raw.mem.buffer, yp, QK).fill(7);
      assert.equal(X[`bq_${t}_dequantize__simd128`](raw.put(a.subarray(0, xs)), yp, 255), -1);
      assert.ok(
        raw.floats(yp, QK).every((v) => v === 7),
        'a partial super-block is refused, nothing written',
      );
    },
  );

  kernelTest(
    `${t} . q8_K dot: SIMD128 within 1e-5 of sum |terms| of the reference, NaN where it is, the same in pieces`,
    [`bq_${t}_dot_q8_K__simd128`, `bq_${t}_dot_q8_K__ref`, 'bq_q8_K_quantize__ref', 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x2362);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          for (const scramble of [false, true]) {
            const b = q8K(gaussian(nb * QK, r), r, scramble);
            const want = dotState(`bq_${t}_dot_q8_K__ref`, a, b, { xs, ys: Q8K, blk: QK }, r, false).sum;
            const whole = dotState(`bq_${t}_dot_q8_K__simd128`, a, b, { xs, ys: Q8K, blk: QK }, r, false);
            const cut = dotState(`bq_${t}_dot_q8_K__simd128`, a, b, { xs, ys: Q8K, blk: QK }, r, true);
            const what = `${t} ${kind}, ${nb} super-blocks${scramble ? ', random bsums' : ''} (seed ${SEED})`;
            assertClose(whole.sum, want, ok.dotQ8K(t, a, b), what);
            assert.equal(firstDiff(cut.state, whole.state), -1, `${what}: the dot in pieces differs from the whole`);
          }
        }
      }
      // One super-block at a time: where d * yd is huge, Inf or NaN, the term is ggml's own.
      const a = edgeBlocks(t, 28, r),
        b = q8K(gaussian(28 * QK, r), r, true),
        db = new DataView(b.buffer);
      for (let i = 0; i < 28; i++) db.setFloat32(i * Q8K, [3e38, -1e30, 1e-3, 2.5][i % 4], true);
      for (let i = 0; i < 28; i++) {
        const ai = a.subarray(i * xs, (i + 1) * xs),
          bi = b.subarray(i * Q8K, (i + 1) * Q8K);
        const want = dotState(`bq_${t}_dot_q8_K__ref`, ai, bi, { xs, ys: Q8K, blk: QK }, r, false).sum;
        const got = dotState(`bq_${t}_dot_q8_K__simd128`, ai, bi, { xs, ys: Q8K, blk: QK }, r, false).sum;
        assertClose(got, want, ok.dotQ8K(t, ai, bi), `${t} edge block ${i}, yd ${db.getFloat32(i * Q8K, true)}`);
      }
      raw.reset();
      assert.equal(X[`bq_${t}_dot_q8_K__simd128`](raw.alloc(xs), raw.alloc(Q8K), 100, raw.zeroAcc()), -1);
    },
  );

  kernelTest(
    `${t} . f32 dot: the SIMD128 fused dot within 1e-5 of sum |w x| of the reference, the same in pieces`,
    [`bq_${t}_dot_f32__simd128`, `bq_${t}_dot_f32__ref`, 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x2363);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          const x = gaussian(nb * QK, r);
          const layout = { xs, ys: 4 * QK, blk: QK };
          const { bound, want, whole, cut } = f32DotCase(t, a, x, dequantizeRef(t, a), layout, r);
          const what = `${t} . f32 ${kind}, ${nb} super-blocks (seed ${SEED})`;
          if (Number.isFinite(bound))
            assert.ok(
              Math.abs(whole.sum - want) <= 1e-5 * bound,
              `${what}: ${whole.sum} vs ${want} (sum |w x| ${bound})`,
            );
          else assert.equal(Number.isFinite(whole.sum), Number.isFinite(want), `${what}: ${whole.sum} vs ${want}`);
          assert.equal(firstDiff(cut.state, whole.state), -1, `${what}: the dot in pieces differs from the whole`);
        }
      }
    },
  );

  kernelTest(
    `${t} . q8_K matvec: every row equals the SIMD128 dot of that row`,
    [`bq_${t}_matvec_q8_K__simd128`, `bq_${t}_dot_q8_K__simd128`, 'bq_q8_K_quantize__ref', 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x2364);
      for (const nb of COUNTS) {
        const rows = nb > 16 ? 2 : 5;
        for (const [kind, make] of Object.entries(KINDS)) {
          const W = new Uint8Array(rows * nb * xs);
          for (let row = 0; row < rows; row++) W.set(make(t, nb, r), row * nb * xs);
          const b = q8K(gaussian(nb * QK, r), r, kind === 'random bytes');
          raw.reset();
          const wp = raw.put(W),
            bp = raw.put(b),
            yp = raw.alloc(4 * rows);
          assert.equal(X[`bq_${t}_matvec_q8_K__simd128`](wp, rows, nb * QK, bp, yp), 0);
          const got = raw.floats(yp, rows);
          for (let row = 0; row < rows; row++) {
            const Wr = W.subarray(row * nb * xs, (row + 1) * nb * xs);
            const want = dotState(`bq_${t}_dot_q8_K__simd128`, Wr, b, { xs, ys: Q8K, blk: QK }, r, false);
            const d = firstDiff(got.subarray(row, row + 1), new Float32Array([want.sum]));
            assert.equal(
              d,
              -1,
              `${t} ${kind}, ${nb} super-blocks, row ${row}: ${got[row]} vs dot ${want.sum} (seed ${SEED})`,
            );
          }
        }
      }
      raw.reset();
      assert.equal(X[`bq_${t}_matvec_q8_K__simd128`](raw.alloc(xs), 1, 100, raw.alloc(Q8K), raw.alloc(4)), -1);
    },
  );
}
