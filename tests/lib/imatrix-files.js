// Importance-matrix files for the tests, written byte by byte the way llama-imatrix writes them
// (tools/imatrix/imatrix.cpp: save_imatrix and save_imatrix_legacy), independently of js/: the
// GGUF one through tests/lib/gguf-bytes.js, the .dat one with its own DataView writes. For test
// fixtures only.
import { Bytes } from './gguf-bytes.js';

const STRING = 8,
  ARRAY = 9,
  UINT32 = 4,
  F32 = 0;

/**
 * A GGUF imatrix: KVs general.type, imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size
 * (in that order, as gguf_set_* adds them), then per entry in name order `<name>.in_sum2`
 * [ne0, n_mat], `<name>.counts` [1, n_mat] and, when given, `<name>.in_sum`; dims written as
 * ggml_n_dims gives them (trailing 1s dropped), data aligned to 32 with padding after every
 * tensor. Options bend the format for the hostile tests.
 * @param {{ name: string, ne0: number, sums: ArrayLike<number>, counts: ArrayLike<number>, inSum?: ArrayLike<number> }[]} entries
 * @param {{ datasets?: string[], chunkCount?: number, chunkSize?: number, generalType?: string | null,
 *   omitKeys?: string[], le?: boolean, sort?: boolean, tensors?: (list: any[]) => any[] }} [o]
 *   tensors: edits the tensor list ({ name, dims, type, data: number[] of float32 values }) before writing
 * @returns {{ bytes: Uint8Array, dataOffset: number, tensors: { name: string, offset: number }[] }}
 */
export function imatrixGGUF(entries, o = {}) {
  const datasets = o.datasets ?? ['calibration.txt'];
  const kv = [];
  if (o.generalType !== null) kv.push(['general.type', (w) => w.u32(STRING).str(o.generalType ?? 'imatrix')]);
  kv.push([
    'imatrix.datasets',
    (w) => {
      w.u32(ARRAY).u32(STRING).u64(datasets.length);
      for (const d of datasets) w.str(d);
    },
  ]);
  kv.push(['imatrix.chunk_count', (w) => w.u32(UINT32).u32(o.chunkCount ?? 10)]);
  kv.push(['imatrix.chunk_size', (w) => w.u32(UINT32).u32(o.chunkSize ?? 512)]);
  const keep = kv.filter(([k]) => !(o.omitKeys ?? []).includes(k));
  const order =
    o.sort === false ? entries : [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let list = [];
  for (const e of order) {
    const nMat = e.counts.length;
    list.push({ name: `${e.name}.in_sum2`, dims: nDims([e.ne0, nMat]), type: F32, data: Array.from(e.sums) });
    list.push({ name: `${e.name}.counts`, dims: nDims([1, nMat]), type: F32, data: Array.from(e.counts) });
    if (e.inSum)
      list.push({ name: `${e.name}.in_sum`, dims: nDims([e.ne0, nMat]), type: F32, data: Array.from(e.inSum) });
  }
  if (o.tensors) list = o.tensors(list);
  const w = new Bytes({ le: o.le ?? true }).header(3, list.length, keep.length);
  for (const [k, put] of keep) put(w.str(k));
  let off = 0;
  const placed = [];
  for (const t of list) {
    w.tensor(t.name, t.dims, t.type, off);
    placed.push({ name: t.name, offset: off });
    off += Math.ceil((4 * t.data.length) / 32) * 32;
  }
  w.padTo(32);
  const dataOffset = w.length;
  for (const t of list) {
    for (const v of t.data) w.f32(v);
    w.padTo(32);
  }
  return { bytes: w.bytes(), dataOffset, tensors: placed };
}

/** ggml_n_dims: the dims up to the last one that is not 1 (at least one). @param {number[]} ne */
function nDims(ne) {
  let n = ne.length;
  while (n > 1 && ne[n - 1] === 1) n--;
  return ne.slice(0, n);
}

/**
 * A legacy .dat: int32 n_entries; per entry int32 name length, name, int32 ncall, int32 nval,
 * nval float32; then (unless trailer is false) int32 last chunk, int32 dataset name length, name.
 * Little-endian, as every host llama-imatrix ran on. Raw fields can be bent for hostile tests.
 * @param {{ name: string | Uint8Array, ncall: number, values: ArrayLike<number>, nval?: number, nameLength?: number }[]} entries
 * @param {{ lastChunk?: number, dataset?: string, trailer?: boolean, count?: number, datasetLength?: number, extra?: number[] }} [o]
 * @returns {{ bytes: Uint8Array, entriesEnd: number, valueAt: number[] }} entriesEnd: where the trailer
 *   starts; valueAt: each entry's first value's offset
 */
export function imatrixDat(entries, o = {}) {
  const out = [];
  const i32 = (v) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, v, true);
    out.push(...b);
  };
  const f32 = (v) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    out.push(...b);
  };
  const enc = (s) => (typeof s === 'string' ? new TextEncoder().encode(s) : s);
  i32(o.count ?? entries.length);
  const valueAt = [];
  for (const e of entries) {
    const name = enc(e.name);
    i32(e.nameLength ?? name.length);
    out.push(...name);
    i32(e.ncall);
    i32(e.nval ?? e.values.length);
    valueAt.push(out.length);
    for (const v of Array.from(e.values)) f32(v);
  }
  const entriesEnd = out.length;
  if (o.trailer !== false) {
    i32(o.lastChunk ?? 10);
    const d = enc(o.dataset ?? 'calibration.txt');
    i32(o.datasetLength ?? d.length);
    out.push(...d);
  }
  out.push(...(o.extra ?? []));
  return { bytes: new Uint8Array(out), entriesEnd, valueAt };
}

