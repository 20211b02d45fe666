// The tensor list as an ARIA treegrid grouped by layer (blk.N): one tab stop (a roving tabindex),
// arrow keys to move (Up/Down, Home/End, PageUp/PageDown), Left/Right to collapse and expand a
// group or go to its group, Enter/Space to analyse a tensor, and a visible focus ring (style.css).
// Rows of collapsed groups are not in the DOM, so a 291-tensor model shows ~35 rows until opened.
import { layerOf } from './viewer-data.js';
import { fmtCount } from './numbers.js';

/** @typedef {{ name: string, typeName: string, dims: number[], byteLength: number | null, nElements: number, unsupported?: string }} Row */

/** A size for the list, in 3 digits (128 KiB, 1.23 GiB); '?' for a tensor of an unknown type (no known size). */
const sizeText = (/** @type {number | null} */ n) => (n === null ? '?' : shortBytes(n));
/** @param {number} n */
function shortBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) ((n /= 1024), u++);
  return `${u ? Number(n.toPrecision(3)) : n} ${units[u]}`;
}

/** Groups expanded at first when a file has at most this many tensors. */
const OPEN_ALL = 64;

/**
 * Creates the tree over a table's tbody.
 * @param {HTMLTableElement} table the treegrid (its tbody is replaced on each render)
 * @param {(name: string) => void} onSelect called with a tensor's name on Enter, Space or click
 */
