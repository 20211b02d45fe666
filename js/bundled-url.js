// Where browsers, bundlers and workers find the bundled builds: the .wasm file next to this
// package's js/ folder, fetched with a streaming compile. Vite, webpack, Parcel and Rollup see each
// `new URL('...wasm', import.meta.url)` and emit that file as an asset; a bundle that does not
// (esbuild), or a runtime that cannot fetch it, falls back to a copy embedded as base64 in a module
// of its own (js/wasm/*.js), imported only then, so other builds never download it.
import { compileBytes } from './loader.js';

/** @typedef {import('./loader.js').Backend} Backend */

/**
 * @param {Backend} backend
 * @returns {URL}
 */
function wasmURL(backend) {
  // Two literal expressions, not one with a variable: bundlers rewrite only the literal form, and
  // only the selected build is then fetched.
  if (backend === 'relaxed') return new URL('../wasm/blockquant-relaxed.wasm', import.meta.url);
  return backend === 'simd128'
    ? new URL('../wasm/blockquant-simd128.wasm', import.meta.url)
    : new URL('../wasm/blockquant-scalar.wasm', import.meta.url);
}

/**
 * @param {string} b64
 * @returns {Uint8Array<ArrayBuffer>}
 */
function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Fetches and compiles the .wasm file of a build; streaming where the server sends
 * application/wasm, from the bytes otherwise.
 * @param {URL} url
 * @returns {Promise<WebAssembly.Module>}
 */
async function fetchModule(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  if (
    typeof WebAssembly.compileStreaming === 'function' &&
    /^application\/wasm\b/.test(res.headers.get('content-type') ?? '')
  ) {
    return WebAssembly.compileStreaming(res);
  }
  return WebAssembly.compile(await res.arrayBuffer());
}

/**
 * A module fetched from url, or where that is impossible (no fetch, no file next to the bundle, a
 * fetch that fails), compiled from the base64 copy that `embedded` imports. Shared by the bundled
 * builds (bundledModule) and the threads build (js/threads.js threadsModuleURL).
 * @param {() => URL} url the .wasm file's URL (made inside the fallback: where import.meta.url is
 *   no URL, as in some edge runtimes' bundles, that too falls back to the embedded copy)
 * @param {() => Promise<{ default: string }>} embedded imports the js/wasm/<build>.js copy
 * @param {string} build the build's name, for the message when both are missing
 * @param {(bytes: Uint8Array<ArrayBuffer>) => Promise<WebAssembly.Module>} [compile]
 * @returns {Promise<WebAssembly.Module>}
 */
export async function fetchOrEmbedded(url, embedded, build, compile = (b) => WebAssembly.compile(b)) {
  try {
    return await fetchModule(url());
  } catch {
    // Fall through to the embedded copy; its own failure is the one reported.
  }
  let b64;
  try {
    b64 = (await embedded()).default;
  } catch (e) {
    throw new Error(
      `the blockquant ${build} build is missing: neither wasm/blockquant-${build}.wasm nor js/wasm/${build}.js ` +
        `could be loaded (${/** @type {Error} */ (e).message}); in a clone, run make`,
      { cause: e },
    );
  }
  return compile(fromBase64(b64));
}

/**
 * The compiled module of a bundled build: the .wasm file fetched, or where that is impossible (no
 * fetch, no file next to the bundle, a fetch that fails), the embedded copy.
 * @param {Backend} backend
 * @returns {Promise<WebAssembly.Module>}
 */
export function bundledModule(backend) {
  // Literal import() expressions, one per build: bundlers make each its own chunk.
  const embedded = () =>
    backend === 'relaxed'
      ? import('./wasm/relaxed.js')
      : backend === 'simd128'
        ? import('./wasm/simd128.js')
        : import('./wasm/scalar.js');
  return fetchOrEmbedded(
    () => wasmURL(backend),
    embedded,
    backend,
    (b) => compileBytes(b, backend),
  );
}
