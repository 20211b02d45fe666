// bq.quantize through the public API against llama.cpp's own ggml_quantize_chunk (tests/lib/ggml.js):
// every type blockquant quantizes to, with and without an importance matrix, on hostile rows of
// several lengths, byte for byte; the argument checks; rows larger than staging; the grid types'
// search tables; and the threads build (the same bytes for any thread count). Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { hostileRows, imatrix, IMATRIX_KINDS, ROW_KINDS } from './lib/rows.js';
import { BACKEND, SEED, codec, firstDiff } from './lib/helpers.js';
import { CODEC_TYPES, typeInfo } from '../js/index.js';
import { init } from '../js/index-node.js';

const bq = await codec();

/** The activation formats: blockquant quantizes to them for dots, ggml_quantize_chunk has no case for them. */
const ACTIVATIONS = new Set(['q8_1', 'q8_K']);
const QUANTIZABLE = CODEC_TYPES.map((id) => ({ id, ...typeInfo(id) })).filter(
  (t) => t.quantize && !ACTIVATIONS.has(t.name),
);
/** What the issue asks for: importance weights used exactly as ggml uses them. */
const WEIGHTED = [
  'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K', 'iq4_nl', 'iq4_xs',
  'iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s', 'iq1_s', 'iq1_m',
]; // prettier-ignore

/** Row lengths to try for a type: a few multiples of its block size, one of them 4096. */
const lengthsOf = (t) => [
  ...new Set([t.blockSize, Math.max(256, t.blockSize) * 2, 4096].map((n) => n - (n % t.blockSize))),
];

/**
 * The cases for one type: every row kind over a few row lengths, without weights (where ggml allows)
 * and with every kind of importance vector (weights are ignored by some types: they must still match).
 */
function casesOf(t, seed) {
  const cases = [];
  lengthsOf(t).forEach((cols, li) => {
    const rows = cols >= 4096 ? 3 : ROW_KINDS.length;
    const { x } = hostileRows(rows, cols, seed + li, li * 5);
    if (!t.requiresImatrix) cases.push({ cols, x, imatrix: null, what: `${rows}x${cols} without an imatrix` });
    IMATRIX_KINDS.forEach(([kind], k) => {
      if (cols >= 4096 && k > 1) return;
      const w = imatrix(cols, k, seed + 100 * li + k);
      cases.push({ cols, x, imatrix: w, what: `${rows}x${cols} with a ${kind} imatrix` });
    });
  });
  return cases;
}

test('the types quantize and need weights as ggml says', () => {
  const traits = ggml.traits();
  for (const t of QUANTIZABLE) {
    assert.equal(traits.get(t.id)?.[0], t.name, `${t.name} is ggml type ${t.id}`);
    assert.equal(t.requiresImatrix, traits.get(t.id)?.[3], `${t.name}: requires an imatrix as in ggml`);
  }
  const weighted = QUANTIZABLE.filter((t) => t.weighted).map((t) => t.name);
  assert.deepEqual(weighted.sort(), [...WEIGHTED].sort(), 'the types whose quantizer uses importance weights');
  for (const name of ['iq2_s', 'iq3_xxs', 'iq3_s', 'iq1_m'])
    assert.ok(
      QUANTIZABLE.some((t) => t.name === name && !t.requiresImatrix),
      `${name} quantizes without an imatrix`,
    );
});

for (const t of QUANTIZABLE) {
  test(`quantize ${t.name} on the ${BACKEND} build equals ggml_quantize_chunk, seed ${SEED}`, () => {
    const cases = casesOf(t, SEED + t.id * 1000);
    const want = ggml.quantize(cases.map((c) => ({ type: t.id, x: c.x, cols: c.cols, imatrix: c.imatrix })));
    /** The rows blockquant names where ggml aborts on a matrix, asked of ggml alone afterwards in one
     * oracle run (each run builds ggml's grid tables again, seconds for the IQ1 and IQ2 types). */
    const named = [];
    cases.forEach((c, i) => {
      const opts = c.imatrix ? { imatrix: c.imatrix } : { rowLength: c.cols };
      if (want[i] === null) {
        // ggml aborts on a row of this matrix: blockquant refuses it, naming a row ggml aborts on.
        let row = -1;
        assert.throws(
          () => bq.quantize(t.name, c.x, opts),
          (e) => e instanceof RangeError && /aborts/.test(e.message) && ((row = e.row), true),
          `${t.name} ${c.what}: ggml aborts, so quantize must refuse`,
        );
        named.push({ c, row });
        return;
      }
      const got = bq.quantize(t.name, c.x, opts);
      const d = firstDiff(got, want[i]);
      assert.equal(
        d,
        -1,
        `${t.name} ${c.what}: byte ${d} differs (row ${Math.floor(d / (want[i].length / (c.x.length / c.cols)))})`,
      );
    });
    const alone = ggml.quantize(
      named.map(({ c, row }) => ({
        type: t.id,
        x: c.x.subarray(row * c.cols, (row + 1) * c.cols),
        cols: c.cols,
        imatrix: c.imatrix,
      })),
    );
    named.forEach(({ c, row }, k) =>
      assert.equal(alone[k], null, `${t.name} ${c.what}: ggml aborts on row ${row} alone too`),
    );
  });
}

