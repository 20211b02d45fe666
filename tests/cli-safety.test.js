// The CLI as a real process (bin/blockquant in a child): it never destroys a file. OUT that is IN
// by any name is refused; an existing OUT is kept without --force; OUT appears only complete (a
// temporary file beside it is renamed into place) and a signal or a failed write leaves nothing
// behind; a reader that goes away ends the command quietly; --version, per-command --help and
// --opt=value; errors are one line naming the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  mkdirSync,
  writeFileSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  lstatSync,
  linkSync,
  symlinkSync,
  cpSync,
  openSync,
  closeSync,
  constants,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeGGUF, parseGGUF, GGMLType } from '../js/node.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'blockquant');
const dirs = [];
test.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'bq-cli-safety-'));
  dirs.push(d);
  return d;
};

/**
 * A one-layer llama-architecture GGUF (what quantize needs: general.architecture and its
 * block_count) with one F32 weight of `rows` rows of 4096 values, and a 1-D norm.
 */
function model(rows) {
  const w = new Float32Array(4096 * rows);
  for (let i = 0; i < w.length; i++) w[i] = Math.sin(i * 0.37) * (1 + (i % 97) / 50);
  return writeGGUF({
    kv: [
      { key: 'general.architecture', type: 8, value: 'llama' },
      { key: 'general.name', type: 8, value: 'safety' },
      { key: 'llama.block_count', type: 4, value: 1 },
    ],
    tensors: [
      { name: 'blk.0.ffn_up.weight', type: GGMLType.F32, dims: [4096, rows], data: new Uint8Array(w.buffer) },
      { name: 'blk.0.attn_norm.weight', type: GGMLType.F32, dims: [64], data: new Uint8Array(256) },
    ],
  });
}

const sha = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');
const listing = (dir) => readdirSync(dir).sort();
const noStack = (s) => assert.doesNotMatch(s, /\n\s+at |node:internal|Error:/, s);

/**
 * Runs bin/blockquant (or `command` with `argv`) in a child; resolves with its status and output.
 * @returns {{ child: import('node:child_process').ChildProcess, done: Promise<{ code: number | null, signal: string | null, out: string, err: string }> }}
 */
function start(args, { cwd = ROOT, command = process.execPath, argv = [BIN, ...args], stdio = 'pipe' } = {}) {
  const child = spawn(command, argv, { cwd, stdio });
  let out = '',
    err = '';
  child.stdout?.on('data', (b) => (out += b));
  child.stderr?.on('data', (b) => (err += b));
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
  return { child, done };
}
const run = (args, options) => start(args, options).done;

test('quantize refuses OUT that is IN by any name (also with --force), exit 2', async () => {
  const dir = tempDir();
  const a = join(dir, 'a.gguf');
  writeFileSync(a, model(4));
  mkdirSync(join(dir, 'sub'));
  linkSync(a, join(dir, 'hard.gguf'));
  symlinkSync(a, join(dir, 'sym.gguf'));
  symlinkSync('a.gguf', join(dir, 'relsym.gguf'));
  const before = sha(a);
  const names = listing(dir);
  const spellings = [
    ['a.gguf', 'a.gguf'],
    ['a.gguf', './a.gguf'],
    ['./a.gguf', 'sub/../a.gguf'],
    ['a.gguf', a],
    ['a.gguf', 'hard.gguf'],
    ['hard.gguf', 'a.gguf'],
    ['a.gguf', 'sym.gguf'],
    ['sym.gguf', 'relsym.gguf'],
  ].flatMap(([input, output]) => [
    [input, output, []],
    [input, output, ['--force']],
  ]);
  // The children run side by side: every one is refused before it could create anything.
  const results = await Promise.all(
    spellings.map(([input, output, force]) =>
      run(['quantize', input, output, '--type', 'q4_0', ...force], { cwd: dir }),
    ),
  );
  results.forEach((r, i) => {
    const what = spellings[i].join(' ');
    assert.equal(r.code, 2, `${what}: ${r.err}`);
    assert.match(r.err, /^blockquant: .*: is the input file/, what);
    noStack(r.err);
  });
  assert.equal(sha(a), before);
  assert.deepEqual(listing(dir), names);
});

