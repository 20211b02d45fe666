// The encoder, taught: for one block's original values, each step ggml's quantizer takes to its
// bytes, with this block's numbers (the largest value, d and m, each value's code, the fifth bit
// into qh, NVFP4's UE4M3 sub-block scales, IQ4_NL's table search over seven trial scales, Q4_K's
// and Q5_K's per-sub-block scale and min search and their 6-bit packing into 12 bytes, Q6_K's
// signed 8-bit sub-block scales, MXFP4's shared E8M0 exponent, TQ1_0's and TQ2_0's ternary codes
// and base-3 packing, Q3_K's make_q3_quants fits, 6-bit signed scales and hmask, Q2_K's 4-bit scale
// and min per 16, Q1_0's sign bits, Q2_0's 2-bit codes). The
// arithmetic is float32 as ggml's C does it (Math.fround after each operation), so the bytes
// made here equal bq.quantize's (tests/encode-steps.test.js checks them on random and edge
// blocks); the page shows them beside the block's real bytes. No DOM.

const f = Math.fround;
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const bitsOf = (/** @type {number} */ x) => ((F32[0] = x), U32[0]);
const fromBits = (/** @type {number} */ u) => ((U32[0] = u >>> 0), F32[0]);

/** float32 -> binary16 bits, round to nearest even, as ggml's portable conversion does it. */
export function toHalf(/** @type {number} */ x) {
  const base0 = f(f(Math.abs(f(x)) * 2 ** 112) * 2 ** -110);
  const w = bitsOf(x);
  const shl1 = (w * 2) >>> 0;
  const sign = w & 0x80000000;
  let bias = shl1 & 0xff000000;
  if (bias >>> 0 < 0x71000000) bias = 0x71000000;
  const base = f(fromBits(((bias >>> 1) + 0x07800000) >>> 0) + base0);
  const b = bitsOf(base);
  const nonsign = ((b >>> 13) & 0x7c00) + (b & 0xfff);
  return ((sign >>> 16) | (shl1 > 0xff000000 ? 0x7e00 : nonsign)) & 0xffff;
}
/** binary16 bits -> value. */
export function fromHalf(/** @type {number} */ h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    m = h & 1023;
  return e === 31 ? (m ? NaN : s * Infinity) : e === 0 ? s * m * 2 ** -24 : s * (1024 + m) * 2 ** (e - 25);
}
/** C's roundf: halves away from zero. */
const roundf = (/** @type {number} */ x) => Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
/** A number as the page prints it: float32 shortest, 6 significant digits at most. */
export const num = (/** @type {number} */ v) => (Number.isFinite(v) ? String(Number(v.toPrecision(6))) : String(v));
/** A float converted to int8_t as x86-64 does it: truncated to int32 (out of range or NaN: -2^31), then its low byte, signed. @param {number} v */
const toInt8 = (v) => ((Number.isFinite(v) && Math.abs(v) < 2 ** 31 ? Math.trunc(v) : -(2 ** 31)) << 24) >> 24;
const hex16 = (/** @type {number} */ h) => `0x${h.toString(16).padStart(4, '0')}`;

/** IQ4_NL's 16 non-uniform levels (ggml's kvalues_iq4nl), ascending. */
export const IQ4NL = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];
/** E2M1's values doubled (ggml's kvalues_mxfp4), shared by MXFP4 and NVFP4. */
export const FP4 = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/**
 * What encode gives: the block's bytes, each element's code, the scalar fields (d, m, the
 * sub-block scales), and the steps with their numbers (plain text lines, in order).
 * @typedef {{ format: string, bytes: Uint8Array, codes: number[], fields: Record<string, number | number[]>,
 *   steps: string[] }} Encoded
 */

/** The formats encode teaches (the rest show their decode only). */
export const ENCODABLE = [
  'q8_0',
  'q4_0',
  'q4_1',
  'q5_0',
  'q5_1',
  'q4_K',
  'q5_K',
  'q6_K',
  'iq4_nl',
  'nvfp4',
  'mxfp4',
  'tq2_0',
  'tq1_0',
  'q3_K',
  'q2_K',
  'q1_0',
  'q2_0',
];

/** The values in one block of each taught format. */
export const BLOCK_VALUES = /** @type {Record<string, number>} */ ({
  q8_0: 32,
  q4_0: 32,
  q4_1: 32,
  q5_0: 32,
  q5_1: 32,
  q4_K: 256,
  q5_K: 256,
  q6_K: 256,
  iq4_nl: 32,
  nvfp4: 64,
  mxfp4: 32,
  tq2_0: 256,
  tq1_0: 256,
  q3_K: 256,
  q2_K: 256,
  q1_0: 128,
  q2_0: 64,
});

/** The element of largest |x| (the first of equals) and that |x|. @param {ArrayLike<number>} x */
function signedMax(x) {
  let amax = 0,
    max = 0,
    at = -1;
  for (let j = 0; j < x.length; j++)
    if (amax < Math.abs(x[j])) {
      amax = Math.abs(x[j]);
      max = x[j];
      at = j;
    }
  return { amax, max, at };
}
/** Packs 32 codes as ggml does: byte j holds element j (low nibble) and element j + 16 (high). */
function nibbles(/** @type {number[]} */ q, /** @type {Uint8Array} */ out, /** @type {number} */ at) {
  for (let j = 0; j < 16; j++) out[at + j] = (q[j] & 15) | ((q[j + 16] & 15) << 4);
}
const putHalf = (/** @type {Uint8Array} */ b, /** @type {number} */ o, /** @type {number} */ h) => {
  b[o] = h & 255;
  b[o + 1] = h >> 8;
};

/**
 * Encodes one block of a format from its float32 values, as ggml_quantize_chunk does without an
 * importance matrix (IQ4_NL: with one when `imatrix` gives the block's weights).
 * @param {string} format one of ENCODABLE
 * @param {Float32Array} x the block's values
 * @param {{ imatrix?: ArrayLike<number> }} [o]
 * @returns {Encoded}
 * @throws {TypeError} for a format not in ENCODABLE; RangeError for a wrong value count
 */
export function encode(format, x, o = {}) {
  const n = BLOCK_VALUES[format];
  if (!n) throw new TypeError(`encode: no encoder steps for ${format}`);
  if (x.length !== n) throw new RangeError(`encode: a ${format} block has ${n} values, got ${x.length}`);
  if (format === 'q8_0') return q8_0(x);
  if (format === 'q4_0' || format === 'q5_0') return symmetric(format, x);
  if (format === 'q4_1' || format === 'q5_1') return minMax(format, x);
  if (format === 'iq4_nl') return iq4nl(x, o.imatrix);
  if (format === 'q4_K' || format === 'q5_K') return kQuant(format, x);
  if (format === 'q6_K') return q6K(x);
  if (format === 'q3_K') return q3K(x);
  if (format === 'q2_K') return q2K(x);
  if (format === 'q1_0') return q1_0(x);
  if (format === 'q2_0') return q2_0(x);
  if (format === 'mxfp4') return mxfp4(x);
  if (format === 'tq2_0' || format === 'tq1_0') return ternary(format, x);
  return nvfp4(x);
}

