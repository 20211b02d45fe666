// The demo page in headless Chromium (Debian's chromium, driven by playwright-core): the sample
// opens; summary numbers equal the API's computed here in Node; the heatmap is drawn; clicking a
// cell opens that block in the inspector with the API's d; a user file opens through the file
// input; a malformed file shows a readable error and the page keeps working; no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../demo/server.js';
import { parseGGUF, writeGGUF, GGMLType } from '../js/node.js';
import { codec } from './lib/helpers.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const bq = await codec({ backend: 'simd128' });
const FORMATS = ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1'];

/** Whole-tensor error, written out here (not taken from the demo's code). */
function expected(x, fmt) {
  const back = bq.dequantize(fmt, bq.quantize(fmt, x));
  let se = 0,
    maxAbs = 0;
  for (let i = 0; i < x.length; i++) {
    const e = x[i] - back[i];
    se += e * e;
    maxAbs = Math.max(maxAbs, Math.abs(e));
  }
  return { rmse: Math.sqrt(se / x.length), maxAbs };
}

const half = (h) => {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 31,
    f = h & 1023;
  return e === 0 ? s * f * 2 ** -24 : s * (1024 + f) * 2 ** (e - 25);
};

test('the demo page in headless Chromium', async (t) => {
  const server = await startServer({ port: 0 });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-'));
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    viewport: { width: 1400, height: 900 },
  });
  const problems = [];
  try {
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    const ready = () => page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(
      () =>
        document.body.dataset.ready === 'true' && document.querySelectorAll('[data-testid=summary-row]').length === 5,
      null,
      { timeout: 30000 },
    );

    await t.test('the sample opens and its summary equals the API', async () => {
      const g = parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));
      const name = 'blk.0.attn_q.weight';
      assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), g.tensors.length);
      const x = bq.dequantize('f16', g.tensorBytes(name));
      const rows = await page.$$eval('[data-testid=summary-row]', (rs) =>
        rs.map((r) => ({ format: r.dataset.format, rmse: Number(r.dataset.rmse), maxAbs: Number(r.dataset.maxAbs) })),
      );
      assert.deepEqual(
        rows.map((r) => r.format),
        FORMATS,
      );
      for (const r of rows) assert.deepEqual({ rmse: r.rmse, maxAbs: r.maxAbs }, expected(x, r.format), r.format);
      assert.match(await page.textContent('#build'), /simd128/);
    });

    await t.test('the heatmap is drawn', async () => {
      const colours = await page.$eval('[data-testid=heatmap]', (c) => {
        const d = /** @type {HTMLCanvasElement} */ (c).getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const set = new Set();
        for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return set.size;
      });
      assert.ok(colours > 10, `${colours} colours`);
    });

    await t.test("clicking a cell inspects that block, with the API's d", async () => {
      await page.selectOption('[data-testid=format-select]', 'q5_1');
      await ready();
      const box = await (await page.$('[data-testid=heatmap]')).boundingBox();
      const geo = await page.$eval('[data-testid=heatmap]', (c) => ({ w: c.width, h: c.height }));
      // Column 5, row 7 of 32 blocks x 96 rows, clicked in the middle of the cell.
      await page.mouse.click(
        box.x + ((5.5 / 32) * geo.w * box.width) / geo.w,
        box.y + ((7.5 / 96) * geo.h * box.height) / geo.h,
      );
      await page.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
      );
      const block = Number(await page.getAttribute('[data-testid=block-inspector]', 'data-block'));
      assert.equal(block, 7 * 32 + 5);
      const g = parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));
      const q = bq.quantize('q5_1', bq.dequantize('f16', g.tensorBytes('blk.0.attn_q.weight')));
      const d = half(q[block * 24] | (q[block * 24 + 1] << 8));
      assert.equal(Number(await page.getAttribute('[data-testid=block-inspector]', 'data-d')), d);
      assert.match(await page.textContent('[data-testid=block-inspector]'), /q5_1, 24 bytes/);
      await page.screenshot({ path: new URL('inspector.png', ART).pathname });
    });

    await t.test('a user file opens through the file input', async () => {
      const w = new Float32Array(64 * 4).map((_, i) => Math.cos(i) * 0.1);
      const path = join(dir, 'mine.gguf');
      writeFileSync(
        path,
        writeGGUF({
          kv: [],
          tensors: [{ name: 'user.weight', type: GGMLType.F32, dims: [64, 4], data: new Uint8Array(w.buffer) }],
        }),
      );
      await page.setInputFiles('[data-testid=file-input]', path);
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          !!document.querySelector('[data-testid=tensor-row][data-name="user.weight"]'),
        null,
        { timeout: 30000 },
      );
      await ready();
      const rmse = Number(await page.getAttribute('[data-testid=summary-row][data-format=q4_0]', 'data-rmse'));
      assert.equal(rmse, expected(w, 'q4_0').rmse);
      await page.screenshot({ path: new URL('user-file.png', ART).pathname });
    });

    await t.test('a malformed file shows a readable error and the page keeps working', async () => {
      const bad = join(dir, 'bad.gguf');
      writeFileSync(
        bad,
        new Uint8Array([
          0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0,
        ]),
      );
      await page.setInputFiles('[data-testid=file-input]', bad);
      await page.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('#error').hidden,
      );
      assert.match(await page.textContent('#error'), /tensor count .* cannot fit in the file/);
      await page.screenshot({ path: new URL('error.png', ART).pathname });
      await page.click('[data-testid=tensor-row][data-name="user.weight"]');
      await ready();
      assert.equal(await page.$$eval('[data-testid=summary-row]', (r) => r.length), 5);
    });

    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
