// Byte order: tensor data of a big-endian GGUF file brought to little-endian, field by field.

import { blockFields, typeInfo } from './types.js';

/**
 * A copy of tensor data from a big-endian file in little-endian order: every multi-byte scalar of
 * each block (d, m, s, the qh words, and every F16/BF16/F32 value) byte-swapped, as the block
 * layouts of js/types.js say; bytes of codes stay as they are.
 * @param {number} type ggml type id (one whose block layout is known)
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 * @throws {TypeError} for a type without a known layout
 */
export function toLittleEndian(type, bytes) {
  const fields = blockFields(type);
  if (!fields) throw new TypeError(`cannot byte-swap ggml type ${typeInfo(type).name}`);
  const { typeSize } = typeInfo(type);
  const swaps = fields.filter((f) => f.unit > 1);
  const out = bytes.slice();
  for (let o = 0; o + typeSize <= out.length; o += typeSize) {
    for (const { offset, size, unit } of swaps) {
      for (let s = o + offset; s < o + offset + size; s += unit) {
        for (let j = 0; j < unit >> 1; j++) {
          const t = out[s + j];
          out[s + j] = out[s + unit - 1 - j];
          out[s + unit - 1 - j] = t;
        }
      }
    }
  }
  return out;
}
