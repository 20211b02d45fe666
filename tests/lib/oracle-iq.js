// An independent JavaScript model of ggml's IQ4_NL, IQ4_XS, MXFP4, TQ1_0 and TQ2_0 reference code
// (quantize_row_<t>_ref, dequantize_row_<t>, ggml_vec_dot_<t>_<q8_0|q8_K>_generic, and
// quantize_iq4_nl, what ggml_quantize_chunk runs for IQ4_NL without weights), written from
// IQUANTS.md without looking at src/ or js/ (it imports neither; the fp16 conversion and
// nearest_int come from the K-quant model, which is just as independent). Float32 arithmetic is
// modelled with Math.fround after every operation (no fused multiply-add), integer sums are exact.
//
// Where ggml's C is undefined or pinned to x86-64, this model follows what blockquant pins (the
// comments of its C reference say what), each choice marked "Pinned:" below:
// - float -> uint8 casts are cvttss2si then the low byte (NaN and |x| >= 2^31 give 0);
// - lroundf is glibc's on x86-64 (long is 64 bits; NaN, Inf and |v| >= 2^63 give LONG_MIN, whose
//   low 32 bits plus one are 1);
// - nearest_int of a NaN is 0 (the inputs here carry the default NaN, whose payload is 0);
// - MXFP4's exponent is floorf of log2 rounded to float32, from the double log2 (IQUANTS.md: equal
//   to glibc's floorf(log2f(x)) for every positive finite float), not the exponent field;
// - an IQ4_NL block with max |x| < 1e-15 stores d = 0 and codes 0 (ggml packs a stale buffer there,
//   so its qs are unspecified; blockquant makes a block's bytes depend on its own values only).

import { toHalf, fromHalf, nearestInt, bitsOf } from './oracle-k.js';

const f = Math.fround;

/** ggml-common.h kvalues_iq4nl (ascending int8). */
export const KV_IQ4NL = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];
/** ggml-common.h kvalues_mxfp4 (2 x E2M1). */
export const KV_MXFP4 = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/** Per type: elements and bytes per block, and the activation type of ggml's vec_dot. */
export const TYPES = {
  iq4_nl: { blk: 32, bytes: 18, act: 'q8_0' },
  iq4_xs: { blk: 256, bytes: 136, act: 'q8_K' },
  mxfp4: { blk: 32, bytes: 17, act: 'q8_0' },
  tq1_0: { blk: 256, bytes: 54, act: 'q8_K' },
  tq2_0: { blk: 256, bytes: 66, act: 'q8_K' },
};
/** Activation blocks: elements and bytes. */
export const ACT = { q8_0: { blk: 32, bytes: 34 }, q8_K: { blk: 256, bytes: 292 } };

const EPS = f(1e-15);
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const fromBits = (/** @type {number} */ u) => ((U32[0] = u >>> 0), F32[0]);
const rd16 = (/** @type {Uint8Array} */ b, /** @type {number} */ o) => b[o] | (b[o + 1] << 8);
const rdF32 = (/** @type {Uint8Array} */ b, /** @type {number} */ o) =>
  fromBits(b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24));
const i8 = (/** @type {number} */ v) => (v << 24) >> 24;
const wr16 = (/** @type {Uint8Array} */ b, /** @type {number} */ o, /** @type {number} */ v) => {
  b[o] = v & 0xff;
  b[o + 1] = (v >> 8) & 0xff;
};

/** Pinned: C's (uint8_t)(float) as x86-64 executes it (cvttss2si to int32, low byte). */
function castU8(x) {
  if (!(x >= -(2 ** 31) && x < 2 ** 31)) return 0;
  return Math.trunc(x) & 0xff;
}

/** Pinned: int xi = lroundf(v) + 1 with x86-64 glibc's lroundf (half away from zero; LONG_MIN
 * for NaN, Inf and |v| >= 2^63, which makes xi 1). Returns xi as a 32-bit int. */
function lroundPlus1(v) {
  if (!(Math.abs(v) < 2 ** 63)) return 1;
  const r = Math.sign(v) * Math.floor(Math.abs(v) + 0.5); // v is a float32: |v| + 0.5 is exact below 2^52
  return Number((BigInt(r) + 1n) & 0xffffffffn) | 0;
}

/** MXFP4's scale for the E8M0 byte e: 2^(e - 128) as float32, for every e (0 and 1 subnormal). */
export function e8m0Half(e) {
  return 2 ** (e - 128);
}

