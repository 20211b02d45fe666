// The GGUF reader and writer: every value type, each version, both byte orders, every refusal,
// round trips, lazy reading, split models, HTTP Range, and a seeded mutation fuzz.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { parseGGUF, openGGUF, writeGGUF, GGUFError, GGUFValueType as VT, GGMLType } from '../js/node.js';
import { Bytes, sampleFile } from './lib/gguf-bytes.js';
import { SEED, codec, rng } from './lib/helpers.js';

const sample = sampleFile;

function refuses(bytes, code, options) {
  assert.throws(
    () => parseGGUF(bytes, options),
    (e) => {
      assert.ok(e instanceof GGUFError, `expected GGUFError, got ${e}`);
      assert.equal(e.code, code, e.message);
      assert.equal(typeof e.offset, 'number');
      return true;
    },
  );
}

test('every value type, little-endian v3', () => {
  const { bytes, dataOffset } = sample();
  const g = parseGGUF(bytes);
  assert.equal(g.version, 3);
  assert.equal(g.alignment, 32);
  assert.equal(g.littleEndian, true);
  assert.equal(g.dataOffset, dataOffset);
  const m = g.metadata;
  assert.equal(m.get('u8'), 200);
  assert.equal(m.get('i8'), -5);
  assert.equal(m.get('u16'), 60000);
  assert.equal(m.get('i16'), -300);
  assert.equal(m.get('u32'), 4000000000);
  assert.equal(m.get('i32'), -7);
  assert.equal(m.get('f32'), 1.5);
  assert.equal(m.get('bool'), true);
  assert.equal(m.get('str'), '▁héllo\u0000x');
  assert.equal(m.get('u64'), 2n ** 63n + 5n);
  assert.equal(m.get('i64'), -(2n ** 40n));
  assert.equal(m.get('f64'), Math.PI);
  assert.deepEqual(m.get('arr.f32'), new Float32Array([1, -2, 0.25]));
  assert.deepEqual(m.get('arr.str'), ['a', '▁b']);
  assert.deepEqual(m.get('arr.bool'), new Uint8Array([1, 0, 7])); // the stored bytes: nonzero is true
  assert.deepEqual(m.get('arr.i64'), new BigInt64Array([-1n, 3n]));
  assert.deepEqual(m.get('arr.nested'), [new Int32Array([1, -2]), ['z']]);
  assert.deepEqual(g.kv.map((e) => e.key).slice(0, 3), ['u8', 'i8', 'u16']);
  assert.equal(g.kv.find((e) => e.key === 'arr.str').itemType, VT.STRING);
  assert.deepEqual(g.tensors[0], {
    name: 'weights',
    type: 8,
    dims: [64, 2],
    offset: 0,
    nElements: 128,
    byteLength: 136,
  });
  assert.equal(g.tensorBytes('weights').length, 136);
  assert.equal(g.tensorBytes('weights')[5], 5);
  assert.deepEqual(new Float32Array(g.tensorBytes(g.tensors[1]).slice().buffer), new Float32Array([1, 2, 3]));
});

test('version 2, big-endian, and version 1 only on request', () => {
  const le = parseGGUF(sample().bytes);
  for (const opts of [{ version: 2 }, { le: false }]) {
    const g = parseGGUF(sample(opts).bytes);
    assert.equal(g.littleEndian, opts.le ?? true);
    assert.deepEqual([...g.metadata], [...le.metadata]);
    assert.deepEqual(g.tensors, le.tensors);
  }
  const v1 = sample({ version: 1 }).bytes;
  refuses(v1, 'BAD_VERSION');
  const g = parseGGUF(v1, { allowV1: true });
  assert.equal(g.version, 1);
  assert.deepEqual([...g.metadata], [...le.metadata]);
});

test('a parse of an ArrayBuffer or of any Uint8Array view', () => {
  const { bytes } = sample();
  const big = new Uint8Array(bytes.length + 7);
  big.set(bytes, 7);
  const g = parseGGUF(big.subarray(7));
  assert.equal(g.tensorBytes('weights')[5], 5);
  assert.equal(parseGGUF(bytes.slice().buffer).tensors.length, 2);
});

