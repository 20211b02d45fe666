// The demo's worker: opens GGUF files and does every heavy computation, through the public API
// (js/index.js) only. Messages: { id, op, ... } -> { id, ok, result } or { id, ok: false, error }.
import { init, openGGUF, typeInfo, GGMLType } from '../js/index.js';
import { FIELDS, FORMATS, blockCodes, errorSummary, halfToFloat, histogram } from './metrics.js';

const FLOATS = new Set([GGMLType.F32, GGMLType.F16, GGMLType.BF16]);
const MAX_VALUES = 1 << 25; // 32M values (128 MB as f32) analysed at most

const bqPromise = init();
/** @type {any} */
let file = null;
/** The tensor analysed last: its f32 values and, per format, its blocks. */
/** @type {{ name: string, x: Float32Array, q: Map<string, Uint8Array> } | null} */
let current = null;

const ops = {
  async open({ source }) {
    const bq = await bqPromise;
    file = await openGGUF(source);
    current = null;
    return {
      backend: bq.backend,
      version: file.version,
      alignment: file.alignment,
      littleEndian: file.littleEndian,
      kv: file.kv.map((e) => ({ key: e.key, text: preview(e.value) })),
      tensors: file.tensors.map((t) => ({
        name: t.name,
        type: t.type,
        typeName: typeInfo(t.type).name,
        dims: t.dims,
        nElements: t.nElements,
        byteLength: t.byteLength,
      })),
    };
  },

  async analyze({ name }) {
    const bq = await bqPromise;
    const t = tensor(name);
    const rowLen = t.dims[0] ?? 1;
    if (rowLen % 32 !== 0) throw new Error(`${name}: rows of ${rowLen} values are not whole 32-value blocks`);
    // Very large tensors: analyse the first rows only (up to MAX_VALUES values) and say so.
    const totalRows = t.nElements / rowLen;
    const rows = Math.max(1, Math.min(totalRows, Math.floor(MAX_VALUES / rowLen)));
    const geometry = { rows, totalRows, blocksPerRow: rowLen / 32, nBlocks: (rows * rowLen) / 32 };
    const x = rows === totalRows ? await bq.dequantizeTensor(file, name) : await bq.dequantizeRows(file, name, 0, rows);
    if (FLOATS.has(t.type)) {
      current = { name, x, q: new Map() };
      const formats = [];
      for (const f of FORMATS) {
        const q = bq.quantize(f, x);
        current.q.set(f, q);
        const back = bq.dequantize(f, q);
        const s = bq.blockStats(f, x);
        const { blockSize, typeSize } = typeInfo(f);
        formats.push({
          format: f,
          bits: (typeSize * 8) / blockSize,
          ...errorSummary(x, back),
          rmseBlocks: s.rmse,
          maxBlocks: s.maxAbs,
          scale: s.scale,
          hist: histogram(s.rmse, 40, true),
        });
      }
      return { kind: 'float', ...geometry, formats };
    }
    // A quantized tensor: its scales, its codes, its values, and the Q8_0 ruler.
    const raw = file.littleEndian ? await file.readRows(name, 0, rows) : null;
    const info = typeInfo(t.type);
    const bytes = raw ?? bq.quantize(t.type, x); // big-endian files: re-encode the decoded values in LE
    current = { name, x, q: new Map([[info.name, bytes]]) };
    const nb = geometry.nBlocks;
    const d = new Float32Array(nb),
      m = new Float32Array(nb);
    const at = (/** @type {string} */ field) => FIELDS[info.name]?.find(([f]) => f === field)?.[1];
    const dOff = at('d') ?? 0,
      mOff = at('m');
    const hasM = mOff !== undefined;
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let b = 0; b < nb; b++) {
      d[b] = halfToFloat(dv.getUint16(b * info.typeSize + dOff, true));
      if (hasM) m[b] = halfToFloat(dv.getUint16(b * info.typeSize + /** @type {number} */ (mOff), true));
    }
    const codes = codeHistogram(t.type, bytes, nb, info.typeSize);
    const ruler = bq.blockStats('q8_0', x);
    const rulerBack = bq.dequantize('q8_0', bq.quantize('q8_0', x));
    return {
      kind: 'quant',
      ...geometry,
      type: info.name,
      d,
      m: hasM ? m : null,
      codes,
      values: histogram(x, 60, false),
      ruler: { ...errorSummary(x, rulerBack), rmseBlocks: ruler.rmse, maxBlocks: ruler.maxAbs },
    };
  },

  async block({ name, format, block }) {
    if (!current || current.name !== name) throw new Error(`analyse ${name} first`);
    const bq = await bqPromise;
    const fmt = current.q.has(format) ? format : [...current.q.keys()][0];
    const { typeSize } = typeInfo(fmt);
    const q = current.q.get(fmt);
    const bytes = q.slice(block * typeSize, (block + 1) * typeSize);
    const original = current.x.slice(block * 32, block * 32 + 32);
    const t = tensor(name);
    // For a float tensor the block is the chosen format's encoding of the original values; for a
    // quantized tensor it is the file's own block, compared with its Q8_0 re-quantization.
    const recon = FLOATS.has(t.type) ? bq.dequantize(fmt, bytes) : bq.dequantize('q8_0', bq.quantize('q8_0', original));
    return { format: fmt, block, bytes, original, recon, quantized: !FLOATS.has(t.type) };
  },
};

/** @param {string} name */
function tensor(name) {
  const t = file?.tensors.find((/** @type {any} */ x) => x.name === name);
  if (!t) throw new Error(`no tensor named ${name}`);
  return t;
}

/** Counts of each code value (0..15, 0..31, or -128..127 shifted to 0..255). */
function codeHistogram(type, bytes, nb, ts) {
  const name = typeInfo(type).name;
  const eight = name.startsWith('q8'),
    five = name.startsWith('q5');
  const counts = new Array(eight ? 256 : five ? 32 : 16).fill(0);
  const offset = eight ? -128 : 0;
  const codes = new Int32Array(32);
  for (let b = 0; b < nb; b++) for (const c of blockCodes(name, bytes, b * ts, codes)) counts[c - offset]++;
  return { counts, offset };
}

/** @param {unknown} v */
function preview(v) {
  if (typeof v === 'string') return v.length > 200 ? `${JSON.stringify(v.slice(0, 200))}...` : JSON.stringify(v);
  if (typeof v === 'bigint') return String(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) {
    const a = /** @type {any} */ (v);
    const items = Array.from({ length: Math.min(a.length, 6) }, (_, i) =>
      typeof a[i] === 'object' ? '[...]' : typeof a[i] === 'string' ? JSON.stringify(a[i]) : String(a[i]),
    );
    return `[${items.join(', ')}${a.length > 6 ? `, ... ${a.length} items` : ''}]`;
  }
  return String(v);
}

self.onmessage = async (ev) => {
  const { id, op, ...args } = ev.data;
  try {
    const result = await ops[op](args);
    self.postMessage({ id, ok: true, result });
  } catch (e) {
    self.postMessage({ id, ok: false, error: e && e.message ? e.message : String(e), code: e?.code });
  }
};
