// The demo page stays responsive on a 4096x4096 tensor (headless Chromium, the build under test):
// opening the tensor, toggling formats, metrics and the colour scale, clicking heatmap cells,
// pressing arrow keys and the worst-block buttons must each leave no main-thread task over 50 ms
// (the bound issue 16 sets). Two instruments watch every interaction: a PerformanceObserver for
// 'longtask' in the page (wall-clock tasks over 50 ms) and a Chromium trace of the renderer's main
// thread, whose task events carry the thread's own CPU time. The bound is asserted on the CPU time:
// a task's wall time also counts the time the OS gave the core to other processes (on a shared
// 2-core host a 15 ms task was seen taking 44 ms of wall time), which measures the host, not the
// page. The observer's long tasks are reported next to their CPU time in every failure message.
// Choosing another tensor mid-analysis abandons the first: the page shows the new one only, and
// stays on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGGUF, GGMLType } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo } from './lib/browser.js';
import { observeLongTasks, mainThreadTasks } from './lib/long-tasks.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const bq = await codec();
const LONG = 50; // ms: the bound for any main-thread task on an interaction

/** A 4096x4096 F16 tensor (heavy-tailed rows with a few outlier columns) and a small one. */
function bigFile() {
  const n = 4096;
  const x = new Float32Array(n * n);
  let s = 12345;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let r = 0; r < n; r++) {
    const scale = 0.02 * (0.5 + rnd());
    for (let c = 0; c < n; c++) {
      const u = rnd() - 0.5;
      x[r * n + c] = scale * u * (1 + 8 * u * u) * (c % 997 === 5 ? 20 : 1);
    }
  }
  const small = new Float32Array(256 * 8).map((_, i) => Math.sin(i * 0.37) * 0.05);
  return writeGGUF({
    kv: [],
    tensors: [
      { name: 'a.small', type: GGMLType.F16, dims: [256, 8], data: bq.quantize('f16', small) },
      { name: 'b.big', type: GGMLType.F16, dims: [n, n], data: bq.quantize('f16', x) },
      { name: 'c.small2', type: GGMLType.F32, dims: [256, 4], data: new Uint8Array(small.slice(0, 1024).buffer) },
    ],
  });
}

