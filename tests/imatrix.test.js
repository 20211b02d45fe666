// readImatrix: llama-imatrix's GGUF importance matrices and the legacy .dat, built byte by byte
// (tests/lib/imatrix-files.js) as tools/imatrix/imatrix.cpp writes them. The weights must be
// llama-quantize's: sums / count as one float32 division (checked against an exact BigInt
// rounding, not the float arithmetic under test), 1 for a matrix never routed, .dat values / ncall.
// Every byte source, both formats told apart by their bytes, each hostile class, truncation at
// every offset and a seeded mutation fuzz; the tiny fixture pair in tests/fixtures/imatrix/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readImatrix, GGUFError, GGMLType } from '../js/node.js';
import { readImatrix as readImatrixWeb } from '../js/index.js';
import { imatrixGGUF, imatrixDat, f32div } from './lib/imatrix-files.js';
import { rangeServer } from './lib/http-servers.js';
import { SEED, rng } from './lib/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'bq-imatrix-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** float32 values: positive, with zeros, tiny and huge ones. */
function sumsOf(r, n) {
  return Float32Array.from({ length: n }, (_, i) =>
    i % 17 === 3 ? 0 : i % 23 === 5 ? 1e-30 * r.next() : i % 29 === 7 ? 1e30 * r.next() : 100 * r.next() ** 3,
  );
}

/** The same bits (so -0, 0 and NaN payloads count). */
function sameBits(got, want, where) {
  assert.equal(got.length, want.length, `${where}: length`);
  const a = new Uint32Array(Float32Array.from(got).buffer),
    b = new Uint32Array(Float32Array.from(want).buffer);
  for (let i = 0; i < a.length; i++)
    if (a[i] !== b[i])
      assert.fail(`${where}[${i}]: ${got[i]} (0x${a[i].toString(16)}), want ${want[i]} (0x${b[i].toString(16)})`);
}

/** llama-quantize's GGUF weights for one entry: sums / count per matrix, 1 where count is 0. */
function ggufWeights(e) {
  const out = [];
  e.counts.forEach((c, j) => {
    for (let i = 0; i < e.ne0; i++) out.push(c > 0 ? f32div(e.sums[j * e.ne0 + i], c) : 1);
  });
  return out;
}

const r0 = rng(SEED);
const ENTRIES = [
  { name: 'blk.0.attn_q.weight', ne0: 64, sums: sumsOf(r0, 64), counts: [3072] },
  // An MoE tensor: 3 experts, the middle one never routed.
  {
    name: 'blk.0.ffn_up_exps.weight',
    ne0: 32,
    sums: sumsOf(r0, 96),
    counts: [5, 0, 7],
    inSum: sumsOf(r0, 96).map((v, i) => (i % 2 ? -v : v)),
  },
  { name: 'output.weight', ne0: 48, sums: sumsOf(r0, 48), counts: [2 ** 24 + 2] },
];
const DATASETS = ['wiki.train.raw', 'code ▁ä.txt'];

test(`GGUF imatrix: weights are sums / counts in float32 (1 for unrouted experts), seed ${SEED}`, async () => {
  for (const le of [true, false]) {
    const f = imatrixGGUF(ENTRIES, { datasets: DATASETS, chunkCount: 137, chunkSize: 512, le });
    const m = await readImatrix(f.bytes);
    assert.equal(m.format, 'gguf');
    assert.deepEqual(m.datasets, DATASETS);
    assert.equal(m.chunkCount, 137);
    assert.equal(m.chunkSize, 512);
    // File order: llama-imatrix sorts the names.
    assert.deepEqual([...m.entries.keys()], ['blk.0.attn_q.weight', 'blk.0.ffn_up_exps.weight', 'output.weight']);
    for (const e of ENTRIES) {
      const got = /** @type {any} */ (m.entries.get(e.name));
      assert.equal(got.name, e.name);
      assert.equal(got.cols, e.ne0);
      assert.deepEqual(got.counts, e.counts);
      const want = ggufWeights(e);
      sameBits(got.values, want, `${e.name} le=${le}`);
      assert.equal(got.weights.length, e.counts.length);
      got.weights.forEach((w, j) => sameBits(w, want.slice(j * e.ne0, (j + 1) * e.ne0), `${e.name} matrix ${j}`));
      const split = m.weightsFor(e.name, e.ne0, e.counts.length);
      split.forEach((w, j) => sameBits(w, got.weights[j], `${e.name} weightsFor ${j}`));
    }
    assert.deepEqual(Array.from(m.entries.get('blk.0.ffn_up_exps.weight').weights[1]), new Array(32).fill(1));
    assert.equal(m.weightsFor('blk.9.nothing', 64), undefined);
    assert.throws(() => m.weightsFor('blk.0.attn_q.weight', 32), RangeError);
    assert.throws(() => m.weightsFor('blk.0.ffn_up_exps.weight', 32, 2), RangeError);
  }
});

