// The CLI's errors and how they are reported: bad usage (exit 2 with help), a refused output
// (exit 2), an interrupted write (128 + the signal), a reader of stdout that went away (exit 0),
// and every other error as one line naming its file (exit 1).
import { GGUFError, SIGNAL_STATUS } from '../node.js';

export const EXIT_STATUS = `exit status: 0 ok (also when the reader of the output went away, as in | head);
  1 failure (the message names the file); 2 bad usage, or OUT refused (it is IN, it exists and
  --force was not given, or it is not a regular file); 130, 143, 129 when SIGINT, SIGTERM or
  SIGHUP stopped a write (nothing is left under OUT or under a temporary name).`;

/** Bad usage: exit 2 with the message and the help of `command` (all commands when undefined). */
export class Usage extends Error {
  /** @param {string} message @param {string} [command] */
  constructor(message, command) {
    super(message);
    this.command = command;
  }
}

/** An output refused because writing it could destroy a file: exit 2, no help. */
export class Refused extends Error {
  /** @param {string} file @param {string} message */
  constructor(file, message) {
    super(message);
    this.file = file;
  }
}

/** A signal stopped a write (after its temporary file was removed). */
export class Interrupted extends Error {
  /** @param {keyof typeof SIGNAL_STATUS} signal @param {string} what */
  constructor(signal, what) {
    super(`interrupted by ${signal}; ${what}`);
    this.status = SIGNAL_STATUS[signal];
  }
}

/** The reader of stdout went away (EPIPE): stop quietly. */
export class ReaderGone extends Error {}

/**
 * Names the file an error is about, unless an inner step already did.
 * @param {unknown} e
 * @param {string} file
 */
export function tag(e, file) {
  if (e && typeof e === 'object' && !('file' in e)) /** @type {any} */ (e).file = file;
  return e;
}

/**
 * @template T
 * @param {string} file
 * @param {() => Promise<T>} step
 * @returns {Promise<T>}
 */
export async function about(file, step) {
  try {
    return await step();
  } catch (e) {
    throw tag(e, file);
  }
}

/**
 * An error as one line: Node's system errors as their text and code, without the syscall and
 * path Node appends (the file is named in front instead).
 * @param {unknown} e
 */
export function describe(e) {
  if (e instanceof GGUFError) return `${e.message} [${e.code}]`;
  const x = /** @type {{ message?: unknown, code?: unknown, syscall?: unknown }} */ (e ?? {});
  if (typeof x.message !== 'string') return String(e);
  if (typeof x.code === 'string' && typeof x.syscall === 'string' && x.message.startsWith(`${x.code}: `)) {
    const text = x.message.slice(x.code.length + 2);
    const cut = text.indexOf(`, ${x.syscall}`);
    return `${cut >= 0 ? text.slice(0, cut) : text} (${x.code})`;
  }
  return x.message;
}
