// Finding, compiling and instantiating the blockquant wasm builds. This file is the part every
// runtime shares; where a runtime finds the bundled builds is decided by the entry point:
//   js/index.js          browsers, bundlers, workers: fetch the .wasm next to this module
//                        (js/bundled-url.js), embedded copy only if that fetch is impossible
//   js/index-node.js     Node, Deno, Bun: read the .wasm file (js/bundled-file.js)
//   js/index-workerd.js  workerd and similar: the .wasm imported as a compiled module

/** @typedef {'relaxed' | 'simd128' | 'scalar'} Backend */
/** @typedef {(backend: Backend) => Promise<WebAssembly.Module>} BundledLoader */

// The smallest module that uses SIMD128: (func (result v128) i32.const 0 i32x4.splat).
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x11, 0x0b,
]);

/**
 * Whether this runtime validates WebAssembly SIMD128.
 * @returns {boolean}
 */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// A module that runs the two relaxed-SIMD instructions the relaxed build uses,
// i32x4.relaxed_dot_i8x16_i7x16_add_s and i16x8.relaxed_dot_i8x16_i7x16_s, on inputs from its memory:
//   (memory (export "m") 1)
//   (func (export "p")
//     (v128.store (i32.const 48) (i32x4.relaxed_dot_i8x16_i7x16_add_s
//       (v128.load (i32.const 0)) (v128.load offset=16 (i32.const 0)) (v128.load offset=32 (i32.const 0))))
//     (v128.store (i32.const 64) (i16x8.relaxed_dot_i8x16_i7x16_s
//       (v128.load (i32.const 0)) (v128.load offset=16 (i32.const 0)))))
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x05,
  0x03, 0x01, 0x00, 0x01, 0x07, 0x09, 0x02, 0x01, 0x6d, 0x02, 0x00, 0x01, 0x70, 0x00, 0x00, 0x0a, 0x35, 0x01, 0x33,
  0x00, 0x41, 0x30, 0x41, 0x00, 0xfd, 0x00, 0x04, 0x00, 0x41, 0x00, 0xfd, 0x00, 0x04, 0x10, 0x41, 0x00, 0xfd, 0x00,
  0x04, 0x20, 0xfd, 0x93, 0x02, 0xfd, 0x0b, 0x04, 0x00, 0x41, 0xc0, 0x00, 0x41, 0x00, 0xfd, 0x00, 0x04, 0x00, 0x41,
  0x00, 0xfd, 0x00, 0x04, 0x10, 0xfd, 0x92, 0x02, 0xfd, 0x0b, 0x04, 0x00, 0x0b,
]);

// Probe inputs: a (signed bytes), b (the 7-bit operand), c (i32 accumulators). The i32 results
// (lanes 0-3) come first, then the eight i16 ones. Lanes 0-2 of the i32 dot, and 0-5 of the i16
// dot, are the cases the kernels rely on, where every conforming implementation gives the exact
// sum: the extremes -128 * 127 (a 16-bit pairwise sum, -32512, that must not saturate or be
// doubled), mixed signs and zeros, and the accumulator added once. The last lanes set the top bit
// of b, where the proposal allows either the signed or the unsigned reading; anything else there
// is a broken implementation. (Node 20 with --experimental-wasm-relaxed-simd returns twice the
// i32 sums: -130048 for lane 0.)
const PROBE_A = [-128, -128, -128, -128, 127, 127, -1, 5, -128, 3, -7, 100, 1, 2, 3, 4];
const PROBE_B = [127, 127, 127, 127, 127, 127, 127, 0, 1, 2, 3, 4, 0x80, 0x81, 0xff, 0x01];
const PROBE_C = [1000, -5, 7, 0];
const PROBE_WANT = [
  ...[[-64024], [32126], [264], [-381, 1155]],
  ...[[-32512], [-32512], [32258], [-127], [-122], [379], [-382, 386], [1, 769]],
];

/** @type {string | undefined} */
let relaxedVerdict;

/**
 * The verdict on a probe run: '' when its results are the ones the kernels need.
 * @param {(a: number[], b: number[], c: number[]) => number[]} run the relaxed dots of a, b, c: the
 *   four i32 lanes of i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c), then the eight i16 lanes of
 *   i16x8.relaxed_dot_i8x16_i7x16_s(a, b)
 * @returns {string}
 */
