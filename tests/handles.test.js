// Resident tensor handles: bq.tensor / bq.loadTensor, matvec(W, x), matvecs, dequantize(W), the
// wasm heap under them (js/tensor.js), disposal and the memory limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CODEC_TYPES,
  GGMLType,
  blockFields,
  knownTypes,
  typeInfo,
  parseGGUF,
  openGGUF,
  writeGGUF,
} from '../js/index.js';
import { Tensor, WasmHeap } from '../js/tensor.js';
import { Bytes } from './lib/gguf-bytes.js';
import { BACKEND, SEED, codec, firstDiff, rng } from './lib/helpers.js';

const bq = await codec();
// A small staging region, so that vectors and outputs take the heap-scratch path and decoding
// runs in many chunks.
const small = await codec({ stagingBytes: 4096 });
const MATVEC = CODEC_TYPES.filter((t) => typeInfo(t).matvec).map((t) => typeInfo(t).name);
const DEQUANT = CODEC_TYPES.filter((t) => typeInfo(t).dequantize).map((t) => typeInfo(t).name);
console.log(`# backend ${BACKEND}, seed ${SEED}`);

/**
 * Weights of a type from gaussian values with a per-row scale spread, plus x.
 * @param {string} type
 * @param {number} rows
 * @param {number} cols
 * @param {number} seed
 */
function problem(type, rows, cols, seed) {
  const r = rng(seed);
  const w = new Float32Array(rows * cols);
  for (let i = 0; i < w.length; i++) w[i] = r.normal() * (1 + (Math.floor(i / cols) % 5));
  const x = new Float32Array(cols).map(() => r.normal() * 3);
  return { bytes: typeInfo(type).quantize ? bq.quantize(type, w) : randomBlocks(type, rows * cols, r), x };
}

/**
 * Random blocks for a type without a quantizer: random bytes with every scale field (f16, bf16,
 * f32 per blockFields) set to a finite value, so that products are finite.
 * @param {string} type
 * @param {number} n values
 * @param {ReturnType<typeof rng>} r
 */
function randomBlocks(type, n, r) {
  const { blockSize, typeSize } = typeInfo(type);
  const bytes = new Uint8Array((n / blockSize) * typeSize).map(() => (r.next() * 256) | 0);
  const view = new DataView(bytes.buffer);
  for (const f of blockFields(type) ?? []) {
    if (!['f16', 'bf16', 'f32'].includes(f.kind)) continue;
    for (let o = f.offset; o < bytes.length; o += typeSize) {
      for (let s = o; s < o + f.size; s += f.unit) {
        const v = (r.next() + 0.5) * 2 ** -(Math.floor(r.next() * 8) + 2);
        if (f.kind === 'f32') view.setFloat32(s, v, true);
        else if (f.kind === 'bf16') view.setUint16(s, new Uint32Array(new Float32Array([v]).buffer)[0] >>> 16, true);
        else view.setUint16(s, 0x3000 + ((r.next() * 0x800) | 0), true); // 2^-3 .. 2^-2
      }
    }
  }
  return bytes;
}

/** Columns per type: one block, a few, and past the SIMD matvecs' prepared-activation lengths. */
const colsOf = (/** @type {string} */ t) => {
  const b = Math.max(typeInfo(t).blockSize, 32);
  return b === 256 ? [256, 768, 65 * 256] : [b, 3 * b, 4096, Math.ceil((513 * 32) / b) * b];
};

test(`matvec(W, x) equals matvec(type, bytes, rows, x) bit for bit for every matvec type, seed ${SEED}`, () => {
  assert.ok(MATVEC.includes('q4_K') && MATVEC.includes('q4_0') && MATVEC.includes('f16'), MATVEC.join());
  let s = SEED;
  for (const t of MATVEC) {
    for (const cols of colsOf(t)) {
      for (const rows of [1, 3, 17]) {
        const { bytes, x } = problem(t, rows, cols, s++);
        for (const exact of [false, true]) {
          const want = bq.matvec(t, bytes, rows, x, { exact });
          for (const c of [bq, small]) {
            const W = c.tensor(t, bytes, rows, cols);
            assert.deepEqual(
              [W.type, W.rows, W.cols, W.byteLength],
              [GGMLType[/** @type {keyof typeof GGMLType} */ (t.toUpperCase())], rows, cols, bytes.length],
            );
            const got = c.matvec(W, x, { exact });
            assert.equal(firstDiff(got, want), -1, `${t} ${rows}x${cols} exact=${exact} staging=${c === small}`);
            const out = new Float32Array(rows).fill(7);
            assert.equal(c.matvec(W, x, { exact, out }), out);
            assert.equal(firstDiff(out, want), -1);
            W.dispose();
          }
        }
      }
    }
  }
  assert.equal(bq.residentBytes, 0);
  assert.equal(small.residentBytes, 0);
});

