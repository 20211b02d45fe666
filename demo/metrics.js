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
