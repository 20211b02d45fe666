// blockquant: ggml block-quantization codecs in WebAssembly. The public entry point for
// browsers, bundlers, workers and any runtime without a more specific entry; the builds are fetched next to the module (embedded copy as the fallback).

import { initWith } from './init.js';
import { openGGUF } from './gguf.js';
import { readImatrix } from './model/imatrix.js';
import { planWith, quantizeWith } from './model/quantize.js';
import { cached, relaxedUnsupported } from './loader.js';
import { bundledModule } from './bundled-url.js';

export * from './api.js';

/** @typedef {import('./init.js').InitOptions} InitOptions */

const bundled = cached(bundledModule);
/** @type {import('./init.js').SplitLoader} */
const split = (backend, name) => import('./bundled-split.js').then((m) => m.splitModule(backend, name));

/**
 * Loads a blockquant build and returns its codec API. The bundled builds are compiled once and
 * cached; each call returns a new instance with its own memory. With `threads: n` (n > 1) the heavy
 * calls run on n module workers sharing one memory and return Promises (a ThreadedCodec), where the
 * page is cross-origin isolated; elsewhere the synchronous codec with `threads === 1`. Without
 * `layout` or `module` this entry loads the split layout: the core decodes every type but the grid
 * types; `await bq.enable(...)` (or the async calls, which load what they need) adds the rest.
 * @overload
 * @param {InitOptions & { threads?: 1 }} [options]
 * @returns {Promise<import('./codec.js').Codec>}
 */
/**
 * @overload
 * @param {InitOptions & import('./threads.js').ThreadOptions & { threads: number }} options
 * @returns {Promise<import('./threads.js').ThreadedCodec | import('./codec.js').Codec>}
 */
/**
 * @param {InitOptions & import('./threads.js').ThreadOptions & { threads?: number }} [options]
 * @throws {Error} when the requested backend cannot run here, the module is not a blockquant build,
 *   or (message naming what to pass) the runtime forbids compiling wasm and no module was given
 * @throws {RangeError} threads that is not a positive integer
 */
export async function init(options = {}) {
  const { threads, minSplitBytes, roundBytes, ...rest } = options;
  if (threads === undefined) return initWith(rest, bundled, split, 'split');
  const { initThreads, threadsModuleURL, relaxedThreadsModuleURL, spawnBrowser, spawnEmbedded } =
    await import('./threads.js');
  // The relaxed threads build where the relaxed probe passes (not Node 20), else the SIMD128 one;
  // backend 'relaxed' asks for the relaxed one (where the probe fails, the one-thread codec's
  // init reports why), 'scalar' or a module of the caller's runs on one thread.
  const relaxed = rest.backend !== 'simd128' && !relaxedUnsupported();
  const other =
    (rest.backend && !['auto', 'simd128', 'relaxed'].includes(rest.backend)) ||
    (rest.backend === 'relaxed' && !relaxed) ||
    rest.module !== undefined;
  return initThreads(threads, {
    module: relaxed ? () => relaxedThreadsModuleURL().catch(() => threadsModuleURL()) : threadsModuleURL,
    spawn: other || typeof Worker !== 'function' ? null : () => spawnBrowser(),
    fallbackSpawn: spawnEmbedded,
    single: () => initWith(rest, bundled),
    stagingBytes: rest.stagingBytes,
    minSplitBytes,
    roundBytes,
  });
}

/** @type {import('./model/quantize.js').Env} */
const ENV = { init, openGGUF, readImatrix };

/**
 * The per-tensor plan llama-quantize would follow for a model (types, sizes, the output's header,
 * total size and bits per weight), without writing anything. See README "Quantizing whole models".
 * @param {unknown} source anything openGGUF takes, or a file openGGUF or parseGGUF returned
 * @param {import('./model/quantize.js').QuantizeModelOptions} options { ftype, imatrix, ...llama-quantize's flags }
 * @returns {Promise<import('./model/recipe.js').QuantizePlan>}
 * @throws {import('./model/errors.js').PlanError} what llama-quantize would refuse; GGUFError for the source
 */
export function planQuantize(source, options) {
  return planWith(ENV, source, options);
}

/**
 * Quantizes a model as llama_model_quantize does, byte for byte, and streams the file to `sink`
 * (header first, then the tensors front to back): a function given each chunk, a WritableStream
 * (FileSystemWritableFileStream too) or a Node FileHandle; with keepSplit an array of one per
 * output shard. Memory is bounded by a few chunks of rows, not by the model.
 * @param {unknown} source anything openGGUF takes, or a file openGGUF or parseGGUF returned
 * @param {unknown} sink
 * @param {import('./model/quantize.js').QuantizeModelOptions} options { ftype, imatrix, ...flags,
 *   threads | codec, signal, onProgress }
 * @returns {Promise<import('./model/recipe.js').QuantizePlan>} the plan written
 * @throws {import('./model/errors.js').PlanError} what llama-quantize would refuse, UNSUPPORTED
 *   types, BAD_OPTION; GGUFError for the source; the sink's errors; the signal's reason
 */
export async function quantizeModel(source, sink, options) {
  // A codec of the split layout gets the modules the pipeline calls synchronously.
  await (await import('./side.js')).enableForModel(options);
  return quantizeWith(ENV, source, sink, options);
}
