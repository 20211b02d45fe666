// The demo page's main thread: UI only. Files are opened and analysed in worker.js.

import { valuesView } from './values-view.js';
import { tensorTree } from './tree.js';
import { viewerOpened, viewerClosed } from './viewer.js';
import { readLink, writeLink, sameFiles, SCALES } from './links.js';
import { shardNames, firstTensor } from './viewer-data.js';
import { fmtNum, heatmapFigure, histogramBars, markerBox, setMarker } from './draw.js';
import { $, el, nextFrame } from './dom.js';
import { worker, call, viewerCall, codeOf } from './rpc.js';
import { renderInspector } from './inspector.js';

/**
 * The worker's messages (worker.js).
 * @typedef {import('./worker.js').Source} Source
 * @typedef {import('./worker.js').OpenResult} OpenResult
 * @typedef {import('./worker.js').Geometry} Geometry
 * @typedef {import('./worker.js').AnalyzeResult} AnalyzeResult
 * @typedef {import('./worker.js').FloatAnalysis} FloatAnalysis
 * @typedef {import('./worker.js').PerMetric} PerMetric
 * @typedef {import('./worker.js').BlockResult} BlockResult
 * @typedef {import('./draw.js').Geo} Geo
 * @typedef {{ g: Geo, title: string }} MapView  a heatmap's geometry and title
 */

worker.onerror = (/** @type {ErrorEvent} */ ev) => showError(`worker failed: ${ev.message}`);

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
/**
 * Opens a file (or a split model's shards) and lists its tensors; first: analyse the first weight
 * tensor too (false when a link names the tensor to show).
 * full: download a URL whole (offered when its server cannot be read in pieces).
 * @param {Source} source @param {string} label @param {boolean} [first] @param {boolean} [full]
 */
