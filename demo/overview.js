// The overview of the open model: architecture and name, parameters, size, bits per weight, the
// breakdown by tensor type and by layer, and a memory estimate (weights + KV cache at a context
// length taken from the metadata, editable). Numbers come from the worker (viewer-data.js's
// overviewOf); the element carries them as data-* attributes for tests.
import { kvCacheBytes } from './viewer-data.js';
import { fmtCount } from './numbers.js';

/** @typedef {ReturnType<typeof import('./viewer-data.js').overviewOf> & { shards: number }} Overview */

export const fmtBytes = (/** @type {number} */ n) =>
  n >= 2 ** 30
    ? `${(n / 2 ** 30).toFixed(2)} GiB`
    : n >= 2 ** 20
      ? `${(n / 2 ** 20).toFixed(2)} MiB`
      : n >= 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${n} B`;

/** A parameter count in words (1.23 B, 45.6 M, 7.8 K): numbers.js. */
export const fmtParams = fmtCount;

/**
 * Fills `box` with the overview of a model.
 * @param {HTMLElement} box emptied and refilled
 * @param {Overview} o
 * @param {(tag: string, attrs?: Record<string, any>, ...kids: any[]) => HTMLElement} el
 * @param {string} label the file's name or URL
 */
export function renderOverview(box, o, el, label) {
  box.dataset.params = String(o.params);
  box.dataset.bytes = String(o.bytes);
  box.dataset.tensors = String(o.tensors);
  box.dataset.bpw = String(o.bitsPerWeight);
  box.dataset.fileType = o.fileType;
  box.dataset.arch = o.arch;
  box.dataset.shards = String(o.shards);
  const ctxIn = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'number',
      min: '0',
      step: '1',
      id: 'ctx',
      'data-testid': 'ctx-input',
      value: String(o.kv.contextLength ?? 4096),
    })
  );
  const memory = el('dd', { 'data-testid': 'memory' });
  const update = () => {
    const n = Math.max(0, Math.floor(Number(ctxIn.value) || 0));
    const kv = kvCacheBytes(o.kv, n);
    box.dataset.ctx = String(n);
    box.dataset.kvBytes = kv === null ? '' : String(kv);
    memory.replaceChildren(
      kv === null
        ? `weights ${fmtBytes(o.bytes)}; KV cache unknown (missing ${o.kv.missing.join(', ')})`
        : `${fmtBytes(o.bytes + kv)} = weights ${fmtBytes(o.bytes)} + KV cache ${fmtBytes(kv)} (f16, ${n} tokens)`,
    );
  };
  ctxIn.addEventListener('input', update);
  update();
  const table = (
    /** @type {string} */ caption,
    /** @type {string} */ first,
    /** @type {{ key: string, tensors: number, params: number, bytes: number }[]} */ rows,
    /** @type {string} */ testid,
  ) =>
    el(
      'div',
      { class: 'ov-table' },
      el(
        'table',
        { 'data-testid': testid },
        el('caption', { text: caption }),
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ...[first, 'tensors', 'params', 'size', 'share'].map((h, i) =>
              el('th', { text: h, class: i ? 'num' : '' }),
            ),
          ),
        ),
        el(
          'tbody',
          {},
          ...rows.map((r) =>
            el(
              'tr',
              { 'data-key': r.key, 'data-bytes': String(r.bytes), 'data-params': String(r.params) },
              el('td', { text: r.key }),
              el('td', { class: 'num', text: String(r.tensors) }),
              el('td', { class: 'num', text: fmtParams(r.params) }),
              el('td', { class: 'num nowrap', text: fmtBytes(r.bytes) }),
              el('td', { class: 'num', text: o.bytes ? `${((100 * r.bytes) / o.bytes).toFixed(1)}%` : '' }),
            ),
          ),
        ),
      ),
    );
  const layersUsed = o.kv.used.length ? `from ${o.kv.used.join(', ')}` : 'no attention metadata';
  box.replaceChildren(
    el(
      'dl',
      { class: 'ov-facts' },
      el('dt', { text: 'model' }),
      el('dd', {
        text: `${o.name || label}${o.arch ? ` (${o.arch})` : ''}${o.shards > 1 ? `, ${o.shards} shards` : ''}`,
      }),
      ...(o.fileType
        ? [el('dt', { text: 'file type' }), el('dd', { 'data-testid': 'file-type', text: o.fileType })]
        : []),
      el('dt', { text: 'parameters' }),
      el('dd', { 'data-testid': 'params', text: `${fmtParams(o.params)} in ${o.tensors} tensors` }),
      el('dt', { text: 'size' }),
      el('dd', { text: `${fmtBytes(o.bytes)}, ${o.bitsPerWeight.toFixed(2)} bits/weight` }),
      el('dt', {}, el('label', { for: 'ctx', text: 'context (tokens)' })),
      el('dd', {}, ctxIn),
      el('dt', { text: 'memory' }),
      memory,
      el('dt', { text: 'KV cache' }),
      el('dd', {
        class: 'note',
        text: `per layer 2 (K, V) × context × head_count_kv × key_length × 2 bytes; ${o.kv.layers ?? '?'} layers, ${layersUsed}`,
      }),
    ),
    el(
      'div',
      { class: 'ov-tables' },
      table(
        'by tensor type',
        'type',
        o.byType.map((r) => ({ ...r, key: r.type })),
        'by-type',
      ),
      table(
        'by layer',
        'layer',
        o.byLayer.map((r) => ({ ...r, key: r.layer < 0 ? 'not in a layer' : `blk.${r.layer}` })),
        'by-layer',
      ),
    ),
  );
}