test('an existing OUT is kept without --force (exit 2) and replaced whole with it', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  const out = join(dir, 'out.gguf');
  writeFileSync(input, model(4));
  writeFileSync(out, 'precious');
  const r = await run(['quantize', input, out, '--type', 'q8_0']);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^blockquant: .*out\.gguf: exists; --force replaces it\n$/);
  assert.equal(readFileSync(out, 'utf8'), 'precious');
  assert.deepEqual(listing(dir), ['in.gguf', 'out.gguf']);

  const f = await run(['quantize', input, out, '--type', 'q8_0', '--force']);
  assert.equal(f.code, 0, f.err);
  const g = parseGGUF(new Uint8Array(readFileSync(out)));
  assert.deepEqual(
    g.tensors.map((t) => t.type),
    [GGMLType.F32, GGMLType.Q8_0], // llama's order: attn_norm before ffn_up,
  );
  assert.deepEqual(listing(dir), ['in.gguf', 'out.gguf']);

  // A new OUT gets the mode of any new file there (the umask applies), not the temp file's.
  const fresh = join(dir, 'fresh.gguf');
  assert.equal((await run(['quantize', input, fresh, '--type', 'q4_0'])).code, 0);
  writeFileSync(join(dir, 'plain'), '');
  assert.equal(statSync(fresh).mode, statSync(join(dir, 'plain')).mode);

  // A dangling symlink is an existing name: kept without --force, replaced (not followed) with it.
  symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.gguf'));
  const dl = await run(['quantize', input, join(dir, 'dangling.gguf'), '--type', 'q4_0']);
  assert.equal(dl.code, 2, dl.err);
  assert.match(dl.err, /dangling\.gguf: exists; --force replaces it/);
  assert.ok(lstatSync(join(dir, 'dangling.gguf')).isSymbolicLink());
  assert.equal((await run(['quantize', input, join(dir, 'dangling.gguf'), '--type', 'q4_0', '--force'])).code, 0);
  assert.ok(lstatSync(join(dir, 'dangling.gguf')).isFile());
  rmSync(join(dir, 'dangling.gguf'));

  // Something that is not a regular file is never replaced, --force or not.
  mkdirSync(join(dir, 'adir'));
  for (const force of [[], ['--force']]) {
    const d = await run(['quantize', input, join(dir, 'adir'), '--type', 'q4_0', ...force]);
    assert.equal(d.code, 2, d.err);
    assert.match(d.err, /adir: exists and is not a regular file/);
  }
  assert.deepEqual(listing(dir), ['adir', 'fresh.gguf', 'in.gguf', 'out.gguf', 'plain']);
});

/** @type {Uint8Array | undefined} the signal tests' input, made once */
let big;
for (const [signal, status, times] of [
  ['SIGINT', 130, 1],
  ['SIGTERM', 143, 1],
  ['SIGINT', 130, 2], // a second (unless merged with the first) removes the temp file and exits at once
]) {
  test(`${signal} x${times} mid-write: exit ${status}, nothing under OUT, no temp file, IN unchanged`, async () => {
    const dir = tempDir();
    const input = join(dir, 'in.gguf');
    writeFileSync(input, (big ??= model(4096))); // 64 MiB of F32: quantizing it takes many chunks
    const before = sha(input);
    const { child, done } = start(['quantize', input, join(dir, 'out.gguf'), '--type', 'q4_0']);
    let exited = false;
    done.then(() => (exited = true));
    // Wait (bounded poll, no clock) for the temporary file to appear, then interrupt.
    for (let i = 0; i < 100000 && !exited && listing(dir).length < 2; i++) await new Promise((r) => setTimeout(r, 1));
    const seen = listing(dir);
    assert.equal(seen.length, 2, `no temporary file appeared: ${seen}`);
    assert.match(
      seen.find((n) => n !== 'in.gguf'),
      /^\.out\.gguf\..*\.tmp$/,
    );
    for (let i = 0; i < times; i++) child.kill(signal);
    const r = await done;
    assert.equal(r.code, status, r.err);
    if (times === 1) assert.match(r.err, new RegExp(`out\\.gguf: interrupted by ${signal}`));
    noStack(r.err);
    assert.deepEqual(listing(dir), ['in.gguf']);
    assert.equal(sha(input), before);
  });
}

