// The output header as llama-quantize writes it (gguf.cpp's writer behind llama_model_quantize and
// the KVs llama-quantize's tool adds): the KV list, --override-kv, and the header's size.

import { VT, SIZE } from '../gguf-format.js';
import { PlanError } from './errors.js';

/** @typedef {import('../gguf-format.js').KV} KV */

/** ggml's GGML_QNT_VERSION, written as general.quantization_version. */
export const QNT_VERSION = 2;
/** GGUF_DEFAULT_ALIGNMENT: the output's data alignment, whatever general.alignment says. */
export const ALIGNMENT = 32;
const SPLIT_KEYS = ['split.no', 'split.count', 'split.tensors.count'];

/**
 * One --override-kv as llama-quantize's tool parses KEY=TYPE:VALUE (common's
 * string_parse_kv_override): TYPE int, float, bool (true or false) or str (at most 127 bytes); the
 * key shorter than 128 bytes.
 * @typedef {{ key: string, tag: 'int' | 'float' | 'bool' | 'str', value: bigint | number | boolean | string }} Override
 */

const utf8 = new TextEncoder();

/**
 * Parses KEY=TYPE:VALUE.
 * @param {string} s
 * @returns {Override}
 * @throws {PlanError} BAD_OPTION
 */
export function parseOverride(s) {
  const bad = (/** @type {string} */ why) => new PlanError('BAD_OPTION', `--override-kv ${JSON.stringify(s)}: ${why}`);
  const eq = s.indexOf('=');
  if (eq < 0 || utf8.encode(s.slice(0, eq)).length >= 128)
    throw bad('expected KEY=TYPE:VALUE with a key under 128 bytes');
  const key = s.slice(0, eq);
  const rest = s.slice(eq + 1);
  const colon = rest.indexOf(':');
  const tag = colon < 0 ? '' : rest.slice(0, colon);
  const v = rest.slice(colon + 1);
  if (tag === 'int') return { key, tag, value: cInt(v) };
  if (tag === 'float') return { key, tag, value: cFloat(v) };
  if (tag === 'bool') {
    if (v !== 'true' && v !== 'false') throw bad('a bool is true or false');
    return { key, tag, value: v === 'true' };
  }
  if (tag === 'str') {
    if (utf8.encode(v).length > 127) throw bad('a str value is at most 127 bytes');
    return { key, tag, value: v };
  }
  throw bad('TYPE is int, float, bool or str');
}

/** atol: leading white space, a sign, digits; 0 when there are none. @param {string} v */
function cInt(v) {
  const m = /^[\t\n\v\f\r ]*([+-]?\d+)/.exec(v);
  return m ? BigInt.asIntN(64, BigInt(m[1])) : 0n;
}

/** atof, for the decimal forms: the longest prefix that is a number; 0 when there is none. @param {string} v */
function cFloat(v) {
  const m = /^[\t\n\v\f\r ]*([+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?))/i.exec(v);
  if (!m) return 0;
  const t = m[1].toLowerCase().replace(/^([+-]?)inf(inity)?$/, '$1Infinity');
  return /nan/.test(t) ? NaN : Number(t);
}

/**
 * An override as a KV, typed as llama_model_quantize writes it: int as UINT32 of |value| (mod 2^32),
 * float as FLOAT32, bool, str.
 * @param {Override} o
 * @returns {KV}
 */
export function overrideKV(o) {
  if (o.tag === 'int') {
    const v = /** @type {bigint} */ (o.value);
    return { key: o.key, type: VT.UINT32, value: Number(BigInt.asUintN(32, v < 0n ? -v : v)) };
  }
  if (o.tag === 'float') return { key: o.key, type: VT.FLOAT32, value: Math.fround(/** @type {number} */ (o.value)) };
  if (o.tag === 'bool') return { key: o.key, type: VT.BOOL, value: o.value === true };
  return { key: o.key, type: VT.STRING, value: cString(String(o.value)) };
}

/**
 * A value as gguf.cpp keeps it when copying KVs: strings end at their first NUL (they pass through
 * C strings), bools are 0 or 1.
 * @param {KV} e
 * @returns {KV}
 * @throws {PlanError} BAD_KV for an array of arrays, which llama.cpp's reader does not load
 */
