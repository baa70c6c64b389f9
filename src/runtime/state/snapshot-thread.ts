import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { assert } from '../../util/assert.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { BufferPool, toSnapshotParts, TransferArena } from './snapshot-parts.js';
import type { SnapshotThreadMessage, SnapshotThreadReply } from './snapshot-thread-protocol.js';
import { HeldKeyedStateSnapshot, keyedSnapshotOfReply, type SnapshotHolder } from './held-keyed-state-snapshot.js';
import type { KeyedSnapshotResult } from './keyed-state-file.js';

/**
 * The snapshot thread of a process (`state.backend.hashmap.snapshot-thread`): a worker that
 * keeps a replica of every heap keyed state backend, moved forward by each snapshot's delta,
 * and assembles full snapshots from it. A full checkpoint then costs the task thread what an
 * incremental one does (capturing the changed keys), not a walk over the whole state; the
 * price is a second copy of the state, as snapshot bytes, in the worker.
 *
 * Started on first use, one per process, not keeping the process alive. If the worker dies,
 * every request in flight fails (those checkpoints are declined) and the next snapshot of
 * each backend resets its replica in a new worker.
 */
export class SnapshotThread implements SnapshotHolder {
  private static sharedThread: SnapshotThread | undefined;

  /** The process's snapshot thread. */
  static shared(): SnapshotThread {
    return (SnapshotThread.sharedThread ??= new SnapshotThread());
  }

  private worker: Worker | undefined;
  /** Bumped whenever a worker goes away: replicas reset in an earlier generation are gone. */
  generation = 0;
  private nextRequest = 1;
  private nextReplica = 1;
  private readonly pending = new Map<number, { resolve: (reply: SnapshotThreadReply & { ok: true }) => void; reject: (e: Error) => void }>();
  /** Time the worker spent on requests (for statistics and benchmarks). */
  busyMs = 0;
  /** Buffers of deltas the worker gave back. */
  readonly pool = new BufferPool();

  /** Where a delta's groups are written for the worker. */
  arena(): TransferArena {
    return new TransferArena(this.pool);
  }

  /** A replica for one backend. */
  replica(): HeapSnapshotReplica {
    return new HeapSnapshotReplica(this, this.nextReplica++);
  }

