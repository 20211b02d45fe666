// An independent JavaScript model of ggml's K-quants (Q2_K..Q6_K and the activation format Q8_K):
// quantize_row_<t>_ref, dequantize_row_<t> and ggml_vec_dot_<t>_q8_K_generic, written from
// KQUANTS.md without looking at src/ or js/ (it imports neither). Float32 arithmetic is modelled
// with Math.fround after every operation (no fused multiply-add), integer sums are exact, and the
// fp16 conversions work on the bits. NaN inputs are modelled as x86-64 runs ggml on them: every NaN
// that reaches nearest_int has a zero payload (the inputs and the invalid operations give the
// default NaN), so nearest_int(NaN) = 0.

const f = Math.fround;
const QK = 256;

/** Bytes per super-block of 256 elements. */
export const TYPE_SIZE = { q2_K: 84, q3_K: 110, q4_K: 144, q5_K: 176, q6_K: 210, q8_K: 292 };
export const KTYPES = ['q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K'];

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
/** The binary32 bits of a number (rounded to float32 first). */
export const bitsOf = (x) => ((F32[0] = x), U32[0]);
const fromBits = (u) => ((U32[0] = u), F32[0]);

/**
 * fp32 -> binary16 bits, round to nearest even, overflow to inf, NaN -> 0x7e00 with its sign
 * (ggml's GGML_FP32_TO_FP16 on x86-64 without F16C).
 */
export function toHalf(x) {
  const u = bitsOf(x);
  const sign = (u >>> 16) & 0x8000;
  const e = (u >>> 23) & 0xff;
  const m = u & 0x7fffff;
  if (e === 0xff) return sign | (m ? 0x7e00 : 0x7c00);
  // Shift the 24-bit significand to the half's precision, then round to nearest even.
  const sig = e ? m | 0x800000 : m;
  const ee = e ? e - 127 : -126; // value = sig * 2^(ee - 23)
  if (ee >= 16) return sign | 0x7c00;
  // Units of the half's last place: 2^-24 when subnormal, else 2^(ee - 10).
  const shift = ee < -14 ? 13 + (-14 - ee) : 13; // bits of sig below the half's last place
  if (shift > 24) return sign; // below half of the smallest subnormal
  const keep = Math.floor(sig / 2 ** shift);
  const rest = sig - keep * 2 ** shift;
  const half = 2 ** (shift - 1);
  const q = rest > half || (rest === half && keep & 1) ? keep + 1 : keep;
  // q counts units of 2^(max(ee,-14) - 10); for a normal half that includes the hidden bit.
  if (ee < -14) return sign | q; // q <= 1024 (1024 is the smallest normal, encoded alike)
  const h = ((ee + 15) << 10) + (q - 1024); // carries into the exponent when q reaches 2048
  return h >= 0x7c00 ? sign | 0x7c00 : sign | h;
}

/** binary16 bits -> value (exact). */
export function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31,
    m = h & 1023;
  if (e === 31) return m ? NaN : s * Infinity;
  if (e === 0) return s * m * 2 ** -24;
  return s * (1024 + m) * 2 ** (e - 25);
}

/** ggml's nearest_int: low 23 bits of fp32(v + 1.5 * 2^23), minus 2^22. */
export function nearestInt(v) {
  if (Number.isNaN(v)) return 0;
  return (bitsOf(f(v + 12582912)) & 0x7fffff) - 0x400000;
}

