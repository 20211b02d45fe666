// Where a written GGUF file's bytes go: a plain sequential stream. quantizeModel writes the header
// first (every size is known beforehand), then the tensors front to back, padding included, so no
// sink ever needs to seek. The kinds a sink may be:
//   - a function given each chunk in order (it may return a Promise, which is awaited);
//   - a WritableStream (a FileSystemWritableFileStream too): written through its writer, closed at
//     the end, aborted on an error;
//   - a Node FileHandle (fs/promises): written at its current position; the caller keeps it open;
//   - a Node Writable stream (fs.createWriteStream, a socket, standard output): written with its
//     backpressure ('drain'), ended at the end (awaiting 'finish'), destroyed on an error.
// No Node built-in is imported here: FileHandles and streams are recognised by their shape.

/**
 * A sink as quantizeModel uses it: write() each chunk in order (chunks are not touched again by
 * the writer: the callee may keep them), then close() when all is written; commit(), where there
 * is one, after every sink of the job has closed (a path sink moves its file into place then);
 * abort() on an error instead (also after close, before commit).
 * @typedef {{ write(chunk: Uint8Array): Promise<void>, close(): Promise<void>, abort(reason: unknown): Promise<void>,
 *   commit?: () => Promise<void>, name: string }} Sink
 */

/**
 * Anything toSink takes.
 * @typedef {((chunk: Uint8Array) => unknown) | WritableStream<Uint8Array> | NodeFileHandle | NodeWritable} SinkTarget
 * @typedef {{ write(b: Uint8Array, cb: (e?: Error | null) => void): boolean, end(cb?: () => void): unknown,
 *   once(ev: string, f: (...a: any[]) => void): unknown, off?(ev: string, f: (...a: any[]) => void): unknown,
 *   destroy?(e?: unknown): unknown, writableFinished?: boolean }} NodeWritable
 * @typedef {{ fd: number, write(b: Uint8Array, offset: number, length: number, position: number | null):
 *   Promise<{ bytesWritten: number }> }} NodeFileHandle
 */

/**
 * Whether a value is a sink target of one of the kinds toSink takes.
 * @param {unknown} x
 * @returns {x is SinkTarget}
 */
export function isSinkTarget(x) {
  return typeof x === 'function' || isWritableStream(x) || isFileHandle(x) || isNodeWritable(x);
}

/** @param {unknown} x @returns {x is WritableStream<Uint8Array>} */
function isWritableStream(x) {
  return !!x && typeof x === 'object' && typeof (/** @type {any} */ (x).getWriter) === 'function';
}

/** @param {unknown} x @returns {x is NodeWritable} */
function isNodeWritable(x) {
  const w = /** @type {any} */ (x);
  return (
    !!w &&
    typeof w === 'object' &&
    typeof w.write === 'function' &&
    typeof w.end === 'function' &&
    typeof w.once === 'function'
  );
}

/** @param {unknown} x @returns {x is NodeFileHandle} */
function isFileHandle(x) {
  const h = /** @type {any} */ (x);
  // A stream may have an fd too (fs.WriteStream, standard output): a FileHandle has sync() and no end().
  return (
    !!h &&
    typeof h === 'object' &&
    typeof h.fd === 'number' &&
    typeof h.write === 'function' &&
    typeof h.sync === 'function' &&
    typeof h.end !== 'function'
  );
}

/**
 * Wraps a sink target.
 * @param {SinkTarget} target
 * @param {string} [name] for messages
 * @returns {Sink}
 * @throws {TypeError} for anything else
 */
export function toSink(target, name) {
  if (typeof target === 'function') {
    const fn = target;
    return {
      name: name ?? 'the sink function',
      async write(chunk) {
        await fn(chunk);
      },
      async close() {},
      async abort() {},
    };
  }
  if (isWritableStream(target)) {
    const w = target.getWriter();
    return {
      name: name ?? 'the WritableStream',
      async write(chunk) {
        await w.ready;
        await w.write(chunk);
      },
      async close() {
        await w.close();
      },
      async abort(reason) {
        await w.abort(reason).catch(() => {});
      },
    };
  }
  if (isFileHandle(target)) {
    const fh = target;
    return {
      name: name ?? `fd ${fh.fd}`,
      async write(chunk) {
        for (let done = 0; done < chunk.length;) {
          const { bytesWritten } = await fh.write(chunk, done, chunk.length - done, null);
          if (!(bytesWritten > 0)) throw new Error(`${name ?? `fd ${fh.fd}`}: the file system took no bytes`);
          done += bytesWritten;
        }
      },
      async close() {},
      async abort() {},
    };
  }
  if (isNodeWritable(target)) {
    const ws = target;
    const label = name ?? 'the stream';
    /** @type {Error | null} */
    let failed = null;
    const onError = (/** @type {Error} */ e) => void (failed ??= e);
    ws.once('error', onError);
    return {
      name: label,
      async write(chunk) {
        if (failed) throw failed;
        await new Promise((resolve, reject) => {
          let waiting = 2;
          const done = () => void (--waiting === 0 && resolve(undefined));
          const ok = ws.write(chunk, (e) => (e ? reject(e) : done()));
          // Backpressure: past the stream's high-water mark, wait for it to drain.
          if (ok) done();
          else ws.once('drain', done);
        });
        if (failed) throw failed;
      },
      async close() {
        if (failed) throw failed;
        await new Promise((resolve, reject) => {
          ws.once('error', reject);
          ws.end(() => resolve(undefined));
        });
        ws.off?.('error', onError);
      },
      async abort(reason) {
        ws.destroy?.(reason instanceof Error ? reason : undefined);
      },
    };
  }
  throw new TypeError(
    'a sink must be a function given each chunk, a WritableStream (or FileSystemWritableFileStream), a Node FileHandle or a Node Writable stream',
  );
}
