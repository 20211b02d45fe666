// The Quantize panel (index.html's #quantize, opened by the header's "Quantize a model…"): pick an
// F32/F16/BF16 GGUF (file or URL) and an ftype (llama-quantize's names), optionally an importance
// matrix; the plan is shown before anything starts; Start runs quantizeModel in a worker
// (quantize-worker.js) with a progress bar, an ETA and Cancel. The result is saved through
// showSaveFilePicker where the browser has one, else into the origin private file system (OPFS)
// and offered as a download; "Open in viewer" opens it in the page's viewer (app.js listens for
// the 'bq-open' event). Nothing is uploaded.
// Test hooks: ?save=opfs saves into OPFS even where showSaveFilePicker exists (a headless browser
// cannot answer its dialog); #quantize's data-state says where the panel is (idle, planning,
// planned, plan-error, running, done, cancelled, error).
import { FTYPES } from '../js/index.js';
import { fmtBytes } from './overview.js';
import { renderPlan } from './quantize-plan.js';
import { fileActions, removeStaleParts, renderStored } from './quantize-stored.js';
import { quantizeWorker } from './quantize-rpc.js';
import { shardNames } from './viewer-data.js';

/** @typedef {import('./quantize-worker.js').PlanSummary} PlanSummary */
/** @typedef {import('./quantize-worker.js').Done} Done */
/** @typedef {import('./quantize-worker.js').Progress} Progress */

const $ = (/** @type {string} */ s) => /** @type {HTMLElement} */ (document.querySelector(s));
/**
 * An element with attributes (text: its text) and children.
 * @param {string} tag @param {Record<string, string>} [attrs] @param {...(Node | string)} kids
 */
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) k === 'text' ? (e.textContent = v) : e.setAttribute(k, v);
  e.append(...kids);
  return e;
};

const panel = $('#quantize');
const fileIn = /** @type {HTMLInputElement} */ ($('#q-file'));
const urlIn = /** @type {HTMLInputElement} */ ($('#q-url'));
const ftypeSel = /** @type {HTMLSelectElement} */ ($('#q-ftype'));
const imatIn = /** @type {HTMLInputElement} */ ($('#q-imatrix'));
const threadSel = /** @type {HTMLSelectElement} */ ($('#q-threads'));
const startBtn = /** @type {HTMLButtonElement} */ ($('#q-start'));
const cancelBtn = /** @type {HTMLButtonElement} */ ($('#q-cancel'));
const bar = /** @type {HTMLProgressElement} */ ($('#q-progress'));
/** What a run may not change while it runs. */
const choosers = /** @type {(HTMLInputElement | HTMLSelectElement | HTMLButtonElement)[]} */ ([
  ...document.querySelectorAll(
    '#quantize .q-controls input, #quantize .q-controls select, #quantize .q-controls button',
  ),
]);
const params = new URLSearchParams(location.search);
const forceOpfs = params.get('save') === 'opfs';

// The file types llama-quantize takes, in llama.h's order; Q4_K_M chosen at first.
for (const name of Object.keys(FTYPES)) ftypeSel.append(el('option', { value: name, text: name }));
ftypeSel.value = 'Q4_K_M';
$('#q-ftype-note').textContent =
  `The file types llama-quantize takes. These need an importance matrix (llama-imatrix's GGUF or .dat): ` +
  `${Object.values(FTYPES)
    .filter((f) => f.requiresImatrix)
    .map((f) => f.name)
    .join(', ')}.`;
const cores = Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1));
for (let n = 1; n <= (crossOriginIsolated ? cores : 1); n++)
  threadSel.append(el('option', { value: String(n), text: String(n) }));
threadSel.value = String(crossOriginIsolated ? Math.min(cores, 4) : 1);

// ---- the worker (started on the first request) ----
const { ask, cancel } = quantizeWorker(params.get('backend'));

// ---- state ----
/**
 * What is chosen: the source (a URL or file, or a split model's shards), its label, the first
 * file's name or URL (the output is named after it), the plan shown, and the count of plans asked.
 * @type {{ source: import('./quantize-worker.js').Source | null, label: string, first: string,
 *   plan: PlanSummary | null, plans: number }}
 */
const st = { source: null, label: '', first: '', plan: null, plans: 0 };
const setState = (/** @type {string} */ s) => (panel.dataset.state = s);
setState('idle');
const job = () => ({ source: st.source, ftype: ftypeSel.value, imatrix: imatIn.files?.[0] ?? null });

function showError(/** @type {string} */ msg, /** @type {string} */ code) {
  const e = $('#q-error');
  e.textContent = msg;
  e.dataset.code = code;
  delete e.dataset.tensors;
  e.hidden = false;
}

