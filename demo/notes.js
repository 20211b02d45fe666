// One short "what you are seeing" paragraph per block format, as data, for the block inspector.
// The bit rules are those of ../shared/reference/FORMATS.md and KQUANTS.md.

/** @type {Record<string, string>} */
export const NOTES = {
  q8_0: 'Q8_0 is the ruler: one f16 scale d and 32 signed bytes, x = q · d with d = max|x| / 127. Every value keeps about 8 bits, so its error is the floor the other formats are measured against.',
  q4_0: 'Q4_0 stores d and 32 nibbles; the offset 8 is stored nowhere: x = (q − 8) · d. d is the signed value of largest magnitude divided by −8, so it is negative when that value is positive, and the extreme lands on code 0 (q − 8 = −8), the one end of −8 … 7 with no partner.',
  q4_1: 'Q4_1 adds an explicit minimum m beside d: x = q · d + m, q = 0 … 15. The quantizer takes d = (max − min) / 15 and m = min, and q = (x − min) · (1/d) + 0.5 truncated, at most 15, all in float32. d and m are stored as f16, so the 16 levels span about min … max, not exactly: the rounding of d and m can move either end a little. A block that is all positive wastes no level on signs, for 0.5 bit more per weight than Q4_0.',
  q5_0: 'Q5_0 is Q4_0 with a 5th bit per element in the 32-bit plane qh: element j (0 … 15) takes its low nibble from qs[j] and bit j of qh; element j + 16 takes the high nibble of qs[j] and bit j + 16 of qh (ggml reads it as (qh >> (j + 12)) & 0x10). x = (q − 16) · d.',
  q5_1: 'Q5_1 is Q4_1 with the same high-bit plane as Q5_0 (bit j for element j, bit j + 16 for element j + 16): x = q · d + m, q = 0 … 31, no offset.',
  q2_K: 'Q2_K: a 256-value super-block in 16 sub-blocks of 16, each with a 4-bit scale and a 4-bit min (one byte), themselves scaled by the f16 d and dmin: x = d · sc_j · q − dmin · m_j, q = 0 … 3.',
  q3_K: 'Q3_K: 16 sub-blocks of 16 with 6-bit signed scales (packed in 12 bytes, offset 32) and 3-bit codes: two low bits in qs, the third in the hmask plane, stored inverted (a set bit means no −4): x = d · (sc_j − 32) · (q − 4 · (1 − hbit)).',
  q4_K: 'Q4_K: 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min packed into 12 bytes (the upper two bits of sub-blocks 4 … 7 borrowed from the first bytes), under the f16 d and dmin: x = d · sc_j · q − dmin · m_j, q = 0 … 15.',
  q5_K: 'Q5_K is Q4_K with a 5th bit per value from the qh plane: x = d · sc_j · q − dmin · m_j, q = 0 … 31.',
  q6_K: 'Q6_K: 16 sub-blocks of 16 with signed 8-bit scales under one f16 d (no min); each 6-bit code is a nibble from ql and two bits from qh, offset 32: x = d · sc_j · (q − 32).',
  iq4_nl:
    'IQ4_NL: like Q4_0 (an f16 d and 32 nibbles), but the nibble indexes a fixed non-linear table of 16 levels, denser near zero where most weights are: x = d · table[q].',
  iq4_xs:
    'IQ4_XS: IQ4_NL’s non-linear table in 256-value super-blocks, with a 6-bit scale per sub-block of 32 (offset 32) under one f16 d: x = d · (sc_j − 32) · table[q].',
  mxfp4:
    'MXFP4: 32 FP4 (E2M1) values sharing one power-of-two scale byte E8M0; the code is a sign and one of 8 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6: x = 2^(e − 127) · fp4(q). ggml stores the table doubled (kvalues_mxfp4 = 2 × E2M1: 0, 1, 2, 3, 4, 6, 8, 12) and halves the scale to match (2^(e − 128)), so the product is the same: x = kvalues_mxfp4[q] · 2^(e − 128).',
  nvfp4:
    'NVFP4: 64 values in four sub-blocks of 16, each with its own scale byte in UE4M3 (4 exponent bits, 3 mantissa bits, no sign); the code is an FP4 (E2M1) sign and magnitude 0 … 6: x = ue4m3(d_j) · fp4(q). ggml doubles the E2M1 table (0 … 12, as MXFP4) and halves the scale, and takes the scale as max|x| / 6 rounded to UE4M3, so the largest value of a sub-block lands on ±6 · scale. Files come from converters (llama-quantize has no NVFP4 output).',
  q1_0: 'Q1_0: one bit per weight, its sign, under one f16 d per 128 values: x = +d where the bit is set (x ≥ 0, −0 included), −d where it is clear (x < 0, and NaN). d is the mean |x| of the block, the scale that keeps the block’s sum of |x|: 1.125 bits per weight, the 1-bit “Bonsai” models.',
  q2_0: 'Q2_0: 2-bit codes, four per byte, under one f16 d = max|x| per 64 values: x = d · (q − 1). ggml rounds x / d to −1, 0 or +1 (q = 0, 1, 2); q = 3 (+2d) decodes but ggml never writes it, since |x / d| ≤ 1. Files from before the upstream merge stored 128-value groups under the same id: they do not decode as this.',
  tq1_0:
    'TQ1_0: ternary weights (−1, 0, 1), five per byte as base-3 digits (3^5 = 243 ≤ 256) plus four per byte in the tail, under one f16 d: x = d · (t − 1).',
  tq2_0:
    'TQ2_0: ternary weights stored as 2-bit codes, four per byte, under one f16 d: x = d · (q − 1); faster to unpack than TQ1_0 at 2.06 instead of 1.69 bits per weight.',
};

/**
 * The note for a format (ggml's lower-case name), or a generic line for formats without one.
 * @param {string} format
 * @returns {string}
 */
export function noteFor(format) {
  return (
    NOTES[format] ??
    `${format}: the bytes below by field; each value is rebuilt from its code and the block's scales as the formula shows.`
  );
}
