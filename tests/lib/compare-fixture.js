// Two small llama-like GGUFs for the compare tests, built with writeGGUF: A holds F16 weights
// (and F32 norms), B the same tensors quantized to several types, as a file quantized by another
// tool would be; plus what a compare must list and go on past: a tensor only A has, one only B
// has, and one whose shape differs. token_embd has more than one chunk of rows (compare-run.js's
// CHUNK_VALUES), so the streamed sums cross a chunk boundary.
import { writeGGUF, GGMLType, GGUFValueType as VT } from '../../js/node.js';

export const LAYERS = 3;
export const EMBD = 256;
/** B's type of each compared weight, by role. */
export const B_TYPES = { attn_q: 'q4_0', attn_k: 'q4_K', ffn_down: 'q8_0', token_embd: 'q5_1', output: 'q6_K' };

/**
 * @param {{ quantize: (f: string, x: Float32Array) => Uint8Array }} bq
 * @returns {{ a: Uint8Array, b: Uint8Array }}
 */
export function compareModels(bq) {
  let seed = 11;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
  // Heavy-ish tails: a few values 8x the rest, so blocks differ in error.
  const vec = (/** @type {number} */ n) =>
    Float32Array.from({ length: n }, () => 0.05 * rnd() * (rnd() > 0.48 ? 8 : 1));
  /** @type {{ name: string, dims: number[], x: Float32Array, b: string | null, bDims?: number[] }[]} */
  const list = [{ name: 'token_embd.weight', dims: [EMBD, 4200], x: vec(EMBD * 4200), b: B_TYPES.token_embd }];
  for (let l = 0; l < LAYERS; l++) {
    list.push(
      { name: `blk.${l}.attn_norm.weight`, dims: [EMBD], x: vec(EMBD), b: 'f32' },
      { name: `blk.${l}.attn_q.weight`, dims: [EMBD, EMBD], x: vec(EMBD * EMBD), b: B_TYPES.attn_q },
      { name: `blk.${l}.attn_k.weight`, dims: [EMBD, 128], x: vec(EMBD * 128), b: B_TYPES.attn_k },
      { name: `blk.${l}.ffn_down.weight`, dims: [512, EMBD], x: vec(512 * EMBD), b: B_TYPES.ffn_down },
    );
  }
  list.push(
    { name: 'output.weight', dims: [EMBD, 64], x: vec(EMBD * 64), b: B_TYPES.output },
    { name: 'only_in_a.weight', dims: [EMBD, 4], x: vec(EMBD * 4), b: null },
    { name: 'reshaped.weight', dims: [EMBD, 8], x: vec(EMBD * 8), b: 'q8_0', bDims: [512, 4] },
  );
  const TYPE = /** @type {Record<string, number>} */ ({
    f32: GGMLType.F32,
    f16: GGMLType.F16,
    q4_0: GGMLType.Q4_0,
    q4_K: GGMLType.Q4_K,
    q8_0: GGMLType.Q8_0,
    q5_1: GGMLType.Q5_1,
    q6_K: GGMLType.Q6_K,
  });
  const enc = (/** @type {string} */ f, /** @type {Float32Array} */ x) =>
    f === 'f32' ? new Uint8Array(x.slice().buffer) : bq.quantize(f, x);
  const kv = [
    { key: 'general.architecture', type: VT.STRING, value: 'llama' },
    { key: 'general.name', type: VT.STRING, value: 'Compare Fixture' },
    { key: 'llama.block_count', type: VT.UINT32, value: LAYERS },
    { key: 'llama.embedding_length', type: VT.UINT32, value: EMBD },
    { key: 'llama.attention.head_count', type: VT.UINT32, value: 4 },
    { key: 'llama.context_length', type: VT.UINT32, value: 2048 },
  ];
  const aT = list.map((t) => {
    const f = t.dims.length === 1 ? 'f32' : 'f16';
    return { name: t.name, type: TYPE[f], dims: t.dims, data: enc(f, t.x) };
  });
  const bT = list
    .filter((t) => t.b !== null)
    .map((t) => ({
      name: t.name,
      type: TYPE[/** @type {string} */ (t.b)],
      dims: t.bDims ?? t.dims,
      data: enc(/** @type {string} */ (t.b), t.x),
    }));
  bT.push({ name: 'only_in_b.weight', type: GGMLType.Q8_0, dims: [EMBD, 2], data: bq.quantize('q8_0', vec(EMBD * 2)) });
  return { a: writeGGUF({ kv, tensors: aT }), b: writeGGUF({ kv, tensors: bT }) };
}
