// GGUF: a bounds-checked reader (whole files in memory, or lazily from any byte source) and a
// writer with gguf-py's layout. Every failure is a GGUFError naming the field and byte offset.

import { typeInfo } from './types.js';

/** GGUF metadata value types. */
export const GGUFValueType = Object.freeze({
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

const VT = GGUFValueType;
/** Bytes of each fixed-size value type. */
const SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];
/** The typed array the reader returns for each numeric array item type (by value-type id). */
const TYPED_ARRAYS = [
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
const ACCESSOR = TYPED_ARRAYS.map((C) => (C ? C.name.slice(0, -'Array'.length) : ''));
const MAX_ITEMS = 2 ** 30; // ggml's cap on string bytes and array items
const MAX_NAME = 64; // ggml refuses tensor names of 64 bytes or more
const MAX_DIMS = 4;
const DEFAULT_ALIGNMENT = 32;
const I64_MAX = (1n << 63n) - 1n;

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

/** Thrown inside the parser when a prefix of the file ends early; openGGUF reads more and retries. */
class NeedMore extends Error {
  /** @param {number} end bytes needed */
  constructor(end) {
    super('need more bytes');
    this.end = end;
  }
}

const utf8 = new TextDecoder('utf-8');
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

/**
 * @typedef {object} ParseOptions
 * @property {boolean} [allowV1] accept GGUF version 1 (u32 counts and lengths)
 * @property {boolean} [strictUtf8] refuse invalid UTF-8 instead of replacing it with U+FFFD
 * @property {number} [maxDepth] deepest nesting of arrays accepted (default 4)
 * @property {number} [maxHeaderBytes] openGGUF: largest header read (default 256 MiB)
 *
 * @typedef {{ key: string, type: number, value: unknown, itemType?: number }} KV
 * @typedef {{ name: string, type: number, dims: number[], offset: number, nElements: number, byteLength: number, shard?: number }} TensorInfo
 */

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

/** @param {number} n @param {number} a */
const pad = (n, a) => Math.ceil(n / a) * a;

/**
 * Parses and validates a header from a prefix of a file of fileSize bytes.
 * @param {Uint8Array} buf
 * @param {number} fileSize
 * @param {ParseOptions} opt
 */
function parseHeader(buf, fileSize, opt) {
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
function findTensor(g, t) {
  const name = typeof t === 'string' ? t : t?.name;
  const found = g.tensors.find((x) => x.name === name);
  if (!found) throw new RangeError(`no tensor named ${JSON.stringify(name)}`);
  return found;
}

/**
 * Byte range of rows [first, first + count) of a tensor (a row is ne0 elements).
 * @param {TensorInfo} t @param {number} first @param {number} count
 */
export function rowRange(t, first, count) {
  const rows = t.dims.length ? t.nElements / t.dims[0] : 1;
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(count) || first < 0 || count < 0 || first + count > rows) {
    throw new RangeError(`rows ${first}..${first + count} are outside ${t.name}, which has ${rows} rows`);
  }
  const rowBytes = t.byteLength / rows;
  return { start: first * rowBytes, length: count * rowBytes };
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

// ---- Lazy reading from any byte source ----

/**
 * A random-access byte source: its size and a way to read a range.
 * @typedef {{ size: number, read(offset: number, length: number): Promise<Uint8Array>, name: string }} ByteSource
 *
 * @typedef {ParseOptions & { fetch?: typeof fetch, headers?: Record<string, string>, allowFullDownload?: boolean }} OpenOptions
 */

/**
 * @param {ArrayBuffer | Uint8Array} data
 * @returns {ByteSource}
 */
function bufferSource(data) {
  const buf = data instanceof Uint8Array ? data : new Uint8Array(data);
  return { size: buf.length, name: 'buffer', read: async (o, n) => buf.subarray(o, o + n) };
}

/** @param {Blob} blob @returns {ByteSource} */
function blobSource(blob) {
  const name = /** @type {any} */ (blob).name ?? 'blob';
  return { size: blob.size, name, read: async (o, n) => new Uint8Array(await blob.slice(o, o + n).arrayBuffer()) };
}

/**
 * An HTTP(S) URL read with Range requests. A server that answers 200 (no Range support) is an
 * error unless allowFullDownload, which then keeps the whole body in memory.
 * @param {string} url
 * @param {OpenOptions} opt
 * @returns {Promise<ByteSource>}
 */
async function urlSource(url, opt) {
  const f = opt.fetch ?? globalThis.fetch;
  const get = async (/** @type {number} */ o, /** @type {number} */ n) => {
    const res = await f(url, { headers: { ...opt.headers, Range: `bytes=${o}-${o + n - 1}` } });
    return res;
  };
  const first = await get(0, 1);
  if (first.status === 200) {
    if (!opt.allowFullDownload) {
      await first.body?.cancel();
      throw new GGUFError(
        'NO_RANGE',
        0,
        `${url}: the server ignored the Range request (HTTP 200, not 206); pass { allowFullDownload: true } to download the whole file`,
      );
    }
    return bufferSource(new Uint8Array(await first.arrayBuffer()));
  }
  if (first.status !== 206) throw new GGUFError('HTTP', 0, `${url}: HTTP ${first.status}`);
  const cr = first.headers.get('content-range') ?? '';
  const m = /\/(\d+)\s*$/.exec(cr);
  await first.arrayBuffer();
  if (!m) throw new GGUFError('HTTP', 0, `${url}: a 206 answer without a Content-Range total (${JSON.stringify(cr)})`);
  const size = Number(m[1]);
  return {
    size,
    name: url,
    read: async (o, n) => {
      if (n === 0) return new Uint8Array(0);
      const res = await get(o, n);
      if (res.status !== 206)
        throw new GGUFError('NO_RANGE', o, `${url}: expected HTTP 206 for bytes ${o}-${o + n - 1}, got ${res.status}`);
      const b = new Uint8Array(await res.arrayBuffer());
      if (b.length !== n) throw new GGUFError('TRUNCATED', o, `${url}: asked for ${n} bytes at ${o}, got ${b.length}`);
      return b;
    },
  };
}

/**
 * @param {unknown} src
 * @param {OpenOptions} opt
 * @returns {Promise<ByteSource>}
 */
export async function toSource(src, opt) {
  if (src instanceof ArrayBuffer || src instanceof Uint8Array) return bufferSource(src);
  if (typeof Blob !== 'undefined' && src instanceof Blob) return blobSource(src);
  if (src instanceof URL || (typeof src === 'string' && /^(https?|blob|data):/i.test(src)))
    return urlSource(String(src), opt);
  // A relative URL in a page or worker resolves against its location.
  const here = /** @type {any} */ (globalThis).location?.href;
  if (typeof src === 'string' && here) return urlSource(new URL(src, here).href, opt);
  if (src && typeof src === 'object' && 'read' in src && 'size' in src) return /** @type {ByteSource} */ (src);
  throw new TypeError(
    'openGGUF: source must be an ArrayBuffer, Uint8Array, Blob/File, URL or a { size, read } source (file paths: import openGGUF from js/node.js)',
  );
}

/**
 * Reads just enough of a source to parse its header: starts small and doubles, up to
 * maxHeaderBytes (default 256 MiB).
 * @param {ByteSource} src
 * @param {ParseOptions} opt
 */
async function readHeader(src, opt) {
  const cap = opt.maxHeaderBytes ?? 256 * 1024 * 1024;
  let len = Math.min(src.size, 1 << 20);
  for (;;) {
    const buf = await src.read(0, len);
    try {
      return parseHeader(buf, src.size, opt);
    } catch (e) {
      if (!(e instanceof NeedMore)) throw e;
      if (len >= cap)
        throw new GGUFError(
          'HEADER_TOO_LARGE',
          len,
          `the header of ${src.name} is larger than ${cap} bytes (maxHeaderBytes)`,
        );
      len = Math.min(src.size, cap, Math.max(len * 2, e.end));
    }
  }
}

/**
 * Opens a GGUF file lazily: reads and validates the header (every tensor's data must lie inside
 * the source), then reads tensors on demand. An array of sources is a split model
 * (name-00001-of-0000N.gguf): metadata from the first shard, tensors from all.
 * @param {unknown} source ArrayBuffer, Uint8Array, Blob/File, URL (HTTP Range), { size, read },
 *   or an array of those for a split model
 * @param {OpenOptions} [options]
 * @throws {GGUFError}
 */
export async function openGGUF(source, options = {}) {
  const list = Array.isArray(source) ? source : [source];
  if (list.length === 0) throw new TypeError('openGGUF: no sources');
  const srcs = await Promise.all(list.map((s) => toSource(s, options)));
  /** @type {ReturnType<typeof parseHeader>[]} */
  const heads = [];
  for (const s of srcs) heads.push(await readHeader(s, options));
  const h = heads[0];
  /** @type {TensorInfo[]} */
  let tensors = h.tensors;
  if (srcs.length > 1 || h.metadata.has('split.count')) {
    const count = Number(h.metadata.get('split.count'));
    if (count !== srcs.length)
      throw new GGUFError(
        'SPLIT',
        0,
        `split.count is ${h.metadata.get('split.count')} but ${srcs.length} shard(s) were given`,
      );
    const total = Number(h.metadata.get('split.tensors.count'));
    tensors = [];
    const names = new Set();
    heads.forEach((hd, i) => {
      const no = hd.metadata.get('split.no');
      if (no !== undefined && Number(no) !== i)
        throw new GGUFError('SPLIT', 0, `shard ${i + 1} says split.no = ${no}; shards must be given in order`);
      for (const t of hd.tensors) {
        if (names.has(t.name))
          throw new GGUFError('DUPLICATE_TENSOR', 0, `tensor ${JSON.stringify(t.name)} appears in two shards`);
        names.add(t.name);
        tensors.push({ ...t, shard: i });
      }
    });
    if (h.metadata.has('split.tensors.count') && total !== tensors.length) {
      throw new GGUFError('SPLIT', 0, `split.tensors.count is ${total} but the shards hold ${tensors.length} tensors`);
    }
  }
  const read = (/** @type {TensorInfo} */ t, /** @type {number} */ start, /** @type {number} */ length) => {
    const i = t.shard ?? 0;
    return srcs[i].read(heads[i].dataOffset + t.offset + start, length);
  };
  const g = { ...h, tensors };
  return {
    ...g,
    shards: heads.length,
    /** The bytes of one tensor, read from the source. */
    /** @param {string | TensorInfo} name */
    readTensor: (name) => {
      const t = findTensor(g, name);
      return read(t, 0, t.byteLength);
    },
    /** Rows [first, first + count) of a tensor (a row is ne0 elements); reads only those bytes. */
    /** @param {string | TensorInfo} name @param {number} first @param {number} count */
    readRows: (name, first, count) => {
      const t = findTensor(g, name);
      const r = rowRange(t, first, count);
      return read(t, r.start, r.length);
    },
  };
}

// ---- Writer ----

/**
 * @typedef {{ name: string, type: number, dims: number[], data: Uint8Array }} TensorIn
 */

/**
 * The header of a GGUF v3 file (little-endian, gguf-py's layout) for tensors of the given byte
 * lengths, padded to the alignment: the data section starts right after it, and tensor i's data
 * at offsets[i] within it, each padded to the alignment. For writing large files in pieces.
 * @param {{ kv?: KV[], tensors?: { name: string, type: number, dims: number[], byteLength?: number, data?: Uint8Array }[], alignment?: number }} spec
 * @returns {{ header: Uint8Array, offsets: number[], alignment: number, dataBytes: number }}
 */
export function writeGGUFHeader(spec) {
  const kv = [...(spec.kv ?? [])];
  const tensors = spec.tensors ?? [];
  let alignment = spec.alignment ?? DEFAULT_ALIGNMENT;
  const al = kv.find((e) => e.key === 'general.alignment');
  if (al) alignment = Number(al.value);
  else if (alignment !== DEFAULT_ALIGNMENT) kv.push({ key: 'general.alignment', type: VT.UINT32, value: alignment });
  if (!Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0)
    throw new RangeError(`alignment must be a power of two, got ${alignment}`);
  const w = new Writer();
  w.bytes([0x47, 0x47, 0x55, 0x46]);
  w.u32(3);
  w.u64(BigInt(tensors.length));
  w.u64(BigInt(kv.length));
  for (const e of kv) {
    w.string(e.key);
    w.u32(e.type);
    w.value(e.type, e.value, e.itemType, e.key);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    const info = typeInfo(t.type);
    const n = t.dims.reduce((x, y) => x * y, 1);
    const want = (n / info.blockSize) * info.typeSize;
    const have = t.data ? t.data.length : t.byteLength;
    if (t.dims.length > MAX_DIMS || (t.dims.length && t.dims[0] % info.blockSize) || have !== want) {
      throw new RangeError(
        `tensor ${t.name}: dims ${JSON.stringify(t.dims)} of ${info.name} need ${want} bytes of data, got ${have}`,
      );
    }
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(BigInt(d));
    w.u32(t.type);
    w.u64(BigInt(offset));
    offsets.push(offset);
    offset += pad(want, alignment);
  }
  w.zeros(pad(w.length, alignment) - w.length);
  return { header: w.finish(), offsets, alignment, dataBytes: offset };
}

/**
 * Writes a whole GGUF v3 file (little-endian) with gguf-py's layout: header, metadata, tensor
 * infos, zero padding to the alignment, then each tensor's data padded to the alignment.
 * @param {{ kv?: KV[], tensors?: TensorIn[], alignment?: number }} spec
 * @returns {Uint8Array}
 */
export function writeGGUF(spec) {
  const { header, offsets, dataBytes } = writeGGUFHeader(spec);
  const out = new Uint8Array(header.length + dataBytes);
  out.set(header);
  (spec.tensors ?? []).forEach((t, i) => out.set(t.data, header.length + offsets[i]));
  return out;
}

class Writer {
  constructor() {
    /** @type {Uint8Array[]} */
    this.parts = [];
    this.length = 0;
    this.scratch = new DataView(new ArrayBuffer(8));
  }

  /** @param {ArrayLike<number>} b */
  bytes(b) {
    const u = b instanceof Uint8Array ? b : Uint8Array.from(b);
    this.parts.push(u);
    this.length += u.length;
  }

  /** @param {number} n */
  zeros(n) {
    if (n > 0) this.bytes(new Uint8Array(n));
  }

  /** @param {(dv: DataView) => void} set @param {number} n */
  fixed(set, n) {
    set(this.scratch);
    this.bytes(new Uint8Array(this.scratch.buffer.slice(0, n)));
  }

  /** @param {number} v */ u32(v) {
    this.fixed((d) => d.setUint32(0, v, true), 4);
  }
  /** @param {bigint} v */ u64(v) {
    this.fixed((d) => d.setBigUint64(0, v, true), 8);
  }

  /** @param {string} s */
  string(s) {
    const b = utf8Encoder.encode(s);
    this.u64(BigInt(b.length));
    this.bytes(b);
  }

  /**
   * @param {number} type
   * @param {unknown} v
   * @param {number | undefined} itemType
   * @param {string} key
   */
  value(type, v, itemType, key) {
    if (typeof type === 'number' && ACCESSOR[type]) {
      const big = type === VT.UINT64 || type === VT.INT64;
      const x = big ? BigInt(/** @type {any} */ (v)) : /** @type {number} */ (v);
      return this.fixed((d) => /** @type {any} */ (d)[`set${ACCESSOR[type]}`](0, x, true), SIZE[type]);
    }
    switch (type) {
      case VT.BOOL:
        return this.fixed((d) => d.setUint8(0, v ? 1 : 0), 1);
      case VT.STRING:
        return this.string(String(v));
      case VT.ARRAY: {
        if (itemType === undefined || itemType < 0 || itemType > 12)
          throw new TypeError(`${key}: an ARRAY value needs an itemType`);
        const items = /** @type {ArrayLike<unknown>} */ (v);
        this.u32(itemType);
        this.u64(BigInt(items.length));
        if (itemType === VT.ARRAY) {
          for (let i = 0; i < items.length; i++) this.value(VT.ARRAY, items[i], innerType(items[i]), key);
        } else {
          for (let i = 0; i < items.length; i++) this.value(itemType, items[i], undefined, key);
        }
        return;
      }
      default:
        throw new TypeError(`${key}: unknown GGUF value type ${type}`);
    }
  }

  finish() {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

/**
 * The item type of a nested array as the reader returns it (typed array kind, string[], boolean[],
 * or an array of arrays).
 * @param {unknown} a
 */
function innerType(a) {
  const k = TYPED_ARRAYS.findIndex((C) => C && a instanceof C);
  if (k >= 0) return k;
  if (Array.isArray(a)) {
    if (a.length === 0 || typeof a[0] === 'string') return VT.STRING;
    if (typeof a[0] === 'boolean') return VT.BOOL;
    if (typeof a[0] === 'object') return VT.ARRAY;
  }
  throw new TypeError('nested GGUF arrays must be typed arrays, string[], boolean[] or arrays of those');
}

/** Multi-byte fields of each codec type's block: [offset, size] pairs (half d/m/s, u32 qh). */
const FIELDS = new Map([
  [0, [[0, 4]]],
  [1, [[0, 2]]],
  [30, [[0, 2]]],
  [2, [[0, 2]]],
  [
    3,
    [
      [0, 2],
      [2, 2],
    ],
  ],
  [
    6,
    [
      [0, 2],
      [2, 4],
    ],
  ],
  [
    7,
    [
      [0, 2],
      [2, 2],
      [4, 4],
    ],
  ],
  [8, [[0, 2]]],
  [
    9,
    [
      [0, 2],
      [2, 2],
    ],
  ],
]);

/**
 * A copy of tensor data from a big-endian file in little-endian order: every d, m, s and qh field
 * of each block (and every F16/BF16/F32 value) byte-swapped; 8-bit codes stay as they are.
 * @param {number} type ggml type id (a blockquant codec type)
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
export function toLittleEndian(type, bytes) {
  const fields = FIELDS.get(type);
  if (!fields) throw new TypeError(`cannot byte-swap ggml type ${typeInfo(type).name}`);
  const { typeSize } = typeInfo(type);
  const out = bytes.slice();
  for (let o = 0; o + typeSize <= out.length; o += typeSize) {
    for (const [f, n] of fields) {
      for (let j = 0; j < n >> 1; j++) {
        const t = out[o + f + j];
        out[o + f + j] = out[o + f + n - 1 - j];
        out[o + f + n - 1 - j] = t;
      }
    }
  }
  return out;
}
