// The block inspector's "encode" part (app.js's renderInspector appends it beside the decode):
// the block's original values taken to d, m and the codes step by step with this block's numbers
// (encode-steps.js), the bytes those steps make beside the block's own, and what an importance
// matrix changes: the same block quantized without and with weights, and the error of each
// (encode-ops.js in the worker). Main thread: DOM only.
import { ENCODABLE, encode, num } from './encode-steps.js';
import { fmtNum } from './draw.js';

/**
 * @typedef {import('./worker.js').BlockResult} BlockResult
 * @typedef {import('./encode-ops.js').WeightedResult} WeightedResult
 * @typedef {(tag: string, attrs?: Record<string, string | EventListener>, ...kids: (Node | string)[]) => HTMLElement} El
 */

const hex = (/** @type {ArrayLike<number>} */ b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ');

/**
 * The encode section for an inspected block.
 * @param {BlockResult} r
 * @param {string} tensor the analysed tensor
 * @param {El} el
 * @param {(op: string, args: object) => Promise<unknown>} post the viewer worker's call
 */
export function encodeSection(r, tensor, el, post) {
  const original = r.quantized ? r.reference?.values : r.original;
  const box = el('section', {
    class: 'encode',
    'data-testid': 'encode',
    'aria-label': 'how the encoder made this block',
  });
  box.append(el('h3', { text: `encode: from the original values to ${r.format}'s fields and codes` }));
  if (!original) {
    box.append(
      el('p', {
        class: 'note',
        text: 'The file holds no float original of this block, so its encoding cannot be replayed; the decode above shows how its bytes are read.',
      }),
    );
    return box;
  }
  if (ENCODABLE.includes(r.format)) {
    const e = encode(r.format, Float32Array.from(original));
    const same = e.bytes.length === r.bytes.length && e.bytes.every((b, i) => b === r.bytes[i]);
    box.append(
      el('ol', { class: 'steps', 'data-testid': 'encode-steps' }, ...e.steps.map((s) => el('li', { text: s }))),
      el('p', {
        class: 'note',
        'data-testid': 'encode-bytes',
        'data-bytes': hex(e.bytes).replaceAll(' ', ''),
        'data-codes': e.codes.join(','),
        'data-equal': String(same),
        text: same
          ? `These steps make the block's ${e.bytes.length} bytes exactly: ${hex(e.bytes)}.`
          : `These steps make ${hex(e.bytes)}; the file's block differs (its quantizer was given other values or an importance matrix).`,
      }),
    );
  } else {
    box.append(
      el('p', {
        class: 'note',
        text: `The steps of ${r.format}'s encoder are not replayed here (its scale search runs per sub-block); the weighted comparison below still shows what weights change.`,
      }),
    );
  }
  if (!r.quantized) box.append(weightedPart(r, tensor, el, post));
  return box;
}

/** The same block without and with weights. @param {BlockResult} r @param {string} tensor @param {El} el @param {(op: string, args: object) => Promise<unknown>} post */
function weightedPart(r, tensor, el, post) {
  const imat = /** @type {HTMLInputElement} */ (
    el('input', { type: 'file', accept: '.gguf,.dat', 'data-testid': 'encode-imatrix' })
  );
  const out = el('div', { class: 'encode-weighted', 'data-testid': 'encode-weighted' });
  const go = el('button', {
    type: 'button',
    'data-testid': 'encode-weights',
    text: 'Quantize this block without and with weights',
  });
  const run = async () => {
    out.textContent = 'quantizing the row…';
    try {
      const w = /** @type {WeightedResult} */ (
        await post('weighted', { name: tensor, format: r.format, block: r.block, imatrix: imat.files?.[0] ?? null })
      );
      out.replaceChildren(...weightedTable(w, el));
    } catch (e) {
      out.textContent = `Could not quantize with weights: ${/** @type {Error} */ (e).message}`;
    }
  };
  go.addEventListener('click', run);
  imat.addEventListener('change', run);
  return el(
    'div',
    {},
    el('h4', { text: 'what an importance matrix changes' }),
    el('p', { class: 'controls' }, go, el('label', { class: 'button' }, 'importance matrix (optional)…', imat)),
    out,
  );
}

/** @param {WeightedResult} w @param {El} el */
function weightedTable(w, el) {
  const row = (/** @type {string} */ label, /** @type {WeightedResult['plain']} */ s, /** @type {string} */ key) =>
    el(
      'tr',
      {
        'data-testid': 'encode-side',
        'data-side': key,
        'data-bytes': hex(s.bytes).replaceAll(' ', ''),
        'data-rmse': String(s.rmse),
        'data-weighted': String(s.weighted),
      },
      el('td', { text: label }),
      el('td', { class: 'num', text: fmtNum(s.rmse) }),
      el('td', { class: 'num', text: fmtNum(s.maxAbs) }),
      el('td', { class: 'num', text: fmtNum(s.weighted) }),
    );
  const same = w.plain.bytes.every((b, i) => b === w.weightedSide.bytes[i]);
  const wmax = w.weights.reduce((a, b) => Math.max(a, b), 0);
  const wmin = w.weights.reduce((a, b) => Math.min(a, b), Infinity);
  const lower = w.weightedSide.weighted < w.plain.weighted;
  return [
    el('p', { class: 'note', text: `Weights: ${w.weightsFrom}; in this block ${num(wmin)} … ${num(wmax)}.` }),
    el(
      'table',
      { class: 'vals' },
      el(
        'thead',
        {},
        el('tr', {}, ...['', 'RMSE', 'max |error|', 'weighted mean square'].map((h) => el('th', { text: h }))),
      ),
      el('tbody', {}, row('without weights', w.plain, 'plain'), row('with weights', w.weightedSide, 'weighted')),
    ),
    el('p', { class: 'encode-hex' }, 'bytes without: ', el('code', { text: hex(w.plain.bytes) })),
    el('p', { class: 'encode-hex' }, 'bytes with: ', el('code', { text: hex(w.weightedSide.bytes) })),
    el('p', {
      class: 'note',
      'data-testid': 'encode-weighted-note',
      text: !w.usesWeights
        ? `ggml's ${w.format} quantizer ignores weights: the same bytes either way.`
        : same
          ? 'The weights did not change this block.'
          : `The weights changed the block: its weighted mean square is ${lower ? 'lower' : 'not lower'} with them (${fmtNum(w.weightedSide.weighted)} against ${fmtNum(w.plain.weighted)}), its plain RMSE ${w.weightedSide.rmse < w.plain.rmse ? 'lower' : 'higher'}. ggml's search minimises its own weighting (the weights times sqrt(σ² + x²) for most types), not exactly this one.`,
    }),
  ];
}
