// `blockquant quantize` as llama-quantize: bin/blockquant run in a child process on generated
// models (tests/lib/models.js), its output file compared byte for byte with what llama.cpp's own
// llama_model_quantize writes (tests/lib/llama-oracle.js) for several ftypes and flags, with and
// without an importance matrix (a llama-imatrix GGUF written by tests/lib/imatrix-files.js);
// --dry-run's listing and summary against the oracle's file; the progress display; and the
// errors: unknown ftypes, a missing or foreign imatrix, quantized input, flags spelled wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGGUF, typeInfo } from '../js/node.js';
import { main } from '../js/cli/main.js';
import { makeModel, splitModel, F16, BF16 } from './lib/models.js';
import { llamaQuantizeAll } from './lib/llama-oracle.js';
import { imatrixGGUF, imatrixDat, f32div } from './lib/imatrix-files.js';
import { rng, SEED, firstDiff } from './lib/helpers.js';

console.log(`cli-quantize: seed ${SEED} (BQ_SEED=${SEED} to replay)`);

const BIN = fileURLToPath(new URL('../bin/blockquant', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bq-cli-quantize-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs bin/blockquant in a child (cwd: the test folder).
 * @param {string[]} args
 * @returns {Promise<{ code: number | null, out: string, err: string }>}
 */
function cli(args) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir });
  let out = '',
    err = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (err += b));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

// llama.h's llama_ftype numbers, spelled out here (not taken from the code under test).
const LLAMA_FTYPE = {
  Q4_0: 2,
  Q8_0: 7,
  Q5_0: 8,
  Q2_K: 10,
  Q3_K_S: 11,
  Q3_K_M: 12,
  Q4_K_S: 14,
  Q4_K_M: 15,
  Q5_K_M: 17,
  Q6_K: 18,
  IQ4_NL: 25,
  IQ4_XS: 30,
  IQ2_XS: 20,
};

const s = { vocab: 64, rows: 4, seed: SEED };
/** @type {Record<string, Uint8Array>} */
const MODELS = {
  dense: makeModel({ ...s, layers: 4, heads: 8, headsKv: 2, type: F16 }).bytes,
  moe: makeModel({ ...s, layers: 2, heads: 8, headsKv: 8, experts: 4, type: BF16 }).bytes,
  tied: makeModel({ ...s, layers: 2, heads: 4, headsKv: 1, tied: true }).bytes,
  // Rows of 96: not whole 256-blocks, so the K types fall back.
  rows96: makeModel({ ...s, layers: 2, embd: 96, ff: 192, heads: 4, headsKv: 2 }).bytes,
  // Rows of 512 (whole 256-blocks), 96 (whole 32-blocks only) and 50 (neither), and a 1-D norm.
  kmix: makeModel({
    ...s,
    layers: 1,
    tensors: [
      { name: 'blk.0.attn_norm.weight', dims: [512] },
      { name: 'blk.0.ffn_up.weight', dims: [512, 4] },
      { name: 'blk.0.ffn_down.weight', dims: [96, 4] },
      { name: 'blk.0.attn_q.weight', dims: [50, 3] },
    ],
  }).bytes,
  // No general.file_type: llama adds it.
  noFileType: makeModel({ ...s, layers: 1, dropKv: ['general.file_type'] }).bytes,
};
for (const [name, bytes] of Object.entries(MODELS)) writeFileSync(join(dir, `${name}.gguf`), bytes);

// A split model (for --keep-split): its shards as gguf-split names them.
const split = splitModel({ ...s, layers: 2 }, [7, 7, 7]);
const SHARDS = split.shards.map((_, i) => `split-0000${i + 1}-of-00003.gguf`);
split.shards.forEach((b, i) => writeFileSync(join(dir, SHARDS[i]), b));

// The importance matrix of the dense model as llama-imatrix writes it: sums and a count per
// matrix (10 chunks); llama-quantize divides the sums by the count (f32div: exact division).
const r = rng(SEED + 7);
const denseInfo = parseGGUF(MODELS.dense);
const entries = denseInfo.tensors
  .filter((t) => t.dims.length >= 2)
  .map((t) => ({
    name: t.name,
    ne0: t.dims[0],
    sums: Float32Array.from({ length: t.dims[0] }, () => Math.fround(0.5 + 20 * r.next())),
    counts: [10],
  }));
