// llama-quantize's plan for a whole model (llama.cpp's llama_model_quantize with the options of its
// llama-quantize tool), computed from the header alone: each tensor's type, in output order, with
// its sizes, offset and importance weights, and the output header's KVs, shards and size. The
// rules themselves are in rules.js, the loader's part (hparams, order, pruning) in loader.js, the
// header in header.js, the imatrix's preparation in plan-imatrix.js, the ftype names in ftypes.js.
// Checked against llama.cpp 0.4.0's llama_model_quantize (tests/recipe-oracle, recipe-flags) and
// llama.cpp's recipe snapshots (tests/recipe-snapshots). What llama-quantize would refuse is a
// PlanError (errors.js); llama.cpp's loader's refusals of unknown architectures are not repeated.

import { GGMLType as T, typeInfo } from '../types.js';
import { VT } from '../gguf-format.js';
import { PlanError } from './errors.js';
import { FTYPES, resolveFtype, typeOption } from './ftypes.js';
import {
  roleOf,
  isAttnVLike,
  isTokenEmbd,
  allowsQuantization,
  mixType,
  fallback,
  requiresImatrix,
  ROLE,
  GGML_NEEDS_WEIGHTS,
} from './rules.js';
import { ALIGNMENT, outputKV, parseOverride, setKV, splitKV, headerSize } from './header.js';
import { imatrixOf, imatrixKV } from './plan-imatrix.js';
import { hparams, order } from './loader.js';

export { FTYPES, PlanError };

/** @typedef {import('../gguf-format.js').KV} KV */
/** @typedef {import('../gguf-format.js').TensorInfo} TensorInfo */
/** @typedef {import('./header.js').Override} Override */
/** @typedef {{ kv: KV[], metadata: Map<string, unknown>, tensors: TensorInfo[], shards?: number }} ModelHeader */

/**
 * @typedef {object} PlanOptions
 * @property {string | number} ftype an ftype name (any case), a llama_ftype number, or a ggml type
 *   name as ggml spells it ('q4_K': every quantizable tensor at that type); see resolveFtype
 * @property {import('./imatrix.js').Imatrix | Map<string, Float32Array>} [imatrix] importance data
 * @property {string} [imatrixFile] the imatrix file's name as the user gave it, for quantize.imatrix.file
 * @property {string[]} [includeWeights] use the imatrix only for tensors whose names contain one of these
 * @property {string[]} [excludeWeights] do not use it for tensors whose names contain one of these
 * @property {number | string} [outputTensorType] ggml type of output.weight
 * @property {number | string} [tokenEmbeddingType] ggml type of token_embd.weight
 * @property {[string | RegExp, number | string][]} [tensorTypes] --tensor-type REGEX=TYPE, in order
 *   (the first pattern found in a name wins; a string pattern is lowercased as llama-quantize does)
 * @property {boolean} [pure] every quantizable tensor at the ftype's default type
 * @property {boolean} [leaveOutputTensor] output.weight stays as it is
 * @property {boolean} [allowRequantize] quantized tensors may be converted
 * @property {boolean} [keepSplit] one output shard per input shard
 * @property {(string | Override | KV)[]} [overrideKv] KEY=TYPE:VALUE, parsed or as KVs
 * @property {number[]} [pruneLayers] layers to leave out (the rest renumbered)
 * @property {boolean} [dryRun] llama-quantize --dry-run: a missing imatrix is a warning, and so are
 *   the checks its dry run skips (imatrix sizes, requantizing, shapes); for previews
 */

