// An independent JavaScript model of ggml's reference code (quantize_row_*_ref, dequantize_row_*,
// ggml_vec_dot_*_generic), written from FORMATS.md without looking at src/: float32 arithmetic is
// modelled with Math.fround after every operation, fp16 rounding with real-number arithmetic on
// doubles, and C's float -> int8 casts the way x86-64 executes them (cvttss2si: NaN and
// out-of-range give INT32_MIN, then the low byte is kept). Tests compare the wasm builds with it.
import { CODEC_TYPES, typeInfo } from '../../js/types.js';

const f = Math.fround;

/** Round half to even, for non-negative doubles. */
function rne(x) {
  const fl = Math.floor(x);
  const d = x - fl;
  if (d > 0.5) return fl + 1;
  if (d < 0.5) return fl;
  return fl % 2 === 0 ? fl : fl + 1;
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
export const bitsOf = (x) => ((F32[0] = x), U32[0]);

/** fp32 -> binary16 bits, from the real value: round to nearest even, overflow to inf. */
export function toHalf(x) {
  x = f(x);
  const sign = bitsOf(x) >>> 31 ? 0x8000 : 0;
  if (Number.isNaN(x)) return sign | 0x7e00;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | rne(a * 2 ** 24); // 1024 would be the smallest normal, encoded alike
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  let m = rne(a / 2 ** (e - 10)); // 1024..2048
  if (m === 2048) {
    m = 1024;
    e++;
  }
  return sign | ((e + 15) << 10) | (m - 1024);
}

/** binary16 bits -> value (NaN for NaN). */
export function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31,
    m = h & 1023;
  if (e === 31) return m ? NaN : s * Infinity;
  if (e === 0) return s * m * 2 ** -24;
  return s * (1024 + m) * 2 ** (e - 25);
}

/** fp32 -> bf16 bits: round to nearest even on the value; NaN keeps its top half, quieted. */
export function toBf16(x) {
  const u = bitsOf(x);
  if ((u & 0x7fffffff) > 0x7f800000) return (u >>> 16) | 0x40;
  const top = u >>> 16,
    low = u & 0xffff;
  const up = low > 0x8000 || (low === 0x8000 && top & 1);
  return (top + (up ? 1 : 0)) & 0xffff;
}

export function fromBf16(h) {
  U32[0] = h << 16;
  return F32[0];
}

/** C's (int8_t)/(uint8_t) cast of a float on x86-64, as the low byte 0..255. */
function castByte(x) {
  if (Number.isNaN(x) || x >= 2 ** 31 || x < -(2 ** 31)) return 0;
  return Math.trunc(x) & 0xff;
}
const castI8 = (x) => (castByte(x) << 24) >> 24;

/** C roundf: half away from zero. */
function roundf(x) {
  if (!Number.isFinite(x)) return x;
  return Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
}

const wr16 = (out, o, v) => {
  out[o] = v & 0xff;
  out[o + 1] = v >> 8;
};
const rd16 = (b, o) => b[o] | (b[o + 1] << 8);
const rd32 = (b, o) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;

/** [block size, type size] of every type blockquant has kernels for, from the type table. */
export const SIZES = Object.fromEntries(
  CODEC_TYPES.map((id) => [typeInfo(id).name, [typeInfo(id).blockSize, typeInfo(id).typeSize]]),
);

function quantBlock(type, x, out, o) {
  if (type === 'q4_0' || type === 'q5_0') {
    let amax = 0,
      max = 0;
    for (const v of x)
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    const five = type === 'q5_0';
    const d = f(max / (five ? -16 : -8));
    const id = d !== 0 ? f(1 / d) : 0;
    wr16(out, o, toHalf(d));
    const lim = five ? 31 : 15,
      off = five ? 16.5 : 8.5;
    const codes = x.map((v) => {
      const c = castI8(f(f(v * id) + off));
      return (c < lim ? c : lim) & 0xff;
    });
    emitCodes(five, codes, out, o + 2);
  } else if (type === 'q4_1' || type === 'q5_1') {
    let min = 3.4028234663852886e38,
      max = -3.4028234663852886e38;
    for (const v of x) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const five = type === 'q5_1';
    const d = f(f(max - min) / (five ? 31 : 15));
    const id = d !== 0 ? f(1 / d) : 0;
    wr16(out, o, toHalf(d));
    wr16(out, o + 2, toHalf(min));
    const codes = x.map((v) => {
      const c = f(f(f(v - min) * id) + 0.5);
      if (five) return castByte(c);
      const i = castI8(c);
      return (i < 15 ? i : 15) & 0xff;
    });
    emitCodes(five, codes, out, o + 4);
  } else {
    let amax = 0;
    for (const v of x) {
      const a = Math.abs(v);
      amax = amax > a ? amax : a;
    }
    const d = f(amax / 127);
    const id = d !== 0 ? f(1 / d) : 0;
    wr16(out, o, toHalf(d));
    const qo = type === 'q8_1' ? 4 : 2;
    let sum = 0;
    for (let j = 0; j < 32; j++) {
      const q = castI8(roundf(f(x[j] * id)));
      out[o + qo + j] = q & 0xff;
      sum += q;
    }
    if (type === 'q8_1') wr16(out, o + 2, toHalf(f(sum * d)));
  }
}