test('strings: invalid UTF-8 becomes U+FFFD, or is refused with strictUtf8', () => {
  const w = new Bytes().header(3, 0, 1);
  w.str('k')
    .u32(VT.STRING)
    .str(new Uint8Array([0x61, 0xff, 0x62]));
  assert.equal(parseGGUF(w.bytes()).metadata.get('k'), 'a\ufffdb');
  refuses(w.bytes(), 'BAD_UTF8', { strictUtf8: true });
});

test('alignment: a UINT32 power of two moves the data; anything else is refused', () => {
  const make = (type, write) => {
    const w = new Bytes().header(3, 1, 1);
    w.str('general.alignment').u32(type);
    write(w);
    w.tensor('t', [32], GGMLType.F32, 0).padTo(64);
    for (let i = 0; i < 128; i++) w.u8(1);
    return w.bytes();
  };
  const g = parseGGUF(make(VT.UINT32, (w) => w.u32(64)));
  assert.equal(g.alignment, 64);
  assert.equal(g.dataOffset % 64, 0);
  refuses(
    make(VT.UINT32, (w) => w.u32(0)),
    'BAD_ALIGNMENT',
  );
  refuses(
    make(VT.UINT32, (w) => w.u32(48)),
    'BAD_ALIGNMENT',
  );
  refuses(
    make(VT.UINT64, (w) => w.u64(64)),
    'BAD_ALIGNMENT',
  );
});

test('hostile headers are refused with GGUFError', () => {
  const t0 = performance.now();
  const huge = new Bytes().header(3, 2n ** 62n, 0).bytes();
  const padded = new Uint8Array(100);
  padded.set(huge);
  refuses(padded, 'TOO_LARGE'); // 2^62 tensors in 100 bytes: refused before any allocation
  const elapsed = performance.now() - t0;
  test.diagnostic?.(`2^62-tensor file refused in ${elapsed.toFixed(3)} ms`);

  refuses(new Uint8Array([0x47, 0x47, 0x55, 0x47, 3, 0, 0, 0]), 'BAD_MAGIC');
  refuses(new Bytes().header(4, 0, 0).bytes(), 'BAD_VERSION');
  refuses(new Bytes().header(0, 0, 0).bytes(), 'BAD_VERSION');
  refuses(new Bytes().header(3, 0, 2n ** 40n).bytes(), 'TOO_LARGE');
  const kv = (f) => {
    const w = new Bytes().header(3, 0, 1);
    f(w);
    return w.bytes();
  };
  refuses(
    kv((w) => w.str('k').u32(13).u32(0)),
    'BAD_VALUE_TYPE',
  );
  refuses(
    kv((w) => w.str('k').u32(VT.ARRAY).u32(99).u64(0)),
    'BAD_VALUE_TYPE',
  );
  refuses(
    kv((w) =>
      w
        .str('k')
        .u32(VT.STRING)
        .u64(2n ** 50n),
    ),
    'TOO_LARGE',
  );
  refuses(
    kv((w) => w.str('k').u32(VT.ARRAY).u32(VT.UINT64).u64(1000)),
    'TOO_LARGE',
  );
  refuses(
    kv((w) => w.str('').u32(VT.UINT8).u8(0)),
    'EMPTY_KEY',
  );
  const dup = new Bytes().header(3, 0, 2);
  dup.str('k').u32(VT.UINT8).u8(1).str('k').u32(VT.UINT8).u8(2);
  refuses(dup.bytes(), 'DUPLICATE_KEY');
  // Nesting: 4 levels are fine, 5 are refused (and a deep crafted file cannot recurse further).
  const nest = (levels) =>
    kv((w) => {
      w.str('n').u32(VT.ARRAY);
      for (let i = 1; i < levels; i++) w.u32(VT.ARRAY).u64(1);
      w.u32(VT.UINT8).u64(1).u8(9);
    });
  assert.deepEqual(parseGGUF(nest(4)).metadata.get('n'), [[[new Uint8Array([9])]]]);
  refuses(nest(5), 'TOO_DEEP');
  refuses(nest(5000), 'TOO_DEEP');
});

