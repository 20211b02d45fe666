// Generated test models: GGUF files shaped like the ones llama-quantize meets (llama-architecture
// dense models with GQA, MoE models with 3-D expert tensors, tied embeddings, rows that are not a
// multiple of 256 or of 32, F32/F16/BF16 weights), with the KVs llama.cpp's loader reads to load
// hparams. Written through js/gguf-write.js; the values are seeded gaussians (finite, so the
// loader's data validation passes). For the tests and the benchmark only.
import { writeGGUF } from '../../js/gguf-write.js';
import { VT } from '../../js/gguf-format.js';
import { rng } from './helpers.js';
import { toHalf } from './oracle-k.js';

export const F32 = 0,
  F16 = 1,
  BF16 = 30,
  I32 = 26;

/**
 * @typedef {{ name: string, dims: number[], type?: number }} TensorSpec
 * @typedef {{ key: string, type: number, value: unknown, itemType?: number }} KVSpec
 * @typedef {object} ModelSpec
 * @property {string} [arch] general.architecture (default 'llama'); the hparam keys are prefixed with it
 * @property {number} [layers] block_count (default 2)
 * @property {number} [embd] embedding_length (default 256)
 * @property {number} [ff] feed_forward_length (default 512)
 * @property {number} [heads] attention.head_count (default 8)
 * @property {number} [headsKv] attention.head_count_kv (default 2; GQA 4)
 * @property {number} [vocab] rows of token_embd/output (default 256)
 * @property {number} [experts] expert_count; > 0 makes the FFN a MoE of 3-D *_exps tensors
 * @property {number} [expertsUsed] expert_used_count (default 2)
 * @property {boolean} [tied] no output.weight (the output shares token_embd)
 * @property {number} [rows] every matrix gets this many rows (ne1), whatever its role: a small model
 *   whose rows (ne0) are still those of the architecture (the recipe looks only at ne0)
 * @property {number} [type] ggml type of the 2-D and 3-D tensors (F32, F16 or BF16; default F32;
 *   a TensorSpec's own type may also be I32)
 * @property {number} [normType] ggml type of the 1-D tensors (default F32)
 * @property {number} [seed] of the values (default 1)
 * @property {TensorSpec[]} [tensors] replaces the architecture's tensor list
 * @property {TensorSpec[]} [extraTensors] appended to it
 * @property {(list: TensorSpec[]) => TensorSpec[]} [order] reorders the tensors in the file
 * @property {KVSpec[]} [kv] appended after the generated KVs
 * @property {string[]} [dropKv] generated keys left out
 * @property {number} [alignment] written as general.alignment
 */

/**
 * The tensor list of a llama-architecture model (names as llama.cpp's LLM_TN spells them).
 * @param {ModelSpec} s
 * @returns {TensorSpec[]}
 */
export function llamaTensors(s = {}) {
  const { layers = 2, embd = 256, ff = 512, heads = 8, headsKv = 2, vocab = 256, experts = 0 } = s;
  const kvDim = (embd / heads) * headsKv;
  /** @type {TensorSpec[]} */
  const list = [
    { name: 'token_embd.weight', dims: [embd, vocab] },
    { name: 'output_norm.weight', dims: [embd] },
  ];
  if (!s.tied) list.push({ name: 'output.weight', dims: [embd, vocab] });
  for (let i = 0; i < layers; i++) {
    const b = `blk.${i}.`;
    list.push(
      { name: `${b}attn_norm.weight`, dims: [embd] },
      { name: `${b}attn_q.weight`, dims: [embd, embd] },
      { name: `${b}attn_k.weight`, dims: [embd, kvDim] },
      { name: `${b}attn_v.weight`, dims: [embd, kvDim] },
      { name: `${b}attn_output.weight`, dims: [embd, embd] },
      { name: `${b}ffn_norm.weight`, dims: [embd] },
    );
    if (experts > 0)
      list.push(
        { name: `${b}ffn_gate_inp.weight`, dims: [embd, experts] },
        { name: `${b}ffn_gate_exps.weight`, dims: [embd, ff, experts] },
        { name: `${b}ffn_down_exps.weight`, dims: [ff, embd, experts] },
        { name: `${b}ffn_up_exps.weight`, dims: [embd, ff, experts] },
      );
    else
      list.push(
        { name: `${b}ffn_gate.weight`, dims: [embd, ff] },
        { name: `${b}ffn_down.weight`, dims: [ff, embd] },
        { name: `${b}ffn_up.weight`, dims: [embd, ff] },
      );
  }
  if (s.rows) for (const t of list) if (t.dims.length > 1) t.dims = [t.dims[0], s.rows, ...t.dims.slice(2)];
  return list;
}

/**
 * The KVs llama.cpp's loader needs for the hparams (no tokenizer: quantizing does not load one).
 * @param {ModelSpec} s
 * @returns {KVSpec[]}
 */
