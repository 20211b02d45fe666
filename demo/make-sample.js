#!/usr/bin/env node
// Writes demo/sample.gguf, the demo's bundled model: synthetic F16 and F32 weight tensors shaped
// and distributed like an LLM's (see sample.js), a norm vector, and the same weights stored in
// each of Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and the K-quants Q2_K..Q6_K (rows of 1024 = 4 super-blocks),
// a small tensor of each other block type (IQ4, MXFP4, NVFP4, Q1_0, Q2_0, ternary and the IQ grid types), the integer
// and F64 types; and llama-style metadata (attention shape, context length) with a small tokenizer
// (byte tokens, multi-byte UTF-8 pieces, scores, types) and a chat template. Deterministic.
import { writeFileSync } from 'node:fs';
import { init, writeGGUF, typeInfo, typeId, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { syntheticWeights } from './sample.js';

const bq = await init();
const q = syntheticWeights(96, 1024, 11); // an attention projection: 96 rows of 1024
const up = syntheticWeights(128, 1024, 12); // a feed-forward matrix
const norm = new Float32Array(1024).map((_, i) => 1 + 0.1 * Math.sin(i));
const f32 = (/** @type {Float32Array} */ x) => new Uint8Array(x.buffer.slice(0));
/** @type {import('../js/gguf-write.js').TensorIn[]} */
const tensors = [
  { name: 'blk.0.attn_q.weight', type: GGMLType.F16, dims: [1024, 96], data: bq.quantize('f16', q) },
  { name: 'blk.0.ffn_up.weight', type: GGMLType.F32, dims: [1024, 128], data: f32(up) },
  { name: 'blk.0.attn_norm.weight', type: GGMLType.F32, dims: [1024], data: f32(norm) },
];
for (const t of ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K']) {
  tensors.push({
    name: `${t}.blk.0.attn_q.weight`,
    type: typeId(t),
    dims: [1024, 96],
    data: bq.quantize(t, q),
  });
  tensors.push({
    name: `${t}.blk.0.ffn_up.weight`,
    type: typeId(t),
    dims: [1024, 128],
    data: bq.quantize(t, up),
  });
}
// The other block formats, small: 4 rows of 256. IQ4_NL/IQ4_XS/MXFP4/NVFP4/Q1_0/Q2_0/TQ1_0/TQ2_0 quantized; the
// grid types (which only decode) as blocks of deterministic pseudo-random bytes: every bit pattern
// of their index, sign and scale fields is a valid block, so only the scale d is set, to a small
// binary16 (IQ1_M keeps its d in the top nibbles of its four scale words).
const small = q.subarray(0, 1024);
for (const t of ['iq4_nl', 'iq4_xs', 'mxfp4', 'nvfp4', 'q1_0', 'q2_0', 'tq1_0', 'tq2_0'])
  tensors.push({
    name: `${t}.blk.0.attn_q.weight`,
    type: typeId(t),
    dims: [256, 4],
    data: bq.quantize(t, small),
  });
let seed = 0x9e3779b9;
const byte = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed >>> 24;
};
const D_BITS = 0x1c00; // binary16 0.00390625
for (const t of ['iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s', 'iq1_s', 'iq1_m']) {
  const { typeSize } = typeInfo(t);
  const data = new Uint8Array(4 * typeSize).map(byte);
  for (let o = 0; o < data.length; o += typeSize) {
    if (t === 'iq1_m')
      for (let w = 0; w < 4; w++)
        data[o + 48 + 2 * w + 1] = (data[o + 48 + 2 * w + 1] & 0x0f) | (((D_BITS >> (4 * w)) & 15) << 4);
    else {
      data[o] = D_BITS & 255;
      data[o + 1] = D_BITS >> 8;
    }
  }
  tensors.push({ name: `${t}.blk.0.attn_q.weight`, type: typeId(t), dims: [256, 4], data });
}
// The integer and F64 types, which decode to their own typed arrays: small tensors of values
// spread over each type's range (I64 beyond 2^53, F64 finer than f32).
const ints = (/** @type {number} */ n, /** @type {number} */ scale) =>
  Array.from({ length: n }, (_, i) => Math.round(scale * Math.sin(i * 0.37) * Math.cos(i * 0.011)));
