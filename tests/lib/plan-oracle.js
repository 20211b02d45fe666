// planFor against llama_model_quantize: runs the oracle on the same model with the same options
// (translated as llama-quantize's tool hands them to the library: type names to ids, --tensor-type
// patterns lowercased, the imatrix filtered by --include/--exclude-weights, the tool's
// quantize.imatrix.* KVs as overrides), parses what it wrote, and lists every difference from the
// plan: KVs (keys, types, values, order), tensors (names, order, types, dims, offsets), data
// offset, alignment and size of every shard. For the tests.
import { parseGGUF } from '../../js/gguf-read.js';
import { writeGGUFHeader } from '../../js/gguf-write.js';
import { typeId, typeInfo } from '../../js/types.js';
import { planFor } from '../../js/model/recipe.js';
import { llamaQuantizeAll } from './llama-oracle.js';

/** @typedef {import('../../js/model/recipe.js').PlanOptions} PlanOptions */
/** @typedef {import('./llama-oracle.js').OracleOptions} OracleOptions */

/**
 * @typedef {object} Case
 * @property {string} label
 * @property {Uint8Array | Uint8Array[]} model the file, or a split model's shards
 * @property {PlanOptions} options for planFor (imatrix: a Map, or an Imatrix)
 * @property {string} [fails] the plan and the oracle must both refuse: the PlanError code expected
 * @property {number} [oracleFtype] the llama_ftype to give the oracle (default: options.ftype's)
 * @property {OracleOptions} [oracle] more options for the oracle (what a ggml type name means: pure)
 * @property {boolean} [mayFail] both may refuse, if for the same reason (refusalCode)
 */

/**
 * The PlanError code for llama_model_quantize's refusal, from its log.
 * @param {string} log
 * @returns {string}
 */
export function refusalCode(log) {
  const m = /failed to quantize: (.*)|GGML_ASSERT\((.*)\) failed/.exec(log);
  const why = m ? (m[1] ?? m[2]) : '';
  if (/requires an imatrix|Missing importance matrix|imatrix != NULL/.test(why)) return 'NEEDS_IMATRIX';
  if (/no tensor type fallback/.test(why)) return 'NO_FALLBACK';
  if (/imatrix size/.test(why)) return 'IMATRIX_MISMATCH';
  if (/non-finite/.test(why)) return 'IMATRIX_NOT_FINITE';
  if (/requantizing from type/.test(why)) return 'REQUANTIZE';
  if (/invalid output file type/.test(why)) return 'UNKNOWN_FTYPE';
  if (/cannot dequantize\/convert/.test(why)) return 'CANNOT_CONVERT';
  if (/has wrong type|has wrong array length|is not a .* array/.test(why)) return 'BAD_KV';
  if (/Failed to determine layer|Bad layer/.test(why)) return 'BAD_LAYER';
  // ggml_validate_row_data on the input (every tensor, as it is read) and on what was quantized.
  if (/has invalid data/.test(why)) return 'INVALID_DATA';
  if (/quantized data validation failed/.test(why) && /found (nan|inf) value|found \d+ (NaNs|infinities)/.test(log))
    return 'INVALID_OUTPUT';
  // Rows that are not whole blocks of a type given for output or token_embd (no fallback there):
  // ggml writes blocks the validation then refuses.
  if (/quantized data validation failed/.test(why)) return 'BAD_SHAPE';
  return `unrecognized (${why || log.slice(-200)})`;
}

/**
 * The oracle's options for planFor's.
 * @param {PlanOptions} o
 * @param {import('../../js/model/recipe.js').QuantizePlan | null} plan
 * @returns {OracleOptions}
 */
export function oracleOptions(o, plan) {
  /** @type {OracleOptions} */
  const r = {};
  if (o.imatrix) {
    const src = o.imatrix instanceof Map ? o.imatrix : new Map([...o.imatrix.entries].map(([k, e]) => [k, e.values]));
    let entries = [...src];
    if (o.excludeWeights?.length) entries = entries.filter(([k]) => !o.excludeWeights?.some((s) => k.includes(s)));
    if (o.includeWeights?.length) entries = entries.filter(([k]) => o.includeWeights?.some((s) => k.includes(s)));
    if (entries.length) r.imatrix = entries;
  }
  for (const k of /** @type {const} */ (['pure', 'leaveOutputTensor', 'allowRequantize', 'keepSplit', 'dryRun']))
    if (o[k]) r[k] = true;
  if (o.outputTensorType !== undefined) r.outputTensorType = typeId(/** @type {any} */ (o.outputTensorType));
  if (o.tokenEmbeddingType !== undefined) r.tokenEmbeddingType = typeId(/** @type {any} */ (o.tokenEmbeddingType));
  if (o.tensorTypes)
    r.tensorTypes = o.tensorTypes.map(([p, t]) => [String(p).toLowerCase(), typeId(/** @type {any} */ (t))]);
  const user = (o.overrideKv ?? []).map((x) => /** @type {string} */ (x));
  // The tool's own overrides, as it makes them from the imatrix file (read off the plan: their
  // values are the tool's, the plan only says which it adds).
  const tool = (plan?.kv ?? [])
    .filter((e) => e.key.startsWith('quantize.imatrix.'))
    .map((e) => `${e.key}=${e.type === 8 ? 'str' : 'int'}:${e.value}`);
  if (user.length || tool.length) r.overrideKv = [...user, ...tool];
  if (o.pruneLayers) r.pruneLayers = [...new Set(o.pruneLayers)].sort((a, b) => a - b);
  return r;
}

