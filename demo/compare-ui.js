// "Compare with…" (index.html's #compare, opened by the header button): a second file B (picked,
// dropped on the panel, or by URL), or A quantized in memory to an ftype, against the model open
// in the viewer (A, from app.js's 'bq-opened' event). compare-worker.js does the work; this file
// builds the DOM: progress and Cancel, the per-tensor table (RMSE, max |B - A|, SNR), the SNR by
// layer chart (one line per tensor role), the mismatched tensors, a tensor's B - A heatmap and,
// under a clicked cell, A's and B's blocks side by side with the cell's values.
// The link: compare=URL, compare=file:NAME (the page asks for the file again) or
// compare=quantize:FTYPE (links.js). #compare's data-state: idle, opening, running, done,
// cancelled, error.
import { FTYPES } from '../js/index.js';
import { blockFields, typeInfo } from '../js/types.js';
import { readLink, writeCompare } from './links.js';
import { fmtNum } from './draw.js';
import { snrByLayer } from './compare-math.js';
import { ENCODABLE, encode } from './encode-steps.js';

/**
 * @typedef {import('./compare-worker.js').Opened} Opened
 * @typedef {import('./compare-worker.js').Reply} Reply
 * @typedef {import('./compare-run.js').TensorError} TensorError
 * @typedef {import('./compare-run.js').Progress} Progress
 * @typedef {Awaited<ReturnType<typeof import('./compare-run.js').cellBlocks>>} CellBlocks
 * @typedef {import('./compare-worker.js').Source} Source
 */

/**
 * An element with attributes (text: its text; on...: a listener) and children.
 * @param {string} tag @param {Record<string, string | EventListener>} [attrs] @param {...(Node | string)} kids
 */
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  e.append(...kids);
  return e;
};
const SVG = 'http://www.w3.org/2000/svg';
/** @param {string} tag @param {Record<string, string>} attrs */
const svgEl = (tag, attrs) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};
const hex = (/** @type {number} */ b) => b.toString(16).padStart(2, '0');
const dB = (/** @type {number} */ v) => (Number.isFinite(v) ? v.toFixed(2) : v > 0 ? '∞ (equal)' : String(v));

// ---- the worker ----
const backend = new URLSearchParams(location.search).get('backend');
/** @type {Worker | null} */
let worker = null;
let nextId = 1;
/** @type {Map<number, { resolve: (r: any) => void, reject: (e: Error) => void, progress?: (p: Progress) => void }>} */
const pending = new Map();
/**
 * Sends a request to compare-worker.js; resolves with its result.
 * @param {Record<string, unknown>} msg @param {(p: Progress) => void} [progress] @returns {Promise<any>}
 */
function ask(msg, progress) {
  if (!worker) {
    const url = new URL('./compare-worker.js', import.meta.url);
    if (backend) url.searchParams.set('backend', backend);
    const w = new Worker(url, { type: 'module' });
    w.onmessage = (/** @type {MessageEvent<Reply>} */ ev) => {
      const r = ev.data;
      const p = pending.get(r.id);
      if (!p) return;
      if (r.kind === 'progress') return p.progress?.(r.progress);
      pending.delete(r.id);
      if (r.kind === 'done') p.resolve(r.result);
      else p.reject(Object.assign(new Error(r.error), { code: r.code }));
    };
    w.onerror = (ev) => {
      for (const p of pending.values()) p.reject(new Error(`the compare worker failed: ${ev.message}`));
      pending.clear();
    };
    worker = w;
  }
  const w = worker;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, progress });
    w.postMessage({ id, ...msg });
  });
}

