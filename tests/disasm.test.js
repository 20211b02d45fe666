// Reads the disassembly (wasm-objdump, from Debian's wabt) of the builds: no lane extraction or
// insertion inside any loop of a SIMD128 kernel (the scalarised code clang 14 can produce), and no
// SIMD instruction anywhere in the scalar build (it must run where SIMD128 is missing). The kernels
// are found by name in the test variant (build/test/: the packaged module exports only the public
// names; both are linked from the same objects).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** @param {string} path a .wasm file, relative to the repository */
const disasm = (path) =>
  execFileSync('wasm-objdump', ['-d', fileURLToPath(new URL(`../${path}`, import.meta.url))], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });

/** @returns {Map<string, string[]>} function name -> instruction texts */
function functions(text) {
  const out = new Map();
  let cur = null;
  for (const line of text.split('\n')) {
    const h = /^[0-9a-f]+ func\[(\d+)\](?: <([^>]+)>)?:/.exec(line);
    if (h) {
      cur = [];
      out.set(h[2] ?? `func${h[1]}`, cur);
      continue;
    }
    const bar = line.indexOf('| ');
    if (cur && bar >= 0) cur.push(line.slice(bar + 2).trim());
  }
  return out;
}

test('SIMD128 kernels have no extract_lane/replace_lane inside loops', () => {
  const fns = functions(disasm('build/test/blockquant-simd128.wasm'));
  const simd = [...fns.keys()].filter((n) => n.endsWith('__simd128'));
  assert.ok(simd.length >= 40, `found ${simd.length} SIMD128 kernels`);
  const bad = [];
  for (const name of simd) {
    const stack = [];
    for (const ins of /** @type {string[]} */ (fns.get(name))) {
      const op = ins.split(/\s+/)[0];
      if (op === 'loop' || op === 'block' || op === 'if' || op === 'try') stack.push(op);
      else if (op === 'end') stack.pop();
      else if (/(extract|replace)_lane/.test(op) && stack.includes('loop')) bad.push(`${name}: ${ins}`);
    }
  }
  assert.deepEqual(bad, [], 'lane moves in hot loops');
});

test('the scalar build has no SIMD instructions (packaged and test variant)', () => {
  for (const file of ['wasm/blockquant-scalar.wasm', 'build/test/blockquant-scalar.wasm']) {
    const simd = disasm(file)
      .split('\n')
      .filter((l) => /\| .*\b(v128|[if](8x16|16x8|32x4|64x2))\./.test(l));
    assert.deepEqual(simd.slice(0, 5), [], file);
  }
});