export function judgeProbe(run) {
  const got = run(PROBE_A, PROBE_B, PROBE_C);
  if (got.length === PROBE_WANT.length && got.every((v, i) => PROBE_WANT[i].includes(v))) return '';
  const name = got.slice(0, 4).every((v, i) => PROBE_WANT[i].includes(v))
    ? 'i16x8.relaxed_dot_i8x16_i7x16_s'
    : 'i32x4.relaxed_dot_i8x16_i7x16_add_s';
  return `this runtime computes ${name} wrong (probe gave ${got.join(', ')}; want ${PROBE_WANT.map((w) => w.join(' or ')).join(', ')})`;
}

/**
 * The relaxed dots on the given inputs, run in a memory: inputs at p, p + 16, p + 32, the i32 dot's
 * out at p + 48 and the i16 dot's at p + 64.
 * @param {WebAssembly.Memory} memory
 * @param {number} p
 * @param {() => void} call
 * @returns {(a: number[], b: number[], c: number[]) => number[]}
 */
const inMemory = (memory, p, call) => (a, b, c) => {
  new Int8Array(memory.buffer, p, 16).set(a);
  new Uint8Array(memory.buffer, p + 16, 16).set(b);
  new Int32Array(memory.buffer, p + 32, 4).set(c);
  call();
  return [...new Int32Array(memory.buffer, p + 48, 4), ...new Int16Array(memory.buffer, p + 64, 8)];
};

/**
 * The relaxed probe run through an instance of the relaxed build (its bq_relaxed_probe export, on
 * its scratch memory, which it leaves changed): '' when it passes, else why not. Not cached.
 * @param {WebAssembly.Instance} instance
 * @returns {string}
 * @throws {TypeError} when the instance is not of the relaxed build
 */
export function relaxedProbeThrough(instance) {
  const x = /** @type {Record<string, any>} */ (instance.exports);
  if (typeof x.bq_relaxed_probe !== 'function') throw new TypeError('not an instance of the relaxed build');
  const p = (x.bq_scratch_base() + 63) & ~63;
  if (p + 80 > x.memory.buffer.byteLength) x.memory.grow(1);
  return judgeProbe(inMemory(x.memory, p, () => x.bq_relaxed_probe(p, p + 16, p + 32, p + 48)));
}

/**
 * Why this runtime cannot use the relaxed build, or '' when it can: relaxed SIMD must validate and
 * the relaxed dot must give the exact results the kernels assume (a probe of the instruction the
 * build uses, run once per realm). Where the probe module cannot be compiled (runtimes that forbid
 * compiling wasm at run time), an instance of the relaxed build, if given, runs the same probe
 * through its bq_relaxed_probe export.
 * @param {WebAssembly.Instance} [instance] an instance of the relaxed build
 * @returns {string}
 */
export function relaxedUnsupported(instance) {
  if (relaxedVerdict !== undefined) return relaxedVerdict;
  if (!WebAssembly.validate(RELAXED_PROBE))
    return (relaxedVerdict = 'this runtime does not validate WebAssembly relaxed SIMD');
  let mod;
  try {
    mod = new WebAssembly.Module(RELAXED_PROBE);
  } catch (e) {
    if (!instance) return `the relaxed SIMD probe could not be compiled here (${/** @type {Error} */ (e).message})`;
    return (relaxedVerdict = relaxedProbeThrough(instance));
  }
  const inst = new WebAssembly.Instance(mod, {});
  const p = /** @type {Function} */ (inst.exports.p);
  return (relaxedVerdict = judgeProbe(inMemory(/** @type {WebAssembly.Memory} */ (inst.exports.m), 0, () => p())));
}

/**
 * Wraps a loader so each build is loaded once per realm; a failed load is retried next time.
 * @param {BundledLoader} load
 * @returns {BundledLoader}
 */
export function cached(load) {
  /** @type {Map<Backend, Promise<WebAssembly.Module>>} */
  const compiled = new Map();
  return (backend) => {
    let p = compiled.get(backend);
    if (!p) {
      p = load(backend);
      p.catch(() => compiled.delete(backend));
      compiled.set(backend, p);
    }
    return p;
  };
}

/**
 * The error for a runtime that refuses to compile wasm bytes (workerd and other edge runtimes
 * allow only modules imported as .wasm files), naming exactly what to pass instead.
 * @param {unknown} cause
 * @param {Backend} backend
 * @returns {Error}
 */
