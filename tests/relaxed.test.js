// The relaxed-SIMD build (wasm/blockquant-relaxed.wasm). In Node: selection. Node 20 refuses relaxed
// SIMD without a flag and computes the relaxed dot wrong with one, so 'auto' must end on another
// build there and 'relaxed' must throw the reason, with and without the flag (the probe, not
// validation alone, has to refuse). In headless Chromium: tests/relaxed/page.js loads the build
// through the public API, checks that 'auto' picks it, and checks every __relaxed kernel against
// the build's __simd128 kernel (bit for bit), its __ref kernel (within 1e-5 of the sum of |terms|)
// and, for matvecs, each row against the relaxed dot; the kernels it must find are the RELAXED
// lines of src/kernels.inc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../js/index-node.js';
import { judgeProbe, relaxedUnsupported } from '../js/loader.js';
import { runPage, runPageFirefox } from './relaxed/run.js';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const SEED = Number(process.env.BQ_SEED ?? (Date.now() % 100000) + 1);

test('auto picks relaxed only where the probe passes; on Node 20 it does not', async () => {
  const why = relaxedUnsupported();
  if (NODE_MAJOR === 20) assert.match(why, /relaxed SIMD/);
  const bq = await init();
  assert.equal(bq.backend === 'relaxed', why === '', `auto gave ${bq.backend}; probe: ${why || 'passed'}`);
});

/** What a conforming runtime computes for the probe: the i32 dot-add's four lanes, then the i16
 * dot's eight, with b's bytes of 128 and up read as unsigned or as signed. Worked out here from
 * the spec's definitions, not by the code under test. */
function probeTruth(/** @type {number[]} */ a, /** @type {number[]} */ b, /** @type {number[]} */ c, signed = false) {
  const bv = b.map((v) => (signed && v > 127 ? v - 256 : v));
  const pairs = Array.from({ length: 8 }, (_, i) => a[2 * i] * bv[2 * i] + a[2 * i + 1] * bv[2 * i + 1]);
  const quads = Array.from({ length: 4 }, (_, i) => pairs[2 * i] + pairs[2 * i + 1] + c[i]);
  return [...quads, ...pairs];
}

test('the probe covers both relaxed dots the build uses, and names the one a runtime gets wrong', () => {
  assert.equal(
    judgeProbe((a, b, c) => probeTruth(a, b, c)),
    '',
  );
  assert.equal(
    judgeProbe((a, b, c) => probeTruth(a, b, c, true)),
    '',
  );
  // Node 20's doubled i32 sums (what it returns with --experimental-wasm-relaxed-simd).
  const doubled = judgeProbe((a, b, c) => probeTruth(a, b, c).map((v, i) => (i < 4 ? 2 * v : v)));
  assert.match(doubled, /computes i32x4\.relaxed_dot_i8x16_i7x16_add_s wrong/);
  // A wrong i16 dot alone: saturating pair sums at +-2^14, or the lanes doubled.
  const sat = judgeProbe((a, b, c) =>
    probeTruth(a, b, c).map((v, i) => (i < 4 ? v : Math.max(-16384, Math.min(16383, v)))),
  );
  assert.match(sat, /computes i16x8\.relaxed_dot_i8x16_i7x16_s wrong/);
  const twice = judgeProbe((a, b, c) => probeTruth(a, b, c).map((v, i) => (i < 4 ? v : 2 * v)));
  assert.match(twice, /computes i16x8\.relaxed_dot_i8x16_i7x16_s wrong/);
  // A runtime that returns only the i32 dot (an older probe's shape) is not taken as passing.
  assert.notEqual(
    judgeProbe((a, b, c) => probeTruth(a, b, c).slice(0, 4)),
    '',
  );
});

test(
  "backend 'relaxed' throws the reason where the probe fails",
  { skip: relaxedUnsupported() === '' && 'relaxed runs here' },
  async () => {
    await assert.rejects(init({ backend: 'relaxed' }), /backend relaxed requested, but this runtime does not validate/);
    // The build given as bytes is refused too (here it does not even compile).
    const bytes = readFileSync(new URL('../wasm/blockquant-relaxed.wasm', import.meta.url));
    await assert.rejects(init({ module: bytes }));
  },
);