writeFileSync(join(dir, 'imatrix.gguf'), imatrixGGUF(entries, { datasets: ['calib.txt'], chunkCount: 10 }).bytes);
// The same as llama-imatrix's legacy .dat (sums and the call count 10, dataset in the trailer).
writeFileSync(
  join(dir, 'imatrix.dat'),
  imatrixDat(
    entries.map((e) => ({ name: e.name, ncall: 10, values: e.sums })),
    { lastChunk: 10, dataset: 'calib.txt' },
  ).bytes,
);
/** @type {[string, Float32Array][]} */
const weights = entries.map((e) => [e.name, Float32Array.from(e.sums, (v) => f32div(v, 10))]);
// What llama-quantize's tool adds for that imatrix (tools/quantize/quantize.cpp), in its order.
const imatrixKV = (/** @type {number} */ n, file = 'imatrix.gguf') => [
  `quantize.imatrix.file=str:${file}`,
  'quantize.imatrix.dataset=str:calib.txt',
  `quantize.imatrix.entries_count=int:${n}`,
  'quantize.imatrix.chunks_count=int:10',
];

/**
 * The cases: the CLI's arguments, and what the oracle is given for them.
 * @type {{ label: string, model: string, args: string[], ftype: number, oracle?: import('./lib/llama-oracle.js').OracleOptions, shards?: number }[]}
 */
