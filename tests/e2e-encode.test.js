// The block inspector's encode part in headless Chromium at 1280x800 and 800x900: for a float
// tensor's block in Q4_0, Q5_1, IQ4_NL, NVFP4, Q4_K and Q6_K the bytes its steps make are bq.quantize's bytes
// of the block's original values (computed here in Node), the Q4_0 codes are the nibbles of those
// bytes, and "without and with weights" shows the bytes of the row quantized here without and
// with x² as the importance weights; the part lies inside the inspector without overlapping its
// neighbours (element boxes).
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import assert from 'node:assert/strict';
import { parseGGUF, readImatrix } from '../js/node.js';
import { imatrixGGUF } from './lib/imatrix-files.js';

mkdirSync(new URL('./artifacts/', import.meta.url), { recursive: true });
import { BACKEND, codec } from './lib/helpers.js';
import { launchDemo, inspected } from './lib/browser.js';
import { compareModels } from './lib/compare-fixture.js';

const bq = await codec();
const { a: aBytes } = compareModels(bq);
const ga = parseGGUF(aBytes);
const NAME = 'blk.0.attn_q.weight'; // F16, 256 x 256
const x = bq.dequantize('f16', ga.tensorBytes(NAME));
const hex = (/** @type {Uint8Array} */ u) => Buffer.from(u).toString('hex');
// An importance matrix for the tensor (llama-imatrix's GGUF layout) and its weights as the
// package reads them.
const imat = imatrixGGUF([
  { name: NAME, ne0: 256, sums: Float32Array.from({ length: 256 }, (_, j) => 1 + ((j * 5) % 17) ** 2), counts: [2] },
]).bytes;
const [imatW] = /** @type {Float32Array[]} */ ((await readImatrix(imat)).weightsFor(NAME, 256));
const blockOf = (/** @type {string} */ f, /** @type {Uint8Array} */ q, /** @type {number} */ b) => {
  const n = { q4_0: 18, q5_1: 24, iq4_nl: 18, nvfp4: 36, q4_K: 144, q6_K: 210, q3_K: 110 }[f] ?? 0;
  return q.subarray(b * n, (b + 1) * n);
};

