// blockquant inspect FILE [--json]: the header, metadata, tensor table and totals per type.
import { tensorTypeName } from '../../node.js';
import { ftypeName } from '../../model/ftypes.js';
import { openInput } from '../io.js';

/** @param {number[]} dims */
const shape = (dims) => `[${dims.join(', ')}]`;

/** GGUF's f32 value type. */
const F32 = 6;

/**
 * A float32 by the shortest decimal that reads back as the same float32 (1e-5 stored as f32 is
 * 0.000009999999747378752 as a double); demo/numbers.js writes them the same way.
 * @param {number} x
 */
function shortestF32(x) {
  if (!Number.isFinite(x) || x === 0) return Object.is(x, -0) ? '-0' : String(x);
  let p = 1;
  while (p < 9 && Math.fround(Number(x.toPrecision(p))) !== x) p++;
  const t = Number(x.toPrecision(p));
  // Exponent notation below 1e-4 (1e-5, as the demo page writes it) and where JavaScript uses it.
  const e = Math.floor(Math.log10(Math.abs(t)));
  return e < -4 || e >= 21 ? t.toExponential(p - 1) : String(t);
}

/**
 * A metadata value for people: long arrays summarised; f32 values (type, or an array's item type,
 * 6) by their shortest round-trip decimal.
 * @param {unknown} v
 * @param {number} [type]
 * @returns {string}
 */
function show(v, type) {
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' && type === F32) return shortestF32(v);
  if (ArrayBuffer.isView(v) || Array.isArray(v)) {
    const a = /** @type {ArrayLike<unknown>} */ (v);
    /** @type {string[]} */
    const items = Array.from({ length: Math.min(a.length, 5) }, (_, i) => show(a[i], type));
    return `[${items.join(', ')}${a.length > 5 ? `, ... (${a.length} items)` : ''}]`;
  }
  return String(v);
}

/** @param {unknown} v */
const jsonable = (v) =>
  JSON.parse(
    JSON.stringify(v, (_, x) =>
      typeof x === 'bigint'
        ? x.toString()
        : ArrayBuffer.isView(x)
          ? Array.from(/** @type {any} */ (x), (y) => (typeof y === 'bigint' ? y.toString() : y))
          : x,
    ),
  );

/** @type {import('../io.js').Command['run']} */
async function inspect(pos, opt, print) {
  const { f } = await openInput(pos[0]);
  try {
    const totals = new Map();
    // A type id blockquant does not know is listed as unknown(N), its size as null (JSON) or '?'.
    for (const t of f.tensors) {
      const name = tensorTypeName(t);
      const e = totals.get(name) ?? { tensors: 0, elements: 0, bytes: 0 };
      e.tensors++;
      e.elements += t.nElements;
      e.bytes += t.byteLength ?? 0;
      totals.set(name, e);
    }
    // The whole file: tensors, parameters, bytes (of the tensors of known types) and bits per weight.
    const known = f.tensors.filter((t) => t.byteLength !== null && t.byteLength !== undefined);
    const params = f.tensors.reduce((a, t) => a + t.nElements, 0);
    const bytes = known.reduce((a, t) => a + (t.byteLength ?? 0), 0);
    const knownParams = known.reduce((a, t) => a + t.nElements, 0);
    const summary = {
      tensors: f.tensors.length,
      parameters: params,
      bytes,
      bitsPerWeight: knownParams ? (8 * bytes) / knownParams : null,
    };
    const ft = f.kv.find((e) => e.key === 'general.file_type');
    const fileType = ft === undefined ? null : (ftypeName(ft.value) ?? `unknown (${ft.value})`);
    if (opt.json) {
      print(
        JSON.stringify(
          {
            version: f.version,
            alignment: f.alignment,
            littleEndian: f.littleEndian,
            dataOffset: f.dataOffset,
            metadata: f.kv.map((e) => ({
              key: e.key,
              type: e.type,
              ...(e.itemType === undefined ? {} : { itemType: e.itemType }),
              value: jsonable(e.value),
            })),
            tensors: f.tensors.map((t) => ({
              name: t.name,
              type: tensorTypeName(t),
              dims: t.dims,
              offset: t.offset,
              bytes: t.byteLength,
              ...(t.unreadable ? { unreadable: t.unreadable.message } : {}),
            })),
            totals: Object.fromEntries(totals),
            summary,
            fileType,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    print(
      `GGUF v${f.version}, ${f.littleEndian ? 'little' : 'big'}-endian, alignment ${f.alignment}, data at byte ${f.dataOffset}`,
    );
    print(`${f.kv.length} metadata entries, ${f.tensors.length} tensors${fileType ? `, file type ${fileType}` : ''}\n`);
    print('metadata:');
    for (const e of f.kv)
      print(
        `  ${e.key} = ${show(e.value, e.itemType ?? e.type)}${e === ft && ftypeName(e.value) ? ` (${ftypeName(e.value)})` : ''}`,
      );
    print('\ntensors:');
    const w = Math.max(4, ...f.tensors.map((t) => t.name.length));
    const tw = Math.max(7, ...f.tensors.map((t) => tensorTypeName(t).length));
    print(
      `  ${'name'.padEnd(w)}  ${'type'.padEnd(tw)}  ${'shape'.padEnd(23)}  ${'bytes'.padStart(12)}  ${'offset'.padStart(13)}`,
    );
    for (const t of f.tensors) {
      print(
        `  ${t.name.padEnd(w)}  ${tensorTypeName(t).padEnd(tw)}  ${shape(t.dims).padEnd(23)}  ${String(t.byteLength ?? '?').padStart(12)}  ${String(t.offset).padStart(13)}`,
      );
    }
    print('\ntotals per type:');
    for (const [name, e] of totals)
      print(
        `  ${name.padEnd(tw)}  ${e.tensors} tensors, ${e.elements} elements, ${name.startsWith('unknown(') ? '?' : e.bytes} bytes`,
      );
    const bpw = summary.bitsPerWeight === null ? '?' : summary.bitsPerWeight.toFixed(2);
    print(
      `\ntotals: ${summary.tensors} tensors, ${params} parameters, ${bytes}${known.length < f.tensors.length ? '+?' : ''} bytes, ${bpw} bits/weight`,
    );
    const unreadable = f.tensors.filter((t) => t.unreadable);
    if (unreadable.length) {
      print('\nnot readable:');
      for (const t of unreadable) print(`  ${/** @type {{ message: string }} */ (t.unreadable).message}`);
    }
    return 0;
  } finally {
    await f.close();
  }
}

/** @type {import('../io.js').Command} */
export const command = {
  usage: 'inspect FILE [--json]',
  about: 'header, metadata, tensor table, totals per type and for the file',
  positionals: ['FILE'],
  options: { json: { type: 'boolean' } },
  details: '  --json         everything as one JSON document (64-bit integers as strings)\n',
  run: inspect,
};
