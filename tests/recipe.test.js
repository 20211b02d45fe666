// js/model/recipe.js without the oracle: the ftype table against llama.h, how names resolve, the
// --override-kv parser, the plan's shape (what the pipeline relies on), openGGUF and split inputs,
// and every error planFor raises with its code and a message that says what and where. (The
// types themselves are checked against llama.cpp in recipe-oracle, recipe-flags and
// recipe-snapshots.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planFor, FTYPES, PlanError } from '../js/model/recipe.js';
import { resolveFtype } from '../js/model/ftypes.js';
import { parseOverride, overrideKV } from '../js/model/header.js';
import { parseGGUF } from '../js/gguf-read.js';
import { openGGUF } from '../js/gguf-open.js';
import { writeGGUF } from '../js/gguf-write.js';
import { VT } from '../js/gguf-format.js';
import { GGMLType as T, typeInfo } from '../js/types.js';
import { makeModel, splitModel, modelKV } from './lib/models.js';
import { LLAMA_FTYPE } from './lib/plan-oracle.js';

const m = makeModel({ layers: 8, vocab: 64, rows: 4, heads: 8, headsKv: 2, experts: 0 });
const g = parseGGUF(m.bytes);
const moe = parseGGUF(makeModel({ layers: 2, vocab: 64, rows: 2, experts: 8 }).bytes);

/** @param {() => unknown} fn @param {string} code @param {RegExp} [message] */
function refuses(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof PlanError, `not a PlanError: ${e}`);
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

test('FTYPES: the interface names, llama.h ids, default types', () => {
  const names =
    'Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M IQ4_NL IQ4_XS TQ1_0 TQ2_0 MXFP4_MOE Q1_0 Q2_0 F16 BF16 F32';
  assert.deepEqual(Object.keys(FTYPES).sort(), names.split(' ').sort());
  for (const [name, f] of Object.entries(FTYPES)) {
    assert.equal(f.name, name);
    assert.equal(f.id, LLAMA_FTYPE[/** @type {keyof typeof LLAMA_FTYPE} */ (name)], name);
    assert.equal(typeof f.requiresImatrix, 'boolean');
  }
  // Default types the snapshots do not cover (they have no Q1_0/Q2_0 sections).
  assert.equal(FTYPES.Q1_0.defaultType, T.Q1_0);
  assert.equal(FTYPES.Q2_0.defaultType, T.Q2_0);
  assert.ok(Object.isFrozen(FTYPES) && Object.isFrozen(FTYPES.Q4_K_M));
});

test('resolveFtype: ftype names in any case, the aliases, numbers, ggml type names', () => {
  assert.equal(resolveFtype('q4_k_m').ftype?.name, 'Q4_K_M');
  assert.equal(resolveFtype('Q4_K').ftype?.name, 'Q4_K_M'); // llama-quantize's alias
  assert.equal(resolveFtype('Q3_k').ftype?.name, 'Q3_K_M');
  assert.equal(resolveFtype(15).ftype?.name, 'Q4_K_M');
  assert.deepEqual(resolveFtype('Q4_0'), { ftype: FTYPES.Q4_0, type: null });
  // ggml's own spelling: every tensor at that type, as --pure with the ftype of that default type.
  assert.deepEqual(resolveFtype('q4_0'), { ftype: FTYPES.Q4_0, type: T.Q4_0 });
  assert.deepEqual(resolveFtype('q4_K'), { ftype: FTYPES.Q4_K_S, type: T.Q4_K });
  assert.deepEqual(resolveFtype('iq2_s'), { ftype: FTYPES.IQ2_M, type: T.IQ2_S });
  assert.deepEqual(resolveFtype('MXFP4'), { ftype: FTYPES.MXFP4_MOE, type: T.MXFP4 });
  assert.deepEqual(resolveFtype('nvfp4'), { ftype: null, type: T.NVFP4 });
  for (const bad of ['Q9_K', 'q8_K', 'q8_1', 'i32', '', 39, 1024, null, undefined])
    refuses(() => resolveFtype(bad), 'UNKNOWN_FTYPE', /valid ftypes are .*Q4_K_M.*IQ2_XXS.*MXFP4_MOE/);
});

