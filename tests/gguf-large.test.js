// A sparse file over 4 GB, opened by path through the Node entry point: offsets above 2^32 are
// exact and reads land on the right bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, writeSync, ftruncateSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGGUF, GGMLType, GGUFValueType as VT } from '../js/node.js';
import { Bytes } from './lib/gguf-bytes.js';

test('a sparse 5 GiB GGUF file: offsets above 2^32', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bq-large-'));
  const path = join(dir, 'big.gguf');
  try {
    const nA = 2 ** 30 + 2 ** 28; // 1.25 Gi F32 values = 5 GiB
    const w = new Bytes().header(3, 2, 1);
    w.str('general.name').u32(VT.STRING).str('sparse');
    w.tensor('a', [2 ** 20, nA / 2 ** 20], GGMLType.F32, 0);
    w.tensor('b', [8], GGMLType.F32, nA * 4);
    w.padTo(32);
    const header = w.bytes();
    const bOffset = header.length + nA * 4;
    const fd = openSync(path, 'w');
    writeSync(fd, header, 0, header.length, 0);
    writeSync(fd, new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer), 0, 32, bOffset);
    const tail = new Uint8Array(new Float32Array([42]).buffer);
    writeSync(fd, tail, 0, 4, header.length + nA * 4 - 4); // the last value of a
    ftruncateSync(fd, bOffset + 32);
    closeSync(fd);

    const f = await openGGUF(path);
    try {
      assert.equal(f.tensors[1].offset, 5 * 2 ** 30);
      assert.ok(f.dataOffset + f.tensors[1].offset > 2 ** 32);
      assert.equal(f.tensors[0].byteLength, 5 * 2 ** 30);
      assert.deepEqual(new Float32Array((await f.readTensor('b')).buffer), new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]));
      const last = await f.readRows('a', nA / 2 ** 20 - 1, 1);
      assert.equal(last.length, 2 ** 22);
      assert.equal(new Float32Array(last.buffer)[2 ** 20 - 1], 42);
    } finally {
      await f.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