const CASES = [
  { label: 'Q4_K_M, dense GQA 4, F16', model: 'dense', args: ['--type', 'Q4_K_M'], ftype: LLAMA_FTYPE.Q4_K_M },
  { label: 'q4_k_m in lower case', model: 'dense', args: ['--type', 'q4_k_m'], ftype: LLAMA_FTYPE.Q4_K_M },
  { label: 'Q4_K: the Q4_K_M alias', model: 'dense', args: ['--type', 'Q4_K'], ftype: LLAMA_FTYPE.Q4_K_M },
  { label: 'a llama_ftype number', model: 'dense', args: ['--type', '12'], ftype: LLAMA_FTYPE.Q3_K_M },
  { label: 'Q4_0', model: 'dense', args: ['--type', 'Q4_0'], ftype: LLAMA_FTYPE.Q4_0 },
  { label: 'Q8_0', model: 'dense', args: ['--type', 'Q8_0'], ftype: LLAMA_FTYPE.Q8_0 },
  { label: 'Q2_K', model: 'dense', args: ['--type', 'Q2_K'], ftype: LLAMA_FTYPE.Q2_K },
  {
    label: 'q4_K: the ggml type, every tensor at it (Q4_K_S --pure)',
    model: 'dense',
    args: ['--type', 'q4_K'],
    ftype: LLAMA_FTYPE.Q4_K_S,
    oracle: { pure: true },
  },
  { label: 'Q5_K_M --pure', model: 'dense', args: ['--type', 'Q5_K_M', '--pure'], ftype: 17, oracle: { pure: true } },
  {
    label: 'Q4_K_M with type options',
    model: 'dense',
    args: [
      '--type=Q4_K_M',
      '--output-tensor-type',
      'Q8_0',
      '--token-embedding-type=q4_0',
      '--tensor-type',
      'ATTN_V=q5_0',
      '--tensor-type',
      'blk\\.[12]\\.ffn_up=q8_0',
      '--tensor-type',
      'ffn_up=q4_1',
    ],
    ftype: LLAMA_FTYPE.Q4_K_M,
    oracle: {
      outputTensorType: 8,
      tokenEmbeddingType: 2,
      tensorTypes: [
        ['attn_v', 6],
        ['blk\\.[12]\\.ffn_up', 8],
        ['ffn_up', 3],
      ],
    },
  },
  {
    label: 'Q6_K --leave-output-tensor',
    model: 'dense',
    args: ['--type', 'Q6_K', '--leave-output-tensor'],
    ftype: LLAMA_FTYPE.Q6_K,
    oracle: { leaveOutputTensor: true },
  },
  {
    label: 'Q4_0 --override-kv, --prune-layers',
    model: 'dense',
    args: [
      '--type',
      'Q4_0',
      '--override-kv',
      'general.name=str:pruned',
      '--override-kv',
      'x.n=int:7',
      '--prune-layers',
      '1,2',
    ],
    ftype: LLAMA_FTYPE.Q4_0,
    oracle: { overrideKv: ['general.name=str:pruned', 'x.n=int:7'], pruneLayers: [1, 2] },
  },
  ...[
    ['q2_K', 10],
    ['q3_K', 11],
    ['q4_K', 14],
    ['q5_K', 16],
    ['q6_K', 18],
  ].map(([t, ftype]) => ({
    label: `${t}: rows of 512, 96 and 50 (the fallbacks)`,
    model: 'kmix',
    args: ['--type', String(t)],
    ftype: Number(ftype),
    oracle: { pure: true },
  })),
  { label: 'no general.file_type', model: 'noFileType', args: ['--type', 'Q4_0'], ftype: LLAMA_FTYPE.Q4_0 },
  {
    label: 'Q4_K_M, MoE of 4 experts (3-D), BF16',
    model: 'moe',
    args: ['--type', 'Q4_K_M'],
    ftype: LLAMA_FTYPE.Q4_K_M,
  },
  { label: 'Q3_K_S, MoE', model: 'moe', args: ['--type', 'Q3_K_S'], ftype: LLAMA_FTYPE.Q3_K_S },
  { label: 'Q4_K_M, tied embeddings, GQA 4', model: 'tied', args: ['--type', 'Q4_K_M'], ftype: LLAMA_FTYPE.Q4_K_M },
  { label: 'Q4_K_M, rows of 96 (fallbacks)', model: 'rows96', args: ['--type', 'Q4_K_M'], ftype: LLAMA_FTYPE.Q4_K_M },
  { label: 'IQ4_XS, rows of 96', model: 'rows96', args: ['--type', 'IQ4_XS'], ftype: LLAMA_FTYPE.IQ4_XS },
  {
    label: 'Q4_K_M with an imatrix',
    model: 'dense',
    args: ['--type', 'Q4_K_M', '--imatrix', 'imatrix.gguf'],
    ftype: LLAMA_FTYPE.Q4_K_M,
    oracle: { imatrix: weights, overrideKv: imatrixKV(weights.length) },
  },
  {
    label: 'Q3_K_M with a legacy .dat imatrix',
    model: 'dense',
    args: ['--type', 'Q3_K_M', '--imatrix', 'imatrix.dat'],
    ftype: LLAMA_FTYPE.Q3_K_M,
    oracle: { imatrix: weights, overrideKv: imatrixKV(weights.length, 'imatrix.dat') },
  },
  {
    label: 'IQ4_XS with an imatrix, --threads 2',
    model: 'dense',
    args: ['--type', 'IQ4_XS', '--imatrix', 'imatrix.gguf', '--threads', '2'],
    ftype: LLAMA_FTYPE.IQ4_XS,
    oracle: { imatrix: weights, overrideKv: imatrixKV(weights.length) },
  },
  {
    label: 'Q4_0 with an imatrix, --exclude-weights',
    model: 'dense',
    args: ['--type', 'Q4_0', '--imatrix', 'imatrix.gguf', '--exclude-weights', 'attn_', '--exclude-weights', 'blk.0.'],
    ftype: LLAMA_FTYPE.Q4_0,
    oracle: (() => {
      const w = weights.filter(([k]) => !k.includes('attn_') && !k.includes('blk.0.'));
      return { imatrix: w, overrideKv: imatrixKV(w.length) };
    })(),
  },
  {
    label: 'Q5_0 with an imatrix, --include-weights',
    model: 'dense',
    args: ['--type', 'Q5_0', '--imatrix', 'imatrix.gguf', '--include-weights', 'ffn_down'],
    ftype: LLAMA_FTYPE.Q5_0,
    oracle: (() => {
      const w = weights.filter(([k]) => k.includes('ffn_down'));
      return { imatrix: w, overrideKv: imatrixKV(w.length) };
    })(),
  },
  {
    label: 'Q4_K_M --keep-split, a split model of 3 shards',
    model: 'split',
    args: ['--type', 'Q4_K_M', '--keep-split'],
    ftype: LLAMA_FTYPE.Q4_K_M,
    oracle: { keepSplit: true },
    shards: 3,
  },
];

