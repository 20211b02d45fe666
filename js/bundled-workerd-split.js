// Where workerd finds the modules of the split layout (init({ layout: 'split' })): the SIMD128
// and scalar builds' core and side modules imported as wasm modules, as js/bundled-workerd.js
// imports the whole builds (such runtimes compile them when the worker loads). Imported on first
// use of the split layout only. One line per build and module of src/modules.inc.
import simd128_core from '../wasm/blockquant-simd128-core.wasm';
import simd128_quant from '../wasm/blockquant-simd128-quant.wasm';
import simd128_dot from '../wasm/blockquant-simd128-dot.wasm';
import simd128_grid from '../wasm/blockquant-simd128-grid.wasm';
import simd128_imat from '../wasm/blockquant-simd128-imat.wasm';
import scalar_core from '../wasm/blockquant-scalar-core.wasm';
import scalar_quant from '../wasm/blockquant-scalar-quant.wasm';
import scalar_dot from '../wasm/blockquant-scalar-dot.wasm';
import scalar_grid from '../wasm/blockquant-scalar-grid.wasm';
import scalar_imat from '../wasm/blockquant-scalar-imat.wasm';

/** @type {Record<string, WebAssembly.Module>} */
const MODULES = {
  'simd128-core': simd128_core,
  'simd128-quant': simd128_quant,
  'simd128-dot': simd128_dot,
  'simd128-grid': simd128_grid,
  'simd128-imat': simd128_imat,
  'scalar-core': scalar_core,
  'scalar-quant': scalar_quant,
  'scalar-dot': scalar_dot,
  'scalar-grid': scalar_grid,
  'scalar-imat': scalar_imat,
};

/**
 * A module of the split layout.
 * @param {import('./loader.js').Backend} backend
 * @param {string} name 'core' or a side module's name
 * @returns {Promise<WebAssembly.Module>}
 */
export async function splitModule(backend, name) {
  const m = MODULES[`${backend}-${name}`];
  if (!m)
    throw new Error(
      backend === 'relaxed'
        ? 'the relaxed build is not bundled for workerd; its split layout is the SIMD128 one here'
        : `no module ${name} of the ${backend} build`,
    );
  return m;
}
