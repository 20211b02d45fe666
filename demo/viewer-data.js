// The model viewer's numbers, computed from a parsed GGUF header (no DOM, no I/O): the overview
// (parameters, sizes, breakdowns, memory estimate), the metadata as typed rows with paged arrays,
// the vocabulary and its search, layer grouping of tensor names, and split-model shard names.
// Used by the worker (viewer-ops.js) and checked in Node (tests/viewer-data.test.js).
import { tensorTypeName } from '../js/index.js';
import { shortestF32 } from './numbers.js';
import { ftypeName } from '../js/model/ftypes.js';

/** GGUF value type names by id (the spec's names). */
export const VALUE_TYPES = [
  'u8',
  'i8',
  'u16',
  'i16',
  'u32',
  'i32',
  'f32',
  'bool',
  'string',
  'array',
  'u64',
  'i64',
  'f64',
];

/** @typedef {{ key: string, type: number, value: unknown, itemType?: number }} KV */
/** @typedef {{ name: string, type: number, dims: number[], nElements: number, byteLength: number | null, layout?: string, shard?: number }} Tensor */

/** The layer of a tensor name (`blk.N.` prefix), or -1 for the tensors outside the layers. */
export function layerOf(/** @type {string} */ name) {
  const m = /^blk\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : -1;
}