  /** Sends a request; resolves with the answer, rejects when it failed or the worker died. */
  request(message: SnapshotThreadMessage, transfer: ArrayBuffer[]): Promise<SnapshotThreadReply & { ok: true }> {
    const worker = this.start();
    const request = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.pending.set(request, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ ...message, request }, transfer);
    });
  }

  /** Sends a request nobody waits for (a failure shows at the replica's next request). */
  send(message: SnapshotThreadMessage, transfer: ArrayBuffer[]): void {
    this.request(message, transfer).catch(() => {});
  }

  release(replica: number, position: number, generation: number): void {
    if (this.worker !== undefined && generation === this.generation) this.send({ op: 'release', replica, position }, []);
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(snapshotThreadScript(), { name: 'sluice-snapshot-thread' });
    worker.unref();
    worker.on('message', (reply: SnapshotThreadReply) => {
      const p = this.pending.get(reply.request);
      if (p === undefined) return;
      this.pending.delete(reply.request);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok) {
        this.busyMs += reply.busyMs;
        if (reply.recycled !== undefined) this.pool.give(reply.recycled);
        p.resolve(reply);
      } else p.reject(new Error(`the snapshot thread failed: ${reply.error}`));
    });
    const gone = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.generation++;
      const failed = [...this.pending.values()];
      this.pending.clear();
      for (const p of failed) p.reject(new Error(`the snapshot thread ${why}; the next checkpoint snapshots on the task thread and starts a new one`));
    };
    worker.on('error', (e) => gone(`failed: ${e.message}`));
    worker.on('exit', (code) => gone(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Stops the worker (tests; a process that ends needs nothing). */
  async stop(): Promise<void> {
    const w = this.worker;
    if (w !== undefined) await w.terminate();
  }
}

/**
 * The worker's script: beside this module when it runs compiled (dist/); when it runs from
 * src/ (the tests), the compiled one in dist/, which `npm test` builds first.
 */
function snapshotThreadScript(): URL {
  const here = new URL('./snapshot-thread-main.js', import.meta.url);
  if (import.meta.url.endsWith('.js')) return here;
  const compiled = fileURLToPath(here).replace(/([\\/])src([\\/]runtime[\\/]state[\\/])/, '$1dist$2');
  if (!existsSync(compiled)) throw new Error(`the snapshot thread runs ${compiled}, which is not built: run npm run build`);
  return pathToFileURL(compiled);
}

/**
 * One backend's replica in the snapshot thread. Snapshots are taken in position order at the
 * synchronous point, but their asynchronous parts may finish in any order; each snapshot
 * takes a turn at the synchronous point and goes to the thread only after the turns before
 * it, so the replica sees resets and deltas in position order.
 */
export class HeapSnapshotReplica {
  /** The position the replica reaches once every turn taken so far went through; undefined when it must be reset. */
  private expected: number | undefined;
  /** The position of the last reset or delta sent; undefined when the chain broke. */
  private sent: number | undefined;
  private generation = -1;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly thread: SnapshotThread,
    readonly id: number,
  ) {}

  /** Whether a delta from `base` can go to the replica (else the snapshot must be full and reset it). */
  readyFor(base: number): boolean {
    return this.expected === base && this.generation === this.thread.generation;
  }

  /**
   * Takes the next turn for the snapshot at `position`: a delta over `base`, or a reset
   * (`base` undefined) with the full snapshot. `complete` sends the captured snapshot after the
   * earlier turns and resolves with the full snapshot at `position`, which with `hold` stays
   * in the snapshot thread (a HeldKeyedStateSnapshot); `abandon` gives the turn up when the
   * capture failed (the replica then needs a reset).
   */
  turn(base: number | undefined, position: number): { complete(captured: KeyedStateSnapshot, hold: boolean, arena?: TransferArena): Promise<KeyedSnapshotResult>; abandon(): void } {
    assert(base === undefined || this.readyFor(base), `a delta turn from position ${base} starts where the replica will be`);
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    this.expected = position;
    if (base === undefined) this.generation = this.thread.generation;
    const broken = (): void => {
      this.sent = undefined;
      if (this.expected === position) this.expected = undefined;
    };
    return {
      complete: async (captured, hold, arena) => {
        await previous;
        try {
          if (base === undefined) {
            assert(captured.baseCheckpointId === undefined, 'a reset sends a full snapshot');
            const parts = toSnapshotParts(captured.states, captured.timers);
            this.thread.send({ op: 'reset', replica: this.id, position, parts }, [...parts.buffers]);
            this.sent = position;
            return captured;
          }
          if (this.sent !== base || this.generation !== this.thread.generation) {
            throw new Error(`the snapshot thread's replica is not at position ${base} (an earlier snapshot failed or the thread restarted); the next checkpoint resets it`);
          }
          const parts = toSnapshotParts(captured.states, captured.timers, arena); // the delta is not read again here
          this.sent = position;
          const { keyGroupRange, maxParallelism } = captured;
          const reply = await this.thread.request({ op: 'apply', replica: this.id, base, position, parts, keyGroupRange, maxParallelism, hold }, [...parts.buffers]);
          assert(reply.keyGroupOffsets !== undefined, 'the snapshot thread answers a delta with the layout of the full snapshot');
          if (hold) {
            assert(reply.sizeBytes !== undefined, 'the snapshot thread answers a held snapshot with its size');
            const ref = { holder: this.thread, replica: this.id, position, generation: this.generation };
            return new HeldKeyedStateSnapshot(ref, keyGroupRange, maxParallelism, reply.sizeBytes, reply.keyGroupOffsets);
          }
          assert(reply.parts !== undefined, 'the snapshot thread answers a delta with the full snapshot');
          return keyedSnapshotOfReply(reply.parts, reply.keyGroupOffsets, keyGroupRange, maxParallelism);
        } catch (e) {
          broken();
          throw e;
        } finally {
          release();
        }
      },
      abandon: () => {
        void previous.then(() => {
          broken();
          release();
        });
      },
    };
  }

  /**
   * The backend is gone: the thread forgets the replica once the snapshots already taken went
   * through (a subtask may close while its last checkpoint's asynchronous part is running).
   */
  drop(): void {
    void this.tail.then(() => {
      if (this.generation === this.thread.generation) this.thread.send({ op: 'drop', replica: this.id }, []);
    });
  }
}