/** @param {Float32Array} x */
function q8_0(x) {
  // ggml's MAX(amax, |x|): amax > |x| ? amax : |x|, so a NaN is kept until a larger value comes
  let amax = 0,
    at = -1;
  for (let j = 0; j < 32; j++) {
    const a = Math.abs(x[j]);
    if (!(amax > a)) {
      if (a !== amax) at = j;
      amax = a;
    }
  }
  const d = f(amax / 127);
  const id = d !== 0 ? f(1 / d) : 0; // C's `d ?`: a NaN d is true
  const h = toHalf(d);
  const codes = Array.from(x, (v) => roundf(f(v * id)));
  const bytes = new Uint8Array(34);
  putHalf(bytes, 0, h);
  codes.forEach((q, j) => (bytes[2 + j] = q & 255));
  const e = Math.max(0, at);
  return {
    format: 'q8_0',
    bytes,
    codes,
    fields: { d: fromHalf(h) },
    steps: [
      `amax = max |x| = ${num(amax)}${at >= 0 ? ` (element ${at})` : ''}`,
      `d = amax / 127 = ${num(d)}; stored as fp16 ${hex16(h)} = ${num(fromHalf(h))}`,
      `id = 1 / d = ${num(id)} (the float32 d, not the fp16 one)`,
      `q_i = round(x_i · id), no clamp: |x_i| ≤ amax keeps q_i in -127 … 127; e.g. element ${e}: round(${num(x[e])} · ${num(id)}) = ${codes[e]}`,
      `qs: one signed byte per value`,
    ],
  };
}

/** Q4_0 and Q5_0: d from the signed largest value, codes offset by 8 (16). @param {'q4_0' | 'q5_0'} fmt @param {Float32Array} x */
function symmetric(fmt, x) {
  const five = fmt === 'q5_0';
  const half = five ? 16 : 8,
    top = five ? 31 : 15;
  const { max, at } = signedMax(x);
  const d = f(max / -half);
  const id = d !== 0 ? f(1 / d) : 0; // C's `d ?`: a NaN d is true
  const h = toHalf(d);
  const codes = Array.from(x, (v) => Math.min(top, toInt8(f(f(v * id) + half + 0.5))));
  const bytes = new Uint8Array(five ? 22 : 18);
  putHalf(bytes, 0, h);
  let qh = 0;
  if (five) {
    for (let j = 0; j < 32; j++) qh |= ((codes[j] >> 4) & 1) << j;
    qh >>>= 0;
    for (let k = 0; k < 4; k++) bytes[2 + k] = (qh >>> (8 * k)) & 255;
  }
  nibbles(codes, bytes, five ? 6 : 2);
  const e = Math.max(0, at);
  return {
    format: fmt,
    bytes,
    codes,
    fields: /** @type {Record<string, number>} */ (five ? { d: fromHalf(h), qh } : { d: fromHalf(h) }),
    steps: [
      `max = the value of largest |x|, with its sign: ${num(max)}${at >= 0 ? ` (element ${at})` : ''}`,
      `d = max / -${half} = ${num(d)}; stored as fp16 ${hex16(h)} = ${num(fromHalf(h))} (that value maps to code 0, the extreme end, -${half} · d = max)`,
      `id = 1 / d = ${num(id)}`,
      `q_i = min(${top}, trunc(x_i · id + ${half}.5)); e.g. element ${e}: trunc(${num(x[e])} · ${num(id)} + ${half}.5) = ${codes[e]}`,
      ...(five
        ? [
            `the fifth bit of each code goes into qh: bit j of qh is bit 4 of q_j; qh = 0x${qh.toString(16).padStart(8, '0')}`,
          ]
        : []),
      `qs: byte j holds q_j & 15 (low nibble) and q_(j+16) & 15 (high nibble)`,
    ],
  };
}

/** Q4_1 and Q5_1: d = (max - min) / 15 (31), m = min. @param {'q4_1' | 'q5_1'} fmt @param {Float32Array} x */
function minMax(fmt, x) {
  const five = fmt === 'q5_1';
  const levels = five ? 31 : 15;
  let min = f(3.4028234663852886e38),
    max = -min;
  for (const v of x) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const d = f(f(max - min) / levels);
  const id = d !== 0 ? f(1 / d) : 0; // C's `d ?`: a NaN d is true
  const hd = toHalf(d),
    hm = toHalf(min);
  const codes = Array.from(x, (v) => {
    const q = f(f(f(v - min) * id) + 0.5);
    return five ? toInt8(q) & 255 : Math.min(15, toInt8(q));
  });
  const bytes = new Uint8Array(five ? 24 : 20);
  putHalf(bytes, 0, hd);
  putHalf(bytes, 2, hm);
  let qh = 0;
  if (five) {
    for (let j = 0; j < 32; j++) qh |= ((codes[j] >> 4) & 1) << j;
    qh >>>= 0;
    for (let k = 0; k < 4; k++) bytes[4 + k] = (qh >>> (8 * k)) & 255;
  }
  nibbles(codes, bytes, five ? 8 : 4);
  return {
    format: fmt,
    bytes,
    codes,
    fields: /** @type {Record<string, number>} */ (
      five ? { d: fromHalf(hd), m: fromHalf(hm), qh } : { d: fromHalf(hd), m: fromHalf(hm) }
    ),
    steps: [
      `min = ${num(min)}, max = ${num(max)}`,
      `d = (max - min) / ${levels} = ${num(d)}; stored as fp16 ${hex16(hd)} = ${num(fromHalf(hd))}`,
      `m = min = ${num(min)}; stored as fp16 ${hex16(hm)} = ${num(fromHalf(hm))} (both rounded to fp16, so the block spans about, not exactly, min … max)`,
      `q_i = ${five ? '' : 'min(15, '}trunc((x_i - min) · (1 / d) + 0.5)${five ? '' : ')'}; e.g. element 0: trunc((${num(x[0])} - ${num(min)}) · ${num(id)} + 0.5) = ${codes[0]}`,
      ...(five ? [`bit 4 of each code into qh (bit j for element j): qh = 0x${qh.toString(16).padStart(8, '0')}`] : []),
      `qs: byte j holds q_j & 15 and q_(j+16) & 15`,
    ],
  };
}

/** The nearest level of an ascending table (ggml's best_index_int8). @param {number[]} t @param {number} v */
function nearest(t, v) {
  if (v <= t[0]) return 0;
  if (v >= t[t.length - 1]) return t.length - 1;
  let lo = 0,
    hi = t.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (v < t[mid]) hi = mid;
    else lo = mid;
  }
  return f(v - t[hi - 1]) < f(t[hi] - v) ? hi - 1 : hi;
}

/**
 * IQ4_NL: codes index a 16-level table; the scale is searched: a first d from the signed max,
 * then seven trial scales each side, keeping the d of least weighted error (weights: x² without
 * an importance matrix, w_j · sqrt(σ² + x_j²) with one).
 * @param {Float32Array} x @param {ArrayLike<number>} [qw]
 */