test('the division is float32 division: cases where a double quotient would round differently', async () => {
  // a / b in double then rounded to float32 equals float32 division (53 >= 2 * 24 + 2 bits), so
  // these pin the rounding itself: ties and near-ties of the quotient, tiny and huge values.
  const cases = [
    [1, 3],
    [2, 3],
    [Math.fround(0.1), 10],
    [Math.fround(16777215), 16777216],
    [Math.fround(3.4e38), 3],
    [Math.fround(1e-38), 7],
    [Math.fround(1.4e-45), 2],
    [Math.fround(1.4e-45), 3],
    [Math.fround(2.8e-45), 4],
    [Math.fround(16777217), 33554432],
  ];
  const sums = Float32Array.from(cases, ([a]) => a);
  for (const [, b] of cases) {
    const e = { name: `t.${b}`, ne0: sums.length, sums, counts: [b] };
    const m = await readImatrix(imatrixGGUF([e]).bytes);
    sameBits(m.entries.get(e.name).values, ggufWeights(e), `count ${b}`);
  }
});

test('legacy .dat: weights are value / ncall in float32 (the values kept where ncall is 0)', async () => {
  const r = rng(SEED + 1);
  const dat = [
    { name: 'blk.0.attn_k.weight', ncall: 365, values: sumsOf(r, 64) },
    { name: 'blk.0.ffn_down_exps.weight', ncall: 3, values: sumsOf(r, 96) }, // 3 experts of 32
    { name: 'blk.1.attn_k.weight', ncall: 0, values: sumsOf(r, 64) },
    { name: 'token_embd.weight', ncall: 2 ** 24 + 1, values: sumsOf(r, 16) }, // (float)ncall rounds
  ];
  const f = imatrixDat(dat, { lastChunk: 365, dataset: 'imatrix-train.txt' });
  const m = await readImatrix(f.bytes);
  assert.equal(m.format, 'dat');
  assert.deepEqual(m.datasets, ['imatrix-train.txt']);
  assert.equal(m.chunkCount, 365);
  assert.equal(m.chunkSize, null);
  assert.deepEqual(
    [...m.entries.keys()],
    dat.map((e) => e.name),
  );
  for (const e of dat) {
    const got = m.entries.get(e.name);
    const c = Math.fround(e.ncall);
    sameBits(
      got.values,
      Array.from(e.values, (v) => (e.ncall > 0 ? f32div(v, c) : v)),
      e.name,
    );
    assert.equal(got.cols, e.values.length);
    assert.deepEqual(got.counts, [e.ncall]);
    assert.equal(got.weights.length, 1);
  }
  // The expert count is not in a .dat: weightsFor splits by the tensor's shape, as llama-quantize does.
  const ex = m.weightsFor('blk.0.ffn_down_exps.weight', 32, 3);
  assert.equal(ex.length, 3);
  sameBits(ex[2], m.entries.get('blk.0.ffn_down_exps.weight').values.subarray(64), 'expert 2');
  // Files from before the trailer, and an empty dataset name.
  const old = await readImatrix(imatrixDat(dat, { trailer: false }).bytes);
  assert.equal(old.chunkCount, null);
  assert.deepEqual(old.datasets, []);
  assert.equal(old.entries.size, 4);
  const noName = await readImatrix(imatrixDat(dat, { dataset: '' }).bytes);
  assert.deepEqual(noName.datasets, []);
  assert.equal(noName.chunkCount, 10);
});