for (const [width, height] of [
  [1280, 800],
  [800, 900],
]) {
  test(`the encoder taught in the block inspector at ${width}x${height}`, { timeout: 180000 }, async () => {
    const b = await launchDemo({ width, height });
    await b.context.route('**/demo/fx/a.gguf', (route) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(route.request().headers().range ?? '');
      if (!m) return route.fulfill({ status: 200, body: Buffer.from(aBytes) });
      const start = Number(m[1]),
        end = Math.min(Number(m[2]), aBytes.length - 1);
      return route.fulfill({
        status: 206,
        headers: { 'content-range': `bytes ${start}-${end}/${aBytes.length}`, etag: '"a"' },
        body: Buffer.from(aBytes.subarray(start, end + 1)),
      });
    });
    try {
      const page = await b.newPage();
      for (const [fmt, block] of /** @type {[string, number][]} */ ([
        ['q4_0', 37],
        ['q5_1', 5],
        ['iq4_nl', 100],
        ['nvfp4', 3],
        ['q4_K', 30],
        ['q6_K', 10],
        ['q3_K', 7],
      ])) {
        await page.goto(`${b.base}?backend=${BACKEND}&url=fx/a.gguf&tensor=${NAME}&format=${fmt}&block=${block}`);
        await inspected(page, fmt, 60000);
        assert.equal(await page.getAttribute('[data-testid=block-inspector]', 'data-block'), String(block));
        const enc = await page.$eval('[data-testid=encode-bytes]', (e) => ({
          .../** @type {HTMLElement} */ (e).dataset,
        }));
        const want = blockOf(fmt, bq.quantize(fmt, x), block);
        assert.equal(enc.bytes, hex(want), fmt);
        assert.equal(enc.equal, 'true', fmt);
        if (fmt === 'q4_0') {
          const codes = Array.from({ length: 32 }, (_, j) => (j < 16 ? want[2 + j] & 15 : want[2 + j - 16] >> 4));
          assert.equal(enc.codes, codes.join(','));
        }
        const steps = await page.$$eval('[data-testid=encode-steps] li', (l) => l.map((e) => e.textContent ?? ''));
        assert.ok(steps.length >= 3, `${fmt}: ${steps.join(' | ')}`);
        if (fmt === 'q5_1') assert.ok(steps.some((s) => /\(max - min\) \/ 31/.test(s)));
        if (fmt === 'nvfp4') assert.ok(steps.some((s) => /UE4M3 byte/.test(s)));
        if (fmt === 'q4_K') assert.ok(steps.some((s) => /packed into 12 bytes/.test(s)));
        if (fmt === 'q3_K') assert.ok(steps.some((s) => /^hmask: bit 2 of each code/.test(s)));

        // Without and with weights (x² of the row: no imatrix loaded).
        await page.click('[data-testid=encode-weights]');
        await page.waitForSelector('[data-testid=encode-side][data-side=weighted]');
        const sides = await page.$$eval('[data-testid=encode-side]', (l) => l.map((e) => e.getAttribute('data-bytes')));
        const B = { nvfp4: 64, q4_K: 256, q6_K: 256, q3_K: 256 }[fmt] ?? 32;
        const r = Math.floor((block * B) / 256);
        const row = x.subarray(r * 256, (r + 1) * 256);
        const inRow = block - r * (256 / B);
        const plain = blockOf(fmt, bq.quantize(fmt, row, { rowLength: 256 }), inRow);
        const weighted = blockOf(fmt, bq.quantize(fmt, row, { rowLength: 256, imatrix: row.map((v) => v * v) }), inRow);
        assert.deepEqual(sides, [hex(plain), hex(weighted)], fmt);
        // With the imatrix file: its weights for this tensor.
        await page.setInputFiles('[data-testid=encode-imatrix]', {
          name: 'imatrix.gguf',
          mimeType: 'application/octet-stream',
          buffer: Buffer.from(imat),
        });
        await page.waitForFunction(() =>
          /imatrix\.gguf/.test(document.querySelector('[data-testid=encode-weighted]')?.textContent ?? ''),
        );
        const withFile = await page.$$eval('[data-testid=encode-side]', (l) =>
          l.map((e) => e.getAttribute('data-bytes')),
        );
        assert.deepEqual(
          withFile,
          [hex(plain), hex(blockOf(fmt, bq.quantize(fmt, row, { rowLength: 256, imatrix: imatW }), inRow))],
          `${fmt} with the file`,
        );
        if (fmt === 'nvfp4')
          assert.match((await page.textContent('[data-testid=encode-weighted-note]')) ?? '', /ignores weights/);

        // Inside the inspector, not over its neighbours.
        const boxes = await page.evaluate(() => {
          const enc = /** @type {HTMLElement} */ (document.querySelector('[data-testid=encode]'));
          const ins = /** @type {HTMLElement} */ (document.querySelector('[data-testid=block-inspector]'));
          const box = (/** @type {Element} */ e) => {
            const r = e.getBoundingClientRect();
            return { x: r.x, y: r.y, w: r.width, h: r.height };
          };
          return {
            enc: box(enc),
            ins: box(ins),
            prev: enc.previousElementSibling ? box(enc.previousElementSibling) : null,
            next: enc.nextElementSibling ? box(enc.nextElementSibling) : null,
          };
        });
        assert.ok(boxes.enc.w > 0 && boxes.enc.h > 0);
        assert.ok(
          boxes.enc.x >= boxes.ins.x - 0.5 && boxes.enc.x + boxes.enc.w <= boxes.ins.x + boxes.ins.w + 0.5,
          'inside the inspector',
        );
        for (const n of [boxes.prev, boxes.next])
          if (n && n.h > 0)
            assert.ok(
              n.y + n.h <= boxes.enc.y + 1 || n.y >= boxes.enc.y + boxes.enc.h - 1,
              'no overlap with a neighbour',
            );
        await page.screenshot({
          path: new URL(`artifacts/encode-${fmt}-${width}.png`, import.meta.url).pathname,
          fullPage: true,
        });
      }
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
    }
  });
}