const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);
const i8 = (v) => (v << 24) >> 24;
const rd16 = (b, o) => b[o] | (b[o + 1] << 8);
const rdI16 = (b, o) => (rd16(b, o) << 16) >> 16;
const rdF32 = (b, o) => fromBits((b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0);
const wr16 = (b, o, v) => {
  b[o] = v & 0xff;
  b[o + 1] = (v >> 8) & 0xff;
};

// ---- Unpacking one super-block: codes, scales and fp32 d/dmin -----------------------------------

/** Q4_K/Q5_K's 6-bit scale and min of sub-block j (get_scale_min_k4) from the 12 bytes at s. */
function scaleMinK4(b, s, j) {
  if (j < 4) return [b[s + j] & 63, b[s + j + 4] & 63];
  return [(b[s + j + 4] & 15) | ((b[s + j - 4] >> 6) << 4), (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)];
}

/** Q3_K's unsigned 6-bit value j (0..63; the scale is that minus 32) from the 12 bytes at s. */
function q3Scale(b, s, j) {
  const lo = j < 8 ? b[s + j] & 15 : b[s + j - 8] >> 4;
  return lo | (((b[s + 8 + (j % 4)] >> (2 * Math.floor(j / 4))) & 3) << 4);
}

/**
 * One super-block at offset o, unpacked: d and dmin as float32 values, the signed element codes w
 * (what the dot multiplies), the sub-block scale S of each element and, for the affine types, the
 * sub-block min m of each element.
 * @returns {{ d: number, dmin: number, w: Int32Array, S: Int32Array, m: Int32Array }}
 */
export function unpack(type, b, o) {
  const w = new Int32Array(QK),
    S = new Int32Array(QK),
    m = new Int32Array(QK);
  let d = 0,
    dmin = 0;
  // Element e's 2-bit code in a plane at qs, its nibble at qs, and its bit in a plane at qh.
  const plane2 = (qs, e) => (b[o + qs + 32 * (e >> 7) + (e % 32)] >> (2 * ((e % 128) >> 5))) & 3;
  const nib = (qs, e) => (b[o + qs + 32 * (e >> 6) + (e % 32)] >> (e % 64 < 32 ? 0 : 4)) & 15;
  const hbit = (qh, e) => (b[o + qh + (e % 32)] >> (e >> 5)) & 1;
  for (let e = 0; e < QK; e++) {
    switch (type) {
      case 'q2_K':
        w[e] = plane2(16, e);
        S[e] = b[o + (e >> 4)] & 15;
        m[e] = b[o + (e >> 4)] >> 4;
        break;
      case 'q3_K':
        w[e] = plane2(32, e) - (hbit(0, e) ? 0 : 4);
        S[e] = q3Scale(b, o + 96, e >> 4) - 32;
        break;
      case 'q4_K':
        w[e] = nib(16, e);
        [S[e], m[e]] = scaleMinK4(b, o + 4, e >> 5);
        break;
      case 'q5_K':
        w[e] = nib(48, e) + 16 * hbit(16, e);
        [S[e], m[e]] = scaleMinK4(b, o + 4, e >> 5);
        break;
      case 'q6_K': {
        const h = e >> 7,
          k = (e % 128) >> 5,
          l = e % 32;
        const lo = (b[o + 64 * h + 32 * (k & 1) + l] >> (k < 2 ? 0 : 4)) & 15;
        const hi = (b[o + 128 + 32 * h + l] >> (2 * k)) & 3;
        w[e] = (lo | (hi << 4)) - 32;
        S[e] = i8(b[o + 192 + (e >> 4)]);
        break;
      }
      case 'q8_K':
        w[e] = i8(b[o + 4 + e]);
        S[e] = 1;
        break;
      default:
        throw new TypeError(`oracle-k: unknown type ${type}`);
    }
  }
  if (type === 'q2_K') [d, dmin] = [fromHalf(rd16(b, o + 80)), fromHalf(rd16(b, o + 82))];
  else if (type === 'q3_K') d = fromHalf(rd16(b, o + 108));
  else if (type === 'q4_K' || type === 'q5_K') [d, dmin] = [fromHalf(rd16(b, o)), fromHalf(rd16(b, o + 2))];
  else if (type === 'q6_K') d = fromHalf(rd16(b, o + 208));
  else d = rdF32(b, o);
  return { d, dmin, w, S, m };
}

/** Q8_K's bsums of the super-block at o (as stored, signed 16-bit). */
function bsums(b, o) {
  return Array.from({ length: 16 }, (_, j) => rdI16(b, o + 260 + 2 * j));
}

// ---- Dequantize -------------------------------------------------------------------------------

/** dequantize_row_<type>: whole super-blocks of bytes -> Float32Array (Q8_K: qs * d). */
export function dequantize(type, bytes) {
  const ts = TYPE_SIZE[type];
  const nb = bytes.length / ts;
  if (!Number.isInteger(nb)) throw new RangeError(`oracle-k: ${bytes.length} bytes is not whole ${type} blocks`);
  const y = new Float32Array(nb * QK);
  for (let i = 0; i < nb; i++) {
    const { d, dmin, w, S, m } = unpack(type, bytes, i * ts);
    for (let e = 0; e < QK; e++) {
      let v;
      if (type === 'q2_K' || type === 'q4_K' || type === 'q5_K') v = f(f(f(d * S[e]) * w[e]) - f(dmin * m[e]));
      else if (type === 'q8_K') v = f(d * w[e]);
      else v = f(f(d * S[e]) * w[e]);
      y[i * QK + e] = v;
    }
  }
  return y;
}

// ---- Dots -------------------------------------------------------------------------------------

/**
 * ggml_vec_dot_<type>_q8_K_generic over whole super-blocks, in its float order. Returns the
 * result, sum |term| over every float term added (for judging other summation orders), and
 * whether a term was NaN or there were infinite terms of both signs (then any order gives NaN).
 */
export function dotQ8K(type, x, y) {
  const xs = TYPE_SIZE[type],
    nb = x.length / xs;
  if (y.length !== nb * 292) throw new RangeError('oracle-k: dot operands of different lengths');
  let sumf = 0,
    abs = 0;
  const sums = [0, 0, 0, 0, 0, 0, 0, 0];
  const terms = [];
  for (let i = 0; i < nb; i++) {
    const a = unpack(type, x, i * xs);
    const q8 = unpack('q8_K', y, i * 292);
    const bs = bsums(y, i * 292);
    const yd = q8.d;
    if (type === 'q2_K') {
      let summs = 0,
        isum = 0;
      for (let j = 0; j < 16; j++) summs += bs[j] * a.m[16 * j];
      for (let e = 0; e < QK; e++) isum += a.S[e] * (q8.w[e] * a.w[e]);
      const dall = f(yd * a.d),
        dmin = f(yd * a.dmin);
      const t1 = f(dall * f(isum)),
        t2 = f(dmin * f(summs));
      sumf = f(sumf + f(t1 - t2));
      terms.push(t1, -t2);
      continue;
    }
    const lane = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let e = 0; e < QK; e++) lane[e % 8] += a.S[e] * (q8.w[e] * a.w[e]);
    const dd = f(a.d * yd);
    for (let l = 0; l < 8; l++) {
      const t = f(dd * f(lane[l]));
      sums[l] = f(sums[l] + t);
      terms.push(t);
    }
    if (type === 'q4_K' || type === 'q5_K') {
      let sumi = 0;
      for (let j = 0; j < 16; j++) sumi += bs[j] * a.m[16 * j];
      const t = f(f(a.dmin * yd) * f(sumi));
      sumf = f(sumf - t);
      terms.push(-t);
    }
  }
  if (type !== 'q2_K') for (let l = 0; l < 8; l++) sumf = f(sumf + sums[l]);
  let nan = false,
    pinf = false,
    ninf = false;
  for (const t of terms) {
    abs += Math.abs(t);
    nan ||= Number.isNaN(t);
    pinf ||= t === Infinity;
    ninf ||= t === -Infinity;
  }
  return { sum: sumf, abs, nan: nan || (pinf && ninf) };
}

