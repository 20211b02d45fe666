// The demo page's main thread: UI only. Files are opened and analysed in worker.js.

import { tensorTree } from './tree.js';
import { viewerOpened, viewerClosed } from './viewer.js';
import { readLink, writeLink, sameFiles, SCALES } from './links.js';
import { shardNames, firstTensor } from './viewer-data.js';
import { markerBox, setMarker } from './draw.js';
import { $, el } from './dom.js';
import { state } from './state.js';
import { renderView, setViewHooks } from './tensor-view.js';
import { worker, call, viewerCall, codeOf } from './rpc.js';
import { renderInspector } from './inspector.js';

/**
 * The worker's messages (worker.js).
 * @typedef {import('./worker.js').Source} Source
 * @typedef {import('./worker.js').OpenResult} OpenResult
 */

worker.onerror = (/** @type {ErrorEvent} */ ev) => showError(`worker failed: ${ev.message}`);

// ---- status ----
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
    `${info.tensors.length - missing} of ${info.tensors.length} tensors have all their data (analysed when chosen); ` +
    `the ${missing} others are marked “data missing” in the list.`;
  n.dataset.missing = String(missing);
}

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

setViewHooks({ task, inspect });

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