test('a ggml type name plans exactly what --pure with its ftype plans', () => {
  for (const name of [
    'q4_0',
    'q5_1',
    'q8_0',
    'q2_K',
    'q3_K',
    'q4_K',
    'q5_K',
    'q6_K',
    'iq3_s',
    'iq4_nl',
    'iq4_xs',
    'tq2_0',
    'mxfp4',
    'q1_0',
    'q2_0',
    'f16',
  ]) {
    const { ftype } = resolveFtype(name);
    const a = planFor(g, { ftype: name });
    const b = planFor(g, { ftype: /** @type {string} */ (ftype?.name), pure: true });
    assert.deepEqual(
      a.tensors.map((t) => t.to),
      b.tensors.map((t) => t.to),
      name,
    );
    assert.deepEqual(a.kv, b.kv, name);
    assert.ok(
      a.tensors.some((t) => t.to === resolveFtype(name).type),
      name,
    );
  }
  // nvfp4 has no llama ftype (0.4.0 refuses LLAMA_FTYPE_MOSTLY_NVFP4): no general.file_type.
  const p = planFor(g, { ftype: 'nvfp4' });
  assert.ok(!p.kv.some((e) => e.key === 'general.file_type'));
  assert.equal(p.ftype, null);
});

test('--override-kv parsing (common.cpp string_parse_kv_override) and typing (llama_model_quantize)', () => {
  assert.deepEqual(parseOverride('a.b=int:-12'), { key: 'a.b', tag: 'int', value: -12n });
  assert.deepEqual(parseOverride('a=int:12abc'), { key: 'a', tag: 'int', value: 12n }); // atol
  assert.deepEqual(parseOverride('a=int:x'), { key: 'a', tag: 'int', value: 0n });
  assert.deepEqual(parseOverride('a=float:1e3x'), { key: 'a', tag: 'float', value: 1000 });
  assert.deepEqual(parseOverride('a=bool:false'), { key: 'a', tag: 'bool', value: false });
  assert.deepEqual(parseOverride('a=str:x=y:z'), { key: 'a', tag: 'str', value: 'x=y:z' });
  for (const bad of ['novalue', 'k=foo:1', 'k=bool:yes', 'k=1', `k=str:${'x'.repeat(128)}`, `${'k'.repeat(128)}=int:1`])
    refuses(() => parseOverride(bad), 'BAD_OPTION', /--override-kv/);
  assert.deepEqual(overrideKV(parseOverride('a=int:-5')), { key: 'a', type: VT.UINT32, value: 5 });
  assert.deepEqual(overrideKV(parseOverride('a=int:4294967301')), { key: 'a', type: VT.UINT32, value: 5 });
  assert.deepEqual(overrideKV(parseOverride('a=float:0.1')), { key: 'a', type: VT.FLOAT32, value: Math.fround(0.1) });
  // As KVs: integer types are int, float types float.
  const p = planFor(g, {
    ftype: 'Q8_0',
    overrideKv: [
      { key: 'x.i', type: VT.INT32, value: -7 },
      { key: 'x.u', type: VT.UINT64, value: 2n ** 40n + 3n },
      { key: 'x.f', type: VT.FLOAT64, value: 0.5 },
      { key: 'x.s', type: VT.STRING, value: 'v' },
      { key: 'x.b', type: VT.BOOL, value: true },
    ],
  });
  assert.deepEqual(
    p.kv.slice(-5).map((e) => [e.key, e.type, e.value]),
    [
      ['x.i', VT.UINT32, 7],
      ['x.u', VT.UINT32, 3],
      ['x.f', VT.FLOAT32, 0.5],
      ['x.s', VT.STRING, 'v'],
      ['x.b', VT.BOOL, true],
    ],
  );
  refuses(() => planFor(g, { ftype: 'Q8_0', overrideKv: [{ key: 'x', type: VT.ARRAY, value: [] }] }), 'BAD_OPTION');
});

