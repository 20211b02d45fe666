// The analysed tensor on the page: a float tensor's formats side by side (summary table, heatmap
// of per-block error, RMSE histograms, worst blocks), a quantized tensor's scales and codes (the
// Q8_0 ruler), or an integer tensor's values. Reads state.js; the page (app.js) hands it its task
// runner and block inspector.

import { valuesView } from './values-view.js';
import { fmtNum, heatmapFigure, histogramBars, setMarker } from './draw.js';
import { $, el, nextFrame } from './dom.js';
import { call } from './rpc.js';
import { state } from './state.js';

/**
 * @typedef {import('./worker.js').Geometry} Geometry
 * @typedef {import('./worker.js').FloatAnalysis} FloatAnalysis
 * @typedef {import('./worker.js').PerMetric} PerMetric
 * @typedef {import('./draw.js').Geo} Geo
 * @typedef {{ g: Geo, title: string }} MapView  a heatmap's geometry and title
 * @typedef {{ task: (text: string, fn: () => Promise<unknown>) => Promise<void>, inspect: (block: number) => Promise<void> }} ViewHooks
 */

/** The page's task runner and block inspector (setViewHooks). */
/** @type {ViewHooks} */
let hooks = {
  task: async (_t, fn) => void (await fn()),
  inspect: async () => {},
};

/** Connects the view to the page's task runner (busy status, errors) and block inspector. */
export function setViewHooks(/** @type {ViewHooks} */ h) {
  hooks = h;
}

/**
 * Heatmap geometry of maps whose cells are `per` values wide, for blocks of `B` values.
 * @param {Geometry} a @param {number} B @param {number} per
 * @returns {Geo}
 */
function geo(a, B, per) {
  return { rows: a.rows, perRow: a.rowLen / per, cellsPerBlock: B / per, blocksPerRow: a.rowLen / B, per, B };
}

/**
 * The per-format RMSE histograms of an analysis, built once (format and metric toggles reuse them):
 * one histogram per frame, so opening a tensor with many formats never makes one long task.
 * filled settles when all are drawn.
 */
/** @type {WeakMap<FloatAnalysis, { box: HTMLElement, filled: Promise<void> }>} */
const histogramsOf = new WeakMap();
function rmseHistograms(/** @type {FloatAnalysis} */ a) {
  let h = histogramsOf.get(a);
  if (!h) {
    const box = el('div', { class: 'multiples' });
    const filled = (async () => {
      for (const g of a.formats) {
        await nextFrame();
        box.append(
          histogramBars(
            g.hist.counts,
            `${g.format}: block RMSE ${fmtNum(g.hist.lo)} … ${fmtNum(g.hist.hi)}${g.hist.log ? ' (log bins)' : ''}`,
            {
              width: 220,
              maxCount: g.hist.maxCount,
              attrs: { 'data-testid': 'rmse-histogram', 'data-format': g.format },
            },
          ),
        );
      }
    })();
    h = { box, filled };
    histogramsOf.set(a, h);
  }
  return h;
}

/** The float view on the page: its analysis and the parts a format, metric or scale toggle replaces. */
/** @type {{ a: FloatAnalysis, ctrl: HTMLElement, heat: HTMLElement, worstHead: HTMLElement, worst: HTMLElement } | null} */
let floatView = null;