/** @param {unknown} v */
function show(v) {
  if (ArrayBuffer.isView(v) || Array.isArray(v))
    return `[${Array.from(/** @type {ArrayLike<unknown>} */ (v), String).join(',')}]`;
  return typeof v === 'number' && Object.is(v, -0) ? '-0' : String(v);
}

/** @param {import('../../js/gguf-format.js').KV} e */
const kvLine = (e) => `${e.key} ${e.type}${e.itemType !== undefined ? `/${e.itemType}` : ''} ${show(e.value)}`;

/**
 * Runs every case through planFor and the oracle; returns the differences of each (empty: same)
 * and, when both refused alike, the reason (a PlanError code).
 * @param {Case[]} cases
 * @returns {{ label: string, diffs: string[], refused: string | null }[]}
 */
export function comparePlans(cases) {
  const planned = cases.map((c) => {
    const files = Array.isArray(c.model) ? c.model.map((b) => parseGGUF(b)) : parseGGUF(c.model);
    try {
      return { plan: planFor(files, c.options), error: null };
    } catch (e) {
      return { plan: null, error: /** @type {Error & { code?: string }} */ (e) };
    }
  });
  const results = llamaQuantizeAll(
    cases.map((c, k) => ({
      model: c.model,
      ftype: c.oracleFtype ?? ftypeIdOf(c.options.ftype),
      options: { ...oracleOptions(c.options, planned[k].plan), ...c.oracle },
    })),
  );
  return cases.map((c, k) => {
    const { plan, error } = planned[k];
    const r = results[k];
    /** @type {string[]} */
    const diffs = [];
    const refusal = () =>
      r.log
        .split('\n')
        .filter((l) => /failed to quantize|ERROR|error/.test(l))
        .join(' / ');
    if (c.fails) {
      if (r.ok) diffs.push(`the oracle quantized it; expected a refusal (${c.fails})`);
      if (!error) diffs.push(`planFor planned it; expected ${c.fails}`);
      else if (error.code !== c.fails) diffs.push(`planFor: ${error.code} ${error.message}; expected ${c.fails}`);
      if (!r.ok && refusalCode(r.log) !== c.fails)
        diffs.push(`the oracle refused with ${refusalCode(r.log)} (${refusal()})`);
      return { label: c.label, diffs, refused: c.fails };
    }
    if (!r.ok && error && c.mayFail) {
      // Both refused: for the same reason?
      const why = refusalCode(r.log);
      if (why !== error.code)
        diffs.push(`both refused, the oracle with ${why} (${refusal()}), planFor with ${error.code} ${error.message}`);
      return { label: c.label, diffs, refused: why };
    }
    if (!r.ok) diffs.push(`the oracle refused: ${refusal()}`);
    if (error) diffs.push(`planFor threw ${error.code ?? ''} ${error.message}`);
    if (!r.ok || !plan) return { label: c.label, diffs, refused: null };
    if (r.out.length !== plan.shards.length)
      diffs.push(`${r.out.length} output files, the plan has ${plan.shards.length} shards`);
    r.out.forEach((bytes, i) => {
      const s = plan.shards[i];
      if (!s) return;
      const g = parseOracleOutput(bytes);
      const a = g.kv.map(kvLine),
        b = s.kv.map(kvLine);
      if (a.join('\n') !== b.join('\n'))
        diffs.push(`shard ${i} kv:\n    oracle ${a.join('\n           ')}\n    plan   ${b.join('\n           ')}`);
      const ts = s.tensorIndexes.map((j) => plan.tensors[j]);
      if (g.tensors.length !== ts.length) diffs.push(`shard ${i}: ${g.tensors.length} tensors, the plan ${ts.length}`);
      g.tensors.forEach((t, j) => {
        const p = ts[j];
        const x = `${t.name} ${typeInfo(t.type).name} [${t.dims}] @${t.offset}`;
        const y = p ? `${p.name} ${typeInfo(p.to).name} [${p.dims}] @${p.offset}` : 'none';
        if (x !== y)
          diffs.push(
            `shard ${i} tensor ${j}: oracle ${x}, plan ${y}${p ? ` (${p.why}${p.fallback ? `; ${p.fallback}` : ''})` : ''}`,
          );
      });
      if (g.alignment !== plan.alignment)
        diffs.push(`shard ${i}: alignment ${g.alignment}, the plan ${plan.alignment}`);
      if (g.dataOffset !== s.headerBytes)
        diffs.push(`shard ${i}: data at ${g.dataOffset}, the plan's header is ${s.headerBytes}`);
      // The header's bytes: the plan's KVs and tensors through js/gguf-write.js give llama's
      // (but where the input's general.alignment is not 32: the writer honours it, llama not).
      if (!s.kv.some((e) => e.key === 'general.alignment' && e.value !== 32)) {
        const { header } = writeGGUFHeader({
          kv: s.kv,
          tensors: ts.map((t) => ({ name: t.name, type: t.to, dims: t.dims, byteLength: t.bytesOut })),
        });
        const at = firstDiff(header, bytes.subarray(0, header.length));
        if (at >= 0 || header.length !== g.dataOffset)
          diffs.push(`shard ${i}: the header's bytes differ from byte ${at}`);
      }
      if (bytes.length !== s.headerBytes + s.dataBytes)
        diffs.push(`shard ${i}: ${bytes.length} bytes, the plan ${s.headerBytes + s.dataBytes}`);
    });
    return {
      label: c.label,
      refused: null,
      diffs: diffs.length > 12 ? [...diffs.slice(0, 12), `... ${diffs.length - 12} more`] : diffs,
    };
  });
}

