// init, shared by the entry points: option checks, backend selection, instantiation.

import { Codec } from './codec.js';
import { buildInfo, checkModule, instantiate, moduleFrom, relaxedUnsupported, simdSupported } from './loader.js';

/**
 * @typedef {object} InitOptions
 * @property {'auto' | 'relaxed' | 'simd128' | 'scalar'} [backend] 'auto' (default) picks relaxed
 *   where relaxed SIMD validates and a probe of its dot instruction gives exact results (and the
 *   build can be loaded), else simd128 where SIMD128 validates, else scalar; a named backend is
 *   honoured or init throws
 * @property {WebAssembly.Module | BufferSource | URL | string} [module] a build to use instead of
 *   the bundled one (edge runtimes import .wasm files as compiled modules)
 * @property {number} [stagingBytes] wasm memory used to stream data through (default 4 MiB);
 *   any input size works, in chunks of about this size
 * @property {typeof fetch} [fetch] used when module is a URL
 * @property {'whole' | 'split'} [layout] 'whole': one module with every kernel; 'split':
 *   the build's core (the type table and the decoders of every type but the grid types), and side
 *   modules loaded on first use (codec.enable(name), or the async calls that need them; see
 *   codec.modules and src/modules.inc). Not with `module`. Default: 'split' from the browsers'
 *   entry (the whole build where the split modules cannot be loaded), 'whole' in Node, Deno, Bun
 *   and workerd, and with `module`.
 */

const DEFAULT_STAGING = 4 << 20;

/** @typedef {(backend: import('./loader.js').Backend, name: string) => Promise<WebAssembly.Module>} SplitLoader */

/**
 * init with a given way of loading the bundled builds (see js/loader.js).
 * @param {InitOptions} options
 * @param {import('./loader.js').BundledLoader} whole
 * @param {SplitLoader} [split] loads a module of the split layout (the core or a side module)
 * @param {'whole' | 'split'} [layoutDefault] the layout when options name none: 'split' (the
 *   browsers' entry) falls back to the whole build, with its embedded copy, where the split
 *   modules cannot be loaded (a bundle that does not emit them, such as esbuild's)
 * @returns {Promise<Codec>}
 */
export async function initWith(options, whole, split, layoutDefault = 'whole') {
  if (layoutDefault === 'split' && split && options.layout === undefined && options.module === undefined) {
    try {
      return await initWith({ ...options, layout: 'split' }, whole, split);
    } catch {
      // The whole layout's own outcome (its build, its embedded copy or its error) is the answer.
    }
  }
  const layout = options.layout ?? 'whole';
  if (layout !== 'whole' && layout !== 'split')
    throw new TypeError(`layout must be 'whole' or 'split', got ${JSON.stringify(layout)}`);
  if (layout === 'split' && (options.module !== undefined || !split))
    throw new TypeError(
      options.module !== undefined
        ? "layout 'split' loads the bundled modules; it cannot take `module`"
        : 'this entry point has no split layout',
    );
  /** @type {import('./loader.js').BundledLoader} */
  const bundled = layout === 'split' && split ? (b) => split(b, 'core') : whole;
  const backend = options.backend ?? 'auto';
  if (!['auto', 'relaxed', 'simd128', 'scalar'].includes(backend)) {
    throw new TypeError(`backend must be 'auto', 'relaxed', 'simd128' or 'scalar', got ${JSON.stringify(backend)}`);
  }
  const staging = options.stagingBytes ?? DEFAULT_STAGING;
  if (!Number.isSafeInteger(staging) || staging < 4096) throw new RangeError('stagingBytes must be an integer >= 4096');
  let module;
  if (options.module !== undefined) {
    module = await moduleFrom(options.module, options.fetch);
  } else {
    if (backend === 'simd128' && !simdSupported())
      throw new Error('backend simd128 requested, but this runtime does not support WebAssembly SIMD128');
    if (backend === 'relaxed' && relaxedUnsupported())
      throw new Error(`backend relaxed requested, but ${relaxedUnsupported()}`);
    if (backend === 'relaxed') module = await bundled('relaxed');
    else if (backend === 'auto' && !relaxedUnsupported()) {
      // Where the relaxed build cannot be loaded (not bundled for this runtime), simd128 serves.
      module = await bundled('relaxed').catch(() => undefined);
    }
    module ??= await bundled(backend === 'scalar' || (backend === 'auto' && !simdSupported()) ? 'scalar' : 'simd128');
  }
  checkModule(module);
  const instance = await instantiate(module);
  const got = buildInfo(instance).backend;
  if (backend !== 'auto' && got !== backend)
    throw new Error(`backend ${backend} requested, but the given module is the ${got} build`);
  // A given relaxed build runs only where the probe passes (through the instance where the runtime
  // cannot compile the probe module).
  const why = got === 'relaxed' ? relaxedUnsupported(instance) : '';
  if (why) throw new Error(`the given module is the relaxed build, but ${why}; use the simd128 build`);
  // (Codec's JSDoc names only 'simd128' | 'scalar'; it should take loader.js's Backend.)
  return new Codec(instance, got, staging, layout === 'split' && split ? (name) => split(got, name) : undefined);
}
