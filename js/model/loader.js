// What llama.cpp's loader makes of a model's header, as far as the recipe needs it: the hparams
// (with the loader's type checks and the overrides it is given) and the order of the weights
// (its weights map: by layer number, then by name), with --prune-layers' renumbering.

import { VT } from '../gguf-format.js';
import { PlanError } from './errors.js';

/** @typedef {import('../gguf-format.js').KV} KV */
/** @typedef {import('../gguf-format.js').TensorInfo} TensorInfo */
/** @typedef {import('./header.js').Override} Override */

/** GGUF type names as llama.cpp's loader spells them in its messages. */
const GGUF_NAMES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'str', 'arr', 'u64', 'i64', 'f64'];

/**
 * The hparams the rules read, as llama.cpp's loader reads them (with the overrides it is given):
 * block_count and expert_count UINT32; head_count and head_count_kv UINT32 or an array of one
 * value per layer (the rules read layer 0's).
 * @param {Map<string, unknown>} md @param {KV[]} kv @param {Override[]} overrides
 */
export function hparams(md, kv, overrides) {
  const arch = md.get('general.architecture');
  if (typeof arch !== 'string') throw new PlanError('MISSING_KEY', 'the model has no general.architecture');
  const entry = (/** @type {string} */ k) => kv.find((e) => e.key === `${arch}.${k}`);
  const wrong = (/** @type {KV} */ e) =>
    new PlanError('BAD_KV', `key ${e.key} has wrong type ${GGUF_NAMES[e.type] ?? e.type} but expected type u32`);
  /** @param {string} k @param {number | undefined} nArr the array length allowed (per layer), if any */
  const get = (k, nArr) => {
    const ov = overrides.find((x) => x.key === `${arch}.${k}`);
    if (ov && ov.tag === 'int') return Number(ov.value);
    const e = entry(k);
    if (e === undefined) return undefined;
    if (e.type === VT.UINT32) return Number(e.value);
    if (e.type !== VT.ARRAY || nArr === undefined) throw wrong(e);
    const a = /** @type {ArrayLike<number | bigint>} */ (e.value);
    if (
      !(
        /** @type {number[]} */ ([VT.UINT32, VT.INT32, VT.FLOAT32, VT.UINT64]).includes(
          /** @type {number} */ (e.itemType),
        )
      )
    )
      throw new PlanError('BAD_KV', `${e.key} is not a string/float32/uint32/int32/uint64 array`);
    if (a.length !== nArr)
      throw new PlanError('BAD_KV', `key ${e.key} has wrong array length; expected ${nArr}, got ${a.length}`);
    return Number(a[0]);
  };
  // The loader reads general.file_type as UINT32 too (and refuses another type), unless overridden.
  const ft = kv.find((e) => e.key === 'general.file_type');
  if (ft && ft.type !== VT.UINT32 && !overrides.some((x) => x.key === 'general.file_type' && x.tag === 'int'))
    throw wrong(ft);
  const nLayer = get('block_count', undefined);
  if (nLayer === undefined) throw new PlanError('MISSING_KEY', `the model has no ${arch}.block_count`);
  const nHead = get('attention.head_count', nLayer) ?? 0;
  const nHeadKv = get('attention.head_count_kv', nLayer) ?? nHead;
  const nExpert = get('expert_count', undefined) ?? 0;
  const nGqa = nHeadKv === 0 ? 0 : Math.trunc(nHead / nHeadKv);
  // The loader's model size: llama 80 layers with GQA (not 8 experts), qwen2 80 layers.
  const is70B = nLayer === 80 && ((arch === 'llama' && nExpert !== 8 && nHead !== nHeadKv) || arch === 'qwen2');
  return { arch, nLayer, nExpert, nGqa, is70B };
}

/** The layer number sscanf("blk.%d.") finds, or -1. @param {string} name */
function layerNo(name) {
  const m = /^blk\.[\t\n\v\f\r ]*([+-]?\d+)/.exec(name);
  return m ? Number(m[1]) : -1;
}

const utf8 = new TextEncoder();
/** std::string's order: bytes, unsigned. @param {string} a @param {string} b */
function byteCompare(a, b) {
  if (/^[\x00-\x7f]*$/.test(a + b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = utf8.encode(a),
    y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * The tensors in output order (the loader's weights map: by layer number, then by name; with
 * keepSplit by shard, then by offset), pruned layers left out and the rest renamed.
 * @param {TensorInfo[]} tensors @param {number[]} prune @param {boolean} keepSplit
 * @returns {{ list: { t: TensorInfo, name: string }[], blockCount: number }} blockCount: the layers left
 */
export function order(tensors, prune, keepSplit) {
  const sorted = [...tensors].sort((a, b) => layerNo(a.name) - layerNo(b.name) || byteCompare(a.name, b.name));
  /** @type {Map<number, string>} */
  const mapped = new Map();
  let next = 0;
  const out = [];
  for (const t of sorted) {
    let name = t.name;
    if (prune.length) {
      const m = /blk\.(\d+)\./.exec(name);
      if (m) {
        const blk = Number(m[1]);
        if (!mapped.has(blk)) {
          // Pruned layers vanish; those before the first pruned keep their number, the rest
          // are numbered on from the last one kept.
          if (prune.includes(blk)) mapped.set(blk, '');
          else if (blk < prune[0]) {
            mapped.set(blk, String(blk));
            next = blk + 1;
          } else mapped.set(blk, String(next++));
        }
        const to = /** @type {string} */ (mapped.get(blk));
        if (to === '') continue;
        name = name.slice(0, m.index + 4) + to + name.slice(m.index + 4 + m[1].length);
      }
    }
    out.push({ t, name });
  }
  if (keepSplit) out.sort((a, b) => (a.t.shard ?? 0) - (b.t.shard ?? 0) || a.t.offset - b.t.offset);
  return { list: out, blockCount: next };
}
