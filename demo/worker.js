// The demo's worker: opens GGUF files and does every heavy computation, through the public API
// (js/index.js) and the layout descriptions (layout.js). Messages: { id, op, ... } -> { id, ok,
// result } or { id, ok: false, error }. Operations run one at a time, in the order they arrive, so
// the tensor the page last asked for is the one the worker holds. The build comes from the
// worker's URL (?backend=simd128|scalar), else init picks it.
import { init, openGGUF, typeInfo, tensorTypeName, GGMLType, toLittleEndian } from '../js/index.js';
import { FORMATS, errorSummary, histogram } from './metrics.js';
import { decodeBlock, decodeParts, gridOf, partsInfo, scalarFields } from './layout.js';
import { gridTables } from './grids.js';
import { viewerOps } from './viewer-ops.js';
import { VALUE_TYPES, valuesSummary } from './values-view.js';
import { renderHeatmap, sharedHistograms, foldGrid } from './heatmap.js';
import { originalOf } from './formula.js';
import { explainOpenError, FULL_DOWNLOAD_LIMIT } from './url-errors.js';
import { encodeOps } from './encode-ops.js';

// ---- the messages (app.js sends { id, op, ...args } and reads the result) ----
/**
 * @typedef {Awaited<ReturnType<typeof openGGUF>>} OpenFile the file the worker holds
 * @typedef {OpenFile['tensors'][number]} OpenTensor
 * @typedef {string | File | (string | File)[]} Source  what the page opens: a URL or a picked file,
 *   or a list of them (a split model's shards)
 *
 * @typedef {{ source: Source, full?: boolean }} OpenArgs  full: download a URL whole (its server
 *   cannot be read in pieces), up to FULL_DOWNLOAD_LIMIT bytes
 * @typedef {{ name: string, type: number, typeName: string, dims: number[], nElements: number,
 *   byteLength: number | null, unsupported: string }} TensorRow  unsupported: why it cannot be
 *   analysed, or ''; byteLength null: a type id blockquant does not know (typeName 'unknown(N)')
 * @typedef {{ backend: string, version: number, alignment: number, littleEndian: boolean,
 *   truncated: { size: number, expected: number } | null,
 *   kv: { key: string, text: string }[], tensors: TensorRow[] }} OpenResult  truncated: the file's
 *   data is cut short (size bytes of expected)
 *
 * @typedef {{ name: string }} AnalyzeArgs
 * @typedef {{ rows: number, totalRows: number, rowLen: number }} Geometry  the rows analysed
 * @typedef {ReturnType<typeof histogram>} Histogram
 * @typedef {ReturnType<typeof errorSummary>} ErrorSummary
 * @typedef {{ rmse: number[], max: number[], sub: number[] }} PerMetric  per heatmap value
 * @typedef {ErrorSummary & { format: string, blockSize: number, subBlock: number, bits: number,
 *   hasSub: boolean, worstRmse: number, worst: PerMetric, worstValues: PerMetric,
 *   hist: Histogram & { maxCount: number } }} FormatAnalysis  one format of a float tensor
 *   (worst: the worst cells' indices, worstValues their values; hist: its block-RMSE histogram)
 * @typedef {Geometry & { kind: 'values', type: string } & ReturnType<typeof valuesSummary>} ValuesAnalysis
 * @typedef {Geometry & { kind: 'float', formats: FormatAnalysis[] }} FloatAnalysis
 * @typedef {Geometry & { kind: 'quant', type: string, blockSize: number, subBlock: number, fields: string[],
 *   sc: boolean, m: boolean, codes: { counts: number[], offset: number }, values: Histogram,
 *   ruler: ErrorSummary & { worst: number[], worstValues: number[] } }} QuantAnalysis
 * @typedef {ValuesAnalysis | FloatAnalysis | QuantAnalysis} AnalyzeResult
 *
 * @typedef {{ name: string, key: string } & import('./heatmap.js').View} HeatmapArgs
 * @typedef {import('./draw.js').Drawn & { key: string, rows: number, perRow: number }} HeatmapResult
 *
 * @typedef {{ name: string, format: string, block: number }} BlockArgs
 * @typedef {{ format: string, block: number, bytes: Uint8Array, original: Float32Array,
 *   decoded: Float32Array, recon: Float32Array, quantized: boolean,
 *   reference: { name: string, values: Float32Array } | null, referenceError: string,
 *   scalars: Record<string, number>, codes: ArrayLike<number>, fromFields: Float32Array, sub: number,
 *   sc: ArrayLike<number> | null, m: ArrayLike<number> | null, where: string[], subScale: Float32Array | null,
 *   scaleName: string, scWhere: string[], mWhere: string[] }} BlockResult
 *
 * The tensor operations, by name: what the page sends and what it gets back. (The viewer's
 * operations: ViewerOps in viewer-ops.js.)
 * @typedef {{ open: { args: OpenArgs, result: OpenResult }, analyze: { args: AnalyzeArgs, result: AnalyzeResult },
 *   heatmap: { args: HeatmapArgs, result: HeatmapResult }, block: { args: BlockArgs, result: BlockResult } }} Ops
 * @typedef {{ id: number, op: string } & Record<string, unknown>} Request
 * @typedef {{ id: number, ok: true, result: unknown } | { id: number, ok: false, error: string, code: unknown,
 *   detail?: unknown }} Reply  detail: what the page is told beside the message (url-errors.js)
 */

