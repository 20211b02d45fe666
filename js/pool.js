// The worker pool of the threads build: a fixed set of workers on one shared WebAssembly.Memory,
// each running the lists of kernel calls it is sent (js/worker-core.js), the calling thread taking
// its share of the same work (js/threads.js's ThreadedCodec uses it).

import { CTL, kernelNames, run } from './worker-core.js';

/** How long the main thread polls for a worker's last chunk before it waits on the event loop (ms). */
const POLL_MS = 1;

/**
 * Atomics.waitAsync where the runtime has it (ES2024; not in this project's type library).
 * @type {((a: Int32Array, index: number, value: number) => { async: boolean, value: Promise<string> | string }) | undefined}
 */
const waitAsync = /** @type {any} */ (Atomics).waitAsync;

/**
 * What the pool needs of a worker, whatever the runtime (js/threads-node.js for Node; spawnBrowser
 * below): post a message, hear replies and failures, stop it; ref/unref (Node) let the process
 * exit while the pool is idle.
 * @typedef {{ post(message: import('./worker-core.js').WorkerRequest): void,
 *   onMessage(f: (reply: import('./worker-core.js').WorkerReply) => void): void,
 *   onError(f: (error: Error) => void): void, terminate(): void, ref?(): void, unref?(): void }} WorkerLike
 * @typedef {() => WorkerLike} Spawn
 * @typedef {[string, ...number[]]} KernelCall
 */

/**
 * How many of the calls, from the first, fit in one control block's job area.
 * @param {KernelCall[]} list
 */
function fits(list) {
  const room = CTL.BYTES / 4 - CTL.JOB;
  let used = 0,
    c = 0;
  while (c < list.length && used + list[c].length + 1 <= room) used += list[c++].length + 1;
  return c;
}

/** A fixed set of workers on one shared memory, each running the kernel calls it is sent. */
export class Pool {
  /** @type {WorkerLike[]} */
  #workers = [];
  /** @type {Map<number, { resolve: () => void, reject: (e: Error) => void }>} */
  #pending = new Map();
  #next = 1;
  /** @type {Error | null} set once a worker fails or the pool is closed; every later run rejects */
  #dead = null;
  /** Rejects when the pool dies (a worker failed, or close()): every Atomics round races it. */
  /** @type {Promise<never>} */
  #death;
  /** @type {(e: Error) => void} */
  #die = () => {};
  /** The Atomics protocol (js/worker-core.js): each worker's control block, or none (messages). */
  /** @type {{ i32: Int32Array, u32: Uint32Array, seq: number }[] | null} */
  #ctl = null;
  /** @type {Map<string, number>} kernel name -> index, for the Atomics protocol */
  #index = new Map();

  constructor() {
    this.#death = new Promise((_, reject) => (this.#die = reject));
    this.#death.catch(() => undefined);
  }