export function tensorTree(table, onSelect) {
  table.setAttribute('role', 'treegrid');
  /** @type {Set<string>} keys of expanded groups */
  const open = new Set();
  /** @type {Row[]} */
  let rows = [];
  let selected = '';
  let query = '';
  let sort = 'file';
  /** The row holding the tab stop: a tensor name or `group:<key>`. */
  let active = '';
  let file = /** @type {unknown} */ (null);

  const groupKey = (/** @type {number} */ l) => (l < 0 ? 'other' : `blk.${l}`);

  function render() {
    const q = query.toLowerCase();
    let ts = rows.filter((t) => t.name.toLowerCase().includes(q));
    if (sort === 'name') ts = [...ts].sort((a, b) => a.name.localeCompare(b.name));
    if (sort === 'size') ts = [...ts].sort((a, b) => (b.byteLength ?? -1) - (a.byteLength ?? -1));
    /** @type {Map<string, { layer: number, items: Row[] }>} */
    const groups = new Map();
    for (const t of ts) {
      const l = layerOf(t.name);
      const k = groupKey(l);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { layer: l, items: [] }));
      g.items.push(t);
    }
    const order = [...groups.entries()].sort((a, b) => {
      // Layers in numeric order; the tensors outside them (embeddings, output) first.
      return a[1].layer - b[1].layer;
    });
    /** @type {HTMLTableRowElement[]} */
    const out = [];
    const single = order.length === 1;
    order.forEach(([k, g], gi) => {
      // A filter shows every match: groups open while a query is typed.
      const expanded = single || q !== '' || open.has(k);
      if (!single) {
        const bytes = g.items.reduce((a, t) => a + (t.byteLength ?? 0), 0);
        const params = g.items.reduce((a, t) => a + t.nElements, 0);
        const tr = row(`group:${k}`, {
          'aria-level': '1',
          'aria-expanded': String(expanded),
          'aria-posinset': String(gi + 1),
          'aria-setsize': String(order.length),
          class: 'group',
          'data-testid': 'tensor-group',
          'data-group': k,
        });
        tr.append(
          cell(`${expanded ? '▾' : '▸'} ${g.layer < 0 ? 'not in a layer' : k}`, 'name'),
          cell(`${g.items.length} tensors`, 'shape'),
          cell(fmtCount(params), 'num nowrap'),
          cell(sizeText(bytes), 'num nowrap'),
        );
        out.push(tr);
      }
      if (!expanded) return;
      g.items.forEach((t, i) => {
        const tr = row(t.name, {
          'aria-level': single ? '1' : '2',
          'aria-posinset': String(i + 1),
          'aria-setsize': String(g.items.length),
          'data-testid': 'tensor-row',
          'data-name': t.name,
          'aria-selected': String(t.name === selected),
          ...(t.unsupported ? { class: 'unsupported', title: `Not analysable: ${t.unsupported}` } : {}),
        });
        tr.append(
          cell(g.layer >= 0 && !single ? t.name.slice(k.length + 1) : t.name, 'name', t.name),
          cell(t.unsupported ? `${t.typeName} ⊘` : t.typeName, 'nowrap'),
          cell(`[${t.dims.join(', ')}]`, 'shape'),
          cell(sizeText(t.byteLength), 'num nowrap'),
        );
        out.push(tr);
      });
    });
    const body = /** @type {HTMLElement} */ (table.tBodies[0]);
    const hadFocus = table.contains(document.activeElement);
    body.replaceChildren(...out);
    // The tab stop: the active row if shown, else the selected tensor, else the first row.
    const ids = out.map((r) => r.dataset.id);
    if (!ids.includes(active)) active = ids.includes(selected) ? selected : (ids[0] ?? '');
    for (const r of out) r.tabIndex = r.dataset.id === active ? 0 : -1;
    if (hadFocus) focusRow(active);
  }

  function row(/** @type {string} */ id, /** @type {Record<string, string>} */ attrs) {
    const tr = document.createElement('tr');
    tr.dataset.id = id;
    tr.setAttribute('role', 'row');
    for (const [k, v] of Object.entries(attrs)) tr.setAttribute(k, v);
    return tr;
  }
  function cell(/** @type {string} */ text, /** @type {string} */ cls, /** @type {string} */ title = '') {
    const td = document.createElement('td');
    td.setAttribute('role', 'gridcell');
    td.className = cls;
    if (cls === 'name') {
      // Break opportunities after each '.' and '_' (a <wbr>, so the text stays the name).
      for (const part of text.split(/(?<=[._])/)) td.append(part, document.createElement('wbr'));
    } else td.textContent = text;
    if (title) td.title = title;
    return td;
  }
  /** @returns {HTMLTableRowElement[]} */
  const shown = () => Array.from(/** @type {HTMLTableSectionElement} */ (table.tBodies[0]).rows);
  function focusRow(/** @type {string} */ id) {
    const rs = shown();
    const r = rs.find((x) => x.dataset.id === id);
    if (!r) return;
    active = id;
    for (const x of rs) x.tabIndex = x === r ? 0 : -1;
    r.focus();
  }
  function toggle(/** @type {string} */ k, /** @type {boolean} */ on) {
    if (on) open.add(k);
    else open.delete(k);
    render();
  }

  table.addEventListener('click', (ev) => {
    const r = /** @type {HTMLElement} */ (ev.target).closest('tr');
    if (!r || !r.dataset.id) return;
    active = r.dataset.id;
    if (r.dataset.group) toggle(r.dataset.group, r.getAttribute('aria-expanded') !== 'true');
    else onSelect(r.dataset.id);
    focusRow(active);
  });
  table.addEventListener('keydown', (ev) => {
    const r = /** @type {HTMLElement} */ (ev.target).closest('tr');
    if (!r || !r.dataset.id) return;
    const rs = shown();
    const i = rs.indexOf(/** @type {HTMLTableRowElement} */ (r));
    const go = (/** @type {number} */ j) => {
      const t = rs[Math.max(0, Math.min(rs.length - 1, j))];
      if (t?.dataset.id) focusRow(t.dataset.id);
    };
    const group = r.dataset.group;
    const expanded = r.getAttribute('aria-expanded') === 'true';
    let handled = true;
    if (ev.key === 'ArrowDown') go(i + 1);
    else if (ev.key === 'ArrowUp') go(i - 1);
    else if (ev.key === 'Home') go(0);
    else if (ev.key === 'End') go(rs.length - 1);
    else if (ev.key === 'PageDown') go(i + 10);
    else if (ev.key === 'PageUp') go(i - 10);
    else if (ev.key === 'ArrowRight' && group) {
      if (!expanded) toggle(group, true);
      else go(i + 1);
    } else if (ev.key === 'ArrowLeft' && group) {
      if (expanded) toggle(group, false);
    } else if (ev.key === 'ArrowLeft' && r.getAttribute('aria-level') === '2') {
      // To the tensor's group row.
      for (let j = i; j >= 0; j--) if (rs[j].dataset.group) return (ev.preventDefault(), go(j));
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      if (group) toggle(group, !expanded);
      else onSelect(r.dataset.id);
    } else handled = false;
    if (handled) ev.preventDefault();
  });

  return {
    /**
     * Shows a file's tensors (a new file resets the open groups) with one selected.
     * @param {Row[]} tensors
     * @param {string} sel
     * @param {unknown} owner identity of the file (a new one resets the tree)
     */
    update(tensors, sel, owner) {
      if (owner !== file) {
        file = owner;
        open.clear();
        active = '';
        if (tensors.length <= OPEN_ALL) for (const t of tensors) open.add(groupKey(layerOf(t.name)));
        else open.add('other');
      }
      rows = tensors;
      selected = sel ?? '';
      if (selected) open.add(groupKey(layerOf(selected)));
      render();
    },
    /** Sets the filter text and sort order ('file', 'name' or 'size'). */
    filter(/** @type {string} */ q, /** @type {string} */ s) {
      query = q;
      sort = s;
      render();
    },
  };
}