async function openSource(source, label, first = true, full = false) {
  await task(full ? `downloading ${label}…` : `opening ${label}…`, async () => {
    try {
      const info = await call('open', { source, full });
      clearError();
      state.file = info;
      state.label = label;
      state.selected = null;
      state.analysis = null;
      $('#build').textContent = `wasm build: ${info.backend}`;
      $('#file-info').textContent =
        `${label}: GGUF v${info.version}, ${info.littleEndian ? 'little' : 'big'}-endian, ${info.tensors.length} tensors`;
      partialNote(info);
      const sources = [source].flat();
      linkUrls = sources.every((x) => typeof x === 'string') ? sources : [];
      linkFiles = sources.flatMap((x) => (typeof x === 'string' ? [] : [x.name]));
      lastOpenCode = '';
      pendingLink = null; // another file opened: the link that waited for its file is given up
      linkNote([]);
      // The Quantize panel offers the open model as its source (quantize-tab.js).
      document.dispatchEvent(new CustomEvent('bq-opened', { detail: { source, label } }));
    } catch (e) {
      // The worker has let the previous file go: show none, so nothing on the page disagrees with it.
      state.file = null;
      state.selected = null;
      state.analysis = null;
      $('#file-info').textContent = `${label}: not opened`;
      $('#partial').hidden = true;
      linkUrls = [];
      linkFiles = [];
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
      offerFullDownload(
        /** @type {{ detail?: import('./url-errors.js').UrlProblem }} */ (e).detail,
        source,
        label,
        first,
      );
      return;
    }
    renderList();
    $('#view').replaceChildren(el('p', { class: 'hint', text: 'Choose a tensor from the list.' }));
    await viewerOpened(viewerCall, el, label);
    $('#inspector').hidden = true;
    // The bundled sample is synthetic: the footer says so under it only.
    $('footer').hidden = label !== 'sample.gguf';
    if (!first) return;
    const t = firstTensor(state.file?.tensors ?? []);
    if (t) await analyse(t);
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
/**
 * After a URL whose server cannot be read in pieces failed to open: a button that downloads it
 * whole when its size is known and within the limit, else the reason the page does not.
 * @param {import('./url-errors.js').UrlProblem | undefined} p
 * @param {Source} source @param {string} label @param {boolean} first
 */
function offerFullDownload(p, source, label, first) {
  if (!p || (p.kind !== 'no-range' && p.kind !== 'no-validator')) return;
  const mb = (/** @type {number} */ n) => `${(n / 2 ** 20).toFixed(n < 10 * 2 ** 20 ? 1 : 0)} MB`;
  const box = $('#error');
  if (p.size !== null && p.size <= p.limit)
    box.append(
      ' ',
      el('button', {
        type: 'button',
        'data-testid': 'full-download',
        text: `Download the whole file (${mb(p.size)})`,
        onclick: () => openSource(source, label, first, true),
      }),
    );
  else
    box.append(
      el('span', {
        'data-testid': 'no-full-download',
        text:
          p.size === null
            ? ' The server does not say how large the file is, so the page does not download it whole; download it yourself and open it from disk.'
            : ` The whole file is ${mb(p.size)}, more than the ${mb(p.limit)} this page downloads at once (it is held in memory); download it yourself and open it from disk.`,
      }),
    );
}

/** Says so when the open file's data is cut short (a partial download): what arrived, what can be analysed. */
function partialNote(/** @type {OpenResult} */ info) {
  const n = $('#partial');
  const tr = info.truncated;
  n.hidden = !tr;
  if (!tr) return n.replaceChildren();
  const missing = info.tensors.filter((t) => t.unsupported.startsWith('data missing')).length;
  n.textContent =
    `Partial file: ${tr.size} of its ${tr.expected} bytes are here (${((100 * tr.size) / tr.expected).toFixed(1)}%). ` +
    `${info.tensors.length - missing} of ${info.tensors.length} tensors have all their data and can be analysed; ` +
    `the ${missing} others are marked “data missing” in the list.`;
  n.dataset.missing = String(missing);
}

function renderList() {
  tree.update(state.file?.tensors ?? [], state.selected ?? '', state.file);
  tree.filter(
    /** @type {HTMLInputElement} */ ($('#filter')).value,
    /** @type {HTMLSelectElement} */ ($('#sort')).value,
  );
}

async function selectTensor(/** @type {string} */ name) {
  await task(`analysing ${name}…`, () => analyse(name));
  // The analysed tensor in view: in one column (narrow windows) it is below the list and the panels.
  const h = document.querySelector('#view h2');
  if (state.selected === name && h) {
    const r = h.getBoundingClientRect();
    if (r.top < 0 || r.bottom > innerHeight) h.scrollIntoView({ block: 'start' });
  }
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
async function inspect(/** @type {number} */ block) {
  const name = state.selected;
  if (name === null) return; // no tensor analysed
  await task(`decoding block ${block}…`, async () => {
    try {
      await renderInspector(await call('block', { name, format: state.format, block }));
      setMarker(block); // a block opened by a link or a list is marked on the map too
      keepMarkerInView();
    } catch {
      // The worker lost the tensor (an analysis failed meanwhile): analyse it again, then retry once.
      try {
        await analyse(name);
        await renderInspector(await call('block', { name, format: state.format, block }));
        keepMarkerInView();
      } catch (e2) {
        showError(
          `Could not decode block ${block} of ${name}: ${/** @type {Error} */ (e2).message}. Choose the tensor again in the list.`,
        );
      }
    }
  });
}

/**
 * Where the inspector is a sheet over the bottom of the window (narrow windows), scrolls the page
 * so the marked block (else the heatmap's top) is above the sheet, never under it.
 */
function keepMarkerInView() {
  const ins = $('#inspector');
  if (ins.hidden || getComputedStyle(ins).position !== 'fixed') return;
  const hm = document.querySelector('[data-testid=heatmap]');
  const box = markerBox() ?? hm?.getBoundingClientRect();
  if (!box) return;
  const free = ins.getBoundingClientRect().top; // the sheet's top edge
  const margin = 8;
  if (box.top >= margin && box.bottom <= free - margin) return;
  window.scrollBy(0, box.top - Math.max(margin, (free - box.height) / 2));
}
document.addEventListener('bq-inspector-closed', () => syncLink());

// ---- files picked, deep links ----
/** The URLs of the open file (empty for a local file, which a link cannot name). */
let linkUrls = /** @type {string[]} */ ([]);
/** The names of the open local files (empty for a URL): a link names them so the page can ask again. */
let linkFiles = /** @type {string[]} */ ([]);
/** The error code of the last open that failed ('' after a success). */
let lastOpenCode = '';
/** A link that named local files: kept (and the address left as it is) until the user picks files. */
/** @type {import('./links.js').Link | null} */
let pendingLink = null;

/**
 * Opens a file by URL(s). One URL that the worker refuses as one shard of a split model (its own
 * split.count says so) opens again with every shard its name implies (name-00001-of-0000N.gguf):
 * a name alone never makes the page fetch other URLs.
 */
async function openUrls(/** @type {string[]} */ urls, /** @type {string} */ label, first = true) {
  await openSource(urls.length === 1 ? urls[0] : urls, label, first);
  const names = urls.length === 1 ? shardNames(urls[0]) : null;
  if (lastOpenCode === 'SPLIT' && names && names.length > 1) await openSource(names, label, first);
}

/**
 * Opens the picked files: one file, or every shard of a split model (sorted by name). When a link
 * asked for these files (by name), its tensor, format, scale and block are restored once they open.
 */
async function openFiles(/** @type {FileList | null | undefined} */ list) {
  const fs = [...(list ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  if (!fs.length) return;
  const link = pendingLink;
  pendingLink = null;
  const names = fs.map((f) => f.name);
  const ours = link !== null && sameFiles(link.files, names);
  await openSource(
    fs.length === 1 ? fs[0] : fs,
    fs.length === 1 ? fs[0].name : `${fs[0].name} (+${fs.length - 1} shards)`,
    !ours,
  );
  if (!link) return;
  if (ours) await followLink(link);
  else
    linkNote(
      [
        `You opened ${names.join(', ')}, not ${link.files.join(', ')}, the file this link was made for: its tensor, format and block were not restored.`,
      ],
      'info',
    );
}

/**
 * Writes what the page shows into its URL (links.js), once the page has settled; not while a link
 * waits for its local file (the address keeps what it asks for).
 */
function syncLink() {
  if (!linkStarted || pendingLink) return;
  const ins = $('#inspector');
  const here = new URL('./', location.href).href;
  writeLink({
    urls: linkUrls.map((u) => (u.startsWith(here) ? u.slice(here.length) : u)),
    files: state.file ? linkFiles : [],
    tensor: state.selected,
    format: state.analysis?.kind === 'float' ? state.format : null,
    scale: state.scale,
    block: state.selected && !ins.hidden && ins.dataset.block ? Number(ins.dataset.block) : null,
  });
}

/**
 * Shows what the page has to say about the link (#link-note): the parts it could not follow, or
 * that it waits for a file. Nothing to say hides it.
 * @param {string[]} lines
 * @param {'problem' | 'info'} kind
 */
function linkNote(lines, kind = 'problem') {
  const n = $('#link-note');
  n.dataset.kind = kind;
  n.replaceChildren(
    ...(kind === 'problem' && lines.length
      ? [el('strong', { text: 'Parts of this link could not be followed: ' })]
      : []),
    ...lines.map((t) => el('span', { class: 'link-part', 'data-testid': 'link-problem', text: t })),
  );
  n.hidden = lines.length === 0;
}

/**
 * Goes to the tensor, format, scale and block a link names, in the open file; each part that does
 * not exist there is reported on the page (#link-note) and left out.
 * @param {import('./links.js').Link} link
 */
async function followLink(link) {
  /** @type {string[]} */
  const problems = [];
  if (link.scale !== null) {
    if (SCALES.includes(link.scale)) state.scale = link.scale;
    else problems.push(`scale=${link.scale}: the colour scale is ${SCALES.join(' or ')}.`);
  }
  const file = state.file;
  if (!link.tensor || !file) {
    if (link.format) problems.push(`format=${link.format}: the link names no tensor to show in it.`);
    if (link.blockText !== null) problems.push(`block=${link.blockText}: the link names no tensor to inspect.`);
    linkNote(problems);
    return syncLink();
  }
  const t = file.tensors.find((x) => x.name === link.tensor);
  if (!t) {
    problems.push(`tensor=${link.tensor}: ${state.label} has no tensor of that name (it has ${file.tensors.length}).`);
    linkNote(problems);
    return syncLink();
  }
  if (link.format) state.format = link.format;
  await selectTensor(link.tensor);
  const a = state.analysis;
  if (state.selected !== link.tensor || !a) {
    problems.push(`tensor=${link.tensor}: it cannot be analysed (the page says why).`);
    linkNote(problems);
    return;
  }
  if (link.format && a.kind === 'float' && state.format !== link.format)
    problems.push(
      `format=${link.format}: ${link.tensor} is compared in ${a.formats.map((f) => f.format).join(', ')}; shown in ${state.format}.`,
    );
  else if (link.format && a.kind !== 'float')
    problems.push(
      `format=${link.format}: ${link.tensor} is stored as ${t.typeName}; only float tensors are shown in a chosen format.`,
    );
  if (link.blockText !== null) {
    const B =
      a.kind === 'float'
        ? a.formats.find((f) => f.format === state.format)?.blockSize
        : a.kind === 'quant'
          ? a.blockSize
          : 0;
    const blocks = B ? (a.rows * a.rowLen) / B : 0;
    if (!B) problems.push(`block=${link.blockText}: ${link.tensor} holds plain values, not blocks.`);
    else if (link.block === null) problems.push(`block=${link.blockText}: not a block number (0 … ${blocks - 1}).`);
    else if (link.block >= blocks)
      problems.push(
        `block=${link.block}: ${link.tensor} has ${blocks} blocks of ${B} values in ${state.format} (0 … ${blocks - 1}).`,
      );
    else {
      state.cursor = link.block;
      await inspect(link.block);
    }
  }
  linkNote(problems);
  syncLink();
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
  if (!urls.length && link.files.length) {
    // A local file: no link can open it. Ask for it by name; the rest follows when it is picked.
    linkStarted = true;
    pendingLink = link;
    const what = [
      link.tensor && `tensor ${link.tensor}`,
      link.format && `format ${link.format}`,
      link.blockText !== null && `block ${link.blockText}`,
    ].filter(Boolean);
    linkNote(
      [
        `This link is for ${link.files.join(', ')}, a file on the computer it was made on. Open it again (Open a GGUF file…)${what.length ? ` and the page goes to ${what.join(', ')}` : ''}.`,
      ],
      'info',
    );
    $('#view').replaceChildren(
      el('p', {
        class: 'hint',
        'data-testid': 'ask-file',
        text: `Waiting for ${link.files.join(', ')}: open it with “Open a GGUF file…” above.`,
      }),
    );
    return done();
  }
  if (!urls.length) {
    linkStarted = true;
    await openSource(new URL('./sample.gguf', location.href).href, 'sample.gguf', !link.tensor);
  } else {
    await openUrls(urls, link.urls[0], !link.tensor);
    linkStarted = true;
  }
  if (!state.file) return syncLink();
  await followLink(link);
}
// data-linked: the link has been followed (a hook for tests).
restoreLink().finally(() => (document.body.dataset.linked = 'true'));
