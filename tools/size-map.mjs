// Where a linked module's bytes go: reads wasm-ld's -Map output and the unstripped module it
// describes, and prints raw and gzip -9 bytes per group of input sections (each group's bytes
// concatenated and compressed alone, so the gz column tells what a group adds roughly, not
// exactly: gzip shares matches across groups in the real file).
//   node tools/size-map.mjs <module.wasm> <module.map> [--by object|type|op|module]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const [wasmPath, mapPath, , by = 'object'] = process.argv.slice(2);
const wasm = readFileSync(wasmPath);
const lines = readFileSync(mapPath, 'utf8').split('\n');
const TYPES =
  /_(f32|f16|bf16|q4_0|q4_1|q5_0|q5_1|q8_0|q8_1|q2_K|q3_K|q4_K|q5_K|q6_K|q8_K|iq4_nl|iq4_xs|iq2_xxs|iq2_xs|iq2_s|iq3_xxs|iq3_s|iq1_s|iq1_m|mxfp4|nvfp4|tq1_0|tq2_0|q1_0|q2_0)_/;
const OPS = /_(quantize_rows|quantize|dequantize|dot|matvec|stats)/;
/** @type {Map<string, Buffer[]>} */
const groups = new Map();
for (const line of lines) {
  // "   Addr      Off     Size Out     In      Symbol": input sections are indented by 9 after Size
  const m = /^\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+) {9}(\S.*)$/.exec(line);
  if (!m) continue;
  const off = parseInt(m[2], 16);
  const size = parseInt(m[3], 16);
  const input = m[4];
  if (input.includes(':(.bss')) continue; // zero-filled memory, not in the file
  const obj = /^(?:build\/[a-z0-9]+\/)?([^:]+):\((.*)\)$/.exec(input);
  const file = obj ? obj[1] : input;
  const sym = obj ? obj[2] : input;
  let key = file;
  if (by === 'type')
    key = (TYPES.exec(`_${sym}_`) || TYPES.exec(`_${file.replace(/.*\//, '').replace('.o', '')}_`) || ['', 'other'])[1];
  else if (by === 'op') key = (OPS.exec(sym) || ['', sym.startsWith('.') ? 'data' : 'other'])[1];
  const list = groups.get(key) ?? [];
  list.push(wasm.subarray(off, off + size));
  groups.set(key, list);
}
const rows = [...groups].map(([k, parts]) => {
  const buf = Buffer.concat(parts);
  return { k, raw: buf.length, gz: gzipSync(buf, { level: 9 }).length };
});
rows.sort((a, b) => b.gz - a.gz);
let raw = 0,
  gz = 0;
for (const r of rows) {
  raw += r.raw;
  gz += r.gz;
  console.log(`${r.k.padEnd(36)} ${String(r.raw).padStart(8)} ${String(r.gz).padStart(8)}`);
}
console.log(`${'sum'.padEnd(36)} ${String(raw).padStart(8)} ${String(gz).padStart(8)}`);
