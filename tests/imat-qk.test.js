// The quantizers of the simple blocks (Q4_0..Q8_1) and the K-quants (Q2_K..Q8_K), with and without
// importance weights, kernel by kernel: every variant a build exports (public, __ref, __simd128)
// of bq_<t>_quantize and bq_<t>_quantize_rows, against llama.cpp's own ggml (tests/lib/ggml.js):
// ggml_quantize_chunk, or quantize_row_<t>_ref for the activation formats Q8_1 and Q8_K. Every
// row kind of tests/lib/rows.js (NaN payloads, Inf, subnormal, huge...), every importance vector
// kind, row lengths 32..4096 and several row counts, byte for byte. Run on this build, and on
// the simd128 run also on the clang-19 threads build (the test variant of wasm/blockquant-threads.wasm on a shared
// memory): the same C compiled by another compiler must give the same bytes. Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ggml from './lib/ggml.js';
import { BACKEND, SEED, firstDiff } from './lib/helpers.js';
import { builds, variants } from './lib/imat-builds.js';
import { inputsOf, runKernel, where, compareRowsKernels } from './lib/imat-cases.js';
import { typeId, typeInfo } from '../js/index.js';

console.log(`# imat-qk test, ${BACKEND} build, seed ${SEED}`);

/** Types whose bq_<t>_quantize is ggml_quantize_chunk without weights, and those ggml quantizes only
 * with quantize_row_<t>_ref (the activation formats). */
const CHUNK_TYPES = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K'];
const REF_TYPES = ['q8_1', 'q8_K'];
/** The types of this file with a quantize_rows kernel (ggml's quantize_<t> with quant_weights). */
const ROWS_TYPES = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K'];

const BUILDS = await builds();

/** The row lengths tried for a type of block size bs. */
const lengths = (/** @type {number} */ bs) => (bs === 32 ? [32, 64, 96, 256, 512, 4096] : [256, 512, 4096]);

// The bug this file began with: an all-NaN super-block of payload 1 fits to NaN, and ggml's
// nearest_int(inv_min * mins[j]) keeps the payload x86-64 propagates (lm = 1: scale bytes 8-11 are
// 0x11); the emcc builds wrote 0 there, the product having lost the payload in wasm arithmetic.
test('q4_K, q5_K: an all-NaN row with payload 1 keeps the payload in its scale codes, as ggml', () => {
  const x = new Float32Array(new Uint32Array(512).fill(0x7fc00001).buffer);
  for (const t of ['q4_K', 'q5_K']) {
    const [want] = ggml.quantize([{ type: typeId(t), x, cols: 256 }]);
    assert.deepEqual([...want.subarray(4, 16)], [...Array(8).fill(1), ...Array(4).fill(0x11)], `ggml's ${t} scales`);
    for (const b of BUILDS)
      for (const name of variants(b.raw, `bq_${t}_quantize`)) {
        const { got } = runKernel(b.raw, name, t, { x, cols: 256 }, null);
        assert.equal(firstDiff(got, want), -1, `${b.name} ${name}: ${[...got.subarray(4, 16)]}`);
      }
  }
});

for (const t of [...CHUNK_TYPES, ...REF_TYPES]) {
  const info = { id: typeId(t), ...typeInfo(t) };
  test(`${t}: bq_${t}_quantize (every variant) equals ggml's ${REF_TYPES.includes(t) ? `quantize_row_${t}_ref` : 'ggml_quantize_chunk'} on hostile rows, seed ${SEED}`, () => {
    const cases = inputsOf(lengths(info.blockSize), SEED + 1000 * info.id);
    const want = REF_TYPES.includes(t)
      ? ggml.quantizeRef(cases.map((c) => ({ type: info.id, x: c.x })))
      : ggml.quantize(cases.map((c) => ({ type: info.id, x: c.x, cols: c.cols })));
    for (const b of BUILDS)
      for (const name of variants(b.raw, `bq_${t}_quantize`))
        cases.forEach((c, i) => {
          const { status, got } = runKernel(b.raw, name, t, c, null);
          assert.equal(status, 0, `${b.name} ${name} status`);
          const d = firstDiff(got, want[i]);
          assert.equal(d, -1, `${b.name} ${name} ${c.x.length / c.cols}x${c.cols}: ${where(c, d, got.length)} differs`);
        });
  });
}

for (const t of ROWS_TYPES) {
  const info = { id: typeId(t), ...typeInfo(t) };
  test(`${t}: bq_${t}_quantize_rows (every variant) equals ggml_quantize_chunk with and without weights, seed ${SEED}`, () => {
    const { want } = compareRowsKernels(t, inputsOf(lengths(info.blockSize), SEED + 1000 * info.id + 500), {
      plain: true,
      seed: SEED,
      builds: BUILDS,
    });
    // ggml's K-quant and simple-block quantizers never abort: every case has its bytes
    assert.ok(
      want.every((w) => w !== null),
      `${t}: ggml quantizes every row`,
    );
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
        for (const w of [0, wp]) assert.equal(b.raw.x[name](xp, yp, 2, cols, w), -1, `${b.name} ${name}: BQ_EINVAL`);
        assert.ok(
          b.raw.bytes(yp, 1024).every((v) => v === 0xa5),
          `${b.name} ${name}: nothing written`,
        );
        assert.equal(b.raw.x[name](xp, yp, 0, info.blockSize, wp), 0, `${b.name} ${name}: zero rows are fine`);
      }
    }
  });
}
