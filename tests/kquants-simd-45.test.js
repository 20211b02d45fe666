// The SIMD128 Q4_K, Q5_K and Q8_K kernels (src/simd128/q4_K.c, q5_K.c, q8_K.c) against their
// references, through the build's raw exports: dequantize and the Q8_K quantizer bit for bit, the
// dots within 1e-5 of the sum of the reference's |terms|, dots fed in pieces equal to uncut ones,
// matvec rows equal to dots. A kernel the SIMD build does not export fails its test;
// on the scalar build only the check that it has no SIMD kernels runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND, SEED, testCodec, firstDiff, rng } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { EDGE_HALVES, assertClose, gaussian, half, randomBytes, simdKernels } from './lib/simd-kernels.js';

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);

/** Block bytes and field offsets (src/kquants.h). */
const FMT = {
  q4_K: { bytes: 144, scales: 4, qh: -1, qs: 16 },
  q5_K: { bytes: 176, scales: 4, qh: 16, qs: 48 },
};
const Q8K = 292; // float d, 256 codes, 16 bsums
const QK = 256;
const COUNTS = [1, 2, 3, 7, 8, 9, 64, 65];
const SIMD_KERNELS = {
  q4_K: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K'],
  q5_K: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K'],
  q8_K: ['quantize'],
};
const { presenceTest, kernelTest, quantizeRef, dequantizeWith, dotState, f32DotCase } = simdKernels(X, raw);

console.log(`kquants-simd-45: seed ${SEED} (BQ_SEED replays), backend ${BACKEND}`);

presenceTest(
  `the ${BACKEND} build has every Q4_K/Q5_K/Q8_K SIMD kernel once the format's reference is exported`,
  SIMD_KERNELS,
  true,
);

/** Edge blocks: every pair of edge d/dmin over the blocks, with codes and scales random, all 0 or
 * all ones (codes 15/31, scales and mins 63). */
function edgeBlocks(t, nb, r) {
  const { bytes } = FMT[t];
  const b = randomBytes(nb * bytes, r);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < nb; i++) {
    const o = i * bytes;
    dv.setUint16(o, EDGE_HALVES[i % EDGE_HALVES.length], true);
    dv.setUint16(o + 2, EDGE_HALVES[(i * 5 + 3) % EDGE_HALVES.length], true);
    if (i % 3 === 1) b.fill(0, o + 4, o + bytes);
    if (i % 3 === 2) b.fill(255, o + 4, o + bytes);
  }
  return b;
}

/** Blocks with finite, normal d and dmin (for dots whose bound needs finite terms). */
function finiteBlocks(t, nb, r) {
  const { bytes } = FMT[t];
  const b = randomBytes(nb * bytes, r);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < nb; i++) {
    dv.setUint16(i * bytes, 0x1c00 + ((r.next() * 0x1000) | 0), true);
    dv.setUint16(i * bytes + 2, 0x1800 + ((r.next() * 0x1000) | 0), true);
  }
  return b;
}

const KINDS = {
  'random bytes': (t, nb, r) => randomBytes(nb * FMT[t].bytes, r),
  'edge blocks': edgeBlocks,
  'finite scales': finiteBlocks,
};
/** @returns {[string, Uint8Array][]} */
const blockSets = (t, nb, r) => Object.entries(KINDS).map(([kind, make]) => [kind, make(t, nb, r)]);

/** Q8_K activations of x by the reference quantizer. */
function q8K(x) {
  return quantizeRef('q8_K', x, QK, Q8K);
}

const dequantizeRef = (t, a) => dequantizeWith(`bq_${t}_dequantize__ref`, a, (a.length / FMT[t].bytes) * QK);

/** ggml's 6-bit scale and min of sub-block j (get_scale_min_k4). */
function scaleMin(s, j) {
  if (j < 4) return [s[j] & 63, s[j + 4] & 63];
  return [(s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)];
}

/** Sum of |terms| of the reference dot (ggml's: (d*yd) * lane for its 8 lanes, (dmin*yd) * the
 * min sum), from the block bytes, in doubles. */
