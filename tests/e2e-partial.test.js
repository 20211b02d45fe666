// A partly downloaded model (header whole, data cut short inside a tensor) in headless Chromium (by
// file and by URL, HTTP Range) and Firefox ESR (at 1280x800 and 800x900): it opens, lists every
// tensor, says how much arrived, analyses the tensors whose bytes are there, and marks the others
// "data missing: bytes X..Y of Z" with the byte range worked out here from the whole file's header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo, ready } from './lib/browser.js';
import { firefoxCheck } from './lib/firefox-check.js';
import { viewerModel } from './lib/viewer-fixture.js';

const bq = await codec();
const [full] = viewerModel(bq);
const g = parseGGUF(full);
const at = (/** @type {string} */ n) =>
  /** @type {import('../js/node.js').TensorInfo} */ (g.tensors.find((t) => t.name === n));
const CUT_IN = 'blk.1.attn_q.weight';
const cut = g.dataOffset + at(CUT_IN).offset + 1000;
const part = full.slice(0, cut);
const end = Math.max(...g.tensors.map((t) => g.dataOffset + t.offset + /** @type {number} */ (t.byteLength)));
const missing = g.tensors.filter((t) => g.dataOffset + t.offset + /** @type {number} */ (t.byteLength) > cut);

test('a partial file in headless Chromium, by file and by URL', async (t) => {
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    await b.context.route('**/demo/fx/partial.gguf', (route) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(route.request().headers().range ?? '');
      if (!m) return route.fulfill({ status: 200, body: Buffer.from(part) });
      const s = Number(m[1]),
        e = Math.min(Number(m[2]), part.length - 1);
      return route.fulfill({
        status: 206,
        headers: { 'content-range': `bytes ${s}-${e}/${part.length}`, etag: '"partial"' },
        body: Buffer.from(part.subarray(s, e + 1)),
      });
    });
    const page = await b.newPage();
    await page.goto(`${b.base}?backend=${BACKEND}`);
    await page.waitForFunction(() => document.body.dataset.linked === 'true' && document.body.dataset.ready === 'true');
    const opened = () =>
      page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          !(/** @type {HTMLElement} */ (document.querySelector('#partial')).hidden),
        null,
        { timeout: 30000 },
      );
    for (const how of ['file', 'URL']) {
      await t.test(`by ${how}`, async () => {
        if (how === 'file')
          await page.setInputFiles('[data-testid=file-input]', [
            { name: 'partial.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from(part) },
          ]);
        else {
          await page.fill('#url', `${b.base}fx/partial.gguf`);
          await page.click('#url-form button[type=submit]');
        }
        await opened();
        assert.equal(await page.$eval('#error', (e) => e.hidden), true);
        // Every tensor listed; the note says what arrived.
        assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), g.tensors.length);
        const note = await page.textContent('[data-testid=partial]');
        assert.match(note ?? '', new RegExp(`${cut} of its ${end} bytes`));
        assert.match(note ?? '', new RegExp(`${g.tensors.length - missing.length} of ${g.tensors.length} tensors`));
        // The missing ones are marked with their byte range.
        for (const x of missing) {
          const from = Math.max(cut, g.dataOffset + x.offset),
            to = g.dataOffset + x.offset + /** @type {number} */ (x.byteLength) - 1;
          const row = await page.$eval(`[data-testid=tensor-row][data-name="${x.name}"]`, (r) => ({
            cls: r.className,
            title: r.getAttribute('title'),
          }));
          assert.equal(row.cls, 'unsupported', x.name);
          assert.match(row.title ?? '', new RegExp(`data missing: bytes ${from}\\.\\.${to} of ${end}`), x.name);
        }
        // The first view: the first 2-D weight, present, analysed (token_embd.weight, Q8_0).
        await page.waitForFunction(
          () => document.querySelector('#view h2')?.textContent === 'token_embd.weight (q8_0)',
        );
        // A present float tensor analyses; the cut one says its data is missing.
        await page.click('[data-testid=tensor-row][data-name="blk.0.attn_q.weight"]');
        await page.waitForFunction(
          () =>
            document.body.dataset.ready === 'true' &&
            document.querySelector('#view h2')?.textContent === 'blk.0.attn_q.weight',
        );
        assert.ok((await page.$$('[data-testid=summary-row]')).length > 0);
        await page.click(`[data-testid=tensor-row][data-name="${CUT_IN}"]`);
        await ready(page);
        assert.match(
          (await page.textContent('[data-testid=unsupported]')) ?? '',
          /data missing: bytes \d+\.\.\d+ of \d+/,
        );
      });
    }
    assert.deepEqual(
      b.problems.filter((x) => !x.startsWith('console: Failed to load resource')),
      [],
    );
  } finally {
    await b.close();
  }
});

test('a partial file in headless Firefox ESR at 1280x800 and 800x900', { timeout: 300000 }, async () => {
  const r = await firefoxCheck(
    `const bytes = await (await fetch('/fx/partial.gguf')).arrayBuffer();
  const out = {};
  for (const [w, h] of [[1280, 800], [800, 900]]) {
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:' + w + 'px;height:' + h + 'px;border:0;display:block';
    frame.src = '/demo/?backend=${BACKEND}';
    document.body.replaceChildren(frame);
    const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' && d; }, 'the page');
    const win = frame.contentWindow;
    doc.dispatchEvent(new win.CustomEvent('bq-open', { detail: { source: new win.File([bytes], 'partial.gguf'), label: 'partial.gguf' } }));
    await until(() => doc.body.dataset.ready === 'true' && !doc.querySelector('#partial').hidden && doc.querySelector('#view h2'), 'the partial file at ' + w);
    const note = doc.querySelector('#partial');
    const nr = note.getBoundingClientRect(), nav = doc.querySelector('nav').getBoundingClientRect();
    out[w] = {
      rows: doc.querySelectorAll('[data-testid=tensor-row]').length,
      marked: [...doc.querySelectorAll('[data-testid=tensor-row].unsupported')].map((r) => [r.dataset.name, r.title]),
      note: note.textContent,
      noteInNav: nr.left >= nav.left - 0.5 && nr.right <= nav.right + 0.5 && nr.height > 0,
      h2: doc.querySelector('#view h2').textContent,
    };
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });`,
    { 'partial.gguf': part },
  );
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  for (const w of [1280, 800]) {
    const v = r[w];
    assert.equal(v.rows, g.tensors.length, `${w}`);
    // The tree lists the tensors outside the layers first: compare as sets.
    assert.deepEqual(
      v.marked.map((/** @type {string[]} */ m) => m[0]).sort(),
      missing.map((x) => x.name).sort(),
      `${w}`,
    );
    for (const [name, title] of v.marked) {
      const x = at(name);
      const from = Math.max(cut, g.dataOffset + x.offset),
        to = g.dataOffset + x.offset + /** @type {number} */ (x.byteLength) - 1;
      assert.match(title, new RegExp(`data missing: bytes ${from}\\.\\.${to} of ${end}`), name);
    }
    assert.match(v.note, new RegExp(`${cut} of its ${end} bytes`));
    assert.ok(v.noteInNav, `${w}: the note sits in the tensor column`);
    assert.equal(v.h2, 'token_embd.weight (q8_0)');
  }
});