/** A metadata value as a number, or undefined (bigints converted; arrays and strings refused). */
function num(/** @type {unknown} */ v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/**
 * general.file_type for people: its llama-quantize name (15, MOSTLY_Q4_K_M, is 'Q4_K_M'), the
 * number for an id llama.h does not list, '' when absent.
 * @param {unknown} v
 */
export function fileTypeOf(v) {
  if (v === undefined) return '';
  return ftypeName(v) ?? `file type ${String(v)}`;
}

/** ggml_n_dims: the dimensions up to the last one longer than 1 (at least 1). */
const nDims = (/** @type {number[]} */ dims) => Math.max(1, ...dims.map((n, d) => (n > 1 ? d + 1 : 0)));

/**
 * The tensor a model opens on: the first 2-D (or more) weight the page can analyse, in file order
 * (not a 1-D norm); else the first it can analyse at all; else null.
 * @param {{ name: string, dims: number[], unsupported?: string }[]} tensors
 * @returns {string | null}
 */
export function firstTensor(tensors) {
  const ok = tensors.filter((t) => !t.unsupported);
  return (
    (ok.find((t) => nDims(t.dims) >= 2 && t.name.endsWith('weight')) ?? ok.find((t) => nDims(t.dims) >= 2) ?? ok[0])
      ?.name ?? null
  );
}

/**
 * The overview of a model: architecture and name, total parameters (elements of all tensors),
 * weight bytes, bits per weight, per tensor type and per layer breakdowns, and the inputs of the
 * KV-cache estimate (see kvCache) with the metadata keys they came from.
 * @param {{ kv: KV[], tensors: Tensor[] }} g a parsed header (parseGGUF or openGGUF)
 */
export function overviewOf(g) {
  const meta = new Map(g.kv.map((e) => [e.key, e.value]));
  const arch = typeof meta.get('general.architecture') === 'string' ? String(meta.get('general.architecture')) : '';
  let params = 0,
    bytes = 0;
  /** @type {Map<string, { type: string, tensors: number, params: number, bytes: number }>} */
  const byType = new Map();
  /** @type {Map<number, { layer: number, tensors: number, params: number, bytes: number }>} */
  const byLayer = new Map();
  // A tensor of a type id blockquant does not know has no known size: it counts as a tensor and
  // its parameters, under its own type row ('unknown(N)', 0 bytes), but not in the bytes or the
  // bits per weight (unsized: how many such tensors there are).
  let sizedParams = 0,
    unsized = 0;
  for (const t of g.tensors) {
    const size = t.byteLength ?? 0;
    params += t.nElements;
    bytes += size;
    if (t.byteLength === null) unsized++;
    else sizedParams += t.nElements;
    const type = tensorTypeName(t);
    const a = byType.get(type) ?? { type, tensors: 0, params: 0, bytes: 0 };
    (a.tensors++, (a.params += t.nElements), (a.bytes += size));
    byType.set(type, a);
    const layer = layerOf(t.name);
    const l = byLayer.get(layer) ?? { layer, tensors: 0, params: 0, bytes: 0 };
    (l.tensors++, (l.params += t.nElements), (l.bytes += size));
    byLayer.set(layer, l);
  }
  return {
    arch,
    name: typeof meta.get('general.name') === 'string' ? String(meta.get('general.name')) : '',
    fileType: fileTypeOf(meta.get('general.file_type')),
    tensors: g.tensors.length,
    params,
    bytes,
    bitsPerWeight: sizedParams ? (8 * bytes) / sizedParams : 0,
    unsized,
    byType: [...byType.values()].sort((a, b) => b.bytes - a.bytes),
    byLayer: [...byLayer.values()].sort((a, b) => a.layer - b.layer),
    kv: kvInputs(meta, arch),
  };
}

/**
 * What the KV-cache estimate needs, read from `<arch>.*` keys: layers (block_count), the
 * context length, and per layer the K and V widths (head_count_kv × key_length and × value_length;
 * head_count_kv falls back to head_count, the lengths to embedding_length / head_count).
 * head_count_kv may be an array (one entry per layer). `missing` names what could not be found,
 * `used` the keys read.
 * @param {Map<string, unknown>} meta
 * @param {string} arch
 */
function kvInputs(meta, arch) {
  const k = (/** @type {string} */ s) => `${arch}.${s}`;
  /** @type {string[]} */
  const used = [];
  /** @type {string[]} */
  const missing = [];
  const get = (/** @type {string} */ s) => {
    if (!arch || !meta.has(k(s))) return undefined;
    used.push(k(s));
    return meta.get(k(s));
  };
  const layers = num(get('block_count'));
  const ctx = num(get('context_length'));
  const headsRaw = get('attention.head_count');
  const heads = num(headsRaw) ?? (isList(headsRaw) ? num(toNum(headsRaw[0])) : undefined);
  let kvHeadsRaw = get('attention.head_count_kv');
  if (kvHeadsRaw === undefined) kvHeadsRaw = headsRaw;
  const embd = num(get('embedding_length'));
  const fallback = heads && embd ? embd / heads : undefined;
  const keyLen = num(get('attention.key_length')) ?? fallback;
  const valLen = num(get('attention.value_length')) ?? fallback;
  if (!arch) missing.push('general.architecture');
  if (layers === undefined) missing.push(k('block_count'));
  if (kvHeadsRaw === undefined) missing.push(`${k('attention.head_count_kv')} or ${k('attention.head_count')}`);
  if (keyLen === undefined || valLen === undefined)
    missing.push(`${k('attention.key_length')} or ${k('embedding_length')} and ${k('attention.head_count')}`);
  /** @type {number[] | null} K+V elements per token, per layer */
  let perLayer = null;
  if (!missing.length && layers !== undefined && keyLen !== undefined && valLen !== undefined) {
    const n = Math.max(0, Math.min(layers, 1e6));
    perLayer = Array.from({ length: n }, (_, i) => {
      const h = isList(kvHeadsRaw) ? (toNum(kvHeadsRaw[i]) ?? 0) : (num(kvHeadsRaw) ?? 0);
      return h * (keyLen + valLen);
    });
  }
  return { layers: layers ?? null, contextLength: ctx ?? null, keyLength: keyLen ?? null, perLayer, used, missing };
}

/** @returns {v is ArrayLike<unknown>} */
function isList(/** @type {unknown} */ v) {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}
function toNum(/** @type {unknown} */ v) {
  return num(v);
}

/**
 * KV-cache bytes for nCtx tokens: the sum over layers of nCtx × (K + V widths) × bytesPerElement
 * (2 for an f16 cache), or null when the metadata lacks what it needs.
 * @param {{ perLayer: number[] | null }} kv overviewOf(g).kv
 * @param {number} nCtx context length in tokens
 * @param {number} [bytesPerElement]
 */
export function kvCacheBytes(kv, nCtx, bytesPerElement = 2) {
  if (!kv.perLayer || !Number.isFinite(nCtx) || nCtx < 0) return null;
  return kv.perLayer.reduce((a, w) => a + w, 0) * nCtx * bytesPerElement;
}

/** Longest string preview in a metadata row. */
const PREVIEW = 160;

/** GGUF's f32 value type id: its values show as the shortest decimal that reads back as that float32. */
const F32 = 6;

/**
 * A value for display: strings quoted with control characters escaped, bigints as integers, f32
 * values (type 6) by their shortest float32 round-trip (1e-5, not 0.000009999999747378752).
 * @param {unknown} v
 * @param {number} [type] its GGUF value type (the item type for an array's items)
 */
export function showValue(v, type) {
  if (typeof v === 'number' && type === F32) return shortestF32(v);
  if (typeof v === 'string')
    return JSON.stringify(v.length > PREVIEW ? v.slice(0, PREVIEW) : v) + (v.length > PREVIEW ? '…' : '');
  if (typeof v === 'bigint') return String(v);
  if (isList(v)) return `[${v.length} items]`;
  return String(v);
}

/**
 * Metadata rows: key, type (`array<string>` for arrays), length for strings and arrays, and a
 * preview (arrays: their first items). Rows whose key or preview contains `query`
 * (case-insensitive) only, when given.
 * @param {KV[]} kv
 * @param {string} [query]
 */
export function metaRows(kv, query = '') {
  const q = query.toLowerCase();
  const rows = kv.map((e) => {
    const list = isList(e.value);
    const a = /** @type {ArrayLike<unknown>} */ (e.value);
    const type = list ? `array<${VALUE_TYPES[e.itemType ?? -1] ?? 'array'}>` : (VALUE_TYPES[e.type] ?? '?');
    const preview = list
      ? `[${Array.from({ length: Math.min(a.length, 8) }, (_, i) => (isList(a[i]) ? '[…]' : showValue(a[i], e.itemType))).join(', ')}${a.length > 8 ? ', …' : ''}]`
      : showValue(e.value, e.type);
    const length = list ? a.length : typeof e.value === 'string' ? e.value.length : null;
    return { key: e.key, type, length, preview, long: typeof e.value === 'string' && e.value.length > PREVIEW };
  });
  return q ? rows.filter((r) => r.key.toLowerCase().includes(q) || r.preview.toLowerCase().includes(q)) : rows;
}

/**
 * Items [offset, offset + count) of an array value, each shown as text, and the array's length.
 * @param {KV[]} kv
 * @param {string} key
 * @param {number} offset
 * @param {number} count
 * @throws {RangeError} when the key is missing or not an array
 */
export function metaArrayPage(kv, key, offset, count) {
  const e = kv.find((x) => x.key === key);
  if (!e || !isList(e.value)) throw new RangeError(`${key} is not an array in this file`);
  const a = e.value;
  const from = Math.max(0, Math.min(a.length, Math.floor(offset) || 0));
  const to = Math.min(a.length, from + Math.max(0, Math.floor(count) || 0));
  const items = [];
  for (let i = from; i < to; i++) {
    const x = a[i];
    items.push(isList(x) ? `[${x.length} items]` : showValue(x, e.itemType));
  }
  return { key, length: a.length, offset: from, items };
}

/** Names of llama.cpp's token types (tokenizer.ggml.token_type). */
export const TOKEN_TYPES = ['undefined', 'normal', 'unknown', 'control', 'user-defined', 'unused', 'byte'];

/**
 * The vocabulary of a file: tokenizer.ggml.tokens with their scores and types when present.
 * @param {KV[]} kv
 * @returns {{ tokens: string[], scores: ArrayLike<number> | null, types: ArrayLike<number> | null, model: string }}
 */
export function vocabOf(kv) {
  const get = (/** @type {string} */ k) => kv.find((e) => e.key === k)?.value;
  const t = get('tokenizer.ggml.tokens');
  const tokens = Array.isArray(t) ? t.map((x) => (typeof x === 'string' ? x : String(x))) : [];
  const s = get('tokenizer.ggml.scores');
  const ty = get('tokenizer.ggml.token_type');
  const model = get('tokenizer.ggml.model');
  return {
    tokens,
    scores: isList(s) ? /** @type {ArrayLike<number>} */ (s) : null,
    types: isList(ty) ? /** @type {ArrayLike<number>} */ (ty) : null,
    model: typeof model === 'string' ? model : '',
  };
}

/** The byte of a byte token (`<0x0A>`), or -1. */
export function byteToken(/** @type {string} */ s) {
  const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(s);
  return m ? parseInt(m[1], 16) : -1;
}

/**
 * A token as text, faithfully: its UTF-8 bytes in hex, and a visible form where control
 * characters, spaces marked by tokenizers (▁ / Ġ stay as they are) and invalid text show as escapes.
 * @param {string} s
 */
export function tokenText(s) {
  const b = byteToken(s);
  const bytes = b >= 0 ? [b] : [...new TextEncoder().encode(s)];
  const shown =
    b >= 0
      ? `byte 0x${s.slice(3, 5).toUpperCase()}`
      : s.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\ufeff]/g, (c) =>
          c === ' ' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
  return { shown, hex: bytes.map((x) => x.toString(16).padStart(2, '0')).join(' '), byte: b >= 0 };
}

