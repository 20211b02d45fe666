// Why a URL did not open, told apart in headless Chromium: a server without CORS (it answers, the
// browser withholds the answer: a no-cors probe gets through), a refused connection and a name that
// does not resolve (the probe fails too), and a server that ignores Range: the page offers to
// download the whole file (its size from the server) and opens it when asked, or says why not for a
// file over the limit. No API option names in the page's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo } from './lib/browser.js';
import { firefoxCheck } from './lib/firefox-check.js';
import { viewerModel } from './lib/viewer-fixture.js';

const bq = await codec();
const [model] = viewerModel(bq);
const HUGE = 600 * 2 ** 20;

/** Another origin: /nocors.gguf (Range, no CORS header), /norange.gguf (CORS, always 200), /huge.gguf. */
function otherOrigin() {
  return createServer((req, res) => {
    const cors = { 'Access-Control-Allow-Origin': '*' };
    if (req.url === '/nocors.gguf') {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (!m) return res.writeHead(200, { 'Content-Length': model.length }).end(Buffer.from(model));
      const s = Number(m[1]),
        e = Math.min(Number(m[2]), model.length - 1);
      return res
        .writeHead(206, { 'Content-Range': `bytes ${s}-${e}/${model.length}`, ETag: '"x"' })
        .end(Buffer.from(model.subarray(s, e + 1)));
    }
    if (req.url === '/norange.gguf') {
      res.writeHead(200, { ...cors, 'Content-Length': model.length, 'Content-Type': 'application/octet-stream' });
      return req.method === 'HEAD' ? res.end() : res.end(Buffer.from(model));
    }
    if (req.url === '/huge.gguf') {
      res.writeHead(200, { ...cors, 'Content-Length': HUGE, 'Content-Type': 'application/octet-stream' });
      if (req.method === 'HEAD') return res.end();
      // Begins a body it never finishes: the page must not wait for it.
      res.write(Buffer.alloc(1024));
      req.on('close', () => res.destroy());
      return;
    }
    res.writeHead(404, cors).end();
  });
}

const listen = (/** @type {import('node:http').Server} */ s) =>
  new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve(/** @type {import('node:net').AddressInfo} */ (s.address()).port)),
  );

test('URL errors told apart in headless Chromium', async (t) => {
  const other = otherOrigin();
  const port = await listen(other);
  // A port nothing listens on: a server's port, closed again.
  const gone = createServer();
  const refused = await listen(gone);
  await new Promise((resolve) => gone.close(resolve));
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await b.newPage();
    await page.goto(`${b.base}?backend=${BACKEND}`);
    await page.waitForFunction(() => document.body.dataset.linked === 'true' && document.body.dataset.ready === 'true');
    // COEP credentialless keeps the page cross-origin isolated (threads need it).
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    const openUrl = async (/** @type {string} */ u) => {
      await page.fill('#url', u);
      await page.click('#url-form button[type=submit]');
      await page.waitForFunction(
        (u) =>
          document.body.dataset.ready === 'true' && document.querySelector('#file-info')?.textContent?.startsWith(u),
        u,
        { timeout: 60000 },
      );
      return (await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent))) ?? '';
    };
    const noApi = (/** @type {string} */ text) => assert.doesNotMatch(text, /allowFullDownload|maxBytes|pass \{/);

    await t.test('no CORS: the server answered, the browser withheld it', async () => {
      const text = await openUrl(`http://127.0.0.1:${port}/nocors.gguf`);
      assert.match(text, /answered, but the browser does not let this page read the answer.*CORS/);
      noApi(text);
    });
    await t.test('a refused connection and a name that does not resolve: no answer', async () => {
      for (const u of [`http://127.0.0.1:${refused}/model.gguf`, 'http://no-such-host.invalid/model.gguf']) {
        const text = await openUrl(u);
        assert.match(text, /no answer from .*refused.*DNS/, u);
        assert.doesNotMatch(text, /CORS/, u);
        noApi(text);
      }
    });
    await t.test('a server that ignores Range: the whole file is offered, and opens', async () => {
      const u = `http://127.0.0.1:${port}/norange.gguf`;
      const text = await openUrl(u);
      assert.match(text, /does not answer byte-range requests/);
      noApi(text);
      const mb = (model.length / 2 ** 20).toFixed(1);
      assert.equal(await page.textContent('[data-testid=full-download]'), `Download the whole file (${mb} MB)`);
      await page.click('[data-testid=full-download]');
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          document.querySelector('#overview')?.getAttribute('data-arch') === 'llama',
        null,
        { timeout: 60000 },
      );
      assert.equal(await page.$eval('#error', (e) => e.hidden), true);
      assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), 18);
    });
    await t.test('a file over the limit is not offered, and the page says why', async () => {
      const text = await openUrl(`http://127.0.0.1:${port}/huge.gguf`);
      assert.match(text, /does not answer byte-range requests/);
      assert.equal(await page.$('[data-testid=full-download]'), null);
      assert.match(text, /The whole file is 600 MB, more than the 512 MB this page downloads at once/);
      noApi(text);
    });
    assert.deepEqual(
      b.problems.filter((x) => !/^console: (Failed to load resource|Access to fetch)/.test(x)),
      [],
    );
  } finally {
    await b.close();
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  }
});

test('URL errors told apart in headless Firefox ESR', { timeout: 300000 }, async () => {
  const other = otherOrigin();
  const port = await listen(other);
  const gone = createServer();
  const refused = await listen(gone);
  await new Promise((resolve) => gone.close(resolve));
  try {
    const r = await firefoxCheck(`
  const frame = document.createElement('iframe');
  frame.style.cssText = 'width:1280px;height:800px;border:0';
  frame.src = '/demo/?backend=${BACKEND}';
  document.body.replaceChildren(frame);
  const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' && d; }, 'the page');
  const out = { isolated: frame.contentWindow.crossOriginIsolated };
  for (const [k, u] of [['cors', 'http://127.0.0.1:${port}/nocors.gguf'], ['refused', 'http://127.0.0.1:${refused}/m.gguf'], ['norange', 'http://127.0.0.1:${port}/norange.gguf']]) {
    doc.querySelector('#url').value = u;
    doc.querySelector('#url-form button[type=submit]').click();
    await until(() => doc.body.dataset.ready === 'true' && doc.querySelector('#file-info').textContent.startsWith(u), k);
    out[k] = doc.querySelector('#error').textContent;
    out[k + 'Button'] = doc.querySelector('[data-testid=full-download]')?.textContent ?? null;
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });`);
    assert.equal(r.ok, true, r.error);
    assert.match(r.ua, /Firefox/);
    assert.equal(r.isolated, true);
    assert.match(r.cors, /answered, but the browser does not let this page read the answer.*CORS/);
    assert.match(r.refused, /no answer from .*refused.*DNS/);
    assert.match(r.norange, /does not answer byte-range requests/);
    assert.equal(r.norangeButton, `Download the whole file (${(model.length / 2 ** 20).toFixed(1)} MB)`);
    for (const k of ['cors', 'refused', 'norange']) assert.doesNotMatch(r[k], /allowFullDownload|pass \{/);
  } finally {
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  }
});
