// blockquant: ggml block-quantization codecs in WebAssembly. The public entry point; it works
// unchanged in browsers, Node, Deno and workers.

import { Codec } from './codec.js';
import { backendOf, bundledModule, instantiate, moduleFrom, simdSupported } from './loader.js';

export { GGMLType, CODEC_TYPES, typeInfo, typeId, vecDotType, knownTypes, byteLength } from './types.js';
export { simdSupported } from './loader.js';
export { Codec } from './codec.js';

/**
 * @typedef {object} InitOptions
 * @property {'auto' | 'simd128' | 'scalar'} [backend] 'auto' (default) picks simd128 where the
 *   runtime validates SIMD128; a named backend is honoured or init throws
 * @property {WebAssembly.Module | BufferSource | URL | string} [module] a build to use instead of
 *   the bundled one (edge runtimes import .wasm files as compiled modules)
 * @property {number} [stagingBytes] wasm memory used to stream data through (default 4 MiB);
 *   any input size works, in chunks of about this size
 * @property {typeof fetch} [fetch] used when module is a URL
 */

const DEFAULT_STAGING = 4 << 20;

/**
 * Loads a blockquant build and returns its codec API. The bundled builds are compiled once and
 * cached; each call returns a new instance with its own memory.
 * @param {InitOptions} [options]
 * @returns {Promise<Codec>}
 * @throws {Error} when the requested backend cannot run here, or the module is not a blockquant build
 */
export async function init(options = {}) {
  const backend = options.backend ?? 'auto';
  if (!['auto', 'simd128', 'scalar'].includes(backend)) {
    throw new TypeError(`backend must be 'auto', 'simd128' or 'scalar', got ${JSON.stringify(backend)}`);
  }
  const staging = options.stagingBytes ?? DEFAULT_STAGING;
  if (!Number.isSafeInteger(staging) || staging < 4096) throw new RangeError('stagingBytes must be an integer >= 4096');
  let module;
  if (options.module !== undefined) {
    module = await moduleFrom(options.module, options.fetch);
  } else {
    if (backend === 'simd128' && !simdSupported())
      throw new Error('backend simd128 requested, but this runtime does not support WebAssembly SIMD128');
    module = await bundledModule(
      backend === 'scalar' || (backend === 'auto' && !simdSupported()) ? 'scalar' : 'simd128',
    );
  }
  const got = backendOf(module);
  if (backend !== 'auto' && got !== backend)
    throw new Error(`backend ${backend} requested, but the given module is the ${got} build`);
  return new Codec(await instantiate(module), got, staging);
}

export {
  parseGGUF,
  openGGUF,
  writeGGUF,
  writeGGUFHeader,
  GGUFError,
  GGUFValueType,
  rowRange,
  toLittleEndian,
} from './gguf.js';
