// The GGUF header reader: a bounds-checked cursor over a prefix of a file, the header parser and
// validator, and parseGGUF for whole files in memory. Every failure is a GGUFError naming the field
// and byte offset.

import { typeInfo } from './types.js';
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
  GGUFError,
  pad,
} from './gguf-format.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */
/** @typedef {import('./gguf-format.js').KV} KV */
/** @typedef {import('./gguf-format.js').TensorInfo} TensorInfo */

/** Thrown inside the parser when a prefix of the file ends early; openGGUF reads more and retries. */
export class NeedMore extends Error {
  /** @param {number} end bytes needed */
  constructor(end) {
    super('need more bytes');
    this.end = end;
  }
}

const utf8 = new TextDecoder('utf-8');
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** A cursor over a prefix of a file. */
class Reader {
  /**
   * @param {Uint8Array} buf the first buf.length bytes of the file
   * @param {number} fileSize
   * @param {ParseOptions} opt
   */
  constructor(buf, fileSize, opt) {
    this.buf = buf;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.size = fileSize;
    this.pos = 0;
    this.le = true;
    this.opt = opt;
    /** Byte length of the last string read. */
    this.lastLength = 0;
  }

  /** Ensures n more bytes exist; past the file end that is truncation. */
  /** @param {number} n @param {string} field */
  need(n, field) {
    const end = this.pos + n;
    if (end > this.size)
      throw new GGUFError(
        'TRUNCATED',
        this.pos,
        `file ends inside ${field} (needs ${n} bytes, ${Math.max(0, this.size - this.pos)} left)`,
      );
    if (end > this.buf.length) throw new NeedMore(end);
  }

  /** @param {string} f */ u8(f) {
    this.need(1, f);
    return this.dv.getUint8(this.pos++);
  }
  /** @param {string} f */ u32(f) {
    this.need(4, f);
    const v = this.dv.getUint32(this.pos, this.le);
    this.pos += 4;
    return v;
  }
  /** @param {string} f */ u64(f) {
    this.need(8, f);
    const v = this.dv.getBigUint64(this.pos, this.le);
    this.pos += 8;
    return v;
  }

  /** A count (u64, or u32 in v1) that must fit the file given a minimum size per item. */
  /** @param {string} field @param {number} minItem @param {boolean} v1 */
  count(field, minItem, v1) {
    const at = this.pos;
    const c = v1 ? BigInt(this.u32(field)) : this.u64(field);
    const room = BigInt(Math.max(0, this.size - this.pos));
    if (c > BigInt(MAX_ITEMS) || c * BigInt(minItem) > room) {
      throw new GGUFError('TOO_LARGE', at, `${field} ${c} cannot fit in the file (${room} bytes left)`);
    }
    return Number(c);
  }

  /** @param {string} field @param {boolean} v1 */
  string(field, v1) {
    const n = this.count(`${field} length`, 1, v1);
    this.need(n, field);
    const bytes = this.buf.subarray(this.pos, this.pos + n);
    const at = this.pos;
    this.lastLength = n;
    this.pos += n;
    if (this.opt.strictUtf8) {
      try {
        return utf8Strict.decode(bytes);
      } catch {
        throw new GGUFError('BAD_UTF8', at, `${field} is not valid UTF-8`);
      }
    }
    return utf8.decode(bytes);
  }

  /**
   * @param {number} type
   * @param {string} field
   * @param {boolean} v1
   * @param {number} depth
   * @returns {{ value: unknown, itemType?: number }}
   */
  value(type, field, v1, depth) {
    const at = this.pos;
    if (ACCESSOR[type]) {
      this.need(SIZE[type], field);
      this.pos += SIZE[type];
      return { value: /** @type {any} */ (this.dv)[`get${ACCESSOR[type]}`](at, this.le) };
    }
    switch (type) {
      case VT.BOOL:
        return { value: this.u8(field) !== 0 };
      case VT.STRING:
        return { value: this.string(field, v1) };
      case VT.ARRAY: {
        const itemType = this.u32(`${field} item type`);
        if (itemType > 12)
          throw new GGUFError('BAD_VALUE_TYPE', this.pos - 4, `${field}: unknown array item type ${itemType}`);
        return { value: this.array(itemType, field, v1, depth + 1), itemType };
      }
      default:
        throw new GGUFError('BAD_VALUE_TYPE', at - 4, `${field}: unknown value type ${type}`);
    }
  }

