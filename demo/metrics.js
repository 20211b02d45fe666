// Numbers the demo shows, computed the same way wherever they are checked.

import { CODEC_TYPES, blockFields, typeInfo } from '../js/types.js';

/**
 * Whole-tensor error of a reconstruction: RMSE = sqrt(mean((x - x')^2)) and max |x - x'|, summed
 * in element order in double precision; SNR in dB.
 * @param {Float32Array} x
 * @param {Float32Array} back
 */
export function errorSummary(x, back) {
  let se = 0,
    signal = 0,
    maxAbs = 0;
  for (let i = 0; i < x.length; i++) {
    const e = x[i] - back[i];
    se += e * e;
    signal += x[i] * x[i];
    const a = Math.abs(e);
    if (a > maxAbs) maxAbs = a;
  }
  return { rmse: Math.sqrt(se / x.length), maxAbs, snr: se === 0 ? Infinity : 10 * Math.log10(signal / se) };
}

/**
 * A histogram of values over `bins` bins between their min and max (log-spaced when log and all
 * values are positive).
 * @param {ArrayLike<number>} v
 * @param {number} bins
 * @param {boolean} log
 */
export function histogram(v, bins, log) {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < v.length; i++) {
    const a = v[i];
    if (Number.isFinite(a)) {
      if (a < lo) lo = a;
      if (a > hi) hi = a;
    }
  }
  if (!(lo <= hi)) return { lo: 0, hi: 0, log: false, counts: new Array(bins).fill(0) };
  const useLog = log && lo > 0;
  const f = (a) => (useLog ? Math.log10(a) : a);
  const a0 = f(lo),
    a1 = f(hi);
  const counts = new Array(bins).fill(0);
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i]) || (useLog && v[i] <= 0)) continue;
    const k = a1 > a0 ? Math.min(bins - 1, Math.floor(((f(v[i]) - a0) / (a1 - a0)) * bins)) : 0;
    counts[k]++;
  }
  return { lo, hi, log: useLog, counts };
}

/**
 * The value of binary16 bits (NaN for any NaN).
 * @param {number} h
 */
export function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 31 ? (f ? NaN : s * Infinity) : e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
}

/**
 * The formats the demo quantizes float tensors to, from the type table: weight formats (those with
 * a ggml vec_dot pair) with a quantizer and block statistics, Q8_0 (the ruler) first. The heatmaps,
 * code histograms and block inspector decode 32-value blocks (blockCodes); formats of other block
 * sizes join when they do.
 */
export const FORMATS = CODEC_TYPES.map((id) => typeInfo(id))
  .filter((t) => t.blockSize === 32 && t.quantize && t.stats && t.dot)
  .map((t) => t.name)
  .sort((a, b) => (b === 'q8_0') - (a === 'q8_0'));

/**
 * Each format's block fields: [name, byte offset, byte length], from the block layouts of
 * js/types.js (checked against the C structs by tests/types.test.js).
 * @type {Record<string, [string, number, number][]>}
 */
export const FIELDS = Object.fromEntries(
  CODEC_TYPES.map((id) => typeInfo(id))
    .filter((t) => t.blockSize > 1)
    .map((t) => [t.name, (blockFields(t.name) ?? []).map((f) => [f.name, f.offset, f.size])]),
);

/**
 * The 32 codes of the block of `format` at byte o of b, into out (returned): signed bytes for Q8,
 * else nibbles (elements 0-15 low, 16-31 high) with bit j of qh as bit 4 for Q5.
 * @param {string} format
 * @param {Uint8Array} b
 * @param {number} o
 * @param {number[] | Int32Array} out
 */
export function blockCodes(format, b, o = 0, out = new Array(32)) {
  const qs = o + FIELDS[format].find(([n]) => n === 'qs')[1];
  if (format.startsWith('q8')) {
    for (let j = 0; j < 32; j++) out[j] = (b[qs + j] << 24) >> 24;
    return out;
  }
  const qh = blockQh(format, b, o) ?? 0;
  for (let j = 0; j < 16; j++) {
    out[j] = (b[qs + j] & 15) | (((qh >>> j) & 1) << 4);
    out[j + 16] = (b[qs + j] >> 4) | (((qh >>> (j + 16)) & 1) << 4);
  }
  return out;
}

/**
 * The qh word (the 5th bits, bit j for element j) of the Q5 block at byte o of b; null for formats
 * without one.
 * @param {string} format
 * @param {Uint8Array} b
 * @param {number} o
 */
export function blockQh(format, b, o = 0) {
  const f = FIELDS[format].find(([n]) => n === 'qh');
  if (!f) return null;
  const h = o + f[1];
  return (b[h] | (b[h + 1] << 8) | (b[h + 2] << 16) | (b[h + 3] << 24)) >>> 0;
}
