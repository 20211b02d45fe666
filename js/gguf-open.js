// openGGUF: a GGUF file read lazily from a byte source (or the shards of a split model): the
// header first, then tensors and row ranges on demand.

import { GGUFError, readableLength } from './gguf-format.js';
import { NeedMore, parseHeader, findTensor, checkParseOptions } from './gguf-read.js';
import { toSource, signalOf } from './sources.js';
import { typeInfo } from './types.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */
/** @typedef {import('./gguf-format.js').TensorInfo} TensorInfo */
/** @typedef {import('./sources.js').ByteSource} ByteSource */
/** @typedef {import('./sources.js').OpenOptions} OpenOptions */
/**
 * @typedef {TensorInfo & { littleEndian: boolean, available?: boolean,
 *   missing?: { from: number, to: number, of: number } }} OpenTensorInfo a tensor and its shard's
 *   byte order; with allowTruncated, available: whether all its bytes are in the source, and for one
 *   that is not, missing: the bytes from … to (inclusive, in its file) that are not, of the file's
 *   declared size
 * @typedef {OpenOptions & { allowTruncated?: boolean }} OpenGGUFOptions
 */

/**
 * Byte range of rows [first, first + count) of a tensor (a row is ne0 elements; a tensor has the
 * product of ne1.. rows, so one with a zero dimension may have none).
 * @param {TensorInfo} t
 * @param {number} first
 * @param {number} count
 * @returns {{ start: number, length: number }} bytes from the tensor's start
 * @throws {TypeError} when first or count is not a number
 * @throws {RangeError} when they are not integers or the rows lie outside the tensor
 * @throws {GGUFError} for a tensor that cannot be read (TensorInfo.unreadable)
 */
export function rowRange(t, first, count) {
  if (typeof first !== 'number' || typeof count !== 'number')
    throw new TypeError(`rows of ${t.name}: first and count must be numbers`);
  readableLength(t); // an unknown type or the pre-release Q2_0 layout: its GGUFError
  // Computed without dividing: 0/0 rows would pass every range check as NaN.
  const rows = t.dims.slice(1).reduce((a, b) => a * b, 1);
  const { blockSize, typeSize } = typeInfo(t.type);
  const rowBytes = ((t.dims.length ? t.dims[0] : 1) / blockSize) * typeSize;
  if (
    !Number.isSafeInteger(first) ||
    !Number.isSafeInteger(count) ||
    first < 0 ||
    count < 0 ||
    first > rows ||
    count > rows - first
  ) {
    throw new RangeError(`rows ${first}..${first + count} are outside ${t.name}, which has ${rows} rows`);
  }
  return { start: first * rowBytes, length: count * rowBytes };
}

/** Default cap on the header size. */
const MAX_HEADER = 256 * 1024 * 1024;
/** First header read: most headers fit; a large vocabulary takes a few doublings more. */
const FIRST_READ = 1 << 20;

/**
 * Reads just enough of a source to parse its header, incrementally: the first read is up to
 * 1 MiB, and each time the parser needs more the buffer at least doubles by reading only the
 * bytes after it (no byte is read twice; O(log size) reads), up to maxHeaderBytes.
 * @param {ByteSource} src
 * @param {ParseOptions} opt
 * @param {number} [fileSize] the size the parser checks tensor data against (a truncated file's
 *   own size is smaller than its header says: allowTruncated passes a larger one)
 */
async function readHeader(src, opt, fileSize = src.size) {
  const cap = opt.maxHeaderBytes ?? MAX_HEADER;
  let buf = await src.read(0, Math.min(src.size, cap, FIRST_READ));
  for (;;) {
    let need;
    try {
      return { head: parseHeader(buf, fileSize, opt), buf };
    } catch (e) {
      if (!(e instanceof NeedMore)) throw e;
      need = e.end;
    }
    if (need > cap)
      throw new GGUFError(
        'HEADER_TOO_LARGE',
        buf.length,
        `the header of ${src.name} is larger than ${cap} bytes (maxHeaderBytes)`,
      );
    const len = Math.min(src.size, cap, Math.max(buf.length * 2, need));
    // Past the source's end: the header itself is cut short (allowTruncated never covers that).
    // The parser only asks for bytes inside the file, so len > buf.length; anything else would loop.
    if (!(len > buf.length))
      throw new GGUFError(
        'TRUNCATED',
        buf.length,
        `${src.name}: the header needs ${need} bytes, the file has ${src.size}`,
      );
    const more = await src.read(buf.length, len - buf.length);
    const grown = new Uint8Array(len);
    grown.set(buf);
    grown.set(more, buf.length);
    buf = grown;
  }
}