/** Asks the worker for the plan of what is chosen; only the latest answer is shown. */
async function replan() {
  const mine = ++st.plans;
  st.plan = null;
  startBtn.disabled = true;
  $('#q-error').hidden = true;
  const im = imatIn.files?.[0];
  $('#q-imatrix-clear').hidden = !im;
  $('#q-chosen').textContent = st.source
    ? `${st.label} to ${ftypeSel.value}, ${im ? `with the importance matrix ${im.name}` : 'no importance matrix'}`
    : '';
  if (!st.source) return setState('idle');
  setState('planning');
  $('#q-plan').replaceChildren(el('p', { class: 'hint', text: `reading the header of ${st.label}…` }));
  try {
    const plan = /** @type {PlanSummary} */ (await ask({ op: 'plan', ...job() }));
    if (mine !== st.plans) return;
    st.plan = plan;
    await renderPlan($('#q-plan'), plan, el);
    if (mine !== st.plans) return;
    if (plan.unsupported.length) {
      const [first, ...more] = plan.unsupported;
      const to = plan.tensors.find((t) => t.name === first)?.to;
      showError(
        `This build of blockquant cannot write ${ftypeSel.value} for this model yet: ${first} would be ${to}` +
          (more.length ? ` (and ${more.length} more tensors cannot be converted either).` : '.'),
        'UNSUPPORTED',
      );
      $('#q-error').dataset.tensors = plan.unsupported.join(' ');
      return setState('plan-error');
    }
    startBtn.disabled = false;
    setState('planned');
  } catch (e) {
    if (mine !== st.plans) return;
    $('#q-plan').replaceChildren();
    const err = /** @type {Error & { code?: string }} */ (e);
    // One URL of a split model (its split.count says so): every shard its name implies, as the
    // viewer does; a name alone never makes the page fetch other URLs.
    const names = err.code === 'SPLIT' && typeof st.source === 'string' ? shardNames(st.source) : null;
    if (names && names.length > 1) {
      st.source = names;
      return replan();
    }
    showError(`Cannot quantize ${st.label} to ${ftypeSel.value}: ${err.message}`, err.code ?? 'ERROR');
    setState('plan-error');
  }
}

// The model open in the viewer (app.js says which: 'bq-opened'), offered as the source.
/** @type {{ source: import('./quantize-worker.js').Source, label: string } | null} */
let viewed = null;
const useViewer = /** @type {HTMLButtonElement} */ ($('#q-use-viewer'));
document.addEventListener('bq-opened', (ev) => {
  viewed = /** @type {CustomEvent<typeof viewed>} */ (ev).detail;
  useViewer.hidden = !viewed;
  useViewer.textContent = viewed ? `Use ${viewed.label} (open in the viewer)` : '';
});
useViewer.addEventListener('click', () => {
  if (!viewed) return;
  const first = [viewed.source].flat()[0];
  fileIn.value = '';
  urlIn.value = '';
  st.source = viewed.source;
  st.label = viewed.label;
  st.first = typeof first === 'string' ? first : first.name;
  replan();
});

