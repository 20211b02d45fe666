// openGGUF's allowTruncated: a file whose header is whole but whose data is cut short (a partial
// download) opens with every tensor listed and `available` telling which have all their bytes;
// those read as the whole file's bytes, the missing ones throw TRUNCATED naming the bytes; without
// the option it is refused as before; a header cut short is refused even with it. From bytes, a
// Blob and an HTTP Range server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openGGUF, parseGGUF, writeGGUF, GGMLType, GGUFError } from '../js/node.js';
import { rangeServer } from './lib/http-servers.js';

// Four F32 tensors of 64, 128, 256 and 64 values, each padded to the 32-byte alignment.
const f32 = (/** @type {number} */ n, /** @type {number} */ k) =>
  new Uint8Array(Float32Array.from({ length: n }, (_, i) => k + i / 1000).buffer);
const full = writeGGUF({
  kv: [{ key: 'general.architecture', type: 8, value: 'llama' }],
  tensors: [
    { name: 'a', type: GGMLType.F32, dims: [64], data: f32(64, 1) },
    { name: 'b', type: GGMLType.F32, dims: [32, 4], data: f32(128, 2) },
    { name: 'c', type: GGMLType.F32, dims: [64, 4], data: f32(256, 3) },
    { name: 'd', type: GGMLType.F32, dims: [64], data: f32(64, 4) },
  ],
});
const g = parseGGUF(full);
const start = (/** @type {string} */ n) =>
  g.dataOffset + /** @type {any} */ (g.tensors.find((t) => t.name === n)).offset;
// Cut inside c: a and b are whole, c has its first 100 bytes, d none.
const cut = start('c') + 100;
const part = full.slice(0, cut);

for (const [what, source] of /** @type {[string, () => Promise<unknown>][]} */ ([
  ['bytes', async () => part],
  ['a Blob', async () => new Blob([part])],
])) {
  test(`a file cut short in its data, from ${what}`, async () => {
    await assert.rejects(openGGUF(await source()), (e) => e instanceof GGUFError && e.code === 'BAD_OFFSET');
    const f = await openGGUF(await source(), { allowTruncated: true });
    assert.deepEqual(
      f.tensors.map((t) => [t.name, t.available]),
      [
        ['a', true],
        ['b', true],
        ['c', false],
        ['d', false],
      ],
    );
    // The whole file's size: d's end (its 256 bytes), and what arrived.
    assert.deepEqual(f.truncated, { size: cut, expected: start('d') + 256 });
    assert.deepEqual(await f.readTensor('b'), g.tensorBytes('b'));
    // c: 100 of its 1024 bytes arrived, not one whole 256-byte row: the tensor and its first row
    // both fail, naming the missing bytes.
    await assert.rejects(f.readTensor('c'), (e) => {
      assert.ok(e instanceof GGUFError && e.code === 'TRUNCATED', String(e));
      assert.match(
        e.message,
        new RegExp(`data missing: bytes ${cut}\\.\\.${start('c') + 1023} of ${start('d') + 256}`),
      );
      return true;
    });
    await assert.rejects(f.readRows('c', 0, 1), (e) => e instanceof GGUFError && e.code === 'TRUNCATED');
    await assert.rejects(f.readTensor('d'), /data missing/);
  });
}

test('rows of a partly present tensor that did arrive can be read', async () => {
  const cut2 = start('c') + 600; // rows 0 and 1 of c (256 bytes each) are whole
  const f = await openGGUF(full.slice(0, cut2), { allowTruncated: true });
  assert.deepEqual(await f.readRows('c', 0, 2), g.tensorBytes('c').subarray(0, 512));
  await assert.rejects(f.readRows('c', 1, 2), /data missing/);
});

test('a whole file with the option: every tensor available, not truncated', async () => {
  const f = await openGGUF(full, { allowTruncated: true });
  assert.ok(f.tensors.every((t) => t.available === true));
  assert.equal(f.truncated, null);
});

test('a header cut short is refused even with allowTruncated; the option is a boolean', async () => {
  await assert.rejects(
    openGGUF(full.slice(0, g.dataOffset - 40), { allowTruncated: true }),
    (e) => e instanceof GGUFError && e.code === 'TRUNCATED',
  );
  await assert.rejects(openGGUF(full, { allowTruncated: /** @type {any} */ ('yes') }), TypeError);
});

test('a file cut short, over HTTP Range', async () => {
  const server = await rangeServer(part);
  try {
    const f = await openGGUF(server.url, { allowTruncated: true });
    assert.deepEqual(
      f.tensors.map((t) => t.available),
      [true, true, false, false],
    );
    assert.deepEqual(await f.readTensor('a'), g.tensorBytes('a'));
    await assert.rejects(f.readTensor('c'), /data missing/);
  } finally {
    await server.close();
  }
});