export function renderView() {
  const a = state.analysis,
    name = state.selected;
  if (!a || name === null) return; // no analysis shown
  const v = $('#view');
  if (a.kind === 'values') return v.replaceChildren(...valuesView(a, el, name));
  if (a.kind === 'float') {
    if (!a.formats.some((f) => f.format === state.format)) state.format = a.formats[0].format;
    const fmtSel = el(
      'select',
      { 'data-testid': 'format-select', id: 'format', 'aria-label': 'format' },
      ...a.formats.map((f) => el('option', { value: f.format, text: f.format })),
    );
    /** @type {HTMLSelectElement} */ (fmtSel).value = state.format;
    fmtSel.addEventListener('change', () => {
      state.format = /** @type {HTMLSelectElement} */ (fmtSel).value;
      $('#inspector').hidden = true;
      renderView();
    });
    const summary = el(
      'table',
      { class: 'summary' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['format', 'block', 'bits/weight', 'RMSE', 'max |error|', 'SNR (dB)', 'worst block RMSE'].map((h, i) =>
            el('th', { text: h, class: i ? 'num' : '' }),
          ),
        ),
      ),
      el(
        'tbody',
        {},
        ...a.formats.map((f) =>
          el(
            'tr',
            {
              'data-testid': 'summary-row',
              'data-format': f.format,
              'data-rmse': String(f.rmse),
              'data-max-abs': String(f.maxAbs),
              'data-snr': String(f.snr),
              'data-worst-rmse': String(f.worstRmse),
              'aria-selected': String(f.format === state.format),
            },
            el('td', { text: f.format }),
            el('td', { class: 'num', text: String(f.blockSize) }),
            el('td', { class: 'num', text: f.bits.toFixed(4).replace(/0+$/, '').replace(/\.$/, '') }),
            el('td', { class: 'num', text: fmtNum(f.rmse) }),
            el('td', { class: 'num', text: fmtNum(f.maxAbs) }),
            el('td', { class: 'num', text: f.snr.toFixed(2) }),
            el('td', { class: 'num', text: fmtNum(f.worstRmse) }),
          ),
        ),
      ),
    );
    const f = a.formats.find((x) => x.format === state.format) ?? a.formats[0]; // found: state.format is one of them
    const unit = f.blockSize === 256 ? 'super-block' : 'block';
    /** @type {Record<string, MapView>} */
    const maps = {
      rmse: { g: geo(a, f.blockSize, f.blockSize), title: `${unit} RMSE` },
      max: { g: geo(a, f.blockSize, f.blockSize), title: `${unit} max |error|` },
      ...(f.hasSub
        ? { sub: { g: geo(a, f.blockSize, f.subBlock), title: `sub-block (${f.subBlock} values) RMSE` } }
        : {}),
    };
    /** @type {[keyof PerMetric, string][]} */
    const opts = [
      ['rmse', `${unit} RMSE`],
      ['max', `${unit} max |error|`],
      ...(f.hasSub ? /** @type {[keyof PerMetric, string][]} */ ([['sub', 'sub-block RMSE']]) : []),
    ];
    const metric = pickMetric(opts);
    const map = maps[metric];
    const parts = {
      a,
      ctrl: el('div', { class: 'controls' }, el('label', {}, 'format ', fmtSel), metricControls(opts)),
      heat: heatmap(name, `${state.format}:${state.metric}`, map.g, `${map.title} of ${state.format}`),
      worstHead: el('h3', { text: `worst ${unit}s` }),
      worst: worstList(f.worstValues[metric], map.g, f.worst[metric]),
    };
    const hist = rmseHistograms(a);
    if (floatView?.a === a && floatView.heat.parentNode === v) {
      // A toggle on the shown analysis: replace only what changed, so the page is not laid out anew.
      for (const tr of v.querySelectorAll('[data-testid=summary-row]'))
        tr.setAttribute('aria-selected', String(/** @type {HTMLElement} */ (tr).dataset.format === state.format));
      for (const k of /** @type {const} */ (['ctrl', 'heat', 'worstHead', 'worst'])) floatView[k].replaceWith(parts[k]);
      floatView = parts;
      return hist.filled;
    }
    floatView = parts;
    v.replaceChildren(
      el('h2', { text: name }),
      partial(a),
      el('div', { class: 'summary-box' }, summary),
      parts.ctrl,
      parts.heat,
      el('h3', { text: 'distribution of block RMSE, per format (shared axes)' }),
      hist.box,
      parts.worstHead,
      parts.worst,
    );
    return hist.filled;
  } else {
    const ruler = a.ruler;
    const B = a.blockSize;
    const unit = B === 256 ? 'super-block' : 'block';
    /** @type {Record<string, MapView>} */
    const maps = {};
    /** @type {[string, string][]} */
    const opts = [];
    for (const n of a.fields) {
      maps[`f:${n}`] = { g: geo(a, B, B), title: `${n} per ${unit}` };
      opts.push([`f:${n}`, n]);
    }
    if (a.sc) {
      maps.sc = { g: geo(a, B, a.subBlock), title: `sub-block scale sc_j (${a.subBlock} values)` };
      opts.push(['sc', 'sub-block scales']);
    }
    if (a.m) {
      maps.m = { g: geo(a, B, a.subBlock), title: `sub-block min m_j (${a.subBlock} values)` };
      opts.push(['m', 'sub-block mins']);
    }
    maps.ruler = { g: geo(a, B, 32), title: 'Q8_0 ruler: RMSE per 32 values' };
    opts.push(['ruler', 'Q8_0 ruler RMSE']);
    const map = maps[pickMetric(opts)];
    v.replaceChildren(
      el('h2', { text: `${name} (${a.type})` }),
      partial(a),
      el('p', {
        class: 'note',
        'data-testid': 'ruler',
        'data-rmse': String(ruler.rmse),
        text: `Re-quantizing the decoded values to Q8_0 (the ruler): RMSE ${fmtNum(ruler.rmse)}, max |error| ${fmtNum(ruler.maxAbs)}, SNR ${ruler.snr.toFixed(2)} dB. An implementation bug in a format shows up as anomalous error against Q8_0.`,
      }),
      el('div', { class: 'controls' }, metricControls(opts)),
      heatmap(name, state.metric, map.g, map.title),
      el('h3', { text: 'code histogram' }),
      histogramBars(a.codes.counts, `q = ${a.codes.offset} … ${a.codes.offset + a.codes.counts.length - 1}`, {
        attrs: {
          'data-testid': 'code-histogram',
          'data-offset': String(a.codes.offset),
          'data-counts': a.codes.counts.join(','),
        },
      }),
      el('h3', { text: 'decoded value distribution' }),
      histogramBars(a.values.counts, `value ${fmtNum(a.values.lo)} … ${fmtNum(a.values.hi)}`),
      el('h3', { text: 'worst Q8_0 ruler blocks' }),
      worstList(ruler.worstValues, maps.ruler.g, ruler.worst),
    );
  }
}