test('a write that fails (file size limit) exits 1 naming OUT and leaves nothing', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  writeFileSync(input, model(64)); // 1 MiB of F32 -> 272 KiB of Q8_0, over a 64 KiB limit
  const r = await run([], {
    command: 'bash',
    argv: [
      '-c',
      'ulimit -f 64 && exec "$0" "$@"',
      process.execPath,
      BIN,
      'quantize',
      input,
      'out.gguf',
      '--type',
      'q8_0',
    ],
    cwd: dir,
  });
  assert.equal(r.code, 1, r.err);
  assert.equal(r.err, 'blockquant: out.gguf: file too large (EFBIG)\n');
  assert.deepEqual(listing(dir), ['in.gguf']);
});

test('errors are one line naming the file, exit 1, no stack trace, no temp file', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  writeFileSync(input, model(4));
  writeFileSync(join(dir, 'text.gguf'), 'not a model at all');
  mkdirSync(join(dir, 'd'));
  assert.equal(spawnSync('mkfifo', [join(dir, 'fifo')]).status, 0); // opening it would wait for a writer
  for (const [args, want] of [
    [['inspect', 'fifo'], /^blockquant: fifo: is not a regular file\n/],
    [['quantize', 'fifo', 'out.gguf', '--type', 'q4_0'], /^blockquant: fifo: is not a regular file\n/],
    [['quantize', 'in.gguf', 'nodir/out.gguf', '--type', 'q4_0'], /^blockquant: nodir\/out\.gguf: no such file/],
    [['quantize', 'missing.gguf', 'out.gguf', '--type', 'q4_0'], /^blockquant: missing\.gguf: no such file/],
    [['quantize', 'd', 'out.gguf', '--type', 'q4_0'], /^blockquant: d: is a directory\n/],
    [['quantize', 'text.gguf', 'out.gguf', '--type', 'q4_0'], /^blockquant: text\.gguf: .*magic/i],
    [['inspect', 'd'], /^blockquant: d: is a directory\n/],
    [['inspect', 'missing.gguf'], /^blockquant: missing\.gguf: no such file/],
    [['dump', 'in.gguf', 'nope'], /^blockquant: in\.gguf: no tensor named "nope"/],
  ]) {
    const r = await run(args, { cwd: dir });
    assert.equal(r.code, 1, `${args}: ${r.err}`);
    assert.match(r.err, want);
    assert.equal(r.err.split('\n').length, 2, r.err);
    noStack(r.err);
    assert.deepEqual(listing(dir), ['d', 'fifo', 'in.gguf', 'text.gguf'], args.join(' '));
  }
});

test('a failed write to stdout (a full disk) exits 1 naming stdout', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  writeFileSync(input, model(4));
  for (const args of [['inspect', input], ['dump', input, 'blk.0.ffn_up.weight'], ['--version']]) {
    const r = await run([], {
      command: 'bash',
      argv: ['-c', 'exec "$0" "$@" > /dev/full', process.execPath, BIN, ...args],
    });
    assert.equal(r.code, 1, args.join(' '));
    assert.equal(r.err, 'blockquant: stdout: no space left on device (ENOSPC)\n');
  }
});

test('a reader that went away ends every command quietly with status 0', async () => {
  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  writeFileSync(input, model(256));
  // stdout is a FIFO whose only reader is closed before the child starts: every write is EPIPE.
  const fifo = join(dir, 'fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  for (const args of [
    ['inspect', input],
    ['inspect', input, '--json'],
    ['dump', input, 'blk.0.ffn_up.weight'],
    ['stats', input],
    ['quantize', input, join(dir, 'out.gguf'), '--type', 'q4_0', '--quiet'], // no progress lines on stderr
    ['--help'],
    ['--version'],
    ['dump', '--help'],
  ]) {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    closeSync(reader);
    const r = await run(args, { stdio: ['ignore', writer, 'pipe'] });
    closeSync(writer);
    assert.equal(r.code, 0, `${args}: ${r.err}`);
    assert.equal(r.err, '', args.join(' '));
  }
  // And a real pipeline: `dump | head -c 10` (dump's output is far larger than a pipe buffer).
  const p = spawnSync('bash', [
    '-c',
    '"$0" "$@" | head -c 10; echo " ${PIPESTATUS[*]}"',
    process.execPath,
    BIN,
    'dump',
    input,
    'blk.0.ffn_up.weight',
  ]);
  assert.equal(p.stderr.toString(), '');
  assert.match(p.stdout.toString(), /^.{10} 0 0\n$/s);
});

