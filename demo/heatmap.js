// Heatmap and histogram rendering for the demo, as plain functions over typed arrays: the worker
// runs them (so the page's main thread only copies finished pixels to a canvas), and tests can
// call them directly. No DOM, no Node built-ins.

/** A perceptual ramp (dark blue -> teal -> yellow), 0..1. */
export const STOPS = [
  [48, 18, 59],
  [65, 105, 225],
  [30, 170, 150],
  [150, 210, 60],
  [250, 230, 40],
];
/** The colour of cells with no value on the scale (NaN, or <= 0 on a log scale). */
export const GREY = [160, 160, 160];
/** Cells at most this many per side are drawn; larger maps are pooled (max of each group). */
export const MAX_CELLS = 384;
/** The colour scale runs between these percentiles of the drawn cells, so outliers do not flatten it. */
export const CLIP = [0.5, 99.5];

/**
 * How many columns a map of rows x perRow cells is wrapped into so it fills a panel wider than it
 * is tall (about 4:3) instead of a strip a few cells wide: 1 (not wrapped) unless the map is more
 * than 32 times taller than wide (a strip a panel cannot show at a readable width); then about
 * sqrt(4/3 · rows / perRow).
 * @param {number} rows
 * @param {number} perRow
 */
export function foldFor(rows, perRow) {
  if (!(rows > 32 * perRow)) return 1;
  return Math.max(1, Math.min(rows, Math.round(Math.sqrt(((4 / 3) * rows) / perRow))));
}

/**
 * A map wrapped into F columns: row r of the map goes to display row r mod ceil(rows / F), in
 * column floor(r / ceil(rows / F)) (each column perRow cells wide, left to right). Display cells
 * past the last row are NaN (drawn grey).
 * @param {ArrayLike<number>} values rows x perRow, row-major
 * @param {Grid} g
 * @param {number} F
 * @returns {{ values: Float32Array, rows: number, perRow: number }}
 */
export function foldGrid(values, g, F) {
  const R = Math.ceil(g.rows / F),
    W = F * g.perRow;
  const out = new Float32Array(R * W).fill(NaN);
  for (let r = 0; r < g.rows; r++) {
    const y = r % R,
      x0 = Math.floor(r / R) * g.perRow;
    for (let c = 0; c < g.perRow; c++) out[y * W + x0 + c] = values[r * g.perRow + c];
  }
  return { values: out, rows: R, perRow: W };
}

/**
 * The ramp's colour at t (clamped to 0..1); GREY for a non-finite t.
 * @param {number} t
 * @returns {number[]} [r, g, b], 0..255
 */
export function colour(t) {
  if (!Number.isFinite(t)) return GREY;
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x)),
    f = x - i;
  return STOPS[i].map((c, k) => Math.round(c + (STOPS[i + 1][k] - c) * f));
}

/**
 * The p-th percentile (0..100) of sorted values, the value at the nearest rank: always one
 * of the values, so a lone outlier is never averaged into a clip end (interpolating would put
 * 0.5% of the way to it into the scale's top and flatten every ordinary cell).
 * @param {Float64Array} sorted ascending, no NaN
 * @param {number} p
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const r = (p / 100) * (sorted.length - 1);
  return sorted[Math.round(r)];
}

/**
 * @typedef {{ rows: number, perRow: number }} Grid  a map of rows x perRow cells, row-major
 * @typedef {{ zoom?: number, cx?: number, cy?: number, log?: boolean, fold?: number }} View
 *   zoom: 1, 2, 4, ... (the window shows 1/zoom of each side); cx, cy: the cell to centre on;
 *   log: colour by log10 of the value (cells <= 0 grey); fold: the map wrapped into this many
 *   columns first (foldGrid; cx, cy are then display cells)
 */

/**
 * Renders a heatmap of `values` (g.rows x g.perRow cells): the window the view asks for, pooled to
 * at most MAX_CELLS per side (each drawn cell the largest finite value of its sx x sy group, so an
 * outlier block is never dropped), coloured between the CLIP percentiles of the drawn cells (values
 * outside drawn at the ramp's ends and counted).
 * @param {ArrayLike<number>} values
 * @param {Grid} g
 * @param {View} [view]
 * @returns {{ W: number, H: number, x0: number, y0: number, sx: number, sy: number, zoom: number,
 *   cells: Float32Array, rgba: Uint8ClampedArray, min: number, max: number, lo: number, hi: number,
 *   below: number, above: number, log: boolean }}
 *   cells: the drawn values (W x H, row-major); rgba: W x H pixels; x0, y0: the window's first cell;
 *   min, max: the drawn cells' range; lo, hi: the colour scale's ends (in value units, not log).
 *   New arrays the caller owns.
 * @throws {RangeError} when values is shorter than the grid
 */
