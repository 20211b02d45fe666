// The baseline a user would otherwise write: straightforward pure-JS dequantizers over typed
// arrays with an fp16 lookup table. tests/bench-js.test.js checks them against the codecs.

const HALF = new Float32Array(65536);
{
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1,
      e = (h >> 10) & 31,
      m = h & 1023;
    HALF[h] = e === 31 ? (m ? NaN : s * Infinity) : e === 0 ? s * m * 2 ** -24 : s * (1024 + m) * 2 ** (e - 25);
  }
}

/** @param {Uint8Array} q @param {Float32Array} y */
function q4_0(q, y) {
  for (let o = 0, i = 0; o < q.length; o += 18, i += 32) {
    const d = HALF[q[o] | (q[o + 1] << 8)];
    for (let j = 0; j < 16; j++) {
      const b = q[o + 2 + j];
      y[i + j] = ((b & 15) - 8) * d;
      y[i + j + 16] = ((b >> 4) - 8) * d;
    }
  }
}

/** @param {Uint8Array} q @param {Float32Array} y */
function q4_1(q, y) {
  for (let o = 0, i = 0; o < q.length; o += 20, i += 32) {
    const d = HALF[q[o] | (q[o + 1] << 8)],
      m = HALF[q[o + 2] | (q[o + 3] << 8)];
    for (let j = 0; j < 16; j++) {
      const b = q[o + 4 + j];
      y[i + j] = Math.fround((b & 15) * d) + m;
      y[i + j + 16] = Math.fround((b >> 4) * d) + m;
    }
  }
}

/** @param {Uint8Array} q @param {Float32Array} y */
function q5_0(q, y) {
  for (let o = 0, i = 0; o < q.length; o += 22, i += 32) {
    const d = HALF[q[o] | (q[o + 1] << 8)];
    const qh = q[o + 2] | (q[o + 3] << 8) | (q[o + 4] << 16) | (q[o + 5] << 24);
    for (let j = 0; j < 16; j++) {
      const b = q[o + 6 + j];
      y[i + j] = (((b & 15) | (((qh >>> j) & 1) << 4)) - 16) * d;
      y[i + j + 16] = (((b >> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16) * d;
    }
  }
}

/** @param {Uint8Array} q @param {Float32Array} y */
function q5_1(q, y) {
  for (let o = 0, i = 0; o < q.length; o += 24, i += 32) {
    const d = HALF[q[o] | (q[o + 1] << 8)],
      m = HALF[q[o + 2] | (q[o + 3] << 8)];
    const qh = q[o + 4] | (q[o + 5] << 8) | (q[o + 6] << 16) | (q[o + 7] << 24);
    for (let j = 0; j < 16; j++) {
      const b = q[o + 8 + j];
      y[i + j] = Math.fround(((b & 15) | (((qh >>> j) & 1) << 4)) * d) + m;
      y[i + j + 16] = Math.fround(((b >> 4) | (((qh >>> (j + 16)) & 1) << 4)) * d) + m;
    }
  }
}

/** @param {number} qs @param {number} size @returns {(q: Uint8Array, y: Float32Array) => void} */
const q8 = (qs, size) => (q, y) => {
  const s = new Int8Array(q.buffer, q.byteOffset, q.length);
  for (let o = 0, i = 0; o < q.length; o += size, i += 32) {
    const d = HALF[q[o] | (q[o + 1] << 8)];
    for (let j = 0; j < 32; j++) y[i + j] = s[o + qs + j] * d;
  }
};

/** @param {Uint8Array} q @param {Float32Array} y */
function f16(q, y) {
  for (let o = 0, i = 0; o < q.length; o += 2, i++) y[i] = HALF[q[o] | (q[o + 1] << 8)];
}

/** @param {Uint8Array} q @param {Float32Array} y */
function bf16(q, y) {
  const u = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let o = 0, i = 0; o < q.length; o += 2, i++) u[i] = (q[o] | (q[o + 1] << 8)) << 16;
}

/** Pure-JS dequantizers by type name. */
export const jsDequantize = { q4_0, q4_1, q5_0, q5_1, q8_0: q8(2, 34), q8_1: q8(4, 36), f16, bf16 };
