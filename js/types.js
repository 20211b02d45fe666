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

/** @typedef {{ name: string, blockSize: number, typeSize: number }} TypeInfo */

/** id -> [name, blockSize, typeSize, vecDot] (vecDot: id of the activation type, -1 if none). */
/** @type {Map<number, [string, number, number, number]>} */
const TABLE = new Map([
  [0, ['f32', 1, 4, 0]],
  [1, ['f16', 1, 2, 0]],
  [2, ['q4_0', 32, 18, 8]],
  [3, ['q4_1', 32, 20, 9]],
  [6, ['q5_0', 32, 22, 8]],
  [7, ['q5_1', 32, 24, 9]],
  [8, ['q8_0', 32, 34, 8]],
  [9, ['q8_1', 32, 36, 9]],
  [10, ['q2_K', 256, 84, -1]],
  [11, ['q3_K', 256, 110, -1]],
  [12, ['q4_K', 256, 144, -1]],
  [13, ['q5_K', 256, 176, -1]],
  [14, ['q6_K', 256, 210, -1]],
  [15, ['q8_K', 256, 292, -1]],
  [16, ['iq2_xxs', 256, 66, -1]],
  [17, ['iq2_xs', 256, 74, -1]],
  [18, ['iq3_xxs', 256, 98, -1]],
  [19, ['iq1_s', 256, 50, -1]],
  [20, ['iq4_nl', 32, 18, -1]],
  [21, ['iq3_s', 256, 110, -1]],
  [22, ['iq2_s', 256, 82, -1]],
  [23, ['iq4_xs', 256, 136, -1]],
  [24, ['i8', 1, 1, -1]],
  [25, ['i16', 1, 2, -1]],
  [26, ['i32', 1, 4, -1]],
  [27, ['i64', 1, 8, -1]],
  [28, ['f64', 1, 8, -1]],
  [29, ['iq1_m', 256, 56, -1]],
  [30, ['bf16', 1, 2, 0]],
  [34, ['tq1_0', 256, 54, -1]],
  [35, ['tq2_0', 256, 66, -1]],
  [39, ['mxfp4', 32, 17, -1]],
]);

/** The types blockquant quantizes, dequantizes and multiplies (the others are known by name). */
export const CODEC_TYPES = Object.freeze([0, 1, 2, 3, 6, 7, 8, 9, 30]);

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

/**
 * Name, block size (elements) and type size (bytes per block) of a ggml type.
 * @param {number | string} type a ggml id (GGMLType.Q4_0) or name ('q4_0')
 * @returns {TypeInfo}
 * @throws {TypeError} for an unknown type
 */
export function typeInfo(type) {
  const row = /** @type {[string, number, number, number]} */ (TABLE.get(typeId(type)));
  return { name: row[0], blockSize: row[1], typeSize: row[2] };
}

/**
 * The activation type ggml pairs a weight type with in its dot products (Q8_0 for Q4_0, Q5_0 and
 * Q8_0; Q8_1 for Q4_1, Q5_1 and Q8_1; F32 for the float types), or -1.
 * @param {number | string} type
 * @returns {number}
 */
export function vecDotType(type) {
  return /** @type {[string, number, number, number]} */ (TABLE.get(typeId(type)))[3];
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
