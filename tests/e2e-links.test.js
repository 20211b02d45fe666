// Deep links in headless Chromium (and their notes in Firefox ESR at 1280x800 and 800x900): a
// local file's link names it (file=) with the tensor, format, scale and block; opening that link
// never shows the sample but asks for the file by name, and picking it restores the same block;
// picking another file says the link was not followed; every invalid part of a link (tensor,
// format, scale, block) is reported on the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo, ready } from './lib/browser.js';
import { firefoxCheck } from './lib/firefox-check.js';
import { viewerModel } from './lib/viewer-fixture.js';
import { parseGGUF } from '../js/node.js';

const bq = await codec();
const [model] = viewerModel(bq);
const g = parseGGUF(model);
const file = (/** @type {string} */ name) => ({
  name,
  mimeType: 'application/octet-stream',
  buffer: Buffer.from(model),
});
const linked = (/** @type {import('playwright-core').Page} */ p) =>
  p.waitForFunction(() => document.body.dataset.ready === 'true' && document.body.dataset.linked === 'true', null, {
    timeout: 30000,
  });
const inspectedAt = (/** @type {import('playwright-core').Page} */ p, /** @type {string} */ block) =>
  p.waitForFunction(
    (b) =>
      document.body.dataset.ready === 'true' &&
      !(/** @type {HTMLElement} */ (document.querySelector('[data-testid=block-inspector]')).hidden) &&
      document.querySelector('[data-testid=block-inspector]')?.getAttribute('data-block') === b,
    block,
    { timeout: 30000 },
  );

test('deep links in headless Chromium', async (t) => {
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    const name = 'blk.1.attn_q.weight';
    let link = '';
    await t.test('a local file: the link names it with tensor, format, scale and block', async () => {
      const page = await b.newPage();
      await page.goto(`${b.base}?backend=${BACKEND}`);
      await linked(page);
      await page.setInputFiles('[data-testid=file-input]', [file('viewer.gguf')]);
      await page.waitForFunction(() => document.querySelector('#overview')?.getAttribute('data-arch') === 'llama');
      await ready(page);
      await page.click(`[data-testid=tensor-row][data-name="${name}"]`);
      await page.waitForFunction(
        (n) => document.body.dataset.ready === 'true' && document.querySelector('#view h2')?.textContent === n,
        name,
      );
      await page.selectOption('[data-testid=format-select]', 'q5_1');
      await ready(page);
      await page.selectOption('#scale', 'log');
      await ready(page);
      await page.click('[data-testid=worst-list] button, ol.worst button');
      await ready(page);
      const block = await page.getAttribute('[data-testid=block-inspector]', 'data-block');
      const u = new URL(page.url());
      assert.deepEqual(
        ['file', 'tensor', 'format', 'scale', 'block'].map((k) => u.searchParams.get(k)),
        ['viewer.gguf', name, 'q5_1', 'log', block],
      );
      assert.equal(u.searchParams.get('url'), null);
      link = page.url();
      await page.close();
    });

    await t.test('opening it asks for the file by name (no sample), then restores the block', async () => {
      const page = await b.newPage();
      /** @type {string[]} */
      const asked = [];
      page.on('request', (r) => asked.push(new URL(r.url()).pathname));
      await page.goto(link);
      await linked(page);
      assert.ok(!asked.some((x) => x.endsWith('sample.gguf')), asked.join(' '));
      assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), 0);
      assert.equal(await page.$eval('#link-note', (e) => e.hidden), false);
      assert.match(await page.textContent('#link-note'), /viewer\.gguf.*Open it again/);
      assert.match(await page.textContent('[data-testid=ask-file]'), /viewer\.gguf/);
      assert.equal(page.url(), link, 'the address keeps what the link asks for');
      await page.setInputFiles('[data-testid=file-input]', [file('viewer.gguf')]);
      const block = new URL(link).searchParams.get('block') ?? '';
      await inspectedAt(page, block);
      const ins = await page.$eval('[data-testid=block-inspector]', (e) => ({ ...e.dataset }));
      assert.equal(ins.format, 'q5_1');
      assert.equal(await page.$eval('#view h2', (e) => e.textContent), name);
      assert.equal(await page.$eval('#scale', (e) => /** @type {HTMLSelectElement} */ (e).value), 'log');
      assert.equal(await page.$eval('#link-note', (e) => e.hidden), true);
      // The block's d is the API's: Q5_1 of the F16 tensor's values (24-byte blocks, d at 0..1).
      const x = bq.dequantize('f16', g.tensorBytes(name));
      const q = bq.quantize('q5_1', x);
      const k = Number(block) * 24;
      const h = q[k] | (q[k + 1] << 8);
      const half =
        (h & 0x8000 ? -1 : 1) *
        ((h >> 10) & 31 ? (1024 + (h & 1023)) * 2 ** (((h >> 10) & 31) - 25) : (h & 1023) * 2 ** -24);
      assert.equal(Number(ins.d), half);
      assert.equal(new URL(page.url()).searchParams.get('file'), 'viewer.gguf');
      await page.close();
    });

    await t.test('another file picked: the link is not followed, and the page says so', async () => {
      const page = await b.newPage();
      await page.goto(link);
      await linked(page);
      await page.setInputFiles('[data-testid=file-input]', [file('other.gguf')]);
      await page.waitForFunction(() => document.querySelector('#overview')?.getAttribute('data-arch') === 'llama');
      await ready(page);
      assert.match(await page.textContent('#link-note'), /other\.gguf, not viewer\.gguf/);
      assert.equal(await page.$eval('[data-testid=block-inspector]', (e) => e.hidden), true);
      assert.equal(new URL(page.url()).searchParams.get('file'), 'other.gguf');
      await page.close();
    });

    await t.test('invalid parts of a link are reported on the page', async () => {
      const page = await b.newPage();
      const s = 'blk.0.attn_q.weight'; // in the bundled sample, F16 [256, 256]: 2048 blocks of 32
      for (const [q, want] of /** @type {[string, RegExp[]][]} */ ([
        ['url=sample.gguf&tensor=no.such.tensor&block=3', [/tensor=no\.such\.tensor: sample\.gguf has no tensor/]],
        [`url=sample.gguf&tensor=${s}&format=nope`, [/format=nope: .* is compared in q8_0, q4_0/]],
        [`url=sample.gguf&tensor=${s}&format=q4_0&block=999999999`, [/block=999999999: .* has \d+ blocks/]],
        [`url=sample.gguf&tensor=${s}&block=-1`, [/block=-1: not a block number/]],
        [`url=sample.gguf&tensor=${s}&scale=cubic`, [/scale=cubic: the colour scale is linear or log/]],
        ['url=sample.gguf&format=q4_0', [/format=q4_0: the link names no tensor/]],
      ])) {
        await page.goto(`${b.base}?backend=${BACKEND}&${q}`);
        await linked(page);
        assert.equal(await page.$eval('#link-note', (e) => e.hidden), false, q);
        const text = await page.textContent('#link-note');
        for (const w of want) assert.match(text ?? '', w, q);
      }
      // A valid link says nothing.
      await page.goto(`${b.base}?backend=${BACKEND}&url=sample.gguf&tensor=${s}&format=q4_0&block=5`);
      await inspectedAt(page, '5');
      assert.equal(await page.$eval('#link-note', (e) => e.hidden), true);
      await page.close();
    });
    assert.deepEqual(
      b.problems.filter((x) => !x.startsWith('console: Failed to load resource')),
      [],
    );
  } finally {
    await b.close();
  }
});

