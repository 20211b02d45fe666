// The GGUF writer: version 3, little-endian, gguf-py's layout (data aligned, every tensor padded).
//
// The writer refuses exactly what parseGGUF (gguf-read.js, default options) refuses, plus any value
// that would not read back equal: every field is checked while the header is encoded into a
// private buffer, the finished header is parsed by the reader itself (parseHeader, default
// options), and nothing is returned (and no data-sized buffer allocated) unless all pass.
// TypeError: the wrong kind of value (a string for an INT32, a missing itemType, data that is not
// bytes). RangeError: a value out of range (UINT8 300, a float32 that rounds, a negative or
// fractional dim, a wrong data length, a duplicate, a bad alignment, a cap exceeded).
// Messages start with `kv "key"` (and the array index), `tensor "name"`, `alignment` or `spec`.

import { typeInfo } from './types.js';
import { parseHeader } from './gguf-read.js';
import {
  VT,
  SIZE,
  TYPED_ARRAYS,
  ACCESSOR,
  MAX_ITEMS,
  MAX_NAME,
  MAX_DIMS,
  DEFAULT_ALIGNMENT,
  I64_MAX,
  pad,
} from './gguf-format.js';

/**
 * A metadata entry to write. `itemType` (ARRAY values) is the item type as parseGGUF returns it, or
 * a list of item types by nesting level, outermost first (`[VT.ARRAY, VT.BOOL]`: arrays of BOOL
 * arrays); levels it does not give are inferred from the values (see itemTypeOf).
 * @typedef {{ key: string, type: number, value: unknown, itemType?: number | number[] }} KVIn
 * @typedef {{ name: string, type: number, dims: number[], data: ArrayBufferView, byteLength?: number }} TensorIn
 * @typedef {{ name: string, type: number, dims: number[], data?: ArrayBufferView, byteLength?: number }} TensorHeaderIn
 */

/** parseGGUF's default maxDepth: arrays nest at most 4 levels (a top-level array is level 1). */
const MAX_DEPTH = 4;
/** Integer value types: [min, max] (64-bit ones as bigint). */
const INT_RANGE = /** @type {Record<number, [number, number] | [bigint, bigint]>} */ ({
  [VT.UINT8]: [0, 0xff],
  [VT.INT8]: [-0x80, 0x7f],
  [VT.UINT16]: [0, 0xffff],
  [VT.INT16]: [-0x8000, 0x7fff],
  [VT.UINT32]: [0, 0xffffffff],
  [VT.INT32]: [-0x80000000, 0x7fffffff],
  [VT.UINT64]: [0n, (1n << 64n) - 1n],
  [VT.INT64]: [-(1n << 63n), I64_MAX],
});
/** Typed arrays can be copied byte for byte only on a little-endian host. */
const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const utf8Encoder = new TextEncoder();

/**
 * The header of a GGUF v3 file (little-endian, gguf-py's layout) for tensors of the given byte
 * lengths, padded to the alignment: the data section starts right after it, and tensor i's data
 * at offsets[i] within it, each padded to the alignment (dataBytes in all). For writing large files
 * in pieces. Each tensor gives its `data` (any ArrayBufferView, taken as bytes) or its
 * `byteLength`; both must then agree. The alignment is `general.alignment` (a UINT32 entry in kv),
 * or `spec.alignment` (added to kv as `general.alignment` when not 32), or 32.
 * @param {{ kv?: KVIn[], tensors?: TensorHeaderIn[], alignment?: number }} spec
 * @returns {{ header: Uint8Array<ArrayBuffer>, offsets: number[], alignment: number, dataBytes: number }} a new
 *   header the caller owns
 * @throws {TypeError | RangeError} for anything parseGGUF would refuse or read back differently
 *   (see the top of gguf-write.js), before anything is written
 */
export function writeGGUFHeader(spec) {
  const { header, offsets, alignment, dataBytes } = encodeHeader(spec, false);
  return { header, offsets, alignment, dataBytes };
}

