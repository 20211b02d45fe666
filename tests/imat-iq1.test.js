// The quantizers of IQ1_S and IQ1_M kernel by kernel: every variant a build exports (public, __ref,
// __simd128) of bq_<t>_quantize_rows against llama.cpp's own ggml_quantize_chunk
// (tests/lib/ggml.js), byte for byte, with importance weights and (IQ1_M) without: on every row
// kind of tests/lib/rows.js and every importance vector kind, on seeded random rows of several
// kinds and seeds, on importance vectors with zeros and with a few huge weights, on rows of many
// super-blocks, and on rows built to make ties in the sort of a sub-block's values (ggml sorts with
// glibc's qsort, a merge sort, so equal values keep their order). Where ggml aborts (its neighbour
// search finds nothing on NaN, Inf or overflowing values, a scale is NaN; IQ1_S without weights),
// the kernel must say so rather than write bytes ggml never writes. Then the statuses: BQ_ENOTABLES
// before the tables are built, BQ_EINVAL for a row length that is not whole super-blocks and for
// IQ1_S without weights. Run on this build, and on the simd128 run also on the clang-19 threads
// build (wasm/blockquant-threads.wasm on a shared memory). Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { hostileRows, imatrix, IMATRIX_KINDS, ROW_KINDS } from './lib/rows.js';
import { BACKEND, SEED, testCodec, firstDiff, rng } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { builds, threadsInstance, variants } from './lib/imat-builds.js';
import { BQ_OK, BQ_EINVAL, BQ_ENOTABLES, BQ_EDOMAIN, runKernel, where } from './lib/imat-cases.js';
import { typeId, byteLength } from '../js/index.js';

console.log(`# imat-iq1 test, ${BACKEND} build, seed ${SEED}`);

const TYPES = ['iq1_s', 'iq1_m'];

const BUILDS = await builds(['iq1_s', 'iq1_m']);
for (const b of BUILDS)
  assert.equal(b.raw.x.bq_quant_tables_ready(typeId('iq1_m')), 1, `${b.name}: iq1_m shares iq1_s's tables`);

/**
 * @typedef {{ x: Float32Array, cols: number, kinds: string[], w: Float32Array | null, wkind: string }} Case
 */

/** The comparison suites, each a function from a type to its cases (defined below). */
/** @type {Record<string, (t: string) => Case[]>} */
const SUITES = {};

/** Every case of every suite of type t with ggml's bytes (null: it aborts), and the rows of each
 * matrix one by one (ggml aborts a whole call for one bad row), from one oracle run per type
 * (each run builds ggml's tables, some seconds). */
const oracle = (() => {
  /** @type {Record<string, Record<string, { cases: Case[], want: (Uint8Array | null)[], singles: { of: number, c: Case, want: Uint8Array | null }[] }>>} */
  const memo = {};
  return (/** @type {string} */ t) => {
    if (memo[t]) return memo[t];
    const suites = Object.entries(SUITES).map(([name, f]) => ({ name, cases: f(t) }));
    const jobs = [];
    for (const s of suites)
      for (const c of s.cases) {
        jobs.push(c);
        if (c.kinds.length > 1)
          c.kinds.forEach((kind, r) => jobs.push({ ...c, x: c.x.slice(r * c.cols, (r + 1) * c.cols), kinds: [kind] }));
      }
    const answers = ggml.quantize(jobs.map((c) => ({ type: typeId(t), x: c.x, cols: c.cols, imatrix: c.w })));
    memo[t] = {};
    let k = 0;
    for (const s of suites) {
      const want = [],
        singles = [];
      s.cases.forEach((c, i) => {
        want.push(answers[k++]);
        for (let r = 0; r < c.kinds.length && c.kinds.length > 1; r++)
          singles.push({ of: i, c: jobs[k], want: answers[k++] });
      });
      memo[t][s.name] = { cases: s.cases, want, singles };
    }
    return memo[t];
  };
})();

/**
 * Checks every variant of every build on every case of suite `suite` of type t against ggml, and
 * on the rows one by one of each matrix ggml aborts on. Returns the cases checked, ggml's answers
 * and how many it quantized.
 * @param {string} t
 * @param {string} suite
 */
