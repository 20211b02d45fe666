// planFor's flags against llama_model_quantize (tests/lib/llama-oracle.js): --pure,
// --leave-output-tensor, --output-tensor-type, --token-embedding-type, --tensor-type, --override-kv,
// --prune-layers, --keep-split (split inputs), --allow-requantize (quantized inputs), the
// imatrix's use (include/exclude, entries the model lacks or has of the wrong size) and the
// quantize.imatrix.* KVs, the input's quirks (tensor order, odd names, trailing 1-dims,
// general.alignment, strings with NUL, BOOL arrays, split.* and general.* keys), and the refusals.
// Each case compares the oracle's whole output header (KVs, tensors, offsets, size) with the plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planFor } from '../js/model/recipe.js';
import { parseGGUF } from '../js/gguf-read.js';
import { readImatrix } from '../js/model/imatrix.js';
import { VT } from '../js/gguf-format.js';
import { makeModel, splitModel, shuffled, I32 } from './lib/models.js';
import { comparePlans, LLAMA_FTYPE } from './lib/plan-oracle.js';
import { llamaQuantize, llamaQuantizeAll } from './lib/llama-oracle.js';
import { imatrixGGUF } from './lib/imatrix-files.js';
import { rng, SEED } from './lib/helpers.js';

console.log(`recipe-flags: seed ${SEED} (BQ_SEED=${SEED} to replay)`);

const base = { layers: 8, vocab: 64, rows: 4, heads: 8, headsKv: 2, seed: SEED };
const m = makeModel(base);
const tied = makeModel({ ...base, tied: true });
const moe = makeModel({ ...base, experts: 8, rows: 2 });

/** @param {ReturnType<typeof makeModel>} mm @param {number} [seed] */
function imatrixFor(mm, seed = SEED + 1) {
  const r = rng(seed);
  /** @type {Map<string, Float32Array>} */
  const im = new Map();
  for (const t of mm.tensors)
    if (t.dims.length >= 2)
      im.set(
        t.name,
        Float32Array.from({ length: t.dims[0] * (t.dims[2] ?? 1) }, () => 0.2 + r.next()),
      );
  return im;
}
/** A copy of an imatrix with one entry replaced (or removed: no value). @param {Map<string, Float32Array>} im @param {string} name @param {Float32Array} [v] */
const withEntry = (im, name, v) => {
  const x = new Map(im);
  if (v) x.set(name, v);
  else x.delete(name);
  return x;
};
const im = imatrixFor(m);
const imMoe = imatrixFor(moe);

// Quantized inputs, made by the oracle itself.
const [q8, q4] = llamaQuantizeAll([
  { model: m.bytes, ftype: LLAMA_FTYPE.Q8_0 },
  { model: m.bytes, ftype: LLAMA_FTYPE.Q4_0 },
]).map((r) => r.out[0]);

