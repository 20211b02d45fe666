// The public API: init options, argument errors, chunked streaming, bounded memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, GGMLType, simdSupported, knownTypes, CODEC_TYPES, typeId, typeInfo } from '../js/index.js';
import * as oracle from './lib/oracle.js';
import * as oracleK from './lib/oracle-k.js';
import * as oracleIQ from './lib/oracle-iq.js';
import * as ggml from './lib/ggml.js';
import {
  ALL_TYPES,
  BACKEND,
  PAIRS,
  QTYPES,
  SEED,
  codec,
  edgeInputs,
  firstDiff,
  rng,
  sameFloat,
  quantizeAny,
} from './lib/helpers.js';

const bq = await codec();
const wasmFile = new URL(`../wasm/blockquant-${BACKEND}.wasm`, import.meta.url);

test('init picks and honours backends', async () => {
  const auto = await init();
  assert.equal(auto.backend, simdSupported() ? 'simd128' : 'scalar');
  assert.equal((await init({ backend: 'scalar' })).backend, 'scalar');
  assert.equal(bq.backend, BACKEND);
  await assert.rejects(init({ backend: /** @type {any} */ ('avx') }), TypeError);
});

test('init accepts a compiled module, bytes or a URL, and checks them', async () => {
  const bytes = readFileSync(wasmFile);
  const module = await WebAssembly.compile(bytes);
  for (const m of [
    module,
    bytes,
    new Uint8Array(bytes).buffer,
    new URL(`data:application/wasm;base64,${bytes.toString('base64')}`),
  ]) {
    const c = await init({ module: m });
    assert.equal(c.backend, BACKEND);
    assert.deepEqual(
      [...c.dequantize('q8_0', new Uint8Array([0, 0x3c, ...new Array(32).fill(2)]))],
      new Array(32).fill(2),
    );
  }
  const other = BACKEND === 'simd128' ? 'scalar' : 'simd128';
  await assert.rejects(init({ backend: other, module }), /requested, but the given module is the/);
  const notOurs = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
  await assert.rejects(init({ module: notOurs }), TypeError);
  await assert.rejects(init({ module: /** @type {any} */ (42) }), TypeError);
});

test('types are given by id or name; unknown and unsupported types are TypeErrors naming them', () => {
  const x = new Float32Array(64).fill(1);
  assert.deepEqual(bq.quantize('q4_0', x), bq.quantize(GGMLType.Q4_0, x));
  assert.throws(
    () => bq.quantize(4, x),
    (e) => e instanceof TypeError && /\b4\b/.test(e.message),
  );
  assert.throws(
    () => bq.quantize('q9_9', x),
    (e) => e instanceof TypeError && e.message.includes('q9_9'),
  );
  // Types the table knows but blockquant has no kernels for (whichever those are in this version).
  const without = knownTypes().filter((id) => !CODEC_TYPES.includes(id));
  assert.ok(without.length > 0);
  for (const id of without) {
    const { name, typeSize } = typeInfo(id);
    assert.throws(
      () => bq.quantize(id, new Float32Array(typeInfo(id).blockSize)),
      (e) => e instanceof TypeError && e.message.includes(name),
    );
    assert.throws(
      () => bq.dequantize(id, new Uint8Array(typeSize)),
      (e) => e instanceof TypeError && e.message.includes(name),
    );
  }
  assert.throws(() => bq.quantize('q4_0', /** @type {any} */ ([1, 2])), TypeError);
});

test('lengths that are not whole blocks are RangeErrors, and nothing is written', () => {
  const out = new Uint8Array(18);
  assert.throws(
    () => bq.quantize('q4_0', new Float32Array(33), out),
    (e) => e instanceof RangeError && /33.*multiple of 32/.test(e.message),
  );
  assert.throws(() => bq.quantize('q4_0', new Float32Array(64), out), RangeError); // out too small
  assert.deepEqual(out, new Uint8Array(18));
  assert.throws(
    () => bq.dequantize('q5_1', new Uint8Array(25)),
    (e) => e instanceof RangeError && /25 bytes/.test(e.message),
  );
  assert.throws(() => bq.dequantize('q8_0', new Uint8Array(34), new Float32Array(31)), RangeError);
  assert.throws(() => bq.blockStats('q8_0', new Float32Array(48)), RangeError);
  assert.throws(() => bq.blockStats('f32', new Float32Array(32)), TypeError);
  assert.equal(bq.quantize('f16', new Float32Array(3)).length, 6); // float types take any length
});

