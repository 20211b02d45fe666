// The arguments of the dequantize and matvec calls, checked once for both codecs (js/codec.js and
// js/threads.js run the same checks, so they throw the same errors with the same messages, before
// any work); quantize's are in js/quantize-call.js. Nothing here touches wasm memory.

import { apart } from './overlap.js';
import { GGMLType, CODEC_TYPES, typeId, typeInfo, byteLength } from './types.js';

/** @typedef {import('./types.js').TypeInfo & { id: number }} CodecType */

/**
 * A type that has the operation op (a TypeInfo flag), or a TypeError naming the types that do.
 * @param {number | string} type
 * @param {'quantize' | 'dequantize' | 'dotF32' | 'matvec' | 'stats'} op
 * @param {string} [verb] how the message names the operation (default op)
 * @returns {CodecType}
 * @throws {TypeError} an unknown type, or one without op
 */
export function codecType(type, op, verb = op) {
  const id = typeId(type);
  const info = typeInfo(id);
  if (!info[op]) {
    const able = CODEC_TYPES.filter((t) => typeInfo(t)[op]).map((t) => typeInfo(t).name);
    throw new TypeError(
      `ggml type ${info.name} (${id}) is not supported by blockquant for ${verb}; supported: ${able.join(', ')}`,
    );
  }
  return { id, ...info };
}

/**
 * Bytes of any ArrayBuffer or view, as a Uint8Array over the same memory.
 * @param {unknown} v
 * @param {string} what the argument's name, for the message
 * @returns {Uint8Array}
 */
export function asBytes(v, what) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`${what} must be a Uint8Array (or another ArrayBuffer view)`);
}

/**
 * @param {unknown} v
 * @param {string} what the argument's name, for the message
 * @returns {Float32Array}
 */
export function asFloats(v, what) {
  if (v instanceof Float32Array) return v;
  throw new TypeError(`${what} must be a Float32Array`);
}

/**
 * Values in len bytes of whole blocks of t.
 * @param {{ name: string, blockSize: number, typeSize: number }} t
 * @param {number} len
 * @param {string} what the argument's name, for the message
 * @returns {number}
 * @throws {RangeError} when len is not a whole number of blocks
 */
export function wholeBlocks(t, len, what) {
  if (len % t.typeSize !== 0) {
    throw new RangeError(`${what}: ${len} bytes is not a whole number of ${t.name} blocks (${t.typeSize} bytes each)`);
  }
  return (len / t.typeSize) * t.blockSize;
}

/**
 * out, checked to hold n values, or a new array of n.
 * @param {unknown} out
 * @param {number} n
 * @param {() => string} says what n is, for the message ("the product has 4")
 * @returns {Float32Array}
 */
function outOf(out, n, says) {
  const y = out === undefined ? new Float32Array(n) : asFloats(out, 'out');
  if (y.length !== n) throw new RangeError(`out holds ${y.length} values; ${says()}`);
  return y;
}

/**
 * dequantize(type, bytes, out): the type, the bytes (copied when they overlap out) and out.
 * @param {unknown} type
 * @param {unknown} bytes
 * @param {unknown} out
 * @returns {{ t: CodecType, q: Uint8Array, y: Float32Array }}
 */
export function dequantizeCall(type, bytes, out) {
  const t = codecType(/** @type {number | string} */ (type), 'dequantize');
  const q = asBytes(bytes, 'bytes');
  const n = wholeBlocks(t, q.length, 'bytes');
  const y = outOf(out, n, () => `${q.length} bytes of ${t.name} decode to ${n}`);
  return { t, q: apart(q, y), y };
}

/**
 * dequantize(W, { out }) of a resident tensor (whose handle the codec checks): its type and out.
 * @param {{ type: number, rows: number, cols: number }} W
 * @param {unknown} options
 * @returns {{ t: CodecType, y: Float32Array }}
 */
export function dequantizeResidentCall(W, options) {
  const { out } = /** @type {{ out?: unknown }} */ (options ?? {});
  const t = codecType(W.type, 'dequantize');
  const n = W.rows * W.cols;
  return { t, y: outOf(out, n, () => `the ${t.name} tensor decodes to ${n}`) };
}

