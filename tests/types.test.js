// The JS type table against the wasm one, and the typeInfo contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GGMLType, typeInfo, typeId, vecDotType, knownTypes, CODEC_TYPES } from '../js/index.js';
import { blockFields } from '../js/types.js';
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
    const { modules, ...info } = typeInfo(id);
    const flags = x.bq_type_flags(id);
    // a module named for exactly the operations the wasm table's flags give the type (which
    // module: split.test.js, against the modules' files)
    const ops = Object.entries({ dequantize: 2, quantize: 1, quantize_rows: 64, dot: 4 | 8, matvec: 16, stats: 32 })
      .filter(([, bit]) => (flags & bit) !== 0)
      .map(([op]) => op);
    assert.deepEqual(Object.keys(modules).sort(), ops.sort(), `id ${id}: the operations with a module`);
    for (const m of Object.values(modules)) assert.match(m, /^(core|quant|dot|grid|imat)$/, `id ${id}`);
    assert.deepEqual(
      info,
      {
        name: cstr(x.bq_type_name(id)),
        blockSize: bs,
        typeSize: x.bq_type_size(id),
        vecDot: x.bq_type_vec_dot(id),
        dotStep: x.bq_type_dot_step(id),
        subBlock: x.bq_type_sub_block(id),
        quantize: (flags & (1 | 64)) !== 0,
        weighted: (flags & 64) !== 0,
        requiresImatrix: (flags & (1 | 64)) !== 0 && (flags & 128) !== 0,
        dequantize: (flags & 2) !== 0,
        dot: (flags & 4) !== 0,
        dotF32: (flags & 8) !== 0,
        matvec: (flags & 16) !== 0,
        stats: (flags & 32) !== 0,
      },
      `id ${id}`,
    );
    assert.equal(vecDotType(id), x.bq_type_vec_dot(id), `vec_dot of ${info.name}`);
    assert.equal(CODEC_TYPES.includes(id), (flags & ~128) !== 0, `${info.name} has kernels`);
    // The block layout: every field of the C struct, in order, at its offset, with its size and
    // byte-swap unit; the fields tile the block exactly.
    const out = x.bq_scratch_base();
    const cFields = [];
    for (let i = 0; ; i++) {
      const p = x.bq_type_field(id, i, out);
      if (p === 0) break;
      const [offset, size, unit] = new Int32Array(x.memory.buffer, out, 3);
      cFields.push({ name: cstr(p), offset, size, unit });
    }
    const jsFields = blockFields(id);
    if (cFields.length === 0) {
      // Types with no struct: the float types are described in JS as one scalar per block.
      if (jsFields) assert.ok(jsFields.length === 1 && jsFields[0].size === info.typeSize, `${info.name} scalar`);
      else assert.ok(flags === 0, `${info.name} has kernels, so it has a layout`);
      continue;
    }
    assert.deepEqual(
      jsFields?.map(({ name, offset, size, unit }) => ({ name, offset, size, unit })),
      cFields,
      `${info.name} block fields`,
    );
    let end = 0;
    for (const f of cFields) {
      assert.equal(f.offset, end, `${info.name}.${f.name} follows the previous field`);
      end += f.size;
    }
    assert.equal(end, info.typeSize, `${info.name} fields fill the block`);
  }
  assert.deepEqual(knownTypes(), fromWasm);
  assert.ok(x.bq_acc_lanes() >= 9, 'dot state: a running sum and eight float sums at least');
});

test('GGMLType ids and typeInfo follow ggml', () => {
  assert.equal(GGMLType.Q4_0, 2);
  assert.equal(GGMLType.Q8_1, 9);
  assert.equal(GGMLType.BF16, 30);
  assert.equal(GGMLType.MXFP4, 39);
  assert.equal(GGMLType.NVFP4, 40);
  assert.equal(GGMLType.Q1_0, 41);
  assert.equal(GGMLType.Q2_0, 42);
  assert.deepEqual(sizes('nvfp4'), { name: 'nvfp4', blockSize: 64, typeSize: 36 });
  assert.deepEqual(sizes('q1_0'), { name: 'q1_0', blockSize: 128, typeSize: 18 });
  assert.deepEqual(sizes('q2_0'), { name: 'q2_0', blockSize: 64, typeSize: 18 });
  // ggml_quantize_requires_imatrix: IQ2_XXS, IQ2_XS and IQ1_S only.
  const needs = Object.values(GGMLType).filter((t) => typeInfo(t).requiresImatrix);
  for (const t of needs) assert.ok([16, 17, 19].includes(t), `${typeInfo(t).name} does not need an imatrix in ggml`);
  function sizes(t) {
    const { name, blockSize, typeSize } = typeInfo(t);
    return { name, blockSize, typeSize };
  }
  assert.deepEqual(sizes(GGMLType.Q5_1), { name: 'q5_1', blockSize: 32, typeSize: 24 });
  assert.deepEqual(sizes('Q4_K'), { name: 'q4_K', blockSize: 256, typeSize: 144 });
  assert.equal(typeInfo('q4_0').vecDot, GGMLType.Q8_0);
  assert.equal(typeInfo('q8_1').dot, false, 'ggml has no q8_1 . q8_1 dot');
  assert.equal(typeInfo('q8_1').dotF32, true);
  assert.equal(typeInfo('f32').stats, false, 'f32 round trips are exact');
  assert.equal(typeId('q8_0'), 8);
  for (const [name, id] of Object.entries(GGMLType)) assert.equal(typeInfo(id).name.toUpperCase(), name);
  for (const bad of [4, 5, 31, 32, 33, 36, 37, 38, 43, 44, -1, 2.5, NaN]) {
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