/** @type {Set<number>} */
const FLOATS = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);
const MAX_VALUES = 1 << 25; // 32M values (128 MB as f32) analysed at most
const WORST = 8; // blocks listed as the worst of each map

const asked = new URL(self.location.href).searchParams.get('backend');
const bqPromise = init({ layout: 'whole', ...(asked === 'simd128' || asked === 'scalar' ? { backend: asked } : {}) });
/** @type {OpenFile | null} */
let file = null;
/** The tensor analysed last: its f32 values, per format its blocks, and its heatmaps' values
 * (kept here: the page asks for drawn heatmaps, never for the per-block arrays). */
/** @type {{ name: string, x: Float32Array, q: Map<string, Uint8Array>,
 *   maps: Map<string, { values: ArrayLike<number>, rows: number, perRow: number }> } | null} */
let current = null;
/** The IQ grid tables, read out of the codec the first time a grid-format tensor is opened. */
/** @type {Record<string, Int8Array> | null} */
let gridCache = null;
/** Bumped when an open or analyze message arrives: a running analysis that sees it change stops. */
let generation = 0;
/** An error for an analysis abandoned because a newer one was asked for. */
function cancelled() {
  return Object.assign(new Error('abandoned for a newer request'), { code: 'cancelled' });
}
/** Lets queued messages arrive (and bump generation), then stops if this analysis is stale. */
async function checkpoint(/** @type {number} */ gen) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (gen !== generation) throw cancelled();
}

/**
 * Why the demo cannot analyse a tensor of this type and shape, or '' when it can.
 * @param {{ type: number, dims: number[], unreadable?: { message: string },
 *   missing?: { from: number, to: number, of: number } }} t
 */
function unsupported(t) {
  // An unknown type id, or Q2_0 in its pre-release layout: the reader says why.
  if (t.unreadable) return t.unreadable.message;
  // A partial file (a download cut short): the tensor is listed, its bytes are not all there.
  if (t.missing) return `data missing: bytes ${t.missing.from}..${t.missing.to} of ${t.missing.of}`;
  const info = typeInfo(t.type);
  if (VALUE_TYPES.has(t.type)) return ''; // integer and F64 values, shown as values
  if (!info.dequantize) return `blockquant has no decoder for ${info.name} tensors`;
  const rowLen = t.dims[0] ?? 1;
  if (FLOATS.has(t.type)) {
    if (!FORMATS.some((f) => rowLen % typeInfo(f).blockSize === 0))
      return `its rows of ${rowLen} values are not whole blocks of any quantized format (32 or 256 values)`;
    return '';
  }
  if (!partsInfo(info.name))
    return `the demo cannot take ${info.name} blocks apart yet (no layout description in demo/layout.js; bq.dequantize decodes them)`;
  if (rowLen % 32 !== 0)
    return `its rows of ${rowLen} values are not whole Q8_0 blocks, so the Q8_0 ruler cannot measure them`;
  return '';
}

