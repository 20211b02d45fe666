// The README's download sizes are measured, not remembered: bench/size.js builds two Vite apps
// against this checkout and gzips (level 9) what each page loads; the README's size sentence must
// be the one those numbers give (`node bench/size.js --readme` rewrites it after a change).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { measure, sizeSentence, SENTENCE } from '../bench/size.js';

const m = await measure();

test("the README's size sentence is what the build measures", () => {
  // Every build is emitted as an asset and the entry JS is not empty: the measurement saw the package.
  assert.deepEqual(Object.keys(m.codec.wasm).sort(), ['relaxed', 'scalar', 'simd128', 'threads']);
  assert.ok(m.codec.js > 1000 && m.parse.js > 1000, JSON.stringify({ codec: m.codec.js, parse: m.parse.js }));
  // The split layout emits each build's core and side modules (identical files once: the SIMD128
  // build's grid, imat and quant modules are the relaxed build's bytes).
  assert.deepEqual(Object.keys(m.split.wasm).sort(), ['relaxed', 'scalar', 'simd128']);
  for (const mod of ['quant', 'dot', 'grid', 'imat']) assert.ok(m.split.modules[`relaxed-${mod}`] > 1000, mod);
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const found = readme.match(SENTENCE);
  assert.ok(found, 'README.md has the size sentence ("A Vite app that calls `init()` ...")');
  assert.equal(found[0], sizeSentence(m), 'README size sentence is stale: node bench/size.js --readme');
});

test('issue 24: init() (the split layout) + dequantize downloads at most 32 KB gzipped, whichever build is selected', () => {
  for (const [build, core] of Object.entries(m.split.wasm))
    assert.ok(m.split.js + core <= 32 * 1024, `${build}: ${m.split.js} B of JS + ${core} B of core wasm`);
});
