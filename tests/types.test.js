// The JS type table against the wasm one, and the typeInfo contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, typeInfo, typeId, vecDotType, knownTypes, CODEC_TYPES } from '../js/index.js';
import { BACKEND, codec } from './lib/helpers.js';

const bq = await codec();

test(`JS type table equals the ${BACKEND} wasm type table`, () => {
  const x = /** @type {any} */ (bq.exports);
  const max = x.bq_type_max_id();
  const heap = () => new Uint8Array(x.memory.buffer);
  const cstr = (p) => {
    let e = p;
    const h = heap();
    while (h[e]) e++;
    return new TextDecoder().decode(h.subarray(p, e));
  };
  const fromWasm = [];
  for (let id = -1; id <= max + 5; id++) {
    const bs = x.bq_type_block_size(id);
    if (bs === 0) {
      assert.equal(x.bq_type_name(id), 0, `id ${id}: no name for an unknown id`);
      assert.throws(() => typeInfo(id), TypeError, `JS knows id ${id}, wasm does not`);
      continue;
    }
    fromWasm.push(id);
    const info = typeInfo(id);
    assert.deepEqual(info, { name: cstr(x.bq_type_name(id)), blockSize: bs, typeSize: x.bq_type_size(id) }, `id ${id}`);
    assert.equal(vecDotType(id), x.bq_type_vec_dot(id), `vec_dot of ${info.name}`);
    assert.equal(CODEC_TYPES.includes(id), (x.bq_type_flags(id) & 1) === 1, `codec flag of ${info.name}`);
  }
  assert.deepEqual(knownTypes(), fromWasm);
});

test('GGMLType ids and typeInfo follow ggml', () => {
  assert.equal(GGMLType.Q4_0, 2);
  assert.equal(GGMLType.Q8_1, 9);
  assert.equal(GGMLType.BF16, 30);
  assert.equal(GGMLType.MXFP4, 39);
  assert.deepEqual(typeInfo(GGMLType.Q5_1), { name: 'q5_1', blockSize: 32, typeSize: 24 });
  assert.deepEqual(typeInfo('Q4_K'), { name: 'q4_K', blockSize: 256, typeSize: 144 });
  assert.equal(typeId('q8_0'), 8);
  for (const [name, id] of Object.entries(GGMLType)) assert.equal(typeInfo(id).name.toUpperCase(), name);
  for (const bad of [4, 5, 31, 32, 33, 36, 37, 38, 40, -1, 2.5, NaN]) {
    assert.throws(
      () => typeInfo(bad),
      (e) => e instanceof TypeError && e.message.includes(String(bad)),
    );
  }
  assert.throws(
    () => typeInfo('q4_2'),
    (e) => e instanceof TypeError && e.message.includes('q4_2'),
  );
});
