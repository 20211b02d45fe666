// The demo page's drawing: heatmaps (drawn in the worker by heatmap.js, only copied to a canvas
// here), their axes, hover readout, zoom, colour legend and block marker, and the histograms.
// Main thread only; nothing here touches more than one screenful of pixels.

import { CLIP, STOPS, foldFor } from './heatmap.js';

/**
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...(Node | string)} kids
 */
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};
/** A number for the page: 4 decimals between 0.01 and 1000, else exponent notation. */
export const fmtNum = (/** @type {number} */ v) =>
  Number.isFinite(v) ? (Math.abs(v) >= 0.01 && Math.abs(v) < 1000 ? v.toFixed(4) : v.toExponential(3)) : String(v);

/**
 * @typedef {{ rows: number, perRow: number, cellsPerBlock: number, blocksPerRow: number, per: number, B: number }} Geo
 * @typedef {{ W: number, H: number, x0: number, y0: number, sx: number, sy: number, zoom: number,
 *   cells: Float32Array, bitmap?: ImageBitmap, rgba?: Uint8ClampedArray, min: number, max: number,
 *   lo: number, hi: number, below: number, above: number, log: boolean }} Drawn
 *   (the pixels as an ImageBitmap drawn in the worker, or as RGBA bytes where workers lack OffscreenCanvas)
 * @typedef {{
 *   draw: (view: { zoom: number, cx: number, cy: number, log: boolean, fold: number }) => Promise<Drawn>,
 *   task: (text: string, fn: () => Promise<void>) => Promise<void>,
 *   inspect: (block: number) => void,
 *   cursor: () => number,
 *   setCursor: (block: number) => void,
 *   zoom: { level: number },
 *   log: boolean,
 *   markerShown: () => boolean,
 * }} HeatmapHost
 */

/** The figure on the page now, so a worst-block button can move its marker. */
/** @type {{ mark: (block: number) => void, release: () => void, box: () => DOMRect | null } | null} */
let shown = null;

/**
 * Where the shown heatmap's marked block is on the page (client coordinates), or null when no
 * heatmap is drawn or the block is outside its window.
 * @returns {DOMRect | null}
 */
export function markerBox() {
  return shown?.box() ?? null;
}

/**
 * Moves the shown heatmap's marker to a block (re-centring a zoomed map when the block is outside).
 * @param {number} block
 */
export function setMarker(block) {
  shown?.mark(block);
}

/**
 * A heatmap figure: the canvas, row and column axes, a hover readout, zoom buttons (and + / - keys)
 * and a legend naming the percentile clip. The pixels come from host.draw (the worker); the
 * figure is returned at once and filled in when they arrive. Clicking a cell, the arrow keys and
 * Enter inspect blocks through host.inspect.
 * @param {Geo} g
 * @param {string} title
 * @param {HeatmapHost} host
 * @returns {HTMLElement}
 */
