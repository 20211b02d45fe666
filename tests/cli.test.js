// The CLI, run in-process: golden output of inspect on a hand-checked fixture, dump, stats,
// quantize (checked against the codec), and the error and usage exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../js/cli.js';
import { writeGGUF, parseGGUF, GGMLType } from '../js/node.js';
import { codec } from './lib/helpers.js';
import { Bytes } from './lib/gguf-bytes.js';

const bq = await codec();
const dir = mkdtempSync(join(tmpdir(), 'bq-cli-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const w = new Float32Array(512).map((_, i) => Math.sin(i * 0.7) * 0.05);
const tiny = join(dir, 'tiny.gguf');
writeFileSync(
  tiny,
  writeGGUF({
    kv: [
      { key: 'general.name', type: 8, value: 'tiny' },
      { key: 'general.file_type', type: 4, value: 1 },
      { key: 'tokenizer.ggml.tokens', type: 9, itemType: 8, value: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] },
    ],
    tensors: [
      { name: 'blk.0.w', type: GGMLType.F16, dims: [64, 8], data: bq.quantize('f16', w) },
      { name: 'blk.0.norm', type: GGMLType.F32, dims: [64], data: new Uint8Array(new Float32Array(64).fill(1).buffer) },
      { name: 'blk.0.q', type: GGMLType.Q8_0, dims: [64, 8], data: bq.quantize('q8_0', w) },
    ],
  }),
);

async function run(...args) {
  let out = '',
    err = '';
  const code = await main(args, {
    out: {
      write: (s) => {
        out += s;
      },
    },
    err: {
      write: (s) => {
        err += s;
      },
    },
  });
  return { code, out, err };
}

test('inspect prints the header, metadata, tensor table and totals', async () => {
  const r = await run('inspect', tiny);
  assert.equal(r.code, 0, r.err);
  // Offsets worked out by hand: 24 bytes of header, 177 of metadata, 136 of tensor infos = 337,
  // padded to 352; f16 64x8 = 1024 bytes, f32 64 = 256, q8_0 16 blocks x 34 = 544; in all 1088
  // values in 1824 bytes, 8 * 1824 / 1088 = 13.41 bits per weight; file type 1 is llama.h's MOSTLY_F16.
  assert.equal(
    r.out,
    `GGUF v3, little-endian, alignment 32, data at byte 352
3 metadata entries, 3 tensors, file type F16

metadata:
  general.name = "tiny"
  general.file_type = 1 (F16)
  tokenizer.ggml.tokens = ["a", "b", "c", "d", "e", ... (7 items)]

tensors:
  name        type     shape                           bytes         offset
  blk.0.w     f16      [64, 8]                          1024              0
  blk.0.norm  f32      [64]                              256           1024
  blk.0.q     q8_0     [64, 8]                           544           1280

totals per type:
  f16      1 tensors, 512 elements, 1024 bytes
  f32      1 tensors, 64 elements, 256 bytes
  q8_0     1 tensors, 512 elements, 544 bytes

totals: 3 tensors, 1088 parameters, 1824 bytes, 13.41 bits/weight
`,
  );
  const j = JSON.parse((await run('inspect', tiny, '--json')).out);
  assert.equal(j.dataOffset, 352);
  assert.deepEqual(j.tensors[2], { name: 'blk.0.q', type: 'q8_0', dims: [64, 8], offset: 1280, bytes: 544 });
  assert.deepEqual(j.metadata[2].value, ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  assert.deepEqual(j.summary, { tensors: 3, parameters: 1088, bytes: 1824, bitsPerWeight: (8 * 1824) / 1088 });
  assert.equal(j.fileType, 'F16');
});

test('inspect writes f32 metadata by its shortest float32 decimal', async () => {
  const f = join(dir, 'eps.gguf');
  writeFileSync(
    f,
    writeGGUF({
      kv: [
        { key: 'x.eps', type: 6, value: 1e-5 },
        { key: 'x.f64', type: 12, value: 1e-5 },
        { key: 'x.list', type: 9, itemType: 6, value: Float32Array.of(0.1, 1e-6) },
      ],
      tensors: [],
    }),
  );
  const r = await run('inspect', f);
  assert.equal(r.code, 0, r.err);
  // As a double the f32 1e-5 is 0.000009999999747378752; the shortest decimal that reads back is 1e-5.
  assert.match(r.out, /^ {2}x\.eps = 1e-5$/m);
  assert.match(r.out, /^ {2}x\.f64 = 0\.00001$/m);
  assert.match(r.out, /^ {2}x\.list = \[0\.1, 1e-6\]$/m);
});

test('dump: rows past the tensor are an error naming its row count', async () => {
  // blk.0.q is [64, 8]: rows 0 … 7.
  for (const rows of ['8:10', '40000:40010', '2:9']) {
    const r = await run('dump', tiny, 'blk.0.q', '--rows', rows);
    assert.equal(r.code, 1, `${rows}: ${r.out}`);
    assert.equal(r.out, '');
    assert.match(r.err, /blk\.0\.q has 8 rows/);
  }
  const last = await run('dump', tiny, 'blk.0.q', '--rows', '7:8');
  assert.equal(last.code, 0, last.err);
  assert.equal(last.out.trim().split('\n').length, 1);
});

test('stats: 1-D tensors are one summary line (no infinite SNR); --all and --tensor show them', async () => {
  const r = await run('stats', tiny, '--as', 'q4_0');
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trim().split('\n');
  // The header, blk.0.w at q8_0, and one line for the 64-value norm.
  assert.equal(lines.length, 3, r.out);
  assert.match(lines[1], /^blk\.0\.w +q4_0 /);
  assert.match(lines[2], /1 1-D float tensor, 64 values, not shown.*--all/);
  assert.doesNotMatch(r.out, /Infinity/);
  for (const args of [['--all'], ['--tensor', 'blk.0.norm']]) {
    const a = await run('stats', tiny, '--as', 'q4_0', ...args);
    assert.equal(a.code, 0, a.err);
    // The norm is all ones: Q4_0 holds it exactly (d = 1 / -8 = -0.125, q - 8 = -8), so its SNR is "exact".
    assert.match(a.out, /^blk\.0\.norm +q4_0 +4\.50 +0\.0000e\+0 +0\.0000e\+0 +exact /m, a.out);
    assert.doesNotMatch(a.out, /Infinity|not shown/);
  }
});

test('dump prints dequantized rows', async () => {
  const r = await run('dump', tiny, 'blk.0.q', '--rows', '1:3');
  assert.equal(r.code, 0, r.err);
  const rows = r.out
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number));
  const want = bq.dequantize('q8_0', bq.quantize('q8_0', w));
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[1], Array.from(want.subarray(128, 192)));
});

