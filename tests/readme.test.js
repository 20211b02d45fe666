// The README's format table is the one tools/format-table.mjs makes from the type table and the
// SIMD128 build's exports (its test variant's), so it cannot drift from what the code does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../js/index.js';
import { testWasmFile } from './lib/helpers.js';
import { formatTable } from '../tools/format-table.mjs';

test('the README format table lists every ggml type as the code handles it', async () => {
  // The test variant: its __simd128 names say which kernels have SIMD code.
  const bq = await init({ backend: 'simd128', module: readFileSync(testWasmFile('simd128')) });
  const want = formatTable(/** @type {any} */ (bq.exports));
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8').split('\n');
  const start = readme.indexOf(want[0]);
  assert.ok(start >= 0, 'README has the format table header (regenerate: node tools/format-table.mjs)');
  assert.deepEqual(
    readme.slice(start, start + want.length),
    want,
    'README format table is stale: node tools/format-table.mjs',
  );
  assert.ok(!readme[start + want.length]?.startsWith('|'), 'no extra rows after the table');
});
