// ggml_validate_row_data, which llama_model_quantize runs on every input tensor as it reads it
// and on every tensor it quantized: float values (F32, F16, BF16, F64) must be finite; a quantized
// block's f16 scales (d, and m or dmin where the block has one; Q8_K's f32 d; IQ1_M's scale
// assembled from its scales words) must be finite; an MXFP4 exponent must not be 0xff. NVFP4 and
// the integer types have nothing to check. The field offsets come from js/types.js's block layouts.

import { blockFields, typeInfo, GGMLType as T } from '../types.js';

/** @typedef {{ block: number, what: string }} Invalid the first bad block (element for float types) */

/**
 * @typedef {{ kind: 'f16' | 'bf16' | 'f32' | 'f64' | 'e8m0' | 'iq1m', offset: number }} Check
 * The checks of one block of a type.
 * @type {Map<number, Check[]>}
 */
const CHECKS = new Map();

/** @param {number} type @returns {Check[]} */
function checksOf(type) {
  let c = CHECKS.get(type);
  if (c) return c;
  const f = blockFields(type) ?? [];
  if (type === T.F32) c = [{ kind: 'f32', offset: 0 }];
  else if (type === T.F16) c = [{ kind: 'f16', offset: 0 }];
  else if (type === T.BF16) c = [{ kind: 'bf16', offset: 0 }];
  else if (type === T.F64) c = [{ kind: 'f64', offset: 0 }];
  else if (type === T.IQ1_M)
    c = [{ kind: 'iq1m', offset: /** @type {any} */ (f.find((x) => x.name === 'scales')).offset }];
  else if (type === T.MXFP4) c = [{ kind: 'e8m0', offset: /** @type {any} */ (f.find((x) => x.name === 'e')).offset }];
  else if (type === T.Q8_K) c = [{ kind: 'f32', offset: /** @type {any} */ (f.find((x) => x.name === 'd')).offset }];
  else if (type === T.NVFP4 || typeInfo(type).blockSize === 1) c = [];
  else
    c = f
      .filter((x) => x.kind === 'f16' && (x.name === 'd' || x.name === 'm' || x.name === 'dmin'))
      .map((x) => ({ kind: /** @type {const} */ ('f16'), offset: x.offset }));
  CHECKS.set(type, c);
  return c;
}

/**
 * The first block (or element, for the float types) of `bytes` that ggml_validate_row_data
 * refuses, or null.
 * @param {number} type ggml type id
 * @param {Uint8Array} bytes little-endian blocks of the type
 * @returns {Invalid | null}
 */
export function invalidBlock(type, bytes) {
  const checks = checksOf(type);
  if (checks.length === 0) return null;
  const size = typeInfo(type).typeSize;
  const n = Math.floor(bytes.length / size);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === T.F32) {
    const u = readU32(bytes);
    for (let i = 0; i < u.length; i++)
      if ((u[i] & 0x7f800000) === 0x7f800000) return { block: i, what: u[i] & 0x7fffff ? 'nan' : 'inf' };
    return null;
  }
  if (type === T.F16 || type === T.BF16) {
    // Two values per step: an all-ones exponent plus its lowest bit carries into the sign bit of
    // its half (0x7c00 + 0x0400 = 0x8000; no smaller exponent reaches it, nor crosses halves).
    const [mask, one] = type === T.F16 ? [0x7c007c00, 0x04000400] : [0x7f807f80, 0x00800080];
    const pairs = bytes.length >> 2;
    const u = readU32(bytes.subarray(0, pairs * 4));
    let i = 0;
    while (i < pairs && (((u[i] & mask) + one) & 0x80008000) === 0) i++;
    const h = readU16(bytes);
    for (let k = 2 * i; k < h.length; k++) {
      const bad = type === T.F16 ? half(h[k]) : bf16(h[k]);
      if (bad) return { block: k, what: bad };
    }
    return null;
  }
  for (let i = 0; i < n; i++) {
    const at = i * size;
    for (const c of checks) {
      const bad = check(dv, at + c.offset, c.kind);
      if (bad) return { block: i, what: bad };
    }
  }
  return null;
}

/** @param {Uint8Array} b */
function readU16(b) {
  return b.byteOffset % 2 === 0
    ? new Uint16Array(b.buffer, b.byteOffset, b.length >> 1)
    : new Uint16Array(b.slice().buffer);
}

/** @param {Uint8Array} b */
function readU32(b) {
  return b.byteOffset % 4 === 0
    ? new Uint32Array(b.buffer, b.byteOffset, b.length >> 2)
    : new Uint32Array(b.slice().buffer);
}

/**
 * @param {DataView} dv @param {number} at @param {Check['kind']} kind
 * @returns {string | null} 'nan', 'inf' or 'e' when the field is refused
 */
function check(dv, at, kind) {
  if (kind === 'f16') return half(dv.getUint16(at, true));
  if (kind === 'bf16') return bf16(dv.getUint16(at, true));
  if (kind === 'f32' || kind === 'f64') {
    const v = kind === 'f32' ? dv.getFloat32(at, true) : dv.getFloat64(at, true);
    return Number.isNaN(v) ? 'nan' : Number.isFinite(v) ? null : 'inf';
  }
  if (kind === 'e8m0') return dv.getUint8(at) === 0xff ? 'e' : null;
  // IQ1_M: the f16 scale is the top nibbles of the four scales words.
  const s = [0, 1, 2, 3].map((k) => dv.getUint16(at + 2 * k, true));
  return half((s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000));
}

/** @param {number} h bf16 bits */
function bf16(h) {
  const a = h & 0x7fff;
  return a > 0x7f80 ? 'nan' : a === 0x7f80 ? 'inf' : null;
}

/** @param {number} h f16 bits */
function half(h) {
  if ((h & 0x7c00) !== 0x7c00) return null;
  return h & 0x3ff ? 'nan' : 'inf';
}
