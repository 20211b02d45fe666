// The demo page's main thread: UI only. Files are opened and analysed in worker.js.

import { FIELDS, FORMATS, blockCodes, blockQh, halfToFloat } from './metrics.js';

const $ = (s) => /** @type {HTMLElement} */ (document.querySelector(s));
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

// ---- worker RPC ----
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let nextId = 1;
const pending = new Map();
worker.onmessage = (ev) => {
  const { id, ok, result, error } = ev.data;
  const p = pending.get(id);
  pending.delete(id);
  if (ok) p.resolve(result);
  else p.reject(new Error(error));
};
worker.onerror = (ev) => showError(`worker failed: ${ev.message}`);
const call = (op, args = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, ...args });
  });

// ---- state ----
const state = {
  file: null,
  selected: null,
  analysis: null,
  format: 'q4_0',
  metric: 'rmse',
  scale: 'linear',
  cursor: 0,
};

function busy(text) {
  document.body.dataset.ready = 'false';
  $('#status').textContent = text;
}
function done() {
  $('#status').textContent = '';
  document.body.dataset.ready = 'true';
}
function showError(msg) {
  const e = $('#error');
  e.textContent = msg;
  e.hidden = false;
}
function clearError() {
  $('#error').hidden = true;
}

async function task(text, fn) {
  busy(text);
  const slow = setTimeout(() => {
    $('#status').textContent = `${text} (still working…)`;
  }, 800);
  try {
    await fn();
  } catch (e) {
    showError(/** @type {Error} */ (e).message);
  } finally {
    clearTimeout(slow);
    done();
  }
}