const oracle = llamaQuantizeAll(
  CASES.map((c) => ({
    model: c.model === 'split' ? split.shards : MODELS[c.model],
    ftype: c.ftype,
    options: c.oracle ?? {},
  })),
);

const input = (/** @type {string} */ m) => (m === 'split' ? SHARDS[0] : `${m}.gguf`);

test('--dry-run lists every tensor with the type llama-quantize gives it, and its sizes', async () => {
  for (const [k, c] of CASES.entries()) {
    if (c.shards) continue;
    const o = oracle[k];
    assert.ok(o.ok, `${c.label}: the oracle failed: ${o.log.slice(-300)}`);
    const want = parseGGUF(o.out[0]);
    const r = await cli(['quantize', input(c.model), '--dry-run', ...c.args]);
    assert.equal(r.code, 0, `${c.label}: ${r.err}`);
    assert.doesNotMatch(r.err, /error/i, c.label);
    const listed = [...r.out.matchAll(/^\[ *\d+\/\d+\] (\S+) +\[[\d, ]+\] +(\S+) (?:kept|-> (\S+))/gm)].map((m) => [
      m[1],
      m[3] ?? m[2],
    ]);
    assert.deepEqual(
      listed,
      want.tensors.map((t) => [t.name, typeInfo(t.type).name]),
      c.label,
    );
    assert.match(
      r.out,
      new RegExp(String.raw`^size: .* \(${MODELS[c.model].length} -> ${o.out[0].length} bytes\)$`, 'm'),
      c.label,
    );
    // Tensors and bytes per type, as the oracle's file has them.
    /** @type {Map<string, [number, number]>} */
    const per = new Map();
    for (const t of want.tensors) {
      const e = per.get(typeInfo(t.type).name) ?? [0, 0];
      per.set(typeInfo(t.type).name, [e[0] + 1, e[1] + /** @type {number} */ (t.byteLength)]);
    }
    for (const [name, [n, bytes]] of per)
      assert.match(r.out, new RegExp(`^  ${name} +${n} +${bytes}$`, 'm'), `${c.label}: ${name}`);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.startsWith('out-')),
      [],
      'a dry run writes nothing',
    );
  }
});

test("the output file equals llama_model_quantize's byte for byte", async () => {
  for (const [k, c] of CASES.entries()) {
    const o = oracle[k];
    assert.ok(o.ok, `${c.label}: the oracle failed: ${o.log.slice(-300)}`);
    const out = `out-${k}.gguf`;
    const r = await cli(['quantize', input(c.model), out, ...c.args]);
    assert.equal(r.code, 0, `${c.label}: ${r.err}`);
    const files = c.shards
      ? Array.from({ length: c.shards }, (_, i) => `out-${k}-0000${i + 1}-of-0000${c.shards}.gguf`)
      : [out];
    assert.equal(o.out.length, files.length, c.label);
    files.forEach((f, i) => {
      const got = new Uint8Array(readFileSync(join(dir, f)));
      const d = firstDiff(got, o.out[i]);
      assert.ok(d === -1, `${c.label}: ${f} differs (${got.length} vs ${o.out[i].length} bytes, first at ${d})`);
      rmSync(join(dir, f));
    });
    // The summary: the files written, tensors and bytes per type, the sizes, bits per weight, the time.
    assert.ok(r.out.startsWith(`${files.join(', ')}: `), `${c.label}: ${r.out.split('\n')[0]}`);
    assert.match(r.out, /^ {2}type +tensors +bytes$/m, c.label);
    assert.match(r.out, /^bits per weight: \d+\.\d\d -> \d+\.\d\d$/m, c.label);
    assert.match(r.out, /^time: \d+\.\d\d s$/m, c.label);
  }
});

