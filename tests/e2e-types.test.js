// The demo page in headless Chromium on the build under test: every tensor of every block type in
// the bundled sample opens (no ⊘ but the integer tensor's), with a code histogram counting every
// element of the tensor, and block 0 in the inspector shows the API's values, both decoded and
// recomputed from the layout description, and the API's d.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGGUF, typeInfo, blockFields } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { inspected, launchDemo, ready as pageReady } from './lib/browser.js';
import { Bytes } from './lib/gguf-bytes.js';
import { ue4m3Half } from '../demo/layout.js';

const ART = new URL('./artifacts/', import.meta.url);
mkdirSync(ART, { recursive: true });
const bq = await codec();
const f = Math.fround;
/** Sub-block multiplier from d and the sub-block's integer scale s, per format. */
const SUB_SCALE = {
  iq4_xs: (d, s) => f(d * s),
  iq2_xxs: (d, s) => f(f(d * (0.5 + s)) * 0.25),
  iq2_xs: (d, s) => f(f(d * (0.5 + s)) * 0.25),
  iq2_s: (d, s) => f(f(d * (0.5 + s)) * 0.25),
  iq3_xxs: (d, s) => f(f(d * (0.5 + s)) * 0.5),
  iq3_s: (d, s) => f(d * (1 + 2 * s)),
  iq1_s: (d, s) => f(d * (2 * s + 1)),
  iq1_m: (d, s) => f(d * (2 * s + 1)),
  nvfp4: (d, s) => ue4m3Half(s), // the sub-block's UE4M3 byte, halved (NEWTYPES.md); no d
};
const sample = parseGGUF(new Uint8Array(readFileSync(new URL('../demo/sample.gguf', import.meta.url))));

