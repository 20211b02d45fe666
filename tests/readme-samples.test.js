// The README's Node sample runs as written: extracted from the Install section, saved as main.js
// in a fresh project whose package.json says "type": "module" (as the README tells), with the
// package linked into node_modules as a path install does, beside a model.gguf that has the
// tensor the sample reads. Then `npx blockquant inspect model.gguf`, as the README says next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GGMLType, writeGGUF } from '../js/index.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The first ```js block after a heading. */
function sampleAfter(/** @type {string} */ heading) {
  const at = README.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README has "${heading}"`);
  const m = /```js\n([^]*?)```/.exec(README.slice(at));
  assert.ok(m, `a js sample follows "${heading}"`);
  return m[1];
}

test("the README's Node sample runs as written, and npx blockquant after it", () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-readme-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO, join(dir, 'node_modules', 'blockquant'));
    symlinkSync(join(REPO, 'bin', 'blockquant'), join(dir, 'node_modules', '.bin', 'blockquant'));
    // 4 rows of 64 Q4_0 values: 8 blocks of 18 bytes whose every value decodes to 1.
    const block = new Uint8Array(18);
    block.set([0x00, 0x3c]); // d = 1.0 (fp16 0x3c00)
    block.fill(0x99, 2); // every code 9: (9 - 8) * d = 1
    const data = new Uint8Array(8 * 18);
    for (let b = 0; b < 8; b++) data.set(block, b * 18);
    const gguf = writeGGUF({
      kv: [],
      tensors: [{ name: 'blk.0.attn_q.weight', type: GGMLType.Q4_0, dims: [64, 4], data }],
    });
    writeFileSync(join(dir, 'model.gguf'), gguf);
    const sample = sampleAfter('### Node');
    // The sample as written, then one line that reports what it got.
    writeFileSync(
      join(dir, 'main.js'),
      `${sample}\nconsole.log(JSON.stringify({ n: w.length, sum: w.reduce((s, v) => s + v, 0) }));\n`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ['main.js'], { cwd: dir, encoding: 'utf8' }));
    assert.deepEqual(out, { n: 256, sum: 256 });
    const inspect = execFileSync('npx', ['--no-install', 'blockquant', 'inspect', 'model.gguf'], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.match(inspect, /blk\.0\.attn_q\.weight/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
