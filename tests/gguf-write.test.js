// The GGUF writer refuses every spec the reader would refuse or read back differently (issue 11):
// one regression test per bug found, then seeded properties: random valid specs round trip
// through parseGGUF, random corruptions are refused with TypeError/RangeError and never a file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeGGUF, writeGGUFHeader, parseGGUF, GGUFValueType as VT, GGMLType } from '../js/index.js';
import { SEED, rng } from './lib/helpers.js';
import { Bytes } from './lib/gguf-bytes.js';

const F32 = (n) => new Uint8Array(4 * n);
const kv1 = (key, type, value, itemType) => ({ kv: [{ key, type, value, itemType }] });
const tensor = (t) => ({ tensors: [{ name: 'w', type: GGMLType.F32, dims: [4], data: F32(4), ...t }] });

/** The error's message names what was refused: a key, a tensor, the alignment or the spec. */
const NAMED = /^(kv |tensor |alignment|spec)/;

/**
 * writeGGUF (and writeGGUFHeader) refuse the spec with the given class, the message naming `names`.
 * @param {any} spec
 * @param {ErrorConstructor} Class
 * @param {string | RegExp} names
 */
function refuses(spec, Class, names) {
  for (const write of [writeGGUF, writeGGUFHeader]) {
    assert.throws(
      () => write(spec),
      (e) => {
        assert.equal(e.constructor, Class, `${write.name}: ${e.constructor.name}: ${e.message}`);
        assert.match(e.message, NAMED);
        if (typeof names === 'string') assert.ok(e.message.includes(names), `${e.message} names ${names}`);
        else assert.match(e.message, names);
        return true;
      },
      `${write.name} accepted ${JSON.stringify(spec, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
    );
  }
}

test('dims: negative, fractional, non-numbers, more than 4, and a ne0 off the block size are refused', () => {
  refuses(tensor({ dims: [-1, -1] }), RangeError, 'tensor "w"');
  refuses(tensor({ dims: [0, -5], data: F32(0) }), RangeError, 'tensor "w"');
  refuses(tensor({ dims: [0.5, 8] }), RangeError, 'tensor "w"');
  refuses(tensor({ dims: [4, NaN] }), RangeError, 'tensor "w"');
  refuses(tensor({ dims: [2 ** 53, 0], data: F32(0) }), RangeError, 'tensor "w"');
  refuses(tensor({ dims: ['4'] }), TypeError, 'tensor "w"');
  refuses(tensor({ dims: [4n] }), TypeError, 'tensor "w"');
  refuses(tensor({ dims: undefined }), TypeError, 'tensor "w"');
  refuses(tensor({ dims: [4, 1, 1, 1, 1] }), RangeError, 'tensor "w"');
  // No dims means ne0 = 1 (ggml's default), not a whole Q4_0 block: the reader refuses it.
  refuses(tensor({ type: GGMLType.Q4_0, dims: [], data: new Uint8Array(0) }), RangeError, 'tensor "w"');
  refuses(tensor({ type: GGMLType.Q4_0, dims: [16], data: new Uint8Array(9) }), RangeError, 'tensor "w"');
  // 2^40 * 2^40 overflows int64 before the 0 makes the product 0: the reader refuses the running product.
  refuses(tensor({ dims: [2 ** 40, 2 ** 40, 0], data: F32(0) }), RangeError, 'tensor "w"');
  // An F32 scalar (no dims) is a valid tensor of one element.
  const g = parseGGUF(writeGGUF(tensor({ dims: [], data: F32(1) })));
  assert.deepEqual(g.tensors[0].dims, []);
});

test('tensor names: duplicates, 64 bytes or more, non-strings and lone surrogates are refused', () => {
  const t = { type: GGMLType.F32, dims: [1], data: F32(1) };
  refuses(
    {
      tensors: [
        { name: 'a', ...t },
        { name: 'a', ...t },
      ],
    },
    RangeError,
    'tensor "a"',
  );
  refuses({ tensors: [{ name: 'x'.repeat(64), ...t }] }, RangeError, 'x'.repeat(64));
  refuses({ tensors: [{ name: 'é'.repeat(32), ...t }] }, RangeError, 'é'); // 32 chars, 64 bytes
  refuses({ tensors: [{ name: 42, ...t }] }, TypeError, 'tensor #0');
  refuses({ tensors: [{ name: 'a\ud800', ...t }] }, TypeError, 'tensor #0');
  // 63 bytes and the empty name are what ggml accepts.
  const g = parseGGUF(
    writeGGUF({
      tensors: [
        { name: 'é'.repeat(31) + 'x', ...t },
        { name: '', ...t },
      ],
    }),
  );
  assert.deepEqual(
    g.tensors.map((x) => x.name),
    ['é'.repeat(31) + 'x', ''],
  );
});

test('tensor types and data: unknown ids, wrong data kinds and lengths are refused', () => {
  refuses(tensor({ type: 4 }), TypeError, 'tensor "w"'); // Q4_2, removed from ggml
  refuses(tensor({ type: 'f32' }), TypeError, 'tensor "w"');
  refuses(tensor({ type: undefined }), TypeError, 'tensor "w"');
  refuses(tensor({ data: [0, 0, 0, 0] }), TypeError, 'tensor "w"');
  refuses(tensor({ data: new Uint8Array(15) }), RangeError, 'tensor "w"');
  refuses({ tensors: [null] }, TypeError, 'tensor #0');
  // Any ArrayBufferView is taken as its bytes.
  const f = new Float32Array([1, 2, 3, 4, 5]).subarray(1);
  const g = parseGGUF(writeGGUF(tensor({ data: f })));
  assert.deepEqual(g.tensorBytes('w'), new Uint8Array(f.buffer, 4, 16));
});

test('writeGGUFHeader: byteLength or data, exact and consistent', () => {
  const t = (x) => ({ tensors: [{ name: 'w', type: GGMLType.F32, dims: [4], ...x }] });
  assert.throws(() => writeGGUFHeader(t({})), TypeError);
  for (const byteLength of [-16, 15, 16.5, NaN, Infinity])
    assert.throws(() => writeGGUFHeader(t({ byteLength })), RangeError, String(byteLength));
  assert.throws(() => writeGGUFHeader(t({ byteLength: '16' })), TypeError);
  assert.throws(() => writeGGUFHeader(t({ byteLength: 32, data: F32(4) })), RangeError);
  const h = writeGGUFHeader(t({ byteLength: 16 }));
  assert.deepEqual(h.offsets, [0]);
  assert.equal(h.dataBytes, 32);
  // writeGGUF needs the bytes themselves.
  assert.throws(() => writeGGUF(t({ byteLength: 16 })), TypeError);
});

test('keys: empty, duplicate, non-string and lone-surrogate keys are refused', () => {
  refuses(kv1('', VT.UINT8, 1), RangeError, 'kv #0');
  refuses(
    {
      kv: [
        { key: 'a', type: VT.UINT8, value: 1 },
        { key: 'a', type: VT.UINT8, value: 2 },
      ],
    },
    RangeError,
    'kv "a"',
  );
  refuses(kv1(7, VT.UINT8, 1), TypeError, 'kv #0');
  refuses(kv1('k\udc00', VT.UINT8, 1), TypeError, 'kv #0');
  refuses({ kv: [null] }, TypeError, 'kv #0');
  refuses({ kv: {} }, TypeError, 'spec');
  refuses({ tensors: 'w' }, TypeError, 'spec');
  refuses(null, TypeError, 'spec');
});

test('alignment: general.alignment a UINT32 power of two, agreeing with spec.alignment', () => {
  refuses(kv1('general.alignment', VT.INT32, 32), RangeError, 'general.alignment');
  refuses(kv1('general.alignment', VT.UINT64, 32n), RangeError, 'general.alignment');
  refuses(kv1('general.alignment', VT.UINT32, 48), RangeError, 'general.alignment');
  refuses(kv1('general.alignment', VT.UINT32, 0), RangeError, 'general.alignment');
  refuses({ ...kv1('general.alignment', VT.UINT32, 64), alignment: 32 }, RangeError, 'alignment');
  for (const alignment of [0, 48, -32, 2 ** 32, 0.5, NaN]) refuses({ alignment }, RangeError, 'alignment');
  refuses({ alignment: '32' }, TypeError, 'alignment');
  // Agreeing values, and spec.alignment alone (written as general.alignment).
  const a = parseGGUF(writeGGUF({ ...kv1('general.alignment', VT.UINT32, 64), alignment: 64, ...tensor({}) }));
  assert.equal(a.alignment, 64);
  const b = parseGGUF(writeGGUF({ alignment: 1, ...tensor({}) }));
  assert.equal(b.alignment, 1);
  assert.deepEqual(b.kv, [{ key: 'general.alignment', type: VT.UINT32, value: 1 }]);
});

test('integers: each width in range, safe or bigint 64-bit values, no coercion', () => {
  const bad = [
    [VT.UINT8, 300, RangeError],
    [VT.UINT8, -1, RangeError],
    [VT.UINT8, 1.5, RangeError],
    [VT.INT8, 128, RangeError],
    [VT.INT8, -129, RangeError],
    [VT.UINT16, 65536, RangeError],
    [VT.INT16, -32769, RangeError],
    [VT.UINT32, 2 ** 32, RangeError],
    [VT.UINT32, -1, RangeError],
    [VT.INT32, 2 ** 31, RangeError],
    [VT.INT32, NaN, RangeError],
    [VT.INT32, 'abc', TypeError],
    [VT.INT32, '5', TypeError],
    [VT.INT32, 5n, TypeError],
    [VT.INT32, null, TypeError],
    [VT.UINT64, -1, RangeError],
    [VT.UINT64, -1n, RangeError],
    [VT.UINT64, 2n ** 64n, RangeError],
    [VT.UINT64, 2 ** 60, RangeError], // not a safe integer: pass a bigint
    [VT.UINT64, 0.5, RangeError],
    [VT.UINT64, '1', TypeError],
    [VT.INT64, 2n ** 63n, RangeError],
    [VT.INT64, -(2n ** 63n) - 1n, RangeError],
    [VT.FLOAT64, 1n, TypeError],
    [VT.FLOAT64, '1', TypeError],
  ];
  for (const [type, value, Class] of bad) refuses(kv1('k', type, value), Class, 'kv "k"');
  const good = [
    [VT.UINT8, 255],
    [VT.INT8, -128],
    [VT.UINT16, 65535],
    [VT.INT16, -32768],
    [VT.UINT32, 2 ** 32 - 1],
    [VT.INT32, -(2 ** 31)],
    [VT.UINT64, 2n ** 64n - 1n],
    [VT.UINT64, Number.MAX_SAFE_INTEGER, BigInt(Number.MAX_SAFE_INTEGER)],
    [VT.INT64, -(2n ** 63n)],
    [VT.INT64, -5, -5n],
    [VT.FLOAT64, -0],
    [VT.FLOAT64, NaN],
  ];
  for (const [type, value, want = value] of good)
    assert.deepEqual(parseGGUF(writeGGUF(kv1('k', type, value))).kv, [{ key: 'k', type, value: want }]);
});

test('FLOAT32: values float32 cannot hold exactly are refused (no silent rounding); NaN and Inf pass', () => {
  refuses(kv1('k', VT.FLOAT32, 0.1), RangeError, 'kv "k"');
  refuses(kv1('k', VT.FLOAT32, 1e39), RangeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [0.5, 0.1], VT.FLOAT32), RangeError, 'kv "k"[1]');
  for (const value of [Math.fround(0.1), -0, NaN, Infinity, -Infinity, 3.4028234663852886e38, 2 ** -149])
    assert.deepEqual(parseGGUF(writeGGUF(kv1('k', VT.FLOAT32, value))).kv[0].value, value);
});

test('BOOL: a boolean; BOOL arrays are boolean[] or a Uint8Array of the stored bytes', () => {
  refuses(kv1('k', VT.BOOL, 1), TypeError, 'kv "k"');
  refuses(kv1('k', VT.BOOL, 'true'), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [true, 1], VT.BOOL), TypeError, 'kv "k"[1]');
  refuses(kv1('k', VT.ARRAY, new Int8Array(2), VT.BOOL), TypeError, 'kv "k"');
  assert.equal(parseGGUF(writeGGUF(kv1('k', VT.BOOL, false))).kv[0].value, false);
  const bytes = (v) => {
    const x = parseGGUF(writeGGUF(kv1('k', VT.ARRAY, v, VT.BOOL))).kv[0].value;
    return Array.from(x, Number); // the reader gives boolean[] or a Uint8Array of the stored bytes
  };
  assert.deepEqual(bytes([true, false, true]), [1, 0, 1]);
  const stored = bytes(new Uint8Array([1, 0, 7]));
  assert.ok(stored[2] === 7 || stored[2] === 1, 'any non-zero byte is true');
});

test('strings: strings only (no String(v)), no lone surrogates; NUL and astral characters pass', () => {
  refuses(kv1('k', VT.STRING, 42), TypeError, 'kv "k"');
  refuses(kv1('k', VT.STRING, { toString: () => 'x' }), TypeError, 'kv "k"');
  refuses(kv1('k', VT.STRING, 'a\ud800b'), TypeError, 'kv "k"');
  refuses(kv1('k', VT.STRING, '\udc00'), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, ['a', 'b\udfff'], VT.STRING), TypeError, 'kv "k"[1]');
  refuses(kv1('k', VT.ARRAY, ['a', 5], VT.STRING), TypeError, 'kv "k"[1]');
  const s = '\u0000▁ü😀\ud83d\ude00x';
  assert.equal(parseGGUF(writeGGUF(kv1('k', VT.STRING, s))).kv[0].value, s);
});

test('value types and arrays: known ids, itemType required, matching typed arrays, depth 4', () => {
  refuses(kv1('k', 13, 1), TypeError, 'kv "k"');
  refuses(kv1('k', -1, 1), TypeError, 'kv "k"');
  refuses(kv1('k', '0', 1), TypeError, 'kv "k"');
  refuses(kv1('k', VT.UINT8, 1, VT.UINT8), TypeError, 'kv "k"'); // itemType on a scalar
  refuses(kv1('k', VT.ARRAY, [1]), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [1], 13), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, 'abc', VT.UINT8), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, new Int32Array(2), VT.UINT8), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, new Uint8Array(2), VT.INT8), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [1, 300], VT.UINT8), RangeError, 'kv "k"[1]');
  refuses(kv1('k', VT.ARRAY, [1, 2 ** 53], VT.INT64), RangeError, 'kv "k"[1]');
  refuses(kv1('k', VT.ARRAY, [[1, 2]], VT.ARRAY), TypeError, 'kv "k"[0]'); // plain numbers: which type?
  refuses(kv1('k', VT.ARRAY, [['a', 1]], VT.ARRAY), TypeError, 'kv "k"[0][1]');
  refuses(kv1('k', VT.ARRAY, [5], VT.ARRAY), TypeError, 'kv "k"[0]');
  // Depth: the reader refuses arrays nested deeper than 4 levels (an ARRAY item type at level 4).
  const deep = (n) => (n === 1 ? ['x'] : [deep(n - 1)]);
  refuses(kv1('k', VT.ARRAY, deep(5), VT.ARRAY), RangeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [[[[[]]]]], VT.ARRAY), RangeError, 'kv "k"'); // even an empty 5th level
  const A = VT.ARRAY;
  refuses(kv1('k', A, [[[[]]]], [A, A, A, A]), RangeError, 'kv "k"'); // level 4 of item type ARRAY
  assert.deepEqual(parseGGUF(writeGGUF(kv1('k', A, [[[[]]]], [A, A, A]))).kv[0].value, [[[[]]]]);
  // The reader's rule, on files built byte by byte: level 4 may not have item type ARRAY.
  const nested = (levels) => {
    const w = new Bytes();
    w.header(3, 0, 1).str('k').u32(A);
    for (let l = 1; l < levels; l++) w.u32(A).len(1);
    return w.u32(A).len(0).bytes();
  };
  assert.deepEqual(parseGGUF(nested(3)).kv[0].value, [[[]]]);
  assert.throws(
    () => parseGGUF(nested(4)),
    (e) => e.code === 'TOO_DEEP',
  );
  assert.deepEqual(parseGGUF(writeGGUF(kv1('k', VT.ARRAY, deep(4), VT.ARRAY))).kv[0].value, deep(4));
  // An explicit item type path: plain numbers and Uint8Array-as-BOOL in nested arrays.
  const g = parseGGUF(
    writeGGUF({
      kv: [
        { key: 'i', type: VT.ARRAY, itemType: [VT.ARRAY, VT.INT16], value: [[1, -2], []] },
        { key: 'b', type: VT.ARRAY, itemType: [VT.ARRAY, VT.BOOL], value: [new Uint8Array([1, 0])] },
      ],
    }),
  );
  assert.deepEqual(g.kv[0], {
    key: 'i',
    type: VT.ARRAY,
    itemType: VT.ARRAY,
    value: [new Int16Array([1, -2]), new Int16Array(0)],
  });
  assert.deepEqual(Array.from(/** @type {any} */ (g.kv[1].value)[0], Number), [1, 0]);
  refuses(kv1('k', VT.ARRAY, [[true]], [VT.ARRAY, VT.INT8]), TypeError, 'kv "k"[0]');
  refuses(kv1('k', VT.ARRAY, [1], [VT.UINT8, VT.UINT8]), TypeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [[1]], [VT.UINT8]), TypeError, 'kv "k"');
});
