// The GGUF header reader's input handling (issue 11): every kind of byte container read as its own
// bytes and never modified, API misuse as TypeError/RangeError, bounded memory for hostile headers,
// no other exception type escaping, and ggml's refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGGUF, openGGUF, GGUFError, GGUFValueType as VT, GGMLType } from '../js/node.js';
import { Bytes, sampleFile } from './lib/gguf-bytes.js';

/** @param {() => unknown} f @param {string} code */
function refuses(f, code) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof GGUFError, `expected GGUFError ${code}, got ${e}`);
    assert.equal(e.code, code, e.message);
    assert.equal(typeof e.offset, 'number');
    return true;
  });
}

/** The values the sample file holds, checked field by field (numeric arrays included). */
function checkSample(g, le) {
  const m = g.metadata;
  assert.equal(g.littleEndian, le);
  assert.equal(m.get('u16'), 60000);
  assert.equal(m.get('u64'), 2n ** 63n + 5n);
  assert.equal(m.get('f64'), Math.PI);
  assert.equal(m.get('str'), '▁héllo\u0000x');
  assert.deepEqual(m.get('arr.f32'), new Float32Array([1, -2, 0.25]));
  assert.deepEqual(m.get('arr.i64'), new BigInt64Array([-1n, 3n]));
  assert.deepEqual(m.get('arr.nested'), [new Int32Array([1, -2]), ['z']]);
  assert.deepEqual(m.get('arr.bool'), new Uint8Array([1, 0, 7]));
  assert.deepEqual(g.tensorBytes('weights').subarray(0, 3), new Uint8Array([0, 1, 2]));
  const bias = g.tensorBytes('bias');
  assert.equal(bias.length, 12);
  assert.equal(new DataView(bias.buffer, bias.byteOffset, 12).getFloat32(8, le), 3);
}