/**
 * Writes a whole GGUF v3 file (little-endian) with gguf-py's layout: header, metadata, tensor
 * infos, zero padding to the alignment, then each tensor's data (any ArrayBufferView, taken as
 * bytes, exactly as long as its type and dims need) padded to the alignment. parseGGUF reads the
 * result back to the same values (UINT64/INT64 numbers as bigint, plain arrays as typed arrays).
 * @param {{ kv?: KVIn[], tensors?: TensorIn[], alignment?: number }} spec
 * @returns {Uint8Array<ArrayBuffer>} a new buffer the caller owns
 * @throws {TypeError | RangeError} as writeGGUFHeader; data is required
 */
export function writeGGUF(spec) {
  const { header, offsets, dataBytes, data } = encodeHeader(spec, true);
  const out = new Uint8Array(header.length + dataBytes);
  out.set(header);
  data.forEach((d, i) => out.set(d, header.length + offsets[i]));
  return out;
}

/**
 * Validates the spec and encodes the header; with needData, every tensor must carry its data.
 * @param {unknown} spec
 * @param {boolean} needData
 */
function encodeHeader(spec, needData) {
  if (typeof spec !== 'object' || spec === null) throw new TypeError(`spec must be an object, got ${kind(spec)}`);
  const s = /** @type {{ kv?: unknown, tensors?: unknown, alignment?: unknown }} */ (spec);
  const kv = s.kv ?? [];
  const tensors = s.tensors ?? [];
  if (!Array.isArray(kv)) throw new TypeError(`spec.kv must be an array, got ${kind(kv)}`);
  if (!Array.isArray(tensors)) throw new TypeError(`spec.tensors must be an array, got ${kind(tensors)}`);
  if (s.alignment !== undefined) checkAlignment(s.alignment, 'alignment');
  const al = kv.find((e) => typeof e === 'object' && e !== null && e.key === 'general.alignment');
  const addAlignment = !al && s.alignment !== undefined && s.alignment !== DEFAULT_ALIGNMENT;
  const nKV = kv.length + (addAlignment ? 1 : 0);
  if (nKV > MAX_ITEMS) throw new RangeError(`spec.kv has ${nKV} entries; the reader allows at most ${MAX_ITEMS}`);
  if (tensors.length > MAX_ITEMS)
    throw new RangeError(`spec.tensors has ${tensors.length} entries; the reader allows at most ${MAX_ITEMS}`);

  const w = new Writer();
  w.bytes(new Uint8Array([0x47, 0x47, 0x55, 0x46])); // "GGUF"
  w.u32(3);
  w.u64(tensors.length);
  w.u64(nKV);
  const keys = new Set();
  for (let i = 0; i < kv.length; i++) {
    const e = kv[i];
    if (typeof e !== 'object' || e === null) throw new TypeError(`kv #${i} must be an object, got ${kind(e)}`);
    if (typeof e.key !== 'string') throw new TypeError(`kv #${i}: key must be a string, got ${kind(e.key)}`);
    if (e.key === '') throw new RangeError(`kv #${i}: key is empty`);
    const where = `kv ${JSON.stringify(e.key)}`;
    if (keys.has(e.key)) throw new RangeError(`${where}: duplicate key (kv #${i})`);
    keys.add(e.key);
    w.string(e.key, `kv #${i}: key`);
    if (!isValueType(e.type)) throw new TypeError(`${where}: unknown GGUF value type ${show(e.type)}`);
    w.u32(e.type);
    /** @type {unknown[]} */
    const path = e.type !== VT.ARRAY || e.itemType === undefined ? [] : [e.itemType].flat();
    if (e.type === VT.ARRAY) {
      if (path.length === 0) throw new TypeError(`${where}: an ARRAY value needs an itemType`);
      path.forEach((t, k) => {
        if (!isValueType(t)) throw new TypeError(`${where}: itemType[${k}] ${show(t)} is not a GGUF value type`);
        if (k < path.length - 1 && t !== VT.ARRAY)
          throw new TypeError(`${where}: itemType ${show(path)} nests inside a ${show(t)}`);
      });
    } else if (e.itemType !== undefined) {
      throw new TypeError(`${where}: itemType is only for ARRAY values (type is ${e.type})`);
    }
    w.value(e.type, e.value, /** @type {number[]} */ (path), where, 0);
  }
  let alignment = typeof s.alignment === 'number' ? s.alignment : DEFAULT_ALIGNMENT;
  if (al) {
    if (al.type !== VT.UINT32)
      throw new RangeError(`kv "general.alignment": must be of type UINT32 (${VT.UINT32}), got type ${al.type}`);
    checkAlignment(al.value, 'kv "general.alignment"');
    if (s.alignment !== undefined && al.value !== s.alignment)
      throw new RangeError(`alignment ${s.alignment} disagrees with kv "general.alignment" ${al.value}`);
    alignment = al.value;
  } else if (addAlignment) {
    w.string('general.alignment', 'alignment');
    w.u32(VT.UINT32);
    w.u32(alignment);
  }

  const names = new Set();
  /** @type {number[]} */
  const offsets = [];
  /** @type {Uint8Array[]} */
  const data = [];
  let offset = 0;
  for (let i = 0; i < tensors.length; i++) {
    const t = tensors[i];
    if (typeof t !== 'object' || t === null) throw new TypeError(`tensor #${i} must be an object, got ${kind(t)}`);
    if (typeof t.name !== 'string') throw new TypeError(`tensor #${i}: name must be a string, got ${kind(t.name)}`);
    const where = `tensor ${JSON.stringify(t.name)}`;
    if (names.has(t.name)) throw new RangeError(`${where}: duplicate tensor name (tensor #${i})`);
    names.add(t.name);
    const nameBytes = w.string(t.name, `tensor #${i}: name`);
    if (nameBytes >= MAX_NAME)
      throw new RangeError(`${where}: name is ${nameBytes} bytes; ggml allows at most ${MAX_NAME - 1}`);
    const bytes = tensorBytes(t, where);
    const view = tensorData(t, bytes, needData, where);
    if (view) data.push(view);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offsets.push(offset);
    offset = pad(offset + bytes, alignment);
    if (offset > Number.MAX_SAFE_INTEGER) throw new RangeError(`${where}: the data section would exceed 2^53 bytes`);
  }
  w.zeros(pad(w.length, alignment) - w.length);
  const header = w.finish();
  // Backstop: the reader's own checks on the finished header, so that a cap the checks above do
  // not spell out (the reader's budget of decoded items and bytes) cannot make a file it refuses.
  try {
    parseHeader(header, header.length + offset, {});
  } catch (e) {
    throw new RangeError(`spec: parseGGUF would refuse this file: ${/** @type {Error} */ (e).message}`, { cause: e });
  }
  return { header, offsets, alignment, dataBytes: offset, data };
}

