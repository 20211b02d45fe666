// demo/heatmap.js, the worker's heatmap and histogram rendering, against values written out here:
// pooling keeps the largest value of each group (an outlier is never dropped), the colour scale runs
// between the CLIP percentiles (an outlier does not flatten it, and is counted as above), zoom
// windows stay inside the map, and shared histograms use one set of bins and one count axis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderHeatmap, sharedHistograms, percentile, colour, MAX_CELLS, CLIP } from '../demo/heatmap.js';

test('a small map is drawn cell for cell; one outlier does not flatten the scale', () => {
  const g = { rows: 10, perRow: 20 };
  const v = Float32Array.from({ length: 200 }, (_, i) => 1 + (i % 7) * 0.1);
  v[57] = 1000;
  const d = renderHeatmap(v, g);
  assert.deepEqual([d.W, d.H, d.sx, d.sy, d.x0, d.y0], [20, 10, 1, 1, 0, 0]);
  assert.equal(d.max, 1000);
  assert.ok(d.hi < 2, `scale top ${d.hi}`);
  assert.equal(d.above, 1);
  // Ordinary cells spread over the ramp: the 1.0 and 1.6 cells differ in colour.
  const px = (i) => [...d.rgba.subarray(i * 4, i * 4 + 3)];
  assert.notDeepEqual(px(0), px(6));
  assert.deepEqual(px(57), colour(1)); // drawn at the top end
});

test('a large map is pooled to MAX_CELLS a side, each cell the largest of its group', () => {
  const g = { rows: 1000, perRow: 1000 };
  const v = new Float32Array(1e6).fill(1);
  v[777 * 1000 + 555] = 9;
  const d = renderHeatmap(v, g);
  assert.equal(d.sx, Math.ceil(1000 / MAX_CELLS));
  assert.ok(d.W <= MAX_CELLS && d.H <= MAX_CELLS);
  const x = Math.floor(555 / d.sx),
    y = Math.floor(777 / d.sy);
  assert.equal(d.cells[y * d.W + x], 9);
  assert.equal(d.max, 9);
});

test('zoom windows: centred on the asked cell, kept inside the map', () => {
  const g = { rows: 64, perRow: 64 };
  const v = Float32Array.from({ length: 64 * 64 }, (_, i) => i);
  const d = renderHeatmap(v, g, { zoom: 4, cx: 40, cy: 20 });
  assert.deepEqual([d.W, d.H, d.x0, d.y0], [16, 16, 32, 12]);
  assert.equal(d.cells[0], 12 * 64 + 32);
  const e = renderHeatmap(v, g, { zoom: 4, cx: 63, cy: 0 });
  assert.deepEqual([e.x0, e.y0], [48, 0]);
});

test('log scale: cells <= 0 are grey and off the scale', () => {
  const d = renderHeatmap(Float32Array.from([0, 1e-3, 1e-2, 1e-1]), { rows: 1, perRow: 4 }, { log: true });
  assert.deepEqual([...d.rgba.subarray(0, 3)], [160, 160, 160]);
  assert.equal(d.min, Math.fround(1e-3));
  assert.equal(d.lo, Math.fround(1e-3));
});

test('percentile is the value at the nearest rank', () => {
  const s = Float64Array.from([0, 10, 20, 30, 40]);
  assert.equal(percentile(s, 0), 0);
  assert.equal(percentile(s, 50), 20);
  assert.equal(percentile(s, 100), 40);
  assert.equal(percentile(s, 10), 0); // the nearest rank
  assert.equal(percentile(s, 90), 40);
  assert.equal(percentile(s, 60), 20);
  assert.deepEqual(CLIP, [0.5, 99.5]);
});

test('shared histograms: one range, one count axis', () => {
  const h = sharedHistograms(
    [
      [1, 2, 3],
      [3, 3, 3, 100],
    ],
    4,
    false,
  );
  assert.deepEqual([h.lo, h.hi, h.log], [1, 100, false]);
  assert.deepEqual(h.counts, [
    [3, 0, 0, 0],
    [3, 0, 0, 1],
  ]);
  assert.equal(h.maxCount, 3);
});

test('a tall map is wrapped into columns; every cell lands once, in its row order', async () => {
  const { foldFor, foldGrid } = await import('../demo/heatmap.js');
  assert.equal(foldFor(96, 4), 1, 'the sample: 24 times taller than wide stays one strip');
  assert.equal(foldFor(32000, 3), 119, 'round(sqrt(4/3 · 32000 / 3))');
  assert.equal(foldFor(3000, 1), 63);
  // 7 rows of 2 cells in 3 columns of ceil(7 / 3) = 3 rows: row r at (column floor(r / 3), row r mod 3).
  const v = Float32Array.from({ length: 14 }, (_, i) => i);
  const f = foldGrid(v, { rows: 7, perRow: 2 }, 3);
  assert.deepEqual([f.rows, f.perRow], [3, 6]);
  // Written out: rows 0,1,2 | 3,4,5 | 6,- side by side.
  assert.deepEqual(Array.from(f.values), [0, 1, 6, 7, 12, 13, 2, 3, 8, 9, NaN, NaN, 4, 5, 10, 11, NaN, NaN]);
});
