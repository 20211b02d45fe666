// The SIMD128 kernels of IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0 and the IQ2_XXS, IQ3_XXS, IQ3_S
// decoders (src/simd128/iq4_nl.c, iq4_xs.c, mxfp4.c, tq1_0.c, tq2_0.c, iq2_xxs.c, iq3_xxs.c,
// iq3_s.c) against their
// references, through the build's raw exports: dequantize bit for bit; dots within 1e-5 of the sum
// of the reference's |terms|, dots fed in pieces at the type's dot step equal to uncut ones;
// matvec rows equal to dots. On the SIMD build a kernel listed here that the build does not export
// fails; on the scalar build only the check that it has none of them runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND, SEED, testCodec, firstDiff, rng, sameFloat } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { EDGE_HALVES, assertClose, gaussian, half, randomBytes, simdKernels } from './lib/simd-kernels.js';

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);

// ggml's tables (ggml-common.h), written out here independently of the C sources.
const KV_IQ4NL = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];
const KV_MXFP4 = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/**
 * Block geometry: bytes and elements per block, the activation type of the dot and its bytes per
 * block, the dot step (elements), and how the scale is stored (fp16 d at dOff, default 0, an
 * E8M0 byte at 0, or IQ1_M's fp16 d in the top nibbles of the four u16 scales at 48); exact: the
 * SIMD128 dot with the activations keeps the reference's integer sums and float order, so its
 * result is the reference's to the bit (NaN payloads aside).
 * @type {Record<string, { bytes: number, blk: number, act?: string, actBytes?: number, step?: number, scale: 'd16' | 'e8m0' | 'iq1m', dOff?: number, exact?: boolean, quantize: boolean }>}
 */