test('every byte source; the format is told by the bytes, not the name', async () => {
  const g = imatrixGGUF(ENTRIES, { datasets: DATASETS });
  const d = imatrixDat([{ name: 'blk.0.attn_k.weight', ncall: 5, values: sumsOf(rng(SEED + 2), 32) }]);
  const want = {
    gguf: (await readImatrix(g.bytes)).entries,
    dat: (await readImatrix(d.bytes)).entries,
  };
  // Swapped names: the GGUF file called .dat and the other way round.
  const gPath = join(dir, 'imatrix.dat'),
    dPath = join(dir, 'imatrix.gguf');
  writeFileSync(gPath, g.bytes);
  writeFileSync(dPath, d.bytes);
  const servers = [await rangeServer(g.bytes), await rangeServer(d.bytes)];
  try {
    for (const [fmt, bytes, path, server] of [
      ['gguf', g.bytes, gPath, servers[0]],
      ['dat', d.bytes, dPath, servers[1]],
    ]) {
      const fh = await open(path, 'r');
      const sources = {
        Uint8Array: bytes,
        ArrayBuffer: bytes.slice().buffer,
        'offset view': new Uint8Array([9, ...bytes]).subarray(1),
        Blob: new Blob([bytes]),
        custom: { size: bytes.length, read: async (o, n) => bytes.slice(o, o + n) },
        path,
        FileHandle: fh,
        URL: server.url,
      };
      try {
        for (const [kind, src] of Object.entries(sources)) {
          const m = await readImatrix(src);
          assert.equal(m.format, fmt, kind);
          assert.deepEqual(m.entries, want[fmt], `${fmt} from ${kind}`);
        }
        // Over HTTP: the Range probe, the magic, (the header,) then the data in one read.
        assert.equal(server.log.length, fmt === 'gguf' ? 4 : 3, `${fmt}: ${server.log.length} requests`);
        // The web entry takes all but paths and FileHandles.
        assert.deepEqual((await readImatrixWeb(new Blob([bytes]))).entries, want[fmt]);
        await assert.rejects(readImatrixWeb(path), TypeError);
      } finally {
        await fh.close();
      }
    }
  } finally {
    for (const s of servers) await s.close();
  }
  await assert.rejects(readImatrix(join(dir, 'missing.dat')), (e) => e instanceof GGUFError && e.code === 'OPEN');
  await assert.rejects(readImatrix(42), TypeError);
});

/** readImatrix(bytes) refuses with `code`, an offset, and a message naming `what`. */
async function refuses(bytes, code, what = [], offset) {
  let err;
  try {
    await readImatrix(bytes);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof GGUFError, `expected GGUFError ${code}, got ${err}`);
  assert.equal(err.code, code, err.message);
  assert.equal(typeof err.offset, 'number');
  if (offset !== undefined) assert.equal(err.offset, offset, err.message);
  for (const w of what) assert.ok(err.message.includes(w), `"${err.message}" names ${w}`);
}

