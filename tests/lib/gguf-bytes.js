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

// GGUF value types and ggml type ids, spelled out here so the fixtures do not depend on js/.
const T = { UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8 };
const A = { ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12 };
const Q8_0 = 8,
  F32 = 0;

/**
 * A file with one KV of each scalar type, arrays (numeric, string, bool, nested), and two tensors
 * (a 64x2 Q8_0 whose bytes count 0, 1, 2, ... and an F32 [1, 2, 3]).
 * @param {{ le?: boolean, version?: number }} [o]
 */
export function sampleFile({ le = true, version = 3 } = {}) {
  const w = new Bytes({ le, v1: version === 1 });
  w.header(version, 2, 17);
  w.str('u8').u32(T.UINT8).u8(200);
  w.str('i8').u32(T.INT8).u8(-5);
  w.str('u16').u32(T.UINT16).u16(60000);
  w.str('i16').u32(T.INT16).u16(-300);
  w.str('u32').u32(T.UINT32).u32(4000000000);
  w.str('i32').u32(T.INT32).u32(-7);
  w.str('f32').u32(T.FLOAT32).f32(1.5);
  w.str('bool').u32(T.BOOL).u8(2); // any non-zero byte is true
  w.str('str').u32(T.STRING).str('▁héllo\u0000x');
  w.str('u64')
    .u32(A.UINT64)
    .u64(2n ** 63n + 5n);
  w.str('i64')
    .u32(A.INT64)
    .u64(-(2n ** 40n));
  w.str('f64').u32(A.FLOAT64).f64(Math.PI);
  w.str('arr.f32').u32(A.ARRAY).u32(T.FLOAT32).len(3).f32(1).f32(-2).f32(0.25);
  w.str('arr.str').u32(A.ARRAY).u32(T.STRING).len(2).str('a').str('▁b');
  w.str('arr.bool').u32(A.ARRAY).u32(T.BOOL).len(3).u8(1).u8(0).u8(7);
  w.str('arr.i64').u32(A.ARRAY).u32(A.INT64).len(2).u64(-1).u64(3);
  w.str('arr.nested').u32(A.ARRAY).u32(A.ARRAY).len(2).u32(T.INT32).len(2).u32(1).u32(-2).u32(T.STRING).len(1).str('z');
  w.tensor('weights', [64, 2], Q8_0, 0);
  w.tensor('bias', [3], F32, 160);
  w.padTo(32);
  const data = w.length;
  for (let i = 0; i < 2 * 2 * 34; i++) w.u8(i); // 4 Q8_0 blocks, padded to 160
  while (w.length < data + 160) w.u8(0);
  w.f32(1).f32(2).f32(3);
  return { bytes: w.bytes(), dataOffset: data };
}