export function modelKV(s = {}) {
  const { arch = 'llama', layers = 2, embd = 256, ff = 512, heads = 8, headsKv = 2, experts = 0 } = s;
  const u32 = (/** @type {string} */ key, /** @type {number} */ value) => ({ key, type: VT.UINT32, value });
  const a = (/** @type {string} */ k) => `${arch}.${k}`;
  /** @type {KVSpec[]} */
  const kv = [
    { key: 'general.architecture', type: VT.STRING, value: arch },
    { key: 'general.name', type: VT.STRING, value: `test-${arch}` },
    ...(s.alignment !== undefined ? [u32('general.alignment', s.alignment)] : []),
    u32(a('context_length'), 2048),
    u32(a('embedding_length'), embd),
    u32(a('block_count'), layers),
    u32(a('feed_forward_length'), ff),
    u32(a('rope.dimension_count'), embd / heads),
    u32(a('attention.head_count'), heads),
    u32(a('attention.head_count_kv'), headsKv),
    { key: a('attention.layer_norm_rms_epsilon'), type: VT.FLOAT32, value: 1e-5 },
    { key: a('attention.layer_norm_epsilon'), type: VT.FLOAT32, value: 1e-5 },
    ...(experts > 0 ? [u32(a('expert_count'), experts), u32(a('expert_used_count'), s.expertsUsed ?? 2)] : []),
    u32('general.file_type', 0),
  ];
  const drop = new Set(s.dropKv ?? []);
  return [...kv.filter((e) => !drop.has(e.key)), ...(s.kv ?? [])];
}

/**
 * Values of one tensor in its type: seeded gaussians (sd 0.05) as f32, f16 or bf16 bits; small
 * integers for I32.
 * @param {number} type @param {number} n @param {ReturnType<typeof rng>} r
 */
function values(type, n, r) {
  if (type === I32) return Int32Array.from({ length: n }, () => Math.floor(r.next() * 1000) - 500);
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = r.normal() * 0.05;
  if (type === F32) return f;
  const u = new Uint32Array(f.buffer);
  const h = new Uint16Array(n);
  if (type === F16) for (let i = 0; i < n; i++) h[i] = toHalf(f[i]);
  else if (type === BF16)
    for (let i = 0; i < n; i++) h[i] = (u[i] + 0x7fff + ((u[i] >>> 16) & 1)) >>> 16; // nearest even (finite)
  else throw new RangeError(`models.js: type ${type} is not F32, F16, BF16 or I32`);
  return h;
}

/**
 * A whole model file.
 * @param {ModelSpec} [s]
 * @returns {{ bytes: Uint8Array<ArrayBuffer>, tensors: (TensorSpec & { type: number })[], kv: KVSpec[], seed: number }}
 */
export function makeModel(s = {}) {
  const seed = s.seed ?? 1;
  const r = rng(seed);
  let list = [...(s.tensors ?? llamaTensors(s)), ...(s.extraTensors ?? [])].map((t) => ({
    ...t,
    type: t.type ?? (t.dims.length < 2 ? (s.normType ?? F32) : (s.type ?? F32)),
  }));
  if (s.order) list = /** @type {typeof list} */ (s.order(list));
  const kv = modelKV(s);
  const tensors = list.map((t) => ({
    name: t.name,
    type: t.type,
    dims: t.dims,
    data: values(
      t.type,
      t.dims.reduce((a, b) => a * b, 1),
      r,
    ),
  }));
  const bytes = writeGGUF({ kv, tensors, ...(s.alignment !== undefined ? { alignment: s.alignment } : {}) });
  return { bytes, tensors: list, kv, seed };
}

/**
 * A reproducible shuffle of the tensor list (to show that the output order is llama's, not the
 * file's).
 * @param {number} seed
 * @returns {(list: TensorSpec[]) => TensorSpec[]}
 */
export function shuffled(seed) {
  return (list) => {
    const r = rng(seed);
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(r.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
}

/**
 * A split model, as gguf-split writes one: the tensors of makeModel(s) in file order cut into
 * `counts` consecutive runs, one shard each; shard 0 has the model's KVs, every shard split.no
 * (UINT16), split.count (UINT16) and split.tensors.count (INT32).
 * @param {ModelSpec} s
 * @param {number[]} counts tensors per shard (their sum: the model's tensor count)
 * @returns {{ shards: Uint8Array<ArrayBuffer>[], whole: Uint8Array<ArrayBuffer> }} whole: the model in one file
 */
export function splitModel(s, counts) {
  const whole = makeModel(s);
  const seed = s.seed ?? 1;
  const r = rng(seed);
  let list = [...(s.tensors ?? llamaTensors(s)), ...(s.extraTensors ?? [])].map((t) => ({
    ...t,
    type: t.type ?? (t.dims.length < 2 ? (s.normType ?? F32) : (s.type ?? F32)),
  }));
  if (s.order) list = /** @type {typeof list} */ (s.order(list));
  const data = list.map((t) =>
    values(
      t.type,
      t.dims.reduce((a, b) => a * b, 1),
      r,
    ),
  );
  if (counts.reduce((a, b) => a + b, 0) !== list.length)
    throw new RangeError(`splitModel: counts must add up to ${list.length}`);
  const n = counts.length;
  const split = (/** @type {number} */ i) => [
    { key: 'split.no', type: VT.UINT16, value: i },
    { key: 'split.count', type: VT.UINT16, value: n },
    { key: 'split.tensors.count', type: VT.INT32, value: list.length },
  ];
  const shards = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const tensors = list
      .slice(at, at + counts[i])
      .map((t, k) => ({ name: t.name, type: t.type, dims: t.dims, data: data[at + k] }));
    at += counts[i];
    shards.push(writeGGUF({ kv: i === 0 ? [...modelKV(s), ...split(0)] : split(i), tensors }));
  }
  return { shards, whole: whole.bytes };
}