/** best_index_int8 over KV_IQ4NL: the nearest entry, exact ties to the larger; NaN gives 15. */
function bestIndex(x) {
  const v = KV_IQ4NL;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  let ml = 0,
    mu = 15;
  while (mu - ml > 1) {
    const mav = (ml + mu) >> 1;
    if (x < v[mav]) mu = mav;
    else ml = mav;
  }
  return f(x - v[mu - 1]) < f(v[mu] - x) ? mu - 1 : mu;
}

/** The first largest |x| of x[o..o+n) (strict >, so NaN never wins): [amax, signed max]. */
function absMax(x, o, n) {
  let amax = 0,
    max = 0;
  for (let j = 0; j < n; j++) {
    const ax = Math.abs(x[o + j]);
    if (ax > amax) {
      amax = ax;
      max = x[o + j];
    }
  }
  return [amax, max];
}

/** sum (w*q)*x and sum (w*q)*q over 32 values with w = x*x and q = KV_IQ4NL[best_index(id*x)]. */
function fitSums(x, o, id, L) {
  let sumqx = 0,
    sumq2 = 0;
  for (let j = 0; j < 32; j++) {
    const xj = x[o + j];
    const l = bestIndex(f(id * xj));
    if (L) L[j] = l;
    const q = KV_IQ4NL[l],
      w = f(xj * xj);
    sumqx = f(sumqx + f(f(w * q) * xj));
    sumq2 = f(sumq2 + f(f(w * q) * q));
  }
  return [sumqx, sumq2];
}

/**
 * The scale fit of one 32-element sub-block (quantize_row_iq4_nl_impl, weights x*x): start at
 * d = max / -127 (ntry < 0, the IQ4_NL ref; codes of that start into L) or max / 127 (ntry = 7,
 * IQ4_XS, with the 15-step search). Returns null when max |x| < 1e-15.
 */
function iq4Fit(x, o, ntry, L) {
  const [amax, max] = absMax(x, o, 32);
  if (amax < EPS) return null;
  const d0 = ntry > 0 ? f(-max / KV_IQ4NL[0]) : f(max / KV_IQ4NL[0]);
  let [sumqx, sumq2] = fitSums(x, o, f(1 / d0), L);
  let d = sumq2 > 0 ? f(sumqx / sumq2) : 0;
  let best = f(d * sumqx);
  for (let itry = -ntry; itry <= ntry; itry++) {
    [sumqx, sumq2] = fitSums(x, o, f((itry + KV_IQ4NL[0]) / max), null);
    if (sumq2 > 0 && f(sumqx * sumqx) > f(best * sumq2)) {
      d = f(sumqx / sumq2);
      best = f(d * sumqx);
    }
  }
  return d;
}

function quantIq4nl(x, xo, b, o) {
  const L = new Uint8Array(32);
  const d = iq4Fit(x, xo, -1, L);
  wr16(b, o, toHalf(d ?? 0));
  // Pinned: an empty block (d null) stores codes 0.
  for (let j = 0; j < 16; j++) b[o + 2 + j] = L[j] | (L[j + 16] << 4);
}

/** What ggml_quantize_chunk writes for IQ4_NL without weights (quantize_iq4_nl: ntry = 7): the
 * searched scale as d, then every code from 1/d in float32 (0 for an empty block: codes of 0 * x,
 * 8, or 15 for a NaN). */
function quantIq4nlChunk(x, xo, b, o) {
  const d = iq4Fit(x, xo, 7, null) ?? 0;
  wr16(b, o, toHalf(d));
  const id = d !== 0 ? f(1 / d) : 0; // NaN is true in C
  for (let j = 0; j < 16; j++) b[o + 2 + j] = bestIndex(f(id * x[xo + j])) | (bestIndex(f(id * x[xo + 16 + j])) << 4);
}