/**
 * The byte length a tensor's type and dims need, refusing what the reader refuses: more than 4
 * dims, a dim that is not a non-negative safe integer, ne0 (1 when there are no dims, as in ggml)
 * not a whole number of blocks, a running element count above int64.
 * @param {{ type?: unknown, dims?: unknown }} t
 * @param {string} where
 */
function tensorBytes(t, where) {
  let info;
  try {
    info = typeInfo(/** @type {number} */ (t.type));
  } catch {
    throw new TypeError(`${where}: unknown ggml type ${show(t.type)}`);
  }
  if (typeof t.type !== 'number') throw new TypeError(`${where}: type must be a ggml type id, got ${show(t.type)}`);
  const dims = t.dims;
  if (!Array.isArray(dims)) throw new TypeError(`${where}: dims must be an array of numbers, got ${kind(dims)}`);
  if (dims.length > MAX_DIMS) throw new RangeError(`${where}: ${dims.length} dims (at most ${MAX_DIMS})`);
  let total = 1n;
  for (let d = 0; d < dims.length; d++) {
    const ne = dims[d];
    if (typeof ne !== 'number') throw new TypeError(`${where}: dims[${d}] must be a number, got ${kind(ne)}`);
    if (!Number.isSafeInteger(ne) || ne < 0)
      throw new RangeError(`${where}: dims[${d}] = ${ne} is not a non-negative safe integer`);
    total *= BigInt(ne);
    if (total > I64_MAX) throw new RangeError(`${where}: element count of dims ${show(dims)} overflows int64`);
  }
  const ne0 = dims.length ? dims[0] : 1;
  if (ne0 % info.blockSize)
    throw new RangeError(`${where}: ne0 = ${ne0} is not a multiple of the ${info.name} block size ${info.blockSize}`);
  const bytes = (total / BigInt(info.blockSize)) * BigInt(info.typeSize);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${where}: dims ${show(dims)} of ${info.name} need ${bytes} bytes (more than 2^53)`);
  return Number(bytes);
}

/**
 * The tensor's data as bytes (or null when only byteLength is given), exactly `bytes` long.
 * @param {{ data?: unknown, byteLength?: unknown }} t
 * @param {number} bytes
 * @param {boolean} needData
 * @param {string} where
 */
function tensorData(t, bytes, needData, where) {
  const { data, byteLength } = t;
  if (byteLength !== undefined) {
    if (typeof byteLength !== 'number')
      throw new TypeError(`${where}: byteLength must be a number, got ${kind(byteLength)}`);
    if (byteLength !== bytes)
      throw new RangeError(`${where}: byteLength ${byteLength}, but its type and dims need ${bytes} bytes`);
  }
  if (data === undefined && !needData && byteLength !== undefined) return null;
  if (!ArrayBuffer.isView(data))
    throw new TypeError(`${where}: data must be a Uint8Array (or another ArrayBufferView), got ${kind(data)}`);
  if (data.byteLength !== bytes)
    throw new RangeError(`${where}: data is ${data.byteLength} bytes, but its type and dims need ${bytes}`);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** @param {unknown} a @param {string} where @returns {asserts a is number} */
function checkAlignment(a, where) {
  if (typeof a !== 'number') throw new TypeError(`${where} must be a number, got ${kind(a)}`);
  if (!Number.isInteger(a) || a <= 0 || a > 2 ** 31 || (a & (a - 1)) !== 0)
    throw new RangeError(`${where} must be a UINT32 power of two, got ${a}`);
}

/** @param {unknown} t @returns {t is number} */
const isValueType = (t) => Number.isInteger(t) && /** @type {number} */ (t) >= 0 && /** @type {number} */ (t) <= 12;

/** A short description of a value's kind for messages. @param {unknown} v */
function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an Array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${show(v)}`;
}

