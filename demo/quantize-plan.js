// The Quantize tab's plan view: what quantizeModel would write, before it starts (the worker's
// PlanSummary): the totals, the output bytes per type, llama-quantize's warnings, and every
// tensor's types and sizes in a table that fills in a few hundred rows per frame, so a model of
// thousands of tensors never makes one long main-thread task.
import { fmtBytes } from './overview.js';

/** @typedef {import('./quantize-worker.js').PlanSummary} PlanSummary */
/** @typedef {(tag: string, attrs?: Record<string, string>, ...kids: (Node | string)[]) => HTMLElement} El */

/** Tensor rows added per frame. */
const ROWS_PER_FRAME = 200;

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/**
 * Fills box with the plan. Returns a promise that settles when every tensor row is in (or when a
 * newer render of the same box has replaced this one).
 * @param {HTMLElement} box
 * @param {PlanSummary} p
 * @param {El} el
 */
export async function renderPlan(box, p, el) {
  const token = String(Number(box.dataset.renders ?? 0) + 1);
  box.dataset.renders = token;
  box.dataset.totalBytes = String(p.totalBytes);
  box.dataset.tensors = String(p.tensors.length);
  const tbody = el('tbody');
  box.replaceChildren(
    el('p', {
      class: 'q-total',
      'data-testid': 'q-plan-total',
      text:
        `${p.ftype}: ${p.tensors.length} tensors, ${fmtBytes(p.bytesIn)} of tensor data in, ` +
        `${fmtBytes(p.totalBytes)} out (${p.bitsPerWeight.toFixed(2)} bits/weight)`,
    }),
    el(
      'table',
      { class: 'q-types', 'aria-label': 'output by type' },
      el('thead', {}, el('tr', {}, ...['type', 'tensors', 'bytes', 'share'].map((h) => el('th', { text: h })))),
      el(
        'tbody',
        {},
        ...p.byType.map((r) =>
          el(
            'tr',
            { 'data-testid': 'q-type-row', 'data-type': r.type, 'data-tensors': String(r.tensors) },
            el('td', { text: r.type }),
            el('td', { class: 'num', text: String(r.tensors) }),
            el('td', { class: 'num', text: fmtBytes(r.bytes) }),
            el('td', { class: 'num', text: `${((100 * r.bytes) / Math.max(1, p.bytesOut)).toFixed(1)} %` }),
          ),
        ),
      ),
    ),
    ...(p.warnings.length
      ? [el('ul', { class: 'q-warnings', 'aria-label': 'warnings' }, ...p.warnings.map((w) => el('li', { text: w })))]
      : []),
    el(
      'details',
      { class: 'q-tensors' },
      el('summary', { text: `every tensor (${p.tensors.length})` }),
      el(
        'div',
        { class: 'q-tensors-box' },
        el(
          'table',
          { 'aria-label': 'tensors of the plan' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ...['tensor', 'shape', 'from', 'to', 'bytes in', 'bytes out', 'why'].map((h) => el('th', { text: h })),
            ),
          ),
          tbody,
        ),
      ),
    ),
  );
  for (let i = 0; i < p.tensors.length; i += ROWS_PER_FRAME) {
    if (i > 0) await nextFrame();
    if (box.dataset.renders !== token) return;
    tbody.append(
      ...p.tensors
        .slice(i, i + ROWS_PER_FRAME)
        .map((t) =>
          el(
            'tr',
            { 'data-testid': 'q-tensor-row', 'data-name': t.name, 'data-to': t.to, 'data-fallback': t.fallback },
            el('td', { text: t.name }),
            el('td', { text: t.dims.join(' × ') }),
            el('td', { text: t.from }),
            el('td', { text: t.to }),
            el('td', { class: 'num', text: fmtBytes(t.bytesIn) }),
            el('td', { class: 'num', text: fmtBytes(t.bytesOut) }),
            el('td', { text: t.fallback ? `${t.why}; ${t.fallback}` : t.why }),
          ),
        ),
    );
  }
}
