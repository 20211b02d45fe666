// Importance-matrix files, as llama-imatrix writes them and llama-quantize reads them: the GGUF
// format (general.type = "imatrix"; per weight tensor `<name>.in_sum2` and `<name>.counts`) and the
// legacy .dat. The weights come out bit-identical to the ones llama-quantize hands to
// ggml_quantize_chunk: each is one float32 division (one Math.fround per operation). Hostile files
// are refused with a GGUFError naming the entry and the byte offset; nothing is allocated before
// the file is known to hold it.

import { GGUFError, MAX_STRING_BYTES, VT } from '../gguf-format.js';
import { openGGUF } from '../gguf-open.js';
import { toSource } from '../sources.js';

/** @typedef {import('../sources.js').ByteSource} ByteSource */
/** @typedef {import('../sources.js').OpenOptions} OpenOptions */

/**
 * One weight tensor's importance data.
 * name: the model tensor it is for (blk.0.ffn_up.weight). values: every weight llama-quantize
 * keeps for it, contiguous (matrix j's weight for column i at j * cols + i). weights: one view of
 * `values` per matrix or expert (GGUF), or one over all of it (.dat, which does not store how many
 * matrices there are: split it with Imatrix.weightsFor). cols: weights per matrix (GGUF: ne0 of
 * in_sum2; .dat: all of them). counts: GGUF: the samples behind each matrix (0: never routed, its
 * weights are 1); .dat: [ncall].
 * @typedef {{ name: string, cols: number, values: Float32Array, weights: Float32Array[], counts: number[] }} ImatrixEntry
 *
 * format: which of the two the bytes were. datasets: the calibration files named in the file.
 * chunkCount: chunks the matrix was computed on (.dat: null when the file ends before it);
 * chunkSize: tokens per chunk (GGUF only; null for .dat). entries by tensor name, in file order.
 * @typedef {{ format: 'gguf' | 'dat', datasets: string[], chunkCount: number | null, chunkSize: number | null,
 *   entries: Map<string, ImatrixEntry>,
 *   weightsFor(name: string, cols: number, matrices?: number): Float32Array[] | undefined }} Imatrix
 */

// Caps. Each bounds what a crafted file can make the reader do before its bytes run out; a real
// file is far inside all of them.
/** Entries (.dat n_entries): a model has thousands of weight tensors; stops a count of 2^31 entries. */
const MAX_ENTRIES = 1 << 20;
/** Bytes of a .dat entry name: ggml names are at most 63 bytes; stops a length that claims megabytes. */
const MAX_NAME = 4096;
/** Weights of one entry (2^28 float32 = 1 GiB): above any matrix row times expert count; stops
 * allocations JS engines cannot make (typed arrays of more than 2^31 - 1 elements on some). */
const MAX_VALUES = 2 ** 28;
/** Bytes read from a .dat source at a time (a URL source makes one Range request per read). */
const CHUNK = 1 << 20;
/** Bytes of a GGUF imatrix's tensor data read at a time. */
const CHUNK_GGUF = 16 << 20;

const SUFFIXES = /** @type {const} */ (['.in_sum2', '.counts', '.in_sum']);
const F32 = 0;

/**
 * Reads an importance-matrix file: llama-imatrix's GGUF format or the legacy .dat, told apart by
 * the bytes (GGUF magic), never the name. A GGUF file is read lazily (header, then the tensors'
 * bytes); a .dat one front to back in 1 MiB reads.
 * @param {unknown} source what openGGUF takes: ArrayBuffer or view, Blob/File, URL (HTTP Range),
 *   or a { size, read } source (in Node, js/node.js's readImatrix also takes a path or FileHandle)
 * @param {OpenOptions} [options] openGGUF's options (signal, fetch, headers, allowFullDownload,
 *   maxHeaderBytes, ...)
 * @returns {Promise<Imatrix>}
 * @throws {GGUFError} for a file that is not an importance matrix, is malformed, truncated or
 *   hostile (codes: NOT_IMATRIX, MISSING_KEY, BAD_KEY, MISSING_PARTNER, BAD_SHAPE, BAD_TYPE,
 *   BAD_VALUE, BAD_COUNT, BAD_NAME, DUPLICATE_NAME, NO_ENTRIES, TRUNCATED, TRAILING_DATA, LIMIT,
 *   and the reader's and sources' own), or a source that fails
 * @throws {TypeError | RangeError} for a source or option of the wrong type
 */
