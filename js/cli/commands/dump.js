// blockquant dump FILE TENSOR [--rows A:B]: dequantized values, one row per line.
import { init } from '../../node.js';
import { about, tag, Usage } from '../errors.js';
import { openInput } from '../io.js';

/** @type {import('../io.js').Command['run']} */
async function dump(pos, opt, print) {
  let a = 0,
    b = Infinity;
  if (typeof opt.rows === 'string') {
    const m = /^(\d+):(\d+)$/.exec(opt.rows);
    if (!m) throw new Usage('--rows takes A:B', 'dump');
    [a, b] = [Number(m[1]), Number(m[2])];
    if (a > b) throw new Usage(`--rows ${opt.rows}: A is past B`, 'dump');
  }
  const { f } = await openInput(pos[0]);
  try {
    const t = f.tensors.find((x) => x.name === pos[1]);
    if (!t) throw tag(new Error(`no tensor named ${JSON.stringify(pos[1])}`), pos[0]);
    const rowLen = t.dims[0] ?? 1;
    const rows = t.nElements / rowLen;
    // Rows past the tensor are an error, never an empty dump that looks like success.
    if (typeof opt.rows === 'string' && (a >= rows || b > rows))
      throw tag(
        new Error(`--rows ${opt.rows}: ${t.name} has ${rows} rows (A:B within 0:${rows}, A below ${rows})`),
        pos[0],
      );
    b = Math.min(b, rows);
    const bq = await init();
    const chunk = Math.max(1, Math.floor((1 << 20) / rowLen));
    for (let r = a; r < b; r += chunk) {
      const k = Math.min(chunk, b - r);
      const v = await about(pos[0], () => bq.dequantizeRows(f, t.name, r, k));
      // Integer tensors decode to their own typed arrays (I64 to BigInt64Array): print any of them.
      const row = (/** @type {number} */ i) =>
        /** @type {ArrayLike<number | bigint>} */ (v.subarray(i * rowLen, (i + 1) * rowLen));
      for (let i = 0; i < k; i++) print(Array.from(row(i), (x) => `${x}`).join(' '));
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @type {import('../io.js').Command} */
export const command = {
  usage: 'dump FILE TENSOR [--rows A:B]',
  about: 'dequantized values, one row per line',
  positionals: ['FILE', 'TENSOR'],
  options: { rows: { type: 'string' } },
  details: '  --rows A:B     rows A (included) to B (excluded) only; rows past the tensor are an error\n',
  run: dump,
};
