// The numbers of "Compare with…": which tensors of two files are the same tensor, B's error
// against A over streamed chunks of rows, per-cell error maps, the layer and role of a tensor
// name, and the block of each type that covers an element. Plain functions over arrays, used by
// compare-run.js in the worker and checked in tests/compare-math.test.js; no DOM, no I/O.

import { typeInfo } from '../js/types.js';

/**
 * Running sums of B's error against A, element order, in double precision: n elements compared,
 * se = sum (b - a)^2, signal = sum a^2, maxAbs = max |b - a|, and skipped: elements where a or b
 * is NaN or Inf (left out of the sums, counted so the page can say so).
 * @typedef {{ n: number, se: number, signal: number, maxAbs: number, skipped: number }} ErrorSums
 */

/** @returns {ErrorSums} */
export const emptySums = () => ({ n: 0, se: 0, signal: 0, maxAbs: 0, skipped: 0 });

/**
 * Adds a chunk of A's and B's values (the same elements, same length) to the sums.
 * @param {ErrorSums} s
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 * @throws {RangeError} when the lengths differ
 */
export function addChunk(s, a, b) {
  if (a.length !== b.length) throw new RangeError(`addChunk: ${a.length} values of A but ${b.length} of B`);
  for (let i = 0; i < a.length; i++) {
    const x = a[i],
      y = b[i];
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      s.skipped++;
      continue;
    }
    const e = y - x;
    s.n++;
    s.se += e * e;
    s.signal += x * x;
    const m = Math.abs(e);
    if (m > s.maxAbs) s.maxAbs = m;
  }
  return s;
}

/**
 * RMSE = sqrt(se / n), max |B - A|, SNR = 10 log10(signal / se) in dB (Infinity when B equals A;
 * NaN when nothing finite was compared, so no number is made up), and the sums themselves.
 * @param {ErrorSums} s
 */
export function summarize(s) {
  if (s.n === 0) return { rmse: NaN, maxAbs: NaN, snr: NaN, n: 0, skipped: s.skipped, se: 0, signal: 0 };
  return {
    se: s.se,
    signal: s.signal,
    rmse: Math.sqrt(s.se / s.n),
    maxAbs: s.maxAbs,
    snr: s.se === 0 ? Infinity : 10 * Math.log10(s.signal / s.se),
    n: s.n,
    skipped: s.skipped,
  };
}

/**
 * Per cell of `cell` consecutive values of each row: RMSE and max |B - A| over the cell's finite
 * pairs (NaN for a cell with none). Values are whole rows of rowLen; cell divides rowLen.
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 * @param {number} cell
 * @returns {{ rmse: Float32Array, max: Float32Array, mean: Float32Array }} mean: the signed mean of B - A
 */
export function cellErrors(a, b, cell) {
  if (a.length !== b.length || a.length % cell !== 0)
    throw new RangeError(`cellErrors: ${a.length} and ${b.length} values in cells of ${cell}`);
  const k = a.length / cell;
  const rmse = new Float32Array(k),
    max = new Float32Array(k),
    mean = new Float32Array(k);
  for (let c = 0; c < k; c++) {
    let se = 0,
      sum = 0,
      m = 0,
      n = 0;
    for (let i = c * cell; i < (c + 1) * cell; i++) {
      const x = a[i],
        y = b[i];
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      const e = y - x;
      se += e * e;
      sum += e;
      if (Math.abs(e) > m) m = Math.abs(e);
      n++;
    }
    rmse[c] = n ? Math.sqrt(se / n) : NaN;
    max[c] = n ? m : NaN;
    mean[c] = n ? sum / n : NaN;
  }
  return { rmse, max, mean };
}

/**
 * A tensor name's layer and role: `blk.12.attn_q.weight` is layer 12, role `attn_q`; names
 * outside the blk.N. scheme have layer null and their name without `.weight` as role.
 * @param {string} name
 * @returns {{ layer: number | null, role: string }}
 */
export function layerOf(name) {
  const m = /^blk\.(\d+)\.(.+)$/.exec(name);
  const strip = (/** @type {string} */ s) => s.replace(/\.weight$/, '');
  return m ? { layer: Number(m[1]), role: strip(m[2]) } : { layer: null, role: strip(name) };
}