export function copyKV(e) {
  const key = cString(e.key);
  if (e.type === VT.STRING) return { key, type: e.type, value: cString(/** @type {string} */ (e.value)) };
  if (e.type === VT.BOOL) return { key, type: e.type, value: Boolean(e.value) };
  if (e.type !== VT.ARRAY) return { ...e, key };
  if (e.itemType === VT.ARRAY)
    throw new PlanError('BAD_KV', `kv ${JSON.stringify(e.key)}: llama.cpp does not load arrays of arrays`);
  if (e.itemType === VT.STRING)
    return { key, type: e.type, itemType: e.itemType, value: /** @type {string[]} */ (e.value).map(cString) };
  if (e.itemType === VT.BOOL)
    return {
      key,
      type: e.type,
      itemType: e.itemType,
      value: Uint8Array.from(/** @type {ArrayLike<number>} */ (e.value), (b) => (b ? 1 : 0)),
    };
  return { ...e, key };
}

/** @param {string} s */
const cString = (s) => {
  const z = s.indexOf('\0');
  return z < 0 ? s : s.slice(0, z);
};

/**
 * gguf_set_val_*: removes the key and appends it.
 * @param {KV[]} kv @param {KV} e
 */
export function setKV(kv, e) {
  removeKV(kv, e.key);
  kv.push(e);
}

/** @param {KV[]} kv @param {string} key */
export function removeKV(kv, key) {
  const i = kv.findIndex((x) => x.key === key);
  if (i >= 0) kv.splice(i, 1);
}

/**
 * The KVs of the output's first shard: the input's in order, general.quantization_version and
 * general.file_type re-appended, split.* removed, the overrides applied in order (each removed and
 * re-appended).
 * @param {KV[]} input
 * @param {number | null} fileType null: none (a ggml type no llama ftype stands for)
 * @param {Override[]} overrides
 * @returns {KV[]}
 */
export function outputKV(input, fileType, overrides) {
  const kv = input.map(copyKV);
  setKV(kv, { key: 'general.quantization_version', type: VT.UINT32, value: QNT_VERSION });
  if (fileType === null) removeKV(kv, 'general.file_type');
  else setKV(kv, { key: 'general.file_type', type: VT.UINT32, value: fileType });
  for (const k of SPLIT_KEYS) removeKV(kv, k);
  for (const o of overrides) setKV(kv, overrideKV(o));
  return kv;
}

/**
 * The split.* KVs --keep-split adds to shard i of n (total tensors in all shards).
 * @param {number} i @param {number} n @param {number} total
 * @returns {KV[]}
 */
export function splitKV(i, n, total) {
  return [
    { key: 'split.no', type: VT.UINT16, value: i },
    { key: 'split.count', type: VT.UINT16, value: n },
    { key: 'split.tensors.count', type: VT.INT32, value: total },
  ];
}

/** Bytes of a GGUF string. @param {string} s */
const strBytes = (s) => 8 + utf8.encode(s).length;

/**
 * Bytes of one KV as gguf.cpp writes it.
 * @param {KV} e
 */
function kvBytes(e) {
  let n = strBytes(e.key) + 4;
  if (e.type === VT.STRING) return n + strBytes(/** @type {string} */ (e.value));
  if (e.type !== VT.ARRAY) return n + SIZE[e.type];
  const items = /** @type {ArrayLike<unknown>} */ (e.value);
  n += 12;
  if (e.itemType === VT.STRING) for (const s of /** @type {string[]} */ (items)) n += strBytes(s);
  else n += items.length * SIZE[/** @type {number} */ (e.itemType)];
  return n;
}

/**
 * The size of a header (gguf_get_meta_size): magic, version, counts, KVs, tensor infos, padded to
 * the alignment.
 * @param {KV[]} kv
 * @param {{ name: string, dims: number[] }[]} tensors dims as written
 * @returns {number}
 */
export function headerSize(kv, tensors) {
  let n = 24;
  for (const e of kv) n += kvBytes(e);
  for (const t of tensors) n += strBytes(t.name) + 4 + 8 * t.dims.length + 4 + 8;
  return Math.ceil(n / ALIGNMENT) * ALIGNMENT;
}
