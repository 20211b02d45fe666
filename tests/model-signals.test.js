// A command line's quantizeModel to a path under trapSignals (blockquant/node): SIGINT, SIGTERM or
// SIGHUP in the middle of the write stops it with the signal's exit status and leaves nothing but
// the input in the folder; two signals at once exit at once, removing the temporary file too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeModel } from './lib/models.js';

const CHILD = fileURLToPath(new URL('./lib/quantize-signal-child.js', import.meta.url));
const TMP = mkdtempSync(join(tmpdir(), 'bq-model-signals-'));
after(() => rmSync(TMP, { recursive: true, force: true }));
// 48 MiB of F32: many chunks, so the signal comes while the file is being written.
const model = makeModel({ layers: 2, embd: 1024, ff: 2048, vocab: 2048, heads: 8, headsKv: 2 }).bytes;

/**
 * Runs the child, sends `signals` once it says it is writing; resolves to its exit status and
 * what is left in its folder.
 * @param {string} name @param {NodeJS.Signals[]} signals
 */
function interrupt(name, signals) {
  const dir = join(TMP, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'in.gguf'), model);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CHILD, join(dir, 'in.gguf'), join(dir, 'out.gguf')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '',
      err = '';
    p.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('writing') && signals.length) for (const s of signals.splice(0)) p.kill(s);
    });
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('exit', (code) => resolve({ code, out, err, left: readdirSync(dir).sort() }));
  });
}

for (const [signal, status] of /** @type {const} */ ([
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
])) {
  test(`${signal} mid-write: exit ${status}, nothing left but the input`, async () => {
    const r = /** @type {any} */ (await interrupt(signal, [signal]));
    assert.equal(r.code, status, r.err);
    assert.match(r.out, new RegExp(`stopped by ${signal}`));
    assert.deepEqual(r.left, ['in.gguf']);
  });
}

test('two signals at once: exit at once, the temporary file removed', async () => {
  const r = /** @type {any} */ (await interrupt('twice', ['SIGINT', 'SIGINT']));
  assert.equal(r.code, 130, r.err);
  assert.deepEqual(r.left, ['in.gguf']);
});