// ---- the panel ----
const panel = /** @type {HTMLElement} */ (document.querySelector('#compare'));
const toggle = /** @type {HTMLElement} */ (document.querySelector('#compare-toggle'));
const fileIn = /** @type {HTMLInputElement} */ (
  el('input', { type: 'file', accept: '.gguf', multiple: '', id: 'cmp-file', 'data-testid': 'cmp-file' })
);
const urlIn = /** @type {HTMLInputElement} */ (
  el('input', {
    type: 'url',
    id: 'cmp-url',
    placeholder: "B's URL (HTTP Range)",
    'aria-label': 'URL of the file to compare with',
  })
);
const ftypeSel = /** @type {HTMLSelectElement} */ (
  el(
    'select',
    { id: 'cmp-ftype', 'data-testid': 'cmp-ftype' },
    ...Object.keys(FTYPES).map((n) => el('option', { value: n, text: n })),
  )
);
ftypeSel.value = 'Q4_K_M';
const imatIn = /** @type {HTMLInputElement} */ (
  el('input', { type: 'file', accept: '.gguf,.dat', id: 'cmp-imatrix', 'data-testid': 'cmp-imatrix' })
);
const quantBtn = el('button', { type: 'button', 'data-testid': 'cmp-quantize', text: 'Quantize A and compare' });
const cancelBtn = /** @type {HTMLButtonElement} */ (
  el('button', { type: 'button', 'data-testid': 'cmp-cancel', text: 'Cancel', disabled: '' })
);
const bar = /** @type {HTMLProgressElement} */ (
  el('progress', { 'data-testid': 'cmp-progress', 'aria-label': 'compare progress', hidden: '' })
);
const status = el('span', { role: 'status', 'data-testid': 'cmp-status', class: 'cmp-status' });
const errBox = el('div', { role: 'alert', 'data-testid': 'cmp-error', class: 'cmp-error', hidden: '' });
const aLine = el('p', { 'data-testid': 'cmp-a', class: 'note' });
const results = el('div', { class: 'cmp-results', 'data-testid': 'cmp-results' });
const detail = el('div', { class: 'cmp-detail', 'data-testid': 'cmp-detail' });
const urlForm = el(
  'form',
  { id: 'cmp-url-form', novalidate: '' }, // a relative URL (fx/b.gguf) is one too
  urlIn,
  el('button', { type: 'submit', text: 'Compare with URL' }),
);
panel.replaceChildren(
  el('h2', { id: 'compare-title', text: 'Compare with another file' }),
  el('p', {
    class: 'note',
    text: 'B against A, tensor by tensor (matched by name and shape): the same model at two quantizations, or a float model and a quantization of it. Read in this browser a few rows at a time; nothing is uploaded.',
  }),
  aLine,
  el(
    'div',
    { class: 'cmp-controls' },
    el('label', { class: 'button' }, 'B: a GGUF file…', fileIn),
    urlForm,
    el('span', { class: 'cmp-or', text: 'or' }),
    el('label', {}, 'A quantized to ', ftypeSel),
    el('label', { class: 'button' }, 'imatrix (optional)…', imatIn),
    quantBtn,
  ),
  el('div', { class: 'cmp-run' }, bar, cancelBtn, status),
  errBox,
  results,
  detail,
);
panel.setAttribute('aria-labelledby', 'compare-title');
panel.dataset.state = 'idle';

toggle.addEventListener('click', () => {
  const open = panel.hidden;
  panel.hidden = !open;
  toggle.setAttribute('aria-expanded', String(open));
  if (open) fileIn.focus();
});
const show = () => {
  panel.hidden = false;
  toggle.setAttribute('aria-expanded', 'true');
};

/** The model open in the viewer (A). @type {{ source: Source, label: string } | null} */
let viewed = null;
/** What the link asked to compare with, until the first model opens. */
let fromLink = readLink(location.href).compare;
/** Bumped by each compare started: an older one that returns leaves the page alone. */
let runs = 0;

document.addEventListener('bq-opened', (ev) => {
  const d = /** @type {CustomEvent<{ source: Source, label: string } | null>} */ (ev).detail;
  const changed = viewed?.source !== d?.source;
  viewed = d;
  aLine.textContent = d ? `A: ${d.label} (the model open in the viewer)` : 'A: open a model in the viewer first.';
  if (changed && panel.dataset.state !== 'idle') reset('A changed: choose what to compare it with again.');
  // The link's compare= waits for the first model that opens (a failed open keeps it for the next).
  if (!d || !fromLink) return;
  const link = fromLink;
  fromLink = null;
  followLink(link);
});
aLine.textContent = 'A: open a model in the viewer first.';