/**
 * The f32 dot of a K-quantized row with float32 values: dequantize, then sumf += w[e] * v[e] in
 * element order, each product and sum rounded to float32. Returns the result and sum |product|.
 */
export function dotF32(type, x, v) {
  const w = dequantize(type, x);
  if (v.length !== w.length) throw new RangeError('oracle-k: dot operands of different lengths');
  let sum = 0,
    abs = 0;
  for (let i = 0; i < w.length; i++) {
    const p = f(w[i] * v[i]);
    sum = f(sum + p);
    abs += Math.abs(p);
  }
  return { sum, abs };
}

// ---- Quantizers -------------------------------------------------------------------------------

/**
 * quantize_row_q8_K_ref: float32 values (a multiple of 256) -> Q8_K bytes. An all-zero block gets
 * d = 0, qs = 0 and bsums = 0 (ggml leaves those bsums unwritten).
 */
export function quantizeQ8K(x) {
  const nb = x.length / QK;
  const out = new Uint8Array(nb * 292);
  for (let i = 0; i < nb; i++) {
    const o = i * 292,
      xo = i * QK;
    let max = 0,
      amax = 0;
    for (let j = 0; j < QK; j++) {
      const ax = Math.abs(x[xo + j]);
      if (ax > amax) {
        amax = ax;
        max = x[xo + j];
      }
    }
    if (amax === 0) continue;
    const iscale = f(-127 / max);
    const q = new Int32Array(QK);
    for (let j = 0; j < QK; j++) {
      q[j] = i8(Math.min(127, nearestInt(f(iscale * x[xo + j]))));
      out[o + 4 + j] = q[j] & 0xff;
    }
    for (let j = 0; j < 16; j++) {
      let s = 0;
      for (let k = 0; k < 16; k++) s += q[16 * j + k];
      wr16(out, o + 260 + 2 * j, s & 0xffff);
    }
    const u = bitsOf(f(1 / iscale));
    for (let k = 0; k < 4; k++) out[o + k] = (u >>> (8 * k)) & 0xff;
  }
  return out;
}