function iq4nl(x, qw) {
  let sigma2 = 0;
  for (const v of x) sigma2 = f(sigma2 + f(v * v));
  sigma2 = f(sigma2 * f(2 / 32));
  const w = Array.from(x, (v, j) => (qw ? f(f(qw[j]) * f(Math.sqrt(f(sigma2 + f(v * v))))) : f(v * v)));
  const { amax, max } = signedMax(x);
  /** @param {number} id */
  const trial = (id) => {
    let sumqx = 0,
      sumq2 = 0;
    for (let j = 0; j < 32; j++) {
      const q = IQ4NL[nearest(IQ4NL, f(id * x[j]))];
      sumqx = f(sumqx + f(f(w[j] * q) * x[j]));
      sumq2 = f(sumq2 + f(f(w[j] * q) * q));
    }
    return { sumqx, sumq2 };
  };
  const steps = [
    qw
      ? `weights w_j = imatrix_j · sqrt(σ² + x_j²), σ² = 2 · mean(x²) = ${num(sigma2)}`
      : "no importance matrix: weights w_j = x_j² (ggml's default)",
  ];
  let d = 0;
  if (amax < 1e-15) steps.push(`max |x| = ${num(amax)}: an empty block, d = 0`);
  else {
    d = f(-max / -127);
    const t0 = trial(f(1 / d));
    d = t0.sumq2 > 0 ? f(t0.sumqx / t0.sumq2) : 0;
    let best = f(d * t0.sumqx);
    steps.push(
      `start: d₀ = max / 127 = ${num(f(-max / -127))} (max = ${num(max)}, the signed largest value); codes: the nearest of the 16 levels to x_j / d₀; then the least-squares d = Σ w q x / Σ w q² = ${num(d)}`,
    );
    const tried = [];
    for (let itry = -7; itry <= 7; itry++) {
      const id = f((itry + IQ4NL[0]) / max);
      const t = trial(id);
      const better = t.sumq2 > 0 && f(t.sumqx * t.sumqx) > f(best * t.sumq2);
      if (better) {
        d = f(t.sumqx / t.sumq2);
        best = f(d * t.sumqx);
      }
      tried.push(`${itry}: 1/d = ${num(id)}${better ? ` → better, d = ${num(d)}` : ''}`);
    }
    steps.push(
      `trial scales 1/d = (t - 127) / max for t = -7 … 7, keeping the d whose codes fit best: ${tried.join('; ')}`,
    );
  }
  const h = toHalf(d);
  const id = d !== 0 ? f(1 / d) : 0; // C's `d ?`: a NaN d is true
  const codes = Array.from(x, (v) => nearest(IQ4NL, f(id * v)));
  const bytes = new Uint8Array(18);
  putHalf(bytes, 0, h);
  nibbles(codes, bytes, 2);
  steps.push(
    `d = ${num(d)}, stored as fp16 ${hex16(h)} = ${num(fromHalf(h))}`,
    `q_j = the index of the level nearest x_j / d (binary search in ${IQ4NL.join(', ')}); e.g. element 0: ${num(x[0])} / ${num(d)} = ${num(f(id * x[0]))} → index ${codes[0]} (level ${IQ4NL[codes[0]]})`,
    'qs: byte j holds index j (low nibble) and index j + 16 (high nibble)',
  );
  return { format: 'iq4_nl', bytes, codes, fields: { d: fromHalf(h) }, steps };
}

/** float32 -> UE4M3 byte as ggml's ggml_fp32_to_ue4m3 (round half up, saturating at 0x7E). @param {number} x */
export function toUE4M3(x) {
  if (!(x > 0)) return 0;
  if (x > 448) x = 448;
  const b = bitsOf(x);
  const e = ((b >>> 23) & 255) - 127 + 7;
  if (e <= 0) {
    const m = Math.trunc(f(f(x * 512) + 0.5));
    return m > 7 ? 7 : m < 1 ? 0 : m;
  }
  if (e >= 15) return 0x7e;
  let m = ((b >>> 20) & 7) + ((b >>> 19) & 1),
    ex = e;
  if (m > 7) {
    m = 0;
    ex++;
    if (ex >= 15) return 0x7e;
  }
  return (ex << 3) | m;
}
/** A UE4M3 byte's value, halved (ggml's ggml_ue4m3_to_fp32, paired with the doubled table). @param {number} b */
export function ue4m3Value(b) {
  if (b === 0 || b === 0x7f) return 0;
  const e = (b >> 3) & 15,
    m = b & 7;
  return (e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7)) * 0.5;
}

/** NVFP4: four sub-blocks of 16, each with a UE4M3 scale from its amax / 6; E2M1 codes. @param {Float32Array} x */
function nvfp4(x) {
  const bytes = new Uint8Array(36);
  /** @type {number[]} */
  const codes = [];
  /** @type {number[]} */
  const scales = [];
  const steps = [];
  for (let s = 0; s < 4; s++) {
    const xb = x.subarray(16 * s, 16 * s + 16);
    const { amax } = signedMax(xb);
    const ue = toUE4M3(f(amax / 6));
    const d = f(ue4m3Value(ue));
    bytes[s] = ue;
    scales.push(d);
    const q = Array.from(xb, (v) => fp4Code(v, d));
    for (let j = 0; j < 8; j++) bytes[4 + 8 * s + j] = q[j] | (q[j + 8] << 4);
    codes.push(...q);
    steps.push(
      `sub-block ${s} (elements ${16 * s}…${16 * s + 15}): amax = ${num(amax)}; amax / 6 = ${num(f(amax / 6))} → UE4M3 byte 0x${ue.toString(16).padStart(2, '0')} (exponent ${(ue >> 3) & 15}, mantissa ${ue & 7}), read back halved: d = ${num(d)}`,
    );
  }
  steps.push(
    `each code: the index of the table entry nearest x / d, table ${FP4.join(', ')} (E2M1 doubled; d halved to match)`,
    'qs: per sub-block 8 bytes, byte j holding code j (low nibble) and code j + 8 (high nibble)',
  );
  return { format: 'nvfp4', bytes, codes, fields: { d: scales }, steps };
}

/** The index of the FP4 table entry nearest v at scale d, the first of equals (ggml's best_index_mxfp4). @param {number} v @param {number} d */
function fp4Code(v, d) {
  let bi = 0,
    be = Math.abs(f(f(FP4[0] * d) - v));
  for (let i = 1; i < 16; i++) {
    const err = Math.abs(f(f(FP4[i] * d) - v));
    if (err < be) ((bi = i), (be = err));
  }
  return bi;
}

/** E8M0's value halved (ggml's ggml_e8m0_to_fp32_half): 2^(e - 128), with 2^-128 and 2^-127 for e = 0, 1. @param {number} e */
export const e8m0Half = (e) => fromBits(e < 2 ? 0x00200000 << e : (e - 1) << 23);

/**
 * MXFP4: one E8M0 exponent for 32 values, e = floor(log2(amax)) - 2 + 127 (so amax / 2^(e - 127)
 * lands in [4, 8), the top of E2M1's range), and each value the E2M1 code nearest it at that scale.
 * @param {Float32Array} x
 */
