// llama.cpp's file types (llama.h's llama_ftype) as llama-quantize names them, and how a name the
// user gives resolves to one (resolveFtype): an ftype, or a ggml type meaning "every quantizable
// tensor at that type" (the recipe's rules skipped, as with --pure; the shape fallback applies).

import { GGMLType as T, typeId, typeInfo } from '../types.js';
import { PlanError } from './errors.js';

/**
 * One file type. id: its llama_ftype (written as general.file_type); defaultType: the ggml type of
 * the tensors no rule picks another type for; requiresImatrix: its recipe puts some tensor of an
 * ordinary model at a type llama-quantize refuses to write without importance data.
 * @typedef {{ name: string, id: number, defaultType: number, requiresImatrix: boolean }} FType
 */

/** [name, llama_ftype, default ggml type, requires an imatrix], in llama.h's order. */
const TABLE = /** @type {const} */ ([
  ['F32', 0, T.F32, false],
  ['F16', 1, T.F16, false],
  ['Q4_0', 2, T.Q4_0, false],
  ['Q4_1', 3, T.Q4_1, false],
  ['Q8_0', 7, T.Q8_0, false],
  ['Q5_0', 8, T.Q5_0, false],
  ['Q5_1', 9, T.Q5_1, false],
  ['Q2_K', 10, T.Q2_K, false],
  ['Q3_K_S', 11, T.Q3_K, false],
  ['Q3_K_M', 12, T.Q3_K, false],
  ['Q3_K_L', 13, T.Q3_K, false],
  ['Q4_K_S', 14, T.Q4_K, false],
  ['Q4_K_M', 15, T.Q4_K, false],
  ['Q5_K_S', 16, T.Q5_K, false],
  ['Q5_K_M', 17, T.Q5_K, false],
  ['Q6_K', 18, T.Q6_K, false],
  ['IQ2_XXS', 19, T.IQ2_XXS, true],
  ['IQ2_XS', 20, T.IQ2_XS, true],
  ['Q2_K_S', 21, T.Q2_K, true],
  ['IQ3_XS', 22, T.IQ3_S, true],
  ['IQ3_XXS', 23, T.IQ3_XXS, true],
  ['IQ1_S', 24, T.IQ1_S, true],
  ['IQ4_NL', 25, T.IQ4_NL, false],
  ['IQ3_S', 26, T.IQ3_S, false],
  ['IQ3_M', 27, T.IQ3_S, false],
  ['IQ2_S', 28, T.IQ2_XS, true],
  ['IQ2_M', 29, T.IQ2_S, true],
  ['IQ4_XS', 30, T.IQ4_XS, false],
  ['IQ1_M', 31, T.IQ1_M, true],
  ['BF16', 32, T.BF16, false],
  ['TQ1_0', 36, T.TQ1_0, false],
  ['TQ2_0', 37, T.TQ2_0, false],
  ['MXFP4_MOE', 38, T.MXFP4, false],
  ['Q1_0', 40, T.Q1_0, false],
  ['Q2_0', 41, T.Q2_0, false],
]);

/** The file types by name. @type {Readonly<Record<string, Readonly<FType>>>} */
export const FTYPES = Object.freeze(
  Object.fromEntries(
    TABLE.map(([name, id, defaultType, requiresImatrix]) => [
      name,
      Object.freeze({ name, id, defaultType, requiresImatrix }),
    ]),
  ),
);

/**
 * The name of a general.file_type value as llama-quantize prints it without llama.h's MOSTLY_
 * prefix (15, LLAMA_FTYPE_MOSTLY_Q4_K_M, is 'Q4_K_M'), or null for an id llama.h does not list.
 * @param {unknown} id
 * @returns {string | null}
 */
export function ftypeName(id) {
  const n = typeof id === 'bigint' ? Number(id) : id;
  return Object.values(FTYPES).find((x) => x.id === n)?.name ?? null;
}

/** llama-quantize's aliases: a K type's name is its _M mix. */
const ALIASES = /** @type {Record<string, string>} */ ({ Q3_K: 'Q3_K_M', Q4_K: 'Q4_K_M', Q5_K: 'Q5_K_M' });

