// GGUF: the public surface of the reader (parseGGUF), the lazy reader (openGGUF), the writer and
// the byte-order conversion. Each lives in a file of its own; this module gathers them.

export { GGUFValueType, GGUFError } from './gguf-format.js';
export { parseGGUF, tensorTypeName } from './gguf-read.js';
export { openGGUF, rowRange } from './gguf-open.js';
export { toSource } from './sources.js';
export { writeGGUF, writeGGUFHeader } from './gguf-write.js';
export { toLittleEndian } from './byteswap.js';

/** @typedef {import('./gguf-format.js').ParseOptions} ParseOptions */
/** @typedef {import('./gguf-format.js').KV} KV */
/** @typedef {import('./gguf-format.js').TensorInfo} TensorInfo */
/** @typedef {import('./gguf-format.js').Unreadable} Unreadable */
/** @typedef {import('./sources.js').ByteSource} ByteSource */
/** @typedef {import('./sources.js').OpenOptions} OpenOptions */
/** @typedef {import('./gguf-open.js').OpenGGUFOptions} OpenGGUFOptions */
