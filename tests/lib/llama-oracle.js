// llama.cpp's own llama_model_quantize as a test oracle: build/oracle/llama-oracle
// (tests/oracle/llama-oracle.c, built by `make oracle`) over the pinned libllama of the
// devDependency @node-llama-cpp/linux-x64 (llama.cpp 0.4.0). Each call quantizes one model in a
// fresh temporary folder and returns the output file(s) and llama.cpp's log. Tests and the
// benchmark use it; the package never does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { libDir } from './ggml.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LLAMA_ORACLE = join(ROOT, 'build/oracle/llama-oracle');

/**
 * The oracle's own imatrix format: per entry u32 name length, the name's bytes, u32 count, count
 * float32 (the weights llama-quantize hands to llama_model_quantize, already divided).
 * @param {Map<string, Float32Array> | [string, Float32Array][]} entries
 * @returns {Uint8Array}
 */
export function oracleImatrix(entries) {
  const enc = new TextEncoder();
  /** @type {Uint8Array[]} */
  const parts = [];
  for (const [name, w] of entries) {
    const nb = enc.encode(name);
    const head = new DataView(new ArrayBuffer(4));
    head.setUint32(0, nb.length, true);
    const count = new DataView(new ArrayBuffer(4));
    count.setUint32(0, w.length, true);
    parts.push(
      new Uint8Array(head.buffer),
      nb,
      new Uint8Array(count.buffer),
      new Uint8Array(w.buffer, w.byteOffset, w.byteLength),
    );
  }
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/**
 * @typedef {object} OracleOptions
 * @property {Map<string, Float32Array> | [string, Float32Array][]} [imatrix]
 * @property {boolean} [pure]
 * @property {boolean} [leaveOutputTensor]
 * @property {boolean} [allowRequantize]
 * @property {boolean} [keepSplit]
 * @property {boolean} [dryRun]
 * @property {number} [outputTensorType] ggml id
 * @property {number} [tokenEmbeddingType] ggml id
 * @property {[string, number][]} [tensorTypes] regex, ggml id
 * @property {string[]} [overrideKv] KEY=TYPE:VALUE
 * @property {number[]} [pruneLayers]
 * @property {number} [nthread]
 */

/**
 * A quantization for llamaQuantizeAll: a model (its bytes, or the shards of a split model, written
 * as in-0000i-of-0000n.gguf), a llama_ftype, the options.
 * @typedef {{ model: Uint8Array | Uint8Array[], ftype: number, options?: OracleOptions }} OracleJob
 * @typedef {{ ok: boolean, out: Uint8Array[], log: string }} OracleResult out: the file, or each
 *   shard with keepSplit (empty when llama_model_quantize failed); log: llama.cpp's for this job
 */

/**
 * Runs llama_model_quantize on each job, all in one oracle process (the IQ grids are built once).
 * @param {OracleJob[]} jobs
 * @returns {OracleResult[]}
 */
export function llamaQuantizeAll(jobs) {
  if (!existsSync(LLAMA_ORACLE)) throw new Error(`${LLAMA_ORACLE} is missing: run make oracle`);
  const dir = mkdtempSync(join(tmpdir(), 'bq-llama-'));
  try {
    const lines = jobs.map((j, k) => {
      const d = join(dir, String(k));
      mkdirSync(d);
      return [...args(d, j.model, j.ftype, j.options ?? {})].join('\t');
    });
    /** @type {OracleResult[]} */
    const results = [];
    // A job that makes ggml abort ends the process: it fails, and the jobs after it run in a new one.
    while (results.length < jobs.length) {
      const from = results.length;
      const r = spawnSync(LLAMA_ORACLE, [libDir(), '-'], {
        input: lines.slice(from).join('\n') + '\n',
        maxBuffer: 1 << 28,
      });
      if (r.error) throw r.error;
      const answers = (r.stdout?.toString() ?? '').split('\n');
      const logs = (r.stderr?.toString() ?? '').split(/^llama-oracle: job \d+\n/m).slice(1);
      for (let k = 0; from + k < jobs.length; k++) {
        const d = join(dir, String(from + k));
        const answered = k < answers.length && /^(ok|error)/.test(answers[k]);
        const ok = answers[k] === 'ok';
        const outs = ok
          ? readdirSync(d)
              .filter((f) => f.startsWith('out'))
              .sort()
          : [];
        results.push({ ok, out: outs.map((f) => new Uint8Array(readFileSync(join(d, f)))), log: logs[k] ?? '' });
        if (!answered) break; // this job ended the process
      }
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs llama_model_quantize on one model.
 * @param {Uint8Array | Uint8Array[]} model
 * @param {number} ftype llama_ftype
 * @param {OracleOptions} [options]
 * @returns {OracleResult}
 */
export function llamaQuantize(model, ftype, options = {}) {
  return llamaQuantizeAll([{ model, ftype, options }])[0];
}

/**
 * The job's files in its folder and its oracle arguments.
 * @param {string} dir @param {Uint8Array | Uint8Array[]} model @param {number} ftype @param {OracleOptions} o
 */
function args(dir, model, ftype, o) {
  const shards = Array.isArray(model) ? model : [model];
  const n = shards.length;
  const name = (/** @type {string} */ base, /** @type {number} */ i) =>
    n > 1 ? `${base}-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf` : `${base}.gguf`;
  shards.forEach((b, i) => writeFileSync(join(dir, name('in', i)), b));
  const a = [join(dir, name('in', 0)), join(dir, 'out.gguf'), String(ftype)];
  if (o.nthread) a.push('--nthread', String(o.nthread));
  if (o.imatrix) {
    writeFileSync(join(dir, 'imatrix.bin'), oracleImatrix(o.imatrix));
    a.push('--imatrix', join(dir, 'imatrix.bin'));
  }
  if (o.pure) a.push('--pure');
  if (o.leaveOutputTensor) a.push('--leave-output-tensor');
  if (o.allowRequantize) a.push('--allow-requantize');
  if (o.keepSplit) a.push('--keep-split');
  if (o.dryRun) a.push('--dry-run');
  if (o.outputTensorType !== undefined) a.push('--output-tensor-type', String(o.outputTensorType));
  if (o.tokenEmbeddingType !== undefined) a.push('--token-embedding-type', String(o.tokenEmbeddingType));
  for (const [re, t] of o.tensorTypes ?? []) a.push('--tensor-type', `${re}=${t}`);
  for (const kv of o.overrideKv ?? []) a.push('--override-kv', kv);
  if (o.pruneLayers) a.push('--prune-layers', o.pruneLayers.join(','));
  for (const x of a)
    if (/[\t\n]/.test(x))
      throw new RangeError(`llama-oracle: an argument holds a tab or newline: ${JSON.stringify(x)}`);
  return a;
}