export function codegenError(cause, backend) {
  return new Error(
    `this runtime does not allow compiling WebAssembly at run time (${/** @type {Error} */ (cause).message}). ` +
      `Import the build as a module and pass it: ` +
      `import wasm from 'blockquant/wasm/blockquant-${backend}.wasm'; const bq = await init({ module: wasm }); ` +
      `(bundlers for workerd select this automatically through the "workerd" export condition)`,
    { cause },
  );
}

/**
 * Compiles wasm bytes. Bytes that validate but do not compile mean the embedder forbids run-time
 * compilation; the error then says what to pass instead.
 * @param {BufferSource} bytes
 * @param {Backend} [backend] the build the bytes should be, for the message (default simd128)
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compileBytes(bytes, backend = 'simd128') {
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    throw e instanceof WebAssembly.CompileError && WebAssembly.validate(bytes) ? codegenError(e, backend) : e;
  }
}

/**
 * A caller-supplied build as a compiled module.
 * @param {WebAssembly.Module | BufferSource | URL | string} source
 * @param {typeof fetch} [fetchFn]
 * @returns {Promise<WebAssembly.Module>}
 */
export async function moduleFrom(source, fetchFn = globalThis.fetch) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return compileBytes(source);
  if (source instanceof URL || typeof source === 'string') {
    const url = String(source);
    let res;
    try {
      res = await fetchFn(url);
    } catch (e) {
      throw new TypeError(
        `cannot fetch the wasm module at ${url}: ${/** @type {Error} */ (e).message}` +
          (url.startsWith('file:') ? ' (this runtime cannot fetch file: URLs; pass the bytes instead)' : ''),
      );
    }
    if (!res.ok) throw new TypeError(`cannot fetch the wasm module at ${url}: HTTP ${res.status}`);
    return compileBytes(await res.arrayBuffer());
  }
  throw new TypeError('module must be a WebAssembly.Module, an ArrayBuffer or view, or a URL');
}

/**
 * Checks, before instantiating it, that a module is a blockquant build that runs on its own memory.
 * @param {WebAssembly.Module} module
 * @throws {TypeError} when it is not a blockquant build
 */
export function checkModule(module) {
  const names = WebAssembly.Module.exports(module).map((e) => e.name);
  if (!names.includes('bq_build_info') || !names.includes('memory')) {
    throw new TypeError('the wasm module is not a blockquant build (no bq_build_info / memory export)');
  }
}

// bq_build_info() (src/build_info.c): the instruction set in the low byte, then two flags.
const BUILD_ISAS = /** @type {const} */ (['scalar', 'simd128', 'relaxed']);
const BUILD_SHARED_MEMORY = 0x100;
const BUILD_TEST_EXPORTS = 0x200;

/**
 * What a blockquant build says it is (its bq_build_info export): the build, whether it runs on a
 * shared memory (the threads build) and whether it is a test variant (every kernel exported).
 * @param {WebAssembly.Instance} instance
 * @returns {{ backend: Backend, sharedMemory: boolean, testExports: boolean }}
 * @throws {TypeError} when it is not a blockquant build
 */
export function buildInfo(instance) {
  const f = /** @type {unknown} */ (instance.exports.bq_build_info);
  const info = typeof f === 'function' ? f() : undefined;
  const backend = typeof info === 'number' ? BUILD_ISAS[info & 0xff] : undefined;
  if (!backend) throw new TypeError(`the wasm module is not a blockquant build (bq_build_info gave ${info})`);
  return {
    backend,
    sharedMemory: (info & BUILD_SHARED_MEMORY) !== 0,
    testExports: (info & BUILD_TEST_EXPORTS) !== 0,
  };
}

/**
 * Instantiates a blockquant build. The builds import nothing.
 * @param {WebAssembly.Module} module
 * @returns {Promise<WebAssembly.Instance>}
 */
export async function instantiate(module) {
  const imports = WebAssembly.Module.imports(module);
  if (imports.length) {
    throw new TypeError(
      `the wasm module imports ${imports.map((i) => `${i.module}.${i.name}`).join(', ')}; blockquant builds import nothing`,
    );
  }
  const instance = await WebAssembly.instantiate(module, {});
  const init = /** @type {Function | undefined} */ (instance.exports._initialize);
  if (init) init();
  return instance;
}