const FMT = {
  iq4_nl: { bytes: 18, blk: 32, act: 'q8_0', actBytes: 34, step: 128, scale: 'd16', quantize: true },
  mxfp4: { bytes: 17, blk: 32, act: 'q8_0', actBytes: 34, step: 128, scale: 'e8m0', quantize: true },
  iq4_xs: { bytes: 136, blk: 256, act: 'q8_K', actBytes: 292, step: 256, scale: 'd16', quantize: true },
  tq2_0: {
    bytes: 66,
    blk: 256,
    act: 'q8_K',
    actBytes: 292,
    step: 256,
    exact: true,
    scale: 'd16',
    dOff: 64,
    quantize: true,
  },
  tq1_0: {
    bytes: 54,
    blk: 256,
    act: 'q8_K',
    actBytes: 292,
    step: 256,
    exact: true,
    scale: 'd16',
    dOff: 52,
    quantize: true,
  },
  iq2_xxs: { bytes: 66, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
  iq2_xs: { bytes: 74, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
  iq2_s: { bytes: 82, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
  iq1_s: { bytes: 50, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
  iq1_m: { bytes: 56, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'iq1m', quantize: false },
  iq3_xxs: { bytes: 98, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
  iq3_s: { bytes: 110, blk: 256, act: 'q8_K', actBytes: 292, step: 256, exact: true, scale: 'd16', quantize: false },
};
const COUNTS = [1, 2, 3, 7, 8, 9, 64, 65];
/** @type {Record<string, string[]>} */
const SIMD_KERNELS = {
  iq4_nl: ['dequantize', 'dot_q8_0', 'dot_f32', 'matvec_q8_0', 'matvec_f32'],
  mxfp4: ['dequantize', 'dot_q8_0', 'dot_f32', 'matvec_q8_0', 'matvec_f32'],
  iq4_xs: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  tq2_0: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  tq1_0: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq2_xxs: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq2_xs: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq2_s: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq1_s: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq1_m: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq3_xxs: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
  iq3_s: ['dequantize', 'dot_q8_K', 'dot_f32', 'matvec_q8_K', 'matvec_f32'],
};
const harness = simdKernels(X, raw);
const { presenceTest, kernelTest, quantizeRef, dequantizeWith } = harness;

console.log(`iquants-simd: seed ${SEED} (BQ_SEED replays), backend ${BACKEND}`);

presenceTest(
  `the ${BACKEND} build has ${BACKEND === 'simd128' ? 'every' : 'none'} of the IQ4/MXFP4/grid SIMD128 kernels`,
  SIMD_KERNELS,
);

// E8M0 bytes: the subnormal scales (0, 1, 2), the decoders' switch to their fast path (25, 26),
// one (128), the largest (254, 255).
const EDGE_E8M0 = [0, 1, 2, 3, 25, 26, 127, 128, 129, 200, 254, 255];

/** Sets the fp16 scale h of the block of type t at byte o of b. */
function setHalf(t, b, o, h) {
  const dv = new DataView(b.buffer, b.byteOffset);
  if (FMT[t].scale === 'iq1m')
    for (let k = 0; k < 4; k++) {
      const p = o + 48 + 2 * k;
      dv.setUint16(p, (dv.getUint16(p, true) & 0x0fff) | (((h >> (4 * k)) & 15) << 12), true);
    }
  else dv.setUint16(o + (FMT[t].dOff ?? 0), h, true);
}

/** Edge blocks: edge scales in turn, with codes random, all 0 or all ones. */
function edgeBlocks(t, nb, r) {
  const { bytes, scale } = FMT[t];
  const b = randomBytes(nb * bytes, r);
  for (let i = 0; i < nb; i++) {
    const o = i * bytes;
    if (i % 3 === 1) b.fill(0, o, o + bytes);
    if (i % 3 === 2) b.fill(255, o, o + bytes);
    if (scale === 'e8m0') b[o] = EDGE_E8M0[i % EDGE_E8M0.length];
    else setHalf(t, b, o, EDGE_HALVES[i % EDGE_HALVES.length]);
  }
  return b;
}

/** Blocks with finite, normal scales (dots whose bound needs finite terms). */
function finiteBlocks(t, nb, r) {
  const { bytes, scale } = FMT[t];
  const b = randomBytes(nb * bytes, r);
  for (let i = 0; i < nb; i++) {
    if (scale === 'e8m0') b[i * bytes] = 100 + ((r.next() * 40) | 0);
    else setHalf(t, b, i * bytes, 0x1c00 + ((r.next() * 0x1000) | 0));
  }
  return b;
}

/** Blocks made by the type's reference quantizer from gaussian values (heavy tails). */
function quantized(t, nb, r) {
  const { bytes, blk } = FMT[t];
  return quantizeRef(t, gaussian(nb * blk, r), blk, bytes);
}

/** @returns {[string, Uint8Array][]} */
function blockSets(t, nb, r) {
  const sets = /** @type {[string, Uint8Array][]} */ ([
    ['random bytes', randomBytes(nb * FMT[t].bytes, r)],
    ['edge blocks', edgeBlocks(t, nb, r)],
    ['finite scales', finiteBlocks(t, nb, r)],
  ]);
  if (FMT[t].quantize) sets.push(['quantized', quantized(t, nb, r)]);
  return sets;
}

/** Activations of x in type act by its reference quantizer. */
function activations(act, x) {
  return act === 'q8_K' ? quantizeRef(act, x, 256, 292) : quantizeRef(act, x, 32, 34);
}

/** The dot state after feeding a and b to kernel name, whole or (pieces) cut at random multiples
 * of the dot step; ys: bytes of b per block of the weight type. */
function dotState(name, t, a, b, ys, r, pieces) {
  const { bytes: xs, blk, step } = FMT[t];
  // The pair's result of a state of the kernel's ISA (the lane sum, or ggml's final scale of it).
  const isa = name.endsWith('__ref') ? '__ref' : '__simd128';
  const sum = X[`bq_${t}_dot_${name.includes('_f32') ? 'f32' : FMT[t].act}_sum${isa}`];
  return harness.dotState(name, a, b, { xs, ys, blk, per: /** @type {number} */ (step) / blk, sum }, r, pieces);
}

/** Sum of |terms| of the reference dot with the activations b, in doubles: per block (IQ4_NL,
 * MXFP4) or sub-block (IQ4_XS) the float scale product times the exact integer sum. */
function termsAbs(t, a, b) {
  const { bytes } = FMT[t];
  const da = new DataView(a.buffer, a.byteOffset),
    db = new DataView(b.buffer, b.byteOffset);
  const i8 = (v) => (v << 24) >> 24;
  let sum = 0;
  if (t === 'iq4_xs') {
    for (let i = 0; i < a.length / bytes; i++) {
      const o = i * bytes,
        ob = i * 292;
      const d4d8 = Math.fround(half(da.getUint16(o, true)) * db.getFloat32(ob, true));
      const sh = da.getUint16(o + 2, true);
      for (let ib = 0; ib < 8; ib++) {
        const ls = ((a[o + 4 + (ib >> 1)] >> (4 * (ib & 1))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
        let si = 0;
        for (let j = 0; j < 16; j++) {
          const q = a[o + 8 + 16 * ib + j];
          si += KV_IQ4NL[q & 15] * i8(b[ob + 4 + 32 * ib + j]) + KV_IQ4NL[q >> 4] * i8(b[ob + 4 + 32 * ib + 16 + j]);
        }
        sum += Math.abs(Math.fround(d4d8 * (ls - 32)) * si);
      }
    }
    return sum;
  }
  const kv = t === 'mxfp4' ? KV_MXFP4 : KV_IQ4NL,
    qs = t === 'mxfp4' ? 1 : 2;
  for (let i = 0; i < a.length / bytes; i++) {
    const o = i * bytes,
      ob = i * 34;
    const dx = t === 'mxfp4' ? 2 ** (a[o] - 128) : half(da.getUint16(o, true));
    let si = 0;
    for (let j = 0; j < 16; j++) {
      const q = a[o + qs + j];
      si += kv[q & 15] * i8(b[ob + 2 + j]) + kv[q >> 4] * i8(b[ob + 2 + 16 + j]);
    }
    sum += Math.abs(Math.fround(dx * half(db.getUint16(ob, true))) * si);
  }
  return sum;
}

/**
 * For the MXFP4 dots: blocks whose scale exceeds 2^72 get 2^100 less, unless their values
 * are all zero. Finite terms near the float range could overflow in one summation order and not
 * in another; the E8M0 bytes 201..255 stay covered by dequantize, the matvecs and zero blocks.
 */
function tameScales(t, a) {
  if (t !== 'mxfp4') return a;
  for (let o = 0; o < a.length; o += 17) {
    const zero = a.subarray(o + 1, o + 17).every((q) => (q & 7) === 0 && (q >> 4) % 8 === 0);
    if (a[o] > 200 && !zero) a[o] -= 100;
  }
  return a;
}

for (const t of Object.keys(FMT)) {
  const { bytes: xs, blk, act, actBytes } = FMT[t];
  const ys = /** @type {number} */ (actBytes);

  kernelTest(
    `${t} dequantize: SIMD128 equals the reference bit for bit`,
    [`bq_${t}_dequantize__simd128`, `bq_${t}_dequantize__ref`],
    () => {
      const r = rng(SEED ^ 0x1401);
      for (const nb of COUNTS) {
        for (const [kind, a] of blockSets(t, nb, r)) {
          const want = dequantizeWith(`bq_${t}_dequantize__ref`, a, (a.length / xs) * blk);
          const got = dequantizeWith(`bq_${t}_dequantize__simd128`, a, (a.length / xs) * blk);
          const d = firstDiff(got, want);
          assert.equal(
            d,
            -1,
            `${t} ${kind}, ${nb} blocks: element ${d} differs: ${got[d]} vs ${want[d]} (seed ${SEED})`,
          );
        }
      }
      // Every scale pattern once: each fp16 d, or each E8M0 byte, over random codes.
      const count = FMT[t].scale === 'e8m0' ? 256 : 65536;
      const a = randomBytes(count * xs, r);
      for (let i = 0; i < count; i++) {
        if (FMT[t].scale === 'e8m0') a[i * xs] = i;
        else setHalf(t, a, i * xs, i);
      }
      const d = firstDiff(
        dequantizeWith(`bq_${t}_dequantize__simd128`, a, (a.length / xs) * blk),
        dequantizeWith(`bq_${t}_dequantize__ref`, a, (a.length / xs) * blk),
      );
      assert.equal(d, -1, `${t} every scale: element ${d} (block ${Math.floor(d / blk)}) differs`);
      raw.reset();
      const yp = raw.alloc(4 * blk);
      new Uint8Array(raw.mem.buffer, yp, 4 * blk).fill(7);
      assert.equal(
        X[`bq_${t}_dequantize__simd128`](raw.put(a.subarray(0, xs)), yp, blk - 1),
        -1,
        'a partial block is refused',
      );
      assert.ok(
        raw.bytes(yp, 4 * blk).every((v) => v === 7),
        'nothing written on a partial block',
      );
    },
  );

  if (!act) continue;

  kernelTest(
    `${t} . ${act} dot: SIMD128 ${FMT[t].exact ? 'equal to' : 'within 1e-5 of sum |terms| of'} the reference, the same in pieces`,
    [`bq_${t}_dot_${act}__simd128`, `bq_${t}_dot_${act}__ref`, `bq_${act}_quantize__ref`, 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x1402);
      for (const nb of COUNTS) {
        for (const [kind, blocks] of blockSets(t, nb, r)) {
          const a = tameScales(t, blocks);
          const b = activations(act, gaussian(nb * blk, r));
          const want = dotState(`bq_${t}_dot_${act}__ref`, t, a, b, ys, r, false).sum;
          const whole = dotState(`bq_${t}_dot_${act}__simd128`, t, a, b, ys, r, false);
          const cut = dotState(`bq_${t}_dot_${act}__simd128`, t, a, b, ys, r, true);
          const what = `${t} ${kind}, ${nb} blocks (seed ${SEED})`;
          if (FMT[t].exact) assert.ok(sameFloat(whole.sum, want), `${what}: ${whole.sum} vs reference ${want}`);
          else assertClose(whole.sum, want, termsAbs(t, a, b), what);
          assert.equal(firstDiff(cut.state, whole.state), -1, `${what}: the dot in pieces differs from the whole`);
          for (let l = 4; l < whole.state.length; l++) assert.equal(whole.state[l], 0, `${what}: lane ${l} is used`);
        }
      }
      raw.reset();
      assert.equal(X[`bq_${t}_dot_${act}__simd128`](raw.alloc(xs), raw.alloc(ys), blk / 2, raw.zeroAcc()), -1);
    },
  );

  kernelTest(
    `${t} . f32 dot: the SIMD128 fused dot within 1e-5 of sum |w x| of the reference, the same in pieces`,
    [`bq_${t}_dot_f32__simd128`, `bq_${t}_dot_f32__ref`, 'bq_acc_sum__simd128'],
    () => {
      const r = rng(SEED ^ 0x1403);
      for (const nb of COUNTS) {
        for (const [kind, blocks] of blockSets(t, nb, r)) {
          const a = tameScales(t, blocks);
          const x = gaussian(nb * blk, r);
          const w = dequantizeWith(`bq_${t}_dequantize__ref`, a, (a.length / xs) * blk);
          let bound = 0;
          for (let i = 0; i < w.length; i++) bound += Math.abs(w[i] * x[i]);
          const want = dotState(`bq_${t}_dot_f32__ref`, t, a, x, 4 * blk, r, false).sum;
          const whole = dotState(`bq_${t}_dot_f32__simd128`, t, a, x, 4 * blk, r, false);
          const cut = dotState(`bq_${t}_dot_f32__simd128`, t, a, x, 4 * blk, r, true);
          const what = `${t} . f32 ${kind}, ${nb} blocks (seed ${SEED})`;
          if (Number.isFinite(bound)) assertClose(whole.sum, want, bound, what);
          else assert.equal(Number.isFinite(whole.sum), Number.isFinite(want), `${what}: ${whole.sum} vs ${want}`);
          assert.equal(firstDiff(cut.state, whole.state), -1, `${what}: the dot in pieces differs from the whole`);
        }
      }
    },
  );

  for (const t2 of [act, 'f32']) {
    const y2 = t2 === 'f32' ? 4 * blk : ys;
    kernelTest(
      `${t} . ${t2} matvec: every row equals the SIMD128 dot of that row`,
      [`bq_${t}_matvec_${t2}__simd128`, `bq_${t}_dot_${t2}__simd128`, `bq_${act}_quantize__ref`, 'bq_acc_sum__simd128'],
      () => {
        const r = rng(SEED ^ 0x1404);
        // The last count is longer than the matvecs prepare (4096 blocks of 32, 512 of 256), so
        // they run plain dots there.
        for (const nb of [...COUNTS, blk === 32 ? 4097 : 513]) {
          const rows = nb > 64 ? 2 : 5;
          const makes = [(n) => randomBytes(n * xs, r), (n) => finiteBlocks(t, n, r)];
          if (FMT[t].quantize) makes.push((n) => quantized(t, n, r));
          for (const make of makes) {
            const W = new Uint8Array(rows * nb * xs);
            for (let row = 0; row < rows; row++) W.set(make(nb), row * nb * xs);
            const x = gaussian(nb * blk, r);
            const b = t2 === 'f32' ? new Uint8Array(x.buffer) : activations(act, x);
            raw.reset();
            const wp = raw.put(W),
              bp = raw.put(b),
              yp = raw.alloc(4 * rows);
            assert.equal(X[`bq_${t}_matvec_${t2}__simd128`](wp, rows, nb * blk, bp, yp), 0);
            const got = raw.floats(yp, rows);
            for (let row = 0; row < rows; row++) {
              const want = dotState(
                `bq_${t}_dot_${t2}__simd128`,
                t,
                W.subarray(row * nb * xs, (row + 1) * nb * xs),
                b,
                y2,
                r,
                false,
              );
              const d = firstDiff(got.subarray(row, row + 1), new Float32Array([want.sum]));
              assert.equal(
                d,
                -1,
                `${t} . ${t2}, ${nb} blocks, row ${row}: ${got[row]} vs dot ${want.sum} (seed ${SEED})`,
              );
            }
          }
        }
      },
    );
  }
}
