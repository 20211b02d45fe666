// The quantizers of IQ4_NL, IQ4_XS, IQ3_XXS and IQ3_S, with and without importance weights, kernel
// by kernel: every variant a build exports (public, __ref, __simd128) of bq_<t>_quantize and
// bq_<t>_quantize_rows against llama.cpp's own ggml_quantize_chunk (tests/lib/ggml.js), on every
// row kind of tests/lib/rows.js and every importance vector kind, several row lengths and counts,
// byte for byte; where ggml aborts on an input (the IQ3 searches assert on NaN and overflow), the
// kernel must say so (BQ_EDOMAIN) rather than write bytes ggml never writes. The plain quantizers
// of MXFP4, TQ1_0 and TQ2_0, which ggml_quantize_chunk runs without weights, too. Then IQ3's grid
// search tables against ggml's (grid, map and neighbour lists, bit for bit), and the statuses:
// BQ_ENOTABLES before the tables are built, BQ_EINVAL for a row length that is not whole blocks.
// Run on this build, and on the simd128 run also on the clang-19 threads build
// (the test variant of wasm/blockquant-threads.wasm on a shared memory). Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { hostileRows, imatrix, ROW_KINDS } from './lib/rows.js';
import { BACKEND, SEED, testCodec, firstDiff, rng } from './lib/helpers.js';
import { Raw } from './lib/raw.js';
import { builds, threadsInstance, variants } from './lib/imat-builds.js';
import {
  BQ_OK,
  BQ_EINVAL,
  BQ_ENOTABLES,
  BQ_EDOMAIN,
  inputsOf,
  runKernel,
  check,
  compareRowsKernels,
} from './lib/imat-cases.js';
import { typeId, typeInfo, byteLength } from '../js/index.js';

console.log(`# imat-iq43 test, ${BACKEND} build, seed ${SEED}`);

/** Types whose bq_<t>_quantize must equal ggml_quantize_chunk without weights. */
const PLAIN_TYPES = ['iq4_nl', 'iq4_xs', 'mxfp4', 'tq1_0', 'tq2_0'];
/** Types with a quantize_rows kernel here, and those of them whose ggml quantizer needs tables. */
const ROWS_TYPES = ['iq4_nl', 'iq4_xs', 'iq3_xxs', 'iq3_s'];
const GRID_TYPES = ['iq3_xxs', 'iq3_s'];

const BUILDS = await builds(GRID_TYPES);

/** The row lengths tried for a type of block size bs. */
const lengths = (/** @type {number} */ bs) => (bs === 32 ? [32, 64, 96, 256, 512, 4096] : [256, 512, 768, 4096]);

// The bug this file began with: GGUF files hold what ggml_quantize_chunk writes, and for IQ4_NL
// without weights that is quantize_iq4_nl's 7-try scale search (weights x*x), not
// quantize_row_iq4_nl_ref's single least-squares fit, which bq_iq4_nl_quantize followed (248 of
// 5,204 tensors of real llama-quantize output differed).
test('iq4_nl: bq_iq4_nl_quantize writes what ggml_quantize_chunk writes without weights (the scale search)', () => {
  const cols = 4096;
  const { x, kinds } = hostileRows(1, cols, SEED + 1);
  const [want] = ggml.quantize([{ type: typeId('iq4_nl'), x, cols }]);
  for (const b of BUILDS)
    for (const name of variants(b.raw, 'bq_iq4_nl_quantize'))
      check(`${b.name} ${name}`, { x, cols, kinds }, runKernel(b.raw, name, 'iq4_nl', { x, cols }, null), want);
});

for (const t of PLAIN_TYPES) {
  const info = { id: typeId(t), ...typeInfo(t) };
  test(`${t}: bq_${t}_quantize (every variant) equals ggml_quantize_chunk without weights on hostile rows, seed ${SEED}`, () => {
    const cases = inputsOf(lengths(info.blockSize), SEED + 1000 * info.id);
    const want = ggml.quantize(cases.map((c) => ({ type: info.id, x: c.x, cols: c.cols })));
    for (const b of BUILDS)
      for (const name of variants(b.raw, `bq_${t}_quantize`))
        cases.forEach((c, i) =>
          check(`${b.name} ${name} ${c.x.length / c.cols}x${c.cols}`, c, runKernel(b.raw, name, t, c, null), want[i]),
        );
  });
}

