// The demo page in Debian's Firefox ESR, headless (Playwright cannot drive that build): a check
// page served beside the demo embeds it in a same-origin frame, waits for the bundled sample to
// open and its first tensor to be analysed, checks the heatmap's pixels, clicks a heatmap cell and
// reads the block the inspector opens, then POSTs what it saw to this test's loopback server.
// The test compares that with the API here in Node and kills Firefox by its pid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firefoxPage } from './lib/firefox-check.js';
import { readFileSync } from 'node:fs';
import { parseGGUF } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { NOTES } from '../demo/notes.js';

const bq = await codec();

// Runs in Firefox: drives the framed demo and posts { ok, ... } or { ok: false, error }.
const CHECK = `<!doctype html><meta charset="utf-8"><title>demo check</title>
<iframe id="demo" src="/demo/?backend=${BACKEND}" style="width:1400px;height:900px"></iframe>
<script type="module">
const frame = document.getElementById('demo');
const until = async (f, what, ms = 120000) => {
  const t0 = Date.now();
  for (;;) {
    try { const v = f(); if (v) return v; } catch {}
    if (Date.now() - t0 > ms) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
};
const post = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
try {
  const doc = await until(() => frame.contentDocument?.body?.dataset.ready === 'true' &&
    frame.contentDocument.querySelectorAll('[data-testid=summary-row]').length > 0 && frame.contentDocument, 'the sample');
  const canvas = await until(() => doc.querySelector('[data-testid=heatmap][data-cells]'), 'the heatmap');
  await until(() => doc.body.dataset.ready === 'true', 'the heatmap drawn');
  const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const colours = new Set();
  for (let i = 0; i < px.length; i += 4) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
  const [W, H] = canvas.dataset.cells.split('x').map(Number);
  const rect = canvas.getBoundingClientRect();
  const view = frame.contentWindow;
  const at = (cx, cy) => ({ bubbles: true, clientX: rect.left + ((cx + 0.5) / W) * rect.width, clientY: rect.top + ((cy + 0.5) / H) * rect.height });
  canvas.dispatchEvent(new view.MouseEvent('mousemove', at(3, 5)));
  const readout = doc.querySelector('[data-testid=heatmap-readout]');
  const hover = { row: readout.dataset.row, block: readout.dataset.block, text: readout.textContent };
  canvas.dispatchEvent(new view.MouseEvent('click', at(3, 5)));
  const ins = await until(() => { const e = doc.querySelector('[data-testid=block-inspector]');
    return !e.hidden && doc.body.dataset.ready === 'true' && e; }, 'the inspector');
  await post({
    ok: true,
    ua: navigator.userAgent,
    tensor: doc.querySelector('#view h2').textContent,
    format: ins.dataset.format,
    note: doc.querySelector('[data-testid=format-note]')?.textContent,
    block: Number(ins.dataset.block),
    d: Number(ins.dataset.d),
    cells: canvas.dataset.cells,
    colours: colours.size,
    hover,
    rows: [...doc.querySelectorAll('[data-testid=summary-row]')].map((r) => ({ format: r.dataset.format, rmse: Number(r.dataset.rmse) })),
  });
} catch (e) {
  await post({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

const half = (/** @type {number} */ h) => {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
};

test('the demo page in headless Firefox ESR', { timeout: 300000 }, async () => {
  const r = await firefoxPage(CHECK);
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  // The sample's first float tensor, analysed: its Q4_0 row equals the API's RMSE here.
  const g = parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));
  const x = bq.dequantize('f16', g.tensorBytes(r.tensor));
  const back = bq.dequantize('q4_0', bq.quantize('q4_0', x));
  let se = 0;
  for (let i = 0; i < x.length; i++) se += (x[i] - back[i]) ** 2;
  const q40 = r.rows.find((/** @type {any} */ row) => row.format === 'q4_0');
  assert.equal(q40.rmse, Math.sqrt(se / x.length));
  assert.ok(r.colours > 10, `${r.colours} colours in the heatmap`);
  // The clicked cell (column 3, row 5 of the drawn map) is the inspected block, with the API's d.
  const [W] = r.cells.split('x').map(Number);
  const blocksPerRow = (g.tensors.find((t) => t.name === r.tensor)?.dims[0] ?? 0) / 32;
  assert.equal(W, blocksPerRow, 'one drawn cell per Q4_0 block');
  assert.equal(r.block, 5 * blocksPerRow + 3);
  assert.equal(r.hover.block, String(r.block));
  assert.equal(r.hover.row, '5');
  const q = bq.quantize(r.format, x);
  assert.equal(r.format, 'q4_0');
  assert.equal(r.note, NOTES.q4_0);
  assert.equal(r.d, half(q[r.block * 18] | (q[r.block * 18 + 1] << 8)));
});