/**
 * What a plan is for: the file type (written as general.file_type; null for a ggml type no llama
 * ftype stands for), and `type` when every quantizable tensor goes to one ggml type (a type name
 * was given), else null (the ftype's recipe).
 * @typedef {{ ftype: Readonly<FType> | null, type: number | null }} Target
 */

/**
 * "Every tensor at one type" is llama-quantize --pure with the ftype whose default type that is
 * (the one of the same name; for q3_K, q4_K, q5_K the _S mix, for iq2_s IQ2_M, for mxfp4
 * MXFP4_MOE): that ftype's general.file_type and imatrix rules.
 * @type {Record<string, string>}
 */
const UNIFORM_FTYPE = { q3_K: 'Q3_K_S', q4_K: 'Q4_K_S', q5_K: 'Q5_K_S', iq2_s: 'IQ2_M', mxfp4: 'MXFP4_MOE' };

/**
 * The file type an option names. A ggml type name spelled exactly as ggml spells it ('q4_0',
 * 'q4_K', 'iq2_xxs', 'f16', 'mxfp4') means every quantizable tensor at that type (what
 * blockquant's `--type` has always meant); any other spelling is first an ftype name or
 * llama-quantize's alias (Q3_K, Q4_K, Q5_K: the _M mixes) in any case, as llama-quantize reads it
 * ('Q4_0', 'q4_k_m'), then a ggml type name in any case.
 * @param {unknown} name a name as above, or a llama_ftype number
 * @returns {Target}
 * @throws {PlanError} UNKNOWN_FTYPE, listing the valid names
 */
export function resolveFtype(name) {
  if (typeof name === 'number') {
    const f = Object.values(FTYPES).find((x) => x.id === name);
    if (f) return { ftype: f, type: null };
  } else if (typeof name === 'string') {
    const exact = typeByName(name);
    if (exact !== null && typeInfo(exact).name === name) return uniform(exact);
    const up = ALIASES[name.toUpperCase()] ?? name.toUpperCase();
    if (Object.hasOwn(FTYPES, up)) return { ftype: FTYPES[up], type: null };
    if (exact !== null) return uniform(exact);
  }
  throw new PlanError(
    'UNKNOWN_FTYPE',
    `unknown ftype ${JSON.stringify(name)}: valid ftypes are ${Object.keys(FTYPES).join(', ')} ` +
      `(also ${Object.keys(ALIASES).join(', ')}, a llama_ftype number, or a ggml type name for every tensor at that type)`,
  );
}

/** @param {number} type @returns {Target} */
function uniform(type) {
  const n = typeInfo(type).name;
  const f = UNIFORM_FTYPE[n] ?? n.toUpperCase();
  return { ftype: Object.hasOwn(FTYPES, f) ? FTYPES[f] : null, type };
}

/**
 * A ggml type that quantized tensors can be written in, by name (any case), or null.
 * @param {string} name
 */
function typeByName(name) {
  let id;
  try {
    id = typeId(name);
  } catch {
    return null;
  }
  const info = typeInfo(id);
  // Types ggml_quantize_chunk writes: the block types but the activation-only ones, and the floats.
  if (id === T.Q8_1 || id === T.Q8_K || (info.blockSize === 1 && !(id === T.F32 || id === T.F16 || id === T.BF16)))
    return null;
  return id;
}

/**
 * The ggml type of a --output-tensor-type / --token-embedding-type / --tensor-type value: a ggml
 * type id or name (any case, as llama-quantize's parse_ggml_type).
 * @param {unknown} t
 * @param {string} what the option, for the message
 * @returns {number}
 * @throws {PlanError} BAD_OPTION
 */
export function typeOption(t, what) {
  try {
    if (typeof t === 'number' || typeof t === 'string') return typeId(/** @type {any} */ (t));
  } catch {
    // fall through
  }
  throw new PlanError('BAD_OPTION', `${what}: ${JSON.stringify(t)} is not a ggml type`);
}