test("the plan's shape: order, shards, offsets, sizes, imatrix views, the source tensors", () => {
  /** @type {Map<string, Float32Array>} */
  const im = new Map(
    moe.tensors
      .filter((t) => t.dims.length > 1)
      .map((t) => [t.name, new Float32Array(t.dims[0] * (t.dims[2] ?? 1)).fill(1)]),
  );
  const p = planFor(moe, { ftype: 'Q4_K_M', imatrix: im });
  assert.equal(p.ftype, FTYPES.Q4_K_M);
  assert.equal(p.alignment, 32);
  assert.equal(p.kv, p.shards[0].kv);
  assert.deepEqual(
    p.shards.map((s) => s.tensorIndexes),
    [p.tensors.map((_, i) => i)],
  );
  let at = 0;
  for (const t of p.tensors) {
    assert.equal(t.offset, at);
    assert.equal(t.shard, 0);
    at += Math.ceil(t.bytesOut / 32) * 32;
    const info = typeInfo(t.to);
    const n = t.dims.reduce((a, b) => a * b, 1);
    assert.equal(t.bytesOut, (n / info.blockSize) * info.typeSize, t.name);
    assert.equal(t.bytesIn, t.source.byteLength);
    assert.equal(t.from, t.source.type);
    if (t.to === t.from) assert.equal(t.imatrix, null, t.name);
    else {
      assert.equal(t.imatrix?.length, t.dims[2] ?? 1, t.name);
      for (const w of /** @type {Float32Array[]} */ (t.imatrix)) assert.equal(w.length, t.dims[0]);
    }
  }
  assert.equal(p.shards[0].dataBytes, at);
  assert.equal(p.totalBytes, p.headerBytes + at);
  assert.equal(
    p.bytesOut,
    p.tensors.reduce((s, t) => s + t.bytesOut, 0),
  );
  assert.equal(p.bitsPerWeight, (p.bytesOut * 8) / moe.tensors.reduce((s, t) => s + t.nElements, 0));
  // The loader's order: no-layer tensors by name first, then layer by layer.
  assert.deepEqual(
    p.tensors.slice(0, 4).map((t) => t.name),
    ['output.weight', 'output_norm.weight', 'token_embd.weight', 'blk.0.attn_k.weight'],
  );
  assert.ok(p.tensors.every((t) => typeof t.why === 'string' && t.why.length > 0));
});

test('planFor takes openGGUF results, and the shards of a split model either way', async () => {
  const a = planFor(g, { ftype: 'Q4_K_M' });
  const b = planFor(await openGGUF(m.bytes), { ftype: 'Q4_K_M' });
  assert.deepEqual(strip(b), strip(a));
  const sp = splitModel({ layers: 2, vocab: 64, rows: 4 }, [5, 6, 10]);
  const one = planFor(parseGGUF(sp.whole), { ftype: 'Q4_K_M' });
  const fromArray = planFor(
    sp.shards.map((s) => parseGGUF(s)),
    { ftype: 'Q4_K_M' },
  );
  const fromOpen = planFor(await openGGUF(sp.shards), { ftype: 'Q4_K_M' });
  // The shard 0 KVs hold the split.* keys, which the plan drops: the same plan as the whole file.
  assert.deepEqual(
    fromArray.tensors.map((t) => [t.name, t.to, t.offset]),
    one.tensors.map((t) => [t.name, t.to, t.offset]),
  );
  assert.deepEqual(
    fromOpen.tensors.map((t) => [t.name, t.to, t.shard]),
    fromArray.tensors.map((t) => [t.name, t.to, t.shard]),
  );
  const kept = planFor(await openGGUF(sp.shards), { ftype: 'Q4_K_M', keepSplit: true });
  assert.equal(kept.shards.length, 3);
  assert.deepEqual(
    kept.shards.map((s) => s.tensorIndexes.length),
    [5, 6, 10],
  );
  assert.deepEqual(
    kept.shards[2].kv.map((e) => [e.key, e.value]),
    [
      ['split.no', 2],
      ['split.count', 3],
      ['split.tensors.count', 21],
    ],
  );
  assert.equal(
    kept.totalBytes,
    kept.shards.reduce((s, x) => s + x.headerBytes + x.dataBytes, 0),
  );
});