test('the demo stays responsive on a 4096x4096 tensor', { timeout: 600000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-perf-'));
  const path = join(dir, 'big.gguf');
  writeFileSync(path, bigFile());
  const demo = await launchDemo({ width: 1440, height: 900 });
  const { context, problems } = demo;
  try {
    const page = await demo.newPage();
    await observeLongTasks(page);
    const cdp = await context.newCDPSession(page);
    const ready = () =>
      page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 300000, polling: 100 });
    const settle = () => page.waitForTimeout(400);
    /**
     * Runs an interaction under a trace until the page is ready and settled; returns the main
     * thread's tasks (wall and CPU ms) and the observer's long tasks (wall ms) seen meanwhile.
     */
    const measure = (/** @type {() => Promise<unknown>} */ act) =>
      mainThreadTasks(page, cdp, async () => {
        await act();
        await ready();
        await settle();
      });
    const assertSmooth = async (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ act) => {
      const { tasks, observed } = await measure(act);
      const long = tasks.filter((e) => e.cpu > LONG);
      const top = [...tasks].sort((a, b) => b.cpu - a.cpu).slice(0, 3);
      assert.deepEqual(
        long,
        [],
        `${what}: main-thread tasks over ${LONG} ms of CPU time (ms): ${JSON.stringify(long)}; ` +
          `the observer's long tasks (wall ms): ${JSON.stringify(observed)}; longest tasks: ${JSON.stringify(top)}`,
      );
    };

    await page.goto(`${demo.base}?backend=${BACKEND}`);
    await ready();
    await page.setInputFiles('[data-testid=file-input]', path);
    await page.waitForFunction(
      () =>
        document.body.dataset.ready === 'true' &&
        /** @type {HTMLElement | null} */ (document.querySelector('#view h2'))?.textContent === 'a.small',
      null,
      { timeout: 120000, polling: 100 },
    );
    await settle();

    await t.test('opening the big tensor', async () => {
      await assertSmooth('choosing b.big', async () => {
        await page.click('[data-testid=tensor-row][data-name="b.big"]');
        await page.waitForFunction(
          () =>
            document.body.dataset.ready === 'true' &&
            /** @type {HTMLElement | null} */ (document.querySelector('#view h2'))?.textContent === 'b.big',
          null,
          { timeout: 300000, polling: 100 },
        );
      });
      assert.equal(await page.$$eval('[data-testid=summary-row][data-format=q4_0]', (r) => r.length), 1);
    });

    await t.test('toggling formats, metrics and the scale', async () => {
      for (const f of ['q8_0', 'q5_1', 'q4_K', 'q6_K', 'q4_0'])
        await assertSmooth(`format ${f}`, () => page.selectOption('[data-testid=format-select]', f));
      for (const m of ['max', 'rmse'])
        await assertSmooth(`metric ${m}`, () => page.selectOption('[data-testid=metric-select]', m));
      await assertSmooth('log scale', () => page.selectOption('#scale', 'log'));
      await assertSmooth('linear scale', () => page.selectOption('#scale', 'linear'));
    });

    await t.test('clicking cells and pressing keys', async () => {
      for (const [fx, fy] of [
        [0.1, 0.1],
        [0.7, 0.4],
        [0.95, 0.95],
      ])
        await assertSmooth(`click at ${fx},${fy}`, async () => {
          // Read where the map is now: opening the inspector moves it.
          await page.locator('[data-testid=heatmap]').scrollIntoViewIfNeeded();
          const box = /** @type {{ x: number, y: number, width: number, height: number }} */ (
            await page.locator('[data-testid=heatmap]').boundingBox()
          );
          await page.mouse.click(box.x + fx * box.width, box.y + fy * box.height);
          await page.waitForFunction(() => !document.querySelector('[data-testid=block-inspector]')?.hidden, null, {
            polling: 100,
          });
        });
      await page.focus('[data-testid=heatmap]');
      for (const key of ['ArrowRight', 'ArrowDown', 'ArrowLeft', 'ArrowUp', 'Enter'])
        await assertSmooth(`key ${key}`, () => page.keyboard.press(key));
      await assertSmooth('a worst-block button', () => page.click('ol.worst li:nth-child(2) button'));
      // The button moved the marker: the inspector shows the block the button names.
      const named = await page.textContent('ol.worst li:nth-child(2) button');
      assert.equal(
        await page.getAttribute('[data-testid=block-inspector]', 'data-block'),
        /** @type {RegExpMatchArray} */ (named?.match(/^block (\d+)/))[1],
      );
      await page.screenshot({ path: new URL('perf-big.png', ART).pathname });
    });

    await t.test('choosing another tensor mid-analysis shows the new one only', async () => {
      await page.click('[data-testid=tensor-row][data-name="a.small"]');
      await ready();
      // Every tensor heading the view shows from here on, starting with the one shown now (a late
      // mutation inside a.small's view must not read as a.small shown again).
      await page.evaluate(() => {
        const w = /** @type {any} */ (window);
        w.__shown = [document.querySelector('#view h2')?.textContent];
        new MutationObserver(() => {
          const h = document.querySelector('#view h2')?.textContent;
          if (h && h !== w.__shown.at(-1)) w.__shown.push(h);
        }).observe(/** @type {HTMLElement} */ (document.querySelector('#view')), { childList: true, subtree: true });
      });
      await page.click('[data-testid=tensor-row][data-name="b.big"]');
      await page.waitForTimeout(300); // the big analysis is under way in the worker
      await page.click('[data-testid=tensor-row][data-name="c.small2"]');
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          /** @type {HTMLElement | null} */ (document.querySelector('#view h2'))?.textContent === 'c.small2',
        null,
        { timeout: 300000, polling: 100 },
      );
      await settle();
      assert.deepEqual(await page.evaluate(() => /** @type {any} */ (window).__shown), ['a.small', 'c.small2']);
      assert.ok(await page.$eval('#error', (e) => e.hidden), await page.textContent('#error'));
      assert.equal(await page.getAttribute('[data-testid=heatmap]', 'data-cells'), '8x4');
    });

    assert.deepEqual(problems, []);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
