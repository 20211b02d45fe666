// The GGUF header reader: a bounds-checked cursor over a prefix of a file, the header parser and
// validator, and parseGGUF for whole files in memory. Every failure is a GGUFError naming the field
// and byte offset; API misuse is a TypeError or RangeError. Memory use is bounded by a budget
// proportional to the header bytes read (see Reader.charge), and the input is never modified.

import { typeInfo } from './types.js';
import { TYPE_ROWS } from './gen/types-table.js';
import {
  SIZE,
  TYPED_ARRAYS,
  ACCESSOR,
  MAX_ITEMS,
  MAX_STRING_BYTES,
  MAX_NAME,
  MAX_DIMS,
  MAX_DEPTH,
  DEFAULT_MAX_DEPTH,
  DEFAULT_ALIGNMENT,
  I64_MAX,
  GGUFError,
  pad,
  readableLength,
} from './gguf-format.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */
/** @typedef {import('./gguf-format.js').KV} KV */
/** @typedef {import('./gguf-format.js').TensorInfo} TensorInfo */

/** ggml's id of Q2_0, whose pre-release files used another block layout under the same id. */
const Q2_0_ID = 42;
// The value types the reader treats apart (GGUFValueType's numbers, spelled here so that a
// parse-only bundle does not carry the enum).
const VT_UINT32 = 4,
  VT_BOOL = 7,
  VT_STRING = 8,
  VT_ARRAY = 9;

/** Thrown inside the parser when a prefix of the file ends early; openGGUF reads more and retries. */
export class NeedMore extends Error {
  /** @param {number} end bytes needed */
  constructor(end) {
    super('need more bytes');
    this.end = end;
  }
}

// Memory budget. A header may cost at most BUDGET_PER_BYTE times the header bytes consumed so far
// plus BUDGET_BASE bytes of decoded values, estimated with the COST_* figures (bytes of JS heap per
// object, measured on V8's heap statistics over a million of each, rounded up). A real
// vocabulary costs 2-4x its bytes; arrays of empty typed arrays would cost 18x (12 file bytes each
// become a 200-byte typed array) and are refused with LIMIT long before they exhaust memory.
const BUDGET_PER_BYTE = 8;
const BUDGET_BASE = 4 << 20;
const COST_SLOT = 8; // one element of a JS array
const COST_ARRAY = 40; // an empty JS array
const COST_TYPED = 208; // a typed array and its own ArrayBuffer, before the bytes
const COST_STRING = 24; // a string, before its characters (2 bytes each when not Latin-1)
const COST_KV = 128; // a { key, type, value } record, its Map entry, a boxed scalar
const COST_TENSOR = 200; // a tensor info record, its dims array and its entry in the name set

const utf8 = new TextDecoder('utf-8');
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const hasShared = typeof SharedArrayBuffer === 'function';

/**
 * A plain Uint8Array view of exactly the bytes of `data`: any ArrayBufferView (Uint8Array at any
 * byteOffset, a Node.js buffer, DataView, other typed arrays as their bytes) or an ArrayBuffer /
 * SharedArrayBuffer. Never copies, so the caller's memory is shared (and never written).
 * @param {unknown} data
 * @param {string} who the function name for the TypeError
 * @returns {Uint8Array}
 * @throws {TypeError} for anything else
 */
export function asBytes(data, who) {
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const tag = Object.prototype.toString.call(data);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]')
    return new Uint8Array(/** @type {ArrayBuffer} */ (data));
  const what = data === null ? 'null' : typeof data === 'object' ? tag.slice(8, -1) : typeof data;
  throw new TypeError(`${who}: expected an ArrayBuffer or an ArrayBufferView (Uint8Array, DataView, ...), got ${what}`);
}

/**
 * Validates parse options (parseGGUF and openGGUF call it before any work).
 * @param {unknown} options undefined or an object
 * @returns {ParseOptions}
 * @throws {TypeError} for a non-object or a wrongly typed option, {RangeError} for maxDepth out of 1..64
 */