export async function readImatrix(source, options = {}) {
  if (!options || typeof options !== 'object') throw new TypeError('readImatrix: options must be an object');
  const src = await toSource(source, options);
  const head = await src.read(0, Math.min(4, src.size));
  const gguf = head.length === 4 && head[0] === 0x47 && head[1] === 0x47 && head[2] === 0x55 && head[3] === 0x46;
  const { entries, ...rest } = gguf ? await readGGUF(src, options) : await readDat(src);
  return {
    ...rest,
    entries,
    /**
     * The weights for a model tensor of `matrices` matrices (ne2: experts) of `cols` columns (ne0),
     * one Float32Array per matrix, as llama-quantize takes them: undefined when the file has no
     * entry for it; a RangeError when the entry's size is not cols * matrices.
     * @param {string} name @param {number} cols @param {number} [matrices]
     */
    weightsFor(name, cols, matrices = 1) {
      const e = entries.get(name);
      if (!e) return undefined;
      if (!Number.isSafeInteger(cols) || cols < 1 || !Number.isSafeInteger(matrices) || matrices < 1)
        throw new RangeError(`weightsFor(${name}): cols and matrices must be positive integers`);
      if (e.values.length !== cols * matrices)
        throw new RangeError(
          `imatrix size ${e.values.length} for ${name} is not that of the tensor (${cols} x ${matrices} = ${cols * matrices})`,
        );
      return Array.from({ length: matrices }, (_, j) => e.values.subarray(j * cols, (j + 1) * cols));
    },
  };
}

/**
 * The weights of one matrix: sums / count in float32, or 1 where count is 0 (GGUF); values / ncall,
 * or the values as stored where ncall is 0 (.dat). `count` is a float32 already.
 * @param {Float32Array} out @param {number} at @param {Float32Array | ArrayLike<number>} sums
 * @param {number} from @param {number} n @param {number} count @param {number} ifZero NaN: keep sums
 */
function divide(out, at, sums, from, n, count, ifZero) {
  if (count > 0) for (let i = 0; i < n; i++) out[at + i] = Math.fround(sums[from + i] / count);
  else for (let i = 0; i < n; i++) out[at + i] = Number.isNaN(ifZero) ? sums[from + i] : ifZero;
}

/** The host's byte order (typed arrays use it). */
const HOST_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * float32 values from bytes in the given byte order: a copy, aligned, swapped when the orders differ.
 * @param {Uint8Array} b @param {boolean} le
 */
function floatsOf(b, le) {
  const out = new Float32Array(b.length >> 2);
  const u = new Uint8Array(out.buffer);
  u.set(b.subarray(0, u.length));
  if (le !== HOST_LE)
    for (let i = 0; i < u.length; i += 4) {
      let t = u[i];
      u[i] = u[i + 3];
      u[i + 3] = t;
      t = u[i + 1];
      u[i + 1] = u[i + 2];
      u[i + 2] = t;
    }
  return out;
}

// ---- GGUF ----

/**
 * @param {ByteSource} src
 * @param {OpenOptions} options
 */