/** make_qkx2_quants: affine fit x ~ scale * L + min. Returns [scale, the_min (= -min)], fills L. */
function makeQkx2(n, nmax, x, w, L, rmin, rdelta, nstep, useMad) {
  let min = x[0],
    max = x[0];
  let sumW = w[0];
  let sumX = f(sumW * x[0]);
  for (let i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sumW = f(sumW + w[i]);
    sumX = f(sumX + f(w[i] * x[i]));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, 0, n);
    return [0, -min];
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let best = 0;
  const err = (diff) => (useMad ? Math.abs(diff) : f(diff * diff));
  for (let i = 0; i < n; i++) {
    L[i] = clamp(nearestInt(f(iscale * f(x[i] - min))), 0, nmax);
    const diff = f(f(f(scale * L[i]) + min) - x[i]);
    best = f(best + f(w[i] * err(diff)));
  }
  const Laux = new Int32Array(n);
  for (let is = 0; is <= nstep; is++) {
    iscale = f(f(f(rmin + f(rdelta * is)) + nmax) / f(max - min));
    let sumL = 0,
      sumL2 = 0,
      sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = clamp(nearestInt(f(iscale * f(x[i] - min))), 0, nmax);
      Laux[i] = l;
      sumL = f(sumL + f(w[i] * l));
      sumL2 = f(sumL2 + f(f(w[i] * l) * l));
      sumXL = f(sumXL + f(f(w[i] * l) * x[i]));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (!(D > 0)) continue;
    let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
    let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = f(sumXL / sumL2);
    }
    let cur = 0;
    for (let i = 0; i < n; i++) {
      const diff = f(f(f(thisScale * Laux[i]) + thisMin) - x[i]);
      cur = f(cur + f(w[i] * err(diff)));
    }
    if (cur < best) {
      for (let i = 0; i < n; i++) L[i] = Laux[i];
      best = cur;
      scale = thisScale;
      min = thisMin;
    }
  }
  return [scale, -min];
}