export function heatmapFigure(g, title, host) {
  const canvas = /** @type {HTMLCanvasElement} */ (
    el('canvas', {
      'data-testid': 'heatmap',
      tabindex: '0',
      role: 'img',
      'aria-label': `${title} heatmap; arrow keys move, Enter inspects a block, + and - zoom`,
    })
  );
  const readout = el('output', { class: 'readout', 'data-testid': 'heatmap-readout', text: 'hover a cell' });
  const xAxis = el('div', { class: 'hm-x', 'aria-hidden': 'true' });
  const yAxis = el('div', { class: 'hm-y', 'aria-hidden': 'true' });
  const legend = el('div', { class: 'legend', 'data-testid': 'heatmap-legend' });
  const note = el('p', { class: 'note' });
  const zoomOut = el('button', { type: 'button', text: '−', 'aria-label': 'zoom out', 'data-testid': 'zoom-out' });
  const zoomIn = el('button', { type: 'button', text: '+', 'aria-label': 'zoom in', 'data-testid': 'zoom-in' });
  const zoomText = el('span', { class: 'note' });
  const fig = el(
    'figure',
    { class: 'heatmap' },
    el('figcaption', {}, title, ' ', el('span', { class: 'zoom' }, zoomOut, zoomText, zoomIn)),
    el('div', { class: 'hm-grid' }, el('span'), xAxis, yAxis, canvas),
    readout,
    legend,
    note,
  );
  /** @type {Drawn | null} */
  let d = null;
  /** @type {ImageBitmap | HTMLCanvasElement | null} */
  let pixels = null; // the drawn cells, one pixel each; scaled onto the canvas
  let cw = 1,
    ch = 1;
  let picked = false; // a block was chosen on this map: mark it
  let released = false; // another heatmap replaced this one
  const nBlocks = g.rows * g.blocksPerRow;
  // A tall map is wrapped into F columns of R rows (heatmap.js foldFor, foldGrid): display cell
  // (x, y) is map row floor(x / perRow) · R + y, cell x mod perRow.
  const F = foldFor(g.rows, g.perRow),
    R = Math.ceil(g.rows / F);
  // The block's first cell and its row, in display cells.
  const cellOf = (/** @type {number} */ b) => {
    const c = (b % g.blocksPerRow) * g.cellsPerBlock,
      r = Math.floor(b / g.blocksPerRow);
    return { c: Math.floor(r / R) * g.perRow + c, r: r % R };
  };
  const paint = () => {
    if (!d || !pixels) return;
    const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(pixels, 0, 0, d.W * cw, d.H * ch);
    delete canvas.dataset.marker;
    if (!picked && !host.markerShown()) return;
    const m = markerCells();
    if (!m) return;
    const { x0, x1, y0 } = m;
    // The marked cells in canvas pixels (x, y, width, height): tests measure it against the page.
    canvas.dataset.marker = `${x0 * cw},${y0 * ch},${(x1 - x0) * cw},${ch}`;
    ctx.lineWidth = 1;
    ctx.strokeStyle = '#fff';
    ctx.strokeRect(x0 * cw - 1.5, y0 * ch - 1.5, (x1 - x0) * cw + 3, ch + 3);
    ctx.strokeStyle = '#000';
    ctx.strokeRect(x0 * cw - 0.5, y0 * ch - 0.5, (x1 - x0) * cw + 1, ch + 1);
  };
  /** The drawn cells the cursor's block covers (x0 … x1 - 1 in row y0), or null outside the window. */
  const markerCells = () => {
    if (!d) return null;
    const { c, r } = cellOf(host.cursor());
    const x0 = Math.floor((c - d.x0) / d.sx),
      x1 = Math.floor((c + g.cellsPerBlock - 1 - d.x0) / d.sx) + 1,
      y0 = Math.floor((r - d.y0) / d.sy);
    return x1 <= 0 || x0 >= d.W || y0 < 0 || y0 >= d.H ? null : { x0, x1, y0 };
  };
  /** Asks the worker for the map around the cursor at the current zoom, then draws it. */
  const load = () =>
    host.task(`drawing ${title}…`, async () => {
      const { c, r } = cellOf(host.cursor());
      const got = await host.draw({ zoom: host.zoom.level, cx: c, cy: r, log: host.log, fold: F });
      if (released) return got.bitmap?.close(); // replaced while the worker drew
      d = got;
      host.zoom.level = got.zoom;
      cw = Math.max(1, Math.min(64, Math.floor(560 / got.W)));
      ch = Math.max(1, Math.min(8, Math.floor(420 / got.H)));
      canvas.width = got.W * cw;
      canvas.height = got.H * ch;
      canvas.dataset.cells = `${got.W}x${got.H}`;
      canvas.dataset.fold = String(F);
      canvas.dataset.window = `${got.x0},${got.y0},${got.sx},${got.sy}`;
      canvas.dataset.zoom = String(got.zoom);
      if (pixels && 'close' in pixels) pixels.close(); // the previous bitmap's memory, freed now
      pixels = got.bitmap ?? rgbaCanvas(/** @type {Uint8ClampedArray} */ (got.rgba), got.W, got.H);
      paint();
      axes();
      legendText();
      zoomText.textContent = got.zoom > 1 ? ` ×${got.zoom} ` : ' whole map ';
      /** @type {HTMLButtonElement} */ (zoomOut).disabled = got.zoom <= 1;
      /** @type {HTMLButtonElement} */ (zoomIn).disabled = got.sx === 1 && got.sy === 1 && got.W * got.H <= 4;
      const pooled = got.sx > 1 || got.sy > 1;
      const wrapped =
        F > 1
          ? `The ${g.rows} rows are wrapped into ${F} columns of ${R} rows (rows 0…${R - 1} on the left, then ${R}…${2 * R - 1}, …) so the map fills the panel. `
          : '';
      note.textContent =
        wrapped +
        (pooled
          ? `${g.rows} rows × ${g.perRow} cells: each drawn cell is the largest of ${got.sy} row${got.sy > 1 ? 's' : ''} × ${got.sx} cell${got.sx > 1 ? 's' : ''}, so no outlier is dropped; zoom in (+) to see single ${g.per === g.B ? 'blocks' : 'cells'}, click to inspect.`
          : `${g.rows} rows × ${g.perRow} ${g.per === g.B ? `blocks of ${g.B}` : `cells of ${g.per} values, ${g.cellsPerBlock} per block of ${g.B}`}; click a cell (or focus it and use the arrow keys) to inspect its block.`);
    });
  // Row and column numbers: five ticks on each axis, at the cells they name.
  const axes = () => {
    if (!d) return;
    const dd = d;
    const ticks = (/** @type {number} */ n, /** @type {number} */ s, /** @type {number} */ o) =>
      [...new Set([0, 0.25, 0.5, 0.75, 1].map((f) => Math.min(n - 1, Math.round(f * (n - 1)))))].map((i) => ({
        at: (i + 0.5) / n,
        label: String(o + i * s),
      }));
    // Wrapped: the x ticks name the first row of their column.
    const xTicks = ticks(dd.W, dd.sx, dd.x0).map((t) =>
      F > 1 ? { ...t, label: `r${Math.floor(Number(t.label) / g.perRow) * R}` } : t,
    );
    xAxis.replaceChildren(
      el('span', {
        class: 'hm-title',
        text:
          F > 1 ? `${F} columns of ${R} rows →` : g.per === g.B ? 'block in row →' : `cell (${g.per} values) in row →`,
      }),
      ...xTicks.map((t) => el('span', { style: `left:${t.at * 100}%`, text: t.label })),
    );
    yAxis.replaceChildren(
      el('span', { class: 'hm-title', text: F > 1 ? 'row in column ↓' : 'row ↓' }),
      ...ticks(dd.H, dd.sy, dd.y0).map((t) => el('span', { style: `top:${t.at * 100}%`, text: t.label })),
    );
  };
  const legendText = () => {
    if (!d) return;
    const clipped = d.below + d.above;
    legend.replaceChildren(
      el('span', { text: fmtNum(d.lo) }),
      ramp(),
      el('span', { text: fmtNum(d.hi) }),
      el('span', {
        class: 'note',
        text: `(${d.log ? 'log' : 'linear'}; colours span the ${CLIP[0]}th–${CLIP[1]}th percentile of the drawn cells, full range ${fmtNum(d.min)} … ${fmtNum(d.max)}${clipped ? `; ${d.below} below and ${d.above} above drawn at the ends` : ''})`,
      }),
    );
    legend.dataset.lo = String(d.lo);
    legend.dataset.hi = String(d.hi);
    legend.dataset.min = String(d.min);
    legend.dataset.max = String(d.max);
  };
  /** The drawn cell under a mouse event, or null outside the map. */
  const cellAt = (/** @type {MouseEvent} */ ev) => {
    if (!d) return null;
    const rect = canvas.getBoundingClientRect();
    const x = Math.floor(((ev.clientX - rect.left) / rect.width) * d.W),
      y = Math.floor(((ev.clientY - rect.top) / rect.height) * d.H);
    if (x < 0 || y < 0 || x >= d.W || y >= d.H) return null;
    const dx = Math.min(F * g.perRow - 1, d.x0 + x * d.sx),
      dy = Math.min(R - 1, d.y0 + y * d.sy);
    // Back from display cells to the map's row and cell (unwrapped).
    const c = dx % g.perRow,
      r = Math.floor(dx / g.perRow) * R + dy;
    if (r >= g.rows) return null; // past the last row, in the last column
    return { x, y, c, r, block: r * g.blocksPerRow + Math.floor(c / g.cellsPerBlock) };
  };
  canvas.addEventListener('mousemove', (ev) => {
    const p = cellAt(ev);
    if (!p || !d) return;
    const v = d.cells[p.y * d.W + p.x];
    const pooled = d.sx > 1 || d.sy > 1;
    const rows = d.sy > 1 ? `rows ${p.r}…${Math.min(g.rows, p.r + d.sy) - 1}` : `row ${p.r}`;
    const where =
      g.cellsPerBlock > 1
        ? `block ${Math.floor(p.c / g.cellsPerBlock)}, cell ${p.c % g.cellsPerBlock}${pooled ? ` (+${d.sx - 1} cells)` : ''}`
        : `block ${p.c}${d.sx > 1 ? `…${Math.min(g.perRow, p.c + d.sx) - 1}` : ''}`;
    readout.textContent = `${rows}, ${where}: ${pooled ? 'largest ' : ''}${fmtNum(v)}`;
    readout.dataset.row = String(p.r);
    readout.dataset.block = String(p.block);
    readout.dataset.value = String(v);
  });
  const pick = (/** @type {number} */ b) => {
    mark(b);
    host.inspect(b);
  };
  canvas.addEventListener('click', (ev) => {
    const p = cellAt(ev);
    if (p) pick(p.block);
  });
  const zoomBy = (/** @type {number} */ f) => {
    host.zoom.level = Math.max(1, host.zoom.level * f);
    load();
  };
  zoomIn.addEventListener('click', () => zoomBy(2));
  zoomOut.addEventListener('click', () => zoomBy(0.5));
  canvas.addEventListener('keydown', (ev) => {
    const sx = d ? d.sx : 1,
      sy = d ? d.sy : 1;
    /** @type {Record<string, number>} */
    const moves = {
      ArrowLeft: -Math.max(1, sx / g.cellsPerBlock),
      ArrowRight: Math.max(1, sx / g.cellsPerBlock),
      ArrowUp: -g.blocksPerRow * sy,
      ArrowDown: g.blocksPerRow * sy,
    };
    if (ev.key in moves) {
      ev.preventDefault();
      mark(Math.min(nBlocks - 1, Math.max(0, Math.round(host.cursor() + moves[ev.key]))));
      host.inspect(host.cursor());
    } else if (ev.key === 'Enter') host.inspect(host.cursor());
    else if (ev.key === '+' || ev.key === '=') zoomBy(2);
    else if (ev.key === '-') zoomBy(0.5);
  });
  /** Moves the marker; a zoomed map whose window does not hold the block is drawn around it. */
  const mark = (/** @type {number} */ b) => {
    host.setCursor(b);
    picked = true;
    if (!d) return;
    const { c, r } = cellOf(b);
    const inside = c >= d.x0 && c < d.x0 + d.W * d.sx && r >= d.y0 && r < d.y0 + d.H * d.sy;
    if (inside) paint();
    else load();
  };
  // One heatmap is shown at a time: the one this figure replaces lets its bitmap go now, not at a GC.
  shown?.release();
  shown = {
    mark,
    box: () => {
      const m = markerCells();
      if (!m || !canvas.isConnected || !canvas.width) return null;
      // The canvas may be drawn smaller than its pixels (max-width: 100%): scale to its box.
      const rect = canvas.getBoundingClientRect();
      const kx = rect.width / canvas.width,
        ky = rect.height / canvas.height;
      return new DOMRect(rect.left + m.x0 * cw * kx, rect.top + m.y0 * ch * ky, (m.x1 - m.x0) * cw * kx, ch * ky);
    },
    release: () => {
      released = true;
      if (pixels && 'close' in pixels) pixels.close();
      pixels = null;
    },
  };
  load();
  return fig;
}

