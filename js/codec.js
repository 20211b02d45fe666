// The codec API over one wasm instance. Data streams through a bounded staging region of wasm
// memory in chunks, so inputs of any size work and memory stays near the staging budget.

import { GGMLType, CODEC_TYPES, typeId, typeInfo, vecDotType, byteLength } from './types.js';
import { GGUFError, rowRange, toLittleEndian } from './gguf.js';

const ALIGN = 64;
// Chunks are cut on multiples of 128 elements (4 blocks of 32, BQ_DOT_STEP in src/bq.h): the SIMD
// dot kernels sum groups of 4 blocks, so cutting there keeps a chunked dot equal to an uncut one.
const STEP = 128;
const ACC_BYTES = 16; // BQ_ACC_LANES floats
const PAGE = 65536;

/** Weight types with an integer dot against their activation type (ggml's vec_dot pairs). */
/** @type {Set<number>} */
const QDOT = new Set([GGMLType.Q4_0, GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.Q8_0]);
/** @type {Set<number>} */
const FLOAT_TYPES = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);

/**
 * @typedef {{ rmse: Float32Array, maxAbs: Float32Array, scale: Float32Array }} BlockStats
 * @typedef {(...args: number[]) => number} Kernel
 */

/** @param {number} n */
const align = (n) => Math.ceil(n / ALIGN) * ALIGN;

/**
 * @param {number | string} type
 * @returns {{ id: number, name: string, blockSize: number, typeSize: number }}
 */
function codecType(type) {
  const id = typeId(type);
  const info = typeInfo(id);
  if (!CODEC_TYPES.includes(id)) {
    throw new TypeError(
      `ggml type ${info.name} (${id}) is not supported by blockquant; supported: ` +
        CODEC_TYPES.map((t) => typeInfo(t).name).join(', '),
    );
  }
  return { id, ...info };
}

/**
 * @param {unknown} v
 * @param {string} what
 * @returns {Uint8Array}
 */
function asBytes(v, what) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError(`${what} must be a Uint8Array (or another ArrayBuffer view)`);
}

/**
 * @param {unknown} v
 * @param {string} what
 * @returns {Float32Array}
 */
function asFloats(v, what) {
  if (v instanceof Float32Array) return v;
  throw new TypeError(`${what} must be a Float32Array`);
}

/** Bytes per element of a type, as a fraction the chunk arithmetic can use. */
/** @param {{ blockSize: number, typeSize: number }} t */
const perElement = (t) => t.typeSize / t.blockSize;

export class Codec {
  /** @type {Record<string, Kernel>} */
  #k;
  /** @type {WebAssembly.Memory} */
  #mem;
  /** @type {number} */
  #base;
  /** @type {number} */
  #budget;

  /**
   * @param {WebAssembly.Instance} instance a blockquant build
   * @param {'simd128' | 'scalar'} backend
   * @param {number} stagingBytes the staging budget in bytes
   */
  constructor(instance, backend, stagingBytes) {
    this.#k = /** @type {Record<string, Kernel>} */ (/** @type {unknown} */ (instance.exports));
    this.#mem = /** @type {WebAssembly.Memory} */ (instance.exports.memory);
    this.#base = align(this.#k.bq_scratch_base());
    this.#budget = stagingBytes;
    /** Which build runs: 'simd128' or 'scalar'. */
    this.backend = backend;
    /** The raw wasm exports, for tests and benchmarks. */
    this.exports = instance.exports;
  }

  /** Bytes of wasm memory the instance holds now. */
  get memoryBytes() {
    return this.#mem.buffer.byteLength;
  }