test('stats reports each format for each float tensor', async () => {
  const r = await run('stats', tiny, '--tensor', 'blk.0.w', '--as', 'q8_0,q4_0');
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trim().split('\n');
  assert.equal(lines.length, 3);
  const x = bq.dequantize('f16', bq.quantize('f16', w));
  const back = bq.dequantize('q4_0', bq.quantize('q4_0', x));
  let se = 0;
  for (let i = 0; i < x.length; i++) se += (x[i] - back[i]) ** 2;
  const [, fmt, bits, rmse] = lines[2].split(/\s+/);
  assert.equal(fmt, 'q4_0');
  assert.equal(bits, '4.50');
  assert.ok(Math.abs(Number(rmse) - Math.sqrt(se / x.length)) < 1e-7, `${rmse} vs ${Math.sqrt(se / x.length)}`);
});

test('quantize converts the float weights with the reference quantizer and copies the rest', async () => {
  // A llama-shaped model (quantize follows llama-quantize: general.architecture, weight names):
  // a 2-D F16 weight is converted, the 1-D norm and a tensor whose name does not end in "weight"
  // are copied as they are.
  const input = join(dir, 'llama-tiny.gguf');
  writeFileSync(
    input,
    writeGGUF({
      kv: [
        { key: 'general.architecture', type: 8, value: 'llama' },
        { key: 'llama.block_count', type: 4, value: 1 },
      ],
      tensors: [
        { name: 'blk.0.ffn_up.weight', type: GGMLType.F16, dims: [64, 8], data: bq.quantize('f16', w) },
        { name: 'blk.0.attn_norm.weight', type: GGMLType.F32, dims: [64], data: new Uint8Array(256) },
        { name: 'blk.0.q', type: GGMLType.Q8_0, dims: [64, 8], data: bq.quantize('q8_0', w) },
      ],
    }),
  );
  const out = join(dir, 'q.gguf');
  const r = await run('quantize', input, out, '--type', 'q5_1', '--quiet');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const g = parseGGUF(new Uint8Array(readFileSync(out)));
  const type = (name) => g.tensors.find((t) => t.name === name)?.type;
  assert.deepEqual(['blk.0.ffn_up.weight', 'blk.0.attn_norm.weight', 'blk.0.q'].map(type), [
    GGMLType.Q5_1,
    GGMLType.F32,
    GGMLType.Q8_0,
  ]);
  assert.equal(g.metadata.get('general.file_type'), 9);
  const x = bq.dequantize('f16', bq.quantize('f16', w));
  assert.deepEqual(g.tensorBytes('blk.0.ffn_up.weight'), bq.quantize('q5_1', x));
  assert.deepEqual(g.tensorBytes('blk.0.q'), bq.quantize('q8_0', w));
  // A model without general.architecture is refused, as llama-quantize's loader refuses it.
  const t = await run('quantize', tiny, join(dir, 'q2.gguf'), '--type', 'q4_0');
  assert.equal(t.code, 1);
  assert.match(t.err, /^blockquant: .*tiny\.gguf: the model has no general\.architecture\n$/);
});