/**
 * A canvas holding W x H RGBA pixels: for a worker that could not draw an ImageBitmap.
 * @param {Uint8ClampedArray} rgba
 * @param {number} W
 * @param {number} H
 */
function rgbaCanvas(rgba, W, H) {
  const c = /** @type {HTMLCanvasElement} */ (el('canvas', { width: String(W), height: String(H) }));
  /** @type {CanvasRenderingContext2D} */ (c.getContext('2d')).putImageData(
    new ImageData(/** @type {Uint8ClampedArray<ArrayBuffer>} */ (rgba), W, H),
    0,
    0,
  );
  return c;
}

/** The colour ramp for legends: a CSS gradient through the ramp's stops (no canvas to draw or free). */
function ramp() {
  const stops = STOPS.map(([r, g, b], i) => `rgb(${r},${g},${b}) ${(i / (STOPS.length - 1)) * 100}%`);
  return el('span', {
    class: 'ramp',
    'aria-hidden': 'true',
    style: `display:inline-block;width:160px;height:12px;background:linear-gradient(to right, ${stops.join(', ')})`,
  });
}

/**
 * A histogram as bars with a labelled count axis (0 and maxCount; pass the same maxCount to
 * histograms that should share their axes) and the x range under it. Hovering a bar shows its
 * count.
 * @param {number[]} counts
 * @param {string} caption the x axis (range and scale)
 * @param {{ width?: number, maxCount?: number, attrs?: Record<string, string> }} [o]
 */
