// IQ4_NL, IQ4_XS, MXFP4, TQ1_0, TQ2_0 and the IQ grid types through the wasm build: every kernel
// variant (public, __ref, __simd128 if any) against ggml's golden vectors (tests/fixtures/golden-iq4,
// golden-iqgrid), dots in pieces, matvec rows, the grid types' quantize refusal, typeInfo's
// operations, and dequantizeTensor/dequantizeRows for every type id in both byte orders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Raw } from './lib/raw.js';
import { BACKEND, testCodec, firstDiff, sameFloat } from './lib/helpers.js';
import { typeInfo, knownTypes, blockFields, GGMLType } from '../js/types.js';

const bq = await testCodec();
const X = /** @type {Record<string, any>} */ (bq.exports);
const raw = new Raw(bq.exports);
const FOUR = ['iq4_nl', 'iq4_xs', 'mxfp4', 'tq1_0', 'tq2_0'];
const NEW = ['nvfp4', 'q1_0', 'q2_0']; // tests/newtypes.test.js
const GRID = ['iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s', 'iq1_s', 'iq1_m'];
const SETS = { 'golden-iq4': FOUR, 'golden-iqgrid': GRID };

const dir = (set) => new URL(`./fixtures/${set}/`, import.meta.url);
const bytes = (set, f) => new Uint8Array(readFileSync(new URL(f, dir(set))));
const floats = (set, f) => {
  const b = bytes(set, f);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
/** Every variant of a kernel the build exports: public, __ref, __simd128. */
const variants = (base) => ['', '__ref', '__simd128'].filter((s) => typeof X[base + s] === 'function');

/** What a quantize kernel must write for a golden q file: the file (quantize_row_<t>_ref, which
 * ggml_quantize_chunk runs without weights), except for IQ4_NL, whose ggml_quantize_chunk runs the
 * scale search of quantize_iq4_nl: golden-iq4/chunk/ holds what that writes (chunk/gen.mjs). */
const quantized = (set, q) =>
  q.type === 'iq4_nl' ? bytes(set, q.quant_file.replace(/^q\//, 'chunk/')) : bytes(set, q.quant_file);

for (const [set, types] of Object.entries(SETS)) {
  const m = JSON.parse(readFileSync(new URL('manifest.json', dir(set)), 'utf8'));
  const input = Object.fromEntries(m.inputs.map((i) => [i.name, i.file]));

  test(`${set}: quantize and dequantize, every variant, on the ${BACKEND} build`, () => {
    let checked = 0;
    for (const q of m.quantized.filter((q) => types.includes(q.type))) {
      const want = bytes(set, q.quant_file);
      const wantDq = floats(set, q.dequant_file);
      for (const v of variants(`bq_${q.type}_dequantize`)) {
        raw.reset();
        const qp = raw.put(want),
          yp = raw.alloc(q.n_elements * 4);
        assert.equal(X[`bq_${q.type}_dequantize${v}`](qp, yp, q.n_elements), 0);
        const d = firstDiff(raw.floats(yp, q.n_elements), wantDq);
        assert.equal(d, -1, `${q.dequant_file} ${v || 'public'}: value ${d}`);
        checked++;
      }
      if (GRID.includes(q.type)) continue;
      const x = floats(set, input[q.input]);
      const wantQ = quantized(set, q);
      for (const v of variants(`bq_${q.type}_quantize`)) {
        raw.reset();
        const xp = raw.put(x),
          yp = raw.alloc(wantQ.length);
        assert.equal(X[`bq_${q.type}_quantize${v}`](xp, yp, q.n_elements), 0);
        const d = firstDiff(raw.bytes(yp, wantQ.length), wantQ);
        assert.equal(d, -1, `${q.quant_file} ${v || 'public'}: byte ${d}`);
        checked++;
      }
    }
    assert.ok(checked >= types.length * 2, `only ${checked} checks`);
    for (const t of GRID) assert.equal(X[`bq_${t}_quantize`], undefined, `${t}: no quantizer`);
  });

  test(`${set}: dots with ggml's results, in pieces, and matvec rows, on the ${BACKEND} build`, () => {
    const lines = readFileSync(new URL('dots.tsv', dir(set)), 'utf8')
      .split('\n')
      .filter(Boolean);
    assert.ok(lines.length > 0);
    for (const line of lines) {
      const [pair, xf, yf, ns, hex] = line.split('\t');
      const n = Number(ns);
      const t = types.find((t) => pair.startsWith(`${t}_`));
      assert.ok(t, pair);
      const t2 = pair.slice(t.length + 1);
      const info = typeInfo(t);
      const want = new Float32Array(new Uint32Array([Number(hex)]).buffer)[0];
      const a = bytes(set, xf).subarray(0, (n / info.blockSize) * info.typeSize);
      const b2 = typeInfo(t2);
      const b = bytes(set, yf).subarray(0, (n / b2.blockSize) * b2.typeSize);
      const terms = m.dots.find((d) => d.x_file === xf && d.y_file === yf && d.n === n);
      for (const v of variants(`bq_${t}_dot_${t2}`)) {
        const run = (cuts) => {
          raw.reset();
          const ap = raw.put(a),
            bp = raw.put(b),
            acc = raw.zeroAcc();
          let prev = 0;
          for (const c of [...cuts, n]) {
            const ea = info.typeSize / info.blockSize,
              eb = b2.typeSize / b2.blockSize;
            assert.equal(X[`bq_${t}_dot_${t2}${v}`](ap + prev * ea, bp + prev * eb, c - prev, acc), 0);
            prev = c;
          }
          return X[`bq_${t}_dot_${t2}_sum${v}`](acc);
        };
        const got = run([]);
        if (
          v === '__simd128' ||
          (v === '' && BACKEND === 'simd128' && variants(`bq_${t}_dot_${t2}`).includes('__simd128'))
        )
          assert.ok(
            Math.abs(got - want) <= 1e-5 * terms.sum_abs_terms_f64_dequantized,
            `${line} ${v}: ${got} vs ${want}`,
          );
        else assert.ok(sameFloat(got, want), `${line} ${v || 'public'}: ${got} vs ggml ${want}`);
        const step = info.dotStep;
        if (n > 2 * step) {
          const cut = run([step, Math.floor(n / (2 * step)) * step]);
          assert.ok(sameFloat(cut, got), `${line} ${v}: cut ${cut} vs whole ${got}`);
        }
      }
      // Matvec: row r equals the dot of the same ISA (rows are the x file's consecutive pieces).
      const cols = info.blockSize,
        rows = Math.min(3, n / cols);
      for (const v of variants(`bq_${t}_matvec_${t2}`)) {
        raw.reset();
        const rb = (cols / info.blockSize) * info.typeSize;
        const wp = raw.put(a),
          xp = raw.put(b),
          yp = raw.alloc(rows * 4);
        assert.equal(X[`bq_${t}_matvec_${t2}${v}`](wp, rows, cols, xp, yp), 0);
        const y = raw.floats(yp, rows);
        for (let r = 0; r < rows; r++) {
          const acc = raw.zeroAcc();
          X[`bq_${t}_dot_${t2}${v}`](wp + r * rb, xp, cols, acc);
          const d = X[`bq_${t}_dot_${t2}_sum${v}`](acc);
          assert.ok(sameFloat(y[r], d), `${t}.${t2} matvec${v} row ${r}: ${y[r]} vs dot ${d}`);
        }
      }
    }
  });

  test(`${set}: f32 dots equal the dequantized values' dot (in order for the reference, within 1e-5 of sum |terms| of the exact sum for SIMD), matvec rows equal dots, on the ${BACKEND} build`, () => {
    for (const q of m.quantized.filter((q) => types.includes(q.type))) {
      const w = bytes(set, q.quant_file);
      const dq = floats(set, q.dequant_file);
      const y = floats(set, input[q.input]);
      let want = 0,
        exact = 0,
        sumAbs = 0;
      for (let i = 0; i < q.n_elements; i++) {
        want = Math.fround(want + Math.fround(dq[i] * y[i]));
        exact += dq[i] * y[i];
        sumAbs += Math.abs(dq[i] * y[i]);
      }
      // The reference (and the public kernel where the build has no SIMD one) sums in order, to
      // the bit; a SIMD kernel sums in four lanes: within 1e-5 of sum |terms| of the exact sum (the
      // in-order float32 sum is itself that far off on the outlier input).
      const simd = X[`bq_${q.type}_dot_f32__simd128`] !== undefined;
      for (const v of variants(`bq_${q.type}_dot_f32`)) {
        raw.reset();
        const ap = raw.put(w),
          bp = raw.put(y),
          acc = raw.zeroAcc();
        assert.equal(X[`bq_${q.type}_dot_f32${v}`](ap, bp, q.n_elements, acc), 0);
        const got = X[`bq_${q.type}_dot_f32_sum${v}`](acc);
        const inOrder = v === '__ref' || (v === '' && !simd);
        if (inOrder) assert.ok(sameFloat(got, want), `${q.quant_file} dot_f32${v}: ${got} vs ${want}`);
        else
          assert.ok(
            Math.abs(got - exact) <= 1e-5 * sumAbs + 1e-30,
            `${q.quant_file} dot_f32${v}: ${got} vs ${exact} in double (sum |terms| ${sumAbs})`,
          );
      }
      const cols = typeInfo(q.type).blockSize,
        rows = q.n_elements / cols;
      const got = bq.matvec(q.type, w, rows, y.subarray(0, cols), { exact: true });
      for (let r = 0; r < rows; r += 7)
        assert.ok(
          sameFloat(
            got[r],
            bq.dot(q.type, w.subarray(r * q.type_size, (r + 1) * q.type_size), 'f32', y.subarray(0, cols)),
          ),
        );
    }
  });
}

test('the grid types ggml quantizes only with an importance matrix refuse without one, saying so', () => {
  for (const t of GRID) {
    if (!typeInfo(t).requiresImatrix) continue;
    assert.throws(
      () => bq.quantize(t, new Float32Array(256)),
      (e) => e instanceof TypeError && e.message.includes(t) && e.message.includes('importance matrix'),
    );
  }
  assert.deepEqual(
    GRID.filter((t) => typeInfo(t).requiresImatrix),
    ['iq2_xxs', 'iq2_xs', 'iq1_s'],
  );
});

test('typeInfo says which operations every type has', () => {
  const want = (t) => {
    const { name } = typeInfo(t);
    if (['f32', 'f16', 'bf16', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q8_1'].includes(name)) return null;
    if (/^q\d_K$/.test(name)) return null;
    if (FOUR.includes(name) || NEW.includes(name))
      return { quantize: true, dequantize: true, dot: true, dotF32: true, matvec: true };
    if (GRID.includes(name)) return { quantize: true, dequantize: true, dot: true, dotF32: true, matvec: true };
    return { quantize: false, dequantize: false, dot: false, dotF32: false, matvec: false }; // I8..F64
  };
  for (const id of knownTypes()) {
    const w = want(id);
    if (!w) continue;
    const { quantize, dequantize, dot, dotF32, matvec } = typeInfo(id);
    assert.deepEqual({ quantize, dequantize, dot, dotF32, matvec }, w, typeInfo(id).name);
  }
});

/** A GGUFLike file of one tensor of 2 rows (bytes as stored, in the file's order). */
const fileOf = (type, cols, data, littleEndian) => ({
  littleEndian,
  tensors: [{ name: 't', type, dims: [cols, 2], byteLength: data.length, offset: 0 }],
  tensorBytes: () => data,
});

/** The big-endian form of little-endian blocks: every field scalar reversed (byte swap is its own inverse). */
function toBig(type, le) {
  const fields = blockFields(type);
  assert.ok(fields, `${typeInfo(type).name} has a layout`);
  const out = le.slice();
  const { typeSize } = typeInfo(type);
  for (let o = 0; o < out.length; o += typeSize)
    for (const f of fields)
      for (let s = o + f.offset; s < o + f.offset + f.size; s += f.unit) out.subarray(s, s + f.unit).reverse();
  return out;
}

test('dequantizeTensor and dequantizeRows decode every type id in both byte orders', async () => {
  const rnd = (k) => {
    const b = new Uint8Array(k);
    let s = 12345;
    for (let i = 0; i < k; i++) b[i] = (s = (s * 1103515245 + 12345) >>> 0) >>> 24;
    return b;
  };
  const INTS = { i8: Int8Array, i16: Int16Array, i32: Int32Array, i64: BigInt64Array, f64: Float64Array };
  for (const id of knownTypes()) {
    const info = typeInfo(id);
    const cols = Math.max(info.blockSize, 32);
    const le = rnd((2 * cols * info.typeSize) / info.blockSize);
    // Finite half scales, so the decoded values compare by bits (NaN payloads aside).
    const be = toBig(id, le);
    const Int = /** @type {any} */ (INTS)[info.name];
    const want = Int ? new Int(le.slice().buffer) : bq.dequantize(id, le);
    for (const [bytesIn, little] of [
      [le, true],
      [be, false],
    ]) {
      const f = fileOf(id, cols, bytesIn, little);
      const all = await bq.dequantizeTensor(f, 't');
      const row = await bq.dequantizeRows(f, 't', 1, 1);
      assert.equal(all.constructor, want.constructor, `${info.name}: array type`);
      assert.deepEqual(all, want, `${info.name} ${little ? 'LE' : 'BE'} tensor`);
      assert.deepEqual(row, want.subarray(cols), `${info.name} ${little ? 'LE' : 'BE'} row 1`);
    }
  }
  assert.equal(GGMLType.I64, 27);
});
