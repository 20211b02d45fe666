// The vocabulary browser: search by text or id (#123) in the worker, results in a virtualized list
// (only the rows in view exist, fetched a page at a time), each token shown faithfully: its text
// with control characters escaped, byte tokens as their byte, the UTF-8 bytes in hex, score, type.

const ROW = 24; // px per row (style.css .vocab-row)
const FETCH = 200; // rows asked of the worker at a time

/**
 * Fills `box` with the vocabulary browser of the open file.
 * @param {HTMLElement} box
 * @param {import('./viewer-ops.js').ViewerCall} call the worker RPC
 * @param {(tag: string, attrs?: Record<string, any>, ...kids: any[]) => HTMLElement} el
 */
export async function renderVocab(box, call, el) {
  const search = /** @type {HTMLInputElement} */ (
    el('input', {
      type: 'search',
      placeholder: 'token text or #id',
      'aria-label': 'search the vocabulary',
      'data-testid': 'vocab-search',
    })
  );
  const count = el('span', { class: 'note', 'data-testid': 'vocab-count', role: 'status' });
  const head = el(
    'div',
    { class: 'vocab-row vocab-head', 'aria-hidden': 'true' },
    ...['id', 'token', 'UTF-8', 'score', 'type'].map((h) => el('span', { text: h })),
  );
  const spacer = el('div', { class: 'vocab-spacer' });
  const list = el('div', {
    class: 'vocab-list',
    tabindex: '0',
    role: 'list',
    'aria-label': 'tokens',
    'data-testid': 'vocab-list',
  });
  list.append(spacer);
  /** Matches of the current query: total and the rows fetched so far, by position. */
  let total = 0;
  /** @type {Map<number, import('./viewer-ops.js').ViewerOps['vocab']['result']['rows'][number]>} */
  let cache = new Map();
  let seq = 0;
  /** @type {Set<number>} page starts being fetched */
  let asked = new Set();

  const fetchPage = async (/** @type {number} */ start, /** @type {number} */ mine) => {
    if (asked.has(start)) return;
    asked.add(start);
    const r = await call('vocab', { query: search.value, offset: start, count: FETCH });
    if (mine !== seq) return;
    r.rows.forEach((x, i) => cache.set(start + i, x));
    draw();
  };

  const draw = () => {
    const top = list.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 5);
    const last = Math.min(total, Math.ceil((top + (list.clientHeight || 400)) / ROW) + 5);
    const rows = [];
    for (let i = first; i < last; i++) {
      const x = cache.get(i);
      if (!x) {
        fetchPage(i - (i % FETCH), seq);
        continue;
      }
      rows.push(
        el(
          'div',
          {
            class: `vocab-row${x.byte ? ' byte' : ''}`,
            role: 'listitem',
            style: `top:${i * ROW}px`,
            'data-testid': 'vocab-row',
            'data-id': String(x.id),
            'data-hex': x.hex,
            'data-type': x.type,
            ...(x.score !== null ? { 'data-score': String(x.score) } : {}),
          },
          el('span', { class: 'num', text: String(x.id) }),
          el('span', { class: 'tok', title: JSON.stringify(x.token), text: x.shown }),
          el('span', { class: 'hex', text: x.hex }),
          el('span', { class: 'num', text: x.score === null ? '' : String(x.score) }),
          el('span', { text: x.type }),
        ),
      );
    }
    spacer.style.height = `${total * ROW}px`;
    list.replaceChildren(spacer, ...rows);
  };

  const run = async () => {
    const mine = ++seq;
    cache = new Map();
    asked = new Set([0]);
    const r = await call('vocab', { query: search.value, offset: 0, count: FETCH });
    if (mine !== seq) return;
    total = r.total;
    r.rows.forEach((x, i) => cache.set(i, x));
    box.dataset.size = String(r.size);
    box.dataset.total = String(r.total);
    box.dataset.query = search.value;
    count.textContent = r.size
      ? `${r.total} of ${r.size} tokens${r.model ? ` (${r.model} tokenizer)` : ''}`
      : 'this file has no tokenizer.ggml.tokens';
    list.scrollTop = 0;
    draw();
  };
  list.addEventListener('scroll', draw, { passive: true });
  list.addEventListener('keydown', (ev) => {
    const step = { ArrowDown: ROW, ArrowUp: -ROW, PageDown: list.clientHeight, PageUp: -list.clientHeight }[ev.key];
    if (step) {
      ev.preventDefault();
      list.scrollTop += step;
    }
  });
  search.addEventListener('input', run);
  box.replaceChildren(el('div', { class: 'vocab-bar' }, search, count), head, list);
  await run();
}
