// An independent GGUF decoder for the fuzz tests, written from the container description (magic,
// version, counts, key/value pairs, tensor infos, aligned data) and ggml's refusals. It shares no
// code with js/: every field is read with its own DataView call, 64-bit values are BigInt
// throughout, numeric arrays are built element by element. It returns what parseGGUF promises
// (same shapes: kv, metadata, tensors, dataOffset, the tensors' bytes) or { error }, and records
// where the counts, lengths and type fields are so the fuzz can aim mutations at them.

// ggml type id -> [block size, bytes per block]; ids not listed are unknown.
const GGML = new Map([
  [0, [1, 4]],
  [1, [1, 2]],
  [2, [32, 18]],
  [3, [32, 20]],
  [6, [32, 22]],
  [7, [32, 24]],
  [8, [32, 34]],
  [9, [32, 36]],
  [10, [256, 84]],
  [11, [256, 110]],
  [12, [256, 144]],
  [13, [256, 176]],
  [14, [256, 210]],
  [15, [256, 292]],
  [16, [256, 66]],
  [17, [256, 74]],
  [18, [256, 98]],
  [19, [256, 50]],
  [20, [32, 18]],
  [21, [256, 110]],
  [22, [256, 82]],
  [23, [256, 136]],
  [24, [1, 1]],
  [25, [1, 2]],
  [26, [1, 4]],
  [27, [1, 8]],
  [28, [1, 8]],
  [29, [256, 56]],
  [30, [1, 2]],
  [34, [256, 54]],
  [35, [256, 66]],
  [39, [32, 17]],
  [40, [64, 36]],
  [41, [128, 18]],
  [42, [64, 18]],
]);
// Q2_0 files from before its upstream merge: 128 weights in 34 bytes under the same id.
const Q2_0 = 42,
  Q2_0_OLD = [128, 34];

// Value type id -> [bytes, DataView getter, typed array] for the fixed-size types.
const FIXED = {
  0: [1, 'getUint8', Uint8Array],
  1: [1, 'getInt8', Int8Array],
  2: [2, 'getUint16', Uint16Array],
  3: [2, 'getInt16', Int16Array],
  4: [4, 'getUint32', Uint32Array],
  5: [4, 'getInt32', Int32Array],
  6: [4, 'getFloat32', Float32Array],
  10: [8, 'getBigUint64', BigUint64Array],
  11: [8, 'getBigInt64', BigInt64Array],
  12: [8, 'getFloat64', Float64Array],
};
const BOOL = 7,
  STRING = 8,
  ARRAY = 9;
const INT64_MAX = 2n ** 63n - 1n;
const CAP = 2n ** 30n; // ggml's cap on string bytes and array items

class Refusal extends Error {}

/**
 * @param {Uint8Array} bytes a whole file
 * @param {{ allowV1?: boolean, maxDepth?: number }} [opt]
 * @returns {{ error?: string, version?: number, alignment?: number, dataOffset?: number,
 *   littleEndian?: boolean, kv?: any[], tensors?: any[], data?: Uint8Array[],
 *   marks: { at: number, size: number, kind: string }[], kvSpans: [number, number][], tensorSpans: [number, number][] }}
 */