function quantIq4xs(x, xo, b, o) {
  const scales = new Float32Array(8);
  let amaxScale = 0,
    maxScale = 0;
  for (let ib = 0; ib < 8; ib++) {
    const d = iq4Fit(x, xo + 32 * ib, 7, null) ?? 0;
    scales[ib] = d;
    if (Math.abs(d) > amaxScale) {
      amaxScale = Math.abs(d);
      maxScale = d;
    }
  }
  const d = f(-maxScale / 32);
  wr16(b, o, toHalf(d));
  const id = d !== 0 ? f(1 / d) : 0; // NaN is true in C
  let sh = 0;
  b.fill(0, o + 4, o + 8);
  for (let ib = 0; ib < 8; ib++) {
    let l = nearestInt(f(id * scales[ib]));
    l = Math.max(-32, Math.min(31, l));
    const dl = f(d * l);
    const idl = dl !== 0 ? f(1 / dl) : 0;
    for (let j = 0; j < 16; j++) {
      const lo = bestIndex(f(idl * x[xo + 32 * ib + j]));
      const hi = bestIndex(f(idl * x[xo + 32 * ib + 16 + j]));
      b[o + 8 + 16 * ib + j] = lo | (hi << 4);
    }
    l += 32;
    b[o + 4 + (ib >> 1)] |= (l & 15) << (4 * (ib & 1));
    sh |= (l >> 4) << (2 * ib);
  }
  wr16(b, o + 2, sh);
}

/** Pinned: floorf(log2f(a)) as glibc gives it, via the double log2 rounded to float32. */
function floorLog2f(a) {
  return Math.floor(f(Math.log2(a)));
}

/** MXFP4's shared exponent byte for max |x| = amax (0 when amax is not > 0). */
export function mxfp4Exponent(amax) {
  if (!(amax > 0)) return 0;
  return castU8(f(f(floorLog2f(amax) - 2) + 127));
}

function mxfp4Code(x, d) {
  let best = 0,
    bestErr = Math.abs(f(f(KV_MXFP4[0] * d) - x));
  for (let i = 1; i < 16; i++) {
    const err = Math.abs(f(f(KV_MXFP4[i] * d) - x));
    if (err < bestErr) {
      best = i;
      bestErr = err;
    }
  }
  return best;
}

function quantMxfp4(x, xo, b, o) {
  let amax = 0;
  for (let j = 0; j < 32; j++) if (amax < Math.abs(x[xo + j])) amax = Math.abs(x[xo + j]);
  const e = mxfp4Exponent(amax);
  const d = e8m0Half(e);
  b[o] = e;
  for (let j = 0; j < 16; j++) b[o + 1 + j] = mxfp4Code(x[xo + j], d) | (mxfp4Code(x[xo + 16 + j], d) << 4);
}

/** TQ1_0/TQ2_0's d = max |x| with ggml's MAX(a, b) = a > b ? a : b (a NaN resets it), and 1/d. */
function ternaryScale(x, xo) {
  let amax = 0;
  for (let j = 0; j < 256; j++) {
    const a = Math.abs(x[xo + j]);
    amax = amax > a ? amax : a;
  }
  return [amax, amax !== 0 ? f(1 / amax) : 0];
}

function quantTq2(x, xo, b, o) {
  const [d, id] = ternaryScale(x, xo);
  for (let h = 0; h < 2; h++)
    for (let m = 0; m < 32; m++) {
      let q = 0;
      for (let n = 0; n < 4; n++) q += (lroundPlus1(f(x[xo + 128 * h + 32 * n + m] * id)) & 3) << (2 * n);
      b[o + 32 * h + m] = q & 0xff;
    }
  wr16(b, o + 64, toHalf(d));
}

function quantTq1(x, xo, b, o) {
  const [d, id] = ternaryScale(x, xo);
  // Trits of the given elements (most significant first) packed as uint8 v = v * 3 + xi (wrapping
  // as ggml's uint8_t does), padded to five trits, stored as ceil(v * 256 / 243) mod 256.
  const pack = (elems) => {
    let q = 0;
    for (const e of elems) q = (q * 3 + lroundPlus1(f(x[xo + e] * id))) & 0xff;
    if (elems.length === 4) q = (q * 3) & 0xff;
    return Math.floor((q * 256 + 242) / 243) & 0xff;
  };
  for (let m = 0; m < 32; m++) b[o + m] = pack([0, 1, 2, 3, 4].map((n) => m + 32 * n));
  for (let m = 0; m < 16; m++) b[o + 32 + m] = pack([0, 1, 2, 3, 4].map((n) => 160 + m + 16 * n));
  for (let j = 0; j < 4; j++) b[o + 48 + j] = pack([0, 1, 2, 3].map((n) => 240 + j + 4 * n));
  wr16(b, o + 52, toHalf(d));
}

const QUANT = { iq4_nl: quantIq4nl, iq4_xs: quantIq4xs, mxfp4: quantMxfp4, tq1_0: quantTq1, tq2_0: quantTq2 };