test('hostile tensor infos are refused with GGUFError', () => {
  const file = (tensors, dataBytes = 4096) => {
    const w = new Bytes().header(3, tensors.length, 0);
    for (const t of tensors) w.tensor(...t);
    w.padTo(32);
    for (let i = 0; i < dataBytes; i++) w.u8(0);
    return w.bytes();
  };
  assert.equal(
    parseGGUF(
      file([
        ['a', [32, 2], GGMLType.Q4_0, 0],
        ['b', [4], GGMLType.F32, 64],
      ]),
    ).tensors.length,
    2,
  );
  refuses(
    file([
      ['a', [32], 2, 0],
      ['a', [32], 2, 32],
    ]),
    'DUPLICATE_TENSOR',
  );
  refuses(file([['a', [1, 1, 1, 1, 1], 0, 0]]), 'BAD_DIMS');
  refuses(file([['a', [2n ** 62n, 4], 0, 0]]), 'OVERFLOW');
  refuses(file([['a', [2n ** 63n], 0, 0]]), 'OVERFLOW');
  // An unknown type id is listed, not refused (tests/gguf-unknown.test.js).
  assert.equal(parseGGUF(file([['a', [32], 4, 0]])).tensors[0].byteLength, null);
  assert.equal(parseGGUF(file([['a', [32], 1000, 0]])).tensors[0].unreadable.code, 'UNKNOWN_GGML_TYPE');
  refuses(file([['a', [33], GGMLType.Q4_0, 0]]), 'BAD_SHAPE');
  refuses(file([['a', [], GGMLType.Q4_0, 0]]), 'BAD_SHAPE'); // no dims: ne0 = 1
  assert.equal(parseGGUF(file([['s', [], GGMLType.F32, 0]])).tensors[0].byteLength, 4);
  refuses(file([['a', [32], GGMLType.F32, 16]]), 'BAD_OFFSET'); // misaligned
  refuses(
    file([
      ['a', [32], GGMLType.F32, 0],
      ['b', [32], GGMLType.F32, 64],
    ]),
    'BAD_OFFSET',
  ); // overlaps
  refuses(file([['a', [32], GGMLType.F32, 0]], 100), 'BAD_OFFSET'); // past the end
  refuses(file([['x'.repeat(64), [32], GGMLType.F32, 0]]), 'NAME_TOO_LONG');
  assert.equal(parseGGUF(file([['x'.repeat(63), [32], GGMLType.F32, 0]])).tensors.length, 1);
});

test('truncation anywhere is a GGUFError', () => {
  const { bytes } = sample();
  for (let n = 0; n < bytes.length; n++) {
    assert.throws(() => parseGGUF(bytes.subarray(0, n)), GGUFError, `prefix of ${n} bytes`);
  }
});

test('writer round trips: parse(write(x)) = x and write(parse(f)) = f', () => {
  const g = parseGGUF(sample().bytes);
  const tensors = g.tensors.map((t) => ({ name: t.name, type: t.type, dims: t.dims, data: g.tensorBytes(t) }));
  const f = writeGGUF({ kv: g.kv, tensors });
  const h = parseGGUF(f);
  assert.deepEqual(h.kv, g.kv);
  assert.deepEqual(h.tensors, g.tensors);
  for (const t of tensors) assert.deepEqual(h.tensorBytes(t.name), t.data);
  assert.deepEqual(writeGGUF({ kv: h.kv, tensors }), f);
  // gguf-py's layout: data section aligned, every tensor padded to the alignment.
  assert.equal(h.dataOffset % 32, 0);
  assert.equal(f.length, h.dataOffset + 160 + 32);
  const a = writeGGUF({ kv: [], tensors, alignment: 64 });
  assert.equal(parseGGUF(a).alignment, 64);
  assert.equal(parseGGUF(a).tensors[1].offset, 192);
});