test('errors name the file and exit 1; bad usage exits 2 with help', async () => {
  const missing = await run('inspect', join(dir, 'nope.gguf'));
  assert.equal(missing.code, 1);
  assert.match(missing.err, /nope\.gguf/);
  const bad = join(dir, 'bad.gguf');
  writeFileSync(bad, new Uint8Array([0x47, 0x47, 0x55, 0x46, 9, 0, 0, 0]));
  const r = await run('inspect', bad);
  assert.equal(r.code, 1);
  assert.match(r.err, /bad\.gguf: unsupported GGUF version 9/);
  for (const args of [
    [],
    ['frob'],
    ['inspect'],
    ['quantize', tiny, 'x.gguf', '--type', 'q8_K'], // activation formats are not model formats
    ['quantize', tiny, 'x.gguf', '--type', 'q8_1'],
    ['quantize', tiny, 'x.gguf', '--type', 'i32'], // not a type quantize writes
    ['quantize', tiny, 'x.gguf', '--type', 'q9_0'],
    ['stats', tiny, '--as', 'q8_K,q9_0'],
    ['dump', tiny, 'blk.0.q', '--rows', 'x'],
  ]) {
    const u = await run(...args);
    assert.equal(u.code, 2, args.join(' '));
    assert.match(u.err + u.out, /usage: blockquant/);
  }
  assert.equal((await run('dump', tiny, 'nothere')).code, 1);
});

test('every spelling of a command help, and strict options with the command usage', async () => {
  for (const cmd of ['inspect', 'dump', 'stats', 'quantize']) {
    for (const args of [
      [cmd, '--help'],
      [cmd, '-h'],
      ['help', cmd],
      [cmd, 'x.gguf', '--help'],
      [cmd, '--help', 'x.gguf', 'y'],
    ]) {
      const r = await run(...args);
      assert.equal(r.code, 0, `${args}: ${r.err}`);
      assert.match(r.out, new RegExp(`^usage: blockquant ${cmd} .*\n\n.*\n\noptions:\n  -h, --help`), args.join(' '));
      assert.equal(r.err, '');
    }
    for (const args of [
      [cmd, 'x.gguf', '--frob'],
      [cmd, 'x.gguf', '--frob=1'],
      [cmd, '-z'],
    ]) {
      const r = await run(...args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.err, /^blockquant: unknown option '-/);
      assert.match(r.err, new RegExp(`\n\nusage: blockquant ${cmd} `));
    }
  }
  for (const args of [['--help'], ['-h'], ['help']]) {
    const r = await run(...args);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.out, /^usage: blockquant <command>/);
    for (const cmd of ['inspect', 'dump', 'stats', 'quantize']) assert.match(r.out, new RegExp(`\n  ${cmd} `));
  }
  for (const args of [
    ['help', 'frob'],
    ['--frob'],
    ['inspect', tiny, '--json=yes'],
    ['quantize', tiny, 'o', '--type'],
  ]) {
    const r = await run(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, /\n\nusage: blockquant /);
  }
});

