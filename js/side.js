// The split layout (src/modules.inc): which module holds a kernel, the error for one not loaded,
// and what quantizeModel loads. Placing a side module in a core's memory is js/side-load.js,
// imported only when a module is enabled.

import { MODULES, OP_MODULES, GRID_TYPES } from './gen/modules.js';

/** An error with a stable code, for what a caller can fix. */
export class BlockquantError extends Error {
  /**
   * @param {'MODULE_NOT_LOADED' | 'MODULE_MISSING'} code
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'BlockquantError';
    /** MODULE_NOT_LOADED: a kernel's module is not enabled yet; MODULE_MISSING: it cannot be loaded. */
    this.code = code;
  }
}

/** The names of the split layout's modules, the core first. */
export const MODULE_NAMES = MODULES.map((m) => m.name);

/**
 * The module that holds a kernel, and the type it is for: by the kernel's operation, and whether
 * the type is a grid type (the rule of src/modules.inc).
 * @param {string} kernel an export name, e.g. bq_iq2_xs_dequantize
 * @returns {{ module: string, type: string } | null} null for a name that is not a kernel
 */
export function moduleOfKernel(kernel) {
  if (kernel.startsWith('bq_type_')) return null;
  if (kernel.startsWith('bq_quant_tables_')) return { module: OP_MODULES.quantize_rows[0], type: '' };
  const m = /^bq_([a-z0-9]+(?:_[A-Za-z0-9]+)?)_(quantize_rows|dequantize|quantize|stats|dot|matvec)(?:_|$)/.exec(
    kernel,
  );
  if (!m) return null;
  return { module: OP_MODULES[m[2]][GRID_TYPES.includes(m[1]) ? 1 : 0], type: m[1] };
}

/**
 * Before quantizeModel with a caller's codec of the split layout: loads the modules a model's
 * quantization may call (decoders of every source type, quantizers with and without importance
 * weights); a no-op for other options (the pipeline checks them) and for a whole build.
 * @param {unknown} options quantizeModel's options
 * @returns {Promise<void>}
 */
export async function enableForModel(options) {
  const codec = /** @type {{ codec?: { enable?: unknown } } | null} */ (options)?.codec;
  if (codec && typeof codec.enable === 'function') await codec.enable('quant', 'imat', 'grid');
}
