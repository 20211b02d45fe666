// NVFP4 (40), Q1_0 (41) and Q2_0 (42) against llama.cpp's own ggml (tests/lib/ggml.js): every
// kernel variant of these types (public, __ref, __simd128), found from the build's exports, on the
// build under test and, with the simd128 build, on the threads module too (compiled by clang-19
// where the others are emcc's). Quantize and dequantize byte for byte and bit for bit on hostile
// rows (NaN payloads, Inf, subnormal and huge scales, every UE4M3 scale and its rounding edges,
// Q2_0's ties and overflowing 1/d), every fp16 and UE4M3 scale pattern; dots with Q8_0 equal to
// ggml's generic vec_dot to the bit, in pieces too; f32 dots; matvec rows; stats. Seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ggml from './lib/ggml.js';
import { hostileRows, ROW_KINDS } from './lib/rows.js';
import { Raw, kernelsOf } from './lib/raw.js';
import { BACKEND, SEED, testCodec, edgeInputs, firstDiff, rng, sameFloat, testWasmFile } from './lib/helpers.js';
import { fromHalf } from './lib/oracle.js';
import { typeId, typeInfo as info0 } from '../js/types.js';

const TYPES = ['nvfp4', 'q1_0', 'q2_0'];
/** The type table's row of a type, with its ggml id. */
const typeInfo = (t) => ({ id: typeId(t), ...info0(t) });
const Q8 = typeInfo('q8_0');
console.log(`# newtypes test, seed ${SEED}`);

/** The builds to test: the one under test and, with the simd128 build, the threads module. */
const builds = [{ name: BACKEND, exports: /** @type {Record<string, any>} */ ((await testCodec()).exports) }];
if (BACKEND === 'simd128') {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
  const inst = await WebAssembly.instantiate(new WebAssembly.Module(readFileSync(testWasmFile('threads'))), {
    env: { memory },
  });
  builds.push({ name: 'threads (clang-19)', exports: /** @type {Record<string, any>} */ (inst.exports) });
}

const f32 = (bits) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];
const bitsOf = (x) => new Uint32Array(new Float32Array([x]).buffer)[0];
/** The next float32 after x toward +Inf (dir 1) or -Inf (dir -1), for finite x > 0. */
const nextUp = (x, dir) => f32(bitsOf(x) + dir);
const bytesOf = (t, n) => (n / typeInfo(t).blockSize) * typeInfo(t).typeSize;
const randomBytes = (k, r) => Uint8Array.from({ length: k }, () => (r.next() * 256) | 0);

/** The UE4M3 value ggml decodes a scale byte to, unhalved (ggml_ue4m3_to_fp32 without its * 0.5). */
function ue4m3(b) {
  if (b === 0 || b === 0x7f) return 0;
  const e = (b >> 3) & 15,
    m = b & 7;
  return e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7);
}

/**
 * Rows that reach each type's own edges, beyond ROW_KINDS. Each row is cols values.
 * NVFP4: sub-blocks whose max / 6 sits on, next to and between every UE4M3 value (the subnormal
 * branch's x * 512 + 0.5, the round-up carry into the exponent, the 448 clamp, overflow), with the
 * other values on and next to the E2M1 midpoints. Q2_0: x / d on the round-half-away ties and
 * next to them, and max |x| where 1 / d overflows. Q1_0: sums whose float rounding depends on the
 * order, and NaNs of both signs and many payloads.
 */