test(
  'Node 20 with --experimental-wasm-relaxed-simd: validates, computes the dot wrong, and is refused',
  { skip: NODE_MAJOR !== 20 && 'Node 20 only' },
  () => {
    const script = `
    import { init } from './js/index-node.js';
    import { relaxedUnsupported } from './js/loader.js';
    const out = { why: relaxedUnsupported(), auto: (await init()).backend };
    try { await init({ backend: 'relaxed' }); out.named = 'accepted'; } catch (e) { out.named = e.message; }
    const bytes = (await import('node:fs')).readFileSync('wasm/blockquant-relaxed.wasm');
    try { await init({ module: bytes }); out.given = 'accepted'; } catch (e) { out.given = e.message; }
    const { instantiate, relaxedProbeThrough } = await import('./js/loader.js');
    out.through = relaxedProbeThrough(await instantiate(new WebAssembly.Module(bytes)));
    console.log(JSON.stringify(out));`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script], {
        cwd: new URL('..', import.meta.url),
        encoding: 'utf8',
      }),
    );
    assert.match(out.why, /computes i32x4\.relaxed_dot_i8x16_i7x16_add_s wrong/);
    assert.equal(out.auto, 'simd128');
    assert.match(out.named, /backend relaxed requested, but this runtime computes/);
    assert.match(out.given, /the given module is the relaxed build, but this runtime computes/);
    // The build's own probe export, run in the same wrong implementation, refuses it as well.
    assert.match(out.through, /computes i32x4\.relaxed_dot_i8x16_i7x16_add_s wrong/);
  },
);

const WANT = () =>
  [
    ...readFileSync(new URL('../src/kernels.inc', import.meta.url), 'utf8').matchAll(
      /^BQ_(DOT|MATVEC)\((\w+), (\w+), RELAXED\)/gm,
    ),
  ].map((m) => `bq_${m[2]}_${m[1].toLowerCase()}_${m[3]}__relaxed`);

/**
 * What a browser's run of tests/relaxed/page.js must report.
 * @param {any} r
 * @param {string} browser
 */
function assertPage(r, browser) {
  const want = WANT();
  assert.ok(want.length >= 10, `kernels.inc lists ${want.length} RELAXED kernels`);
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.backend, 'relaxed');
  assert.equal(r.probeThrough, '', "the build's bq_relaxed_probe passes too");
  assert.equal(r.auto, 'relaxed', `${browser} runs relaxed SIMD correctly, so 'auto' picks it`);
  assert.deepEqual([...r.kernels].sort(), [...want].sort());
  assert.deepEqual(r.failures, [], `seed ${SEED}`);
  // At least one check per case (page.js: 37 cases for a 32-value pair, 22 for a K pair) and per
  // matvec row (at least 1 per case, 3 in its largest one).
  const least = want
    .map((k) => (/_q8_K__/.test(k) ? 22 : 37) + (/_matvec_/.test(k) ? 2 : 0))
    .reduce((s, n) => s + n, 0);
  assert.ok(r.checks >= least, `${r.checks} checks, at least ${least}`);
  // Every quantizer of the relaxed build wrote the simd128 build's bytes (page.js checkQuantize).
  assert.ok(r.quantized >= 30, `${r.quantized} quantizers compared with the simd128 build`);
}

test('every relaxed kernel in headless Chromium, against simd128 (bit-exact), the reference and its dot', async () => {
  const r = await runPage(`?seed=${SEED}`);
  assert.deepEqual(r.pageErrors, []);
  assertPage(r, 'Chromium');
});

// Firefox ESR (153) also passes the probe, so 'auto' loads the relaxed build there too.
test('every relaxed kernel in headless Firefox, the same checks', async () => {
  assertPage(await runPageFirefox(`?seed=${SEED}`), 'Firefox');
});

// Deno and Bun pass the probe as well (Bun's JavaScriptCore included), so 'auto' loads it there.
for (const [rt, args] of [
  ['deno', ['run', '--no-lock', '--allow-read']],
  ['bun', []],
]) {
  test(`every relaxed kernel in ${rt}, the same checks`, () => {
    const bin = fileURLToPath(new URL(`../node_modules/.bin/${rt}`, import.meta.url));
    const out = execFileSync(
      bin,
      [...args, fileURLToPath(new URL('./relaxed/script.mjs', import.meta.url)), String(SEED)],
      {
        encoding: 'utf8',
        env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
      },
    );
    assertPage(JSON.parse(out.trim().split('\n').pop() ?? ''), rt);
  });
}

// Cross-origin isolated, Chromium passes the probe: init({ threads: 2 }) runs the relaxed threads
// build, whose matvecs (workers' scratch blocks included) give one relaxed thread's bits.
test('init({ threads: 2 }) in headless Chromium runs the relaxed threads build, bit-exact with one relaxed thread', async () => {
  const r = await runPage('', 'threads.html');
  assert.deepEqual(r.pageErrors, []);
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.isolated, true);
  assert.equal(r.backend, 'relaxed', r.threadsError);
  assert.equal(r.threads, 2, r.threadsError);
  assert.deepEqual(r.asked, { backend: 'relaxed', threads: 2 }, "init({ threads: 2, backend: 'relaxed' })");
  assert.deepEqual(r.simd128, { backend: 'simd128', threads: 2 }, "init({ threads: 2, backend: 'simd128' })");
  for (const t of ['q4_0', 'q4_K']) assert.equal(r.types[t].rowsDiffering, 0, `${t}: rows that differ`);
});
