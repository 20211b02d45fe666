// Worker threads over one shared WebAssembly.Memory: init({ threads: n }).
//
// The main thread instantiates the threads build (wasm/blockquant-threads.wasm: SIMD128 kernels,
// shared memory imported, atomics and bulk memory) on a shared memory, and wraps that instance in
// an ordinary Codec, which owns the memory layout (js/tensor.js: staging, then the heap of
// resident tensors). n - 1 workers (js/worker-core.js) instantiate the same module on the same
// memory; each gets a stack, a TLS block and a kernel scratch block taken from that heap (the
// kernels reach all the scratch they write through _Thread_local pointers,
// src/simd128/threads.c). The workers never allocate: the main thread places inputs, outputs and
// weights, and sends each worker a list of kernel calls on (pointer, count) ranges. The calling
// thread is the n-th thread (as in ggml's own thread pool): it wakes the workers and then takes
// chunks of the same work itself, so a call starts at once and a worker that wakes late only takes
// fewer chunks, or none. A matvec is split by rows, a dequantize or quantize by blocks; every
// output element is computed by the same kernel on the same inputs as with one thread, so the
// results are identical bit for bit. A handle's weights are shared, never copied.
//
// The heavy calls (matvec, matvecs, dequantize, quantize) return Promises: a browser's main
// thread cannot block on workers (it does its own share of the work synchronously, as a
// one-thread codec does all of it, then waits for the workers' last chunks without blocking).
// Calls are run one after another, in call order. Everything else is the synchronous Codec API of
// the main instance.

import { GGMLType, typeId, typeInfo, byteLength } from './types.js';
import { Codec, handleAddress } from './codec.js';
import { Tensor } from './tensor.js';
import { CTL, run } from './worker-core.js';
import { Pool } from './pool.js';

/** @typedef {import('./pool.js').Spawn} Spawn */
/** @typedef {import('./pool.js').KernelCall} KernelCall */
/** @typedef {import('./pool.js').WorkerLike} WorkerLike */
import { quantizeCall, domainError } from './quantize-call.js';
import { dequantizeCall, dequantizeResidentCall, matvecCall, matvecKernels, productsCall } from './call-args.js';
import { fetchOrEmbedded } from './bundled-url.js';
import { buildInfo } from './loader.js';

/** @typedef {import('./codec.js').GGUFLike} GGUFLike */
/** @typedef {import('./codec.js').BlockStats} BlockStats */
/** @typedef {import('./codec.js').TensorValues} TensorValues */
/** @typedef {import('./quantize-call.js').QuantizeOptions} QuantizeOptions */

const ALIGN = 64;
const PAGE = 65536;
/** Bytes of each worker's stack (the builds' own stack size). */
const STACK_BYTES = 256 << 10;
/** Inputs and outputs of one round of a threaded dequantize or quantize, at most (bytes). */
const ROUND_BYTES = 32 << 20;
/** Below this many bytes of weights (or of output), a call runs on the main instance alone: a
 * round trip to the workers costs about as much as a 64 KiB matvec. */
const MIN_SPLIT_BYTES = 64 << 10;

/**
 * @typedef {object} ThreadOptions
 * @property {number} [minSplitBytes] calls on fewer bytes of weights (dequantize, quantize: of
 *   f32 values) than this run on the main thread alone (default 64 KiB; 0 splits every call)
 * @property {number} [roundBytes] a threaded dequantize or quantize copies at most this many bytes
 *   of input and output through shared memory per round (default 32 MiB)
 */

/** @param {number} n */
const align = (n) => Math.ceil(n / ALIGN) * ALIGN;

/**
 * How many threads this host runs at once: os.availableParallelism() in Node (given by
 * threads-node.js as env.parallelism), navigator.hardwareConcurrency in browsers and Deno, else 1.
 */
