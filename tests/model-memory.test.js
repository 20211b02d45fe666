// quantizeModel's memory is bounded by rows, not tensors: a 627 MB F16 model (never held in
// memory: tests/lib/big-model.js serves it) whose two big tensors each decode to 512 MiB of f32
// (llama_model_quantize holds a whole tensor in f32) is quantized in a child process, with one
// thread and with two, to a sink that only hashes; the child's JS heap plus external memory
// (ArrayBuffers, wasm memory) at every progress call and its peak RSS above where it started stay
// under 256 MiB, and both thread counts write the same bytes, as many as the plan says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { planQuantize } from '../js/index-node.js';
import { bigModelSource } from './lib/big-model.js';

const CHILD = fileURLToPath(new URL('./lib/model-memory-child.js', import.meta.url));
const spec = { embd: 4096, vocab: 32768 };
const LIMIT = 256 * 2 ** 20;

/** @param {number} threads */
function run(threads) {
  const r = spawnSync(process.execPath, [CHILD, JSON.stringify({ spec, ftype: 'Q8_0', threads })], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
}

test('a model whose tensors decode to 512 MiB of f32 each is quantized within 256 MiB, on 1 and 2 threads', async () => {
  const plan = await planQuantize(bigModelSource(spec), { ftype: 'Q8_0' });
  const biggest = Math.max(...plan.tensors.map((t) => (t.bytesIn / 2) * 4));
  assert.ok(biggest >= 2 * LIMIT, `a tensor decodes to ${biggest} bytes of f32`);
  const one = run(1);
  const two = run(2);
  for (const [what, r] of [
    ['1 thread', one],
    ['2 threads', two],
  ]) {
    assert.equal(r.bytes, plan.totalBytes, `${what}: bytes written`);
    assert.ok(r.peakJS < LIMIT, `${what}: JS heap + external memory peaked at ${r.peakJS}`);
    assert.ok(r.peakRSS - r.startRSS < LIMIT, `${what}: RSS grew by ${r.peakRSS - r.startRSS}`);
    console.log(
      `${what}: peak JS + external ${(r.peakJS / 2 ** 20).toFixed(0)} MiB, RSS ${(r.startRSS / 2 ** 20).toFixed(0)} -> ${(r.peakRSS / 2 ** 20).toFixed(0)} MiB for ${(r.inputBytes / 1e6).toFixed(0)} MB of F16`,
    );
  }
  assert.equal(one.sha, two.sha, '1 and 2 threads write the same bytes');
});
