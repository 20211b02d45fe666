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
  // The relaxed build is not imported here (every import is part of the worker's upload); pass it
  // as a module to use it. 'auto' then takes simd128.
  if (backend === 'relaxed')
    throw new Error(
      "the relaxed build is not bundled for workerd: import wasm from 'blockquant/wasm/blockquant-relaxed.wasm' and pass init({ module: wasm })",
    );
  return backend === 'simd128' ? simd128 : scalar;
}