async function readGGUF(src, options) {
  const f = await openGGUF(src, options);
  /** @param {string} key */
  const kv = (key) => f.kv.find((e) => e.key === key);
  const type = kv('general.type');
  if (!type || type.type !== VT.STRING || type.value !== 'imatrix')
    throw new GGUFError(
      'NOT_IMATRIX',
      0,
      `${src.name}: a GGUF file whose general.type is ${type ? JSON.stringify(type.value) : 'missing'}, not "imatrix"`,
    );
  // llama-quantize refuses a GGUF imatrix without these three ("missing imatrix metadata").
  for (const k of ['imatrix.datasets', 'imatrix.chunk_count', 'imatrix.chunk_size'])
    if (!kv(k)) throw new GGUFError('MISSING_KEY', 0, `${src.name}: no ${k} (llama-imatrix always writes it)`);
  const ds = /** @type {import('../gguf-format.js').KV} */ (kv('imatrix.datasets'));
  if (ds.type !== VT.ARRAY || ds.itemType !== VT.STRING)
    throw new GGUFError('BAD_KEY', 0, `${src.name}: imatrix.datasets is not an array of strings`);
  /** @param {string} k */
  const u32 = (k) => {
    const e = /** @type {import('../gguf-format.js').KV} */ (kv(k));
    if (e.type !== VT.UINT32) throw new GGUFError('BAD_KEY', 0, `${src.name}: ${k} is of type ${e.type}, not UINT32`);
    return /** @type {number} */ (e.value);
  };
  const chunkCount = u32('imatrix.chunk_count');
  const chunkSize = u32('imatrix.chunk_size');

  // The tensors by entry name: in_sum2, counts and (some versions) in_sum. Others are ignored, as
  // llama.cpp ignores them.
  /** @type {Map<string, Partial<Record<(typeof SUFFIXES)[number], (typeof f.tensors)[number]>>>} */
  const parts = new Map();
  for (const t of f.tensors) {
    const s = SUFFIXES.find((x) => t.name.endsWith(x) && t.name.length > x.length);
    if (!s) continue;
    const name = t.name.slice(0, -s.length);
    const p = parts.get(name) ?? {};
    p[s] = t;
    parts.set(name, p);
  }
  if (parts.size === 0) throw new GGUFError('NO_ENTRIES', 0, `${src.name}: no <name>.in_sum2 / <name>.counts tensors`);
  if (parts.size > MAX_ENTRIES)
    throw new GGUFError('LIMIT', 0, `${src.name}: ${parts.size} entries, more than the ${MAX_ENTRIES} accepted`);
  // The tensors' bytes through a window of CHUNK_GGUF bytes: entries come in file order, so a URL
  // source makes one Range request per window instead of three per entry.
  /** @type {Uint8Array} */
  let win = new Uint8Array(0);
  let winAt = 0;
  const span = async (/** @type {number} */ at, /** @type {number} */ n) => {
    if (at < winAt || at + n > winAt + win.length) {
      if (n > CHUNK_GGUF) return src.read(at, n);
      winAt = at;
      win = await src.read(at, Math.min(src.size - at, CHUNK_GGUF));
    }
    return win.subarray(at - winAt, at - winAt + n);
  };
  /** @type {Map<string, ImatrixEntry>} */
  const entries = new Map();
  for (const [name, p] of parts) {
    const sums = p['.in_sum2'],
      counts = p['.counts'],
      act = p['.in_sum'];
    if (!sums || !counts) {
      const has = /** @type {(typeof f.tensors)[number]} */ (sums ?? counts ?? act);
      throw new GGUFError(
        'MISSING_PARTNER',
        f.dataOffset + has.offset,
        `${name}: ${has.name} has no ${sums ? `${name}.counts` : `${name}.in_sum2`} beside it`,
      );
    }
    for (const t of [sums, counts, act]) {
      if (t && t.type !== F32)
        throw new GGUFError('BAD_TYPE', f.dataOffset + t.offset, `${t.name}: ggml type ${t.type}, not F32`);
    }
    // in_sum2 is [ne0, n_mat] (written with ggml_n_dims, so [ne0] when n_mat is 1); counts has n_mat elements.
    if (sums.dims.length > 2)
      throw new GGUFError(
        'BAD_SHAPE',
        f.dataOffset + sums.offset,
        `${sums.name}: ${sums.dims.length} dimensions, not 2`,
      );
    const ne0 = sums.dims[0] ?? 1;
    const nMat = sums.dims[1] ?? 1;
    if (sums.nElements === 0)
      throw new GGUFError('BAD_SHAPE', f.dataOffset + sums.offset, `${sums.name}: no elements ([${sums.dims}])`);
    if (sums.nElements > MAX_VALUES)
      throw new GGUFError(
        'LIMIT',
        f.dataOffset + sums.offset,
        `${sums.name}: ${sums.nElements} values, more than the ${MAX_VALUES} accepted`,
      );
    if (counts.nElements !== nMat)
      throw new GGUFError(
        'BAD_SHAPE',
        f.dataOffset + counts.offset,
        `${name}: ${counts.name} has ${counts.nElements} counts for the ${nMat} matrices of ${sums.name} [${sums.dims}]`,
      );
    if (act && act.nElements !== sums.nElements)
      throw new GGUFError(
        'BAD_SHAPE',
        f.dataOffset + act.offset,
        `${name}: ${act.name} has ${act.nElements} values, ${sums.name} ${sums.nElements}`,
      );
    const le = f.littleEndian;
    /** Reads a tensor as float32 values, each checked by `ok` (`what` names the fault). */
    const floats = async (
      /** @type {(typeof f.tensors)[number]} */ t,
      /** @type {(v: number) => boolean} */ ok,
      /** @type {string} */ what,
    ) => {
      const out = floatsOf(await span(f.dataOffset + t.offset, 4 * t.nElements), le);
      for (let i = 0; i < out.length; i++) {
        if (!ok(out[i]))
          throw new GGUFError('BAD_VALUE', f.dataOffset + t.offset + 4 * i, `${t.name}[${i}] is ${out[i]}: ${what}`);
      }
      return out;
    };
    // Sums of squares are never negative; counts are whole numbers of samples (llama-quantize
    // rounds them with lround in one version and divides by the stored float in another: they
    // agree only on whole numbers).
    const s2 = await floats(
      sums,
      (v) => Number.isFinite(v) && v >= 0,
      'a sum of squares must be finite and not negative',
    );
    const c = await floats(
      counts,
      (v) => Number.isFinite(v) && v >= 0 && Number.isInteger(v),
      'a count must be a finite whole number, not negative',
    );
    if (act) await floats(act, Number.isFinite, 'a sum of activations must be finite');
    const values = new Float32Array(s2.length);
    for (let j = 0; j < nMat; j++) divide(values, j * ne0, s2, j * ne0, ne0, c[j], 1);
    entries.set(name, {
      name,
      cols: ne0,
      values,
      weights: Array.from({ length: nMat }, (_, j) => values.subarray(j * ne0, (j + 1) * ne0)),
      counts: Array.from(c),
    });
  }
  return {
    format: /** @type {const} */ ('gguf'),
    datasets: /** @type {string[]} */ (ds.value).slice(),
    chunkCount,
    chunkSize,
    entries,
  };
}