export function oracleDecode(bytes, opt = {}) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const marks = [];
  const kvSpans = [];
  const tensorSpans = [];
  let p = 0;
  let little = true;
  let v1 = false;
  const take = (n) => {
    if (BigInt(p) + BigInt(n) > BigInt(bytes.length)) throw new Refusal(`truncated at ${p}`);
    const at = p;
    p += Number(n);
    return at;
  };
  const u32 = (kind) => {
    const at = take(4);
    if (kind) marks.push({ at, size: 4, kind });
    return dv.getUint32(at, little);
  };
  const u64 = (kind) => {
    const at = take(8);
    if (kind) marks.push({ at, size: 8, kind });
    return dv.getBigUint64(at, little);
  };
  const len = () => (v1 ? BigInt(u32('count')) : u64('count'));
  const str = () => {
    const n = len();
    if (n > CAP) throw new Refusal('string too long');
    const at = take(n);
    return { at, n: Number(n), s: new TextDecoder().decode(bytes.slice(at, at + Number(n))) };
  };
  const value = (type, depth) => {
    if (FIXED[type]) {
      const [size, get] = FIXED[type];
      const at = take(size);
      return dv[get](at, little);
    }
    if (type === BOOL) return bytes[take(1)] !== 0;
    if (type === STRING) return str().s;
    if (type !== ARRAY) throw new Refusal(`value type ${type}`);
    const item = u32('type');
    if (item > 12) throw new Refusal(`item type ${item}`);
    const n = len();
    if (n > CAP) throw new Refusal('array too long');
    const count = Number(n);
    if (FIXED[item] || item === BOOL) {
      const [size, get, C] = item === BOOL ? [1, 'getUint8', Uint8Array] : FIXED[item];
      const at = take(BigInt(size) * n);
      const out = new C(count);
      for (let i = 0; i < count; i++) out[i] = dv[get](at + i * size, little);
      return out;
    }
    // This array is at nesting level depth + 1; arrays in it would be at depth + 2.
    if (item === ARRAY && depth + 2 > (opt.maxDepth ?? 4)) throw new Refusal('too deep');
    const out = [];
    for (let i = 0; i < count; i++) out.push(item === STRING ? str().s : value(ARRAY, depth + 1));
    return out;
  };

  try {
    take(4);
    if (String.fromCharCode(...bytes.subarray(0, 4)) !== 'GGUF') throw new Refusal('magic');
    let version = u32('version');
    if (version !== 0 && version % 65536 === 0) {
      little = false;
      version = dv.getUint32(4, false);
    }
    if (!(version === 2 || version === 3 || (version === 1 && opt.allowV1))) throw new Refusal('version');
    v1 = version === 1;
    const nTensors = len();
    const nKV = len();
    const kv = [];
    const keys = new Set();
    for (let i = 0n; i < nKV; i++) {
      const start = p;
      const key = str().s;
      if (key === '' || keys.has(key)) throw new Refusal('key');
      keys.add(key);
      const type = u32('type');
      if (type > 12) throw new Refusal('type');
      const typeAt = p;
      const v = value(type, 0);
      const e = { key, type, value: v };
      if (type === ARRAY) e.itemType = dv.getUint32(typeAt, little);
      kv.push(e);
      kvSpans.push([start, p]);
    }
    let alignment = 32;
    const al = kv.find((e) => e.key === 'general.alignment');
    if (al) {
      if (al.type !== 4 || !Number.isInteger(Math.log2(al.value))) throw new Refusal('alignment');
      alignment = al.value;
    }
    const tensors = [];
    const names = new Set();
    // Where the next tensor starts: exactly `next`; or, after a tensor of an unknown type, any
    // aligned offset from `least` on; or, after a Q2_0 tensor, one of the ends in `either`
    // (mainline first), which also tells that tensor's layout.
    let next = 0n;
    let least = null;
    let either = null;
    const A = BigInt(alignment);
    const up = (n) => ((n + A - 1n) / A) * A;
    for (let i = 0n; i < nTensors; i++) {
      const start = p;
      const { n: nameBytes, s: name } = str();
      if (nameBytes >= 64 || names.has(name)) throw new Refusal('name');
      names.add(name);
      const nd = u32('count');
      if (nd > 4) throw new Refusal('dims');
      const ne = [];
      for (let d = 0; d < nd; d++) ne.push(v1 ? BigInt(u32('count')) : u64('count'));
      let count = 1n;
      for (const x of ne) {
        if (x > INT64_MAX) throw new Refusal('ne < 0');
        count *= x;
        if (count > INT64_MAX) throw new Refusal('overflow');
        if (x > BigInt(Number.MAX_SAFE_INTEGER)) throw new Refusal('inexact dim');
      }
      const type = u32('ggml');
      const t = GGML.get(type);
      if (t && (ne[0] ?? 1n) % BigInt(t[0]) !== 0n) throw new Refusal('block');
      const offset = u64('offset');
      if (either) {
        const hit = either.find((e) => e.end === offset);
        if (!hit) throw new Refusal('offset');
        hit.apply();
        either = null;
      } else if (least !== null) {
        if (offset < least || offset % A !== 0n) throw new Refusal('offset');
      } else if (offset !== next) throw new Refusal('offset');
      const info = {
        name,
        type,
        dims: ne.map(Number),
        offset: Number(offset),
        nElements: Number(count),
        byteLength: null,
      };
      least = null;
      if (!t) {
        info.unreadable = 'UNKNOWN_GGML_TYPE';
        least = offset + (count > 0n ? A : 0n);
      } else {
        const size = (count / BigInt(t[0])) * BigInt(t[1]);
        info.byteLength = Number(size);
        next = offset + up(size);
        if (type === Q2_0) {
          const old =
            (ne[0] ?? 1n) % BigInt(Q2_0_OLD[0]) === 0n ? (count / BigInt(Q2_0_OLD[0])) * BigInt(Q2_0_OLD[1]) : null;
          info.q2 = { size, old };
          const mark = () => {
            info.byteLength = Number(old);
            info.layout = 'q2_0-prerelease';
            info.unreadable = 'PRERELEASE_Q2_0';
          };
          either = [{ end: offset + up(size), apply: () => {} }];
          if (old !== null) either.push({ end: offset + up(old), apply: mark });
          info.q2.mark = mark;
        }
      }
      tensors.push(info);
      tensorSpans.push([start, p]);
    }
    const dataOffset = Math.ceil(p / alignment) * alignment;
    const last = tensors[tensors.length - 1];
    if (last?.q2) {
      // The last tensor's layout from what the file holds after its start (padding included).
      const room = BigInt(bytes.length - dataOffset - last.offset);
      const { size, old } = last.q2;
      if (room < size && old !== null && room >= old && room <= up(old)) last.q2.mark();
    }
    const data = [];
    for (const t of tensors) {
      delete t.q2;
      if (t.byteLength === null) {
        // unknown size: at least a byte of it must be in the file when it has elements
        if (dataOffset + t.offset + (t.nElements > 0 ? 1 : 0) > bytes.length) throw new Refusal('data past the end');
        data.push(null);
        continue;
      }
      if (dataOffset + t.offset + t.byteLength > bytes.length) throw new Refusal('data past the end');
      data.push(t.unreadable ? null : bytes.slice(dataOffset + t.offset, dataOffset + t.offset + t.byteLength));
    }
    return { version, alignment, dataOffset, littleEndian: little, kv, tensors, data, marks, kvSpans, tensorSpans };
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    return { error: e.message, marks, kvSpans, tensorSpans };
  }
}