// A fixture for stats and dump with K-quants. Rows of 512 are whole 256-blocks; rows of 96 are
// whole 32-blocks only; rows of 50 are neither. The values: a smooth signal with a slow drift (no
// block is constant).
const signal = (n, k) => new Float32Array(n).map((_, i) => Math.sin(i * k) * (1 + (i % 97) / 50) + Math.cos(i * 0.013));
const kw = signal(512 * 4, 0.37);
const kodd = signal(96 * 4, 0.7);
const ktiny = signal(50 * 3, 1.3);
const knorm = signal(512, 0.1);
const kq = bq.quantize('q4_K', signal(256 * 3, 0.9));
const kfile = join(dir, 'k.gguf');
writeFileSync(
  kfile,
  writeGGUF({
    kv: [{ key: 'general.name', type: 8, value: 'k' }],
    tensors: [
      { name: 'blk.0.w', type: GGMLType.F32, dims: [512, 4], data: new Uint8Array(kw.buffer) },
      { name: 'blk.0.odd', type: GGMLType.F32, dims: [96, 4], data: new Uint8Array(kodd.buffer) },
      { name: 'blk.0.tiny', type: GGMLType.F32, dims: [50, 3], data: new Uint8Array(ktiny.buffer) },
      { name: 'blk.0.norm', type: GGMLType.F32, dims: [512], data: new Uint8Array(knorm.buffer) },
      { name: 'blk.0.k', type: GGMLType.Q4_K, dims: [256, 3], data: kq },
    ],
  }),
);

const rmse = (x, y) => Math.sqrt(x.reduce((s, v, i) => s + (v - y[i]) ** 2, 0) / x.length);

test('quantize --help names every ftype, the aliases and the ggml type spelling', async () => {
  const h = await run('quantize', '--help');
  assert.equal(h.code, 0, h.err);
  // llama.h's ftype names, as llama-quantize lists them.
  for (const t of [
    'Q4_0',
    'Q4_1',
    'Q5_0',
    'Q5_1',
    'Q8_0',
    'Q2_K',
    'Q2_K_S',
    'Q3_K_S',
    'Q3_K_M',
    'Q3_K_L',
    'Q4_K_S',
    'Q4_K_M',
    'Q5_K_S',
    'Q5_K_M',
    'Q6_K',
    'IQ1_S',
    'IQ1_M',
    'IQ2_XXS',
    'IQ2_XS',
    'IQ2_S',
    'IQ2_M',
    'IQ3_XXS',
    'IQ3_XS',
    'IQ3_S',
    'IQ3_M',
    'IQ4_NL',
    'IQ4_XS',
    'TQ1_0',
    'TQ2_0',
    'MXFP4_MOE',
    'Q1_0',
    'Q2_0',
    'F16',
    'BF16',
    'F32',
  ])
    assert.match(h.out, new RegExp(`\\b${t}\\b`), t);
  assert.match(h.out, /Q3_K, Q4_K, Q5_K: the _M mixes/);
  assert.match(h.out, /as ggml spells it \(q4_0, q4_K, iq4_xs, \.\.\.\): every quantizable tensor/);
  for (const f of [
    '--imatrix',
    '--include-weights',
    '--exclude-weights',
    '--output-tensor-type',
    '--token-embedding-type',
    '--tensor-type',
    '--pure',
    '--leave-output-tensor',
    '--allow-requantize',
    '--keep-split',
    '--override-kv',
    '--prune-layers',
    '--dry-run',
    '--threads',
    '--quiet',
    '--force',
  ])
    assert.match(h.out, new RegExp(`^  ${f}\\b`, 'm'), f);
});

