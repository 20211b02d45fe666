// The demo page in headless Chromium (Debian's chromium, driven by playwright-core), on the build
// under test (?backend=BQ_BACKEND): the sample opens; summary numbers, the 32-value formats' and
// the K-quants', equal the API's computed here in Node; the heatmap is drawn; clicking a cell opens
// that block in the inspector with the API's d; Q4_K and Q6_K tensors open and a clicked
// super-block's d, dmin, sub-block scales and mins, codes and values equal those read here from
// the bytes; a tensor type the codec cannot decode is explained; a user file opens through the
// file input; a malformed file shows an error naming it and leaves no file shown; the inspector's
// byte diagram has the fields and offsets of FORMATS.md / KQUANTS.md (Q5_1, Q4_K, Q6_K) and its
// filled-in formula holds the element's d, m, scale, min and code read here from the bytes, giving
// dequantize's value; the side-by-side columns are the original values (a quantized tensor's from
// its float original in the file) and the decoded ones; the sample's metadata gives a KV-cache
// estimate and its vocabulary is searchable; no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGGUF, writeGGUF, GGMLType, CODEC_TYPES, typeInfo } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { rangeServer } from './lib/http-servers.js';
import { inspected, launchDemo, vocabSearch } from './lib/browser.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const bq = await codec();
// The formats a float tensor is re-quantized to: every weight format the codec can quantize, take
// statistics of and dot (the Q8_0 ruler first, then by block size, in id order).
const FORMATS = CODEC_TYPES.map((id) => typeInfo(id))
  .filter((t) => t.blockSize > 1 && t.quantize && t.stats && t.dot)
  .sort((a, b) => Number(b.name === 'q8_0') - Number(a.name === 'q8_0') || a.blockSize - b.blockSize)
  .map((t) => t.name);
const SAMPLE = () => parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));

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

