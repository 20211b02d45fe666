// Writing a planned model to OUT. (Until quantizeModel, branch pipeline, is merged.)

/**
 * @param {any} f @param {import('../../model/recipe.js').QuantizePlan} plan @param {string} out
 * @param {any} o
 * @returns {Promise<void>}
 */
export async function writeModel(f, plan, out, o) {
  (void f, plan, out, o);
  throw new Error('writing a model needs quantizeModel (branch pipeline, not merged yet)');
}