export function checkParseOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object')
    throw new TypeError(`GGUF options must be an object, got ${options === null ? 'null' : typeof options}`);
  const o = /** @type {Record<string, unknown>} */ (options);
  for (const k of ['allowV1', 'strictUtf8']) {
    if (o[k] !== undefined && typeof o[k] !== 'boolean')
      throw new TypeError(`GGUF option ${k} must be a boolean, got ${typeof o[k]}`);
  }
  const d = o.maxDepth;
  if (d !== undefined) {
    if (typeof d !== 'number') throw new TypeError(`GGUF option maxDepth must be a number, got ${typeof d}`);
    if (!Number.isInteger(d) || d < 1 || d > MAX_DEPTH)
      throw new RangeError(`GGUF option maxDepth must be an integer in 1..${MAX_DEPTH}, got ${d}`);
  }
  return /** @type {ParseOptions} */ (options);
}

/** A cursor over a prefix of a file. */
class Reader {
  /**
   * @param {Uint8Array} buf the first buf.length bytes of the file (plain view; never written)
   * @param {number} fileSize
   * @param {ParseOptions} opt
   */
  constructor(buf, fileSize, opt) {
    this.buf = buf;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.shared = hasShared && buf.buffer instanceof SharedArrayBuffer;
    this.size = fileSize;
    this.pos = 0;
    this.le = true;
    this.v1 = false;
    this.strict = opt.strictUtf8 === true;
    this.maxDepth = opt.maxDepth ?? DEFAULT_MAX_DEPTH;
    /** Estimated bytes of memory the decoded values hold so far. */
    this.cost = 0;
    /** Byte length of the last string read. */
    this.lastLength = 0;
    // What is being read, for messages, which are built only when an error is thrown (a string per
    // array item would cost more than the items): the section, its index, the key or tensor name,
    // and the indices of the array items being read, outermost first.
    this.section = '';
    this.index = -1;
    /** @type {string | undefined} */
    this.label = undefined;
    /** @type {number[]} */
    this.path = [];
  }

  /** The name of the field being read, e.g. `"tokenizer.ggml.tokens"[7] length`. @param {string} what */
  field(what) {
    let s = this.section;
    if (this.index >= 0) s += ` #${this.index}`;
    if (this.label !== undefined) s += ` ${JSON.stringify(this.label)}`;
    for (const i of this.path) s += `[${i}]`;
    return what ? `${s} ${what}`.trim() : s;
  }

  /** Ensures n more bytes exist; past the file end that is truncation. */
  /** @param {number} n @param {string} what */
  need(n, what) {
    const end = this.pos + n;
    if (end > this.size)
      throw new GGUFError(
        'TRUNCATED',
        this.pos,
        `file ends inside ${this.field(what)} (needs ${n} bytes, ${Math.max(0, this.size - this.pos)} left)`,
      );
    if (end > this.buf.length) throw new NeedMore(end);
  }

  /**
   * Adds the estimated memory of a decoded value; refuses once the total passes the budget.
   * @param {number} bytes
   */
  charge(bytes) {
    this.cost += bytes;
    const budget = this.pos * BUDGET_PER_BYTE + BUDGET_BASE;
    if (this.cost > budget)
      throw new GGUFError(
        'LIMIT',
        this.pos,
        `${this.field('')}: decoding the header would take about ${this.cost} bytes of memory, more than ` +
          `${BUDGET_PER_BYTE}x the ${this.pos} header bytes read so far plus ${BUDGET_BASE}`,
      );
  }

  /** @param {string} what */ u32(what) {
    this.need(4, what);
    const v = this.dv.getUint32(this.pos, this.le);
    this.pos += 4;
    return v;
  }
  /** @param {string} what */ u64(what) {
    this.need(8, what);
    const v = this.dv.getBigUint64(this.pos, this.le);
    this.pos += 8;
    return v;
  }