test('dot and matvec check pairs and lengths', () => {
  const x = new Float32Array(64).map((_, i) => i - 30);
  const q4 = bq.quantize('q4_0', x),
    q8 = bq.quantize('q8_0', x),
    q81 = bq.quantize('q8_1', x);
  assert.throws(
    () => bq.dot('q4_0', q4, 'q8_1', q81),
    (e) => e instanceof RangeError && e.message.includes('q4_0 . q8_1') && e.message.includes('pairs with q8_0'),
  );
  assert.throws(
    () => bq.dot('q4_1', bq.quantize('q4_1', x), 'q8_0', q8),
    (e) => e instanceof RangeError && e.message.includes('pairs with q8_1'),
  );
  assert.throws(
    () => bq.dot('q8_1', q81, 'q8_1', q81),
    (e) => e instanceof RangeError && e.message.includes('q8_1 . q8_1'),
  );
  assert.throws(
    () => bq.dot('q4_0', q4, 'q8_0', q8.subarray(0, 34)),
    (e) => e instanceof RangeError && /mismatch/.test(e.message),
  );
  assert.throws(
    () => bq.dot('q4_0', q4, 'f32', x.subarray(0, 32)),
    (e) => e instanceof RangeError && /mismatch/.test(e.message),
  );
  assert.throws(
    () => bq.matvec('q4_0', q4, 3, x.subarray(0, 32)),
    (e) => e instanceof RangeError && /weights hold/.test(e.message),
  );
  assert.throws(() => bq.matvec('q4_0', q4, 1, new Float32Array(63)), RangeError);
  assert.throws(() => bq.matvec('q4_0', q4, -1, x), RangeError);
  assert.throws(() => bq.matvec('q4_0', q4, 2, x.subarray(0, 32), { out: new Float32Array(3) }), RangeError);
  assert.equal(bq.dot('q4_0', new Uint8Array(0), 'q8_0', new Uint8Array(0)), 0);
  assert.deepEqual(bq.matvec('q8_0', new Uint8Array(0), 0, x), new Float32Array(0));
});

test('matvec rows equal dots: quantized activations by default, f32 with exact', () => {
  const r = rng(SEED);
  const cols = 512,
    rows = 7;
  const x = new Float32Array(cols).map(() => r.normal());
  const w = new Float32Array(rows * cols).map(() => r.normal());
  for (const [t, a] of PAIRS) {
    const wq = quantizeAny(bq, t, w, cols),
      xq = bq.quantize(a, x);
    const y = bq.matvec(t, wq, rows, x),
      ye = bq.matvec(t, wq, rows, x, { exact: true });
    const rb = wq.length / rows;
    for (let i = 0; i < rows; i++) {
      assert.ok(sameFloat(y[i], bq.dot(t, wq.subarray(i * rb, (i + 1) * rb), a, xq)), `${t} row ${i}`);
      assert.ok(sameFloat(ye[i], bq.dot(t, wq.subarray(i * rb, (i + 1) * rb), 'f32', x)), `${t} exact row ${i}`);
    }
  }
});

test('NaN and Inf inputs follow ggml through the API', () => {
  const x = edgeInputs(32, SEED); // 1024 values: whole blocks of every type
  // The grid types have no JS model (and ggml aborts on many NaN inputs of theirs):
  // tests/imat-*.test.js compare them with ggml itself. NVFP4, Q1_0 and Q2_0 have no JS model
  // either: llama.cpp's ggml itself (tests/lib/ggml.js).
  const GRID = ['iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s', 'iq1_s', 'iq1_m'];
  const NEW = ['nvfp4', 'q1_0', 'q2_0'];
  for (const t of ALL_TYPES.filter((t) => !GRID.includes(t))) {
    // The K-quants (tests/lib/oracle-k.js) and IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0
    // (tests/lib/oracle-iq.js) have their own independent models.
    const id = /** @type {number} */ (typeId(t));
    const model = t in oracleIQ.TYPES ? oracleIQ : t in oracleK.TYPE_SIZE ? oracleK : oracle;
    // (oracleIQ.quantizeChunk: what ggml_quantize_chunk writes, for IQ4_NL its scale search)
    const want = NEW.includes(t)
      ? ggml.quantize([{ type: id, x, cols: x.length }])[0]
      : t === 'q8_K'
        ? oracleK.quantizeQ8K(x)
        : model === oracleIQ
          ? oracleIQ.quantizeChunk(t, x)
          : model.quantize(t, x);
    const q = bq.quantize(t, x);
    assert.equal(firstDiff(q, want), -1, `${t} quantize`);
    const dq = NEW.includes(t) ? ggml.dequantize([{ type: id, q, n: x.length }])[0] : model.dequantize(t, q);
    assert.equal(firstDiff(bq.dequantize(t, q), dq), -1, `${t} dequantize`);
  }
  // Spelled out for Q8_0 (x86 ggml): in an all-NaN block MAX() keeps NaN, so d is NaN (0x7E00) and
  // every code roundf(NaN) -> 0; a block holding +Inf has d = Inf and codes 0 (x * id with id = 0).
  const blk = new Float32Array(64).fill(NaN);
  blk.fill(1, 32);
  blk[40] = Infinity;
  const q = bq.quantize('q8_0', blk);
  assert.deepEqual([...q.subarray(0, 34)], [0x00, 0x7e, ...new Array(32).fill(0)]);
  assert.deepEqual([q[34], q[35]], [0x00, 0x7c]);
  assert.deepEqual([...q.subarray(36)], new Array(32).fill(0));
});

