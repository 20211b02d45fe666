// A signal that comes while an output is being placed (after the last write, during the rename or
// link) still leaves nothing under OUT: the CLI's promise. js/gguf/sink-file.js tracks the outputs
// it places as new files while signals are trapped; discardPlaced() removes them after a first
// signal, and a second signal removes them before it exits (checked in a child process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSinks, trapSignals } from '../js/gguf/sink-file.js';

test('a first signal during the last step: the new output is discarded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-sig-'));
  try {
    const out = join(dir, 'out.gguf');
    const trap = trapSignals();
    try {
      const [sink] = await fileSinks([out]);
      await sink.write(new Uint8Array(100));
      await sink.close();
      process.emit('SIGINT', 'SIGINT'); // as the signal arrives between the last check and the link
      assert.ok(trap.got, 'the trap saw it');
      await /** @type {any} */ (sink).commit();
      assert.ok(existsSync(out), 'placed');
      await trap.discardPlaced();
      assert.deepEqual(readdirSync(dir), [], 'nothing under OUT, no temporary file');
    } finally {
      trap.release();
    }
    // Without a signal, a placed output stays: release() forgets it.
    const trap2 = trapSignals();
    const [s2] = await fileSinks([out]);
    await s2.write(new Uint8Array(10));
    await s2.close();
    await /** @type {any} */ (s2).commit();
    trap2.release();
    await trap2.discardPlaced();
    assert.deepEqual(readdirSync(dir), ['out.gguf']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second signal after an output was placed removes it before exiting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-sig2-'));
  try {
    const out = join(dir, 'out.gguf');
    const mod = new URL('../js/gguf/sink-file.js', import.meta.url).href;
    const script = `const { fileSinks, trapSignals } = await import(${JSON.stringify(mod)});
      const trap = trapSignals();
      const [sink] = await fileSinks([${JSON.stringify(out)}]);
      await sink.write(new Uint8Array(100));
      await sink.close();
      process.emit('SIGINT', 'SIGINT');
      await sink.commit();
      process.emit('SIGINT', 'SIGINT');
      console.log('not reached');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 130, r.stderr);
    assert.doesNotMatch(r.stdout, /not reached/);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
