// The demo page's main thread: UI only. Files are opened and analysed in worker.js.

import { layoutText } from './layout.js';
import { valuesView } from './values-view.js';
import { blockFields } from '../js/types.js';
import { tensorTree } from './tree.js';
import { viewerOpened, viewerClosed } from './viewer.js';
import { readLink, writeLink } from './links.js';
import { shardNames } from './viewer-data.js';
import { fmtNum, heatmapFigure, histogramBars, setMarker } from './draw.js';
import { noteFor } from './notes.js';
import { byteDiagram, elementBytes, explainElement, fmt32 } from './formula.js';
import { encodeSection } from './encode-view.js';

/**
 * The worker's messages (worker.js).
 * @typedef {import('./worker.js').Ops} Ops
 * @typedef {import('./viewer-ops.js').ViewerOps} ViewerOps
 * @typedef {import('./worker.js').Reply} Reply
 * @typedef {import('./worker.js').Source} Source
 * @typedef {import('./worker.js').OpenResult} OpenResult
 * @typedef {import('./worker.js').Geometry} Geometry
 * @typedef {import('./worker.js').AnalyzeResult} AnalyzeResult
 * @typedef {import('./worker.js').FloatAnalysis} FloatAnalysis
 * @typedef {import('./worker.js').PerMetric} PerMetric
 * @typedef {import('./worker.js').BlockResult} BlockResult
 * @typedef {import('./draw.js').Geo} Geo
 * @typedef {{ g: Geo, title: string }} MapView  a heatmap's geometry and title
 * @typedef {{ a: Float32Array, b: Float32Array, aName: string, bName: string, diff: string }} Comparison
 *   what the inspector's comparison columns hold
 */

const $ = (/** @type {string} */ s) => /** @type {HTMLElement} */ (document.querySelector(s));
/**
 * An element with attributes (text: its text; a function: the listener of the event its key names
 * after 'on') and children.
 * @param {string} tag
 * @param {Record<string, string | EventListener>} [attrs]
 * @param {...(Node | string)} kids
 */
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};

// ---- worker RPC ----
// ?backend=simd128|scalar picks the wasm build (the worker reads it from its own URL).
const workerUrl = new URL('./worker.js', import.meta.url);
const askedBackend = new URLSearchParams(location.search).get('backend');
if (askedBackend) workerUrl.searchParams.set('backend', askedBackend);
const worker = new Worker(workerUrl, { type: 'module' });
let nextId = 1;
/** @type {Map<number, { resolve: (result: unknown) => void, reject: (error: Error) => void }>} */
const pending = new Map();
worker.onmessage = (/** @type {MessageEvent<Reply>} */ ev) => {
  const r = ev.data;
  const p = /** @type {NonNullable<ReturnType<typeof pending.get>>} */ (pending.get(r.id)); // every reply answers a call
  pending.delete(r.id);
  if (r.ok) p.resolve(r.result);
  else p.reject(Object.assign(new Error(r.error), { code: r.code }));
};
worker.onerror = (/** @type {ErrorEvent} */ ev) => showError(`worker failed: ${ev.message}`);
/**
 * Sends an operation to the worker; resolves with its result.
 * @param {string} op
 * @param {object} [args]
 * @returns {Promise<unknown>}
 */
const post = (op, args = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, ...args });
  });
/**
 * A tensor operation of the worker, with its arguments and result as worker.js's Ops types them.
 * @template {keyof Ops} K
 * @param {K} op
 * @param {Ops[K]['args']} args
 * @returns {Promise<Ops[K]['result']>}
 */
const call = (op, args) => /** @type {Promise<Ops[K]['result']>} */ (post(op, args));
/**
 * A model viewer operation of the worker (viewer-ops.js), typed as ViewerOps types it.
 * @template {keyof ViewerOps} K
 * @param {K} op
 * @param {ViewerOps[K]['args']} [args]
 * @returns {Promise<ViewerOps[K]['result']>}
 */
const viewerCall = (op, args) => /** @type {Promise<ViewerOps[K]['result']>} */ (post(op, args));

/** The code a worker error carries (see worker.js: 'cancelled', or openGGUF's such as 'SPLIT'). */
const codeOf = (/** @type {unknown} */ e) => (typeof e === 'object' && e !== null && 'code' in e ? e.code : undefined);

