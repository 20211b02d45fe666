// The GGUF writer: version 3, little-endian, gguf-py's layout (data aligned, every tensor padded).

import { typeInfo } from './types.js';
import { VT, SIZE, TYPED_ARRAYS, ACCESSOR, MAX_DIMS, DEFAULT_ALIGNMENT, pad } from './gguf-format.js';

/** @typedef {import('./gguf-format.js').KV} KV */

const utf8Encoder = new TextEncoder();

/**
 * @typedef {{ name: string, type: number, dims: number[], data: Uint8Array }} TensorIn
 */

/**
 * The header of a GGUF v3 file (little-endian, gguf-py's layout) for tensors of the given byte
 * lengths, padded to the alignment: the data section starts right after it, and tensor i's data
 * at offsets[i] within it, each padded to the alignment. For writing large files in pieces.
 * @param {{ kv?: KV[], tensors?: { name: string, type: number, dims: number[], byteLength?: number, data?: Uint8Array }[], alignment?: number }} spec
 * @returns {{ header: Uint8Array, offsets: number[], alignment: number, dataBytes: number }}
 */
export function writeGGUFHeader(spec) {
  const kv = [...(spec.kv ?? [])];
  const tensors = spec.tensors ?? [];
  let alignment = spec.alignment ?? DEFAULT_ALIGNMENT;
  const al = kv.find((e) => e.key === 'general.alignment');
  if (al) alignment = Number(al.value);
  else if (alignment !== DEFAULT_ALIGNMENT) kv.push({ key: 'general.alignment', type: VT.UINT32, value: alignment });
  if (!Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0)
    throw new RangeError(`alignment must be a power of two, got ${alignment}`);
  const w = new Writer();
  w.bytes([0x47, 0x47, 0x55, 0x46]);
  w.u32(3);
  w.u64(BigInt(tensors.length));
  w.u64(BigInt(kv.length));
  for (const e of kv) {
    w.string(e.key);
    w.u32(e.type);
    w.value(e.type, e.value, e.itemType, e.key);
  }
  let offset = 0;
  const offsets = [];
  for (const t of tensors) {
    const info = typeInfo(t.type);
    const n = t.dims.reduce((x, y) => x * y, 1);
    const want = (n / info.blockSize) * info.typeSize;
    const have = t.data ? t.data.length : t.byteLength;
    if (t.dims.length > MAX_DIMS || (t.dims.length && t.dims[0] % info.blockSize) || have !== want) {
      throw new RangeError(
        `tensor ${t.name}: dims ${JSON.stringify(t.dims)} of ${info.name} need ${want} bytes of data, got ${have}`,
      );
    }
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(BigInt(d));
    w.u32(t.type);
    w.u64(BigInt(offset));
    offsets.push(offset);
    offset += pad(want, alignment);
  }
  w.zeros(pad(w.length, alignment) - w.length);
  return { header: w.finish(), offsets, alignment, dataBytes: offset };
}

/**
 * Writes a whole GGUF v3 file (little-endian) with gguf-py's layout: header, metadata, tensor
 * infos, zero padding to the alignment, then each tensor's data padded to the alignment.
 * @param {{ kv?: KV[], tensors?: TensorIn[], alignment?: number }} spec
 * @returns {Uint8Array}
 */
export function writeGGUF(spec) {
  const { header, offsets, dataBytes } = writeGGUFHeader(spec);
  const out = new Uint8Array(header.length + dataBytes);
  out.set(header);
  (spec.tensors ?? []).forEach((t, i) => out.set(t.data, header.length + offsets[i]));
  return out;
}

class Writer {
  constructor() {
    /** @type {Uint8Array[]} */
    this.parts = [];
    this.length = 0;
    this.scratch = new DataView(new ArrayBuffer(8));
  }

  /** @param {ArrayLike<number>} b */
  bytes(b) {
    const u = b instanceof Uint8Array ? b : Uint8Array.from(b);
    this.parts.push(u);
    this.length += u.length;
  }

  /** @param {number} n */
  zeros(n) {
    if (n > 0) this.bytes(new Uint8Array(n));
  }

  /** @param {(dv: DataView) => void} set @param {number} n */
  fixed(set, n) {
    set(this.scratch);
    this.bytes(new Uint8Array(this.scratch.buffer.slice(0, n)));
  }

  /** @param {number} v */ u32(v) {
    this.fixed((d) => d.setUint32(0, v, true), 4);
  }
  /** @param {bigint} v */ u64(v) {
    this.fixed((d) => d.setBigUint64(0, v, true), 8);
  }

  /** @param {string} s */
  string(s) {
    const b = utf8Encoder.encode(s);
    this.u64(BigInt(b.length));
    this.bytes(b);
  }

  /**
   * @param {number} type
   * @param {unknown} v
   * @param {number | undefined} itemType
   * @param {string} key
   */
  value(type, v, itemType, key) {
    if (typeof type === 'number' && ACCESSOR[type]) {
      const big = type === VT.UINT64 || type === VT.INT64;
      const x = big ? BigInt(/** @type {any} */ (v)) : /** @type {number} */ (v);
      return this.fixed((d) => /** @type {any} */ (d)[`set${ACCESSOR[type]}`](0, x, true), SIZE[type]);
    }
    switch (type) {
      case VT.BOOL:
        return this.fixed((d) => d.setUint8(0, v ? 1 : 0), 1);
      case VT.STRING:
        return this.string(String(v));
      case VT.ARRAY: {
        if (itemType === undefined || itemType < 0 || itemType > 12)
          throw new TypeError(`${key}: an ARRAY value needs an itemType`);
        const items = /** @type {ArrayLike<unknown>} */ (v);
        this.u32(itemType);
        this.u64(BigInt(items.length));
        if (itemType === VT.ARRAY) {
          for (let i = 0; i < items.length; i++) this.value(VT.ARRAY, items[i], innerType(items[i]), key);
        } else {
          for (let i = 0; i < items.length; i++) this.value(itemType, items[i], undefined, key);
        }
        return;
      }
      default:
        throw new TypeError(`${key}: unknown GGUF value type ${type}`);
    }
  }

  finish() {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

/**
 * The item type of a nested array as the reader returns it (typed array kind, string[], boolean[],
 * or an array of arrays).
 * @param {unknown} a
 */
function innerType(a) {
  const k = TYPED_ARRAYS.findIndex((C) => C && a instanceof C);
  if (k >= 0) return k;
  if (Array.isArray(a)) {
    if (a.length === 0 || typeof a[0] === 'string') return VT.STRING;
    if (typeof a[0] === 'boolean') return VT.BOOL;
    if (typeof a[0] === 'object') return VT.ARRAY;
  }
  throw new TypeError('nested GGUF arrays must be typed arrays, string[], boolean[] or arrays of those');
}