/** @param {unknown} v */
function show(v) {
  try {
    const s =
      typeof v === 'bigint'
        ? `${v}n`
        : typeof v === 'string'
          ? JSON.stringify(v)
          : Array.isArray(v)
            ? JSON.stringify(v)
            : String(v);
    return s.length > 40 ? s.slice(0, 40) + '...' : s;
  } catch {
    return typeof v;
  }
}

/**
 * The item type of an array nested inside an ARRAY whose item-type path gives no type at its
 * level: a typed array's own kind (a Uint8Array is UINT8: pass `[VT.ARRAY, VT.BOOL]` as itemType
 * for nested BOOL arrays given as Uint8Array, as parseGGUF returns them), string[] STRING,
 * boolean[] BOOL, an array of arrays ARRAY, [] STRING (an empty array reads back as [] either way).
 * Plain arrays of numbers or bigints need the type in the path.
 * @param {unknown} a
 * @param {string} where
 */
function itemTypeOf(a, where) {
  const k = TYPED_ARRAYS.findIndex((C) => C && a instanceof C);
  if (k >= 0) return k;
  if (!Array.isArray(a))
    throw new TypeError(`${where}: an item of an array of arrays must be an array, got ${kind(a)}`);
  if (a.length === 0 || typeof a[0] === 'string') return VT.STRING;
  if (typeof a[0] === 'boolean') return VT.BOOL;
  if (Array.isArray(a[0]) || ArrayBuffer.isView(a[0])) return VT.ARRAY;
  throw new TypeError(
    `${where}: cannot tell the item type of an Array of ${kind(a[0])}s: give a typed array, or the type in itemType (e.g. [VT.ARRAY, VT.INT32])`,
  );
}

