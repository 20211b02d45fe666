// planFor against llama.cpp's published recipe snapshots (tests/fixtures/quant-snapshots, copied
// from llama.cpp; see PROVENANCE.md): the type of every tensor of twelve real models (Qwen3,
// Gemma 3, GLM-4.6V, gpt-oss-120b, Llama 3.1 70B, DeepSeek V3.1, Nemotron, Qwen3.5, Step-3.5 ...)
// for every ftype, as llama.cpp computed them without an importance matrix. And, for two of them,
// llama_model_quantize itself (the 0.4.0 oracle) on a small file with the same tensors: it agrees
// with the snapshots (were they to disagree, the oracle would win and this test would say so).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planFor, FTYPES } from '../js/model/recipe.js';
import { typeInfo } from '../js/types.js';
import { parseGGUF } from '../js/gguf-read.js';
import { snapshotFiles, readSnapshot, snapshotHeader, snapshotModel } from './lib/snapshots.js';
import { llamaQuantizeAll } from './lib/llama-oracle.js';
import { LLAMA_FTYPE } from './lib/plan-oracle.js';

const files = snapshotFiles();

test('the twelve snapshots are there', () => {
  assert.equal(files.length, 12, files.join(', '));
});

for (const file of files) {
  test(`planFor agrees with llama.cpp's snapshot ${file}`, () => {
    const s = readSnapshot(file);
    const header = snapshotHeader(s);
    assert.ok(s.sections.length >= 30, `${file}: ${s.sections.length} sections`);
    let checked = 0;
    for (const sec of s.sections) {
      const f = FTYPES[sec.ftype];
      assert.ok(f, `${file}: ftype ${sec.ftype} is not in FTYPES`);
      assert.equal(typeInfo(f.defaultType).name, sec.defaultType, `${file} [${sec.ftype}]: default type`);
      // The snapshots were made without an imatrix and without checking whether one is needed:
      // dryRun makes that a warning.
      const plan = planFor(header, { ftype: sec.ftype, dryRun: true });
      assert.equal(plan.tensors.length, header.tensors.length);
      const bad = [];
      for (const t of plan.tensors) {
        const want = sec.overrides.get(t.name) ?? sec.defaultType;
        if (typeInfo(t.to).name !== want) bad.push(`${t.name}: ${typeInfo(t.to).name} (${t.why}), llama.cpp ${want}`);
        checked++;
      }
      assert.deepEqual(bad.slice(0, 10), [], `${file} [${sec.ftype}]: ${bad.length} tensors differ`);
    }
    assert.ok(checked > 1000, `${file}: only ${checked} tensor types checked`);
  });
}

test('llama_model_quantize (0.4.0) gives the snapshots types too (qwen3-0.6b, gpt-oss-120b)', () => {
  // Ftypes that need no imatrix (the snapshots have none): the file holds every tensor of the
  // snapshot as F16 with two rows, in llama's architecture (the recipe reads only the hparams).
  const ftypes = [
    'Q4_0',
    'Q2_K',
    'Q3_K_M',
    'Q3_K_L',
    'Q4_K_S',
    'Q4_K_M',
    'Q5_K_M',
    'Q6_K',
    'IQ3_M',
    'IQ4_XS',
    'MXFP4_MOE',
  ];
  const snaps = ['qwen3-0.6b.schema', 'gpt-oss-120b.schema'].map(readSnapshot);
  const models = snaps.map(snapshotModel);
  const jobs = snaps.flatMap((s, k) => ftypes.map((f) => ({ model: models[k], ftype: LLAMA_FTYPE[f], s, f })));
  const results = llamaQuantizeAll(jobs);
  jobs.forEach(({ s, f }, k) => {
    const r = results[k];
    assert.ok(r.ok, `${s.file} ${f}: the oracle failed: ${r.log.slice(-300)}`);
    const sec = /** @type {import('./lib/snapshots.js').Section} */ (s.sections.find((x) => x.ftype === f));
    const out = parseGGUF(r.out[0]);
    const bad = [];
    for (const t of out.tensors) {
      const want = sec.overrides.get(t.name) ?? sec.defaultType;
      if (typeInfo(t.type).name !== want) bad.push(`${t.name}: oracle ${typeInfo(t.type).name}, snapshot ${want}`);
    }
    assert.deepEqual(
      bad.slice(0, 10),
      [],
      `${s.file} [${f}]: the 0.4.0 oracle and the snapshot differ on ${bad.length} tensors`,
    );
  });
});