test('quantize checks its arguments and names the one at fault', () => {
  const x = new Float32Array(512).fill(0.5);
  const w = new Float32Array(256).fill(1);
  for (const t of QUANTIZABLE.filter((t) => t.requiresImatrix)) {
    assert.throws(
      () => bq.quantize(t.name, x),
      (e) => e instanceof TypeError && /importance matrix/.test(e.message) && e.message.includes(t.name),
    );
  }
  const bad = [
    ['q4_0', { imatrix: new Float32Array(100) }, /rowLength 100 is not a multiple of 32/],
    ['q4_K', { imatrix: new Float32Array(128) }, /rowLength 128 is not a multiple of 256/],
    ['q4_0', { imatrix: w, rowLength: 512 }, /imatrix holds 256 weights/],
    ['q4_0', { rowLength: 96 }, /not a whole number of rows/],
    ['q4_0', { rowLength: 0 }, /rowLength must be a positive integer/],
    ['q4_0', { rowLength: 2.5 }, /rowLength must be a positive integer/],
    ['q4_0', { imatrix: w.map((v, j) => (j === 7 ? NaN : v)) }, /imatrix\[7\] is NaN/],
    ['q4_0', { imatrix: w.map((v, j) => (j === 9 ? Infinity : v)) }, /imatrix\[9\] is Infinity/],
    ['q4_0', { imatrix: w.map((v, j) => (j === 3 ? -0.5 : v)) }, /imatrix\[3\] is -0.5/],
    ['q4_0', { out: new Uint8Array(7) }, /out holds 7 bytes/],
  ];
  for (const [type, options, re] of bad) {
    assert.throws(
      () => bq.quantize(type, x, options),
      (e) => e instanceof RangeError && re.test(e.message),
      `${type} ${re}`,
    );
  }
  assert.throws(() => bq.quantize('q4_0', x, { imatrix: [1, 2] }), TypeError);
  assert.throws(() => bq.quantize('q4_0', Array.from(x)), TypeError);
  assert.throws(
    () => bq.quantize('i32', new Float32Array(4)),
    (e) => e instanceof TypeError && /i32/.test(e.message),
  );
  // Types whose ggml quantizer ignores weights take them (and still check them).
  assert.deepEqual(bq.quantize('q8_0', x, { imatrix: w }), bq.quantize('q8_0', x));
  assert.throws(() => bq.quantize('q8_0', x, { imatrix: w.map(() => -1) }), RangeError);
  // The older form: out as the third argument.
  const out = new Uint8Array(bq.quantize('q4_0', x).length);
  assert.equal(bq.quantize('q4_0', x, out), out);
  assert.deepEqual(out, bq.quantize('q4_0', x));
});

test('rows larger than staging quantize in heap scratch, with the same bytes', async () => {
  const small = await codec({ stagingBytes: 4096 });
  const cols = 8192;
  const { x } = hostileRows(3, cols, SEED + 7);
  const w = imatrix(cols, 0, SEED + 8);
  for (const t of QUANTIZABLE.filter((t) => t.weighted)) {
    const a = small.quantize(t.name, x, { imatrix: w });
    const b = bq.quantize(t.name, x, { imatrix: w });
    assert.equal(firstDiff(a, b), -1, `${t.name}: a 4 KB staging region gives the same bytes`);
  }
  assert.equal(small.residentBytes, 0, 'the scratch is freed');
});

test('the grid types build their search tables once, in this codec, and free them', async () => {
  const c = await codec();
  const grid = QUANTIZABLE.filter((t) => c.exports.bq_quant_tables_bytes(t.id) > 0).map((t) => t.name);
  assert.deepEqual(grid.sort(), ['iq1_m', 'iq1_s', 'iq2_s', 'iq2_xs', 'iq2_xxs', 'iq3_s', 'iq3_xxs']);
  assert.equal(c.tableBytes, 0);
  const before = c.memoryBytes;
  const bytes = c.prepareQuantize('iq1_s');
  assert.ok(bytes > 1 << 20, `IQ1_S's tables take ${bytes} bytes`);
  assert.ok(c.tableBytes >= bytes && c.memoryBytes >= before + bytes - (4 << 20));
  assert.equal(c.prepareQuantize('iq1_m'), bytes, 'IQ1_M shares them');
  assert.equal(c.tableBytes, c.prepareQuantize('iq1_s') && c.tableBytes, 'built once');
  assert.equal(c.residentBytes, 0, 'tables are not tensors');
  const x = hostileRows(2, 512, SEED + 9).x;
  const w = imatrix(512, 0, SEED + 10);
  const first = c.quantize('iq1_s', x, { imatrix: w });
  c.freeTables();
  assert.equal(c.tableBytes, 0);
  assert.equal(c.exports.bq_quant_tables_ready(19), 0);
  assert.deepEqual(c.quantize('iq1_s', x, { imatrix: w }), first, 'rebuilt on the next quantize, the same bytes');
  assert.ok(c.tableBytes > 0);
});

