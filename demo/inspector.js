// The block inspector: one block byte by byte (its byte diagram, fields, sub-block table, one
// element explained step by step, and every element beside the values it is compared with).

import { layoutText } from './layout.js';
import { blockFields } from '../js/types.js';
import { fmtNum } from './draw.js';
import { noteFor } from './notes.js';
import { byteDiagram, elementBytes, explainElement, fmt32 } from './formula.js';
import { $, el, hex, nextFrame, numAttr } from './dom.js';
import { encodeSection } from './encode-view.js';
import { post } from './rpc.js';
import { state } from './state.js';

/**
 * Closes the inspector and gives the keyboard back to the heatmap; the page hears of it through a
 * 'bq-inspector-closed' event (its link drops the block).
 */
export function closeInspector() {
  const ins = $('#inspector');
  if (ins.hidden) return;
  ins.hidden = true;
  /** @type {HTMLElement | null} */ (document.querySelector('[data-testid=heatmap]'))?.focus();
  document.dispatchEvent(new CustomEvent('bq-inspector-closed'));
}

/**
 * @typedef {import('./worker.js').BlockResult} BlockResult
 * @typedef {{ a: Float32Array, b: Float32Array, aName: string, bName: string, diff: string }} Comparison
 *   what the inspector's comparison columns hold
 */

/**
 * The block's fields as the design chapter draws them: one box per field in memory order, with
 * its byte offsets, size and kind over its bytes in hex (byteDiagram in formula.js).
 */