// The errors. Each case says what llama_model_quantize does with the same input (it refuses too,
// where the CLI refuses for a reason of llama's), and that nothing is left behind.
const ERR_CASES = llamaQuantizeAll([
  { model: MODELS.dense, ftype: LLAMA_FTYPE.IQ2_XS },
  { model: MODELS.dense, ftype: LLAMA_FTYPE.Q8_0 },
]);
const q8 = ERR_CASES[1].out[0];
writeFileSync(join(dir, 'q8.gguf'), q8);
const [requant] = llamaQuantizeAll([{ model: q8, ftype: LLAMA_FTYPE.Q4_0, options: { allowRequantize: true } }]);
const [refused] = llamaQuantizeAll([{ model: q8, ftype: LLAMA_FTYPE.Q4_0 }]);

/** No output and no temporary file is left in the test folder. */
function nothingWritten(/** @type {string} */ what) {
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('out') || f.startsWith('.out')),
    [],
    `${what}: something was written`,
  );
}

test('an unknown ftype is bad usage (exit 2) that lists the valid names', async () => {
  const r = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_X']);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^blockquant: unknown ftype "Q4_K_X": valid ftypes are F32, F16, Q4_0, .*\bQ4_K_M\b.*\bIQ4_XS\b/);
  assert.match(r.err, /\n\nusage: blockquant quantize /);
  for (const t of ['q8_K', 'q8_1', 'i32', 'q9_0', '']) {
    const u = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', t]);
    assert.equal(u.code, 2, `${t}: ${u.err}`);
    assert.match(u.err, /unknown ftype/, t);
  }
  nothingWritten('unknown ftype');
});

test('an ftype that needs an imatrix, without one: exit 1, as llama refuses', async () => {
  assert.equal(ERR_CASES[0].ok, false, 'llama_model_quantize refuses IQ2_XS without an imatrix');
  assert.match(ERR_CASES[0].log, /requires an imatrix|importance matrix/i);
  const r = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'IQ2_XS']);
  assert.equal(r.code, 1, r.err);
  assert.match(
    r.err,
    /^blockquant: dense\.gguf: this quantization requires an importance matrix: .* is to be iq2_xs; give one with --imatrix FILE/m,
  );
  nothingWritten('IQ2_XS');
  // --dry-run plans it anyway (as llama's dry run does), with a warning.
  const d = await cli(['quantize', 'dense.gguf', '--type', 'IQ2_XS', '--dry-run']);
  assert.equal(d.code, 0, d.err);
  assert.match(d.err, /^blockquant: warning: this quantization requires an importance matrix/m);
});

