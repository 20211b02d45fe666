// The 8-element grid quantizers IQ2_XXS, IQ2_XS and IQ2_S (src/imat/iq2.c), and the search tables
// they share with IQ1_S and IQ1_M (src/imat/iq2_tables.c). The tables against ggml's
// iq2xs_init_impl for every grid (grid, map and neighbour lists, bit for bit); every variant a
// build exports of bq_<t>_quantize_rows (public, __ref, __simd128) against llama.cpp's own
// ggml_quantize_chunk (tests/lib/ggml.js) on every row kind of tests/lib/rows.js and every
// importance vector kind, several row lengths and counts, byte for byte; where ggml aborts on an
// input (the searches assert on NaN and overflow), the kernel must say so (BQ_EDOMAIN) rather than
// write bytes ggml never writes. Then the statuses: BQ_ENOTABLES before the tables are built,
// BQ_EINVAL for a row length that is not whole super-blocks and for IQ2_XXS and IQ2_XS without
// weights (ggml asserts them). Run on this build, and on the simd128 run also on the clang-19
// threads build (the test variant of wasm/blockquant-threads.wasm on a shared memory): the test
// variants (build/test/), which export every kernel. Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { hostileRows, imatrix, IMATRIX_KINDS } from './lib/rows.js';
import { BACKEND, SEED, testCodec, edgeInputs, firstDiff, rng } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { builds, threadsInstance, variants, withTables } from './lib/imat-builds.js';
import {
  BQ_OK,
  BQ_EINVAL,
  BQ_ENOTABLES,
  BQ_EDOMAIN,
  inputsOf,
  runKernel,
  where,
  compareRowsKernels,
} from './lib/imat-cases.js';
import { typeId, typeInfo, byteLength } from '../js/index.js';

console.log(`# imat-iq2 test, ${BACKEND} build, seed ${SEED}`);

/** The IQ2 types, and whether ggml quantizes them without weights. */
const TYPES = [
  { t: 'iq2_xxs', plain: false },
  { t: 'iq2_xs', plain: false },
  { t: 'iq2_s', plain: true },
];

/** The types of each grid of iq2xs_init_impl (IQ1_S and IQ1_M share theirs), by grid size. */
const GRIDS = [
  { size: 256, types: ['iq2_xxs'] },
  { size: 512, types: ['iq2_xs'] },
  { size: 1024, types: ['iq2_s'] },
  { size: 2048, types: ['iq1_s', 'iq1_m'] },
];

const BUILDS = await builds(TYPES.map((x) => x.t));

for (const { size, types } of GRIDS) {
  test(`${types.join(', ')}: the search tables equal ggml iq2xs_init_impl (grid of ${size}) bit for bit`, () => {
    const want = ggml.tables(typeId(types[0]));
    const need = want.grid.length + want.map.length + want.neighbours.length;
    for (const b of BUILDS) {
      const raw = new Raw(b.raw.x);
      raw.base = raw.top = b.raw.top; // past the tables this build already holds
      const bytes = raw.x.bq_quant_tables_bytes(typeId(types[0]));
      assert.ok(bytes >= need, `${b.name} ${types[0]}: ${bytes} bytes hold ggml's ${need}`);
      for (const t of types.slice(1))
        assert.equal(raw.x.bq_quant_tables_bytes(typeId(t)), bytes, `${b.name}: ${t} has ${types[0]}'s tables`);
      const p = raw.alloc(bytes);
      new Uint8Array(raw.mem.buffer, p, bytes).fill(0xcd);
      // IQ1_M's tables are IQ1_S's (ggml's iq2_data[2] serves both): built through the last type
      // of the grid, they are ready for every one.
      const by = typeId(types[types.length - 1]);
      assert.equal(raw.x.bq_quant_tables_init(by, p + 8), BQ_EINVAL, `${b.name}: unaligned memory refused`);
      const t0 = performance.now();
      assert.equal(raw.x.bq_quant_tables_init(by, p), BQ_OK);
      const ms = performance.now() - t0;
      for (const t of types) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 1, `${b.name} ${t}: ready`);
      // Our layout is ggml's three arrays, back to back: grid, map, neighbour lists.
      let o = p;
      for (const part of ['grid', 'map', 'neighbours']) {
        const got = raw.bytes(o, want[part].length);
        const d = firstDiff(got, want[part]);
        assert.equal(d, -1, `${b.name} ${types[0]} ${part}: byte ${d} differs`);
        o += want[part].length;
      }
      console.log(`# ${b.name} grid ${size}: tables built in ${ms.toFixed(1)} ms, ${bytes} bytes`);
      raw.x.bq_quant_tables_drop(typeId(types[0]));
      for (const t of types) assert.equal(raw.x.bq_quant_tables_ready(typeId(t)), 0, `${b.name} ${t}: dropped`);
      // Back to the build's own tables (this copy lies in its scratch, which later tests reuse).
      const own = b.raw.tables[types[0]];
      if (own !== undefined) assert.equal(raw.x.bq_quant_tables_init(typeId(types[0]), own), BQ_OK);
    }
  });
}