function mxfp4(x) {
  const { amax, at } = signedMax(x);
  // ggml: floorf(log2f(amax)); log2 rounded to float32 as the product code does (a float just
  // below 2^k has log2 rounding up to k).
  const lg = amax > 0 ? f(Math.log2(amax)) : 0;
  const ev = Math.floor(lg) - 2 + 127;
  // The float to uint8_t conversion as x86-64 does it: the low byte of the int32 (Inf gives 0).
  const e = amax > 0 ? (Number.isFinite(ev) ? ev & 255 : 0) : 0;
  const d = e8m0Half(e);
  const codes = Array.from(x, (v) => fp4Code(v, d));
  const bytes = new Uint8Array(17);
  bytes[0] = e;
  nibbles(codes, bytes, 1);
  const k = Math.max(0, at);
  return {
    format: 'mxfp4',
    bytes,
    codes,
    fields: { e, d: f(d * 2) },
    steps: [
      `amax = max |x| = ${num(amax)}${at >= 0 ? ` (element ${at})` : ''}`,
      amax > 0
        ? `shared exponent e = floor(log2(amax)) - 2 + 127 = floor(${num(lg)}) + 125 = ${e} (E8M0 byte 0x${e.toString(16).padStart(2, '0')}): the scale 2^(e - 127) = ${num(f(d * 2))} puts amax at ${num(f(amax / f(d * 2)))}, in [4, 8) (E2M1's largest value is 6: above it, values clip to ±6)`
        : 'amax = 0: e = 0',
      `d = 2^(e - 127) / 2 = ${num(d)} (halved to match the doubled table)`,
      `each code: the first index i of least |table_i · d - x|, table ${FP4.join(', ')}; e.g. element ${k}: ${num(x[k])} / d = ${num(f(x[k] / d))} → index ${codes[k]} (value ${FP4[codes[k]] / 2} · 2^(e - 127))`,
      'qs: byte j holds code j (low nibble) and code j + 16 (high nibble)',
    ],
  };
}

/**
 * C's lroundf(v) + 1 kept in an int, as x86-64 gives it: halves away from zero; a NaN, Inf or
 * out-of-range v converts to LONG_MIN, whose + 1 has low 32 bits 1.
 * @param {number} v
 */
const trit = (v) => (Number.isFinite(v) && Math.abs(v) < 2 ** 62 ? roundf(v) + 1 : 1);

/**
 * TQ2_0 (and TQ1_0): ternary codes against d = amax: each value rounds x / amax to -1, 0 or 1, stored
 * as 0, 1, 2. TQ2_0 packs four 2-bit codes per byte; TQ1_0 five trits per byte as a base-3 number
 * q (first code most significant) scaled to a byte by ceil(q · 256 / 243), four in each of the last
 * four bytes (times 3, so they too fill five trits).
 * @param {'tq2_0' | 'tq1_0'} fmt @param {Float32Array} x @returns {Encoded}
 */
function ternary(fmt, x) {
  let amax = 0,
    at = -1;
  for (let j = 0; j < 256; j++) {
    const a = Math.abs(x[j]);
    // ggml's MAX(amax, |v|): amax > |v| ? amax : |v| (a NaN takes over)
    if (!(amax > a)) {
      if (a !== amax) at = j;
      amax = a;
    }
  }
  const id = amax !== 0 ? f(1 / amax) : 0;
  const h = toHalf(amax);
  const codes = Array.from(x, (v) => trit(f(v * id)));
  const one = fmt === 'tq1_0';
  const bytes = new Uint8Array(one ? 54 : 66);
  /** @type {string[]} */
  const packing = [];
  if (one) {
    /** Base 3 of the codes at `first + stride · n`, n < count, first most significant; ceil(q · 256 / 243). @param {number} first @param {number} stride @param {number} count */
    const pack = (first, stride, count) => {
      let q = 0;
      for (let n = 0; n < count; n++) q = (q * 3 + codes[first + stride * n]) & 255;
      if (count === 4) q = (q * 3) & 255;
      return { q, byte: Math.floor((q * 256 + 242) / 243) };
    };
    for (let m = 0; m < 32; m++) bytes[m] = pack(m, 32, 5).byte;
    for (let m = 0; m < 16; m++) bytes[32 + m] = pack(160 + m, 16, 5).byte;
    for (let j = 0; j < 4; j++) bytes[48 + j] = pack(240 + j, 4, 4).byte;
    putHalf(bytes, 52, h);
    const p0 = pack(0, 32, 5);
    packing.push(
      `qs[0..31]: byte m holds the five codes m, m + 32, m + 64, m + 96, m + 128 as the base-3 number q = 81 · q_m + 27 · q_(m+32) + 9 · q_(m+64) + 3 · q_(m+96) + q_(m+128) (q < 243), stored as ceil(q · 256 / 243) so that the first trit is the byte's top: byte · 3 >> 8; e.g. byte 0: codes ${[0, 32, 64, 96, 128].map((i) => codes[i]).join(', ')} → q = ${p0.q} → ${p0.byte}`,
      'qs[32..47]: the same for elements 160…239, byte m holding m + 160, m + 176, …, m + 224 (stride 16)',
      `qh[0..3]: elements 240…255, byte j holding codes 240 + j, 244 + j, 248 + j, 252 + j, times 3 (a zero fifth trit), then ceil(q · 256 / 243): ${Array.from(bytes.subarray(48, 52)).join(', ')}`,
      'd last: the fp16 after the 52 code bytes (1.6875 bits per value)',
    );
  } else {
    for (let c = 0; c < 2; c++)
      for (let m = 0; m < 32; m++) {
        let q = 0;
        for (let n = 0; n < 4; n++) q += (codes[128 * c + m + 32 * n] & 3) << (2 * n);
        bytes[32 * c + m] = q & 255;
      }
    putHalf(bytes, 64, h);
    packing.push(
      'qs: per 128 values, byte m holds codes m, m + 32, m + 64, m + 96 in bits 0–1, 2–3, 4–5, 6–7 (code 3 is never made)',
      'd last: the fp16 after the 64 code bytes',
    );
  }
  const k = Math.max(0, at);
  const count = [0, 1, 2].map((t) => codes.filter((q) => q === t).length);
  return {
    format: fmt,
    bytes,
    codes,
    fields: { d: fromHalf(h) },
    steps: [
      `d = amax = max |x| = ${num(amax)}${at >= 0 ? ` (element ${at})` : ''}; stored as fp16 ${hex16(h)} = ${num(fromHalf(h))}`,
      amax !== 0
        ? `id = 1 / d = ${num(id)} (the float32 amax, not the fp16 one)`
        : 'd = 0: id = 0, every code 1 (zero)',
      `q_i = round(x_i · id) + 1, halves away from zero: -1, 0, 1 → 0, 1, 2 (so |x_i| < amax / 2 gives 0); e.g. element ${k}: round(${num(x[k])} · ${num(id)}) + 1 = ${codes[k]}; this block: ${count[0]} × -1, ${count[1]} × 0, ${count[2]} × +1`,
      ...packing,
    ],
  };
}

/**
 * The error of a block's decoded values against its originals: RMSE and max |error| (and with
 * weights, the weighted mean square the quantizer minimised).
 * @param {ArrayLike<number>} x @param {ArrayLike<number>} y @param {ArrayLike<number>} [w]
 */
