// The format lists stats offers, all from the type table (js/types.js), so a new format needs no
// change here. (quantize takes llama's ftypes and ggml's type names: js/model/ftypes.js.)
import { typeInfo, typeId, CODEC_TYPES } from '../node.js';

/** @typedef {import('../types.js').TypeInfo & { id: number }} Format */

/** Every type the codec knows. @type {Format[]} */
const CODEC = CODEC_TYPES.map((id) => ({ id, ...typeInfo(id) }));
/** Bits per weight of a format. @param {Format} t */
export const bitsPerWeight = (t) => (t.typeSize * 8) / t.blockSize;
// Activation formats (q8_1, q8_K): another type's dots pair with them, and they have no dot of
// their own as weights. (q8_0 pairs with Q4_0/Q5_0 and is also a weight format.)
const ACTIVATION = new Set(
  CODEC.filter((t) => !t.dot && CODEC.some((u) => u.id !== t.id && u.vecDot === t.id)).map((t) => t.id),
);
// The weight formats: the block formats the codec quantizes, activation formats excepted; most
// bits per weight first.
const MODEL_FORMATS = CODEC.filter((t) => t.blockSize > 1 && t.quantize && !ACTIVATION.has(t.id)).sort(
  (a, b) => bitsPerWeight(b) - bitsPerWeight(a) || b.id - a.id,
);
// What stats can try: every format with block statistics; by default the weight formats among them.
export const STATS_FORMATS = CODEC.filter((t) => t.stats);
export const STATS_DEFAULT = MODEL_FORMATS.filter((t) => t.stats);
/** The float types stats takes as input. @type {Set<number>} */
export const FLOATS = new Set(CODEC.filter((t) => t.blockSize === 1 && t.dequantize).map((t) => t.id));
/** @param {Format[]} list */
export const names = (list) => list.map((t) => t.name).join(', ');
/**
 * A list of formats for the help, wrapped at 100 columns under a 17-column indent.
 * @param {Format[]} list
 */
export function wrapped(list) {
  const lines = [''];
  for (const [i, t] of list.entries()) {
    const item = t.name + (i < list.length - 1 ? ',' : '');
    if (lines[lines.length - 1] && 17 + lines[lines.length - 1].length + 1 + item.length > 100) lines.push('');
    lines[lines.length - 1] += (lines[lines.length - 1] ? ' ' : '') + item;
  }
  return lines.join(`\n${' '.repeat(17)}`);
}

/**
 * The format of the table a user named (any case), if it is in `list`.
 * @param {string} name @param {Format[]} list
 */
export function formatIn(name, list) {
  let id;
  try {
    id = typeId(name);
  } catch {
    return undefined;
  }
  return list.find((t) => t.id === id);
}
