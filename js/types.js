// The ggml type table, mirrored from src/types.inc (tests/types.test.js checks that the two agree).

/**
 * ggml type ids by name.
 * @readonly
 * @enum {number}
 */
export const GGMLType = Object.freeze({
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q8_1: 9,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  Q8_K: 15,
  IQ2_XXS: 16,
  IQ2_XS: 17,
  IQ3_XXS: 18,
  IQ1_S: 19,
  IQ4_NL: 20,
  IQ3_S: 21,
  IQ2_S: 22,
  IQ4_XS: 23,
  I8: 24,
  I16: 25,
  I32: 26,
  I64: 27,
  F64: 28,
  IQ1_M: 29,
  BF16: 30,
  TQ1_0: 34,
  TQ2_0: 35,
  MXFP4: 39,
});

// What blockquant can do with a type: the flags of bq_type_flags (src/bq.h), derived in C from the
// kernel list (src/kernels.inc). Q: quantize, D: dequantize, V: dot with its vec_dot type,
// F: dot with f32, M: matvec, S: blockStats.
const Q = 1,
  D = 2,
  V = 4,
  F = 8,
  M = 16,
  S = 32;
const ALL = Q | D | V | F | M | S;
// The grid types (IQ2_*, IQ3_*, IQ1_*): no quantizer (ggml's needs an importance matrix), no stats.
const GRID = D | V | F | M;

/**
 * @typedef {{ name: string, blockSize: number, typeSize: number, vecDot: number, dotStep: number,
 *   subBlock: number, quantize: boolean, dequantize: boolean, dot: boolean, dotF32: boolean,
 *   matvec: boolean, stats: boolean }} TypeInfo
 * vecDot: the id of the activation type ggml pairs it with (-1: none); dotStep: elements at which a
 * dot may be cut into pieces (0: no dot); subBlock: elements per sub-block blockStats reports (0:
 * none); the booleans: which operations blockquant has for it (dot: with its vecDot type, dotF32:
 * with f32 values).
 */

/**
 * id -> [name, blockSize, typeSize, vecDot, dotStep, subBlock, ops], as src/types.inc and
 * src/kernels.inc say (tests/types.test.js checks every column against the wasm build).
 * @type {Map<number, [string, number, number, number, number, number, number]>}
 */
const TABLE = new Map([
  [0, ['f32', 1, 4, 0, 128, 0, ALL & ~S]],
  [1, ['f16', 1, 2, 0, 128, 0, ALL]],
  [2, ['q4_0', 32, 18, 8, 128, 0, ALL]],
  [3, ['q4_1', 32, 20, 9, 128, 0, ALL]],
  [6, ['q5_0', 32, 22, 8, 128, 0, ALL]],
  [7, ['q5_1', 32, 24, 9, 128, 0, ALL]],
  [8, ['q8_0', 32, 34, 8, 128, 0, ALL]],
  [9, ['q8_1', 32, 36, 9, 128, 0, ALL & ~V]],
  [10, ['q2_K', 256, 84, 15, 256, 16, ALL]],
  [11, ['q3_K', 256, 110, 15, 256, 16, ALL]],
  [12, ['q4_K', 256, 144, 15, 256, 32, ALL]],
  [13, ['q5_K', 256, 176, 15, 256, 32, ALL]],
  [14, ['q6_K', 256, 210, 15, 256, 16, ALL]],
  [15, ['q8_K', 256, 292, -1, 256, 16, Q | D | F]],
  [16, ['iq2_xxs', 256, 66, 15, 256, 0, GRID]],
  [17, ['iq2_xs', 256, 74, 15, 256, 0, GRID]],
  [18, ['iq3_xxs', 256, 98, 15, 256, 0, GRID]],
  [19, ['iq1_s', 256, 50, 15, 256, 0, GRID]],
  [20, ['iq4_nl', 32, 18, 8, 128, 0, ALL]],
  [21, ['iq3_s', 256, 110, 15, 256, 0, GRID]],
  [22, ['iq2_s', 256, 82, 15, 256, 0, GRID]],
  [23, ['iq4_xs', 256, 136, 15, 256, 32, ALL]],
  [24, ['i8', 1, 1, -1, 0, 0, 0]],
  [25, ['i16', 1, 2, -1, 0, 0, 0]],
  [26, ['i32', 1, 4, -1, 0, 0, 0]],
  [27, ['i64', 1, 8, -1, 0, 0, 0]],
  [28, ['f64', 1, 8, -1, 0, 0, 0]],
  [29, ['iq1_m', 256, 56, 15, 256, 0, GRID]],
  [30, ['bf16', 1, 2, 0, 128, 0, ALL]],
  [34, ['tq1_0', 256, 54, 15, 256, 0, ALL]],
  [35, ['tq2_0', 256, 66, 15, 256, 0, ALL]],
  [39, ['mxfp4', 32, 17, 8, 128, 0, ALL]],
]);

