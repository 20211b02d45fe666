// The README's download sizes are measured, not remembered: bench/size.js builds two Vite apps
// against this checkout and gzips (level 9) what each page loads; the README's size sentence must
// be the one those numbers give (`node bench/size.js --readme` rewrites it after a change).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { measure, sizeSentence, SENTENCE } from '../bench/size.js';

test("the README's size sentence is what the build measures", async () => {
  const m = await measure();
  // Every build is emitted as an asset and the entry JS is not empty: the measurement saw the package.
  assert.deepEqual(Object.keys(m.codec.wasm).sort(), ['relaxed', 'scalar', 'simd128', 'threads']);
  assert.ok(m.codec.js > 1000 && m.parse.js > 1000, JSON.stringify({ codec: m.codec.js, parse: m.parse.js }));
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const found = readme.match(SENTENCE);
  assert.ok(found, 'README.md has the size sentence ("A Vite app that calls `init()` ...")');
  assert.equal(found[0], sizeSentence(m), 'README size sentence is stale: node bench/size.js --readme');
});
