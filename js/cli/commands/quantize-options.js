// quantize's flags, spelled as llama-quantize spells them, turned into planFor's PlanOptions
// (js/model/recipe.js). Only the spelling is checked here (a missing '=', a layer id that is not
// a number, a thread count); what the values mean (type names, patterns, KEY=TYPE:VALUE) is
// planFor's to judge, and its BAD_OPTION and UNKNOWN_FTYPE errors are usage errors too
// (quantize.js).
import { Usage } from '../errors.js';

/** @typedef {import('../io.js').Values} Values */
/** @typedef {import('../../model/recipe.js').PlanOptions} PlanOptions */

/** The options of the quantize command, for parseArgs. */
export const OPTIONS = /** @type {const} */ ({
  type: { type: 'string' },
  imatrix: { type: 'string' },
  'include-weights': { type: 'string', multiple: true },
  'exclude-weights': { type: 'string', multiple: true },
  'output-tensor-type': { type: 'string' },
  'token-embedding-type': { type: 'string' },
  'tensor-type': { type: 'string', multiple: true },
  pure: { type: 'boolean' },
  'leave-output-tensor': { type: 'boolean' },
  'allow-requantize': { type: 'boolean' },
  'keep-split': { type: 'boolean' },
  'override-kv': { type: 'string', multiple: true },
  'prune-layers': { type: 'string' },
  'dry-run': { type: 'boolean' },
  threads: { type: 'string' },
  quiet: { type: 'boolean' },
  force: { type: 'boolean' },
});

/** @param {Values} opt @param {string} name */
const list = (opt, name) => /** @type {string[]} */ (opt[name] ?? []);
/** @param {Values} opt @param {string} name */
const str = (opt, name) => /** @type {string | undefined} */ (opt[name]);

/**
 * PlanOptions from the command line (the imatrix itself is read later and added by the caller).
 * @param {Values} opt
 * @returns {PlanOptions}
 * @throws {Usage} for a flag spelled wrong
 */
export function planOptions(opt) {
  const ftype = str(opt, 'type');
  if (ftype === undefined)
    throw new Usage('quantize needs --type (an ftype such as Q4_K_M, or a ggml type)', 'quantize');
  /** @type {PlanOptions} */
  const o = { ftype: /^\d+$/.test(ftype) ? Number(ftype) : ftype };
  const inc = list(opt, 'include-weights');
  const exc = list(opt, 'exclude-weights');
  if (inc.length && exc.length)
    throw new Usage('--include-weights and --exclude-weights cannot be used together', 'quantize');
  if (inc.length) o.includeWeights = inc;
  if (exc.length) o.excludeWeights = exc;
  const out = str(opt, 'output-tensor-type');
  if (out !== undefined) o.outputTensorType = out;
  const emb = str(opt, 'token-embedding-type');
  if (emb !== undefined) o.tokenEmbeddingType = emb;
  const tt = list(opt, 'tensor-type');
  if (tt.length) o.tensorTypes = tt.map(tensorType);
  if (opt.pure === true) o.pure = true;
  if (opt['leave-output-tensor'] === true) o.leaveOutputTensor = true;
  if (opt['allow-requantize'] === true) o.allowRequantize = true;
  if (opt['keep-split'] === true) o.keepSplit = true;
  const kv = list(opt, 'override-kv');
  if (kv.length) o.overrideKv = kv;
  const prune = str(opt, 'prune-layers');
  if (prune !== undefined) o.pruneLayers = pruneLayers(prune);
  if (opt['dry-run'] === true) o.dryRun = true;
  return o;
}

/**
 * --tensor-type REGEX=TYPE: split at the first '=', as llama-quantize does (the pattern is
 * lowercased by planFor).
 * @param {string} s
 * @returns {[string, string]}
 */
function tensorType(s) {
  const eq = s.indexOf('=');
  if (eq < 0) throw new Usage(`--tensor-type ${JSON.stringify(s)}: expected REGEX=TYPE`, 'quantize');
  if (eq === 0) throw new Usage(`--tensor-type ${JSON.stringify(s)}: the tensor name pattern is missing`, 'quantize');
  if (eq === s.length - 1) throw new Usage(`--tensor-type ${JSON.stringify(s)}: the type is missing`, 'quantize');
  return [s.slice(0, eq), s.slice(eq + 1)];
}

/**
 * --prune-layers L0,L1,...: layer numbers (non-negative decimal integers).
 * @param {string} s
 */
function pruneLayers(s) {
  return s.split(',').map((id) => {
    if (!/^\d+$/.test(id.trim()) || !Number.isSafeInteger(Number(id)))
      throw new Usage(`--prune-layers: invalid layer id ${JSON.stringify(id)}`, 'quantize');
    return Number(id);
  });
}

/**
 * --threads N: a whole number from 1 to 256.
 * @param {Values} opt
 * @returns {number} 1 when not given
 */
export function threadCount(opt) {
  const t = str(opt, 'threads');
  if (t === undefined) return 1;
  const n = Number(t);
  if (!/^\d+$/.test(t) || n < 1 || n > 256)
    throw new Usage(`--threads ${t}: expected a whole number from 1 to 256`, 'quantize');
  return n;
}