function hostParallelism() {
  const n = /** @type {any} */ (globalThis).navigator?.hardwareConcurrency;
  return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

/**
 * Why this runtime cannot run blockquant on threads, or '' when it can: shared memory
 * (SharedArrayBuffer, a shared WebAssembly.Memory, and in browsers crossOriginIsolated) and
 * WebAssembly SIMD128 (the threads build has the SIMD128 kernels).
 * @param {{ SharedArrayBuffer?: unknown, crossOriginIsolated?: unknown, WebAssembly?: typeof WebAssembly }} [g]
 *   the global scope to inspect (for tests)
 * @returns {string}
 */
export function threadsUnsupported(g = /** @type {any} */ (globalThis)) {
  if (typeof g.SharedArrayBuffer !== 'function') return 'SharedArrayBuffer is not available';
  if (g.crossOriginIsolated === false) return 'the page is not cross-origin isolated (COOP/COEP headers)';
  try {
    const m = new /** @type {typeof WebAssembly} */ (g.WebAssembly).Memory({ initial: 1, maximum: 1, shared: true });
    if (!(m.buffer instanceof /** @type {typeof SharedArrayBuffer} */ (g.SharedArrayBuffer)))
      return 'WebAssembly memory cannot be shared';
  } catch {
    return 'WebAssembly memory cannot be shared';
  }
  return '';
}

/**
 * A codec whose matvec, matvecs, dequantize and quantize run on worker threads sharing its wasm
 * memory and return Promises; every other method is the synchronous Codec's (js/codec.js). Made by
 * init({ threads: n }) where threads can run; close() stops the workers.
 */
export class ThreadedCodec {
  /** @type {Codec} */
  #codec;
  /** @type {Pool} */
  #pool;
  /** @type {WebAssembly.Memory} */
  #mem;
  /** @type {Record<string, Function>} */
  #k;
  /** Scratch for one call's inputs and outputs: a resident F32 block, grown on demand. */
  /** @type {Tensor | null} */
  #scratch = null;
  /** The calls in order: each starts when the previous one settled. */
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  /** Blocks held for the workers' stacks, TLS and scratch, freed by close(). */
  /** @type {Tensor[]} */
  #held;
  #minSplit;
  #roundBytes;

  /**
   * @param {Codec} codec on the main instance of the threads build
   * @param {Pool} pool
   * @param {Tensor[]} held the workers' blocks
   * @param {ThreadOptions & { requested?: number, why?: string }} [options] requested: the threads asked for; why: why fewer run
   */
  constructor(codec, pool, held, options = {}) {
    const o = options;
    this.#minSplit = options.minSplitBytes ?? MIN_SPLIT_BYTES;
    this.#roundBytes = Math.max(ALIGN * 64, options.roundBytes ?? ROUND_BYTES);
    this.#codec = codec;
    this.#pool = pool;
    this.#held = held;
    this.#k = /** @type {Record<string, Function>} */ (/** @type {unknown} */ (codec.exports));
    this.#mem = /** @type {WebAssembly.Memory} */ (codec.exports.memory);
    /** Threads the heavy calls are split over: the workers and the calling thread. */
    this.threads = pool.size + 1;
    /** Worker threads started (threads - 1). */
    this.workers = pool.size;
    /** The threads init was asked for (more than `threads` when capped at the host's parallelism). */
    this.threadsRequested = o.requested ?? this.threads;
    /** Why `threads` is below `threadsRequested`, or '' when it is not. */
    this.threadsError = o.why ?? '';
    /** The build the workers run ('simd128': the threads build has the SIMD128 kernels). */
    this.backend = codec.backend;
    /** The main instance's raw wasm exports, for tests and benchmarks. */
    this.exports = codec.exports;
    /** Rounds of work sent to the workers so far (for tests and benchmarks). */
    this.rounds = 0;
  }

  /** Bytes of the shared wasm memory now (it grows as needed and never shrinks). */
  get memoryBytes() {
    return this.#codec.memoryBytes;
  }

  /** The split layout's modules: the threads build is whole, so every one is loaded. */
  get modules() {
    return this.#codec.modules;
  }

  /**
   * As Codec.enable: a no-op here (the threads build has every kernel).
   * @param {...string} names
   * @returns {Promise<void>}
   */
  enable(...names) {
    return this.#codec.enable(...names);
  }

  /**
   * As Codec.moduleOf (always loaded here).
   * @param {number | string} type
   * @param {'dequantize' | 'quantize' | 'quantize_rows' | 'dot' | 'matvec' | 'stats'} [op]
   */
  moduleOf(type, op) {
    return this.#codec.moduleOf(type, op);
  }

  /**
   * As Codec.typeInfo (every module loaded here).
   * @param {number | string} type
   */
  typeInfo(type) {
    return this.#codec.typeInfo(type);
  }

  /** Bytes of wasm memory held by live tensor handles (the workers' blocks not counted). */
  get residentBytes() {
    return this.#codec.residentBytes - this.#held.reduce((s, t) => s + t.byteLength, 0);
  }

  /**
   * Runs fn after every earlier call has settled.
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  #serial(fn) {
    const p = this.#queue.then(fn);
    this.#queue = p.catch(() => undefined);
    return p;
  }

  /**
   * Runs claimed calls (js/worker-core.js: the threads take chunks of each job's units until none
   * is left) on every worker and on this thread (Pool.share); each job's counter is an i32 at
   * counters + 4 * i, zeroed here.
   * @param {number} counters the address of jobs.length i32 in scratch
   * @param {{ name: string, total: number, ci: number, cs: number, args: [number, number][] }[]} jobs
   *   a kernel over units [0, total): n units at start call it with base + start * stride for
   *   each args pair and n * cs inserted at ci
   */
  #claimed(counters, jobs) {
    new Int32Array(this.#mem.buffer, counters, jobs.length).fill(0);
    // Chunks of what is left divided by twice the thread count (guided: few calls while much is
    // left; a matvec prepares its activations on every call), down to a 16th of a thread's share,
    // so that the threads finish within a small chunk of each other.
    const calls = jobs.map(
      (j, i) =>
        /** @type {KernelCall} */ ([
          `@${j.name}`,
          counters + 4 * i,
          j.total,
          Math.max(1, Math.ceil(j.total / (16 * this.threads))),
          2 * this.threads,
          j.ci,
          j.cs,
          ...j.args.flat(),
        ]),
    );
    this.rounds++;
    return this.#pool.share(calls, (part) => {
      for (const [name, ...args] of part) run(this.#k, name, args, this.#mem);
    });
  }

  /**
   * An address in shared memory with at least bytes free, valid until the next call.
   * @param {number} bytes
   */
  #scratchAt(bytes) {
    const have = this.#scratch ? this.#scratch.byteLength : 0;
    if (bytes > have) {
      this.#scratch?.dispose();
      this.#scratch = null;
      const size = align(Math.max(bytes, 2 * have, 1 << 20));
      this.#scratch = this.#codec.tensor(GGMLType.F32, new Uint8Array(size), 1, size / 4);
    }
    return /** @type {Tensor} */ (this.#scratch).byteOffset;
  }

  /**
   * The address of a live tensor of this codec.
   * @param {unknown} W
   */
  #address(W) {
    return handleAddress(this.#codec, W);
  }

  /** Copies a matrix into wasm memory once; as Codec.tensor. */
  /** @type {Codec['tensor']} */
  tensor(type, bytes, rows, cols) {
    const W = this.#codec.tensor(type, bytes, rows, cols);
    return W;
  }

  /** Loads a tensor of a GGUF file into wasm memory; as Codec.loadTensor. */
  /** @type {Codec['loadTensor']} */
  async loadTensor(file, name, options) {
    const W = await this.#codec.loadTensor(file, name, options);
    return W;
  }

  /** As Codec.dot (on the main thread). @type {Codec['dot']} */
  dot(typeA, a, typeB, b) {
    return this.#codec.dot(typeA, a, typeB, b);
  }

  /** As Codec.blockStats (on the main thread). @type {Codec['blockStats']} */
  blockStats(type, values) {
    return this.#codec.blockStats(type, values);
  }

  /** As Codec.dequantizeTensor (on the main thread). @type {Codec['dequantizeTensor']} */
  dequantizeTensor(file, name) {
    return this.#codec.dequantizeTensor(file, name);
  }

  /** As Codec.dequantizeRows (on the main thread). @type {Codec['dequantizeRows']} */
  dequantizeRows(file, name, first, count) {
    return this.#codec.dequantizeRows(file, name, first, count);
  }

  /**
   * Quantizes f32 values, as Codec.quantize (the same bytes for any thread count), split over the
   * workers by blocks, or by rows when the call uses importance weights or a grid type's quantizer.
   * @overload
   * @param {number | string} type
   * @param {Float32Array} values whole rows of rowLength values (one row by default)
   * @param {QuantizeOptions & { out?: undefined }} [options] { imatrix, rowLength }
   * @returns {Promise<Uint8Array<ArrayBuffer>>} a new array
   * @throws {TypeError | RangeError} (rejects) as Codec.quantize; a worker's failure
   */
  /**
   * Quantizes f32 values into out, as Codec.quantize.
   * @template {Uint8Array} O
   * @overload
   * @param {number | string} type
   * @param {Float32Array} values
   * @param {O | QuantizeOptions & { out?: O }} [options] { imatrix, rowLength, out }
   * @returns {Promise<O>} out
   */
  /**
   * As the overloads say.
   * @param {number | string} type
   * @param {Float32Array} values
   * @param {QuantizeOptions | Uint8Array} [options]
   * @returns {Promise<Uint8Array>}
   */
  quantize(type, values, options) {
    return this.#serial(async () => {
      const c = quantizeCall(type, values, options);
      const { t, x, y } = c;
      const n = x.length;
      if (n * 4 < this.#minSplit) return this.#codec.quantize(type, values, options);
      if (c.byRows) {
        this.#codec.prepareQuantize(t.id);
        const { cols, rowBytes, imatrix } = c;
        const wb = imatrix ? align(cols * 4) : 0;
        const chunk = Math.max(1, Math.floor(this.#roundBytes / (cols * 4 + rowBytes)));
        for (let r = 0; r < c.rows; r += chunk) {
          const k = Math.min(chunk, c.rows - r);
          const wp = this.#scratchAt(wb + align(k * cols * 4) + align(k * rowBytes) + ALIGN);
          const xp = wp + wb,
            yp = xp + align(k * cols * 4);
          if (imatrix) new Float32Array(this.#mem.buffer, wp, cols).set(imatrix);
          new Float32Array(this.#mem.buffer, xp, k * cols).set(x.subarray(r * cols, (r + k) * cols));
          // units: rows; (x, y, rows, cols, qw)
          const args = /** @type {[number, number][]} */ ([
            [xp, 4 * cols],
            [yp, rowBytes],
            [cols, 0],
            [imatrix ? wp : 0, 0],
          ]);
          try {
            await this.#claimed(yp + align(k * rowBytes), [{ name: c.kernel, total: k, ci: 2, cs: 1, args }]);
          } catch (e) {
            if (!/\(status -3\)/.test(String(/** @type {Error} */ (e)?.message))) throw e;
            // Rows ggml aborts on: the one-thread codec finds the first (the same rows fail there).
            const part = x.subarray(r * cols, (r + k) * cols);
            try {
              this.#codec.quantize(t.id, part, imatrix ? { imatrix } : { rowLength: cols });
            } catch (d) {
              const at = /** @type {{ row?: number }} */ (d);
              throw domainError(t.name, r + (at.row ?? 0));
            }
            throw e;
          }
          y.set(new Uint8Array(this.#mem.buffer, yp, k * rowBytes), r * rowBytes);
        }
        return /** @type {Uint8Array<ArrayBuffer>} */ (y);
      }
      const per = 4 + t.typeSize / t.blockSize;
      const chunk = Math.max(t.blockSize, Math.floor(this.#roundBytes / per / t.blockSize) * t.blockSize);
      for (let i = 0; i < n; i += chunk) {
        const k = Math.min(chunk, n - i);
        const kb = (k / t.blockSize) * t.typeSize;
        const xp = this.#scratchAt(align(k * 4) + align(kb) + ALIGN);
        const yp = xp + align(k * 4);
        new Float32Array(this.#mem.buffer, xp, k).set(x.subarray(i, i + k));
        // units: blocks; (x, y, n values)
        const args = /** @type {[number, number][]} */ ([
          [xp, 4 * t.blockSize],
          [yp, t.typeSize],
        ]);
        await this.#claimed(yp + align(kb), [{ name: c.kernel, total: k / t.blockSize, ci: 2, cs: t.blockSize, args }]);
        y.set(new Uint8Array(this.#mem.buffer, yp, kb), (i / t.blockSize) * t.typeSize);
      }
      return /** @type {Uint8Array<ArrayBuffer>} */ (y);
    });
  }

  /** As Codec.prepareQuantize: the tables are shared by the workers. @type {Codec['prepareQuantize']} */
  prepareQuantize(type) {
    return this.#codec.prepareQuantize(type);
  }

  /** As Codec.tableBytes. */
  get tableBytes() {
    return this.#codec.tableBytes;
  }

  /** As Codec.freeTables (after the calls under way have settled). @returns {Promise<void>} */
  freeTables() {
    return this.#serial(async () => this.#codec.freeTables());
  }

  /**
   * Decodes a resident tensor to a new array, as Codec.dequantize, split by blocks over the workers.
   * @overload
   * @param {Tensor} tensor a resident tensor of this codec
   * @param {{ out?: undefined }} [options]
   * @returns {Promise<Float32Array<ArrayBuffer>>}
   */
  /**
   * Decodes a resident tensor into out, as Codec.dequantize, split by blocks over the workers.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor} tensor a resident tensor of this codec
   * @param {{ out?: O }} options
   * @returns {Promise<O>} out
   */
  /**
   * Decodes whole blocks to a new array, as Codec.dequantize, split by blocks over the workers.
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} bytes
   * @param {undefined} [out]
   * @returns {Promise<Float32Array<ArrayBuffer>>}
   */
  /**
   * Decodes whole blocks into out, as Codec.dequantize, split by blocks over the workers.
   * @template {Float32Array} O
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} bytes
   * @param {O} [out]
   * @returns {Promise<O>} out
   */
  /**
   * Decodes whole blocks to f32, as Codec.dequantize (the bytes given, or a resident tensor's:
   * dequantize(W, { out })), split by blocks over the workers.
   * @param {number | string | Tensor} type
   * @param {Uint8Array | { out?: Float32Array }} [bytes]
   * @param {Float32Array} [out]
   * @returns {Promise<Float32Array>}
   * @throws {TypeError | RangeError} (rejects) as Codec.dequantize; a worker's failure
   */
  dequantize(type, bytes, out) {
    return this.#serial(async () => {
      /** @type {number} */
      let src = -1;
      /** @type {Uint8Array | null} */
      let q = null;
      let t, y;
      if (type instanceof Tensor) {
        src = this.#address(type);
        ({ t, y } = dequantizeResidentCall(type, bytes));
      } else ({ t, q, y } = dequantizeCall(type, bytes, out));
      const n = y.length;
      if (n * 4 < this.#minSplit)
        return type instanceof Tensor
          ? this.#codec.dequantize(type, { out: y })
          : this.#codec.dequantize(type, /** @type {Uint8Array} */ (q), y);
      const name = `bq_${t.name}_dequantize`;
      const per = 4 + (q ? t.typeSize / t.blockSize : 0);
      const chunk = Math.max(t.blockSize, Math.floor(this.#roundBytes / per / t.blockSize) * t.blockSize);
      for (let i = 0; i < n; i += chunk) {
        const k = Math.min(chunk, n - i);
        const kb = (k / t.blockSize) * t.typeSize,
          off = (i / t.blockSize) * t.typeSize;
        const yp = this.#scratchAt(align(k * 4) + (q ? align(kb) : 0) + ALIGN);
        const counter = yp + align(k * 4) + (q ? align(kb) : 0);
        let qp;
        if (q) {
          qp = yp + align(k * 4);
          new Uint8Array(this.#mem.buffer, qp, kb).set(q.subarray(off, off + kb));
        } else qp = this.#address(type) + off; // again: the handle may be disposed meanwhile
        // units: blocks; (q, y, n values)
        const args = /** @type {[number, number][]} */ ([
          [qp, t.typeSize],
          [yp, 4 * t.blockSize],
        ]);
        await this.#claimed(counter, [{ name, total: k / t.blockSize, ci: 2, cs: t.blockSize, args }]);
        y.set(new Float32Array(this.#mem.buffer, yp, k), i);
      }
      return y;
    });
  }

  /**
   * y = W x for resident weights, as Codec.matvec, as a new array.
   * @overload
   * @param {Tensor} tensor resident weights of this codec
   * @param {Float32Array} x tensor.cols values
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Promise<Float32Array<ArrayBuffer>>}
   */
  /**
   * y = W x for resident weights, as Codec.matvec, into out.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor} tensor resident weights of this codec
   * @param {Float32Array} x tensor.cols values
   * @param {{ out?: O, exact?: boolean }} options
   * @returns {Promise<O>} out
   */
  /**
   * y = W x for rows of quantized (or float) values, as Codec.matvec, as a new array.
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} weights
   * @param {number} rows
   * @param {Float32Array} x
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Promise<Float32Array<ArrayBuffer>>}
   */
  /**
   * y = W x for rows of quantized (or float) values, as Codec.matvec, into out.
   * @template {Float32Array} O
   * @overload
   * @param {number | string} type
   * @param {Uint8Array} weights
   * @param {number} rows
   * @param {Float32Array} x
   * @param {{ out?: O, exact?: boolean }} options
   * @returns {Promise<O>} out
   */
  /**
   * y = W x, as Codec.matvec (bit-identical), the rows split over the workers.
   * @param {number | string | Tensor} a
   * @param {unknown} b
   * @param {unknown} [c]
   * @param {unknown} [d]
   * @param {unknown} [e]
   * @returns {Promise<Float32Array>}
   * @throws {TypeError | RangeError} (rejects) as Codec.matvec; a worker's failure
   */
  matvec(a, b, c, d, e) {
    if (a instanceof Tensor) {
      const o = /** @type {{ out?: Float32Array, exact?: boolean }} */ (c ?? {});
      return this.#serial(async () => (await this.#matvecs([a], b, o.exact, o.out ? [o.out] : undefined, null))[0]);
    }
    return this.#serial(async () => {
      // (inputs that overlap out are read as they were at the call)
      const m = matvecCall(a, b, c, d, e);
      if (m.w.length < this.#minSplit)
        return this.#codec.matvec(m.t.id, m.w, m.rows, m.v, { out: m.y, exact: m.exact });
      const W = { type: m.t.id, rows: m.rows, cols: m.cols, bytes: m.w };
      return (await this.#matvecs([W], m.v, m.exact, [m.y], m.w))[0];
    });
  }

  /**
   * Several products with one x, as Codec.matvecs, as new arrays.
   * @overload
   * @param {Tensor[]} tensors
   * @param {Float32Array} x
   * @param {{ out?: undefined, exact?: boolean }} [options]
   * @returns {Promise<Float32Array<ArrayBuffer>[]>}
   */
  /**
   * Several products with one x, as Codec.matvecs, into out's arrays.
   * @template {Float32Array} O
   * @overload
   * @param {Tensor[]} tensors
   * @param {Float32Array} x
   * @param {{ out?: O[], exact?: boolean }} options
   * @returns {Promise<O[]>} out's arrays
   */
  /**
   * Several products with one x (each tensor's rows split over the workers, all in one round),
   * as Codec.matvecs.
   * @param {Tensor[]} tensors resident weights of this codec, all with x.length columns
   * @param {Float32Array} x
   * @param {{ out?: Float32Array[], exact?: boolean }} [options]
   * @returns {Promise<Float32Array[]>}
   */
  matvecs(tensors, x, options = {}) {
    return this.#serial(async () => {
      if (!Array.isArray(tensors)) throw new TypeError('tensors must be an array of tensor handles');
      return this.#matvecs(tensors, x, options.exact, options.out, null);
    });
  }

  /**
   * @param {unknown[]} list tensors, or (with bytes) one { type, rows, cols } for raw weights
   * @param {unknown} x
   * @param {unknown} exactOption
   * @param {unknown} outs
   * @param {Uint8Array | null} bytes raw weights, copied into scratch
   * @returns {Promise<Float32Array[]>}
   */
  async #matvecs(list, x, exactOption, outs, bytes) {
    const c = productsCall(list, x, exactOption, outs, (W) => (bytes ? 0 : this.#address(W)));
    const { cols, exact } = c;
    const jobs = c.jobs.map(({ W, t, rows, y }) => {
      const { tv, name } = matvecKernels(t, exact);
      return { W, rows, rowBytes: byteLength(t.id, cols), tv, name, y, yp: 0, vp: 0 };
    });
    if (!bytes && jobs.reduce((s, j) => s + j.rows * j.rowBytes, 0) < this.#minSplit)
      return this.#codec.matvecs(/** @type {Tensor[]} */ (list), c.v, { exact, out: c.jobs.map((j) => j.y) });
    const tvs = [...new Set(jobs.map((j) => j.tv))];
    const xb = align(cols * 4);
    const qb = tvs.map((tv) => (tv === GGMLType.F32 ? 0 : align(byteLength(tv, cols))));
    let need =
      xb + qb.reduce((s, v) => s + v, 0) + jobs.reduce((s, j) => s + align(j.rows * 4), 0) + align(4 * jobs.length);
    if (bytes) need += align(bytes.length);
    const xp = this.#scratchAt(need);
    let p = xp + xb;
    new Float32Array(this.#mem.buffer, xp, cols).set(c.v);
    /** @type {Map<number, number>} */
    const vps = new Map();
    tvs.forEach((tv, i) => {
      if (tv === GGMLType.F32) vps.set(tv, xp);
      else {
        const qname = `bq_${typeInfo(tv).name}_quantize`;
        const status = this.#k[qname](xp, p, cols);
        if (status !== 0) throw new Error(`blockquant kernel ${qname} failed (status ${status})`);
        vps.set(tv, p);
        p += qb[i];
      }
    });
    for (const j of jobs) {
      j.yp = p;
      p += align(j.rows * 4);
    }
    let wp = 0;
    if (bytes) {
      wp = p;
      new Uint8Array(this.#mem.buffer, wp, bytes.length).set(bytes);
    }
    const counters = bytes ? wp + align(bytes.length) : p;
    // units: rows; (w, n rows, cols, activations, y)
    await this.#claimed(
      counters,
      jobs.map((j) => ({
        name: j.name,
        total: j.rows,
        ci: 1,
        cs: 1,
        args: [
          [bytes ? wp : /** @type {Tensor} */ (j.W).byteOffset, j.rowBytes],
          [cols, 0],
          [/** @type {number} */ (vps.get(j.tv)), 0],
          [j.yp, 4],
        ],
      })),
    );
    for (const j of jobs) j.y.set(new Float32Array(this.#mem.buffer, j.yp, j.rows));
    return jobs.map((j) => j.y);
  }

  /**
   * Stops the workers (after the calls already made) and frees their memory; later heavy calls
   * reject. Tensors stay usable with the synchronous methods. Idempotent.
   * @returns {Promise<void>}
   */
  close() {
    return this.#serial(async () => {
      this.#pool.close();
      for (const t of this.#held) t.dispose();
      this.#scratch?.dispose();
      this.#scratch = null;
    });
  }
}

/**
 * The threads build for browsers: the .wasm file next to this package's js/ folder, or the
 * embedded copy where that cannot be fetched.
 * @returns {Promise<WebAssembly.Module>}
 */
export function threadsModuleURL() {
  return fetchOrEmbedded(
    () => new URL('../wasm/blockquant-threads.wasm', import.meta.url),
    () => import('./wasm/threads.js'),
    'threads',
  );
}

/**
 * The relaxed threads build (the relaxed kernels on a shared memory, the threads build's ABI), for
 * where the relaxed probe passes: as threadsModuleURL.
 * @returns {Promise<WebAssembly.Module>}
 */
export function relaxedThreadsModuleURL() {
  return fetchOrEmbedded(
    () => new URL('../wasm/blockquant-relaxed-threads.wasm', import.meta.url),
    () => import('./wasm/relaxed-threads.js'),
    'relaxed-threads',
  );
}

/**
 * Browser and Deno workers: module workers started from js/worker.js, or from another script URL.
 * @param {URL | string} [url]
 * @returns {WorkerLike}
 */
export function spawnBrowser(url = new URL('./worker.js', import.meta.url)) {
  const w = new Worker(url, { type: 'module' });
  return {
    post: (m) => w.postMessage(m),
    onMessage: (f) => w.addEventListener('message', (e) => f(e.data)),
    onError: (f) => {
      w.addEventListener('error', (e) => f(new Error(e.message || 'worker error')));
      w.addEventListener('messageerror', () => f(new Error('a message could not be read')));
    },
    terminate: () => w.terminate(),
  };
}

/**
 * Workers from a blob: URL of the embedded worker source (js/wasm/worker-src.js), for where
 * js/worker.js cannot be loaded: a bundle that did not emit it next to itself.
 * @returns {Promise<Spawn>}
 */
export async function spawnEmbedded() {
  const src = (await import('./wasm/worker-src.js')).default;
  const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
  return () => spawnBrowser(url);
}

/**
 * A codec on n threads (n - 1 workers and the calling thread) where this runtime can run them
 * (see threadsUnsupported), or else the synchronous codec of single() with threads = 1, without
 * an error.
 * @param {number} n threads, an integer >= 1: the calling thread and n - 1 workers
 * @param {{ module: () => Promise<WebAssembly.Module>, spawn: Spawn | null, single: () => Promise<Codec>,
 *   fallbackSpawn?: () => Promise<Spawn>, stagingBytes?: number, parallelism?: number } & ThreadOptions} env
 *   how this runtime loads the threads build and starts workers (fallbackSpawn: another way, tried
 *   when the workers of spawn cannot start), how many threads the host runs at once (default
 *   navigator.hardwareConcurrency: n is capped at it), and the thresholds of ThreadOptions
 * @returns {Promise<ThreadedCodec | (Codec & { threads: 1, threadsRequested: number, threadsError: string })>}
 *   threads: what runs; threadsRequested: n; threadsError: why threads < n ('' when it is not)
 * @throws {RangeError} n that is not a positive integer
 */
export async function initThreads(n, env) {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`threads must be a positive integer, got ${String(n)}`);
  const requested = n;
  // More threads than the host runs at once only add workers (and their memory) that wait.
  const host = env.parallelism ?? hostParallelism();
  let why = n > host ? `capped at ${host}: the host runs ${host} thread${host === 1 ? '' : 's'} at once` : '';
  n = Math.min(n, host);
  /** @param {string} reason why no worker runs ('' when one thread was all that was asked) */
  const one = async (reason) => {
    const c = await env.single();
    Object.defineProperty(c, 'threads', { value: 1, enumerable: true });
    Object.defineProperty(c, 'threadsRequested', { value: requested, enumerable: true });
    Object.defineProperty(c, 'threadsError', { value: reason, enumerable: true });
    return /** @type {Codec & { threads: 1, threadsRequested: number, threadsError: string }} */ (c);
  };
  if (n === 1) return one(why);
  if (!env.spawn)
    return one(
      'this build or backend has no threads (the threads builds run the SIMD128 and the relaxed kernels: backend auto, simd128 or relaxed)',
    );
  const unsupported = threadsUnsupported();
  if (unsupported) return one(unsupported);
  /** @type {WebAssembly.Module} */
  let module;
  /** @type {WebAssembly.Memory} */
  let memory;
  /** @type {WebAssembly.Instance} */
  let instance;
  try {
    module = await env.module();
    // The module's own minimum is a few pages; grown by the codec as it needs.
    memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
    instance = await WebAssembly.instantiate(module, { env: { memory } });
  } catch (e) {
    return one(`the threads build cannot be loaded: ${/** @type {any} */ (e)?.message ?? e}`);
  }
  // bq.backend says which threads build runs: simd128, or relaxed (the relaxed threads build).
  const codec = new Codec(instance, buildInfo(instance).backend, env.stagingBytes ?? 4 << 20);
  const ex = /** @type {Record<string, any>} */ (instance.exports);
  const tlsBytes = align(ex.__tls_size.value),
    scratchBytes = align(ex.bq_thread_scratch_bytes());
  /** @type {Tensor[]} */
  const held = [];
  const blocks = [];
  for (let i = 0; i < n - 1; i++) {
    const size = STACK_BYTES + tlsBytes + scratchBytes + CTL.BYTES;
    const t = codec.tensor(GGMLType.F32, new Uint8Array(size), 1, size / 4);
    held.push(t);
    const base = t.byteOffset;
    const scratch = base + STACK_BYTES + tlsBytes;
    blocks.push({ stack: base + STACK_BYTES, tls: base + STACK_BYTES, scratch, ctl: scratch + scratchBytes });
  }
  let pool;
  try {
    pool = await Pool.start(n - 1, env.spawn, module, memory, blocks);
  } catch (first) {
    try {
      if (!env.fallbackSpawn) throw first;
      pool = await Pool.start(n - 1, await env.fallbackSpawn(), module, memory, blocks);
    } catch (e) {
      for (const t of held) t.dispose();
      return one(`the workers could not start: ${/** @type {any} */ (e)?.message ?? e}`);
    }
  }
  return new ThreadedCodec(codec, pool, held, { ...env, requested, why });
}