/**
 * @param {OpenGGUFOptions} opt
 */
function checkOptions(opt) {
  if (!opt || typeof opt !== 'object') throw new TypeError('openGGUF: options must be an object');
  checkParseOptions(opt);
  const m = opt.maxHeaderBytes;
  if (m !== undefined) {
    if (typeof m !== 'number') throw new TypeError(`openGGUF: maxHeaderBytes must be a number, got ${typeof m}`);
    if (!Number.isSafeInteger(m) || m < 1)
      throw new RangeError(`openGGUF: maxHeaderBytes must be a positive integer, got ${m}`);
  }
  if (opt.allowTruncated !== undefined && typeof opt.allowTruncated !== 'boolean')
    throw new TypeError(`openGGUF: allowTruncated must be a boolean, got ${typeof opt.allowTruncated}`);
  signalOf(opt);
}

/** The declared end of a header's tensor data: the byte after the last tensor's last byte. */
const dataEnd = (/** @type {ReturnType<typeof parseHeader>} */ h) =>
  h.tensors.reduce((a, t) => Math.max(a, h.dataOffset + t.offset + (t.byteLength ?? 0)), h.dataOffset);

/**
 * The header of a source that may be cut short after its header (allowTruncated): parsed once as
 * if the file were as long as its tensors say, then again against that length (so a Q2_0 tensor's
 * layout is settled by the declared data, not by what arrived).
 * @param {ByteSource} src
 * @param {ParseOptions} opt
 */
async function readTruncatedHeader(src, opt) {
  const { head, buf } = await readHeader(src, opt, Number.MAX_SAFE_INTEGER);
  const end = Math.max(src.size, dataEnd(head));
  return end === Number.MAX_SAFE_INTEGER ? head : parseHeader(buf, end, opt);
}

/**
 * The readers openGGUF makes (readTensor, readRows of its results): their errors are GGUFErrors
 * or the abort signal's reason already, so callers pass them on as they are (js/codec.js wraps
 * other readers' errors).
 * @type {WeakSet<Function>}
 */
export const CHECKED_READERS = new WeakSet();

/**
 * Opens a GGUF file lazily: reads and validates the header (every tensor's data must lie inside
 * the source), then reads tensors on demand. An array of sources is a split model
 * (name-00001-of-0000N.gguf): metadata from the first shard, tensors from all. Resolves to the
 * header (version, kv, metadata, tensors with their shard's byte order in `littleEndian`, ...),
 * shards, and readTensor/readRows, which return exactly the bytes asked or throw.
 * @param {unknown} source ArrayBuffer, Uint8Array, Blob/File, URL (HTTP Range), { size, read },
 *   or an array of those for a split model
 * @param {OpenGGUFOptions} [options] parse options (maxHeaderBytes, maxDepth, strictUtf8, allowV1);
 *   allowTruncated: open a file whose header is whole but whose data is cut short (a partial
 *   download): every tensor is listed, each with `available` (all its bytes are in the source),
 *   the result has `truncated` ({ size, expected } bytes, or null), and reading bytes that are
 *   missing throws a GGUFError TRUNCATED naming them;
 *   for URLs fetch, headers and allowFullDownload; and signal, an AbortSignal checked before every
 *   read of every source, now and in later readTensor/readRows calls (an abort rejects with its
 *   reason). For a timeout pass `{ signal: AbortSignal.timeout(ms) }`; it then also covers later
 *   reads, so for a deadline on opening only use AbortSignal.any or your own controller.
 * @throws {GGUFError} for a malformed file or a source that fails, returns wrong data or changed
 *   (codes include SHORT_READ, LONG_READ, CHANGED, NETWORK, NO_RANGE)
 * @throws {TypeError | RangeError} for a source or option of the wrong type or range
 */
