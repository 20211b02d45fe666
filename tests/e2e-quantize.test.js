// The demo's Quantize panel in headless Chromium on the build under test. A generated 247 MB F16
// llama-like model (tests/lib/big-model.js, written to a temporary file and set on the panel's file
// input) is planned (the plan's totals and types equal Node's planQuantize), quantized to Q4_K_M
// in the panel's worker into OPFS (?save=opfs: the headless browser has showSaveFilePicker but
// cannot answer its dialog) and downloaded: the downloaded bytes equal Node's quantizeModel output
// for the same file and ftype, computed here; no main-thread task takes over 50 ms of CPU time
// meanwhile (the Chromium trace; the long-task observer's wall-time entries are printed beside it,
// see tests/lib/long-tasks.js). "Open in viewer" opens the result. Cancel stops a run and leaves no
// OPFS file; an ftype that needs an imatrix shows the PlanError's message and cannot start. The
// panel's controls are labelled, usable from the keyboard and do not overlap at 1280x800 and 800x900.
// A second page saves through showSaveFilePicker (a stand-in that hands over an OPFS handle: the
// real dialog cannot be answered headless): a small model with an importance matrix to Q2_K_S,
// and the same model by URL from another origin to Q8_0, both equal to Node's bytes; a model whose
// rows are not whole 256-blocks shows llama-quantize's fallback warning; a split model's shards
// picked together make one file, Node's. A third run, whose server
// fails half way, shows the error and leaves no OPFS file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, writeSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planQuantize, quantizeModel, typeInfo } from '../js/node.js';
import { BACKEND, rng } from './lib/helpers.js';
import { launchDemo, ready } from './lib/browser.js';
import { bigModelSource } from './lib/big-model.js';
import { observeLongTasks, mainThreadTasks } from './lib/long-tasks.js';
import { makeModel, splitModel, F16 } from './lib/models.js';
import { imatrixGGUF } from './lib/imatrix-files.js';
import { rangeServer } from './lib/http-servers.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const LONG = 50; // ms: the bound for any main-thread task
const FTYPE = 'Q4_K_M';

/** The model as a file: 2048 wide, 8192 tokens, 2 layers with a 5632 FFN (247 MB of F16). */
async function writeModel(/** @type {string} */ path) {
  const src = bigModelSource({ embd: 2048, vocab: 8192, layers: 2, ff: 5632 });
  const fd = openSync(path, 'w');
  try {
    for (let o = 0; o < src.size; o += 16 << 20) writeSync(fd, await src.read(o, Math.min(16 << 20, src.size - o)));
  } finally {
    closeSync(fd);
  }
  return src.size;
}

/** Node's pipeline's output for the file, in memory. */
async function nodeOutput(/** @type {string} */ path, /** @type {string} */ ftype, o = {}) {
  /** @type {Uint8Array[]} */
  const parts = [];
  await quantizeModel(path, (c) => void parts.push(c.slice()), { ftype, ...o });
  return Buffer.concat(parts);
}

/** The panel's state (data-state), once it is one of states. */
const stateIs = (
  /** @type {import('playwright-core').Page} */ page,
  /** @type {string[]} */ states,
  timeout = 120000,
) =>
  page.waitForFunction(
    (s) => s.includes(/** @type {HTMLElement} */ (document.querySelector('#quantize')).dataset.state ?? ''),
    states,
    { timeout, polling: 100 },
  );

/** The names of the files in the page's OPFS root. */
const opfsNames = (/** @type {import('playwright-core').Page} */ page) =>
  page.evaluate(async () => {
    const names = [];
    for await (const k of /** @type {any} */ (await navigator.storage.getDirectory()).keys()) names.push(k);
    return names.sort();
  });

/**
 * Overlaps in the panel at the current viewport: pairs of its visible controls whose boxes
 * intersect, controls reaching past the window's right edge, and the panel overlapping the header
 * or the viewer below it.
 */
