// A small LLM-like GGUF for the model viewer's tests, built with writeGGUF: llama architecture
// metadata (3 layers, GQA 4 heads / 2 KV heads, key_length absent so it comes from
// embedding_length / head_count), a vocabulary with control, byte and multi-byte UTF-8 tokens,
// scores and types, a chat template, and tensors of several types, optionally split in shards.
import { writeGGUF, GGMLType, GGUFValueType as VT } from '../../js/node.js';

export const ARCH = { layers: 3, embd: 256, heads: 4, kvHeads: 2, ctx: 4096 };
export const TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}";

/** The vocabulary: id -> token; byte tokens <0x00>..<0xFF> from id 3; then words, CJK, emoji. */
export function vocabTokens() {
  const t = ['<unk>', '<s>', '</s>'];
  for (let b = 0; b < 256; b++) t.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  t.push('▁the', '▁model', '▁héllo', '日本語', '▁🦙', 'tab\there', '▁quant', 'ization', '▁block');
  for (let i = 0; i < 300; i++) t.push(`▁w${i}`);
  return t;
}

/**
 * The fixture's bytes (one file, or `shards` files of a split model).
 * @param {{ quantize: (f: string, x: Float32Array) => Uint8Array }} bq
 * @param {number} [shards]
 * @returns {Uint8Array[]}
 */
export function viewerModel(bq, shards = 1) {
  const { layers, embd, heads, kvHeads, ctx } = ARCH;
  const tokens = vocabTokens();
  const types = tokens.map((s, i) => (i === 0 ? 2 : i < 3 ? 3 : /^<0x/.test(s) ? 6 : 1));
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
  const vec = (n) => Float32Array.from({ length: n }, () => 0.05 * rnd());
  const t = (name, type, dims) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const fmt = {
      [GGMLType.F32]: 'f32',
      [GGMLType.F16]: 'f16',
      [GGMLType.Q4_0]: 'q4_0',
      [GGMLType.Q8_0]: 'q8_0',
      [GGMLType.Q4_K]: 'q4_K',
    }[type];
    const x = vec(n);
    return { name, type, dims, data: fmt === 'f32' ? new Uint8Array(x.buffer) : bq.quantize(fmt, x) };
  };
  const kvDim = (embd / heads) * kvHeads;
  const tensors = [t('token_embd.weight', GGMLType.Q8_0, [embd, 64])];
  for (let l = 0; l < layers; l++) {
    tensors.push(
      t(`blk.${l}.attn_norm.weight`, GGMLType.F32, [embd]),
      t(`blk.${l}.attn_q.weight`, GGMLType.F16, [embd, embd]),
      t(`blk.${l}.attn_k.weight`, GGMLType.Q4_0, [embd, kvDim]),
      t(`blk.${l}.attn_v.weight`, GGMLType.Q8_0, [embd, kvDim]),
      t(`blk.${l}.ffn_up.weight`, GGMLType.Q4_K, [embd, 512]),
    );
  }
  tensors.push(t('output_norm.weight', GGMLType.F32, [embd]), t('output.weight', GGMLType.Q4_K, [embd, 64]));
  const kv = [
    { key: 'general.architecture', type: VT.STRING, value: 'llama' },
    { key: 'general.name', type: VT.STRING, value: 'Viewer Fixture 3L' },
    { key: 'llama.block_count', type: VT.UINT32, value: layers },
    { key: 'llama.context_length', type: VT.UINT32, value: ctx },
    { key: 'llama.embedding_length', type: VT.UINT32, value: embd },
    { key: 'llama.attention.head_count', type: VT.UINT32, value: heads },
    { key: 'llama.attention.head_count_kv', type: VT.UINT32, value: kvHeads },
    { key: 'llama.rope.freq_base', type: VT.FLOAT32, value: 10000 },
    { key: 'tokenizer.ggml.model', type: VT.STRING, value: 'llama' },
    { key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: tokens },
    {
      key: 'tokenizer.ggml.scores',
      type: VT.ARRAY,
      itemType: VT.FLOAT32,
      value: Float32Array.from(tokens, (_, i) => -i / 4),
    },
    { key: 'tokenizer.ggml.token_type', type: VT.ARRAY, itemType: VT.INT32, value: Int32Array.from(types) },
    { key: 'tokenizer.chat_template', type: VT.STRING, value: TEMPLATE },
  ];
  if (shards === 1) return [writeGGUF({ kv, tensors })];
  const per = Math.ceil(tensors.length / shards);
  return Array.from({ length: shards }, (_, i) =>
    writeGGUF({
      kv: [
        ...(i === 0 ? kv : []),
        { key: 'split.no', type: VT.UINT16, value: i },
        { key: 'split.count', type: VT.UINT16, value: shards },
        { key: 'split.tensors.count', type: VT.INT32, value: tensors.length },
      ],
      tensors: tensors.slice(i * per, (i + 1) * per),
    }),
  );
}

/**
 * A file laid out as a real quantized model is (llama-quantize's Q4_K_M: general.file_type 15):
 * a tall token embedding first (Q4_K, 3000 rows of one super-block), then per layer a 1-D F32
 * norm before the 2-D weights, so the first float tensor is a norm.
 * @param {{ quantize: (f: string, x: Float32Array) => Uint8Array }} bq
 */
export function quantizedModel(bq) {
  let seed = 11;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
  const vec = (/** @type {number} */ n) => Float32Array.from({ length: n }, () => 0.05 * rnd());
  const tensors = [
    { name: 'token_embd.weight', type: GGMLType.Q4_K, dims: [256, 3000], data: bq.quantize('q4_K', vec(256 * 3000)) },
  ];
  for (let l = 0; l < 2; l++)
    tensors.push(
      { name: `blk.${l}.attn_norm.weight`, type: GGMLType.F32, dims: [256], data: new Uint8Array(vec(256).buffer) },
      {
        name: `blk.${l}.attn_q.weight`,
        type: GGMLType.Q4_K,
        dims: [256, 256],
        data: bq.quantize('q4_K', vec(256 * 256)),
      },
      {
        name: `blk.${l}.ffn_down.weight`,
        type: GGMLType.Q6_K,
        dims: [256, 256],
        data: bq.quantize('q6_K', vec(256 * 256)),
      },
    );
  tensors.push({ name: 'output_norm.weight', type: GGMLType.F32, dims: [256], data: new Uint8Array(vec(256).buffer) });
  return writeGGUF({
    kv: [
      { key: 'general.architecture', type: VT.STRING, value: 'llama' },
      { key: 'general.name', type: VT.STRING, value: 'Quantized Fixture' },
      { key: 'general.file_type', type: VT.UINT32, value: 15 },
      { key: 'llama.block_count', type: VT.UINT32, value: 2 },
      { key: 'llama.embedding_length', type: VT.UINT32, value: 256 },
      { key: 'llama.attention.layer_norm_rms_epsilon', type: VT.FLOAT32, value: 1e-5 },
    ],
    tensors,
  });
}
