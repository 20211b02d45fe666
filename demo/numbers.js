// Numbers as the page writes them: a float32 by its shortest decimal that reads back as the same
// float32 (1e-5 stored as f32 is 0.000009999999747378752 as a double, and shows as 1e-5), and
// counts in words that keep small counts readable (12.3 K, not 0.01 M). No DOM: tested in Node.

const f32 = Math.fround;

/**
 * The shortest decimal (1 to 9 significant digits) that rounds back to the same float32 as x.
 * NaN, ±Infinity and -0 are written as JavaScript writes them ('-0' keeps the sign).
 * @param {number} x any number; it is rounded to float32 first
 * @returns {string}
 */
export function shortestF32(x) {
  if (!Number.isFinite(x)) return String(x);
  const f = f32(x);
  if (Object.is(f, -0)) return '-0';
  // 9 significant digits always round-trip a float32, so p stops at 9.
  let p = 1;
  while (p < 9 && f32(Number(f.toPrecision(p))) !== f) p++;
  const t = Number(f.toPrecision(p));
  // Exponent notation below 1e-4 (1e-5, not 0.00001) and where JavaScript uses it anyway.
  const e = Math.floor(Math.log10(Math.abs(t)));
  return e < -4 || e >= 21 ? t.toExponential(p - 1) : String(t);
}

/** A parameter (or any) count in words: 1.23 B, 45.6 M, 7.8 K, or the integer below 1000. */
export function fmtCount(/** @type {number} */ n) {
  const a = Math.abs(n);
  return a >= 1e9
    ? `${(n / 1e9).toFixed(2)} B`
    : a >= 1e6
      ? `${(n / 1e6).toFixed(2)} M`
      : a >= 1e3
        ? `${(n / 1e3).toFixed(1)} K`
        : String(n);
}