  /**
   * Starts n workers and initialises each with its own stack, TLS and scratch block.
   * @param {number} n
   * @param {Spawn} spawn
   * @param {WebAssembly.Module} module the threads build
   * @param {WebAssembly.Memory} memory the shared memory the main instance uses
   * @param {{ stack: number, tls: number, scratch: number, ctl: number }[]} blocks one per worker, in
   *   memory; ctl: a control block of CTL.BYTES for the Atomics protocol, used where
   *   Atomics.waitAsync exists (0: messages)
   * @returns {Promise<Pool>}
   * @throws {Error} when a worker cannot start or initialise (the others are stopped)
   */
  static async start(n, spawn, module, memory, blocks) {
    const pool = new Pool();
    const atomics = typeof waitAsync === 'function' && blocks.every((b) => b.ctl > 0);
    if (atomics) {
      kernelNames(module).forEach((name, i) => pool.#index.set(name, i));
      pool.#ctl = blocks.map((b) => {
        const i32 = new Int32Array(memory.buffer, b.ctl, CTL.BYTES / 4);
        i32.fill(0);
        return { i32, u32: new Uint32Array(memory.buffer, b.ctl, CTL.BYTES / 4), seq: 0 };
      });
    }
    try {
      await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const w = spawn();
          pool.#workers.push(w);
          return new Promise((resolve, reject) => {
            let ready = false;
            w.onMessage((m) => {
              if (!ready) {
                ready = true;
                if (m.type === 'ready') resolve(undefined);
                else
                  reject(
                    new Error(`blockquant worker ${i} failed to start: ${m.type === 'error' ? m.message : m.type}`),
                  );
                return;
              }
              pool.#reply(m);
            });
            w.onError((e) => {
              if (!ready) {
                ready = true;
                reject(e);
              }
              pool.#fail(new Error(`blockquant worker ${i} failed: ${e.message}`, { cause: e }));
            });
            w.post({ type: 'init', module, memory, ...blocks[i], ctl: atomics ? blocks[i].ctl : 0 });
          });
        }),
      );
    } catch (e) {
      pool.close();
      throw e;
    }
    pool.#idle();
    return pool;
  }

  /** Number of workers. */
  get size() {
    return this.#workers.length;
  }

  /** @param {import('./worker-core.js').WorkerReply} m */
  #reply(m) {
    if (m.type === 'ready') return;
    const p = this.#pending.get(m.id);
    if (!p) return;
    this.#pending.delete(m.id);
    if (m.type === 'done') p.resolve();
    else p.reject(new Error(m.message));
    if (this.#pending.size === 0) this.#idle();
  }

  /** @param {Error} e */
  #fail(e) {
    if (this.#dead) return;
    this.#dead = e;
    this.#die(e);
    for (const p of this.#pending.values()) p.reject(e);
    this.#pending.clear();
    this.close();
  }

  /** Lets a Node process exit while no work is pending. */
  #idle() {
    for (const w of this.#workers) w.unref?.();
  }

  /**
   * Runs calls[i] on worker i (an empty list: that worker idles); resolves when all are done.
   * @param {KernelCall[][]} calls at most size lists
   * @returns {Promise<void>}
   * @throws {Error} (rejects) a kernel's failure or trap, a worker that died, a closed pool
   */
  async run(calls) {
    if (this.#dead) throw this.#dead;
    /** @type {Promise<void>[]} */
    const done = [];
    if (this.#ctl) {
      // Jobs longer than a control block go in several rounds.
      const cut = calls.map(fits);
      if (calls.some((list, i) => cut[i] < list.length)) {
        if (cut.some((c, i) => c === 0 && calls[i].length))
          throw new Error('blockquant: a kernel call too long for the control block');
        await this.run(calls.map((list, i) => list.slice(0, cut[i])));
        return this.run(calls.map((list, i) => list.slice(cut[i])));
      }
      calls.forEach((list, i) => {
        if (list.length) done.push(this.#post(i, list));
      });
    } else
      calls.forEach((list, i) => {
        if (list.length) done.push(this.#message(i, list));
      });
    try {
      await this.#settle(done);
    } finally {
      if (this.#pending.size === 0) this.#idle();
    }
  }

  /**
   * Runs a shared round: the same claimed calls (js/worker-core.js: '@' + kernel, the units of
   * each job taken chunk by chunk from an atomic counter) on every worker and on the calling
   * thread, which runs them with local() right after waking the workers. A worker that has not
   * woken by the time local() returned finds nothing left: the round is taken back from it
   * (Atomics protocol) instead of waiting for its wake. Resolves when every worker that took part
   * is done.
   * @param {KernelCall[]} calls claimed calls only
   * @param {(calls: KernelCall[]) => void} local runs claimed calls on the calling thread's instance
   * @returns {Promise<void>}
   * @throws {Error} (rejects) local()'s or a worker's failure, a worker that died, a closed pool
   */
  async share(calls, local) {
    if (this.#dead) throw this.#dead;
    if (calls.some((c) => c[0][0] !== '@')) throw new Error('blockquant: a shared round takes claimed calls only');
    const ctl = this.#ctl;
    if (ctl) {
      const c = fits(calls);
      if (c === 0) throw new Error('blockquant: a kernel call too long for the control block');
      if (c < calls.length) {
        // Claimed calls are independent: the rest in later rounds.
        await this.share(calls.slice(0, c), local);
        return this.share(calls.slice(c), local);
      }
    }
    /** @type {Promise<void>[]} */
    const done = [];
    /** @type {number[]} */
    const seqs = [];
    this.#workers.forEach((_, i) => (ctl ? seqs.push(this.#send(i, calls)) : done.push(this.#message(i, calls))));
    /** @type {unknown} */
    let failed = null;
    try {
      local(calls);
    } catch (e) {
      failed = e;
    }
    if (ctl)
      seqs.forEach((seq, i) => {
        // Still posted (the worker has not taken it): take it back; else wait until it is done.
        if (Atomics.compareExchange(ctl[i].i32, CTL.GATE, seq, 0) !== seq) done.push(this.#wait(i, seq));
      });
    try {
      await this.#settle(done);
    } finally {
      if (this.#pending.size === 0) this.#idle();
    }
    if (failed) throw failed;
  }

  /**
   * Sends a job to worker i as a message (the protocol where Atomics.waitAsync is missing).
   * @param {number} i
   * @param {KernelCall[]} list
   * @returns {Promise<void>} settles with the worker's reply
   */
  #message(i, list) {
    const id = this.#next++;
    const w = this.#workers[i];
    w.ref?.();
    /** @type {Promise<void>} */
    const reply = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    w.post({ type: 'run', id, calls: list });
    return reply;
  }

  /**
   * Writes a job into worker i's control block and wakes it.
   * @param {number} i
   * @param {KernelCall[]} list
   * @returns {number} the round's number, for #wait
   */
  #send(i, list) {
    const c = /** @type {{ i32: Int32Array, u32: Uint32Array, seq: number }[]} */ (this.#ctl)[i];
    this.#workers[i].ref?.();
    let p = CTL.JOB;
    for (const [name, ...args] of list) {
      const claimed = name[0] === '@';
      const k = this.#index.get(claimed ? name.slice(1) : name);
      if (k === undefined) throw new Error(`blockquant worker: no kernel ${name}`);
      c.u32[p] = claimed ? (k | 0x80000000) >>> 0 : k;
      c.u32[p + 1] = args.length;
      c.u32.set(args, p + 2);
      p += 2 + args.length;
    }
    c.i32[CTL.NCALLS] = list.length;
    const seq = ++c.seq;
    Atomics.store(c.i32, CTL.GATE, seq);
    Atomics.store(c.i32, CTL.SEQ, seq);
    Atomics.notify(c.i32, CTL.SEQ);
    return seq;
  }

  /**
   * Resolves when worker i has done round seq; rejects with its failure.
   * @param {number} i
   * @param {number} seq
   * @returns {Promise<void>}
   */
  async #wait(i, seq) {
    const c = /** @type {{ i32: Int32Array, u32: Uint32Array, seq: number }[]} */ (this.#ctl)[i];
    // The worker is usually on its last chunk: poll briefly before handing the wait to the event
    // loop, whose wake costs more than a chunk.
    const until = performance.now() + POLL_MS;
    while (Atomics.load(c.i32, CTL.DONE) !== seq && performance.now() < until);
    // A wake may be stale: a worker that found nothing left to claim finishes a round before the
    // main thread waits, and its notify can then land on the next round's wait. Wait until DONE
    // is this round.
    for (let v; (v = Atomics.load(c.i32, CTL.DONE)) !== seq;) {
      const w = /** @type {NonNullable<typeof waitAsync>} */ (waitAsync)(c.i32, CTL.DONE, v);
      if (w.async) await Promise.race([w.value, this.#death]);
      if (this.#dead) throw this.#dead;
    }
    if (c.i32[CTL.STATUS] !== 0) {
      // A copy: TextDecoder takes no views of shared memory.
      const bytes = new Uint8Array(c.i32[CTL.MSGLEN]);
      bytes.set(new Uint8Array(c.i32.buffer, c.i32.byteOffset + CTL.MSG * 4, bytes.length));
      throw new Error(new TextDecoder().decode(bytes));
    }
  }

  /**
   * Writes a job into worker i's control block and wakes it; resolves when it is done.
   * @param {number} i
   * @param {KernelCall[]} list
   * @returns {Promise<void>}
   */
  #post(i, list) {
    return this.#wait(i, this.#send(i, list));
  }

  /**
   * Waits for every promise; then throws the first failure.
   * @param {Promise<void>[]} done
   */
  async #settle(done) {
    // All settled before any error is reported: no worker may still write into memory the next
    // call reuses.
    const results = await Promise.allSettled(done);
    const bad = results.find((r) => r.status === 'rejected');
    if (bad) throw /** @type {PromiseRejectedResult} */ (bad).reason;
  }

  /** Stops the workers; pending and later runs reject. Idempotent. */
  close() {
    if (!this.#dead) this.#dead = new Error('blockquant: the worker pool was closed');
    this.#die(this.#dead);
    for (const p of this.#pending.values()) p.reject(this.#dead);
    this.#pending.clear();
    for (const w of this.#workers) w.terminate();
    this.#workers = [];
  }
}
