// Writing a planned model to OUT: quantizeModel (js/model/quantize.js) with a path sink
// (js/gguf/sink-file.js: a temporary file beside OUT moved into place when complete, never over
// IN, an existing file only with --force), SIGINT/SIGTERM/SIGHUP turned into its AbortSignal; its
// refusals and interruptions reported as the CLI reports them (exit 2, 128 + the signal).
import { quantizeModel, trapSignals, OutputError, Interrupted as Stopped } from '../../node.js';
import { Interrupted, Refused, tag } from '../errors.js';

/** @typedef {import('./quantize-report.js').Progress} Progress */

/**
 * Writes the model `f` (an open input) to `out` as `options` plan it.
 * @param {any} f
 * @param {string} out
 * @param {{ options: import('../../model/recipe.js').PlanOptions, threads: number, force: boolean,
 *   onProgress: (p: Progress) => void, explain: (e: unknown) => unknown }} o explain: what the CLI
 *   reports for a PlanError
 * @returns {Promise<void>}
 * @throws {Refused} OUT is IN, exists without --force, or is not a regular file
 * @throws {Interrupted} a signal stopped it (nothing is left under OUT or a temporary name)
 */
export async function writeModel(f, out, o) {
  const trap = trapSignals();
  try {
    await quantizeModel(f, out, {
      ...o.options,
      threads: o.threads,
      force: o.force,
      signal: trap.signal,
      onProgress: o.onProgress,
    });
    // A signal that came while the output was being placed: new outputs are removed (nothing is
    // left under OUT after a signal); one that replaced a file (--force) cannot be undone.
    if (trap.got) {
      if (!o.force) {
        await trap.discardPlaced();
        throw tag(new Interrupted(trap.got.signal, 'nothing was written'), out);
      }
      throw tag(new Interrupted(trap.got.signal, 'the output was written whole'), out);
    }
  } catch (e) {
    if (e instanceof Interrupted) throw e;
    if (e instanceof OutputError) {
      const why = e.message.slice(e.file.length + 2);
      throw new Refused(e.file, e.code === 'EXISTS' ? 'exists; --force replaces it' : why);
    }
    if (e instanceof Stopped) throw tag(new Interrupted(e.signal, 'nothing was written'), out);
    throw o.explain(e);
  } finally {
    trap.release();
  }
}
