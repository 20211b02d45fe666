// The metadata panel: a searchable table of keys, value types, lengths and previews; arrays open a
// pager over their items (fetched from the worker a page at a time); long strings (the chat
// template) open as formatted text.

const PAGE = 50;

/**
 * Fills `box` with the metadata of the open file.
 * @param {HTMLElement} box
 * @param {import('./viewer-ops.js').ViewerCall} call the worker RPC
 * @param {(tag: string, attrs?: Record<string, any>, ...kids: any[]) => HTMLElement} el
 */
export async function renderMeta(box, call, el) {
  const search = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'search',
      placeholder: 'search keys and values',
      'aria-label': 'search metadata',
      'data-testid': 'meta-search',
    })
  );
  const body = el('tbody');
  const detail = el('div', { class: 'meta-detail', 'data-testid': 'meta-detail', 'aria-live': 'polite' });
  const table = el(
    'table',
    { class: 'meta', 'data-testid': 'meta-table' },
    el('thead', {}, el('tr', {}, ...['key', 'type', 'length', 'value'].map((h) => el('th', { text: h })))),
    body,
  );
  let seq = 0;
  const fill = async () => {
    const mine = ++seq;
    const rows = await call('meta', { query: search.value });
    if (mine !== seq) return;
    body.replaceChildren(
      ...rows.map((r) => {
        const more = r.type.startsWith('array') || r.long || r.key === 'tokenizer.chat_template';
        const value = more
          ? el(
              'button',
              { type: 'button', class: 'link', 'data-key': r.key, title: 'show all', onclick: () => show(r) },
              r.preview,
            )
          : r.preview;
        return el(
          'tr',
          { 'data-testid': 'meta-row', 'data-key': r.key, 'data-type': r.type },
          el('td', { class: 'key', text: r.key }),
          el('td', { class: 'nowrap', text: r.type }),
          el('td', { class: 'num', text: r.length === null ? '' : String(r.length) }),
          el('td', { class: 'value' }, value),
        );
      }),
    );
  };
  /** Shows a whole string, or an array a page at a time. */
  /** @param {import('./viewer-ops.js').ViewerOps['meta']['result'][number]} r */
  const show = async (r) => {
    if (!r.type.startsWith('array')) {
      const text = await call('metaString', { key: r.key });
      const shown = r.key.endsWith('chat_template') ? formatTemplate(text) : text;
      const status = el('span', { class: 'note', 'data-testid': 'meta-copied', role: 'status' });
      const pre = el('pre', { class: 'template', 'data-testid': 'meta-text', tabindex: '0', text: shown });
      // Copies the value as stored (not the laid-out text of a one-line template).
      const copy = el('button', {
        type: 'button',
        'data-testid': 'meta-copy',
        text: 'copy',
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(text);
            status.textContent = `copied ${text.length} characters`;
          } catch {
            // No clipboard access (an insecure origin, a denied permission): select it for Ctrl+C.
            getSelection()?.selectAllChildren(pre);
            status.textContent = 'selected: press Ctrl+C (or ⌘C) to copy';
          }
        },
      });
      detail.replaceChildren(
        el('div', { class: 'meta-head' }, el('h4', { text: `${r.key} (${r.length} characters)` }), copy, status),
        pre,
      );
      return;
    }
    const page = async (/** @type {number} */ offset) => {
      const p = await call('metaArray', { key: r.key, offset, count: PAGE });
      const prev = el('button', {
        type: 'button',
        text: '◂ previous',
        onclick: () => page(Math.max(0, p.offset - PAGE)),
      });
      const next = el('button', { type: 'button', text: 'next ▸', onclick: () => page(p.offset + PAGE) });
      if (p.offset === 0) prev.setAttribute('disabled', '');
      if (p.offset + PAGE >= p.length) next.setAttribute('disabled', '');
      const at = /** @type {HTMLInputElement} */ (
        el('input', {
          type: 'number',
          min: '0',
          max: String(Math.max(0, p.length - 1)),
          value: String(p.offset),
          'aria-label': 'first item',
        })
      );
      at.addEventListener('change', () => page(Math.max(0, Math.floor(Number(at.value) || 0))));
      detail.replaceChildren(
        el('h4', { text: `${r.key}: items ${p.offset}…${p.offset + p.items.length - 1} of ${p.length} (${r.type})` }),
        el('div', { class: 'pager' }, prev, el('label', {}, 'from ', at), next),
        el(
          'ol',
          { start: String(p.offset), class: 'items', 'data-testid': 'meta-items' },
          ...p.items.map((s) => el('li', { text: s })),
        ),
      );
    };
    await page(0);
  };
  search.addEventListener('input', fill);
  box.replaceChildren(search, table, detail);
  await fill();
}

/**
 * A Jinja chat template laid out for reading: each `{% ... %}` tag on its own line, indented by
 * its nesting (templates are often one long line); the characters otherwise unchanged. A template
 * that already has line breaks is shown as it is.
 * @param {string} t
 */
export function formatTemplate(t) {
  if (t.includes('\n')) return t;
  let depth = 0;
  return t
    .split(/(\{%.*?%\})/s)
    .filter((part) => part !== '')
    .map((part) => {
      const tag = /^\{%-?\s*(\w+)/.exec(part)?.[1] ?? '';
      if (/^end/.test(tag) || tag === 'else' || tag === 'elif') depth = Math.max(0, depth - 1);
      const line = '  '.repeat(depth) + part;
      if (['for', 'if', 'macro', 'block', 'else', 'elif', 'filter', 'call'].includes(tag)) depth++;
      return line;
    })
    .join('\n');
}