test('hostile GGUF imatrix files are refused naming the tensor and offset', async () => {
  const one = { name: 'blk.3.attn_v.weight', ne0: 8, sums: [1, 2, 3, 4, 5, 6, 7, 8], counts: [2] };
  const moe = { name: 'blk.3.ffn_gate_exps.weight', ne0: 8, sums: new Array(24).fill(1), counts: [1, 2, 3] };
  const build = (o, entries = [one, moe]) => imatrixGGUF(entries, o);
  // Not an imatrix.
  await refuses(build({ generalType: 'model' }).bytes, 'NOT_IMATRIX', ['"model"']);
  await refuses(build({ generalType: null }).bytes, 'NOT_IMATRIX', ['missing']);
  for (const k of ['imatrix.datasets', 'imatrix.chunk_count', 'imatrix.chunk_size'])
    await refuses(build({ omitKeys: [k] }).bytes, 'MISSING_KEY', [k]);
  // Missing partners.
  const drop = (suffix) => (list) => list.filter((t) => t.name !== `blk.3.ffn_gate_exps.weight${suffix}`);
  await refuses(build({ tensors: drop('.counts') }).bytes, 'MISSING_PARTNER', [
    'blk.3.ffn_gate_exps.weight',
    '.counts',
  ]);
  await refuses(build({ tensors: drop('.in_sum2') }).bytes, 'MISSING_PARTNER', ['blk.3.ffn_gate_exps.weight.counts']);
  const onlyAct = (list) => [...list, { name: 'x.in_sum', dims: [8], type: 0, data: new Array(8).fill(0) }];
  await refuses(build({ tensors: onlyAct }).bytes, 'MISSING_PARTNER', ['x.in_sum']);
  // Sizes that disagree.
  const edit = (name, f) => (list) => list.map((t) => (t.name === name ? f({ ...t }) : t));
  const cName = 'blk.3.ffn_gate_exps.weight.counts',
    sName = 'blk.3.ffn_gate_exps.weight.in_sum2';
  await refuses(build({ tensors: edit(cName, (t) => ({ ...t, dims: [1, 2], data: [1, 2] })) }).bytes, 'BAD_SHAPE', [
    '2 counts',
    '3 matrices',
  ]);
  await refuses(
    build({ tensors: edit(sName, (t) => ({ ...t, dims: [4, 3, 2], data: new Array(24).fill(1) })) }).bytes,
    'BAD_SHAPE',
    [sName],
  );
  await refuses(build({ tensors: edit(sName, (t) => ({ ...t, dims: [0, 3], data: [] })) }).bytes, 'BAD_SHAPE', [
    sName,
    'no elements',
  ]);
  const withAct = { ...one, inSum: [1, 2, 3, 4, 5, 6, 7, 8] };
  await refuses(
    build({ tensors: edit(`${one.name}.in_sum`, (t) => ({ ...t, dims: [4], data: [1, 2, 3, 4] })) }, [withAct]).bytes,
    'BAD_SHAPE',
    [`${one.name}.in_sum`],
  );
  // Not F32: F16 (8 values, 16 bytes, padding keeps the offsets) and a type id blockquant does not know.
  await refuses(
    build({ tensors: edit(`${one.name}.in_sum2`, (t) => ({ ...t, type: GGMLType.F16 })) }).bytes,
    'BAD_TYPE',
    [`${one.name}.in_sum2`, 'F32'],
  );
  await refuses(build({ tensors: edit(cName, (t) => ({ ...t, type: 77 })) }).bytes, 'BAD_TYPE', [cName]);
  // Values: NaN, infinities, negative sums or counts, fractional counts.
  const f0 = build({});
  const at = (name, i) => f0.dataOffset + f0.tensors.find((t) => t.name === name).offset + 4 * i;
  for (const [name, i, v, why] of [
    [sName, 5, NaN, 'sum of squares'],
    [sName, 0, Infinity, 'sum of squares'],
    [sName, 23, -1, 'sum of squares'],
    [sName, 7, -Infinity, 'sum of squares'],
    [cName, 1, NaN, 'count'],
    [cName, 2, -3, 'count'],
    [cName, 0, 1.5, 'whole number'],
    [cName, 0, Infinity, 'count'],
  ]) {
    const bad = build({ tensors: edit(name, (t) => ({ ...t, data: t.data.map((x, k) => (k === i ? v : x)) })) });
    await refuses(bad.bytes, 'BAD_VALUE', [`${name}[${i}]`, why], at(name, i));
  }
  // A NaN with a payload in the activations (unused for the weights, still a broken file).
  const actName = `${one.name}.in_sum`;
  const nanAct = imatrixGGUF([withAct], {});
  const bytes = nanAct.bytes.slice();
  const off = nanAct.dataOffset + nanAct.tensors.find((t) => t.name === actName).offset + 8;
  new DataView(bytes.buffer).setUint32(off, 0x7fc01234, true);
  await refuses(bytes, 'BAD_VALUE', [`${actName}[2]`], off);
  // No entries at all; an unrelated tensor alone.
  const none = imatrixGGUF([], {
    tensors: () => [{ name: 'token_embd.weight', dims: [8], type: 0, data: new Array(8).fill(1) }],
  });
  await refuses(none.bytes, 'NO_ENTRIES');
  // Duplicate names: the GGUF reader's own refusal.
  await refuses(build({ tensors: (list) => [...list, list[0]] }).bytes, 'DUPLICATE_TENSOR');
  // Counts of 0 are fine (weights 1); zero sums give zero weights.
  const zero = await readImatrix(imatrixGGUF([{ name: 'z', ne0: 4, sums: [0, 0, 0, 0], counts: [0] }]).bytes);
  assert.deepEqual(Array.from(zero.entries.get('z').values), [1, 1, 1, 1]);
});