/**
 * Token ids matching a query, in id order: `#123` or a bare integer also matches that id; text
 * matches tokens containing it (exact matches first). Tokenizer space markers (▁, Ġ) match a space.
 * @param {string[]} tokens
 * @param {string} query
 * @returns {Int32Array}
 */
export function searchVocab(tokens, query) {
  if (query === '') return Int32Array.from(tokens.keys());
  /** @type {number[]} */
  const out = [];
  const id = /^#?(\d+)$/.exec(query.trim());
  /** @type {number[]} */
  const exact = [];
  if (id && Number(id[1]) < tokens.length) exact.push(Number(id[1]));
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const norm = t.includes('▁') || t.includes('Ġ') ? t.replace(/[▁Ġ]/g, ' ') : t;
    if (t === query || norm === query) {
      if (!exact.includes(i)) exact.push(i);
    } else if (t.includes(query) || norm.includes(query)) out.push(i);
  }
  return Int32Array.from([...exact, ...out.filter((i) => !exact.includes(i))]);
}

/** Most shards opened from one name: a link naming `-of-99999` must not make the page fetch
 * thousands of URLs (real split models have tens of shards). */
export const MAX_SHARDS = 256;

/**
 * The shard names of a split model from its first shard's name (`name-00001-of-00003.gguf`), or
 * null when the name does not follow that pattern or names more than MAX_SHARDS shards.
 * @param {string} first a file name or URL
 */
export function shardNames(first) {
  const m = /^(.*-)(\d{5})-of-(\d{5})(\.gguf)(\?.*)?$/.exec(first);
  if (!m) return null;
  const n = Number(m[3]);
  if (n < 1 || n > MAX_SHARDS) return null;
  return Array.from({ length: n }, (_, i) => `${m[1]}${String(i + 1).padStart(5, '0')}-of-${m[3]}${m[4]}${m[5] ?? ''}`);
}