test('openGGUF reads lazily from buffers, Blobs, files and custom sources', async () => {
  const { bytes } = sample();
  let read = 0;
  const counting = {
    size: bytes.length,
    name: 'counting',
    read: async (o, n) => {
      read += n;
      return bytes.slice(o, o + n);
    },
  };
  for (const src of [bytes, bytes.slice().buffer, new Blob([bytes]), counting]) {
    const f = await openGGUF(src);
    assert.equal(f.tensors.length, 2);
    assert.deepEqual(await f.readTensor('weights'), parseGGUF(bytes).tensorBytes('weights'));
    const before = read;
    const row = await f.readRows('weights', 1, 1);
    assert.equal(row.length, 68);
    assert.equal(row[0], 68);
    if (src === counting) assert.equal(read - before, 68, 'readRows reads only the rows');
  }
  await assert.rejects(
    openGGUF(new Blob([bytes.subarray(0, bytes.length - 1)])),
    (e) => e instanceof GGUFError && e.code === 'BAD_OFFSET',
  );
  await assert.rejects(openGGUF(/** @type {any} */ (42)), TypeError);
});

test('openGGUF grows its header reads: a 3 MB vocabulary', async () => {
  const vocab = Array.from({ length: 200000 }, (_, i) => `▁tok${i}`);
  const f = writeGGUF({
    kv: [{ key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: vocab }],
    tensors: [],
  });
  assert.ok(f.length > 3e6);
  const g = await openGGUF(new Blob([f]));
  assert.equal(g.metadata.get('tokenizer.ggml.tokens')[199999], '▁tok199999');
  await assert.rejects(openGGUF(new Blob([f]), { maxHeaderBytes: 1 << 20 }), (e) => e.code === 'HEADER_TOO_LARGE');
});

test('split models open as one file, validated against split.*', async () => {
  const data = new Uint8Array(34).fill(1);
  const shard = (no, names) =>
    writeGGUF({
      kv: [
        { key: 'split.no', type: VT.UINT16, value: no },
        { key: 'split.count', type: VT.UINT16, value: 2 },
        { key: 'split.tensors.count', type: VT.INT32, value: 3 },
      ],
      tensors: names.map((name) => ({ name, type: GGMLType.Q8_0, dims: [32], data })),
    });
  const a = shard(0, ['t0', 't1']),
    b = shard(1, ['t2']);
  const f = await openGGUF([a, b]);
  assert.deepEqual(
    f.tensors.map((t) => t.name),
    ['t0', 't1', 't2'],
  );
  assert.deepEqual(await f.readTensor('t2'), data);
  await assert.rejects(openGGUF([a]), (e) => e.code === 'SPLIT');
  await assert.rejects(openGGUF([b, a]), (e) => e.code === 'SPLIT');
});