test('imatrix entries that do not match the model: which ones, and which file', async () => {
  // Of another model: no entry names a tensor of this one.
  const other = entries.map((e) => ({ ...e, name: `model.${e.name}` }));
  writeFileSync(join(dir, 'other.imatrix'), imatrixGGUF(other).bytes);
  const r = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M', '--imatrix', 'other.imatrix']);
  assert.equal(r.code, 1, r.err);
  assert.match(
    r.err,
    new RegExp(
      String.raw`^blockquant: other\.imatrix: none of its ${entries.length} entries names a tensor of dense\.gguf ` +
        String.raw`\("model\.blk\.0\.attn_k\.weight", .*\): it is for another model\n$`,
    ),
  );
  // Some entries stray: a warning names them, and the rest is used.
  const extra = [
    ...entries,
    { name: 'blk.9.attn_q.weight', ne0: 256, sums: new Float32Array(256).fill(1), counts: [1] },
  ];
  writeFileSync(join(dir, 'extra.imatrix'), imatrixGGUF(extra).bytes);
  const w = await cli(['quantize', 'dense.gguf', '--type', 'Q4_K_M', '--imatrix', 'extra.imatrix', '--dry-run']);
  assert.equal(w.code, 0, w.err);
  assert.match(
    w.err,
    new RegExp(
      String.raw`^blockquant: warning: extra\.imatrix: 1 of ${entries.length + 1} entries name no tensor of dense\.gguf: "blk\.9\.attn_q\.weight"$`,
      'm',
    ),
  );
  // An entry of the wrong size: llama refuses the model, and so does the CLI, naming the tensor.
  const bad = entries.map((e) =>
    e.name === 'blk.0.attn_q.weight' ? { ...e, ne0: 128, sums: e.sums.subarray(0, 128) } : e,
  );
  writeFileSync(join(dir, 'bad.imatrix'), imatrixGGUF(bad).bytes);
  const [llama] = llamaQuantizeAll([
    {
      model: MODELS.dense,
      ftype: LLAMA_FTYPE.Q4_K_M,
      options: { imatrix: weights.map(([k, v]) => [k, k === 'blk.0.attn_q.weight' ? v.subarray(0, 128) : v]) },
    },
  ]);
  assert.equal(llama.ok, false);
  assert.match(llama.log, /imatrix size 128 is different from tensor size 256 for blk\.0\.attn_q\.weight/);
  const b = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M', '--imatrix', 'bad.imatrix']);
  assert.equal(b.code, 1, b.err);
  assert.match(
    b.err,
    /^blockquant: bad\.imatrix: imatrix size 128 is different from tensor size 256 for blk\.0\.attn_q\.weight: the importance matrix was not made for this model\n$/,
  );
  // Not an imatrix at all, or not there.
  const m = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M', '--imatrix', 'tied.gguf']);
  assert.equal(m.code, 1, m.err);
  assert.match(m.err, /^blockquant: tied\.gguf: /);
  const n = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M', '--imatrix', 'nope.imatrix']);
  assert.equal(n.code, 1, n.err);
  assert.match(n.err, /^blockquant: nope\.imatrix: no such file/);
  nothingWritten('imatrix');
});

test('quantized input needs --allow-requantize, as in llama-quantize', async () => {
  assert.equal(refused.ok, false);
  assert.match(refused.log, /requantizing from type q8_0 is disabled/);
  const r = await cli(['quantize', 'q8.gguf', 'out.gguf', '--type', 'Q4_0']);
  assert.equal(r.code, 1, r.err);
  assert.match(
    r.err,
    /^blockquant: q8\.gguf: requantizing from type q8_0 is disabled \(.*\.weight\); --allow-requantize converts it/,
  );
  nothingWritten('requantize');
  assert.ok(requant.ok, requant.log.slice(-300));
  const a = await cli(['quantize', 'q8.gguf', 'out.gguf', '--type', 'Q4_0', '--allow-requantize']);
  assert.equal(a.code, 0, a.err);
  assert.equal(firstDiff(new Uint8Array(readFileSync(join(dir, 'out.gguf'))), requant.out[0]), -1);
  rmSync(join(dir, 'out.gguf'));
});