/** Indices of the k largest finite values, largest first (one pass, no sort of the whole array). */
function worst(/** @type {ArrayLike<number>} */ v, k = WORST) {
  /** @type {number[]} */
  const idx = [];
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) continue;
    if (idx.length === k && v[i] <= v[idx[k - 1]]) continue;
    let p = idx.length === k ? k - 1 : idx.length;
    while (p > 0 && v[idx[p - 1]] < v[i]) {
      idx[p] = idx[p - 1];
      p--;
    }
    idx[p] = i;
  }
  return idx;
}

const ops = {
  /** @param {OpenArgs} args @returns {Promise<OpenResult>} */
  async open({ source, full }) {
    const bq = await bqPromise;
    // Forget the previous file first: after a failure nothing of it is left to disagree with the page.
    file = null;
    current = null;
    // A file whose data is cut short (a partial download) opens: its missing tensors are marked.
    /** @type {Awaited<ReturnType<typeof openGGUF>>} */
    let f;
    try {
      f = await openGGUF(source, {
        allowTruncated: true,
        ...(full ? { allowFullDownload: true, maxBytes: FULL_DOWNLOAD_LIMIT } : {}),
      });
    } catch (e) {
      throw await explainOpenError(e, source);
    }
    file = f;
    return {
      backend: bq.backend,
      truncated: f.truncated,
      version: f.version,
      alignment: f.alignment,
      littleEndian: f.littleEndian,
      kv: f.kv.map((e) => ({ key: e.key, text: preview(e.value) })),
      tensors: f.tensors.map((t) => ({
        name: t.name,
        type: t.type,
        typeName: tensorTypeName(t),
        dims: t.dims,
        nElements: t.nElements,
        byteLength: t.byteLength,
        unsupported: unsupported(t),
      })),
    };
  },

  /** @param {AnalyzeArgs & { gen: number }} args @returns {Promise<AnalyzeResult>} */
  async analyze({ name, gen }) {
    const bq = await bqPromise;
    await checkpoint(gen);
    const { f: file, t } = tensor(name);
    const why = unsupported(t);
    if (why) throw new Error(`cannot analyse ${name}: ${why}`);
    const rowLen = t.dims[0] ?? 1;
    // Very large tensors: analyse the first rows only (up to MAX_VALUES values) and say so.
    const totalRows = t.nElements / rowLen;
    const rows = Math.max(1, Math.min(totalRows, Math.floor(MAX_VALUES / rowLen)));
    const geometry = { rows, totalRows, rowLen };
    const x = rows === totalRows ? await bq.dequantizeTensor(file, name) : await bq.dequantizeRows(file, name, 0, rows);
    if (VALUE_TYPES.has(t.type)) {
      current = null; // no blocks to inspect
      return { kind: 'values', ...geometry, type: typeInfo(t.type).name, ...valuesSummary(x) };
    }
    // Every other type decodes to f32.
    if (!(x instanceof Float32Array)) throw new Error(`${name} did not decode to f32 values`);
    /** @type {Map<string, { values: ArrayLike<number>, rows: number, perRow: number }>} */
    const maps = new Map();
    const map = (/** @type {string} */ key, /** @type {ArrayLike<number>} */ values, /** @type {number} */ per) =>
      maps.set(key, { values, rows, perRow: rowLen / per });
    if (FLOATS.has(t.type)) {
      /** @type {Map<string, Uint8Array>} */
      const q = new Map();
      /** @type {FormatAnalysis[]} */
      const formats = [];
      /** @type {Float32Array[]} */
      const rmses = [];
      for (const f of FORMATS) {
        const { blockSize, typeSize, subBlock } = typeInfo(f);
        if (rowLen % blockSize !== 0) continue;
        await checkpoint(gen);
        const bytes = bq.quantize(f, x);
        q.set(f, bytes);
        const back = bq.dequantize(f, bytes);
        const s = bq.blockStats(f, x);
        map(`${f}:rmse`, s.rmse, blockSize);
        map(`${f}:max`, s.maxAbs, blockSize);
        if (s.sub) map(`${f}:sub`, s.sub.rmse, subBlock);
        rmses.push(s.rmse);
        const w = { rmse: worst(s.rmse), max: worst(s.maxAbs), sub: s.sub ? worst(s.sub.rmse) : [] };
        const sub = s.sub?.rmse;
        formats.push({
          format: f,
          blockSize,
          subBlock: s.sub ? subBlock : 0,
          bits: (typeSize * 8) / blockSize,
          ...errorSummary(x, back),
          hasSub: !!s.sub,
          worstRmse: s.rmse.reduce((a, b) => (b > a ? b : a), 0),
          worst: w,
          worstValues: {
            rmse: w.rmse.map((i) => s.rmse[i]),
            max: w.max.map((i) => s.maxAbs[i]),
            sub: sub ? w.sub.map((i) => sub[i]) : [],
          },
          hist: { lo: 0, hi: 0, log: false, maxCount: 0, counts: [] }, // set below, once all are known
        });
      }
      await checkpoint(gen);
      // One set of bins for every format's block RMSE, so their histograms share their axes.
      const h = sharedHistograms(rmses, 40, true);
      formats.forEach(
        (f, i) => (f.hist = { lo: h.lo, hi: h.hi, log: h.log, maxCount: h.maxCount, counts: h.counts[i] }),
      );
      current = { name, x, q, maps };
      return { kind: 'float', ...geometry, formats };
    }
    // A quantized tensor: its scales, its codes, its values, and the Q8_0 ruler.
    const info = typeInfo(t.type);
    const le = t.littleEndian ?? file.littleEndian;
    const raw = await file.readRows(name, 0, rows);
    const bytes = le ? raw : toLittleEndian(t.type, raw); // big-endian: the file's own blocks, swapped
    const c = /** @type {NonNullable<ReturnType<typeof partsInfo>>} */ (partsInfo(info.name));
    const grids = gridOf(info.name) ? (gridCache ??= gridTables(bq)) : null;
    const nb = (rows * rowLen) / info.blockSize;
    // Every scalar field (d, m, s, dmin) per block, and the sub-block scales and mins.
    const names = Object.keys(scalarFields(info.name, bytes.subarray(0, info.typeSize)));
    const fields = Object.fromEntries(names.map((n) => [n, new Float32Array(nb)]));
    const ns = c.ns;
    const sc = ns ? new Int32Array(nb * ns) : null,
      m = c.mins ? new Int32Array(nb * ns) : null;
    const counts = new Array(c.codeCount).fill(0);
    const codes = new Int32Array(info.blockSize);
    for (let b = 0, o = 0; b < nb; b++, o += info.typeSize) {
      if ((b & 65535) === 65535) await checkpoint(gen);
      const s = scalarFields(info.name, bytes, o);
      for (const n of names) fields[n][b] = s[n];
      const span = [b * ns, (b + 1) * ns];
      decodeParts(info.name, bytes, o, grids, codes, sc && sc.subarray(...span), m && m.subarray(...span));
      for (let e = 0; e < codes.length; e++) counts[codes[e] - c.codeLo]++;
    }
    await checkpoint(gen);
    const ruler = bq.blockStats('q8_0', x);
    const rulerBack = bq.dequantize('q8_0', bq.quantize('q8_0', x));
    await checkpoint(gen);
    for (const n of names) map(`f:${n}`, fields[n], info.blockSize);
    if (sc) map('sc', sc, info.blockSize / ns);
    if (m) map('m', m, info.blockSize / ns);
    map('ruler', ruler.rmse, 32);
    const rw = worst(ruler.rmse);
    current = { name, x, q: new Map([[info.name, bytes]]), maps };
    return {
      kind: 'quant',
      ...geometry,
      type: info.name,
      blockSize: info.blockSize,
      subBlock: ns ? info.blockSize / ns : 0,
      fields: names,
      sc: !!sc,
      m: !!m,
      codes: { counts, offset: c.codeLo },
      values: histogram(x, 60, false),
      ruler: {
        ...errorSummary(x, rulerBack),
        worst: rw,
        worstValues: rw.map((i) => ruler.rmse[i]),
      },
    };
  },

  /**
   * One of the analysed tensor's heatmaps, drawn (see heatmap.js renderHeatmap): key names the map
   * (float tensors: '<format>:rmse|max|sub'; quantized: 'f:<field>', 'sc', 'm', 'ruler').
   * @param {HeatmapArgs} args
   * @returns {Promise<HeatmapResult>}
   */
  async heatmap({ name, key, zoom, cx, cy, log, fold }) {
    if (!current || current.name !== name)
      throw new Error(`${name} is not the analysed tensor; choose it in the list again`);
    const m = current.maps.get(key);
    if (!m) throw new Error(`${name} has no heatmap ${key}`);
    // A tall map wrapped into columns (heatmap.js foldGrid), kept for the next zoom or pan.
    const F = Math.max(1, Math.floor(fold ?? 1));
    let shown = m;
    if (F > 1) {
      const k = `${key}@${F}`;
      shown = current.maps.get(k) ?? foldGrid(m.values, m, F);
      current.maps.set(k, shown);
    }
    const { rgba, ...drawn } = renderHeatmap(shown.values, shown, { zoom, cx, cy, log });
    // The pixels go to the page as an ImageBitmap drawn here (the page only scales it onto its
    // canvas); a browser without OffscreenCanvas in workers gets the RGBA bytes instead.
    if (typeof OffscreenCanvas !== 'function') return { key, rows: m.rows, perRow: m.perRow, ...drawn, rgba };
    const oc = new OffscreenCanvas(drawn.W, drawn.H);
    const ctx = /** @type {OffscreenCanvasRenderingContext2D} */ (oc.getContext('2d'));
    ctx.putImageData(new ImageData(/** @type {Uint8ClampedArray<ArrayBuffer>} */ (rgba), drawn.W, drawn.H), 0, 0);
    return { key, rows: m.rows, perRow: m.perRow, ...drawn, bitmap: oc.transferToImageBitmap() };
  },

  /** @param {BlockArgs} args @returns {Promise<BlockResult>} */
  async block({ name, format, block }) {
    if (!current || current.name !== name)
      throw new Error(`${name} is not the analysed tensor; choose it in the list again`);
    const bq = await bqPromise;
    const fmt = current.q.has(format) ? format : [...current.q.keys()][0];
    const { typeSize, blockSize } = typeInfo(fmt);
    const q = /** @type {Uint8Array} */ (current.q.get(fmt));
    if (!Number.isInteger(block) || block < 0 || (block + 1) * typeSize > q.length)
      throw new Error(`${name} has no ${fmt} block ${block}`);
    const bytes = q.slice(block * typeSize, (block + 1) * typeSize);
    const original = current.x.slice(block * blockSize, (block + 1) * blockSize);
    const { f: file, t } = tensor(name);
    const quantized = !FLOATS.has(t.type);
    // For a float tensor the block is the chosen format's encoding of the original values; for a
    // quantized tensor it is the file's own block, compared with its Q8_0 re-quantization.
    const decoded = bq.dequantize(fmt, bytes);
    const recon = quantized ? bq.dequantize('q8_0', bq.quantize('q8_0', original)) : decoded;
    // A quantized tensor whose float original is in the file (formula.js originalOf): that
    // tensor's values at the same elements, for the inspector's side-by-side view.
    let reference = null,
      referenceError = '';
    const refName = quantized ? originalOf(file.tensors, name) : null;
    if (refName) {
      try {
        const rowLen = t.dims[0] ?? 1,
          at = block * blockSize,
          row = Math.floor(at / rowLen);
        const x = await bq.dequantizeRows(file, refName, row, 1);
        if (!(x instanceof Float32Array)) throw new Error('its values are not f32');
        reference = { name: refName, values: x.slice(at - row * rowLen, at - row * rowLen + blockSize) };
      } catch (e) {
        referenceError = `could not read ${refName}: ${/** @type {Error} */ (e).message}`;
      }
    }
    const parts = decodeBlock(fmt, bytes, gridOf(fmt) ? (gridCache ??= gridTables(bq)) : null);
    const sub = parts.sub;
    const ns = parts.sc ? parts.sc.length : 0;
    return {
      format: fmt,
      block,
      bytes,
      original,
      decoded,
      recon,
      quantized,
      reference,
      referenceError,
      scalars: parts.scalars,
      codes: parts.codes,
      fromFields: parts.values,
      sub,
      sc: parts.sc,
      m: parts.m,
      where: Array.from({ length: blockSize }, (_, e) => parts.where(e)),
      subScale: parts.scale,
      scaleName: parts.scaleName,
      scWhere: Array.from({ length: ns }, (_, j) => parts.scWhere(j)),
      mWhere: Array.from({ length: ns }, (_, j) => parts.mWhere(j)),
    };
  },
};
/**
 * Every operation by name: the tensor operations above and the model viewer's (overview, metadata,
 * vocabulary) over the same open file. Each takes the message's arguments and the generation.
 */