test('a Node Buffer inside the shared pool is read as its own bytes, and left unchanged', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-read-'));
  try {
    for (const le of [true, false]) {
      const { bytes } = sampleFile({ le });
      assert.ok(bytes.length < 4096, 'small enough for the Buffer pool');
      Buffer.from('x'); // the next pooled Buffer starts past byte 0 of the pool
      const pooled = Buffer.from(bytes);
      assert.ok(pooled.byteOffset > 0, 'the Buffer is a view at a non-zero offset');
      const path = join(dir, `s${le}.gguf`);
      writeFileSync(path, bytes);
      Buffer.from('y');
      const read = readFileSync(path);
      for (const buf of [pooled, read]) {
        const before = Uint8Array.from(buf);
        checkSample(parseGGUF(buf), le);
        assert.deepEqual(Uint8Array.from(buf), before, 'the caller bytes are unchanged');
      }
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('every ArrayBufferView and ArrayBuffer is read as its bytes; nothing else is accepted', () => {
  for (const le of [true, false]) {
    const { bytes } = sampleFile({ le });
    const n = bytes.length + (-bytes.length & 7);
    const big = new Uint8Array(n + 24);
    big.set(bytes, 8);
    const before = big.slice();
    const views = [
      big.subarray(8, 8 + bytes.length),
      new DataView(big.buffer, 8, bytes.length),
      new Float64Array(big.buffer, 8, n / 8), // as its bytes: trailing zeros past the last tensor
      new Int16Array(big.buffer, 8, n / 2),
      bytes.slice().buffer,
    ];
    for (const v of views) checkSample(parseGGUF(v), le);
    assert.deepEqual(big, before);
  }
  for (const bad of [null, undefined, 'GGUF', 42, {}, [0x47, 0x47, 0x55, 0x46], new Blob([])]) {
    assert.throws(() => parseGGUF(/** @type {any} */ (bad)), TypeError, String(bad));
  }
});

test('version 1 files in both byte orders (u32 counts are not swapped as u64 halves)', () => {
  for (const le of [true, false]) checkSample(parseGGUF(sampleFile({ le, version: 1 }).bytes, { allowV1: true }), le);
});

test('a view of a SharedArrayBuffer is read like any other', () => {
  const { bytes } = sampleFile();
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
  shared.set(bytes);
  checkSample(parseGGUF(shared), true);
});

test('options are validated before any work, by parseGGUF and openGGUF', async () => {
  const junk = new Uint8Array([1, 2, 3]);
  const { bytes } = sampleFile();
  for (const [opt, E] of [
    [null, TypeError],
    [5, TypeError],
    ['x', TypeError],
    [{ maxDepth: '4' }, TypeError],
    [{ maxDepth: 4n }, TypeError],
    [{ maxDepth: 1.5 }, RangeError],
    [{ maxDepth: NaN }, RangeError],
    [{ maxDepth: Infinity }, RangeError],
    [{ maxDepth: 0 }, RangeError],
    [{ maxDepth: -1 }, RangeError],
    [{ maxDepth: 1e9 }, RangeError],
    [{ allowV1: 1 }, TypeError],
    [{ allowV1: 'yes' }, TypeError],
    [{ strictUtf8: null }, TypeError],
  ]) {
    const msg = String(opt && Object.entries(opt));
    assert.throws(() => parseGGUF(junk, /** @type {any} */ (opt)), E, msg);
    await assert.rejects(openGGUF(bytes, /** @type {any} */ (opt)), E, msg);
  }
  // A deep crafted file cannot make the reader recurse past a sane cap, whatever maxDepth says.
  const w = new Bytes().header(3, 0, 1);
  w.str('n').u32(VT.ARRAY);
  for (let i = 1; i < 100000; i++) w.u32(VT.ARRAY).u64(1);
  w.u32(VT.UINT8).u64(1).u8(9);
  assert.throws(() => parseGGUF(w.bytes(), { maxDepth: 1e6 }), /maxDepth/);
  refuses(() => parseGGUF(w.bytes(), { maxDepth: 64 }), 'TOO_DEEP');
  assert.equal(parseGGUF(bytes, { maxDepth: 2, allowV1: false, strictUtf8: true }).tensors.length, 2);
});

/** A header with one key `k`: an array of n arrays of `inner` items, each empty. */
function nestedEmpty(n, inner) {
  const b = new Uint8Array(64 + n * 12);
  const w = new Bytes().header(3, 0, 1);
  w.str('k').u32(VT.ARRAY).u32(VT.ARRAY).u64(n);
  b.set(w.bytes());
  const dv = new DataView(b.buffer);
  let p = w.length;
  for (let i = 0; i < n; i++, p += 12) dv.setUint32(p, inner, true); // count 0 is already there
  return b.subarray(0, p);
}

test('memory: 16 MB of empty nested arrays is refused with LIMIT naming the field', () => {
  const n = Math.floor((16 << 20) / 12);
  assert.throws(
    () => parseGGUF(nestedEmpty(n, VT.UINT8)),
    (e) => e instanceof GGUFError && e.code === 'LIMIT' && /"k"\[\d+\]/.test(e.message),
  );
  // Arrays of empty string arrays cost less than the budget allows: parsed, every item there.
  const g = parseGGUF(nestedEmpty(1 << 16, VT.STRING));
  assert.equal(g.metadata.get('k').length, 1 << 16);
  assert.deepEqual(g.metadata.get('k')[65535], []);
});

test('memory: a 15 MB vocabulary of short tokens parses', () => {
  const n = 1 << 20;
  const w = new Bytes().header(3, 0, 1);
  w.str('tokenizer.ggml.tokens').u32(VT.ARRAY).u32(VT.STRING).u64(n);
  const head = w.bytes();
  const b = new Uint8Array(head.length + n * 15);
  b.set(head);
  const dv = new DataView(b.buffer);
  const enc = new TextEncoder();
  const tok = (i) => `▁${String.fromCharCode(97 + (i % 26), 97 + ((i >> 5) % 26), 97 + ((i >> 10) % 26))}${i % 10}`;
  let p = head.length;
  for (let i = 0; i < n; i++, p += 15) {
    dv.setBigUint64(p, 7n, true);
    assert.equal(enc.encodeInto(tok(i), b.subarray(p + 8, p + 15)).written, 7);
  }
  const toks = parseGGUF(b).metadata.get('tokenizer.ggml.tokens');
  assert.equal(toks.length, n);
  for (const i of [0, 1, 777, n - 1]) assert.equal(toks[i], tok(i));
});

test('BOOL arrays are the stored bytes as a Uint8Array copy (nonzero is true), at any length', () => {
  const n = 2 ** 27; // past the longest JS Array of booleans V8 builds
  const w = new Bytes().header(3, 0, 1);
  w.str('b').u32(VT.ARRAY).u32(VT.BOOL).u64(n);
  const head = w.bytes();
  const b = new Uint8Array(head.length + n);
  b.set(head);
  b[head.length] = 1;
  b[head.length + n - 1] = 0xfe;
  const v = parseGGUF(b).metadata.get('b');
  assert.ok(v instanceof Uint8Array);
  assert.equal(v.length, n);
  assert.equal(v[0], 1);
  assert.equal(v[n - 1], 0xfe);
  b[head.length] = 0;
  assert.equal(v[0], 1, 'a copy, not a view of the input');
});

test('a string longer than a JS engine can hold is refused with LIMIT, not RangeError', () => {
  const n = 2 ** 29; // V8 caps strings at 2^29 - 24 UTF-16 units
  const w = new Bytes().header(3, 0, 1);
  w.str('s').u32(VT.STRING).u64(n);
  const head = w.bytes();
  const b = new Uint8Array(head.length + n); // zero pages: never touched if refused up front
  b.set(head);
  refuses(() => parseGGUF(b), 'LIMIT');
});

test('dimensions above 2^53 are refused (a zero dimension makes them fit), not rounded', () => {
  const w = new Bytes().header(3, 1, 0);
  w.tensor('t', [0, 2n ** 60n + 1n], GGMLType.F32, 0).padTo(32);
  refuses(() => parseGGUF(w.bytes()), 'OVERFLOW');
  const ok = new Bytes().header(3, 1, 0);
  ok.tensor('t', [0, 2 ** 53 - 1], GGMLType.F32, 0).padTo(32);
  assert.deepEqual(parseGGUF(ok.bytes()).tensors[0].dims, [0, 2 ** 53 - 1]);
});

test('tensor data must be packed in file order at aligned offsets, as ggml requires', () => {
  const file = (tensors) => {
    const w = new Bytes().header(3, tensors.length, 0);
    for (const t of tensors) w.tensor(...t);
    w.padTo(32);
    for (let i = 0; i < 512; i++) w.u8(i);
    return w.bytes();
  };
  const ok = parseGGUF(
    file([
      ['a', [8], GGMLType.F32, 0],
      ['b', [8], GGMLType.F32, 32],
      ['c', [0], GGMLType.F32, 64],
      ['d', [16], GGMLType.F32, 64],
    ]),
  );
  assert.deepEqual(
    ok.tensors.map((t) => t.offset),
    [0, 32, 64, 64],
  );
  refuses(
    () =>
      parseGGUF(
        file([
          ['b', [8], GGMLType.F32, 32],
          ['a', [8], GGMLType.F32, 0],
        ]),
      ),
    'BAD_OFFSET',
  ); // out of order
  refuses(
    () =>
      parseGGUF(
        file([
          ['a', [8], GGMLType.F32, 0],
          ['b', [8], GGMLType.F32, 64],
        ]),
      ),
    'BAD_OFFSET',
  ); // a gap
  refuses(() => parseGGUF(file([['a', [8], GGMLType.F32, 32]])), 'BAD_OFFSET');
});
