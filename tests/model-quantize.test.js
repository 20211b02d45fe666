// quantizeModel against llama_model_quantize itself (tests/lib/llama-oracle.js): the whole output
// file, byte for byte, on generated models (tests/lib/models.js) of several shapes: a dense
// llama-like model with GQA (F16), a MoE with 3-D expert tensors (BF16, one importance matrix per
// expert), tied embeddings (F32), rows that are not whole 256-blocks (96, 160: the fallbacks) or
// 32-blocks (80: F16), for every ftype with and without an importance matrix, and for
// llama-quantize's flags, split inputs with and without --keep-split, requantizing, an input whose
// general.alignment is not 32. Ftypes whose plan needs a type this build cannot quantize yet (the
// IQ2/IQ1 grids) are not skipped: quantizeModel must refuse them with UNSUPPORTED before writing a
// byte, and the test counts them. All oracle jobs run in one process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quantizeModel, planQuantize, typeInfo, parseGGUF, PlanError } from '../js/index-node.js';
import { planFor, FTYPES } from '../js/model/recipe.js';
import { makeModel, splitModel, F16, BF16 } from './lib/models.js';
import { llamaQuantizeAll } from './lib/llama-oracle.js';
import { oracleOptions, refusalCode, LLAMA_FTYPE } from './lib/plan-oracle.js';
import { rng, SEED, BACKEND, codec } from './lib/helpers.js';
import { init } from '../js/index-node.js';

console.log(`model-quantize: seed ${SEED} (BQ_SEED=${SEED} to replay), backend ${BACKEND}`);

/** The build under test (BQ_BACKEND), for the cases that do not ask for threads or a codec. */
const bq1 = await codec();

/** The bytes quantizeModel writes, gathered from a function sink (one array per output shard). */
async function quantized(/** @type {unknown} */ source, /** @type {any} */ options, n = 1) {
  /** @type {Uint8Array[][]} */
  const parts = Array.from({ length: n }, () => []);
  const sinks = parts.map((p) => (/** @type {Uint8Array} */ c) => void p.push(c.slice()));
  const o = options.threads || options.codec ? options : { ...options, codec: bq1 };
  const plan = await quantizeModel(source, n === 1 ? sinks[0] : sinks, o);
  return { plan, out: parts.map(concat) };
}

