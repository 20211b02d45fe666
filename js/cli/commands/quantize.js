// blockquant quantize IN OUT --type FTYPE [llama-quantize's flags]: a model quantized as
// llama-quantize does it (the plan: js/model/recipe.js's planFor; the writing: quantizeModel),
// with a progress display and a closing summary; --dry-run prints the plan without writing.
import { stat } from 'node:fs/promises';
import { readImatrix, outputPaths } from '../../node.js';
import { about, tag, Usage } from '../errors.js';
import { openInput } from '../io.js';
import { planFor, FTYPES, PlanError } from '../../model/recipe.js';
import { OPTIONS, planOptions, threadCount } from './quantize-options.js';
import { flags, printPlan, printSummary, progressReporter } from './quantize-report.js';
import { writeModel } from './quantize-write.js';

/** @typedef {import('../io.js').Out} Out */
/** @typedef {import('../../model/recipe.js').PlanOptions} PlanOptions */
/** @typedef {import('../../model/recipe.js').QuantizePlan} QuantizePlan */

/** @type {import('../io.js').Command['run']} */
async function quantize(pos, opt, print, err) {
  const [inPath, outPath] = pos;
  const dryRun = opt['dry-run'] === true;
  if (outPath === undefined && !dryRun)
    throw new Usage('quantize takes IN and OUT (OUT may be left out with --dry-run)', 'quantize');
  const options = planOptions(opt);
  const threads = threadCount(opt);
  const imPath = /** @type {string | undefined} */ (opt.imatrix);
  const started = performance.now();
  const { f, bytes: inBytes } = await openInput(inPath, { split: true });
  try {
    if (imPath !== undefined) {
      const st = await about(imPath, () => stat(imPath));
      if (!st.isFile()) throw tag(new Error(st.isDirectory() ? 'is a directory' : 'is not a regular file'), imPath);
      options.imatrix = await about(imPath, () => readImatrix(imPath));
      options.imatrixFile = imPath;
      checkImatrixNames(/** @type {any} */ (options.imatrix), f.tensors, imPath, inPath, err);
    }
    const plan = explained(() => planFor(f, options), inPath, imPath);
    for (const w of warnings(plan.warnings)) err.write(`blockquant: warning: ${w}\n`);
    const outs = (/** @type {string} */ out) =>
      outputPaths(out, plan.shards.length, options.keepSplit === true).join(', ');
    if (dryRun) {
      printPlan(plan, print);
      printSummary(plan, { out: outPath === undefined ? null : outs(outPath), inBytes, seconds: null }, print);
      return 0;
    }
    const out = /** @type {string} */ (outPath);
    const progress = progressReporter(err, plan, opt.quiet === true);
    let ok = false;
    try {
      await writeModel(f, out, {
        options,
        threads,
        force: opt.force === true,
        onProgress: progress.update,
        explain: (/** @type {unknown} */ e) => explainError(e, inPath, imPath),
      });
      ok = true;
    } finally {
      progress.end(ok);
    }
    printSummary(plan, { out: outs(out), inBytes, seconds: (performance.now() - started) / 1000 }, print);
    return 0;
  } finally {
    await f.close();
  }
}

/**
 * Runs `step` (planFor), turning its PlanError into what the CLI reports.
 * @template T
 * @param {() => T} step @param {string} inPath @param {string | undefined} imPath
 * @returns {T}
 */
function explained(step, inPath, imPath) {
  try {
    return step();
  } catch (e) {
    throw explainError(e, inPath, imPath);
  }
}

/**
 * What the CLI reports for a PlanError (other errors are returned as they are): an unknown ftype
 * or a bad option value is bad usage (exit 2); the rest fail (exit 1) naming the file they are
 * about (the imatrix for its own problems, else IN) and saying what to do.
 * @param {unknown} e @param {string} inPath @param {string | undefined} imPath
 * @returns {unknown}
 */
export function explainError(e, inPath, imPath) {
  if (!(e instanceof PlanError)) return e;
  const m = flags(e.message);
  switch (e.code) {
    case 'UNKNOWN_FTYPE':
    case 'BAD_OPTION':
      return new Usage(m, 'quantize');
    case 'NEEDS_IMATRIX':
      return imPath === undefined
        ? tag(new Error(`${m}; give one with --imatrix FILE (llama-imatrix's output, GGUF or .dat)`), inPath)
        : tag(new Error(`${m}: the importance matrix has no entry for it`), imPath);
    case 'IMATRIX_MISMATCH':
      return tag(new Error(`${m}: the importance matrix was not made for this model`), /** @type {string} */ (imPath));
    case 'IMATRIX_NOT_FINITE':
      return tag(new Error(m), /** @type {string} */ (imPath));
    case 'REQUANTIZE':
      return tag(
        new Error(`${m.replace(/: --allow-requantize$/, '')}; --allow-requantize converts it (at a loss of quality)`),
        inPath,
      );
    default:
      return tag(new Error(m), inPath);
  }
}