const handlers = {
  ...ops,
  ...viewerOps(() => file),
  ...encodeOps(() => ({ file, x: current?.x ?? null, name: current?.name ?? null }), bqPromise), // 'weighted'
};
/** @returns {op is keyof typeof handlers} */
const isOp = (/** @type {string} */ op) => Object.hasOwn(handlers, op);

/**
 * The open file and its tensor of that name.
 * @param {string} name
 * @returns {{ f: OpenFile, t: OpenTensor }}
 */
function tensor(name) {
  const f = file;
  const t = f?.tensors.find((x) => x.name === name);
  if (!f || !t) throw new Error(`no tensor named ${name} in the open file`);
  return { f, t };
}

/** @param {unknown} v */
function preview(v) {
  if (typeof v === 'string') return v.length > 200 ? `${JSON.stringify(v.slice(0, 200))}...` : JSON.stringify(v);
  if (typeof v === 'bigint') return String(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) {
    const a = /** @type {ArrayLike<unknown>} */ (v);
    const items = Array.from({ length: Math.min(a.length, 6) }, (_, i) =>
      typeof a[i] === 'object' ? '[...]' : typeof a[i] === 'string' ? JSON.stringify(a[i]) : String(a[i]),
    );
    return `[${items.join(', ')}${a.length > 6 ? `, ... ${a.length} items` : ''}]`;
  }
  return String(v);
}