test('matvecs shares one quantization of x between tensors and equals separate calls', () => {
  const cols = 1024;
  const types = ['q4_0', 'q4_1', 'q4_K', 'q8_0', 'f16', 'q6_K', 'q5_1', 'q8_1', 'bf16'];
  for (const c of [bq, small]) {
    const Ws = types.map((t, i) => {
      const rows = 5 + i;
      return c.tensor(t, problem(t, rows, cols, SEED + 100 + i).bytes, rows, cols);
    });
    const x = problem('f32', 1, cols, SEED + 99).x;
    for (const exact of [false, true]) {
      const ys = c.matvecs(Ws, x, { exact });
      assert.equal(ys.length, Ws.length);
      Ws.forEach((W, i) => assert.equal(firstDiff(ys[i], c.matvec(W, x, { exact })), -1, `${types[i]} exact=${exact}`));
      const out = Ws.map((W) => new Float32Array(W.rows));
      const again = c.matvecs(Ws, x, { exact, out });
      again.forEach((y, i) => {
        assert.equal(y, out[i]);
        assert.equal(firstDiff(y, ys[i]), -1);
      });
    }
    assert.deepEqual(c.matvecs([], x), []);
    for (const W of Ws) W.dispose();
  }
});

test('dequantize(W) equals dequantize(type, bytes) for every type, in one chunk and in many', () => {
  let s = SEED + 1000;
  for (const t of DEQUANT) {
    const cols = Math.max(typeInfo(t).blockSize, 32) * 4;
    for (const rows of [1, 9]) {
      const r = rng(s++);
      const bytes = typeInfo(t).quantize
        ? bq.quantize(
            t,
            new Float32Array(rows * cols).map(() => r.normal() * 100),
          )
        : randomBlocks(t, rows * cols, r);
      const want = bq.dequantize(t, bytes);
      for (const c of [bq, small]) {
        const W = c.tensor(t, bytes, rows, cols);
        assert.equal(firstDiff(c.dequantize(W), want), -1, `${t} ${rows}x${cols}`);
        const out = new Float32Array(rows * cols);
        assert.equal(c.dequantize(W, { out }), out);
        assert.equal(firstDiff(out, want), -1);
        assert.throws(() => c.dequantize(W, { out: new Float32Array(rows * cols + 1) }), RangeError);
        W.dispose();
      }
    }
  }
});

// Byte-order swaps per type, written out here (field offset, width) independently of js/types.js.
const SWAPS = {
  q4_0: [18, [[0, 2]]],
  q8_0: [34, [[0, 2]]],
  q4_K: [
    144,
    [
      [0, 2],
      [2, 2],
    ],
  ],
  q6_K: [210, [[208, 2]]],
  f16: [2, [[0, 2]]],
  f32: [4, [[0, 4]]],
};

/** A little-endian file of 256x3 tensors of the SWAPS types, and the same file big-endian. */
function files() {
  const names = Object.keys(SWAPS);
  const tensors = names.map((t, i) => ({
    name: `w.${t}`,
    type: GGMLType[/** @type {keyof typeof GGMLType} */ (t.toUpperCase())],
    dims: [256, 3],
    data: problem(t, 3, 256, SEED + 2000 + i).bytes,
  }));
  const le = writeGGUF({ kv: [], tensors });
  const g = parseGGUF(le);
  const w = new Bytes({ le: false }).header(3, tensors.length, 0);
  for (const t of g.tensors) w.tensor(t.name, t.dims, t.type, t.offset);
  w.padTo(32);
  for (const t of g.tensors) {
    const [size, fields] = SWAPS[/** @type {keyof typeof SWAPS} */ (t.name.slice(2))];
    const d = g.tensorBytes(t.name).slice();
    for (let o = 0; o < d.length; o += size) for (const [f, n] of fields) d.subarray(o + f, o + f + n).reverse();
    for (const v of d) w.u8(v);
    w.padTo(32);
  }
  return { tensors, le, be: w.bytes() };
}

