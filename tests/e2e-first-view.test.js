// The first view of a quantized model (laid out as llama-quantize writes Q4_K_M: a tall token
// embedding, 1-D norms before each layer's weights), in headless Chromium and Firefox ESR at
// 1280x800 and 800x900: it opens on the first 2-D weight, analysed (not a norm, not "choose a
// tensor"); the overview is expanded; general.file_type shows as Q4_K_M; the footer about the
// synthetic sample is shown under the sample only; the tall tensor's heatmap is wrapped into
// columns and spans its panel (measured from element boxes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firefoxPage } from './lib/firefox-check.js';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo } from './lib/browser.js';
import { quantizedModel } from './lib/viewer-fixture.js';

const bq = await codec();
const model = quantizedModel(bq);

/** Runs in the demo's document: what the assertions check. @param {Document} doc */
function firstView(doc) {
  const win = /** @type {Window} */ (doc.defaultView);
  const box = (/** @type {Element | null} */ e) => {
    const r = e?.getBoundingClientRect();
    return r ? { left: r.left, right: r.right, width: r.width, height: r.height } : null;
  };
  const canvas = /** @type {HTMLElement | null} */ (doc.querySelector('[data-testid=heatmap]'));
  return {
    h2: doc.querySelector('#view h2')?.textContent ?? '',
    summary: doc.querySelectorAll('[data-testid=ruler]').length,
    overviewOpen: doc.querySelector('#tab-overview')?.getAttribute('aria-expanded') === 'true',
    overviewHidden: /** @type {HTMLElement} */ (doc.querySelector('#overview')).hidden,
    fileType: /** @type {HTMLElement} */ (doc.querySelector('#overview')).dataset.fileType,
    fileTypeText: doc.querySelector('[data-testid=file-type]')?.textContent ?? '',
    modelLine: doc.querySelector('[data-testid=model-line]')?.textContent ?? '',
    footerShown: !(/** @type {HTMLElement} */ (doc.querySelector('footer')).hidden),
    footerDisplay: win.getComputedStyle(/** @type {Element} */ (doc.querySelector('footer'))).display,
    fold: canvas?.dataset.fold,
    cells: canvas?.dataset.cells,
    heat: box(canvas),
    view: box(doc.querySelector('#view')),
  };
}

/** @param {ReturnType<typeof firstView>} v @param {string} who */
function check(v, who) {
  assert.equal(v.h2, 'token_embd.weight (q4_K)', `${who}: opens on the first 2-D weight, analysed`);
  assert.equal(v.summary, 1, `${who}: its analysis is shown`);
  assert.equal(v.overviewOpen, true, `${who}: overview tab expanded`);
  assert.equal(v.overviewHidden, false, `${who}: overview shown`);
  assert.equal(v.fileType, 'Q4_K_M', who);
  assert.equal(v.fileTypeText, 'Q4_K_M', who);
  assert.match(v.modelLine, /Quantized Fixture \(llama\), Q4_K_M:/, who);
  assert.equal(v.footerShown, false, `${who}: no synthetic-sample footer under a user's file`);
  assert.equal(v.footerDisplay, 'none', who);
  // 3000 rows of one super-block: wrapped into round(sqrt(4/3 · 3000)) = 63 columns of 48 rows.
  assert.equal(v.fold, '63', who);
  assert.equal(v.cells, '63x48', who);
  assert.ok(
    v.heat && v.view && v.heat.width >= 0.75 * v.view.width,
    `${who}: heatmap ${v.heat?.width} px in a ${v.view?.width} px panel`,
  );
  assert.ok(v.heat.height > 0 && v.heat.width / v.heat.height > 1, `${who}: wider than tall`);
}

test('the first view of a quantized model in headless Chromium', async () => {
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await b.newPage();
    for (const [width, height] of [
      [1280, 800],
      [800, 900],
    ]) {
      await page.setViewportSize({ width, height });
      await page.goto(`${b.base}?backend=${BACKEND}`);
      await page.waitForFunction(
        () => document.body.dataset.linked === 'true' && document.body.dataset.ready === 'true',
        null,
        { timeout: 30000 },
      );
      // Under the sample, the footer says it is synthetic.
      assert.equal(await page.$eval('footer', (e) => e.hidden), false);
      await page.setInputFiles('[data-testid=file-input]', [
        { name: 'quantized.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from(model) },
      ]);
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          document.querySelector('[data-testid=heatmap]')?.getAttribute('data-cells') &&
          document.querySelector('#view h2')?.textContent?.startsWith('token_embd'),
        null,
        { timeout: 30000 },
      );
      check(await page.evaluate(firstView, await page.evaluateHandle(() => document)), `Chromium ${width}x${height}`);
      // A click on the wrapped map inspects the block of its row: display cell (x, y) is row
      // floor(x / 1) · 48 + y. The cell in column 10, row 5 is row 485: block 485.
      const r = await page.$eval('[data-testid=heatmap]', (e) => {
        e.scrollIntoView({ block: 'center' });
        const b = e.getBoundingClientRect();
        return { x: b.left + ((10 + 0.5) / 63) * b.width, y: b.top + ((5 + 0.5) / 48) * b.height };
      });
      await page.mouse.click(r.x, r.y);
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          !(/** @type {HTMLElement} */ (document.querySelector('[data-testid=block-inspector]')).hidden),
      );
      assert.equal(await page.getAttribute('[data-testid=block-inspector]', 'data-block'), '485');
    }
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

const CHECK = `<!doctype html><meta charset="utf-8"><title>first view check</title><body style="margin:0">
<script type="module">
const firstView = ${firstView.toString()};
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
  const bytes = await (await fetch('/fx/quantized.gguf')).arrayBuffer();
  const out = {};
  for (const [w, h] of [[1280, 800], [800, 900]]) {
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:' + w + 'px;height:' + h + 'px;border:0;display:block';
    frame.src = '/demo/?backend=${BACKEND}';
    document.body.replaceChildren(frame);
    const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' && d; }, 'the sample at ' + w);
    out['sampleFooter' + w] = !doc.querySelector('footer').hidden;
    // The page's own hand-over of a file (the Quantize panel's): as if the file were picked.
    const win = frame.contentWindow;
    doc.dispatchEvent(new win.CustomEvent('bq-open', { detail: { source: new win.File([bytes], 'quantized.gguf'), label: 'quantized.gguf' } }));
    await until(() => doc.body.dataset.ready === 'true' && doc.querySelector('[data-testid=heatmap]')?.dataset.cells && doc.querySelector('#view h2')?.textContent.startsWith('token_embd'), 'the first view at ' + w);
    out[w] = firstView(doc);
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });
} catch (e) {
  await post({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

test('the first view of a quantized model in headless Firefox ESR', { timeout: 300000 }, async () => {
  const r = await firefoxPage(CHECK, {
    route(req, res) {
      if (req.method !== 'GET' || req.url !== '/fx/quantized.gguf') return false;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(Buffer.from(model));
      return true;
    },
  });
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  for (const w of [1280, 800]) {
    assert.equal(r[`sampleFooter${w}`], true, 'the footer under the sample');
    check(r[w], `Firefox ${w}`);
  }
});