/** The first element with the largest |x| (strict >) of x[0..n): [amax, signed max]. */
function absMax(x, n) {
  let amax = 0,
    max = 0;
  for (let i = 0; i < n; i++) {
    const ax = Math.abs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  return [amax, max];
}

const EPS = f(1e-15);

/** make_qx_quants with rmse_type 1 and no quant weights: L = l + nmax. Returns the scale. */
function makeQx(n, nmax, x, L) {
  const [amax, max] = absMax(x, n);
  if (amax < EPS) {
    L.fill(0, 0, n);
    return 0;
  }
  const trial = (iscale, store) => {
    let sumlx = 0,
      suml2 = 0;
    for (let i = 0; i < n; i++) {
      const l = clamp(nearestInt(f(iscale * x[i])), -nmax, nmax - 1);
      if (store) L[i] = l + nmax;
      const w = f(x[i] * x[i]);
      sumlx = f(sumlx + f(f(w * x[i]) * l));
      suml2 = f(suml2 + f(f(w * l) * l));
    }
    return [sumlx, suml2];
  };
  let [sumlx, suml2] = trial(f(-nmax / max), true);
  let scale = suml2 !== 0 ? f(sumlx / suml2) : 0; // C's `suml2 ? ... : 0`: NaN counts as true
  let best = f(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    const iscale = f(-f(nmax + f(f(0.1) * is)) / max);
    [sumlx, suml2] = trial(iscale, false);
    if (suml2 > 0 && f(sumlx * sumlx) > f(best * suml2)) {
      trial(iscale, true);
      scale = f(sumlx / suml2);
      best = f(scale * sumlx);
    }
  }
  return scale;
}

/** make_q3_quants with do_rmse: L = l + nmax. Returns the scale. */
function makeQ3(n, nmax, x, L) {
  const [amax, max] = absMax(x, n);
  if (amax < EPS) {
    L.fill(0, 0, n);
    return 0;
  }
  const iscale = f(-nmax / max);
  let sumlx = 0,
    suml2 = 0;
  for (let i = 0; i < n; i++) {
    const l = clamp(nearestInt(f(iscale * x[i])), -nmax, nmax - 1);
    L[i] = l;
    const w = f(x[i] * x[i]);
    sumlx = f(sumlx + f(f(w * x[i]) * l));
    suml2 = f(suml2 + f(f(w * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const w = f(x[i] * x[i]);
      let slx = f(sumlx - f(f(w * x[i]) * L[i]));
      if (!(slx > 0)) continue;
      let sl2 = f(suml2 - f(f(w * L[i]) * L[i]));
      const nl = clamp(nearestInt(f(f(x[i] * sl2) / slx)), -nmax, nmax - 1);
      if (nl === L[i]) continue;
      slx = f(slx + f(f(w * x[i]) * nl));
      sl2 = f(sl2 + f(f(w * nl) * nl));
      if (sl2 > 0 && f(f(slx * slx) * suml2) > f(f(sumlx * sumlx) * sl2)) {
        L[i] = nl;
        sumlx = slx;
        suml2 = sl2;
        changed++;
      }
    }
    if (!changed) break;
  }
  for (let i = 0; i < n; i++) L[i] += nmax;
  return suml2 > 0 ? f(sumlx / suml2) : 0;
}

/** Packs codes 0..3 of 256 elements as Q2_K/Q3_K's 2-bit planes into b at o. */
function pack2(L, b, o) {
  for (let h = 0; h < 2; h++)
    for (let l = 0; l < 32; l++) {
      const e = 128 * h + l;
      b[o + 32 * h + l] = (L[e] | (L[e + 32] << 2) | (L[e + 64] << 4) | (L[e + 96] << 6)) & 0xff;
    }
}

/** Packs the low nibbles of 256 codes as Q4_K/Q5_K's qs into b at o. */
function packNibbles(L, b, o) {
  for (let c = 0; c < 4; c++)
    for (let l = 0; l < 32; l++) b[o + 32 * c + l] = (L[64 * c + l] & 15) | ((L[64 * c + 32 + l] & 15) << 4);
}

function quantQ2K(x, b, o) {
  const L = new Int32Array(QK),
    scales = new Float32Array(16),
    mins = new Float32Array(16);
  let maxScale = 0,
    maxMin = 0;
  for (let j = 0; j < 16; j++) {
    const xs = x.subarray(16 * j, 16 * j + 16);
    const w = xs.map(Math.abs);
    const Lj = L.subarray(16 * j, 16 * j + 16);
    [scales[j], mins[j]] = makeQkx2(16, 3, xs, w, Lj, f(-0.5), f(0.1), 15, true);
    if (scales[j] > maxScale) maxScale = scales[j];
    if (mins[j] > maxMin) maxMin = mins[j];
  }
  if (maxScale > 0) {
    const iscale = f(15 / maxScale);
    for (let j = 0; j < 16; j++) b[o + j] = nearestInt(f(iscale * scales[j])) & 0xff;
    wr16(b, o + 80, toHalf(f(maxScale / 15)));
  } else {
    for (let j = 0; j < 16; j++) b[o + j] = 0;
    wr16(b, o + 80, toHalf(0));
  }
  if (maxMin > 0) {
    const iscale = f(15 / maxMin);
    for (let j = 0; j < 16; j++) b[o + j] = (b[o + j] | (nearestInt(f(iscale * mins[j])) << 4)) & 0xff;
    wr16(b, o + 82, toHalf(f(maxMin / 15)));
  } else wr16(b, o + 82, toHalf(0));
  const d = fromHalf(rd16(b, o + 80)),
    dmin = fromHalf(rd16(b, o + 82));
  for (let j = 0; j < 16; j++) {
    const dl = f(d * (b[o + j] & 15));
    if (dl === 0) continue;
    const dm = f(dmin * (b[o + j] >> 4));
    for (let k = 0; k < 16; k++) L[16 * j + k] = clamp(nearestInt(f(f(x[16 * j + k] + dm) / dl)), 0, 3);
  }
  pack2(L, b, o + 16);
}

function quantQ3K(x, b, o) {
  const L = new Int32Array(QK),
    scales = new Float32Array(16);
  let amax = 0,
    maxScale = 0;
  for (let j = 0; j < 16; j++) {
    scales[j] = makeQ3(16, 4, x.subarray(16 * j, 16 * j + 16), L.subarray(16 * j, 16 * j + 16));
    const a = Math.abs(scales[j]);
    if (a > amax) {
      amax = a;
      maxScale = scales[j];
    }
  }
  for (let k = 0; k < 12; k++) b[o + 96 + k] = 0;
  if (maxScale !== 0) {
    const iscale = f(-32 / maxScale);
    for (let j = 0; j < 16; j++) {
      const l = clamp(i8(nearestInt(f(iscale * scales[j]))), -32, 31) + 32;
      if (j < 8) b[o + 96 + j] = l & 15;
      else b[o + 96 + j - 8] |= (l & 15) << 4;
      b[o + 96 + 8 + (j % 4)] |= (l >> 4) << (2 * Math.floor(j / 4));
    }
    wr16(b, o + 108, toHalf(f(1 / iscale)));
  } else wr16(b, o + 108, toHalf(0));
  const d = fromHalf(rd16(b, o + 108));
  for (let j = 0; j < 16; j++) {
    const dl = f(d * (q3Scale(b, o + 96, j) - 32));
    if (dl === 0) continue;
    for (let k = 0; k < 16; k++) L[16 * j + k] = clamp(nearestInt(f(x[16 * j + k] / dl)), -4, 3) + 4;
  }
  for (let k = 0; k < 32; k++) b[o + k] = 0;
  for (let e = 0; e < QK; e++)
    if (L[e] > 3) {
      b[o + (e % 32)] |= 1 << (e >> 5);
      L[e] -= 4;
    }
  pack2(L, b, o + 32);
}

/** Q4_K and Q5_K (nmax 15 or 31): one super-block of x into b at o. */
function quantQ45K(five, x, b, o) {
  const nmax = five ? 31 : 15;
  const L = new Int32Array(QK),
    scales = new Float32Array(8),
    mins = new Float32Array(8);
  let maxScale = 0,
    maxMin = 0;
  for (let j = 0; j < 8; j++) {
    const xs = x.subarray(32 * j, 32 * j + 32);
    let sumX2 = 0;
    for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(xs[l] * xs[l]));
    const avX = f(Math.sqrt(f(sumX2 / 32)));
    const w = xs.map((v) => f(avX + Math.abs(v)));
    [scales[j], mins[j]] = makeQkx2(
      32,
      nmax,
      xs,
      w,
      L.subarray(32 * j, 32 * j + 32),
      five ? f(-0.5) : -1,
      f(0.1),
      five ? 15 : 20,
      false,
    );
    if (scales[j] > maxScale) maxScale = scales[j];
    if (mins[j] > maxMin) maxMin = mins[j];
  }
  const invScale = maxScale > 0 ? f(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? f(63 / maxMin) : 0;
  const s = o + 4;
  for (let k = 0; k < 12; k++) b[s + k] = 0;
  for (let j = 0; j < 8; j++) {
    const ls = Math.min(63, nearestInt(f(invScale * scales[j])) & 0xff);
    const lm = Math.min(63, nearestInt(f(invMin * mins[j])) & 0xff);
    if (j < 4) {
      b[s + j] = ls;
      b[s + j + 4] = lm;
    } else {
      b[s + j + 4] = (ls & 15) | ((lm & 15) << 4);
      b[s + j - 4] |= (ls >> 4) << 6;
      b[s + j] |= (lm >> 4) << 6;
    }
  }
  wr16(b, o, toHalf(f(maxScale / 63)));
  wr16(b, o + 2, toHalf(f(maxMin / 63)));
  const d = fromHalf(rd16(b, o)),
    dmin = fromHalf(rd16(b, o + 2));
  for (let j = 0; j < 8; j++) {
    const [sc, m] = scaleMinK4(b, s, j);
    const dl = f(d * sc);
    if (dl === 0) continue;
    const dm = f(dmin * m);
    for (let k = 0; k < 32; k++) L[32 * j + k] = clamp(nearestInt(f(f(x[32 * j + k] + dm) / dl)), 0, nmax);
  }
  if (five) {
    for (let k = 0; k < 32; k++) b[o + 16 + k] = 0;
    for (let e = 0; e < QK; e++)
      if (L[e] > 15) {
        b[o + 16 + (e % 32)] |= 1 << (e >> 5);
        L[e] -= 16;
      }
  }
  packNibbles(L, b, o + (five ? 48 : 16));
}

function quantQ6K(x, b, o) {
  const L = new Int32Array(QK),
    scales = new Float32Array(16);
  let amax = 0,
    maxScale = 0;
  for (let j = 0; j < 16; j++) {
    scales[j] = makeQx(16, 32, x.subarray(16 * j, 16 * j + 16), L.subarray(16 * j, 16 * j + 16));
    const a = Math.abs(scales[j]);
    if (a > amax) {
      amax = a;
      maxScale = scales[j];
    }
  }
  b.fill(0, o, o + 210);
  if (amax < EPS) return;
  const iscale = f(-128 / maxScale);
  wr16(b, o + 208, toHalf(f(1 / iscale)));
  for (let j = 0; j < 16; j++) b[o + 192 + j] = Math.min(127, nearestInt(f(iscale * scales[j]))) & 0xff;
  const d = fromHalf(rd16(b, o + 208));
  for (let j = 0; j < 16; j++) {
    const dl = f(d * i8(b[o + 192 + j]));
    if (dl === 0) continue;
    for (let k = 0; k < 16; k++) L[16 * j + k] = clamp(nearestInt(f(x[16 * j + k] / dl)), -32, 31) + 32;
  }
  for (let h = 0; h < 2; h++)
    for (let l = 0; l < 32; l++) {
      const e = 128 * h + l;
      b[o + 64 * h + l] = (L[e] & 15) | ((L[e + 64] & 15) << 4);
      b[o + 64 * h + 32 + l] = (L[e + 32] & 15) | ((L[e + 96] & 15) << 4);
      b[o + 128 + 32 * h + l] =
        (L[e] >> 4) | ((L[e + 32] >> 4) << 2) | ((L[e + 64] >> 4) << 4) | ((L[e + 96] >> 4) << 6);
    }
}

/**
 * quantize_row_<type>_ref (no importance weights): float32 values, a multiple of 256 long, to
 * whole super-blocks of bytes. q8_K is quantizeQ8K.
 * @param {string} type
 * @param {Float32Array} x
 */
export function quantize(type, x) {
  if (type === 'q8_K') return quantizeQ8K(x);
  const ts = TYPE_SIZE[type];
  if (!ts) throw new TypeError(`oracle-k: unknown type ${type}`);
  if (x.length % QK) throw new RangeError(`oracle-k: ${x.length} values is not whole super-blocks`);
  const nb = x.length / QK;
  const out = new Uint8Array(nb * ts);
  for (let i = 0; i < nb; i++) {
    const xb = x.subarray(i * QK, (i + 1) * QK);
    if (type === 'q2_K') quantQ2K(xb, out, i * ts);
    else if (type === 'q3_K') quantQ3K(xb, out, i * ts);
    else if (type === 'q4_K' || type === 'q5_K') quantQ45K(type === 'q5_K', xb, out, i * ts);
    else quantQ6K(xb, out, i * ts);
  }
  return out;
}
