// Builds GGUF files byte by byte for the tests, independently of js/gguf.js's writer.

export class Bytes {
  /** @param {{ le?: boolean, v1?: boolean }} [o] */
  constructor(o = {}) {
    this.le = o.le ?? true;
    this.v1 = o.v1 ?? false;
    /** @type {number[]} */
    this.b = [];
  }
  raw(...xs) {
    for (const x of xs) this.b.push(x & 0xff);
    return this;
  }
  int(n, v) {
    let x = BigInt.asUintN(n * 8, BigInt(v));
    const bytes = [];
    for (let i = 0; i < n; i++) {
      bytes.push(Number(x & 0xffn));
      x >>= 8n;
    }
    if (!this.le) bytes.reverse();
    return this.raw(...bytes);
  }
  u8(v) {
    return this.int(1, v);
  }
  u16(v) {
    return this.int(2, v);
  }
  u32(v) {
    return this.int(4, v);
  }
  u64(v) {
    return this.int(8, v);
  }
  /** A count or length: u64, or u32 in version 1. */
  len(v) {
    return this.v1 ? this.u32(v) : this.u64(v);
  }
  f32(v) {
    const d = new DataView(new ArrayBuffer(4));
    d.setFloat32(0, v, this.le);
    return this.raw(...new Uint8Array(d.buffer));
  }
  f64(v) {
    const d = new DataView(new ArrayBuffer(8));
    d.setFloat64(0, v, this.le);
    return this.raw(...new Uint8Array(d.buffer));
  }
  str(s) {
    const u = typeof s === 'string' ? new TextEncoder().encode(s) : s;
    this.len(u.length);
    return this.raw(...u);
  }
  /** magic, version, tensor count, kv count */
  header(version, nTensors, nKV) {
    this.raw(0x47, 0x47, 0x55, 0x46).u32(version);
    return this.len(nTensors).len(nKV);
  }
  /** A tensor info. */
  tensor(name, dims, type, offset) {
    this.str(name).u32(dims.length);
    for (const d of dims) this.len(d);
    return this.u32(type).u64(offset);
  }
  padTo(a) {
    while (this.b.length % a) this.b.push(0);
    return this;
  }
  get length() {
    return this.b.length;
  }
  bytes() {
    return new Uint8Array(this.b);
  }
}