function byteDiagramView(/** @type {BlockResult} */ r) {
  const d = byteDiagram(r.format);
  if (!d) throw new Error(`the demo has no byte layout of ${r.format}`);
  const b = r.bytes;
  const bits = ((8 * d.size) / r.codes.length).toFixed(d.size % 4 ? 4 : 2).replace(/\.?0+$/, '');
  return el(
    'figure',
    { class: 'diagram', 'data-testid': 'byte-diagram', 'data-order': d.order, 'data-size': String(d.size) },
    el('figcaption', {
      text: `${d.order}: ${d.size} bytes for ${r.codes.length} values, ${bits} bits per value (multi-byte fields little-endian)`,
    }),
    el(
      'div',
      { class: 'diagram-row' },
      ...d.fields.map((f) =>
        el(
          'div',
          {
            class: `dfield f-${f.name}`,
            'data-testid': 'diagram-field',
            'data-name': f.name,
            'data-offset': String(f.offset),
            'data-size': String(f.size),
            style: `flex: ${Math.max(3, Math.sqrt(f.size)).toFixed(2)} 1 0`,
          },
          el('div', { class: 'doff', text: f.size > 1 ? `offset ${f.offset}…${f.end}` : `offset ${f.offset}` }),
          el('div', { class: 'dname', text: f.name }),
          el('div', { class: 'dsize', text: `${f.size} B, ${f.count > 1 ? `${f.count} × ` : ''}${f.kind}` }),
          el(
            'div',
            { class: 'dbytes' },
            ...Array.from(b.subarray(f.offset, f.offset + f.size), (x, i) =>
              el('span', { 'data-i': String(f.offset + i), title: `byte ${f.offset + i}`, text: hex(x) }),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * What the comparison columns hold: original and decoded values and their names.
 * @param {BlockResult} r
 * @returns {Comparison}
 */
export function comparison(r) {
  if (!r.quantized)
    return { a: r.original, b: r.decoded, aName: 'original', bName: `${r.format} decoded`, diff: 'error' };
  if (r.reference)
    return {
      a: r.reference.values,
      b: r.decoded,
      aName: `original (${r.reference.name})`,
      bName: `${r.format} decoded`,
      diff: 'error',
    };
  return { a: r.decoded, b: r.recon, aName: `${r.format} decoded`, bName: 'Q8_0 re-quantized', diff: 'difference' };
}

/** Both value series of a block as one small SVG: a over b, element by element. */
function compareChart(/** @type {Comparison} */ c) {
  const n = c.a.length,
    W = 320,
    H = 90;
  let lo = Infinity,
    hi = -Infinity;
  for (const v of [...c.a, ...c.b]) if (Number.isFinite(v)) ((lo = Math.min(lo, v)), (hi = Math.max(hi, v)));
  if (!(hi > lo)) ((lo -= 1), (hi += 1));
  const y = (/** @type {number} */ v) =>
    Number.isFinite(v) ? (H - 4 - ((v - lo) / (hi - lo)) * (H - 8)).toFixed(1) : String(H / 2);
  const pts = (/** @type {ArrayLike<number>} */ vs) =>
    Array.from(vs, (v, i) => `${((i + 0.5) * (W / n)).toFixed(1)},${y(v)}`).join(' ');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'compare-chart');
  svg.setAttribute('data-testid', 'compare-chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${c.aName} (wide grey line) and ${c.bName} (blue) for elements 0 to ${n - 1}`);
  const line = (/** @type {ArrayLike<number>} */ vs, /** @type {string} */ cls) => {
    const p = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    p.setAttribute('points', pts(vs));
    p.setAttribute('class', cls);
    return p;
  };
  if (lo < 0 && hi > 0) {
    const z = document.createElementNS('http://www.w3.org/2000/svg', 'line');
    /** @type {[string, number | string][]} */
    const ends = [
      ['x1', 0],
      ['x2', W],
      ['y1', y(0)],
      ['y2', y(0)],
    ];
    for (const [k, v] of ends) z.setAttribute(k, String(v));
    z.setAttribute('class', 'zero');
    svg.append(z);
  }
  svg.append(line(c.a, 'a'), line(c.b, 'b'));
  return svg;
}

/** One element taken apart: its code from its bits, its sub-block, the formula with its numbers. */
/** @param {BlockResult} r @param {number} e @param {Comparison} c */
function elementDetail(r, e, c) {
  const ex = explainElement(r, e);
  const agrees = Object.is(ex.value, r.decoded[e]) || (Number.isNaN(ex.value) && Number.isNaN(r.decoded[e]));
  return el(
    'div',
    {
      class: 'element',
      'data-testid': 'element-detail',
      'data-e': String(e),
      'data-value': numAttr(ex.value),
      'data-filled': ex.filled,
      'data-result': ex.result,
    },
    el('h3', { text: `element ${e}${r.sub ? ` (sub-block ${ex.j})` : ''}: its code, built from its bits` }),
    el('ol', { class: 'steps' }, ...ex.steps.map((t) => el('li', { text: t }))),
    el('div', {
      class: 'formula filled',
      'data-testid': 'filled-formula',
      text: `${ex.symbolic}\n  = ${ex.filled}\n  = ${ex.result}`,
    }),
    el('p', {
      class: 'note',
      text:
        `${agrees ? 'The same float32 as' : 'Not the same as'} bq.dequantize's value for this element (${fmt32(r.decoded[e])}). ` +
        `${c.aName}: ${fmtNum(c.a[e])}; ${c.bName}: ${fmtNum(c.b[e])}; ${c.diff} ${fmtNum(c.a[e] - c.b[e])}.`,
    }),
  );
}

/** Bumped by each inspector render: a render still adding rows stops when a newer one starts. */
let inspectorRenders = 0;

/** A block byte by byte: its byte diagram, the sub-block table, one element explained, every element. */
export async function renderInspector(/** @type {BlockResult} */ r) {
  const fields = blockFields(r.format) ?? [];
  const b = r.bytes;
  const ins = $('#inspector');
  const scalarHex = (/** @type {{ offset: number, size: number }} */ f) =>
    [...b.subarray(f.offset, f.offset + f.size)].reverse().map(hex).join('');
  for (const k of Object.keys(ins.dataset)) if (k !== 'testid') delete ins.dataset[k];
  ins.dataset.block = String(r.block);
  ins.dataset.format = r.format;
  if (r.reference) ins.dataset.reference = r.reference.name;
  for (const [n, v] of Object.entries(r.scalars)) ins.dataset[n] = numAttr(v);
  const unit = b.length > 64 ? 'super-block' : 'block';
  const subScale = r.subScale; // there with sc
  const subTable =
    r.sc && subScale
      ? el(
          'table',
          { class: 'subs', 'data-testid': 'sub-table' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ...[
                'j',
                'values',
                'sc_j',
                'from',
                ...(r.m ? ['m_j', 'from'] : []),
                r.scaleName,
                ...(r.m ? ['dmin · m_j'] : []),
              ].map((h) => el('th', { text: h })),
            ),
          ),
          el(
            'tbody',
            {},
            ...Array.from(r.sc, (s, j) =>
              el(
                'tr',
                {
                  'data-testid': 'sub-row',
                  'data-sc': String(s),
                  'data-scale': String(subScale[j]),
                  ...(r.m ? { 'data-m': String(r.m[j]) } : {}),
                },
                el('td', { text: String(j) }),
                el('td', { text: `${j * r.sub}…${(j + 1) * r.sub - 1}` }),
                el('td', { class: 'num', text: String(s) }),
                el('td', { class: 'where', text: r.scWhere[j] }),
                ...(r.m
                  ? [el('td', { class: 'num', text: String(r.m[j]) }), el('td', { class: 'where', text: r.mWhere[j] })]
                  : []),
                el('td', { class: 'num', text: fmtNum(subScale[j]) }),
                ...(r.m ? [el('td', { class: 'num', text: fmtNum(Math.fround(r.scalars.dmin * r.m[j])) })] : []),
              ),
            ),
          ),
        )
      : '';
  const c = comparison(r);
  let se = 0,
    maxAbs = 0;
  for (let e = 0; e < c.a.length; e++) {
    const d = c.a[e] - c.b[e];
    se += d * d;
    maxAbs = Math.max(maxAbs, Math.abs(d));
  }
  const heads = ['e', ...(r.sub ? ['j'] : []), 'bits', 'q', 'x from its numbers', c.aName, c.bName, c.diff];
  const n = r.codes.length;
  const detailBox = el('div', { class: 'element-box' });
  const pick = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'number',
      min: '0',
      max: String(n - 1),
      value: '0',
      id: 'element-pick',
      'data-testid': 'element-pick',
      'aria-label': 'element to explain',
    })
  );
  const diagram = byteDiagramView(r);
  const show = (/** @type {number} */ e) => {
    if (!Number.isInteger(e) || e < 0 || e >= n) return;
    pick.value = String(e);
    detailBox.replaceChildren(elementDetail(r, e, c));
    // The bytes this element's value is read from, marked in the diagram.
    for (const x of diagram.querySelectorAll('.dbytes .hl')) x.classList.remove('hl');
    for (const i of elementBytes(r.format, e) ?? []) diagram.querySelector(`[data-i="${i}"]`)?.classList.add('hl');
    diagram.dataset.element = String(e);
  };
  pick.addEventListener('input', () => show(Number(pick.value)));
  show(0);
  const row = (/** @type {number} */ e) => {
    const ex = explainElement(r, e, { steps: false });
    return el(
      'tr',
      {
        'data-testid': 'value-row',
        'data-e': String(e),
        'data-q': String(r.codes[e]),
        'data-fields': numAttr(r.fromFields[e]),
        'data-decoded': numAttr(r.decoded[e]),
        'data-filled': ex.filled,
        'data-a': numAttr(c.a[e]),
        'data-b': numAttr(c.b[e]),
      },
      el('td', { text: String(e) }),
      ...(r.sub ? [el('td', { text: String(Math.floor(e / r.sub)) })] : []),
      el('td', { class: 'where', text: r.where[e] }),
      el('td', { class: 'num', text: String(r.codes[e]) }),
      el('td', { class: 'num fx', text: `${ex.filled} = ${ex.result}` }),
      el('td', { class: 'num', text: fmtNum(c.a[e]) }),
      el('td', { class: 'num', text: fmtNum(c.b[e]) }),
      el('td', { class: 'num', text: fmtNum(c.a[e] - c.b[e]) }),
    );
  };
  const rows = (/** @type {number} */ from, /** @type {number} */ to) =>
    Array.from({ length: Math.min(to, n) - from }, (_, i) => row(from + i));
  // A super-block's 256 rows go in 64 at a time, one batch per frame, so no single task builds and
  // lays out the whole table; the page is ready once every row is in.
  const CHUNK = 64;
  const tbody = el('tbody', {}, ...rows(0, CHUNK));
  tbody.addEventListener('click', (ev) => {
    const tr = /** @type {HTMLElement} */ (ev.target).closest('tr');
    if (!tr?.dataset.e) return;
    show(Number(tr.dataset.e));
    detailBox.scrollIntoView({ block: 'nearest' });
  });
  ins.replaceChildren(
    el(
      'div',
      { class: 'ins-head' },
      el('h2', { text: `${unit} ${r.block} (${r.format}, ${b.length} bytes)` }),
      el('button', {
        type: 'button',
        class: 'ins-close',
        'data-testid': 'inspector-close',
        'aria-label': 'close the block inspector',
        text: '× close',
        onclick: closeInspector,
      }),
    ),
    el('p', { class: 'note what', 'data-testid': 'format-note', text: noteFor(r.format) }),
    diagram,
    el(
      'dl',
      {},
      ...fields
        .filter((f) => f.name in r.scalars)
        .flatMap((f) => [
          el('dt', { text: `${f.name} (${f.kind})` }),
          el('dd', {
            'data-testid': `block-${f.name}`,
            'data-value': String(r.scalars[f.name]),
            text: `0x${scalarHex(f)} = ${r.scalars[f.name]}`,
          }),
        ]),
      ...fields
        .filter((f) => f.kind === 'u32')
        .flatMap((f) => [
          el('dt', { text: `${f.name} (bit 31 … bit 0)` }),
          el('dd', { text: parseInt(scalarHex(f), 16).toString(2).padStart(32, '0') }),
        ]),
    ),
    el('div', { class: 'formula', 'data-testid': 'formula', text: layoutText(r.format).join('\n') }),
    el(
      'p',
      { class: 'element-pick' },
      el('label', { for: 'element-pick', text: 'explain element ' }),
      pick,
      ' (or click a row below)',
    ),
    detailBox,
    subTable,
    encodeSection(r, /** @type {string} */ (state.selected), el, post), // encode-view.js
    el('h3', { text: 'side by side' }),
    el('p', {
      class: 'note',
      'data-testid': 'compare-note',
      'data-rmse': String(Math.sqrt(se / c.a.length)),
      text:
        `${c.aName} (wide grey line) and ${c.bName} (blue): RMSE over the ${unit} ${fmtNum(Math.sqrt(se / c.a.length))}, ` +
        `largest |${c.diff}| ${fmtNum(maxAbs)}.` +
        (r.quantized && !r.reference
          ? r.referenceError
            ? ` The float original ${r.referenceError}; the values are compared with their Q8_0 re-quantization instead.`
            : ' The file holds no float original of this tensor (a float tensor of the same shape named without the type tag), so its values are compared with their Q8_0 re-quantization, the ruler.'
          : r.reference
            ? ` The original is the file's float tensor ${r.reference.name}, the same shape under the name without the type tag.`
            : ''),
    }),
    compareChart(c),
    el(
      'div',
      { class: 'vals-box' },
      el('table', { class: 'vals' }, el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { text: h })))), tbody),
    ),
  );
  ins.hidden = false;
  const token = ++inspectorRenders;
  for (let from = CHUNK; from < n; from += CHUNK) {
    await nextFrame();
    if (token !== inspectorRenders) return; // a newer block replaced this one
    tbody.append(...rows(from, from + CHUNK));
  }
}