/** A plan without its source tensors (openGGUF's carry their byte order). @param {import('../js/model/recipe.js').QuantizePlan} p */
const strip = (p) => ({ ...p, tensors: p.tensors.map(({ source, ...t }) => t) });

test('errors: unknown type ids, missing hparams, bad options', () => {
  // A tensor of a type blockquant does not know (written as F32, then its type id changed).
  const bytes = writeGGUF({
    kv: modelKV({ layers: 1 }),
    tensors: [{ name: 'blk.0.attn_q.weight', type: T.F32, dims: [32, 2], data: new Float32Array(64) }],
  });
  const dv = new DataView(bytes.buffer);
  const name = new TextEncoder().encode('blk.0.attn_q.weight');
  let p = 0;
  outer: for (; p < bytes.length; p++) {
    for (let j = 0; j < name.length; j++) if (bytes[p + j] !== name[j]) continue outer;
    break;
  }
  dv.setUint32(p + name.length + 4 + 16, 77, true); // n_dims, 2 dims, then the type
  refuses(() => planFor(parseGGUF(bytes), { ftype: 'Q8_0' }), 'UNKNOWN_TYPE', /blk\.0\.attn_q\.weight/);

  const noArch = {
    ...g,
    kv: g.kv.filter((e) => e.key !== 'general.architecture'),
    metadata: new Map([...g.metadata].filter(([k]) => k !== 'general.architecture')),
  };
  refuses(() => planFor(noArch, { ftype: 'Q8_0' }), 'MISSING_KEY', /general\.architecture/);
  const noLayers = {
    ...g,
    kv: g.kv.filter((e) => e.key !== 'llama.block_count'),
    metadata: new Map([...g.metadata].filter(([k]) => k !== 'llama.block_count')),
  };
  refuses(() => planFor(noLayers, { ftype: 'Q8_0' }), 'MISSING_KEY', /llama\.block_count/);

  refuses(() => planFor(g, /** @type {any} */ (null)), 'BAD_OPTION');
  refuses(() => planFor(/** @type {any} */ ({}), { ftype: 'Q8_0' }), 'BAD_OPTION');
  refuses(() => planFor(g, { ftype: 'Q8_0', outputTensorType: 'q9_9' }), 'BAD_OPTION', /outputTensorType/);
  refuses(() => planFor(g, { ftype: 'Q8_0', tensorTypes: [['(', 'q4_0']] }), 'BAD_OPTION', /not a regular expression/);
  refuses(() => planFor(g, { ftype: 'Q8_0', tensorTypes: [['attn_q', 'q8_K']] }), 'CANNOT_CONVERT', /q8_K/);
  refuses(() => planFor(g, { ftype: 'Q8_0', imatrix: /** @type {any} */ ([1, 2]) }), 'BAD_OPTION', /imatrix/);
  refuses(() => planFor(g, { ftype: 'Q8_0', pruneLayers: [1, -2] }), 'BAD_OPTION', /invalid layer id -2/);
  refuses(
    () => planFor(g, { ftype: 'Q8_0', imatrix: new Map(), includeWeights: ['a'], excludeWeights: ['b'] }),
    'BAD_OPTION',
    /cannot be used together/,
  );
});