/** A growing little-endian byte buffer; every value is checked before its bytes are written. */
class Writer {
  constructor() {
    this.buf = new Uint8Array(256);
    this.dv = new DataView(this.buf.buffer);
    this.length = 0;
  }

  /**
   * Makes room for n more bytes (replacing buf and dv: read them only after this call).
   * @param {number} n
   * @returns {number} where they start
   */
  room(n) {
    const need = this.length + n;
    if (need <= this.buf.length) return this.length;
    const buf = new Uint8Array(Math.max(need, this.buf.length * 2));
    buf.set(this.buf.subarray(0, this.length));
    this.buf = buf;
    this.dv = new DataView(buf.buffer);
    return this.length;
  }

  /** @param {Uint8Array} b */
  bytes(b) {
    const at = this.room(b.length);
    this.buf.set(b, at);
    this.length += b.length;
  }

  /** @param {number} n */
  zeros(n) {
    this.room(n);
    this.length += n; // the buffer beyond length is always zero
  }

  /** @param {number} v */
  u32(v) {
    const at = this.room(4);
    this.dv.setUint32(at, v, true);
    this.length += 4;
  }

  /** @param {number | bigint} v */
  u64(v) {
    const at = this.room(8);
    this.dv.setBigUint64(at, BigInt(v), true);
    this.length += 8;
  }

  /**
   * A string (u64 byte length + UTF-8). Lone surrogates are refused: TextEncoder would write them
   * as U+FFFD and the string would not read back equal.
   * @param {unknown} s
   * @param {string} where
   * @returns {number} its UTF-8 byte length
   */
  string(s, where) {
    if (typeof s !== 'string') throw new TypeError(`${where} must be a string, got ${kind(s)}`);
    const n = utf8Length(s);
    if (n < 0) throw new TypeError(`${where} holds a lone surrogate at index ${-n - 1} (not representable in UTF-8)`);
    if (n > MAX_ITEMS) throw new RangeError(`${where} is ${n} bytes of UTF-8; the reader allows at most ${MAX_ITEMS}`);
    this.u64(n);
    const at = this.room(n);
    utf8Encoder.encodeInto(s, this.buf.subarray(at, at + n));
    this.length += n;
    return n;
  }

  /**
   * A value of the given type. `path` is the item-type path still to apply (ARRAY values), `level`
   * the nesting level of the array holding the value (0 for a kv value itself).
   * @param {number} type
   * @param {unknown} v
   * @param {number[]} path
   * @param {string} where
   * @param {number} level
   */
  value(type, v, path, where, level) {
    if (SIZE[type] && type !== VT.BOOL) {
      this.number(type, v, where);
      return;
    }
    if (type === VT.BOOL) {
      if (typeof v !== 'boolean') throw new TypeError(`${where}: a BOOL must be true or false, got ${kind(v)}`);
      const at = this.room(1);
      this.dv.setUint8(at, v ? 1 : 0);
      this.length += 1;
      return;
    }
    if (type === VT.STRING) {
      this.string(v, where);
      return;
    }
    // ARRAY: the item type comes from the path, else from the value (nested arrays only).
    const itemType = path.length ? path[0] : itemTypeOf(v, where);
    if (itemType === VT.ARRAY && level + 2 > MAX_DEPTH)
      throw new RangeError(`${where}: arrays nested deeper than ${MAX_DEPTH} levels (the reader's limit)`);
    const items = this.items(itemType, v, where);
    if (items.length > MAX_ITEMS)
      throw new RangeError(`${where}: ${items.length} items; the reader allows at most ${MAX_ITEMS}`);
    this.u32(itemType);
    this.u64(items.length);
    if (ArrayBuffer.isView(items) && (HOST_LE || SIZE[itemType] === 1)) {
      this.bytes(new Uint8Array(items.buffer, items.byteOffset, items.byteLength)); // checked by kind
    } else if (ArrayBuffer.isView(items)) {
      for (let i = 0; i < items.length; i++) this.number(itemType, items[i], where);
    } else {
      const rest = path.slice(1);
      for (let i = 0; i < items.length; i++) this.value(itemType, items[i], rest, `${where}[${i}]`, level + 1);
    }
  }