test('loadTensor reads a tensor or a row range from parseGGUF and openGGUF files, either byte order', async () => {
  const { tensors, le, be } = files();
  assert.equal(parseGGUF(be).littleEndian, false);
  const x = problem('f32', 1, 256, SEED + 3000).x;
  for (const [order, file] of [
    ['LE', le],
    ['BE', be],
  ]) {
    for (const f of [parseGGUF(file), await openGGUF(file)]) {
      for (const t of tensors) {
        const what = `${t.name} ${order} ${'readRows' in f ? 'openGGUF' : 'parseGGUF'}`;
        const W = await bq.loadTensor(f, t.name);
        assert.deepEqual([W.type, W.rows, W.cols, W.byteLength], [t.type, 3, 256, t.data.length], what);
        const mem = new Uint8Array(bq.exports.memory.buffer, W.byteOffset, W.byteLength);
        assert.deepEqual(mem, t.data, what);
        assert.equal(firstDiff(bq.matvec(W, x), bq.matvec(t.type, t.data, 3, x)), -1, what);
        W.dispose();
        const rowBytes = t.data.length / 3;
        const R = await bq.loadTensor(f, t.name, { rows: [1, 2] });
        assert.deepEqual([R.rows, R.cols, R.byteLength], [2, 256, 2 * rowBytes]);
        assert.deepEqual(
          new Uint8Array(bq.exports.memory.buffer, R.byteOffset, R.byteLength),
          t.data.subarray(rowBytes),
        );
        R.dispose();
        const E = await bq.loadTensor(f, t.name, { rows: [3, 0] });
        assert.equal(E.rows, 0);
        assert.deepEqual(bq.matvec(E, x), new Float32Array(0));
        E.dispose();
      }
      await assert.rejects(bq.loadTensor(f, 'nope'), RangeError);
      await assert.rejects(bq.loadTensor(f, tensors[0].name, { rows: [2, 2] }), RangeError);
      await assert.rejects(bq.loadTensor(f, tensors[0].name, { rows: /** @type {any} */ (2) }), TypeError);
    }
  }
  assert.equal(bq.residentBytes, 0);
});

test('a disposed handle, a handle of another codec or a non-handle is refused with a TypeError', () => {
  const { bytes, x } = problem('q4_0', 4, 64, SEED + 4000);
  const W = bq.tensor('q4_0', bytes, 4, 64);
  assert.throws(
    () => small.matvec(W, x),
    (e) => e instanceof TypeError && /another blockquant codec/.test(e.message),
  );
  assert.throws(() => small.dequantize(W), TypeError);
  assert.throws(() => small.matvecs([W], x), TypeError);
  assert.equal(W.disposed, false);
  W.dispose();
  assert.equal(W.disposed, true);
  W.dispose(); // idempotent
  const refused = (/** @type {unknown} */ e) =>
    e instanceof TypeError && /disposed/.test(/** @type {Error} */ (e).message);
  assert.throws(() => bq.matvec(W, x), refused);
  assert.throws(() => bq.matvecs([W], x), refused);
  assert.throws(() => bq.dequantize(W), refused);
  assert.throws(() => W.byteOffset, refused);
  assert.throws(() => bq.matvecs(/** @type {any} */ ([{ type: 2, rows: 4, cols: 64 }]), x), TypeError);
  assert.throws(() => bq.matvecs(/** @type {any} */ (W), x), TypeError);
  assert.throws(
    () => new Tensor(Symbol('x'), /** @type {any} */ (null), 0, 2, 1, 32, 18),
    TypeError,
    'handles are made only by the codec',
  );
  const dispose = /** @type {{ dispose?: symbol }} */ (/** @type {unknown} */ (Symbol)).dispose;
  if (dispose) {
    const V = bq.tensor('q4_0', bytes, 4, 64);
    /** @type {any} */ (V)[dispose]();
    assert.equal(V.disposed, true);
  }
  assert.equal(bq.residentBytes, 0);
});