  /**
   * A count or length (u64, or u32 in v1) of items of at least minItem bytes each: at most `max`,
   * and small enough that the items fit in the rest of the file.
   * @param {string} what @param {number} minItem @param {number} max
   */
  count(what, minItem, max = MAX_ITEMS) {
    const at = this.pos;
    // Read as two u32 halves: no BigInt per count (arrays of arrays read one count per item).
    const first = this.u32(what);
    const second = this.v1 ? 0 : this.u32(what);
    const [l, h] = this.le || this.v1 ? [first, second] : [second, first];
    const room = Math.max(0, this.size - this.pos);
    if (h !== 0 || l > MAX_ITEMS || l * minItem > room)
      throw new GGUFError(
        'TOO_LARGE',
        at,
        `${this.field(what)} ${h * 2 ** 32 + l} cannot fit in the file (${room} bytes left)`,
      );
    if (l > max)
      throw new GGUFError('LIMIT', at, `${this.field(what)} ${l} is more than the ${max} this reader accepts`);
    return l;
  }

  /** A string: length, then UTF-8 bytes. @param {string} what */
  string(what) {
    const n = this.count(what ? `${what} length` : 'length', 1, MAX_STRING_BYTES);
    this.need(n, what);
    const at = this.pos;
    this.pos += n;
    this.charge(COST_STRING + 2 * n);
    this.lastLength = n;
    let bytes = this.buf.subarray(at, at + n);
    if (this.shared) bytes = bytes.slice(); // browsers' TextDecoder refuses shared memory
    if (this.strict) {
      try {
        return utf8Strict.decode(bytes);
      } catch {
        throw new GGUFError('BAD_UTF8', at, `${this.field(what)} is not valid UTF-8`);
      }
    }
    return utf8.decode(bytes);
  }

  /** A value type or array item type (u32, at most 12). @param {string} what */
  valueType(what) {
    const t = this.u32(what);
    if (t > 12) throw new GGUFError('BAD_VALUE_TYPE', this.pos - 4, `${this.field(what)}: unknown value type ${t}`);
    return t;
  }

  /**
   * A metadata value of a type already read.
   * @param {number} type
   * @returns {{ value: unknown, itemType?: number }}
   */
  value(type) {
    const at = this.pos;
    if (ACCESSOR[type]) {
      this.need(SIZE[type], 'value');
      this.pos += SIZE[type];
      return { value: /** @type {any} */ (this.dv)[`get${ACCESSOR[type]}`](at, this.le) };
    }
    if (type === VT_BOOL) {
      this.need(1, 'value');
      return { value: this.buf[this.pos++] !== 0 };
    }
    if (type === VT_STRING) return { value: this.string('value') };
    const itemType = this.valueType('item type');
    return { value: this.array(itemType, 1), itemType };
  }

  /**
   * The count and items of an array at nesting level `level` (a top-level array is level 1).
   * String and nested arrays are JS arrays, filled as read (never preallocated from the count);
   * numeric arrays are typed arrays over a copy of their bytes (BOOL: Uint8Array, nonzero is true).
   * @param {number} itemType
   * @param {number} level
   * @returns {unknown}
   */
  array(itemType, level) {
    const min =
      itemType === VT_STRING ? (this.v1 ? 4 : 8) : itemType === VT_ARRAY ? (this.v1 ? 8 : 12) : SIZE[itemType];
    const n = this.count('item count', min);
    if (itemType === VT_STRING) return this.strings(n);
    if (itemType === VT_ARRAY) return this.arrays(n, level);
    const size = SIZE[itemType];
    this.need(n * size, 'items');
    const at = this.pos;
    this.pos += n * size;
    this.charge(COST_TYPED + n * size);
    // A copy: the result must not alias the input, and a byte swap must not touch the caller's bytes.
    const bytes = new Uint8Array(n * size);
    bytes.set(this.buf.subarray(at, at + n * size));
    if (!this.le && size > 1) swapInPlace(bytes, size);
    const C = itemType === VT_BOOL ? Uint8Array : TYPED_ARRAYS[itemType];
    return new /** @type {any} */ (C)(bytes.buffer, 0, n);
  }