test(`a threaded quantize (the clang-19 threads build) writes the bytes of the ${BACKEND} build`, async () => {
  const tc = await init({ threads: 2, minSplitBytes: 0, roundBytes: 1 << 16 });
  try {
    assert.equal(tc.threads, 2);
    for (const t of QUANTIZABLE) {
      const cols = Math.max(256, t.blockSize) * 2;
      const { x } = hostileRows(ROW_KINDS.length * 2, cols, SEED + t.id);
      const w = imatrix(cols, 0, SEED + t.id + 1);
      const opts = t.weighted ? { imatrix: w } : { rowLength: cols };
      let one;
      try {
        one = bq.quantize(t.name, x, opts);
      } catch (e) {
        // Rows ggml aborts on: the threaded codec refuses them too, naming the same row.
        await assert.rejects(tc.quantize(t.name, x, opts), (f) => f instanceof RangeError && f.row === e.row);
        continue;
      }
      const two = await tc.quantize(t.name, x, opts);
      assert.equal(firstDiff(two, one), -1, `${t.name}: 2 threads give the bytes of 1`);
    }
  } finally {
    tc.close();
  }
});

test("MXFP4 at every shared exponent: maxima at and just below each power of two, values at the codes' midpoints", () => {
  const f = (bits) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];
  const bits = (v) => new Uint32Array(new Float32Array([v]).buffer)[0];
  const rows = [];
  // Each kind of maximum over every exponent in turn, so that neighbouring blocks (which the SIMD128
  // quantizer takes four at a time) are of one kind: all on its exponent-field path, or all off it.
  for (const below of [0, 1, 255, 256]) {
    for (let e = 1; e < 255; e++) {
      const amax = f(bits(2 ** (e - 127)) - below);
      if (!Number.isFinite(amax) || amax === 0) continue;
      const row = new Float32Array(32);
      row[0] = e % 2 ? amax : -amax;
      // The midpoints between neighbouring magnitudes of the table at this block's scale, and a
      // float either side of each: where the first-nearest rule decides.
      const d = 2 ** (Math.floor(Math.log2(amax)) - 2 - 1);
      const mags = [0, 1, 2, 3, 4, 6, 8, 12];
      for (let j = 1; j < 32; j++) {
        const m = ((mags[j % 7] + mags[(j % 7) + 1]) / 2) * d;
        const v = f(bits(m) + ((j % 3) - 1));
        row[j] = j % 2 ? v : -v;
      }
      rows.push(row);
    }
  }
  const x = new Float32Array(rows.length * 32);
  rows.forEach((r, i) => x.set(r, 32 * i));
  const [want] = ggml.quantize([{ type: 39, x, cols: 32 }]);
  const got = bq.quantize('mxfp4', x, { rowLength: 32 });
  const d = firstDiff(got, want);
  assert.equal(d, -1, `byte ${d} of block ${Math.floor(d / 17)} (max ${x[32 * Math.floor(d / 17)]}) differs`);
});

// The Q8_0/Q8_1 codes are roundf(x * id), which the SIMD128 quantizer forms as trunc(v +
// copysign(0.49999997, v)): blocks whose maximum is 127 (so d = 1 and id = 1 exactly) holding every
// half n + 0.5 of the code range and its neighbour floats on both sides, in groups of four blocks
// without NaN (the vector path), byte for byte against ggml's quantizers.
test('Q8_0 and Q8_1 round every half of the code range and its neighbours as ggml', () => {
  const f = (bits) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];
  const bits = (v) => new Uint32Array(new Float32Array([v]).buffer)[0];
  const vals = [];
  for (let n = -127; n < 127; n++) {
    const h = n + 0.5;
    vals.push(h, f(bits(h) - 1), f(bits(h) + 1), n, n === 0 ? 0.49999997 : f(bits(n) + 1));
  }
  const blocks = Math.ceil(vals.length / 31 / 4) * 4;
  const x = new Float32Array(blocks * 32);
  for (let b = 0; b < blocks; b++) {
    x[32 * b] = b % 2 ? -127 : 127;
    for (let j = 1; j < 32; j++) x[32 * b + j] = vals[(31 * b + j - 1) % vals.length];
  }
  const [want0] = ggml.quantize([{ type: 8, x, cols: x.length }]);
  const d0 = firstDiff(bq.quantize('q8_0', x), want0);
  assert.equal(d0, -1, `q8_0: byte ${d0} (block ${Math.floor(d0 / 34)}) differs from ggml`);
  const [want1] = ggml.quantizeRef([{ type: 9, x }]);
  const d1 = firstDiff(bq.quantize('q8_1', x), want1);
  assert.equal(d1, -1, `q8_1: byte ${d1} (block ${Math.floor(d1 / 36)}) differs from ggml`);
});