/**
 * IEEE float32 division a / b rounded to nearest, ties to even, computed exactly with BigInt
 * rationals (not with the float arithmetic under test): what x86-64's divss returns for finite
 * a >= 0 and b > 0.
 * @param {number} a float32 @param {number} b float32
 */
export function f32div(a, b) {
  if (a === 0) return 0;
  const guess = Math.fround(a / b);
  // The nearest of guess and its float32 neighbours to the exact quotient.
  const [na, ea] = dyadic(a),
    [nb, eb] = dyadic(b);
  let best = guess,
    bestErr = null;
  for (const q of [prevF32(guess), guess, nextF32(guess)]) {
    const [nq, eq] = dyadic(q);
    // |q - a/b| compares as |q*b - a| (b > 0): both dyadic, brought to one exponent.
    const e = Math.min(eq + eb, ea);
    const qb = (nq * nb) << BigInt(eq + eb - e);
    const aa = na << BigInt(ea - e);
    const err = qb > aa ? qb - aa : aa - qb;
    // errors of different candidates share the exponent e only when compared at the same e;
    // scale both to the smaller one.
    if (bestErr === null) {
      best = q;
      bestErr = [err, e];
      continue;
    }
    const [be, bx] = bestErr;
    const m = Math.min(e, bx);
    const x = err << BigInt(e - m),
      y = be << BigInt(bx - m);
    if (x < y || (x === y && (bits(q) & 1) === 0)) {
      best = q;
      bestErr = [err, e];
    }
  }
  return best;
}

const f = new Float32Array(1),
  u = new Uint32Array(f.buffer);
const bits = (x) => ((f[0] = x), u[0]);
const fromBits = (b) => ((u[0] = b), f[0]);
const nextF32 = (x) => fromBits(bits(x) + 1); // positive finite x
const prevF32 = (x) => (x === 0 ? 0 : fromBits(bits(x) - 1));

/** A positive float32 as [n, e] with x = n * 2^e exactly. @param {number} x */
function dyadic(x) {
  const b = bits(x);
  const exp = (b >>> 23) & 255,
    man = b & 0x7fffff;
  if (exp === 0) return [BigInt(man), -149];
  return [BigInt(man | 0x800000), exp - 150];
}
