// PlanError: why a model cannot be quantized as asked (planFor, quantizeModel). `code` says what:
// UNKNOWN_FTYPE, BAD_OPTION, NEEDS_IMATRIX, IMATRIX_MISMATCH, IMATRIX_NOT_FINITE, REQUANTIZE,
// UNKNOWN_TYPE, CANNOT_CONVERT, NO_FALLBACK, BAD_LAYER, MISSING_KEY, BAD_KV; and from quantizeModel
// UNSUPPORTED (a conversion this build cannot do), INVALID_DATA (a NaN or Inf in the input),
// INVALID_OUTPUT (quantized scales that overflow); `tensor` names the tensor when there is one.

export class PlanError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {string} [tensor]
   */
  constructor(code, message, tensor) {
    super(message);
    this.name = 'PlanError';
    this.code = code;
    if (tensor !== undefined) this.tensor = tensor;
  }
}
