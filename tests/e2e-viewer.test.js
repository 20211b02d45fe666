// The model viewer in headless Chromium on the build under test: an LLM-like fixture (built here
// with writeGGUF, opened through the file input) shows overview totals equal to sums over
// parseGGUF's tensors and the KV-cache estimate written out from its metadata; the metadata table
// searches, pages arrays and shows the chat template; the vocabulary finds tokens by text and id
// with their UTF-8 bytes and byte tokens as bytes, and keeps only the rows in view in the DOM; the
// shards of a split model open as one model; the keyboard alone goes from the file input to an
// inspected block; a deep link restores the same block and the URL follows the page; screenshots
// at 1440 and 800 px wide.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { parseGGUF, typeInfo, writeGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo, ready, vocabSearch } from './lib/browser.js';
import { viewerModel, vocabTokens, ARCH } from './lib/viewer-fixture.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const bq = await codec();
const [model] = viewerModel(bq);
const g = parseGGUF(model);
const shards = viewerModel(bq, 3);

const half = (/** @type {number} */ h) => {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
};

test('the model viewer in headless Chromium', async (t) => {
  const b = await launchDemo({ width: 1440, height: 900 });
  try {
    const page = await b.newPage();
    await page.goto(`${b.base}?backend=${BACKEND}`);
    await page.waitForFunction(
      () => document.body.dataset.ready === 'true' && !!document.querySelector('#overview').dataset.params,
      null,
      {
        timeout: 30000,
      },
    );
    const open = async (/** @type {{ name: string, buffer: Uint8Array }[]} */ files) => {
      await page.setInputFiles(
        '[data-testid=file-input]',
        files.map((f) => ({ name: f.name, mimeType: 'application/octet-stream', buffer: Buffer.from(f.buffer) })),
      );
      await page.waitForFunction(
        (n) =>
          document.body.dataset.ready === 'true' && document.querySelector('#overview').dataset.shards === String(n),
        files.length,
        { timeout: 30000 },
      );
      await page.waitForFunction(() => document.querySelector('#overview').dataset.arch === 'llama');
    };
    /** Opens a model panel's tab (choosing an open tab again closes it). */
    const openTab = async (/** @type {string} */ id) => {
      if ((await page.getAttribute(id, 'aria-expanded')) !== 'true') await page.click(id);
      assert.equal(await page.getAttribute(id, 'aria-expanded'), 'true');
    };
    await open([{ name: 'viewer.gguf', buffer: model }]);

    await t.test('overview totals equal the sums over parseGGUF tensors; KV cache from the metadata', async () => {
      const ov = await page.$eval('[data-testid=overview]', (e) => ({ ...e.dataset }));
      let params = 0,
        bytes = 0;
      for (const x of g.tensors) {
        const n = x.dims.reduce((a, c) => a * c, 1);
        params += n;
        bytes += (n / typeInfo(x.type).blockSize) * typeInfo(x.type).typeSize;
      }
      assert.equal(Number(ov.params), params);
      assert.equal(Number(ov.bytes), bytes);
      assert.equal(Number(ov.tensors), g.tensors.length);
      const { layers, embd, heads, kvHeads, ctx } = ARCH;
      const kvAt = (/** @type {number} */ n) => layers * n * 2 * kvHeads * (embd / heads) * 2;
      assert.equal(Number(ov.ctx), ctx);
      assert.equal(Number(ov.kvBytes), kvAt(ctx));
      await openTab('#tab-overview');
      await page.fill('[data-testid=ctx-input]', '32768');
      assert.equal(Number(await page.getAttribute('[data-testid=overview]', 'data-kv-bytes')), kvAt(32768));
      // Per type: the Q4_K row is its tensors' bytes.
      const q4k = g.tensors.filter((x) => typeInfo(x.type).name === 'q4_K');
      assert.equal(
        Number(await page.getAttribute('[data-testid=by-type] tr[data-key=q4_K]', 'data-bytes')),
        q4k.reduce((a, x) => a + (x.nElements / 256) * 144, 0),
      );
      const layerRows = await page.$$eval('[data-testid=by-layer] tbody tr', (rs) => rs.map((r) => r.dataset.key));
      assert.deepEqual(layerRows, ['not in a layer', 'blk.0', 'blk.1', 'blk.2']);
      await page.screenshot({ path: new URL('viewer-overview-1440.png', ART).pathname });
      // Choosing the open tab again closes its panel (the tensor view comes back up); the line stays.
      await page.click('#tab-overview');
      assert.equal(await page.$eval('#overview', (e) => e.hidden), true);
      assert.match(await page.textContent('[data-testid=model-line]'), /Viewer Fixture 3L \(llama\)/);
    });

    await t.test('metadata: search, value types, array pages, the chat template', async () => {
      await openTab('#tab-metadata');
      await page.fill('[data-testid=meta-search]', 'head_count');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=meta-row]').length === 2);
      assert.deepEqual(
        await page.$$eval('[data-testid=meta-row]', (rs) => rs.map((r) => [r.dataset.key, r.dataset.type])),
        [
          ['llama.attention.head_count', 'u32'],
          ['llama.attention.head_count_kv', 'u32'],
        ],
      );
      await page.fill('[data-testid=meta-search]', 'tokenizer');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=meta-row]').length === 5);
      await page.click('[data-testid=meta-row][data-key="tokenizer.ggml.tokens"] button');
      await page.waitForSelector('[data-testid=meta-items]');
      const tokens = vocabTokens();
      assert.equal(await page.$$eval('[data-testid=meta-items] li', (l) => l.length), 50);
      await page.click('.meta-detail button:has-text("next")');
      await page.waitForFunction(
        () => document.querySelector('[data-testid=meta-items]')?.getAttribute('start') === '50',
      );
      assert.equal(await page.textContent('[data-testid=meta-items] li'), JSON.stringify(tokens[50]));
      await page.click('[data-testid=meta-row][data-key="tokenizer.chat_template"] button');
      await page.waitForSelector('[data-testid=meta-text]');
      const text = await page.textContent('[data-testid=meta-text]');
      assert.ok(text.split('\n').length >= 3, text);
      assert.equal(text.replace(/\n\s*/g, ''), g.metadata.get('tokenizer.chat_template'));
    });

    await t.test('vocabulary: text and id search, UTF-8 bytes, byte tokens, a virtualized list', async () => {
      await openTab('#tab-vocab');
      const search = (/** @type {string} */ q) => vocabSearch(page, q);
      const tokens = vocabTokens();
      let rows = await search('日本');
      assert.deepEqual(
        rows.map((r) => [Number(r.id), r.hex, r.text]),
        [[tokens.indexOf('日本語'), 'e6 97 a5 e6 9c ac e8 aa 9e', '日本語']],
      );
      rows = await search('#13');
      assert.deepEqual([rows[0].id, rows[0].hex, rows[0].type, rows[0].text], ['13', '0a', 'byte', 'byte 0x0A']);
      rows = await search(' quant');
      assert.equal(Number(rows[0].id), tokens.indexOf('▁quant'));
      assert.equal(Number(rows[0].score), -tokens.indexOf('▁quant') / 4);
      rows = await search('');
      assert.equal(Number(await page.getAttribute('#vocab', 'data-total')), tokens.length);
      assert.ok(rows.length < 60, `${rows.length} rows in the DOM of ${tokens.length}`);
      // Scrolled to the end, the last token is drawn.
      await page.$eval('[data-testid=vocab-list]', (l) => (l.scrollTop = l.scrollHeight));
      await page.waitForSelector(`[data-testid=vocab-row][data-id="${tokens.length - 1}"]`);
      await page.screenshot({ path: new URL('viewer-vocab-1440.png', ART).pathname });
    });

    await t.test('a split model: its three shards open as one model', async () => {
      await open(shards.map((buffer, i) => ({ name: `viewer-0000${i + 1}-of-00003.gguf`, buffer })));
      const ov = await page.$eval('[data-testid=overview]', (e) => ({ ...e.dataset }));
      assert.equal(Number(ov.tensors), g.tensors.length);
      assert.equal(
        Number(ov.bytes),
        g.tensors.reduce((a, x) => a + x.byteLength, 0),
      );
      assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), g.tensors.length);
      // By URL: the first shard's address opens all three (served with Range support by the test).
      await b.context.route('**/demo/fx/*.gguf', (route) => {
        const i = Number(/-0000(\d)-of-00003\.gguf$/.exec(route.request().url())?.[1]) - 1;
        const body = shards[i];
        if (!body) return route.fulfill({ status: 404, body: 'not found' });
        const m = /^bytes=(\d+)-(\d+)$/.exec(route.request().headers().range ?? '');
        if (!m) return route.fulfill({ status: 200, body: Buffer.from(body) });
        const start = Number(m[1]),
          end = Math.min(Number(m[2]), body.length - 1);
        return route.fulfill({
          status: 206,
          headers: { 'content-range': `bytes ${start}-${end}/${body.length}`, etag: `"fx${i}"` },
          body: Buffer.from(body.subarray(start, end + 1)),
        });
      });
      await page.fill('#url', `${b.base}fx/viewer-00001-of-00003.gguf`);
      await page.click('#url-form button[type=submit]');
      await page.waitForFunction(
        () => document.body.dataset.ready === 'true' && document.querySelector('#overview').dataset.shards === '3',
        null,
        { timeout: 30000 },
      );
      assert.equal(
        Number(await page.getAttribute('#overview', 'data-params')),
        g.tensors.reduce((a, x) => a + x.nElements, 0),
      );
      assert.ok(await page.$eval('#error', (e) => e.hidden), 'no error left from the first try');
      assert.equal(new URL(page.url()).searchParams.getAll('url').length, 3);
    });

    await t.test('keyboard only: from the file input to an inspected block', async () => {
      await open([{ name: 'viewer.gguf', buffer: model }]);
      await page.focus('[data-testid=file-input]');
      // Tab until the tensor tree holds focus (one tab stop for the whole tree).
      let stops = 0;
      for (; stops < 30; stops++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(() => !!document.activeElement?.closest('#tensors'))) break;
      }
      assert.ok(stops < 30, 'the tensor tree is reachable by Tab');
      // The tree is one tab stop: Tab leaves it.
      const rowsWithStop = await page.$$eval('#tensors tbody tr', (rs) => rs.filter((r) => r.tabIndex === 0).length);
      assert.equal(rowsWithStop, 1);
      // Down to blk.1's attn_q (F16), Enter analyses it.
      const target = 'blk.1.attn_q.weight';
      for (let i = 0; i < 40; i++) {
        if ((await page.evaluate(() => document.activeElement?.getAttribute('data-name'))) === target) break;
        await page.keyboard.press('ArrowDown');
      }
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-name')), target);
      const outline = await page.evaluate(
        () => getComputedStyle(/** @type {Element} */ (document.activeElement)).outlineStyle,
      );
      assert.notEqual(outline, 'none', 'the focused row shows focus');
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        (n) => document.body.dataset.ready === 'true' && document.querySelector('#view h2')?.textContent === n,
        target,
      );
      // Tab to the heatmap, move right twice and down once, Enter inspects that block.
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(() => document.activeElement?.getAttribute('data-testid') === 'heatmap')) break;
      }
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'heatmap');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
      );
      const block = Number(await page.getAttribute('[data-testid=block-inspector]', 'data-block'));
      assert.equal(block, 1);
      // The URL names the tensor, format and block now.
      const u = new URL(page.url());
      assert.equal(u.searchParams.get('tensor'), target);
      assert.equal(u.searchParams.get('block'), '1');
      assert.equal(u.searchParams.get('url'), null, 'a local file has no URL to link');
    });

    await t.test('a deep link restores the same block, and the URL follows the page', async () => {
      const name = 'blk.0.attn_q.weight';
      const link = `${b.base}?backend=${BACKEND}&url=sample.gguf&tensor=${name}&format=q5_1&block=229`;
      const p2 = await b.newPage();
      await p2.goto(link);
      await p2.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
        null,
        { timeout: 30000 },
      );
      const ins = await p2.$eval('[data-testid=block-inspector]', (e) => ({ ...e.dataset }));
      assert.equal(ins.block, '229');
      assert.equal(ins.format, 'q5_1');
      const s = parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));
      const q = bq.quantize('q5_1', bq.dequantize('f16', s.tensorBytes(name)));
      assert.equal(Number(ins.d), half(q[229 * 24] | (q[229 * 24 + 1] << 8)));
      assert.equal(
        await p2.$eval('[data-testid=format-select]', (e) => /** @type {HTMLSelectElement} */ (e).value),
        'q5_1',
      );
      const u = new URL(p2.url());
      assert.deepEqual(
        [u.searchParams.get('url'), u.searchParams.get('tensor'), u.searchParams.get('block')],
        ['sample.gguf', name, '229'],
      );
      // The row of the linked tensor is selected, and choosing another format is written back.
      assert.equal(await p2.getAttribute(`[data-testid=tensor-row][data-name="${name}"]`, 'aria-selected'), 'true');
      await p2.selectOption('[data-testid=format-select]', 'q8_0');
      await ready(p2);
      assert.equal(new URL(p2.url()).searchParams.get('format'), 'q8_0');
      await p2.screenshot({ path: new URL('viewer-deeplink-1440.png', ART).pathname });
      // At 800 px wide.
      await p2.setViewportSize({ width: 800, height: 900 });
      await p2.goto(link);
      await p2.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
        null,
        { timeout: 30000 },
      );
      assert.equal(await p2.getAttribute('[data-testid=block-inspector]', 'data-block'), '229');
      // A block inspected from the heatmap opens where the user is, not below the whole page.
      await p2.focus('[data-testid=heatmap]');
      await p2.keyboard.press('ArrowDown');
      await p2.keyboard.press('Enter');
      await p2.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          document.querySelector('[data-testid=block-inspector]')?.getAttribute('data-block') === '261',
      );
      const seen = await p2.$eval('[data-testid=block-inspector]', (e) => {
        const r = e.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, h: innerHeight };
      });
      assert.ok(seen.top >= 0 && seen.top < seen.h * 0.75 && seen.bottom > seen.top, JSON.stringify(seen));
      await p2.screenshot({ path: new URL('viewer-800.png', ART).pathname });
      // Escape closes the sheet and gives the keyboard back to the heatmap.
      await p2.keyboard.press('Escape');
      assert.equal(await p2.$eval('[data-testid=block-inspector]', (e) => e.hidden), true);
      assert.equal(await p2.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'heatmap');
      await p2.close();
    });

    await t.test('a 7B-like layout: 291 tensors in 32 layers and a 128k-token vocabulary', async () => {
      const V = 128256;
      const tokens = Array.from({ length: V }, (_, i) =>
        i < 256 ? `<0x${i.toString(16).padStart(2, '0').toUpperCase()}>` : `▁t${i}`,
      );
      const names = ['token_embd.weight', 'output_norm.weight', 'output.weight'];
      for (let l = 0; l < 32; l++)
        for (const n of [
          'attn_norm',
          'attn_q',
          'attn_k',
          'attn_v',
          'attn_output',
          'ffn_norm',
          'ffn_gate',
          'ffn_up',
          'ffn_down',
        ])
          names.push(`blk.${l}.${n}.weight`);
      const big = writeGGUF({
        kv: [
          { key: 'general.architecture', type: VT.STRING, value: 'llama' },
          { key: 'tokenizer.ggml.tokens', type: VT.ARRAY, itemType: VT.STRING, value: tokens },
        ],
        tensors: names.map((name) => ({ name, type: GGMLType.F32, dims: [32], data: new Uint8Array(128) })),
      });
      await open([{ name: 'big.gguf', buffer: big }]);
      assert.equal(Number(await page.getAttribute('#overview', 'data-tensors')), 291);
      // Collapsed layers: 33 group rows and the 3 tensors outside the layers; one tab stop.
      const shown = await page.$$eval('#tensors tbody tr', (rs) => ({
        n: rs.length,
        stops: rs.filter((r) => r.tabIndex === 0).length,
      }));
      assert.deepEqual(shown, { n: 33 + 3, stops: 1 });
      // Right on a group opens it.
      await page.focus('#tensors tbody tr[data-group="blk.31"]');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.$$eval('#tensors [data-testid=tensor-row]', (r) => r.length), 3 + 9);
      await openTab('#tab-vocab');
      await page.fill('[data-testid=vocab-search]', '▁t128255');
      await page.waitForFunction(() => document.querySelector('#vocab').dataset.query === '▁t128255');
      assert.deepEqual(await page.$$eval('[data-testid=vocab-row]', (r) => r.map((x) => x.dataset.id)), ['128255']);
      await page.fill('[data-testid=vocab-search]', '');
      await page.waitForFunction(
        () =>
          document.querySelector('#vocab').dataset.query === '' && document.querySelector('[data-testid=vocab-row]'),
      );
      assert.equal(Number(await page.getAttribute('#vocab', 'data-total')), V);
      assert.ok((await page.$$eval('[data-testid=vocab-row]', (r) => r.length)) < 60);
    });

    await t.test('a malformed deep link shows an error, never a page error', async () => {
      const p3 = await b.newPage();
      /** @type {string[]} */
      const asked = [];
      p3.on('request', (r) => asked.push(new URL(r.url()).pathname));
      const before = b.problems.length;
      for (const q of [
        'url=http%3A%2F%2F%5B&tensor=x',
        'url=sample.gguf&tensor=no.such.tensor&block=3',
        'url=sample.gguf&tensor=blk.0.attn_q.weight&format=nope&block=999999999',
        'url=sample.gguf&tensor=q4_K.blk.0.attn_q.weight&format=q4_0&block=-1',
        'url=missing-00001-of-00500.gguf',
      ]) {
        await p3.goto(`${b.base}?backend=${BACKEND}&${q}`);
        await p3.waitForFunction(
          () => document.body.dataset.ready === 'true' && document.body.dataset.linked === 'true',
          null,
          { timeout: 30000 },
        );
      }
      // 404s are console errors; page errors (an exception the page did not catch) are not allowed.
      const seen = b.problems.splice(before);
      assert.deepEqual(
        seen.filter((x) => !x.startsWith('console: Failed to load resource')),
        [],
      );
      // The last link named a shard of 500: the page asked for no more than a few of them.
      assert.ok(asked.filter((x) => x.includes('missing-')).length <= 2, asked.join(' '));
      assert.match(await p3.textContent('#error'), /missing-00001-of-00500/);
      await p3.close();
    });

    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