test(
  'deep links in headless Firefox ESR at 1280x800 and 800x900: the asked-for file, invalid parts',
  { timeout: 300000 },
  async () => {
    const r = await firefoxCheck(`
  const out = {};
  for (const [w, h] of [[1280, 800], [800, 900]]) {
    for (const [k, q] of [['file', 'file=viewer.gguf&tensor=blk.1.attn_q.weight&format=q5_1&block=3'], ['bad', 'url=sample.gguf&tensor=no.such.tensor&block=3']]) {
      const frame = document.createElement('iframe');
      frame.style.cssText = 'width:' + w + 'px;height:' + h + 'px;border:0;display:block';
      frame.src = '/demo/?backend=${BACKEND}&' + q;
      document.body.replaceChildren(frame);
      const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' && d; }, k + ' at ' + w);
      const n = doc.querySelector('#link-note');
      const b = n.getBoundingClientRect();
      out[k + w] = {
        hidden: n.hidden,
        text: n.textContent,
        inView: b.left >= 0 && b.right <= frame.contentWindow.innerWidth && b.top >= 0 && b.bottom <= frame.contentWindow.innerHeight && b.height > 0,
        rows: doc.querySelectorAll('[data-testid=tensor-row]').length,
        href: frame.contentWindow.location.search,
      };
    }
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });`);
    assert.equal(r.ok, true, r.error);
    assert.match(r.ua, /Firefox/);
    for (const w of [1280, 800]) {
      const f = r[`file${w}`],
        bad = r[`bad${w}`];
      assert.equal(f.hidden, false, `${w}`);
      assert.match(f.text, /viewer\.gguf.*Open it again.*tensor blk\.1\.attn_q\.weight, format q5_1, block 3/, `${w}`);
      assert.equal(f.rows, 0, `${w}: no sample shown`);
      assert.match(f.href, /file=viewer\.gguf/, `${w}: the address keeps the link`);
      assert.ok(f.inView, `${w}: the note is in view`);
      assert.equal(bad.hidden, false, `${w}`);
      assert.match(bad.text, /tensor=no\.such\.tensor: sample\.gguf has no tensor/, `${w}`);
      assert.ok(bad.inView, `${w}: the report is in view`);
    }
  },
);
