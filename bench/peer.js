// llama.cpp's own wasm kernels as a benchmark peer: ggml's quantization code built to SIMD128
// (../shared/peers/ggml-simd128.wasm; its README lists the exports). Optional: when the folder is
// absent (or BENCH_PEERS names one without the build) the benchmark runs without the peer column.
// Nothing outside bench/ loads it.
import { existsSync, readFileSync } from 'node:fs';

/** The peer's column name in the table and in latest.json. */
export const PEER = 'llama.cpp';

/** A module instance with its own allocator (g_malloc), used like tests/lib/raw.js's Raw. */
export class Peer {
  /** @param {WebAssembly.Exports} exports */
  constructor(exports) {
    this.x = /** @type {Record<string, any>} */ (exports);
    this.mem = /** @type {WebAssembly.Memory} */ (exports.memory);
    /** @type {number[]} */
    this.ptrs = [];
  }

  /** Whether the peer exports `name` (mv_q4_K, g_deq_q6_K, ...). */
  has(name) {
    return typeof this.x[name] === 'function';
  }

  /** Reserves bytes (64-aligned, g_malloc) and returns the address; reset() frees them. */
  alloc(bytes) {
    const p = this.x.g_malloc(Math.max(bytes, 1));
    if (!p) throw new Error(`${PEER}: g_malloc(${bytes}) failed`);
    this.ptrs.push(p);
    return p;
  }

  /** Copies a typed array in and returns its address. */
  put(arr) {
    const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    const p = this.alloc(bytes.length);
    new Uint8Array(this.mem.buffer, p, bytes.length).set(bytes);
    return p;
  }

  /** Frees everything alloc() handed out. */
  reset() {
    for (const p of this.ptrs) this.x.g_free(p);
    this.ptrs = [];
  }

  bytes(p, n) {
    return new Uint8Array(this.mem.buffer, p, n).slice();
  }
  floats(p, n) {
    return new Float32Array(this.mem.buffer, p, n).slice();
  }
}

/**
 * Loads the peer's SIMD128 build from `dir` (a file URL of a folder), or returns null when the
 * folder or the build is not there. Throws when the build is there but does not instantiate.
 * @param {URL} dir
 * @returns {Promise<Peer | null>}
 */
export async function loadPeer(dir) {
  const file = new URL('ggml-simd128.wasm', dir);
  if (!existsSync(file)) return null;
  const stub = () => 0;
  const { instance } = await WebAssembly.instantiate(readFileSync(file), {
    env: { emscripten_notify_memory_growth: () => {} },
    // Never called on the paths the benchmark uses (no I/O, no exit).
    wasi_snapshot_preview1: { proc_exit: stub, fd_close: stub, fd_write: stub, fd_seek: stub },
  });
  const x = /** @type {Record<string, any>} */ (instance.exports);
  x._initialize();
  x.g_init(); // ggml's fp16 table, as ggml_cpu_init fills it
  return new Peer(instance.exports);
}
