// GGUF format constants shared by the reader and the writer: value types, their sizes and typed
// arrays, ggml's caps, and GGUFError.

/** GGUF metadata value types. */
export const GGUFValueType = /* @__PURE__ */ Object.freeze({
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
});

export const VT = GGUFValueType;
/** Bytes of each fixed-size value type. */
export const SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];
/** The typed array the reader returns for each numeric array item type (by value-type id). */
export const TYPED_ARRAYS = [
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  null,
  null,
  null,
  BigUint64Array,
  BigInt64Array,
  Float64Array,
];
/** The DataView accessor (get/set + this) of each numeric value type, from its typed array's name. */
export const ACCESSOR = TYPED_ARRAYS.map((C) => (C ? C.name.slice(0, -'Array'.length) : ''));
export const MAX_ITEMS = 2 ** 30; // ggml's cap on string bytes and array items
// The shortest string-length cap among JS engines (V8 on 32-bit hosts: 2^28 - 16 UTF-16 units; 2^29
// - 24 on 64-bit). A GGUF string decodes to at most one unit per byte, so this many bytes always fit.
export const MAX_STRING_BYTES = 2 ** 28 - 16;
// Nesting cap for arrays of arrays: ParseOptions.maxDepth must lie in 1..MAX_DEPTH (each level is a
// stack frame of the reader, so a crafted file cannot exhaust the stack whatever the caller passes).
export const MAX_DEPTH = 64;
export const DEFAULT_MAX_DEPTH = 4;
export const MAX_NAME = 64; // ggml refuses tensor names of 64 bytes or more
export const MAX_DIMS = 4;
export const DEFAULT_ALIGNMENT = 32;
export const I64_MAX = (1n << 63n) - 1n;

/** A refusal to read a GGUF file: `code` says what, `offset` where (bytes from the file start). */
export class GGUFError extends Error {
  /**
   * @param {string} code
   * @param {number} offset
   * @param {string} message
   */
  constructor(code, offset, message) {
    super(`${message} (at byte ${offset})`);
    this.name = 'GGUFError';
    this.code = code;
    this.offset = offset;
  }
}

/** @param {number} n @param {number} a */
export const pad = (n, a) => Math.ceil(n / a) * a;

/**
 * @typedef {object} ParseOptions
 * @property {boolean} [allowV1] accept GGUF version 1 (u32 counts and lengths)
 * @property {boolean} [strictUtf8] refuse invalid UTF-8 instead of replacing it with U+FFFD
 * @property {number} [maxDepth] deepest nesting of arrays accepted: an integer in 1..64 (default 4)
 * @property {number} [maxHeaderBytes] openGGUF: largest header read (default 256 MiB)
 *
 * @typedef {{ key: string, type: number, value: unknown, itemType?: number }} KV
 *
 * One tensor of a file. byteLength is null when the type id is one blockquant does not know (its
 * size cannot be told from the header); such a tensor, and a Q2_0 tensor stored in the pre-release
 * layout (`layout: 'q2_0-prerelease'`, byteLength its real size: 34 bytes per 128 weights), carry
 * `unreadable`: the GGUFError (code, offset of its type field in its file, message) that reading or
 * decoding it throws. Every other tensor of the file reads normally.
 * @typedef {{ name: string, type: number, dims: number[], offset: number, nElements: number,
 *   byteLength: number | null, layout?: 'q2_0-prerelease', unreadable?: Unreadable, shard?: number }} TensorInfo
 * @typedef {{ code: 'UNKNOWN_GGML_TYPE' | 'PRERELEASE_Q2_0', offset: number, message: string }} Unreadable
 */

/**
 * Throws the GGUFError a tensor that cannot be read carries (an unknown type id, the pre-release
 * Q2_0 layout); returns its byte length otherwise.
 * @param {{ byteLength: number | null, unreadable?: Unreadable, name: string, type: number }} t
 * @returns {number}
 * @throws {GGUFError}
 */
export function readableLength(t) {
  const u = t.unreadable;
  if (u) throw new GGUFError(u.code, u.offset, u.message);
  // Only hand-made tensor lists get here with a null length and no reason.
  if (t.byteLength === null)
    throw new GGUFError('UNKNOWN_GGML_TYPE', 0, `${t.name}: ggml type ${t.type} has no known size`);
  return t.byteLength;
}