test('wrong types and sizes are refused before any memory is taken', () => {
  const { bytes, x } = problem('q4_0', 4, 64, SEED + 5000);
  const held = bq.residentBytes,
    mem = bq.memoryBytes;
  assert.throws(() => bq.tensor('q4_0', bytes, 4, 32), RangeError);
  assert.throws(() => bq.tensor('q4_0', bytes, 2, 128 + 32), RangeError);
  assert.throws(() => bq.tensor('q4_0', bytes, 4, 48), RangeError, 'not a whole number of blocks');
  assert.throws(() => bq.tensor('q4_0', bytes, -4, 64), RangeError);
  assert.throws(() => bq.tensor('q4_0', bytes, /** @type {any} */ ('4'), 64), RangeError);
  assert.throws(() => bq.tensor('q4_0', /** @type {any} */ ([1, 2]), 4, 64), TypeError);
  const unsupported = knownTypes().find((t) => !typeInfo(t).dequantize);
  assert.ok(unsupported !== undefined);
  assert.throws(() => bq.tensor(unsupported, bytes, 1, 256), TypeError);
  assert.equal(bq.residentBytes, held);
  assert.equal(bq.memoryBytes, mem);
  const W = bq.tensor('q4_0', bytes, 4, 64);
  assert.throws(() => bq.matvec(W, x.subarray(0, 32)), RangeError);
  assert.throws(() => bq.matvec(W, /** @type {any} */ (Array.from(x))), TypeError);
  assert.throws(() => bq.matvec(W, x, { out: new Float32Array(3) }), RangeError);
  assert.throws(() => bq.matvecs([W, W], x, { out: [new Float32Array(4)] }), TypeError);
  const out = new Float32Array(4).fill(5);
  assert.throws(() => bq.matvecs([W, W], x, { out: [out, new Float32Array(2)] }), RangeError);
  assert.deepEqual(out, new Float32Array(4).fill(5), 'nothing written when a call throws');
  const K = bq.tensor('q8_K', bq.quantize('q8_K', new Float32Array(256)), 1, 256);
  assert.throws(
    () => bq.matvec(K, new Float32Array(256)),
    (e) => e instanceof TypeError && /q8_K/.test(e.message),
  );
  K.dispose();
  W.dispose();
});

test(`random allocation and disposal keep every handle's bytes intact, seed ${SEED}`, () => {
  const r = rng(SEED + 6000);
  /** @type {{ W: Tensor, bytes: Uint8Array }[]} */
  const live = [];
  let lo = Infinity,
    hi = 0;
  const grewFrom = bq.memoryBytes;
  const check = () => {
    const heap = new Uint8Array(bq.exports.memory.buffer);
    const spans = live.map(({ W }) => [W.byteOffset, W.byteOffset + W.byteLength]).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i - 1][1] <= spans[i][0], 'handles overlap');
    for (const { W, bytes } of live) {
      assert.equal(W.byteOffset % 64, 0);
      assert.equal(firstDiff(heap.subarray(W.byteOffset, W.byteOffset + W.byteLength), bytes), -1);
    }
  };
  for (let step = 0; step < 600; step++) {
    if (live.length === 0 || r.next() < 0.55) {
      // Sizes from one block to about 200 KB, so memory grows while handles are live.
      const rows = 1 + Math.floor(r.next() ** 3 * 6000);
      const bytes = new Uint8Array(rows * 34).map(() => (r.next() * 256) | 0);
      const W = bq.tensor('q8_0', bytes, rows, 32);
      lo = Math.min(lo, W.byteOffset);
      hi = Math.max(hi, W.byteOffset + W.byteLength);
      live.push({ W, bytes });
    } else {
      const [{ W }] = live.splice(Math.floor(r.next() * live.length), 1);
      W.dispose();
    }
    check();
  }
  assert.ok(bq.memoryBytes > grewFrom, 'memory grew while handles were live');
  // A handle's products survive growth: the same before and after a large allocation.
  const { W: A, bytes: ab } = live[0];
  const x = new Float32Array(32).map((_, i) => i - 16);
  const before = bq.matvec(A, x);
  const big = bq.tensor('q8_0', new Uint8Array(34 * 40000), 40000, 32);
  assert.equal(firstDiff(bq.matvec(A, x), before), -1);
  assert.equal(firstDiff(bq.dequantize(A), bq.dequantize('q8_0', ab)), -1);
  big.dispose();
  for (const { W } of live) W.dispose();
  assert.equal(bq.residentBytes, 0);
  // Everything freed coalesces: one tensor spanning all the space used fits without growing.
  const mem = bq.memoryBytes;
  const rows = Math.floor((hi - lo) / 34);
  const all = bq.tensor('q8_0', new Uint8Array(rows * 34), rows, 32);
  assert.equal(all.byteOffset, lo);
  assert.equal(bq.memoryBytes, mem);
  all.dispose();
});

