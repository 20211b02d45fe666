// Rows of values and importance vectors for the quantizer tests against ggml (tests/lib/ggml.js):
// the shapes real weights have and the ones a hostile input has, each row one kind, seeded.
import { rng } from './helpers.js';

/** Bits of a float32 as a float (NaN payloads survive Float32Array stores). */
const f32 = (bits) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];

/**
 * The kinds of row, in order: what each fills row r's values with.
 * @type {[string, (r: ReturnType<typeof rng>, j: number, n: number) => number][]}
 */
export const ROW_KINDS = [
  ['normal', (r) => r.normal()],
  ['heavy-tailed', (r) => r.normal() / Math.max(0.05, Math.abs(r.normal()))],
  ['outlier columns', (r, j) => r.normal() * (j % 37 === 5 ? 40 : 1)],
  ['all equal', () => 0.625],
  ['all equal negative', () => -3.5],
  ['zeros', (r, j) => (j % 3 ? 0 : -0)],
  ['sparse', (r) => (r.next() < 0.9 ? 0 : r.normal())],
  ['small integers', (r) => Math.round(r.normal() * 4)],
  ['ramp', (r, j, n) => (2 * j) / n - 1],
  ['tiny (fp16 scale underflows)', (r) => r.normal() * 1e-9],
  ['subnormal', (r) => r.normal() * 1e-40],
  ['huge (fp16 scale overflows)', (r) => r.normal() * 1e6],
  ['near FLT_MAX', (r) => (r.next() < 0.5 ? -1 : 1) * 3.4e38 * r.next()],
  ['one NaN', (r, j) => (j === 7 ? NaN : r.normal())],
  ['NaN with payloads', (r, j) => (j % 5 === 0 ? f32(0x7fc00001 + j) : j % 5 === 1 ? f32(0xffc00003 + j) : r.normal())],
  ['all NaN, payload 1', () => f32(0x7fc00001)],
  ['signalling NaN', (r, j) => (j % 9 === 0 ? f32(0x7f800001 + j) : r.normal())],
  ['+Inf', (r, j) => (j === 3 ? Infinity : r.normal())],
  ['-Inf', (r, j) => (j === 30 ? -Infinity : r.normal())],
  ['+-Inf', (r, j) => (j % 2 ? Infinity : -Infinity)],
  ['Inf and NaN', (r, j) => (j % 4 === 0 ? Infinity : j % 4 === 1 ? NaN : r.normal())],
  ['ties', (r, j) => ((j % 8) - 4) * 0.5],
  // NaNs of every sign and payload, quiet or signalling, at random places: where two meet in an
  // addition or a product, x86-64 keeps the one its code generator put first.
  ['NaN, random payloads', (r) => (r.next() < 0.3 ? f32(((r.next() * 2 ** 32) | 0x7f800001) >>> 0) : r.normal())],
  // ... and with Infs among them: an infinite dmin times a min code 0 is a NaN that meets them.
  [
    'NaN payloads and Inf',
    (r) => {
      const u = r.next();
      if (u < 0.1) return f32(((r.next() * 2 ** 32) | 0x7f800001) >>> 0);
      return u < 0.15 ? (r.next() < 0.5 ? Infinity : -Infinity) : r.normal();
    },
  ],
  ['all +Inf', () => Infinity],
  // Whole 32-value sub-blocks of zeros between live ones (IQ3_S packs the live sub-blocks' codes
  // together, ggml's pointers stepping over the skipped ones).
  ['zero sub-blocks', (r, j) => ((j >> 5) % 3 === 1 ? 0 : r.normal())],
  // A NaN heading a group of 4 zeros: the IQ3 searches turn its payload into a code (payload 2:
  // code 2, a grid point), so ggml quantizes the row without weights instead of aborting.
  ['NaN heading zeros', (r, j) => (j % 32 === 0 ? f32(0x7fc00002) : j % 32 < 4 ? 0 : r.normal())],
  ['negative NaN among zeros', (r, j) => (j % 64 === 1 ? f32(0xffc00000) : j % 64 < 4 ? 0 : r.normal())],
];

/**
 * rows x cols values, row r of kind ROW_KINDS[(r + offset) % kinds].
 * @param {number} rows
 * @param {number} cols
 * @param {number} seed
 * @param {number} [offset]
 * @returns {{ x: Float32Array, kinds: string[] }}
 */
export function hostileRows(rows, cols, seed, offset = 0) {
  const r = rng(seed);
  const x = new Float32Array(rows * cols);
  const kinds = [];
  for (let i = 0; i < rows; i++) {
    const [name, fill] = ROW_KINDS[(i + offset) % ROW_KINDS.length];
    kinds.push(name);
    for (let j = 0; j < cols; j++) x[i * cols + j] = fill(r, j, cols);
  }
  return { x, kinds };
}

/**
 * Importance vectors of cols weights, as llama-imatrix makes them (means of x^2 over activations:
 * positive, a few columns far larger), and harsher ones.
 * @type {[string, (r: ReturnType<typeof rng>, j: number, n: number) => number][]}
 */
export const IMATRIX_KINDS = [
  ['real-looking', (r, j) => Math.exp(r.normal() * 1.5) * (j % 97 === 3 ? 50 : 1)],
  ['uniform random', (r) => r.next()],
  ['all ones', () => 1],
  ['some zeros', (r, j) => (j % 7 === 0 ? 0 : r.next() * 10)],
  ['all zeros', () => 0],
  ['tiny', (r) => r.next() * 1e-30],
  ['huge', (r) => r.next() * 1e30],
];

/**
 * One importance vector of the given kind.
 * @param {number} cols
 * @param {number} kind index into IMATRIX_KINDS
 * @param {number} seed
 */
export function imatrix(cols, kind, seed) {
  const r = rng(seed);
  const fill = IMATRIX_KINDS[kind % IMATRIX_KINDS.length][1];
  return new Float32Array(cols).map((_, j) => fill(r, j, cols));
}