const fmtBytes = (n) =>
  n >= 1 << 30
    ? `${(n / 2 ** 30).toFixed(2)} GiB`
    : n >= 1 << 20
      ? `${(n / 2 ** 20).toFixed(2)} MiB`
      : n >= 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${n} B`;
const fmtNum = (v) =>
  Number.isFinite(v) ? (Math.abs(v) >= 0.01 && Math.abs(v) < 1000 ? v.toFixed(4) : v.toExponential(3)) : String(v);

// ---- opening files ----
async function openSource(source, label) {
  await task(`opening ${label}…`, async () => {
    const info = await call('open', { source });
    clearError();
    state.file = info;
    state.selected = null;
    $('#build').textContent = `wasm build: ${info.backend}`;
    $('#file-info').textContent =
      `${label}: GGUF v${info.version}, ${info.littleEndian ? 'little' : 'big'}-endian, ${info.tensors.length} tensors`;
    const dl = $('#meta dl');
    dl.replaceChildren(...info.kv.flatMap((e) => [el('dt', { text: e.key }), el('dd', { text: e.text })]));
    renderList();
    $('#view').replaceChildren(el('p', { class: 'hint', text: 'Choose a tensor from the list.' }));
    $('#inspector').hidden = true;
    const first = info.tensors.find((t) => t.typeName === 'f16' || t.typeName === 'f32' || t.typeName === 'bf16');
    if (first && first.dims.length > 1) await selectTensor(first.name);
  });
}

$('#file-input').addEventListener('change', (ev) => {
  const f = /** @type {HTMLInputElement} */ (ev.target).files?.[0];
  if (f) openSource(f, f.name);
});
$('#url-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = /** @type {HTMLInputElement} */ ($('#url')).value.trim();
  if (u) openSource(new URL(u, location.href).href, u);
});
$('#sample').addEventListener('click', () => openSource(new URL('./sample.gguf', location.href).href, 'sample.gguf'));
document.addEventListener('dragover', (ev) => {
  ev.preventDefault();
});
document.addEventListener('drop', (ev) => {
  ev.preventDefault();
  const f = ev.dataTransfer?.files?.[0];
  if (f) openSource(f, f.name);
});

// ---- tensor list ----
$('#filter').addEventListener('input', renderList);
$('#sort').addEventListener('change', renderList);

function renderList() {
  if (!state.file) return;
  const q = /** @type {HTMLInputElement} */ ($('#filter')).value.toLowerCase();
  const sort = /** @type {HTMLSelectElement} */ ($('#sort')).value;
  let ts = state.file.tensors.filter((t) => t.name.toLowerCase().includes(q));
  if (sort === 'name') ts = [...ts].sort((a, b) => a.name.localeCompare(b.name));
  if (sort === 'size') ts = [...ts].sort((a, b) => b.byteLength - a.byteLength);
  $('#tensors tbody').replaceChildren(
    ...ts.map((t) => {
      const row = el(
        'tr',
        {
          'data-testid': 'tensor-row',
          'data-name': t.name,
          tabindex: '0',
          'aria-selected': String(t.name === state.selected),
        },
        el('td', { text: t.name }),
        el('td', { text: t.typeName }),
        el('td', { text: `[${t.dims.join(', ')}]` }),
        el('td', { class: 'num', text: fmtBytes(t.byteLength) }),
      );
      row.addEventListener('click', () => selectTensor(t.name));
      row.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          selectTensor(t.name);
        }
        if (ev.key === 'ArrowDown') /** @type {HTMLElement | null} */ (row.nextElementSibling)?.focus();
        if (ev.key === 'ArrowUp') /** @type {HTMLElement | null} */ (row.previousElementSibling)?.focus();
      });
      return row;
    }),
  );
}

async function selectTensor(name) {
  await task(`analysing ${name}…`, async () => {
    state.selected = name;
    renderList();
    state.analysis = await call('analyze', { name });
    state.cursor = 0;
    $('#inspector').hidden = true;
    renderView();
  });
}

// ---- views ----
function renderView() {
  const a = state.analysis;
  const v = $('#view');
  if (a.kind === 'float') {
    const fmtSel = el(
      'select',
      { 'data-testid': 'format-select', id: 'format', 'aria-label': 'format' },
      ...FORMATS.map((f) => el('option', { value: f, text: f })),
    );
    /** @type {HTMLSelectElement} */ (fmtSel).value = state.format;
    fmtSel.addEventListener('change', () => {
      state.format = /** @type {HTMLSelectElement} */ (fmtSel).value;
      renderView();
    });
    const summary = el(
      'table',
      {},
      el(
        'thead',
        {},
        el('tr', {}, ...['format', 'bits/weight', 'RMSE', 'max |error|', 'SNR (dB)'].map((h) => el('th', { text: h }))),
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
            },
            el('td', { text: f.format }),
            el('td', { class: 'num', text: f.bits.toFixed(2) }),
            el('td', { class: 'num', text: fmtNum(f.rmse) }),
            el('td', { class: 'num', text: fmtNum(f.maxAbs) }),
            el('td', { class: 'num', text: f.snr.toFixed(2) }),
          ),
        ),
      ),
    );
    const f = a.formats.find((x) => x.format === state.format);
    const values = state.metric === 'rmse' ? f.rmseBlocks : f.maxBlocks;
    v.replaceChildren(
      el('h2', { text: state.selected }),
      partial(a),
      summary,
      el('div', { class: 'controls' }, el('label', {}, 'format ', fmtSel), metricControls()),
      heatmap(values, a, `${state.metric === 'rmse' ? 'block RMSE' : 'block max |error|'} of ${state.format}`),
      el('h3', { text: 'distribution of block RMSE, per format' }),
      el(
        'div',
        { class: 'multiples' },
        ...a.formats.map((g) =>
          bars(
            g.hist.counts,
            `${g.format}: ${fmtNum(g.hist.lo)} … ${fmtNum(g.hist.hi)}${g.hist.log ? ' (log bins)' : ''}`,
            220,
          ),
        ),
      ),
      el('h3', { text: 'worst blocks' }),
      worstList(values, a),
    );
  } else {
    const ruler = a.ruler;
    v.replaceChildren(
      el('h2', { text: `${state.selected} (${a.type})` }),
      partial(a),
      el('p', {
        class: 'note',
        text: `Re-quantizing the decoded values to Q8_0 (the ruler): RMSE ${fmtNum(ruler.rmse)}, max |error| ${fmtNum(ruler.maxAbs)}, SNR ${ruler.snr.toFixed(2)} dB. An implementation bug in a format shows up as anomalous error against Q8_0.`,
      }),
      el('div', { class: 'controls' }, metricControls(true)),
      heatmap(
        state.metric === 'm' && a.m ? a.m : state.metric === 'ruler' ? ruler.rmseBlocks : a.d.map(Math.abs),
        a,
        state.metric === 'm' && a.m
          ? 'block m'
          : state.metric === 'ruler'
            ? 'Q8_0 ruler: block RMSE'
            : 'block scale |d|',
      ),
      el('h3', { text: 'code histogram' }),
      bars(a.codes.counts, `codes ${a.codes.offset} … ${a.codes.offset + a.codes.counts.length - 1}`),
      el('h3', { text: 'decoded value distribution' }),
      bars(a.values.counts, `${fmtNum(a.values.lo)} … ${fmtNum(a.values.hi)}`),
    );
  }
}

/** A note when only the first rows of a very large tensor were analysed. */
function partial(a) {
  return a.rows < a.totalRows
    ? el('p', {
        class: 'note',
        text: `Large tensor: the numbers below cover its first ${a.rows} of ${a.totalRows} rows.`,
      })
    : '';
}

function metricControls(quant = false) {
  const metric = el(
    'select',
    { id: 'metric', 'aria-label': 'heatmap value' },
    ...(quant
      ? [
          el('option', { value: 'd', text: 'scale |d|' }),
          ...(state.analysis.m ? [el('option', { value: 'm', text: 'm' })] : []),
          el('option', { value: 'ruler', text: 'Q8_0 ruler RMSE' }),
        ]
      : [el('option', { value: 'rmse', text: 'RMSE' }), el('option', { value: 'max', text: 'max |error|' })]),
  );
  const valid = [...metric.querySelectorAll('option')].map((o) => o.getAttribute('value'));
  if (!valid.includes(state.metric)) state.metric = valid[0];
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

// A perceptual ramp (dark blue -> teal -> yellow).
const STOPS = [
  [48, 18, 59],
  [65, 105, 225],
  [30, 170, 150],
  [150, 210, 60],
  [250, 230, 40],
];
function colour(t) {
  if (!Number.isFinite(t)) return [160, 160, 160];
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x)),
    f = x - i;
  return STOPS[i].map((c, k) => Math.round(c + (STOPS[i + 1][k] - c) * f));
}

function heatmap(values, a, title) {
  const MAX = 384;
  const sx = Math.ceil(a.blocksPerRow / MAX),
    sy = Math.ceil(a.rows / MAX);
  const W = Math.ceil(a.blocksPerRow / sx),
    H = Math.ceil(a.rows / sy);
  const cw = Math.max(1, Math.min(24, Math.floor(560 / W))),
    ch = Math.max(1, Math.min(8, Math.floor(420 / H)));
  const canvas = /** @type {HTMLCanvasElement} */ (
    el('canvas', {
      'data-testid': 'heatmap',
      width: String(W * cw),
      height: String(H * ch),
      tabindex: '0',
      role: 'img',
      'aria-label': `${title} heatmap; arrow keys move, Enter inspects a block`,
    })
  );
  const tf = (v) => (state.scale === 'log' ? Math.log10(Math.max(v, 1e-30)) : v);
  let lo = Infinity,
    hi = -Infinity;
  for (let r = 0; r < a.rows; r += sy)
    for (let c = 0; c < a.blocksPerRow; c += sx) {
      const v = values[r * a.blocksPerRow + c];
      if (Number.isFinite(v) && (state.scale !== 'log' || v > 0)) {
        const t = tf(v);
        if (t < lo) lo = t;
        if (t > hi) hi = t;
      }
    }
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const img = ctx.createImageData(W * cw, H * ch);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const v = values[y * sy * a.blocksPerRow + x * sx];
      const [r, g, b] = colour(hi > lo ? (tf(v) - lo) / (hi - lo) : 0.5);
      for (let py = 0; py < ch; py++)
        for (let px = 0; px < cw; px++) {
          const o = ((y * ch + py) * W * cw + x * cw + px) * 4;
          img.data[o] = r;
          img.data[o + 1] = g;
          img.data[o + 2] = b;
          img.data[o + 3] = 255;
        }
    }
  ctx.putImageData(img, 0, 0);
  const blockAt = (x, y) => Math.min(a.rows - 1, y * sy) * a.blocksPerRow + Math.min(a.blocksPerRow - 1, x * sx);
  // Outline the inspected block's cell.
  const mark = () => {
    ctx.putImageData(img, 0, 0);
    const cx = Math.floor((state.cursor % a.blocksPerRow) / sx),
      cy = Math.floor(Math.floor(state.cursor / a.blocksPerRow) / sy);
    ctx.lineWidth = 1;
    ctx.strokeStyle = '#fff';
    ctx.strokeRect(cx * cw - 1.5, cy * ch - 1.5, cw + 3, ch + 3);
    ctx.strokeStyle = '#000';
    ctx.strokeRect(cx * cw - 0.5, cy * ch - 0.5, cw + 1, ch + 1);
  };
  if (!$('#inspector').hidden) mark();
  canvas.addEventListener('click', (ev) => {
    const rect = canvas.getBoundingClientRect();
    const x = Math.floor(((ev.clientX - rect.left) / rect.width) * W),
      y = Math.floor(((ev.clientY - rect.top) / rect.height) * H);
    state.cursor = blockAt(x, y);
    mark();
    inspect(state.cursor);
  });
  canvas.addEventListener('keydown', (ev) => {
    const bpr = a.blocksPerRow;
    const moves = { ArrowLeft: -sx, ArrowRight: sx, ArrowUp: -bpr * sy, ArrowDown: bpr * sy };
    if (ev.key in moves) {
      ev.preventDefault();
      state.cursor = Math.min(a.nBlocks - 1, Math.max(0, state.cursor + moves[ev.key]));
      mark();
      inspect(state.cursor);
    }
    if (ev.key === 'Enter') inspect(state.cursor);
  });
  const legend = el(
    'div',
    { class: 'legend' },
    el('span', { text: state.scale === 'log' ? `10^${lo.toFixed(2)}` : fmtNum(lo) }),
    ramp(),
    el('span', { text: state.scale === 'log' ? `10^${hi.toFixed(2)}` : fmtNum(hi) }),
    el('span', { class: 'note', text: `(${state.scale})` }),
  );
  const note =
    sx > 1 || sy > 1
      ? el('p', {
          class: 'note',
          text: `Large tensor: the heatmap shows every ${sy > 1 ? `${sy}th row` : 'row'} and every ${sx > 1 ? `${sx}th block` : 'block'} (${W}×${H} of ${a.blocksPerRow}×${a.rows}); click to inspect.`,
        })
      : el('p', {
          class: 'note',
          text: `${a.rows} rows × ${a.blocksPerRow} blocks of 32; click a cell (or focus it and use the arrow keys) to inspect a block.`,
        });
  return el('figure', {}, el('figcaption', { text: title }), canvas, legend, note);
}

function ramp() {
  const c = /** @type {HTMLCanvasElement} */ (el('canvas', { width: '160', height: '12', 'aria-hidden': 'true' }));
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  for (let x = 0; x < 160; x++) {
    const [r, g, b] = colour(x / 159);
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(x, 0, 1, 12);
  }
  return c;
}

function bars(counts, caption, W = 480) {
  const H = 90;
  const c = /** @type {HTMLCanvasElement} */ (
    el('canvas', { width: String(W), height: String(H), role: 'img', 'aria-label': caption })
  );
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  const max = Math.max(1, ...counts);
  const bw = W / counts.length;
  ctx.fillStyle = '#2a5db0';
  counts.forEach((n, i) => {
    const h = (n / max) * (H - 2);
    ctx.fillRect(i * bw, H - h, Math.max(1, bw - 1), h);
  });
  return el('figure', {}, c, el('figcaption', { class: 'note', text: caption }));
}

function worstList(values, a) {
  const idx = Array.from({ length: values.length }, (_, i) => i)
    .sort((x, y) => (values[y] || 0) - (values[x] || 0))
    .slice(0, 8);
  return el(
    'ol',
    { class: 'worst' },
    ...idx.map((b) => {
      const li = el(
        'li',
        {},
        el('button', {
          type: 'button',
          text: `block ${b} (row ${Math.floor(b / a.blocksPerRow)}, block ${b % a.blocksPerRow}): ${fmtNum(values[b])}`,
        }),
      );
      li.querySelector('button').addEventListener('click', () => {
        state.cursor = b;
        inspect(b);
      });
      return li;
    }),
  );
}

// ---- block inspector ----
const hex = (b) => b.toString(16).padStart(2, '0');

async function inspect(block) {
  await task(`decoding block ${block}…`, async () => {
    const r = await call('block', { name: state.selected, format: state.format, block });
    renderInspector(r);
  });
}

function renderInspector(r) {
  const fields = FIELDS[r.format];
  const b = r.bytes;
  const ins = $('#inspector');
  const get16 = (o) => b[o] | (b[o + 1] << 8);
  const d = halfToFloat(get16(0));
  const m = fields.some(([n]) => n === 'm') ? halfToFloat(get16(2)) : null;
  const s = r.format === 'q8_1' ? halfToFloat(get16(2)) : null;
  const qh = blockQh(r.format, b);
  const codes = blockCodes(r.format, b);
  const fieldOf = (i) => fields.find(([, o, n]) => i >= o && i < o + n)[0];
  const formula = {
    q4_0: `x = (q - 8) · d = (q - 8) · ${d}`,
    q4_1: `x = q · d + m = q · ${d} + ${m}`,
    q5_0: `x = (q - 16) · d = (q - 16) · ${d},  q = nibble | (bit j of qh) << 4`,
    q5_1: `x = q · d + m = q · ${d} + ${m},  q = nibble | (bit j of qh) << 4`,
    q8_0: `x = q · d = q · ${d}`,
    q8_1: `x = q · d = q · ${d}  (s = ${s} = d · Σq)`,
  }[r.format];
  ins.dataset.block = String(r.block);
  ins.dataset.d = String(d);
  ins.replaceChildren(
    el('h2', { text: `block ${r.block} (${r.format}, ${b.length} bytes)` }),
    el(
      'div',
      { class: 'bytes', 'aria-label': 'block bytes by field' },
      ...Array.from(b, (x, i) =>
        el('span', { class: `f-${fieldOf(i)}`, title: `byte ${i}: ${fieldOf(i)}`, text: hex(x) }),
      ),
    ),
    el('p', { class: 'note', text: 'd (orange), m / s (green), qh (purple), qs (blue); halves are little-endian.' }),
    el(
      'dl',
      {},
      el('dt', { text: 'd' }),
      el('dd', { 'data-testid': 'block-d', text: `0x${hex(b[1])}${hex(b[0])} = ${d}` }),
      ...(m !== null ? [el('dt', { text: 'm' }), el('dd', { text: `0x${hex(b[3])}${hex(b[2])} = ${m}` })] : []),
      ...(s !== null ? [el('dt', { text: 's' }), el('dd', { text: `0x${hex(b[3])}${hex(b[2])} = ${s}` })] : []),
      ...(qh !== null
        ? [el('dt', { text: 'qh (bit 31 … bit 0)' }), el('dd', { text: qh.toString(2).padStart(32, '0') })]
        : []),
    ),
    el('div', {
      class: 'formula',
      text: `${formula}\nelement j < 16: low nibble of qs[j]; element j ≥ 16: high nibble of qs[j - 16]`,
    }),
    el(
      'table',
      { class: 'vals' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...[
            'j',
            'q',
            r.quantized ? 'decoded' : 'original',
            r.quantized ? 'Q8_0 ruler' : 'reconstructed',
            'error',
          ].map((h) => el('th', { text: h })),
        ),
      ),
      el(
        'tbody',
        {},
        ...codes.map((q, j) =>
          el(
            'tr',
            {},
            el('td', { text: String(j) }),
            el('td', { text: String(q) }),
            el('td', { class: 'num', text: fmtNum(r.original[j]) }),
            el('td', { class: 'num', text: fmtNum(r.recon[j]) }),
            el('td', { class: 'num', text: fmtNum(r.original[j] - r.recon[j]) }),
          ),
        ),
      ),
    ),
  );
  ins.hidden = false;
}

// Open the bundled sample at once.
openSource(new URL('./sample.gguf', location.href).href, 'sample.gguf');
