// The model viewer's panels (overview, metadata, vocabulary) under index.html's #model tabs: filled
// from the worker when a file opens, emptied when none is open. Tabs follow the ARIA tabs pattern
// (one tab stop, Left/Right/Home/End to move, the panel follows focus).
import { renderOverview, fmtBytes, fmtParams } from './overview.js';
import { renderMeta } from './meta.js';
import { renderVocab } from './vocab.js';
import { closeInspector } from './inspector.js';

const $ = (/** @type {string} */ s) => /** @type {HTMLElement} */ (document.querySelector(s));

const tabs = () => /** @type {HTMLElement[]} */ (Array.from(document.querySelectorAll('#model [role=tab]')));

/**
 * Shows one tab's panel (by tab element); choosing the open tab again (click, Enter, Space) closes
 * it, so the panels do not push the tensor view below the fold. Arrow keys move between tabs and
 * open the one reached.
 */
function choose(/** @type {HTMLElement} */ tab, focus = false, toggle = false) {
  const close = toggle && tab.getAttribute('aria-expanded') === 'true';
  for (const t of tabs()) {
    const on = t === tab;
    t.setAttribute('aria-selected', String(on));
    t.setAttribute('aria-expanded', String(on && !close));
    t.tabIndex = on ? 0 : -1;
    const panel = document.getElementById(/** @type {string} */ (t.getAttribute('aria-controls')));
    if (panel) panel.hidden = !on || close;
  }
  if (focus) tab.focus();
}

for (const t of tabs()) {
  t.addEventListener('click', () => choose(t, false, true));
  t.addEventListener('keydown', (ev) => {
    const all = tabs();
    const i = all.indexOf(t);
    const j = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: all.length - 1 }[ev.key];
    if (j === undefined) return;
    ev.preventDefault();
    choose(all[(j + all.length) % all.length], true);
  });
}

/**
 * Fills the panels for the file the worker has just opened. Resolves when all three are drawn.
 * @param {import('./viewer-ops.js').ViewerCall} call the worker RPC
 * @param {(tag: string, attrs?: Record<string, any>, ...kids: any[]) => HTMLElement} el
 * @param {string} label the file's name or URL
 */
export async function viewerOpened(call, el, label) {
  $('#model').hidden = false;
  const o = await call('overview');
  renderOverview($('#overview'), o, el, label);
  $('#model-line').textContent =
    `${o.name || label}${o.arch ? ` (${o.arch})` : ''}${o.fileType ? `, ${o.fileType}` : ''}: ${fmtParams(o.params)} parameters, ` +
    `${fmtBytes(o.bytes)}, ${o.bitsPerWeight.toFixed(2)} bits/weight${o.shards > 1 ? `, ${o.shards} shards` : ''}`;
  await renderMeta($('#metadata'), call, el);
  await renderVocab($('#vocab'), call, el);
  // A model opens on its overview, expanded (the tab closes it again).
  const tab = /** @type {HTMLElement} */ (document.querySelector('#tab-overview'));
  if (tab.getAttribute('aria-expanded') !== 'true') choose(tab);
}

/** Empties the panels (no file is open). */
export function viewerClosed() {
  $('#model-line').textContent = '';
  for (const id of ['#overview', '#metadata', '#vocab']) {
    const box = $(id);
    for (const k of Object.keys(box.dataset)) if (k !== 'testid') delete box.dataset[k];
    box.replaceChildren();
  }
  $('#model').hidden = true;
}

// At narrow widths the block inspector is a sheet over the bottom of the window (style.css):
// Escape closes it (as its close button does) and gives the keyboard back to the heatmap.
document.addEventListener('keydown', (ev) => {
  if (ev.key !== 'Escape' || $('#inspector').hidden || !matchMedia('(max-width: 1100px)').matches) return;
  closeInspector();
});
