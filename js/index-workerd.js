// blockquant: ggml block-quantization codecs in WebAssembly. The public entry point for
// workerd and runtimes like it (the "workerd" export condition): the builds are imported as compiled wasm modules, so init() needs no argument where run-time compilation is forbidden.

import { initWith } from './init.js';
import { cached } from './loader.js';
import { bundledModule } from './bundled-workerd.js';

export * from './api.js';

/** @typedef {import('./init.js').InitOptions} InitOptions */

const bundled = cached(bundledModule);

/**
 * Loads a blockquant build and returns its codec API. The bundled builds are compiled once and
 * cached; each call returns a new instance with its own memory.
 * @param {InitOptions} [options]
 * @returns {Promise<import('./codec.js').Codec>}
 * @throws {Error} when the requested backend cannot run here, the module is not a blockquant build,
 *   or (message naming what to pass) the runtime forbids compiling wasm and no module was given
 */
export function init(options = {}) {
  return initWith(options, bundled);
}
