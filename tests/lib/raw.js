// Direct calls of a build's kernel exports on its memory, for kernel-level tests and benchmarks.

export class Raw {
  /** @param {WebAssembly.Exports} exports */
  constructor(exports) {
    this.x = /** @type {Record<string, any>} */ (exports);
    this.mem = /** @type {WebAssembly.Memory} */ (exports.memory);
    this.base = this.x.bq_scratch_base();
    this.top = this.base;
  }

  reset() {
    this.top = this.base;
  }

  /** Reserves bytes (64-aligned) and returns the address; grows memory when needed. */
  alloc(bytes) {
    const p = this.top;
    this.top = p + Math.ceil(Math.max(bytes, 1) / 64) * 64;
    const have = this.mem.buffer.byteLength;
    if (this.top > have) this.mem.grow(Math.ceil((this.top - have) / 65536));
    return p;
  }

  /** Copies a typed array in and returns its address. */
  put(arr) {
    const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    const p = this.alloc(bytes.length);
    new Uint8Array(this.mem.buffer, p, bytes.length).set(bytes);
    return p;
  }

  bytes(p, n) {
    return new Uint8Array(this.mem.buffer, p, n).slice();
  }
  floats(p, n) {
    return new Float32Array(this.mem.buffer, p, n).slice();
  }
  /** A zeroed dot state of BQ_ACC_LANES floats (the build says how many). */
  zeroAcc() {
    const lanes = this.x.bq_acc_lanes();
    const p = this.alloc(4 * lanes);
    new Float32Array(this.mem.buffer, p, lanes).fill(0);
    return p;
  }
}

/** The kernels of a build, from its export names: { name, op, type, type2, isa }. (A dot's state
 * sum, bq_<t>_dot_<t2>_sum[__<isa>], and the type table queries, bq_type_*, are not kernels.) */
export function kernelsOf(exports) {
  const out = [];
  for (const name of Object.keys(exports)) {
    const m =
      /^bq_([a-z0-9]+_?[0-9]?)_(quantize|dequantize|stats|dot_([a-z0-9_]+?)|matvec_([a-z0-9_]+?))(__simd128|__ref)?$/.exec(
        name,
      );
    if (!m || /_sum(__simd128|__ref)?$/.test(name) || name.startsWith('bq_type_')) continue;
    const op = m[2].startsWith('dot') ? 'dot' : m[2].startsWith('matvec') ? 'matvec' : m[2];
    out.push({
      name,
      base: name.replace(/__(simd128|ref)$/, ''),
      op,
      type: m[1],
      type2: m[3] ?? m[4] ?? null,
      isa: m[5] ? m[5].slice(2) : 'public',
    });
  }
  return out;
}