// The K-quant pieces read from a block's bytes as ../shared/reference/KQUANTS.md lays them out,
// written out here (not taken from the demo's layout descriptions).
const KQ = {
  q4_K: {
    size: 144,
    fields: [
      ['d', 0, 2],
      ['dmin', 2, 2],
      ['scales', 4, 12],
      ['qs', 16, 128],
    ],
    shift: 5,
    formula: /^x = \(d · sc_j\) · q − dmin · m_j\n {2}= \((\S+) · (\d+)\) · (\d+) − (\S+) · (\d+)\n {2}= (\S+)$/,
    d: (b) => half(b[0] | (b[1] << 8)),
    dmin: (b) => half(b[2] | (b[3] << 8)),
    sc: (b) =>
      Array.from({ length: 8 }, (_, j) => {
        const s = b.subarray(4, 16);
        return j < 4 ? s[j] & 63 : (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
      }),
    m: (b) =>
      Array.from({ length: 8 }, (_, j) => {
        const s = b.subarray(4, 16);
        return j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
      }),
    q: (b) =>
      Array.from({ length: 256 }, (_, e) => (b[16 + 32 * Math.floor(e / 64) + (e % 32)] >> (e % 64 < 32 ? 0 : 4)) & 15),
  },
  q6_K: {
    size: 210,
    fields: [
      ['ql', 0, 128],
      ['qh', 128, 64],
      ['scales', 192, 16],
      ['d', 208, 2],
    ],
    shift: 4,
    formula: /^x = \(d · sc_j\) · \(q − 32\)\n {2}= \((\S+) · \(?(\u2212?\d+)\)?\) · \((\d+) − 32\)\n {2}= (\S+)$/,
    d: (b) => half(b[208] | (b[209] << 8)),
    dmin: () => undefined,
    sc: (b) => Array.from({ length: 16 }, (_, j) => (b[192 + j] << 24) >> 24),
    m: () => null,
    q: (b) =>
      Array.from({ length: 256 }, (_, e) => {
        const h = Math.floor(e / 128),
          k = Math.floor((e % 128) / 32),
          l = e % 32;
        const lo = (b[64 * h + 32 * (k & 1) + l] >> (k < 2 ? 0 : 4)) & 15;
        const hi = (b[128 + 32 * h + l] >> (2 * k)) & 3;
        return (lo | (hi << 4)) - 32;
      }),
  },
};

/** The byte diagram as shown: [name, offset, size] per field, and the order line. */
const diagramOf = (page) =>
  page.$eval('[data-testid=byte-diagram]', (d) => ({
    order: d.dataset.order,
    size: Number(d.dataset.size),
    fields: [...d.querySelectorAll('[data-testid=diagram-field]')].map((f) => [
      f.dataset.name,
      Number(f.dataset.offset),
      Number(f.dataset.size),
    ]),
  }));
/** A number as the inspector prints it (U+2212 for minus), read back as float32. */
const num32 = (s) => Math.fround(Number(s.replace(/\u2212/g, '-').replace(/^\((.*)\)$/, '$1')));
/** Shows element e in the inspector's element panel and returns its filled-in formula and result. */
async function explain(page, e) {
  await page.click(`[data-testid=value-row][data-e="${e}"] td`);
  await page.waitForFunction((e) => document.querySelector('[data-testid=element-detail]')?.dataset.e === String(e), e);
  return page.$eval('[data-testid=element-detail]', (d) => ({
    ...d.dataset,
    text: d.querySelector('[data-testid=filled-formula]').textContent,
  }));
}

test('the demo page in headless Chromium', async (t) => {
  const demo = await launchDemo();
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-files-'));
  const { problems } = demo;
  try {
    const page = await demo.newPage();
    const ready = () => page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
    await page.goto(`${demo.base}?backend=${BACKEND}`);
    await page.waitForFunction(
      (n) =>
        document.body.dataset.ready === 'true' && document.querySelectorAll('[data-testid=summary-row]').length === n,
      FORMATS.length,
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
      assert.equal(await page.textContent('#build'), `wasm build: ${BACKEND}`);
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
      // Column 5, row 7 of 32 blocks x 96 rows, clicked in the middle of the cell (page.click
      // scrolls the canvas into view; the position is relative to its box).
      await page.click('[data-testid=heatmap]', {
        position: { x: (5.5 / 32) * box.width, y: (7.5 / 96) * box.height },
      });
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

    await t.test('the byte diagram and the filled-in formula of a Q5_1 block; its original beside it', async () => {
      // FORMATS.md: Q5_1 is d@0, m@2 (halves), qh@4 (u32), qs[16]@8; 24 bytes.
      assert.deepEqual(await diagramOf(page), {
        order: 'd | m | qh | qs',
        size: 24,
        fields: [
          ['d', 0, 2],
          ['m', 2, 2],
          ['qh', 4, 4],
          ['qs', 8, 16],
        ],
      });
      const block = Number(await page.getAttribute('[data-testid=block-inspector]', 'data-block'));
      const x = bq.dequantize('f16', SAMPLE().tensorBytes('blk.0.attn_q.weight'));
      const q = bq.quantize('q5_1', x).subarray(block * 24, (block + 1) * 24);
      const want = bq.dequantize('q5_1', q);
      const qh = (q[4] | (q[5] << 8) | (q[6] << 16) | (q[7] << 24)) >>> 0;
      for (const e of [0, 3, 20, 31]) {
        const code = (e < 16 ? q[8 + e] & 15 : q[8 + e - 16] >> 4) | (((qh >>> e) & 1) << 4);
        const d = await explain(page, e);
        const m = /^x = d · q \+ m\n {2}= (\S+) · (\d+) \+ (\S+)\n {2}= (\S+)$/.exec(d.text);
        assert.ok(m, d.text);
        assert.equal(num32(m[1]), half(q[0] | (q[1] << 8)), 'd');
        assert.equal(Number(m[2]), code, `element ${e}'s code`);
        assert.equal(num32(m[3]), half(q[2] | (q[3] << 8)), 'm');
        const f = Math.fround;
        assert.equal(f(f(num32(m[1]) * code) + num32(m[3])), want[e], 'the numbers give the decoded value');
        assert.equal(num32(m[4]), want[e], 'the printed result');
        assert.equal(Number(d.value), want[e]);
      }
      // Element 20's bytes are marked in the diagram: d (0, 1), m (2, 3), qh bit 20 (byte 4 + 2), the
      // high nibble of qs[4] (byte 8 + 4).
      await explain(page, 20);
      assert.deepEqual(
        await page.$$eval('[data-testid=byte-diagram] .hl', (s) => s.map((x) => Number(x.dataset.i))),
        [0, 1, 2, 3, 6, 12],
      );
      // Side by side: the block's original values and the Q5_1 decoded ones.
      const rows = await page.$$eval('[data-testid=value-row]', (rs) =>
        rs.map((r) => [Number(r.dataset.a), Number(r.dataset.b)]),
      );
      assert.deepEqual(
        rows,
        [...want].map((w, e) => [x[block * 32 + e], w]),
      );
      assert.ok(await page.$('[data-testid=compare-chart] polyline.a'));
    });

    await t.test('a float tensor re-quantized to Q4_K: its summary row and super-block heatmap', async () => {
      const x = bq.dequantize('f16', SAMPLE().tensorBytes('blk.0.attn_q.weight'));
      const row = await page.$eval('[data-testid=summary-row][data-format=q4_K]', (r) => ({ ...r.dataset }));
      assert.deepEqual({ rmse: Number(row.rmse), maxAbs: Number(row.maxAbs) }, expected(x, 'q4_K'));
      const s = bq.blockStats('q4_K', x);
      assert.equal(s.rmse.length, 96 * 4);
      assert.equal(Number(row.worstRmse), Math.max(...s.rmse));
      // The whole-tensor RMSE agrees with the super-blocks' (f32 per block, so to 1e-6).
      const fromBlocks = Math.sqrt(s.rmse.reduce((a, r) => a + r * r, 0) / s.rmse.length);
      assert.ok(Math.abs(fromBlocks - Number(row.rmse)) <= 1e-6 * fromBlocks, `${fromBlocks} vs ${row.rmse}`);
      await page.selectOption('[data-testid=format-select]', 'q4_K');
      await ready();
      assert.equal(await page.getAttribute('[data-testid=heatmap]', 'data-cells'), '4x96');
      await page.selectOption('[data-testid=metric-select]', 'sub');
      await ready();
      assert.equal(await page.getAttribute('[data-testid=heatmap]', 'data-cells'), '32x96');
      await page.screenshot({ path: new URL('float-q4_K.png', ART).pathname, fullPage: true });
    });

    for (const fmt of /** @type {const} */ (['q4_K', 'q6_K'])) {
      await t.test(`a ${fmt} tensor opens; a clicked super-block's fields and values equal the bytes'`, async () => {
        const name = `${fmt}.blk.0.attn_q.weight`;
        const k = KQ[fmt];
        const raw = SAMPLE().tensorBytes(name);
        await page.click(`[data-testid=tensor-row][data-name="${name}"]`);
        await ready();
        assert.match(await page.textContent('#view h2'), new RegExp(`${name} \\(${fmt}\\)`));
        assert.ok(await page.$eval('#error', (e) => e.hidden));
        // The code histogram counts every q of the tensor.
        const hist = await page.$eval('[data-testid=code-histogram]', (f) => ({ ...f.dataset }));
        const counts = new Array(hist.counts.split(',').length).fill(0);
        for (let b = 0; b < raw.length / k.size; b++)
          for (const q of k.q(raw.subarray(b * k.size, (b + 1) * k.size))) counts[q - Number(hist.offset)]++;
        assert.equal(hist.counts, counts.join(','));
        // The Q8_0 ruler measures the decoded values.
        const x = bq.dequantize(fmt, raw);
        assert.equal(Number(await page.getAttribute('[data-testid=ruler]', 'data-rmse')), expected(x, 'q8_0').rmse);
        // The d heatmap: 4 super-blocks x 96 rows; click super-block 2 of row 5.
        await page.selectOption('[data-testid=metric-select]', 'f:d');
        await ready();
        assert.equal(await page.getAttribute('[data-testid=heatmap]', 'data-cells'), '4x96');
        const box = await (await page.$('[data-testid=heatmap]')).boundingBox();
        // page.click scrolls the canvas into view; the position is relative to its box.
        await page.click('[data-testid=heatmap]', {
          position: { x: (2.5 / 4) * box.width, y: (5.5 / 96) * box.height },
        });
        await inspected(page, fmt);
        const ins = await page.$eval('[data-testid=block-inspector]', (e) => ({ ...e.dataset }));
        const block = 5 * 4 + 2;
        assert.equal(Number(ins.block), block);
        const b = raw.subarray(block * k.size, (block + 1) * k.size);
        assert.equal(Number(ins.d), k.d(b));
        assert.equal(ins.dmin === undefined ? undefined : Number(ins.dmin), k.dmin(b));
        const subs = await page.$$eval('[data-testid=sub-row]', (rs) => rs.map((r) => ({ ...r.dataset })));
        assert.deepEqual(
          subs.map((r) => Number(r.sc)),
          k.sc(b),
        );
        assert.deepEqual(
          subs.map((r) => (r.m === undefined ? null : Number(r.m))),
          k.m(b) ?? subs.map(() => null),
        );
        const vals = await page.$$eval('[data-testid=value-row]', (rs) => rs.map((r) => ({ ...r.dataset })));
        assert.equal(vals.length, 256);
        const want = bq.dequantize(fmt, b);
        assert.deepEqual(
          vals.map((r) => Number(r.q)),
          k.q(b),
        );
        assert.deepEqual(
          vals.map((r) => Number(r.decoded)),
          [...want],
        );
        assert.deepEqual(
          vals.map((r) => Number(r.fields)),
          [...want],
        );
        assert.match(await page.textContent('[data-testid=block-inspector] h2'), new RegExp(`${fmt}, ${k.size} bytes`));
        // The byte diagram, as KQUANTS.md lays the super-block out.
        assert.deepEqual((await diagramOf(page)).fields, k.fields);
        // The float original is in the file (the same shape, the name without the type tag): the
        // side-by-side columns are its values and the decoded ones.
        assert.equal(ins.reference, 'blk.0.attn_q.weight');
        const orig = bq
          .dequantize('f16', SAMPLE().tensorBytes('blk.0.attn_q.weight'))
          .subarray(block * 256, (block + 1) * 256);
        assert.deepEqual(
          vals.map((r) => [Number(r.a), Number(r.b)]),
          [...want].map((w, e) => [orig[e], w]),
        );
        // Element 200 (sub-block 200 >> k.shift) explained with its numbers.
        const e = 200,
          j = e >> k.shift;
        const d = await explain(page, e);
        const m = k.formula.exec(d.text);
        assert.ok(m, d.text);
        const f = Math.fround;
        assert.equal(num32(m[1]), k.d(b), 'd');
        assert.equal(Number(m[2].replace('\u2212', '-')), k.sc(b)[j], 'sc_j');
        if (fmt === 'q4_K') {
          assert.equal(Number(m[3]), k.q(b)[e], 'q');
          assert.equal(num32(m[4]), k.dmin(b), 'dmin');
          assert.equal(Number(m[5]), k.m(b)[j], 'm_j');
          assert.equal(f(f(f(num32(m[1]) * k.sc(b)[j]) * k.q(b)[e]) - f(k.dmin(b) * k.m(b)[j])), want[e]);
        } else {
          assert.equal(Number(m[3]) - 32, k.q(b)[e], 'q − 32');
          assert.equal(f(f(num32(m[1]) * k.sc(b)[j]) * k.q(b)[e]), want[e]);
        }
        assert.equal(num32(m[m.length - 1]), want[e], 'the printed result');
        await page.screenshot({ path: new URL(`inspector-${fmt}.png`, ART).pathname });
      });
    }

    await t.test(
      'Q4_0 and MXFP4 blocks: byte diagram, filled-in formula, and what they are compared with',
      async () => {
        const open = async (name, fmt) => {
          await page.click(`[data-testid=tensor-row][data-name="${name}"]`);
          await ready();
          await page.click('[data-testid=heatmap]', { position: { x: 2, y: 2 } }); // block 0
          await page.waitForFunction(
            (f) =>
              document.body.dataset.ready === 'true' &&
              document.querySelector('[data-testid=block-inspector]').dataset.format === f &&
              document.querySelector('[data-testid=block-inspector]').dataset.block === '0',
            fmt,
          );
          return SAMPLE().tensorBytes(name);
        };
        const f = Math.fround;
        // Q4_0 (FORMATS.md: d@0 half, qs[16]@2; x = (q − 8) · d, q the low nibble of qs[e] for e < 16,
        // the high nibble of qs[e − 16] after), compared with its float original in the file.
        let raw = await open('q4_0.blk.0.attn_q.weight', 'q4_0');
        assert.deepEqual((await diagramOf(page)).fields, [
          ['d', 0, 2],
          ['qs', 2, 16],
        ]);
        let want = bq.dequantize('q4_0', raw.subarray(0, 18));
        const d = half(raw[0] | (raw[1] << 8));
        for (const e of [0, 7, 16, 30]) {
          const q = e < 16 ? raw[2 + e] & 15 : raw[2 + e - 16] >> 4;
          const m = /^x = d · \(q − 8\)\n {2}= (\S+) · \((\d+) − 8\)\n {2}= (\S+)$/.exec((await explain(page, e)).text);
          assert.ok(m);
          assert.equal(num32(m[1]), d);
          assert.equal(Number(m[2]), q);
          assert.equal(f(num32(m[1]) * (q - 8)), want[e]);
          assert.equal(num32(m[3]), want[e]);
        }
        const x = bq.dequantize('f16', SAMPLE().tensorBytes('blk.0.attn_q.weight')).subarray(0, 32);
        let rows = await page.$$eval('[data-testid=value-row]', (rs) =>
          rs.map((r) => [Number(r.dataset.a), Number(r.dataset.b)]),
        );
        assert.deepEqual(
          rows,
          [...want].map((w, e) => [x[e], w]),
        );
        // MXFP4: one E8M0 byte e (2^(e − 127)) and 16 bytes of E2M1 nibbles (sign bit 3; magnitudes 0,
        // 0.5, 1, 1.5, 2, 3, 4, 6), shown as ggml computes it: doubled codes under a halved scale. Its
        // tensor has no float original of its shape, so it is compared with its Q8_0 re-quantization.
        raw = await open('mxfp4.blk.0.attn_q.weight', 'mxfp4');
        assert.deepEqual((await diagramOf(page)).fields, [
          ['e', 0, 1],
          ['qs', 1, 16],
        ]);
        want = bq.dequantize('mxfp4', raw.subarray(0, 17));
        const E2M1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
        for (const e of [1, 18]) {
          const n = e < 16 ? raw[1 + e] & 15 : raw[1 + e - 16] >> 4;
          const m = /^x = 2\^\(e − 128\) · kvalues_mxfp4\[q\]\n {2}= (\S+) · (\S+)\n {2}= (\S+)$/.exec(
            (await explain(page, e)).text,
          );
          assert.ok(m);
          assert.equal(num32(m[1]), 2 ** (raw[0] - 127) / 2);
          assert.equal(num32(m[2]), (n & 8 ? -2 : 2) * E2M1[n & 7]);
          assert.equal(num32(m[3]), want[e]);
          assert.equal(want[e], (n & 8 ? -1 : 1) * E2M1[n & 7] * 2 ** (raw[0] - 127));
        }
        rows = await page.$$eval('[data-testid=value-row]', (rs) =>
          rs.map((r) => [Number(r.dataset.a), Number(r.dataset.b)]),
        );
        const ruler = bq.dequantize('q8_0', bq.quantize('q8_0', want));
        assert.deepEqual(
          rows,
          [...want].map((w, e) => [w, ruler[e]]),
        );
        assert.match(await page.textContent('[data-testid=compare-note]'), /no float original/);
      },
    );

    await t.test('an integer tensor opens as its values, not as unsupported', async () => {
      const row = '[data-testid=tensor-row][data-name="i8.blk.0.attn_k.weight"]';
      assert.doesNotMatch((await page.getAttribute(row, 'class')) ?? '', /unsupported/);
      await page.click(row);
      await ready();
      await page.waitForSelector('[data-testid=values-summary]', { timeout: 30000 });
      assert.equal(await page.$$eval('[data-testid=unsupported]:not([hidden])', (e) => e.length), 0);
      assert.ok(await page.$eval('#error', (e) => e.hidden));
    });

    await t.test('the page at 800 px', async () => {
      await page.setViewportSize({ width: 800, height: 900 });
      await page.click('[data-testid=tensor-row][data-name="q4_K.blk.0.attn_q.weight"]');
      await ready();
      await page.click('[data-testid=heatmap]', { position: { x: 5, y: 5 } });
      await page.waitForFunction(
        () => document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
      );
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 800), 'no horizontal scroll');
      await page.screenshot({ path: new URL('narrow-q4_K.png', ART).pathname, fullPage: true });
      await page.setViewportSize({ width: 1440, height: 900 });
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

    await t.test('a failed analysis names the tensor and file and leaves the shown tensor working', async () => {
      // 1 MiB tensors, so the header read cannot have fetched broken.weight's data already.
      const w = new Float32Array(256 * 1024).map((_, i) => Math.sin(i) * 0.1);
      const bytes = writeGGUF({
        kv: [],
        tensors: [
          { name: 'ok.weight', type: GGMLType.F32, dims: [256, 1024], data: new Uint8Array(w.buffer) },
          { name: 'broken.weight', type: GGMLType.F32, dims: [256, 1024], data: new Uint8Array(w.buffer) },
        ],
      });
      const g = parseGGUF(bytes);
      const brokenAt = g.dataOffset + g.tensors[1].offset;
      // Reads of broken.weight's data fail with a 500; the header and ok.weight read normally.
      const srv = await rangeServer(bytes, (r, a) => {
        a.headers['access-control-allow-origin'] = '*';
        a.headers['access-control-expose-headers'] = 'content-range, content-length, etag, last-modified';
        if (r.start !== undefined && r.start >= brokenAt) {
          a.status = 500;
          a.body = new Uint8Array(0);
          delete a.headers['content-range'];
        }
      });
      try {
        await page.fill('#url', srv.url);
        await page.click('#url-form button');
        await page.waitForFunction(
          () =>
            document.body.dataset.ready === 'true' &&
            document.querySelector('#view h2')?.textContent === 'ok.weight' &&
            document.querySelectorAll('[data-testid=summary-row]').length > 0,
          null,
          { timeout: 30000 },
        );
        await page.click('[data-testid=tensor-row][data-name="broken.weight"]');
        await page.waitForFunction(
          () => document.body.dataset.ready === 'true' && !document.querySelector('#error').hidden,
        );
        assert.match(
          await page.textContent('#error'),
          new RegExp(
            `^Could not analyse broken\\.weight in ${srv.url.replace(/[.]/g, '\\.')}: .*still shows ok\\.weight`,
          ),
        );
        // The list, the view and the worker still agree on ok.weight: its blocks still open.
        assert.equal(await page.getAttribute('[aria-selected=true][data-testid=tensor-row]', 'data-name'), 'ok.weight');
        assert.equal(await page.textContent('#view h2'), 'ok.weight');
        await page.click('[data-testid=heatmap]', { position: { x: 3, y: 3 } });
        await page.waitForFunction(
          () =>
            document.body.dataset.ready === 'true' && !document.querySelector('[data-testid=block-inspector]').hidden,
        );
        const block = Number(await page.getAttribute('[data-testid=block-inspector]', 'data-block'));
        assert.ok(Number.isInteger(block) && block >= 0 && block < 256 * 32, String(block));
        assert.match(await page.textContent('#error'), /broken\.weight/); // still says what failed, no other error
      } finally {
        await srv.close();
      }
    });

    await t.test('a malformed file: an error naming it, no file left shown, the sample reopens', async () => {
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
      const msg = await page.textContent('#error');
      assert.match(
        msg,
        /^Could not open bad\.gguf: .*tensor count .* cannot fit in the file.*Choose another GGUF file/,
      );
      assert.equal(await page.$$eval('[data-testid=tensor-row]', (r) => r.length), 0);
      assert.equal(await page.$$eval('[data-testid=summary-row]', (r) => r.length), 0);
      assert.ok(await page.$eval('[data-testid=block-inspector]', (e) => e.hidden));
      await page.screenshot({ path: new URL('error.png', ART).pathname });
      await page.click('#sample');
      await page.waitForFunction(
        (n) =>
          document.body.dataset.ready === 'true' && document.querySelectorAll('[data-testid=summary-row]').length === n,
        FORMATS.length,
      );
      assert.ok(await page.$eval('#error', (e) => e.hidden));
    });

    await t.test("the sample's model metadata: KV-cache estimate and vocabulary search", async () => {
      const g = SAMPLE();
      const md = (k) => Number(g.metadata.get(k));
      await page.waitForFunction(() => !!document.querySelector('#overview').dataset.params);
      const ov = await page.$eval('[data-testid=overview]', (e) => ({ ...e.dataset }));
      assert.equal(ov.arch, 'llama');
      assert.equal(Number(ov.ctx), md('llama.context_length'));
      // Per layer K and V: context × KV heads × head width × 2 bytes (f16).
      assert.equal(
        Number(ov.kvBytes),
        md('llama.block_count') *
          2 *
          md('llama.context_length') *
          md('llama.attention.head_count_kv') *
          md('llama.attention.key_length') *
          2,
      );
      assert.ok(Number(ov.kvBytes) > 0);
      const tokens = g.metadata.get('tokenizer.ggml.tokens');
      const types = g.metadata.get('tokenizer.ggml.token_type');
      if ((await page.getAttribute('#tab-vocab', 'aria-expanded')) !== 'true') await page.click('#tab-vocab');
      const search = (/** @type {string} */ q) => vocabSearch(page, q);
      assert.equal(Number(await page.getAttribute('#vocab', 'data-total')), tokens.length);
      let rows = await search('日本');
      assert.deepEqual(
        rows.map((r) => Number(r.id)),
        tokens.flatMap((t, i) => (t.includes('日本') ? [i] : [])),
      );
      assert.ok(rows.length >= 2);
      const ja = rows.find((r) => Number(r.id) === tokens.indexOf('▁日本語'));
      assert.equal(ja.hex, 'e2 96 81 e6 97 a5 e6 9c ac e8 aa 9e'); // ▁ then 日本語, UTF-8
      rows = await search('привет');
      assert.equal(Number(rows[0].id), tokens.indexOf('▁привет'));
      rows = await search('#13'); // id 13: the byte token <0x0A> (3 specials before the 256 bytes)
      assert.equal(tokens[13], '<0x0A>');
      assert.equal(types[13], 6);
      assert.deepEqual([rows[0].id, rows[0].hex, rows[0].type], ['13', '0a', 'byte']);
      await page.screenshot({ path: new URL('sample-vocab.png', ART).pathname });
      await page.click('#tab-vocab');
    });

    assert.deepEqual(problems, []);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
