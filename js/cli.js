// The blockquant CLI's entry point (Node only): main(args, io) from ./cli/main.js.
export { main } from './cli/main.js';