const never = [
  'blk.0.ffn_gate_inp.weight',
  'blk.0.altup_proj.weight',
  'blk.0.laurel_l.weight',
  'per_layer_model_proj.weight',
  'blk.0.ssm_conv1d.weight',
  'blk.0.shortconv.conv.weight',
  'blk.0.attn_rel_b.weight',
  'v.position_embd.weight',
  'blk.0.x.rel_pos.weight',
  'v.patch_embd.weight',
  'mm.patch_merger.weight',
  'blk.0.time_mix_first.weight',
  'blk.0.time_mix_w1.weight',
  'blk.0.time_mix_lerp_fused.weight',
  'blk.0.time_mix_decay_w2.weight',
  'position_embd.weight',
  'token_types.weight',
  'blk.0.ffn_gate_tid2eid.weight',
  'blk.0.indexer.k_proj.weight',
  'v.sam.pos_embd.weight',
  'sam.neck.0.weight',
  'sam.net_2.weight',
  'a.rvq.codebook.weight',
  'mm.a.code_embd.weight',
  // and some that are quantized
  'blk.0.attn_norm_2.weight',
  'blk.0.thingweight',
  'per_layer_token_embd.weight',
  'blk.0.x.weight',
  // not ending in "weight"
  'blk.0.ffn_up.bias',
  'blk.0.thing.weight.extra',
];
const odd = [
  'blk.3x.attn_v.weight',
  'blk.-1.ffn_down.weight',
  'blk. 5.ffn_down.weight',
  'blk.05.attn_v.weight',
  'zé.weight',
  'z\uffff.weight',
  'z\u{1F600}.weight',
  'Blk.1.attn_v.weight',
  'enc.blk.2.ffn_down.weight',
];
const kvKinds = [
  { key: 'x.nul', type: VT.STRING, value: 'ab\0cd' },
  { key: 'x.strs', type: VT.ARRAY, itemType: VT.STRING, value: ['a', 'b\0c', '', 'é'] },
  { key: 'x.bools', type: VT.ARRAY, itemType: VT.BOOL, value: new Uint8Array([0, 1, 2, 255]) },
  { key: 'x.b', type: VT.BOOL, value: true },
  { key: 'x.u64', type: VT.UINT64, value: 123n },
  { key: 'x.f64', type: VT.FLOAT64, value: 0.1 },
  { key: 'x.i8s', type: VT.ARRAY, itemType: VT.INT8, value: new Int8Array([-1, 2]) },
  { key: 'split.count', type: VT.UINT16, value: 1 },
  { key: 'general.quantization_version', type: VT.UINT32, value: 7 },
  { key: 'x.empty', type: VT.ARRAY, itemType: VT.UINT32, value: new Uint32Array(0) },
];
const sp = splitModel(base, [25, 25, 25]);
const rows96 = makeModel({ ...base, embd: 96, heads: 4, headsKv: 1, ff: 96 });
/** The model with one KV of another type. @param {string} key @param {number} type @param {unknown} value */
const withKv = (key, type, value) => makeModel({ ...base, dropKv: [key], kv: [{ key, type, value }] });
/** The model with head_count and head_count_kv as UINT32 arrays. @param {number[]} h @param {number[]} kv */
const headArrays = (h, kv) =>
  makeModel({
    ...base,
    dropKv: ['llama.attention.head_count', 'llama.attention.head_count_kv'],
    kv: [
      { key: 'llama.attention.head_count', type: VT.ARRAY, itemType: VT.UINT32, value: Uint32Array.from(h) },
      { key: 'llama.attention.head_count_kv', type: VT.ARRAY, itemType: VT.UINT32, value: Uint32Array.from(kv) },
    ],
  });
const spShuffled = splitModel({ ...base, order: shuffled(SEED) }, [5, 60, 10]);