test('flags spelled wrong are bad usage (exit 2) naming the flag', async () => {
  for (const [args, want] of [
    [['--type', 'Q4_0', '--tensor-type', 'attn_v'], /--tensor-type "attn_v": expected REGEX=TYPE/],
    [['--type', 'Q4_0', '--tensor-type', '=q8_0'], /--tensor-type "=q8_0": the tensor name pattern is missing/],
    [['--type', 'Q4_0', '--tensor-type', 'attn_v='], /--tensor-type "attn_v=": the type is missing/],
    [['--type', 'Q4_0', '--tensor-type', 'attn_v=q9_9'], /--tensor-type attn_v: "q9_9" is not a ggml type/],
    [['--type', 'Q4_0', '--tensor-type', '(=q8_0'], /--tensor-type: "\(" is not a regular expression/],
    [['--type', 'Q4_0', '--output-tensor-type', 'q9'], /--output-tensor-type: "q9" is not a ggml type/],
    [['--type', 'Q4_0', '--token-embedding-type', 'x'], /--token-embedding-type: "x" is not a ggml type/],
    [['--type', 'Q4_0', '--prune-layers', '1,x'], /--prune-layers: invalid layer id "x"/],
    [['--type', 'Q4_0', '--threads', '0'], /--threads 0: expected a whole number/],
    [['--type', 'Q4_0', '--include-weights', 'a', '--exclude-weights', 'b'], /cannot be used together/],
    [['--type', 'Q4_0', '--override-kv', 'general.name'], /--override-kv "general\.name": expected KEY=TYPE:VALUE/],
    [['--type', 'Q4_0', '--override-kv', 'a=list:1'], /TYPE is int, float, bool or str/],
    [[], /quantize needs --type/],
    [['--type', 'Q4_0', '--frob'], /unknown option '--frob'/],
  ]) {
    const r = await cli(['quantize', 'dense.gguf', 'out.gguf', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, new RegExp(`^blockquant: .*${want.source}`), args.join(' '));
    assert.match(r.err, /\n\nusage: blockquant quantize /, args.join(' '));
  }
  const o = await cli(['quantize', 'dense.gguf', '--type', 'Q4_0']);
  assert.equal(o.code, 2, o.err);
  assert.match(o.err, /^blockquant: quantize takes IN and OUT \(OUT may be left out with --dry-run\)/);
  nothingWritten('usage');
});

test('progress: a line per tensor when stderr is piped, the same lines as --dry-run lists; none with --quiet', async () => {
  const plan = await cli(['quantize', 'dense.gguf', '--type', 'Q4_K_M', '--dry-run']);
  assert.equal(plan.code, 0, plan.err);
  const listing = plan.out.split('\n').filter((l) => l.startsWith('['));
  assert.equal(listing.length, parseGGUF(oracle[0].out[0]).tensors.length);
  const r = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M']);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.err.split('\n').slice(0, -1), listing);
  rmSync(join(dir, 'out.gguf'));
  const q = await cli(['quantize', 'dense.gguf', 'out.gguf', '--type', 'Q4_K_M', '--quiet']);
  assert.equal(q.code, 0, q.err);
  assert.equal(q.err, '');
  assert.match(q.out, /^out\.gguf: Q4_K_M, \d+ tensors\n/);
  rmSync(join(dir, 'out.gguf'));
});

test('progress on a terminal: a bar redrawn in place, cleared at the end', async () => {
  let err = '';
  let out = '';
  const code = await main(['quantize', join(dir, 'dense.gguf'), join(dir, 'out.gguf'), '--type', 'Q8_0'], {
    out: { write: (/** @type {string} */ x) => (out += x) },
    err: { isTTY: true, write: (/** @type {string} */ x) => (err += x) },
  });
  assert.equal(code, 0, err);
  const frames = err.split('\r\x1b[K').filter(Boolean);
  assert.ok(frames.length >= 2, err);
  for (const f of frames) assert.match(f, /^\[[# ]{30}\] +\d+% {2}\d+\/\d+ \S+( {2}\d+ s left)?$/, JSON.stringify(f));
  assert.match(frames[frames.length - 1], /^\[#{30}\] 100% /);
  // A narrow terminal: every frame fits its width (a wrapped line would not be redrawn in place).
  let narrow = '';
  const c2 = await main(['quantize', join(dir, 'dense.gguf'), join(dir, 'out2.gguf'), '--type', 'Q8_0'], {
    out: { write: () => {} },
    err: { isTTY: true, columns: 48, write: (/** @type {string} */ x) => (narrow += x) },
  });
  assert.equal(c2, 0, narrow);
  for (const f of narrow.split('\r\x1b[K').filter(Boolean)) assert.ok(f.length <= 47, JSON.stringify(f));
  rmSync(join(dir, 'out2.gguf'));
  assert.ok(err.endsWith('\r\x1b[K'), 'the bar is cleared');
  assert.doesNotMatch(err, /\n/);
  assert.match(out, /: Q8_0, \d+ tensors\n/);
  assert.equal(
    firstDiff(
      new Uint8Array(readFileSync(join(dir, 'out.gguf'))),
      oracle[CASES.findIndex((c) => c.label === 'Q8_0')].out[0],
    ),
    -1,
  );
  rmSync(join(dir, 'out.gguf'));
});