// One file, or every shard of a split model (sorted by name, as the viewer takes them).
fileIn.addEventListener('change', () => {
  const fs = [...(fileIn.files ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  if (!fs.length) return;
  urlIn.value = '';
  st.source = fs.length === 1 ? fs[0] : fs;
  st.label = fs.length === 1 ? fs[0].name : `${fs[0].name} (+${fs.length - 1} shards)`;
  st.first = fs[0].name;
  replan();
});
$('#q-url-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = urlIn.value.trim();
  if (!u) return;
  try {
    st.source = new URL(u, location.href).href;
  } catch {
    return showError(`${u} is not a URL: enter an http(s) address of a GGUF file.`, 'BAD_URL');
  }
  fileIn.value = '';
  st.label = u;
  st.first = u;
  replan();
});
ftypeSel.addEventListener('change', replan);
imatIn.addEventListener('change', replan);
$('#q-imatrix-clear').addEventListener('click', () => {
  imatIn.value = '';
  imatIn.focus(); // the button hides itself
  replan();
});

// ---- running ----
/** The output's name: the source's, its float type tag replaced by the ftype. */
function outputName() {
  const base = st.first.split(/[/?#]/).filter(Boolean).pop() ?? 'model';
  const stem = base
    .replace(/\.gguf$/i, '')
    .replace(/-\d{5}-of-\d{5}$/, '') // a split model's shard number
    .replace(/[-_.](f32|f16|bf16)$/i, '');
  return `${stem}-${ftypeSel.value}.gguf`;
}

/** mm:ss (or h:mm:ss) of a number of seconds. */
function clock(/** @type {number} */ s) {
  const t = Math.round(s);
  const mm = String(Math.floor(t / 60) % 60).padStart(2, '0');
  const ss = String(t % 60).padStart(2, '0');
  return t >= 3600 ? `${Math.floor(t / 3600)}:${mm}:${ss}` : `${Math.floor(t / 60)}:${ss}`;
}

function showProgress(/** @type {Progress} */ p) {
  bar.max = p.total;
  bar.value = p.bytesOut;
  const pct = ((100 * p.bytesOut) / Math.max(1, p.total)).toFixed(0);
  $('#q-progress-text').textContent =
    `${pct} %: tensor ${p.index + 1} of ${p.count} (${p.tensor}), ${fmtBytes(p.bytesOut)} of ${fmtBytes(p.total)}` +
    (p.etaSeconds === null ? ', estimating the time left…' : `, about ${clock(p.etaSeconds)} left`);
}

/** Where to save: a file the user picks (where the browser can), else OPFS; null if the picker was dismissed. */
async function chooseSave() {
  const pick = /** @type {any} */ (window).showSaveFilePicker;
  if (forceOpfs || typeof pick !== 'function') return { kind: 'opfs', name: outputName() };
  try {
    const handle = await pick({
      suggestedName: outputName(),
      types: [{ description: 'GGUF model', accept: { 'application/octet-stream': ['.gguf'] } }],
    });
    return { kind: 'handle', handle };
  } catch (e) {
    if (/** @type {Error} */ (e).name === 'AbortError') return null;
    return { kind: 'opfs', name: outputName() }; // the picker is there but refused (e.g. a sandbox)
  }
}

startBtn.addEventListener('click', async () => {
  if (!st.plan) return;
  const save = await chooseSave();
  if (!save) return;
  for (const c of choosers) c.disabled = true;
  startBtn.disabled = true;
  cancelBtn.disabled = false;
  cancelBtn.focus();
  bar.hidden = false;
  bar.value = 0;
  $('#q-progress-text').textContent = 'starting…';
  $('#q-result').replaceChildren();
  renderStored($('#q-stored'), el).catch(() => {});
  setState('running');
  try {
    const done = /** @type {Done} */ (
      await ask({ op: 'start', ...job(), save, threads: Number(threadSel.value) }, showProgress)
    );
    await showDone(done, save);
    setState('done');
  } catch (e) {
    const err = /** @type {Error & { code?: string }} */ (e);
    bar.hidden = true;
    if (err.code === 'cancelled') {
      $('#q-progress-text').textContent = 'Cancelled: nothing was kept.';
      setState('cancelled');
    } else {
      $('#q-progress-text').textContent = '';
      showError(`Quantizing ${st.label} to ${ftypeSel.value} failed: ${err.message}`, err.code ?? 'ERROR');
      setState('error');
    }
  } finally {
    for (const c of choosers) c.disabled = false;
    startBtn.disabled = !st.plan;
    // Cancel had the focus and is disabled now: it goes to the result's first action, else Start.
    const first = /** @type {HTMLElement | null} */ ($('#q-result').querySelector('a, button'));
    if (document.activeElement === cancelBtn || document.activeElement === document.body) (first ?? startBtn).focus();
    cancelBtn.disabled = true;
  }
});
cancelBtn.addEventListener('click', () => {
  cancelBtn.disabled = true;
  $('#q-progress-text').textContent = 'cancelling…';
  cancel();
});

/**
 * The finished file: "Open in viewer", and for OPFS a download link and a way to free the space
 * (quantize-stored.js); the other kept files are listed below it.
 * @param {Done} d @param {{ kind: string, name?: string, handle?: FileSystemFileHandle }} save
 */
async function showDone(d, save) {
  $('#q-progress-text').textContent =
    `Done: ${d.name}, ${fmtBytes(d.bytes)} in ${d.seconds.toFixed(1)} s` +
    (save.handle ? ', saved where you chose.' : ", kept in this browser's private storage.");
  if (save.handle) {
    const file = await save.handle.getFile();
    const open = el('button', { type: 'button', 'data-testid': 'q-open', text: 'Open in viewer' });
    open.addEventListener('click', () =>
      document.dispatchEvent(new CustomEvent('bq-open', { detail: { source: file, label: d.name } })),
    );
    return $('#q-result').replaceChildren(open);
  }
  const file = await (await (await navigator.storage.getDirectory()).getFileHandle(d.name)).getFile();
  const removed = () =>
    $('#q-result').replaceChildren(el('p', { class: 'note', text: `${d.name} was removed from this browser.` }));
  $('#q-result').replaceChildren(...fileActions(file, el, 'q', removed));
  await renderStored($('#q-stored'), el, d.name);
}

// ---- the panel's disclosure button ----
const toggle = $('#quantize-toggle');
toggle.addEventListener('click', () => {
  const open = panel.hidden;
  panel.hidden = !open;
  toggle.setAttribute('aria-expanded', String(open));
  if (!open) return;
  fileIn.focus();
  if (panel.dataset.state !== 'running')
    removeStaleParts()
      .then(() => renderStored($('#q-stored'), el))
      .catch(() => {}); // no OPFS here (e.g. a private window): nothing kept to list
});
