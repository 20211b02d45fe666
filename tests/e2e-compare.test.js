// "Compare with…" in headless Chromium at 1280x800 and 800x900: A (an F16 model, by URL) against B
// (the same tensors quantized to several types) picked as a file, then by URL, then A quantized in
// memory to Q4_0; every number the page shows is checked against this test's own loops over
// arrays decoded here (parseGGUF + bq.dequantize), the blocks under a heatmap cell against the
// files' bytes, the mismatched tensors listed, the link (compare=) restored after a reload, a
// cancel leaves nothing, and the panel's parts do not overlap (element boxes) nor leave the window.
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import assert from 'node:assert/strict';
import { parseGGUF, quantizeModel, typeInfo } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo, ready } from './lib/browser.js';
import { compareModels } from './lib/compare-fixture.js';
import { imatrixGGUF } from './lib/imatrix-files.js';

mkdirSync(new URL('./artifacts/', import.meta.url), { recursive: true });

const bq = await codec();
const { a: aBytes, b: bBytes } = compareModels(bq);
const ga = parseGGUF(aBytes),
  gb = parseGGUF(bBytes);
/** @type {Uint8Array[]} */
const parts = [];
await quantizeModel(aBytes, (/** @type {Uint8Array} */ c) => void parts.push(c.slice()), { ftype: 'Q4_0' });
const qBytes = Buffer.concat(parts);
const gq = parseGGUF(new Uint8Array(qBytes.buffer, qBytes.byteOffset, qBytes.length));

// An importance matrix for A's 2-D weights (llama-imatrix's GGUF layout), and A quantized to
// Q4_K_M with it by quantizeModel: what the in-memory compare with that file must match.
const imat = imatrixGGUF(
  ga.tensors
    .filter((t) => t.dims.length === 2)
    .map((t, i) => ({
      name: t.name,
      ne0: t.dims[0],
      sums: Float32Array.from({ length: t.dims[0] }, (_, j) => 1 + ((j * 7 + i) % 13) * 3),
      counts: [1],
    })),
).bytes;
/** @type {Uint8Array[]} */
const parts2 = [];
await quantizeModel(aBytes, (/** @type {Uint8Array} */ c) => void parts2.push(c.slice()), {
  ftype: 'Q4_K_M',
  imatrix: imat,
});
const wBytes = Buffer.concat(parts2);
const gw = parseGGUF(new Uint8Array(wBytes.buffer, wBytes.byteOffset, wBytes.length));
{
  // The weights matter: without them quantizeModel writes other bytes for attn_q.
  /** @type {Uint8Array[]} */
  const plain = [];
  await quantizeModel(aBytes, (/** @type {Uint8Array} */ c) => void plain.push(c.slice()), { ftype: 'Q4_K_M' });
  const gp = parseGGUF(new Uint8Array(Buffer.concat(plain)));
  assert.notDeepEqual(gp.tensorBytes('blk.0.attn_q.weight'), gw.tensorBytes('blk.0.attn_q.weight'));
}

/** B's error against A as this test computes it (element order, doubles). */
function expected(/** @type {any} */ g1, /** @type {any} */ g2, /** @type {string} */ name) {
  const t1 = g1.tensors.find((/** @type {any} */ t) => t.name === name);
  const t2 = g2.tensors.find((/** @type {any} */ t) => t.name === name);
  const a = bq.dequantize(t1.type, g1.tensorBytes(name)),
    b = bq.dequantize(t2.type, g2.tensorBytes(name));
  let se = 0,
    sig = 0,
    max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = b[i] - a[i];
    se += d * d;
    sig += a[i] * a[i];
    max = Math.max(max, Math.abs(d));
  }
  return {
    rmse: Math.sqrt(se / a.length),
    maxAbs: max,
    snr: se === 0 ? Infinity : 10 * Math.log10(sig / se),
    bType: typeInfo(t2.type).name,
  };
}

/** Pairs of boxes (name, rect) that overlap by more than a pixel. */
/** @param {{ name: string, x: number, y: number, w: number, h: number }[]} boxes */
function overlaps(boxes) {
  const out = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const p = boxes[i],
        q = boxes[j];
      const ox = Math.min(p.x + p.w, q.x + q.w) - Math.max(p.x, q.x),
        oy = Math.min(p.y + p.h, q.y + q.h) - Math.max(p.y, q.y);
      if (ox > 1 && oy > 1) out.push(`${p.name} / ${q.name}`);
    }
  return out;
}