/**
 * The imatrix entries that name no tensor of the model: an error when none does (the importance
 * matrix of another model), a warning naming them when some do not.
 * @param {import('../../model/imatrix.js').Imatrix} im
 * @param {{ name: string }[]} tensors
 * @param {string} imPath @param {string} inPath @param {Out} err
 */
function checkImatrixNames(im, tensors, imPath, inPath, err) {
  const names = new Set(tensors.map((t) => t.name));
  const keys = [...im.entries.keys()];
  const stray = keys.filter((k) => !names.has(k));
  if (stray.length === 0) return;
  const some = (/** @type {string[]} */ l) =>
    l
      .slice(0, 5)
      .map((k) => JSON.stringify(k))
      .join(', ') + (l.length > 5 ? `, ... (${l.length} in all)` : '');
  if (stray.length === keys.length)
    throw tag(
      new Error(
        `none of its ${keys.length} entries names a tensor of ${inPath} (${some(stray)}): it is for another model`,
      ),
      imPath,
    );
  err.write(
    `blockquant: warning: ${imPath}: ${stray.length} of ${keys.length} entries name no tensor of ${inPath}: ${some(stray)}\n`,
  );
}

/**
 * The plan's warnings for people: the tensors without importance data in one line.
 * @param {string[]} list
 */
function warnings(list) {
  const pre = 'no importance data for ';
  const none = list.filter((w) => w.startsWith(pre)).map((w) => w.slice(pre.length));
  const rest = list.filter((w) => !w.startsWith(pre));
  if (none.length === 0) return rest;
  const named = none.slice(0, 5).join(', ') + (none.length > 5 ? `, ... (${none.length} in all)` : '');
  return [
    `the importance matrix has no entry for ${none.length} tensor${none.length > 1 ? 's' : ''}: ${named}`,
    ...rest,
  ];
}

/** The ftype names for the help, wrapped under a 17-column indent. */
function ftypeNames() {
  const lines = [''];
  for (const n of Object.keys(FTYPES)) {
    const item = `${n},`;
    if (lines[lines.length - 1] && 17 + lines[lines.length - 1].length + 1 + item.length > 100) lines.push('');
    lines[lines.length - 1] += (lines[lines.length - 1] ? ' ' : '') + item;
  }
  return lines.join(`\n${' '.repeat(17)}`).replace(/,$/, '');
}

/** The ftypes that need an importance matrix. */
const NEED_IMATRIX = Object.values(FTYPES)
  .filter((f) => f.requiresImatrix)
  .map((f) => f.name)
  .join(', ');

/** @type {import('../io.js').Command} */
export const command = {
  usage: 'quantize IN OUT --type FTYPE [--imatrix FILE] [--threads N] [llama-quantize flags]',
  about: 'quantize a model as llama-quantize does (its recipe, flags and output file), streaming',
  positionals: ['IN', 'OUT'],
  optional: 1,
  options: OPTIONS,
  details: `  --type FTYPE   what to make, as llama-quantize names it (any case):
                 ${ftypeNames()}
                 (Q3_K, Q4_K, Q5_K: the _M mixes; or a llama_ftype number); or a ggml type
                 as ggml spells it (q4_0, q4_K, iq4_xs, ...): every quantizable tensor at
                 that type, as with --pure
  --imatrix FILE llama-imatrix's importance matrix (GGUF or the legacy .dat); these need one:
                 ${NEED_IMATRIX}
  --include-weights NAME
                 use the imatrix only for tensors whose names contain NAME (repeatable)
  --exclude-weights NAME
                 do not use it for tensors whose names contain NAME (repeatable; not with
                 --include-weights)
  --output-tensor-type T
                 the ggml type of output.weight
  --token-embedding-type T
                 the ggml type of token_embd.weight
  --tensor-type REGEX=T
                 tensors whose names match REGEX (lowercased) become T; repeatable, the
                 first match wins
  --pure         every quantizable tensor at the ftype's default type (no mixture)
  --leave-output-tensor
                 output.weight is copied as it is
  --allow-requantize
                 quantized input tensors may be converted (at a loss of quality)
  --keep-split   one output file per input shard
  --override-kv KEY=TYPE:VALUE
                 set a metadata key (TYPE int, float, bool or str); repeatable
  --prune-layers L0,L1,...
                 leave those layers out (the rest renumbered)
  --dry-run      print the plan (every tensor's type and size) and the summary; write
                 nothing (OUT may be left out)
  --threads N    quantize on N threads (the bytes do not depend on N)
  --quiet        no progress display
  --force        replace OUT if it exists (never when it is IN, by any name)

The output equals llama-quantize's (llama_model_quantize) byte for byte: the tensor types its
recipe picks, its fallbacks for rows that are not whole blocks, its metadata and layout.
Progress goes to stderr (a bar on a terminal, a line per tensor otherwise); the summary (tensors
and bytes per type, sizes, bits per weight, time) to stdout.
OUT is written under a temporary name beside it (.OUT.<random>.tmp), flushed, then renamed into
place; on an error or a signal the temporary file is removed and OUT is left as it was.
`,
  run: quantize,
};
