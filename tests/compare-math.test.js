// "Compare with…"'s numbers (demo/compare-math.js, demo/compare-run.js) against values this test
// computes itself: plain loops over arrays decoded here with bq.dequantize from parseGGUF's bytes
// (or from quantizeModel's output file, for A quantized in memory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openGGUF, parseGGUF, planQuantize, quantizeModel, typeInfo } from '../js/node.js';
import { codec, rng, SEED } from './lib/helpers.js';
import { compareModels, LAYERS, B_TYPES } from './lib/compare-fixture.js';
import {
  addChunk,
  blockAt,
  cellErrors,
  commonCell,
  emptySums,
  layerOf,
  matchTensors,
  snrByLayer,
  summarize,
} from '../demo/compare-math.js';
import { cellBlocks, cellMaps, chunksOf, compareAll, filePairs, planPairs, CHUNK_VALUES } from '../demo/compare-run.js';

const bq = await codec();

/** The error of b against a as this test computes it: element order, doubles, NaN/Inf pairs left out. */
function expected(/** @type {ArrayLike<number>} */ a, /** @type {ArrayLike<number>} */ b) {
  let se = 0,
    sig = 0,
    max = 0,
    n = 0;
  for (let i = 0; i < a.length; i++) {
    if (!Number.isFinite(a[i]) || !Number.isFinite(b[i])) continue;
    const d = b[i] - a[i];
    se += d * d;
    sig += a[i] * a[i];
    max = Math.max(max, Math.abs(d));
    n++;
  }
  return { rmse: Math.sqrt(se / n), maxAbs: max, snr: se === 0 ? Infinity : 10 * Math.log10(sig / se), n };
}

test('sums over chunks of any size equal one loop over the whole (seed ' + SEED + ')', () => {
  const r = rng(SEED);
  const x = Float32Array.from({ length: 3000 }, () => r.normal());
  const q = bq.dequantize('q4_0', bq.quantize('q4_0', x.subarray(0, 2976)));
  const a = x.subarray(0, 2976);
  a[17] = NaN; // left out, counted
  const want = expected(a, q);
  for (const step of [1, 7, 32, 1000, 2976]) {
    const s = emptySums();
    for (let i = 0; i < a.length; i += step) addChunk(s, a.subarray(i, i + step), q.subarray(i, i + step));
    const got = summarize(s);
    assert.equal(got.rmse, want.rmse, `chunks of ${step}`);
    assert.equal(got.maxAbs, want.maxAbs);
    assert.equal(got.snr, want.snr);
    assert.equal(got.n, want.n);
    assert.equal(got.skipped, 1);
  }
  assert.equal(summarize(addChunk(emptySums(), a, a)).snr, Infinity);
  assert.ok(Number.isNaN(summarize(emptySums()).rmse), 'nothing compared: no number');
  assert.throws(() => addChunk(emptySums(), a, q.subarray(1)), RangeError);
});

test('cellErrors: per cell RMSE, max and mean of B - A', () => {
  const a = Float32Array.from({ length: 512 }, (_, i) => Math.sin(i));
  const b = bq.dequantize('q4_K', bq.quantize('q4_K', a));
  const c = cellErrors(a, b, 256);
  for (let k = 0; k < 2; k++) {
    const w = expected(a.subarray(k * 256, (k + 1) * 256), b.subarray(k * 256, (k + 1) * 256));
    let sum = 0;
    for (let i = k * 256; i < (k + 1) * 256; i++) sum += b[i] - a[i];
    assert.equal(c.rmse[k], Math.fround(w.rmse));
    assert.equal(c.max[k], Math.fround(w.maxAbs));
    assert.equal(c.mean[k], Math.fround(sum / 256));
  }
  const nan = a.slice(0, 32).fill(NaN);
  assert.ok(Number.isNaN(cellErrors(nan, nan, 32).rmse[0]));
});