test('hostile .dat files are refused naming the entry and offset', async () => {
  const e = (name, ncall, values) => ({ name, ncall, values });
  const good = [e('blk.0.attn_q.weight', 4, [1, 2, 3, 4]), e('blk.0.attn_k.weight', 2, [8, 6])];
  await refuses(imatrixDat([], {}).bytes, 'NO_ENTRIES');
  await refuses(imatrixDat(good, { count: -1 }).bytes, 'NO_ENTRIES');
  await refuses(imatrixDat(good, { count: 2 ** 30 }).bytes, 'LIMIT');
  await refuses(imatrixDat(good, { count: 9 }).bytes, 'TRUNCATED');
  await refuses(imatrixDat([{ ...good[0], nameLength: 0 }]).bytes, 'BAD_NAME', ['entry #0']);
  await refuses(imatrixDat([{ ...good[0], nameLength: -5 }]).bytes, 'BAD_NAME');
  await refuses(imatrixDat([{ ...good[0], nameLength: 5000 }]).bytes, 'LIMIT');
  await refuses(imatrixDat([{ ...good[0], nameLength: 2 ** 31 - 1 }]).bytes, 'LIMIT');
  await refuses(imatrixDat([e(new Uint8Array([0x62, 0, 0x63]), 1, [1])]).bytes, 'BAD_NAME', ['NUL'], 8);
  await refuses(imatrixDat([e(new Uint8Array([0x62, 0xff]), 1, [1])]).bytes, 'BAD_NAME', ['UTF-8'], 8);
  await refuses(imatrixDat([good[0], good[1], good[0]]).bytes, 'DUPLICATE_NAME', ['blk.0.attn_q.weight']);
  await refuses(imatrixDat([e('a', -1, [1])]).bytes, 'BAD_COUNT', ['a', 'ncall'], 9);
  await refuses(imatrixDat([{ ...e('a', 1, [1]), nval: 0 }]).bytes, 'BAD_COUNT', ['a'], 13);
  await refuses(imatrixDat([{ ...e('a', 1, [1]), nval: -7 }]).bytes, 'BAD_COUNT', ['a']);
  await refuses(imatrixDat([{ ...e('a', 1, [1]), nval: 2 ** 29 }]).bytes, 'LIMIT', ['a']);
  await refuses(imatrixDat([{ ...e('a', 1, [1]), nval: 3 }], { trailer: false }).bytes, 'TRUNCATED', ['a']);
  for (const v of [NaN, Infinity, -Infinity, -2]) {
    const f = imatrixDat([good[0], e('b', 1, [1, 2, v])]);
    await refuses(f.bytes, 'BAD_VALUE', ['b[2]'], f.valueAt[1] + 8);
  }
  await refuses(imatrixDat(good, { lastChunk: -1 }).bytes, 'BAD_COUNT', ['chunk count']);
  await refuses(imatrixDat(good, { datasetLength: -1 }).bytes, 'BAD_NAME', ['dataset']);
  await refuses(imatrixDat(good, { datasetLength: 99 }).bytes, 'TRUNCATED', ['dataset name']);
  await refuses(imatrixDat(good, { extra: [0] }).bytes, 'TRAILING_DATA');
  await refuses(imatrixDat(good, { dataset: new Uint8Array([0xc3]) }).bytes, 'BAD_NAME', ['dataset']);
  // Not a .dat at all (and not GGUF): refused, never a crash.
  await refuses(new TextEncoder().encode('hello, world, this is text'), 'LIMIT'); // 'hell' as a count
  await refuses(new Uint8Array([0, 0, 0, 0, 1, 2, 3]), 'NO_ENTRIES');
  await refuses(new Uint8Array(0), 'TRUNCATED');
});

