// GGUF files for the byte-source tests: a small Q8_0 model (whole and split into shards of either
// byte order), built with writeGGUF or byte by byte.

import { writeGGUF, GGMLType, GGUFValueType as VT } from '../../js/index.js';
import { Bytes } from './gguf-bytes.js';

/**
 * Q8_0 blocks for `rows` rows of 64 values: d = 1 + row/64 (fp16), qs distinct per row.
 * @param {number} rows @param {number} seed
 */
export function q8Rows(rows, seed = 0) {
  const data = new Uint8Array(rows * 2 * 34);
  for (let b = 0; b < rows * 2; b++) {
    const o = b * 34;
    const d = 0x3c00 + (((b >> 1) + seed) & 63); // 1.0 .. 1.06, little-endian fp16
    data[o] = d & 0xff;
    data[o + 1] = d >> 8;
    for (let i = 0; i < 32; i++) data[o + 2 + i] = (b * 7 + i * 13 + seed) & 0xff;
  }
  return data;
}

/** A file with one Q8_0 tensor 'w' of 32 rows of 64 values (2176 bytes) and a 1-D 'bias'. */
export function sample() {
  const w = q8Rows(32);
  const bias = q8Rows(1, 5).subarray(0, 34);
  const bytes = writeGGUF({
    kv: [{ key: 'general.name', type: VT.STRING, value: 'sources' }],
    tensors: [
      { name: 'w', type: GGMLType.Q8_0, dims: [64, 32], data: w },
      { name: 'bias', type: GGMLType.Q8_0, dims: [32], data: bias },
    ],
  });
  return { bytes, w };
}

/**
 * Shard `no` of 2 of a split model holding one Q8_0 tensor of `rows` rows of 64 values, in either
 * byte order (big-endian: header fields and each block's d swapped).
 * @param {number} no @param {string} name @param {Uint8Array} data little-endian Q8_0 blocks
 * @param {boolean} le
 */
export function shard(no, name, data, le) {
  const rows = data.length / 68;
  const w = new Bytes({ le }).header(3, 1, 3);
  w.str('split.no').u32(VT.UINT16).u16(no);
  w.str('split.count').u32(VT.UINT16).u16(2);
  w.str('split.tensors.count').u32(VT.INT32).u32(2);
  w.tensor(name, [64, rows], GGMLType.Q8_0, 0);
  w.padTo(32);
  const d = data.slice();
  if (!le) for (let o = 0; o < d.length; o += 34) d.subarray(o, o + 2).reverse();
  for (const v of d) w.u8(v);
  return w.padTo(32).bytes();
}