/**
 * quantize_row_<type>_ref: float32 values (whole blocks) -> new block bytes.
 * @param {string} type one of TYPES
 * @param {Float32Array} x
 * @param {Record<string, Function>} [quant] the block quantizer of each type
 * @returns {Uint8Array}
 */
export function quantize(type, x, quant = QUANT) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`oracle-iq: unknown type ${type}`);
  if (x.length % t.blk) throw new RangeError(`oracle-iq: ${x.length} values is not whole ${type} blocks`);
  const nb = x.length / t.blk;
  const out = new Uint8Array(nb * t.bytes);
  for (let i = 0; i < nb; i++) quant[type](x, i * t.blk, out, i * t.bytes);
  return out;
}

/**
 * What ggml_quantize_chunk writes without weights (what GGUF files hold): quantize_row_<type>_ref,
 * except for IQ4_NL, whose quantize_iq4_nl runs the 7-try scale search.
 * @param {string} type one of TYPES
 * @param {Float32Array} x
 * @returns {Uint8Array}
 */
export function quantizeChunk(type, x) {
  return quantize(type, x, { ...QUANT, iq4_nl: quantIq4nlChunk });
}

/** TQ1_0's trit n (0 = most significant) of byte v: the top of (v * 3^n mod 256) * 3. */
const tq1Trit = (v, n) => (((v * 3 ** n) & 0xff) * 3) >> 8;

/**
 * One block at o, unpacked: the float32 scale of each element's 32-element sub-block (fp32(d),
 * the IQ4_XS sub-block's fp32(d) * (ls - 32) is NOT applied here), the block's d, and the integer
 * weight of each element (what the generic dot multiplies by the activation).
 * @returns {{ d: number, w: Int32Array, ls: Int32Array }}
 */
export function unpack(type, b, o) {
  const n = TYPES[type].blk;
  const w = new Int32Array(n),
    ls = new Int32Array(8);
  let d;
  switch (type) {
    case 'iq4_nl':
      d = fromHalf(rd16(b, o));
      for (let j = 0; j < 16; j++) {
        w[j] = KV_IQ4NL[b[o + 2 + j] & 15];
        w[j + 16] = KV_IQ4NL[b[o + 2 + j] >> 4];
      }
      break;
    case 'mxfp4':
      d = e8m0Half(b[o]);
      for (let j = 0; j < 16; j++) {
        w[j] = KV_MXFP4[b[o + 1 + j] & 15];
        w[j + 16] = KV_MXFP4[b[o + 1 + j] >> 4];
      }
      break;
    case 'iq4_xs': {
      d = fromHalf(rd16(b, o));
      const sh = rd16(b, o + 2);
      for (let ib = 0; ib < 8; ib++) {
        ls[ib] = ((b[o + 4 + (ib >> 1)] >> (4 * (ib & 1))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
        for (let r = 0; r < 32; r++) {
          const q = b[o + 8 + 16 * ib + (r % 16)];
          w[32 * ib + r] = KV_IQ4NL[r < 16 ? q & 15 : q >> 4];
        }
      }
      break;
    }
    case 'tq1_0':
      d = fromHalf(rd16(b, o + 52));
      for (let e = 0; e < 256; e++) {
        let t;
        if (e < 160) t = tq1Trit(b[o + (e % 32)], e >> 5);
        else if (e < 240) t = tq1Trit(b[o + 32 + ((e - 160) % 16)], (e - 160) >> 4);
        else t = tq1Trit(b[o + 48 + ((e - 240) % 4)], (e - 240) >> 2);
        w[e] = t - 1;
      }
      break;
    case 'tq2_0':
      d = fromHalf(rd16(b, o + 64));
      for (let e = 0; e < 256; e++) w[e] = ((b[o + 32 * (e >> 7) + (e % 32)] >> (2 * ((e % 128) >> 5))) & 3) - 1;
      break;
    default:
      throw new TypeError(`oracle-iq: unknown type ${type}`);
  }
  return { d, w, ls };
}

/**
 * dequantize_row_<type>: whole blocks of bytes -> a new Float32Array.
 * @param {string} type
 * @param {Uint8Array} bytes
 */
export function dequantize(type, bytes) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`oracle-iq: unknown type ${type}`);
  const nb = bytes.length / t.bytes;
  if (!Number.isInteger(nb)) throw new RangeError(`oracle-iq: ${bytes.length} bytes is not whole ${type} blocks`);
  const y = new Float32Array(nb * t.blk);
  for (let i = 0; i < nb; i++) {
    const { d, w, ls } = unpack(type, bytes, i * t.bytes);
    for (let e = 0; e < t.blk; e++) {
      let v;
      if (type === 'iq4_xs') v = f(f(d * (ls[e >> 5] - 32)) * w[e]);
      else if (type === 'mxfp4') v = f(w[e] * d);
      else if (type === 'iq4_nl') v = f(d * w[e]);
      else v = f(w[e] * d);
      y[i * t.blk + e] = v;
    }
  }
  return y;
}