/**
 * Each block layout, field by field in memory order: [name, kind, count] ('f16': a binary16 scale,
 * 'u16'/'u32': little-endian 16/32-bit words of codes, 'u8'/'i8': bytes of codes; 'i16', 'i32',
 * 'i64', 'f64': the integer and double types' scalars). As src/fields.inc and the C block
 * structs have them (tests/types.test.js checks offsets, sizes and byte-swap units against the wasm
 * build). The float and integer types are one scalar per "block".
 * @typedef {'f16' | 'bf16' | 'f32' | 'f64' | 'u16' | 'u32' | 'u8' | 'i8' | 'i16' | 'i32' | 'i64'} Kind
 * @type {Map<number, [string, Kind, number][]>}
 */
const LAYOUTS = new Map([
  [
    10,
    [
      ['scales', 'u8', 16],
      ['qs', 'u8', 64],
      ['d', 'f16', 1],
      ['dmin', 'f16', 1],
    ],
  ],
  [
    11,
    [
      ['hmask', 'u8', 32],
      ['qs', 'u8', 64],
      ['scales', 'u8', 12],
      ['d', 'f16', 1],
    ],
  ],
  [
    12,
    [
      ['d', 'f16', 1],
      ['dmin', 'f16', 1],
      ['scales', 'u8', 12],
      ['qs', 'u8', 128],
    ],
  ],
  [
    13,
    [
      ['d', 'f16', 1],
      ['dmin', 'f16', 1],
      ['scales', 'u8', 12],
      ['qh', 'u8', 32],
      ['qs', 'u8', 128],
    ],
  ],
  [
    14,
    [
      ['ql', 'u8', 128],
      ['qh', 'u8', 64],
      ['scales', 'i8', 16],
      ['d', 'f16', 1],
    ],
  ],
  [
    15,
    [
      ['d', 'f32', 1],
      ['qs', 'i8', 256],
      ['bsums', 'i16', 16],
    ],
  ],
  [0, [['x', 'f32', 1]]],
  [1, [['x', 'f16', 1]]],
  [30, [['x', 'bf16', 1]]],
  [
    20,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    23,
    [
      ['d', 'f16', 1],
      ['scales_h', 'u16', 1],
      ['scales_l', 'u8', 4],
      ['qs', 'u8', 128],
    ],
  ],
  [
    39,
    [
      ['e', 'u8', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    34,
    [
      ['qs', 'u8', 48],
      ['qh', 'u8', 4],
      ['d', 'f16', 1],
    ],
  ],
  [
    35,
    [
      ['qs', 'u8', 64],
      ['d', 'f16', 1],
    ],
  ],
  // IQ2_XXS's qs is 8 pairs of 4 grid index bytes and a u32 of sign indices and scale (src/fields.inc).
  [
    16,
    [
      ['d', 'f16', 1],
      .../** @type {[string, Kind, number][]} */ (
        Array.from({ length: 8 }, (_, k) => [
          [`grid${k}`, 'u8', 4],
          [`sas${k}`, 'u32', 1],
        ]).flat()
      ),
    ],
  ],
  [
    17,
    [
      ['d', 'f16', 1],
      ['qs', 'u16', 32],
      ['scales', 'u8', 8],
    ],
  ],
  [
    22,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 32],
      ['signs', 'u8', 32],
      ['qh', 'u8', 8],
      ['scales', 'u8', 8],
    ],
  ],
  [
    18,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 64],
      ['sas', 'u32', 8],
    ],
  ],
  [
    21,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 64],
      ['qh', 'u8', 8],
      ['signs', 'u8', 32],
      ['scales', 'u8', 4],
    ],
  ],
  [
    19,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 32],
      ['qh', 'u16', 8],
    ],
  ],
  [
    29,
    [
      ['qs', 'u8', 32],
      ['qh', 'u8', 16],
      ['scales', 'u16', 4],
    ],
  ],
  [24, [['x', 'i8', 1]]],
  [25, [['x', 'i16', 1]]],
  [26, [['x', 'i32', 1]]],
  [27, [['x', 'i64', 1]]],
  [28, [['x', 'f64', 1]]],
  [
    2,
    [
      ['d', 'f16', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    3,
    [
      ['d', 'f16', 1],
      ['m', 'f16', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    6,
    [
      ['d', 'f16', 1],
      ['qh', 'u32', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    7,
    [
      ['d', 'f16', 1],
      ['m', 'f16', 1],
      ['qh', 'u32', 1],
      ['qs', 'u8', 16],
    ],
  ],
  [
    8,
    [
      ['d', 'f16', 1],
      ['qs', 'i8', 32],
    ],
  ],
  [
    9,
    [
      ['d', 'f16', 1],
      ['s', 'f16', 1],
      ['qs', 'i8', 32],
    ],
  ],
]);

/** Bytes of one scalar of each field kind. */
const KIND_BYTES = { f16: 2, bf16: 2, f32: 4, f64: 8, u16: 2, u32: 4, u8: 1, i8: 1, i16: 2, i32: 4, i64: 8 };

/**
 * @typedef {{ name: string, kind: string, offset: number, size: number, unit: number }} BlockField
 * offset and size in bytes within the block; unit: bytes per scalar (what a byte-order swap
 * reverses).
 */

/** @type {Map<number, readonly BlockField[]>} */
const FIELDS = new Map(
  [...LAYOUTS].map(([id, layout]) => {
    let offset = 0;
    const fields = layout.map(([name, kind, count]) => {
      const unit = KIND_BYTES[kind];
      const f = Object.freeze({ name, kind, offset, size: unit * count, unit });
      offset += f.size;
      return f;
    });
    return [id, Object.freeze(fields)];
  }),
);

/** The types blockquant has any operation for (the others are known by name). */
export const CODEC_TYPES = Object.freeze([...TABLE].filter(([, r]) => r[6] !== 0).map(([id]) => id));

/** @type {Map<string, number>} */
const BY_NAME = new Map([...TABLE].map(([id, [name]]) => [name.toLowerCase(), id]));

/**
 * Resolves a type given as a ggml id or a name ('q4_0', 'Q4_0', 'q4_K') to its id.
 * @param {number | string} type
 * @returns {number}
 * @throws {TypeError} for an unknown id or name
 */
export function typeId(type) {
  if (typeof type === 'string') {
    const id = BY_NAME.get(type.toLowerCase());
    if (id === undefined) throw new TypeError(`unknown ggml type ${JSON.stringify(type)}`);
    return id;
  }
  if (!Number.isInteger(type) || !TABLE.has(type)) {
    throw new TypeError(`unknown ggml type ${String(type)} (not a ggml type id this version knows)`);
  }
  return type;
}

/** @param {number | string} type */
const rowOf = (type) =>
  /** @type {[string, number, number, number, number, number, number]} */ (TABLE.get(typeId(type)));

/**
 * Name, block size (elements), type size (bytes per block), vec_dot pairing, dot step, stats
 * sub-block and available operations of a ggml type (see TypeInfo).
 * @param {number | string} type a ggml id (GGMLType.Q4_0) or name ('q4_0')
 * @returns {TypeInfo}
 * @throws {TypeError} for an unknown type
 */
export function typeInfo(type) {
  const [name, blockSize, typeSize, vecDot, dotStep, subBlock, ops] = rowOf(type);
  return {
    name,
    blockSize,
    typeSize,
    vecDot,
    dotStep,
    subBlock,
    quantize: (ops & Q) !== 0,
    dequantize: (ops & D) !== 0,
    dot: (ops & V) !== 0,
    dotF32: (ops & F) !== 0,
    matvec: (ops & M) !== 0,
    stats: (ops & S) !== 0,
  };
}

/**
 * The fields of one block of a type, in memory order, or null for a type whose layout this
 * version does not describe.
 * @param {number | string} type
 * @returns {readonly BlockField[] | null}
 * @throws {TypeError} for an unknown type
 */
export function blockFields(type) {
  return FIELDS.get(typeId(type)) ?? null;
}

/**
 * The activation type ggml pairs a weight type with in its dot products (Q8_0 for Q4_0, Q5_0 and
 * Q8_0; Q8_1 for Q4_1, Q5_1 and Q8_1; F32 for the float types), or -1.
 * @param {number | string} type
 * @returns {number}
 */
export function vecDotType(type) {
  return rowOf(type)[3];
}

/**
 * Every known type id, ascending.
 * @returns {number[]}
 */
export function knownTypes() {
  return [...TABLE.keys()];
}

/**
 * Bytes taken by n elements of a type.
 * @param {number | string} type
 * @param {number} n element count, a multiple of the block size
 * @returns {number}
 * @throws {RangeError} when n is not a whole number of blocks
 */
export function byteLength(type, n) {
  const { name, blockSize, typeSize } = typeInfo(type);
  if (!Number.isSafeInteger(n) || n < 0 || n % blockSize !== 0) {
    throw new RangeError(`value count ${n} is not a multiple of ${blockSize} (the ${name} block size)`);
  }
  return (n / blockSize) * typeSize;
}