const overlaps = (/** @type {import('playwright-core').Page} */ page) =>
  page.evaluate(() => {
    const vis = (/** @type {Element} */ e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0 ? r : null;
    };
    const items = [
      ...document.querySelectorAll('#quantize .q-controls > *, #quantize .q-run > *, #quantize .q-result > *'),
    ]
      .map((e) => ({ id: e.id || e.textContent?.trim().slice(0, 30) || e.tagName, r: vis(e) }))
      .filter((x) => x.r);
    const bad = [];
    const hit = (/** @type {DOMRect} */ a, /** @type {DOMRect} */ b) =>
      a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
    for (let i = 0; i < items.length; i++) {
      const a = /** @type {DOMRect} */ (items[i].r);
      if (a.right > document.documentElement.clientWidth + 0.5) bad.push(`${items[i].id} past the right edge`);
      for (let j = i + 1; j < items.length; j++)
        if (hit(a, /** @type {DOMRect} */ (items[j].r))) bad.push(`${items[i].id} overlaps ${items[j].id}`);
    }
    const panel = document.querySelector('#quantize')?.getBoundingClientRect();
    for (const s of ['header', 'main']) {
      const r = document.querySelector(s)?.getBoundingClientRect();
      if (panel && r && hit(panel, r)) bad.push(`the panel overlaps ${s}`);
    }
    if (document.documentElement.scrollWidth > document.documentElement.clientWidth) bad.push('horizontal scroll');
    return bad;
  });