  /**
   * Grows memory so that [base, base + bytes) exists; returns base. Every view of wasm memory is
   * made after this, per call, so none goes stale.
   * @param {number} bytes
   */
  #reserve(bytes) {
    const need = this.#base + bytes;
    const have = this.#mem.buffer.byteLength;
    if (need > have) this.#mem.grow(Math.ceil((need - have) / PAGE));
    return this.#base;
  }

  /** @param {string} name */
  #kernel(name) {
    const f = this.#k[name];
    if (typeof f !== 'function') throw new TypeError(`this blockquant build has no kernel ${name}`);
    return f;
  }

  /**
   * Elements per chunk for a given cost in bytes per element, a multiple of STEP.
   * @param {number} bytesPerElement
   */
  #chunk(bytesPerElement) {
    return Math.max(STEP, Math.floor(this.#budget / bytesPerElement / STEP) * STEP);
  }

  /** @param {number} status @param {string} name */
  static #ok(status, name) {
    if (status !== 0) throw new Error(`blockquant kernel ${name} failed (status ${status})`);
  }

  /**
   * Quantizes f32 values to whole blocks of a type, bit-exact with ggml's quantize_row_*_ref
   * (F16 and BF16 with ggml's rounding).
   * @param {number | string} type target type
   * @param {Float32Array} values a multiple of the block size (32) for the quantized types
   * @param {Uint8Array} [out] receives the blocks; must be exactly the right length
   * @returns {Uint8Array} out, or a new array
   * @throws {TypeError} unknown/unsupported type or wrong argument types
   * @throws {RangeError} a value count that is not a whole number of blocks, or a wrong out length
   */
  quantize(type, values, out) {
    const t = codecType(type);
    const x = asFloats(values, 'values');
    const bytes = byteLength(t.id, x.length);
    const y = out === undefined ? new Uint8Array(bytes) : asBytes(out, 'out');
    if (y.length !== bytes)
      throw new RangeError(`out holds ${y.length} bytes; ${x.length} ${t.name} values need ${bytes}`);
    const name = `bq_${t.name}_quantize`;
    const fn = this.#kernel(name);
    const chunk = Math.min(this.#chunk(4 + perElement(t)), Math.ceil(x.length / STEP) * STEP);
    const xp = this.#reserve(align(chunk * 4) + align(chunk * perElement(t)));
    const yp = xp + align(chunk * 4);
    for (let i = 0; i < x.length; i += chunk) {
      const k = Math.min(chunk, x.length - i);
      const kb = (k / t.blockSize) * t.typeSize;
      new Float32Array(this.#mem.buffer, xp, k).set(x.subarray(i, i + k));
      Codec.#ok(fn(xp, yp, k), name);
      y.set(new Uint8Array(this.#mem.buffer, yp, kb), (i / t.blockSize) * t.typeSize);
    }
    return y;
  }

  /**
   * Decodes whole blocks to f32 (Q8_1 as qs * d), bit-exact with ggml's dequantize_row_*.
   * @param {number | string} type
   * @param {Uint8Array} bytes a whole number of blocks
   * @param {Float32Array} [out] receives the values; must be exactly the right length
   * @returns {Float32Array}
   * @throws {TypeError} unknown/unsupported type
   * @throws {RangeError} a byte length that is not a whole number of blocks, or a wrong out length
   */
  dequantize(type, bytes, out) {
    const t = codecType(type);
    const q = asBytes(bytes, 'bytes');
    const n = this.#elements(t, q.length, 'bytes');
    const y = out === undefined ? new Float32Array(n) : asFloats(out, 'out');
    if (y.length !== n)
      throw new RangeError(`out holds ${y.length} values; ${q.length} bytes of ${t.name} decode to ${n}`);
    const name = `bq_${t.name}_dequantize`;
    const fn = this.#kernel(name);
    const chunk = Math.min(this.#chunk(4 + perElement(t)), Math.ceil(n / STEP) * STEP);
    const qp = this.#reserve(align(chunk * perElement(t)) + align(chunk * 4));
    const yp = qp + align(chunk * perElement(t));
    for (let i = 0; i < n; i += chunk) {
      const k = Math.min(chunk, n - i);
      const off = (i / t.blockSize) * t.typeSize;
      new Uint8Array(this.#mem.buffer, qp).set(q.subarray(off, off + (k / t.blockSize) * t.typeSize));
      Codec.#ok(fn(qp, yp, k), name);
      y.set(new Float32Array(this.#mem.buffer, yp, k), i);
    }
    return y;
  }

  /**
   * @param {{ name: string, blockSize: number, typeSize: number }} t
   * @param {number} len
   * @param {string} what
   */
  #elements(t, len, what) {
    if (len % t.typeSize !== 0) {
      throw new RangeError(
        `${what}: ${len} bytes is not a whole number of ${t.name} blocks (${t.typeSize} bytes each)`,
      );
    }
    return (len / t.typeSize) * t.blockSize;
  }

  /**
   * Dot product in ggml's vec_dot pairing (Q4_0.Q8_0, Q4_1.Q8_1, Q5_0.Q8_0, Q5_1.Q8_1, Q8_0.Q8_0:
   * exact integer block sums, then ggml's per-block float update), or of any supported type with
   * f32 values (decoded on the fly, no temporary array).
   * @param {number | string} typeA weight type
   * @param {Uint8Array} a blocks of typeA
   * @param {number | string} typeB the activation type (ggml's pair of typeA) or F32
   * @param {Uint8Array | Float32Array} b blocks of typeB, or f32 values when typeB is F32
   * @returns {number}
   * @throws {TypeError} unknown/unsupported type
   * @throws {RangeError} an unsupported pair (naming the valid one), or mismatched lengths
   */
  dot(typeA, a, typeB, b) {
    const ta = codecType(typeA);
    const tb = codecType(typeB);
    this.#checkPair(ta, tb);
    const av = asBytes(a, 'a');
    const n = this.#elements(ta, av.length, 'a');
    const bv = tb.id === GGMLType.F32 ? this.#f32Bytes(b, 'b') : asBytes(b, 'b');
    const nb = this.#elements(tb, bv.length, 'b');
    if (n !== nb)
      throw new RangeError(`length mismatch: a holds ${n} ${ta.name} values, b holds ${nb} ${tb.name} values`);
    const name = `bq_${ta.name}_dot_${tb.name}`;
    return this.#dotStream(this.#kernel(name), name, ta, av, tb, bv, n);
  }

  /**
   * @param {{ id: number, name: string }} ta
   * @param {{ id: number, name: string }} tb
   */
  #checkPair(ta, tb) {
    if (tb.id === GGMLType.F32) return;
    const pair = vecDotType(ta.id);
    if (QDOT.has(ta.id) && tb.id === pair) return;
    const valid = QDOT.has(ta.id)
      ? `${ta.name} pairs with ${typeInfo(pair).name} (ggml vec_dot) or f32`
      : `${ta.name} pairs only with f32`;
    throw new RangeError(`unsupported dot pair ${ta.name} . ${tb.name}: ${valid}`);
  }

  /**
   * f32 operand as bytes (a Float32Array, or bytes holding little-endian floats).
   * @param {unknown} v
   * @param {string} what
   */
  #f32Bytes(v, what) {
    if (v instanceof Float32Array) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    return asBytes(v, what);
  }

  /**
   * Streams a dot of n elements through staging; the state lives in wasm memory across chunks.
   * @param {Kernel} fn
   * @param {string} name
   * @param {{ blockSize: number, typeSize: number }} ta
   * @param {Uint8Array} a
   * @param {{ blockSize: number, typeSize: number }} tb
   * @param {Uint8Array} b
   * @param {number} n
   */
  #dotStream(fn, name, ta, a, tb, b, n) {
    const ea = perElement(ta),
      eb = perElement(tb);
    const chunk = Math.min(this.#chunk(ea + eb), Math.max(STEP, Math.ceil(n / STEP) * STEP));
    const accp = this.#reserve(ACC_BYTES + align(chunk * ea) + align(chunk * eb));
    const ap = accp + ALIGN,
      bp = ap + align(chunk * ea);
    new Float32Array(this.#mem.buffer, accp, 4).fill(0);
    for (let i = 0; i < n; i += chunk) {
      const k = Math.min(chunk, n - i);
      const heap = new Uint8Array(this.#mem.buffer);
      heap.set(a.subarray(i * ea, (i + k) * ea), ap);
      heap.set(b.subarray(i * eb, (i + k) * eb), bp);
      Codec.#ok(fn(ap, bp, k, accp), name);
    }
    return this.#k.bq_acc_sum(accp);
  }

  /**
   * y = W x for a row-major matrix of `rows` rows of quantized (or float) values and an f32
   * vector. By default x is quantized once to the row type's ggml activation type (Q8_0 or Q8_1)
   * and each row uses the integer dot, as llama.cpp does; { exact: true } uses the f32 dot.
   * Row r of the result equals dot(type, row r, ...) exactly.
   * @param {number | string} type weight type
   * @param {Uint8Array} weights rows * x.length elements of type
   * @param {number} rows
   * @param {Float32Array} x
   * @param {{ out?: Float32Array, exact?: boolean }} [options]
   * @returns {Float32Array}
   * @throws {TypeError} unknown/unsupported type
   * @throws {RangeError} mismatched sizes
   */
  matvec(type, weights, rows, x, options = {}) {
    const t = codecType(type);
    const w = asBytes(weights, 'weights');
    const v = asFloats(x, 'x');
    if (!Number.isSafeInteger(rows) || rows < 0)
      throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
    const cols = v.length;
    const rowBytes = byteLength(t.id, cols);
    if (w.length !== rows * rowBytes) {
      throw new RangeError(
        `weights hold ${w.length} bytes; ${rows} rows of ${cols} ${t.name} values need ${rows * rowBytes}`,
      );
    }
    const y = options.out === undefined ? new Float32Array(rows) : asFloats(options.out, 'out');
    if (y.length !== rows) throw new RangeError(`out holds ${y.length} values; the product has ${rows}`);
    const exact = options.exact === true || FLOAT_TYPES.has(t.id) || !QDOT.has(t.id);
    const tv = codecType(exact ? GGMLType.F32 : vecDotType(t.id));
    const vec = exact ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : this.quantize(tv.id, v);
    const suffix = `${t.name}_matvec_${tv.name}`;
    const resident = align(vec.length);
    if (resident + align(rowBytes) + ALIGN <= this.#budget) {
      // Fast path: the vector stays in wasm memory, rows stream through in chunks.
      const name = `bq_${suffix}`;
      const fn = this.#kernel(name);
      const per = Math.max(1, Math.floor((this.#budget - resident - ALIGN) / (rowBytes + 4)));
      const chunkRows = Math.max(1, Math.min(per, rows));
      const vp = this.#reserve(resident + align(chunkRows * rowBytes) + align(chunkRows * 4));
      const wp = vp + resident,
        yp = wp + align(chunkRows * rowBytes);
      new Uint8Array(this.#mem.buffer).set(vec, vp);
      for (let r = 0; r < rows; r += chunkRows) {
        const k = Math.min(chunkRows, rows - r);
        new Uint8Array(this.#mem.buffer).set(w.subarray(r * rowBytes, (r + k) * rowBytes), wp);
        Codec.#ok(fn(wp, k, cols, vp, yp), name);
        y.set(new Float32Array(this.#mem.buffer, yp, k), r);
      }
    } else {
      // A row and the vector do not fit the budget together: each row is a streamed dot, which
      // gives the same value as the matvec kernel (a row of matvec is one dot from a zero state).
      const name = `bq_${t.name}_dot_${tv.name}`;
      const fn = this.#kernel(name);
      for (let r = 0; r < rows; r++) {
        y[r] = this.#dotStream(fn, name, t, w.subarray(r * rowBytes, (r + 1) * rowBytes), tv, vec, cols);
      }
    }
    return y;
  }

  /**
   * Per-block error of quantizing values to a type and decoding them again: for each block of 32
   * values, rmse = sqrt(mean((x - x')^2)), maxAbs = max |x - x'| and the block scale d (NaN for
   * F16/BF16, which have none).
   * @param {number | string} type a quantized type, F16 or BF16
   * @param {Float32Array} values a multiple of 32
   * @returns {BlockStats}
   * @throws {TypeError} unknown/unsupported type
   * @throws {RangeError} a value count that is not a multiple of 32
   */
  blockStats(type, values) {
    const t = codecType(type);
    if (t.id === GGMLType.F32) throw new TypeError('blockStats: f32 is lossless; choose a quantized type, f16 or bf16');
    const x = asFloats(values, 'values');
    if (x.length % 32 !== 0)
      throw new RangeError(`value count ${x.length} is not a multiple of 32 (the block size of blockStats)`);
    const nb = x.length / 32;
    const res = { rmse: new Float32Array(nb), maxAbs: new Float32Array(nb), scale: new Float32Array(nb) };
    const name = `bq_${t.name}_stats`;
    const fn = this.#kernel(name);
    const chunk = Math.min(this.#chunk(4 + 12 / 32), Math.ceil(x.length / STEP) * STEP);
    const cb = chunk / 32;
    const xp = this.#reserve(align(chunk * 4) + 3 * align(cb * 4));
    const rp = xp + align(chunk * 4),
      mp = rp + align(cb * 4),
      sp = mp + align(cb * 4);
    for (let i = 0; i < x.length; i += chunk) {
      const k = Math.min(chunk, x.length - i);
      new Float32Array(this.#mem.buffer, xp, k).set(x.subarray(i, i + k));
      Codec.#ok(fn(xp, k, rp, mp, sp), name);
      const b = i / 32;
      res.rmse.set(new Float32Array(this.#mem.buffer, rp, k / 32), b);
      res.maxAbs.set(new Float32Array(this.#mem.buffer, mp, k / 32), b);
      res.scale.set(new Float32Array(this.#mem.buffer, sp, k / 32), b);
    }
    return res;
  }

  /**
   * Decodes one tensor of a GGUF file (from parseGGUF or openGGUF) to f32, reading only that
   * tensor; big-endian files are byte-swapped first.
   * @param {GGUFLike} file
   * @param {string} name
   * @returns {Promise<Float32Array>}
   */
  async dequantizeTensor(file, name) {
    const t = file.tensors.find((x) => x.name === name);
    if (!t) throw new RangeError(`no tensor named ${JSON.stringify(name)}`);
    const bytes = file.readTensor ? await file.readTensor(name) : /** @type {Function} */ (file.tensorBytes)(name);
    return this.#decodeFileBytes(file, t, bytes, t.byteLength);
  }

  /**
   * Decodes rows [first, first + count) of a tensor (a row is ne0 values), reading only those
   * bytes.
   * @param {GGUFLike} file
   * @param {string} name
   * @param {number} first
   * @param {number} count
   * @returns {Promise<Float32Array>}
   */
  async dequantizeRows(file, name, first, count) {
    const t = file.tensors.find((x) => x.name === name);
    if (!t) throw new RangeError(`no tensor named ${JSON.stringify(name)}`);
    const r = rowRange(t, first, count);
    const bytes = file.readRows
      ? await file.readRows(name, first, count)
      : /** @type {Function} */ (file.tensorBytes)(name).subarray(r.start, r.start + r.length);
    return this.#decodeFileBytes(file, t, bytes, r.length);
  }

  /**
   * Decodes bytes read from a file, in the tensor's own byte order (shards of a split model may
   * differ), after checking that the reader returned exactly the bytes asked.
   * @param {GGUFLike} file
   * @param {GGUFLike['tensors'][number]} t
   * @param {Uint8Array} bytes
   * @param {number} want
   */
  #decodeFileBytes(file, t, bytes, want) {
    if (!ArrayBuffer.isView(bytes) || bytes.byteLength !== want)
      throw new GGUFError(
        bytes?.byteLength > want ? 'LONG_READ' : 'SHORT_READ',
        0,
        `${t.name}: the reader returned ${bytes?.byteLength} bytes, not ${want}`,
      );
    return this.dequantize(t.type, (t.littleEndian ?? file.littleEndian) ? bytes : toLittleEndian(t.type, bytes));
  }
}

/**
 * @typedef {{ tensors: (import('./gguf.js').TensorInfo & { littleEndian?: boolean })[], littleEndian: boolean,
 *   readTensor?: (name: string) => Promise<Uint8Array>, readRows?: (name: string, first: number, count: number) => Promise<Uint8Array>,
 *   tensorBytes?: (name: string) => Uint8Array }} GGUFLike
 */