test('names, cells and covering blocks', () => {
  assert.deepEqual(layerOf('blk.12.attn_q.weight'), { layer: 12, role: 'attn_q' });
  assert.deepEqual(layerOf('blk.3.ffn_gate_exps.weight'), { layer: 3, role: 'ffn_gate_exps' });
  assert.deepEqual(layerOf('token_embd.weight'), { layer: null, role: 'token_embd' });
  assert.equal(commonCell(typeInfo('f16').id ?? 1, typeInfo('q4_0').id ?? 2), 32);
  assert.equal(commonCell(2, 12), 256); // Q4_0 against Q4_K
  assert.equal(commonCell(1, 1), 1);
  // Element 300 of a Q4_0 tensor is in block 9 (elements 288..319), bytes 162..179.
  assert.deepEqual(blockAt(2, 300), { block: 9, first: 288, count: 32, byteStart: 162, byteLength: 18 });
  assert.deepEqual(blockAt(12, 300), { block: 1, first: 256, count: 256, byteStart: 144, byteLength: 144 });
  const s = snrByLayer([
    { name: 'blk.1.attn_q.weight', snr: 20 },
    { name: 'blk.0.attn_q.weight', snr: 21 },
    { name: 'output.weight', snr: 9 },
    { name: 'blk.0.ffn_down.weight', snr: 30 },
  ]);
  assert.deepEqual(s, [
    {
      role: 'attn_q',
      points: [
        { layer: 0, snr: 21 },
        { layer: 1, snr: 20 },
      ],
    },
    { role: 'ffn_down', points: [{ layer: 0, snr: 30 }] },
  ]);
  // Chunks: whole rows, at most CHUNK_VALUES values, never across an expert matrix.
  assert.deepEqual(chunksOf([256, 4200]), [
    [0, CHUNK_VALUES / 256],
    [CHUNK_VALUES / 256, 4200 - CHUNK_VALUES / 256],
  ]);
  assert.deepEqual(chunksOf([256, 3, 2]), [
    [0, 3],
    [3, 3],
  ]);
  assert.deepEqual(chunksOf([256, 10], 4), [[0, 4]]);
});

const { a: aBytes, b: bBytes } = compareModels(bq);
const ga = parseGGUF(aBytes),
  gb = parseGGUF(bBytes);

test('matchTensors: by name and shape; the rest listed with why', () => {
  const { pairs, mismatched } = matchTensors(ga.tensors, gb.tensors);
  assert.deepEqual(
    mismatched.map((m) => m.name),
    ['only_in_a.weight', 'reshaped.weight', 'only_in_b.weight'],
  );
  assert.match(mismatched[1].why, /shape 256×8 in A, 512×4 in B/);
  assert.equal(mismatched[0].why, 'only in A');
  assert.equal(mismatched[2].why, 'only in B');
  assert.equal(pairs.length, ga.tensors.length - 2);
  // A [4096, 1] tensor is the same shape as [4096] (ggml_n_dims).
  const t = (/** @type {number[]} */ dims) => ({ name: 'x', type: 0, dims, nElements: 4096 });
  assert.equal(matchTensors([t([4096, 1])], [t([4096])]).pairs.length, 1);
  // Integer tensors have no float values to compare.
  const i32 = { name: 'x', type: 26, dims: [4], nElements: 4 };
  assert.match(matchTensors([i32], [i32]).mismatched[0].why, /no float values/);
});

test("compareAll of two files: every tensor equals this test's loops; cells and blocks too", async () => {
  const fa = await openGGUF(aBytes),
    fb = await openGGUF(bBytes);
  const { pairs } = filePairs(fa, fb);
  /** @type {number[]} */
  const seen = [];
  const got = await compareAll(bq, fa, { kind: 'file', file: fb }, pairs, { onProgress: (p) => seen.push(p.values) });
  assert.ok(seen.length > pairs.length, 'progress per chunk (token_embd has two)');
  assert.deepEqual(
    seen,
    [...seen].sort((x, y) => x - y),
  );
  const total = pairs.reduce((s, p) => s + p.dims.reduce((x, y) => x * y, 1), 0);
  assert.equal(seen.at(-1), total);
  for (const r of got) {
    const ta = /** @type {any} */ (ga.tensors.find((t) => t.name === r.name));
    const tb = /** @type {any} */ (gb.tensors.find((t) => t.name === r.name));
    const xa = bq.dequantize(ta.type, ga.tensorBytes(r.name));
    const xb = bq.dequantize(tb.type, gb.tensorBytes(r.name));
    const w = expected(xa, xb);
    assert.equal(r.rmse, w.rmse, r.name);
    assert.equal(r.maxAbs, w.maxAbs, r.name);
    assert.equal(r.snr, w.snr, r.name);
    assert.equal(r.bType, typeInfo(tb.type).name);
  }
  assert.equal(got.find((r) => r.name === 'blk.0.attn_norm.weight')?.snr, Infinity, 'the same f32 values');
  const role = (/** @type {string} */ n) => /** @type {keyof typeof B_TYPES} */ (n);
  assert.equal(got.find((r) => r.name === 'blk.1.attn_k.weight')?.bType, B_TYPES[role('attn_k')]);

  // Cells of the F16 / Q4_K pair are 256 values; block 1 of row 3 is cell 3 * 1 + 1.
  const p = /** @type {any} */ (pairs.find((x) => x.name === 'blk.2.attn_k.weight'));
  const xa = bq.dequantize('f16', ga.tensorBytes(p.name));
  const qb = gb.tensorBytes(p.name);
  const xb = bq.dequantize('q4_K', qb);
  const m = await cellMaps(bq, fa, { kind: 'file', file: fb }, p, 1 << 20);
  assert.equal(m.cell, 256);
  assert.equal(m.perRow, 1);
  assert.equal(m.rows, 128);
  const c = 3;
  assert.equal(
    m.rmse[c],
    Math.fround(expected(xa.subarray(c * 256, c * 256 + 256), xb.subarray(c * 256, c * 256 + 256)).rmse),
  );
  const k = await cellBlocks(bq, fa, { kind: 'file', file: fb }, p, c, 40);
  assert.equal(k.element, c * 256 + 40);
  assert.deepEqual([...k.b.bytes], [...qb.subarray(c * 144, c * 144 + 144)]);
  assert.equal(k.b.block, 3);
  // A's block is the F16 element 40 of the cell: 2 bytes.
  const ab = ga.tensorBytes(p.name);
  assert.deepEqual([...k.a.bytes], [...ab.subarray((c * 256 + 40) * 2, (c * 256 + 40) * 2 + 2)]);
  assert.deepEqual([...k.a.values], [...xa.subarray(c * 256, c * 256 + 256)]);
  assert.deepEqual([...k.b.values], [...xb.subarray(c * 256, c * 256 + 256)]);
  await assert.rejects(cellBlocks(bq, fa, { kind: 'file', file: fb }, p, 128), RangeError);
  // A signal stops the run.
  const ac = new AbortController();
  ac.abort(new Error('stopped'));
  await assert.rejects(compareAll(bq, fa, { kind: 'file', file: fb }, pairs, { signal: ac.signal }), /stopped/);
});

