// The allocator of a codec's wasm heap (the region above staging, see js/tensor.js): best fit
// with coalescing, every operation O(log n) in the number of free blocks.
//
// Every block is a multiple of 64 bytes (a cache line, and the alignment the kernels' vector
// loads like). The free blocks of [start, top) are indexed twice: by their ends (two Maps, start
// -> size and end -> start), so a freed block merges with the free neighbours it touches in O(1)
// and freeing everything always gives back one block; and by (size, address) in a treap, so an
// allocation takes the smallest free block that fits (the lowest address among equal sizes) in
// O(log n). Blocks handed out are kept in a Map, so a block freed twice, or never allocated, is
// refused. When no free block fits, the heap grows at the top with memory.grow, extending a free
// block that ends there; wasm memory never shrinks, so a freed block stays for the next
// allocation. Growing detaches every view of the old buffer: views are made per call, never kept.

const ALIGN = 64;
const PAGE = 65536;
/** The wasm32 address space, and the builds' maximum memory (the Makefile's MAXIMUM_MEMORY). */
export const WASM32_LIMIT = 2 ** 32;

/** @param {number} n */
const alignUp = (n) => Math.ceil(n / ALIGN) * ALIGN;

/**
 * A treap node: a free block, ordered by (size, ptr); pri: its heap priority.
 * @typedef {{ size: number, ptr: number, pri: number, left: Node | null, right: Node | null }} Node
 */

/** (a.size, a.ptr) < (size, ptr) @param {Node} a @param {number} size @param {number} ptr */
const before = (a, size, ptr) => a.size < size || (a.size === size && a.ptr < ptr);

/** The free blocks by (size, address): insert, remove, and the smallest at least a size. */
class SizeTree {
  /** @type {Node | null} */
  root = null;
  /** Nodes visited by all operations so far (tests check that it grows as O(log n) per call). */
  visits = 0;
  // Priorities from a fixed xorshift sequence: the tree's shape, and so the visits, are the same
  // on every run.
  #seed = 0x9e3779b9;

  #pri() {
    let x = this.#seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#seed = x >>> 0;
    return this.#seed;
  }

  /**
   * Splits t into the nodes before (size, ptr) and the rest.
   * @param {Node | null} t @param {number} size @param {number} ptr
   * @returns {[Node | null, Node | null]}
   */
  #split(t, size, ptr) {
    if (!t) return [null, null];
    this.visits++;
    if (before(t, size, ptr)) {
      const [l, r] = this.#split(t.right, size, ptr);
      t.right = l;
      return [t, r];
    }
    const [l, r] = this.#split(t.left, size, ptr);
    t.left = r;
    return [l, t];
  }

  /**
   * Joins two trees, every node of a before every node of b.
   * @param {Node | null} a @param {Node | null} b
   * @returns {Node | null}
   */
  #merge(a, b) {
    if (!a) return b;
    if (!b) return a;
    this.visits++;
    if (a.pri > b.pri) {
      a.right = this.#merge(a.right, b);
      return a;
    }
    b.left = this.#merge(a, b.left);
    return b;
  }

  /** @param {number} ptr @param {number} size */
  insert(ptr, size) {
    const [l, r] = this.#split(this.root, size, ptr);
    this.root = this.#merge(this.#merge(l, { size, ptr, pri: this.#pri(), left: null, right: null }), r);
  }

  /** Removes the block (size, ptr), which is in the tree. @param {number} ptr @param {number} size */
  remove(ptr, size) {
    /** @type {Node | null} */
    let parent = null;
    let t = this.root;
    while (t && (t.size !== size || t.ptr !== ptr)) {
      this.visits++;
      parent = t;
      t = before(t, size, ptr) ? t.right : t.left;
    }
    if (!t) throw new Error(`blockquant heap: free block ${ptr} is not indexed`);
    const joined = this.#merge(t.left, t.right);
    if (!parent) this.root = joined;
    else if (parent.left === t) parent.left = joined;
    else parent.right = joined;
  }

  /**
   * The smallest block of at least `size` bytes (the lowest address among equal sizes), or null.
   * @param {number} size
   */
  atLeast(size) {
    let t = this.root;
    /** @type {Node | null} */
    let best = null;
    while (t) {
      this.visits++;
      if (t.size >= size) {
        best = t;
        t = t.left;
      } else t = t.right;
    }
    return best;
  }
}

