// The chat template in the metadata panel, in headless Chromium and Firefox ESR at 1280x800 and
// 800x900: a multi-line template is shown with its own line breaks (the text is the stored value,
// character for character), wrapped (pre-wrap) inside its panel and scrolling in its box; the copy
// button puts the stored value on the clipboard (Chromium, with the permission granted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { BACKEND } from './lib/helpers.js';
import { launchDemo } from './lib/browser.js';
import { firefoxCheck } from './lib/firefox-check.js';

// A Llama-3-style template written out over many lines, with indentation and one very long line.
const TEMPLATE = [
  '{{- bos_token }}',
  '{%- if messages[0].role == "system" %}',
  '    {%- set system_message = messages[0].content | trim %}',
  '    {%- set messages = messages[1:] %}',
  '{%- else %}',
  '    {%- set system_message = "" %}',
  '{%- endif %}',
  ...Array.from(
    { length: 40 },
    (_, i) => `{#- line ${i}: ${'a long comment that must wrap in its box '.repeat(i === 7 ? 12 : 1)} #}`,
  ),
  '{%- for message in messages %}',
  "    {{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + message.content | trim + '<|eot_id|>' }}",
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}",
].join('\n');
const model = writeGGUF({
  kv: [
    { key: 'general.architecture', type: VT.STRING, value: 'llama' },
    { key: 'tokenizer.chat_template', type: VT.STRING, value: TEMPLATE },
  ],
  tensors: [{ name: 'blk.0.attn_q.weight', type: GGMLType.F32, dims: [32, 4], data: new Uint8Array(512) }],
});

/** Runs in the demo's document once the template is shown. @param {Document} doc */
function templateBoxes(doc) {
  const win = /** @type {Window} */ (doc.defaultView);
  const pre = /** @type {HTMLElement} */ (doc.querySelector('[data-testid=meta-text]'));
  const panel = /** @type {HTMLElement} */ (doc.querySelector('#metadata'));
  const cs = win.getComputedStyle(pre);
  return {
    text: pre.textContent,
    whiteSpace: cs.whiteSpace,
    overflowY: cs.overflowY,
    scrolls: pre.scrollHeight > pre.clientHeight,
    wraps: pre.scrollWidth <= pre.clientWidth,
    preRight: pre.getBoundingClientRect().right,
    panelRight: panel.getBoundingClientRect().right,
    copy: !!doc.querySelector('[data-testid=meta-copy]'),
  };
}

/** @param {ReturnType<typeof templateBoxes>} m @param {string} who */
function check(m, who) {
  assert.equal(m.text, TEMPLATE, `${who}: the stored template, its line breaks and all`);
  assert.equal(m.text?.split('\n').length, 51, who);
  assert.match(m.whiteSpace, /pre-wrap/, who);
  assert.equal(m.overflowY, 'auto', who);
  assert.ok(m.scrolls, `${who}: a long template scrolls in its box`);
  assert.ok(m.wraps, `${who}: long lines wrap, no sideways scrolling`);
  assert.ok(m.preRight <= m.panelRight + 0.5, `${who}: inside its panel`);
  assert.ok(m.copy, `${who}: a copy button`);
}

test('the chat template in headless Chromium', async () => {
  const b = await launchDemo({ width: 1280, height: 800 });
  try {
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(b.base).origin });
    const page = await b.newPage();
    for (const [width, height] of [
      [1280, 800],
      [800, 900],
    ]) {
      await page.setViewportSize({ width, height });
      await page.goto(`${b.base}?backend=${BACKEND}`);
      await page.waitForFunction(
        () => document.body.dataset.linked === 'true' && document.body.dataset.ready === 'true',
      );
      await page.setInputFiles('[data-testid=file-input]', [
        { name: 'template.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from(model) },
      ]);
      await page.waitForFunction(
        () =>
          document.body.dataset.ready === 'true' &&
          document.querySelector('[data-testid=meta-row][data-key="tokenizer.chat_template"]'),
      );
      await page.click('#tab-metadata');
      await page.click('[data-testid=meta-row][data-key="tokenizer.chat_template"] button');
      await page.waitForSelector('[data-testid=meta-text]');
      check(
        await page.evaluate(templateBoxes, await page.evaluateHandle(() => document)),
        `Chromium ${width}x${height}`,
      );
      await page.click('[data-testid=meta-copy]');
      await page.waitForFunction(() =>
        /copied/.test(document.querySelector('[data-testid=meta-copied]')?.textContent ?? ''),
      );
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), TEMPLATE);
    }
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

test('the chat template in headless Firefox ESR', { timeout: 300000 }, async () => {
  const r = await firefoxCheck(
    `const templateBoxes = ${templateBoxes.toString()};
  const bytes = await (await fetch('/fx/template.gguf')).arrayBuffer();
  const out = {};
  for (const [w, h] of [[1280, 800], [800, 900]]) {
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:' + w + 'px;height:' + h + 'px;border:0;display:block';
    frame.src = '/demo/?backend=${BACKEND}';
    document.body.replaceChildren(frame);
    const doc = await until(() => { const d = frame.contentDocument; return d?.body?.dataset.linked === 'true' && d.body.dataset.ready === 'true' && d; }, 'the page');
    const win = frame.contentWindow;
    doc.dispatchEvent(new win.CustomEvent('bq-open', { detail: { source: new win.File([bytes], 'template.gguf'), label: 'template.gguf' } }));
    const row = await until(() => doc.body.dataset.ready === 'true' && doc.querySelector('[data-testid=meta-row][data-key="tokenizer.chat_template"] button'), 'the metadata');
    doc.querySelector('#tab-metadata').click();
    row.click();
    await until(() => doc.querySelector('[data-testid=meta-text]'), 'the template');
    out[w] = templateBoxes(doc);
  }
  await post({ ok: true, ua: navigator.userAgent, ...out });`,
    { 'template.gguf': model },
  );
  assert.equal(r.ok, true, r.error);
  assert.match(r.ua, /Firefox/);
  check(r[1280], 'Firefox 1280x800');
  check(r[800], 'Firefox 800x900');
});