test("A quantized in memory equals comparing with quantizeModel's file", async () => {
  const fa = await openGGUF(aBytes);
  const plan = await planQuantize(fa, { ftype: 'Q4_K_M' });
  const { pairs, mismatched, recipes } = planPairs(fa, plan);
  assert.ok(mismatched.some((m) => m.name === 'blk.0.attn_norm.weight' && /keeps it as f32/.test(m.why)));
  const got = await compareAll(bq, fa, { kind: 'quantize', recipes }, pairs);
  /** @type {Uint8Array[]} */
  const parts = [];
  await quantizeModel(aBytes, (/** @type {Uint8Array} */ c) => void parts.push(c.slice()), { ftype: 'Q4_K_M' });
  const out = new Uint8Array(parts.reduce((s, c) => s + c.length, 0));
  let o = 0;
  for (const c of parts) (out.set(c, o), (o += c.length));
  const gq = parseGGUF(out);
  assert.equal(got.length, pairs.length);
  for (const r of got) {
    const ta = /** @type {any} */ (ga.tensors.find((t) => t.name === r.name));
    const tq = /** @type {any} */ (gq.tensors.find((t) => t.name === r.name));
    assert.equal(r.bType, typeInfo(tq.type).name, r.name);
    const w = expected(bq.dequantize(ta.type, ga.tensorBytes(r.name)), bq.dequantize(tq.type, gq.tensorBytes(r.name)));
    assert.equal(r.rmse, w.rmse, r.name);
    assert.equal(r.snr, w.snr, r.name);
  }
  // The inspector's B block is quantizeModel's block.
  const p = /** @type {any} */ (pairs.find((x) => x.name === `blk.${LAYERS - 1}.ffn_down.weight`));
  const k = await cellBlocks(bq, fa, { kind: 'quantize', recipes }, p, 5);
  const tq = /** @type {any} */ (gq.tensors.find((t) => t.name === p.name));
  const { blockSize, typeSize } = typeInfo(tq.type);
  const at = (5 * k.cellSize) / blockSize;
  assert.deepEqual([...k.b.bytes], [...gq.tensorBytes(p.name).subarray(at * typeSize, (at + 1) * typeSize)]);
});

test('bounded memory: every read of a compare is at most one chunk of rows', async () => {
  /** @type {number[]} */
  const reads = [];
  const source = (/** @type {Uint8Array} */ bytes) => ({
    size: bytes.length,
    read: async (/** @type {number} */ at, /** @type {number} */ n) => {
      reads.push(n);
      return bytes.slice(at, at + n);
    },
  });
  const fa = await openGGUF(source(aBytes)),
    fb = await openGGUF(source(bBytes));
  reads.length = 0; // the headers' reads
  const { pairs } = filePairs(fa, fb);
  await compareAll(bq, fa, { kind: 'file', file: fb }, pairs);
  // token_embd (4200 rows of 256 F16 values, 2.1 MB in A) is read in chunks of CHUNK_VALUES values.
  assert.ok(Math.max(...reads) <= CHUNK_VALUES * 2, `largest read ${Math.max(...reads)} bytes`);
  assert.ok(reads.filter((n) => n === CHUNK_VALUES * 2).length >= 1, 'a whole chunk of F16 rows in one read');
});
