// Where workerd (and runtimes like it, which forbid compiling wasm bytes at run time) finds the
// bundled builds: both .wasm files imported as modules, which such runtimes and their bundlers
// compile when the worker loads. Reached through the "workerd" export condition.
import simd128 from '../wasm/blockquant-simd128.wasm';
import scalar from '../wasm/blockquant-scalar.wasm';

/** @typedef {import('./loader.js').Backend} Backend */

/**
 * The compiled module of a bundled build.
 * @param {Backend} backend
 * @returns {Promise<WebAssembly.Module>}
 */
export async function bundledModule(backend) {
  return backend === 'simd128' ? simd128 : scalar;
}