  /**
   * The count and items of an array at nesting level `level` (a top-level array is level 1).
   * @param {number} itemType
   * @param {string} field
   * @param {boolean} v1
   * @param {number} level
   */
  array(itemType, field, v1, level) {
    const min = itemType === VT.STRING ? (v1 ? 4 : 8) : itemType === VT.ARRAY ? 12 : SIZE[itemType];
    const n = this.count(`${field} item count`, min, v1);
    if (itemType === VT.STRING) {
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = this.string(`${field}[${i}]`, v1);
      return out;
    }
    if (itemType === VT.ARRAY) {
      // Each nesting level costs a stack frame and at least 12 bytes, and is capped: a crafted
      // file cannot recurse deeper than maxDepth.
      const maxDepth = this.opt.maxDepth ?? 4;
      if (level + 1 > maxDepth)
        throw new GGUFError('TOO_DEEP', this.pos, `${field}: arrays nested deeper than ${maxDepth} levels`);
      const out = new Array(n);
      for (let i = 0; i < n; i++) {
        const t = this.u32(`${field}[${i}] item type`);
        if (t > 12) throw new GGUFError('BAD_VALUE_TYPE', this.pos - 4, `${field}[${i}]: unknown array item type ${t}`);
        out[i] = this.array(t, `${field}[${i}]`, v1, level + 1);
      }
      return out;
    }
    if (itemType === VT.BOOL) {
      this.need(n, field);
      const out = Array.from(this.buf.subarray(this.pos, this.pos + n), (b) => b !== 0);
      this.pos += n;
      return out;
    }
    const size = SIZE[itemType];
    this.need(n * size, field);
    const bytes = this.buf.slice(this.pos, this.pos + n * size);
    this.pos += n * size;
    if (!this.le && size > 1) swapInPlace(bytes, size);
    const C = TYPED_ARRAYS[itemType];
    return new /** @type {any} */ (C)(bytes.buffer, 0, n);
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
 * Parses and validates a header from a prefix of a file of fileSize bytes.
 * @param {Uint8Array} buf
 * @param {number} fileSize
 * @param {ParseOptions} opt
 */
export function parseHeader(buf, fileSize, opt) {
  const r = new Reader(buf, fileSize, opt);
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
  const v1 = version === 1;
  // Smallest possible entries (empty name, 1-byte value, no dims) bound the counts by the file size.
  const nTensors = r.count('tensor count', v1 ? 20 : 24, v1);
  const nKV = r.count('metadata count', v1 ? 9 : 13, v1);
  /** @type {KV[]} */
  const kv = [];
  /** @type {Map<string, unknown>} */
  const metadata = new Map();
  for (let i = 0; i < nKV; i++) {
    const at = r.pos;
    const key = r.string(`metadata key #${i}`, v1);
    if (key.length === 0) throw new GGUFError('EMPTY_KEY', at, `metadata key #${i} is empty`);
    if (metadata.has(key)) throw new GGUFError('DUPLICATE_KEY', at, `duplicate metadata key ${JSON.stringify(key)}`);
    const type = r.u32(`type of ${key}`);
    if (type > 12) throw new GGUFError('BAD_VALUE_TYPE', r.pos - 4, `${key}: unknown value type ${type}`);
    const { value, itemType } = r.value(type, key, v1, 0);
    kv.push(itemType === undefined ? { key, type, value } : { key, type, value, itemType });
    metadata.set(key, value);
  }
  let alignment = DEFAULT_ALIGNMENT;
  const al = kv.find((e) => e.key === 'general.alignment');
  if (al) {
    const v = /** @type {number} */ (al.value);
    if (al.type !== VT.UINT32 || v === 0 || (v & (v - 1)) !== 0) {
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
  for (let i = 0; i < nTensors; i++) {
    const at = r.pos;
    const name = r.string(`tensor #${i} name`, v1);
    if (r.lastLength >= MAX_NAME)
      throw new GGUFError(
        'NAME_TOO_LONG',
        at,
        `tensor #${i} name is ${r.lastLength} bytes; ggml allows at most ${MAX_NAME - 1}`,
      );
    if (names.has(name)) throw new GGUFError('DUPLICATE_TENSOR', at, `duplicate tensor name ${JSON.stringify(name)}`);
    names.add(name);
    const nDims = r.u32(`${name} n_dims`);
    if (nDims > MAX_DIMS)
      throw new GGUFError('BAD_DIMS', r.pos - 4, `${name}: ${nDims} dimensions (at most ${MAX_DIMS})`);
    const dims = [];
    let total = 1n;
    for (let d = 0; d < nDims; d++) {
      const dAt = r.pos;
      const ne = v1 ? BigInt(r.u32(`${name} ne[${d}]`)) : r.u64(`${name} ne[${d}]`);
      if (ne > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: ne[${d}] = ${ne} is negative as int64`);
      total *= ne;
      if (total > I64_MAX) throw new GGUFError('OVERFLOW', dAt, `${name}: element count overflows int64`);
      dims.push(ne);
    }
    const tAt = r.pos;
    const type = r.u32(`${name} type`);
    let info;
    try {
      info = typeInfo(type);
    } catch {
      throw new GGUFError('UNKNOWN_GGML_TYPE', tAt, `${name}: unknown ggml type ${type}`);
    }
    const ne0 = nDims > 0 ? dims[0] : 1n; // missing dimensions are 1, as in ggml
    if (ne0 % BigInt(info.blockSize) !== 0n) {
      throw new GGUFError(
        'BAD_SHAPE',
        tAt,
        `${name}: ne[0] = ${ne0} is not a multiple of the ${info.name} block size ${info.blockSize}`,
      );
    }
    const oAt = r.pos;
    const offset = r.u64(`${name} offset`);
    const bytes = (total / BigInt(info.blockSize)) * BigInt(info.typeSize);
    if (offset % BigInt(alignment) !== 0n)
      throw new GGUFError(
        'BAD_OFFSET',
        oAt,
        `${name}: data offset ${offset} is not a multiple of the alignment ${alignment}`,
      );
    if (offset + bytes > BigInt(fileSize))
      throw new GGUFError(
        'BAD_OFFSET',
        oAt,
        `${name}: data (offset ${offset}, ${bytes} bytes) lies past the end of the file`,
      );
    tensors.push({
      name,
      type,
      dims: dims.map(Number),
      offset: Number(offset),
      nElements: Number(total),
      byteLength: Number(bytes),
    });
  }
  const dataOffset = pad(r.pos, alignment);
  // Data must lie inside the file and tensors must not overlap.
  const sorted = tensors
    .map((t, i) => [t, i])
    .sort((a, b) => /** @type {TensorInfo} */ (a[0]).offset - /** @type {TensorInfo} */ (b[0]).offset);
  let end = 0;
  for (const [t] of /** @type {[TensorInfo, number][]} */ (sorted)) {
    if (t.offset < end)
      throw new GGUFError('BAD_OFFSET', dataOffset + t.offset, `${t.name}: data overlaps the previous tensor`);
    end = t.offset + t.byteLength;
    if (dataOffset + end > fileSize)
      throw new GGUFError(
        'BAD_OFFSET',
        dataOffset + t.offset,
        `${t.name}: data lies past the end of the file (${fileSize} bytes)`,
      );
  }
  return { version, alignment, dataOffset, littleEndian: r.le, kv, metadata, tensors, headerBytes: r.pos };
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
 * Parses a whole GGUF file held in memory.
 * @param {ArrayBuffer | Uint8Array} data
 * @param {ParseOptions} [options]
 * @throws {GGUFError} for anything malformed, truncated or hostile
 */
export function parseGGUF(data, options = {}) {
  const buf = data instanceof Uint8Array ? data : new Uint8Array(data);
  const h = parseHeader(buf, buf.length, options);
  return {
    ...h,
    /** The bytes of one tensor (a view into the input, exactly byteLength long). */
    /** @param {string | TensorInfo} t */
    tensorBytes(t) {
      const x = findTensor(h, t);
      const s = h.dataOffset + x.offset;
      return buf.subarray(s, s + x.byteLength);
    },
  };
}