/** Best-fit allocator with coalescing over the wasm memory above `start` (see the top of file). */
export class WasmHeap {
  /** @type {WebAssembly.Memory} */
  #mem;
  #start;
  /** End of the managed region: [start, top) is either handed out or free. */
  #top;
  /** Free blocks: start -> size, end -> start, and by size. */
  /** @type {Map<number, number>} */
  #byStart = new Map();
  /** @type {Map<number, number>} */
  #byEnd = new Map();
  #tree = new SizeTree();
  /** Blocks handed out: address -> size. @type {Map<number, number>} */
  #live = new Map();
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

  /** Free blocks visited by the size index so far (for tests: O(log n) per call). */
  get visits() {
    return this.#tree.visits;
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
    let b = this.#tree.atLeast(size);
    if (!b) {
      this.#grow(n, size, what);
      b = /** @type {Node} */ (this.#tree.atLeast(size));
    }
    const { ptr, size: have } = b;
    this.#unlink(ptr, have);
    if (have > size) this.#link(ptr + size, have - size);
    this.#live.set(ptr, size);
    this.held += size;
    return ptr;
  }

  /**
   * Grows memory so that a free block of `size` bytes ends at the new top.
   * @param {number} n @param {number} size @param {string} what
   */
  #grow(n, size, what) {
    // Extend a free block that ends at the top rather than leave it behind.
    const tailStart = this.#byEnd.get(this.#top);
    const tail = tailStart === undefined ? 0 : this.#top - tailStart;
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
  }

  /**
   * Returns a block to the heap.
   * @param {number} ptr an address alloc returned, not freed since
   * @param {number} n the byte count it was asked with
   * @throws {Error} a block freed twice, never allocated, or freed with another size
   */
  free(ptr, n) {
    const size = WasmHeap.size(n);
    const got = this.#live.get(ptr);
    if (got === undefined) throw new Error(`blockquant heap: block ${ptr} freed twice (or never allocated)`);
    if (got !== size) throw new Error(`blockquant heap: block ${ptr} of ${got} bytes freed as ${size}`);
    this.#live.delete(ptr);
    this.held -= size;
    this.#release(ptr, size);
  }

  /** Indexes a free block. @param {number} ptr @param {number} size */
  #link(ptr, size) {
    this.#byStart.set(ptr, size);
    this.#byEnd.set(ptr + size, ptr);
    this.#tree.insert(ptr, size);
  }

  /** Drops a free block from the indexes. @param {number} ptr @param {number} size */
  #unlink(ptr, size) {
    this.#byStart.delete(ptr);
    this.#byEnd.delete(ptr + size);
    this.#tree.remove(ptr, size);
  }

  /**
   * Makes [ptr, ptr + size) free, merged with the free blocks it touches.
   * @param {number} ptr @param {number} size
   */
  #release(ptr, size) {
    if (size === 0) return;
    let start = ptr,
      end = ptr + size;
    const prev = this.#byEnd.get(start);
    if (prev !== undefined) {
      this.#unlink(prev, start - prev);
      start = prev;
    }
    const nextSize = this.#byStart.get(end);
    if (nextSize !== undefined) {
      this.#unlink(end, nextSize);
      end += nextSize;
    }
    this.#link(start, end - start);
  }

  /** The free blocks, as [address, bytes] pairs in address order (for tests). */
  get freeBlocks() {
    return [...this.#byStart].sort((a, b) => a[0] - b[0]);
  }

  /** The heap's first address. */
  get start() {
    return this.#start;
  }
}