function termsAbs(t, a, b) {
  const f = FMT[t];
  const da = new DataView(a.buffer, a.byteOffset),
    db = new DataView(b.buffer, b.byteOffset);
  let sum = 0;
  for (let i = 0; i < a.length / f.bytes; i++) {
    const o = i * f.bytes,
      ob = i * Q8K;
    const s = a.subarray(o + f.scales, o + f.scales + 12),
      yd = db.getFloat32(ob, true);
    const lane = new Array(8).fill(0);
    let mins = 0;
    for (let j = 0; j < 16; j++) mins += db.getInt16(ob + 260 + 2 * j, true) * scaleMin(s, j >> 1)[1];
    for (let e = 0; e < QK; e++) {
      const q = a[o + f.qs + 32 * (e >> 6) + (e % 32)];
      let c = (e % 64 < 32 ? q : q >> 4) & 15;
      if (f.qh >= 0 && (a[o + f.qh + (e % 32)] >> (e >> 5)) & 1) c += 16;
      lane[e % 8] += scaleMin(s, e >> 5)[0] * c * ((b[ob + 4 + e] << 24) >> 24);
    }
    const dd = Math.fround(half(da.getUint16(o, true)) * yd),
      dm = Math.fround(half(da.getUint16(o + 2, true)) * yd);
    for (const l of lane) sum += Math.abs(dd * l);
    sum += Math.abs(dm * mins);
  }
  return sum;
}

for (const t of ['q4_K', 'q5_K']) {
  const xs = FMT[t].bytes;

  kernelTest(
    `${t} dequantize: SIMD128 equals the reference bit for bit`,
    [`bq_${t}_dequantize__simd128`, `bq_${t}_dequantize__ref`],
    () => {
      const r = rng(SEED ^ 0x4b01);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          const want = dequantizeRef(t, a);
          raw.reset();
          const n = nb * QK,
            ap = raw.put(a),
            yp = raw.alloc(4 * n);
          assert.equal(X[`bq_${t}_dequantize__simd128`](ap, yp, n), 0);
          const d = firstDiff(raw.floats(yp, n), want);
          assert.equal(d, -1, `${t} ${kind}, ${nb} super-blocks: element ${d} differs (seed ${SEED})`);
        }
      }
      // Every d and dmin bit pattern once.
      const a = randomBytes(65536 * xs, r),
        dv = new DataView(a.buffer);
      for (let i = 0; i < 65536; i++) {
        dv.setUint16(i * xs, i, true);
        dv.setUint16(i * xs + 2, (i * 7919) & 0xffff, true);
      }
      const want = dequantizeRef(t, a);
      raw.reset();
      const n = 65536 * QK,
        ap = raw.put(a),
        yp = raw.alloc(4 * n);
      X[`bq_${t}_dequantize__simd128`](ap, yp, n);
      const d = firstDiff(raw.floats(yp, n), want);
      assert.equal(d, -1, `${t} every half as d and dmin: element ${d} differs`);
      assert.equal(X[`bq_${t}_dequantize__simd128`](ap, yp, 255), -1, 'a partial super-block is refused');
    },
  );

  kernelTest(
    `${t} . q8_K dot: SIMD128 within 1e-5 of sum |terms| of the reference, the same in pieces`,
    [`bq_${t}_dot_q8_K__simd128`, `bq_${t}_dot_q8_K__ref`, 'bq_q8_K_quantize__ref', 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x4b02);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          const b = q8K(gaussian(nb * QK, r));
          const want = dotState(`bq_${t}_dot_q8_K__ref`, a, b, { xs, ys: Q8K, blk: QK }, r, false).sum;
          const whole = dotState(`bq_${t}_dot_q8_K__simd128`, a, b, { xs, ys: Q8K, blk: QK }, r, false);
          const cut = dotState(`bq_${t}_dot_q8_K__simd128`, a, b, { xs, ys: Q8K, blk: QK }, r, true);
          const what = `${t} ${kind}, ${nb} super-blocks (seed ${SEED})`;
          assertClose(whole.sum, want, termsAbs(t, a, b), what);
          assert.equal(firstDiff(cut.state, whole.state), -1, `${what}: the dot in pieces differs from the whole`);
          for (let l = 4; l < whole.state.length; l++) assert.equal(whole.state[l], 0, `${what}: lane ${l} is used`);
        }
      }
      raw.reset();
      assert.equal(X[`bq_${t}_dot_q8_K__simd128`](raw.alloc(xs), raw.alloc(Q8K), 100, raw.zeroAcc()), -1);
    },
  );

  kernelTest(
    `${t} . f32 dot: the SIMD128 fused dot within 1e-5 of sum |w x| of the reference, the same in pieces`,
    [`bq_${t}_dot_f32__simd128`, `bq_${t}_dot_f32__ref`, 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x4b03);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          const x = gaussian(nb * QK, r);
          const layout = { xs, ys: 4 * QK, blk: QK };
          const { bound, want, whole, cut } = f32DotCase(t, a, x, dequantizeRef(t, a), layout, r);
          const what = `${t} . f32 ${kind}, ${nb} super-blocks (seed ${SEED})`;
          if (Number.isFinite(bound)) assertClose(whole.sum, want, bound, what);
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
      const r = rng(SEED ^ 0x4b04);
      // 513 super-blocks: longer than the matvec prepares, so it runs plain dots.
      for (const nb of [...COUNTS, 513]) {
        const rows = nb > 64 ? 2 : 5;
        for (const [kind, make] of Object.entries(KINDS)) {
          const W = new Uint8Array(rows * nb * xs);
          for (let row = 0; row < rows; row++) W.set(make(t, nb, r), row * nb * xs);
          const b = q8K(gaussian(nb * QK, r));
          raw.reset();
          const wp = raw.put(W),
            bp = raw.put(b),
            yp = raw.alloc(4 * rows);
          assert.equal(X[`bq_${t}_matvec_q8_K__simd128`](wp, rows, nb * QK, bp, yp), 0);
          const got = raw.floats(yp, rows);
          for (let row = 0; row < rows; row++) {
            const want = dotState(
              `bq_${t}_dot_q8_K__simd128`,
              W.subarray(row * nb * xs, (row + 1) * nb * xs),
              b,
              { xs, ys: Q8K, blk: QK },
              r,
              false,
            );
            const d = firstDiff(got.subarray(row, row + 1), new Float32Array([want.sum]));
            assert.equal(
              d,
              -1,
              `${t} ${kind}, ${nb} super-blocks, row ${row}: ${got[row]} vs dot ${want.sum} (seed ${SEED})`,
            );
          }
        }
      }
    },
  );
}