test('truncation at every offset is a GGUFError (except where a shorter file is itself valid)', async () => {
  const g = imatrixGGUF(ENTRIES.slice(0, 2), { datasets: ['a'] });
  const full = await readImatrix(g.bytes);
  // The last tensor's own bytes end before its padding; a file cut in that padding is whole.
  const last = ENTRIES[1];
  const lastEnd = g.dataOffset + g.tensors[g.tensors.length - 1].offset + 4 * last.inSum.length;
  for (let n = 0; n < g.bytes.length; n++) {
    const p = g.bytes.slice(0, n);
    if (n >= lastEnd) assert.deepEqual((await readImatrix(p)).entries, full.entries, `gguf prefix ${n}`);
    else await assert.rejects(readImatrix(p), GGUFError, `gguf prefix ${n}`);
  }
  const d = imatrixDat(
    [
      { name: 'blk.0.attn_q.weight', ncall: 4, values: [1, 2, 3, 4] },
      { name: 'blk.0.attn_k.weight', ncall: 2, values: [8, 6] },
    ],
    { dataset: 'x.txt' },
  );
  const fullDat = await readImatrix(d.bytes);
  for (let n = 0; n < d.bytes.length; n++) {
    const p = d.bytes.slice(0, n);
    if (n === d.entriesEnd) {
      const m = await readImatrix(p); // a file from before the trailer
      assert.deepEqual(m.entries, fullDat.entries);
      assert.equal(m.chunkCount, null);
    } else await assert.rejects(readImatrix(p), GGUFError, `dat prefix ${n}`);
  }
});

test(`seeded fuzz: every mutant of either format reads or throws GGUFError, weights finite, seed ${SEED}`, async () => {
  const r = rng(SEED + 3);
  const seeds = [
    imatrixGGUF(ENTRIES, { datasets: DATASETS }).bytes,
    imatrixGGUF(ENTRIES.slice(0, 1), { le: false }).bytes,
    imatrixDat([
      { name: 'blk.0.attn_q.weight', ncall: 4, values: sumsOf(r, 16) },
      { name: 'blk.0.ffn_up.weight', ncall: 0, values: sumsOf(r, 8) },
    ]).bytes,
  ];
  const tally = { read: 0, refused: 0 };
  const pick = (n) => Math.floor(r.next() * n);
  for (let i = 0; i < 1500; i++) {
    const src = seeds[i % seeds.length];
    let m = src.slice();
    for (let k = 1 + pick(3); k > 0; k--) {
      const kind = pick(5);
      const at = pick(m.length);
      const dv = new DataView(m.buffer, m.byteOffset, m.byteLength);
      if (kind === 0) m[at] = pick(256);
      else if (kind === 1) m[at] ^= 1 << pick(8);
      else if (kind === 2) m = m.slice(0, at);
      else if (kind === 3 && at + 4 <= m.length)
        dv.setInt32(at & ~3, [0, -1, 1, 2 ** 31 - 1, -(2 ** 31), 0x7fc00001, 0xff800000 | 0, pick(1e6)][pick(8)], true);
      else if (kind === 4 && at + 4 <= m.length) dv.setFloat32(at & ~3, [NaN, -1, Infinity, 0.5, 1e38][pick(5)], true);
    }
    const where = `seed ${SEED}, case ${i}`;
    let got;
    try {
      got = await readImatrix(m);
    } catch (e) {
      if (!(e instanceof GGUFError)) throw new Error(`${where}: threw ${e?.stack ?? e}`);
      assert.equal(typeof e.code, 'string', where);
      assert.ok(Number.isSafeInteger(e.offset) && e.offset >= 0, where);
      tally.refused++;
      continue;
    }
    for (const e of got.entries.values()) {
      for (const v of e.values) assert.ok(Number.isFinite(v) && v >= 0, `${where}: ${e.name} weight ${v}`);
      assert.equal(
        e.weights.reduce((s, w) => s + w.length, 0),
        e.values.length,
        where,
      );
    }
    tally.read++;
  }
  assert.ok(tally.read > 50 && tally.refused > 300, JSON.stringify(tally));
});