// ---- state ----
/**
 * @type {{ file: OpenResult | null, label: string, selected: string | null, analysis: AnalyzeResult | null,
 *   format: string, metric: string, scale: string, cursor: number }}
 */
const state = {
  file: null,
  label: '',
  selected: null,
  analysis: null,
  format: 'q4_0',
  metric: 'rmse',
  scale: 'linear',
  cursor: 0,
};

function busy(/** @type {string} */ text) {
  document.body.dataset.ready = 'false';
  $('#status').textContent = text;
}
function done() {
  syncLink();
  $('#status').textContent = '';
  document.body.dataset.ready = 'true';
}
function showError(/** @type {string} */ msg) {
  const e = $('#error');
  e.textContent = msg;
  e.hidden = false;
}
function clearError() {
  $('#error').hidden = true;
}

// Tasks may overlap (a tensor chosen while another is analysed): the page is ready when none runs.
let running = 0;
/**
 * Runs fn with the page marked busy (status text), showing what it throws.
 * @param {string} text
 * @param {() => Promise<unknown>} fn
 */
async function task(text, fn) {
  running++;
  busy(text);
  const slow = setTimeout(() => {
    $('#status').textContent = `${text} (still working…)`;
  }, 800);
  try {
    await fn();
  } catch (e) {
    showError(`${/** @type {Error} */ (e).message}. Reload the page if it keeps happening.`);
  } finally {
    clearTimeout(slow);
    if (--running === 0) done();
  }
}

// ---- opening files ----
/** @param {Source} source @param {string} label */
async function openSource(source, label) {
  await task(`opening ${label}…`, async () => {
    try {
      const info = await call('open', { source });
      clearError();
      state.file = info;
      state.label = label;
      state.selected = null;
      state.analysis = null;
      $('#build').textContent = `wasm build: ${info.backend}`;
      $('#file-info').textContent =
        `${label}: GGUF v${info.version}, ${info.littleEndian ? 'little' : 'big'}-endian, ${info.tensors.length} tensors`;
      const sources = [source].flat();
      linkUrls = sources.every((x) => typeof x === 'string') ? sources : [];
      lastOpenCode = '';
      // The Quantize panel offers the open model as its source (quantize-tab.js).
      document.dispatchEvent(new CustomEvent('bq-opened', { detail: { source, label } }));
    } catch (e) {
      // The worker has let the previous file go: show none, so nothing on the page disagrees with it.
      state.file = null;
      state.selected = null;
      state.analysis = null;
      $('#file-info').textContent = `${label}: not opened`;
      linkUrls = [];
      lastOpenCode = String(codeOf(e) ?? 'ERROR');
      document.dispatchEvent(new CustomEvent('bq-opened', { detail: null }));
      viewerClosed();
      renderList();
      $('#view').replaceChildren(
        el('p', { class: 'hint', text: 'No file is open. Open a GGUF file or the bundled sample.' }),
      );
      $('#inspector').hidden = true;
      showError(
        `Could not open ${label}: ${/** @type {Error} */ (e).message}. Choose another GGUF file, or open the bundled sample.`,
      );
      return;
    }
    renderList();
    $('#view').replaceChildren(el('p', { class: 'hint', text: 'Choose a tensor from the list.' }));
    await viewerOpened(viewerCall, el, label);
    $('#inspector').hidden = true;
    const first = state.file?.tensors.find((t) => !t.unsupported && ['f16', 'f32', 'bf16'].includes(t.typeName));
    if (first && first.dims.length > 1) await analyse(first.name);
  });
}

$('#file-input').addEventListener('change', (ev) => {
  openFiles(/** @type {HTMLInputElement} */ (ev.target).files);
});
$('#url-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = /** @type {HTMLInputElement} */ ($('#url')).value.trim();
  if (!u) return;
  let href;
  try {
    href = new URL(u, location.href).href;
  } catch {
    showError(`Could not open ${u}: it is not a URL. Enter an http(s) address of a GGUF file.`);
    return;
  }
  openUrls([href], u);
});
$('#sample').addEventListener('click', () => openSource(new URL('./sample.gguf', location.href).href, 'sample.gguf'));
// The Quantize panel (quantize-tab.js) hands its result over: { source: File, label }.
document.addEventListener('bq-open', (ev) => {
  const { source, label } = /** @type {CustomEvent<{ source: File, label: string }>} */ (ev).detail;
  openSource(source, label);
});
document.addEventListener('dragover', (ev) => {
  ev.preventDefault();
});
document.addEventListener('drop', (ev) => {
  ev.preventDefault();
  openFiles(ev.dataTransfer?.files);
});

