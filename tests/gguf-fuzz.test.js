// Seeded mutation fuzz of the GGUF reader through its three entry points: parseGGUF(bytes),
// openGGUF(Blob) and openGGUF(custom async source). Each mutant of a corpus of valid files either
// decodes exactly as the independent decoder in tests/lib/gguf-oracle.js does (kv, tensor infos,
// data offset, tensor bytes), or is refused with a GGUFError (string code, numeric offset) that the
// oracle agrees with (only LIMIT, the memory budget, may refuse what the oracle reads).
// BQ_SEED=<seed> replays a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF, openGGUF, GGUFError } from '../js/node.js';
import { corpus, mutate } from './lib/gguf-mutate.js';
import { oracleDecode } from './lib/gguf-oracle.js';
import { SEED, rng } from './lib/helpers.js';

const CASES = 5400; // 1800 per entry point
const OPT = { allowV1: true }; // the corpus has version 1 files

/** A kv entry as comparable data (typed arrays kept as typed arrays: deepEqual checks their class). */
function sameDecode(got, want, tensorBytes) {
  assert.equal(got.version, want.version, 'version');
  assert.equal(got.alignment, want.alignment, 'alignment');
  assert.equal(got.dataOffset, want.dataOffset, 'dataOffset');
  assert.equal(got.littleEndian, want.littleEndian, 'littleEndian');
  assert.deepEqual(got.kv, want.kv, 'kv');
  assert.deepEqual(
    [...got.metadata.keys()],
    want.kv.map((e) => e.key),
    'metadata keys',
  );
  // The documented TensorInfo fields (openGGUF may add its own, such as a shard number).
  // (An unreadable tensor, of an unknown type or in the pre-release Q2_0 layout, as its code.)
  const info = ({ name, type, dims, offset, nElements, byteLength, layout, unreadable }) => ({
    name,
    type,
    dims,
    offset,
    nElements,
    byteLength,
    ...(layout ? { layout } : {}),
    ...(unreadable ? { unreadable: unreadable.code } : {}),
  });
  assert.deepEqual(got.tensors.map(info), want.tensors, 'tensor infos');
  // Reading an unreadable tensor throws its GGUFError (at once or as a rejection).
  const bytesOf = async (t) => tensorBytes(t);
  return Promise.all(
    got.tensors.map((t, i) =>
      bytesOf(t).then(
        (b) => [b, want.data[i]],
        (e) => [e, want.data[i]],
      ),
    ),
  ).then((pairs) => {
    for (const [b, w] of pairs) {
      if (w === null)
        assert.ok(b instanceof GGUFError && /UNKNOWN_GGML_TYPE|PRERELEASE_Q2_0/.test(b.code), 'unreadable');
      else assert.deepEqual(new Uint8Array(b), w, 'tensor bytes');
    }
  });
}

const entries = {
  parseGGUF: (m) => parseGGUF(m, OPT),
  blob: (m) => openGGUF(new Blob([m]), OPT),
  custom: (m) =>
    openGGUF(
      {
        size: m.length,
        name: 'fuzz',
        read: async (o, n) => m.slice(o, o + n),
      },
      OPT,
    ),
};

test(`seeded mutation fuzz of parseGGUF, openGGUF(Blob) and openGGUF(custom source): ${CASES} mutants, seed ${SEED}`, async (t) => {
  const r = rng(SEED);
  const files = corpus(OPT);
  const names = Object.keys(entries);
  const tally = { parsed: 0, refused: 0, limit: 0 };
  for (let i = 0; i < CASES; i++) {
    const entry = names[i % names.length];
    const src = files[Math.floor(r.next() * files.length)];
    const { m, kinds } = mutate(r, files, src, OPT);
    const want = oracleDecode(m, OPT);
    const where = `seed ${SEED}, case ${i}, ${entry}, mutations ${kinds.join('+')}, ${m.length} bytes`;
    let got;
    try {
      got = await entries[entry](m);
    } catch (e) {
      if (!(e instanceof GGUFError)) throw new Error(`${where}: threw ${e?.stack ?? e}`);
      assert.equal(typeof e.code, 'string', where);
      assert.equal(typeof e.offset, 'number', where);
      if (e.code === 'LIMIT') tally.limit++;
      else assert.ok(want.error !== undefined, `${where}: refused ${e.code} (${e.message}) a file the oracle reads`);
      tally.refused++;
      continue;
    }
    assert.equal(want.error, undefined, `${where}: accepted a file the oracle refuses (${want.error})`);
    try {
      await sameDecode(got, want, got.tensorBytes ?? got.readTensor);
    } catch (e) {
      throw new Error(`${where}: ${e.message}`);
    }
    tally.parsed++;
  }
  t.diagnostic(
    `seed ${SEED}: ${tally.parsed} decoded like the oracle, ${tally.refused} refused (${tally.limit} LIMIT)`,
  );
  assert.ok(tally.parsed > CASES / 20 && tally.refused > CASES / 5, JSON.stringify(tally));
});