for (const t of ROWS_TYPES) {
  const info = { id: typeId(t), ...typeInfo(t) };
  test(`${t}: bq_${t}_quantize_rows (every variant) equals ggml_quantize_chunk with and without weights, seed ${SEED}`, () => {
    const { names } = compareRowsKernels(t, inputsOf(lengths(info.blockSize), SEED + 1000 * info.id + 500), {
      plain: true,
      seed: SEED,
      builds: BUILDS,
    });
    if (BACKEND === 'simd128') assert.ok(names[0].includes(`bq_${t}_quantize_rows__simd128`), `${t}: a SIMD128 kernel`);
  });

  test(`${t}: bq_${t}_quantize_rows refuses a row length that is not a multiple of ${info.blockSize} and writes nothing`, () => {
    for (const b of BUILDS) {
      const names = variants(b.raw, `bq_${t}_quantize_rows`);
      assert.ok(names.length >= 2, `${b.name} exports bq_${t}_quantize_rows and its __ref`);
      for (const name of names) {
        b.raw.reset();
        const cols = info.blockSize + info.blockSize / 2;
        const xp = b.raw.put(new Float32Array(2 * cols).fill(1)),
          wp = b.raw.put(new Float32Array(cols).fill(1)),
          yp = b.raw.put(new Uint8Array(1024).fill(0xa5));
        for (const w of [0, wp])
          assert.equal(b.raw.x[name](xp, yp, 2, cols, w), BQ_EINVAL, `${b.name} ${name}: BQ_EINVAL`);
        assert.ok(
          b.raw.bytes(yp, 1024).every((v) => v === 0xa5),
          `${b.name} ${name}: nothing written`,
        );
        assert.equal(b.raw.x[name](xp, yp, 0, info.blockSize, wp), BQ_OK, `${b.name} ${name}: zero rows are fine`);
      }
    }
  });
}

// The IQ3 quantizers' search: a NaN whose group of 4 stays on the grid (the rest of the group 0)
// survives ggml's search without weights, and its payload picks the group's code through
// nearest_int (payload 2: code 2); with weights the row's sigma2 is NaN and ggml aborts.
test('iq3_xxs, iq3_s: a NaN in a group of zeros quantizes as ggml (its payload is a code), and aborts with weights', () => {
  const f32 = (bits) => new Float32Array(new Uint32Array([bits]).buffer)[0];
  const cols = 512;
  const x = new Float32Array(cols).map((_, j) =>
    j % 32 === 0 ? f32(0x7fc00002) : j % 64 === 33 ? f32(0xffc00000) : j % 32 < 4 ? 0 : Math.sin(j) * 2,
  );
  const w = imatrix(cols, 0, SEED + 3);
  for (const t of GRID_TYPES) {
    const [plain, weighted] = ggml.quantize([
      { type: typeId(t), x, cols },
      { type: typeId(t), x, cols, imatrix: w },
    ]);
    assert.ok(plain !== null && weighted === null, `${t}: ggml quantizes it without weights only`);
    const c = { x, cols, kinds: ['NaN in groups of zeros'] };
    for (const b of BUILDS) {
      const names = variants(b.raw, `bq_${t}_quantize_rows`);
      assert.ok(names.length >= 2, `${b.name} exports bq_${t}_quantize_rows and its __ref`);
      for (const name of names) {
        check(`${b.name} ${name}`, c, runKernel(b.raw, name, t, c, null), plain);
        check(`${b.name} ${name} weighted`, c, runKernel(b.raw, name, t, c, w), null);
      }
    }
  }
});

test('iq3_xxs, iq3_s: the search tables equal ggml iq3xs_init_impl(256) and (512) bit for bit', () => {
  for (const t of GRID_TYPES) {
    const want = ggml.tables(typeId(t));
    const need = want.grid.length + want.map.length + want.neighbours.length;
    for (const b of BUILDS) {
      const raw = new Raw(b.raw.x);
      raw.base = raw.top = b.raw.top; // past the tables this build already holds
      const bytes = raw.x.bq_quant_tables_bytes(typeId(t));
      assert.ok(bytes >= need, `${b.name} ${t}: ${bytes} bytes hold ggml's ${need}`);
      const p = raw.alloc(bytes);
      new Uint8Array(raw.mem.buffer, p, bytes).fill(0xcd);
      const t0 = performance.now();
      assert.equal(raw.x.bq_quant_tables_init(typeId(t), p), BQ_OK);
      const ms = performance.now() - t0;
      // Our layout starts with ggml's three arrays, back to back: grid, map, neighbour lists.
      let o = p;
      for (const part of ['grid', 'map', 'neighbours']) {
        const got = raw.bytes(o, want[part].length);
        const d = firstDiff(got, want[part]);
        assert.equal(d, -1, `${b.name} ${t} ${part}: byte ${d} differs`);
        o += want[part].length;
      }
      console.log(`# ${b.name} ${t}: tables built in ${ms.toFixed(1)} ms, ${bytes} bytes`);
      // Back to the build's own tables (this copy lies in its scratch, which later tests reuse).
      raw.x.bq_quant_tables_drop(typeId(t));
      assert.equal(raw.x.bq_quant_tables_init(typeId(t), b.raw.tables[t]), BQ_OK);
    }
  }
});