  /**
   * The items of an array of the given item type: a typed array of the matching kind (a
   * Uint8Array for BOOL: its bytes are stored as they are, any non-zero byte being true) or a plain
   * Array, whose items are checked one by one.
   * @param {number} itemType
   * @param {unknown} v
   * @param {string} where
   * @returns {ArrayLike<any>}
   */
  items(itemType, v, where) {
    const C = itemType === VT.BOOL ? Uint8Array : TYPED_ARRAYS[itemType];
    if (Array.isArray(v) || (C && v instanceof C)) return /** @type {ArrayLike<any>} */ (v);
    const want = C ? `a ${C.name} or an Array` : 'an Array';
    throw new TypeError(`${where}: an ARRAY of item type ${itemType} must be ${want}, got ${kind(v)}`);
  }

  /**
   * A numeric scalar, checked for its type: integers in range (UINT64/INT64 as bigint or safe
   * integer numbers), FLOAT32 rounded to float32 as gguf-py does (a finite value beyond float32's
   * range, which would become an infinity, is refused; NaN and infinities pass), FLOAT64 any number.
   * @param {number} type
   * @param {unknown} v
   * @param {string} where
   */
  number(type, v, where) {
    const range = INT_RANGE[type];
    let x = /** @type {number | bigint} */ (v);
    if (type === VT.UINT64 || type === VT.INT64) {
      if (typeof v === 'number') {
        if (!Number.isSafeInteger(v))
          throw new RangeError(`${where}: ${v} is not a safe integer (pass a bigint for large 64-bit values)`);
        x = BigInt(v);
      } else if (typeof v !== 'bigint') {
        throw new TypeError(
          `${where}: a ${type === VT.UINT64 ? 'UINT64' : 'INT64'} must be a bigint or a number, got ${kind(v)}`,
        );
      }
    } else if (typeof v !== 'number') {
      throw new TypeError(`${where}: a value of type ${type} must be a number, got ${kind(v)}`);
    } else if (range && !Number.isInteger(v)) {
      throw new RangeError(`${where}: ${v} is not an integer`);
    } else if (type === VT.FLOAT32 && Number.isFinite(v) && !Number.isFinite(Math.fround(v))) {
      throw new RangeError(`${where}: ${v} is beyond the range of FLOAT32 (it would be written as an infinity)`);
    }
    if (range && (x < range[0] || x > range[1]))
      throw new RangeError(`${where}: ${show(v)} is out of range for type ${type} (${range[0]}..${range[1]})`);
    const at = this.room(SIZE[type]);
    /** @type {any} */ (this.dv)[`set${ACCESSOR[type]}`](at, x, true);
    this.length += SIZE[type];
  }

  finish() {
    return this.buf.slice(0, this.length);
  }
}

/**
 * The UTF-8 byte length of a string, or -(index + 1) of its first lone surrogate.
 * @param {string} s
 */
function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c < 0xd800 || c > 0xdfff) n += 3;
    else if (c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a surrogate pair: one code point above U+FFFF
      i++;
    } else return -(i + 1);
  }
  return n;
}