/**
 * What a result hands over to the page rather than copying: a drawn heatmap's cells and pixels.
 * @param {unknown} result
 * @returns {Transferable[]}
 */
function transferOf(result) {
  const r = /** @type {Partial<HeatmapResult> | null | undefined} */ (result);
  return r?.cells ? [r.cells.buffer, r.bitmap ?? /** @type {Uint8ClampedArray} */ (r.rgba).buffer] : [];
}

// One operation at a time: each waits for the one before it (whatever its outcome).
let queue = Promise.resolve();
self.onmessage = (/** @type {MessageEvent<Request>} */ ev) => {
  const { id, op, ...args } = ev.data;
  // A new file or tensor supersedes any analysis still running (it stops at its next checkpoint).
  if (op === 'open' || op === 'analyze') generation++;
  const gen = generation;
  queue = queue.then(async () => {
    try {
      if (!isOp(op)) throw new Error(`unknown operation ${op}`);
      // The arguments are the page's (app.js sends each operation's own, see Ops).
      const run = /** @type {(args: object) => Promise<unknown>} */ (handlers[op]);
      const result = await run({ ...args, gen });
      /** @type {Reply} */
      const reply = { id, ok: true, result };
      self.postMessage(reply, { transfer: transferOf(result) });
    } catch (e) {
      const message =
        typeof e === 'object' && e !== null && 'message' in e && e.message ? String(e.message) : String(e);
      /** @type {Reply} */
      const reply = {
        id,
        ok: false,
        error: message,
        code: typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined,
        ...(typeof e === 'object' && e !== null && 'detail' in e ? { detail: e.detail } : {}),
      };
      self.postMessage(reply);
    }
  });
};
