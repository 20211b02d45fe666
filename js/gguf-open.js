// openGGUF: a GGUF file read lazily from a byte source (or the shards of a split model): the
// header first, then tensors and row ranges on demand.

import { GGUFError } from './gguf-format.js';
import { NeedMore, parseHeader, findTensor } from './gguf-read.js';
import { toSource } from './sources.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */
/** @typedef {import('./gguf-format.js').TensorInfo} TensorInfo */
/** @typedef {import('./sources.js').ByteSource} ByteSource */
/** @typedef {import('./sources.js').OpenOptions} OpenOptions */

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