/**
 * One tensor of the plan, in output order. dims: as written (ggml_n_dims: trailing 1s dropped);
 * from/to: ggml type ids; fallback: why the shape fallback changed the type; why: what chose `to`;
 * bytesIn/bytesOut: data bytes (unpadded); offset: in its shard's data section; imatrix: one
 * Float32Array of ne0 weights per matrix (ne2 of them), or null when the tensor is not converted
 * or has no importance data; source: the input tensor (its original name, shard and offset).
 * @typedef {{ name: string, dims: number[], from: number, to: number, fallback?: string, why: string,
 *   bytesIn: number, bytesOut: number, offset: number, shard: number, imatrix: Float32Array[] | null,
 *   source: TensorInfo }} PlanTensor
 *
 * @typedef {{ kv: KV[], tensorIndexes: number[], headerBytes: number, dataBytes: number }} PlanShard
 *
 * @typedef {{ ftype: import('./ftypes.js').FType | null, type: number | null, kv: KV[], alignment: number,
 *   tensors: PlanTensor[], shards: PlanShard[], bytesIn: number, bytesOut: number, bitsPerWeight: number,
 *   headerBytes: number, totalBytes: number, warnings: string[] }} QuantizePlan
 */

/**
 * The plan llama-quantize follows for a model.
 * @param {ModelHeader | ModelHeader[]} file a parseGGUF/openGGUF result (openGGUF's of a split
 *   model carries each tensor's shard), or the parseGGUF results of a split model's shards in order
 * @param {PlanOptions} options
 * @returns {QuantizePlan}
 * @throws {PlanError} see errors.js
 */