/** @type {[string, Uint8Array | Uint8Array[], import('../js/model/recipe.js').PlanOptions, string?, { oracleFtype?: number, oracle?: import('./lib/llama-oracle.js').OracleOptions }?][]} */
const CASES = [
  ['pure', m.bytes, { ftype: 'Q4_K_M', pure: true }],
  ['pure IQ2_XXS', m.bytes, { ftype: 'IQ2_XXS', pure: true, imatrix: im }],
  [
    'a ggml type name: every tensor at q4_K (--pure Q4_K_S)',
    m.bytes,
    { ftype: 'q4_K' },
    undefined,
    { oracleFtype: LLAMA_FTYPE.Q4_K_S, oracle: { pure: true } },
  ],
  [
    'a ggml type name: every tensor at iq2_s (--pure IQ2_M)',
    m.bytes,
    { ftype: 'iq2_s', imatrix: im },
    undefined,
    { oracleFtype: LLAMA_FTYPE.IQ2_M, oracle: { pure: true } },
  ],
  ['leaveOutputTensor', m.bytes, { ftype: 'Q4_K_M', leaveOutputTensor: true }],
  ['leaveOutputTensor, tied', tied.bytes, { ftype: 'Q4_K_M', leaveOutputTensor: true }],
  ['outputTensorType', m.bytes, { ftype: 'Q4_K_M', outputTensorType: 'q8_0' }],
  ['outputTensorType, tied: token_embd follows', tied.bytes, { ftype: 'Q4_K_M', outputTensorType: 'q5_K' }],
  ['tokenEmbeddingType', m.bytes, { ftype: 'Q4_K_M', tokenEmbeddingType: 'q3_K' }],
  ['tokenEmbeddingType, tied', tied.bytes, { ftype: 'Q4_K_M', tokenEmbeddingType: 'q3_K' }],
  ['both, tied', tied.bytes, { ftype: 'Q4_K_M', tokenEmbeddingType: 'q3_K', outputTensorType: 'q8_0' }],
  ['both with an F16 ftype', m.bytes, { ftype: 'F16', outputTensorType: 'q8_0', tokenEmbeddingType: 'q4_0' }],
  [
    'tensorTypes, first match wins',
    m.bytes,
    {
      ftype: 'Q4_K_M',
      tensorTypes: [
        ['attn_v', 'q8_0'],
        ['blk\\.[0-3]\\.ffn', 'q5_K'],
        ['ffn_down', 'iq4_xs'],
      ],
    },
  ],
  [
    'tensorTypes, upper case (lowercased as llama-quantize does)',
    m.bytes,
    {
      ftype: 'Q4_K_M',
      tensorTypes: [
        ['ATTN_V', 'Q8_0'],
        ['^blk\\.1\\.', 'q2_K'],
      ],
    },
  ],
  ['tensorTypes with an F16 ftype (ignored)', m.bytes, { ftype: 'F16', tensorTypes: [['attn_v', 'q8_0']] }],
  [
    'tensorTypes on output and token_embd',
    m.bytes,
    {
      ftype: 'Q4_K_M',
      tensorTypes: [
        ['output', 'q4_0'],
        ['token_embd', 'q4_1'],
      ],
    },
  ],
  ['tensorTypes on 3-D experts', moe.bytes, { ftype: 'Q4_K_M', tensorTypes: [['exps', 'q2_K']] }],
  ['tensorTypes with pure', m.bytes, { ftype: 'Q4_K_M', pure: true, tensorTypes: [['attn_k', 'q8_0']] }],
  ['tensorTypes that fall back', m.bytes, { ftype: 'Q8_0', tensorTypes: [['ffn_down', 'q2_K']] }],
  [
    'overrideKv',
    m.bytes,
    {
      ftype: 'Q4_K_M',
      overrideKv: [
        'general.name=str:renamed',
        'foo.int=int:-5',
        'foo.f=float:0.1',
        'foo.b=bool:true',
        'general.file_type=int:99',
        'llama.context_length=int:4096',
      ],
    },
  ],
  [
    'overrideKv, ints past 32 bits',
    m.bytes,
    { ftype: 'Q8_0', overrideKv: ['foo.big=int:4294967301', 'foo.neg=int:-4294967297'] },
  ],
  [
    'overrideKv of block_count (the loader reads it)',
    m.bytes,
    { ftype: 'Q4_K_M', overrideKv: ['llama.block_count=int:16'] },
  ],
  ['pruneLayers', m.bytes, { ftype: 'Q4_K_M', pruneLayers: [5, 2] }],
  ['pruneLayers 0 and the last', m.bytes, { ftype: 'Q4_K_M', pruneLayers: [0, 7] }],
  ['pruneLayers, MoE', moe.bytes, { ftype: 'Q4_K_M', pruneLayers: [3] }],
  ['pruneLayers with an imatrix', m.bytes, { ftype: 'IQ2_XS', pruneLayers: [1, 4], imatrix: im }],
  ['a split input', sp.shards, { ftype: 'Q4_K_M' }],
  ['keepSplit', sp.shards, { ftype: 'Q4_K_M', keepSplit: true }],
  ['keepSplit, shuffled shards', spShuffled.shards, { ftype: 'Q4_K_M', keepSplit: true }],
  ['a shuffled split input', spShuffled.shards, { ftype: 'Q3_K_M' }],
  ['keepSplit with pruneLayers', sp.shards, { ftype: 'Q4_K_M', keepSplit: true, pruneLayers: [1] }],
  ['keepSplit of one file', m.bytes, { ftype: 'Q4_K_M', keepSplit: true }],
  ['allowRequantize from Q8_0', q8, { ftype: 'Q4_K_M', allowRequantize: true }],
  ['Q8_0 input without allowRequantize', q8, { ftype: 'Q4_K_M' }, 'REQUANTIZE'],
  ['Q4_0 input to Q4_0: nothing to convert', q4, { ftype: 'Q4_0' }],
  ['allowRequantize from Q4_0 to Q8_0', q4, { ftype: 'Q8_0', allowRequantize: true }],
  [
    'the never-quantized names',
    makeModel({ ...base, extraTensors: never.map((name) => ({ name, dims: [256, 4] })) }).bytes,
    { ftype: 'Q4_K_M' },
  ],
  ['tensors in a shuffled order', makeModel({ ...base, order: shuffled(SEED + 2) }).bytes, { ftype: 'Q3_K_M' }],
  [
    'odd names (layer parsing, byte order)',
    makeModel({ ...base, extraTensors: odd.map((name) => ({ name, dims: [256, 4] })) }).bytes,
    { ftype: 'Q4_K_M' },
  ],
  [
    'trailing 1 dims',
    makeModel({
      ...base,
      extraTensors: [
        { name: 'blk.0.attn_q_b.weight', dims: [256, 1] },
        { name: 'blk.0.e_exps.weight', dims: [256, 4, 1] },
        { name: 'blk.0.f.weight', dims: [256, 1, 4] },
      ],
    }).bytes,
    { ftype: 'MXFP4_MOE' },
  ],
  ['general.alignment 64 in the input', makeModel({ ...base, alignment: 64 }).bytes, { ftype: 'Q4_K_M' }],
  ['KVs of every kind', makeModel({ ...base, kv: kvKinds }).bytes, { ftype: 'Q4_K_M' }],
  [
    'head counts per layer (GQA of layer 0: 8)',
    headArrays([8, 8, 8, 8, 8, 8, 8, 8], [1, 8, 8, 8, 8, 8, 8, 8]).bytes,
    { ftype: 'Q2_K' },
  ],
  [
    'head counts per layer (GQA of layer 0: 1)',
    headArrays([8, 8, 8, 8, 8, 8, 8, 8], [8, 1, 1, 1, 1, 1, 1, 1]).bytes,
    { ftype: 'Q2_K' },
  ],
  [
    'no head_count_kv (= head_count)',
    makeModel({ ...base, dropKv: ['llama.attention.head_count_kv'] }).bytes,
    { ftype: 'Q2_K' },
  ],
  [
    'overrideKv of head_count_kv (the loader reads it)',
    m.bytes,
    { ftype: 'Q2_K', overrideKv: ['llama.attention.head_count_kv=int:8'] },
  ],
  [
    'overrideKv of block_count with a str (the loader ignores it)',
    m.bytes,
    { ftype: 'Q4_K_M', overrideKv: ['llama.block_count=str:x'] },
  ],
  [
    'imatrix: a token_embd entry of the wrong size is ignored',
    m.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(im, 'token_embd.weight', new Float32Array(128).fill(1)) },
  ],
  [
    'imatrix: a wrong-size entry of a tensor kept as it is',
    m.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(im, 'blk.0.attn_norm.weight', new Float32Array(3).fill(1)) },
  ],
  ['imatrix: a tensor without an entry', m.bytes, { ftype: 'Q4_K_M', imatrix: withEntry(im, 'blk.3.attn_q.weight') }],
  [
    'imatrix: IQ2_XS without entries for output and token_embd',
    m.bytes,
    { ftype: 'IQ2_XS', imatrix: withEntry(withEntry(im, 'output.weight'), 'token_embd.weight') },
  ],
  [
    'imatrix: entries for no tensor',
    m.bytes,
    { ftype: 'Q4_0', imatrix: withEntry(im, 'nothing.weight', new Float32Array(4).fill(1)) },
  ],
  ['excludeWeights', m.bytes, { ftype: 'Q4_0', imatrix: im, excludeWeights: ['ffn_down', 'attn'] }],
  ['excludeWeights of every entry: no imatrix', m.bytes, { ftype: 'Q4_0', imatrix: im, excludeWeights: ['weight'] }],
  ['includeWeights', m.bytes, { ftype: 'IQ4_NL', imatrix: im, includeWeights: ['attn_v'] }],
  ['includeWeights of no entry', m.bytes, { ftype: 'IQ4_NL', imatrix: im, includeWeights: ['zzz'] }],
  ['imatrix of a MoE (one row per expert)', moe.bytes, { ftype: 'IQ2_XS', imatrix: imMoe }],
  ['imatrix with an F16 ftype', m.bytes, { ftype: 'F16', imatrix: im }],
  [
    'token_embd and output at iq1_m/iq2_s without an imatrix',
    m.bytes,
    { ftype: 'Q4_K_M', tokenEmbeddingType: 'iq1_m', outputTensorType: 'iq2_s' },
  ],
  ['Q2_K pure (no imatrix needed)', m.bytes, { ftype: 'Q2_K', pure: true }],
  [
    'an I32 matrix that pure F32 copies',
    makeModel({ ...base, extraTensors: [{ name: 'blk.0.ids.weight', dims: [256, 4], type: I32 }] }).bytes,
    { ftype: 'Q8_0', tensorTypes: [['ids', 'i32']] },
  ],
  // refusals
  [
    'imatrix of the wrong size',
    m.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(im, 'blk.3.attn_q.weight', new Float32Array(128).fill(1)) },
    'IMATRIX_MISMATCH',
  ],
  [
    'imatrix of the wrong size, MoE',
    moe.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(imMoe, 'blk.2.ffn_up_exps.weight', new Float32Array(256).fill(1)) },
    'IMATRIX_MISMATCH',
  ],
  [
    'imatrix: IQ2_XS, a tensor without an entry',
    m.bytes,
    { ftype: 'IQ2_XS', imatrix: withEntry(im, 'blk.3.attn_q.weight') },
    'NEEDS_IMATRIX',
  ],
  [
    'imatrix with a NaN',
    m.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(im, 'blk.3.attn_q.weight', new Float32Array(256).fill(NaN)) },
    'IMATRIX_NOT_FINITE',
  ],
  [
    'imatrix with an Inf in an unused entry',
    m.bytes,
    { ftype: 'Q4_K_M', imatrix: withEntry(im, 'nothing', new Float32Array(4).fill(Infinity)) },
    'IMATRIX_NOT_FINITE',
  ],
  [
    'tensorTypes to iq3_xxs without an imatrix',
    m.bytes,
    { ftype: 'Q4_K_M', tensorTypes: [['attn_q', 'iq3_xxs']] },
    'NEEDS_IMATRIX',
  ],
  [
    'token_embd/output at iq2_xxs/iq1_s without an imatrix (ggml aborts)',
    m.bytes,
    { ftype: 'Q4_K_M', tokenEmbeddingType: 'iq2_xxs', outputTensorType: 'iq1_s' },
    'NEEDS_IMATRIX',
  ],
  ['Q2_K_S pure without an imatrix', m.bytes, { ftype: 'Q2_K_S', pure: true }, 'NEEDS_IMATRIX'],
  ['Q1_0 on rows of 96', rows96.bytes, { ftype: 'Q1_0' }, 'NO_FALLBACK'],
  [
    'a MoE with an FFN tensor outside the blocks',
    makeModel({ ...base, experts: 8, rows: 2, extraTensors: [{ name: 'mtp.ffn_down.weight', dims: [256, 2] }] }).bytes,
    { ftype: 'Q4_K_M' },
    'BAD_LAYER',
  ],
  [
    'a MoE with an FFN tensor of layer 9 of 8',
    makeModel({ ...base, experts: 8, rows: 2, extraTensors: [{ name: 'blk.9.ffn_up.weight', dims: [256, 2] }] }).bytes,
    { ftype: 'Q4_K_M' },
    'BAD_LAYER',
  ],
  [
    'a dense model with an FFN tensor outside the blocks (counted, not parsed)',
    makeModel({ ...base, extraTensors: [{ name: 'mtp.ffn_down.weight', dims: [512, 2] }] }).bytes,
    { ftype: 'Q4_K_M' },
  ],
  ['block_count as UINT64', withKv('llama.block_count', VT.UINT64, 8n).bytes, { ftype: 'Q4_K_M' }, 'BAD_KV'],
  ['head_count_kv as INT32', withKv('llama.attention.head_count_kv', VT.INT32, 2).bytes, { ftype: 'Q4_K_M' }, 'BAD_KV'],
  ['general.file_type as INT32', withKv('general.file_type', VT.INT32, 1).bytes, { ftype: 'Q4_K_M' }, 'BAD_KV'],
  ['general.file_type as UINT32', withKv('general.file_type', VT.UINT32, 1).bytes, { ftype: 'Q4_K_M' }],
  [
    'head_count_kv, an array of 3 for 8 layers',
    headArrays([8, 8, 8, 8, 8, 8, 8, 8], [2, 2, 2]).bytes,
    { ftype: 'Q4_K_M' },
    'BAD_KV',
  ],
  [
    'outputTensorType q4_K on rows of 96 (no fallback for it)',
    rows96.bytes,
    { ftype: 'Q8_0', outputTensorType: 'q4_K' },
    'BAD_SHAPE',
  ],
  ['tokenEmbeddingType q4_K on rows of 96', rows96.bytes, { ftype: 'Q8_0', tokenEmbeddingType: 'q4_K' }, 'BAD_SHAPE'],
  [
    'an I32 matrix to convert',
    makeModel({ ...base, extraTensors: [{ name: 'blk.0.ids.weight', dims: [256, 4], type: I32 }] }).bytes,
    { ftype: 'Q8_0' },
    'CANNOT_CONVERT',
  ],
];