/**
 * @typedef {{ name: string, type: number, dims: number[], nElements: number, unreadable?: unknown }} TensorLike
 * @typedef {{ name: string, dims: number[], aType: number, bType: number }} Pair  a tensor in both files
 * @typedef {{ name: string, why: string }} Mismatch  a tensor that cannot be compared, and why
 */

/** ggml_n_dims: the shape without its trailing 1s (a [4096, 1] tensor is [4096]). */
const shapeOf = (/** @type {number[]} */ d) => {
  let n = d.length;
  while (n > 1 && d[n - 1] === 1) n--;
  return d.slice(0, n);
};

/**
 * Pairs the tensors of A and B by name and shape, in A's order. A tensor only one file has, one
 * whose shape differs, or one the codecs cannot decode in either file is a Mismatch (listed; the
 * rest are still compared).
 * @param {TensorLike[]} a
 * @param {TensorLike[]} b
 * @returns {{ pairs: Pair[], mismatched: Mismatch[] }}
 */
export function matchTensors(a, b) {
  const byName = new Map(b.map((t) => [t.name, t]));
  /** @type {Pair[]} */
  const pairs = [];
  /** @type {Mismatch[]} */
  const mismatched = [];
  // Integer and F64 tensors have no decoder (they are values, not weights with a float error).
  const decodable = (/** @type {TensorLike} */ t) => !t.unreadable && typeInfo(t.type).dequantize;
  for (const t of a) {
    const u = byName.get(t.name);
    byName.delete(t.name);
    if (!u) {
      mismatched.push({ name: t.name, why: 'only in A' });
      continue;
    }
    const sa = shapeOf(t.dims),
      sb = shapeOf(u.dims);
    if (sa.join('x') !== sb.join('x')) {
      mismatched.push({ name: t.name, why: `shape ${sa.join('×')} in A, ${sb.join('×')} in B` });
      continue;
    }
    const which = !decodable(t) ? 'A' : !decodable(u) ? 'B' : '';
    if (which) {
      const ty = which === 'A' ? t : u;
      mismatched.push({ name: t.name, why: `its type in ${which} (${typeName(ty)}) has no float values to compare` });
      continue;
    }
    pairs.push({ name: t.name, dims: t.dims, aType: t.type, bType: u.type });
  }
  for (const u of byName.values()) mismatched.push({ name: u.name, why: 'only in B' });
  return { pairs, mismatched };
}

const typeName = (/** @type {TensorLike} */ t) => (t.unreadable ? `type ${t.type}` : typeInfo(t.type).name);

/**
 * The smallest run of values that is a whole number of blocks of both types: the cell of the
 * B - A heatmap (lcm of the block sizes, 256 for Q4_0 against Q4_K).
 * @param {number} aType @param {number} bType
 */
export function commonCell(aType, bType) {
  const x = typeInfo(aType).blockSize,
    y = typeInfo(bType).blockSize;
  let p = x,
    q = y;
  while (q) [p, q] = [q, p % q]; // gcd
  return (x / p) * y;
}

/**
 * The block of a type that holds element `e` (flat index) of a tensor: its index, its first
 * element, and the byte range of its bytes from the tensor's start.
 * @param {number} type
 * @param {number} e
 */
export function blockAt(type, e) {
  const { blockSize, typeSize } = typeInfo(type);
  const block = Math.floor(e / blockSize);
  return { block, first: block * blockSize, count: blockSize, byteStart: block * typeSize, byteLength: typeSize };
}

/**
 * SNR by layer, one series per role (attn_q, ffn_down, ...), layers ascending; tensors outside
 * the layers (token_embd, output) are left out of the chart (the table lists them).
 * @param {{ name: string, snr: number }[]} results
 * @returns {{ role: string, points: { layer: number, snr: number }[] }[]}
 */
export function snrByLayer(results) {
  /** @type {Map<string, { layer: number, snr: number }[]>} */
  const roles = new Map();
  for (const r of results) {
    const { layer, role } = layerOf(r.name);
    if (layer === null) continue;
    const list = roles.get(role) ?? [];
    list.push({ layer, snr: r.snr });
    roles.set(role, list);
  }
  return [...roles].map(([role, points]) => ({ role, points: points.sort((p, q) => p.layer - q.layer) }));
}
