// The arguments of a quantize call, checked once for both codecs (js/codec.js, js/threads.js), and
// the kernel that serves it: what ggml_quantize_chunk(type, values, out, 0, rows, rowLength,
// imatrix) writes.

import { apart } from './overlap.js';
import { typeId, typeInfo, typeFlags, byteLength, CODEC_TYPES, QUANTIZE_PLAIN, QUANTIZE_ROWS } from './types.js';

/**
 * @typedef {object} QuantizeOptions
 * @property {Float32Array} [imatrix] importance weights, one per column (rowLength of them), as
 *   readImatrix gives them: finite and >= 0. Types whose ggml quantizer ignores weights (Q8_0,
 *   MXFP4, NVFP4, Q1_0, Q2_0, TQ1_0, TQ2_0, the float types) accept and ignore them.
 * @property {number} [rowLength] values per row (default imatrix.length, else values.length): a
 *   multiple of the type's block size that divides values.length. Rows matter with weights (the
 *   simple blocks weight by the row's mean square).
 * @property {Uint8Array} [out] receives the blocks; must be exactly the right length
 */

/**
 * @typedef {{ id: number, name: string, blockSize: number, typeSize: number, requiresImatrix: boolean }} QType
 * @typedef {{ t: QType, x: Float32Array, y: Uint8Array, cols: number, rows: number,
 *   rowBytes: number, imatrix: Float32Array | null, kernel: string, byRows: boolean }} QuantizeCall
 * kernel: bq_<t>_quantize_rows (byRows: called on whole rows with the weights, or 0 for none) or
 * bq_<t>_quantize (on any whole number of blocks; the type ignores weights or none were given).
 */

/**
 * Checks a quantize call's arguments and picks its kernel.
 * @param {number | string} type
 * @param {unknown} values
 * @param {unknown} options a QuantizeOptions, or (the older form) the out array itself
 * @returns {QuantizeCall}
 * @throws {TypeError} an unknown type, one blockquant cannot quantize to, wrong argument types, or a
 *   type that ggml quantizes only with importance weights called without them
 * @throws {RangeError} sizes that do not fit (naming the argument); an imatrix with a weight that
 *   is not finite or is negative
 */
export function quantizeCall(type, values, options) {
  const id = typeId(type);
  const info = typeInfo(id);
  if (!info.quantize) {
    const able = CODEC_TYPES.filter((t) => typeInfo(t).quantize).map((t) => typeInfo(t).name);
    throw new TypeError(
      `ggml type ${info.name} (${id}) is not supported by blockquant for quantize; supported: ${able.join(', ')}`,
    );
  }
  if (!(values instanceof Float32Array)) throw new TypeError('values must be a Float32Array');
  const o = /** @type {QuantizeOptions} */ (
    options instanceof Uint8Array ? { out: options } : options === undefined || options === null ? {} : options
  );
  if (typeof o !== 'object') throw new TypeError('options must be an object ({ imatrix, rowLength, out })');
  const { imatrix = null, out } = o;
  if (imatrix !== null && !(imatrix instanceof Float32Array))
    throw new TypeError('imatrix must be a Float32Array of importance weights, one per column');
  const cols = o.rowLength ?? (imatrix ? imatrix.length : values.length);
  if (!Number.isSafeInteger(cols) || cols < 0 || (cols === 0 && values.length > 0))
    throw new RangeError(`rowLength must be a positive integer, got ${String(o.rowLength)}`);
  if (cols % info.blockSize !== 0)
    throw new RangeError(`rowLength ${cols} is not a multiple of ${info.blockSize} (the ${info.name} block size)`);
  if (cols > 0 && values.length % cols !== 0)
    throw new RangeError(`values hold ${values.length} values, not a whole number of rows of rowLength ${cols}`);
  if (imatrix) {
    if (imatrix.length !== cols)
      throw new RangeError(`imatrix holds ${imatrix.length} weights; rows of ${cols} values need one per column`);
    for (let j = 0; j < imatrix.length; j++) {
      const w = imatrix[j];
      if (!(w >= 0 && w <= 3.4028234663852886e38))
        throw new RangeError(`imatrix[${j}] is ${w}: importance weights must be finite and >= 0`);
    }
  }
  const flags = typeFlags(id);
  const rowsKernel = (flags & QUANTIZE_ROWS) !== 0;
  if (info.requiresImatrix && !imatrix)
    throw new TypeError(
      `ggml quantizes ${info.name} only with an importance matrix: pass { imatrix } (one weight per column, ` +
        'as readImatrix reads them from llama-imatrix output)',
    );
  const byRows = rowsKernel && (imatrix !== null || (flags & QUANTIZE_PLAIN) === 0);
  const bytes = byteLength(id, values.length);
  const y = out === undefined ? new Uint8Array(bytes) : out;
  if (!(y instanceof Uint8Array)) throw new TypeError('out must be a Uint8Array');
  if (y.length !== bytes)
    throw new RangeError(`out holds ${y.length} bytes; ${values.length} ${info.name} values need ${bytes}`);
  return {
    t: {
      id,
      name: info.name,
      blockSize: info.blockSize,
      typeSize: info.typeSize,
      requiresImatrix: info.requiresImatrix,
    },
    // Values or weights that overlap out are read as they were at the call.
    x: apart(values, y),
    y,
    cols,
    rows: cols === 0 ? 0 : values.length / cols,
    rowBytes: byteLength(id, cols),
    imatrix: byRows && imatrix ? apart(imatrix, y) : null,
    kernel: byRows ? `bq_${info.name}_quantize_rows` : `bq_${info.name}_quantize`,
    byRows,
  };
}

/** The kernel status of an input ggml's quantizer aborts on (BQ_EDOMAIN, src/bq.h). */
export const EDOMAIN = -3;

/**
 * The error for rows ggml's quantizer cannot quantize: where ggml_quantize_chunk aborts (the IQ3
 * grid searches assert they found a point; a NaN, Inf or overflow in a row's search, or a NaN
 * scale), blockquant refuses instead of writing bytes llama.cpp would never write.
 * @param {string} name the type
 * @param {number} row the first row that fails
 */
export function domainError(name, row) {
  const e = new RangeError(
    `values: row ${row} cannot be quantized to ${name}: ggml's quantizer aborts on it (its search meets a NaN, ` +
      'an infinity or an overflow), so llama-quantize would stop here too',
  );
  return Object.assign(e, { row });
}