for (const [width, height] of [
  [1280, 800],
  [800, 900],
]) {
  test(`compare two files in headless Chromium at ${width}x${height}`, { timeout: 240000 }, async (t) => {
    const b = await launchDemo({ width, height });
    /** Requests for slow.gguf beyond its first wait here until released. */
    /** @type {(() => void)[]} */
    const held = [];
    let slowSeen = 0;
    await b.context.route('**/demo/fx/*.gguf', async (route) => {
      const name = /fx\/([a-z]+)\.gguf$/.exec(route.request().url())?.[1] ?? '';
      const body = name === 'a' ? aBytes : name === 'b' || name === 'slow' ? bBytes : null;
      if (!body) return route.fulfill({ status: 404, body: 'not found' });
      if (name === 'slow' && slowSeen++ > 0) await new Promise((resolve) => held.push(() => resolve(undefined)));
      const m = /^bytes=(\d+)-(\d+)$/.exec(route.request().headers().range ?? '');
      if (!m) return route.fulfill({ status: 200, body: Buffer.from(body) });
      const start = Number(m[1]),
        end = Math.min(Number(m[2]), body.length - 1);
      return route
        .fulfill({
          status: 206,
          headers: { 'content-range': `bytes ${start}-${end}/${body.length}`, etag: `"${name}"` },
          body: Buffer.from(body.subarray(start, end + 1)),
        })
        .catch(() => {}); // a cancelled read's request may be gone
    });
    try {
      const page = await b.newPage();
      /** Waits for the panel's state, after a compare newer than `after` (compare-ui.js's data-run) started. */
      const state = (/** @type {string} */ s, after = -1) =>
        page.waitForFunction(
          ([s, after]) => {
            const p = /** @type {HTMLElement} */ (document.querySelector('#compare'));
            return p.dataset.state === s && Number(p.dataset.run ?? 0) > Number(after);
          },
          [s, after],
          { timeout: 120000 },
        );
      const run = async () => Number((await page.getAttribute('#compare', 'data-run')) ?? 0);
      const rows = () =>
        page.$$eval('[data-testid=cmp-row]', (rs) => rs.map((r) => ({ .../** @type {HTMLElement} */ (r).dataset })));
      /** Checks the table against this test's numbers for B = g2. */
      const checkRows = async (/** @type {any} */ g2, /** @type {string[]} */ names) => {
        const got = await rows();
        assert.deepEqual(
          got.map((r) => r.name),
          names,
        );
        for (const r of got) {
          const w = expected(ga, g2, /** @type {string} */ (r.name));
          assert.equal(Number(r.rmse), w.rmse, r.name);
          assert.equal(Number(r.maxAbs), w.maxAbs, r.name);
          assert.equal(Number(r.snr), w.snr, r.name);
          assert.equal(r.bType, w.bType, r.name);
        }
      };
      const compared = ga.tensors
        .filter((x) => !['only_in_a.weight', 'reshaped.weight'].includes(x.name))
        .map((x) => x.name);
      await page.goto(`${b.base}?backend=${BACKEND}&url=fx/a.gguf`);
      await page.waitForFunction(() => document.body.dataset.linked === 'true');
      await ready(page);

      await t.test('B as a picked file: every tensor, the mismatches, the chart, the link', async () => {
        await page.click('#compare-toggle');
        assert.equal(await page.getAttribute('#compare-toggle', 'aria-expanded'), 'true');
        assert.match(await page.textContent('[data-testid=cmp-a]'), /A: fx\/a\.gguf/);
        await page.setInputFiles('[data-testid=cmp-file]', {
          name: 'b.gguf',
          mimeType: 'application/octet-stream',
          buffer: Buffer.from(bBytes),
        });
        await state('done');
        await checkRows(gb, compared);
        const mism = await page.$$eval('[data-testid=cmp-mismatch]', (l) =>
          l.map((e) => [e.getAttribute('data-name'), e.getAttribute('data-why')]),
        );
        assert.deepEqual(mism, [
          ['only_in_a.weight', 'only in A'],
          ['reshaped.weight', 'shape 256×8 in A, 512×4 in B'],
          ['only_in_b.weight', 'only in B'],
        ]);
        // One line per role with a finite SNR (the norms are equal in A and B: SNR ∞, not drawn).
        const lines = await page.$$eval('[data-testid=cmp-chart] polyline', (l) =>
          l.map((e) => [e.getAttribute('data-role'), e.getAttribute('data-points')]),
        );
        assert.deepEqual(
          lines.map((l) => l[0]),
          ['attn_q', 'attn_k', 'ffn_down'],
        );
        for (const [role, pts] of lines)
          assert.deepEqual(
            String(pts).split(' '),
            [0, 1, 2].map((l) => `${l}:${expected(ga, gb, `blk.${l}.${role}.weight`).snr}`),
          );
        assert.equal(new URL(page.url()).searchParams.get('compare'), 'file:b.gguf');
        assert.equal(new URL(page.url()).searchParams.get('url'), 'fx/a.gguf', "the viewer's link parts are kept");
      });

      await t.test("a heatmap cell shows the A and B blocks that hold the element, from the files' bytes", async () => {
        const name = 'blk.1.attn_k.weight'; // F16 in A, Q4_K in B: cells of 256 values, one per row
        await page.click(`[data-testid=cmp-row][data-name="${name}"] button`);
        await page.waitForSelector('[data-testid=cmp-blocks][data-cell="0"]');
        await state('done');
        const box = /** @type {any} */ (await page.$('[data-testid=cmp-heatmap]').then((e) => e?.boundingBox()));
        const [W, H] = String(await page.getAttribute('[data-testid=cmp-heatmap]', 'data-cells'))
          .split('x')
          .map(Number);
        assert.deepEqual([W, H], [1, 128]);
        await page.click('[data-testid=cmp-heatmap]', {
          position: { x: box.width / 2, y: ((5 + 0.5) / H) * box.height },
        });
        await page.waitForSelector('[data-testid=cmp-blocks][data-cell="5"]');
        await page.fill('[data-testid=cmp-element]', '40');
        await page.dispatchEvent('[data-testid=cmp-element]', 'change');
        await page.waitForSelector(`[data-testid=cmp-blocks][data-element="${5 * 256 + 40}"]`);
        const blocks = await page.$$eval('[data-testid=cmp-block]', (l) =>
          l.map((e) => ({ .../** @type {HTMLElement} */ (e).dataset })),
        );
        const hex = (/** @type {Uint8Array} */ u) => Buffer.from(u).toString('hex');
        const e = 5 * 256 + 40;
        assert.deepEqual(blocks, [
          {
            testid: 'cmp-block',
            side: 'a',
            type: 'f16',
            block: String(e),
            bytes: hex(ga.tensorBytes(name).subarray(2 * e, 2 * e + 2)),
          },
          {
            testid: 'cmp-block',
            side: 'b',
            type: 'q4_K',
            block: '5',
            bytes: hex(gb.tensorBytes(name).subarray(5 * 144, 6 * 144)),
          },
        ]);
        const vals = await page.$$eval('[data-testid=cmp-value]', (l) =>
          l.map((r) => [Number(r.getAttribute('data-a')), Number(r.getAttribute('data-b'))]),
        );
        const xa = bq.dequantize('f16', ga.tensorBytes(name)),
          xb = bq.dequantize('q4_K', gb.tensorBytes(name));
        assert.deepEqual(
          vals,
          Array.from({ length: 256 }, (_, i) => [xa[1280 + i], xb[1280 + i]]),
        );
        // B's Q4_K block encoded from A's F16 values: B was quantized from the float originals, so
        // the steps (from A's rounded values) need not make B's bytes; they make bq.quantize's of A's.
        const enc = await page.$eval('[data-testid=cmp-encode]', (e) => ({
          .../** @type {HTMLElement} */ (e).dataset,
        }));
        assert.equal(enc.bytes, hex(bq.quantize('q4_K', xa.subarray(1280, 1536))));
        assert.equal(enc.equal, String(enc.bytes === hex(gb.tensorBytes(name).subarray(5 * 144, 6 * 144))));
        // Keyboard: ArrowDown moves one row (one cell per row here).
        await page.focus('[data-testid=cmp-heatmap]');
        await page.keyboard.press('ArrowDown');
        await page.waitForSelector('[data-testid=cmp-blocks][data-cell="6"]');
      });

      await t.test('a tall map is pooled; zoom shows single cells and a click inspects the one under it', async () => {
        const name = 'token_embd.weight'; // F16 / Q5_1: 8 cells of 32 per row, 4200 rows
        await page.click(`[data-testid=cmp-row][data-name="${name}"] button`);
        await page.waitForSelector('[data-testid=cmp-heatmap][data-window]');
        await state('done');
        const win = async () =>
          String(await page.getAttribute('[data-testid=cmp-heatmap]', 'data-window'))
            .split(',')
            .map(Number);
        assert.ok((await win())[3] > 1, 'rows pooled at zoom 1');
        for (let i = 0; i < 6 && (await win())[3] > 1; i++) {
          const before = await page.getAttribute('[data-testid=cmp-heatmap]', 'data-window');
          await page.click('[data-testid=cmp-zoom-in]');
          await page.waitForFunction(
            (b) => document.querySelector('[data-testid=cmp-heatmap]')?.getAttribute('data-window') !== b,
            before,
          );
        }
        const [x0, y0, sx, sy] = await win();
        assert.deepEqual([sx, sy], [1, 1]);
        const [W, H] = String(await page.getAttribute('[data-testid=cmp-heatmap]', 'data-cells'))
          .split('x')
          .map(Number);
        const box = /** @type {any} */ (await page.$('[data-testid=cmp-heatmap]').then((e) => e?.boundingBox()));
        assert.equal(W, 8, 'every column kept');
        assert.ok(H >= 64 && H < 4200, `${H} rows in the window`);
        await page.click('[data-testid=cmp-heatmap]', {
          position: { x: ((2 + 0.5) / W) * box.width, y: ((3 + 0.5) / H) * box.height },
        });
        const cell = (y0 + 3) * 8 + x0 + 2;
        await page.waitForSelector(`[data-testid=cmp-blocks][data-cell="${cell}"]`);
        const bb = await page.getAttribute('[data-testid=cmp-block][data-side=b]', 'data-bytes');
        assert.equal(bb, Buffer.from(gb.tensorBytes(name).subarray(cell * 24, cell * 24 + 24)).toString('hex'));
        assert.equal(await page.$eval('.cmp-marker', (e) => /** @type {HTMLElement} */ (e).hidden), false);
      });

      await t.test("the panel's parts do not overlap and stay inside the window", async () => {
        const boxes = await page.evaluate(() => {
          const sel = [
            '#compare h2',
            '.cmp-controls',
            '.cmp-run',
            '[data-testid=cmp-chart]',
            '.cmp-table-box',
            '[data-testid=cmp-mismatches]',
            '[data-testid=cmp-heat]',
            '[data-testid=cmp-block][data-side=a]',
            '[data-testid=cmp-block][data-side=b]',
            '.cmp-vals-box',
          ];
          return sel.map((s) => {
            const r = /** @type {Element} */ (document.querySelector(s)).getBoundingClientRect();
            return { name: s, x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height };
          });
        });
        assert.deepEqual(overlaps(boxes), []);
        const vw = await page.evaluate(() => document.documentElement.clientWidth);
        for (const x of boxes) {
          assert.ok(x.w > 0 && x.h > 0, `${x.name} is shown`);
          assert.ok(x.x >= 0 && x.x + x.w <= vw + 0.5, `${x.name} (${x.x}..${x.x + x.w}) inside the ${vw} px window`);
        }
        assert.equal(
          await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
          true,
          'no horizontal scroll',
        );
        await page.screenshot({
          path: new URL(`../tests/artifacts/compare-${width}.png`, import.meta.url).pathname,
          fullPage: true,
        });
      });

      await t.test('B by URL, and the link restores it after a reload', async () => {
        const n = await run();
        await page.fill('#cmp-url', 'fx/b.gguf');
        await page.click('#cmp-url-form button[type=submit]');
        await state('done', n);
        await checkRows(gb, compared);
        assert.equal(new URL(page.url()).searchParams.get('compare'), 'fx/b.gguf');
        await page.reload();
        await state('done');
        await checkRows(gb, compared);
        assert.equal(await page.$eval('#compare', (e) => /** @type {HTMLElement} */ (e).hidden), false);
      });

      await t.test("A quantized to Q4_0 in memory: the numbers of quantizeModel's file", async () => {
        const n = await run();
        await page.selectOption('[data-testid=cmp-ftype]', 'Q4_0');
        await page.click('[data-testid=cmp-quantize]');
        await state('done', n);
        const got = await rows();
        const converted = gq.tensors
          .filter((x) => x.type !== ga.tensors.find((y) => y.name === x.name)?.type)
          .map((x) => x.name);
        await checkRows(gq, converted);
        assert.ok(got.some((r) => r.bType === 'q4_0'));
        assert.ok(
          (await page.$$eval('[data-testid=cmp-mismatch]', (l) => l.map((e) => e.getAttribute('data-why')))).every(
            (w) => /keeps it as f32/.test(String(w)),
          ),
        );
        assert.equal(new URL(page.url()).searchParams.get('compare'), 'quantize:Q4_0');
        // B's block is quantized from A's values here, so the encode steps make it exactly.
        await page.click('[data-testid=cmp-row][data-name="blk.2.attn_q.weight"] button');
        await page.waitForSelector('[data-testid=cmp-blocks][data-cell="0"] [data-testid=cmp-encode]');
        const q = gq.tensorBytes('blk.2.attn_q.weight');
        assert.equal(await page.getAttribute('[data-testid=cmp-encode]', 'data-equal'), 'true');
        assert.equal(
          await page.getAttribute('[data-testid=cmp-block][data-side=b]', 'data-bytes'),
          Buffer.from(q.subarray(0, 18)).toString('hex'),
        );
        await page.reload();
        await state('done');
        await checkRows(gq, converted);
      });

      await t.test(
        "A quantized in memory with an importance matrix file: quantizeModel's numbers with it",
        async () => {
          const n = await run();
          await page.setInputFiles('[data-testid=cmp-imatrix]', {
            name: 'imatrix.gguf',
            mimeType: 'application/octet-stream',
            buffer: Buffer.from(imat),
          });
          await page.selectOption('[data-testid=cmp-ftype]', 'Q4_K_M');
          await page.click('[data-testid=cmp-quantize]');
          await state('done', n);
          const converted = gw.tensors
            .filter((x) => x.type !== ga.tensors.find((y) => y.name === x.name)?.type)
            .map((x) => x.name);
          await checkRows(gw, converted);
          await page.setInputFiles('[data-testid=cmp-imatrix]', []);
        },
      );

      await t.test('B dropped on the panel (the viewer keeps A)', async () => {
        const n = await run();
        await page.evaluate(async () => {
          const buf = await (await fetch('fx/b.gguf')).arrayBuffer();
          const dt = new DataTransfer();
          dt.items.add(new File([buf], 'dropped.gguf'));
          const panel = /** @type {HTMLElement} */ (document.querySelector('#compare'));
          panel.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
          panel.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
        });
        await state('done', n);
        await checkRows(gb, compared);
        assert.equal(new URL(page.url()).searchParams.get('compare'), 'file:dropped.gguf');
        assert.match(await page.textContent('[data-testid=cmp-a]'), /A: fx\/a\.gguf/);
      });

      await t.test('Cancel stops a compare whose reads are held; nothing of it is shown', async () => {
        const n = await run();
        await page.fill('#cmp-url', 'fx/slow.gguf');
        await page.click('#cmp-url-form button[type=submit]');
        await page.waitForFunction((n) => {
          const p = /** @type {HTMLElement} */ (document.querySelector('#compare'));
          return Number(p.dataset.run) > n && /running|opening/.test(p.dataset.state ?? '');
        }, n);
        await page.click('[data-testid=cmp-cancel]');
        await state('cancelled');
        for (const r of held.splice(0)) r();
        assert.equal((await rows()).length, 0);
        assert.equal(new URL(page.url()).searchParams.get('compare'), null);
        // The worker is still there for the next compare.
        const m = await run();
        await page.fill('#cmp-url', 'fx/b.gguf');
        await page.click('#cmp-url-form button[type=submit]');
        await state('done', m);
        await checkRows(gb, compared);
      });
      await t.test('links: a local file is asked for again, a bad compare= is reported on the page', async () => {
        await page.goto(`${b.base}?backend=${BACKEND}&url=fx/a.gguf&compare=file:b.gguf`);
        await page.waitForFunction(() => document.body.dataset.linked === 'true');
        await page.waitForFunction(() =>
          /choose it again/.test(document.querySelector('[data-testid=cmp-status]')?.textContent ?? ''),
        );
        assert.match((await page.textContent('[data-testid=cmp-status]')) ?? '', /local file b\.gguf/);
        assert.equal(await page.$eval('#compare', (e) => /** @type {HTMLElement} */ (e).hidden), false);
        const n = await run();
        await page.setInputFiles('[data-testid=cmp-file]', {
          name: 'b.gguf',
          mimeType: 'application/octet-stream',
          buffer: Buffer.from(bBytes),
        });
        await state('done', n);
        await checkRows(gb, compared);
        await page.goto(`${b.base}?backend=${BACKEND}&url=fx/a.gguf&compare=quantize:Q9_X`);
        await page.waitForSelector('[data-testid=cmp-error]:not([hidden])');
        assert.match((await page.textContent('[data-testid=cmp-error]')) ?? '', /compare=quantize:Q9_X names no ftype/);
        await page.goto(`${b.base}?backend=${BACKEND}&url=fx/a.gguf&compare=fx/missing.gguf`);
        await page.waitForSelector('[data-testid=cmp-error]:not([hidden])', { timeout: 60000 });
        assert.match(
          (await page.textContent('[data-testid=cmp-error]')) ?? '',
          /Could not compare with fx\/missing\.gguf/,
        );
      });
      assert.deepEqual(
        b.problems.filter((p) => !/404/.test(p)),
        [],
      );
    } finally {
      for (const r of held.splice(0)) r();
      await b.close();
    }
  });
}