test('the Quantize panel in headless Chromium', { timeout: 900000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-quantize-'));
  const path = join(dir, 'big-f16.gguf');
  const size = await writeModel(path);
  assert.ok(size >= 200e6, `the model is at least 200 MB (${size})`);
  const t0 = Date.now();
  const expected = await nodeOutput(path, FTYPE);
  t.diagnostic(`Node's quantizeModel, ${size} bytes F16 -> ${FTYPE}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const plan = await planQuantize(path, { ftype: FTYPE });
  assert.equal(expected.length, plan.totalBytes);
  const demo = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await demo.newPage();
    await observeLongTasks(page);
    await page.goto(`${demo.base}?backend=${BACKEND}&save=opfs`);
    await ready(page);

    await t.test('the keyboard opens the panel; every control is labelled', async () => {
      await page.focus('#quantize-toggle');
      await page.keyboard.press('Enter');
      assert.equal(await page.getAttribute('#quantize-toggle', 'aria-expanded'), 'true');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'q-file');
      const unlabelled = await page.$$eval('#quantize input, #quantize select, #quantize button', (es) =>
        es
          .filter(
            (e) =>
              !(/** @type {HTMLInputElement} */ (e).labels?.length) &&
              !e.getAttribute('aria-label') &&
              !(e.tagName === 'BUTTON' && e.textContent?.trim()),
          )
          .map((e) => e.id),
      );
      assert.deepEqual(unlabelled, []);
    });

    await t.test("the plan equals Node's planQuantize", async () => {
      await page.setInputFiles('[data-testid=q-file]', path);
      await stateIs(page, ['planned']);
      assert.equal(Number(await page.getAttribute('[data-testid=q-plan]', 'data-total-bytes')), plan.totalBytes);
      /** @type {Record<string, number>} */
      const byType = {};
      for (const x of plan.tensors) byType[typeInfo(x.to).name] = (byType[typeInfo(x.to).name] ?? 0) + 1;
      const shown = await page.$$eval('[data-testid=q-type-row]', (rs) =>
        Object.fromEntries(
          rs.map((r) => [
            /** @type {HTMLElement} */ (r).dataset.type,
            Number(/** @type {HTMLElement} */ (r).dataset.tensors),
          ]),
        ),
      );
      assert.deepEqual(shown, byType);
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid=q-tensor-row]').length === n,
        plan.tensors.length,
      );
      const rows = await page.$$eval('[data-testid=q-tensor-row]', (rs) =>
        rs.map((r) => [/** @type {HTMLElement} */ (r).dataset.name, /** @type {HTMLElement} */ (r).dataset.to]),
      );
      assert.deepEqual(
        rows,
        plan.tensors.map((x) => [x.name, typeInfo(x.to).name]),
      );
    });

    /** No overlap in the panel at both sizes (screenshots named by what is shown). */
    const layoutAt = async (/** @type {string} */ shown) => {
      for (const [width, height] of [
        [1280, 800],
        [800, 900],
      ]) {
        await page.setViewportSize({ width, height });
        assert.deepEqual(await overlaps(page), [], `${shown} at ${width}x${height}`);
        await page.screenshot({ path: new URL(`quantize-${shown}-${width}.png`, ART).pathname, fullPage: true });
      }
      await page.setViewportSize({ width: 1280, height: 800 });
    };

    await t.test('no overlap at 1280x800 and 800x900: the plan', async () => {
      await page.click('.q-tensors summary');
      await layoutAt('plan');
      await page.click('.q-tensors summary');
    });

    await t.test(`quantizes to ${FTYPE} through OPFS: Node's bytes, no long task`, async () => {
      const cdp = await demo.context.newCDPSession(page);
      const { tasks, observed } = await mainThreadTasks(page, cdp, async () => {
        await page.focus('[data-testid=q-start]');
        await page.keyboard.press('Enter');
        await stateIs(page, ['done', 'error'], 600000);
        await page.waitForTimeout(300);
      });
      assert.ok(
        await page.$eval('[data-testid=q-error]', (e) => /** @type {HTMLElement} */ (e).hidden),
        await page.textContent('[data-testid=q-error]'),
      );
      const long = tasks.filter((e) => e.cpu > LONG);
      const top = [...tasks].sort((a, b) => b.cpu - a.cpu).slice(0, 3);
      assert.deepEqual(
        long,
        [],
        `main-thread tasks over ${LONG} ms of CPU time (ms): ${JSON.stringify(long)}; the observer's long ` +
          `tasks (wall ms): ${JSON.stringify(observed)}; longest: ${JSON.stringify(top)}`,
      );
      assert.equal(
        await page.$eval('[data-testid=q-progress]', (e) => /** @type {HTMLProgressElement} */ (e).value),
        expected.length,
      );
      const name = `big-${FTYPE}.gguf`;
      assert.deepEqual(await opfsNames(page), [name]); // renamed from NAME.part once complete
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'q-download');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=q-download]')]);
      assert.equal(download.suggestedFilename(), name);
      const got = readFileSync(await download.path());
      assert.equal(got.length, expected.length);
      assert.ok(got.equals(expected), "the downloaded file equals Node's quantizeModel output");
      await cdp.detach();
      t.diagnostic(
        `main-thread tasks during the run: ${tasks.length}, the longest ${top[0].cpu.toFixed(1)} ms CPU ` +
          `(${top[0].wall.toFixed(1)} ms wall); the observer's long tasks: ${observed.length}`,
      );
      t.diagnostic(
        `the page (${await page.inputValue('[data-testid=q-threads]')} threads): ${await page.textContent('[data-testid=q-status]')}`,
      );
    });

    await t.test('no overlap at 1280x800 and 800x900: the result', () => layoutAt('done'));

    await t.test('Open in viewer opens the result', async () => {
      await page.click('[data-testid=q-open]');
      await page.waitForFunction(
        (n) =>
          document.body.dataset.ready === 'true' &&
          document.querySelector('#file-info')?.textContent?.startsWith(`${n}:`),
        `big-${FTYPE}.gguf`,
        { timeout: 60000 },
      );
      assert.match(
        /** @type {string} */ (await page.textContent('#file-info')),
        new RegExp(`${plan.tensors.length} tensors`),
      );
    });

    await t.test("the viewer's model as the source: requantizing is refused as Node refuses it", async () => {
      const name = `big-${FTYPE}.gguf`;
      assert.equal(await page.textContent('[data-testid=q-use-viewer]'), `Use ${name} (open in the viewer)`);
      const want = await planQuantize(new Uint8Array(expected), { ftype: 'Q8_0' }).then(
        () => assert.fail('Node plans the Q4_K_M file to Q8_0 without allowRequantize'),
        (e) => e,
      );
      assert.equal(want.code, 'REQUANTIZE');
      await page.selectOption('[data-testid=q-ftype]', 'Q8_0');
      await page.click('[data-testid=q-use-viewer]');
      await stateIs(page, ['planned', 'plan-error']);
      assert.equal(await page.getAttribute('[data-testid=q-error]', 'data-code'), want.code);
      assert.ok((await page.textContent('[data-testid=q-error]'))?.includes(want.message));
    });

    await t.test('a reload lists the kept file and removes a stale .part; Remove frees it', async () => {
      // A run whose page closed mid-way leaves its NAME.part: the panel removes it when it opens.
      await page.evaluate(async () => {
        const dir = await navigator.storage.getDirectory();
        await dir.getFileHandle('old-Q8_0.gguf.part', { create: true });
      });
      await page.reload();
      await ready(page);
      await page.click('#quantize-toggle');
      await page.waitForSelector('[data-testid=q-stored]');
      const name = `big-${FTYPE}.gguf`;
      assert.deepEqual(
        await page.$$eval('[data-testid=q-stored]', (li) => li.map((e) => /** @type {HTMLElement} */ (e).dataset.name)),
        [name],
      );
      assert.equal(await page.getAttribute('[data-testid=q-stored-download]', 'download'), name);
      assert.deepEqual(await opfsNames(page), [name]);
      await page.click('[data-testid=q-stored-remove]');
      await page.waitForFunction(() => !document.querySelector('[data-testid=q-stored]'));
      assert.deepEqual(await opfsNames(page), []);
    });

    await t.test('Cancel stops the run and leaves no OPFS file', async () => {
      await page.selectOption('[data-testid=q-ftype]', FTYPE);
      await page.setInputFiles('[data-testid=q-file]', path);
      await stateIs(page, ['planned']);
      await page.click('[data-testid=q-start]');
      await page.waitForFunction(
        () => Number(/** @type {HTMLProgressElement} */ (document.querySelector('[data-testid=q-progress]')).value) > 0,
        null,
        { timeout: 120000, polling: 50 },
      );
      assert.deepEqual(await opfsNames(page), [`big-${FTYPE}.gguf.part`]); // being written
      assert.match(
        /** @type {string} */ (await page.textContent('[data-testid=q-status]')),
        new RegExp(
          `^\\d+ %: tensor \\d+ of ${plan.tensors.length} \\(.+\\), .+ of ${(plan.totalBytes / 2 ** 20).toFixed(2).replace('.', '\\.')} MiB, (about \\d+:\\d\\d left|estimating the time left…)$`,
        ),
      );
      await page.focus('[data-testid=q-cancel]');
      await page.keyboard.press('Enter');
      await stateIs(page, ['cancelled', 'done', 'error']);
      assert.equal(await page.getAttribute('#quantize', 'data-state'), 'cancelled');
      assert.deepEqual(await opfsNames(page), []);
      assert.match(/** @type {string} */ (await page.textContent('[data-testid=q-status]')), /Cancelled/);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'q-start');
    });

    await t.test('an ftype that needs an imatrix shows the PlanError', async () => {
      const want = await planQuantize(path, { ftype: 'IQ2_XXS' }).then(
        () => assert.fail('Node plans IQ2_XXS without an imatrix'),
        (e) => e,
      );
      assert.equal(want.name, 'PlanError');
      await page.selectOption('[data-testid=q-ftype]', 'IQ2_XXS');
      await stateIs(page, ['plan-error']);
      assert.equal(await page.getAttribute('[data-testid=q-error]', 'data-code'), want.code);
      assert.ok((await page.textContent('[data-testid=q-error]'))?.includes(want.message));
      assert.ok(await page.$eval('[data-testid=q-start]', (b) => /** @type {HTMLButtonElement} */ (b).disabled));
    });

    assert.deepEqual(demo.problems, []);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The stand-in picker's file (OPFS picked.gguf), base64. */
