// The demo's teaching text and number formatting against ggml: the MXFP4 note's table and scale
// rebuild ggml's own dequantized values (libggml through tests/lib/ggml.js); the Q4_1 note's
// quantizer rule gives ggml's stored d and m, and its "about min … max" is checked on a block whose
// decoded ends differ from the block's; float32 metadata shows its shortest round-trip decimal; small
// counts show in K.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOTES } from '../demo/notes.js';
import { shortestF32, fmtCount } from '../demo/numbers.js';
import { metaRows, metaArrayPage } from '../demo/viewer-data.js';
import { GGMLType, GGUFValueType as VT } from '../js/node.js';
import * as ggml from './lib/ggml.js';
import { rng, SEED } from './lib/helpers.js';

const half = (/** @type {number} */ h) => {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
};

test(`MXFP4's note: its doubled table and halved scale are ggml's values (seed ${SEED})`, () => {
  const note = NOTES.mxfp4;
  const m = /kvalues_mxfp4 = 2 × E2M1: ([\d, ]+)\)/.exec(note);
  assert.ok(m, note);
  const table = m[1].split(',').map(Number);
  assert.equal(table.length, 8);
  assert.match(note, /2\^\(e − 128\)/);
  assert.doesNotMatch(note, /halves the table and doubles the scale/);
  const r = rng(SEED);
  const n = 32 * 64;
  const x = Float32Array.from({ length: n }, () => r.normal() * 10 ** (r.next() * 6 - 3));
  const [q] = ggml.quantize([{ type: GGMLType.MXFP4, x, cols: n }]);
  assert.ok(q);
  const [y] = ggml.dequantize([{ type: GGMLType.MXFP4, q, n }]);
  for (let b = 0; b < n / 32; b++) {
    const e = q[b * 17];
    for (let j = 0; j < 32; j++) {
      const byte = q[b * 17 + 1 + (j % 16)];
      const code = j < 16 ? byte & 15 : byte >> 4;
      const v = (code & 8 ? -1 : 1) * table[code & 7] * 2 ** (e - 128);
      assert.ok(
        Object.is(Math.fround(v), y[b * 32 + j]) || (v === 0 && y[b * 32 + j] === 0),
        `block ${b} element ${j}`,
      );
    }
  }
});

test(`Q4_1's note: d = (max − min) / 15 and m = min, stored as f16, span about min … max (seed ${SEED})`, () => {
  const note = NOTES.q4_1;
  assert.match(note, /d = \(max − min\) \/ 15/);
  assert.match(note, /m = min/);
  assert.match(note, /about min … max/);
  assert.doesNotMatch(note, /min … max of the block exactly/);
  const r = rng(SEED + 1);
  const n = 32 * 256;
  const x = Float32Array.from({ length: n }, () => r.normal() + 0.3);
  const [q] = ggml.quantize([{ type: GGMLType.Q4_1, x, cols: n }]);
  assert.ok(q);
  const [y] = ggml.dequantize([{ type: GGMLType.Q4_1, q, n }]);
  let inexact = 0;
  for (let b = 0; b < n / 32; b++) {
    const v = x.subarray(b * 32, b * 32 + 32);
    const lo = Math.min(...v),
      hi = Math.max(...v);
    const d = half(q[b * 20] | (q[b * 20 + 1] << 8)),
      mm = half(q[b * 20 + 2] | (q[b * 20 + 3] << 8));
    // The stored f16 values are the nearest halves of the rule's float32 values: within half an f16 ulp.
    const ulp = (/** @type {number} */ a) => 2 ** (Math.floor(Math.log2(Math.abs(a))) - 10);
    const dRule = Math.fround((hi - lo) / 15);
    assert.ok(Math.abs(d - dRule) <= ulp(dRule) / 2, `block ${b}: d ${d} from (max − min) / 15 = ${dRule}`);
    assert.ok(Math.abs(mm - lo) <= ulp(lo) / 2, `block ${b}: m ${mm} from min ${lo}`);
    const w = y.subarray(b * 32, b * 32 + 32);
    if (Math.min(...w) !== lo || Math.max(...w) !== hi) inexact++;
  }
  assert.ok(inexact > 0, 'some block does not decode to exactly min … max');
});

test('float32 metadata shows its shortest round-trip decimal; counts in K', () => {
  // Written out here: the decimals a person types for these float32 values.
  const cases = /** @type {[number, string][]} */ ([
    [1e-5, '1e-5'],
    [1e-6, '1e-6'],
    [0.0001, '0.0001'],
    [1.5e-7, '1.5e-7'],
    [0.1, '0.1'],
    [10000, '10000'],
    [500000, '500000'],
    [1 / 3, '0.33333334'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [1.401298464324817e-45, '1e-45'],
    [-0, '-0'],
    [NaN, 'NaN'],
  ]);
  for (const [v, s] of cases) {
    assert.equal(shortestF32(v), s, `${v}`);
    assert.equal(Math.fround(Number(shortestF32(v))), Math.fround(v));
  }
  const kv = [
    { key: 'llama.attention.layer_norm_rms_epsilon', type: VT.FLOAT32, value: Math.fround(1e-5) },
    { key: 'x.f64', type: VT.FLOAT64, value: 0.1 },
    { key: 'x.list', type: VT.ARRAY, itemType: VT.FLOAT32, value: Float32Array.of(1e-5, 0.1) },
  ];
  const rows = metaRows(kv);
  assert.notEqual(rows[0].preview, String(Math.fround(1e-5)));
  assert.equal(rows[0].preview, '1e-5');
  assert.equal(rows[1].preview, '0.1');
  assert.equal(rows[2].preview, '[1e-5, 0.1]');
  assert.deepEqual(metaArrayPage(kv, 'x.list', 0, 2).items, ['1e-5', '0.1']);
  assert.equal(fmtCount(12345), '12.3 K');
  assert.equal(fmtCount(512), '512');
  assert.equal(fmtCount(4_500_000), '4.50 M');
  assert.equal(fmtCount(1_230_000_000), '1.23 B');
});