for (const { t, plain } of TYPES) {
  const info = { id: typeId(t), ...typeInfo(t) };
  for (const seed of [SEED, SEED + 1]) {
    test(`${t}: bq_${t}_quantize_rows (every variant) equals ggml_quantize_chunk with${plain ? ' and without' : ''} weights, seed ${seed}`, () => {
      const { names, cases, want } = compareRowsKernels(
        t,
        inputsOf([256, 512, 768, 4096], seed + 1000 * info.id + 500),
        { plain, seed, builds: BUILDS },
      );
      const quantized = want.filter((w) => w !== null).length;
      console.log(`# ${t} seed ${seed}: ${cases.length} cases, ${quantized} quantized by ggml, the rest abort`);
      if (BACKEND === 'simd128')
        assert.ok(names[0].includes(`bq_${t}_quantize_rows__simd128`), `${t}: a SIMD128 kernel`);
    });
  }

  test(`${t}: bq_${t}_quantize_rows refuses a row length that is not whole super-blocks${plain ? '' : ', and no weights'}, writing nothing`, () => {
    for (const b of BUILDS)
      for (const name of variants(b.raw, `bq_${t}_quantize_rows`)) {
        b.raw.reset();
        const xp = b.raw.put(new Float32Array(2 * 512).fill(1)),
          wp = b.raw.put(new Float32Array(512).fill(1)),
          yp = b.raw.put(new Uint8Array(1024).fill(0xa5));
        for (const w of [0, wp])
          assert.equal(b.raw.x[name](xp, yp, 2, 384, w), BQ_EINVAL, `${b.name} ${name}: BQ_EINVAL for 384 columns`);
        if (!plain)
          assert.equal(b.raw.x[name](xp, yp, 2, 256, 0), BQ_EINVAL, `${b.name} ${name}: BQ_EINVAL without weights`);
        assert.ok(
          b.raw.bytes(yp, 1024).every((v) => v === 0xa5),
          `${b.name} ${name}: nothing written`,
        );
        assert.equal(b.raw.x[name](xp, yp, 0, 256, wp), BQ_OK, `${b.name} ${name}: zero rows are fine`);
      }
  });
}

test('iq2_xxs, iq2_xs, iq2_s: the quantizers return BQ_ENOTABLES until the tables are built, and after they are dropped', async () => {
  const fresh = [{ name: `${BACKEND} build`, x: (await testCodec()).exports }];
  if (BACKEND === 'simd128') fresh.push({ name: 'threads build (clang-19)', x: await threadsInstance() });
  for (const f of fresh) {
    const raw = new Raw(f.x);
    for (const { t } of TYPES) {
      const id = typeId(t);
      assert.equal(raw.x.bq_quant_tables_ready(id), 0, `${f.name} ${t}: not ready`);
      const x = hostileRows(1, 256, SEED + 5).x;
      const xp = raw.put(x),
        wp = raw.put(imatrix(256, 0, SEED + 6)),
        yp = raw.alloc(byteLength(t, 256));
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_ENOTABLES, `${f.name} ${name} before init`);
      const p = raw.alloc(raw.x.bq_quant_tables_bytes(id));
      assert.equal(raw.x.bq_quant_tables_init(id, p), BQ_OK);
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_OK, `${f.name} ${name} after init`);
      raw.x.bq_quant_tables_drop(id);
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, wp), BQ_ENOTABLES, `${f.name} ${name} after drop`);
    }
  }
});

// The SIMD128 kernels against the reference, without the oracle, on many more inputs than ggml
// could check in time: rows of 1 to 9 super-blocks at scales from 1e-15 to 1e15 (so trial codes
// land on and off the grid, equal and unequal across the 4 trial lanes, and lists of every length
// are searched), the edge-case blocks of helpers.js, and weights of every kind, zeros included.
// (The scalar run checks the simd128 build's kernels too.)
test(`iq2_xxs, iq2_xs, iq2_s: the SIMD128 kernels write the reference's bytes (and statuses) on seeded rows, seed ${SEED}`, async () => {
  const simd =
    BACKEND === 'simd128'
      ? BUILDS
      : [
          {
            name: 'simd128 build',
            raw: withTables(
              (await testCodec({ backend: 'simd128' })).exports,
              TYPES.map((x) => x.t),
            ),
          },
        ];
  for (const b of simd)
    assert.equal(typeof b.raw.x.bq_iq2_xxs_quantize_rows__simd128, 'function', `${b.name} has the SIMD128 kernels`);
  const r = rng(SEED + 77);
  let compared = 0,
    refused = 0;
  for (let c = 0; c < 24; c++) {
    const blocks = 1 + (c % 9),
      cols = 256 * blocks,
      rows = 1 + (c % 3);
    const scale = 10 ** (r.next() * 30 - 15);
    const x =
      c % 4 === 3
        ? edgeInputs((rows * cols) / 32, SEED + c)
        : new Float32Array(rows * cols).map((_, j) => (j % 11 === c % 11 ? 0 : r.normal() * scale * (j % 17 ? 1 : 8)));
    const w = imatrix(cols, c % IMATRIX_KINDS.length, SEED + 3 * c);
    const kase = { x, cols, kinds: Array(rows).fill(c % 4 === 3 ? 'edge blocks' : `normal times ${scale}`) };
    for (const b of simd)
      for (const { t, plain } of TYPES)
        for (const weights of plain ? [w, null] : [w]) {
          const want = runKernel(b.raw, `bq_${t}_quantize_rows__ref`, t, kase, weights);
          const got = runKernel(b.raw, `bq_${t}_quantize_rows__simd128`, t, kase, weights);
          const what = `${b.name} ${t} ${rows}x${cols} case ${c}${weights ? '' : ' without weights'}`;
          assert.equal(got.status, want.status, `${what}: status`);
          if (want.status !== BQ_OK) {
            refused++;
            continue;
          }
          const d = firstDiff(got.got, want.got);
          assert.equal(d, -1, `${what}: ${where(kase, d, got.got.length)} differs`);
          compared++;
        }
  }
  console.log(`# ${compared} outputs equal, ${refused} refused by both`);
  assert.ok(compared > 50, 'most cases quantize');
});
