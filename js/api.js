// Everything the package exports except init, which each entry point (js/index.js,
// js/index-node.js, js/index-workerd.js) defines with its own way of finding the bundled builds.

export { GGMLType, CODEC_TYPES, typeInfo, typeId, vecDotType, knownTypes, byteLength, blockFields } from './types.js';
export { simdSupported } from './loader.js';
export { Codec } from './codec.js';
export { BlockquantError, MODULE_NAMES } from './side.js';
export { Tensor } from './tensor.js';
export {
  parseGGUF,
  openGGUF,
  writeGGUF,
  writeGGUFHeader,
  GGUFError,
  GGUFValueType,
  rowRange,
  toLittleEndian,
  tensorTypeName,
} from './gguf.js';
export { readImatrix } from './model/imatrix.js';
export { PlanError, FTYPES } from './model/recipe.js';
