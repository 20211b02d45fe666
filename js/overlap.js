// Inputs that share memory with an output. Every API that writes into a caller's `out` reads its
// inputs as they were at the call: an input that is, or overlaps, out is copied first (the copy
// costs its size once; calls whose out is apart from the inputs copy nothing).

/**
 * Whether two views share bytes (views of the same buffer whose byte ranges intersect).
 * @param {ArrayBufferView} a @param {ArrayBufferView} b
 */
export function overlaps(a, b) {
  return (
    a.buffer === b.buffer &&
    a.byteLength > 0 &&
    b.byteLength > 0 &&
    a.byteOffset < b.byteOffset + b.byteLength &&
    b.byteOffset < a.byteOffset + a.byteLength
  );
}

/**
 * `input`, or a copy of it when it overlaps `out`.
 * @template {Uint8Array | Float32Array} T
 * @param {T} input @param {ArrayBufferView | undefined | null} out
 * @returns {T}
 */
export function apart(input, out) {
  return out && overlaps(input, out) ? /** @type {T} */ (input.slice()) : input;
}
