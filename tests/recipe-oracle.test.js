// planFor against llama_model_quantize itself (the 0.4.0 library, tests/lib/llama-oracle.js) on
// generated models (tests/lib/models.js): every ftype, with and without an importance matrix, on
// dense llama models with GQA 4 and 1, MoE models of 8 and 4 experts (3-D expert tensors), tied
// embeddings, rows that are not whole 256- or 32-blocks, F32/F16/BF16 weights, 80 layers (70B),
// Falcon and Phi-2 (fused attn_qkv). For each, the oracle's output file is parsed and its KV list,
// tensor list (names, order, types, dims, offsets), data offset and size compared with the plan;
// where llama refuses, planFor must refuse for the same reason. All cases run in one oracle
// process (the IQ1/IQ2 grids are built once: that takes most of this file's time).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FTYPES } from '../js/model/recipe.js';
import { makeModel, F16, BF16 } from './lib/models.js';
import { comparePlans } from './lib/plan-oracle.js';
import { rng, SEED } from './lib/helpers.js';

console.log(`recipe-oracle: seed ${SEED} (BQ_SEED=${SEED} to replay)`);

const ALL = Object.keys(FTYPES);
/** The ftypes whose rules read the layer, GQA, experts or model size. */
const MIXES = [
  'Q2_K',
  'Q2_K_S',
  'Q3_K_S',
  'Q3_K_M',
  'Q3_K_L',
  'Q4_K_S',
  'Q4_K_M',
  'Q5_K_M',
  'IQ3_XS',
  'IQ3_M',
  'IQ4_XS',
  'IQ4_NL',
  'Q4_0',
  'Q5_0',
];

/**
 * Seeded importance weights (in (0.2, 2]) for every 2-D and 3-D tensor of a model.
 * @param {ReturnType<typeof makeModel>} m @param {number} seed
 */
function imatrixFor(m, seed) {
  const r = rng(seed);
  /** @type {Map<string, Float32Array>} */
  const im = new Map();
  for (const t of m.tensors)
    if (t.dims.length >= 2)
      im.set(
        t.name,
        Float32Array.from({ length: t.dims[0] * (t.dims[2] ?? 1) }, () => 0.2 + 1.8 * r.next()),
      );
  return im;
}

/** @param {{ arch: string, layers: number, embd?: number, rows?: number }} o */
function qkvModel({ arch, layers, embd = 256, rows = 4 }) {
  const tensors = [
    { name: 'token_embd.weight', dims: [embd, 32] },
    { name: 'output_norm.weight', dims: [embd] },
    { name: 'output_norm.bias', dims: [embd] },
    { name: 'output.weight', dims: [embd, 32] },
  ];
  for (let i = 0; i < layers; i++)
    tensors.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [embd] },
      { name: `blk.${i}.attn_norm.bias`, dims: [embd] },
      { name: `blk.${i}.attn_qkv.weight`, dims: [embd, rows] },
      { name: `blk.${i}.attn_output.weight`, dims: [embd, rows] },
      { name: `blk.${i}.ffn_up.weight`, dims: [embd, rows] },
      { name: `blk.${i}.ffn_down.weight`, dims: [embd, rows] },
    );
  return makeModel({ arch, layers, heads: 8, headsKv: arch === 'falcon' ? 1 : 8, tensors, seed: SEED });
}

const s = { vocab: 64, rows: 4, seed: SEED };
const MODELS = {
  'dense GQA 4, F32, 8 layers': makeModel({ ...s, layers: 8, heads: 8, headsKv: 2 }),
  'dense GQA 1, F16, 16 layers, tied embeddings': makeModel({
    ...s,
    layers: 16,
    heads: 4,
    headsKv: 4,
    type: F16,
    tied: true,
  }),
  'MoE of 8 experts (3-D), GQA 8, BF16, 4 layers': makeModel({
    ...s,
    layers: 4,
    heads: 8,
    headsKv: 1,
    experts: 8,
    type: BF16,
    rows: 2,
  }),
  'MoE of 4 experts, tied embeddings, GQA 1': makeModel({
    ...s,
    layers: 3,
    heads: 4,
    headsKv: 4,
    experts: 4,
    tied: true,
    rows: 2,
  }),
  'rows of 96 and 160 (not whole 256-blocks)': makeModel({ ...s, layers: 8, embd: 96, heads: 4, headsKv: 1, ff: 160 }),
  'rows of 80 (not whole 32-blocks), BF16': makeModel({
    ...s,
    layers: 2,
    embd: 80,
    heads: 4,
    headsKv: 1,
    ff: 80,
    type: BF16,
  }),
  '80 layers, GQA 8 (llama.cpp: 70B)': makeModel({
    ...s,
    vocab: 16,
    rows: 1,
    layers: 80,
    heads: 8,
    headsKv: 1,
    ff: 256,
    type: F16,
  }),
  '80 layers, no GQA (65B)': makeModel({
    ...s,
    vocab: 16,
    rows: 1,
    layers: 80,
    heads: 8,
    headsKv: 8,
    ff: 256,
    type: F16,
  }),
  'qwen2, 80 layers (70B)': makeModel({
    ...s,
    arch: 'qwen2',
    vocab: 16,
    rows: 1,
    layers: 80,
    heads: 8,
    headsKv: 8,
    ff: 256,
    type: F16,
  }),
  'falcon (attn_qkv), 16 layers': qkvModel({ arch: 'falcon', layers: 16 }),
  'phi2 (attn_qkv), 16 layers': qkvModel({ arch: 'phi2', layers: 16 }),
};