const bytesOf = (/** @type {ArrayBufferView} */ a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
tensors.push(
  { name: 'i8.blk.0.attn_k.weight', type: GGMLType.I8, dims: [256, 4], data: bytesOf(Int8Array.from(ints(1024, 127))) },
  { name: 'i16.tokens', type: GGMLType.I16, dims: [512], data: bytesOf(Int16Array.from(ints(512, 32767))) },
  { name: 'i32.positions', type: GGMLType.I32, dims: [512], data: bytesOf(Int32Array.from(ints(512, 2 ** 31 - 1))) },
  {
    name: 'i64.ids',
    type: GGMLType.I64,
    dims: [256],
    data: bytesOf(BigInt64Array.from(ints(256, 2 ** 20), (v, i) => BigInt(v) * 2n ** 40n + BigInt(i))),
  },
  {
    name: 'f64.rope_freqs',
    type: GGMLType.F64,
    dims: [256],
    data: bytesOf(Float64Array.from({ length: 256 }, (_, i) => 10000 ** (-i / 256) + 1e-12 * i)),
  },
);
// A small SentencePiece-style vocabulary, shaped like a llama tokenizer's: <unk>, <s>, </s>, the
// 256 byte-fallback tokens <0x00> … <0xFF>, two chat control tokens, then word pieces (▁ marks a
// leading space) with descending scores, including multi-byte UTF-8 pieces (accents, CJK, Cyrillic,
// an emoji). Token types as llama.cpp numbers them: 1 normal, 2 unknown, 3 control, 6 byte.
const PIECES = [
  ...'▁ e t a o n i s r h l d c u m f p g w y b v k , . ▁t ▁a ▁s ▁w ▁c ▁b ▁o ▁m ▁f ▁p ▁d ▁h ▁in ▁th ▁the ▁of ▁and ▁to ▁is ▁for ▁on ▁with ▁that ▁it ▁as ▁be er in on re at en es or an ed ing ion ation ly ▁re ▁an ▁we ▁this ▁block ▁quant ization ▁weight ▁weights ▁scale ▁scales ▁model ▁layer ▁tensor ▁value ▁values ▁error ▁bits ▁byte ▁bytes ▁nibble ▁sub ▁super ▁min ▁max ▁float ▁half ▁round ▁code ▁codes ▁table'.split(
    ' ',
  ),
  'é',
  '▁café',
  '▁über',
  '▁naïve',
  '日本',
  '語',
  '▁日本語',
  '中文',
  '▁привет',
  'мир',
  '▁Ελληνικά',
  '▁🦙',
  '🙂',
  '▁→',
  '…',
];
const vocab = ['<unk>', '<s>', '</s>'];
for (let b = 0; b < 256; b++) vocab.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
vocab.push('<|im_start|>', '<|im_end|>', ...PIECES);
const firstPiece = vocab.length - PIECES.length;
const tokenType = Int32Array.from(vocab, (t, i) => (i === 0 ? 2 : i < 3 || t.startsWith('<|') ? 3 : i < 259 ? 6 : 1));
const scores = Float32Array.from(vocab, (_, i) => (i < firstPiece ? 0 : -(i - firstPiece)));
// Attention shaped after the attn_q tensor: 6 heads of 16 = 96 rows, 2 KV heads (grouped-query).
const ARCH = 'llama';
const u32 = (/** @type {string} */ key, /** @type {number} */ value) => ({ key, type: VT.UINT32, value });
const TEMPLATE =
  "{{ bos_token }}{% for message in messages %}<|im_start|>{{ message['role'] }}\n" +
  "{{ message['content'] | trim }}<|im_end|>\n{% endfor %}" +
  '{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}';
const out = new URL('./sample.gguf', import.meta.url);
writeFileSync(
  out,
  writeGGUF({
    kv: [
      { key: 'general.architecture', type: VT.STRING, value: ARCH },
      { key: 'general.name', type: VT.STRING, value: 'blockquant synthetic sample (not a real model)' },
      {
        key: 'general.description',
        type: VT.STRING,
        value: 'Synthetic weights: per-row scale spread, Student-t tails, outlier input channels.',
      },
      u32(`${ARCH}.context_length`, 2048),
      u32(`${ARCH}.block_count`, 1),
      u32(`${ARCH}.embedding_length`, 1024),
      u32(`${ARCH}.feed_forward_length`, 128),
      u32(`${ARCH}.attention.head_count`, 6),
      u32(`${ARCH}.attention.head_count_kv`, 2),
      u32(`${ARCH}.attention.key_length`, 16),
      u32(`${ARCH}.attention.value_length`, 16),
      u32(`${ARCH}.rope.dimension_count`, 16),
      { key: `${ARCH}.rope.freq_base`, type: VT.FLOAT32, value: 10000 },
      { key: `${ARCH}.attention.layer_norm_rms_epsilon`, type: VT.FLOAT32, value: 1e-5 },
      u32(`${ARCH}.vocab_size`, vocab.length),
      { key: 'tokenizer.ggml.model', type: VT.STRING, value: 'llama' },
      { key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: vocab },
      { key: 'tokenizer.ggml.scores', type: VT.ARRAY, itemType: VT.FLOAT32, value: scores },
      { key: 'tokenizer.ggml.token_type', type: VT.ARRAY, itemType: VT.INT32, value: tokenType },
      u32('tokenizer.ggml.bos_token_id', 1),
      u32('tokenizer.ggml.eos_token_id', 2),
      u32('tokenizer.ggml.unknown_token_id', 0),
      { key: 'tokenizer.ggml.add_bos_token', type: VT.BOOL, value: true },
      { key: 'tokenizer.chat_template', type: VT.STRING, value: TEMPLATE },
    ],
    tensors,
  }),
);
console.log(`wrote ${out.pathname}`);