  /** n strings, as a JS array filled as read. @param {number} n */
  strings(n) {
    this.charge(COST_ARRAY);
    /** @type {string[]} */
    const out = [];
    const depth = this.path.length;
    this.path.push(0);
    for (let i = 0; i < n; i++) {
      this.path[depth] = i;
      this.charge(COST_SLOT);
      out.push(this.string(''));
    }
    this.path.pop();
    return out;
  }

  /** n arrays (each an item type, a count and items) at nesting level level + 1. @param {number} n @param {number} level */
  arrays(n, level) {
    if (level + 1 > this.maxDepth)
      throw new GGUFError(
        'TOO_DEEP',
        this.pos,
        `${this.field('')}: arrays nested deeper than ${this.maxDepth} levels (maxDepth)`,
      );
    this.charge(COST_ARRAY);
    /** @type {unknown[]} */
    const out = [];
    const depth = this.path.length;
    this.path.push(0);
    for (let i = 0; i < n; i++) {
      this.path[depth] = i;
      this.charge(COST_SLOT);
      out.push(this.array(this.valueType('item type'), level + 1));
    }
    this.path.pop();
    return out;
  }
}

/** Reverses every group of `size` bytes (big-endian data on a little-endian host). */
/** @param {Uint8Array} b @param {number} size */
function swapInPlace(b, size) {
  for (let i = 0; i + size <= b.length; i += size) {
    for (let j = 0; j < size >> 1; j++) {
      const t = b[i + j];
      b[i + j] = b[i + size - 1 - j];
      b[i + size - 1 - j] = t;
    }
  }
}

/**
 * Parses and validates a header from a prefix of a file of fileSize bytes. Used by parseGGUF (the
 * whole file) and openGGUF (a growing prefix: NeedMore says how many bytes to read before retrying).
 * @param {Uint8Array} prefix the first bytes of the file (any ArrayBufferView; never written)
 * @param {number} fileSize bytes in the whole file
 * @param {ParseOptions} [options]
 * @throws {GGUFError} for a malformed, truncated or hostile header; NeedMore for a short prefix;
 *   TypeError/RangeError for bad arguments
 */
