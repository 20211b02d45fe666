// llama-quantize's per-tensor rules (llama.cpp src/llama-quant.cpp, as the 0.4.0 library behaves):
// which tensors may be quantized, each tensor's role, the ftype mixes' choices by role, layer and
// model shape, the shape fallback, and which types need importance data. The rules see a `state`
// that the planner builds once per plan and whose counters advance as tensors are planned in
// output order (planner.js).

import { GGMLType as T, typeInfo } from '../types.js';
import { PlanError } from './errors.js';

/**
 * What the rules know of the model and how far the plan has got.
 * @typedef {object} RuleState
 * @property {string} arch general.architecture
 * @property {number} nExpert expert_count (0 for a dense model)
 * @property {number} nGqa n_head / n_head_kv of layer 0 (integer division; 0 when n_head_kv is 0)
 * @property {boolean} is70B llama.cpp's loader calls the model 70B
 * @property {boolean} hasImatrix importance data was given (and survived include/exclude)
 * @property {boolean} tied no tensor is named output.weight
 * @property {number} nLayer block_count: the n of every layer counter
 * @property {number} nAttnV tensors whose role is attn_v-like
 * @property {number} iAttnV attn_v-like tensors the rules have seen
 * @property {number} iFfnDown
 * @property {number} iFfnGate
 * @property {number} iFfnUp
 */

/** Roles (llama.cpp's tensor_category). */
export const ROLE = /** @type {const} */ ({
  TOKEN_EMBD: 'token_embd',
  OUTPUT: 'output',
  ATTN_Q: 'attn_q',
  ATTN_K: 'attn_k',
  ATTN_V: 'attn_v',
  ATTN_QKV: 'attn_qkv',
  ATTN_KV_B: 'attn_kv_b',
  ATTN_OUTPUT: 'attn_output',
  FFN_UP: 'ffn_up',
  FFN_GATE: 'ffn_gate',
  FFN_DOWN: 'ffn_down',
  OTHER: 'other',
});

/** Substrings that give a tensor its role, tried in this order (the first found wins). */
const ROLE_BY_PART = /** @type {const} */ ([
  ['attn_qkv.weight', ROLE.ATTN_QKV],
  ['attn_kv_b.weight', ROLE.ATTN_KV_B],
  ['attn_v.weight', ROLE.ATTN_V],
  ['attn_k.weight', ROLE.ATTN_K],
  ['attn_q.weight', ROLE.ATTN_Q],
  ['attn_output.weight', ROLE.ATTN_OUTPUT],
  ['ffn_up', ROLE.FFN_UP],
  ['ffn_gate', ROLE.FFN_GATE],
  ['ffn_down', ROLE.FFN_DOWN],
]);

/** @param {string} name */
export const isTokenEmbd = (name) => name === 'token_embd.weight' || name === 'per_layer_token_embd.weight';

/**
 * A tensor's role, from its name.
 * @param {string} name
 * @returns {string}
 */
export function roleOf(name) {
  if (name === 'output.weight') return ROLE.OUTPUT;
  if (isTokenEmbd(name)) return ROLE.TOKEN_EMBD;
  for (const [part, role] of ROLE_BY_PART) if (name.includes(part)) return role;
  return ROLE.OTHER;
}

/** @param {string} role */
export const isAttnVLike = (role) => role === ROLE.ATTN_V || role === ROLE.ATTN_QKV || role === ROLE.ATTN_KV_B;

/** Names containing any of these are never quantized. */
const NEVER_PARTS = [
  '_norm.weight',
  'ffn_gate_inp.weight',
  'altup',
  'laurel',
  'per_layer_model_proj',
  'ssm_conv1d',
  'shortconv.conv.weight',
  'ffn_gate_tid2eid.weight',
  'indexer.k_proj.weight',
  'indexer.q_proj.weight',
  'attn_rel_b.weight',
  'sam.pos_embd',
  'sam.neck.',
  'sam.net_',
  'a.rvq.codebook',
  'mm.a.code_embd',
  '.position_embd',
  '.rel_pos',
  '.patch_embd',
  '.patch_merger',
  ...[
    'first',
    'w0',
    'w1',
    'w2',
    'v0',
    'v1',
    'v2',
    'a0',
    'a1',
    'a2',
    'g1',
    'g2',
    'decay_w1',
    'decay_w2',
    'lerp_fused',
  ].map((s) => `time_mix_${s}.weight`),
];
/** Names that are never quantized (the BERT position and token-type embeddings). */
const NEVER_NAMES = new Set(['position_embd.weight', 'token_types.weight']);