test('stats --as K types: totals over the whole tensor, worst block and sub-block', async () => {
  const r = await run('stats', kfile, '--tensor', 'blk.0.w', '--as', 'q4_K,q6_K,q8_0');
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trim().split('\n');
  assert.equal(lines.length, 4);
  for (const [i, fmt, bitsWant, sub] of [
    [1, 'q4_K', '4.50', 32],
    [2, 'q6_K', '6.56', 16],
    [3, 'q8_0', '8.50', 0],
  ]) {
    const back = bq.dequantize(fmt, bq.quantize(fmt, kw));
    const B = fmt === 'q8_0' ? 32 : 256;
    const worst = (n) => {
      let w = 0;
      for (let o = 0; o < kw.length; o += n) w = Math.max(w, rmse(kw.subarray(o, o + n), back.subarray(o, o + n)));
      return w;
    };
    const [, name, bits, total, maxAbs, , worstBlock, worstSub] = lines[i].split(/\s+/);
    assert.deepEqual([name, bits], [fmt, bitsWant]);
    const close = (got, want, what) =>
      assert.ok(Math.abs(Number(got) - want) <= 1e-4 * want, `${fmt} ${what}: ${got} vs ${want}`);
    close(total, rmse(kw, back), 'RMSE');
    close(maxAbs, Math.max(...kw.map((v, j) => Math.abs(v - back[j]))), 'max |err|');
    close(worstBlock, worst(B), 'worst block RMSE');
    if (sub) close(worstSub, worst(sub), 'worst sub-block RMSE');
    else assert.equal(worstSub, '-');
  }
  // A tensor whose rows are not whole blocks of a format gets a line saying so.
  const o = await run('stats', kfile, '--tensor', 'blk.0.odd', '--as', 'q4_K,q4_0');
  assert.equal(o.code, 0, o.err);
  assert.match(o.out, /^blk\.0\.odd +q4_K +rows of 96 are not whole blocks of 256$/m);
  assert.match(o.out, /^blk\.0\.odd +q4_0 +4\.50 /m);
  // The default list has the K types.
  const d = await run('stats', kfile, '--tensor', 'blk.0.w');
  assert.equal(d.code, 0, d.err);
  for (const t of ['q8_0', 'q6_K', 'q5_K', 'q5_1', 'q5_0', 'q4_K', 'q4_1', 'q4_0', 'q3_K', 'q2_K'])
    assert.match(d.out, new RegExp(`^blk\\.0\\.w +${t} `, 'm'));
});

test('dump decodes rows of a K tensor; inspect names K types', async () => {
  const r = await run('dump', kfile, 'blk.0.k', '--rows', '1:3');
  assert.equal(r.code, 0, r.err);
  const rows = r.out
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number));
  const want = bq.dequantize('q4_K', kq);
  assert.deepEqual(rows, [Array.from(want.subarray(256, 512)), Array.from(want.subarray(512, 768))]);
  const i = await run('inspect', kfile);
  assert.match(i.out, /^ {2}blk\.0\.k +q4_K +\[256, 3\] +432 /m);
  assert.match(i.out, /^ {2}q4_K +1 tensors, 768 elements, 432 bytes$/m);
});

test('quantize reads a big-endian input: a weight requantized, a quantized tensor copied to little-endian', async () => {
  // Built byte by byte: general.architecture and llama.block_count, an F32 [512, 2] weight and a
  // Q4_K [256, 2] tensor whose name does not end in "weight" (copied, as llama-quantize copies
  // it; its d and dmin, bytes 0-1 and 2-3 of each 144-byte block, are its only multi-byte fields).
  const x = signal(1024, 0.21);
  const q = bq.quantize('q4_K', signal(512, 0.5));
  const b = new Bytes({ le: false }).header(3, 2, 2);
  b.str('general.architecture').u32(8).str('llama');
  b.str('llama.block_count').u32(4).u32(1);
  b.tensor('blk.0.ffn_up.weight', [512, 2], GGMLType.F32, 0);
  b.tensor('blk.0.k', [256, 2], GGMLType.Q4_K, 4096);
  b.padTo(32);
  for (const v of x) b.f32(v);
  for (let o = 0; o < q.length; o += 144) b.raw(q[o + 1], q[o], q[o + 3], q[o + 2], ...q.subarray(o + 4, o + 144));
  const input = join(dir, 'k-be.gguf');
  writeFileSync(input, b.bytes());
  assert.equal(parseGGUF(new Uint8Array(readFileSync(input))).littleEndian, false);
  const out = join(dir, 'k-be-out.gguf');
  const r = await run('quantize', input, out, '--type', 'q5_K');
  assert.equal(r.code, 0, r.err);
  const g = parseGGUF(new Uint8Array(readFileSync(out)));
  assert.equal(g.littleEndian, true);
  assert.deepEqual(g.tensorBytes('blk.0.ffn_up.weight'), bq.quantize('q5_K', x));
  assert.deepEqual(g.tensorBytes('blk.0.k'), q);
});