export function parseHeader(prefix, fileSize, options) {
  const opt = checkParseOptions(options);
  let buf = asBytes(prefix, 'parseHeader');
  if (typeof fileSize !== 'number') throw new TypeError(`parseHeader: fileSize must be a number`);
  if (!Number.isSafeInteger(fileSize) || fileSize < 0)
    throw new RangeError(`parseHeader: fileSize must be a non-negative safe integer, got ${fileSize}`);
  if (buf.length > fileSize) buf = buf.subarray(0, fileSize);
  const r = new Reader(buf, fileSize, opt);
  r.section = 'header';
  r.need(4, 'magic');
  if (buf[0] !== 0x47 || buf[1] !== 0x47 || buf[2] !== 0x55 || buf[3] !== 0x46) {
    throw new GGUFError('BAD_MAGIC', 0, 'not a GGUF file (magic is not "GGUF")');
  }
  r.pos = 4;
  let version = r.u32('version');
  if ((version & 0xffff) === 0 && version !== 0) {
    r.le = false; // a byte-swapped small number: the file is big-endian
    version = r.dv.getUint32(4, false);
  }
  if (version === 1 ? !opt.allowV1 : version !== 2 && version !== 3) {
    throw new GGUFError(
      'BAD_VERSION',
      4,
      `unsupported GGUF version ${version}` + (version === 1 ? ' (pass { allowV1: true } to read it)' : ''),
    );
  }
  const v1 = (r.v1 = version === 1);
  // Smallest possible entries (empty name, 1-byte value, no dims) bound the counts by the file size.
  const nTensors = r.count('tensor count', v1 ? 20 : 24);
  const nKV = r.count('metadata count', v1 ? 9 : 13);
  /** @type {KV[]} */
  const kv = [];
  /** @type {Map<string, unknown>} */
  const metadata = new Map();
  r.section = 'metadata key';
  for (let i = 0; i < nKV; i++) {
    r.index = i;
    r.label = undefined;
    const at = r.pos;
    const key = r.string('');
    r.charge(COST_KV);
    if (key.length === 0) throw new GGUFError('EMPTY_KEY', at, `metadata key #${i} is empty`);
    if (metadata.has(key)) throw new GGUFError('DUPLICATE_KEY', at, `duplicate metadata key ${JSON.stringify(key)}`);
    r.label = key;
    const type = r.valueType('type');
    const { value, itemType } = r.value(type);
    kv.push(itemType === undefined ? { key, type, value } : { key, type, value, itemType });
    metadata.set(key, value);
  }
  let alignment = DEFAULT_ALIGNMENT;
  const al = kv.find((e) => e.key === 'general.alignment');
  if (al) {
    const v = /** @type {number} */ (al.value);
    if (al.type !== VT_UINT32 || v === 0 || (v & (v - 1)) !== 0) {
      throw new GGUFError(
        'BAD_ALIGNMENT',
        0,
        `general.alignment must be a UINT32 power of two, got ${String(al.value)} of type ${al.type}`,
      );
    }
    alignment = v;
  }
  /** @type {TensorInfo[]} */
  const tensors = [];
  const names = new Set();
  const A = BigInt(alignment);
  const padded = (/** @type {bigint} */ n) => ((n + A - 1n) / A) * A;
  // ggml requires tensors packed in file order: each offset is the previous one plus the previous
  // tensor's size padded to the alignment (so data is aligned and never overlaps). Two kinds of
  // tensor leave the next offset open, and the next offset (or the file end) then settles them:
  // - a type id blockquant does not know: its size is unknown, so all that can be checked is that
  //   it starts where the previous tensor ends, inside the data section, and that the next tensor
  //   starts aligned and after it (at least one alignment step after it when it has elements).
  //   That still keeps every known tensor inside the file and clear of the others.
  // - Q2_0 (id 42): mainline stores 18 bytes per 64 weights; files from before the upstream merge
  //   store 34 bytes per 128 under the same id. The extent up to the next tensor (or the file end)
  //   says which; when both fit (small tensors, where padding hides the difference) it is mainline.
  /** @type {bigint | null} where the next tensor must start; null: somewhere at or after `floor` */
  let expected = 0n;
  let floor = 0n;
  /** @type {{ t: TensorInfo, start: bigint, main: bigint, pre: bigint | null, typeAt: number } | null} */
  let q2 = null;
  /** Settles a pending Q2_0 tensor's layout from the bytes it spans (`extent`, or at most `room` for the last). */
  const settleQ2 = (
    /** @type {NonNullable<typeof q2>} */ p,
    /** @type {bigint} */ extent,
    /** @type {boolean} */ last,
  ) => {
    const fitsMain = last ? extent >= p.main : extent === padded(p.main);
    if (fitsMain || p.pre === null) return fitsMain;
    const fitsPre = last ? extent >= p.pre && extent <= padded(p.pre) : extent === padded(p.pre);
    if (!fitsPre) return false;
    p.t.byteLength = Number(p.pre);
    p.t.layout = 'q2_0-prerelease';
    p.t.unreadable = {
      code: 'PRERELEASE_Q2_0',
      offset: p.typeAt,
      message:
        `${p.t.name}: Q2_0 data in the pre-release layout (128-weight groups of 34 bytes, from before ` +
        `the upstream merge; mainline Q2_0 is 64-weight blocks of 18 bytes under the same id 42), ` +
        `which blockquant does not decode`,
    };
    return true;
  };
  r.section = 'tensor';
  for (let i = 0; i < nTensors; i++) {
    r.index = i;
    r.label = undefined;
    const at = r.pos;
    const name = r.string('name');
    r.charge(COST_TENSOR);
    if (r.lastLength >= MAX_NAME)
      throw new GGUFError(
        'NAME_TOO_LONG',
        at,
        `tensor #${i} name is ${r.lastLength} bytes; ggml allows at most ${MAX_NAME - 1}`,
      );
    if (names.has(name)) throw new GGUFError('DUPLICATE_TENSOR', at, `duplicate tensor name ${JSON.stringify(name)}`);
    names.add(name);
    r.label = name;
    const nDims = r.u32('n_dims');
    if (nDims > MAX_DIMS)
      throw new GGUFError('BAD_DIMS', r.pos - 4, `${name}: ${nDims} dimensions (at most ${MAX_DIMS})`);
    /** @type {number[]} */
    const dims = [];
    let total = 1n;
    for (let d = 0; d < nDims; d++) {
      const dAt = r.pos;
      const ne = v1 ? BigInt(r.u32(`ne[${d}]`)) : r.u64(`ne[${d}]`);
      if (ne > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: ne[${d}] = ${ne} is negative as int64`);
      total *= ne;
      if (total > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: element count overflows int64`);
      // Only a zero dimension lets a size past 2^53 through the checks below; it has no exact number.
      if (ne > BigInt(Number.MAX_SAFE_INTEGER))
        throw new GGUFError('OVERFLOW', dAt, `${name}: ne[${d}] = ${ne} is above 2^53 - 1`);
      dims.push(Number(ne));
    }
    const tAt = r.pos;
    const type = r.u32('type');
    // The type table's row [id, name, blockSize, typeSize, ...] read directly, not through
    // typeInfo, so that a parse-only bundle does not carry types.js; no row: listed with an unknown
    // size (see above).
    const row = TYPE_ROWS.find((x) => x[0] === type);
    const info = row ? { name: row[1], blockSize: row[2], typeSize: row[3] } : null;
    const ne0 = nDims > 0 ? BigInt(dims[0]) : 1n; // missing dimensions are 1, as in ggml
    if (info && ne0 % BigInt(info.blockSize) !== 0n) {
      throw new GGUFError(
        'BAD_SHAPE',
        tAt,
        `${name}: ne[0] = ${ne0} is not a multiple of the ${info.name} block size ${info.blockSize}`,
      );
    }
    const oAt = r.pos;
    const offset = r.u64('offset');
    const bytes = info ? (total / BigInt(info.blockSize)) * BigInt(info.typeSize) : null;
    // Q2_0's size in the pre-release layout (whole 128-weight groups only), the smaller of the two.
    const pre = type === Q2_0_ID && ne0 % 128n === 0n ? (total / 128n) * 34n : null;
    if (q2) {
      const prev = q2;
      q2 = null;
      if (!settleQ2(prev, offset - prev.start, false))
        throw new GGUFError(
          'BAD_OFFSET',
          oAt,
          `${name}: data offset ${offset} is not ${prev.start + padded(prev.main)}, where the previous ` +
            `tensor's data (Q2_0, ${prev.main} bytes) padded to ${alignment} bytes ends` +
            (prev.pre === null
              ? ''
              : ` (nor ${prev.start + padded(prev.pre)}, where it would end in the pre-release Q2_0 layout)`),
        );
    } else if (expected !== null && offset !== expected)
      throw new GGUFError(
        'BAD_OFFSET',
        oAt,
        `${name}: data offset ${offset} is not ${expected}, where the previous tensor's data padded to ` +
          `${alignment} bytes ends (tensors are packed in file order)`,
      );
    else if (expected === null && (offset < floor || offset % A !== 0n))
      throw new GGUFError(
        'BAD_OFFSET',
        oAt,
        `${name}: data offset ${offset} is ${offset < floor ? `before ${floor}, inside the previous tensor (of an unknown type)` : `not a multiple of the alignment ${alignment}`}`,
      );
    // Data past the end: checked again below, with the data section's start.
    const least = pre ?? bytes ?? 0n;
    if (offset + least > BigInt(fileSize))
      throw new GGUFError(
        'BAD_OFFSET',
        oAt,
        `${name}: data (offset ${offset}, ${bytes ?? 'unknown'} bytes) lies past the end of the file`,
      );
    /** @type {TensorInfo} */
    const t = {
      name,
      type,
      dims,
      offset: Number(offset),
      nElements: Number(total),
      byteLength: bytes === null ? null : Number(bytes),
    };
    if (bytes === null) {
      t.unreadable = {
        code: 'UNKNOWN_GGML_TYPE',
        offset: tAt,
        message: `${name}: ggml type ${type} is not one blockquant knows, so its size and decoding are unknown (the tensor is listed, not read)`,
      };
      expected = null;
      floor = offset + (total > 0n ? A : 0n);
    } else {
      if (type === Q2_0_ID) q2 = { t, start: offset, main: bytes, pre, typeAt: tAt };
      expected = offset + padded(bytes);
    }
    tensors.push(t);
  }
  const dataOffset = pad(r.pos, alignment);
  if (q2) {
    const room = BigInt(fileSize) - BigInt(dataOffset) - q2.start;
    settleQ2(q2, room, true); // a tensor that fits neither layout is refused as past the end below
  }
  for (const t of tensors) {
    // A tensor of unknown size that has elements must have at least its first byte in the file.
    const least = t.byteLength ?? (t.nElements > 0 ? 1 : 0);
    if (dataOffset + t.offset + least > fileSize)
      throw new GGUFError(
        'BAD_OFFSET',
        dataOffset + t.offset,
        `${t.name}: data lies past the end of the file (${fileSize} bytes)`,
      );
  }
  return { version, alignment, dataOffset, littleEndian: r.le, kv, metadata, tensors, headerBytes: r.pos };
}

