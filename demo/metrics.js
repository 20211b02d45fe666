// Numbers the demo shows, computed the same way wherever they are checked.

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

/** Each format's block fields: [name, byte offset, byte length]. */
export const FIELDS = {
  q4_0: [
    ['d', 0, 2],
    ['qs', 2, 16],
  ],
  q4_1: [
    ['d', 0, 2],
    ['m', 2, 2],
    ['qs', 4, 16],
  ],
  q5_0: [
    ['d', 0, 2],
    ['qh', 2, 4],
    ['qs', 6, 16],
  ],
  q5_1: [
    ['d', 0, 2],
    ['m', 2, 2],
    ['qh', 4, 4],
    ['qs', 8, 16],
  ],
  q8_0: [
    ['d', 0, 2],
    ['qs', 2, 32],
  ],
  q8_1: [
    ['d', 0, 2],
    ['s', 2, 2],
    ['qs', 4, 32],
  ],
};

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
