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

test('FLOAT32: values are rounded to float32 (as gguf-py does); finite values beyond its range are refused; NaN and Inf pass', () => {
  refuses(kv1('k', VT.FLOAT32, 1e39), RangeError, 'kv "k"');
  refuses(kv1('k', VT.FLOAT32, -3.5e38), RangeError, 'kv "k"');
  refuses(kv1('k', VT.ARRAY, [0.5, 1e39], VT.FLOAT32), RangeError, 'kv "k"[1]');
  for (const value of [0.1, 1e-5, 1e-46])
    assert.equal(parseGGUF(writeGGUF(kv1('k', VT.FLOAT32, value))).kv[0].value, Math.fround(value));
  assert.deepEqual(Array.from(parseGGUF(writeGGUF(kv1('k', VT.ARRAY, [0.1, 1e-5], VT.FLOAT32))).kv[0].value), [
    Math.fround(0.1),
    Math.fround(1e-5),
  ]);
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

// ---- Seeded properties -------------------------------------------------------------------------

const CHARS = ['a', 'Z', '0', '.', '_', '\u0000', 'é', '▁', '中', '\u07ff', '\uffff', '\ue000', '😀', '\u{10ffff}'];
const INTS = [VT.UINT8, VT.INT8, VT.UINT16, VT.INT16, VT.UINT32, VT.INT32, VT.UINT64, VT.INT64];
const RANGE = {
  [VT.UINT8]: [0, 255],
  [VT.INT8]: [-128, 127],
  [VT.UINT16]: [0, 65535],
  [VT.INT16]: [-32768, 32767],
  [VT.UINT32]: [0, 2 ** 32 - 1],
  [VT.INT32]: [-(2 ** 31), 2 ** 31 - 1],
  [VT.UINT64]: [0n, 2n ** 64n - 1n],
  [VT.INT64]: [-(2n ** 63n), 2n ** 63n - 1n],
};
const TYPED = {
  [VT.UINT8]: Uint8Array,
  [VT.INT8]: Int8Array,
  [VT.UINT16]: Uint16Array,
  [VT.INT16]: Int16Array,
  [VT.UINT32]: Uint32Array,
  [VT.INT32]: Int32Array,
  [VT.FLOAT32]: Float32Array,
  [VT.UINT64]: BigUint64Array,
  [VT.INT64]: BigInt64Array,
  [VT.FLOAT64]: Float64Array,
};
const NUMERIC = Object.keys(TYPED).map(Number);
const TENSOR_TYPES = [
  GGMLType.F32,
  GGMLType.F16,
  GGMLType.BF16,
  GGMLType.Q4_0,
  GGMLType.Q8_0,
  GGMLType.Q4_K,
  GGMLType.I8,
  GGMLType.F64,
  GGMLType.MXFP4,
];
const BLOCK = {
  [GGMLType.Q4_0]: [32, 18],
  [GGMLType.Q8_0]: [32, 34],
  [GGMLType.Q4_K]: [256, 144],
  [GGMLType.MXFP4]: [32, 17],
};
const ELEM = { [GGMLType.F32]: 4, [GGMLType.F16]: 2, [GGMLType.BF16]: 2, [GGMLType.I8]: 1, [GGMLType.F64]: 8 };
const utf8Bytes = (s) => new TextEncoder().encode(s).length;

/** An expected BOOL array: the reader gives the stored bytes (Uint8Array) or, before that, boolean[]. */
class Bools {
  constructor(bytes) {
    this.bytes = bytes;
  }
}

function gen(r) {
  const int = (n) => Math.floor(r.next() * n);
  const pick = (a) => a[int(a.length)];
  const str = (max) => Array.from({ length: int(max + 1) }, () => pick(CHARS)).join('');

  function intValue(t) {
    const [lo, hi] = RANGE[t];
    const big = typeof lo === 'bigint';
    const k = int(4);
    let v = k === 0 ? lo : k === 1 ? hi : k === 2 ? (big ? 0n : 0) : null;
    if (v === null)
      v = big
        ? BigInt(int(2 ** 31)) * BigInt(int(2 ** 31)) * (t === VT.INT64 && r.next() < 0.5 ? -1n : 1n)
        : lo + int(hi - lo + 1);
    // 64-bit values may be given as safe-integer numbers; they read back as bigint.
    if (big && v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) && r.next() < 0.5)
      return [Number(v), v];
    return [v, v];
  }
  function floatValue(t) {
    const specials = [NaN, Infinity, -Infinity, -0, 0, 2 ** -149, 3.4028234663852886e38];
    const v = r.next() < 0.3 ? pick(specials) : r.normal() * 10 ** (int(20) - 10);
    return t === VT.FLOAT32 ? Math.fround(v) : v;
  }
  function scalar(t) {
    if (INTS.includes(t)) return intValue(t);
    if (t === VT.FLOAT32 || t === VT.FLOAT64) {
      const v = floatValue(t);
      return [v, v];
    }
    if (t === VT.BOOL) {
      const v = r.next() < 0.5;
      return [v, v];
    }
    const s = str(12);
    return [s, s];
  }
  /** An array of item type t at nesting level `level` (1 = a kv's value): [value, expected]. */
  function array(t, level, inferable) {
    const n = int(5);
    if (NUMERIC.includes(t)) {
      const pairs = Array.from({ length: n }, () => scalar(t));
      const C = TYPED[t];
      const want = C.from(pairs.map((p) => p[1]));
      // Plain arrays only where the item type is given (nested arrays are inferred from typed arrays).
      return [inferable || r.next() < 0.5 ? C.from(want) : pairs.map((p) => p[0]), want];
    }
    if (t === VT.BOOL) {
      if (!inferable && r.next() < 0.5) {
        const b = Uint8Array.from({ length: n }, () => pick([0, 1, 2, 255]));
        return [b, new Bools(b.slice())];
      }
      const v = Array.from({ length: Math.max(n, 1) }, () => r.next() < 0.5);
      return [v, new Bools(Uint8Array.from(v, Number))];
    }
    if (t === VT.STRING) {
      const v = Array.from({ length: inferable ? Math.max(n, 1) : n }, () => str(6));
      return [v, v.slice()];
    }
    // ARRAY: inner arrays of inferable kinds (or one given type through an itemType path at level 1).
    const kids = Array.from({ length: inferable ? Math.max(n, 1) : n }, () => {
      const inner = pick([...NUMERIC, VT.BOOL, VT.STRING, ...(level + 1 < 4 ? [VT.ARRAY] : [])]);
      return array(inner, level + 1, true);
    });
    return [kids.map((k) => k[0]), kids.map((k) => k[1])];
  }

  const kv = [];
  const expectKV = [];
  const keys = new Set();
  for (let i = int(9); i > 0; i--) {
    let key = str(8) || 'k';
    if (keys.has(key)) continue;
    keys.add(key);
    const type = pick([...NUMERIC, VT.BOOL, VT.STRING, VT.ARRAY, VT.ARRAY, VT.ARRAY]);
    if (type !== VT.ARRAY) {
      const [value, want] = scalar(type);
      kv.push({ key, type, value });
      expectKV.push({ key, type, value: want });
      continue;
    }
    const itemType = pick([...NUMERIC, VT.BOOL, VT.STRING, VT.ARRAY]);
    if (itemType === VT.ARRAY && r.next() < 0.3) {
      // An explicit path: every inner array of one type, plain numbers or Uint8Array-as-BOOL allowed.
      const inner = pick([...NUMERIC, VT.BOOL, VT.STRING]);
      const kids = Array.from({ length: int(4) }, () => array(inner, 2, false));
      kv.push({ key, type, itemType: [VT.ARRAY, inner], value: kids.map((k) => k[0]) });
      expectKV.push({ key, type, itemType, value: kids.map((k) => k[1]) });
    } else {
      const [value, want] = array(itemType, 1, false);
      kv.push({ key, type, itemType, value });
      expectKV.push({ key, type, itemType, value: want });
    }
  }
  let alignment;
  const a = int(4);
  if (a === 1) alignment = pick([1, 2, 8, 32, 64, 256]);
  else if (a >= 2) {
    const value = pick([1, 4, 16, 32, 128]);
    const at = int(kv.length + 1);
    kv.splice(at, 0, { key: 'general.alignment', type: VT.UINT32, value });
    expectKV.splice(at, 0, { key: 'general.alignment', type: VT.UINT32, value });
    if (a === 3) alignment = value;
  }
  if (alignment !== undefined && alignment !== 32 && a === 1)
    expectKV.push({ key: 'general.alignment', type: VT.UINT32, value: alignment });

  const tensors = [];
  const names = new Set();
  for (let i = int(5); i > 0; i--) {
    let name = str(int(2) ? 8 : 40);
    while (utf8Bytes(name) >= 64) name = [...name].slice(0, -1).join(''); // whole code points
    if (names.has(name)) continue;
    names.add(name);
    const type = pick(TENSOR_TYPES);
    const [bs, ts] = BLOCK[type] ?? [1, ELEM[type]];
    const nd = bs === 1 ? int(5) : 1 + int(4);
    const dims = Array.from({ length: nd }, (_, d) => (d === 0 ? bs * int(4) : int(4)));
    const n = dims.reduce((x, y) => x * y, 1);
    const data = Uint8Array.from({ length: (n / bs) * ts }, () => int(256));
    tensors.push({ name, type, dims, data });
  }
  return { spec: alignment === undefined ? { kv, tensors } : { kv, tensors, alignment }, expectKV };
}

/** The expected value in the form the reader gave (BOOL arrays as bytes or booleans). */
function asRead(want, got) {
  if (want instanceof Bools) return got instanceof Uint8Array ? want.bytes : Array.from(want.bytes, (b) => b !== 0);
  if (Array.isArray(want)) return want.map((w, i) => asRead(w, got?.[i]));
  return want;
}

function checkRoundTrip(spec, expectKV, label) {
  const f = writeGGUF(spec);
  const g = parseGGUF(f);
  assert.deepStrictEqual(
    g.kv,
    expectKV.map((e, i) => ({ ...e, value: asRead(e.value, g.kv[i]?.value) })),
    `${label}: kv`,
  );
  const align = g.alignment;
  let offset = 0;
  spec.tensors.forEach((t, i) => {
    const info = g.tensors[i];
    assert.deepStrictEqual([info.name, info.type, info.dims, info.offset], [t.name, t.type, t.dims, offset], label);
    assert.deepStrictEqual(g.tensorBytes(info), t.data, `${label}: ${t.name} data`);
    offset += Math.ceil(t.data.length / align) * align;
  });
  assert.equal(g.tensors.length, spec.tensors.length);
  assert.equal(f.length, g.dataOffset + offset, `${label}: file length`);
  // writeGGUFHeader with byte lengths only gives the same header and offsets.
  const h = writeGGUFHeader({
    ...spec,
    tensors: spec.tensors.map(({ data, ...t }) => ({ ...t, byteLength: data.length })),
  });
  assert.deepStrictEqual(h.header, f.subarray(0, g.dataOffset), `${label}: header`);
  assert.deepStrictEqual(
    h.offsets,
    g.tensors.map((t) => t.offset),
  );
  // What the reader returns, written again, reads back to the same values.
  const tensors = g.tensors.map((t) => ({ name: t.name, type: t.type, dims: t.dims, data: g.tensorBytes(t) }));
  const again = parseGGUF(writeGGUF({ kv: g.kv, tensors }));
  assert.deepStrictEqual(again.kv, g.kv, `${label}: rewrite`);
  return f;
}

test(`property: random valid specs (every value type, nested arrays, tensor types) round trip, seed ${SEED}`, () => {
  const r = rng(SEED);
  for (let i = 0; i < 400; i++) {
    const { spec, expectKV } = gen(r);
    checkRoundTrip(spec, expectKV, `seed ${SEED} case ${i}`);
  }
});

test('a large header (50k strings, 50k floats) round trips through the growing buffer', () => {
  const tokens = Array.from({ length: 50000 }, (_, i) => `▁tok${i}😀`);
  const scores = Float32Array.from({ length: 50000 }, (_, i) => i / 7);
  const kv = [
    { key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: tokens },
    { key: 'tokenizer.ggml.scores', type: VT.ARRAY, itemType: VT.FLOAT32, value: scores },
  ];
  checkRoundTrip({ kv, tensors: [] }, kv, 'large');
});

/** Corruptions that each make a valid spec invalid: [name, mutate(spec, r, pick)]. */
const CORRUPTIONS = [
  [
    'int out of range',
    (s, r, pick) => {
      const t = pick(INTS);
      const [lo, hi] = RANGE[t];
      const v = r.next() < 0.5 ? hi + (typeof hi === 'bigint' ? 1n : 1) : lo - (typeof lo === 'bigint' ? 1n : 1);
      addKV(s, r, { key: 'bad', type: t, value: v });
    },
  ],
  ['fractional int', (s, r, pick) => addKV(s, r, { key: 'bad', type: pick(INTS), value: 0.5 })],
  ['string for a number', (s, r, pick) => addKV(s, r, { key: 'bad', type: pick(NUMERIC), value: '1' })],
  ['number for a string', (s, r) => addKV(s, r, { key: 'bad', type: VT.STRING, value: 1 })],
  ['number for a BOOL', (s, r) => addKV(s, r, { key: 'bad', type: VT.BOOL, value: 1 })],
  ['FLOAT32 beyond its range', (s, r) => addKV(s, r, { key: 'bad', type: VT.FLOAT32, value: 1e39 })],
  ['unknown value type', (s, r) => addKV(s, r, { key: 'bad', type: 13, value: 0 })],
  ['array without itemType', (s, r) => addKV(s, r, { key: 'bad', type: VT.ARRAY, value: ['a'] })],
  [
    'array of the wrong typed array',
    (s, r) => addKV(s, r, { key: 'bad', type: VT.ARRAY, itemType: VT.INT16, value: new Uint16Array(3) }),
  ],
  [
    'array item out of range',
    (s, r) =>
      addKV(s, r, {
        key: 'bad',
        type: VT.ARRAY,
        itemType: VT.INT8,
        value: [0, 1, 200, 3].slice(0, 3 + (r.next() < 0.5 ? 1 : 0)),
      }),
  ],
  ['too deep', (s, r) => addKV(s, r, { key: 'bad', type: VT.ARRAY, itemType: VT.ARRAY, value: [[[[['x']]]]] })],
  ['empty key', (s, r) => addKV(s, r, { key: '', type: VT.UINT8, value: 0 })],
  [
    'duplicate key',
    (s, r) => {
      addKV(s, r, { key: 'dup', type: VT.UINT8, value: 0 });
      addKV(s, r, { key: 'dup', type: VT.STRING, value: 'x' });
    },
  ],
  [
    'lone surrogate',
    (s, r, pick) =>
      addKV(
        s,
        r,
        pick([
          { key: 'b\ud800ad', type: VT.UINT8, value: 0 },
          { key: 'bad', type: VT.STRING, value: '\udfffx' },
        ]),
      ),
  ],
  [
    'bad spec.alignment',
    (s, r, pick) => {
      s.alignment = pick([0, 3, 48, 2 ** 32, -32, 0.5]);
    },
  ],
  [
    'bad general.alignment',
    (s, r, pick) => {
      s.kv = s.kv.filter((e) => e.key !== 'general.alignment');
      addKV(
        s,
        r,
        pick([
          { key: 'general.alignment', type: VT.UINT32, value: 24 },
          { key: 'general.alignment', type: VT.UINT16, value: 32 },
          { key: 'general.alignment', type: VT.UINT32, value: 0 },
        ]),
      );
    },
  ],
  [
    'disagreeing alignments',
    (s, r) => {
      s.kv = s.kv.filter((e) => e.key !== 'general.alignment');
      addKV(s, r, { key: 'general.alignment', type: VT.UINT32, value: 64 });
      s.alignment = 16;
    },
  ],
  [
    'duplicate tensor name',
    (s, r) => {
      addTensor(s, r, { name: 'dup' });
      addTensor(s, r, { name: 'dup' });
    },
  ],
  [
    'long tensor name',
    (s, r, pick) => addTensor(s, r, { name: pick(['x'.repeat(64), '😀'.repeat(16), '中'.repeat(30)]) }),
  ],
  ['negative dim', (s, r) => addTensor(s, r, { dims: [4, -1, -1], data: new Uint8Array(16) })],
  ['fractional dim', (s, r) => addTensor(s, r, { dims: [4, 1.5], data: new Uint8Array(24) })],
  ['five dims', (s, r) => addTensor(s, r, { dims: [4, 1, 1, 1, 1] })],
  ['wrong data length', (s, r, pick) => addTensor(s, r, { data: new Uint8Array(pick([0, 15, 17, 32])) })],
  ['data not bytes', (s, r) => addTensor(s, r, { data: Array(16).fill(0) })],
  ['unknown ggml type', (s, r, pick) => addTensor(s, r, { type: pick([4, 5, 31, 40, -1, 1.5]) })],
  [
    'ne0 off the block size',
    (s, r) => addTensor(s, r, { type: GGMLType.Q8_0, dims: [16, 2], data: new Uint8Array(34) }),
  ],
];

function addKV(s, r, e) {
  s.kv.splice(Math.floor(r.next() * (s.kv.length + 1)), 0, e);
}
function addTensor(s, r, t) {
  const name = `bad${s.tensors.length}`;
  const base = { name, type: GGMLType.F32, dims: [4], data: new Uint8Array(16) };
  s.tensors.splice(Math.floor(r.next() * (s.tensors.length + 1)), 0, { ...base, ...t });
}

test(`property: every corruption of a valid spec is refused with TypeError/RangeError, seed ${SEED}`, () => {
  const r = rng(SEED ^ 0x5bd1e995);
  const pick = (a) => a[Math.floor(r.next() * a.length)];
  for (let i = 0; i < 600; i++) {
    const { spec } = gen(r);
    spec.kv = spec.kv.filter((e) => e.key !== 'bad' && e.key !== 'dup');
    const [what, mutate] = CORRUPTIONS[i % CORRUPTIONS.length];
    mutate(spec, r, pick);
    for (const write of [writeGGUF, writeGGUFHeader]) {
      assert.throws(
        () => write(spec),
        (e) => (e instanceof TypeError || e instanceof RangeError) && NAMED.test(e.message),
        `seed ${SEED} case ${i} (${what}): ${write.name} accepted it`,
      );
    }
  }
});

test(`property: garbage in any field is refused or makes a file the reader accepts, seed ${SEED}`, () => {
  const r = rng(SEED ^ 0x27d4eb2f);
  const pool = [
    undefined,
    null,
    -1,
    0.5,
    2 ** 53,
    NaN,
    -0,
    '',
    'x',
    '\ud800',
    1n,
    -1n,
    2n ** 64n,
    [],
    {},
    true,
    new Uint8Array(3),
    new Float32Array([0.5]),
    2 ** 32,
    300,
    13,
    64,
    [[]],
    ['a'],
    [1.5],
  ];
  let refused = 0;
  for (let i = 0; i < 1500; i++) {
    const { spec } = gen(r);
    // Replace one field (or array item) anywhere in the spec, found by a random walk.
    let node = spec;
    for (let depth = 0; depth < 6; depth++) {
      const ks = node && typeof node === 'object' && !ArrayBuffer.isView(node) ? Object.keys(node) : [];
      if (ks.length === 0) break;
      const k = ks[Math.floor(r.next() * ks.length)];
      const child = node[k];
      if (depth > 0 && (r.next() < 0.35 || !child || typeof child !== 'object' || ArrayBuffer.isView(child))) {
        node[k] = pool[Math.floor(r.next() * pool.length)];
        break;
      }
      node = child;
    }
    let f;
    try {
      f = writeGGUF(spec);
    } catch (e) {
      assert.ok(
        (e instanceof TypeError || e instanceof RangeError) && NAMED.test(e.message),
        `seed ${SEED} case ${i}: ${e.stack}`,
      );
      refused++;
      continue;
    }
    const g = parseGGUF(f); // throws GGUFError if the writer wrote a file its reader refuses
    const tensors = g.tensors.map((t) => ({ name: t.name, type: t.type, dims: t.dims, data: g.tensorBytes(t) }));
    assert.deepStrictEqual(parseGGUF(writeGGUF({ kv: g.kv, tensors })).kv, g.kv, `seed ${SEED} case ${i}`);
  }
  assert.ok(refused > 100 && refused < 1400, `${refused} of 1500 refused: the walk reaches both outcomes`);
});

test("the reader's own caps are the writer's: many empty nested arrays are refused or readable", () => {
  // 3 MB of empty nested UINT8 arrays: within every spelled-out cap, but maybe past the decoded-memory
  // budget of a reader that has one. Whatever the reader decides, the writer never disagrees.
  const value = Array.from({ length: 1 << 18 }, () => new Uint8Array(0));
  let f;
  try {
    f = writeGGUF(kv1('k', VT.ARRAY, value, VT.ARRAY));
  } catch (e) {
    assert.ok(e instanceof RangeError && /^spec: parseGGUF would refuse/.test(e.message), String(e));
    return;
  }
  assert.equal(parseGGUF(f).kv[0].value.length, value.length);
});
