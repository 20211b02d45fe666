// The integer and F64 tensors (I8, I16, I32, I64, F64): not blocks of a format but plain values,
// which the codec decodes to their own typed arrays. The worker summarises them (valuesSummary) and
// the page shows the summary (valuesView): count, min, max, mean, a histogram and the first values.

import { histogram } from './metrics.js';

/** Tensor types shown as plain values: ggml's I8, I16, I32, I64 and F64 ids. */
export const VALUE_TYPES = new Set([24, 25, 26, 27, 28]);
const SHOWN = 256; // values listed in the table

/**
 * Count, exact min and max (as decimal strings: I64 values can exceed 2^53), mean, a 60-bin
 * histogram over the values as doubles, and the first SHOWN values as strings.
 * @param {import('../js/codec.js').TensorValues} v the decoded values (read only): I8, I16, I32, I64
 *   and F64 tensors' own typed arrays
 */
export function valuesSummary(v) {
  const n = v.length;
  const asNum = new Float64Array(n);
  /** @type {number | bigint | null} */
  let lo = null,
    hi = null;
  let sum = 0,
    finite = 0;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    asNum[i] = Number(x);
    if (typeof x === 'number' && !Number.isFinite(x)) continue;
    if (lo === null || x < lo) lo = x;
    if (hi === null || x > hi) hi = x;
    sum += asNum[i];
    finite++;
  }
  return {
    count: n,
    finite,
    min: lo === null ? '' : String(lo),
    max: hi === null ? '' : String(hi),
    mean: finite ? sum / finite : NaN,
    hist: histogram(asNum, 60, false),
    first: Array.from({ length: Math.min(n, SHOWN) }, (_, i) => String(v[i])),
  };
}

/**
 * The page's view of a summary: DOM nodes built with the page's element helper.
 * @param {{ type: string, rows: number, totalRows: number } & ReturnType<typeof valuesSummary>} a
 * @param {(tag: string, attrs?: Record<string, string>, ...kids: any[]) => HTMLElement} el
 * @param {string} name the tensor's name
 * @returns {HTMLElement[]}
 */
export function valuesView(a, el, name) {
  const max = Math.max(1, ...a.hist.counts);
  const w = (/** @type {number} */ c) => `${((100 * c) / max).toFixed(1)}%`;
  return [
    el('h2', { text: `${name} (${a.type})` }),
    el('p', {
      class: 'note',
      'data-testid': 'values-summary',
      'data-min': a.min,
      'data-max': a.max,
      'data-count': String(a.count),
      text:
        `${a.type} values, decoded to their own type (no blocks, no scales): ${a.count} values` +
        `${a.rows < a.totalRows ? ` (the first ${a.rows} of ${a.totalRows} rows)` : ''}, ` +
        `min ${a.min}, max ${a.max}, mean ${a.mean}` +
        `${a.finite < a.count ? `, ${a.count - a.finite} not finite` : ''}.`,
    }),
    el('h3', { text: 'value histogram' }),
    el(
      'div',
      {
        class: 'values-hist',
        style: 'display: flex; align-items: flex-end; gap: 1px; height: 90px; max-width: 480px',
        'data-testid': 'values-histogram',
        'data-counts': a.hist.counts.join(','),
        role: 'img',
        'aria-label': `histogram of ${a.count} values from ${a.hist.lo} to ${a.hist.hi}`,
      },
      ...a.hist.counts.map((c) =>
        el('span', { style: `flex: 1; background: #2a5db0; height: ${w(c)}`, title: String(c) }),
      ),
    ),
    el('p', { class: 'note', text: `${a.hist.lo} … ${a.hist.hi}; tallest bin ${max}` }),
    el('h3', { text: `the first ${a.first.length} values` }),
    el(
      'table',
      { class: 'vals', 'data-testid': 'values-table', style: 'width: auto' },
      el('thead', {}, el('tr', {}, el('th', { text: 'i' }), el('th', { text: 'value' }))),
      el(
        'tbody',
        {},
        ...a.first.map((x, i) =>
          el(
            'tr',
            { 'data-testid': 'int-value-row', 'data-value': x },
            el('td', { text: String(i) }),
            el('td', { class: 'num', text: x }),
          ),
        ),
      ),
    ),
  ];
}