function emitCodes(five, codes, out, o) {
  let qh = 0;
  if (five) {
    for (let j = 0; j < 32; j++) if (codes[j] & 0x10) qh += 2 ** j;
    out[o] = qh & 0xff;
    out[o + 1] = (qh >>> 8) & 0xff;
    out[o + 2] = (qh >>> 16) & 0xff;
    out[o + 3] = (qh >>> 24) & 0xff;
    o += 4;
  }
  for (let j = 0; j < 16; j++) out[o + j] = (codes[j] & 0x0f) | ((codes[j + 16] & 0x0f) << 4);
}

/** Quantize an array of numbers (float32 values) to bytes. */
export function quantize(type, values) {
  const [bs, ts] = SIZES[type];
  const n = values.length;
  const out = new Uint8Array((n / bs) * ts);
  if (type === 'f32') {
    new Float32Array(out.buffer).set(values);
    return out;
  }
  if (type === 'f16' || type === 'bf16') {
    for (let i = 0; i < n; i++) wr16(out, 2 * i, type === 'f16' ? toHalf(values[i]) : toBf16(values[i]));
    return out;
  }
  for (let b = 0; b < n / 32; b++) quantBlock(type, Array.from(values.subarray(b * 32, b * 32 + 32)), out, b * ts);
  return out;
}

/** Codes 0..31 (or 0..15) of one block's 32 elements, and d, m. */
export function decodeBlock(type, q, o) {
  const d = fromHalf(rd16(q, o));
  const hasM = type === 'q4_1' || type === 'q5_1';
  const m = hasM ? fromHalf(rd16(q, o + 2)) : 0;
  let codes;
  if (type === 'q8_0' || type === 'q8_1') {
    const qo = type === 'q8_1' ? 4 : 2;
    codes = Array.from({ length: 32 }, (_, j) => (q[o + qo + j] << 24) >> 24);
  } else {
    const five = type === 'q5_0' || type === 'q5_1';
    const qs = o + (hasM ? 4 : 2) + (five ? 4 : 0);
    const qh = five ? rd32(q, o + (hasM ? 4 : 2)) : 0;
    codes = Array.from({ length: 32 }, (_, j) => {
      const nib = j < 16 ? q[qs + j] & 15 : q[qs + j - 16] >> 4;
      return nib | (five ? ((qh >>> j) & 1) << 4 : 0);
    });
    const off = type === 'q4_0' ? 8 : type === 'q5_0' ? 16 : 0;
    codes = codes.map((c) => c - off);
  }
  const s = type === 'q8_1' ? fromHalf(rd16(q, o + 2)) : 0;
  return { d, m, s, codes };
}

/** Dequantize bytes to a Float32Array. */
export function dequantize(type, q) {
  const [bs, ts] = SIZES[type];
  const n = (q.length / ts) * bs;
  const y = new Float32Array(n);
  if (type === 'f32') {
    y.set(new Float32Array(q.slice().buffer));
    return y;
  }
  if (type === 'f16' || type === 'bf16') {
    for (let i = 0; i < n; i++) y[i] = type === 'f16' ? fromHalf(rd16(q, 2 * i)) : fromBf16(rd16(q, 2 * i));
    return y;
  }
  for (let b = 0; b < n / 32; b++) {
    const { d, m, codes } = decodeBlock(type, q, b * ts);
    const affine = type === 'q4_1' || type === 'q5_1';
    for (let j = 0; j < 32; j++) y[b * 32 + j] = affine ? f(f(codes[j] * d) + m) : f(codes[j] * d);
  }
  return y;
}

/** The float term ggml adds for one block of a vec_dot pair, and its exact integer sum. */
export function blockTerm(pair, x, xo, yq, yo) {
  const [tx, ty] = pair;
  const a = decodeBlock(tx, x, xo),
    b = decodeBlock(ty, yq, yo);
  let sumi = 0;
  for (let j = 0; j < 32; j++) sumi += a.codes[j] * b.codes[j];
  let term;
  if (tx === 'q4_0') term = f(f(sumi * a.d) * b.d);
  else if (tx === 'q5_0') term = f(f(a.d * b.d) * sumi);
  else if (tx === 'q8_0') term = f(sumi * f(a.d * b.d));
  else term = f(f(f(a.d * b.d) * sumi) + f(a.m * b.s));
  return { term, sumi };
}

/** ggml_vec_dot_*_generic: block terms summed in order; also sum |term| for error bounds. */
export function vecDot(pair, x, y, n) {
  const xs = SIZES[pair[0]][1],
    ys = SIZES[pair[1]][1];
  let sum = 0,
    abs = 0;
  for (let b = 0; b < n / 32; b++) {
    const { term } = blockTerm(pair, x, b * xs, y, b * ys);
    sum = f(sum + term);
    abs += Math.abs(term);
  }
  return { sum, abs };
}

/** The f32 dot: dequantized weights times values, summed in element order; and sum |products|.
 * F32 . F32 is ggml's own vec_dot, whose generic C adds the float products in double and rounds
 * once at the end; the fused dots of the other types add in float. */
export function dotF32(type, q, v) {
  const w = dequantize(type, q);
  const wide = type === 'f32';
  let sum = 0,
    abs = 0;
  for (let i = 0; i < w.length; i++) {
    const p = f(w[i] * v[i]);
    sum = wide ? sum + p : f(sum + p);
    abs += Math.abs(p);
  }
  return { sum: f(sum), abs };
}
