// "Compare with…" and the encode part in Debian's Firefox ESR, headless (Playwright cannot drive
// that build): a check page frames the demo with a link that opens A and compares it with B
// (compare=, both served here with Range), reads the table, opens a tensor's heatmap and the A/B
// blocks under a cell, measures the panel's boxes in a 1280x800 and an 800x900 frame, then opens
// a block in the inspector and reads its encode part; it POSTs all of it to this test's server,
// which checks it against its own loops and bq.quantize in Node; last, compare=quantize:Q4_0
// (A quantized in memory) against quantizeModel's file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firefoxPage } from './lib/firefox-check.js';
import { parseGGUF, quantizeModel, typeInfo } from '../js/node.js';
import { BACKEND, codec } from './lib/helpers.js';
import { compareModels } from './lib/compare-fixture.js';

const bq = await codec();
const { a: aBytes, b: bBytes } = compareModels(bq);
const ga = parseGGUF(aBytes),
  gb = parseGGUF(bBytes);
/** @type {Uint8Array[]} */
const parts = [];
await quantizeModel(aBytes, (/** @type {Uint8Array} */ c) => void parts.push(c.slice()), { ftype: 'Q4_0' });
const gq = parseGGUF(new Uint8Array(Buffer.concat(parts)));
const TENSOR = 'blk.1.attn_k.weight';
const ENC = 'blk.0.attn_q.weight';

