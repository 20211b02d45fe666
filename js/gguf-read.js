// The GGUF header reader: a bounds-checked cursor over a prefix of a file, the header parser and
// validator, and parseGGUF for whole files in memory. Every failure is a GGUFError naming the field
// and byte offset; API misuse is a TypeError or RangeError. Memory use is bounded by a budget
// proportional to the header bytes read (see charge in parseHeader), and the input is never modified.

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
 * The cursor over the prefix is this function's own state (closures over local variables rather
 * than a class's fields, which keeps the parse-only bundle small: a minifier renames locals).
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
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const shared = hasShared && buf.buffer instanceof SharedArrayBuffer;
  const strict = opt.strictUtf8 === true;
  const maxDepth = opt.maxDepth ?? DEFAULT_MAX_DEPTH;
  let pos = 0;
  let le = true;
  let v1 = false;
  /** Estimated bytes of memory the decoded values hold so far. */
  let cost = 0;
  /** Byte length of the last string read. */
  let lastLength = 0;
  // What is being read, for messages, which are built only when an error is thrown (a string per
  // array item would cost more than the items): the section, its index, the key or tensor name,
  // and the indices of the array items being read, outermost first.
  let section = 'header';
  let index = -1;
  /** @type {string | undefined} */
  let label;
  /** @type {number[]} */
  const path = [];

  /** The name of the field being read, e.g. `"tokenizer.ggml.tokens"[7] length`. @param {string} what */
  const field = (what) => {
    let s = section;
    if (index >= 0) s += ` #${index}`;
    if (label !== undefined) s += ` ${JSON.stringify(label)}`;
    for (const i of path) s += `[${i}]`;
    return what ? `${s} ${what}`.trim() : s;
  };

  /** Ensures n more bytes exist; past the file end that is truncation. @param {number} n @param {string} what */
  const need = (n, what) => {
    const end = pos + n;
    if (end > fileSize)
      throw new GGUFError(
        'TRUNCATED',
        pos,
        `file ends inside ${field(what)} (needs ${n} bytes, ${Math.max(0, fileSize - pos)} left)`,
      );
    if (end > buf.length) throw new NeedMore(end);
  };

  /** Adds the estimated memory of a decoded value; refuses once the total passes the budget. @param {number} bytes */
  const charge = (bytes) => {
    cost += bytes;
    if (cost > pos * BUDGET_PER_BYTE + BUDGET_BASE)
      throw new GGUFError(
        'LIMIT',
        pos,
        `${field('')}: decoding the header would take about ${cost} bytes of memory, more than ` +
          `${BUDGET_PER_BYTE}x the ${pos} header bytes read so far plus ${BUDGET_BASE}`,
      );
  };

  /** @param {string} what */
  const u32 = (what) => {
    need(4, what);
    const v = dv.getUint32(pos, le);
    pos += 4;
    return v;
  };

  /** @param {string} what */
  const u64 = (what) => {
    need(8, what);
    const v = dv.getBigUint64(pos, le);
    pos += 8;
    return v;
  };

  /**
   * A count or length (u64, or u32 in v1) of items of at least minItem bytes each: at most `max`,
   * and small enough that the items fit in the rest of the file.
   * @param {string} what @param {number} minItem @param {number} max
   */
  const count = (what, minItem, max = MAX_ITEMS) => {
    const at = pos;
    // Read as two u32 halves: no BigInt per count (arrays of arrays read one count per item).
    const first = u32(what);
    const second = v1 ? 0 : u32(what);
    const [l, h] = le || v1 ? [first, second] : [second, first];
    const room = Math.max(0, fileSize - pos);
    if (h !== 0 || l > MAX_ITEMS || l * minItem > room)
      throw new GGUFError(
        'TOO_LARGE',
        at,
        `${field(what)} ${h * 2 ** 32 + l} cannot fit in the file (${room} bytes left)`,
      );
    if (l > max) throw new GGUFError('LIMIT', at, `${field(what)} ${l} is more than the ${max} this reader accepts`);
    return l;
  };

  /** A string: length, then UTF-8 bytes. @param {string} what */
  const string = (what) => {
    const n = count(what ? `${what} length` : 'length', 1, MAX_STRING_BYTES);
    need(n, what);
    const at = pos;
    pos += n;
    charge(COST_STRING + 2 * n);
    lastLength = n;
    let bytes = buf.subarray(at, at + n);
    if (shared) bytes = bytes.slice(); // browsers' TextDecoder refuses shared memory
    if (strict) {
      try {
        return utf8Strict.decode(bytes);
      } catch {
        throw new GGUFError('BAD_UTF8', at, `${field(what)} is not valid UTF-8`);
      }
    }
    return utf8.decode(bytes);
  };

  /** A value type or array item type (u32, at most 12). @param {string} what */
  const valueType = (what) => {
    const t = u32(what);
    if (t > 12) throw new GGUFError('BAD_VALUE_TYPE', pos - 4, `${field(what)}: unknown value type ${t}`);
    return t;
  };

  /**
   * n items read by `item`, as a JS array filled as read (never preallocated from the count), with
   * each item's index on the path for messages.
   * @template T
   * @param {number} n @param {() => T} item
   * @returns {T[]}
   */
  const items = (n, item) => {
    charge(COST_ARRAY);
    /** @type {T[]} */
    const out = [];
    const depth = path.length;
    path.push(0);
    for (let i = 0; i < n; i++) {
      path[depth] = i;
      charge(COST_SLOT);
      out.push(item());
    }
    path.pop();
    return out;
  };

  /**
   * The count and items of an array at nesting level `level` (a top-level array is level 1).
   * String and nested arrays are JS arrays; numeric arrays are typed arrays over a copy of their
   * bytes (BOOL: Uint8Array, nonzero is true).
   * @param {number} itemType
   * @param {number} level
   * @returns {unknown}
   */
  const array = (itemType, level) => {
    const min = itemType === VT_STRING ? (v1 ? 4 : 8) : itemType === VT_ARRAY ? (v1 ? 8 : 12) : SIZE[itemType];
    const n = count('item count', min);
    if (itemType === VT_STRING) return items(n, () => string(''));
    if (itemType === VT_ARRAY) {
      if (level + 1 > maxDepth)
        throw new GGUFError('TOO_DEEP', pos, `${field('')}: arrays nested deeper than ${maxDepth} levels (maxDepth)`);
      return items(n, () => array(valueType('item type'), level + 1));
    }
    const size = SIZE[itemType];
    need(n * size, 'items');
    const at = pos;
    pos += n * size;
    charge(COST_TYPED + n * size);
    // A copy: the result must not alias the input, and a byte swap must not touch the caller's bytes.
    const bytes = buf.slice(at, at + n * size);
    if (!le && size > 1) swapInPlace(bytes, size);
    const C = itemType === VT_BOOL ? Uint8Array : TYPED_ARRAYS[itemType];
    return new /** @type {any} */ (C)(bytes.buffer, 0, n);
  };

  /**
   * A metadata value of a type already read.
   * @param {number} type
   * @returns {{ value: unknown, itemType?: number }}
   */
  const value = (type) => {
    const at = pos;
    if (ACCESSOR[type]) {
      need(SIZE[type], 'value');
      pos += SIZE[type];
      return { value: /** @type {any} */ (dv)[`get${ACCESSOR[type]}`](at, le) };
    }
    if (type === VT_BOOL) {
      need(1, 'value');
      return { value: buf[pos++] !== 0 };
    }
    if (type === VT_STRING) return { value: string('value') };
    const itemType = valueType('item type');
    return { value: array(itemType, 1), itemType };
  };

  need(4, 'magic');
  if (buf[0] !== 0x47 || buf[1] !== 0x47 || buf[2] !== 0x55 || buf[3] !== 0x46) {
    throw new GGUFError('BAD_MAGIC', 0, 'not a GGUF file (magic is not "GGUF")');
  }
  pos = 4;
  let version = u32('version');
  if ((version & 0xffff) === 0 && version !== 0) {
    le = false; // a byte-swapped small number: the file is big-endian
    version = dv.getUint32(4, false);
  }
  if (version === 1 ? !opt.allowV1 : version !== 2 && version !== 3) {
    throw new GGUFError(
      'BAD_VERSION',
      4,
      `unsupported GGUF version ${version}` + (version === 1 ? ' (pass { allowV1: true } to read it)' : ''),
    );
  }
  v1 = version === 1;
  // Smallest possible entries (empty name, 1-byte value, no dims) bound the counts by the file size.
  const nTensors = count('tensor count', v1 ? 20 : 24);
  const nKV = count('metadata count', v1 ? 9 : 13);
  /** @type {KV[]} */
  const kv = [];
  /** @type {Map<string, unknown>} */
  const metadata = new Map();
  section = 'metadata key';
  for (let i = 0; i < nKV; i++) {
    index = i;
    label = undefined;
    const at = pos;
    const key = string('');
    charge(COST_KV);
    if (key.length === 0) throw new GGUFError('EMPTY_KEY', at, `metadata key #${i} is empty`);
    if (metadata.has(key)) throw new GGUFError('DUPLICATE_KEY', at, `duplicate metadata key ${JSON.stringify(key)}`);
    label = key;
    const type = valueType('type');
    const { value: v, itemType } = value(type);
    kv.push(itemType === undefined ? { key, type, value: v } : { key, type, value: v, itemType });
    metadata.set(key, v);
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
  section = 'tensor';
  for (let i = 0; i < nTensors; i++) {
    index = i;
    label = undefined;
    const at = pos;
    const name = string('name');
    charge(COST_TENSOR);
    if (lastLength >= MAX_NAME)
      throw new GGUFError(
        'NAME_TOO_LONG',
        at,
        `tensor #${i} name is ${lastLength} bytes; ggml allows at most ${MAX_NAME - 1}`,
      );
    if (names.has(name)) throw new GGUFError('DUPLICATE_TENSOR', at, `duplicate tensor name ${JSON.stringify(name)}`);
    names.add(name);
    label = name;
    const nDims = u32('n_dims');
    if (nDims > MAX_DIMS)
      throw new GGUFError('BAD_DIMS', pos - 4, `${name}: ${nDims} dimensions (at most ${MAX_DIMS})`);
    /** @type {number[]} */
    const dims = [];
    let total = 1n;
    for (let d = 0; d < nDims; d++) {
      const dAt = pos;
      const ne = v1 ? BigInt(u32(`ne[${d}]`)) : u64(`ne[${d}]`);
      if (ne > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: ne[${d}] = ${ne} is negative as int64`);
      total *= ne;
      if (total > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: element count overflows int64`);
      // Only a zero dimension lets a size past 2^53 through the checks below; it has no exact number.
      if (ne > BigInt(Number.MAX_SAFE_INTEGER))
        throw new GGUFError('OVERFLOW', dAt, `${name}: ne[${d}] = ${ne} is above 2^53 - 1`);
      dims.push(Number(ne));
    }
    const tAt = pos;
    const type = u32('type');
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
    const oAt = pos;
    const offset = u64('offset');
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
  const dataOffset = pad(pos, alignment);
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
  return { version, alignment, dataOffset, littleEndian: le, kv, metadata, tensors, headerBytes: pos };
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
