// The work behind "Compare with…", for compare-worker.js (and tests/compare-run.test.js in Node):
// B's error against A per tensor, read a chunk of rows at a time through the files' byte sources
// (openGGUF's readRows), so memory is bounded by one chunk whatever the file size; B is a second
// file or A quantized in memory to a recipe's types (planQuantize), never written anywhere.

import { typeInfo, toLittleEndian } from '../js/index.js';
import { addChunk, blockAt, cellErrors, commonCell, emptySums, matchTensors, summarize } from './compare-math.js';

/**
 * @typedef {import('./compare-math.js').Pair} Pair
 * @typedef {import('./compare-math.js').Mismatch} Mismatch
 * @typedef {Awaited<ReturnType<typeof import('../js/index.js').openGGUF>>} OpenFile
 * @typedef {{ dequantizeRows: (f: any, name: string, first: number, count: number) => Promise<unknown>,
 *   quantize: (t: number, x: Float32Array, o?: { rowLength?: number, imatrix?: Float32Array }) => Uint8Array,
 *   dequantize: (t: number, b: Uint8Array) => Float32Array }} Bq  the codec calls used here
 * @typedef {{ type: number, imatrix: Float32Array[] | null }} Recipe  one tensor's type in the plan,
 *   and its importance weights (one set per expert matrix)
 * @typedef {{ kind: 'file', file: OpenFile } | { kind: 'quantize', recipes: Map<string, Recipe> }} Side
 *   what B is: a file, or A quantized in memory as the plan says
 * @typedef {{ tensor: string, index: number, count: number, values: number, total: number }} Progress
 *   after each chunk: the tensor, its index among count, and values compared so far of total
 * @typedef {ReturnType<typeof summarize> & { name: string, aType: string, bType: string, dims: number[] }} TensorError
 */

/** f32 values per chunk (4 MiB of A's and 4 MiB of B's values in flight). */
export const CHUNK_VALUES = 1 << 20;

/**
 * The pairs to compare when B is A quantized by a plan: the tensors the plan converts. Those it
 * keeps as they are (norms, 1-D tensors) are listed as not compared: B would equal A.
 * @param {OpenFile} a
 * @param {import('../js/model/recipe.js').QuantizePlan} plan
 * @returns {{ pairs: Pair[], mismatched: Mismatch[], recipes: Map<string, Recipe> }}
 */
export function planPairs(a, plan) {
  /** @type {Map<string, Recipe>} */
  const recipes = new Map();
  /** @type {Pair[]} */
  const pairs = [];
  /** @type {Mismatch[]} */
  const mismatched = [];
  for (const t of plan.tensors) {
    const src = a.tensors.find((x) => x.name === t.source.name);
    if (!src) continue;
    if (t.to === t.from) {
      mismatched.push({ name: src.name, why: `the recipe keeps it as ${typeInfo(t.from).name} (B would equal A)` });
      continue;
    }
    recipes.set(src.name, { type: t.to, imatrix: t.imatrix });
    pairs.push({ name: src.name, dims: src.dims, aType: src.type, bType: t.to });
  }
  return { pairs, mismatched, recipes };
}

/** Pairs of two open files (matchTensors over their tensor lists). */
export function filePairs(/** @type {OpenFile} */ a, /** @type {OpenFile} */ b) {
  return matchTensors(a.tensors, b.tensors);
}

/** Lets other messages in (a cancel) and stops when the signal has fired. */
async function checkpoint(/** @type {AbortSignal | undefined} */ signal) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  signal?.throwIfAborted();
}

/**
 * Rows of A and B's values of them: A's decoded from the file; B's decoded from its file, or A's
 * quantized to the recipe's type (with the weights of the rows' expert) and decoded again.
 * @param {Bq} bq @param {OpenFile} a @param {Side} b @param {Pair} p
 * @param {number} first @param {number} count rows, inside one expert matrix
 */
async function rowsOf(bq, a, b, p, first, count) {
  const xa = /** @type {Float32Array} */ (await bq.dequantizeRows(a, p.name, first, count));
  if (b.kind === 'file')
    return { xa, xb: /** @type {Float32Array} */ (await bq.dequantizeRows(b.file, p.name, first, count)) };
  const bytes = quantizeRows(bq, b, p, first, xa);
  return { xa, xb: bq.dequantize(p.bType, bytes) };
}

/** A's rows from `first` quantized as the recipe says (B's bytes of those rows). */
function quantizeRows(
  /** @type {Bq} */ bq,
  /** @type {Side & { kind: 'quantize' }} */ b,
  /** @type {Pair} */ p,
  /** @type {number} */ first,
  /** @type {Float32Array} */ xa,
) {
  const r = /** @type {Recipe} */ (b.recipes.get(p.name));
  const rowLen = p.dims[0] ?? 1;
  const perExpert = p.dims[1] ?? 1;
  const w = r.imatrix ? r.imatrix[r.imatrix.length > 1 ? Math.floor(first / perExpert) : 0] : undefined;
  return bq.quantize(r.type, xa, w ? { rowLength: rowLen, imatrix: w } : { rowLength: rowLen });
}

/**
 * Chunks of rows of a tensor: at most CHUNK_VALUES values (at least one row), never across an
 * expert matrix of a 3-D tensor (its rows share one set of importance weights).
 * @param {number[]} dims @param {number} [maxRows] only the first maxRows rows
 */
export function chunksOf(dims, maxRows = Infinity) {
  const rowLen = dims[0] ?? 1;
  const rows = Math.min(
    maxRows,
    dims.slice(1).reduce((x, y) => x * y, 1),
  );
  const perExpert = dims.length > 2 ? dims[1] : rows;
  const step = Math.max(1, Math.floor(CHUNK_VALUES / rowLen));
  /** @type {[number, number][]} */
  const out = [];
  for (let r = 0; r < rows;) {
    const end = Math.min(rows, r + step, (Math.floor(r / perExpert) + 1) * perExpert);
    out.push([r, end - r]);
    r = end;
  }
  return out;
}