/** @type {ReturnType<typeof comparePlans> | undefined} */
let results;
const all = () =>
  (results ??= comparePlans(
    CASES.map(([label, model, options, fails, more]) => ({ label, model, options, fails, ...more })),
  ));

for (const [k, [label, , , fails]] of CASES.entries()) {
  test(`${fails ? 'both refuse' : 'planFor = llama_model_quantize'}: ${label}`, () => {
    const r = all()[k];
    assert.deepEqual(r.diffs, []);
    assert.equal(r.refused, fails ?? null);
  });
}

test('--dry-run: the oracle and planFor accept an IQ2_XS model without an imatrix, with a warning', () => {
  const r = llamaQuantize(m.bytes, LLAMA_FTYPE.IQ2_XS, { dryRun: true });
  assert.ok(r.ok, r.log.slice(-300));
  assert.match(r.log, /will require an imatrix/);
  const plan = planFor(parseGGUF(m.bytes), { ftype: 'IQ2_XS', dryRun: true });
  assert.ok(plan.warnings.some((w) => /requires an importance matrix/.test(w)));
  assert.throws(() => planFor(parseGGUF(m.bytes), { ftype: 'IQ2_XS' }), { code: 'NEEDS_IMATRIX' });
});

test('sizes and bits per weight are what llama-quantize reports', () => {
  for (const ftype of ['Q4_K_M', 'Q2_K', 'IQ4_XS']) {
    const r = llamaQuantize(m.bytes, LLAMA_FTYPE[/** @type {keyof typeof LLAMA_FTYPE} */ (ftype)]);
    const plan = planFor(parseGGUF(m.bytes), { ftype });
    const said =
      /model size\s*=\s*([\d.]+) MiB \(([\d.]+) BPW\)\n.*quant size\s*=\s*([\d.]+) MiB \(([\d.]+) BPW\)/.exec(r.log);
    assert.ok(said, r.log.slice(-400));
    assert.equal((plan.bytesIn / 1024 / 1024).toFixed(2), Number(said[1]).toFixed(2));
    assert.equal(
      ((plan.bytesIn * 8) / m.tensors.reduce((s, t) => s + t.dims.reduce((a, b) => a * b, 1), 0)).toFixed(2),
      said[2],
    );
    assert.equal((plan.bytesOut / 1024 / 1024).toFixed(2), Number(said[3]).toFixed(2));
    assert.equal(plan.bitsPerWeight.toFixed(2), said[4]);
    assert.equal(plan.totalBytes, r.out[0].length);
  }
});