// ---- legacy .dat ----

/** Reads a source front to back, CHUNK bytes at a time. */
class Cursor {
  /** @param {ByteSource} src */
  constructor(src) {
    this.src = src;
    this.pos = 0;
    this.buf = new Uint8Array(0);
    this.bufAt = 0; // file offset of buf[0]
  }
  get left() {
    return this.src.size - this.pos;
  }
  /**
   * The next n bytes (a view valid until the next call), or TRUNCATED naming `what`.
   * @param {number} n @param {string} what
   */
  async bytes(n, what) {
    if (n > this.left)
      throw new GGUFError(
        'TRUNCATED',
        this.pos,
        `${this.src.name}: the file ends inside ${what} (needs ${n} bytes, ${this.left} left)`,
      );
    const off = this.pos - this.bufAt;
    if (off + n > this.buf.length) {
      const rest = this.buf.subarray(off);
      const want = Math.min(this.left, Math.max(n, CHUNK));
      const more = await this.src.read(this.pos + rest.length, want - rest.length);
      const b = new Uint8Array(want);
      b.set(rest);
      b.set(more, rest.length);
      this.buf = b;
      this.bufAt = this.pos;
    }
    const at = this.pos - this.bufAt;
    this.pos += n;
    return this.buf.subarray(at, at + n);
  }
  /** A little-endian int32. @param {string} what */
  async i32(what) {
    const b = await this.bytes(4, what);
    return new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Layout (llama-imatrix's save_imatrix_legacy; int32 little-endian, as on every host that ran it):
 * n_entries; per entry: name length, name bytes, ncall, nval, nval float32 (the mean of x^2 times
 * ncall); then, in files since the dataset was recorded, the last chunk and the dataset name
 * (length, bytes). llama-quantize divides each value by ncall in float32 (keeps it when ncall is 0).
 * @param {ByteSource} src
 */
async function readDat(src) {
  const r = new Cursor(src);
  const n = await r.i32('the entry count');
  if (n < 1) throw new GGUFError('NO_ENTRIES', 0, `${src.name}: ${n} entries (not a GGUF file, nor an imatrix .dat)`);
  if (n > MAX_ENTRIES)
    throw new GGUFError('LIMIT', 0, `${src.name}: ${n} entries, more than the ${MAX_ENTRIES} accepted`);
  // Each entry takes at least 17 bytes: name length, a 1-byte name, ncall, nval, one value.
  if (n * 17 > r.left)
    throw new GGUFError('TRUNCATED', 0, `${src.name}: ${n} entries cannot fit in the ${r.left} bytes after the count`);
  /** @type {Map<string, ImatrixEntry>} */
  const entries = new Map();
  for (let i = 0; i < n; i++) {
    const at = r.pos;
    const entry = `entry #${i}`;
    const len = await r.i32(`${entry}'s name length`);
    if (len < 1 || len > MAX_NAME)
      throw new GGUFError(
        len > MAX_NAME ? 'LIMIT' : 'BAD_NAME',
        at,
        `${src.name}: ${entry}'s name is ${len} bytes (${len < 1 ? 'empty or negative' : `more than ${MAX_NAME}`})`,
      );
    const nameAt = r.pos;
    const raw = await r.bytes(len, `${entry}'s name`);
    let name;
    try {
      if (raw.includes(0)) throw new Error('NUL');
      name = utf8.decode(raw);
    } catch {
      // llama.cpp cuts a name at its first NUL: two entries could then share a name.
      throw new GGUFError('BAD_NAME', nameAt, `${src.name}: ${entry}'s name is not UTF-8 without NUL bytes`);
    }
    if (entries.has(name))
      throw new GGUFError('DUPLICATE_NAME', at, `${src.name}: a second entry for ${JSON.stringify(name)}`);
    const callAt = r.pos;
    const ncall = await r.i32(`${name}'s ncall`);
    if (ncall < 0) throw new GGUFError('BAD_COUNT', callAt, `${src.name}: ${name}: ncall is ${ncall}`);
    const valAt = r.pos;
    const nval = await r.i32(`${name}'s value count`);
    if (nval < 1) throw new GGUFError('BAD_COUNT', valAt, `${src.name}: ${name}: ${nval} values`);
    if (nval > MAX_VALUES)
      throw new GGUFError('LIMIT', valAt, `${src.name}: ${name}: ${nval} values, more than the ${MAX_VALUES} accepted`);
    const dataAt = r.pos;
    const stored = floatsOf(await r.bytes(4 * nval, `${name}'s ${nval} values`), true);
    for (let k = 0; k < nval; k++) {
      const v = stored[k];
      if (!(Number.isFinite(v) && v >= 0))
        throw new GGUFError(
          'BAD_VALUE',
          dataAt + 4 * k,
          `${src.name}: ${name}[${k}] is ${v}: a mean of squares must be finite and not negative`,
        );
    }
    const values = new Float32Array(nval);
    divide(values, 0, stored, 0, nval, Math.fround(ncall), NaN);
    entries.set(name, { name, cols: nval, values, weights: [values], counts: [ncall] });
  }
  // The trailer, absent from files written before the dataset was recorded.
  let chunkCount = null;
  /** @type {string[]} */
  const datasets = [];
  if (r.left > 0) {
    const cAt = r.pos;
    chunkCount = await r.i32('the chunk count');
    if (chunkCount < 0) throw new GGUFError('BAD_COUNT', cAt, `${src.name}: the chunk count is ${chunkCount}`);
    const lAt = r.pos;
    const len = await r.i32('the dataset name length');
    if (len < 0 || len > MAX_STRING_BYTES)
      throw new GGUFError(len < 0 ? 'BAD_NAME' : 'LIMIT', lAt, `${src.name}: the dataset name is ${len} bytes`);
    const nameAt = r.pos;
    const raw = await r.bytes(len, 'the dataset name');
    if (len > 0) {
      try {
        datasets.push(utf8.decode(raw));
      } catch {
        throw new GGUFError('BAD_NAME', nameAt, `${src.name}: the dataset name is not UTF-8`);
      }
    }
    if (r.left > 0) throw new GGUFError('TRAILING_DATA', r.pos, `${src.name}: ${r.left} bytes after the dataset name`);
  }
  return { format: /** @type {const} */ ('dat'), datasets, chunkCount, chunkSize: null, entries };
}