/** Float inputs of nb super-blocks covering the quantizer's edge cases block by block. */
function q8Inputs(nb, r) {
  const x = new Float32Array(nb * QK);
  for (let b = 0; b < nb; b++) {
    for (let j = 0; j < QK; j++) {
      const g = r.normal();
      const v = [
        g,
        j % 3 ? 0 : -0, // all zero: the block is zeroed
        1.25,
        j === 5 ? -3 : r.next(), // a negative max
        g * 1e-8,
        g * 1e30,
        g * 1e-41, // subnormal max: -127 / max overflows
        j === 9 ? NaN : g,
        j === 3 ? Infinity : g,
        j === 2 ? 5 : j === 9 ? -5 : g, // largest |x| with both signs: the first wins
        j === 2 ? -5 : j === 9 ? 5 : g,
        NaN,
        j === 200 ? -1e-42 : 0,
        j === 7 ? -Infinity : j === 8 ? NaN : g,
        (j - 128) * 0.5, // ties of iscale * x
        g * 3e38, // sums overflow
      ][b % 16];
      x[b * QK + j] = v;
    }
  }
  return x;
}

kernelTest(
  'q8_K quantize: SIMD128 equals the reference byte for byte (d, codes, bsums)',
  ['bq_q8_K_quantize__simd128', 'bq_q8_K_quantize__ref'],
  () => {
    const r = rng(SEED ^ 0x4b05);
    for (const nb of [...COUNTS, 16, 32]) {
      for (const [kind, x] of [
        ['gaussian', gaussian(nb * QK, r)],
        ['edge inputs', q8Inputs(nb, r)],
      ]) {
        raw.reset();
        const xp = raw.put(x),
          p1 = raw.alloc(nb * Q8K),
          p2 = raw.alloc(nb * Q8K);
        new Uint8Array(raw.mem.buffer, p1, nb * Q8K).fill(0xab);
        new Uint8Array(raw.mem.buffer, p2, nb * Q8K).fill(0xcd);
        assert.equal(X.bq_q8_K_quantize__ref(xp, p1, nb * QK), 0);
        assert.equal(X.bq_q8_K_quantize__simd128(xp, p2, nb * QK), 0);
        const d = firstDiff(raw.bytes(p2, nb * Q8K), raw.bytes(p1, nb * Q8K));
        assert.equal(
          d,
          -1,
          `${kind}, ${nb} super-blocks: byte ${d} (block ${Math.floor(d / Q8K)}) differs (seed ${SEED})`,
        );
      }
    }
    raw.reset();
    const p = raw.alloc(Q8K);
    new Uint8Array(raw.mem.buffer, p, Q8K).fill(7);
    assert.equal(X.bq_q8_K_quantize__simd128(raw.put(new Float32Array(QK)), p, 255), -1);
    assert.ok(
      raw.bytes(p, Q8K).every((v) => v === 7),
      'nothing written on a partial super-block',
    );
  },
);
