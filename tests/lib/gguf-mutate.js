// The fuzz corpus (valid GGUF files built byte by byte) and its mutations, aimed at the count,
// length and type fields the oracle finds. Shared by tests/gguf-fuzz.test.js and replay scripts.
import { Bytes, sampleFile } from './gguf-bytes.js';
import { oracleDecode } from './gguf-oracle.js';

/** Valid files: both byte orders, v1/v2/v3, every value type, nested arrays, several tensor types. */
export function corpus(OPT) {
  const files = [sampleFile().bytes, sampleFile({ le: false }).bytes, sampleFile({ version: 2 }).bytes];
  files.push(sampleFile({ version: 1 }).bytes, sampleFile({ version: 1, le: false }).bytes);
  for (const le of [true, false]) {
    // general.alignment 64, strings with multi-byte UTF-8, nested arrays 3 deep, 4 tensors of
    // different ggml types (one with no elements, one with no dims).
    const w = new Bytes({ le }).header(3, 4, 4);
    w.str('general.alignment').u32(4).u32(64);
    w.str('tok').u32(9).u32(8).len(3).str('▁ä').str('').str('日本');
    w.str('deep').u32(9).u32(9).len(2).u32(9).len(1).u32(2).len(2).u16(7).u16(65535).u32(8).len(0);
    w.str('merges').u32(9).u32(12).len(1).f64(-0.5);
    w.tensor('q4', [64], 2, 0); // 2 blocks of 18 bytes, padded to 64
    w.tensor('empty', [0, 3], 0, 64);
    w.tensor('f16', [5, 2], 1, 64); // 20 bytes, padded to 64
    w.tensor('scalar', [], 0, 128);
    w.padTo(64);
    for (let i = 0; i < 132; i++) w.u8((i * 37) & 255);
    files.push(w.bytes());
  }
  // Tensors whose extent the offsets settle: Q2_0 in the pre-release layout (2048 weights in 544
  // bytes, not 576), a type id blockquant does not know, and a mainline Q2_0 last.
  const q2 = new Bytes().header(3, 4, 0);
  q2.tensor('q2old', [512, 4], 42, 0);
  q2.tensor('unk', [64], 50, 544);
  q2.tensor('f32', [4], 0, 608);
  q2.tensor('q2', [64], 42, 640);
  q2.padTo(32);
  for (let i = 0; i < 658; i++) q2.u8((i * 11) & 255);
  files.push(q2.bytes());
  const none = new Bytes().header(3, 0, 1);
  none.str('only').u32(8).str('x');
  files.push(none.bytes());
  for (const f of files) if (oracleDecode(f, OPT).error) throw new Error('the corpus must be valid');
  return files;
}

/** The oracle's field map of each corpus file. @type {WeakMap<Uint8Array, any>} */
const maps = new WeakMap();

/** One mutant of `src` (a byte array), aimed with the oracle's map of fields. */
export function mutate(r, files, src, OPT) {
  const pick = (n) => Math.floor(r.next() * n);
  let d = maps.get(src);
  if (!d) maps.set(src, (d = oracleDecode(src, OPT)));
  let m = src.slice();
  const rounds = 1 + (r.next() < 0.25 ? pick(3) : 0);
  const kinds = [];
  for (let k = 0; k < rounds; k++) {
    const kind = pick(9);
    kinds.push(kind);
    const at = pick(m.length + 1);
    const dv = new DataView(m.buffer, m.byteOffset, m.byteLength);
    if (kind === 0 && m.length) m[at % m.length] = pick(256);
    else if (kind === 1 && m.length) m[at % m.length] ^= 1 << pick(8);
    else if (kind === 2) m = m.slice(0, at);
    else if (kind === 3) {
      const ins = Uint8Array.from({ length: 1 + pick(16) }, () => (r.next() < 0.5 ? 0 : pick(256)));
      m = concat(m.subarray(0, at), ins, m.subarray(at));
    } else if (kind === 4) m = concat(m.subarray(0, at), m.subarray(Math.min(m.length, at + 1 + pick(24))));
    else if ((kind === 5 || kind === 6) && d.marks.length) {
      // A count, length, n_dims, offset or type field set to an extreme or a neighbouring value.
      const want = kind === 6 ? d.marks.filter((x) => x.kind !== 'count') : d.marks.filter((x) => x.kind === 'count');
      const f = (want.length ? want : d.marks)[pick((want.length ? want : d.marks).length)];
      if (f.at + f.size > m.length) continue;
      const le = d.littleEndian ?? true;
      const old = f.size === 4 ? BigInt(dv.getUint32(f.at, le)) : dv.getBigUint64(f.at, le);
      const extremes = [0n, 1n, 2n, 13n, 31n, 64n, 2n ** 30n, 2n ** 30n + 1n, 2n ** 32n - 1n, 2n ** 53n, 2n ** 63n];
      const choices = [...extremes, 2n ** 64n - 1n, old + 1n, old - 1n, old * 2n, BigInt(m.length)];
      const v = BigInt.asUintN(f.size * 8, choices[pick(choices.length)]);
      if (f.size === 4) dv.setUint32(f.at, Number(v), le);
      else dv.setBigUint64(f.at, v, le);
    } else if (kind === 7 && (d.kvSpans.length || d.tensorSpans.length)) {
      // A key/value pair or a tensor info duplicated in place (its count bumped or not).
      const spans = r.next() < 0.5 && d.kvSpans.length ? d.kvSpans : d.tensorSpans.length ? d.tensorSpans : d.kvSpans;
      const [a, b] = spans[pick(spans.length)];
      if (b > m.length) continue;
      m = concat(m.subarray(0, b), m.subarray(a, b), m.subarray(b));
      if (r.next() < 0.7) {
        const countAt = spans === d.kvSpans ? (d.version === 1 ? 12 : 16) : 8;
        const le = d.littleEndian ?? true;
        const w = new DataView(m.buffer, m.byteOffset, m.byteLength);
        if (d.version === 1) w.setUint32(countAt, w.getUint32(countAt, le) + 1, le);
        else w.setBigUint64(countAt, w.getBigUint64(countAt, le) + 1n, le);
      }
    } else if (kind === 8) {
      // A chunk of another corpus file spliced in.
      const o = files[pick(files.length)];
      const s = pick(o.length);
      m = concat(m.subarray(0, at), o.subarray(s, s + 1 + pick(40)), m.subarray(Math.min(m.length, at + pick(40))));
    }
  }
  return { m, kinds };
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
