// The Quantize panel's files in the origin private file system (OPFS): a run writes NAME.part and
// renames it to NAME when it is complete (quantize-worker.js), so a file named *.gguf is always
// whole; a .part file whose run died with its page is removed the next time the panel opens (one
// that is still being written, in another tab, is locked and stays). Each kept file gets a
// download link, "Open in viewer" (the page's 'bq-open' event) and a way to free its space.
import { fmtBytes } from './overview.js';

/** @typedef {import('./quantize-plan.js').El} El */

export const PART = '.part';

/** The OPFS root directory (typed: the DOM lib of tsconfig.demo.json lacks its iterators). */
const root = async () => /** @type {any} */ (await navigator.storage.getDirectory());

/**
 * Removes the .part files no run is writing (a run holds its file's sync access handle, so
 * removeEntry fails on it and it is left alone).
 */
export async function removeStaleParts() {
  const dir = await root();
  for await (const [name, h] of dir.entries())
    if (h.kind === 'file' && name.endsWith(PART)) await dir.removeEntry(name).catch(() => {});
}

/**
 * The actions on one kept file: a download link, "Open in viewer", "Remove from browser storage".
 * @param {File} file the OPFS file
 * @param {El} el
 * @param {string} prefix the test ids' prefix ('q' for the run just done, 'q-stored' for the list)
 * @param {() => void} removed called once the file is gone
 */
export function fileActions(file, el, prefix, removed) {
  const href = URL.createObjectURL(file);
  const a = el('a', { href, download: file.name, 'data-testid': `${prefix}-download` });
  a.textContent = `Download ${file.name} (${fmtBytes(file.size)})`;
  const open = el('button', { type: 'button', 'data-testid': `${prefix}-open`, text: 'Open in viewer' });
  open.addEventListener('click', () =>
    document.dispatchEvent(new CustomEvent('bq-open', { detail: { source: file, label: file.name } })),
  );
  const drop = el('button', { type: 'button', 'data-testid': `${prefix}-remove`, text: 'Remove from browser storage' });
  drop.addEventListener('click', async () => {
    URL.revokeObjectURL(href);
    await (await root()).removeEntry(file.name);
    removed();
  });
  return [a, open, drop];
}

/**
 * Lists the kept .gguf files but `except` in box (empty when there are none).
 * @param {HTMLElement} box
 * @param {El} el
 * @param {string} [except] a name not to list (the run just done, shown with its own actions)
 */
export async function renderStored(box, el, except) {
  const dir = await root();
  /** @type {File[]} */
  const files = [];
  for await (const [name, h] of dir.entries())
    if (h.kind === 'file' && name.endsWith('.gguf') && name !== except) files.push(await h.getFile());
  files.sort((a, b) => a.name.localeCompare(b.name));
  if (!files.length) return box.replaceChildren();
  const again = () => renderStored(box, el, except);
  box.replaceChildren(
    el('h3', { text: "Kept in this browser's storage" }),
    el(
      'ul',
      {},
      ...files.map((f) =>
        el('li', { 'data-testid': 'q-stored', 'data-name': f.name }, ...fileActions(f, el, 'q-stored', again)),
      ),
    ),
  );
}
