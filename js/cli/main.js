// The blockquant CLI (Node only): the command table, argument parsing, help and dispatch.
// `main(args, io)` returns the exit status, so tests can run it in-process. Each command is a
// module of ./commands/; quantize writes through js/gguf/sink-file.js (temporary file, rename,
// signals).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describe, EXIT_STATUS, Interrupted, ReaderGone, Refused, Usage } from './errors.js';
import { checkStream, drain, watch } from './io.js';
import { command as inspect } from './commands/inspect.js';
import { command as dump } from './commands/dump.js';
import { command as stats } from './commands/stats.js';
import { command as quantize } from './commands/quantize.js';

/** @typedef {import('./io.js').Out} Out */
/** @typedef {import('./io.js').Values} Values */
/** @typedef {import('./io.js').Command} Command */

/** @type {Record<string, Command>} */
const COMMANDS = { inspect, dump, stats, quantize };

const HELP = `usage: blockquant <command> [options]       blockquant <command> --help: that command

commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.about}\n`)
  .join('')}
options:
  -h, --help     this help
  --version      the version
Options take their value as --opt VALUE or --opt=VALUE.

${EXIT_STATUS}
`;

/** @param {string} name */
const commandHelp = (name) =>
  `usage: blockquant ${COMMANDS[name].usage}\n\n${COMMANDS[name].about}\n\noptions:\n  -h, --help     this help\n${COMMANDS[name].details}\n${EXIT_STATUS}\n`;

/**
 * Runs the CLI with `args` (without node and the script), writing to io.out and io.err (Node
 * streams or any `{ write(s) }`). Returns the exit status: 0 ok, also when the reader of io.out
 * went away (EPIPE); 1 failure, the message naming the file; 2 bad usage or a refused output;
 * 129/130/143 when SIGHUP/SIGINT/SIGTERM stopped a write. Throws nothing.
 * @param {string[]} args
 * @param {{ out: Out, err: Out }} io
 * @returns {Promise<number>}
 */
export async function main(args, io) {
  watch(io.out);
  watch(io.err);
  const print = (/** @type {string} */ s) => {
    checkStream(io.out);
    io.out.write(s + '\n');
  };
  const [cmd, ...rest] = args;
  try {
    const status = await dispatch(cmd, rest, print, io.err);
    await drain(io.out);
    checkStream(io.out);
    return status;
  } catch (e) {
    if (e instanceof ReaderGone) return 0;
    if (e instanceof Usage) {
      io.err.write(`blockquant: ${e.message}\n\n${e.command ? commandHelp(e.command) : HELP}`);
      return 2;
    }
    const file = /** @type {any} */ (e)?.file;
    const msg = describe(e);
    // Sources name themselves in their messages too: the file is named once.
    io.err.write(
      `blockquant: ${file ? `${file}: ` : ''}${file && msg.startsWith(`${file}: `) ? msg.slice(file.length + 2) : msg}\n`,
    );
    return e instanceof Refused ? 2 : e instanceof Interrupted ? e.status : 1;
  }
}

/**
 * @param {string | undefined} cmd
 * @param {string[]} args
 * @param {(s: string) => void} print
 * @param {Out} err
 */
async function dispatch(cmd, args, print, err) {
  if (cmd === undefined) throw new Usage('no command');
  if (cmd === '--help' || cmd === '-h' || (cmd === 'help' && args.length === 0)) {
    print(HELP.trimEnd());
    return 0;
  }
  if (cmd === '--version') {
    // package.json sits two levels above js/cli/ in the repository and in an installed package.
    print(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    return 0;
  }
  if (cmd === 'help') {
    if (!Object.hasOwn(COMMANDS, args[0]) || args.length > 1) throw new Usage(`no help on ${args.join(' ')}`);
    print(commandHelp(args[0]).trimEnd());
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, cmd))
    throw new Usage(cmd.startsWith('-') ? `unknown option '${cmd}'` : `unknown command ${JSON.stringify(cmd)}`);
  const c = COMMANDS[cmd];
  /** @type {{ values: Values, positionals: string[] }} */
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...c.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    const x = /** @type {{ code?: string, message: string }} */ (e);
    const option = /'([^']*)'/.exec(x.message)?.[1];
    throw new Usage(
      x.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option
        ? `unknown option '${option}'`
        : x.message.charAt(0).toLowerCase() + x.message.slice(1),
      cmd,
    );
  }
  if (parsed.values.help) {
    print(commandHelp(cmd).trimEnd());
    return 0;
  }
  const n = parsed.positionals.length;
  if (n > c.positionals.length || n < c.positionals.length - (c.optional ?? 0))
    throw new Usage(`${cmd} takes ${c.positionals.join(' and ')}`, cmd);
  return c.run(parsed.positionals, parsed.values, print, err);
}