/**
 * Every pair's error of B against A, in order, a chunk of rows at a time.
 * @param {Bq} bq @param {OpenFile} a @param {Side} b @param {Pair[]} pairs
 * @param {{ signal?: AbortSignal, onProgress?: (p: Progress) => void }} [o]
 * @returns {Promise<TensorError[]>}
 * @throws the signal's reason when it fires; a read's GGUFError
 */
export async function compareAll(bq, a, b, pairs, o = {}) {
  const total = pairs.reduce((s, p) => s + p.dims.reduce((x, y) => x * y, 1), 0);
  let values = 0;
  /** @type {TensorError[]} */
  const out = [];
  for (const [index, p] of pairs.entries()) {
    const s = emptySums();
    for (const [first, count] of chunksOf(p.dims)) {
      await checkpoint(o.signal);
      const { xa, xb } = await rowsOf(bq, a, b, p, first, count);
      addChunk(s, xa, xb);
      values += xa.length;
      o.onProgress?.({ tensor: p.name, index, count: pairs.length, values, total });
    }
    out.push({
      name: p.name,
      aType: typeInfo(p.aType).name,
      bType: typeInfo(p.bType).name,
      dims: p.dims,
      ...summarize(s),
    });
  }
  return out;
}

/**
 * The B - A maps of one tensor, per cell of commonCell values: RMSE, max |B - A| and mean B - A,
 * over its first rows (at most maxValues values).
 * @param {Bq} bq @param {OpenFile} a @param {Side} b @param {Pair} p @param {number} maxValues
 * @param {AbortSignal} [signal]
 */
export async function cellMaps(bq, a, b, p, maxValues, signal) {
  const rowLen = p.dims[0] ?? 1;
  const totalRows = p.dims.slice(1).reduce((x, y) => x * y, 1);
  const rows = Math.max(1, Math.min(totalRows, Math.floor(maxValues / rowLen)));
  const cell = commonCell(p.aType, p.bType);
  const perRow = rowLen / cell;
  const rmse = new Float32Array(rows * perRow),
    max = new Float32Array(rows * perRow),
    mean = new Float32Array(rows * perRow);
  for (const [first, count] of chunksOf(p.dims, rows)) {
    await checkpoint(signal);
    const { xa, xb } = await rowsOf(bq, a, b, p, first, count);
    const c = cellErrors(xa, xb, cell);
    rmse.set(c.rmse, first * perRow);
    max.set(c.max, first * perRow);
    mean.set(c.mean, first * perRow);
  }
  return { rows, totalRows, rowLen, cell, perRow, rmse, max, mean };
}

/**
 * The bytes of the block of a file's tensor that holds element e, little-endian (a big-endian
 * file's block swapped as the codecs read it).
 * @param {OpenFile} f @param {string} name @param {number} e
 */
async function fileBlock(f, name, e) {
  const t = /** @type {OpenFile['tensors'][number]} */ (f.tensors.find((x) => x.name === name));
  const rowLen = t.dims[0] ?? 1;
  const row = Math.floor(e / rowLen);
  const k = blockAt(t.type, e - row * rowLen);
  const raw = await f.readRows(name, row, 1);
  const le = (t.littleEndian ?? f.littleEndian) ? raw : toLittleEndian(t.type, raw);
  const whole = blockAt(t.type, e);
  return { bytes: le.slice(k.byteStart, k.byteStart + k.byteLength), block: whole.block, first: whole.first };
}

/**
 * What the inspector shows for one heatmap cell: the cell's values in A and B, and the block of
 * each file's type that covers element `within` of the cell (block sizes differ between types:
 * a Q4_K super-block covers eight Q4_0 blocks), with its bytes, index and first element.
 * @param {Bq} bq @param {OpenFile} a @param {Side} b @param {Pair} p @param {number} cellIndex
 * @param {number} [within] an element of the cell, 0 .. cellSize - 1
 */
export async function cellBlocks(bq, a, b, p, cellIndex, within = 0) {
  const rowLen = p.dims[0] ?? 1;
  const cell = commonCell(p.aType, p.bType);
  const first = cellIndex * cell;
  const n = p.dims.reduce((x, y) => x * y, 1);
  if (!Number.isInteger(cellIndex) || cellIndex < 0 || first >= n)
    throw new RangeError(`${p.name} has no cell ${cellIndex}`);
  if (!Number.isInteger(within) || within < 0 || within >= cell)
    throw new RangeError(`a cell of ${p.name} has elements 0..${cell - 1}, not ${within}`);
  const row = Math.floor(first / rowLen);
  const { xa, xb } = await rowsOf(bq, a, b, p, row, 1);
  const at = first - row * rowLen;
  const e = first + within;
  const A = await fileBlock(a, p.name, e);
  let B;
  if (b.kind === 'file') B = await fileBlock(b.file, p.name, e);
  else {
    const bytes = quantizeRows(bq, b, p, row, xa);
    const k = blockAt(p.bType, at + within);
    const whole = blockAt(p.bType, e);
    B = { bytes: bytes.slice(k.byteStart, k.byteStart + k.byteLength), block: whole.block, first: whole.first };
  }
  return {
    name: p.name,
    cell: cellIndex,
    cellSize: cell,
    first,
    row,
    element: e,
    a: { type: typeInfo(p.aType).name, ...A, values: xa.slice(at, at + cell) },
    b: { type: typeInfo(p.bType).name, ...B, values: xb.slice(at, at + cell) },
  };
}
