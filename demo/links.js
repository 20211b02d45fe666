// Deep links: the query string names what the page shows. Read once at start, written
// (history.replaceState, no new history entries) each time the page settles.
//
//   url=     the file's URL (one per shard of a split model), relative to the page when it can be
//   file=    a local file's name (one per shard): a link cannot open it, the page asks for it again
//   tensor=  the analysed tensor
//   format=  the format a float tensor is shown in (q4_0, q4_K, ...)
//   scale=   the heatmap's colour scale when not linear (log)
//   block=   the inspected block
//   compare= what the compare panel compares the open file with (compare-ui.js): a URL,
//            file:NAME (a local file, asked for again) or quantize:FTYPE (A quantized in memory);
//            read here, written by writeCompare, and not in KEYS, so linkFor leaves it as it is
//
// More keys: add the key to KEYS, read it in readLink and write it in linkFor; linkFor keeps
// every key it does not know about untouched.

/** The keys this module reads and writes; any other parameter of the URL (backend) is kept as it is. */
export const KEYS = ['url', 'file', 'tensor', 'format', 'scale', 'block'];

/** The colour scales a link can name. */
export const SCALES = ['linear', 'log'];

/**
 * What a link asks for.
 * @typedef {{ urls: string[], files: string[], tensor: string | null, format: string | null,
 *   scale: string | null, block: number | null, blockText: string | null, compare: string | null }} Link
 *   block: the block= value when it is a non-negative integer, else null; blockText: block= as
 *   written (null when absent), so a block that is not a number can be reported; compare: see above
 * @typedef {{ urls: string[], files: string[], tensor: string | null, format: string | null,
 *   scale: string, block: number | null }} View  what the page shows
 */

/**
 * The view a page URL asks for; absent parts are null (lists empty).
 * @param {string} href
 * @returns {Link}
 */
export function readLink(href) {
  const p = new URL(href).searchParams;
  const block = p.get('block');
  return {
    urls: p.getAll('url').filter((u) => u !== ''),
    files: p.getAll('file').filter((u) => u !== ''),
    tensor: p.get('tensor') || null,
    format: p.get('format') || null,
    scale: p.get('scale') || null,
    block: block !== null && /^\d{1,9}$/.test(block) ? Number(block) : null,
    blockText: block,
    compare: p.get('compare') || null,
  };
}

/**
 * The page URL for a view: the current URL with this module's keys replaced (or removed when
 * null or empty: a URL names the file, else the local file's name does); other parameters are kept.
 * @param {string} href the current page URL
 * @param {View} v
 */
export function linkFor(href, v) {
  const u = new URL(href);
  const p = u.searchParams;
  for (const k of KEYS) p.delete(k);
  for (const x of v.urls) p.append('url', x);
  if (!v.urls.length) for (const x of v.files) p.append('file', x);
  if (v.tensor) p.set('tensor', v.tensor);
  if (v.tensor && v.format) p.set('format', v.format);
  if (v.scale && v.scale !== 'linear') p.set('scale', v.scale);
  if (v.tensor && v.block !== null) p.set('block', String(v.block));
  return u.href;
}

/** Replaces the address bar's URL with the link for v when it differs (no history entry). */
export function writeLink(/** @type {View} */ v) {
  const next = linkFor(location.href, v);
  if (next !== location.href) history.replaceState(null, '', next);
}

/**
 * Whether picked files are the ones a link names: the same names, in any order.
 * @param {string[]} linked the link's file= names
 * @param {string[]} picked
 */
export function sameFiles(linked, picked) {
  const a = [...linked].sort(),
    b = [...picked].sort();
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Sets (or with null removes) the link's compare= part; every other part is kept. compare= is
 * not in KEYS: the compare panel (compare-ui.js) writes it, and linkFor leaves it as it is.
 */
export function writeCompare(/** @type {string | null} */ value) {
  const u = new URL(location.href);
  if (value) u.searchParams.set('compare', value);
  else u.searchParams.delete('compare');
  if (u.href !== location.href) history.replaceState(null, '', u.href);
}
