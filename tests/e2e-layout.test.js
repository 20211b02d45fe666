// The page's layout measured from element boxes (never pixels), in headless Chromium and headless
// Firefox ESR, at 1280x800 and 800x900: the tensor table fits its column (no cut-off size column);
// with the inspector open the heatmap and the summary table stay beside it, not under it; at 800
// px the inspector sheet has a visible close button, does not cover the marked heatmap cell, and
// closes with it; a tensor chosen in the list is in view once analysed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firefoxPage } from './lib/firefox-check.js';
import { BACKEND } from './lib/helpers.js';
import { launchDemo, ready } from './lib/browser.js';
import { writeGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';

const TENSOR = 'blk.0.attn_q.weight';
const LINK = `?backend=${BACKEND}&url=sample.gguf&tensor=${TENSOR}&format=q4_0&block=300`;

/**
 * Runs in the demo's document: the boxes the assertions compare.
 * @param {Document} doc
 */
function measure(doc) {
  const win = /** @type {Window} */ (doc.defaultView);
  const box = (/** @type {Element | null} */ e) => {
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
  };
  const nav = /** @type {HTMLElement} */ (doc.querySelector('nav'));
  const table = /** @type {HTMLElement} */ (doc.querySelector('#tensors'));
  let cellRight = 0;
  for (const td of doc.querySelectorAll('#tensors tr > :last-child'))
    cellRight = Math.max(cellRight, td.getBoundingClientRect().right);
  const ins = /** @type {HTMLElement} */ (doc.querySelector('[data-testid=block-inspector]'));
  const canvas = /** @type {HTMLCanvasElement | null} */ (doc.querySelector('[data-testid=heatmap]'));
  let marker = null;
  if (canvas?.dataset.marker) {
    const [x, y, w, h] = canvas.dataset.marker.split(',').map(Number);
    const r = canvas.getBoundingClientRect();
    const kx = r.width / canvas.width,
      ky = r.height / canvas.height;
    marker = { left: r.left + x * kx, top: r.top + y * ky, right: r.left + (x + w) * kx, bottom: r.top + (y + h) * ky };
  }
  const close = doc.querySelector('[data-testid=inspector-close]');
  return {
    vw: win.innerWidth,
    vh: win.innerHeight,
    nav: box(nav),
    navClient: nav.clientWidth,
    tableScroll: table.scrollWidth,
    cellRight,
    insHidden: ins.hidden,
    ins: box(ins),
    insFixed: win.getComputedStyle(ins).position === 'fixed',
    heat: box(canvas),
    summary: box(doc.querySelector('.summary-box')),
    marker,
    close: box(close),
    closeShown: !!close && win.getComputedStyle(close).visibility === 'visible',
    h2: box(doc.querySelector('#view h2')),
  };
}

/** @typedef {ReturnType<typeof measure>} Boxes */
const overlap = (/** @type {any} */ a, /** @type {any} */ b) =>
  a && b && a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;

/** The assertions at 1280x800 (inspector beside the view). @param {Boxes} m @param {string} who */
function wide(m, who) {
  assert.ok(m.tableScroll <= m.navClient, `${who}: tensor table ${m.tableScroll} px in a ${m.navClient} px column`);
  assert.ok(
    m.cellRight <= (m.nav?.right ?? 0) + 0.5,
    `${who}: size column ends at ${m.cellRight}, the column at ${m.nav?.right}`,
  );
  assert.equal(m.insHidden, false, who);
  assert.equal(m.insFixed, false, `${who}: at 1280 px the inspector is a column, not a sheet`);
  assert.ok(
    m.heat && m.ins && m.heat.right <= m.ins.left,
    `${who}: heatmap ${JSON.stringify(m.heat)} under inspector ${JSON.stringify(m.ins)}`,
  );
  assert.ok(m.summary && m.summary.right <= m.ins.left, `${who}: summary table reaches under the inspector`);
}

/** The assertions at 800x900 (the inspector is a sheet). @param {Boxes} m @param {string} who */
function narrow(m, who) {
  assert.ok(m.tableScroll <= m.navClient, `${who}: tensor table ${m.tableScroll} px in ${m.navClient}`);
  assert.equal(m.insHidden, false, who);
  assert.equal(m.insFixed, true, `${who}: the inspector is a sheet`);
  assert.ok(m.close && m.closeShown, `${who}: a close button`);
  assert.ok(
    m.close.top >= 0 && m.close.bottom <= m.vh && m.close.left >= 0 && m.close.right <= m.vw,
    `${who}: the close button is in the window: ${JSON.stringify(m.close)}`,
  );
  assert.ok(m.marker, `${who}: the marked cell is drawn`);
  assert.ok(
    !overlap(m.marker, m.ins),
    `${who}: the sheet ${JSON.stringify(m.ins)} covers the marked cell ${JSON.stringify(m.marker)}`,
  );
  assert.ok(m.marker.top >= 0 && m.marker.bottom <= m.vh, `${who}: the marked cell is in the window`);
}

test('layout in headless Chromium at 1280x800 and 800x900', async () => {
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await b.newPage();
    const open = async () => {
      await page.goto(`${b.base}${LINK}`);
      await page.waitForFunction(
        () =>
          document.body.dataset.linked === 'true' &&
          document.body.dataset.ready === 'true' &&
          !(/** @type {HTMLElement} */ (document.querySelector('[data-testid=block-inspector]')).hidden),
        null,
        { timeout: 30000 },
      );
    };
    await open();
    wide(await page.evaluate(measure, await page.evaluateHandle(() => document)), 'Chromium 1280x800');
    await page.setViewportSize({ width: 800, height: 900 });
    await open();
    narrow(await page.evaluate(measure, await page.evaluateHandle(() => document)), 'Chromium 800x900');
    // The close button closes the sheet; the link drops the block.
    await page.click('[data-testid=inspector-close]');
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    assert.equal(await page.$eval('[data-testid=block-inspector]', (e) => e.hidden), true);
    assert.equal(new URL(page.url()).searchParams.get('block'), null);
    // A tensor chosen in the list (above the view in one column) is in view once analysed.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('[data-testid=tensor-row][data-name="blk.0.ffn_up.weight"]');
    await page.waitForFunction(
      () =>
        document.body.dataset.ready === 'true' &&
        document.querySelector('#view h2')?.textContent === 'blk.0.ffn_up.weight',
    );
    const h2 = await page.$eval('#view h2', (e) => {
      const r = e.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, vh: innerHeight };
    });
    assert.ok(h2.top >= 0 && h2.bottom <= h2.vh, JSON.stringify(h2));

    // Long names (a mixture-of-experts model's) and 3-D shapes at 1280x800: the table still fits.
    await page.setViewportSize({ width: 1280, height: 800 });
    const names = ['token_embd.weight', 'output_norm.weight'];
    for (let l = 0; l < 12; l++)
      for (const n of [
        'attn_norm',
        'ffn_gate_inp_shexp',
        'ffn_down_shexp',
        'ffn_gate_exps',
        'attn_kv_a_mqa',
        'exp_probs_b.bias',
      ])
        names.push(`blk.${l}.${n}${n.includes('.') ? '' : '.weight'}`);
    const moe = writeGGUF({
      kv: [{ key: 'general.architecture', type: VT.STRING, value: 'deepseek2' }],
      tensors: names.map((name) => ({ name, type: GGMLType.F32, dims: [32, 2, 2], data: new Uint8Array(512) })),
    });
    await page.setInputFiles('[data-testid=file-input]', [
      { name: 'moe.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from(moe) },
    ]);
    await page.waitForFunction(() => document.querySelector('#overview')?.getAttribute('data-arch') === 'deepseek2');
    await ready(page);
    await page.focus('#tensors tbody tr[data-group="blk.10"]');
    await page.keyboard.press('ArrowRight');
    const fit = await page.evaluate(() => {
      const nav = /** @type {HTMLElement} */ (document.querySelector('nav'));
      let right = 0;
      for (const td of document.querySelectorAll('#tensors tr > :last-child'))
        right = Math.max(right, td.getBoundingClientRect().right);
      return {
        scroll: /** @type {HTMLElement} */ (document.querySelector('#tensors')).scrollWidth,
        client: nav.clientWidth,
        right,
        navRight: nav.getBoundingClientRect().right,
        rows: document.querySelectorAll('[data-testid=tensor-row]').length,
      };
    });
    assert.ok(fit.rows >= 6, JSON.stringify(fit));
    assert.ok(fit.scroll <= fit.client && fit.right <= fit.navRight + 0.5, JSON.stringify(fit));
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

// Runs in Firefox: opens the link in a frame of each size, measures, clicks close, posts the boxes.
const CHECK = `<!doctype html><meta charset="utf-8"><title>layout check</title><body style="margin:0">
<script type="module">
const measure = ${measure.toString()};
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
  const out = {};
  for (const [w, h] of [[1280, 800], [800, 900]]) {
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:' + w + 'px;height:' + h + 'px;border:0;display:block';
    frame.src = '/demo/${LINK}';
    document.body.replaceChildren(frame);
    const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' &&
      !d.querySelector('[data-testid=block-inspector]').hidden && d.querySelector('[data-testid=heatmap]')?.dataset.marker && d; }, 'the linked block at ' + w);
    out[w] = measure(doc);
    if (w === 800) {
      doc.querySelector('[data-testid=inspector-close]').click();
      out.closed = doc.querySelector('[data-testid=block-inspector]').hidden;
      // A tensor chosen in the list (above the view in one column) is in view once analysed.
      frame.contentWindow.scrollTo(0, 0);
      doc.querySelector('[data-testid=tensor-row][data-name="blk.0.ffn_up.weight"]').click();
      await until(() => doc.body.dataset.ready === 'true' && doc.querySelector('#view h2')?.textContent === 'blk.0.ffn_up.weight', 'the chosen tensor');
      const r = doc.querySelector('#view h2').getBoundingClientRect();
      out.h2 = { top: r.top, bottom: r.bottom, vh: frame.contentWindow.innerHeight };
    }
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });
} catch (e) {
  await post({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

test('layout in headless Firefox ESR at 1280x800 and 800x900', { timeout: 300000 }, async () => {
  const r = await firefoxPage(CHECK);
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  assert.equal(r[1280].vw, 1280);
  wide(r[1280], 'Firefox 1280x800');
  narrow(r[800], 'Firefox 800x900');
  assert.equal(r.closed, true, 'the close button closes the sheet');
  assert.ok(r.h2.top >= 0 && r.h2.bottom <= r.h2.vh, `the chosen tensor in view: ${JSON.stringify(r.h2)}`);
});
