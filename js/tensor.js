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
// The heap is a first-fit free list. Every block is a multiple of 64 bytes (a cache line, and the
// alignment the kernels' vector loads like). The list holds the free blocks of [start, top) sorted
// by address, and a block freed next to a free neighbour merges with it (coalescing), so freeing
// everything always gives back one block. When no free block fits, the heap grows at the top with
// memory.grow, reusing a free block that touches the top; wasm memory never shrinks, so a freed
// block stays for the next allocation. Growing detaches every view of the old buffer: all views
// are made per call, after any allocation, never kept. A tensor handle holds only its address and
// size in this memory (no JS copy of its bytes), so a memory shared between workers can carry it.

const ALIGN = 64;
const PAGE = 65536;
/** The wasm32 address space, and the builds' maximum memory (the Makefile's MAXIMUM_MEMORY). */
export const WASM32_LIMIT = 2 ** 32;

/** @param {number} n */
const alignUp = (n) => Math.ceil(n / ALIGN) * ALIGN;

/** First-fit allocator with coalescing over the wasm memory above `start` (see the top of file). */
export class WasmHeap {
  /** @type {WebAssembly.Memory} */
  #mem;
  #start;
  /** End of the managed region: [start, top) is either allocated or on the free list. */
  #top;
  /** @type {{ ptr: number, size: number }[]} free blocks, ascending, never adjacent */
  #free = [];
  /** Bytes of the blocks handed out and not yet freed. */
  held = 0;

  /**
   * @param {WebAssembly.Memory} memory
   * @param {number} start first address of the heap, a multiple of 64
   */
  constructor(memory, start) {
    this.#mem = memory;
    this.#start = start;
    this.#top = start;
  }

  /**
   * Bytes a request of n bytes takes (a multiple of 64, at least 64).
   * @param {number} n
   */
  static size(n) {
    return Math.max(ALIGN, alignUp(n));
  }

  /**
   * Allocates a block of at least n bytes; returns its address (a multiple of 64).
   * @param {number} n bytes
   * @param {string} what names the request in the error
   * @returns {number}
   * @throws {RangeError} when the heap cannot grow to hold it (the wasm32 limit, or the engine)
   */
  alloc(n, what) {
    const size = WasmHeap.size(n);
    const free = this.#free;
    for (let i = 0; i < free.length; i++) {
      const b = free[i];
      if (b.size < size) continue;
      const ptr = b.ptr;
      if (b.size === size) free.splice(i, 1);
      else {
        b.ptr += size;
        b.size -= size;
      }
      this.held += size;
      return ptr;
    }
    // Nothing fits: grow at the top, extending a free block that ends there.
    const last = free.length ? free[free.length - 1] : null;
    const tail = last && last.ptr + last.size === this.#top ? last.size : 0;
    const need = this.#top + size - tail;
    const have = this.#mem.buffer.byteLength;
    if (need > have) {
      const fail = `${what} needs ${n} bytes of wasm memory, which does not fit: memoryBytes is ${have}, live tensors hold ${this.held}, and wasm32 memory ends at 4 GiB (${WASM32_LIMIT} bytes)`;
      if (need > WASM32_LIMIT) throw new RangeError(fail);
      try {
        this.#mem.grow(Math.ceil((need - have) / PAGE));
      } catch (e) {
        throw new RangeError(`${fail}; the engine refused to grow memory`, { cause: e });
      }
    }
    const newTop = Math.max(need, this.#mem.buffer.byteLength);
    this.#release(this.#top, newTop - this.#top);
    this.#top = newTop;
    return this.alloc(n, what); // the free block at the top now fits
  }

  /**
   * Returns a block to the heap.
   * @param {number} ptr an address alloc returned, not freed since
   * @param {number} n the byte count it was asked with
   */
  free(ptr, n) {
    const size = WasmHeap.size(n);
    this.held -= size;
    this.#release(ptr, size);
  }

  /**
   * Puts [ptr, ptr + size) on the free list, merged with the free blocks it touches.
   * @param {number} ptr
   * @param {number} size
   */
  #release(ptr, size) {
    if (size === 0) return;
    const free = this.#free;
    let lo = 0,
      hi = free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (free[mid].ptr < ptr) lo = mid + 1;
      else hi = mid;
    }
    const prev = lo > 0 ? free[lo - 1] : null,
      next = lo < free.length ? free[lo] : null;
    if (prev && prev.ptr + prev.size > ptr) throw new Error(`blockquant heap: block ${ptr} freed twice`);
    if (next && ptr + size > next.ptr) throw new Error(`blockquant heap: block ${ptr} freed twice`);
    if (prev && prev.ptr + prev.size === ptr) {
      prev.size += size;
      if (next && prev.ptr + prev.size === next.ptr) {
        prev.size += next.size;
        free.splice(lo, 1);
      }
    } else if (next && ptr + size === next.ptr) {
      next.ptr = ptr;
      next.size += size;
    } else free.splice(lo, 0, { ptr, size });
  }

  /** The free blocks, as [address, bytes] pairs in address order (for tests). */
  get freeBlocks() {
    return this.#free.map((b) => [b.ptr, b.size]);
  }

  /** The heap's first address. */
  get start() {
    return this.#start;
  }
}

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
      if (!(t instanceof Tensor))
        throw new TypeError('expected a tensor handle from codec.tensor() or codec.loadTensor()');
      if (t.#heap !== heap) throw new TypeError('this tensor handle belongs to another blockquant codec instance');
      if (t.#ptr < 0) throw new TypeError(`this ${t.#describe()} tensor handle was disposed`);
      return t.#ptr;
    };
  }

  #describe() {
    return `${this.rows}x${this.cols} (type ${this.type})`;
  }

  /** Whether dispose() has run. */
  get disposed() {
    return this.#ptr < 0;
  }

  /**
   * Where the bytes are in the codec's wasm memory (`codec.exports.memory`), for raw kernel calls;
   * the address stays fixed until dispose().
   * @throws {TypeError} once disposed
   */
  get byteOffset() {
    return residentAddress(this, this.#heap);
  }

  /** Frees the wasm memory of the weights; later calls with this handle throw. Idempotent. */
  dispose() {
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
