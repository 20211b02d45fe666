// K-quant tensors in GGUF files: dequantizeTensor and dequantizeRows on files built byte by byte
// (tests/lib/gguf-bytes.js, not js/gguf-write.js) in both byte orders, through parseGGUF and
// openGGUF (bytes and Blob), equal bit for bit to bq.dequantize of the little-endian blocks. The
// big-endian blocks are swapped here, field by field, from the table's blockFields units (checked
// against a hand-written list first), independently of js/byteswap.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF, openGGUF, blockFields, typeInfo, GGMLType } from '../js/index.js';
import { Bytes } from './lib/gguf-bytes.js';
import { codec, rng, SEED } from './lib/helpers.js';

const bq = await codec();

// The K types with their multi-byte fields as [offset, bytes, unit] (ggml-common.h's block_q*_K:
// f16 d/dmin, Q8_K's f32 d and int16 bsums[16]); every other byte is a code or a 6/8-bit scale.
const K = {
  q2_K: [
    [80, 2, 2],
    [82, 2, 2],
  ],
  q3_K: [[108, 2, 2]],
  q4_K: [
    [0, 2, 2],
    [2, 2, 2],
  ],
  q5_K: [
    [0, 2, 2],
    [2, 2, 2],
  ],
  q6_K: [[208, 2, 2]],
  q8_K: [
    [0, 4, 4],
    [260, 32, 2],
  ],
};
// Two tensors per type: 5 rows of 2 super-blocks, and a 3-D one of 3 x 2 rows of 1.
const SHAPES = [
  ['a', [512, 5]],
  ['b', [256, 3, 2]],
];
const ALIGN = 32;

test('the K types multi-byte fields, as blockFields has them', () => {
  for (const [name, want] of Object.entries(K)) {
    const f = blockFields(name);
    assert.ok(f, name);
    assert.deepEqual(
      f.filter((x) => x.unit > 1).map((x) => [x.offset, x.size, x.unit]),
      want,
      name,
    );
    assert.equal(
      f.reduce((s, x) => s + x.size, 0),
      typeInfo(name).typeSize,
      name,
    );
  }
});

/** Each block of `bytes` with its multi-byte scalars reversed (LE <-> BE), from blockFields. */
function swapped(type, bytes) {
  const out = bytes.slice();
  const { typeSize } = typeInfo(type);
  const fields = /** @type {NonNullable<ReturnType<typeof blockFields>>} */ (blockFields(type));
  for (let o = 0; o < out.length; o += typeSize)
    for (const { offset, size, unit } of fields)
      for (let s = o + offset; s < o + offset + size; s += unit) out.subarray(s, s + unit).reverse();
  return out;
}

/**
 * Blocks for a tensor of n values: every other block quantized from a smooth signal, the others
 * random bytes (any scale bits: NaN, Inf, subnormal fp16 scales included).
 */
function blocks(type, n, r) {
  const { blockSize, typeSize } = typeInfo(type);
  const x = new Float32Array(n).map((_, i) => Math.sin(i * 0.37 + r.next()) * (1 + r.next()));
  const out = bq.quantize(type, x);
  for (let b = 1; b < n / blockSize; b += 2)
    for (let j = 0; j < typeSize; j++) out[b * typeSize + j] = Math.floor(r.next() * 256);
  return out;
}

/** A GGUF v3 file of `tensors` ({ name, type, dims, data } with LE blocks) in the given byte order. */
function file(tensors, le) {
  const w = new Bytes({ le }).header(3, tensors.length, 1);
  w.str('general.alignment').u32(4).u32(ALIGN);
  let offset = 0;
  for (const t of tensors) {
    w.tensor(t.name, t.dims, t.type, offset);
    offset += Math.ceil(t.data.length / ALIGN) * ALIGN;
  }
  w.padTo(ALIGN);
  for (const t of tensors) {
    for (const v of le ? t.data : swapped(typeInfo(t.type).name, t.data)) w.u8(v);
    w.padTo(ALIGN);
  }
  return w.bytes();
}

const bits = (f) => new Uint8Array(f.buffer, f.byteOffset, f.byteLength);

test(`dequantizeTensor and dequantizeRows of every K type, both byte orders, every row range, seed ${SEED}`, async () => {
  const r = rng(SEED);
  const tensors = Object.keys(K).flatMap((type) =>
    SHAPES.map(([suffix, dims]) => {
      const n = dims.reduce((a, b) => a * b, 1);
      return { name: `${type}.${suffix}`, type: GGMLType[type.toUpperCase()], dims, data: blocks(type, n, r) };
    }),
  );
  const le = file(tensors, true);
  const be = file(tensors, false);
  assert.notDeepEqual(le, be);
  for (const [order, bytes] of [
    ['LE', le],
    ['BE', be],
  ]) {
    const parsed = parseGGUF(bytes);
    assert.equal(parsed.littleEndian, order === 'LE');
    const sources = [
      ['parseGGUF', parsed],
      ['openGGUF(bytes)', await openGGUF(bytes)],
      ['openGGUF(Blob)', await openGGUF(new Blob([bytes]))],
    ];
    for (const t of tensors) {
      const type = typeInfo(t.type).name;
      const want = bq.dequantize(type, t.data);
      const ne0 = t.dims[0];
      const rows = want.length / ne0;
      for (const [how, g] of sources) {
        const what = `${t.name} ${order} ${how}`;
        assert.equal(g.tensors.find((x) => x.name === t.name).type, t.type, what);
        assert.deepEqual(bits(await bq.dequantizeTensor(g, t.name)), bits(want), what);
        for (let first = 0; first <= rows; first++)
          for (let count = 0; first + count <= rows; count++) {
            const got = await bq.dequantizeRows(g, t.name, first, count);
            assert.deepEqual(
              bits(got),
              bits(want.subarray(first * ne0, (first + count) * ne0)),
              `${what} rows ${first}+${count}`,
            );
          }
        await assert.rejects(bq.dequantizeRows(g, t.name, rows, 1), RangeError, what);
        await assert.rejects(bq.dequantizeRows(g, t.name, 1, rows), RangeError, what);
      }
    }
    for (const [, g] of sources) await g.close?.();
  }
});

test('a K tensor whose rows are not whole super-blocks is refused by the reader', () => {
  // ne0 = 128: half a Q4_K block per row; ggml refuses such a tensor, and so must the parser.
  const w = new Bytes().header(3, 1, 0);
  w.tensor('w', [128, 2], GGMLType.Q4_K, 0);
  w.padTo(ALIGN);
  for (let i = 0; i < 144; i++) w.u8(0);
  assert.throws(
    () => parseGGUF(w.bytes()),
    (e) => e.name === 'GGUFError',
    'parseGGUF',
  );
});