export function planFor(file, options) {
  if (!options || typeof options !== 'object') throw new PlanError('BAD_OPTION', 'planFor: options must be an object');
  const o = options;
  const target = resolveFtype(o.ftype);
  const f = target.ftype?.name ?? null;
  const defaultType = target.type ?? /** @type {import('./ftypes.js').FType} */ (target.ftype).defaultType;
  const pure = o.pure === true || target.type !== null;
  const outputType = o.outputTensorType === undefined ? undefined : writable(o.outputTensorType, 'outputTensorType');
  const tokenEmbdType =
    o.tokenEmbeddingType === undefined ? undefined : writable(o.tokenEmbeddingType, 'tokenEmbeddingType');
  const patterns = (o.tensorTypes ?? []).map(([p, t]) => ({
    re: pattern(p),
    type: writable(t, `tensorTypes ${String(p)}`),
  }));
  const overrides = [...(o.overrideKv ?? []).map(toOverride)];
  const { metadata, kv: inputKv, tensors: inTensors } = inputOf(file);
  /** @type {string[]} */
  const warnings = [];

  // The imatrix as the tool hands it over: include/exclude applied, empty means none.
  const im = imatrixOf(o);
  overrides.push(...imatrixKV(o, im));

  const hp = hparams(metadata, inputKv, overrides);
  const prune = [...new Set(o.pruneLayers ?? [])].sort((a, b) => a - b);
  for (const n of prune)
    if (!Number.isSafeInteger(n) || n < 0) throw new PlanError('BAD_OPTION', `pruneLayers: invalid layer id ${n}`);
  const { list, blockCount } = order(inTensors, prune, o.keepSplit === true);
  const names = list.map((t) => t.name);
  /** @type {import('./rules.js').RuleState} */
  const state = {
    ...hp,
    hasImatrix: im !== null,
    tied: !names.includes('output.weight'),
    nAttnV: names.filter((n) => isAttnVLike(roleOf(n))).length,
    iAttnV: 0,
    iFfnDown: 0,
    iFfnGate: 0,
    iFfnUp: 0,
  };

  // The type of every tensor (llama-quantize's preliminary pass), then its data (the main pass).
  let nFallback = 0;
  const planned = list.map(({ t, name }) => {
    const ne = [0, 1, 2, 3].map((d) => t.dims[d] ?? 1);
    const nDims = Math.max(1, ...ne.map((n, d) => (n > 1 ? d + 1 : 0)));
    const role = roleOf(name);
    let to = t.type;
    let why = 'not quantized';
    let fb;
    if (allowsQuantization(name, nDims, o.leaveOutputTensor === true)) {
      if (tokenEmbdType !== undefined && role === ROLE.TOKEN_EMBD) [to, why] = [tokenEmbdType, 'tokenEmbeddingType'];
      else if (outputType !== undefined && role === ROLE.OUTPUT) [to, why] = [outputType, 'outputTensorType'];
      else {
        [to, why] = [defaultType, target.type !== null ? 'type' : 'ftype default'];
        if (typeInfo(defaultType).blockSize > 1) {
          const hit = patterns.find((p) => p.re.test(name));
          if (hit) [to, why] = [hit.type, `tensorTypes ${hit.re.source}`];
          else if (!pure) {
            const r = mixType(state, /** @type {string} */ (f), { name, role, ne }, to, { outputType, tokenEmbdType });
            if (r !== to) [to, why] = [r, `${f} rule for ${role}`];
          }
          const r = fallback(name, ne[0], to);
          if (r.fallback) [to, fb, nFallback] = [r.type, r.fallback, nFallback + 1];
        }
      }
      if (requiresImatrix(name, to, f) && im === null) {
        const msg = `this quantization requires an importance matrix: ${name} is to be ${typeInfo(to).name}`;
        if (o.dryRun !== true) throw new PlanError('NEEDS_IMATRIX', msg, name);
        if (!warnings.some((w) => w.startsWith('this quantization'))) warnings.push(msg);
      }
    }
    return { t, name, ne, nDims, to, why, fb };
  });
  if (nFallback > 0) warnings.push(`${nFallback} of ${list.length} tensor(s) required fallback quantization`);

  /** @type {PlanTensor[]} */
  const tensors = planned.map(({ t, name, ne, nDims, to, why, fb }) => {
    const bytesIn = /** @type {number} */ (t.byteLength);
    const convert = to !== t.type;
    let imatrix = null;
    let bytesOut = bytesIn;
    if (convert) {
      // llama-quantize's main pass: these checks, which --dry-run skips (here: warnings).
      try {
        imatrix = im ? weightsFor(im, t.name, name, ne, warnings) : null;
        if (!imatrix && im !== null && requiresImatrix(name, to, f))
          throw new PlanError(
            'NEEDS_IMATRIX',
            `missing importance matrix for tensor ${name} in a very low-bit quantization`,
            name,
          );
        if (!imatrix && GGML_NEEDS_WEIGHTS.has(to))
          throw new PlanError(
            'NEEDS_IMATRIX',
            `${name}: ggml quantizes ${typeInfo(to).name} only with importance weights (llama-quantize aborts)`,
            name,
          );
        checkConvertible(t, name, o.allowRequantize === true);
        // A type given for output or token_embd has no fallback: llama writes blocks that fail
        // its validation.
        if (ne[0] % typeInfo(to).blockSize !== 0)
          throw new PlanError('BAD_SHAPE', `${name}: rows of ${ne[0]} are not whole ${typeInfo(to).name} blocks`, name);
        if (!quantizable(to))
          throw new PlanError('CANNOT_CONVERT', `${name}: ggml cannot quantize to ${typeInfo(to).name}`, name);
      } catch (e) {
        if (o.dryRun !== true || !(e instanceof PlanError)) throw e;
        warnings.push(e.message);
      }
      const info = typeInfo(to);
      bytesOut = Math.floor(ne[0] / info.blockSize) * info.typeSize * ne[1] * ne[2] * ne[3];
    }
    const out = {
      name,
      dims: ne.slice(0, nDims),
      from: t.type,
      to,
      why,
      bytesIn,
      bytesOut,
      offset: 0,
      shard: 0,
      imatrix,
      source: t,
    };
    return fb ? { ...out, fallback: fb } : out;
  });

  const kv0 = outputKV(inputKv, target.ftype?.id ?? null, overrides);
  if (prune.length) setKV(kv0, { key: `${hp.arch}.block_count`, type: VT.UINT32, value: blockCount });
  const shards = layout(tensors, kv0, o.keepSplit === true);
  const alignment = ALIGNMENT;
  if (metadata.has('general.alignment') && Number(metadata.get('general.alignment')) !== ALIGNMENT)
    warnings.push(
      `the input's general.alignment ${metadata.get('general.alignment')} is copied, but llama-quantize aligns the data to ${ALIGNMENT}`,
    );
  const bytesIn = tensors.reduce((s, t) => s + t.bytesIn, 0);
  const bytesOut = tensors.reduce((s, t) => s + t.bytesOut, 0);
  const nElements = inTensors.reduce((s, t) => s + t.nElements, 0);
  return {
    ftype: target.ftype,
    type: target.type,
    kv: shards[0].kv,
    alignment,
    tensors,
    shards,
    bytesIn,
    bytesOut,
    bitsPerWeight: nElements ? (bytesOut * 8) / nElements : 0,
    headerBytes: shards[0].headerBytes,
    totalBytes: shards.reduce((s, x) => s + x.headerBytes + x.dataBytes, 0),
    warnings,
  };
}