export async function openGGUF(source, options = {}) {
  checkOptions(options);
  const list = Array.isArray(source) ? source : [source];
  if (list.length === 0) throw new TypeError('openGGUF: no sources');
  const srcs = await Promise.all(list.map((s) => toSource(s, options)));
  /** @type {ReturnType<typeof parseHeader>[]} */
  const heads = [];
  for (const s of srcs)
    heads.push(options.allowTruncated ? await readTruncatedHeader(s, options) : (await readHeader(s, options)).head);
  const h = heads[0];
  // Each tensor carries its shard's byte order: shards of a split model need not agree.
  /** @type {OpenTensorInfo[]} */
  let tensors = h.tensors.map((t) => ({ ...t, littleEndian: h.littleEndian }));
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
      // Every shard must say which of how many it is, as the first does (llama.cpp's loader
      // reads split.no and split.count from each), and count the same tensors.
      const no = hd.metadata.get('split.no');
      if (no === undefined || Number(no) !== i)
        throw new GGUFError(
          'SPLIT',
          0,
          no === undefined
            ? `shard ${i + 1} has no split.no; it is not a shard of this split model`
            : `shard ${i + 1} says split.no = ${no}; shards must be given in order`,
        );
      const c = hd.metadata.get('split.count');
      if (c === undefined || Number(c) !== count)
        throw new GGUFError(
          'SPLIT',
          0,
          `shard ${i + 1} says split.count = ${c === undefined ? '(none)' : c}, the first shard ${count}`,
        );
      const tc = hd.metadata.get('split.tensors.count');
      if (tc !== undefined && Number(tc) !== total)
        throw new GGUFError(
          'SPLIT',
          0,
          `shard ${i + 1} says split.tensors.count = ${tc}, the first shard ${h.metadata.get('split.tensors.count') ?? '(none)'}`,
        );
      for (const t of hd.tensors) {
        if (names.has(t.name))
          throw new GGUFError('DUPLICATE_TENSOR', 0, `tensor ${JSON.stringify(t.name)} appears in two shards`);
        names.add(t.name);
        tensors.push({ ...t, shard: i, littleEndian: hd.littleEndian });
      }
    });
    if (h.metadata.has('split.tensors.count') && total !== tensors.length) {
      throw new GGUFError('SPLIT', 0, `split.tensors.count is ${total} but the shards hold ${tensors.length} tensors`);
    }
  }
  const read = (/** @type {TensorInfo} */ t, /** @type {number} */ start, /** @type {number} */ length) => {
    const i = t.shard ?? 0;
    const at = heads[i].dataOffset + t.offset + start;
    if (at + length > srcs[i].size) {
      const end = dataEnd(heads[i]);
      return Promise.reject(
        new GGUFError(
          'TRUNCATED',
          Math.max(at, srcs[i].size),
          `${t.name}: data missing: bytes ${Math.max(at, srcs[i].size)}..${at + length - 1} of ${end} (${srcs[i].name} ends at byte ${srcs[i].size}, cut short)`,
        ),
      );
    }
    return srcs[i].read(at, length);
  };
  /** @type {{ size: number, expected: number } | null} */
  let truncated = null;
  if (options.allowTruncated) {
    for (const t of tensors) {
      const i = t.shard ?? 0;
      const at = heads[i].dataOffset + t.offset,
        end = at + (t.byteLength ?? 0);
      t.available = end <= srcs[i].size;
      if (!t.available) t.missing = { from: Math.max(at, srcs[i].size), to: end - 1, of: dataEnd(heads[i]) };
    }
    const size = srcs.reduce((a, s) => a + s.size, 0),
      expected = heads.reduce((a, hd, i) => a + Math.max(srcs[i].size, dataEnd(hd)), 0);
    if (expected > size) truncated = { size, expected };
  }
  const g = { ...h, tensors };
  const file = {
    ...g,
    shards: heads.length,
    truncated,
    /**
     * The bytes of one tensor, read from the source (exactly byteLength bytes, or a GGUFError; a
     * tensor whose type is unknown or in the pre-release Q2_0 layout throws its `unreadable` error).
     * @param {string | TensorInfo} name
     * @returns {Promise<Uint8Array>}
     */
    readTensor: (name) => {
      const t = findTensor(g, name);
      return read(t, 0, readableLength(t));
    },
    /**
     * Rows [first, first + count) of a tensor (a row is ne0 elements); reads only those bytes.
     * @param {string | TensorInfo} name
     * @param {number} first
     * @param {number} count
     * @returns {Promise<Uint8Array>}
     */
    readRows: (name, first, count) => {
      const t = findTensor(g, name);
      const r = rowRange(t, first, count);
      return read(t, r.start, r.length);
    },
  };
  CHECKED_READERS.add(file.readTensor);
  CHECKED_READERS.add(file.readRows);
  return file;
}