test(`results do not depend on the staging size (chunked streaming), seed ${SEED}`, async () => {
  const small = await codec({ stagingBytes: 4096 });
  const r = rng(SEED);
  const n = 32 * 1024; // whole blocks of every type, and 8 rows of whole blocks
  const x = new Float32Array(n).map(() => r.normal());
  for (const t of ALL_TYPES) {
    const q = quantizeAny(bq, t, x, n / 8);
    assert.deepEqual(quantizeAny(small, t, x, n / 8), q, `${t} quantize`);
    assert.equal(firstDiff(small.dequantize(t, q), bq.dequantize(t, q)), -1, `${t} dequantize`);
    assert.ok(sameFloat(small.dot(t, q, 'f32', x), bq.dot(t, q, 'f32', x)), `${t} . f32`);
    if (typeInfo(t).stats) {
      const a = bq.blockStats(t, x),
        b = small.blockStats(t, x);
      for (const k of ['rmse', 'maxAbs', 'scale']) assert.equal(firstDiff(a[k], b[k]), -1, `${t} stats ${k}`);
    }
  }
  for (const [t, a] of PAIRS) {
    const q = quantizeAny(bq, t, x, n / 8),
      qa = bq.quantize(a, x);
    assert.ok(sameFloat(small.dot(t, q, a, qa), bq.dot(t, q, a, qa)), `${t} . ${a}`);
    // 8 rows of 4000: a row does not fit 4 KiB of staging with the vector, so each row streams.
    const y = bq.matvec(t, q, 8, x.subarray(0, n / 8));
    assert.equal(firstDiff(small.matvec(t, q, 8, x.subarray(0, n / 8)), y), -1, `${t} matvec`);
  }
});

test('subarray views with odd byte offsets are read correctly', () => {
  const x = new Float32Array(96).map((_, i) => Math.sin(i));
  const q = bq.quantize('q5_1', x);
  const buf = new Uint8Array(q.length + 3);
  buf.set(q, 3);
  assert.deepEqual(bq.dequantize('q5_1', buf.subarray(3)), bq.dequantize('q5_1', q));
});

test('dequantizing 2^28 values keeps wasm memory bounded', () => {
  const c = bq;
  const n = 2 ** 28;
  const q = new Uint8Array((n / 32) * 18);
  // Block b holds d = 1.0 (0x3C00) and codes b % 16 in every nibble.
  for (let b = 0, o = 0; b < n / 32; b++, o += 18) {
    q[o + 1] = 0x3c;
    q.fill((b % 16) * 17, o + 2, o + 18);
  }
  const y = c.dequantize('q4_0', q);
  assert.equal(y.length, n);
  for (const b of [0, 1, 15, 16, n / 32 - 1]) assert.equal(y[b * 32 + 7], (b % 16) - 8, `block ${b}`);
  assert.ok(c.memoryBytes <= 32 << 20, `wasm memory grew to ${c.memoryBytes} bytes`);
});

test('the browser code path (js/index.js and all it imports) uses no Node built-ins', async () => {
  const { readFileSync: read } = await import('node:fs');
  const seen = new Set();
  const visit = (/** @type {URL} */ url) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    const src = read(url, 'utf8');
    assert.doesNotMatch(src, /from ['"]node:|import\(['"]node:|require\(|\bprocess\.|\bBuffer\b/, url.pathname);
    for (const m of src.matchAll(/(?:from|import\()\s*['"](\.[^'"]+)['"]/g)) visit(new URL(m[1], url));
  };
  visit(new URL('../js/index.js', import.meta.url));
  assert.ok(seen.size >= 5, `followed ${seen.size} modules`);
});