/**
 * The activation type a matvec on weights of t multiplies with: ggml's vec_dot type, or F32 for
 * { exact: true } and the types without an integer dot.
 * @param {CodecType} t
 * @param {boolean} exact
 */
export const activationOf = (t, exact) => (exact || !t.dot || t.vecDot === GGMLType.F32 ? GGMLType.F32 : t.vecDot);

/**
 * The kernels a matvec on weights of t calls, by name: the pair's matvec, and the quantizer of its
 * activation type (which f32 activations do not need). The one plan both codecs run.
 * @param {CodecType} t
 * @param {boolean} exact
 * @returns {{ tv: number, name: string, qname: string }}
 */
export function matvecKernels(t, exact) {
  const tv = activationOf(t, exact);
  const vname = typeInfo(tv).name;
  return { tv, name: `bq_${t.name}_matvec_${vname}`, qname: `bq_${vname}_quantize` };
}

/**
 * matvec(type, weights, rows, x, options) on bytes: the checked arguments, the inputs copied
 * where they overlap out.
 * @param {unknown} type
 * @param {unknown} weights
 * @param {unknown} rows
 * @param {unknown} x
 * @param {unknown} options
 * @returns {{ t: CodecType, w: Uint8Array, v: Float32Array, y: Float32Array, rows: number,
 *   cols: number, rowBytes: number, exact: boolean }}
 */
export function matvecCall(type, weights, rows, x, options) {
  const t = codecType(/** @type {number | string} */ (type), 'matvec');
  const w = asBytes(weights, 'weights');
  const v = asFloats(x, 'x');
  if (typeof rows !== 'number' || !Number.isSafeInteger(rows) || rows < 0)
    throw new RangeError(`rows must be a non-negative integer, got ${String(rows)}`);
  const cols = v.length;
  const rowBytes = byteLength(t.id, cols);
  if (w.length !== rows * rowBytes) {
    throw new RangeError(
      `weights hold ${w.length} bytes; ${rows} rows of ${cols} ${t.name} values need ${rows * rowBytes}`,
    );
  }
  const o = /** @type {{ out?: unknown, exact?: unknown }} */ (options ?? {});
  const y = outOf(o.out, rows, () => `the product has ${rows}`);
  return { t, w: apart(w, y), v: apart(v, y), y, rows, cols, rowBytes, exact: o.exact === true };
}

/**
 * The products of matvec(W, x) and matvecs([W...], x) on resident tensors, checked in order: x,
 * out (one array per tensor), then each tensor (its handle through address, its type, its
 * columns, its out).
 * @template T
 * @param {unknown[]} list
 * @param {unknown} x
 * @param {unknown} exactOption
 * @param {unknown} outs
 * @param {(W: unknown) => T} address checks a handle; its result is kept as `at`
 * @returns {{ v: Float32Array, cols: number, exact: boolean,
 *   jobs: { W: { type: number, rows: number, cols: number }, at: T, t: CodecType, tv: number,
 *     rows: number, y: Float32Array }[] }}
 */
export function productsCall(list, x, exactOption, outs, address) {
  const v = asFloats(x, 'x');
  const cols = v.length;
  if (outs !== undefined && (!Array.isArray(outs) || outs.length !== list.length))
    throw new TypeError(`out must be an array of ${list.length} Float32Arrays, one per tensor`);
  const exact = exactOption === true;
  const jobs = list.map((item, i) => {
    const at = address(item);
    const W = /** @type {{ type: number, rows: number, cols: number }} */ (item);
    const t = codecType(W.type, 'matvec');
    if (W.cols !== cols)
      throw new RangeError(`x holds ${cols} values; tensor ${i} (${W.rows}x${W.cols} ${t.name}) has ${W.cols} columns`);
    const out = outs === undefined ? undefined : asFloats(/** @type {unknown[]} */ (outs)[i], 'out');
    const y = outOf(out, W.rows, () => `the product has ${W.rows}`);
    return { W, at, t, tv: activationOf(t, exact), rows: W.rows, y };
  });
  return { v, cols, exact, jobs };
}