/** @typedef {{ group: string, label: string, model: Uint8Array, options: import('../js/model/recipe.js').PlanOptions, mayFail: boolean }} Case */
/** @type {Case[]} */
const cases = [];
/**
 * @param {string} group @param {keyof typeof MODELS} name @param {string[]} ftypes @param {boolean} withImatrix
 */
function add(group, name, ftypes, withImatrix) {
  const m = MODELS[name];
  const imatrix = withImatrix ? imatrixFor(m, SEED + 1) : undefined;
  for (const ftype of ftypes)
    cases.push({
      group,
      label: `${name}: ${ftype}${withImatrix ? ' with an imatrix' : ''}`,
      model: m.bytes,
      options: { ftype, imatrix },
      mayFail: true,
    });
}
add('every ftype, dense, with an imatrix', 'dense GQA 4, F32, 8 layers', ALL, true);
add('every ftype, dense, without an imatrix', 'dense GQA 4, F32, 8 layers', ALL, false);
add('every ftype, tied embeddings, GQA 1, F16', 'dense GQA 1, F16, 16 layers, tied embeddings', ALL, false);
add('every ftype, MoE of 8 experts, BF16, with an imatrix', 'MoE of 8 experts (3-D), GQA 8, BF16, 4 layers', ALL, true);
add('the mixes, MoE of 8 experts, without an imatrix', 'MoE of 8 experts (3-D), GQA 8, BF16, 4 layers', MIXES, false);
add('every ftype, MoE of 4 experts, tied, with an imatrix', 'MoE of 4 experts, tied embeddings, GQA 1', ALL, true);
add('every ftype, rows of 96 and 160', 'rows of 96 and 160 (not whole 256-blocks)', ALL, true);
add('every ftype, rows of 80', 'rows of 80 (not whole 32-blocks), BF16', ALL, true);
for (const name of /** @type {const} */ ([
  '80 layers, GQA 8 (llama.cpp: 70B)',
  '80 layers, no GQA (65B)',
  'qwen2, 80 layers (70B)',
]))
  add('the mixes at 80 layers (70B)', name, MIXES, false);
add('every ftype, falcon and phi2 (attn_qkv)', 'falcon (attn_qkv), 16 layers', ALL, true);
add('every ftype, falcon and phi2 (attn_qkv)', 'phi2 (attn_qkv), 16 layers', ALL, true);

/** @type {ReturnType<typeof comparePlans> | undefined} */
let results;
/** The comparison of every case, computed once (one oracle process for all). */
const all = () => (results ??= comparePlans(cases));

for (const group of [...new Set(cases.map((c) => c.group))]) {
  test(`planFor = llama_model_quantize: ${group}`, () => {
    const res = all();
    const bad = [];
    let compared = 0;
    cases.forEach((c, k) => {
      if (c.group !== group) return;
      if (res[k].diffs.length) bad.push(`${c.label}:\n    ${res[k].diffs.join('\n    ')}`);
      else if (res[k].refused === null) compared++;
    });
    assert.deepEqual(bad, []);
    assert.ok(compared > 0, 'some cases must be quantized, not only refused');
  });
}

test('the ftypes llama refuses without an imatrix are those FTYPES marks requiresImatrix', () => {
  const res = all();
  const refused = cases
    .map((c, k) => ({ c, r: res[k] }))
    .filter(({ c }) => c.group === 'every ftype, dense, without an imatrix')
    .filter(({ r }) => r.refused !== null)
    .map(({ c, r }) => `${c.options.ftype}:${r.refused}`);
  const marked = ALL.filter((f) => FTYPES[f].requiresImatrix).map((f) => `${f}:NEEDS_IMATRIX`);
  assert.deepEqual(refused.sort(), marked.sort());
});

test('with an imatrix llama quantizes every ftype of the dense model, and the rows-of-96 model but Q1_0', () => {
  const res = all();
  const refusedIn = (/** @type {string} */ group) =>
    cases
      .map((c, k) => (c.group === group && res[k].refused ? `${c.options.ftype}:${res[k].refused}` : null))
      .filter(Boolean);
  assert.deepEqual(refusedIn('every ftype, dense, with an imatrix'), []);
  assert.deepEqual(refusedIn('every ftype, rows of 96 and 160'), ['Q1_0:NO_FALLBACK']);
});