test('iq3_xxs, iq3_s: the quantizers return BQ_ENOTABLES until the tables are built, and after they are dropped', async () => {
  const fresh = [{ name: `${BACKEND} build`, x: (await testCodec()).exports }];
  if (BACKEND === 'simd128') fresh.push({ name: 'threads build (clang-19)', x: await threadsInstance() });
  for (const f of fresh) {
    const raw = new Raw(f.x);
    for (const t of GRID_TYPES) {
      const id = typeId(t);
      assert.equal(raw.x.bq_quant_tables_ready(id), 0, `${f.name} ${t}: not ready`);
      const x = hostileRows(1, 256, SEED + 5).x;
      const xp = raw.put(x),
        yp = raw.alloc(byteLength(t, 256));
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, 0), BQ_ENOTABLES, `${f.name} ${name} before init`);
      const p = raw.alloc(raw.x.bq_quant_tables_bytes(id));
      assert.equal(raw.x.bq_quant_tables_init(id, p + 8), BQ_EINVAL, `${f.name} ${t}: unaligned memory refused`);
      assert.equal(raw.x.bq_quant_tables_init(id, p), BQ_OK);
      assert.equal(raw.x.bq_quant_tables_ready(id), 1);
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, 0), BQ_OK, `${f.name} ${name} after init`);
      raw.x.bq_quant_tables_drop(id);
      for (const name of variants(raw, `bq_${t}_quantize_rows`))
        assert.equal(raw.x[name](xp, yp, 1, 256, 0), BQ_ENOTABLES, `${f.name} ${name} after drop`);
    }
  }
});

/** An IEEE binary16 as a number. */
function half(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    m = h & 1023;
  return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
}

// blockStats reads the blocks bq_iq4_nl_quantize writes: its scales must be the d of ggml's bytes.
test('iq4_nl stats report the scales ggml_quantize_chunk writes', () => {
  const cols = 1024;
  const { x } = hostileRows(ROW_KINDS.length, cols, SEED + 9);
  const [want] = ggml.quantize([{ type: typeId('iq4_nl'), x, cols }]);
  const nb = x.length / 32;
  assert.ok(
    BUILDS.every((b) => variants(b.raw, 'bq_iq4_nl_stats').length >= 2),
    'bq_iq4_nl_stats and its __ref',
  );
  for (const b of BUILDS)
    for (const name of variants(b.raw, 'bq_iq4_nl_stats')) {
      b.raw.reset();
      const xp = b.raw.put(x),
        rmse = b.raw.alloc(4 * nb),
        amax = b.raw.alloc(4 * nb),
        scale = b.raw.alloc(4 * nb);
      assert.equal(b.raw.x[name](xp, x.length, rmse, amax, scale, 0, 0), BQ_OK);
      const got = b.raw.floats(scale, nb);
      const wantScale = new Float32Array(nb).map((_, i) => half(want[18 * i] | (want[18 * i + 1] << 8)));
      assert.equal(firstDiff(got, wantScale), -1, `${b.name} ${name}`);
    }
});

// The SIMD128 kernels against the reference on many more rows than ggml is asked about: seeded
// random rows of several shapes (ties in the neighbour searches come from repeated values, small
// integers and constant groups), with and without weights, byte for byte and status for status.
// (The scalar build has no SIMD128 kernels.)
if (BACKEND === 'simd128')
  test(`the SIMD128 quantize_rows kernels equal the reference on random rows, seed ${SEED}`, () => {
    const r = rng(SEED + 77);
    const cols = 1024,
      rows = 48;
    const x = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const kind = i % 6,
        scale = 2 ** (Math.floor(r.next() * 40) - 20);
      for (let j = 0; j < cols; j++) {
        const g = r.normal();
        x[i * cols + j] =
          kind === 0
            ? g * scale
            : kind === 1
              ? Math.round(g * 3) * scale
              : kind === 2
                ? (g / Math.max(0.02, Math.abs(r.normal()))) * scale
                : kind === 3
                  ? (j & 4 ? 1 : -1) * scale
                  : kind === 4
                    ? (r.next() < 0.7 ? 0 : g) * scale
                    : ((j % 16) - 8) * 0.25 * scale;
      }
    }
    const kinds = Array.from({ length: rows }, (_, i) => `random kind ${i % 6}`);
    let compared = 0;
    for (const b of BUILDS)
      for (const name of ROWS_TYPES) {
        const simd = `bq_${name}_quantize_rows__simd128`;
        if (!b.raw.x[simd]) continue;
        for (const k of [-1, 0, 1, 2]) {
          const w = k < 0 ? null : imatrix(cols, k, SEED + 78 + k);
          for (let i = 0; i < rows; i++) {
            const c = { x: x.slice(i * cols, (i + 1) * cols), cols, kinds: [kinds[i]] };
            const want = runKernel(b.raw, `bq_${name}_quantize_rows__ref`, name, c, w);
            const got = runKernel(b.raw, simd, name, c, w);
            assert.equal(got.status, want.status, `${b.name} ${simd} row ${i} status`);
            const d = firstDiff(got.got, want.got);
            assert.equal(d, -1, `${b.name} ${simd} row ${i} (${kinds[i]}, weights ${k}): byte ${d} differs`);
            compared++;
          }
        }
      }
    assert.ok(compared >= ROWS_TYPES.length * 4 * rows, `${compared} rows compared`);
  });