export function histogramBars(counts, caption, o = {}) {
  const W = o.width ?? 480,
    H = 90,
    L = 34; // px for the count labels
  const c = /** @type {HTMLCanvasElement} */ (
    el('canvas', { width: String(W), height: String(H + 4), role: 'img', 'aria-label': caption })
  );
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  let max = o.maxCount ?? 0;
  for (const n of counts) if (n > max) max = n;
  max = Math.max(1, max);
  const bw = (W - L) / counts.length;
  ctx.fillStyle = '#2a5db0';
  ctx.beginPath(); // one path, one fill: cheaper than a fillRect per bar
  counts.forEach((n, i) => {
    const h = (n / max) * (H - 2);
    if (h > 0) ctx.rect(L + i * bw, H - h + 2, Math.max(1, bw - 1), h);
  });
  ctx.fill();
  ctx.fillStyle = '#555';
  ctx.font = '10px sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'top';
  ctx.fillText(String(max), L - 4, 2);
  ctx.textBaseline = 'bottom';
  ctx.fillText('0', L - 4, H + 2);
  ctx.fillRect(L - 2, 2, 1, H);
  const tip = el('span', { class: 'note bar-count' });
  c.addEventListener('mousemove', (ev) => {
    const rect = c.getBoundingClientRect();
    const i = Math.floor((((ev.clientX - rect.left) / rect.width) * W - L) / bw);
    tip.textContent = i >= 0 && i < counts.length ? ` bin ${i}: ${counts[i]}` : '';
  });
  return el(
    'figure',
    { ...(o.attrs ?? {}), 'data-max-count': String(max) },
    c,
    el('figcaption', { class: 'note', text: `${caption}; count axis 0 … ${max}` }, tip),
  );
}