/**
 * The tensors of a model and its first shard's KVs.
 * @param {ModelHeader | ModelHeader[]} file
 * @returns {{ metadata: Map<string, unknown>, kv: KV[], tensors: TensorInfo[] }}
 */
function inputOf(file) {
  const files = Array.isArray(file) ? file : [file];
  if (files.length === 0 || !files.every((x) => x && Array.isArray(x.tensors) && Array.isArray(x.kv)))
    throw new PlanError('BAD_OPTION', 'planFor: file must be a parseGGUF/openGGUF result or an array of them');
  const tensors = files.flatMap((g, i) => g.tensors.map((t) => (Array.isArray(file) ? { ...t, shard: i } : t)));
  for (const t of tensors) {
    if (t.unreadable || t.byteLength === null)
      throw new PlanError(
        'UNKNOWN_TYPE',
        `${t.name}: ${t.unreadable?.message ?? `ggml type ${t.type} is unknown`}`,
        t.name,
      );
  }
  return { metadata: files[0].metadata, kv: files[0].kv, tensors };
}

/**
 * Shards, offsets and header sizes.
 * @param {PlanTensor[]} tensors @param {KV[]} kv0 @param {boolean} keepSplit
 * @returns {PlanShard[]}
 */
function layout(tensors, kv0, keepSplit) {
  const n = keepSplit ? Math.max(1, ...tensors.map((t) => (t.source.shard ?? 0) + 1)) : 1;
  /** @type {PlanShard[]} */
  const shards = Array.from({ length: n }, (_, i) => ({
    kv: i === 0 ? kv0 : [],
    tensorIndexes: [],
    headerBytes: 0,
    dataBytes: 0,
  }));
  tensors.forEach((t, i) => {
    t.shard = keepSplit ? (t.source.shard ?? 0) : 0;
    const s = shards[t.shard];
    s.tensorIndexes.push(i);
    t.offset = s.dataBytes;
    s.dataBytes += Math.ceil(t.bytesOut / ALIGNMENT) * ALIGNMENT;
  });
  shards.forEach((s, i) => {
    if (s.tensorIndexes.length === 0)
      throw new PlanError('BAD_OPTION', `--keep-split: output shard ${i} would hold no tensors`);
    if (n > 1) s.kv.push(...splitKV(i, n, tensors.length));
    s.headerBytes = headerSize(
      s.kv,
      s.tensorIndexes.map((k) => tensors[k]),
    );
  });
  return shards;
}

/**
 * The importance weights of a tensor that is converted: one view per matrix, or null (no entry,
 * or a token_embd entry of the wrong size, which llama-quantize ignores).
 * @param {Map<string, Float32Array>} im @param {string} source the name in the input (imatrix key)
 * @param {string} name the output name @param {number[]} ne @param {string[]} warnings
 */
function weightsFor(im, source, name, ne, warnings) {
  const w = im.get(source);
  if (!w) {
    warnings.push(`no importance data for ${name}`);
    return null;
  }
  if (w.length !== ne[0] * ne[2]) {
    const msg = `imatrix size ${w.length} is different from tensor size ${ne[0] * ne[2]} for ${name}`;
    if (!isTokenEmbd(name)) throw new PlanError('IMATRIX_MISMATCH', msg, name);
    warnings.push(`${msg} (ignored)`);
    return null;
  }
  return Array.from({ length: ne[2] }, (_, j) => w.subarray(j * ne[0], (j + 1) * ne[0]));
}