function compareAll(t, suite) {
  const o = oracle(t)[suite];
  const all = [...o.cases],
    want = [...o.want];
  for (const s of o.singles)
    if (o.want[s.of] === null) {
      all.push(s.c);
      want.push(s.want);
    }
  for (const b of BUILDS) {
    const names = variants(b.raw, `bq_${t}_quantize_rows`);
    assert.ok(names.length >= 2, `${b.name} exports bq_${t}_quantize_rows and its __ref`);
    for (const name of names)
      all.forEach((c, i) => {
        const what = `${b.name} ${name} ${c.x.length / c.cols}x${c.cols} with ${c.wkind}`;
        const { status, got } = runKernel(b.raw, name, t, c, c.w);
        if (want[i] === null) {
          // IQ1_S without weights: ggml asserts them; the kernel refuses the call.
          const expected = !c.w && t === 'iq1_s' ? BQ_EINVAL : BQ_EDOMAIN;
          assert.equal(status, expected, `${what}: ggml aborts on this input, the kernel must return ${expected}`);
          return;
        }
        assert.equal(status, BQ_OK, `${what}: status`);
        const d = firstDiff(got, want[i]);
        assert.equal(d, -1, `${what}: ${where(c, d, got.length)} differs`);
      });
  }
  return { all, want, quantized: want.filter((v) => v !== null).length };
}

// Every row kind of rows.js in matrices and alone, at several row lengths, with every imatrix kind
// and without.
SUITES.hostile = (t) => {
  /** @type {Case[]} */
  const cases = [];
  [256, 512, 768, 4096].forEach((cols, li) => {
    const shapes =
      cols >= 4096
        ? [[2, 5 * li]]
        : [
            [ROW_KINDS.length, 3 * li],
            [1, 7 * li],
          ];
    shapes.forEach(([rows, offset], si) => {
      const { x, kinds } = hostileRows(rows, cols, SEED + 1000 * typeId(t) + 31 * li + si, offset);
      cases.push({ x, cols, kinds, w: null, wkind: 'no weights' });
      IMATRIX_KINDS.forEach(([kind], k) => {
        if (cols >= 4096 && k > 1 && k !== IMATRIX_KINDS.length - 1) return;
        cases.push({ x, cols, kinds, w: imatrix(cols, k, SEED + 7 * li + k), wkind: `a ${kind} imatrix` });
      });
    });
  });
  return cases;
};

// Seeded random rows of six kinds at several scales and seeds, with importance vectors that have
// zeros (single columns, whole groups) or a few huge weights, and without.
SUITES.random = (t) => {
  /** @type {Case[]} */
  const cases = [];
  for (let s = 0; s < 4; s++) {
    const seed = SEED + 100 * s + typeId(t);
    const r = rng(seed);
    const cols = [256, 512, 1024, 2048][s],
      rows = 6;
    const x = new Float32Array(rows * cols);
    const kinds = [];
    for (let i = 0; i < rows; i++) {
      const kind = (i + s) % 6,
        scale = 2 ** (Math.floor(r.next() * 30) - 15);
      kinds.push(`random kind ${kind} (seed ${seed})`);
      for (let j = 0; j < cols; j++) {
        const g = r.normal();
        x[i * cols + j] =
          kind === 0
            ? g * scale
            : kind === 1
              ? Math.round(g * 2) * scale // few distinct values: ties in the sort
              : kind === 2
                ? (g / Math.max(0.02, Math.abs(r.normal()))) * scale
                : kind === 3
                  ? (j & 4 ? 1 : -1) * scale
                  : kind === 4
                    ? (r.next() < 0.7 ? 0 : g) * scale
                    : ((j % 16) - 8) * 0.25 * scale;
      }
    }
    const zeros = new Float32Array(cols).map((_, j) => (j % 5 === 0 ? 0 : r.next() + 0.1));
    const spikes = new Float32Array(cols).map((_, j) => (j % 61 === 7 ? 1e30 : j % 83 === 1 ? 1e12 : r.next()));
    const someZero = new Float32Array(cols).map((_, j) => ((j >> 4) % 3 === 1 ? 0 : Math.exp(r.normal())));
    cases.push({ x, cols, kinds, w: zeros, wkind: `every 5th weight 0 (seed ${seed})` });
    cases.push({ x, cols, kinds, w: spikes, wkind: `a few weights 1e30 and 1e12 (seed ${seed})` });
    cases.push({ x, cols, kinds, w: someZero, wkind: `whole groups of 16 weighted 0 (seed ${seed})` });
    cases.push({ x, cols, kinds, w: null, wkind: 'no weights' });
  }
  return cases;
};