/** Activation block at o: fp32 d and the int8 values. */
function actBlock(act, b, o) {
  if (act === 'q8_0') return { d: fromHalf(rd16(b, o)), q: Int8Array.from(b.subarray(o + 2, o + 34)) };
  return { d: rdF32(b, o), q: Int8Array.from(b.subarray(o + 4, o + 260)) };
}

/**
 * What a dot in any other summation order can be judged by: the model's result sum; abs, the sum
 * of |term| over the finite terms, and exact, their sum, both in doubles; inf, the sign (+1 or -1)
 * of the infinite terms, 0 if none; nan, whether every order gives NaN (a NaN term, or infinite
 * terms of both signs).
 * @typedef {{ sum: number, abs: number, exact: number, inf: number, nan: boolean }} DotSummary
 */

/** @returns {DotSummary} */
function summary(sum, terms) {
  let abs = 0,
    exact = 0,
    nan = false,
    pinf = false,
    ninf = false;
  for (const v of terms) {
    nan ||= Number.isNaN(v);
    pinf ||= v === Infinity;
    ninf ||= v === -Infinity;
    if (Number.isFinite(v)) {
      abs += Math.abs(v);
      exact += v;
    }
  }
  return { sum, abs, exact, inf: pinf ? 1 : ninf ? -1 : 0, nan: nan || (pinf && ninf) };
}

/**
 * ggml_vec_dot_<type>_<q8_0|q8_K>_generic over whole blocks, in its float order (one running
 * float32 sum; IQ4_XS adds one term per 32-element sub-block), with its DotSummary.
 * @param {string} type
 * @param {Uint8Array} x blocks of type
 * @param {Uint8Array} y blocks of the activation type (Q8_0 or Q8_K; Q8_K's bsums are unused)
 * @returns {DotSummary}
 */
export function dot(type, x, y) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`oracle-iq: unknown type ${type}`);
  const a = ACT[t.act];
  const nb = x.length / t.bytes;
  if (!Number.isInteger(nb) || y.length !== nb * a.bytes) throw new RangeError('oracle-iq: dot operands do not match');
  let sumf = 0;
  const terms = [];
  for (let i = 0; i < nb; i++) {
    const { d, w, ls } = unpack(type, x, i * t.bytes);
    const { d: yd, q } = actBlock(t.act, y, i * a.bytes);
    if (type === 'iq4_xs') {
      for (let ib = 0; ib < 8; ib++) {
        let sumi = 0;
        for (let j = 32 * ib; j < 32 * ib + 32; j++) sumi += w[j] * q[j];
        const term = f(f(f(d * yd) * (ls[ib] - 32)) * sumi);
        sumf = f(sumf + term);
        terms.push(term);
      }
      continue;
    }
    let sumi = 0;
    for (let j = 0; j < t.blk; j++) sumi += w[j] * q[j];
    let term;
    if (type === 'iq4_nl' || type === 'mxfp4') term = f(f(yd * d) * sumi);
    else if (type === 'tq1_0') term = f(sumi * f(d * yd));
    else term = f(sumi * f(yd * d));
    sumf = f(sumf + term);
    terms.push(term);
  }
  return summary(sumf, terms);
}

/**
 * The f32 dot of a row of blocks with float32 values: dequantize, then sum += w[e] * v[e] in
 * element order, each product and sum rounded to float32, with its DotSummary over the products.
 * @param {string} type
 * @param {Uint8Array} x
 * @param {Float32Array} v
 * @returns {DotSummary}
 */
export function dotF32(type, x, v) {
  const w = dequantize(type, x);
  if (v.length !== w.length) throw new RangeError('oracle-iq: dot operands of different lengths');
  let sum = 0;
  const terms = new Float32Array(w.length);
  for (let i = 0; i < w.length; i++) {
    terms[i] = f(w[i] * v[i]);
    sum = f(sum + terms[i]);
  }
  return summary(sum, terms);
}

export { bitsOf };
