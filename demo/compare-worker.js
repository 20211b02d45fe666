// The worker behind "Compare with…" (compare-ui.js): opens A and B (a second file, or A quantized
// in memory by planQuantize's recipe), compares every matched tensor a chunk of rows at a time
// (compare-run.js) with progress, draws a tensor's B - A heatmap and reads the two blocks under a
// cell. Its own worker, so a compare of a large model never holds up the viewer's worker.
// Messages: { id, op, ...args } -> { id, kind: 'progress', progress } ... then { id, kind: 'done',
// result } or { id, kind: 'error', error, code }; { op: 'cancel' } stops the running compare.
import { init, openGGUF, planQuantize, readImatrix, typeInfo } from '../js/index.js';
import { renderHeatmap } from './heatmap.js';
import { cellBlocks, cellMaps, compareAll, filePairs, planPairs } from './compare-run.js';
import { commonCell } from './compare-math.js';

/**
 * @typedef {import('./compare-run.js').Side} Side
 * @typedef {import('./compare-run.js').Pair} Pair
 * @typedef {import('./compare-run.js').Progress} Progress
 * @typedef {import('./compare-run.js').TensorError} TensorError
 * @typedef {import('./compare-math.js').Mismatch} Mismatch
 * @typedef {string | File | (string | File)[]} Source
 * @typedef {{ pairs: { name: string, dims: number[], aType: string, bType: string }[], mismatched: Mismatch[],
 *   bLabel: string, plan: { ftype: string, bitsPerWeight: number, warnings: string[] } | null }} Opened
 * @typedef {{ id: number, kind: 'progress', progress: Progress } | { id: number, kind: 'done', result: unknown }
 *   | { id: number, kind: 'error', error: string, code: unknown }} Reply
 * @typedef {ReturnType<typeof renderHeatmap>} Drawn
 */

/** The heatmap covers at most this many values of a tensor (its first rows), as the viewer's. */
const MAX_VALUES = 1 << 24;
/** Cells of a tensor's maps at most (4M: three maps of 16 MB). */
const MAX_CELLS = 1 << 22;
/** A zoomed heatmap still shows this many cells a side (or all there are). */
const MIN_SIDE = 64;

const asked = new URL(self.location.href).searchParams.get('backend');
const bqPromise = init({ layout: 'whole', ...(asked === 'simd128' || asked === 'scalar' ? { backend: asked } : {}) });

/** @type {{ a: any, b: Side, pairs: Pair[] } | null} */
let job = null;
/** The job's controller: its files are opened with its signal, so a cancel (or a newer open)
 * also stops a read in flight; the job is gone after it. */
/** @type {AbortController | null} */
let running = null;
/** Stops the job there is and starts a new one's controller. */
function newJob() {
  running?.abort(cancelled());
  job = null;
  current = null;
  running = new AbortController();
  return running.signal;
}
/** The last tensor's maps (the page asks for drawn heatmaps of it, and blocks under its cells). */
/** @type {{ name: string, maps: Awaited<ReturnType<typeof cellMaps>> } | null} */
let current = null;

/** The pairs as the page lists them (type names). */
const named = (/** @type {Pair[]} */ ps) =>
  ps.map((p) => ({ name: p.name, dims: p.dims, aType: typeInfo(p.aType).name, bType: typeInfo(p.bType).name }));