export function blockError(x, y, w) {
  let se = 0,
    max = 0,
    wse = 0,
    ws = 0;
  for (let i = 0; i < x.length; i++) {
    const e = y[i] - x[i];
    se += e * e;
    max = Math.max(max, Math.abs(e));
    if (w) ((wse += w[i] * e * e), (ws += w[i]));
  }
  return { rmse: Math.sqrt(se / x.length), maxAbs: max, weighted: w && ws > 0 ? wse / ws : NaN };
}

/**
 * ggml's nearest_int: the low 23 bits of v + 1.5 · 2^23 in float32, minus 2^22; round half to even
 * for |v| < 2^22, and outside that range the bits x86-64 gives (Inf: -2^22; NaN: 0).
 * @param {number} v
 */
const nearestInt = (v) => (v !== v ? 0 : (bitsOf(f(v + 12582912)) & 0x7fffff) - 0x400000);

/**
 * ggml's make_qkx2_quants: a scale and a min for one sub-block of n values with levels 0..nmax,
 * searched over nstep + 1 trial scales (rmin + rdelta · is + nmax) / (max - min), each refined by
 * weighted least squares; the fit of least weighted squared error wins.
 * With `mad` the error is the weighted absolute one (Q2_K's), else the weighted square.
 * @param {Float32Array} x @param {number[]} w @param {number} nmax
 * @param {number} rmin @param {number} rdelta @param {number} nstep @param {boolean} [mad]
 */
function qkx2(x, w, nmax, rmin, rdelta, nstep, mad = false) {
  const n = x.length;
  let min = x[0],
    max = x[0],
    sumW = w[0],
    sumX = f(w[0] * x[0]);
  for (let i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sumW = f(sumW + w[i]);
    sumX = f(sumX + f(w[i] * x[i]));
  }
  if (min > 0) min = 0;
  const L = new Array(n).fill(0);
  if (max === min) return { scale: 0, min: -min, L, trials: 0, chosen: -1 };
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let best = 0;
  for (let i = 0; i < n; i++) {
    L[i] = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[i] - min)))));
    const d = f(f(f(scale * L[i]) + min) - x[i]);
    best = f(best + f(w[i] * (mad ? Math.abs(d) : f(d * d))));
  }
  let chosen = -1;
  const aux = new Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sl = 0,
      sl2 = 0,
      sxl = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[i] - min)))));
      aux[i] = l;
      sl = f(sl + f(w[i] * l));
      sl2 = f(sl2 + f(f(w[i] * l) * l));
      sxl = f(sxl + f(f(w[i] * l) * x[i]));
    }
    const D = f(f(sumW * sl2) - f(sl * sl));
    if (D > 0) {
      let ts = f(f(f(sumW * sxl) - f(sumX * sl)) / D);
      let tm = f(f(f(sl2 * sumX) - f(sl * sxl)) / D);
      if (tm > 0) {
        tm = 0;
        ts = f(sxl / sl2);
      }
      let err = 0;
      for (let i = 0; i < n; i++) {
        const d = f(f(f(ts * aux[i]) + tm) - x[i]);
        err = f(err + f(w[i] * (mad ? Math.abs(d) : f(d * d))));
      }
      if (err < best) {
        for (let i = 0; i < n; i++) L[i] = aux[i];
        best = err;
        scale = ts;
        min = tm;
        chosen = is;
      }
    }
  }
  return { scale, min: -min, L, trials: nstep + 1, chosen };
}

/**
 * Q4_K and Q5_K: per sub-block of 32 a scale and a min from the search, both quantized to 6 bits
 * against the largest of each (d = max scale / 63, dmin = max min / 63), packed 12 bytes for 16
 * numbers; then each value's code against its sub-block's d · sc_j and dmin · m_j.
 * @param {'q4_K' | 'q5_K'} fmt @param {Float32Array} x
 */