// ---- tensor list ----
$('#filter').addEventListener('input', renderList);
$('#sort').addEventListener('change', renderList);

const tree = tensorTree(/** @type {HTMLTableElement} */ ($('#tensors')), (name) => selectTensor(name));
/** The tensor list (tree.js): grouped by layer, filtered and sorted by the controls above it. */
function renderList() {
  tree.update(state.file?.tensors ?? [], state.selected ?? '', state.file);
  tree.filter(
    /** @type {HTMLInputElement} */ ($('#filter')).value,
    /** @type {HTMLSelectElement} */ ($('#sort')).value,
  );
}

async function selectTensor(/** @type {string} */ name) {
  await task(`analysing ${name}…`, () => analyse(name));
}

let analyses = 0;
/** Analyses a tensor; the page switches to it only once the worker has, so the two always agree. */
async function analyse(/** @type {string} */ name) {
  const t = state.file?.tensors.find((x) => x.name === name);
  if (!t) return;
  if (t.unsupported) {
    clearError();
    state.selected = name;
    state.analysis = null;
    renderList();
    $('#inspector').hidden = true;
    $('#view').replaceChildren(
      el('h2', { text: `${name} (${t.typeName})` }),
      el('p', {
        class: 'note unsupported-note',
        'data-testid': 'unsupported',
        text: `This tensor cannot be analysed: ${t.unsupported}. Its name, type, shape and size are in the list; choose another tensor.`,
      }),
    );
    return;
  }
  // Only the latest request may change the view: an older one returns once abandoned or answered.
  const mine = ++analyses;
  try {
    const a = await call('analyze', { name });
    if (mine !== analyses) return;
    clearError();
    state.selected = name;
    state.analysis = a;
    state.cursor = 0;
    renderList();
    $('#inspector').hidden = true;
    await renderView();
  } catch (e) {
    if (mine !== analyses || codeOf(e) === 'cancelled') return;
    const still = state.selected ? ` The page still shows ${state.selected};` : '';
    showError(
      `Could not analyse ${name} in ${state.label}: ${/** @type {Error} */ (e).message}.${still} choose another tensor or file.`,
    );
    // The worker may have dropped the tensor it held: the shown view stays, its blocks re-analyse on click.
    renderList();
  }
}

// ---- views ----

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

/** Resolves in a new task after the next frame is drawn (or after 100 ms when no frame comes: a hidden tab). */
const nextFrame = () =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, 100);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(t);
        resolve(undefined);
      }, 0),
    );
  });

/** The float view on the page: its analysis and the parts a format, metric or scale toggle replaces. */
/** @type {{ a: FloatAnalysis, ctrl: HTMLElement, heat: HTMLElement, worstHead: HTMLElement, worst: HTMLElement } | null} */
let floatView = null;

function renderView() {
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
      summary,
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
    task,
    inspect,
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
        inspect(b);
        setMarker(b);
      });
      return li;
    }),
  );
}

// ---- block inspector ----
const hex = (/** @type {number} */ b) => b.toString(16).padStart(2, '0');
/** A number for a data attribute, keeping the sign of zero (String(-0) is "0"). */
const numAttr = (/** @type {number} */ v) => (Object.is(v, -0) ? '-0' : String(v));

async function inspect(/** @type {number} */ block) {
  const name = state.selected;
  if (name === null) return; // no tensor analysed
  await task(`decoding block ${block}…`, async () => {
    try {
      await renderInspector(await call('block', { name, format: state.format, block }));
    } catch {
      // The worker lost the tensor (an analysis failed meanwhile): analyse it again, then retry once.
      try {
        await analyse(name);
        await renderInspector(await call('block', { name, format: state.format, block }));
      } catch (e2) {
        showError(
          `Could not decode block ${block} of ${name}: ${/** @type {Error} */ (e2).message}. Choose the tensor again in the list.`,
        );
      }
    }
  });
}

