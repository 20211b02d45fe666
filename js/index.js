// blockquant: ggml block-quantization codecs in WebAssembly. The public entry point for
// browsers, bundlers, workers and any runtime without a more specific entry; the builds are fetched next to the module (embedded copy as the fallback).

import { initWith } from './init.js';
import { cached } from './loader.js';
import { bundledModule } from './bundled-url.js';

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