const pickedFile = (/** @type {import('playwright-core').Page} */ page) =>
  page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('picked');
    const f = await (await dir.getFileHandle('picked.gguf')).getFile();
    const b = new Uint8Array(await f.arrayBuffer());
    let s = '';
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
    return btoa(s);
  });

test('the save picker path: an imatrix run, a URL run, a split model', { timeout: 300000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-quantize-'));
  const path = join(dir, 'small-f16.gguf');
  const imPath = join(dir, 'small.imatrix.gguf');
  const m = makeModel({ layers: 2, embd: 256, ff: 512, heads: 8, headsKv: 2, vocab: 256, type: F16, seed: 3 });
  writeFileSync(path, m.bytes);
  // llama-imatrix's sums and a count of 10 per matrix (tests/lib/imatrix-files.js writes the file).
  const r = rng(11);
  const entries = m.tensors
    .filter((x) => x.dims.length >= 2)
    .map((x) => ({
      name: x.name,
      ne0: x.dims[0],
      sums: Float32Array.from({ length: x.dims[0] }, () => Math.fround(0.5 + 20 * r.next())),
      counts: [10],
    }));
  writeFileSync(imPath, imatrixGGUF(entries).bytes);
  // The page names the imatrix by its file name (a File has no path): so does Node's run here.
  const expected = await nodeOutput(path, 'Q2_K_S', { imatrix: imPath, imatrixFile: 'small.imatrix.gguf' });
  const demo = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await demo.newPage();
    // The picker's dialog cannot be answered headless: this one "picks" an OPFS file, so the
    // page's handle path (the handle posted to the worker, its createWritable stream) runs as is.
    await page.addInitScript(() => {
      const w = /** @type {any} */ (window);
      w.showSaveFilePicker = async (/** @type {{ suggestedName: string }} */ o) => {
        w.__suggested = o.suggestedName;
        const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('picked', { create: true });
        return dir.getFileHandle('picked.gguf', { create: true });
      };
    });
    await page.goto(`${demo.base}?backend=${BACKEND}`);
    await ready(page);
    await page.click('#quantize-toggle');
    await page.setInputFiles('[data-testid=q-file]', path);
    await page.selectOption('[data-testid=q-ftype]', 'Q2_K_S');
    await stateIs(page, ['plan-error']);
    await page.setInputFiles('[data-testid=q-imatrix]', imPath);
    await stateIs(page, ['planned']);
    assert.equal(
      await page.textContent('[data-testid=q-chosen]'),
      'small-f16.gguf to Q2_K_S, with the importance matrix small.imatrix.gguf',
    );
    await page.click('[data-testid=q-start]');
    await stateIs(page, ['done', 'error']);
    assert.equal(
      await page.getAttribute('#quantize', 'data-state'),
      'done',
      await page.textContent('[data-testid=q-error]'),
    );
    assert.equal(await page.evaluate(() => /** @type {any} */ (window).__suggested), 'small-Q2_K_S.gguf');
    assert.equal(await page.$$eval('[data-testid=q-download]', (a) => a.length), 0, 'no download: the file is saved');
    assert.ok(
      Buffer.from(await pickedFile(page), 'base64').equals(expected),
      "the picked file holds Node's quantizeModel output",
    );
    await page.click('[data-testid=q-open]');
    await page.waitForFunction(
      () =>
        document.body.dataset.ready === 'true' &&
        document.querySelector('#file-info')?.textContent?.startsWith('picked.gguf:'),
      null,
      { timeout: 60000 },
    );
    // An ftype this build cannot write all of yet (the IQ2 quantizers): the page says so before
    // Start, as Node's quantizeModel refuses it; or, once it can, it plans it.
    const refusal = await nodeOutput(path, 'IQ2_XXS', { imatrix: imPath }).then(
      () => null,
      (e) => e,
    );
    await page.selectOption('[data-testid=q-ftype]', 'IQ2_XXS');
    await stateIs(page, ['planned', 'plan-error']);
    if (refusal) {
      assert.equal(refusal.code, 'UNSUPPORTED');
      assert.equal(await page.getAttribute('[data-testid=q-error]', 'data-code'), 'UNSUPPORTED');
      const named = /** @type {string} */ (await page.getAttribute('[data-testid=q-error]', 'data-tensors'));
      assert.equal(named.split(' ')[0], refusal.tensor, 'the first tensor Node refuses is the first named');
      assert.ok(await page.$eval('[data-testid=q-start]', (b) => /** @type {HTMLButtonElement} */ (b).disabled));
    } else assert.equal(await page.getAttribute('#quantize', 'data-state'), 'planned');
    await page.click('#q-imatrix-clear');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'q-imatrix');
    await stateIs(page, ['plan-error']);
    assert.equal(await page.getAttribute('[data-testid=q-error]', 'data-code'), 'NEEDS_IMATRIX');

    // Rows of 288 values (not whole 256-blocks): llama-quantize's fallback, and its warning, shown.
    const odd = join(dir, 'odd-f16.gguf');
    writeFileSync(odd, makeModel({ layers: 1, embd: 288, ff: 576, vocab: 64, type: F16, seed: 9 }).bytes);
    const oddPlan = await planQuantize(odd, { ftype: 'Q4_K_M' });
    assert.ok(oddPlan.warnings.length > 0);
    await page.selectOption('[data-testid=q-ftype]', 'Q4_K_M');
    await page.setInputFiles('[data-testid=q-file]', odd);
    await stateIs(page, ['planned', 'plan-error']);
    assert.deepEqual(await page.$$eval('.q-warnings li', (li) => li.map((e) => e.textContent)), oddPlan.warnings);
    const fellBack = oddPlan.tensors.filter((x) => x.fallback).map((x) => [x.name, typeInfo(x.to).name]);
    assert.deepEqual(
      await page.$$eval('[data-testid=q-tensor-row]', (rs) =>
        rs
          .filter((r) => /** @type {HTMLElement} */ (r).dataset.fallback)
          .map((r) => [/** @type {HTMLElement} */ (r).dataset.name, /** @type {HTMLElement} */ (r).dataset.to]),
      ),
      fellBack,
      'the tensors that fell back say so (why; fallback), at their fallback type',
    );

    // The same model by URL, from another origin (CORS and CORP headers, Range requests), to Q8_0.
    const server = await rangeServer(m.bytes, (_, a) =>
      Object.assign(a.headers, {
        'access-control-allow-origin': '*',
        'access-control-allow-headers': 'range, if-range',
        'access-control-expose-headers': 'content-range, content-length, etag, last-modified',
        'cross-origin-resource-policy': 'cross-origin',
      }),
    );
    try {
      const q8 = await nodeOutput(path, 'Q8_0');
      await page.selectOption('[data-testid=q-ftype]', 'Q8_0');
      await page.fill('#q-url', server.url);
      await page.press('#q-url', 'Enter');
      await stateIs(page, ['planned', 'plan-error']);
      assert.equal(
        await page.getAttribute('#quantize', 'data-state'),
        'planned',
        await page.textContent('[data-testid=q-error]'),
      );
      await page.click('[data-testid=q-start]');
      await stateIs(page, ['done', 'error']);
      assert.equal(
        await page.getAttribute('#quantize', 'data-state'),
        'done',
        await page.textContent('[data-testid=q-error]'),
      );
      assert.equal(await page.evaluate(() => /** @type {any} */ (window).__suggested), 'model-Q8_0.gguf');
      assert.ok(Buffer.from(await pickedFile(page), 'base64').equals(q8), "the URL's Q8_0 file is Node's");
      assert.ok(
        server.log.every((r) => r.start !== undefined || r.headers['access-control-request-method']),
        'ranges only',
      );
    } finally {
      await server.close();
    }

    // A split model's shards, picked together (in any order): one output file, Node's bytes.
    const split = splitModel({ layers: 2, embd: 256, ff: 512, vocab: 256, type: F16, seed: 4 }, [7, 7, 7]);
    const shards = split.shards.map((b, i) => {
      const p = join(dir, `split-0000${i + 1}-of-00003.gguf`);
      writeFileSync(p, b);
      return p;
    });
    const whole = await nodeOutput(/** @type {any} */ (shards), 'Q8_0');
    await page.setInputFiles('[data-testid=q-file]', [...shards].reverse());
    await stateIs(page, ['planned', 'plan-error']);
    assert.equal(
      await page.getAttribute('#quantize', 'data-state'),
      'planned',
      await page.textContent('[data-testid=q-error]'),
    );
    assert.equal(
      await page.textContent('[data-testid=q-chosen]'),
      'split-00001-of-00003.gguf (+2 shards) to Q8_0, no importance matrix',
    );
    await page.click('[data-testid=q-start]');
    await stateIs(page, ['done', 'error']);
    assert.equal(
      await page.getAttribute('#quantize', 'data-state'),
      'done',
      await page.textContent('[data-testid=q-error]'),
    );
    assert.equal(await page.evaluate(() => /** @type {any} */ (window).__suggested), 'split-Q8_0.gguf');
    assert.ok(Buffer.from(await pickedFile(page), 'base64').equals(whole), "the split model's Q8_0 file is Node's");
    assert.deepEqual(demo.problems, []);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run that fails half way (the server errs) says why and leaves no OPFS file', { timeout: 300000 }, async () => {
  const m = makeModel({ layers: 2, embd: 512, ff: 1024, heads: 8, headsKv: 2, vocab: 512, type: F16, seed: 5 });
  const FAIL_AT = 4 << 20; // bytes: well past the header, before the end of the data
  assert.ok(m.bytes.length > 2 * FAIL_AT);
  let failing = false;
  const server = await rangeServer(m.bytes, (r, a) => {
    Object.assign(a.headers, {
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'range, if-range',
      'access-control-expose-headers': 'content-range, content-length, etag, last-modified',
      'cross-origin-resource-policy': 'cross-origin',
    });
    if (failing && (r.start ?? 0) >= FAIL_AT) Object.assign(a, { status: 500, body: new Uint8Array(0) });
  });
  const demo = await launchDemo({ width: 1280, height: 800 });
  try {
    const page = await demo.newPage();
    await page.goto(`${demo.base}?backend=${BACKEND}&save=opfs`);
    await ready(page);
    await page.click('#quantize-toggle');
    await page.selectOption('[data-testid=q-ftype]', 'Q8_0');
    await page.fill('#q-url', server.url);
    await page.press('#q-url', 'Enter');
    await stateIs(page, ['planned', 'plan-error']);
    assert.equal(await page.getAttribute('#quantize', 'data-state'), 'planned');
    failing = true;
    await page.click('[data-testid=q-start]');
    await stateIs(page, ['done', 'error']);
    assert.equal(await page.getAttribute('#quantize', 'data-state'), 'error');
    const msg = /** @type {string} */ (await page.textContent('[data-testid=q-error]'));
    assert.match(msg, /^Quantizing .*model\.gguf to Q8_0 failed: .*500/);
    assert.ok(
      server.log.some((r) => (r.start ?? 0) >= FAIL_AT),
      'the run read past FAIL_AT',
    );
    assert.deepEqual(await opfsNames(page), []);
    assert.ok(!(await page.$eval('[data-testid=q-start]', (b) => /** @type {HTMLButtonElement} */ (b).disabled)));
  } finally {
    await demo.close();
    await server.close();
  }
});