/**
 * Whether llama-quantize may change a tensor's type (tensor_allows_quantization): 2-D and 3-D
 * tensors (dims as ggml counts them: trailing 1s dropped) whose name ends in "weight" and is not on
 * the never-quantized list; output.weight unless leaveOutputTensor.
 * @param {string} name
 * @param {number} nDims ggml_n_dims
 * @param {boolean} leaveOutput
 */
export function allowsQuantization(name, nDims, leaveOutput) {
  if (nDims < 2) return false;
  if (!name.endsWith('weight')) return false;
  if (leaveOutput && name === 'output.weight') return false;
  if (NEVER_NAMES.has(name)) return false;
  return !NEVER_PARTS.some((p) => name.includes(p));
}

/** use_more_bits: the first and last eighth of the layers and every third in between. */
const moreBits = (/** @type {number} */ i, /** @type {number} */ n) =>
  i < idiv(n, 8) || i >= idiv(7 * n, 8) || (i - idiv(n, 8)) % 3 === 2;
/** C's integer division of non-negative ints. */
const idiv = (/** @type {number} */ a, /** @type {number} */ b) => Math.trunc(a / b);

/** The ftypes whose output goes to q5_K and whose attn_v/ffn_down follow the 2-bit rules. */
const LOW_OUTPUT = new Set(['IQ2_XXS', 'IQ2_XS', 'IQ3_XXS', 'IQ1_S', 'IQ2_S', 'IQ2_M', 'IQ1_M']);
const LOW = new Set(['IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ2_S', 'IQ2_M', 'IQ1_M']);
/** The ftypes whose attn_output goes to q5_K in a model of 8 experts. */
const EXPERT8_ATTN_OUTPUT_Q5K = new Set([
  'Q2_K',
  'IQ3_XS',
  'IQ3_XXS',
  'Q3_K_S',
  'Q3_K_M',
  'IQ4_NL',
  'Q4_K_S',
  'Q4_K_M',
  'IQ3_S',
  'IQ3_M',
  'IQ4_XS',
]);

/**
 * The layer a per-layer rule sees: the counter of its role in a dense model, the number in the
 * name ("blk.N.") when the model has experts (their tensors need not come in layer order).
 * @param {RuleState} s @param {number} counter @param {string} name
 * @returns {number}
 */
function layerOf(s, counter, name) {
  if (Math.max(1, s.nExpert) <= 1) return counter;
  const m = /^blk\.\s*([+-]?\d+)/.exec(name);
  if (!m) throw new PlanError('BAD_LAYER', `failed to determine the layer of tensor ${name}`, name);
  const i = Number(m[1]);
  if (i < 0 || i >= s.nLayer)
    throw new PlanError('BAD_LAYER', `bad layer ${i} for tensor ${name}: must be in [0, ${s.nLayer})`, name);
  return i;
}

/**
 * The ftype mix's type for one tensor (llama_tensor_get_type_impl), advancing the counters.
 * @param {RuleState} s
 * @param {string} f the ftype's name
 * @param {{ name: string, role: string, ne: number[] }} t ne: ggml's four dims
 * @param {number} type the type so far (the ftype's default type)
 * @param {{ outputType?: number, tokenEmbdType?: number }} o the user's --output-tensor-type and
 *   --token-embedding-type
 * @returns {number}
 */
