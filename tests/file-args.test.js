// The file calls (loadTensor, dequantizeTensor, dequantizeRows) and tensor handles given what a
// caller may hand them: a TensorInfo instead of a name, a file-like object whose reader returns
// the wrong thing or throws, a forged handle. Each is a clear error (or works), never a message
// about JavaScript internals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF, openGGUF, GGUFError } from '../js/index.js';
import { Tensor } from '../js/tensor.js';
import { codec } from './lib/helpers.js';
import { sample } from './lib/source-fixtures.js';

const bq = await codec();
const { bytes } = sample();

test('loadTensor, dequantizeTensor and dequantizeRows take a TensorInfo as well as a name', async () => {
  for (const f of [parseGGUF(bytes), await openGGUF(bytes)]) {
    const info = f.tensors.find((t) => t.name === 'w');
    assert.ok(info);
    assert.deepEqual(await bq.dequantizeTensor(f, info), await bq.dequantizeTensor(f, 'w'));
    assert.deepEqual(await bq.dequantizeRows(f, info, 1, 1), await bq.dequantizeRows(f, 'w', 1, 1));
    const W = await bq.loadTensor(f, info);
    assert.deepEqual(bq.dequantize(W), await bq.dequantizeTensor(f, 'w'));
    W.dispose();
    // A TensorInfo of another file, or an object that is none, names what is wrong.
    await assert.rejects(
      bq.dequantizeTensor(f, { ...info, name: 'nope' }),
      (e) => e instanceof RangeError && /nope/.test(e.message),
    );
    await assert.rejects(bq.dequantizeTensor(f, /** @type {any} */ (42)), TypeError);
  }
});

test('a file-like reader that returns no bytes, or throws, is a GGUFError naming the tensor', async () => {
  const f = parseGGUF(bytes);
  const info = f.tensors.find((t) => t.name === 'w');
  for (const bad of [undefined, null, 'bytes', [1, 2, 3], { byteLength: 4 }]) {
    const file = { ...f, tensors: f.tensors, readRows: async () => bad, readTensor: async () => bad };
    for (const call of [
      () => bq.dequantizeTensor(file, 'w'),
      () => bq.dequantizeRows(file, 'w', 0, 1),
      () => bq.loadTensor(file, 'w'),
    ])
      await assert.rejects(
        call(),
        (e) =>
          e instanceof GGUFError && e.code === 'BAD_READ' && /w/.test(e.message) && /not a Uint8Array/.test(e.message),
        String(bad),
      );
  }
  const boom = new Error('disk on fire');
  const throwing = {
    ...f,
    readRows: async () => {
      throw boom;
    },
    readTensor: () => {
      throw boom;
    },
  };
  for (const call of [
    () => bq.dequantizeTensor(throwing, 'w'),
    () => bq.dequantizeRows(throwing, 'w', 0, 1),
    () => bq.loadTensor(throwing, info ?? 'w'),
  ])
    await assert.rejects(
      call(),
      (e) => e instanceof GGUFError && e.code === 'READ' && e.cause === boom && /disk on fire/.test(e.message),
    );
  assert.equal(bq.residentBytes, 0, 'a failed load holds no memory');
});

test('a forged handle (Object.create, a Proxy, a frozen copy) is a TypeError that says what a handle is', async () => {
  const W = bq.tensor('q8_0', bq.quantize('q8_0', new Float32Array(64)), 2, 32);
  const forged = [Object.create(Tensor.prototype), new Proxy(W, {})];
  // A plain copy of a handle's fields is no handle either.
  for (const call of [
    () => bq.matvec(/** @type {any} */ ({ ...W }), new Float32Array(32)),
    () => bq.dequantize(/** @type {any} */ ({ ...W })),
  ])
    assert.throws(call, TypeError);
  for (const h of forged) {
    for (const call of [
      () => bq.matvec(h, new Float32Array(32)),
      () => bq.dequantize(h),
      () => h.byteOffset,
      () => h.disposed,
      () => h.dispose(),
    ])
      assert.throws(
        call,
        (e) => e instanceof TypeError && /codec\.tensor\(\) or codec\.loadTensor\(\)/.test(e.message),
      );
  }
  W.dispose();
});
