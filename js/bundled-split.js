// Where browsers and bundlers find the modules of the split layout (init({ layout: 'split' })):
// each .wasm file next to this package's js/ folder, by a literal `new URL(..., import.meta.url)`
// so that Vite, webpack, Parcel and Rollup emit every file as an asset, fetched only when a codec
// loads that module. Imported on first use only (a dynamic import), so whole-layout pages never
// carry this table. One line per build and module of src/modules.inc (tests/split.test.js checks).
import { compileBytes } from './loader.js';

/** @type {Record<string, () => URL>} */
const URLS = {
  'scalar-core': () => new URL('../wasm/blockquant-scalar-core.wasm', import.meta.url),
  'scalar-quant': () => new URL('../wasm/blockquant-scalar-quant.wasm', import.meta.url),
  'scalar-dot': () => new URL('../wasm/blockquant-scalar-dot.wasm', import.meta.url),
  'scalar-grid': () => new URL('../wasm/blockquant-scalar-grid.wasm', import.meta.url),
  'scalar-imat': () => new URL('../wasm/blockquant-scalar-imat.wasm', import.meta.url),
  'simd128-core': () => new URL('../wasm/blockquant-simd128-core.wasm', import.meta.url),
  'simd128-quant': () => new URL('../wasm/blockquant-simd128-quant.wasm', import.meta.url),
  'simd128-dot': () => new URL('../wasm/blockquant-simd128-dot.wasm', import.meta.url),
  'simd128-grid': () => new URL('../wasm/blockquant-simd128-grid.wasm', import.meta.url),
  'simd128-imat': () => new URL('../wasm/blockquant-simd128-imat.wasm', import.meta.url),
  'relaxed-core': () => new URL('../wasm/blockquant-relaxed-core.wasm', import.meta.url),
  'relaxed-quant': () => new URL('../wasm/blockquant-relaxed-quant.wasm', import.meta.url),
  'relaxed-dot': () => new URL('../wasm/blockquant-relaxed-dot.wasm', import.meta.url),
  'relaxed-grid': () => new URL('../wasm/blockquant-relaxed-grid.wasm', import.meta.url),
  'relaxed-imat': () => new URL('../wasm/blockquant-relaxed-imat.wasm', import.meta.url),
};

/**
 * A module of the split layout, fetched (a streaming compile where the server sends
 * application/wasm).
 * @param {import('./loader.js').Backend} backend
 * @param {string} name 'core' or a side module's name
 * @returns {Promise<WebAssembly.Module>}
 */
export async function splitModule(backend, name) {
  const url = URLS[`${backend}-${name}`];
  if (!url) throw new TypeError(`no module ${name} of the ${backend} build`);
  const res = await fetch(url());
  if (!res.ok) throw new Error(`cannot fetch ${url()}: HTTP ${res.status}`);
  if (
    typeof WebAssembly.compileStreaming === 'function' &&
    /^application\/wasm\b/.test(res.headers.get('content-type') ?? '')
  )
    return WebAssembly.compileStreaming(res);
  return compileBytes(await res.arrayBuffer(), backend);
}