test('every block type in the sample opens in the demo', async (t) => {
  const demo = await launchDemo({ width: 1440, height: 900 });
  const { problems } = demo;
  const dir = mkdtempSync(join(tmpdir(), 'bq-e2e-types-'));
  try {
    const page = await demo.newPage();
    const ready = () => pageReady(page);
    await page.goto(`${demo.base}?backend=${BACKEND}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=tensor-row]').length > 0, null, {
      timeout: 30000,
    });
    await ready();

    // One tensor per block type: the sample names them '<type>.blk.0.attn_q.weight'.
    const blockTypes = [
      ...new Set(
        sample.tensors
          .map((x) => typeInfo(x.type))
          .filter((i) => i.blockSize > 1 && i.dequantize)
          .map((i) => i.name),
      ),
    ];
    assert.equal(blockTypes.length, 25, `block types in the sample: ${blockTypes}`);

    await t.test('no tensor is marked ⊘', async () => {
      const marked = await page.$$eval('[data-testid=tensor-row].unsupported', (rs) => rs.map((r) => r.dataset.name));
      assert.deepEqual(marked, []);
      assert.doesNotMatch(await page.textContent('#list, body'), /⊘/);
    });

    // The integer and F64 tensors: their values, as the API decodes them to their own typed arrays.
    const valueTensors = sample.tensors.filter((x) =>
      ['i8', 'i16', 'i32', 'i64', 'f64'].includes(typeInfo(x.type).name),
    );
    assert.equal(valueTensors.length, 5);
    for (const vt of valueTensors) {
      const fmt = typeInfo(vt.type).name;
      await t.test(`${fmt}: ${vt.name} shows its values`, async () => {
        const want = await bq.dequantizeTensor(sample, vt.name);
        await page.click(`[data-testid=tensor-row][data-name="${vt.name}"]`);
        await ready();
        assert.ok(await page.$eval('#error', (e) => e.hidden), await page.textContent('#error'));
        assert.match(await page.textContent('#view h2'), new RegExp(`${vt.name.replace(/\./g, '\\.')} \\(${fmt}\\)`));
        const sum = await page.$eval('[data-testid=values-summary]', (e) => ({ ...e.dataset }));
        let lo = want[0],
          hi = want[0];
        for (const x of want) {
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
        assert.deepEqual(sum, {
          testid: 'values-summary',
          min: String(lo),
          max: String(hi),
          count: String(want.length),
        });
        const shown = await page.$$eval('[data-testid=int-value-row]', (rs) => rs.map((r) => r.dataset.value));
        assert.deepEqual(shown, Array.from(want.subarray(0, 256), String));
        const counts = (await page.getAttribute('[data-testid=values-histogram]', 'data-counts')).split(',');
        assert.equal(
          counts.reduce((a, c) => a + Number(c), 0),
          want.length,
        );
        if (fmt === 'i64') await page.screenshot({ path: new URL('values-i64.png', ART).pathname });
      });
    }

    for (const fmt of blockTypes) {
      await t.test(`${fmt}: the tensor opens and block 0 shows the API's values`, async () => {
        const name = `${fmt}.blk.0.attn_q.weight`;
        const { typeSize, blockSize } = typeInfo(fmt);
        const raw = sample.tensorBytes(name);
        await page.click(`[data-testid=tensor-row][data-name="${name}"]`);
        await ready();
        assert.ok(await page.$eval('#error', (e) => e.hidden), await page.textContent('#error'));
        assert.equal(await page.$('[data-testid=unsupported]'), null);
        const hist = await page.$eval('[data-testid=code-histogram]', (f) => ({ ...f.dataset }));
        const total = hist.counts.split(',').reduce((a, c) => a + Number(c), 0);
        assert.equal(total, (raw.length / typeSize) * blockSize);
        await page.click('[data-testid=heatmap]', { position: { x: 2, y: 2 } });
        await inspected(page, fmt);
        const ins = await page.$eval('[data-testid=block-inspector]', (e) => ({ ...e.dataset }));
        assert.equal(Number(ins.block), 0);
        const b = raw.subarray(0, typeSize);
        const want = [...bq.dequantize(fmt, b)];
        const vals = await page.$$eval('[data-testid=value-row]', (rs) => rs.map((r) => ({ ...r.dataset })));
        assert.equal(vals.length, blockSize);
        assert.deepEqual(
          vals.map((r) => Number(r.decoded)),
          want,
        );
        assert.deepEqual(
          vals.map((r) => Number(r.fields)),
          want,
        );
        // The block's scale d, as ggml reads it (MXFP4: the E8M0 byte e, 2^(e-128)).
        if (fmt === 'mxfp4') assert.equal(Number(ins.e), 2 ** (b[0] - 128));
        else if (fmt === 'nvfp4') assert.equal(ins.d, undefined, 'NVFP4 has no block d, four UE4M3 sub-block bytes');
        else if (fmt === 'iq1_m') {
          // IQ1_M's d: the top nibbles of its four u16 scale words.
          const w = (i) => b[48 + 2 * i] | (b[49 + 2 * i] << 8);
          const h = (w(0) >> 12) | ((w(1) >> 8) & 0xf0) | ((w(2) >> 4) & 0xf00) | (w(3) & 0xf000);
          assert.equal(Number(ins.d), bq.dequantize('f16', new Uint8Array([h & 255, h >> 8]))[0]);
        } else {
          const f = /** @type {any[]} */ (blockFields(fmt)).find((x) => x.name === 'd');
          assert.equal(Number(ins.d), bq.dequantize('f16', b.slice(f.offset, f.offset + 2))[0], fmt);
        }
        assert.ok((await page.textContent('[data-testid=formula]')).length > 10);
        // The sub-block multiplier each row shows, as ../shared/reference/IQUANTS.md defines it.
        const mul = SUB_SCALE[fmt];
        if (mul) {
          const d = Number(ins.d);
          const subs = await page.$$eval('[data-testid=sub-row]', (rs) => rs.map((r) => ({ ...r.dataset })));
          assert.ok(subs.length > 0);
          assert.deepEqual(
            subs.map((r) => Number(r.scale)),
            subs.map((r) => mul(d, Number(r.sc))),
          );
        }
        if (['iq2_xxs', 'iq4_xs', 'tq1_0', 'iq1_m'].includes(fmt))
          await page.screenshot({ path: new URL(`inspector-${fmt}.png`, ART).pathname });
      });
    }
    await t.test("a big-endian file: the inspector shows the file's own IQ2_XXS block, in its values", async () => {
      // Two IQ2_XXS super-blocks from the sample, written into a big-endian GGUF (fields swapped
      // by their unit: the f16 d and the u32 sign-and-scale words).
      const le = sample.tensorBytes('iq2_xxs.blk.0.attn_q.weight').slice(0, 2 * 66);
      const be = le.slice();
      for (let o = 0; o < be.length; o += 66)
        for (const f of /** @type {any[]} */ (blockFields('iq2_xxs')))
          if (f.unit > 1)
            for (let u = o + f.offset; u < o + f.offset + f.size; u += f.unit) be.subarray(u, u + f.unit).reverse();
      const w = new Bytes({ le: false });
      w.header(3, 1, 0);
      w.tensor('be.iq2_xxs', [256, 2], 16, 0);
      w.padTo(32);
      w.raw(...be);
      const path = join(dir, 'be.gguf');
      writeFileSync(path, w.bytes());
      await page.setInputFiles('[data-testid=file-input]', path);
      await page.waitForFunction(() => !!document.querySelector('[data-testid=tensor-row][data-name="be.iq2_xxs"]'));
      await ready();
      await page.click('[data-testid=tensor-row][data-name="be.iq2_xxs"]');
      await ready();
      assert.ok(await page.$eval('#error', (e) => e.hidden), await page.textContent('#error'));
      await page.click('[data-testid=heatmap]', { position: { x: 2, y: 2 } });
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          !document.querySelector('[data-testid=block-inspector]').hidden &&
          document.querySelector('[data-testid=block-inspector]').dataset.format === 'iq2_xxs',
        null,
        { timeout: 30000 },
      );
      const want = [...bq.dequantize('iq2_xxs', le.subarray(0, 66))];
      const vals = await page.$$eval('[data-testid=value-row]', (rs) => rs.map((r) => ({ ...r.dataset })));
      assert.deepEqual(
        vals.map((r) => Number(r.fields)),
        want,
      );
      assert.deepEqual(
        vals.map((r) => Number(r.decoded)),
        want,
      );
    });

    assert.deepEqual(problems, []);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