function edgeRows(t, cols, r) {
  const rows = [];
  const sign = () => (r.next() < 0.5 ? -1 : 1);
  if (t === 'nvfp4') {
    const amaxes = [];
    for (let b = 1; b < 0x7f; b++) {
      const v = ue4m3(b),
        w = ue4m3(b + 1) || 480;
      const mid = (v + w) / 2;
      for (const a of [v, mid])
        for (const dir of [-1, 0, 1]) amaxes.push(dir ? nextUp(Math.fround(6 * a), dir) : 6 * a);
    }
    amaxes.push(6 * 448, 6 * 480, 3e38, Infinity, 2 ** -140, 6 * 2 ** -11, nextUp(6 * 2 ** -11, 1), 1e-45);
    const mids = [0.5, 1.5, 2.5, 3.5, 5, 7, 10].map((m) => m / 12);
    let row = new Float32Array(cols),
      o = 0;
    for (const a of amaxes) {
      const s = row.subarray(o, o + 16);
      s[0] = sign() * a;
      for (let j = 1; j < 16; j++) {
        const m = mids[(j + o) % mids.length];
        const v = Math.fround(a * m);
        s[j] = sign() * (j % 3 === 0 ? v : Number.isFinite(v) && v > 0 ? nextUp(v, j % 3 === 1 ? 1 : -1) : v);
      }
      o += 16;
      if (o === cols) (rows.push(row), (row = new Float32Array(cols)), (o = 0));
    }
    if (o) rows.push(row);
  } else if (t === 'q2_0') {
    for (const a of [1, 3, 0.1, 65504, 65520, 1e6, 2 ** -24, 2 ** -126, 2 ** -127, 2 ** -128, 2 ** -129, 1e-45, 3e38]) {
      const row = new Float32Array(cols);
      for (let j = 0; j < cols; j++) {
        const k = j % 8;
        const v = k === 0 ? a : k < 4 ? Math.fround(a * 0.5) : Math.fround(a * [0.5, 0.25, 0.75, 1][k - 4]);
        row[j] = sign() * (k === 2 && v > 0 ? nextUp(v, 1) : k === 3 && v > 0 ? nextUp(v, -1) : v);
      }
      rows.push(row);
    }
  } else {
    // magnitudes over 2^-40..2^40, so each rounding of the running sum depends on the order
    rows.push(new Float32Array(cols).map(() => sign() * 2 ** (r.next() * 80 - 40)));
    rows.push(new Float32Array(cols).map((_, j) => (j % 128 === 127 ? 3e38 : sign() * 1e30)));
    rows.push(new Float32Array(cols).map((_, j) => (j % 11 === 3 ? f32(0x7f800001 + j * 4099) : sign() * r.next())));
    rows.push(new Float32Array(cols).map((_, j) => (j % 13 === 5 ? f32(0xff812345 + j) : -0)));
  }
  // random bit patterns: every class at once, NaN payloads of both signs included
  rows.push(new Float32Array(cols).map(() => f32((r.next() * 2 ** 32) >>> 0)));
  const x = new Float32Array(rows.length * cols);
  rows.forEach((row, i) => x.set(row, i * cols));
  return { x, rows: rows.length };
}