/** Starts what a compare= link names. @param {string} v */
function followLink(v) {
  show();
  if (v.startsWith('quantize:')) {
    const f = v.slice('quantize:'.length);
    if (!(f in FTYPES)) return fail(`This link's compare=${v} names no ftype llama-quantize knows.`);
    ftypeSel.value = f;
    return startQuantize();
  }
  if (v.startsWith('file:'))
    return note(`This link compares with the local file ${v.slice(5)}: choose it again above (B: a GGUF file…).`);
  let href;
  try {
    href = new URL(v, location.href).href;
  } catch {
    return fail(`This link's compare=${v} is not a URL.`);
  }
  startFile(href, v);
}

fileIn.addEventListener('change', () => {
  const fs = [...(fileIn.files ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  if (fs.length) startFile(fs.length === 1 ? fs[0] : fs, fs[0].name);
  fileIn.value = '';
});
urlForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = urlIn.value.trim();
  if (!u) return;
  let href;
  try {
    href = new URL(u, location.href).href;
  } catch {
    return fail(`${u} is not a URL: enter an http(s) address of a GGUF file.`);
  }
  startFile(href, u);
});
// A file dropped on the panel is B (the page's own drop handler, which opens A, never sees it).
panel.addEventListener('dragover', (ev) => {
  ev.preventDefault();
  ev.stopPropagation();
});
panel.addEventListener('drop', (ev) => {
  ev.preventDefault();
  ev.stopPropagation();
  const fs = [...(ev.dataTransfer?.files ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  if (fs.length) startFile(fs.length === 1 ? fs[0] : fs, fs[0].name);
});
quantBtn.addEventListener('click', () => startQuantize());
// Cancel: the page lets the compare go at once; the worker stops it (and a read in flight) too.
cancelBtn.addEventListener('click', () => {
  runs++;
  worker?.postMessage({ id: 0, op: 'cancel' });
  panel.dataset.state = 'cancelled';
  status.textContent = 'Cancelled: nothing of that compare is kept.';
  cancelBtn.disabled = true;
  bar.hidden = true;
  writeCompare(null);
});

function fail(/** @type {string} */ msg) {
  errBox.textContent = msg;
  errBox.hidden = false;
  panel.dataset.state = 'error';
}
function note(/** @type {string} */ msg) {
  status.textContent = msg;
}
function reset(/** @type {string} */ msg) {
  runs++;
  worker?.postMessage({ id: 0, op: 'cancel' });
  results.replaceChildren();
  detail.replaceChildren();
  errBox.hidden = true;
  bar.hidden = true;
  cancelBtn.disabled = true;
  status.textContent = msg;
  panel.dataset.state = 'idle';
  writeCompare(null);
}

/** B is a file (or a split model's shards) or a URL. @param {Source} b @param {string} label */
function startFile(b, label) {
  if (!viewed) return fail('Open a model in the viewer first: it is A, the file B is compared with.');
  const link = typeof b === 'string' ? label : `file:${label}`;
  run(() => ask({ op: 'open', a: viewed?.source, b }), label, link);
}
function startQuantize() {
  if (!viewed) return fail('Open a model in the viewer first: it is A, the model quantized in memory.');
  const ftype = ftypeSel.value;
  const imatrix = imatIn.files?.[0] ?? null;
  run(
    () => ask({ op: 'plan', a: viewed?.source, ftype, imatrix }),
    `A quantized to ${ftype}${imatrix ? ` with ${imatrix.name}` : ''} (in memory)`,
    `quantize:${ftype}`,
  );
}

/**
 * Opens (or plans) B, then compares every pair with progress; renders the results.
 * @param {() => Promise<Opened>} open @param {string} label @param {string} link
 */
async function run(open, label, link) {
  const mine = ++runs;
  panel.dataset.run = String(mine);
  errBox.hidden = true;
  results.replaceChildren();
  detail.replaceChildren();
  panel.dataset.state = 'opening';
  status.textContent = `opening ${label}…`;
  cancelBtn.disabled = false;
  bar.hidden = false;
  bar.removeAttribute('value');
  try {
    const o = await open();
    if (mine !== runs) return;
    panel.dataset.state = 'running';
    const t0 = performance.now();
    const got = /** @type {TensorError[]} */ (
      await ask({ op: 'run' }, (p) => {
        if (mine !== runs) return;
        bar.max = p.total;
        bar.value = p.values;
        const s = (performance.now() - t0) / 1000;
        const left = p.values ? (s * (p.total - p.values)) / p.values : 0;
        status.textContent = `${p.index + 1} of ${p.count}: ${p.tensor} (${((100 * p.values) / p.total).toFixed(0)} %, about ${left.toFixed(0)} s left)`;
      })
    );
    if (mine !== runs) return;
    status.textContent = `${label}: ${got.length} tensors compared, ${o.mismatched.length} not compared.`;
    renderResults(o, got, label);
    panel.dataset.state = 'done';
    writeCompare(link);
  } catch (e) {
    if (mine !== runs) return;
    const err = /** @type {Error & { code?: unknown }} */ (e);
    if (err.code === 'cancelled') {
      panel.dataset.state = 'cancelled';
      status.textContent = 'Cancelled: nothing of that compare is kept.';
    } else fail(`Could not compare with ${label}: ${err.message}`);
  } finally {
    if (mine === runs) {
      cancelBtn.disabled = true;
      bar.hidden = true;
    }
  }
}

// ---- results ----
/** @param {Opened} o @param {TensorError[]} got @param {string} label */
function renderResults(o, got, label) {
  const rows = got.map((r) =>
    el(
      'tr',
      {
        'data-testid': 'cmp-row',
        'data-name': r.name,
        'data-a-type': r.aType,
        'data-b-type': r.bType,
        'data-rmse': String(r.rmse),
        'data-max-abs': String(r.maxAbs),
        'data-snr': String(r.snr),
        'data-se': String(r.se),
        'data-signal': String(r.signal),
        'data-skipped': String(r.skipped),
      },
      el('td', {}, el('button', { type: 'button', class: 'linkish', text: r.name, onclick: () => openTensor(r) })),
      el('td', { text: `${r.aType} → ${r.bType}` }),
      el('td', { class: 'num', text: fmtNum(r.rmse) }),
      el('td', { class: 'num', text: fmtNum(r.maxAbs) }),
      el('td', { class: 'num', text: dB(r.snr) }),
    ),
  );
  const table = el(
    'table',
    { class: 'cmp-table', 'data-testid': 'cmp-table' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['tensor', 'A → B', 'RMSE', 'max |B − A|', 'SNR (dB)'].map((h, i) =>
          el('th', { text: h, class: i > 1 ? 'num' : '' }),
        ),
      ),
    ),
    el('tbody', {}, ...rows),
  );
  const skipped = got.reduce((s, r) => s + r.skipped, 0);
  results.replaceChildren(
    el('h3', { text: `B = ${label}` }),
    ...(o.plan
      ? [
          el('p', {
            class: 'note',
            text: `The recipe: ${o.plan.ftype}, ${o.plan.bitsPerWeight.toFixed(2)} bits/weight.${o.plan.warnings.length ? ` ${o.plan.warnings.join(' ')}` : ''}`,
          }),
        ]
      : []),
    ...(skipped
      ? [el('p', { class: 'note', text: `${skipped} values where A or B is NaN or Inf are left out of the sums.` })]
      : []),
    chart(got),
    el('div', { class: 'cmp-table-box' }, table),
    mismatchList(o.mismatched),
  );
}

/** SNR by layer: one line per tensor role, layers on x. @param {TensorError[]} got */
function chart(got) {
  const series = snrByLayer(got.filter((r) => Number.isFinite(r.snr)));
  const fig = el('figure', { class: 'cmp-chart', 'data-testid': 'cmp-chart' });
  if (!series.length) {
    fig.append(el('figcaption', { text: 'No tensor in a layer (blk.N.…) has a finite SNR to chart.' }));
    return fig;
  }
  const pts = series.flatMap((s) => s.points);
  const L0 = Math.min(...pts.map((p) => p.layer)),
    L1 = Math.max(...pts.map((p) => p.layer));
  let lo = Math.min(...pts.map((p) => p.snr)),
    hi = Math.max(...pts.map((p) => p.snr));
  if (hi - lo < 1) ((lo -= 0.5), (hi += 0.5));
  const W = 560,
    H = 200,
    m = { l: 44, r: 10, t: 10, b: 28 };
  const x = (/** @type {number} */ l) =>
    m.l + (L1 > L0 ? ((l - L0) / (L1 - L0)) * (W - m.l - m.r) : (W - m.l - m.r) / 2);
  const y = (/** @type {number} */ v) => m.t + (1 - (v - lo) / (hi - lo)) * (H - m.t - m.b);
  const svg = svgEl('svg', {
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': 'SNR in dB by layer, one line per tensor role',
  });
  for (const v of [lo, (lo + hi) / 2, hi]) {
    svg.append(
      svgEl('line', { x1: String(m.l), x2: String(W - m.r), y1: y(v).toFixed(1), y2: y(v).toFixed(1), class: 'grid' }),
    );
    const t = svgEl('text', { x: String(m.l - 4), y: (y(v) + 4).toFixed(1), 'text-anchor': 'end', class: 'tick' });
    t.textContent = v.toFixed(1);
    svg.append(t);
  }
  const step = Math.max(1, Math.ceil((L1 - L0 + 1) / 12));
  for (let l = L0; l <= L1; l += step) {
    const t = svgEl('text', { x: x(l).toFixed(1), y: String(H - 10), 'text-anchor': 'middle', class: 'tick' });
    t.textContent = String(l);
    svg.append(t);
  }
  const legend = el('ul', { class: 'cmp-legend' });
  series.forEach((s, i) => {
    const colour = `hsl(${(i * 137) % 360} 60% 42%)`;
    const line = svgEl('polyline', {
      points: s.points.map((p) => `${x(p.layer).toFixed(1)},${y(p.snr).toFixed(1)}`).join(' '),
      stroke: colour,
      fill: 'none',
      'stroke-width': '2',
      'data-role': s.role,
      'data-points': s.points.map((p) => `${p.layer}:${p.snr}`).join(' '),
    });
    svg.append(line);
    for (const p of s.points)
      svg.append(svgEl('circle', { cx: x(p.layer).toFixed(1), cy: y(p.snr).toFixed(1), r: '2.5', fill: colour }));
    legend.append(el('li', {}, el('span', { class: 'swatch', style: `background:${colour}` }), s.role));
  });
  fig.append(el('figcaption', { text: 'SNR (dB) of B against A by layer; higher is closer to A' }), svg, legend);
  return fig;
}

/** @param {import('./compare-math.js').Mismatch[]} list */
function mismatchList(list) {
  if (!list.length)
    return el('p', { class: 'note', 'data-testid': 'cmp-mismatches', text: 'Every tensor was compared.' });
  return el(
    'details',
    { class: 'cmp-mismatches', 'data-testid': 'cmp-mismatches', open: '' },
    el('summary', { text: `Not compared (${list.length})` }),
    el(
      'ul',
      {},
      ...list.map((m) =>
        el('li', {
          'data-testid': 'cmp-mismatch',
          'data-name': m.name,
          'data-why': m.why,
          text: `${m.name}: ${m.why}`,
        }),
      ),
    ),
  );
}

// ---- one tensor: its B - A heatmap and the blocks under a cell ----
/** @type {{ r: TensorError, metric: 'rmse' | 'max' | 'mean', cursor: number, zoom: number, geo: { rows: number, totalRows: number, rowLen: number, perRow: number, cell: number } } | null} */
let open = null;

/** @param {TensorError} r */
async function openTensor(r) {
  const mine = runs;
  panel.dataset.state = 'running';
  status.textContent = `mapping ${r.name}…`;
  try {
    const geo = await ask({ op: 'geometry', name: r.name });
    if (mine !== runs) return;
    open = { r, metric: 'rmse', cursor: 0, zoom: 1, geo };
    renderTensor();
    await drawMap();
    await inspectCell(0);
    status.textContent = '';
  } catch (e) {
    fail(`Could not map ${r.name}: ${/** @type {Error} */ (e).message}`);
    return;
  }
  panel.dataset.state = 'done';
}

const heat = { canvas: /** @type {HTMLCanvasElement | null} */ (null), d: /** @type {any} */ (null) };
const readout = el('output', { class: 'cmp-readout', 'data-testid': 'cmp-readout', text: 'hover a cell' });
const marker = el('div', { class: 'cmp-marker', 'aria-hidden': 'true', hidden: '' });

/** Zooms the heatmap by f around the current cell (the worker draws the window). @param {number} f */
function zoomBy(f) {
  if (!open) return;
  open.zoom = Math.max(1, Math.round(open.zoom * f));
  drawMap();
}
const blocksBox = el('div', { class: 'cmp-blocks-box' });

function renderTensor() {
  if (!open) return;
  const { r, geo } = open;
  const metric = /** @type {HTMLSelectElement} */ (
    el(
      'select',
      { 'data-testid': 'cmp-metric', 'aria-label': 'heatmap value' },
      el('option', { value: 'rmse', text: 'RMSE of B − A' }),
      el('option', { value: 'max', text: 'max |B − A|' }),
      el('option', { value: 'mean', text: 'mean B − A (bias)' }),
    )
  );
  metric.value = open.metric;
  metric.addEventListener('change', () => {
    if (!open) return;
    open.metric = /** @type {'rmse' | 'max' | 'mean'} */ (metric.value);
    drawMap();
  });
  const canvas = /** @type {HTMLCanvasElement} */ (
    el('canvas', {
      'data-testid': 'cmp-heatmap',
      tabindex: '0',
      role: 'img',
      'aria-label': `B − A of ${r.name} per cell of ${geo.cell} values; arrow keys move, Enter shows the blocks`,
    })
  );
  heat.canvas = canvas;
  canvas.addEventListener('mousemove', (ev) => {
    const c = cellAt(ev);
    const d = heat.d;
    if (c === null || !open || !d) return;
    const g = open.geo;
    const rect = canvas.getBoundingClientRect();
    const x = Math.floor(((ev.clientX - rect.left) / rect.width) * d.W),
      y = Math.floor(((ev.clientY - rect.top) / rect.height) * d.H);
    const pooled = d.sx > 1 || d.sy > 1 ? ` (largest of ${d.sy} × ${d.sx} cells)` : '';
    readout.textContent = `row ${Math.floor(c / g.perRow)}, cell ${c % g.perRow}: ${fmtNum(d.cells[y * d.W + x])}${pooled}`;
    readout.dataset.cell = String(c);
  });
  canvas.addEventListener('click', (ev) => {
    const c = cellAt(ev);
    if (c !== null) inspectCell(c);
  });
  canvas.addEventListener('keydown', (ev) => {
    if (!open) return;
    const g = open.geo;
    const moves = /** @type {Record<string, number>} */ ({
      ArrowLeft: -1,
      ArrowRight: 1,
      ArrowUp: -g.perRow,
      ArrowDown: g.perRow,
    });
    if (ev.key in moves) {
      ev.preventDefault();
      inspectCell(Math.min(g.rows * g.perRow - 1, Math.max(0, open.cursor + moves[ev.key])));
    } else if (ev.key === '+' || ev.key === '=') zoomBy(2);
    else if (ev.key === '-') zoomBy(0.5);
  });
  detail.replaceChildren(
    el('h3', { text: `${r.name}: B − A per cell of ${geo.cell} values (${r.aType} → ${r.bType})` }),
    ...(geo.rows < geo.totalRows
      ? [
          el('p', {
            class: 'note',
            text: `Large tensor: the map covers its first ${geo.rows} of ${geo.totalRows} rows.`,
          }),
        ]
      : []),
    el(
      'div',
      { class: 'controls' },
      el('label', {}, 'show ', metric),
      el('button', {
        type: 'button',
        'data-testid': 'cmp-zoom-in',
        'aria-label': 'zoom in',
        text: '+',
        onclick: () => zoomBy(2),
      }),
      el('button', {
        type: 'button',
        'data-testid': 'cmp-zoom-out',
        'aria-label': 'zoom out',
        text: '−',
        onclick: () => zoomBy(0.5),
      }),
      readout,
    ),
    el(
      'div',
      { class: 'cmp-heat', 'data-testid': 'cmp-heat' },
      canvas,
      el('p', { class: 'note', 'data-testid': 'cmp-legend' }),
      marker,
    ),
    blocksBox,
  );
}

/** The cell under a click on the heatmap, or null. @param {MouseEvent} ev */
function cellAt(ev) {
  const d = heat.d,
    c = heat.canvas;
  if (!d || !c || !open) return null;
  const rect = c.getBoundingClientRect();
  const x = Math.floor(((ev.clientX - rect.left) / rect.width) * d.W),
    y = Math.floor(((ev.clientY - rect.top) / rect.height) * d.H);
  if (x < 0 || y < 0 || x >= d.W || y >= d.H) return null;
  return (d.y0 + y * d.sy) * open.geo.perRow + d.x0 + x * d.sx;
}

async function drawMap() {
  if (!open || !heat.canvas) return;
  const g = open.geo;
  const d = await ask({
    op: 'heatmap',
    name: open.r.name,
    metric: open.metric,
    zoom: open.zoom,
    cx: open.cursor % g.perRow,
    cy: Math.floor(open.cursor / g.perRow),
  });
  open.zoom = d.zoom; // the worker caps it
  const c = heat.canvas;
  c.width = d.W;
  c.height = d.H;
  // Cells drawn at least a few pixels each, within 640 x 420 (and the panel's width).
  c.style.width = `${Math.min(640, Math.max(160, d.W * 16))}px`;
  c.style.height = `${Math.min(420, Math.max(60, d.H * 8))}px`;
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  if (d.bitmap) ctx.drawImage(d.bitmap, 0, 0);
  else ctx.putImageData(new ImageData(d.rgba, d.W, d.H), 0, 0);
  heat.d = d;
  c.dataset.cells = `${d.W}x${d.H}`;
  c.dataset.window = `${d.x0},${d.y0},${d.sx},${d.sy}`;
  c.dataset.zoom = String(d.zoom);
  const legend = /** @type {HTMLElement} */ (c.nextElementSibling);
  legend.textContent =
    `${open.metric === 'mean' ? 'mean B − A' : open.metric === 'max' ? 'max |B − A|' : 'RMSE of B − A'} per cell: colour from ${fmtNum(d.lo)} (dark) to ${fmtNum(d.hi)} (bright), percentile-clipped; range ${fmtNum(d.min)} … ${fmtNum(d.max)}.` +
    (d.sx > 1 || d.sy > 1 ? ` Each drawn cell is the largest of ${d.sy} × ${d.sx} cells.` : '');
  legend.dataset.lo = String(d.lo);
  legend.dataset.hi = String(d.hi);
  placeMarker();
}

/** The outline over the cursor's cell (over its pooled drawn cell when the map is pooled). */
function placeMarker() {
  const d = heat.d,
    c = heat.canvas;
  if (!open || !d || !c) return;
  const g = open.geo;
  const x = Math.floor(((open.cursor % g.perRow) - d.x0) / d.sx),
    y = Math.floor((Math.floor(open.cursor / g.perRow) - d.y0) / d.sy);
  const w = c.clientWidth / d.W,
    h = c.clientHeight / d.H;
  marker.hidden = x < 0 || y < 0 || x >= d.W || y >= d.H;
  marker.style.left = `${c.offsetLeft + x * w}px`;
  marker.style.top = `${c.offsetTop + y * h}px`;
  marker.style.width = `${Math.max(2, w)}px`;
  marker.style.height = `${Math.max(2, h)}px`;
}

/** A's and B's blocks under a cell, side by side. @param {number} cell @param {number} [within] */
async function inspectCell(cell, within = 0) {
  if (!open) return;
  open.cursor = cell;
  const d = heat.d,
    g = open.geo;
  const cx = cell % g.perRow,
    cy = Math.floor(cell / g.perRow);
  // A zoomed map follows the cursor out of its window.
  if (d && (cx < d.x0 || cx >= d.x0 + d.W * d.sx || cy < d.y0 || cy >= d.y0 + d.H * d.sy)) await drawMap();
  else placeMarker();
  const k = /** @type {CellBlocks} */ (await ask({ op: 'block', name: open.r.name, cell, within }));
  if (!open || open.r.name !== k.name) return;
  const pick = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'number',
      min: '0',
      max: String(k.cellSize - 1),
      value: String(within),
      'data-testid': 'cmp-element',
      'aria-label': 'element of the cell',
    })
  );
  pick.addEventListener('change', () => {
    const v = Number(pick.value);
    if (Number.isInteger(v) && v >= 0 && v < k.cellSize) inspectCell(cell, v);
  });
  const rowsOf = () => {
    const out = [];
    for (let i = 0; i < k.cellSize; i++) {
      const a = k.a.values[i],
        b = k.b.values[i];
      out.push(
        el(
          'tr',
          {
            'data-testid': 'cmp-value',
            'data-e': String(k.first + i),
            'data-a': String(a),
            'data-b': String(b),
            ...(i === within ? { class: 'sel' } : {}),
          },
          el('td', { text: String(k.first + i) }),
          el('td', { class: 'num', text: fmtNum(a) }),
          el('td', { class: 'num', text: fmtNum(b) }),
          el('td', { class: 'num', text: fmtNum(b - a) }),
        ),
      );
    }
    return out;
  };
  blocksBox.replaceChildren(
    el(
      'section',
      {
        class: 'cmp-blocks',
        'data-testid': 'cmp-blocks',
        'data-cell': String(cell),
        'data-element': String(k.element),
        'aria-label': 'the blocks of A and B under the cell',
      },
      el(
        'h4',
        {
          text: `cell ${cell} (row ${k.row}, elements ${k.first}…${k.first + k.cellSize - 1}); the blocks that hold element `,
        },
        pick,
      ),
      el('div', { class: 'cmp-pair' }, blockView('A', k.a, k.element), blockView('B', k.b, k.element)),
      encodeFromA(k),
      el(
        'div',
        { class: 'cmp-vals-box' },
        el(
          'table',
          { class: 'vals' },
          el(
            'thead',
            {},
            el('tr', {}, ...['e', `A (${k.a.type})`, `B (${k.b.type})`, 'B − A'].map((h) => el('th', { text: h }))),
          ),
          el('tbody', {}, ...rowsOf()),
        ),
      ),
    ),
  );
}