const CHECK = `<!doctype html><meta charset="utf-8"><title>compare check</title>
<iframe id="demo" src="/demo/?backend=${BACKEND}&url=fx/a.gguf&compare=fx/b.gguf" style="width:1280px;height:800px;border:0"></iframe>
<script type="module">
const frame = document.getElementById('demo');
const until = async (f, what, ms = 150000) => {
  const t0 = Date.now();
  for (;;) {
    try { const v = f(); if (v) return v; } catch {}
    if (Date.now() - t0 > ms) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
};
const post = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
const boxes = (doc) => ['#compare h2', '.cmp-controls', '.cmp-run', '[data-testid=cmp-chart]', '.cmp-table-box',
  '[data-testid=cmp-mismatches]', '[data-testid=cmp-heat]', '[data-testid=cmp-block][data-side=a]',
  '[data-testid=cmp-block][data-side=b]', '.cmp-vals-box'].map((s) => {
  const r = doc.querySelector(s).getBoundingClientRect();
  return { name: s, x: r.x, y: r.y, w: r.width, h: r.height };
});
try {
  const doc = await until(() => frame.contentDocument?.querySelector('#compare')?.dataset.state === 'done' && frame.contentDocument, 'the compare');
  const rows = [...doc.querySelectorAll('[data-testid=cmp-row]')].map((r) => ({ ...r.dataset }));
  const mismatched = [...doc.querySelectorAll('[data-testid=cmp-mismatch]')].map((e) => e.dataset.name);
  doc.querySelector('[data-testid=cmp-row][data-name="${TENSOR}"] button').click();
  await until(() => doc.querySelector('[data-testid=cmp-blocks][data-cell="0"]'), 'the blocks of cell 0');
  const canvas = doc.querySelector('[data-testid=cmp-heatmap]');
  await until(() => canvas.dataset.cells, 'the heatmap');
  const [W, H] = canvas.dataset.cells.split('x').map(Number);
  const rect = canvas.getBoundingClientRect();
  canvas.dispatchEvent(new frame.contentWindow.MouseEvent('click', { bubbles: true, clientX: rect.left + rect.width / 2, clientY: rect.top + ((7 + 0.5) / H) * rect.height }));
  await until(() => doc.querySelector('[data-testid=cmp-blocks][data-cell="7"]'), 'the blocks of cell 7');
  const blocks = [...doc.querySelectorAll('[data-testid=cmp-block]')].map((e) => ({ ...e.dataset }));
  const wide = boxes(doc);
  const vw1 = doc.documentElement.clientWidth;
  frame.style.width = '800px';
  frame.style.height = '900px';
  await until(() => doc.documentElement.clientWidth <= 800, 'the narrow frame');
  await new Promise((r) => setTimeout(r, 300));
  const narrow = boxes(doc);
  const vw2 = doc.documentElement.clientWidth;
  const link = frame.contentWindow.location.search;
  frame.src = '/demo/?backend=${BACKEND}&url=fx/a.gguf&tensor=${ENC}&format=iq4_nl&block=100';
  const doc2 = await until(() => { const d = frame.contentDocument; const ins = d?.querySelector('[data-testid=block-inspector]');
    return d && d !== doc && d.body.dataset.ready === 'true' && ins && !ins.hidden && ins.dataset.format === 'iq4_nl' && d; }, 'the inspector');
  const enc = { ...doc2.querySelector('[data-testid=encode-bytes]').dataset };
  doc2.querySelector('[data-testid=encode-weights]').click();
  await until(() => doc2.querySelector('[data-testid=encode-side][data-side=weighted]'), 'the weighted block');
  const sides = [...doc2.querySelectorAll('[data-testid=encode-side]')].map((e) => e.dataset.bytes);
  frame.src = '/demo/?backend=${BACKEND}&url=fx/a.gguf&compare=quantize:Q4_0';
  const doc3 = await until(() => { const d = frame.contentDocument;
    return d && d !== doc2 && d.querySelector('#compare')?.dataset.state === 'done' && d; }, 'the in-memory compare');
  const qrows = [...doc3.querySelectorAll('[data-testid=cmp-row]')].map((r) => ({ ...r.dataset }));
  await post({ ok: true, ua: navigator.userAgent, rows, mismatched, W, H, blocks, wide, narrow, vw1, vw2, link, enc, sides, qrows });
} catch (e) {
  await post({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

/** The error of B against A as this test computes it. @param {string} name */
function expected(name, g2 = gb) {
  const t1 = /** @type {any} */ (ga.tensors.find((t) => t.name === name));
  const t2 = /** @type {any} */ (g2.tensors.find((t) => t.name === name));
  const a = bq.dequantize(t1.type, ga.tensorBytes(name)),
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
  return { se, sig, rmse: Math.sqrt(se / a.length), maxAbs: max, snr: se === 0 ? Infinity : 10 * Math.log10(sig / se) };
}

/** @param {{ name: string, x: number, y: number, w: number, h: number }[]} boxes @param {number} vw */
function layoutProblems(boxes, vw) {
  const out = [];
  for (const p of boxes) {
    if (!(p.w > 0 && p.h > 0)) out.push(`${p.name} not shown`);
    if (p.x < 0 || p.x + p.w > vw + 0.5) out.push(`${p.name} outside the ${vw} px window`);
  }
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const p = boxes[i],
        q = boxes[j];
      if (
        Math.min(p.x + p.w, q.x + q.w) - Math.max(p.x, q.x) > 1 &&
        Math.min(p.y + p.h, q.y + q.h) - Math.max(p.y, q.y) > 1
      )
        out.push(`${p.name} overlaps ${q.name}`);
    }
  return out;
}

/** Serves bytes with HTTP Range as the demo's sources expect. */
function serveRange(
  /** @type {import('node:http').IncomingMessage} */ req,
  /** @type {import('node:http').ServerResponse} */ res,
  /** @type {Uint8Array} */ body,
) {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (!m)
    return res
      .writeHead(200, { 'Content-Length': body.length, ETag: '"fx"', 'Accept-Ranges': 'bytes' })
      .end(Buffer.from(body));
  const start = Number(m[1]),
    end = Math.min(Number(m[2]), body.length - 1);
  res
    .writeHead(206, {
      'Content-Range': `bytes ${start}-${end}/${body.length}`,
      'Content-Length': end - start + 1,
      ETag: '"fx"',
      'Accept-Ranges': 'bytes',
    })
    .end(Buffer.from(body.subarray(start, end + 1)));
}

test('Compare with… and the encode part in headless Firefox ESR', { timeout: 300000 }, async () => {
  const r = await firefoxPage(CHECK, {
    timeoutMs: 280000,
    route(req, res) {
      if (req.url === '/demo/fx/a.gguf') serveRange(req, res, aBytes);
      else if (req.url === '/demo/fx/b.gguf') serveRange(req, res, bBytes);
      else return false;
      return true;
    },
  });
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  assert.equal(r.rows.length, ga.tensors.length - 2);
  for (const row of r.rows) {
    const w = expected(row.name);
    assert.equal(Number(row.rmse), w.rmse, row.name);
    assert.equal(Number(row.maxAbs), w.maxAbs, row.name);
    assert.equal(Number(row.se), w.se, row.name);
    assert.equal(Number(row.signal), w.sig, row.name);
    // SNR = 10 log10(signal / se) of those exact sums; ECMAScript lets Math.log10 be approximated,
    // and SpiderMonkey's differs from V8's in the last bit (26.480108654408866 against ...863),
    // so the logarithm is allowed 2 ulps (|snr| < 128: an ulp is 2^-46 at most).
    if (w.snr === Infinity) assert.equal(Number(row.snr), Infinity, row.name);
    else assert.ok(Math.abs(Number(row.snr) - w.snr) <= 2 * 2 ** -46, `${row.name}: ${row.snr} against ${w.snr}`);
  }
  assert.deepEqual(r.mismatched, ['only_in_a.weight', 'reshaped.weight', 'only_in_b.weight']);
  // compare=quantize:Q4_0: A quantized in memory, the numbers of quantizeModel's file.
  const converted = gq.tensors.filter((x) => x.type !== ga.tensors.find((y) => y.name === x.name)?.type);
  assert.deepEqual(
    r.qrows.map((/** @type {any} */ q) => q.name),
    converted.map((x) => x.name),
  );
  for (const q of r.qrows) {
    const w = expected(q.name, gq);
    assert.equal(Number(q.se), w.se, q.name);
    assert.equal(Number(q.signal), w.sig, q.name);
    assert.equal(Number(q.rmse), w.rmse, q.name);
  }
  assert.deepEqual([r.W, r.H], [1, 128]);
  const hex = (/** @type {Uint8Array} */ u) => Buffer.from(u).toString('hex');
  assert.deepEqual(
    r.blocks.map((/** @type {any} */ b) => [b.side, b.type, b.block, b.bytes]),
    [
      ['a', 'f16', String(7 * 256), hex(ga.tensorBytes(TENSOR).subarray(7 * 512, 7 * 512 + 2))],
      ['b', 'q4_K', '7', hex(gb.tensorBytes(TENSOR).subarray(7 * 144, 8 * 144))],
    ],
  );
  assert.deepEqual(layoutProblems(r.wide, r.vw1), []);
  assert.deepEqual(layoutProblems(r.narrow, r.vw2), []);
  assert.equal(new URLSearchParams(r.link).get('compare'), 'fx/b.gguf');
  // The encode part: IQ4_NL block 100 of an F16 tensor, the bytes of bq.quantize.
  const x = bq.dequantize('f16', ga.tensorBytes(ENC));
  const { typeSize } = typeInfo('iq4_nl');
  const q = bq.quantize('iq4_nl', x);
  assert.equal(r.enc.bytes, hex(q.subarray(100 * typeSize, 101 * typeSize)));
  assert.equal(r.enc.equal, 'true');
  const row = x.subarray(12 * 256, 13 * 256); // block 100 = row 12, block 4 of 8
  const blk = (/** @type {Uint8Array} */ u) => hex(u.subarray(4 * typeSize, 5 * typeSize));
  assert.deepEqual(r.sides, [
    blk(bq.quantize('iq4_nl', row, { rowLength: 256 })),
    blk(bq.quantize('iq4_nl', row, { rowLength: 256, imatrix: row.map((v) => v * v) })),
  ]);
});