const ops = {
  /** Opens A and B (two files). @param {{ a: Source, b: Source }} m @returns {Promise<Opened>} */
  async open({ a, b }) {
    const signal = newJob();
    const [fa, fb] = await Promise.all([openGGUF(a, { signal }), openGGUF(b, { signal })]);
    const { pairs, mismatched } = filePairs(fa, fb);
    job = { a: fa, b: { kind: 'file', file: fb }, pairs };
    return { pairs: named(pairs), mismatched, bLabel: '', plan: null };
  },

  /**
   * Opens A and plans B: A quantized to ftype as llama-quantize would (with the imatrix file's
   * weights when given). Nothing is written.
   * @param {{ a: Source, ftype: string, imatrix: File | null }} m @returns {Promise<Opened>}
   */
  async plan({ a, ftype, imatrix }) {
    const signal = newJob();
    const fa = await openGGUF(a, { signal });
    const im = imatrix ? await readImatrix(imatrix) : undefined;
    signal.throwIfAborted();
    const plan = await planQuantize(fa, { ftype, ...(im ? { imatrix: im } : {}) });
    const { pairs, mismatched, recipes } = planPairs(fa, plan);
    job = { a: fa, b: { kind: 'quantize', recipes }, pairs };
    return {
      pairs: named(pairs),
      mismatched,
      bLabel: ftype,
      plan: { ftype, bitsPerWeight: plan.bitsPerWeight, warnings: plan.warnings },
    };
  },

  /** Compares every pair. @param {{}} _ @param {(p: Progress) => void} progress @returns {Promise<TensorError[]>} */
  async run(_, progress) {
    const j = need();
    const signal = /** @type {AbortController} */ (running).signal;
    return compareAll(await bqPromise, j.a, j.b, j.pairs, { signal, onProgress: progress });
  },

  /**
   * A tensor's B - A heatmap, drawn (metric: rmse, max or mean; view as heatmap.js's View).
   * @param {{ name: string, metric: 'rmse' | 'max' | 'mean' } & import('./heatmap.js').View} m
   */
  async heatmap({ name, metric, zoom = 1, cx = 0, cy = 0, log }) {
    const maps = await mapsOf(name);
    const { rows, perRow } = maps;
    // The window: 1/zoom of each side but never fewer than MIN_SIDE cells (or all of them), centred
    // on (cx, cy) and kept inside, copied out and drawn (pooled to MAX_CELLS a side if still
    // larger). Each side zooms on its own, so a map 4200 rows tall and 8 cells wide reaches
    // single rows while keeping its 8 columns.
    const side = (/** @type {number} */ n, /** @type {number} */ z) =>
      Math.min(n, Math.max(Math.ceil(n / z), MIN_SIDE));
    const z = Math.max(1, Math.min(Math.floor(zoom), Math.ceil(Math.max(rows, perRow) / MIN_SIDE)));
    const wh = side(rows, z),
      ww = side(perRow, z);
    const clamp = (/** @type {number} */ v, /** @type {number} */ hi) => Math.min(Math.max(0, v), hi);
    const y0 = clamp(Math.round(cy - wh / 2), rows - wh),
      x0 = clamp(Math.round(cx - ww / 2), perRow - ww);
    const all = maps[metric];
    const win = new Float32Array(wh * ww);
    for (let r = 0; r < wh; r++) win.set(all.subarray((y0 + r) * perRow + x0, (y0 + r) * perRow + x0 + ww), r * ww);
    const { rgba, ...d } = renderHeatmap(win, { rows: wh, perRow: ww }, { log });
    const drawn = { ...d, x0: x0 + d.x0, y0: y0 + d.y0, zoom: z };
    const geo = { rows, totalRows: maps.totalRows, perRow, cell: maps.cell };
    if (typeof OffscreenCanvas !== 'function') return { ...geo, ...drawn, rgba };
    const oc = new OffscreenCanvas(drawn.W, drawn.H);
    const ctx = /** @type {OffscreenCanvasRenderingContext2D} */ (oc.getContext('2d'));
    ctx.putImageData(new ImageData(/** @type {Uint8ClampedArray<ArrayBuffer>} */ (rgba), drawn.W, drawn.H), 0, 0);
    return { ...geo, ...drawn, bitmap: oc.transferToImageBitmap() };
  },

  /** A tensor's map geometry (computes its maps). @param {{ name: string }} m */
  async geometry({ name }) {
    const m = await mapsOf(name);
    return { rows: m.rows, totalRows: m.totalRows, rowLen: m.rowLen, perRow: m.perRow, cell: m.cell };
  },

  /** The A and B blocks under a cell. @param {{ name: string, cell: number, within: number }} m */
  async block({ name, cell, within }) {
    const j = need();
    return cellBlocks(await bqPromise, j.a, j.b, pairOf(name), cell, within);
  },
};

/** The job (open or plan ran), else an error the page shows. */
function need() {
  if (!job) throw new Error('open a file to compare with first');
  return job;
}
/** @param {string} name */
function pairOf(name) {
  const p = need().pairs.find((x) => x.name === name);
  if (!p) throw new Error(`${name} is not a compared tensor`);
  return p;
}
/** @param {string} name */
async function mapsOf(name) {
  if (current?.name === name) return current.maps;
  const j = need();
  const p = pairOf(name);
  // At most MAX_CELLS cells (three float32 maps of them): F16 against F32 has one value per cell.
  const maxValues = Math.min(MAX_VALUES, MAX_CELLS * commonCell(p.aType, p.bType));
  const maps = await cellMaps(await bqPromise, j.a, j.b, p, maxValues, running?.signal);
  current = { name, maps };
  return maps;
}
function cancelled() {
  return Object.assign(new Error('cancelled'), { code: 'cancelled' });
}

/** @param {unknown} r */
function transferOf(r) {
  const d = /** @type {{ cells?: Float32Array, bitmap?: ImageBitmap, rgba?: Uint8ClampedArray } | null} */ (r);
  return d?.cells ? [d.cells.buffer, d.bitmap ?? /** @type {Uint8ClampedArray} */ (d.rgba).buffer] : [];
}

self.onmessage = async (/** @type {MessageEvent<{ id: number, op: string } & Record<string, any>>} */ ev) => {
  const { id, op, ...args } = ev.data;
  if (op === 'cancel') {
    running?.abort(cancelled());
    job = null;
    current = null;
    return;
  }
  /** @param {Reply} r @param {Transferable[]} [t] */
  const send = (r, t = []) => self.postMessage(r, { transfer: t });
  try {
    if (!Object.hasOwn(ops, op)) throw new Error(`unknown operation ${op}`);
    const fn = /** @type {(a: any, p: (p: Progress) => void) => Promise<unknown>} */ (
      ops[/** @type {keyof typeof ops} */ (op)]
    );
    const result = await fn(args, (progress) => send({ id, kind: 'progress', progress }));
    send({ id, kind: 'done', result }, transferOf(result));
  } catch (e) {
    const err = /** @type {{ message?: string, code?: unknown }} */ (e);
    send({ id, kind: 'error', error: String(err?.message ?? e), code: err?.code });
  }
};
