// The ggml type table: names and ids, and the table generated from the C one (js/gen/types-table.js,
// written by make from src/types.inc, src/kernels.inc and src/fields.inc).

import { TYPE_ROWS, LAYOUTS } from './gen/types-table.js';
import { OP_MODULES, GRID_TYPES } from './gen/modules.js';

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
  NVFP4: 40,
  Q1_0: 41,
  Q2_0: 42,
});

// What blockquant can do with a type: the flags of bq_type_flags (src/bq.h), derived in C from the
// kernel list (src/kernels.inc) and the type table (src/types.inc). Q: quantize, D: dequantize,
// V: dot with its vec_dot type, F: dot with f32, M: matvec, S: blockStats, W: quantize with
// importance weights (rows), R: ggml quantizes it only with importance weights.
const Q = 1,
  D = 2,
  V = 4,
  F = 8,
  M = 16,
  S = 32,
  W = 64,
  R = 128;

/**
 * @typedef {{ name: string, blockSize: number, typeSize: number, vecDot: number, dotStep: number,
 *   subBlock: number, quantize: boolean, weighted: boolean, requiresImatrix: boolean,
 *   dequantize: boolean, dot: boolean, dotF32: boolean, matvec: boolean, stats: boolean,
 *   modules: Partial<Record<ModuleOp, string>> }} TypeInfo
 * @typedef {'dequantize' | 'quantize' | 'quantize_rows' | 'dot' | 'matvec' | 'stats'} ModuleOp
 * modules: for each kernel the package has for the type, the module of the split layout that holds
 * it (src/modules.inc; quantize: without importance weights, quantize_rows: with them; dot serves
 * dotF32 as well); whether a codec has it loaded now is codec.moduleOf(type, op).loaded.
 * vecDot: the id of the activation type ggml pairs it with (-1: none); dotStep: elements at which a
 * dot may be cut into pieces (0: no dot); subBlock: elements per sub-block blockStats reports (0:
 * none); the booleans: which operations blockquant has for it (quantize: to this type, as
 * ggml_quantize_chunk writes it; weighted: quantize takes an importance matrix and uses it;
 * requiresImatrix: quantize needs one, as ggml's does (IQ2_XXS, IQ2_XS, IQ1_S); dot: with its
 * vecDot type, dotF32: with f32 values).
 */

/**
 * id -> [name, blockSize, typeSize, vecDot, dotStep, subBlock, flags], generated from the C tables
 * (js/gen/types-table.js, written by tools/gen-types.c).
 * @type {Map<number, readonly [string, number, number, number, number, number, number]>}
 */
const TABLE = new Map(TYPE_ROWS.map(([id, ...row]) => [id, row]));

/**
 * @typedef {'f16' | 'bf16' | 'f32' | 'f64' | 'u16' | 'u32' | 'u8' | 'i8' | 'i16' | 'i32' | 'i64'} Kind
 * @typedef {{ name: string, kind: Kind, offset: number, size: number, unit: number }} BlockField
 * kind: what one scalar of the field is ('f16': a binary16 scale, 'u16'/'u32': little-endian
 * 16/32-bit words of codes, 'u8'/'i8': bytes of codes; 'i16', 'i32', 'i64', 'f64': the integer and
 * double types' scalars); offset and size in bytes within the block; unit: bytes per scalar (what
 * a byte-order swap reverses).
 */

/** Each block layout, field by field in memory order, as src/fields.inc and the C structs have it;
 * made on first use, so that a bundle without blockFields (a parse-only page) drops the layouts. */
/** @type {Map<number, readonly BlockField[]> | undefined} */
let FIELDS;
const fields = () =>
  (FIELDS ??= new Map(
    LAYOUTS.map(([id, fields]) => [
      id,
      Object.freeze(
        fields.map(([name, kind, offset, size, unit]) =>
          Object.freeze({ name, kind: /** @type {Kind} */ (kind), offset, size, unit }),
        ),
      ),
    ]),
  ));

/** The types blockquant has any operation for (the others are known by name). */
export const CODEC_TYPES = Object.freeze([...TABLE].filter(([, r]) => (r[6] & ~R) !== 0).map(([id]) => id));

/** The flag bits of quantize without weights (bq_<t>_quantize) and with them (bq_<t>_quantize_rows). */
export const QUANTIZE_PLAIN = Q,
  QUANTIZE_ROWS = W;

/**
 * The raw operation flags of a type (bq_type_flags): for the codecs, which kernels to call.
 * @param {number | string} type
 * @returns {number}
 */
export function typeFlags(type) {
  return rowOf(type)[6];
}

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
  /** @type {readonly [string, number, number, number, number, number, number]} */ (TABLE.get(typeId(type)));

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
    quantize: (ops & (Q | W)) !== 0,
    weighted: (ops & W) !== 0,
    requiresImatrix: (ops & (Q | W)) !== 0 && (ops & R) !== 0,
    dequantize: (ops & D) !== 0,
    dot: (ops & V) !== 0,
    dotF32: (ops & F) !== 0,
    matvec: (ops & M) !== 0,
    stats: (ops & S) !== 0,
    modules: modulesOf(name.toLowerCase(), ops),
  };
}

/** @type {[ModuleOp, number][]} each kernel's operation and its flag bit */
const OP_FLAGS = [
  ['dequantize', D],
  ['quantize', Q],
  ['quantize_rows', W],
  ['dot', V | F],
  ['matvec', M],
  ['stats', S],
];

/**
 * @param {string} name @param {number} ops
 * @returns {Partial<Record<ModuleOp, string>>}
 */
function modulesOf(name, ops) {
  const grid = GRID_TYPES.includes(name) ? 1 : 0;
  /** @type {Partial<Record<ModuleOp, string>>} */
  const m = {};
  for (const [op, bit] of OP_FLAGS) if (ops & bit) m[op] = OP_MODULES[op][grid];
  return m;
}

/**
 * The fields of one block of a type, in memory order, or null for a type whose layout this
 * version does not describe.
 * @param {number | string} type
 * @returns {readonly BlockField[] | null}
 * @throws {TypeError} for an unknown type
 */
export function blockFields(type) {
  return fields().get(typeId(type)) ?? null;
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