test('--version prints package.json version, also from an installed copy', async () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const r = await run(['--version']);
  assert.deepEqual([r.code, r.out, r.err], [0, `${version}\n`, '']);
  // An installed package: package.json and its "files", somewhere else, run from yet elsewhere.
  const dir = tempDir();
  const pkg = join(dir, 'node_modules', 'blockquant');
  for (const f of ['package.json', 'js', 'bin']) cpSync(join(ROOT, f), join(pkg, f), { recursive: true });
  const i = await run(['--version'], { argv: [join(pkg, 'bin', 'blockquant'), '--version'], cwd: dir });
  assert.deepEqual([i.code, i.out, i.err], [0, `${version}\n`, '']);
});

test('per-command --help, --opt=value, and strict options (exit 2 with the command usage)', async () => {
  const commands = ['inspect', 'dump', 'stats', 'quantize'];
  // One spelling per command here (tests/cli.test.js runs every spelling in-process).
  const helps = [
    ['inspect', '--help'],
    ['dump', '-h'],
    ['help', 'stats'],
    ['quantize', 'x.gguf', '--help'],
  ];
  const helped = await Promise.all(helps.map((args) => run(args)));
  helped.forEach((r, i) => {
    const args = helps[i];
    const cmd = args[0] === 'help' ? args[1] : args[0];
    assert.equal(r.code, 0, `${args}: ${r.err}`);
    assert.match(r.out, new RegExp(`^usage: blockquant ${cmd} `), args.join(' '));
    assert.doesNotMatch(r.out, /^commands:/m);
  });
  const unknown = await Promise.all(commands.map((cmd) => run([cmd, 'x.gguf', '--frob'])));
  unknown.forEach((u, i) => {
    assert.equal(u.code, 2, commands[i]);
    assert.match(u.err, /^blockquant: unknown option '--frob'/);
    assert.match(u.err, new RegExp(`\nusage: blockquant ${commands[i]} `));
  });
  const g = await run(['--help']);
  assert.equal(g.code, 0);
  assert.match(g.out, /^usage: blockquant <command>/);
  assert.match(g.out, /--version/);

  const dir = tempDir();
  const input = join(dir, 'in.gguf');
  writeFileSync(input, model(4));
  const q = await run(['quantize', input, join(dir, 'o.gguf'), '--type=q5_0', '--tensor-type=attn_k=q8_0']);
  assert.equal(q.code, 0, q.err);
  const o = parseGGUF(new Uint8Array(readFileSync(join(dir, 'o.gguf'))));
  assert.deepEqual(
    o.tensors.map((t) => t.type),
    [GGMLType.F32, GGMLType.Q5_0], // llama's order: attn_norm before ffn_up,
  );
  // A K type, spelled as ggml spells it (every tensor at it): rows of 4096 are whole 256-blocks.
  const k = await run(['quantize', input, join(dir, 'k.gguf'), '--type=q4_K']);
  assert.equal(k.code, 0, k.err);
  const kg = parseGGUF(new Uint8Array(readFileSync(join(dir, 'k.gguf'))));
  assert.deepEqual(
    kg.tensors.map((t) => t.type),
    [GGMLType.F32, GGMLType.Q4_K], // llama's order: attn_norm before ffn_up,
  );
  assert.equal(kg.metadata.get('general.file_type'), 14);
  assert.match(k.out, /^.*k\.gguf: every tensor at q4_K, 2 tensors\n/);
  assert.match(k.out, /^ {2}q4_K +1 +9216$/m);
  assert.match(k.err, /^\[2\/2\] blk\.0\.ffn_up\.weight +\[4096, 4\] +f32 -> q4_K /m);
  rmSync(join(dir, 'k.gguf'));
  const d = await run(['dump', input, 'blk.0.ffn_up.weight', '--rows=1:3']);
  assert.equal(d.code, 0, d.err);
  assert.equal(d.out.trim().split('\n').length, 2);
  for (const args of [
    ['quantize', input, 'o2.gguf', '--type'],
    ['inspect', input, '--json=yes'],
    ['dump', input],
  ]) {
    const r = await run(args, { cwd: dir });
    assert.equal(r.code, 2, `${args}: ${r.err}`);
    assert.match(r.err, /\nusage: blockquant /);
  }
  assert.deepEqual(listing(dir), ['in.gguf', 'o.gguf']);
});
