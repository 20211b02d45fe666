// Numbers the demo shows, computed the same way wherever they are checked.

import { CODEC_TYPES, typeInfo } from '../js/types.js';

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
  const f = (/** @type {number} */ a) => (useLog ? Math.log10(a) : a);
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
 * The formats the demo quantizes float tensors to, from the type table: weight formats (those with
 * a ggml vec_dot pair) with a quantizer and block statistics, the 32-value formats first and Q8_0
 * (the ruler) first of all, then the K-quants. A tensor is quantized to those whose block divides
 * its rows.
 */
export const FORMATS = CODEC_TYPES.map((id) => typeInfo(id))
  .filter((t) => t.blockSize > 1 && t.quantize && t.stats && t.dot)
  .sort((a, b) => Number(b.name === 'q8_0') - Number(a.name === 'q8_0') || a.blockSize - b.blockSize)
  .map((t) => t.name);
