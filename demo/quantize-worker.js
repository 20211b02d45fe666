// The Quantize tab's worker: plans and runs blockquant's quantizeModel (the same pipeline as the
// CLI and Node) off the main thread, and writes the result where the page says: into the origin
// private file system (OPFS, through a sync access handle) or to a file the user picked
// (showSaveFilePicker's handle, through its createWritable stream). Nothing leaves the machine.
// An OPFS result is written as NAME.part and renamed to NAME once complete (quantize-stored.js).
// Messages: { id, op: 'plan' | 'start', ... } -> { id, kind: 'progress', ... }*, then
// { id, kind: 'done', result } or { id, kind: 'error', error, code }; { op: 'cancel' } aborts the
// running start (its reply is the error with code 'cancelled', and no OPFS file is left behind).
// The build comes from the worker's URL (?backend=simd128|scalar), else init picks it.
import { init, planQuantize, quantizeModel, typeInfo, GGMLType } from '../js/index.js';
import { PART } from './quantize-stored.js';

/**
 * What the page sends.
 * @typedef {string | File | string[] | File[]} Source  a URL or a picked file, or a split model's shards
 * @typedef {{ source: Source, ftype: string, imatrix: File | null }} Job
 * @typedef {{ kind: 'opfs', name: string } | { kind: 'handle', handle: FileSystemFileHandle }} Save
 * @typedef {{ id: number, op: 'plan' } & Job} PlanRequest
 * @typedef {{ id: number, op: 'start', save: Save, threads: number } & Job} StartRequest
 * @typedef {PlanRequest | StartRequest | { id: number, op: 'cancel' }} Request
 *
 * What it answers.
 * @typedef {{ name: string, dims: number[], from: string, to: string, bytesIn: number, bytesOut: number,
 *   why: string, fallback: string }} PlanRow  one tensor: its types by name, its data sizes
 * @typedef {{ type: string, tensors: number, bytes: number }} TypeRow  output bytes per type
 * @typedef {{ ftype: string, tensors: PlanRow[], byType: TypeRow[], bytesIn: number, bytesOut: number,
 *   totalBytes: number, bitsPerWeight: number, warnings: string[], unsupported: string[] }} PlanSummary
 *   unsupported: the tensors this build cannot convert as planned (quantizeModel would refuse them)
 * @typedef {{ tensor: string, index: number, count: number, bytesIn: number, bytesOut: number,
 *   total: number, etaSeconds: number | null }} Progress
 * @typedef {{ name: string, bytes: number, saved: 'opfs' | 'handle', seconds: number }} Done
 * @typedef {{ id: number, kind: 'progress', progress: Progress } | { id: number, kind: 'done', result: PlanSummary | Done }
 *   | { id: number, kind: 'error', error: string, code: string }} Reply
 */

const asked = new URL(self.location.href).searchParams.get('backend');
/** @type {{ backend?: 'simd128' | 'scalar' }} */
const backend = asked === 'simd128' || asked === 'scalar' ? { backend: asked } : {};
/** The whole layout: the pipeline runs every kind of kernel. */
const whole = /** @type {const} */ ({ layout: 'whole' });
/** One codec per thread count, made on first use and kept (its tables too). */
/** @type {Map<number, Promise<any>>} */
const codecs = new Map();
const codecFor = (/** @type {number} */ n) => {
  let c = codecs.get(n);
  if (!c) codecs.set(n, (c = n > 1 ? init({ ...backend, threads: n }) : init({ ...whole, ...backend })));
  return c;
};
/** The running start's controller (one at a time). */
/** @type {AbortController | null} */
let running = null;
/** Progress is posted at most this often (ms); the last chunk's always. */
const PROGRESS_MS = 100;

/** @param {Reply} r */
const reply = (r) => self.postMessage(r);

/**
 * The plan as the page shows it: names instead of type ids, no imatrix arrays.
 * @param {import('../js/model/recipe.js').QuantizePlan} p
 * @returns {PlanSummary}
 */
function summary(p) {
  /** @type {Map<string, TypeRow>} */
  const byType = new Map();
  const tensors = p.tensors.map((t) => {
    const to = typeInfo(t.to).name;
    const row = byType.get(to) ?? { type: to, tensors: 0, bytes: 0 };
    row.tensors++;
    row.bytes += t.bytesOut;
    byType.set(to, row);
    return {
      name: t.name,
      dims: t.dims,
      from: typeInfo(t.from).name,
      to,
      bytesIn: t.bytesIn,
      bytesOut: t.bytesOut,
      why: t.why,
      fallback: t.fallback ?? '',
    };
  });
  return {
    ftype: p.ftype?.name ?? (p.type === null ? '' : typeInfo(p.type).name),
    tensors,
    byType: [...byType.values()].sort((a, b) => b.bytes - a.bytes),
    bytesIn: p.bytesIn,
    bytesOut: p.bytesOut,
    totalBytes: p.totalBytes,
    bitsPerWeight: p.bitsPerWeight,
    warnings: p.warnings,
    // quantizeModel's own check, made before it writes anything: said now, before Start.
    unsupported: p.tensors
      .filter(
        (t) =>
          t.to !== t.from && (!typeInfo(t.to).quantize || (t.from !== GGMLType.F32 && !typeInfo(t.from).dequantize)),
      )
      .map((t) => t.name),
  };
}