/**
 * Whether a tensor's data can be converted: F32, F16 and BF16 always; quantized types with
 * allowRequantize.
 * @param {TensorInfo} t @param {string} name @param {boolean} allow
 */
function checkConvertible(t, name, allow) {
  if (t.type === T.F32) return;
  const info = typeInfo(t.type);
  if (info.blockSize > 1) {
    if (!allow)
      throw new PlanError(
        'REQUANTIZE',
        `requantizing from type ${info.name} is disabled (${name}): allowRequantize`,
        name,
      );
    if (!info.dequantize)
      throw new PlanError('CANNOT_CONVERT', `type ${info.name} cannot be dequantized (${name})`, name);
    return;
  }
  if (t.type !== T.F16 && t.type !== T.BF16)
    throw new PlanError('CANNOT_CONVERT', `cannot dequantize/convert tensor type ${info.name} (${name})`, name);
}

/**
 * A --tensor-type pattern. llama-quantize lowercases it and searches each tensor name with
 * std::regex (ECMAScript grammar), as RegExp.prototype.test searches: for ordinary patterns the
 * two agree. They differ where the grammars do: JS has lookbehind, named groups and \u escapes,
 * std::regex has POSIX classes ([[:digit:]]) and matches bytes (a '.' is one UTF-8 byte there, one
 * UTF-16 unit here; tensor names are ASCII in practice). A RegExp is taken as it is.
 * @param {unknown} p
 * @returns {RegExp}
 */
function pattern(p) {
  if (p instanceof RegExp) return p;
  try {
    return new RegExp(String(p).toLowerCase());
  } catch (e) {
    throw new PlanError(
      'BAD_OPTION',
      `tensorTypes: ${JSON.stringify(p)} is not a regular expression: ${/** @type {Error} */ (e).message}`,
    );
  }
}

/**
 * A type option (an id or a name, any case, as llama-quantize's parse_ggml_type): any ggml type;
 * converting a tensor to one ggml cannot quantize to is refused when it comes to that.
 * @param {unknown} t @param {string} what
 */
function writable(t, what) {
  return typeOption(t, what);
}

/** Whether ggml_quantize_chunk writes a type. @param {number} id */
function quantizable(id) {
  const info = typeInfo(id);
  return !(
    id === T.Q8_1 ||
    id === T.Q8_K ||
    (info.blockSize === 1 && !(id === T.F32 || id === T.F16 || id === T.BF16))
  );
}

/**
 * An --override-kv given as KEY=TYPE:VALUE, an Override, or a KV (integer types: int; float types:
 * float; BOOL; STRING).
 * @param {string | Override | KV} x
 * @returns {Override}
 */
function toOverride(x) {
  if (typeof x === 'string') return parseOverride(x);
  if (x && typeof x === 'object' && 'tag' in x) return /** @type {Override} */ (x);
  const e = /** @type {KV} */ (x);
  if (!e || typeof e.key !== 'string') throw new PlanError('BAD_OPTION', 'overrideKv: expected KEY=TYPE:VALUE or a KV');
  if (e.type === VT.STRING) return { key: e.key, tag: 'str', value: String(e.value) };
  if (e.type === VT.BOOL) return { key: e.key, tag: 'bool', value: Boolean(e.value) };
  if (e.type === VT.FLOAT32 || e.type === VT.FLOAT64) return { key: e.key, tag: 'float', value: Number(e.value) };
  if (
    /** @type {number[]} */ ([
      VT.UINT8,
      VT.INT8,
      VT.UINT16,
      VT.INT16,
      VT.UINT32,
      VT.INT32,
      VT.UINT64,
      VT.INT64,
    ]).includes(e.type)
  )
    return { key: e.key, tag: 'int', value: BigInt.asIntN(64, BigInt(/** @type {number | bigint} */ (e.value))) };
  throw new PlanError('BAD_OPTION', `overrideKv ${e.key}: llama-quantize overrides only int, float, bool and str`);
}
