// A codec's side modules of the split layout (src/modules.inc): which are loaded, loading one on
// first use (js/side-load.js places it in the core's memory and adds its kernels to the codec's),
// and the module a kernel needs. A whole build (no side modules) has every module loaded.

import { typeInfo } from './types.js';
import { BlockquantError, MODULE_NAMES, moduleOfKernel } from './side.js';
import { MODULES } from './gen/modules.js';

/** @typedef {'dequantize' | 'quantize' | 'quantize_rows' | 'dot' | 'matvec' | 'stats'} ModuleOp */
const OPS = ['dequantize', 'quantize', 'quantize_rows', 'dot', 'matvec', 'stats'];

export class SideModules {
  /** How to compile a side module of the core's build, or null for a whole build. */
  /** @type {((name: string) => Promise<WebAssembly.Module>) | null} */
  #sides;
  #backend;
  /** The codec's kernels, which a loaded module's exports join. */
  /** @type {Record<string, Function>} */
  #k;
  /** @type {(bytes: number, what: string) => number} */
  #alloc;
  /** Each module enabled (true) or loading (its promise). */
  /** @type {Map<string, Promise<void> | true>} */
  #enabled = new Map();
  /** Bytes of wasm memory the loaded side modules hold (data, bss, stack). */
  bytes = 0;

  /**
   * @param {((name: string) => Promise<WebAssembly.Module>) | null} sides
   * @param {string} backend the build's name, for messages
   * @param {Record<string, Function>} kernels the codec's kernel table (extended in place)
   * @param {(bytes: number, what: string) => number} alloc reserves wasm memory for a module
   */
  constructor(sides, backend, kernels, alloc) {
    this.#sides = sides;
    this.#backend = backend;
    this.#k = kernels;
    this.#alloc = alloc;
  }

  /** @returns {{ name: string, what: string, loaded: boolean }[]} */
  list() {
    return MODULES.map((m) => ({ ...m, loaded: this.loaded(m.name) }));
  }

  /** @param {string} name */
  loaded(name) {
    return !this.#sides || name === 'core' || this.#enabled.get(name) === true;
  }

  /**
   * @param {number | string} type
   * @param {string} op
   * @returns {{ module: string, loaded: boolean }}
   */
  moduleOf(type, op) {
    const m = moduleOfKernel(`bq_${typeInfo(type).name}_${op}`);
    if (!m || !OPS.includes(op)) throw new TypeError(`unknown operation ${JSON.stringify(op)}`);
    return { module: m.module, loaded: this.loaded(m.module) };
  }

  /** @param {string[]} names */
  async enable(names) {
    for (const n of names)
      if (!MODULE_NAMES.includes(n))
        throw new TypeError(`unknown module ${JSON.stringify(n)}; modules: ${MODULE_NAMES.join(', ')}`);
    await Promise.all(names.map((n) => this.#enable(n)));
  }

  /**
   * Loads the module that holds a type's kernel of an operation, for the async calls.
   * @param {number} id a type id
   * @param {ModuleOp} op
   */
  async need(id, op) {
    if (!this.#sides) return;
    const m = moduleOfKernel(`bq_${typeInfo(id).name}_${op}`);
    if (m) await this.#enable(m.module);
  }

  /** @param {string} name */
  #enable(name) {
    const sides = this.#sides;
    if (!sides || this.loaded(name)) return Promise.resolve();
    let p = this.#enabled.get(name);
    if (p === undefined) {
      p = (async () => {
        let module;
        try {
          module = await sides(name);
        } catch (e) {
          throw new BlockquantError(
            'MODULE_MISSING',
            `blockquant: module '${name}' of the ${this.#backend} build cannot be loaded (${/** @type {Error} */ (e).message})`,
            { cause: e },
          );
        }
        const { instantiateSide } = await import('./side-load.js');
        const side = await instantiateSide(module, this.#k, (n) => this.#alloc(n, `module '${name}'`));
        this.bytes += side.bytes;
        for (const [k, v] of Object.entries(side.exports)) if (k.startsWith('bq_')) this.#k[k] = v;
        this.#enabled.set(name, true);
      })();
      p.catch(() => this.#enabled.delete(name));
      this.#enabled.set(name, p);
    }
    return p;
  }
}