/**
 * The block's fields as the design chapter draws them: one box per field in memory order, with
 * its byte offsets, size and kind over its bytes in hex (byteDiagram in formula.js).
 */
function byteDiagramView(/** @type {BlockResult} */ r) {
  const d = byteDiagram(r.format);
  if (!d) throw new Error(`the demo has no byte layout of ${r.format}`);
  const b = r.bytes;
  const bits = ((8 * d.size) / r.codes.length).toFixed(d.size % 4 ? 4 : 2).replace(/\.?0+$/, '');
  return el(
    'figure',
    { class: 'diagram', 'data-testid': 'byte-diagram', 'data-order': d.order, 'data-size': String(d.size) },
    el('figcaption', {
      text: `${d.order}: ${d.size} bytes for ${r.codes.length} values, ${bits} bits per value (multi-byte fields little-endian)`,
    }),
    el(
      'div',
      { class: 'diagram-row' },
      ...d.fields.map((f) =>
        el(
          'div',
          {
            class: `dfield f-${f.name}`,
            'data-testid': 'diagram-field',
            'data-name': f.name,
            'data-offset': String(f.offset),
            'data-size': String(f.size),
            style: `flex: ${Math.max(3, Math.sqrt(f.size)).toFixed(2)} 1 0`,
          },
          el('div', { class: 'doff', text: f.size > 1 ? `offset ${f.offset}…${f.end}` : `offset ${f.offset}` }),
          el('div', { class: 'dname', text: f.name }),
          el('div', { class: 'dsize', text: `${f.size} B, ${f.count > 1 ? `${f.count} × ` : ''}${f.kind}` }),
          el(
            'div',
            { class: 'dbytes' },
            ...Array.from(b.subarray(f.offset, f.offset + f.size), (x, i) =>
              el('span', { 'data-i': String(f.offset + i), title: `byte ${f.offset + i}`, text: hex(x) }),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * What the comparison columns hold: original and decoded values and their names.
 * @param {BlockResult} r
 * @returns {Comparison}
 */
function comparison(r) {
  if (!r.quantized)
    return { a: r.original, b: r.decoded, aName: 'original', bName: `${r.format} decoded`, diff: 'error' };
  if (r.reference)
    return {
      a: r.reference.values,
      b: r.decoded,
      aName: `original (${r.reference.name})`,
      bName: `${r.format} decoded`,
      diff: 'error',
    };
  return { a: r.decoded, b: r.recon, aName: `${r.format} decoded`, bName: 'Q8_0 re-quantized', diff: 'difference' };
}

/** Both value series of a block as one small SVG: a over b, element by element. */
function compareChart(/** @type {Comparison} */ c) {
  const n = c.a.length,
    W = 320,
    H = 90;
  let lo = Infinity,
    hi = -Infinity;
  for (const v of [...c.a, ...c.b]) if (Number.isFinite(v)) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
  if (!(hi > lo)) ((lo -= 1), (hi += 1));
  const y = (/** @type {number} */ v) =>
    Number.isFinite(v) ? (H - 4 - ((v - lo) / (hi - lo)) * (H - 8)).toFixed(1) : String(H / 2);
  const pts = (/** @type {ArrayLike<number>} */ vs) =>
    Array.from(vs, (v, i) => `${((i + 0.5) * (W / n)).toFixed(1)},${y(v)}`).join(' ');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'compare-chart');
  svg.setAttribute('data-testid', 'compare-chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${c.aName} (wide grey line) and ${c.bName} (blue) for elements 0 to ${n - 1}`);
  const line = (/** @type {ArrayLike<number>} */ vs, /** @type {string} */ cls) => {
    const p = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    p.setAttribute('points', pts(vs));
    p.setAttribute('class', cls);
    return p;
  };
  if (lo < 0 && hi > 0) {
    const z = document.createElementNS('http://www.w3.org/2000/svg', 'line');
    /** @type {[string, number | string][]} */
    const ends = [
      ['x1', 0],
      ['x2', W],
      ['y1', y(0)],
      ['y2', y(0)],
    ];
    for (const [k, v] of ends) z.setAttribute(k, String(v));
    z.setAttribute('class', 'zero');
    svg.append(z);
  }
  svg.append(line(c.a, 'a'), line(c.b, 'b'));
  return svg;
}

/** One element taken apart: its code from its bits, its sub-block, the formula with its numbers. */
/** @param {BlockResult} r @param {number} e @param {Comparison} c */
function elementDetail(r, e, c) {
  const ex = explainElement(r, e);
  const agrees = Object.is(ex.value, r.decoded[e]) || (Number.isNaN(ex.value) && Number.isNaN(r.decoded[e]));
  return el(
    'div',
    {
      class: 'element',
      'data-testid': 'element-detail',
      'data-e': String(e),
      'data-value': numAttr(ex.value),
      'data-filled': ex.filled,
      'data-result': ex.result,
    },
    el('h3', { text: `element ${e}${r.sub ? ` (sub-block ${ex.j})` : ''}: its code, built from its bits` }),
    el('ol', { class: 'steps' }, ...ex.steps.map((t) => el('li', { text: t }))),
    el('div', {
      class: 'formula filled',
      'data-testid': 'filled-formula',
      text: `${ex.symbolic}\n  = ${ex.filled}\n  = ${ex.result}`,
    }),
    el('p', {
      class: 'note',
      text:
        `${agrees ? 'The same float32 as' : 'Not the same as'} bq.dequantize's value for this element (${fmt32(r.decoded[e])}). ` +
        `${c.aName}: ${fmtNum(c.a[e])}; ${c.bName}: ${fmtNum(c.b[e])}; ${c.diff} ${fmtNum(c.a[e] - c.b[e])}.`,
    }),
  );
}

/** Bumped by each inspector render: a render still adding rows stops when a newer one starts. */
let inspectorRenders = 0;

/** A block byte by byte: its byte diagram, the sub-block table, one element explained, every element. */
async function renderInspector(/** @type {BlockResult} */ r) {
  const fields = blockFields(r.format) ?? [];
  const b = r.bytes;
  const ins = $('#inspector');
  const scalarHex = (/** @type {{ offset: number, size: number }} */ f) =>
    [...b.subarray(f.offset, f.offset + f.size)].reverse().map(hex).join('');
  for (const k of Object.keys(ins.dataset)) if (k !== 'testid') delete ins.dataset[k];
  ins.dataset.block = String(r.block);
  ins.dataset.format = r.format;
  if (r.reference) ins.dataset.reference = r.reference.name;
  for (const [n, v] of Object.entries(r.scalars)) ins.dataset[n] = numAttr(v);
  const unit = b.length > 64 ? 'super-block' : 'block';
  const subScale = r.subScale; // there with sc
  const subTable =
    r.sc && subScale
      ? el(
          'table',
          { class: 'subs', 'data-testid': 'sub-table' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ...[
                'j',
                'values',
                'sc_j',
                'from',
                ...(r.m ? ['m_j', 'from'] : []),
                r.scaleName,
                ...(r.m ? ['dmin · m_j'] : []),
              ].map((h) => el('th', { text: h })),
            ),
          ),
          el(
            'tbody',
            {},
            ...Array.from(r.sc, (s, j) =>
              el(
                'tr',
                {
                  'data-testid': 'sub-row',
                  'data-sc': String(s),
                  'data-scale': String(subScale[j]),
                  ...(r.m ? { 'data-m': String(r.m[j]) } : {}),
                },
                el('td', { text: String(j) }),
                el('td', { text: `${j * r.sub}…${(j + 1) * r.sub - 1}` }),
                el('td', { class: 'num', text: String(s) }),
                el('td', { class: 'where', text: r.scWhere[j] }),
                ...(r.m
                  ? [el('td', { class: 'num', text: String(r.m[j]) }), el('td', { class: 'where', text: r.mWhere[j] })]
                  : []),
                el('td', { class: 'num', text: fmtNum(subScale[j]) }),
                ...(r.m ? [el('td', { class: 'num', text: fmtNum(Math.fround(r.scalars.dmin * r.m[j])) })] : []),
              ),
            ),
          ),
        )
      : '';
  const c = comparison(r);
  let se = 0,
    maxAbs = 0;
  for (let e = 0; e < c.a.length; e++) {
    const d = c.a[e] - c.b[e];
    se += d * d;
    maxAbs = Math.max(maxAbs, Math.abs(d));
  }
  const heads = ['e', ...(r.sub ? ['j'] : []), 'bits', 'q', 'x from its numbers', c.aName, c.bName, c.diff];
  const n = r.codes.length;
  const detailBox = el('div', { class: 'element-box' });
  const pick = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'number',
      min: '0',
      max: String(n - 1),
      value: '0',
      id: 'element-pick',
      'data-testid': 'element-pick',
      'aria-label': 'element to explain',
    })
  );
  const diagram = byteDiagramView(r);
  const show = (/** @type {number} */ e) => {
    if (!Number.isInteger(e) || e < 0 || e >= n) return;
    pick.value = String(e);
    detailBox.replaceChildren(elementDetail(r, e, c));
    // The bytes this element's value is read from, marked in the diagram.
    for (const x of diagram.querySelectorAll('.dbytes .hl')) x.classList.remove('hl');
    for (const i of elementBytes(r.format, e) ?? []) diagram.querySelector(`[data-i="${i}"]`)?.classList.add('hl');
    diagram.dataset.element = String(e);
  };
  pick.addEventListener('input', () => show(Number(pick.value)));
  show(0);
  const row = (/** @type {number} */ e) => {
    const ex = explainElement(r, e, { steps: false });
    return el(
      'tr',
      {
        'data-testid': 'value-row',
        'data-e': String(e),
        'data-q': String(r.codes[e]),
        'data-fields': numAttr(r.fromFields[e]),
        'data-decoded': numAttr(r.decoded[e]),
        'data-filled': ex.filled,
        'data-a': numAttr(c.a[e]),
        'data-b': numAttr(c.b[e]),
      },
      el('td', { text: String(e) }),
      ...(r.sub ? [el('td', { text: String(Math.floor(e / r.sub)) })] : []),
      el('td', { class: 'where', text: r.where[e] }),
      el('td', { class: 'num', text: String(r.codes[e]) }),
      el('td', { class: 'num fx', text: `${ex.filled} = ${ex.result}` }),
      el('td', { class: 'num', text: fmtNum(c.a[e]) }),
      el('td', { class: 'num', text: fmtNum(c.b[e]) }),
      el('td', { class: 'num', text: fmtNum(c.a[e] - c.b[e]) }),
    );
  };
  const rows = (/** @type {number} */ from, /** @type {number} */ to) =>
    Array.from({ length: Math.min(to, n) - from }, (_, i) => row(from + i));
  // A super-block's 256 rows go in 64 at a time, one batch per frame, so no single task builds and
  // lays out the whole table; the page is ready once every row is in.
  const CHUNK = 64;
  const tbody = el('tbody', {}, ...rows(0, CHUNK));
  tbody.addEventListener('click', (ev) => {
    const tr = /** @type {HTMLElement} */ (ev.target).closest('tr');
    if (!tr?.dataset.e) return;
    show(Number(tr.dataset.e));
    detailBox.scrollIntoView({ block: 'nearest' });
  });
  ins.replaceChildren(
    el('h2', { text: `${unit} ${r.block} (${r.format}, ${b.length} bytes)` }),
    el('p', { class: 'note what', 'data-testid': 'format-note', text: noteFor(r.format) }),
    diagram,
    el(
      'dl',
      {},
      ...fields
        .filter((f) => f.name in r.scalars)
        .flatMap((f) => [
          el('dt', { text: `${f.name} (${f.kind})` }),
          el('dd', {
            'data-testid': `block-${f.name}`,
            'data-value': String(r.scalars[f.name]),
            text: `0x${scalarHex(f)} = ${r.scalars[f.name]}`,
          }),
        ]),
      ...fields
        .filter((f) => f.kind === 'u32')
        .flatMap((f) => [
          el('dt', { text: `${f.name} (bit 31 … bit 0)` }),
          el('dd', { text: parseInt(scalarHex(f), 16).toString(2).padStart(32, '0') }),
        ]),
    ),
    el('div', { class: 'formula', 'data-testid': 'formula', text: layoutText(r.format).join('\n') }),
    el(
      'p',
      { class: 'element-pick' },
      el('label', { for: 'element-pick', text: 'explain element ' }),
      pick,
      ' (or click a row below)',
    ),
    detailBox,
    subTable,
    encodeSection(r, /** @type {string} */ (state.selected), el, post), // encode-view.js
    el('h3', { text: 'side by side' }),
    el('p', {
      class: 'note',
      'data-testid': 'compare-note',
      'data-rmse': String(Math.sqrt(se / c.a.length)),
      text:
        `${c.aName} (wide grey line) and ${c.bName} (blue): RMSE over the ${unit} ${fmtNum(Math.sqrt(se / c.a.length))}, ` +
        `largest |${c.diff}| ${fmtNum(maxAbs)}.` +
        (r.quantized && !r.reference
          ? r.referenceError
            ? ` The float original ${r.referenceError}; the values are compared with their Q8_0 re-quantization instead.`
            : ' The file holds no float original of this tensor (a float tensor of the same shape named without the type tag), so its values are compared with their Q8_0 re-quantization, the ruler.'
          : r.reference
            ? ` The original is the file's float tensor ${r.reference.name}, the same shape under the name without the type tag.`
            : ''),
    }),
    compareChart(c),
    el(
      'div',
      { class: 'vals-box' },
      el('table', { class: 'vals' }, el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { text: h })))), tbody),
    ),
  );
  ins.hidden = false;
  const token = ++inspectorRenders;
  for (let from = CHUNK; from < n; from += CHUNK) {
    await nextFrame();
    if (token !== inspectorRenders) return; // a newer block replaced this one
    tbody.append(...rows(from, from + CHUNK));
  }
}

