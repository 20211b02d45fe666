// Byte order: tensor data of a big-endian GGUF file brought to little-endian, field by field.

import { typeInfo } from './types.js';

/** Multi-byte fields of each codec type's block: [offset, size] pairs (half d/m/s, u32 qh). */
const FIELDS = new Map([
  [0, [[0, 4]]],
  [1, [[0, 2]]],
  [30, [[0, 2]]],
  [2, [[0, 2]]],
  [
    3,
    [
      [0, 2],
      [2, 2],
    ],
  ],
  [
    6,
    [
      [0, 2],
      [2, 4],
    ],
  ],
  [
    7,
    [
      [0, 2],
      [2, 2],
      [4, 4],
    ],
  ],
  [8, [[0, 2]]],
  [
    9,
    [
      [0, 2],
      [2, 2],
    ],
  ],
]);

/**
 * A copy of tensor data from a big-endian file in little-endian order: every d, m, s and qh field
 * of each block (and every F16/BF16/F32 value) byte-swapped; 8-bit codes stay as they are.
 * @param {number} type ggml type id (a blockquant codec type)
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
export function toLittleEndian(type, bytes) {
  const fields = FIELDS.get(type);
  if (!fields) throw new TypeError(`cannot byte-swap ggml type ${typeInfo(type).name}`);
  const { typeSize } = typeInfo(type);
  const out = bytes.slice();
  for (let o = 0; o + typeSize <= out.length; o += typeSize) {
    for (const [f, n] of fields) {
      for (let j = 0; j < n >> 1; j++) {
        const t = out[o + f + j];
        out[o + f + j] = out[o + f + n - 1 - j];
        out[o + f + n - 1 - j] = t;
      }
    }
  }
  return out;
}
