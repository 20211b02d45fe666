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
  // padded to 352; f16 64x8 = 1024 bytes, f32 64 = 256, q8_0 16 blocks x 34 = 544.
  assert.equal(
    r.out,
    `GGUF v3, little-endian, alignment 32, data at byte 352
3 metadata entries, 3 tensors

metadata:
  general.name = "tiny"
  general.file_type = 1
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
`,
  );
  const j = JSON.parse((await run('inspect', tiny, '--json')).out);
  assert.equal(j.dataOffset, 352);
  assert.deepEqual(j.tensors[2], { name: 'blk.0.q', type: 'q8_0', dims: [64, 8], offset: 1280, bytes: 544 });
  assert.deepEqual(j.metadata[2].value, ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
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

test('quantize requantizes float tensors with the reference quantizer', async () => {
  const out = join(dir, 'q.gguf');
  const r = await run('quantize', tiny, out, '--type', 'q5_1', '--keep-1d', 'f32');
  assert.equal(r.code, 0, r.err);
  const g = parseGGUF(new Uint8Array(readFileSync(out)));
  assert.deepEqual(
    g.tensors.map((t) => t.type),
    [GGMLType.Q5_1, GGMLType.F32, GGMLType.Q8_0],
  );
  assert.equal(g.metadata.get('general.file_type'), 9);
  const x = bq.dequantize('f16', bq.quantize('f16', w));
  assert.deepEqual(g.tensorBytes('blk.0.w'), bq.quantize('q5_1', x));
  assert.deepEqual(g.tensorBytes('blk.0.q'), bq.quantize('q8_0', w));
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
    ['quantize', tiny, 'x.gguf', '--type', 'q3_k'],
    ['dump', tiny, 'blk.0.q', '--rows', 'x'],
  ]) {
    const u = await run(...args);
    assert.equal(u.code, 2, args.join(' '));
    assert.match(u.err + u.out, /usage: blockquant/);
  }
  assert.equal((await run('dump', tiny, 'nothere')).code, 1);
});

test('quantize sets general.file_type and general.quantization_version once, as llama.cpp does', async () => {
  const cases = [
    // No file_type: both keys are added after the last general.* key.
    [
      [
        { key: 'general.name', type: 8, value: 'm' },
        { key: 'llama.block_count', type: 4, value: 1 },
      ],
      'q4_0',
      2,
    ],
    // A file_type of another type (INT32, as some writers store it) is replaced in place.
    [
      [
        { key: 'general.file_type', type: 5, value: 1 },
        { key: 'general.quantization_version', type: 4, value: 1 },
        { key: 'general.name', type: 8, value: 'm' },
      ],
      'q5_0',
      8,
    ],
    [[], 'q8_0', 7],
  ];
  for (const [kv, type, ftype] of cases) {
    const input = join(dir, `ft-${type}.gguf`);
    const out = join(dir, `ft-${type}-out.gguf`);
    writeFileSync(
      input,
      writeGGUF({ kv, tensors: [{ name: 'w', type: GGMLType.F16, dims: [64, 8], data: bq.quantize('f16', w) }] }),
    );
    const r = await run('quantize', input, out, '--type', type);
    assert.equal(r.code, 0, r.err);
    const g = parseGGUF(new Uint8Array(readFileSync(out)));
    const keys = g.kv.map((e) => e.key);
    const want = kv.map((e) => e.key);
    if (!want.includes('general.file_type')) {
      const at = want.findLastIndex((k) => k.startsWith('general.')) + 1;
      want.splice(at, 0, 'general.file_type', 'general.quantization_version');
    }
    assert.deepEqual(keys, want, type);
    const ft = g.kv.find((e) => e.key === 'general.file_type');
    const qv = g.kv.find((e) => e.key === 'general.quantization_version');
    assert.deepEqual([ft.type, ft.value, qv.type, qv.value], [4, ftype, 4, 2], type);
  }
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