test('the quantize.imatrix.* KVs llama-quantize adds for an imatrix file', async () => {
  // An imatrix file as llama-imatrix writes it (GGUF): entries for every 2-D tensor of the model,
  // two datasets, 10 chunks. llama-quantize (tools/quantize/quantize.cpp) then adds, after the
  // user's --override-kv: quantize.imatrix.file (the name as given), .dataset (the first
  // dataset), .entries_count (entries left after --include/--exclude-weights), .chunks_count.
  const entries = m.tensors
    .filter((t) => t.dims.length >= 2)
    .map((t) => ({
      name: t.name,
      ne0: t.dims[0],
      sums: Array.from({ length: t.dims[0] }, (_, i) => 1 + (i % 5)),
      counts: [4],
    }));
  const { bytes } = imatrixGGUF(entries, { datasets: ['wiki.train.raw', 'code.txt'], chunkCount: 10 });
  const imatrix = await readImatrix(bytes);
  const plan = planFor(parseGGUF(m.bytes), {
    ftype: 'Q4_K_M',
    imatrix,
    imatrixFile: 'imatrix.gguf',
    excludeWeights: ['blk.7.'],
    overrideKv: ['general.name=str:x'],
  });
  const tail = plan.kv.slice(-5).map((e) => [e.key, e.type, e.value]);
  assert.deepEqual(tail, [
    ['general.name', VT.STRING, 'x'],
    ['quantize.imatrix.file', VT.STRING, 'imatrix.gguf'],
    ['quantize.imatrix.dataset', VT.STRING, 'wiki.train.raw'],
    ['quantize.imatrix.entries_count', VT.UINT32, entries.length - 7],
    ['quantize.imatrix.chunks_count', VT.UINT32, 10],
  ]);
  // The weights reach the plan divided as llama-quantize divides them.
  const t = /** @type {import('../js/model/recipe.js').PlanTensor} */ (
    plan.tensors.find((x) => x.name === 'blk.0.attn_q.weight')
  );
  assert.deepEqual(Array.from(/** @type {Float32Array[]} */ (t.imatrix)[0].subarray(0, 5)), [0.25, 0.5, 0.75, 1, 1.25]);
  assert.equal(plan.tensors.find((x) => x.name === 'blk.7.attn_q.weight')?.imatrix, null);
  // And the oracle, given the same weights and the tool's KVs, writes the same header (compared
  // like every case above).
  const [r] = comparePlans([
    {
      label: 'imatrix file',
      model: m.bytes,
      options: {
        ftype: 'Q4_K_M',
        imatrix,
        imatrixFile: 'imatrix.gguf',
        excludeWeights: ['blk.7.'],
        overrideKv: ['general.name=str:x'],
      },
    },
  ]);
  assert.deepEqual(r.diffs, []);
});
