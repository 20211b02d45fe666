// Trims the zero tail of a side module's data segment, in place: wasm-ld -shared writes a
// position-independent module's bss as zero bytes at the end of its one data segment (it cannot
// assume the memory it is placed in is zero), which for the dot module's kernel scratch is most of
// the file. js/side.js zero-fills the module's whole block (dylink.0's mem_size, unchanged here)
// before the segment is written, so the tail is not needed.
//   node tools/trim-data.mjs MODULE.wasm
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
const b = readFileSync(file);
/** @param {number} p @returns {[number, number]} value, position after it */
const leb = (p) => {
  let v = 0;
  for (let shift = 0; ; shift += 7) {
    const c = b[p++];
    v += (c & 0x7f) * 2 ** shift;
    if (!(c & 0x80)) return [v, p];
  }
};
/** @param {number} v */
const encode = (v) => {
  const out = [];
  do {
    let c = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) c |= 0x80;
    out.push(c);
  } while (v);
  return Buffer.from(out);
};
let p = 8;
let data = -1;
/** @type {[number, number, number]} */
let sec = [0, 0, 0];
while (p < b.length) {
  const id = b[p];
  const [size, body] = leb(p + 1);
  if (id === 11) {
    data = p;
    sec = [p, body, body + size];
  }
  p = body + size;
}
if (data < 0) process.exit(0); // no data: nothing to trim
const [start, body, end] = sec;
if (end !== b.length) throw new Error(`${file}: the data section is not the module's last section`);
const [count, q] = leb(body);
if (count !== 1) throw new Error(`${file}: ${count} data segments; expected one`);
const flags = b[q];
if (flags !== 0) throw new Error(`${file}: the data segment is not an active segment of memory 0 (flags ${flags})`);
// the offset expression: global.get N or i32.const N, then end
let e = q + 1;
if (b[e] !== 0x23 && b[e] !== 0x41) throw new Error(`${file}: unexpected offset expression`);
e = leb(e + 1)[1];
if (b[e] !== 0x0b) throw new Error(`${file}: unexpected offset expression`);
const [len, bytes] = leb(e + 1);
let keep = len;
while (keep > 0 && b[bytes + keep - 1] === 0) keep--;
if (keep === len) process.exit(0);
const segment = Buffer.concat([b.subarray(q, e + 1), encode(keep), b.subarray(bytes, bytes + keep)]);
const payload = Buffer.concat([encode(1), segment]);
writeFileSync(file, Buffer.concat([b.subarray(0, start), Buffer.from([11]), encode(payload.length), payload]));