test('errors say which tensor: imatrix required, missing, of the wrong size, not finite; requantizing', () => {
  refuses(() => planFor(g, { ftype: 'IQ2_XS' }), 'NEEDS_IMATRIX', /importance matrix.*blk\.0\.attn_k\.weight.*iq2_xs/);
  const im = new Map(
    g.tensors.filter((t) => t.dims.length > 1).map((t) => [t.name, new Float32Array(t.dims[0]).fill(1)]),
  );
  const drop = new Map(im);
  drop.delete('blk.2.ffn_up.weight');
  refuses(() => planFor(g, { ftype: 'IQ2_XS', imatrix: drop }), 'NEEDS_IMATRIX', /blk\.2\.ffn_up\.weight/);
  refuses(
    () => planFor(g, { ftype: 'Q4_K_M', imatrix: new Map([...im, ['blk.1.attn_v.weight', new Float32Array(7)]]) }),
    'IMATRIX_MISMATCH',
    /imatrix size 7 is different from tensor size 256 for blk\.1\.attn_v\.weight/,
  );
  refuses(
    () =>
      planFor(g, {
        ftype: 'Q4_K_M',
        imatrix: new Map([...im, ['blk.1.attn_v.weight', new Float32Array(256).fill(-Infinity)]]),
      }),
    'IMATRIX_NOT_FINITE',
    /-Infinity.*blk\.1\.attn_v\.weight/,
  );
  const q8 = parseGGUF(
    writeGGUF({
      kv: modelKV({ layers: 1 }),
      tensors: [{ name: 'blk.0.attn_q.weight', type: T.Q8_0, dims: [32, 2], data: new Uint8Array(68) }],
    }),
  );
  refuses(() => planFor(q8, { ftype: 'Q4_0' }), 'REQUANTIZE', /q8_0.*blk\.0\.attn_q\.weight.*allowRequantize/);
  assert.equal(planFor(q8, { ftype: 'Q4_0', allowRequantize: true }).tensors[0].to, T.Q4_0);
  // --dry-run turns the main pass's refusals into warnings, as llama-quantize skips them.
  const dry = planFor(q8, { ftype: 'Q4_0', dryRun: true });
  assert.ok(dry.warnings.some((w) => /requantizing/.test(w)));
});

test('warnings: fallbacks, missing importance data, the copied alignment', () => {
  const odd = parseGGUF(makeModel({ layers: 2, vocab: 64, rows: 4, embd: 96, heads: 4, headsKv: 1, ff: 96 }).bytes);
  const p = planFor(odd, { ftype: 'Q4_K_M' });
  assert.ok(p.warnings.some((w) => /tensor\(s\) required fallback quantization/.test(w)));
  const t = /** @type {import('../js/model/recipe.js').PlanTensor} */ (
    p.tensors.find((x) => x.name === 'blk.0.attn_q.weight')
  );
  assert.equal(t.to, T.Q5_0);
  assert.match(/** @type {string} */ (t.fallback), /ncols 96 not divisible by 256.*q4_K.*falling back to q5_0/);
  const im = new Map([['blk.0.attn_q.weight', new Float32Array(256).fill(1)]]);
  assert.ok(
    planFor(g, { ftype: 'Q4_K_M', imatrix: im }).warnings.some((w) =>
      /no importance data for blk\.0\.attn_k\.weight/.test(w),
    ),
  );
  const a64 = parseGGUF(makeModel({ layers: 1, vocab: 64, rows: 4, alignment: 64 }).bytes);
  const pa = planFor(a64, { ftype: 'Q8_0' });
  assert.equal(pa.alignment, 32);
  assert.ok(pa.kv.some((e) => e.key === 'general.alignment' && e.value === 64));
  assert.ok(pa.warnings.some((w) => /general\.alignment 64/.test(w)));
});