function kQuant(fmt, x) {
  const five = fmt === 'q5_K';
  const nmax = five ? 31 : 15;
  /** @type {number[]} */
  const scales = [];
  /** @type {number[]} */
  const mins = [];
  const L = new Array(256).fill(0);
  const steps = [];
  let maxScale = 0,
    maxMin = 0;
  for (let j = 0; j < 8; j++) {
    const xb = x.subarray(32 * j, 32 * j + 32);
    let sx2 = 0;
    for (const v of xb) sx2 = f(sx2 + f(v * v));
    const av = f(Math.sqrt(f(sx2 / 32)));
    const w = Array.from(xb, (v) => f(av + Math.abs(v)));
    const r = qkx2(xb, w, nmax, five ? -0.5 : -1, f(0.1), five ? 15 : 20);
    scales.push(r.scale);
    mins.push(r.min);
    r.L.forEach((l, i) => (L[32 * j + i] = l));
    if (r.scale > maxScale) maxScale = r.scale;
    if (r.min > maxMin) maxMin = r.min;
    steps.push(
      `sub-block ${j}: weights w = sqrt(mean x²) + |x| = ${num(av)} + |x|; ${r.trials} trial scales searched, ${r.chosen >= 0 ? `trial ${r.chosen} fits best` : 'the first fit stays'}: scale ${num(r.scale)}, min −${num(r.min)}`,
    );
  }
  const invS = maxScale > 0 ? f(63 / maxScale) : 0,
    invM = maxMin > 0 ? f(63 / maxMin) : 0;
  const sc = scales.map((s) => Math.min(63, nearestInt(f(invS * s)) & 255));
  const mq = mins.map((m) => Math.min(63, nearestInt(f(invM * m)) & 255));
  const packed = new Uint8Array(12);
  for (let j = 0; j < 8; j++) {
    if (j < 4) {
      packed[j] = sc[j];
      packed[j + 4] = mq[j];
    } else {
      packed[j + 4] = (sc[j] & 15) | ((mq[j] & 15) << 4);
      packed[j - 4] |= (sc[j] >> 4) << 6;
      packed[j] |= (mq[j] >> 4) << 6;
    }
  }
  const hd = toHalf(f(maxScale / 63)),
    hm = toHalf(f(maxMin / 63));
  const d = fromHalf(hd),
    dmin = fromHalf(hm);
  for (let j = 0; j < 8; j++) {
    const dj = f(d * sc[j]);
    if (dj === 0) continue; // ggml's !d: a scale of 0 keeps the search's codes (a NaN one does not)
    const dm = f(dmin * mq[j]);
    for (let i = 0; i < 32; i++) L[32 * j + i] = Math.max(0, Math.min(nmax, nearestInt(f(f(x[32 * j + i] + dm) / dj))));
  }
  const bytes = new Uint8Array(five ? 176 : 144);
  putHalf(bytes, 0, hd);
  putHalf(bytes, 2, hm);
  bytes.set(packed, 4);
  const qs = five ? 48 : 16;
  for (let n = 0, k = 0; n < 256; n += 64, k++)
    for (let j = 0; j < 32; j++) {
      let l1 = L[n + j],
        l2 = L[n + j + 32];
      if (five) {
        if (l1 > 15) ((l1 -= 16), (bytes[16 + j] |= 1 << (2 * k)));
        if (l2 > 15) ((l2 -= 16), (bytes[16 + j] |= 2 << (2 * k)));
      }
      bytes[qs + 32 * k + j] = l1 | (l2 << 4);
    }
  steps.push(
    `d = largest scale / 63 = ${num(f(maxScale / 63))} → fp16 ${num(d)}; dmin = largest min / 63 = ${num(f(maxMin / 63))} → fp16 ${num(dmin)}`,
    `6-bit sub-block scales sc_j = round(63 / largest scale · scale_j) = ${sc.join(', ')}; mins m_j = ${mq.join(', ')}`,
    `packed into 12 bytes: bytes 0–3 = sc_0..3 with bits 4–5 of sc_4..7 in their top two bits; bytes 4–7 = m_0..3 with bits 4–5 of m_4..7 on top; bytes 8–11 = the low nibbles of sc_4..7 and m_4..7: ${Array.from(packed, (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
    `codes q = round((x + dmin · m_j) / (d · sc_j)), clamped to 0 … ${nmax}; e.g. element 0: round((${num(x[0])} + ${num(f(dmin * mq[0]))}) / ${num(f(d * sc[0]))}) = ${L[0]}`,
    five
      ? 'qs: per 64 values, byte j holds the low 4 bits of codes j and j + 32; bit 4 of each code goes into qh (two bits of qh[j] per 64 values)'
      : 'qs: per 64 values, byte j holds codes j (low nibble) and j + 32 (high nibble)',
  );
  return { format: fmt, bytes, codes: L, fields: { d, dmin, sc, m: mq }, steps };
}

/**
 * ggml's make_qx_quants with rmse_type 1 (weights x²) and no imatrix: a signed scale for one
 * sub-block with codes -nmax … nmax - 1, refined over 18 trial scales -(nmax + 0.1 · is) / max.
 * @param {Float32Array} x @param {number} nmax
 */
function qx(x, nmax) {
  const n = x.length;
  const L = new Array(n).fill(0);
  const { amax, max } = signedMax(x);
  if (amax < 1e-15) return { scale: 0, L, chosen: null };
  const w = Array.from(x, (v) => f(v * v));
  /** @param {number} iscale */
  const fit = (iscale) => {
    let sumlx = 0,
      suml2 = 0;
    const ls = [];
    for (let i = 0; i < n; i++) {
      const l = Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * x[i]))));
      ls.push(l + nmax);
      sumlx = f(sumlx + f(f(w[i] * x[i]) * l));
      suml2 = f(suml2 + f(f(w[i] * l) * l));
    }
    return { sumlx, suml2, ls };
  };
  const first = fit(f(-nmax / max));
  first.ls.forEach((l, i) => (L[i] = l));
  let scale = first.suml2 !== 0 ? f(first.sumlx / first.suml2) : 0;
  let best = f(scale * first.sumlx);
  /** @type {number | null} */
  let chosen = null;
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    const t = fit(f(-f(nmax + f(f(0.1) * is)) / max));
    if (t.suml2 > 0 && f(t.sumlx * t.sumlx) > f(best * t.suml2)) {
      t.ls.forEach((l, i) => (L[i] = l));
      scale = f(t.sumlx / t.suml2);
      best = f(scale * t.sumlx);
      chosen = is;
    }
  }
  return { scale, L, chosen };
}

/** Q6_K: 16 sub-blocks of 16 with signed 8-bit scales against d; 6-bit codes in ql and qh. @param {Float32Array} x @returns {Encoded} */
function q6K(x) {
  const L = new Array(256).fill(0);
  /** @type {number[]} */
  const scales = [];
  let maxScale = 0,
    maxAbs = 0;
  const trials = [];
  for (let ib = 0; ib < 16; ib++) {
    const r = qx(x.subarray(16 * ib, 16 * ib + 16), 32);
    scales.push(r.scale);
    r.L.forEach((l, i) => (L[16 * ib + i] = l));
    if (Math.abs(r.scale) > maxAbs) ((maxAbs = Math.abs(r.scale)), (maxScale = r.scale));
    trials.push(`${ib}: ${num(r.scale)}${r.chosen === null ? '' : ` (trial ${r.chosen})`}`);
  }
  const bytes = new Uint8Array(210);
  const steps = [
    `per sub-block of 16: the scale of weighted least squares (weights x²), the best of 19 trial scales -(32 + 0.1 · t) / max: ${trials.join('; ')}`,
  ];
  if (maxAbs < 1e-15) {
    steps.push(
      'every scale is 0: an all-zero block, d = 0',
      'ggml writes the whole block as zero bytes (codes, scales and d)',
    );
    return { format: 'q6_K', bytes, codes: new Array(256).fill(0), fields: { d: 0 }, steps };
  }
  const iscale = f(-128 / maxScale);
  const hd = toHalf(f(1 / iscale));
  const d = fromHalf(hd);
  const sc = scales.map((s) => Math.min(127, nearestInt(f(iscale * s))));
  for (let j = 0; j < 16; j++) {
    const dj = f(d * sc[j]);
    if (dj === 0) continue; // ggml's !d: a scale of 0 keeps the search's codes (a NaN one does not)
    for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(-32, Math.min(31, nearestInt(f(x[16 * j + i] / dj)))) + 32;
  }
  for (let j = 0, h = 0; j < 256; j += 128, h++)
    for (let l = 0; l < 32; l++) {
      bytes[64 * h + l] = (L[j + l] & 15) | ((L[j + l + 64] & 15) << 4);
      bytes[64 * h + l + 32] = (L[j + l + 32] & 15) | ((L[j + l + 96] & 15) << 4);
      bytes[128 + 32 * h + l] =
        (L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6);
    }
  sc.forEach((v, j) => (bytes[192 + j] = v & 255));
  putHalf(bytes, 208, hd);
  steps.push(
    `the scale of largest |scale|: ${num(maxScale)}; d = -${num(maxScale)} / -128 = ${num(f(1 / iscale))} → fp16 ${hex16(hd)} = ${num(d)}`,
    `8-bit signed sub-block scales sc_j = min(127, round(-128 / ${num(maxScale)} · scale_j)) = ${sc.join(', ')}`,
    `codes q = round(x / (d · sc_j)) clamped to -32 … 31, stored + 32; e.g. element 0: round(${num(x[0])} / ${num(f(d * sc[0]))}) + 32 = ${L[0]}`,
    'ql: the low 4 bits (per 128 values, byte l holds codes l and l + 64, byte l + 32 codes l + 32 and l + 96); qh: the top 2 bits of four codes per byte',
  );
  return { format: 'q6_K', bytes, codes: L, fields: { d, sc }, steps };
}

/**
 * ggml's make_q3_quants with do_rmse (weights x²): codes -nmax … nmax - 1 from -nmax / max (max the
 * signed largest value), then up to five passes moving single codes to the least-squares optimum
 * while that raises (Σ w x l)² / Σ w l²; the scale is Σ w x l / Σ w l². Codes are returned + nmax.
 * @param {Float32Array} x @param {number} nmax
 */
function q3Fit(x, nmax) {
  const n = x.length;
  const { amax, max } = signedMax(x);
  const L = new Array(n).fill(0);
  if (amax < 1e-15) return { scale: 0, L, passes: 0, changed: 0 };
  const iscale = f(-nmax / max);
  let sumlx = 0,
    suml2 = 0;
  for (let i = 0; i < n; i++) {
    L[i] = Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(iscale * x[i]))));
    const w = f(x[i] * x[i]);
    sumlx = f(sumlx + f(f(w * x[i]) * L[i]));
    suml2 = f(suml2 + f(f(w * L[i]) * L[i]));
  }
  let passes = 0,
    changed = 0;
  for (let itry = 0; itry < 5; itry++) {
    passes++;
    let nChanged = 0;
    for (let i = 0; i < n; i++) {
      const w = f(x[i] * x[i]);
      let slx = f(sumlx - f(f(w * x[i]) * L[i]));
      if (slx > 0) {
        let sl2 = f(suml2 - f(f(w * L[i]) * L[i]));
        const nl = Math.max(-nmax, Math.min(nmax - 1, nearestInt(f(f(x[i] * sl2) / slx))));
        if (nl !== L[i]) {
          slx = f(slx + f(f(w * x[i]) * nl));
          sl2 = f(sl2 + f(f(w * nl) * nl));
          if (sl2 > 0 && f(f(slx * slx) * suml2) > f(f(sumlx * sumlx) * sl2)) {
            L[i] = nl;
            sumlx = slx;
            suml2 = sl2;
            nChanged++;
          }
        }
      }
    }
    changed += nChanged;
    if (!nChanged) break;
  }
  for (let i = 0; i < n; i++) L[i] += nmax;
  return { scale: suml2 > 0 ? f(sumlx / suml2) : 0, L, passes, changed };
}

/**
 * Q3_K: 16 sub-blocks of 16, each fitted by make_q3_quants; their signed scales quantized to 6 bits
 * against the one of largest |scale| (d = that scale / -32), packed into 12 bytes; 3-bit codes
 * -4 … 3, their low two bits in qs and the third in hmask.
 * @param {Float32Array} x @returns {Encoded}
 */
function q3K(x) {
  const L = new Array(256).fill(0);
  /** @type {number[]} */
  const scales = [];
  const fits = [];
  let maxScale = 0,
    amax = 0;
  for (let j = 0; j < 16; j++) {
    const r = q3Fit(x.subarray(16 * j, 16 * j + 16), 4);
    scales.push(r.scale);
    r.L.forEach((l, i) => (L[16 * j + i] = l));
    if (Math.abs(r.scale) > amax) ((amax = Math.abs(r.scale)), (maxScale = r.scale));
    fits.push(`${j}: ${num(r.scale)}${r.changed ? ` (${r.changed} codes moved in ${r.passes} passes)` : ''}`);
  }
  const bytes = new Uint8Array(110);
  const packed = bytes.subarray(96, 108);
  /** @type {number[]} */
  const sc = new Array(16).fill(0);
  let hd = 0,
    iscale = 0;
  if (maxScale !== 0) {
    iscale = f(-32 / maxScale);
    for (let j = 0; j < 16; j++) {
      const l = Math.max(-32, Math.min(31, (nearestInt(f(iscale * scales[j])) << 24) >> 24)) + 32;
      sc[j] = l;
      if (j < 8) packed[j] = l & 15;
      else packed[j - 8] |= (l & 15) << 4;
      packed[8 + (j % 4)] |= (l >> 4) << (2 * (j >> 2));
    }
    hd = toHalf(f(1 / iscale));
  }
  const d = fromHalf(hd);
  for (let j = 0; j < 16; j++) {
    const dj = f(d * (sc[j] - 32));
    if (dj === 0) continue; // ggml's !d: a scale of 0 keeps the fit's codes (a NaN one does not)
    for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(-4, Math.min(3, nearestInt(f(x[16 * j + i] / dj)))) + 4;
  }
  const codes = L.slice();
  for (let e = 0; e < 256; e++)
    if (L[e] > 3) {
      bytes[e % 32] |= 1 << (e >> 5);
      L[e] -= 4;
    }
  for (let c = 0; c < 2; c++)
    for (let l = 0; l < 32; l++)
      bytes[32 + 32 * c + l] =
        L[128 * c + l] | (L[128 * c + l + 32] << 2) | (L[128 * c + l + 64] << 4) | (L[128 * c + l + 96] << 6);
  putHalf(bytes, 108, hd);
  const steps = [
    `per sub-block of 16: codes round(-4 / max · x) in -4 … 3 (max: the signed largest value), then up to 5 passes moving one code at a time to where it best fits Σ w x l / Σ w l² (weights x²); the scale is that least-squares ratio: ${fits.join('; ')}`,
  ];
  if (!maxScale) {
    steps.push("every scale is 0: d = 0, the scales all 32 (signed 0), the fits' codes kept");
  } else {
    steps.push(
      `the scale of largest |scale|: ${num(maxScale)}; d = 1 / (-32 / ${num(maxScale)}) = ${num(f(1 / iscale))} → fp16 ${hex16(hd)} = ${num(d)}`,
      `6-bit sub-block scales: round(-32 / ${num(maxScale)} · scale_j), clamped to -32 … 31, stored + 32: ${sc.join(', ')}`,
      `packed into 12 bytes: the low nibbles of scales 0–7 in bytes 0–7, of scales 8–15 in their high nibbles; the top two bits of scale j in bits 2·(j / 4) of byte 8 + j % 4: ${Array.from(packed, (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
    );
  }
  steps.push(
    f(d * (sc[0] - 32)) === 0
      ? `codes q = round(x / (d · (sc_j - 32))) clamped to -4 … 3, stored + 4, in each sub-block whose d · (sc_j - 32) is not 0; sub-block 0's is 0, so it keeps its fit's codes (element 0: ${codes[0]})`
      : `codes q = round(x / (d · (sc_j - 32))) clamped to -4 … 3, stored + 4; e.g. element 0: round(${num(x[0])} / ${num(f(d * (sc[0] - 32)))}) + 4 = ${codes[0]}`,
    `hmask: bit 2 of each code (set for codes 4 … 7, i.e. not negative): element e at bit e / 32 of byte e % 32; e.g. bytes 0–3: ${Array.from(bytes.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
    'qs: the low two bits, per 128 values byte l holding codes l, l + 32, l + 64, l + 96 in bits 0–1, 2–3, 4–5, 6–7; then the 12 scale bytes and d',
  );
  return { format: 'q3_K', bytes, codes, fields: { d, sc: sc.map((v) => v - 32) }, steps };
}

/**
 * Q2_K: 16 sub-blocks of 16, each with a scale and a min from make_qkx2_quants (levels 0 … 3,
 * weights |x|, the weighted absolute error), both quantized to 4 bits against the largest of each
 * (d = largest scale / 15, dmin = largest min / 15) and packed as one byte per sub-block; 2-bit codes.
 * @param {Float32Array} x @returns {Encoded}
 */
function q2K(x) {
  const L = new Array(256).fill(0);
  /** @type {number[]} */
  const scales = [];
  /** @type {number[]} */
  const mins = [];
  const fits = [];
  let maxScale = 0,
    maxMin = 0;
  for (let j = 0; j < 16; j++) {
    const xb = x.subarray(16 * j, 16 * j + 16);
    const r = qkx2(
      xb,
      Array.from(xb, (v) => Math.abs(v)),
      3,
      -0.5,
      f(0.1),
      15,
      true,
    );
    scales.push(r.scale);
    mins.push(r.min);
    r.L.forEach((l, i) => (L[16 * j + i] = l));
    if (r.scale > maxScale) maxScale = r.scale;
    if (r.min > maxMin) maxMin = r.min;
    fits.push(`${j}: ${num(r.scale)}, −${num(r.min)}${r.chosen >= 0 ? ` (trial ${r.chosen})` : ''}`);
  }
  const bytes = new Uint8Array(84);
  const sc = new Array(16).fill(0),
    mq = new Array(16).fill(0);
  let hd = 0,
    hm = 0;
  if (maxScale > 0) {
    const is = f(15 / maxScale);
    for (let j = 0; j < 16; j++) sc[j] = nearestInt(f(is * scales[j])) & 255;
    hd = toHalf(f(maxScale / 15));
  }
  for (let j = 0; j < 16; j++) bytes[j] = sc[j];
  if (maxMin > 0) {
    const im = f(15 / maxMin);
    for (let j = 0; j < 16; j++) {
      mq[j] = nearestInt(f(im * mins[j]));
      bytes[j] = (bytes[j] | (mq[j] << 4)) & 255;
    }
    hm = toHalf(f(maxMin / 15));
  }
  const d = fromHalf(hd),
    dmin = fromHalf(hm);
  for (let j = 0; j < 16; j++) {
    const dj = f(d * (bytes[j] & 15));
    if (dj === 0) continue; // ggml's !d: a scale of 0 keeps the search's codes (a NaN one does not)
    const dm = f(dmin * (bytes[j] >> 4));
    for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(0, Math.min(3, nearestInt(f(f(x[16 * j + i] + dm) / dj))));
  }
  for (let c = 0; c < 2; c++)
    for (let l = 0; l < 32; l++)
      bytes[16 + 32 * c + l] =
        L[128 * c + l] | (L[128 * c + l + 32] << 2) | (L[128 * c + l + 64] << 4) | (L[128 * c + l + 96] << 6);
  putHalf(bytes, 80, hd);
  putHalf(bytes, 82, hm);
  return {
    format: 'q2_K',
    bytes,
    codes: L,
    fields: {
      d,
      dmin,
      sc: Array.from(bytes.subarray(0, 16), (b) => b & 15),
      m: Array.from(bytes.subarray(0, 16), (b) => b >> 4),
    },
    steps: [
      `per sub-block of 16: weights w = |x|; the min (≤ 0) and scale of codes 0 … 3 from 16 trial scales (rmin -0.5, step 0.1), each refined by weighted least squares, the one of least Σ w |error| kept (scale, −min): ${fits.join('; ')}`,
      `d = largest scale / 15 = ${num(f(maxScale / 15))} → fp16 ${hex16(hd)} = ${num(d)}; dmin = largest min / 15 = ${num(f(maxMin / 15))} → fp16 ${hex16(hm)} = ${num(dmin)}`,
      `4-bit scales round(15 / largest scale · scale_j) = ${sc.join(', ')}; 4-bit mins round(15 / largest min · min_j) = ${mq.join(', ')}`,
      `scales: byte j = scale_j | min_j << 4: ${Array.from(bytes.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
      `codes q = round((x + dmin · m_j) / (d · sc_j)), clamped to 0 … 3; e.g. element 0: round((${num(x[0])} + ${num(f(dmin * (bytes[0] >> 4)))}) / ${num(f(d * (bytes[0] & 15)))}) = ${L[0]}`,
      'qs: per 128 values byte l holds codes l, l + 32, l + 64, l + 96 in bits 0–1, 2–3, 4–5, 6–7; then d and dmin',
    ],
  };
}

/** Q1_0: one sign bit per value against d = mean |x|. @param {Float32Array} x @returns {Encoded} */
function q1_0(x) {
  let sum = 0;
  for (const v of x) sum = f(sum + Math.abs(v));
  const d = f(sum / 128);
  const h = toHalf(d);
  const codes = Array.from(x, (v) => (v >= 0 ? 1 : 0));
  const bytes = new Uint8Array(18);
  putHalf(bytes, 0, h);
  codes.forEach((b, j) => (bytes[2 + (j >> 3)] |= b << (j & 7)));
  const pos = codes.filter((b) => b).length;
  return {
    format: 'q1_0',
    bytes,
    codes,
    fields: { d: fromHalf(h) },
    steps: [
      `d = Σ |x| / 128 = ${num(sum)} / 128 = ${num(d)} (the mean magnitude, summed in element order); stored as fp16 ${hex16(h)} = ${num(fromHalf(h))}`,
      `each value keeps only its sign: bit = 1 when x ≥ 0 (read back +d; -0 counts as ≥ 0), 0 when x < 0 (read back -d): this block has ${pos} ones and ${128 - pos} zeros; e.g. element 0: ${num(x[0])} → ${codes[0]}`,
      'qs: 16 bytes, element j at bit j % 8 of byte j / 8',
    ],
  };
}

/** Q2_0: 2-bit codes round(x / amax) + 1 against d = amax (code 3, +2d, is never made). @param {Float32Array} x @returns {Encoded} */
function q2_0(x) {
  const { amax, at } = signedMax(x);
  const id = amax > 0 ? f(1 / amax) : 0;
  const h = toHalf(amax);
  const codes = Array.from(x, (v) => {
    const p = f(v * id);
    // (int)roundf(p) as x86-64 converts it (NaN, Inf: INT_MIN), + 1, clamped to 0 … 3
    const q = (Number.isFinite(p) && Math.abs(p) < 2 ** 31 ? roundf(p) : -(2 ** 31)) + 1;
    return Math.max(0, Math.min(3, q));
  });
  const bytes = new Uint8Array(18);
  putHalf(bytes, 0, h);
  codes.forEach((q, j) => (bytes[2 + (j >> 2)] |= q << (2 * (j & 3))));
  const k = Math.max(0, at);
  const count = [0, 1, 2].map((t) => codes.filter((q) => q === t).length);
  return {
    format: 'q2_0',
    bytes,
    codes,
    fields: { d: fromHalf(h) },
    steps: [
      `d = amax = max |x| = ${num(amax)}${at >= 0 ? ` (element ${at})` : ''}; stored as fp16 ${hex16(h)} = ${num(fromHalf(h))}`,
      amax > 0 ? `id = 1 / d = ${num(id)} (the float32 amax)` : 'd = 0: id = 0, every code 1 (zero)',
      `q_i = round(x_i · id) + 1, halves away from zero, clamped to 0 … 3: since |x_i · id| ≤ 1 the codes are 0, 1, 2 (-d, 0, +d) and 3 (+2d) is never made; e.g. element ${k}: round(${num(x[k])} · ${num(id)}) + 1 = ${codes[k]}; this block: ${count[0]} × -d, ${count[1]} × 0, ${count[2]} × +d`,
      'qs: 16 bytes, element j in bits 2 · (j % 4) of byte j / 4',
    ],
  };
}