test('the heap: best fit, coalescing in every order, double free refused', () => {
  const mem = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
  const heap = new WasmHeap(mem, 1024);
  const a = heap.alloc(100, 'a'),
    b = heap.alloc(64, 'b'),
    c = heap.alloc(1, 'c'),
    d = heap.alloc(5000, 'd');
  assert.deepEqual([a, b, c, d], [1024, 1024 + 128, 1024 + 192, 1024 + 256]);
  assert.equal(heap.held, 128 + 64 + 64 + 5056);
  heap.free(b, 64);
  assert.equal(heap.alloc(10, 'e'), b, 'the smallest hole that fits is reused');
  heap.free(b, 10);
  heap.free(c, 1); // merges with b's block
  heap.free(a, 100); // merges with both
  assert.deepEqual(heap.freeBlocks[0], [1024, 256]);
  heap.free(d, 5000);
  assert.deepEqual(heap.freeBlocks, [[1024, mem.buffer.byteLength - 1024]]);
  assert.equal(heap.held, 0);
  assert.throws(() => heap.free(d, 5000), /freed twice/);
  // Growth extends the free block at the top instead of leaving it behind.
  const size = mem.buffer.byteLength;
  const big = heap.alloc(size, 'big');
  assert.equal(big, 1024);
  assert.equal(mem.buffer.byteLength, 2 * size);
  heap.free(big, size);
  assert.deepEqual(heap.freeBlocks, [[1024, 2 * size - 1024]]);
  assert.throws(
    () => heap.alloc(2 ** 32, 'huge'),
    (e) =>
      e instanceof RangeError && /huge needs 4294967296 bytes/.test(e.message) && /memoryBytes is \d+/.test(e.message),
  );
});

test('the heap stays logarithmic: 80k allocations past 80k holes visit O(log n) free blocks each', () => {
  const mem = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
  const heap = new WasmHeap(mem, 1024);
  const n = 80000;
  // 2n blocks of 64 bytes; every other one freed: n holes of 64 bytes none of which merge.
  const ptrs = Array.from({ length: 2 * n }, (_, i) => heap.alloc(64, `b${i}`));
  for (let i = 0; i < 2 * n; i += 2) heap.free(ptrs[i], 64);
  assert.equal(heap.freeBlocks.length, n + 1, 'n holes and the rest of the memory');
  // Requests the holes cannot hold: each must find the top block without walking the holes.
  const before = heap.visits;
  const big = Array.from({ length: n }, (_, i) => heap.alloc(128, `c${i}`));
  const per = (heap.visits - before) / n;
  assert.ok(per <= 4 * Math.log2(2 * n), `${per.toFixed(1)} free blocks visited per allocation`);
  // Frees that coalesce, and allocations that reuse the holes exactly, stay logarithmic too.
  const v2 = heap.visits;
  for (let i = 1; i < 2 * n; i += 2) heap.free(ptrs[i], 64);
  for (const p of big) heap.free(p, 128);
  assert.deepEqual(heap.freeBlocks, [[1024, mem.buffer.byteLength - 1024]], 'all coalesced');
  assert.ok((heap.visits - v2) / (2 * n) <= 4 * Math.log2(2 * n));
  assert.equal(heap.held, 0);
});

test('a tensor past the wasm32 limit is a RangeError naming it, before its bytes are read', async () => {
  // A file whose Q8_0 tensor of 2^20 rows of 4096 values takes 4.56 GB.
  const rows = 2 ** 20;
  const w = new Bytes().header(3, 1, 0).tensor('huge', [4096, rows], GGMLType.Q8_0, 0).padTo(32);
  const header = w.bytes();
  let reads = 0;
  const source = {
    size: header.length + rows * 4352,
    read: async (/** @type {number} */ o, /** @type {number} */ n) => {
      reads++;
      const out = new Uint8Array(n);
      if (o < header.length) out.set(header.subarray(o, o + n));
      return out;
    },
  };
  const f = await openGGUF(source);
  reads = 0;
  const held = bq.residentBytes;
  await assert.rejects(
    bq.loadTensor(f, 'huge'),
    (e) =>
      e instanceof RangeError &&
      /tensor huge/.test(e.message) &&
      /4563402752 bytes/.test(e.message) &&
      new RegExp(`memoryBytes is ${bq.memoryBytes}`).test(e.message),
  );
  assert.equal(reads, 0);
  assert.equal(bq.residentBytes, held);
  // A row range of it loads.
  const R = await bq.loadTensor(f, 'huge', { rows: [rows - 2, 2] });
  assert.deepEqual([R.rows, R.cols, R.byteLength], [2, 4096, 2 * 4352]);
  assert.deepEqual(bq.matvec(R, new Float32Array(4096).fill(1)), new Float32Array(2));
  R.dispose();
});
