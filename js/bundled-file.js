// Where Node, Deno and Bun find the bundled builds: the .wasm files of this package, read from
// disk. Node-only (imported by js/index-node.js, the "node" export condition).
import { readFile } from 'node:fs/promises';
import { compileBytes } from './loader.js';

/** @typedef {import('./loader.js').Backend} Backend */

/**
 * The compiled module of a bundled build, read from wasm/blockquant-<backend>.wasm. When the file
 * is not there (this module bundled into an app elsewhere), the browser loader's embedded copy.
 * @param {Backend} backend
 * @returns {Promise<WebAssembly.Module>}
 * @throws {Error} when neither the file nor the embedded copy exists (a clone where make has not run)
 */
export async function bundledModule(backend) {
  let bytes;
  try {
    bytes = await readFile(new URL(`../wasm/blockquant-${backend}.wasm`, import.meta.url));
  } catch {
    return (await import('./bundled-url.js')).bundledModule(backend);
  }
  return compileBytes(bytes, backend);
}

/**
 * A module of the split layout (src/modules.inc), read from wasm/blockquant-<backend>-<name>.wasm.
 * @param {Backend} backend
 * @param {string} name 'core' or a side module's name
 * @returns {Promise<WebAssembly.Module>}
 */
export async function splitModule(backend, name) {
  let bytes;
  try {
    bytes = await readFile(new URL(`../wasm/blockquant-${backend}-${name}.wasm`, import.meta.url));
  } catch {
    return (await import('./bundled-split.js')).splitModule(backend, name);
  }
  return compileBytes(bytes, backend);
}