/**
 * The current metric if it is one of opts, else the first (which becomes the current one).
 * @template {string} K
 * @param {[K, string][]} opts
 * @returns {K}
 */
function pickMetric(opts) {
  const k = (opts.find(([k]) => k === state.metric) ?? opts[0])[0];
  state.metric = k;
  return k;
}

/** A note when only the first rows of a very large tensor were analysed. */
function partial(/** @type {Geometry} */ a) {
  return a.rows < a.totalRows
    ? el('p', {
        class: 'note',
        text: `Large tensor: the numbers below cover its first ${a.rows} of ${a.totalRows} rows.`,
      })
    : '';
}

/** The heatmap's value and colour-scale selects; opts: [value, label] pairs. */
function metricControls(/** @type {[string, string][]} */ opts) {
  const metric = el(
    'select',
    { id: 'metric', 'data-testid': 'metric-select', 'aria-label': 'heatmap value' },
    ...opts.map(([value, text]) => el('option', { value, text })),
  );
  /** @type {HTMLSelectElement} */ (metric).value = state.metric;
  metric.addEventListener('change', () => {
    state.metric = /** @type {HTMLSelectElement} */ (metric).value;
    renderView();
  });
  const scale = el(
    'select',
    { id: 'scale', 'aria-label': 'colour scale' },
    el('option', { value: 'linear', text: 'linear' }),
    el('option', { value: 'log', text: 'log' }),
  );
  /** @type {HTMLSelectElement} */ (scale).value = state.scale;
  scale.addEventListener('change', () => {
    state.scale = /** @type {HTMLSelectElement} */ (scale).value;
    renderView();
  });
  return el('span', { class: 'controls' }, el('label', {}, 'show ', metric), el('label', {}, 'scale ', scale));
}

/** Zoom level of the heatmaps, kept while formats and metrics are toggled. */
const zoom = { level: 1, tensor: /** @type {string | null} */ (null) };

/**
 * A heatmap of one of the analysed tensor's maps (key: see the worker's heatmap op), drawn in the
 * worker; draw.js adds the axes, readout, zoom and marker. Clicking a cell inspects its block.
 * name: the analysed tensor.
 */
function heatmap(
  /** @type {string} */ name,
  /** @type {string} */ key,
  /** @type {Geo} */ g,
  /** @type {string} */ title,
) {
  if (zoom.tensor !== name) Object.assign(zoom, { level: 1, tensor: name }); // a new tensor starts whole
  return heatmapFigure(g, title, {
    draw: (view) => call('heatmap', { name, key, ...view }),
    task: (text, fn) => hooks.task(text, fn),
    inspect: (b) => hooks.inspect(b),
    cursor: () => state.cursor,
    setCursor: (b) => (state.cursor = b),
    zoom,
    log: state.scale === 'log',
    markerShown: () => !$('#inspector').hidden,
  });
}

/** The worst cells (indices computed in the worker), as buttons that inspect their blocks. */
/** @param {ArrayLike<number>} values @param {Geo} g @param {number[]} idx */
function worstList(values, g, idx) {
  return el(
    'ol',
    { class: 'worst' },
    ...idx.map((i, k) => {
      const r = Math.floor(i / g.perRow),
        b = r * g.blocksPerRow + Math.floor((i % g.perRow) / g.cellsPerBlock);
      const li = el(
        'li',
        {},
        el('button', {
          type: 'button',
          text: `block ${b} (row ${r}, block ${b % g.blocksPerRow}${g.cellsPerBlock > 1 ? `, cell ${i % g.perRow}` : ''}): ${fmtNum(values[k])}`,
        }),
      );
      /** @type {HTMLElement} */ (li.querySelector('button')).addEventListener('click', () => {
        state.cursor = b;
        hooks.inspect(b);
        setMarker(b);
      });
      return li;
    }),
  );
}
