// Side modules of the split layout (src/modules.inc): position-independent wasm modules
// (wasm-ld -shared) placed in a core's memory. Each gets a block of the core's heap for its data,
// bss and stack, a function table of its own (nothing passes function pointers between modules),
// and the core's exports for the functions it imports (libc's log2; memcpy and memset in the scalar
// build). Its kernels then run on the same memory as the core's, so the codec calls them as its own.
// Imported by Codec.enable only, so pages that never enable a module do not load it.

/** Stack bytes each side module gets (the core's is 256 KiB; no kernel nests deeper than that). */
const STACK_BYTES = 256 << 10;

/**
 * The memory and table a position-independent module asks for (its dylink.0 section).
 * @param {WebAssembly.Module} module
 * @returns {{ memSize: number, memAlign: number, tableSize: number }}
 * @throws {TypeError} when the module has no dylink.0 section (not a side module)
 */
export function dylinkInfo(module) {
  const [sec] = WebAssembly.Module.customSections(module, 'dylink.0');
  if (!sec) throw new TypeError('the wasm module is not a blockquant side module (no dylink.0 section)');
  const b = new Uint8Array(sec);
  let p = 0;
  const leb = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const c = b[p++];
      v += (c & 0x7f) * 2 ** shift;
      if (!(c & 0x80)) return v;
    }
  };
  while (p < b.length) {
    const kind = b[p++];
    const len = leb();
    const end = p + len;
    // WASM_DYLINK_MEM_INFO: memory size, its alignment (log2), table size, its alignment
    if (kind === 1) return { memSize: leb(), memAlign: leb(), tableSize: leb() };
    p = end;
  }
  return { memSize: 0, memAlign: 0, tableSize: 0 };
}

/**
 * Instantiates a side module in a core's memory.
 * @param {WebAssembly.Module} module a side module of the core's build
 * @param {Record<string, any>} core the core instance's exports
 * @param {(bytes: number) => number} alloc a block of the core's memory (64-byte aligned) that stays the module's
 * @returns {Promise<{ exports: Record<string, any>, bytes: number }>} its exports, and the bytes of memory it holds
 * @throws {TypeError} when the module imports a function the core does not export
 */
export async function instantiateSide(module, core, alloc) {
  const { memSize, memAlign, tableSize } = dylinkInfo(module);
  if (memAlign > 6)
    throw new TypeError(`the side module asks for ${2 ** memAlign}-byte aligned data; at most 64 is supported`);
  const bytes = Math.ceil(memSize / 64) * 64 + STACK_BYTES;
  const base = alloc(bytes);
  const memory = /** @type {WebAssembly.Memory} */ (core.memory);
  // Data segments write the initialised data; bss and stack start as zeros.
  new Uint8Array(memory.buffer, base, bytes).fill(0);
  const i32 = (/** @type {number} */ v, mutable = false) => new WebAssembly.Global({ value: 'i32', mutable }, v);
  /** @type {Record<string, any>} */
  const env = {
    memory,
    __indirect_function_table: new WebAssembly.Table({ element: 'anyfunc', initial: tableSize }),
    __memory_base: i32(base),
    __table_base: i32(0),
    __stack_pointer: i32(base + bytes, true),
  };
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === 'env' && imp.name in env) continue;
    if (imp.module !== 'env' || imp.kind !== 'function' || typeof core[imp.name] !== 'function') {
      throw new TypeError(`the side module imports ${imp.module}.${imp.name}, which the core does not provide`);
    }
    env[imp.name] = core[imp.name];
  }
  const instance = await WebAssembly.instantiate(module, { env });
  const x = /** @type {Record<string, any>} */ (instance.exports);
  x.__wasm_apply_data_relocs?.();
  x.__wasm_call_ctors?.();
  return { exports: x, bytes };
}