/**
 * One side's block: its type, index, the elements it covers and its bytes, field by field.
 * @param {'A' | 'B'} side @param {CellBlocks['a']} s @param {number} e
 */
function blockView(side, s, e) {
  const fields = blockFields(s.type) ?? [];
  const n = s.bytes.length;
  const span = fields.length
    ? fields.map((f) => ({ name: f.name, offset: f.offset, size: f.size }))
    : [{ name: s.type === 'f16' || s.type === 'bf16' || s.type === 'f32' ? 'value' : 'bytes', offset: 0, size: n }];
  const elems = typeInfo(s.type).blockSize;
  return el(
    'div',
    {
      class: 'cmp-block',
      'data-testid': 'cmp-block',
      'data-side': side.toLowerCase(),
      'data-type': s.type,
      'data-block': String(s.block),
      'data-bytes': [...s.bytes].map(hex).join(''),
    },
    el('h5', {
      text: `${side}: ${s.type} block ${s.block}, elements ${s.first}…${s.first + elems - 1}, ${n} bytes (holds element ${e})`,
    }),
    ...span.map((f) =>
      el(
        'div',
        { class: 'cmp-field' },
        el('span', { class: 'cmp-fname', text: `${f.name} @${f.offset}` }),
        el('code', { text: [...s.bytes.subarray(f.offset, f.offset + f.size)].map(hex).join(' ') }),
      ),
    ),
  );
}

