// The codec API over one wasm instance. Data streams through a bounded staging region of wasm
// memory in chunks, so inputs of any size work and memory stays near the staging budget.

import { GGMLType, CODEC_TYPES, typeId, typeInfo, byteLength } from './types.js';
import { GGUFError, rowRange, toLittleEndian } from './gguf.js';
import { readableLength } from './gguf-format.js';
import { Tensor, TENSOR_TOKEN, WasmHeap, residentAddress } from './tensor.js';
import { quantizeCall, EDOMAIN, domainError } from './quantize-call.js';
import { apart } from './overlap.js';
import {
  activationOf,
  asBytes,
  asFloats,
  codecType,
  dequantizeCall,
  dequantizeResidentCall,
  matvecCall,
  matvecKernels,
  productsCall,
  wholeBlocks,
} from './call-args.js';
import { BlockquantError, moduleOfKernel } from './side.js';
import { SideModules } from './side-modules.js';
import { fileTensor, readFileRows, readChecked, INTEGER_ARRAYS } from './file-tensor.js';

const ALIGN = 64;
const PAGE = 65536;
// blockStats reports the float types (one-element blocks) per this many values
// (BQ_FLOAT_STATS_BLOCK in src/generic.h).
const FLOAT_STATS_BLOCK = 32;

/**
 * @typedef {import('./file-tensor.js').GGUFLike} GGUFLike
 * @typedef {import('./file-tensor.js').TensorValues} TensorValues
 * @typedef {{ rmse: Float32Array, maxAbs: Float32Array, scale: Float32Array,
 *   sub?: { rmse: Float32Array, maxAbs: Float32Array } }} BlockStats
 * @typedef {(...args: number[]) => number} Kernel
 * @typedef {import('./types.js').TypeInfo & { id: number }} CodecType
 * @typedef {{ tname: string, tv: number, name: string, fn: Kernel, qname: string, quantize: Kernel | null }} MatvecPlan
 * @typedef {import('./quantize-call.js').QuantizeOptions} QuantizeOptions
 */

/** @param {number} a @param {number} b @returns {number} */
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
/** @param {number} a @param {number} b */
const lcm = (a, b) => (a / gcd(a, b)) * b;

/**
 * Elements at which work on a type is cut into chunks: its dot step (src/types.inc: a chunked dot
 * then equals an uncut one), or its block size for a type without dots.
 * @param {{ dotStep: number, blockSize: number }} t
 */
const stepOf = (t) => t.dotStep || t.blockSize;

/** @param {number} n */
const align = (n) => Math.ceil(n / ALIGN) * ALIGN;

/** Bytes per element of a type, as a fraction the chunk arithmetic can use. */
/** @param {{ blockSize: number, typeSize: number }} t */
const perElement = (t) => t.typeSize / t.blockSize;

/**
 * The address of a resident tensor of codec, after the handle checks of js/tensor.js (a real
 * handle, of this codec, not disposed): for ThreadedCodec, whose handles its main codec makes.
 * @type {(codec: Codec, W: unknown) => number}
 */
export let handleAddress;