/**
 * The name of a tensor's type for listings: the ggml name ('q4_K'), 'unknown(44)' for an id
 * blockquant does not know, 'q2_0-prerelease' for Q2_0 in the pre-release layout.
 * @param {{ type: number, byteLength?: number | null, layout?: string }} t
 * @returns {string}
 */
export function tensorTypeName(t) {
  if (t.byteLength === null) return `unknown(${t.type})`;
  if (t.layout) return t.layout;
  return typeInfo(t.type).name;
}

/**
 * @param {{ tensors: TensorInfo[] }} g
 * @param {string | TensorInfo} t
 * @returns {TensorInfo}
 */
export function findTensor(g, t) {
  const name = typeof t === 'string' ? t : t?.name;
  const found = g.tensors.find((x) => x.name === name);
  if (!found) throw new RangeError(`no tensor named ${JSON.stringify(name)}`);
  return found;
}

/**
 * Parses a whole GGUF file held in memory. Metadata values are copies (64-bit integers as BigInt,
 * numeric arrays as typed arrays, BOOL arrays as a Uint8Array of the stored bytes: nonzero is true);
 * tensorBytes returns views of the input, which is never modified.
 * @param {ArrayBuffer | ArrayBufferView} data the file: an ArrayBuffer or any view (Uint8Array, a Node.js buffer, DataView, ...)
 * @param {ParseOptions} [options]
 * @throws {GGUFError} for anything malformed, truncated or hostile (code LIMIT when decoding would
 *   take more than about 8x the header's bytes of memory); TypeError/RangeError for bad arguments
 */
export function parseGGUF(data, options) {
  const opt = checkParseOptions(options);
  const buf = asBytes(data, 'parseGGUF');
  const h = parseHeader(buf, buf.length, opt);
  return {
    ...h,
    /** The bytes of one tensor (a view into the input, exactly byteLength long). */
    /** @param {string | TensorInfo} t */
    tensorBytes(t) {
      const x = findTensor(h, t);
      const n = readableLength(x);
      const s = h.dataOffset + x.offset;
      return buf.subarray(s, s + n);
    },
  };
}