/**
 * B's block encoded from A's values (when A is a float tensor and B's format is one encode-steps.js
 * teaches): the steps with this block's numbers, and whether they make B's bytes.
 * @param {CellBlocks} k
 */
function encodeFromA(k) {
  if (!['f32', 'f16', 'bf16'].includes(k.a.type) || !ENCODABLE.includes(k.b.type)) return '';
  const n = typeInfo(k.b.type).blockSize;
  const at = k.b.first - k.first;
  const e = encode(k.b.type, Float32Array.from(k.a.values.subarray(at, at + n)));
  const same = e.bytes.every((b, i) => b === k.b.bytes[i]);
  return el(
    'details',
    {
      class: 'encode',
      'data-testid': 'cmp-encode',
      'data-equal': String(same),
      'data-bytes': [...e.bytes].map(hex).join(''),
    },
    el('summary', { text: `encode: B's ${k.b.type} block ${k.b.block} from A's values, step by step` }),
    el('ol', { class: 'steps' }, ...e.steps.map((s) => el('li', { text: s }))),
    el('p', {
      class: 'note',
      text: same
        ? "These steps make B's block exactly: B was quantized from these values without an importance matrix."
        : "These steps make other bytes than B's block: B was quantized from other values (say the float original before A's rounding to F16) or with an importance matrix.",
    }),
  );
}