for (const { name: build, exports: X } of builds) {
  const raw = new Raw(/** @type {any} */ (X));
  const kernels = kernelsOf(/** @type {any} */ (X)).filter((k) => TYPES.includes(k.type));
  const variants = (t, op, t2 = null) => kernels.filter((k) => k.type === t && k.op === op && k.type2 === t2);
  /** The dot state's result, read by the pair's sum of the variant's ISA. */
  const sumOf = (k, acc) => X[`bq_${k.type}_dot_${k.type2}_sum${k.isa === 'public' ? '' : `__${k.isa}`}`](acc);

  test(`${build}: the three types have every kernel kind, a SIMD128 kernel for each on the SIMD builds`, () => {
    for (const t of TYPES) {
      const ops = [
        ['quantize'],
        ['dequantize'],
        ['dot', 'q8_0'],
        ['dot', 'f32'],
        ['matvec', 'q8_0'],
        ['matvec', 'f32'],
        ['stats'],
      ];
      for (const [op, t2] of ops) {
        const isas = variants(t, op, t2 ?? null).map((k) => k.isa);
        assert.ok(isas.includes('public') && isas.includes('ref'), `${t} ${op} ${t2 ?? ''}: public and __ref`);
        assert.equal(isas.includes('simd128'), build !== 'scalar', `${t} ${op} ${t2 ?? ''}: __simd128 on SIMD builds`);
      }
    }
  });

  for (const t of TYPES) {
    const info = typeInfo(t);
    const B = info.blockSize;

    test(`${build}: ${t} quantize equals ggml_quantize_chunk on hostile rows, every variant, seed ${SEED}`, () => {
      const r = rng(SEED ^ info.id);
      const cases = [];
      for (const [cols, off] of [
        [256, 0],
        [640, 7],
      ]) {
        const { x, kinds } = hostileRows(ROW_KINDS.length, cols, SEED + cols, off);
        cases.push({ x, cols, what: (row) => `${cols}-column row ${row} (${kinds[row]})` });
      }
      const e = edgeRows(t, 512, r);
      cases.push({ x: e.x, cols: 512, what: (row) => `${t} edge row ${row}` });
      const ex = edgeInputs(4 * 15, SEED ^ 0x5eed);
      cases.push({ x: ex, cols: ex.length, what: () => 'edgeInputs' });
      const want = ggml.quantize(cases.map((c) => ({ type: info.id, x: c.x, cols: c.cols })));
      for (const v of variants(t, 'quantize')) {
        cases.forEach((c, i) => {
          raw.reset();
          const xp = raw.put(c.x),
            yp = raw.alloc(want[i].length);
          assert.equal(X[v.name](xp, yp, c.x.length), 0);
          const d = firstDiff(raw.bytes(yp, want[i].length), want[i]);
          const rowBytes = bytesOf(t, c.cols);
          assert.equal(
            d,
            -1,
            `${v.name}: ${d >= 0 ? c.what(Math.floor(d / rowBytes)) : ''} byte ${d % rowBytes} differs`,
          );
        });
      }
    });

    test(`${build}: ${t} dequantize equals ggml's to_float on any bytes and every scale pattern, seed ${SEED}`, () => {
      const r = rng(SEED ^ (info.id << 8));
      const cases = [1, 2, 3, 7, 8, 9, 63, 64, 65].map((nb) => ({ q: randomBytes(nb * info.typeSize, r), n: nb * B }));
      // every scale pattern: each fp16 d, or each UE4M3 byte in each of the four sub-block slots
      const nb = t === 'nvfp4' ? 256 : 65536;
      const q = randomBytes(nb * info.typeSize, r);
      for (let b = 0; b < nb; b++) {
        const o = b * info.typeSize;
        if (t === 'nvfp4') for (let s = 0; s < 4; s++) q[o + s] = (b + 67 * s) & 255;
        else ((q[o] = b & 255), (q[o + 1] = b >> 8));
      }
      cases.push({ q, n: nb * B });
      const want = ggml.dequantize(cases.map((c) => ({ type: info.id, q: c.q, n: c.n })));
      for (const v of variants(t, 'dequantize')) {
        cases.forEach((c, i) => {
          raw.reset();
          const qp = raw.put(c.q),
            yp = raw.alloc(c.n * 4);
          assert.equal(X[v.name](qp, yp, c.n), 0);
          const d = firstDiff(raw.floats(yp, c.n), want[i]);
          assert.equal(d, -1, `${v.name} n=${c.n}: value ${d} (block ${Math.floor(d / B)}) differs from ggml`);
        });
      }
    });

    test(`${build}: ${t} . q8_0 dots equal ggml's vec_dot to the bit, whole and in pieces, seed ${SEED}`, () => {
      const r = rng(SEED ^ (info.id << 16));
      const counts = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64, 65];
      // realistic blocks from ggml's quantizers, and any bytes at all (NaN and Inf scales)
      const real = counts.map((nb) => {
        const n = nb * B;
        const w = new Float32Array(n).map(() => r.normal() * (r.next() < 0.1 ? 20 : 1));
        const a = new Float32Array(n).map(() => r.normal());
        return { n, w, a };
      });
      const q = ggml.quantize(
        real.flatMap((c) => [
          { type: info.id, x: c.w, cols: c.n },
          { type: Q8.id, x: c.a, cols: c.n },
        ]),
      );
      const cases = real.map((c, i) => ({ n: c.n, x: q[2 * i], y: q[2 * i + 1], what: 'quantized' }));
      for (const nb of [1, 2, 5, 64]) {
        const n = nb * B;
        cases.push({
          n,
          x: randomBytes(bytesOf(t, n), r),
          y: randomBytes(bytesOf('q8_0', n), r),
          what: 'random bytes',
        });
      }
      const want = ggml.dot(cases.map((c) => ({ type: info.id, x: c.x, y: c.y, n: c.n }))).map(f32);
      const step = Math.max(info.dotStep, Q8.dotStep);
      for (const v of variants(t, 'dot', 'q8_0')) {
        cases.forEach((c, i) => {
          const run = (cuts) => {
            raw.reset();
            const ap = raw.put(c.x),
              bp = raw.put(c.y),
              acc = raw.zeroAcc();
            let prev = 0;
            for (const cut of [...cuts, c.n]) {
              assert.equal(X[v.name](ap + bytesOf(t, prev), bp + bytesOf('q8_0', prev), cut - prev, acc), 0);
              prev = cut;
            }
            return sumOf(v, acc);
          };
          const got = run([]);
          assert.ok(sameFloat(got, want[i]), `${v.name} n=${c.n} (${c.what}): ${got} vs ggml ${want[i]}`);
          if (c.n > 2 * step) {
            const cut = run([step, Math.floor(c.n / (2 * step)) * step]);
            assert.ok(sameFloat(cut, got), `${v.name} n=${c.n}: in pieces ${cut} vs whole ${got}`);
          }
        });
      }
    });

    test(`${build}: ${t} . f32 dots equal the dot of ggml's dequantized values (in order for the reference, within 1e-5 of sum |terms| for SIMD), seed ${SEED}`, () => {
      const r = rng(SEED ^ (info.id << 20));
      const cases = [1, 2, 3, 5, 8, 9, 65].map((nb) => {
        const n = nb * B;
        return {
          n,
          w: new Float32Array(n).map(() => r.normal() * (r.next() < 0.1 ? 20 : 1)),
          y: new Float32Array(n).map(() => r.normal()),
        };
      });
      const q = ggml.quantize(cases.map((c) => ({ type: info.id, x: c.w, cols: c.n })));
      const dq = ggml.dequantize(cases.map((c, i) => ({ type: info.id, q: q[i], n: c.n })));
      for (const v of variants(t, 'dot', 'f32')) {
        cases.forEach((c, i) => {
          let inOrder = 0,
            exact = 0,
            sumAbs = 0;
          for (let j = 0; j < c.n; j++) {
            inOrder = Math.fround(inOrder + Math.fround(dq[i][j] * c.y[j]));
            exact += dq[i][j] * c.y[j];
            sumAbs += Math.abs(dq[i][j] * c.y[j]);
          }
          raw.reset();
          const ap = raw.put(q[i]),
            bp = raw.put(c.y),
            acc = raw.zeroAcc();
          assert.equal(X[v.name](ap, bp, c.n, acc), 0);
          const got = sumOf(v, acc);
          const simd = v.isa === 'simd128' || (v.isa === 'public' && build !== 'scalar');
          if (simd)
            assert.ok(
              Math.abs(got - exact) <= 1e-5 * sumAbs,
              `${v.name} n=${c.n}: ${got} vs ${exact} (sum |terms| ${sumAbs})`,
            );
          else assert.ok(sameFloat(got, inOrder), `${v.name} n=${c.n}: ${got} vs ${inOrder} in order`);
        });
      }
    });

    test(`${build}: ${t} matvec rows equal the dots of the same ISA (and ggml's vec_dot for q8_0), seed ${SEED}`, () => {
      const r = rng(SEED ^ (info.id << 24));
      const shapes = [
        [1, B],
        [2, 3 * B],
        [5, 4096],
        [8, 5 * B],
        [3, 9 * B],
        [6, 7 * B],
        [2, 134400], // past the prepared activations' limit (4096 Q8_0 blocks): rows of dots
      ];
      const probs = shapes.map(([rows, cols]) => ({
        rows,
        cols,
        w: new Float32Array(rows * cols).map(() => r.normal()),
        x: new Float32Array(cols).map(() => r.normal()),
      }));
      const q = ggml.quantize(
        probs.flatMap((p) => [
          { type: info.id, x: p.w, cols: p.cols },
          { type: Q8.id, x: p.x, cols: p.cols },
        ]),
      );
      const rb = (p) => bytesOf(t, p.cols);
      const ggmlRows = ggml
        .dot(
          probs.flatMap((p, i) =>
            Array.from({ length: p.rows }, (_, row) => ({
              type: info.id,
              x: q[2 * i].subarray(row * rb(p), (row + 1) * rb(p)),
              y: q[2 * i + 1],
              n: p.cols,
            })),
          ),
        )
        .map(f32);
      for (const t2 of ['q8_0', 'f32']) {
        for (const v of variants(t, 'matvec', t2)) {
          const isa = v.isa === 'public' ? '' : `__${v.isa}`;
          let g = 0;
          probs.forEach((p, i) => {
            raw.reset();
            const wp = raw.put(q[2 * i]),
              xp = raw.put(t2 === 'f32' ? p.x : q[2 * i + 1]),
              yp = raw.alloc(p.rows * 4);
            assert.equal(X[v.name](wp, p.rows, p.cols, xp, yp), 0);
            const y = raw.floats(yp, p.rows);
            for (let row = 0; row < p.rows; row++, g++) {
              const acc = raw.zeroAcc();
              X[`bq_${t}_dot_${t2}${isa}`](wp + row * rb(p), xp, p.cols, acc);
              const d = X[`bq_${t}_dot_${t2}_sum${isa}`](acc);
              assert.ok(sameFloat(y[row], d), `${v.name} ${p.rows}x${p.cols} row ${row}: ${y[row]} vs dot ${d}`);
              if (t2 === 'q8_0')
                assert.ok(sameFloat(y[row], ggmlRows[g]), `${v.name} row ${row}: ${y[row]} vs ggml ${ggmlRows[g]}`);
            }
          });
        }
      }
    });

    test(`${build}: ${t} stats report the error of ggml's round trip per block${info.subBlock ? ' and sub-block' : ''}, and the scale, seed ${SEED}`, () => {
      const S = info.subBlock;
      const inputs = [1, 2, 3, 9].map((nb) => edgeInputs((nb * B) / 32, SEED + nb));
      const { x: hostile } = hostileRows(ROW_KINDS.length, 256, SEED ^ 77);
      inputs.push(hostile);
      const q = ggml.quantize(inputs.map((x) => ({ type: info.id, x, cols: x.length })));
      const dq = ggml.dequantize(inputs.map((x, i) => ({ type: info.id, q: q[i], n: x.length })));
      const err = (x, y, o, m) => {
        let ss = 0,
          mx = 0;
        for (let j = o; j < o + m; j++) {
          const e = x[j] - y[j];
          ss += e * e;
          mx = Math.abs(e) > mx || e !== e ? Math.abs(e) : mx;
        }
        return [Math.sqrt(ss / m), mx];
      };
      for (const v of variants(t, 'stats')) {
        inputs.forEach((x, i) => {
          const n = x.length,
            nb = n / B,
            ns = S ? n / S : 0;
          raw.reset();
          const xp = raw.put(x),
            rp = raw.alloc(nb * 4),
            mp = raw.alloc(nb * 4),
            sp = raw.alloc(nb * 4),
            srp = raw.alloc(ns * 4),
            smp = raw.alloc(ns * 4);
          assert.equal(X[v.name](xp, n, rp, mp, sp, srp, smp), 0);
          const [rm, mx, sc, srm, smx] = [
            raw.floats(rp, nb),
            raw.floats(mp, nb),
            raw.floats(sp, nb),
            raw.floats(srp, ns),
            raw.floats(smp, ns),
          ];
          for (let b = 0; b < nb; b++) {
            const [wr, wm] = err(x, dq[i], b * B, B);
            assert.ok(
              sameFloat(rm[b], wr) && sameFloat(mx[b], wm),
              `${v.name} n=${n} block ${b}: ${rm[b]}, ${mx[b]} vs ${wr}, ${wm}`,
            );
            // Q1_0 and Q2_0: the block's fp16 d; NVFP4 has no one scale (four UE4M3 bytes)
            const h = q[i][b * info.typeSize] | (q[i][b * info.typeSize + 1] << 8);
            const want = t === 'nvfp4' ? NaN : fromHalf(h);
            assert.ok(sameFloat(sc[b], want), `${v.name} block ${b}: scale ${sc[b]} vs ${want}`);
          }
          for (let s = 0; s < ns; s++) {
            const [wr, wm] = err(x, dq[i], s * S, S);
            assert.ok(sameFloat(srm[s], wr) && sameFloat(smx[s], wm), `${v.name} n=${n} sub-block ${s}`);
          }
        });
      }
    });
  }
}

test('the type table says what ggml says of the three types, and NVFP4 reports its 16-element scale sub-blocks', () => {
  const traits = ggml.traits();
  for (const t of TYPES) {
    const info = typeInfo(t);
    assert.deepEqual(traits.get(info.id)?.slice(0, 3), [t, info.blockSize, info.typeSize], t);
    assert.equal(info.requiresImatrix, false, `${t}: ggml quantizes it without weights`);
    assert.equal(typeInfo(info.vecDot).name, 'q8_0', `${t} pairs with q8_0`);
  }
  assert.equal(typeInfo('nvfp4').subBlock, 16);
  assert.equal(typeInfo('q1_0').subBlock, 0);
  assert.equal(typeInfo('q2_0').subBlock, 0);
});
