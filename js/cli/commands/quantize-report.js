// What quantize prints: the plan (--dry-run), the progress while it writes (a bar on a terminal,
// a line per tensor otherwise, nothing with --quiet), and the closing summary: tensors and bytes
// per type, the size before and after, bits per weight, time.
import { typeInfo } from '../../node.js';

/** @typedef {import('../../model/recipe.js').QuantizePlan} QuantizePlan */
/** @typedef {import('../../model/recipe.js').PlanTensor} PlanTensor */
/** @typedef {import('../io.js').Out} Out */
/**
 * What the writer reports after each step: the tensor being written (index in the plan), output
 * bytes written so far of `total`, and the seconds left (null when not known yet).
 * @typedef {{ tensor: string, index: number, count: number, bytesOut: number, total: number,
 *   etaSeconds: number | null }} Progress
 */

// planFor names its options as the API spells them; what the CLI prints says the flags.
const FLAG_OF = /** @type {const} */ ([
  ['outputTensorType', '--output-tensor-type'],
  ['tokenEmbeddingType', '--token-embedding-type'],
  ['tensorTypes', '--tensor-type'],
  ['pruneLayers', '--prune-layers'],
  ['includeWeights', '--include-weights'],
  ['excludeWeights', '--exclude-weights'],
  ['overrideKv', '--override-kv'],
  ['allowRequantize', '--allow-requantize'],
]);
/** A message of planFor's with the flags' names. @param {string} m */
export const flags = (m) => FLAG_OF.reduce((s, [api, flag]) => s.replaceAll(api, flag), m);

/** A byte count for people: B, KiB, MiB or GiB. @param {number} n */
export function size(n) {
  if (n < 1024) return `${n} B`;
  const [v, u] = n < 1 << 20 ? [n / 1024, 'KiB'] : n < 1 << 30 ? [n / (1 << 20), 'MiB'] : [n / (1 << 30), 'GiB'];
  return `${v.toFixed(2)} ${u}`;
}

const typeName = (/** @type {number} */ t) => typeInfo(t).name;
/** @param {number[]} dims */
const shape = (dims) => `[${dims.join(', ')}]`;

/**
 * One tensor of the plan as a line: its place, name, shape, types and sizes, and why its type
 * is not the plan's default when a rule, option or fallback chose it.
 * @param {PlanTensor} t @param {number} i @param {number} n @param {number} w name width
 */
export function tensorLine(t, i, n, w) {
  const k = String(n).length;
  const what = t.to === t.from ? `${typeName(t.from)} kept` : `${typeName(t.from)} -> ${typeName(t.to)}`;
  const why = t.fallback ?? (t.why === 'ftype default' || t.why === 'type' ? '' : flags(t.why));
  return (
    `[${String(i + 1).padStart(k)}/${n}] ${t.name.padEnd(w)}  ${shape(t.dims).padEnd(20)}  ${what.padEnd(16)}  ` +
    `${size(t.bytesIn).padStart(11)} -> ${size(t.bytesOut).padStart(11)}${why ? `  (${why})` : ''}`
  );
}

/**
 * The whole plan, a line per tensor (the --dry-run listing).
 * @param {QuantizePlan} plan @param {(s: string) => void} print
 */
export function printPlan(plan, print) {
  const w = Math.max(4, ...plan.tensors.map((t) => t.name.length));
  plan.tensors.forEach((t, i) => print(tensorLine(t, i, plan.tensors.length, w)));
}

/**
 * The closing summary.
 * @param {QuantizePlan} plan
 * @param {{ out: string | null, inBytes: number, seconds: number | null }} what out: the output
 *   (null for a dry run without one); inBytes: the size of the input's files; seconds: the time
 *   taken (null for a dry run)
 * @param {(s: string) => void} print
 */
export function printSummary(plan, { out, inBytes, seconds }, print) {
  const name = plan.type !== null ? `every tensor at ${typeName(plan.type)}` : (plan.ftype?.name ?? '');
  const shards = plan.shards.length > 1 ? ` in ${plan.shards.length} shards` : '';
  print(
    `${out ?? 'the output'}${seconds === null ? ' (dry run: nothing written)' : ''}: ${name}, ${plan.tensors.length} tensors${shards}`,
  );
  /** @type {Map<number, { tensors: number, bytes: number }>} */
  const byType = new Map();
  for (const t of plan.tensors) {
    const e = byType.get(t.to) ?? { tensors: 0, bytes: 0 };
    e.tensors++;
    e.bytes += t.bytesOut;
    byType.set(t.to, e);
  }
  print(`  ${'type'.padEnd(8)} ${'tensors'.padStart(7)}  ${'bytes'.padStart(14)}`);
  for (const [t, e] of [...byType].sort((a, b) => b[1].bytes - a[1].bytes || a[0] - b[0]))
    print(`  ${typeName(t).padEnd(8)} ${String(e.tensors).padStart(7)}  ${String(e.bytes).padStart(14)}`);
  const n = plan.tensors.reduce((s, t) => s + t.source.nElements, 0);
  const bits = (/** @type {number} */ b) => (n ? (b * 8) / n : 0).toFixed(2);
  print(`size: ${size(inBytes)} -> ${size(plan.totalBytes)} (${inBytes} -> ${plan.totalBytes} bytes)`);
  print(`tensor data: ${size(plan.bytesIn)} -> ${size(plan.bytesOut)} (${plan.bytesIn} -> ${plan.bytesOut} bytes)`);
  print(`bits per weight: ${bits(plan.bytesIn)} -> ${bits(plan.bytesOut)}`);
  if (seconds !== null) print(`time: ${seconds.toFixed(2)} s`);
}

/**
 * The progress of a write on `err`: on a terminal a bar redrawn in place (the current tensor, the
 * share of bytes written, the time left), otherwise a line per tensor when it is done; nothing
 * when quiet.
 * @param {Out} err @param {QuantizePlan} plan @param {boolean} quiet
 * @returns {{ update: (p: Progress) => void, end: (ok: boolean) => void }} end: after the write
 *   (ok: it completed; otherwise only the bar is cleared)
 */
export function progressReporter(err, plan, quiet) {
  const w = Math.max(4, ...plan.tensors.map((t) => t.name.length));
  let shown = 0; // tensors whose line was printed (not a terminal)
  let drawn = false;
  const lines = (/** @type {number} */ upTo) => {
    for (; shown < upTo; shown++) err.write(tensorLine(plan.tensors[shown], shown, plan.tensors.length, w) + '\n');
  };
  return {
    update(p) {
      if (quiet) return;
      if (!err.isTTY) {
        lines(p.bytesOut >= p.total ? plan.tensors.length : p.index);
        return;
      }
      const share = p.total ? p.bytesOut / p.total : 1;
      const eta = p.etaSeconds === null ? '' : `  ${Math.ceil(p.etaSeconds)} s left`;
      const bar = '#'.repeat(Math.round(30 * share)).padEnd(30);
      const line = `[${bar}] ${(100 * share).toFixed(0).padStart(3)}%  ${p.index + 1}/${p.count} ${p.tensor}${eta}`;
      // Cut to the terminal's width: a line that wraps would not be redrawn in place.
      const width = typeof err.columns === 'number' && err.columns > 1 ? err.columns - 1 : line.length;
      err.write(`\r\x1b[K${line.slice(0, width)}`);
      drawn = true;
    },
    end(ok) {
      if (quiet) return;
      if (!err.isTTY && ok) lines(plan.tensors.length);
      else if (drawn) err.write('\r\x1b[K');
    },
  };
}