/** quantizeModel's options for a job (the imatrix file's name becomes quantize.imatrix.file). @param {Job} j */
const optionsOf = (j) => ({ ftype: j.ftype, ...(j.imatrix ? { imatrix: j.imatrix } : {}) });

/**
 * Where the bytes go, and how to finish or undo it: an OPFS file written through a sync access
 * handle (a function sink), or the picked file's writable stream (aborted by quantizeModel on an
 * error, which leaves the file as it was).
 * @param {Save} save
 * @returns {Promise<{ sink: unknown, finish(): Promise<void>, undo(): Promise<void>, name: string }>}
 */
async function sinkFor(save) {
  if (save.kind === 'handle') {
    const w = await save.handle.createWritable();
    // quantizeModel aborts the stream it has taken (the file stays as it was); one it never took
    // (a failure before the first byte) is aborted here.
    const undo = async () => void (await w.abort().catch(() => {}));
    return { sink: w, finish: async () => {}, undo, name: save.handle.name };
  }
  // Written as NAME.part and renamed when complete: a *.gguf in OPFS is always a whole file
  // (where a browser cannot rename OPFS files, written as NAME; a failed run still removes it).
  const root = await navigator.storage.getDirectory();
  const canMove = typeof (/** @type {any} */ (FileSystemFileHandle.prototype).move) === 'function';
  const part = canMove ? save.name + PART : save.name;
  const fh = await root.getFileHandle(part, { create: true });
  // A dedicated worker's synchronous writer (no swap file); tsconfig.demo.json's DOM lib lacks its type.
  /** @type {{ write(b: Uint8Array, o: { at: number }): number, truncate(n: number): void, flush(): void, close(): void }} */
  const h = await /** @type {any} */ (fh).createSyncAccessHandle();
  h.truncate(0);
  let at = 0;
  return {
    name: save.name,
    sink: (/** @type {Uint8Array} */ chunk) => {
      for (let done = 0; done < chunk.length;) {
        const n = h.write(chunk.subarray(done), { at: at + done });
        if (!(n > 0)) throw new Error(`${save.name}: the browser's storage took no bytes (is it full?)`);
        done += n;
      }
      at += chunk.length;
    },
    async finish() {
      h.flush();
      h.close();
      if (!canMove) return;
      await root.removeEntry(save.name).catch(() => {}); // an older result of the same name
      await /** @type {any} */ (fh).move(save.name);
    },
    async undo() {
      h.close();
      await root.removeEntry(part);
    },
  };
}

/** @param {StartRequest} m */
async function start(m) {
  if (running) throw Object.assign(new Error('a quantization is already running'), { code: 'BUSY' });
  const ctl = (running = new AbortController());
  const started = performance.now();
  let out = null;
  try {
    const codec = await codecFor(m.threads);
    out = await sinkFor(m.save);
    let last = 0;
    const plan = await quantizeModel(m.source, out.sink, {
      ...optionsOf(m),
      codec,
      signal: ctl.signal,
      onProgress(p) {
        const now = performance.now();
        if (now - last < PROGRESS_MS && p.bytesOut !== p.total) return;
        last = now;
        reply({ id: m.id, kind: 'progress', progress: p });
      },
    });
    await out.finish();
    return {
      name: out.name,
      bytes: plan.totalBytes,
      saved: m.save.kind,
      seconds: (performance.now() - started) / 1000,
    };
  } catch (e) {
    await out?.undo().catch(() => {});
    if (ctl.signal.aborted) throw Object.assign(new Error('cancelled; nothing was kept'), { code: 'cancelled' });
    throw e;
  } finally {
    running = null;
  }
}

self.onmessage = async (/** @type {MessageEvent<Request>} */ ev) => {
  const m = ev.data;
  if (m.op === 'cancel') return running?.abort(new Error('cancelled'));
  try {
    const result = m.op === 'plan' ? summary(await planQuantize(m.source, optionsOf(m))) : await start(m);
    reply({ id: m.id, kind: 'done', result });
  } catch (e) {
    const err = /** @type {{ message?: string, code?: unknown }} */ (e);
    reply({ id: m.id, kind: 'error', error: String(err?.message ?? e), code: String(err?.code ?? 'ERROR') });
  }
};