// Rows of few distinct values, +0 and -0: equal keys in the sort of every sub-block.
SUITES.ties = (t) => {
  const cols = 1024;
  const r = rng(SEED + 55 + typeId(t));
  /** @type {[string, (j: number) => number][]} */
  const kinds = [
    ['all equal 1', () => 1],
    ['all equal -0.25', () => -0.25],
    ['two values', (j) => (j % 3 ? 0.5 : -1.5)],
    ['+0 and -0 and one value', (j) => (j % 4 === 0 ? 0 : j % 4 === 1 ? -0 : 2)],
    ['three values in blocks', (j) => [1, -1, 0.25][(j >> 2) % 3]],
    ['integers -2..2', () => Math.floor(r.next() * 5) - 2],
    ['repeated pairs', (j) => Math.round(Math.sin(j >> 1) * 8) / 4],
    ['ramp with repeats', (j) => ((j % 32) >> 3) - 1.5],
  ];
  const x = new Float32Array(kinds.length * cols);
  kinds.forEach(([, f], i) => {
    for (let j = 0; j < cols; j++) x[i * cols + j] = f(j);
  });
  const names = kinds.map(([k]) => k);
  /** @type {Case[]} */
  const cases = [
    { x, cols, kinds: names, w: new Float32Array(cols).fill(1), wkind: 'all-ones imatrix' },
    { x, cols, kinds: names, w: imatrix(cols, 0, SEED + 56), wkind: 'a real-looking imatrix' },
    { x, cols, kinds: names, w: imatrix(cols, 3, SEED + 57), wkind: 'an imatrix with zeros' },
    { x, cols, kinds: names, w: null, wkind: 'no weights' },
  ];
  return cases;
};

for (const t of TYPES) {
  test(`${t}: bq_${t}_quantize_rows (every variant) equals ggml_quantize_chunk on hostile rows, with every imatrix kind and without, seed ${SEED}`, () => {
    const { want, all } = compareAll(t, 'hostile');
    // ggml aborts only on non-finite or extreme rows: every row of a moderate kind quantizes with
    // a moderate imatrix (so the comparisons above are not vacuous).
    const MODERATE = new Set([
      'normal',
      'heavy-tailed',
      'outlier columns',
      'all equal',
      'zeros',
      'sparse',
      'ramp',
      'ties',
    ]);
    all.forEach((c, i) => {
      if (c.kinds.length > 1 || want[i] !== null || /huge/.test(c.wkind)) return;
      if (t === 'iq1_s' && !c.w) return;
      assert.ok(!MODERATE.has(c.kinds[0]), `${t}: ggml aborts on a ${c.kinds[0]} row with ${c.wkind}`);
    });
  });

  test(`${t}: random rows of several kinds and seeds, importance vectors with zeros and a few huge weights, equal ggml, seed ${SEED}`, () => {
    const { quantized } = compareAll(t, 'random');
    assert.ok(quantized >= 12, `${t}: ${quantized} cases quantized`);
  });

  test(`${t}: rows that make ties in the sort (equal values, +0 and -0, all equal) equal ggml`, () => {
    const { quantized } = compareAll(t, 'ties');
    assert.ok(quantized >= 3, `${t}: ${quantized} cases quantized`);
  });

  test(`${t}: bq_${t}_quantize_rows refuses a row length that is not whole super-blocks and writes nothing`, () => {
    for (const b of BUILDS)
      for (const name of variants(b.raw, `bq_${t}_quantize_rows`)) {
        b.raw.reset();
        const xp = b.raw.put(new Float32Array(2 * 384).fill(1)),
          wp = b.raw.put(new Float32Array(384).fill(1)),
          yp = b.raw.put(new Uint8Array(1024).fill(0xa5));
        for (const cols of [384, 128, 32])
          for (const w of [0, wp])
            assert.equal(b.raw.x[name](xp, yp, 2, cols, w), BQ_EINVAL, `${b.name} ${name} ${cols}: BQ_EINVAL`);
        if (t === 'iq1_s')
          assert.equal(b.raw.x[name](xp, yp, 1, 256, 0), BQ_EINVAL, `${b.name} ${name}: no weights, BQ_EINVAL`);
        assert.ok(
          b.raw.bytes(yp, 1024).every((v) => v === 0xa5),
          `${b.name} ${name}: nothing written`,
        );
        assert.equal(b.raw.x[name](xp, yp, 0, 256, wp), BQ_OK, `${b.name} ${name}: zero rows are fine`);
      }
  });
}

// ggml's IQ1 neighbour search prints "Oops, did not find grid point" and its candidates to stdout
// before it aborts; the oracle once let the aborting child's stdout into its own answers, so the
// abort read as a success with no output file. Values of 1e6 under weights of 1e30 overflow every
// distance of IQ1_M's search (IQ1_S's split search already gives up on them: zero blocks).
SUITES.overflow = () => {
  const cols = 256;
  const x = new Float32Array(cols).map((_, i) => Math.sin(i * 7.1) * 1e6);
  const w = new Float32Array(cols).map((_, i) => (1 + Math.cos(i)) * 1e30);
  return [{ x, cols, kinds: ['1e6 under weights of 1e30'], w, wkind: 'huge weights' }];
};

test("iq1_m: an abort in ggml's neighbour search reaches the test as an abort, and the kernels return BQ_EDOMAIN", () => {
  const s = oracle('iq1_s').overflow.want[0],
    m = oracle('iq1_m').overflow.want[0];
  assert.equal(m, null, 'ggml aborts on it (IQ1_M)');
  assert.ok(s !== null && s.every((v) => v === 0), 'IQ1_S writes a zero block');
  assert.equal(compareAll('iq1_m', 'overflow').quantized, 0);
  assert.equal(compareAll('iq1_s', 'overflow').quantized, 1);
});