test('HTTP sources use Range requests; a server without Range support is refused', async () => {
  const { bytes } = sample();
  let ranged = true,
    requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
    if (!ranged || !m) {
      res.writeHead(200, { 'content-length': bytes.length });
      res.end(Buffer.from(bytes));
      return;
    }
    const a = Number(m[1]),
      b = Math.min(Number(m[2]), bytes.length - 1);
    // A strong ETag: without one the pieces of a Range read could not be checked (NO_VALIDATOR).
    res.writeHead(206, {
      'content-range': `bytes ${a}-${b}/${bytes.length}`,
      'content-length': b - a + 1,
      etag: '"s1"',
    });
    res.end(Buffer.from(bytes.subarray(a, b + 1)));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}/model.gguf`;
  try {
    const f = await openGGUF(new URL(url));
    assert.deepEqual(await f.readRows('weights', 1, 1), parseGGUF(bytes).tensorBytes('weights').subarray(68));
    ranged = false;
    await assert.rejects(openGGUF(url), (e) => e instanceof GGUFError && e.code === 'NO_RANGE');
    const full = await openGGUF(url, { allowFullDownload: true });
    assert.equal(full.tensors.length, 2);
    assert.ok(requests >= 4);
  } finally {
    server.close();
  }
});

test('dequantizeTensor and dequantizeRows decode little- and big-endian files alike', async () => {
  const bq = await codec();
  const x = new Float32Array(64 * 3).map((_, i) => Math.sin(i) * 4);
  const types = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q8_1', 'f16', 'bf16', 'f32'];
  const tensors = types.map((t) => ({
    name: t,
    type: GGMLType[t.toUpperCase()],
    dims: [64, 3],
    data: bq.quantize(t, x),
  }));
  const le = writeGGUF({ kv: [], tensors });
  // The same file big-endian: header fields and each block's d/m/s/qh (and float values) swapped.
  const g = parseGGUF(le);
  const w = new Bytes({ le: false }).header(3, tensors.length, 0);
  for (const t of g.tensors) w.tensor(t.name, t.dims, t.type, t.offset);
  w.padTo(32);
  const swaps = {
    q4_0: [[0, 2]],
    q4_1: [
      [0, 2],
      [2, 2],
    ],
    q5_0: [
      [0, 2],
      [2, 4],
    ],
    q5_1: [
      [0, 2],
      [2, 2],
      [4, 4],
    ],
    q8_0: [[0, 2]],
    q8_1: [
      [0, 2],
      [2, 2],
    ],
    f16: [[0, 2]],
    bf16: [[0, 2]],
    f32: [[0, 4]],
  };
  const sizes = { q4_0: 18, q4_1: 20, q5_0: 22, q5_1: 24, q8_0: 34, q8_1: 36, f16: 2, bf16: 2, f32: 4 };
  for (const t of g.tensors) {
    const d = g.tensorBytes(t).slice();
    for (let o = 0; o < d.length; o += sizes[t.name])
      for (const [f, n] of swaps[t.name]) d.subarray(o + f, o + f + n).reverse();
    for (const v of d) w.u8(v);
    w.padTo(32);
  }
  const be = w.bytes();
  assert.equal(parseGGUF(be).littleEndian, false);
  for (const t of types) {
    const want = bq.dequantize(t, tensors.find((x) => x.name === t).data);
    assert.deepEqual(await bq.dequantizeTensor(parseGGUF(le), t), want, `${t} LE`);
    assert.deepEqual(await bq.dequantizeTensor(parseGGUF(be), t), want, `${t} BE`);
    assert.deepEqual(await bq.dequantizeRows(await openGGUF(be), t, 1, 2), want.subarray(64), `${t} BE rows`);
  }
});

test(`mutation fuzz: every mutant parses or throws GGUFError, seed ${SEED}`, () => {
  const r = rng(SEED);
  const { bytes } = sample();
  const base = writeGGUF({ kv: parseGGUF(bytes).kv, tensors: [] });
  let refused = 0;
  const t0 = performance.now();
  for (let i = 0; i < 3000; i++) {
    const src = i % 2 ? bytes : base;
    let m = src.slice();
    const kind = i % 4;
    const at = Math.floor(r.next() * m.length);
    if (kind === 0) m[at] = Math.floor(r.next() * 256);
    else if (kind === 1)
      for (let k = 0; k < 8 && at + k < m.length; k++) m[at + k] = 0xff; // huge u64s
    else if (kind === 2) m = m.subarray(0, at);
    else {
      m[at] ^= 1 << Math.floor(r.next() * 8);
      m[(at * 7) % m.length] = Math.floor(r.next() * 256);
    }
    try {
      parseGGUF(m);
    } catch (e) {
      if (!(e instanceof GGUFError)) throw new Error(`mutant ${i} (kind ${kind}, byte ${at}) threw ${e}`);
      refused++;
    }
  }
  test.diagnostic?.(`3000 mutants, ${refused} refused, ${(performance.now() - t0).toFixed(0)} ms in all`);
  assert.ok(refused > 1000);
});