export function renderHeatmap(values, g, view = {}) {
  if (values.length < g.rows * g.perRow)
    throw new RangeError(`heatmap: ${values.length} values for ${g.rows}x${g.perRow} cells`);
  const log = !!view.log;
  // The window: 1/zoom of each side (at least one cell), centred on (cx, cy) and kept inside.
  const maxZoom = Math.max(1, Math.min(g.perRow, g.rows));
  const zoom = Math.min(maxZoom, Math.max(1, Math.floor(view.zoom ?? 1)));
  const ww = Math.max(1, Math.ceil(g.perRow / zoom)),
    wh = Math.max(1, Math.ceil(g.rows / zoom));
  const clampTo = (/** @type {number} */ v, /** @type {number} */ n) => Math.min(Math.max(0, v), n);
  const x0 = clampTo(Math.round((view.cx ?? g.perRow / 2) - ww / 2), g.perRow - ww),
    y0 = clampTo(Math.round((view.cy ?? g.rows / 2) - wh / 2), g.rows - wh);
  const sx = Math.ceil(ww / MAX_CELLS),
    sy = Math.ceil(wh / MAX_CELLS);
  const W = Math.ceil(ww / sx),
    H = Math.ceil(wh / sy);
  const cells = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let m = NaN;
      for (let r = y0 + y * sy, re = Math.min(y0 + wh, r + sy); r < re; r++)
        for (let c = x0 + x * sx, ce = Math.min(x0 + ww, c + sx), o = r * g.perRow; c < ce; c++) {
          const v = values[o + c];
          if (Number.isFinite(v) && !(v <= m)) m = v;
        }
      cells[y * W + x] = m;
    }
  // The scale: percentiles of the cells that have a place on it.
  const onScale = (/** @type {number} */ v) => Number.isFinite(v) && (!log || v > 0);
  let n = 0;
  for (let i = 0; i < cells.length; i++) if (onScale(cells[i])) n++;
  const sorted = new Float64Array(n);
  for (let i = 0, k = 0; i < cells.length; i++) if (onScale(cells[i])) sorted[k++] = cells[i];
  sorted.sort();
  const min = n ? sorted[0] : NaN,
    max = n ? sorted[n - 1] : NaN;
  const lo = percentile(sorted, CLIP[0]),
    hi = percentile(sorted, CLIP[1]);
  const tf = (/** @type {number} */ v) => (log ? Math.log10(v) : v);
  const a = tf(lo),
    b = tf(hi);
  const rgba = new Uint8ClampedArray(W * H * 4);
  let below = 0,
    above = 0;
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    let rgb = GREY;
    if (onScale(v)) {
      if (v < lo) below++;
      else if (v > hi) above++;
      rgb = colour(b > a ? (tf(v) - a) / (b - a) : 0.5);
    }
    rgba[i * 4] = rgb[0];
    rgba[i * 4 + 1] = rgb[1];
    rgba[i * 4 + 2] = rgb[2];
    rgba[i * 4 + 3] = 255;
  }
  return { W, H, x0, y0, sx, sy, zoom, cells, rgba, min, max, lo, hi, below, above, log };
}

/**
 * Histograms of several value sets over one shared set of bins (between the smallest and largest
 * finite value of them all; log-spaced when log and every value is positive), so they can be
 * drawn on the same axes. Returns the counts per set and the largest count of any bin.
 * @param {ArrayLike<number>[]} sets
 * @param {number} bins
 * @param {boolean} log
 * @returns {{ lo: number, hi: number, log: boolean, counts: number[][], maxCount: number }}
 */
export function sharedHistograms(sets, bins, log) {
  let lo = Infinity,
    hi = -Infinity;
  for (const v of sets)
    for (let i = 0; i < v.length; i++) {
      const a = v[i];
      if (Number.isFinite(a)) {
        if (a < lo) lo = a;
        if (a > hi) hi = a;
      }
    }
  if (!(lo <= hi)) return { lo: 0, hi: 0, log: false, counts: sets.map(() => new Array(bins).fill(0)), maxCount: 0 };
  const useLog = log && lo > 0;
  const f = (/** @type {number} */ a) => (useLog ? Math.log10(a) : a);
  const a0 = f(lo),
    a1 = f(hi);
  let maxCount = 0;
  const counts = sets.map((v) => {
    const c = new Array(bins).fill(0);
    for (let i = 0; i < v.length; i++) {
      if (!Number.isFinite(v[i])) continue;
      const k = a1 > a0 ? Math.min(bins - 1, Math.floor(((f(v[i]) - a0) / (a1 - a0)) * bins)) : 0;
      c[k]++;
    }
    for (const n of c) if (n > maxCount) maxCount = n;
    return c;
  });
  return { lo, hi, log: useLog, counts, maxCount };
}