// The fixture pair: one small model's importance matrix in both formats, as llama-imatrix would
// have saved it (tests/fixtures/PROVENANCE.md). Sums and counts are chosen so that every weight
// is exact: the expected values are written out here, not computed.
const FIX = new URL('./fixtures/imatrix/', import.meta.url);
const TINY = [
  // attn_q: 1024 tokens (2 chunks of 512)
  { name: 'blk.0.attn_q.weight', ne0: 8, sums: [1024, 512, 256, 0, 2048, 3072, 128, 64], counts: [1024] },
  // 2 experts of 4 columns; expert 1 never routed
  { name: 'blk.0.ffn_up_exps.weight', ne0: 4, sums: [96, 48, 24, 12, 0, 0, 0, 0], counts: [48, 0] },
];
const TINY_WEIGHTS = {
  'blk.0.attn_q.weight': [[1, 0.5, 0.25, 0, 2, 3, 0.125, 0.0625]],
  'blk.0.ffn_up_exps.weight': [
    [2, 1, 0.5, 0.25],
    [1, 1, 1, 1],
  ],
};
const tinyFiles = () => ({
  gguf: imatrixGGUF(TINY, { datasets: ['tiny-calibration.txt'], chunkCount: 2, chunkSize: 512 }).bytes,
  // save_imatrix_legacy of the same statistics: ncall = ceil(max count / 512); stored value =
  // (sum / count) * ncall, and 1 * ncall for the expert without data. Entries in name order.
  dat: imatrixDat(
    [
      { name: 'blk.0.attn_q.weight', ncall: 2, values: [2, 1, 0.5, 0, 4, 6, 0.25, 0.125] },
      { name: 'blk.0.ffn_up_exps.weight', ncall: 1, values: [2, 1, 0.5, 0.25, 1, 1, 1, 1] },
    ],
    { lastChunk: 2, dataset: 'tiny-calibration.txt' },
  ).bytes,
});

test('the tiny fixture pair reads to the same weights in both formats', async () => {
  if (process.env.BQ_WRITE_FIXTURES) {
    const t = tinyFiles();
    writeFileSync(new URL('tiny.imatrix.gguf', FIX), t.gguf);
    writeFileSync(new URL('tiny.imatrix.dat', FIX), t.dat);
  }
  const files = {
    gguf: new Uint8Array(readFileSync(new URL('tiny.imatrix.gguf', FIX))),
    dat: new Uint8Array(readFileSync(new URL('tiny.imatrix.dat', FIX))),
  };
  // The committed bytes are what the writer above makes (so the fixtures and the format notes agree).
  assert.deepEqual(files, tinyFiles());
  const g = await readImatrix(new URL('tiny.imatrix.gguf', FIX).pathname);
  const d = await readImatrix(new URL('tiny.imatrix.dat', FIX).pathname);
  assert.deepEqual([g.format, g.chunkCount, g.chunkSize, g.datasets], ['gguf', 2, 512, ['tiny-calibration.txt']]);
  assert.deepEqual([d.format, d.chunkCount, d.chunkSize, d.datasets], ['dat', 2, null, ['tiny-calibration.txt']]);
  for (const [name, mats] of Object.entries(TINY_WEIGHTS)) {
    assert.deepEqual(
      g.entries.get(name).weights.map((w) => Array.from(w)),
      mats,
      `gguf ${name}`,
    );
    assert.deepEqual(
      d.weightsFor(name, mats[0].length, mats.length).map((w) => Array.from(w)),
      mats,
      `dat ${name}`,
    );
  }
});
