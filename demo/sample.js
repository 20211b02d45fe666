// A synthetic weight tensor shaped like an LLM's: rows with spread scales, heavy tails (Student-t
// with 4 degrees of freedom) and a few outlier input channels. Deterministic for a given seed.

/**
 * @param {number} rows
 * @param {number} cols
 * @param {number} [seed]
 * @returns {Float32Array} rows * cols values, row-major
 */
export function syntheticWeights(rows, cols, seed = 1) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  const studentT4 = () => {
    let chi = 0;
    for (let k = 0; k < 4; k++) chi += normal() ** 2;
    return normal() / Math.sqrt(chi / 4);
  };
  const outliers = new Set();
  while (outliers.size < Math.max(1, Math.floor(cols / 256))) outliers.add(Math.floor(uniform() * cols));
  const w = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const rowScale = 0.02 * Math.exp(0.5 * normal());
    for (let c = 0; c < cols; c++) {
      const boost = outliers.has(c) ? 12 : 1;
      w[r * cols + c] = rowScale * boost * studentT4();
    }
  }
  return w;
}