// Open the bundled sample at once.
// ---- files picked, deep links ----
/** The URLs of the open file (empty for a local file, which a link cannot name). */
let linkUrls = /** @type {string[]} */ ([]);
/** The error code of the last open that failed ('' after a success). */
let lastOpenCode = '';

/**
 * Opens a file by URL(s). One URL that the worker refuses as one shard of a split model (its own
 * split.count says so) opens again with every shard its name implies (name-00001-of-0000N.gguf):
 * a name alone never makes the page fetch other URLs.
 */
async function openUrls(/** @type {string[]} */ urls, /** @type {string} */ label) {
  await openSource(urls.length === 1 ? urls[0] : urls, label);
  const names = urls.length === 1 ? shardNames(urls[0]) : null;
  if (lastOpenCode === 'SPLIT' && names && names.length > 1) await openSource(names, label);
}

/** Opens the picked files: one file, or every shard of a split model (sorted by name). */
function openFiles(/** @type {FileList | null | undefined} */ list) {
  const fs = [...(list ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  if (fs.length === 1) openSource(fs[0], fs[0].name);
  else if (fs.length > 1) openSource(fs, `${fs[0].name} (+${fs.length - 1} shards)`);
}

/** Writes what the page shows into its URL (links.js), once the page has settled. */
function syncLink() {
  if (!linkStarted) return;
  const ins = $('#inspector');
  writeLink({
    urls: linkUrls.map((u) =>
      u.startsWith(new URL('./', location.href).href) ? u.slice(new URL('./', location.href).href.length) : u,
    ),
    tensor: state.selected,
    format: state.analysis?.kind === 'float' ? state.format : null,
    block: state.selected && !ins.hidden && ins.dataset.block ? Number(ins.dataset.block) : null,
  });
}

/** Opens what the page's URL names (else the bundled sample), then its tensor, format and block. */
let linkStarted = false;
async function restoreLink() {
  const link = readLink(location.href);
  /** @type {string[]} */
  let urls;
  try {
    urls = link.urls.map((u) => new URL(u, location.href).href);
  } catch {
    linkStarted = true;
    showError(`This link's url= (${link.urls.join(', ')}) is not a URL. Open a GGUF file or the bundled sample.`);
    return done();
  }
  if (!urls.length) {
    linkStarted = true;
    return openSource(new URL('./sample.gguf', location.href).href, 'sample.gguf');
  }
  await openUrls(urls, link.urls[0]);
  linkStarted = true;
  if (!link.tensor || !state.file) return syncLink();
  if (link.format) state.format = link.format;
  await selectTensor(link.tensor);
  if (link.block !== null && state.selected === link.tensor) {
    state.cursor = link.block;
    await inspect(link.block);
  }
}
// data-linked: the link has been followed (a hook for tests).
restoreLink().finally(() => (document.body.dataset.linked = 'true'));