/**
 * Parses a file the oracle wrote. llama-quantize copies the input's general.alignment but aligns
 * the data to 32 all the same: such a file says one alignment and has another, and parseGGUF
 * (rightly) refuses it. Then the alignment's value is read, set to 32 in a copy and the copy
 * parsed; the KV list returned has the value the file says.
 * @param {Uint8Array} bytes
 */
export function parseOracleOutput(bytes) {
  try {
    return parseGGUF(bytes);
  } catch (e) {
    const key = new TextEncoder().encode('general.alignment');
    const at = indexOf(bytes, key);
    if (at < 0) throw e;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const v = at + key.length + 4; // after the key and its UINT32 type tag
    const said = dv.getUint32(v, true);
    const copy = bytes.slice();
    new DataView(copy.buffer).setUint32(v, 32, true);
    const g = parseGGUF(copy);
    return { ...g, kv: g.kv.map((x) => (x.key === 'general.alignment' ? { ...x, value: said } : x)) };
  }
}

/** The first index where two byte arrays differ, or -1. @param {Uint8Array} a @param {Uint8Array} b */
function firstDiff(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** @param {Uint8Array} a @param {Uint8Array} b */
function indexOf(a, b) {
  outer: for (let i = 0; i + b.length <= a.length; i++) {
    for (let j = 0; j < b.length; j++) if (a[i + j] !== b[j]) continue outer;
    return i;
  }
  return -1;
}

/** llama.h's llama_ftype values, written down from llama.h (independently of js/model/ftypes.js). */
export const LLAMA_FTYPE = Object.freeze({
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q8_0: 7,
  Q5_0: 8,
  Q5_1: 9,
  Q2_K: 10,
  Q3_K_S: 11,
  Q3_K_M: 12,
  Q3_K_L: 13,
  Q4_K_S: 14,
  Q4_K_M: 15,
  Q5_K_S: 16,
  Q5_K_M: 17,
  Q6_K: 18,
  IQ2_XXS: 19,
  IQ2_XS: 20,
  Q2_K_S: 21,
  IQ3_XS: 22,
  IQ3_XXS: 23,
  IQ1_S: 24,
  IQ4_NL: 25,
  IQ3_S: 26,
  IQ3_M: 27,
  IQ2_S: 28,
  IQ2_M: 29,
  IQ4_XS: 30,
  IQ1_M: 31,
  BF16: 32,
  TQ1_0: 36,
  TQ2_0: 37,
  MXFP4_MOE: 38,
  Q1_0: 40,
  Q2_0: 41,
});

/** The llama_ftype an option names (an ftype name in any case, or a number); 1024 for other names. @param {unknown} f */
function ftypeIdOf(f) {
  if (typeof f === 'number') return f;
  const up = String(f).toUpperCase();
  return /** @type {Record<string, number>} */ (LLAMA_FTYPE)[up] ?? 1024;
}
