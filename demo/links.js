// Deep links: ?url=...&tensor=...&format=...&block=... names what the page shows; read once at
// start, written (history.replaceState, no new history entries) each time the page settles.

/**
 * The view a page URL asks for; absent parts are null, a block that is not a non-negative integer is null.
 * @param {string} href
 */
export function readLink(href) {
  const p = new URL(href).searchParams;
  const block = p.get('block');
  const urls = p.getAll('url').filter((u) => u !== '');
  return {
    urls,
    tensor: p.get('tensor'),
    format: p.get('format'),
    block: block !== null && /^\d{1,9}$/.test(block) ? Number(block) : null,
    compare: p.get('compare'), // compare-ui.js: file:NAME, quantize:FTYPE or a URL
  };
}

/**
 * The page URL for a view: the current URL with url (one per shard), tensor, format and block
 * replaced (or removed when null/empty); other parameters (backend) are kept.
 * @param {string} href the current page URL
 * @param {{ urls: string[], tensor: string | null, format: string | null, block: number | null }} v
 */
export function linkFor(href, v) {
  const u = new URL(href);
  const p = u.searchParams;
  for (const k of ['url', 'tensor', 'format', 'block']) p.delete(k);
  for (const x of v.urls) p.append('url', x);
  if (v.tensor) p.set('tensor', v.tensor);
  if (v.tensor && v.format) p.set('format', v.format);
  if (v.tensor && v.block !== null) p.set('block', String(v.block));
  return u.href;
}

/** Replaces the address bar's URL with the link for v when it differs (no history entry). */
export function writeLink(/** @type {Parameters<typeof linkFor>[1]} */ v) {
  const next = linkFor(location.href, v);
  if (next !== location.href) history.replaceState(null, '', next);
}

/** Sets (or with null removes) the link's compare= part (compare-ui.js); the rest is kept. */
export function writeCompare(/** @type {string | null} */ value) {
  const u = new URL(location.href);
  if (value) u.searchParams.set('compare', value);
  else u.searchParams.delete('compare');
  if (u.href !== location.href) history.replaceState(null, '', u.href);
}
