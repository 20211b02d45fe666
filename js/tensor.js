// Resident tensors: quantized weights copied once into a codec's wasm memory, and the allocator that
// places them there.
//
// Memory layout of one codec instance (addresses in its wasm memory):
//
//   [0, base)                    the module's static data and stack (base = bq_scratch_base())
//   [base, base + staging)       the staging region of the streaming API (js/codec.js), where
//                                one-shot calls copy their chunks; it never moves
//   [base + staging, top)        the heap: resident tensors and the scratch of calls too large
//                                for staging, managed by WasmHeap below
//
// The heap's allocator is js/heap.js (best fit, coalescing, O(log n)). A tensor handle holds only
// its address and size in this memory (no JS copy of its bytes), so a memory shared between
// workers can carry it.

import { WasmHeap, WASM32_LIMIT } from './heap.js';

export { WasmHeap, WASM32_LIMIT };

/** The well-known disposal symbol where the runtime has one (the `using` declaration). */
const DISPOSE = /** @type {{ dispose?: symbol }} */ (/** @type {unknown} */ (Symbol)).dispose;

/**
 * The address of a live handle's bytes in heap's memory; used by the codec, not exported from the
 * package.
 * @type {(t: unknown, heap: WasmHeap) => number}
 */
export let residentAddress;

/**
 * Made only by the codec (`bq.tensor`, `bq.loadTensor`), never with `new`.
 * @type {symbol}
 */
const TOKEN = Symbol('blockquant tensor');
export { TOKEN as TENSOR_TOKEN };

/**
 * A matrix of quantized (or float) weights resident in one codec's wasm memory: `rows` rows of
 * `cols` values of `type`, in ggml's little-endian block layout. Made by `bq.tensor` or
 * `bq.loadTensor`; used by `bq.matvec`, `bq.matvecs` and `bq.dequantize` of the same codec. Its
 * memory is held until `dispose()` (or the end of a `using` block), and a disposed handle is
 * refused by every call.
 */
export class Tensor {
  /** @type {WasmHeap} */
  #heap;
  #ptr;
  #size;

  /**
   * @param {symbol} token
   * @param {WasmHeap} heap
   * @param {number} ptr
   * @param {number} type
   * @param {number} rows
   * @param {number} cols
   * @param {number} byteLength
   */
  constructor(token, heap, ptr, type, rows, cols, byteLength) {
    if (token !== TOKEN) throw new TypeError('tensor handles are made by codec.tensor() or codec.loadTensor()');
    this.#heap = heap;
    this.#ptr = ptr;
    this.#size = byteLength;
    /** The ggml type id of the values. */
    this.type = type;
    /** Number of rows (the product of a GGUF tensor's dims after the first). */
    this.rows = rows;
    /** Values per row (a GGUF tensor's dims[0]). */
    this.cols = cols;
    /** Bytes of the weights (rows * the bytes of one row). */
    this.byteLength = byteLength;
    Object.freeze(this);
  }

  static {
    residentAddress = (t, heap) => {
      // A brand check, not instanceof: Object.create(Tensor.prototype) or a Proxy of a handle
      // passes instanceof but has no handle's private fields.
      if (!Tensor.#isHandle(t)) throw Tensor.#notHandle();
      if (t.#heap !== heap) throw new TypeError('this tensor handle belongs to another blockquant codec instance');
      if (t.#ptr < 0) throw new TypeError(`this ${t.#describe()} tensor handle was disposed`);
      return t.#ptr;
    };
  }

  /** @param {unknown} t @returns {t is Tensor} */
  static #isHandle(t) {
    return typeof t === 'object' && t !== null && #ptr in t;
  }

  static #notHandle() {
    return new TypeError(
      'expected a tensor handle from codec.tensor() or codec.loadTensor() (an object made otherwise, a copy or a Proxy of one is not a handle)',
    );
  }

  #describe() {
    return `${this.rows}x${this.cols} (type ${this.type})`;
  }

  /** Whether dispose() has run. */
  get disposed() {
    if (!Tensor.#isHandle(this)) throw Tensor.#notHandle();
    return this.#ptr < 0;
  }

  /**
   * Where the bytes are in the codec's wasm memory (`codec.exports.memory`), for raw kernel calls;
   * the address stays fixed until dispose().
   * @throws {TypeError} once disposed
   */
  get byteOffset() {
    if (!Tensor.#isHandle(this)) throw Tensor.#notHandle();
    return residentAddress(this, this.#heap);
  }

  /** Frees the wasm memory of the weights; later calls with this handle throw. Idempotent. */
  dispose() {
    if (!Tensor.#isHandle(this)) throw Tensor.#notHandle();
    if (this.#ptr < 0) return;
    this.#heap.free(this.#ptr, this.#size);
    this.#ptr = -1;
  }
}

if (DISPOSE) {
  Object.defineProperty(Tensor.prototype, DISPOSE, {
    value: Tensor.prototype.dispose,
    writable: true,
    configurable: true,
  });
}