export function mixType(s, f, t, type, o) {
  const { role, name, ne } = t;
  const n = s.nLayer;
  if (role === ROLE.OUTPUT || (s.tied && role === ROLE.TOKEN_EMBD)) {
    if (o.outputType !== undefined) return o.outputType;
    if (f === 'MXFP4_MOE' || s.arch === 'falcon' || ne[0] % typeInfo(type).blockSize !== 0) return T.Q8_0;
    if (LOW_OUTPUT.has(f)) return T.Q5_K;
    return type !== T.Q8_0 ? T.Q6_K : type;
  }
  if (f === 'MXFP4_MOE') {
    const expertRole = role === ROLE.FFN_UP || role === ROLE.FFN_GATE || role === ROLE.FFN_DOWN;
    return ne[2] > 1 && (s.arch !== 'bailingmoe3' || expertRole) ? T.MXFP4 : T.Q8_0;
  }
  if (role === ROLE.TOKEN_EMBD) {
    if (o.tokenEmbdType !== undefined) return o.tokenEmbdType;
    if (f === 'IQ2_XXS' || f === 'IQ2_XS' || f === 'IQ1_S' || f === 'IQ1_M') return T.Q2_K;
    if (f === 'IQ2_S' || f === 'IQ2_M' || f === 'IQ3_XXS') return T.IQ3_S;
    if (f === 'TQ1_0' || f === 'TQ2_0' || f === 'Q2_0') return T.Q4_K;
    return type;
  }
  if (LOW.has(f)) return lowMix(s, f, role, type);
  if (isAttnVLike(role)) {
    let r = type;
    if (f === 'Q2_K') r = s.nGqa >= 4 ? T.Q4_K : T.Q3_K;
    else if (f === 'Q2_K_S' && s.nGqa >= 4) r = T.Q4_K;
    else if (f === 'IQ3_XXS') r = s.nGqa >= 4 ? T.Q4_K : !s.hasImatrix ? T.IQ3_S : T.IQ3_XXS;
    else if ((f === 'IQ3_XS' || f === 'IQ3_S') && s.nGqa >= 4) r = T.Q4_K;
    else if (f === 'IQ3_M') r = T.Q4_K;
    else if (f === 'Q3_K_M') r = s.iAttnV < 2 ? T.Q5_K : T.Q4_K;
    else if (f === 'Q3_K_L') r = T.Q5_K;
    else if ((f === 'IQ4_NL' || f === 'IQ4_XS') && s.nGqa >= 4) r = T.Q5_K;
    else if ((f === 'Q4_K_M' || f === 'Q5_K_M') && moreBits(s.iAttnV, s.nAttnV)) r = T.Q6_K;
    else if (f === 'Q4_K_S' && s.iAttnV < 4) r = T.Q5_K;
    if (s.is70B && (r === T.Q3_K || r === T.Q4_K)) r = T.Q5_K;
    if (s.nExpert === 8) r = T.Q8_0;
    s.iAttnV++;
    return r;
  }
  if (role === ROLE.ATTN_K || role === ROLE.ATTN_Q) {
    if (role === ROLE.ATTN_K && s.nExpert === 8) return T.Q8_0;
    if (f === 'IQ3_XS') return T.IQ3_XXS;
    if (f === 'IQ3_XXS') return T.IQ2_S;
    return type;
  }
  if (role === ROLE.FFN_DOWN) {
    const i = layerOf(s, s.iFfnDown, name);
    const r = ffnDown(s, f, i, n, type);
    s.iFfnDown++;
    return r;
  }
  if (role === ROLE.ATTN_OUTPUT) {
    if (s.arch === 'falcon') return f === 'Q3_K_L' ? T.Q4_K : type;
    if (s.nExpert === 8) return EXPERT8_ATTN_OUTPUT_Q5K.has(f) ? T.Q5_K : type;
    const by = /** @type {Record<string, number>} */ ({
      Q2_K: T.Q3_K,
      IQ3_XXS: T.IQ3_S,
      Q3_K_M: T.Q4_K,
      Q3_K_L: T.Q5_K,
      IQ3_M: T.Q4_K,
    });
    return by[f] ?? type;
  }
  if (role === ROLE.FFN_GATE || role === ROLE.FFN_UP) {
    const up = role === ROLE.FFN_UP;
    const i = layerOf(s, up ? s.iFfnUp : s.iFfnGate, name);
    if (up) s.iFfnUp++;
    else s.iFfnGate++;
    return f === 'IQ3_XS' && i >= idiv(n, 8) && i < idiv(7 * n, 8) ? T.IQ3_XXS : type;
  }
  return type;
}

/**
 * The 1- and 2-bit mixes (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M) past output and token_embd.
 * @param {RuleState} s @param {string} f @param {string} role @param {number} type
 */
function lowMix(s, f, role, type) {
  const s2 = f === 'IQ2_S' || f === 'IQ2_M';
  if (isAttnVLike(role)) {
    s.iAttnV++;
    return s.nGqa >= 4 || s.nExpert >= 4 ? T.Q4_K : s2 ? T.IQ3_S : T.Q2_K;
  }
  if (s.nExpert === 8 && role === ROLE.ATTN_K) return T.Q4_K;
  if (role === ROLE.FFN_DOWN) {
    // The counter itself, never the layer in the name, even in a MoE.
    const r = s.iFfnDown < idiv(s.nLayer, 8) ? (s2 ? T.IQ3_S : T.Q2_K) : type;
    s.iFfnDown++;
    return r;
  }
  if (role === ROLE.ATTN_OUTPUT) {
    if (s.nExpert === 8) return T.Q5_K;
    if (f === 'IQ1_S' || f === 'IQ1_M') return T.IQ2_XXS;
    if (s2) return T.IQ3_S;
  }
  return type;
}