test('iq1_s, iq1_m: the quantizers return BQ_ENOTABLES until the tables are built, and after they are dropped', async () => {
  const fresh = [{ name: `${BACKEND} build`, x: (await testCodec()).exports }];
  if (BACKEND === 'simd128') fresh.push({ name: 'threads build (clang-19)', x: await threadsInstance() });
  for (const f of fresh) {
    const raw = new Raw(f.x);
    const x = hostileRows(1, 256, SEED + 5).x;
    const xp = raw.put(x),
      wp = raw.put(new Float32Array(256).fill(1)),
      yp = raw.alloc(byteLength('iq1_m', 256));
    const all = TYPES.flatMap((t) => variants(raw, `bq_${t}_quantize_rows`));
    for (const t of TYPES) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 0, `${f.name} ${t}: not ready`);
    for (const name of all)
      assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_ENOTABLES, `${f.name} ${name} before init`);
    // Built for IQ1_M, they serve IQ1_S too.
    const id = typeId('iq1_m');
    const p = raw.alloc(raw.x.bq_quant_tables_bytes(id));
    assert.equal(raw.x.bq_quant_tables_init(id, p), BQ_OK);
    for (const t of TYPES) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 1, `${f.name} ${t}: ready`);
    for (const name of all) assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_OK, `${f.name} ${name} after init`);
    raw.x.bq_quant_tables_drop(typeId('iq1_s'));
    for (const name of all) assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_ENOTABLES, `${f.name} ${name} after drop`);
  }
});

// The SIMD128 kernels against the reference on many more rows than ggml is asked about: seeded
// random rows of several kinds and scales (ties in the sorts and in the neighbour searches come from
// repeated values, small integers and constant groups; hostile rows bring NaN, Inf and overflow),
// with and without weights, byte for byte and status for status. (The scalar build has no SIMD128
// kernels.)
if (BACKEND === 'simd128')
  test(`the SIMD128 IQ1 kernels equal the reference on random and hostile rows, seed ${SEED}`, () => {
    const r = rng(SEED + 77);
    const cols = 512,
      rows = 96;
    const x = new Float32Array(rows * cols);
    const kinds = [];
    for (let i = 0; i < rows; i++) {
      const kind = i % 8,
        scale = 2 ** (Math.floor(r.next() * 40) - 20);
      kinds.push(kind === 7 ? ROW_KINDS[i % ROW_KINDS.length][0] : `random kind ${kind}`);
      for (let j = 0; j < cols; j++) {
        const g = r.normal();
        x[i * cols + j] =
          kind === 0
            ? g * scale
            : kind === 1
              ? Math.round(g * 2) * scale
              : kind === 2
                ? (g / Math.max(0.02, Math.abs(r.normal()))) * scale
                : kind === 3
                  ? (j & 4 ? 1 : -1) * scale
                  : kind === 4
                    ? (r.next() < 0.7 ? 0 : g) * scale
                    : kind === 5
                      ? ((j % 16) - 8) * 0.25 * scale
                      : kind === 6
                        ? Math.floor(r.next() * 3) - 1
                        : ROW_KINDS[i % ROW_KINDS.length][1](r, j, cols);
      }
    }
    let compared = 0,
      quantized = 0;
    for (const b of BUILDS)
      for (const t of TYPES) {
        const simd = `bq_${t}_quantize_rows__simd128`;
        assert.ok(b.raw.x[simd], `${b.name} exports ${simd}`);
        for (const k of [-1, 0, 1, 3, 6]) {
          const w = k < 0 ? null : imatrix(cols, k, SEED + 78 + k);
          for (let i = 0; i < rows; i++) {
            const c = { x: x.slice(i * cols, (i + 1) * cols), cols, kinds: [kinds[i]] };
            const want = runKernel(b.raw, `bq_${t}_quantize_rows__ref`, t, c, w);
            const got = runKernel(b.raw, simd, t, c, w);
            assert.equal(got.status, want.status, `${b.name} ${simd} row ${i} (${kinds[i]}, weights ${k}) status`);
            const d = firstDiff(got.got, want.got);
            assert.equal(d, -1, `${b.name} ${simd} row ${i} (${kinds[i]}, weights ${k}): byte ${d} differs`);
            compared++;
            quantized += want.status === BQ_OK ? 1 : 0;
          }
        }
      }
    assert.ok(compared === BUILDS.length * TYPES.length * 5 * rows, `${compared} rows compared`);
    assert.ok(quantized > compared / 2, `${quantized} of them quantized`);
  });
