// The importance data a plan uses, as llama-quantize's tool prepares it: the entries of an
// Imatrix (readImatrix) or a Map, --exclude-weights / --include-weights applied (substrings of the
// entry names), nothing at all when no entry is left; and the quantize.imatrix.* KVs it adds.

import { PlanError } from './errors.js';

/** @typedef {import('./header.js').Override} Override */

/**
 * @param {{ imatrix?: unknown, includeWeights?: string[], excludeWeights?: string[] }} o
 * @returns {Map<string, Float32Array> | null} name -> every weight of the entry (matrix after matrix)
 * @throws {PlanError} BAD_OPTION, IMATRIX_NOT_FINITE
 */
export function imatrixOf(o) {
  if (o.imatrix === undefined || o.imatrix === null) return null;
  const inc = o.includeWeights ?? [];
  const exc = o.excludeWeights ?? [];
  if (inc.length && exc.length)
    throw new PlanError('BAD_OPTION', 'includeWeights and excludeWeights cannot be used together');
  /** @type {Map<string, Float32Array>} */
  let m = new Map();
  const src = /** @type {any} */ (o.imatrix);
  if (src instanceof Map) {
    for (const [k, v] of src) {
      if (!(v instanceof Float32Array)) throw new PlanError('BAD_OPTION', `imatrix ${k}: expected a Float32Array`);
      m.set(k, v);
    }
  } else if (src && src.entries instanceof Map) {
    for (const [k, e] of src.entries) m.set(k, e.values);
  } else throw new PlanError('BAD_OPTION', 'imatrix must be an Imatrix (readImatrix) or a Map of name -> Float32Array');
  if (exc.length) m = new Map([...m].filter(([k]) => !exc.some((s) => k.includes(s))));
  if (inc.length) m = new Map([...m].filter(([k]) => inc.some((s) => k.includes(s))));
  if (m.size === 0) return null;
  for (const [k, v] of m)
    for (const x of v)
      if (!Number.isFinite(x))
        throw new PlanError('IMATRIX_NOT_FINITE', `imatrix contains non-finite value ${x} (${k})`, k);
  return m;
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();
/** The first 127 bytes, as the tool's strncpy into a 128-byte field keeps them. @param {string} s */
function clip(s) {
  const b = utf8.encode(s);
  return b.length <= 127 ? s : utf8d.decode(b.subarray(0, 127)).replace(/\uFFFD$/, '');
}

/**
 * The KVs llama-quantize's tool adds when it hands importance data over, as overrides in its
 * order: quantize.imatrix.file (when the file's name is known), .dataset (the first one named),
 * .entries_count, .chunks_count (when known and > 0).
 * @param {{ imatrix?: unknown, imatrixFile?: string }} o
 * @param {Map<string, Float32Array> | null} im
 * @returns {Override[]}
 */
export function imatrixKV(o, im) {
  if (!im) return [];
  const src = /** @type {any} */ (o.imatrix);
  /** @type {Override[]} */
  const out = [];
  if (typeof o.imatrixFile === 'string')
    out.push({ key: 'quantize.imatrix.file', tag: 'str', value: clip(o.imatrixFile) });
  const ds = Array.isArray(src?.datasets) ? src.datasets : [];
  if (ds.length) out.push({ key: 'quantize.imatrix.dataset', tag: 'str', value: clip(String(ds[0])) });
  out.push({ key: 'quantize.imatrix.entries_count', tag: 'int', value: BigInt(im.size) });
  if (typeof src?.chunkCount === 'number' && src.chunkCount > 0)
    out.push({ key: 'quantize.imatrix.chunks_count', tag: 'int', value: BigInt(src.chunkCount) });
  return out;
}