/**
 * ffn_down of layer i of n in the mixes past the 2-bit ones.
 * @param {RuleState} s @param {string} f @param {number} i @param {number} n @param {number} type
 */
function ffnDown(s, f, i, n, type) {
  const falcon = s.arch === 'falcon';
  const first8 = i < idiv(n, 8);
  if (f === 'Q2_K') return T.Q3_K;
  if (f === 'Q2_K_S') return first8 ? T.Q4_K : type;
  if (f === 'IQ3_XXS' && !s.hasImatrix) return first8 ? T.Q4_K : T.Q3_K;
  if (f === 'Q3_K_M') return i < idiv(n, 16) ? T.Q5_K : !falcon || moreBits(i, n) ? T.Q4_K : T.Q3_K;
  if (f === 'IQ3_M' && (first8 || (s.nExpert === 8 && moreBits(i, n)))) return T.Q4_K;
  if (f === 'Q3_K_L') return falcon ? T.Q4_K : T.Q5_K;
  if (f === 'Q4_K_M') {
    if (falcon) return i < idiv(n, 16) ? T.Q6_K : moreBits(i, n) ? T.Q5_K : T.Q4_K;
    return moreBits(i, n) ? T.Q6_K : type;
  }
  if (first8 && (f === 'IQ4_NL' || f === 'IQ4_XS') && !s.hasImatrix) return T.Q5_K;
  if (f === 'Q5_K_M' && moreBits(i, n)) return T.Q6_K;
  if (f === 'Q4_K_S' && !falcon && first8) return T.Q5_K;
  if ((f === 'Q4_0' || f === 'Q5_0') && s.hasImatrix && first8) return f === 'Q4_0' ? T.Q4_1 : T.Q5_1;
  return type;
}

/** @param {number} a @param {number} b @returns {[number, number]} */
const pair = (a, b) => [a, b];

/**
 * Where a type goes when a tensor's rows (ne0) are not whole blocks of it. The 32-value types go
 * straight to F16: so the 0.4.0 library does (newer llama.cpp sources refuse them); NVFP4 and
 * Q1_0 have no fallback.
 */
/** @type {Map<number, number>} */
const FALLBACK = new Map([
  ...[T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.IQ4_NL, T.MXFP4].map((t) => pair(t, T.F16)),
  ...[T.IQ1_S, T.IQ1_M, T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ4_XS].map((t) => pair(t, T.IQ4_NL)),
  ...[T.Q2_0, T.Q2_K, T.Q3_K, T.TQ1_0, T.TQ2_0].map((t) => pair(t, T.Q4_0)),
  pair(T.Q4_K, T.Q5_0),
  pair(T.Q5_K, T.Q5_1),
  pair(T.Q6_K, T.Q8_0),
]);

/**
 * The shape fallback (tensor_type_fallback): `type` when ne0 is whole blocks of it, else its
 * fallback type, else F16 when even that does not fit.
 * @param {string} name @param {number} ne0 @param {number} type
 * @returns {{ type: number, fallback?: string }} fallback: why, when the type changed
 * @throws {PlanError} NO_FALLBACK for a type that has none
 */
export function fallback(name, ne0, type) {
  const info = typeInfo(type);
  if (ne0 % info.blockSize === 0) return { type };
  const to = FALLBACK.get(type);
  if (to === undefined)
    throw new PlanError(
      'NO_FALLBACK',
      `no tensor type fallback is defined for type ${info.name} (${name}: ne0 ${ne0})`,
      name,
    );
  const why = `ncols ${ne0} not divisible by ${info.blockSize} (required for type ${info.name})`;
  if (ne0 % typeInfo(to).blockSize !== 0) return { type: T.F16, fallback: `${why}: must use f16 due to unusual shape` };
  return { type: to, fallback: `${why}: falling back to ${typeInfo(to).name}` };
}

/** Types llama-quantize refuses to write without importance data (tensor_requires_imatrix). */
/** @type {Set<number>} */
const NEEDS_IMATRIX = new Set([T.IQ3_XXS, T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ1_M, T.IQ1_S]);

/** Types ggml_quantize_chunk aborts on without importance weights (whatever the tensor's name). */
/** @type {Set<number>} */
export const GGML_NEEDS_WEIGHTS = new Set([T.IQ2_XXS, T.IQ2_XS, T.IQ1_S]);

/**
 * @param {string} name @param {number} type the tensor's target type @param {string | null} f ftype name
 */
export function requiresImatrix(name, type, f) {
  if (isTokenEmbd(name) || name === 'output.weight') return false;
  return NEEDS_IMATRIX.has(type) || (type === T.Q2_K && f === 'Q2_K_S');
}
