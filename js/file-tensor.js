// Reading one tensor's bytes from a GGUF file (parseGGUF's or openGGUF's) for the codecs' file
// calls: the tensor a call names, its reader's answer checked, and the typed array each integer
// type decodes to.

import { GGMLType } from './types.js';
import { GGUFError } from './gguf.js';
import { CHECKED_READERS } from './gguf-open.js';

/**
 * The TensorInfo a file call names: a name, or a TensorInfo (its name is looked up in the file).
 * @param {unknown} file @param {unknown} name
 * @returns {GGUFLike['tensors'][number]}
 */
export function fileTensor(file, name) {
  if (typeof file !== 'object' || file === null || !Array.isArray(/** @type {any} */ (file).tensors))
    throw new TypeError('file must be a GGUF file from parseGGUF or openGGUF');
  const key =
    typeof name === 'string'
      ? name
      : name && typeof name === 'object' && typeof (/** @type {any} */ (name).name) === 'string'
        ? /** @type {any} */ (name).name
        : null;
  if (key === null) throw new TypeError("name must be a tensor name or one of the file's TensorInfo objects");
  const info = /** @type {GGUFLike} */ (file).tensors.find((x) => x.name === key);
  if (!info) throw new RangeError(`no tensor named ${JSON.stringify(key)}`);
  return info;
}

/**
 * Rows [first, first + count) of a file's tensor (range r), from its readRows, else from
 * tensorBytes, checked by readChecked.
 * @param {GGUFLike} file @param {GGUFLike['tensors'][number]} t
 * @param {number} first @param {number} count @param {{ start: number, length: number }} r
 */
export function readFileRows(file, t, first, count, r) {
  const reader = file.readRows;
  return readChecked(t, r.length, reader, () =>
    reader
      ? reader.call(file, t.name, first, count)
      : /** @type {Function} */ (file.tensorBytes)(t.name).subarray(r.start, r.start + r.length),
  );
}

/**
 * Runs a file's reader and checks what it gives: exactly `want` bytes in an ArrayBufferView
 * (GGUFError BAD_READ when it is not one, SHORT_READ / LONG_READ for another length). A reader of
 * openGGUF's throws GGUFErrors or its signal's reason, passed on; another reader's error becomes
 * GGUFError READ naming the tensor, with the error as its cause.
 * @param {GGUFLike['tensors'][number]} t @param {number} want
 * @param {Function | undefined} reader @param {() => unknown} read
 * @returns {Promise<Uint8Array>}
 */
export async function readChecked(t, want, reader, read) {
  let b;
  try {
    b = await read();
  } catch (e) {
    if (e instanceof GGUFError || (reader && CHECKED_READERS.has(reader))) throw e;
    const err = new GGUFError(
      'READ',
      0,
      `${t.name}: the file's reader failed: ${/** @type {any} */ (e)?.message ?? e}`,
    );
    /** @type {any} */ (err).cause = e;
    throw err;
  }
  if (!ArrayBuffer.isView(b))
    throw new GGUFError(
      'BAD_READ',
      0,
      `${t.name}: the file's reader returned ${b === null ? 'null' : Array.isArray(b) ? 'an array' : typeof b}, not a Uint8Array`,
    );
  if (b.byteLength !== want)
    throw new GGUFError(
      b.byteLength > want ? 'LONG_READ' : 'SHORT_READ',
      0,
      `${t.name}: the file's reader returned ${b.byteLength} bytes, not ${want}`,
    );
  return b instanceof Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The typed array each integer (and the F64) type decodes to, element for element, over a buffer
 * of whole elements.
 * @type {Map<number, (b: ArrayBuffer) => TensorValues>}
 */
export const INTEGER_ARRAYS = new Map(
  /** @type {[number, (b: ArrayBuffer) => TensorValues][]} */ ([
    [GGMLType.I8, (b) => new Int8Array(b)],
    [GGMLType.I16, (b) => new Int16Array(b)],
    [GGMLType.I32, (b) => new Int32Array(b)],
    [GGMLType.I64, (b) => new BigInt64Array(b)],
    [GGMLType.F64, (b) => new Float64Array(b)],
  ]),
);

/**
 * What a tensor of a file decodes to: f32 values, or for I8, I16, I32, I64 and F64 tensors their
 * own values in Int8Array, Int16Array, Int32Array, BigInt64Array or Float64Array.
 * @typedef {Float32Array<ArrayBuffer> | Int8Array<ArrayBuffer> | Int16Array<ArrayBuffer> | Int32Array<ArrayBuffer> |
 *   BigInt64Array<ArrayBuffer> | Float64Array<ArrayBuffer>} TensorValues
 */

/**
 * @typedef {{ tensors: (import('./gguf.js').TensorInfo & { littleEndian?: boolean })[], littleEndian: boolean,
 *   readTensor?: (name: string) => Promise<Uint8Array>, readRows?: (name: string, first: number, count: number) => Promise<Uint8Array>,
 *   tensorBytes?: (name: string) => Uint8Array }} GGUFLike
 */