/** @param {Uint8Array[]} parts */
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/** The first differing byte, or -1. @param {Uint8Array} a @param {Uint8Array} b */
function firstDiff(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

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

const s = { vocab: 64, seed: SEED };
const MODELS = {
  'dense GQA 4, F16': makeModel({ ...s, layers: 4, heads: 8, headsKv: 2, rows: 8, type: F16 }),
  'MoE of 4 experts (3-D), BF16': makeModel({ ...s, layers: 2, heads: 8, headsKv: 2, experts: 4, rows: 4, type: BF16 }),
  'tied embeddings, F32': makeModel({ ...s, layers: 2, heads: 4, headsKv: 4, rows: 4, tied: true }),
  'rows of 96 and 160, F16': makeModel({
    ...s,
    layers: 4,
    embd: 96,
    heads: 4,
    headsKv: 1,
    ff: 160,
    rows: 4,
    type: F16,
  }),
  'rows of 80, BF16': makeModel({ ...s, layers: 2, embd: 80, heads: 4, headsKv: 1, ff: 80, rows: 4, type: BF16 }),
};

/**
 * @typedef {{ group: string, label: string, model: Uint8Array | Uint8Array[], options: any,
 *   oracleFtype?: number, oracle?: import('./lib/llama-oracle.js').OracleOptions, shards?: number }} Case
 */
/** @type {Case[]} */
const cases = [];
const ALL = Object.keys(FTYPES);
for (const [name, m] of Object.entries(MODELS)) {
  const im = imatrixFor(m, SEED + 1);
  for (const ftype of ALL) {
    cases.push({ group: `every ftype: ${name}`, label: `${name} ${ftype}`, model: m.bytes, options: { ftype } });
    cases.push({
      group: `every ftype with an imatrix: ${name}`,
      label: `${name} ${ftype} imatrix`,
      model: m.bytes,
      options: { ftype, imatrix: im },
    });
  }
}

const dense = MODELS['dense GQA 4, F16'];
const denseIm = imatrixFor(dense, SEED + 2);
/** @param {string} label @param {any} options @param {Partial<Case>} [more] */
const flag = (label, options, more = {}) => cases.push({ group: 'flags', label, model: dense.bytes, options, ...more });
flag('pure Q4_K_M', { ftype: 'Q4_K_M', pure: true });
flag(
  'a ggml type name (q5_K: pure Q5_K_S)',
  { ftype: 'q5_K' },
  { oracleFtype: LLAMA_FTYPE.Q5_K_S, oracle: { pure: true } },
);
flag('tensorTypes', {
  ftype: 'Q4_K_M',
  tensorTypes: [
    ['attn_v', 'q8_0'],
    ['BLK\\.1\\.ffn_.*', 'q5_0'],
  ],
});
flag('outputTensorType and tokenEmbeddingType', {
  ftype: 'Q4_0',
  outputTensorType: 'q8_0',
  tokenEmbeddingType: 'q4_K',
});
flag('leaveOutputTensor', { ftype: 'Q2_K', leaveOutputTensor: true });
flag('overrideKv', { ftype: 'Q8_0', overrideKv: ['general.name=str:renamed', 'llama.context_length=int:4096'] });
flag('includeWeights', { ftype: 'Q4_K_M', imatrix: denseIm, includeWeights: ['ffn'] });
flag('excludeWeights', { ftype: 'IQ4_XS', imatrix: denseIm, excludeWeights: ['attn'] });
flag('pruneLayers', { ftype: 'Q4_K_S', pruneLayers: [1, 2] });
flag('imatrixFile names quantize.imatrix.file', { ftype: 'Q3_K_M', imatrix: denseIm, imatrixFile: 'imatrix.gguf' });

// Requantizing: a Q8_0 model to Q4_K_M.
const q8 = (await quantized(dense.bytes, { ftype: 'Q8_0' })).out[0];
cases.push({
  group: 'requantizing',
  label: 'Q8_0 -> Q4_K_M, allowRequantize',
  model: q8,
  options: { ftype: 'Q4_K_M', allowRequantize: true },
});
cases.push({
  group: 'requantizing',
  label: 'Q8_0 -> Q5_K_S with an imatrix',
  model: q8,
  options: { ftype: 'Q5_K_S', allowRequantize: true, imatrix: denseIm },
});

// The input's general.alignment is copied, the data aligned to 32 all the same.
const aligned64 = makeModel({ ...s, layers: 2, rows: 4, type: F16, alignment: 64 });
cases.push({ group: 'alignment', label: 'general.alignment 64', model: aligned64.bytes, options: { ftype: 'Q4_K_M' } });

// Split inputs: one output, and one per shard (--keep-split).
const split = splitModel({ ...s, layers: 2, rows: 4, type: F16 }, [5, 9, 7]);
cases.push({ group: 'split', label: 'split input, one output', model: split.shards, options: { ftype: 'Q4_K_M' } });
cases.push({
  group: 'split',
  label: 'split input, keepSplit',
  model: split.shards,
  options: { ftype: 'Q4_K_M', keepSplit: true },
  shards: 3,
});
cases.push({
  group: 'split',
  label: 'one input, keepSplit',
  model: dense.bytes,
  options: { ftype: 'Q6_K', keepSplit: true },
  shards: 1,
});

// Data llama refuses (ggml_validate_row_data): a NaN or Inf in any input tensor, converted or
// copied, F32, F16 or BF16 or a quantized block's scale; values whose quantized scales (or F16
// values) overflow to Inf.
const plain = makeModel({ ...s, layers: 1, rows: 4 });
/**
 * The model with bytes of one tensor changed.
 * @param {{ bytes: Uint8Array }} model @param {string} name @param {(dv: DataView, at: number) => void} edit
 */
function poke(model, name, edit) {
  const g = parseGGUF(model.bytes);
  const t = /** @type {any} */ (g.tensors.find((x) => x.name === name));
  const b = model.bytes.slice();
  edit(new DataView(b.buffer), g.dataOffset + t.offset);
  return b;
}
const f16m = makeModel({ ...s, layers: 1, rows: 4, type: F16 });
const bf16m = makeModel({ ...s, layers: 1, rows: 4, type: BF16 });
/** @param {string} label @param {Uint8Array} model @param {any} options */
const bad = (label, model, options) => cases.push({ group: 'invalid data', label, model, options });
for (const ftype of ['Q8_0', 'Q4_K_M', 'F16', 'F32']) {
  bad(
    `NaN in a converted F32 tensor, ${ftype}`,
    poke(plain, 'blk.0.attn_q.weight', (dv, at) => dv.setFloat32(at + 40, NaN, true)),
    { ftype },
  );
  bad(
    `Inf in a copied F32 norm, ${ftype}`,
    poke(plain, 'output_norm.weight', (dv, at) => dv.setFloat32(at + 4, -Infinity, true)),
    { ftype },
  );
}
bad(
  'Inf in an F16 tensor',
  poke(f16m, 'blk.0.ffn_up.weight', (dv, at) => dv.setUint16(at + 300, 0x7c00, true)),
  { ftype: 'Q4_0' },
);
bad(
  'NaN in an F16 tensor, kept F16',
  poke(f16m, 'blk.0.ffn_up.weight', (dv, at) => dv.setUint16(at + 300, 0xfe01, true)),
  { ftype: 'F16' },
);
bad(
  'NaN in a BF16 tensor',
  poke(bf16m, 'token_embd.weight', (dv, at) => dv.setUint16(at + 2, 0x7fc1, true)),
  { ftype: 'IQ4_XS' },
);
bad(
  'Inf in a BF16 tensor',
  poke(bf16m, 'output.weight', (dv, at) => dv.setUint16(at + 2, 0xff80, true)),
  { ftype: 'Q6_K' },
);
for (const ftype of ['Q8_0', 'Q4_0', 'Q4_K_M', 'Q2_K', 'IQ4_NL', 'F16', 'MXFP4_MOE'])
  bad(
    `values of 1e30: the scales overflow, ${ftype}`,
    poke(plain, 'blk.0.attn_k.weight', (dv, at) => {
      for (let i = 0; i < 256; i++) dv.setFloat32(at + 4 * i, i % 3 ? 1e30 : -3e29, true);
    }),
    { ftype },
  );
{
  // A Q8_0 block whose scale is Inf, requantized.
  const g = parseGGUF(q8);
  const t = /** @type {any} */ (g.tensors.find((x) => x.name === 'blk.0.ffn_down.weight'));
  const b = q8.slice();
  new DataView(b.buffer).setUint16(g.dataOffset + t.offset + 34 * 3, 0x7c00, true);
  cases.push({
    group: 'invalid data',
    label: 'an Inf scale in a Q8_0 block, requantized',
    model: b,
    options: { ftype: 'Q4_K_M', allowRequantize: true },
  });
  cases.push({
    group: 'invalid data',
    label: 'an Inf scale in a Q8_0 block, copied',
    model: b,
    options: { ftype: 'Q8_0', allowRequantize: true },
  });
}

/** llama_ftype of an option (an ftype name). @param {unknown} f */
const ftypeId = (f) => /** @type {Record<string, number>} */ (LLAMA_FTYPE)[String(f).toUpperCase()] ?? 1024;

/**
 * @typedef {{ kind: 'same' } | { kind: 'refused', code: string } | { kind: 'unsupported' } | { kind: 'diff', why: string }} Outcome
 */
/** @type {Promise<Outcome[]> | undefined} */
let outcomes;
/** Every case through quantizeModel and the oracle (once, in one oracle process). */
const all = () => (outcomes ??= run());

async function run() {
  const plans = cases.map((c) => {
    try {
      const files = Array.isArray(c.model) ? c.model.map((b) => parseGGUF(b)) : parseGGUF(c.model);
      return planFor(files, c.options);
    } catch {
      return null;
    }
  });
  const oracle = llamaQuantizeAll(
    cases.map((c, k) => ({
      model: c.model,
      ftype: c.oracleFtype ?? ftypeId(c.options.ftype),
      options: { ...oracleOptions(c.options, plans[k]), ...c.oracle },
    })),
  );
  /** @type {Outcome[]} */
  const res = [];
  for (let k = 0; k < cases.length; k++) {
    const c = cases[k];
    const r = oracle[k];
    /** @type {{ out: Uint8Array[] } | null} */
    let mine = null;
    /** @type {any} */
    let err = null;
    try {
      mine = await quantized(c.model, c.options, c.shards ?? 1);
    } catch (e) {
      err = e;
    }
    if (err && err.code === 'UNSUPPORTED') {
      // A type this build cannot write yet: the plan must really ask for one.
      const p = plans[k];
      const needs = p?.tensors.some((t) => t.to !== t.from && !typeInfo(t.to).quantize);
      res.push(needs ? { kind: 'unsupported' } : { kind: 'diff', why: `UNSUPPORTED without cause: ${err.message}` });
    } else if (err) {
      const why = r.ok ? 'the oracle quantized it' : refusalCode(r.log);
      res.push(
        err instanceof PlanError && !r.ok && why === err.code
          ? { kind: 'refused', code: why }
          : { kind: 'diff', why: `quantizeModel threw ${err.code ?? ''} ${err.message}; oracle: ${why}` },
      );
    } else if (!r.ok)
      res.push({ kind: 'diff', why: `the oracle refused (${refusalCode(r.log)}), quantizeModel wrote it` });
    else {
      const out = /** @type {{ out: Uint8Array[] }} */ (mine).out;
      const bad = [];
      if (out.length !== r.out.length) bad.push(`${out.length} files, the oracle ${r.out.length}`);
      out.forEach((b, i) => {
        const at = firstDiff(b, r.out[i] ?? new Uint8Array(0));
        if (at >= 0)
          bad.push(`file ${i}: ${b.length} bytes, the oracle ${r.out[i]?.length}; first difference at ${at}`);
      });
      res.push(bad.length ? { kind: 'diff', why: bad.join('; ') } : { kind: 'same' });
    }
  }
  return res;
}

for (const group of [...new Set(cases.map((c) => c.group))]) {
  test(`quantizeModel = llama_model_quantize, byte for byte: ${group}`, async () => {
    const res = await all();
    const bad = [];
    const count = { same: 0, refused: 0, unsupported: 0 };
    cases.forEach((c, k) => {
      if (c.group !== group) return;
      const o = res[k];
      if (o.kind === 'diff') bad.push(`${c.label}: ${o.why}`);
      else count[o.kind]++;
    });
    assert.deepEqual(bad, []);
    if (group === 'invalid data') assert.ok(count.refused > 0 && count.same === 0, 'every case refused by both');
    else assert.ok(count.same > 0, 'some cases must be written and compared');
    console.log(
      `${group}: ${count.same} equal, ${count.refused} refused by both, ${count.unsupported} unsupported here`,
    );
  });
}

test('the key ftypes are written and equal, with and without an imatrix, on every model', async () => {
  const res = await all();
  for (const ftype of ['Q4_K_M', 'Q2_K', 'IQ4_XS', 'Q4_0', 'Q8_0'])
    for (const name of Object.keys(MODELS))
      for (const im of ['', ' imatrix']) {
        const k = cases.findIndex((c) => c.label === `${name} ${ftype}${im}`);
        assert.equal(res[k].kind, 'same', `${name} ${ftype}${im}: ${JSON.stringify(res[k])}`);
      }
});

test('planQuantize is planFor on the same source, and its totalBytes is the file written', async () => {
  const plan = await planQuantize(dense.bytes, { ftype: 'Q4_K_M', imatrix: denseIm });
  const direct = planFor(parseGGUF(dense.bytes), { ftype: 'Q4_K_M', imatrix: denseIm });
  assert.deepEqual(
    plan.tensors.map((t) => [t.name, t.to, t.offset]),
    direct.tensors.map((t) => [t.name, t.to, t.offset]),
  );
  const { out } = await quantized(dense.bytes, { ftype: 'Q4_K_M', imatrix: denseIm });
  assert.equal(out[0].length, plan.totalBytes);
});

test('threads: 1 and 2 threads (and a ThreadedCodec given as codec) write the same bytes, llama nthread 2 too', async () => {
  // Rows long enough that the threaded codec splits them (over minSplitBytes).
  const dense2 = makeModel({ ...s, layers: 2, embd: 512, ff: 1024, heads: 8, headsKv: 2, vocab: 256, type: F16 });
  const moe = makeModel({
    ...s,
    layers: 1,
    embd: 256,
    ff: 512,
    heads: 8,
    headsKv: 2,
    experts: 4,
    vocab: 128,
    type: BF16,
  });
  const bq = await init({ threads: 2 });
  assert.equal(bq.threads, 2, 'two threads run here');
  try {
    for (const [name, m] of /** @type {const} */ ([
      ['dense', dense2],
      ['MoE', moe],
    ])) {
      const im = imatrixFor(m, SEED + 3);
      for (const options of [
        { ftype: 'Q4_K_M' },
        { ftype: 'IQ4_XS', imatrix: im },
        { ftype: 'Q5_0', imatrix: im },
        { ftype: 'IQ3_M', imatrix: im },
      ]) {
        const what = `${name} ${options.ftype}${options.imatrix ? ' imatrix' : ''}`;
        const one = (await quantized(m.bytes, { ...options, threads: 1 })).out[0];
        const two = (await quantized(m.bytes, { ...options, threads: 2 })).out[0];
        assert.equal(firstDiff(one, two), -1, `${what}: 2 threads differ from 1`);
        const given = (await quantized(m.bytes, { ...options, codec: bq })).out[0];
        assert.equal(firstDiff(one, given), -1, `${what}: a given ThreadedCodec differs`);
        const [r] = llamaQuantizeAll([
          {
            model: m.bytes,
            ftype: ftypeId(options.ftype),
            options: { ...oracleOptions(options, planFor(parseGGUF(m.bytes), options)), nthread: 2 },
          },
        ]);
        assert.ok(r.ok, `${what}: the oracle refused`);
        assert.equal(firstDiff(one, r.out[0]), -1, `${what}: differs from llama_model_quantize nthread 2`);
      }
    }
  } finally {
    await /** @type {any} */ (bq).close?.();
  }
});