export class Codec {
  static {
    handleAddress = (codec, W) => residentAddress(W, codec.#heap);
  }

  /** @type {Record<string, Kernel>} */
  #k;
  /** @type {WebAssembly.Memory} */
  #mem;
  /** @type {number} */
  #base;
  /** @type {number} */
  #budget;
  /** Bytes of a dot state (BQ_ACC_LANES floats). */
  #accBytes;
  /** Bytes reserved for staging at base: the budget, plus slack for alignment and minimum chunks. */
  #stageBytes;
  /** Resident tensors and large per-call scratch, above staging (js/tensor.js). */
  #heap;
  /** The split layout's side modules (js/side-modules.js). */
  /** @type {SideModules} */
  #modules;

  /**
   * @param {WebAssembly.Instance} instance a blockquant build
   * @param {import('./loader.js').Backend} backend
   * @param {number} stagingBytes the staging budget in bytes
   * @param {(name: string) => Promise<WebAssembly.Module>} [sides] for a core of the split layout:
   *   compiles the named side module of its build (src/modules.inc)
   */
  constructor(instance, backend, stagingBytes, sides) {
    // A copy: enable() adds the side modules' kernels to it.
    this.#k = /** @type {Record<string, Kernel>} */ ({ ...instance.exports });
    this.#mem = /** @type {WebAssembly.Memory} */ (instance.exports.memory);
    this.#base = align(this.#k.bq_scratch_base());
    this.#budget = stagingBytes;
    this.#accBytes = 4 * this.#k.bq_acc_lanes();
    this.#stageBytes = align(stagingBytes) + PAGE;
    this.#heap = new WasmHeap(this.#mem, this.#base + this.#stageBytes);
    this.#modules = new SideModules(sides ?? null, backend, this.#k, (n, what) => this.#heap.alloc(n, what));
    /** Which build runs: 'simd128' or 'scalar'. */
    this.backend = backend;
    /** The raw wasm exports, for tests and benchmarks (with the enabled side modules' kernels). */
    this.exports = /** @type {WebAssembly.Exports} */ (/** @type {unknown} */ (this.#k));
  }

  /**
   * The modules of the split layout (src/modules.inc) and whether each is loaded: a whole build
   * has every module loaded; a core loads the others with enable(), or the async calls that need
   * them do.
   * @returns {{ name: string, what: string, loaded: boolean }[]}
   */
  get modules() {
    return this.#modules.list();
  }

  /**
   * Which module of the split layout holds a type's kernel for an operation, and whether this
   * codec has it loaded now (always, on a whole build).
   * @param {number | string} type
   * @param {import('./side-modules.js').ModuleOp} [op]
   *   quantize: without importance weights; quantize_rows: with them
   * @returns {{ module: string, loaded: boolean }}
   * @throws {TypeError} an unknown type or operation
   */
  moduleOf(type, op = 'dequantize') {
    return this.#modules.moduleOf(type, op);
  }

  /**
   * What the package has for a type (typeInfo(type): its operations and the module of each) and
   * what this codec has loaded now: loaded[op] for each op in modules.
   * @param {number | string} type
   * @returns {import('./types.js').TypeInfo & { loaded: Partial<Record<import('./types.js').ModuleOp, boolean>> }}
   * @throws {TypeError} for an unknown type
   */
  typeInfo(type) {
    const info = typeInfo(type);
    /** @type {Partial<Record<import('./types.js').ModuleOp, boolean>>} */
    const loaded = {};
    for (const [op, m] of Object.entries(info.modules))
      loaded[/** @type {import('./types.js').ModuleOp} */ (op)] = this.#modules.loaded(/** @type {string} */ (m));
    return { ...info, loaded };
  }

  /**
   * Loads side modules of the split layout into this codec (a no-op for a loaded one, and on a
   * whole build). Afterwards the synchronous calls that need them work.
   * @param {...string} names module names: 'quant', 'dot', 'grid', 'imat' (MODULE_NAMES)
   * @returns {Promise<void>}
   * @throws {TypeError} an unknown module name
   * @throws {BlockquantError} MODULE_MISSING when the module's file cannot be loaded
   */
  enable(...names) {
    return this.#modules.enable(names);
  }

  /** Worker threads the heavy calls run on: 1 for this synchronous codec (init({ threads }) gives a ThreadedCodec). */
  get threads() {
    return 1;
  }

  /** Bytes of wasm memory the instance holds now (it grows as needed and never shrinks). */
  get memoryBytes() {
    return this.#mem.buffer.byteLength;
  }

  /** Bytes of wasm memory held by live tensor handles (each rounded up to 64 bytes). */
  get residentBytes() {
    return this.#heap.held - this.tableBytes - this.#modules.bytes;
  }

  /**
   * Grows memory so that [base, base + bytes) exists; returns base. Every view of wasm memory is
   * made after this, per call, so none goes stale.
   * @param {number} bytes
   */
  #reserve(bytes) {
    // The heap starts right above staging: a chunk past it would overwrite resident tensors.
    if (bytes > this.#stageBytes) throw new Error(`blockquant: staging request of ${bytes} bytes exceeds the region`);
    const need = this.#base + bytes;
    const have = this.#mem.buffer.byteLength;
    if (need > have) this.#mem.grow(Math.ceil((need - have) / PAGE));
    return this.#base;
  }

  /** @param {string} name @param {string} [type] the type the call is for, for the message */
  #kernel(name, type) {
    const f = this.#k[name];
    const m = typeof f === 'function' ? null : moduleOfKernel(name);
    if (m && !this.#modules.loaded(m.module))
      throw new BlockquantError(
        'MODULE_NOT_LOADED',
        `type ${type ?? m.type} needs module '${m.module}': await bq.enable('${m.module}')`,
      );
    if (typeof f !== 'function') throw new TypeError(`this blockquant build has no kernel ${name}`);
    return f;
  }

  /**
   * Elements per chunk for a given cost in bytes per element, a multiple of step, and no more
   * than n rounded up to one.
   * @param {number} bytesPerElement
   * @param {number} step
   * @param {number} n
   */
  #chunk(bytesPerElement, step, n) {
    const fit = Math.max(step, Math.floor(this.#budget / bytesPerElement / step) * step);
    return Math.min(fit, Math.max(step, Math.ceil(n / step) * step));
  }

  /** @param {number} status @param {string} name */
  static #ok(status, name) {
    if (status !== 0) throw new Error(`blockquant kernel ${name} failed (status ${status})`);
  }

  /**
   * Quantizes f32 values to whole blocks of a type, byte-identical with what llama.cpp writes:
   * ggml_quantize_chunk(type, values, out, 0, rows, rowLength, imatrix), with importance weights
   * when `imatrix` is given (one per column) and without them otherwise (for most types ggml's
   * quantize_row_<type>_ref; F16 and BF16 with ggml's rounding). The grid types build their search
   * tables on first use (prepareQuantize).
   * @overload
   * @param {number | string} type target type
   * @param {Float32Array} values whole rows of rowLength values (one row by default)
   * @param {QuantizeOptions & { out?: undefined }} [options] { imatrix, rowLength }
   * @returns {Uint8Array<ArrayBuffer>} a new array
   * @throws {TypeError} unknown/unsupported type, wrong argument types, or a type ggml quantizes
   *   only with importance weights (IQ2_XXS, IQ2_XS, IQ1_S) called without them
   * @throws {RangeError} a rowLength that is not a whole number of blocks or does not divide the
   *   values, an imatrix of the wrong length or with a non-finite or negative weight, a wrong out
   *   length; rows ggml's quantizer aborts on (IQ3_XXS, IQ3_S on some NaN, Inf or overflowing rows)
   */
  /**
   * @template {Uint8Array} O
   * @overload
   * @param {number | string} type
   * @param {Float32Array} values
   * @param {O | QuantizeOptions & { out?: O }} [options] { imatrix, rowLength, out } (out alone, as a
   *   Uint8Array, is the older form)
   * @returns {O} out
   */
  /**
   * As the overloads say: a new array, or out filled.
   * @param {number | string} type
   * @param {Float32Array} values
   * @param {QuantizeOptions | Uint8Array} [options]
   * @returns {Uint8Array}
   */
  quantize(type, values, options) {
    const c = quantizeCall(type, values, options);
    if (c.byRows) this.#quantizeRows(c);
    else this.#quantizeBlocks(c);
    return c.y;
  }

  /**
   * A quantize call on any whole number of blocks, streamed through staging in chunks.
   * @param {import('./quantize-call.js').QuantizeCall} c
   */
  #quantizeBlocks({ t, x, y, kernel }) {
    const fn = this.#kernel(kernel);
    const chunk = this.#chunk(4 + perElement(t), stepOf(typeInfo(t.id)), x.length);
    const xp = this.#reserve(align(chunk * 4) + align(chunk * perElement(t)));
    const yp = xp + align(chunk * 4);
    for (let i = 0; i < x.length; i += chunk) {
      const k = Math.min(chunk, x.length - i);
      const kb = (k / t.blockSize) * t.typeSize;
      new Float32Array(this.#mem.buffer, xp, k).set(x.subarray(i, i + k));
      Codec.#ok(fn(xp, yp, k), kernel);
      y.set(new Uint8Array(this.#mem.buffer, yp, kb), (i / t.blockSize) * t.typeSize);
    }
  }

  /**
   * A quantize call on whole rows with the rows kernel (importance weights, or a type that has
   * only that kernel): as many rows per chunk as staging holds, or one row at a time in heap
   * scratch when a row does not fit.
   * @param {import('./quantize-call.js').QuantizeCall} c
   */
  #quantizeRows({ t, x, y, cols, rows, rowBytes, imatrix, kernel }) {
    if (rows === 0) return;
    this.prepareQuantize(t.id);
    const fn = this.#kernel(kernel);
    const wb = imatrix ? align(cols * 4) : 0;
    const chunkRows = Math.min(rows, Math.max(1, Math.floor((this.#budget - wb) / (cols * 4 + rowBytes))));
    const xb = align(chunkRows * cols * 4);
    const need = wb + xb + align(chunkRows * rowBytes);
    const temp = need > this.#stageBytes;
    const base = temp ? this.#heap.alloc(need, `quantize scratch for rows of ${cols} values`) : this.#reserve(need);
    try {
      const xp = base + wb,
        yp = xp + xb;
      if (imatrix) new Float32Array(this.#mem.buffer, base, cols).set(imatrix);
      for (let r = 0; r < rows; r += chunkRows) {
        const k = Math.min(chunkRows, rows - r);
        new Float32Array(this.#mem.buffer, xp, k * cols).set(x.subarray(r * cols, (r + k) * cols));
        const status = fn(xp, yp, k, cols, imatrix ? base : 0);
        if (status === EDOMAIN) {
          // Which row: one at a time (their bytes do not depend on each other).
          let bad = 0;
          while (bad < k - 1 && fn(xp + bad * cols * 4, yp, 1, cols, imatrix ? base : 0) === 0) bad++;
          throw domainError(t.name, r + bad);
        }
        Codec.#ok(status, kernel);
        y.set(new Uint8Array(this.#mem.buffer, yp, k * rowBytes), r * rowBytes);
      }
    } finally {
      if (temp) this.#heap.free(base, need);
    }
  }

  /** @type {{ id: number, ptr: number, bytes: number }[]} the search tables built, in order */
  #tables = [];

  /**
   * Builds the search tables a type's quantizer needs, if it needs any and they are not built yet
   * (the grid types: ggml's iq2xs_init_impl / iq3xs_init_impl tables, equal to ggml's; IQ1_S and
   * IQ1_M share theirs). quantize does this on first use; calling it ahead moves the cost (tens of
   * milliseconds, up to about 3 MB of wasm memory) to a time of your choosing. The tables live in
   * this codec's wasm memory (counted in memoryBytes and tableBytes) until freeTables().
   * @param {number | string} type
   * @returns {number} bytes the tables of type take (0 when its quantizer needs none)
   * @throws {TypeError} for an unknown type
   * @throws {RangeError} when wasm memory cannot hold them
   */
  prepareQuantize(type) {
    const id = typeId(type);
    const x = this.#k;
    const bytes = this.#kernel('bq_quant_tables_bytes', typeInfo(id).name)(id);
    if (bytes === 0 || x.bq_quant_tables_ready(id)) return bytes;
    const ptr = this.#heap.alloc(bytes, `the ${typeInfo(id).name} quantizer's search tables`);
    const status = x.bq_quant_tables_init(id, ptr);
    if (status !== 0) {
      this.#heap.free(ptr, bytes);
      throw new Error(`blockquant: building the ${typeInfo(id).name} search tables failed (status ${status})`);
    }
    this.#tables.push({ id, ptr, bytes });
    return bytes;
  }

  /** Bytes of wasm memory held by the quantizers' search tables (prepareQuantize). */
  get tableBytes() {
    return this.#tables.reduce((s, t) => s + WasmHeap.size(t.bytes), 0);
  }

  /**
   * Frees the quantizers' search tables; the next quantize to a grid type builds them again.
   * (Wasm memory never shrinks: the space is reused by later tensors and tables.)
   */
  freeTables() {
    for (const t of this.#tables) {
      this.#k.bq_quant_tables_drop(t.id);
      this.#heap.free(t.ptr, t.bytes);
    }
    this.#tables = [];
  }

  /**
   * Decodes a resident tensor (read in place) to a new array.
   * @overload
   * @param {Tensor} tensor a resident tensor of this codec
   * @param {{ out?: undefined }} [options]
   * @returns {Float32Array<ArrayBuffer>}
   */
  /**
   * Decodes a resident tensor (read in place) into out.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor} tensor a resident tensor of this codec
   * @param {{ out?: O }} options out: receives rows * cols values
   * @returns {O} out
   */
  /**
   * Decodes whole blocks to f32 (Q8_1 as qs * d), bit-exact with ggml's dequantize_row_*.
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} bytes a whole number of blocks
   * @param {undefined} [out]
   * @returns {Float32Array<ArrayBuffer>}
   */
  /**
   * Decodes whole blocks to f32 (Q8_1 as qs * d) into out, bit-exact with ggml's dequantize_row_*.
   * @template {Float32Array} O
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} bytes a whole number of blocks
   * @param {O} [out] receives the values; must be exactly the right length
   * @returns {O} out
   */
  /**
   * Decodes whole blocks to f32 (Q8_1 as qs * d), bit-exact with ggml's dequantize_row_*: the
   * bytes given, or a resident tensor's (`dequantize(W, { out })`, read in place).
   * @param {number | string | Tensor} type
   * @param {Uint8Array | { out?: Float32Array }} [bytes] a whole number of blocks
   * @param {Float32Array} [out] receives the values; must be exactly the right length
   * @returns {Float32Array}
   * @throws {TypeError} unknown/unsupported type, or a disposed handle or one of another codec
   * @throws {RangeError} a byte length that is not a whole number of blocks, or a wrong out length
   */
  dequantize(type, bytes, out) {
    if (type instanceof Tensor) return this.#dequantizeResident(type, bytes);
    // (bytes that overlap out are read as they were at the call)
    const { t, q: qa, y } = dequantizeCall(type, bytes, out);
    const n = y.length;
    const name = `bq_${t.name}_dequantize`;
    const fn = this.#kernel(name);
    const chunk = this.#chunk(4 + perElement(t), stepOf(t), n);
    const qp = this.#reserve(align(chunk * perElement(t)) + align(chunk * 4));
    const yp = qp + align(chunk * perElement(t));
    for (let i = 0; i < n; i += chunk) {
      const k = Math.min(chunk, n - i);
      const off = (i / t.blockSize) * t.typeSize;
      new Uint8Array(this.#mem.buffer, qp).set(qa.subarray(off, off + (k / t.blockSize) * t.typeSize));
      Codec.#ok(fn(qp, yp, k), name);
      y.set(new Float32Array(this.#mem.buffer, yp, k), i);
    }
    return y;
  }

  /**
   * Decodes a resident tensor in chunks of staging, reading its bytes where they are.
   * @param {Tensor} W
   * @param {unknown} options
   */
  #dequantizeResident(W, options = {}) {
    const ptr = residentAddress(W, this.#heap);
    const { t, y } = dequantizeResidentCall(W, options);
    const n = y.length;
    const name = `bq_${t.name}_dequantize`;
    const fn = this.#kernel(name);
    const chunk = this.#chunk(4, stepOf(t), n);
    const yp = this.#reserve(align(chunk * 4));
    for (let i = 0; i < n; i += chunk) {
      const k = Math.min(chunk, n - i);
      Codec.#ok(fn(ptr + (i / t.blockSize) * t.typeSize, yp, k), name);
      y.set(new Float32Array(this.#mem.buffer, yp, k), i);
    }
    return y;
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
    const ta = codecType(typeA, 'dotF32', 'dot');
    const tb = codecType(typeB, 'quantize', 'dot');
    this.#checkPair(ta, tb);
    const av = asBytes(a, 'a');
    const n = wholeBlocks(ta, av.length, 'a');
    const bv = tb.id === GGMLType.F32 ? this.#f32Bytes(b, 'b') : asBytes(b, 'b');
    const nb = wholeBlocks(tb, bv.length, 'b');
    if (n !== nb)
      throw new RangeError(`length mismatch: a holds ${n} ${ta.name} values, b holds ${nb} ${tb.name} values`);
    const name = `bq_${ta.name}_dot_${tb.name}`;
    return this.#dotStream(this.#kernel(name), name, ta, av, tb, bv, n);
  }

  /**
   * The pairs of the type table: f32 for any type with an f32 dot, and its vec_dot type where it
   * has that dot.
   * @param {CodecType} ta
   * @param {CodecType} tb
   */
  #checkPair(ta, tb) {
    if (tb.id === GGMLType.F32 || (ta.dot && tb.id === ta.vecDot)) return;
    const valid = ta.dot
      ? `${ta.name} pairs with ${typeInfo(ta.vecDot).name} (ggml vec_dot) or f32`
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
   * Streams a dot of n elements through staging, cut on multiples of both types' dot steps; the
   * state lives in wasm memory across chunks and is summed by the pair's own sum.
   * @param {Kernel} fn
   * @param {string} name
   * @param {CodecType} ta
   * @param {Uint8Array} a
   * @param {CodecType} tb
   * @param {Uint8Array} b
   * @param {number} n
   */
  #dotStream(fn, name, ta, a, tb, b, n) {
    const ea = perElement(ta),
      eb = perElement(tb);
    const chunk = this.#chunk(ea + eb, lcm(stepOf(ta), stepOf(tb)), n);
    const accp = this.#reserve(align(this.#accBytes) + align(chunk * ea) + align(chunk * eb));
    const ap = accp + align(this.#accBytes),
      bp = ap + align(chunk * ea);
    new Uint8Array(this.#mem.buffer, accp, this.#accBytes).fill(0);
    for (let i = 0; i < n; i += chunk) {
      const k = Math.min(chunk, n - i);
      const heap = new Uint8Array(this.#mem.buffer);
      heap.set(a.subarray(i * ea, (i + k) * ea), ap);
      heap.set(b.subarray(i * eb, (i + k) * eb), bp);
      Codec.#ok(fn(ap, bp, k, accp), name);
    }
    return this.#kernel(`${name}_sum`)(accp);
  }

  /**
   * y = W x for resident weights (bq.tensor, bq.loadTensor), read in place, as a new array.
   * @overload
   * @param {Tensor} tensor resident weights of this codec
   * @param {Float32Array} x tensor.cols values
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Float32Array<ArrayBuffer>}
   */
  /**
   * y = W x for resident weights (bq.tensor, bq.loadTensor), read in place, into out.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor} tensor resident weights of this codec
   * @param {Float32Array} x tensor.cols values
   * @param {{ out?: O, exact?: boolean }} options out: receives tensor.rows values
   * @returns {O} out
   */
  /**
   * y = W x for rows of quantized (or float) values, copied through staging, as a new array.
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} weights
   * @param {number} rows
   * @param {Float32Array} x
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Float32Array<ArrayBuffer>}
   */
  /**
   * y = W x for rows of quantized (or float) values, copied through staging, into out.
   * @template {Float32Array} O
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} weights
   * @param {number} rows
   * @param {Float32Array} x
   * @param {{ out?: O, exact?: boolean }} options out: receives rows values
   * @returns {O} out
   */
  /**
   * y = W x for a row-major matrix of `rows` rows of quantized (or float) values and an f32
   * vector. By default x is quantized once to the row type's ggml activation type (Q8_0, Q8_1 or
   * Q8_K) and each row uses the integer dot, as llama.cpp does; { exact: true } uses the f32 dot.
   * Row r of the result equals dot(type, row r, ...) exactly. `matvec(W, x, options)` takes a
   * resident tensor (bq.tensor, bq.loadTensor) and reads its weights in place, with the same
   * result as passing its bytes; `matvec(type, weights, rows, x, options)` copies the weights
   * through staging on every call.
   * @param {number | string | Tensor} type weight type, or a tensor handle
   * @param {Uint8Array | Float32Array} weights rows * x.length elements of type (x for a handle)
   * @param {number | { out?: Float32Array, exact?: boolean }} [rows] (options for a handle)
   * @param {Float32Array} [x]
   * @param {{ out?: Float32Array, exact?: boolean }} [options] out: receives the rows values
   * @returns {Float32Array} out, or a new array of rows values
   * @throws {TypeError} unknown/unsupported type; a disposed handle or one of another codec
   * @throws {RangeError} mismatched sizes
   */
  matvec(type, weights, rows, x, options = {}) {
    if (type instanceof Tensor) {
      const o = /** @type {{ out?: Float32Array, exact?: boolean }} */ (rows ?? {});
      return this.#matvecResident([type], weights, o.exact, o.out === undefined ? undefined : [o.out])[0];
    }
    // (inputs that overlap out are read as they were at the call)
    const c = matvecCall(type, weights, rows, x, options);
    const { t, w, v, y, cols, rowBytes } = c;
    const n = c.rows;
    const tv = codecType(activationOf(t, c.exact), 'quantize');
    const exact = tv.id === GGMLType.F32;
    const suffix = `${t.name}_matvec_${tv.name}`;
    this.#kernel(`bq_${suffix}`); // before the vector's quantize: a missing module is named for the matvec
    const vec = exact ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : this.quantize(tv.id, v);
    const resident = align(vec.length);
    if (resident + align(rowBytes) + ALIGN <= this.#budget) {
      // Fast path: the vector stays in wasm memory, rows stream through in chunks.
      const name = `bq_${suffix}`;
      const fn = this.#kernel(name);
      const per = Math.max(1, Math.floor((this.#budget - resident - ALIGN) / (rowBytes + 4)));
      const chunkRows = Math.max(1, Math.min(per, n));
      const vp = this.#reserve(resident + align(chunkRows * rowBytes) + align(chunkRows * 4));
      const wp = vp + resident,
        yp = wp + align(chunkRows * rowBytes);
      new Uint8Array(this.#mem.buffer).set(vec, vp);
      for (let r = 0; r < n; r += chunkRows) {
        const k = Math.min(chunkRows, n - r);
        new Uint8Array(this.#mem.buffer).set(w.subarray(r * rowBytes, (r + k) * rowBytes), wp);
        Codec.#ok(fn(wp, k, cols, vp, yp), name);
        y.set(new Float32Array(this.#mem.buffer, yp, k), r);
      }
    } else {
      // A row and the vector do not fit the budget together: each row is a streamed dot, which
      // gives the same value as the matvec kernel (a row of matvec is one dot from a zero state).
      const name = `bq_${t.name}_dot_${tv.name}`;
      const fn = this.#kernel(name);
      for (let r = 0; r < n; r++) {
        y[r] = this.#dotStream(fn, name, t, w.subarray(r * rowBytes, (r + 1) * rowBytes), tv, vec, cols);
      }
    }
    return y;
  }

  /**
   * y_i = W_i x for several resident tensors that read the same x, as new arrays.
   * @overload
   * @param {Tensor[]} tensors
   * @param {Float32Array} x
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Float32Array<ArrayBuffer>[]}
   */
  /**
   * y_i = W_i x for several resident tensors that read the same x, into out's arrays.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor[]} tensors
   * @param {Float32Array} x
   * @param {{ out?: O[], exact?: boolean }} options out: one array per tensor
   * @returns {O[]} out's arrays
   */
  /**
   * y_i = W_i x for several resident tensors that read the same x (a layer's Q, K and V): x is
   * quantized once per activation type they need (Q8_0, Q8_1, Q8_K; f32 with { exact: true }) and
   * shared. Each result equals matvec(W_i, x, options) exactly.
   * @param {Tensor[]} tensors handles of this codec, each with x.length columns
   * @param {Float32Array} x
   * @param {{ out?: Float32Array[], exact?: boolean }} [options] out: one array per tensor, each of
   *   its rows values
   * @returns {Float32Array[]} the products, in the order of tensors (out's arrays when given)
   * @throws {TypeError} a non-handle, a disposed handle or one of another codec; wrong types
   * @throws {RangeError} a tensor whose column count is not x.length, or a wrong out length
   */
  matvecs(tensors, x, options = {}) {
    if (!Array.isArray(tensors)) throw new TypeError('tensors must be an array of tensor handles');
    const o = options ?? {};
    return this.#matvecResident(tensors, x, o.exact, o.out);
  }

  /**
   * The handle form of matvec and matvecs: everything checked first, x copied and quantized once
   * per activation type into staging (or heap scratch when it does not fit), then each kernel runs
   * on the resident weights and writes y into wasm memory, which is copied out.
   * @param {unknown[]} list
   * @param {unknown} x
   * @param {unknown} exactOption
   * @param {unknown} outs
   * @returns {Float32Array[]}
   */
  #matvecResident(list, x, exactOption, outs) {
    const c = productsCall(list, x, exactOption, outs, (W) => residentAddress(W, this.#heap));
    const { v, cols } = c;
    /** @type {{ ptr: number, rows: number, plan: MatvecPlan, y: Float32Array }[]} */
    const jobs = [];
    /** @type {MatvecPlan[]} one per activation type, in first-use order */
    const acts = [];
    let qBytes = 0,
      maxRows = 0;
    for (const { W, at, rows, y } of c.jobs) {
      const plan = this.#matvecPlan(W.type, c.exact);
      jobs.push({ ptr: at, rows, plan, y });
      if (!acts.some((a) => a.tv === plan.tv)) acts.push(plan);
      if (plan.quantize) qBytes = Math.max(qBytes, byteLength(plan.tv, cols));
      maxRows = Math.max(maxRows, rows);
    }
    const xb = align(cols * 4),
      qb = align(qBytes);
    const need = xb + qb + align(maxRows * 4);
    const temp = need > this.#stageBytes;
    const xp = temp ? this.#heap.alloc(need, `matvec scratch for ${cols} columns`) : this.#reserve(need);
    try {
      const qp = xp + xb,
        yp = qp + qb;
      new Float32Array(this.#mem.buffer, xp, cols).set(v);
      for (const a of acts) {
        let vp = xp;
        if (a.quantize) {
          Codec.#ok(a.quantize(xp, qp, cols), a.qname);
          vp = qp;
        }
        for (const j of jobs) {
          if (j.plan.tv !== a.tv) continue;
          Codec.#ok(j.plan.fn(j.ptr, j.rows, cols, vp, yp), j.plan.name);
          j.y.set(new Float32Array(this.#mem.buffer, yp, j.rows));
        }
      }
    } finally {
      if (temp) this.#heap.free(xp, need);
    }
    return jobs.map((j) => j.y);
  }

  /** @type {Map<number, MatvecPlan>} */
  #plans = new Map();

  /**
   * The kernels of a matvec on weights of a type, looked up once per type and mode: the pair's
   * matvec, and the quantizer of its activation type (none for f32 activations).
   * @param {number} type
   * @param {boolean} exact
   * @returns {MatvecPlan}
   */
  #matvecPlan(type, exact) {
    const key = type * 2 + (exact ? 1 : 0);
    let plan = this.#plans.get(key);
    if (plan) return plan;
    const t = codecType(type, 'matvec');
    const { tv, name, qname } = matvecKernels(t, exact);
    plan = {
      tname: t.name,
      tv,
      name,
      fn: this.#kernel(name),
      qname,
      quantize: tv === GGMLType.F32 ? null : this.#kernel(qname),
    };
    this.#plans.set(key, plan);
    return plan;
  }

  /**
   * Copies a matrix of `rows` rows of `cols` values into wasm memory once and returns a handle for
   * matvec, matvecs and dequantize, which then read the weights in place. The memory (byteLength
   * rounded up to 64 bytes) is held until handle.dispose(); the caller's bytes are not kept.
   * @param {number | string} type any type blockquant decodes
   * @param {Uint8Array} bytes rows * cols values of type, little-endian ggml blocks
   * @param {number} rows
   * @param {number} cols values per row, a whole number of blocks
   * @returns {Tensor}
   * @throws {TypeError} unknown/unsupported type or wrong argument types
   * @throws {RangeError} sizes that do not match, or a request past wasm32 memory (4 GiB in all)
   */
  tensor(type, bytes, rows, cols) {
    const t = codecType(type, 'dequantize', 'tensors');
    const q = asBytes(bytes, 'bytes');
    const size = Codec.#matrixBytes(t, rows, cols);
    if (q.length !== size)
      throw new RangeError(`bytes hold ${q.length}; ${rows} rows of ${cols} ${t.name} values need ${size}`);
    const W = this.#newTensor(t, rows, cols, size, 'tensor');
    new Uint8Array(this.#mem.buffer, residentAddress(W, this.#heap), size).set(q);
    return W;
  }

  /**
   * Bytes of a rows x cols matrix of type t, after checking both counts.
   * @param {CodecType} t
   * @param {unknown} rows
   * @param {unknown} cols
   */
  static #matrixBytes(t, rows, cols) {
    if (typeof rows !== 'number' || !Number.isSafeInteger(rows) || rows < 0)
      throw new RangeError(`rows must be a non-negative integer, got ${String(rows)}`);
    if (typeof cols !== 'number' || !Number.isSafeInteger(cols) || cols < 0)
      throw new RangeError(`cols must be a non-negative integer, got ${String(cols)}`);
    const size = rows * byteLength(t.id, cols);
    if (!Number.isSafeInteger(size)) throw new RangeError(`${rows} rows of ${cols} ${t.name} values are too many`);
    return size;
  }

  /**
   * @param {CodecType} t
   * @param {number} rows
   * @param {number} cols
   * @param {number} size
   * @param {string} what
   */
  #newTensor(t, rows, cols, size, what) {
    const ptr = this.#heap.alloc(size, `${what} (${rows}x${cols} ${t.name})`);
    return new Tensor(TENSOR_TOKEN, this.#heap, ptr, t.id, rows, cols, size);
  }

  /**
   * Loads one tensor of a GGUF file (from parseGGUF or openGGUF) into wasm memory as a handle, as
   * tensor() does, reading only its bytes (only rows [first, first + count) with
   * { rows: [first, count] }); big-endian files are byte-swapped. cols is dims[0] and rows the
   * product of the other dims (or count). The memory is taken before the read, so a tensor that
   * cannot fit is refused without reading it.
   * @param {GGUFLike} file
   * @param {string} name
   * @param {{ rows?: [number, number] }} [options]
   * @returns {Promise<Tensor>}
   * @throws {TypeError} an unsupported tensor type, wrong argument types
   * @throws {RangeError} no such tensor, rows out of range, a request past wasm32 memory
   * @throws {GGUFError} a read that fails or returns other than the bytes asked, or a tensor the
   *   file lists as unreadable (an unknown type id, the pre-release Q2_0 layout)
   */
  async loadTensor(file, name, options = {}) {
    const info = fileTensor(file, name);
    name = info.name;
    readableLength(info); // an unknown type id or the pre-release Q2_0 layout: its GGUFError
    const t = codecType(info.type, 'dequantize', 'tensors');
    await this.#modules.need(t.id, 'dequantize');
    const cols = info.dims.length ? info.dims[0] : 1;
    const all = info.dims.slice(1).reduce((a, b) => a * b, 1);
    const sel = (options ?? {}).rows;
    if (sel !== undefined && (!Array.isArray(sel) || sel.length !== 2))
      throw new TypeError('options.rows must be [first, count]');
    const [first, count] = sel ?? [0, all];
    const r = rowRange(info, first, count);
    if (Codec.#matrixBytes(t, count, cols) !== r.length)
      throw new RangeError(`tensor ${name}: ${count} rows of ${cols} ${t.name} values do not take ${r.length} bytes`);
    const W = this.#newTensor(t, count, cols, r.length, `tensor ${name}`);
    try {
      const got = await readFileRows(file, info, first, count, r);
      const le = (info.littleEndian ?? file.littleEndian) ? got : toLittleEndian(t.id, got);
      // A view made after the read: other calls may have grown memory meanwhile.
      new Uint8Array(this.#mem.buffer, residentAddress(W, this.#heap), r.length).set(le);
    } catch (e) {
      W.dispose();
      throw e;
    }
    return W;
  }

  /**
   * Per-block error of quantizing values to a type and decoding them again: for each block of the
   * type (32 or 256 values; 32 values for F16/BF16), rmse = sqrt(mean((x - x')^2)), maxAbs =
   * max |x - x'| and the block scale d (NaN for F16/BF16, which have none); for a type with
   * sub-blocks (typeInfo(type).subBlock, e.g. 16 or 32 values of a K-quant super-block), `sub`
   * holds rmse and maxAbs per sub-block as well.
   * @param {number | string} type a quantized type, F16 or BF16
   * @param {Float32Array} values a multiple of the block size
   * @returns {BlockStats}
   * @throws {TypeError} unknown/unsupported type
   * @throws {RangeError} a value count that is not a whole number of blocks
   */
  blockStats(type, values) {
    const t = codecType(type, 'stats', 'blockStats');
    const x = asFloats(values, 'values');
    const B = t.blockSize > 1 ? t.blockSize : FLOAT_STATS_BLOCK,
      S = t.subBlock;
    if (x.length % B !== 0)
      throw new RangeError(`value count ${x.length} is not a multiple of ${B} (the ${t.name} block of blockStats)`);
    const nb = x.length / B,
      ns = S ? x.length / S : 0;
    /** @type {BlockStats} */
    const res = { rmse: new Float32Array(nb), maxAbs: new Float32Array(nb), scale: new Float32Array(nb) };
    if (S) res.sub = { rmse: new Float32Array(ns), maxAbs: new Float32Array(ns) };
    const name = `bq_${t.name}_stats`;
    const fn = this.#kernel(name);
    const chunk = this.#chunk(4 + 12 / B + (S ? 8 / S : 0), lcm(B, stepOf(t)), x.length);
    const cb = chunk / B,
      cs = S ? chunk / S : 0;
    const xp = this.#reserve(align(chunk * 4) + 3 * align(cb * 4) + 2 * align(cs * 4));
    const rp = xp + align(chunk * 4),
      mp = rp + align(cb * 4),
      sp = mp + align(cb * 4),
      srp = sp + align(cb * 4),
      smp = srp + align(cs * 4);
    for (let i = 0; i < x.length; i += chunk) {
      const k = Math.min(chunk, x.length - i);
      new Float32Array(this.#mem.buffer, xp, k).set(x.subarray(i, i + k));
      Codec.#ok(fn(xp, k, rp, mp, sp, srp, smp), name);
      const b = i / B;
      res.rmse.set(new Float32Array(this.#mem.buffer, rp, k / B), b);
      res.maxAbs.set(new Float32Array(this.#mem.buffer, mp, k / B), b);
      res.scale.set(new Float32Array(this.#mem.buffer, sp, k / B), b);
      if (res.sub) {
        res.sub.rmse.set(new Float32Array(this.#mem.buffer, srp, k / S), i / S);
        res.sub.maxAbs.set(new Float32Array(this.#mem.buffer, smp, k / S), i / S);
      }
    }
    return res;
  }

  /**
   * Decodes one tensor of a GGUF file (from parseGGUF or openGGUF) to f32, reading only that
   * tensor; big-endian files are byte-swapped first. I8, I16, I32, I64 and F64 tensors come back
   * as their own values (Int8Array, Int16Array, Int32Array, BigInt64Array, Float64Array).
   * @param {GGUFLike} file
   * @param {string} name
   * @returns {Promise<TensorValues>} a new array the caller owns
   * @throws {TypeError} a type blockquant cannot decode
   * @throws {GGUFError} a tensor the file lists as unreadable (an unknown type id, the pre-release
   *   Q2_0 layout: TensorInfo.unreadable), or a read that fails
   */
  async dequantizeTensor(file, name) {
    const t = fileTensor(file, name);
    const want = readableLength(t); // an unknown type id or the pre-release Q2_0 layout: its GGUFError
    if (!INTEGER_ARRAYS.has(t.type)) await this.#modules.need(t.type, 'dequantize');
    const reader = file.readTensor;
    const bytes = await readChecked(t, want, reader, () =>
      reader ? reader.call(file, t.name) : /** @type {Function} */ (file.tensorBytes)(t.name),
    );
    return this.#decodeFileBytes(file, t, bytes);
  }

  /**
   * Decodes rows [first, first + count) of a tensor (a row is ne0 values), reading only those
   * bytes. Integer and F64 tensors as dequantizeTensor returns them.
   * @param {GGUFLike} file
   * @param {string} name
   * @param {number} first
   * @param {number} count
   * @returns {Promise<TensorValues>}
   */
  async dequantizeRows(file, name, first, count) {
    const t = fileTensor(file, name);
    const r = rowRange(t, first, count);
    if (!INTEGER_ARRAYS.has(t.type)) await this.#modules.need(t.type, 'dequantize');
    return this.#decodeFileBytes(file, t, await readFileRows(file, t, first, count, r));
  }

  /**
   * Decodes bytes read from a file (readChecked's), in the tensor's own byte order (shards of a
   * split model may differ).
   * @param {GGUFLike} file
   * @param {GGUFLike['tensors'][number]} t
   * @param {Uint8Array} bytes
   */
  #decodeFileBytes(file, t, bytes) {
    const le = (t.littleEndian ?? file.littleEndian) ? bytes : toLittleEndian(t.type, bytes);
    const values = INTEGER_ARRAYS.get(t.type);
    // The integer and F64 types are values already: a copy in their own typed array.
    return values ? values(le.slice().buffer) : this.dequantize(t.type, le);
  }
}
