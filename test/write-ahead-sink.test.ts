import { CountPerKey, countReference } from './support/counting-job.js';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { SinkWriter, SinkWriterContext } from '../src/api/sink.js';
import {
  END_OF_INPUT_CHECKPOINT_ID,
  InMemoryCheckpointCommitter,
  WriteAheadSink,
  type CheckpointCommitter,
  type PendingCheckpointValues,
} from '../src/api/write-ahead-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';

/** An external system without transactions: what was sent is what readers see. */
class Store<T> {
  readonly rows: T[] = [];
  /** Every write: subtask, checkpoint id, number of records. */
  readonly sends: [subtask: number, checkpointId: number, records: number][] = [];
}

class StoreSink<T> extends WriteAheadSink<T> {
  /** sendValues answers false this many times (the external system was unavailable). */
  refusals = 0;

  constructor(
    readonly store: Store<T>,
    committer: CheckpointCommitter,
    private readonly sendDelayMs = 0,
  ) {
    super(committer);
  }

  async sendValues(values: readonly T[], checkpointId: number, subtask: number): Promise<boolean> {
    if (this.sendDelayMs > 0) await new Promise((r) => setTimeout(r, this.sendDelayMs));
    if (this.refusals > 0) {
      this.refusals--;
      return false;
    }
    this.store.rows.push(...values);
    this.store.sends.push([subtask, checkpointId, values.length]);
    return true;
  }
}

function ctx(subtaskIndex: number, attemptNumber = 0, checkpointing = true, parallelism = 1): SinkWriterContext {
  return { subtaskIndex, parallelism, attemptNumber, checkpointing };
}

function writeAll<T>(w: SinkWriter<T>, values: readonly T[]): void {
  for (const v of values) void w.write(v, undefined);
}

function checkpoint<T>(w: SinkWriter<T>, id: number): PendingCheckpointValues<T>[] {
  void w.prepareCommit?.(id);
  return (w.snapshotState?.(id) ?? []) as PendingCheckpointValues<T>[];
}

describe('WriteAheadSink: the write-ahead contract', () => {
  it('keeps the records of a checkpoint in its state and writes them when it completes, once', async () => {
    const store = new Store<string>();
    const committer = new InMemoryCheckpointCommitter();
    const w = await new StoreSink(store, committer).createWriter(ctx(0), []);
    writeAll(w, ['a', 'b']);
    expect(checkpoint(w, 1)).toEqual([{ checkpointId: 1, subtask: 0, values: ['a', 'b'] }]);
    writeAll(w, ['c']);
    const s2 = checkpoint(w, 2);
    expect(s2).toEqual([
      { checkpointId: 1, subtask: 0, values: ['a', 'b'] },
      { checkpointId: 2, subtask: 0, values: ['c'] },
    ]);
    expect(JSON.parse(JSON.stringify(s2))).toEqual(s2); // plain data
    expect(store.rows).toEqual([]);

    await w.notifyCheckpointComplete!(1);
    expect(store.rows).toEqual(['a', 'b']);
    expect(committer.committedCheckpoints(0)).toEqual([1]);
    await w.notifyCheckpointComplete!(1);
    expect(store.rows).toEqual(['a', 'b']);
    await w.notifyCheckpointComplete!(2);
    expect(store.rows).toEqual(['a', 'b', 'c']);
    expect(checkpoint(w, 3)).toEqual([]);
    expect(store.sends).toEqual([
      [0, 1, 2],
      [0, 2, 1],
    ]);
    await w.close!();
  });

  it('a replay after a crash writes the uncommitted checkpoints of the restored state, and the committed ones not again', async () => {
    const store = new Store<string>();
    const committer = new InMemoryCheckpointCommitter();
    const w1 = await new StoreSink(store, committer).createWriter(ctx(0), []);
    writeAll(w1, ['a', 'b']);
    checkpoint(w1, 1);
    writeAll(w1, ['c']);
    const s2 = checkpoint(w1, 2); // holds checkpoints 1 and 2
    await w1.notifyCheckpointComplete!(1); // written and committed
    // Crash before checkpoint 2's notification. A new process restores checkpoint 2 (complete).
    const w2 = await new StoreSink(store, committer).createWriter(ctx(0, 1), s2);
    expect(store.rows).toEqual(['a', 'b', 'c']);
    expect(committer.committedCheckpoints(0)).toEqual([1, 2]);
    // And again from the same state (e.g. a second failure before the next checkpoint): nothing is written.
    const w3 = await new StoreSink(store, committer).createWriter(ctx(0, 2), s2);
    expect(store.rows).toEqual(['a', 'b', 'c']);
    writeAll(w3, ['d']);
    checkpoint(w3, 3);
    await w3.notifyCheckpointComplete!(3);
    expect(store.rows).toEqual(['a', 'b', 'c', 'd']);
    expect(store.sends.map(([s, id]) => `${s}/${id}`)).toEqual(['0/1', '0/2', '0/3']);
    await w2.close!();
    await w3.close!();
  });

  it('records of another subtask (state moved at a rescale) keep their subtask for the committer', async () => {
    const store = new Store<string>();
    const committer = new InMemoryCheckpointCommitter();
    committer.commitCheckpoint(1, 4);
    const restored: PendingCheckpointValues<string>[] = [
      { checkpointId: 5, subtask: 1, values: ['x'] },
      { checkpointId: 4, subtask: 1, values: ['already'] },
      { checkpointId: 5, subtask: 2, values: ['y'] },
    ];
    const w = await new StoreSink(store, committer).createWriter(ctx(0, 1, true, 2), restored);
    expect(store.rows).toEqual(['x', 'y']);
    expect(store.sends).toEqual([
      [1, 5, 1],
      [2, 5, 1],
    ]);
    expect(committer.committedCheckpoints(1)).toEqual([4, 5]);
    expect(committer.committedCheckpoints(2)).toEqual([5]);
    expect(committer.committedCheckpoints(0)).toEqual([]);
    await w.close!();
  });

  it('an aborted checkpoint: its records are written with the next completed one, in order', async () => {
    const store = new Store<string>();
    const committer = new InMemoryCheckpointCommitter();
    const w = await new StoreSink(store, committer).createWriter(ctx(0), []);
    writeAll(w, ['a']);
    checkpoint(w, 1);
    await w.notifyCheckpointAborted?.(1);
    writeAll(w, ['b']);
    checkpoint(w, 2);
    expect(store.rows).toEqual([]);
    await w.notifyCheckpointComplete!(2);
    expect(store.rows).toEqual(['a', 'b']);
    expect(store.sends).toEqual([
      [0, 1, 1],
      [0, 2, 1],
    ]);
  });

  it('sendValues answering false keeps the records (in the state too) and retries at the next completion', async () => {
    const store = new Store<string>();
    const sink = new StoreSink(store, new InMemoryCheckpointCommitter());
    const w = await sink.createWriter(ctx(0), []);
    writeAll(w, ['a']);
    checkpoint(w, 1);
    sink.refusals = 1;
    await w.notifyCheckpointComplete!(1);
    expect(store.rows).toEqual([]);
    writeAll(w, ['b']);
    expect(checkpoint(w, 2).map((p) => p.checkpointId)).toEqual([1, 2]);
    await w.notifyCheckpointComplete!(2);
    expect(store.rows).toEqual(['a', 'b']);
  });

  it('a checkpoint id that goes backwards is refused', async () => {
    const w = await new StoreSink(new Store<string>(), new InMemoryCheckpointCommitter()).createWriter(ctx(0), []);
    writeAll(w, ['a']);
    checkpoint(w, 5);
    writeAll(w, ['b']);
    expect(() => checkpoint(w, 4)).toThrow(/ids must increase/);
  });

  it('without checkpointing, the records are written at the end of input, and a restart from scratch does not write them twice', async () => {
    const store = new Store<number>();
    const committer = new InMemoryCheckpointCommitter();
    const w = await new StoreSink(store, committer).createWriter(ctx(0, 0, false), []);
    writeAll(w, [1, 2, 3]);
    await w.flush!(false);
    expect(store.rows).toEqual([]);
    await w.flush!(true);
    expect(store.rows).toEqual([1, 2, 3]);
    expect(committer.committedCheckpoints(0)).toEqual([END_OF_INPUT_CHECKPOINT_ID]);
    await w.close!();
    // Another subtask failed afterwards; the job restarts from scratch and this subtask replays.
    const again = await new StoreSink(store, committer).createWriter(ctx(0, 1, false), []);
    writeAll(again, [1, 2, 3]);
    await again.flush!(true);
    expect(store.rows).toEqual([1, 2, 3]);
  });

  it('close waits for writes under way; a restarted subtask waits for its predecessor writing the same checkpoint', async () => {
    const store = new Store<string>();
    const committer = new InMemoryCheckpointCommitter();
    const sink = new StoreSink(store, committer, 30);
    const w1 = await sink.createWriter(ctx(0), []);
    writeAll(w1, ['a']);
    const s1 = checkpoint(w1, 1);
    const notified = w1.notifyCheckpointComplete!(1);
    // The predecessor still writes checkpoint 1 when the restarted subtask restores it.
    const w2 = await sink.createWriter(ctx(0, 1), s1);
    await notified;
    expect(store.rows).toEqual(['a']);

    writeAll(w2, ['b']);
    checkpoint(w2, 2);
    void w2.notifyCheckpointComplete!(2);
    await w2.close!();
    expect(store.rows).toEqual(['a', 'b']);
  });

  it('InMemoryCheckpointCommitter remembers exact (subtask, checkpoint) pairs', () => {
    const c = new InMemoryCheckpointCommitter();
    c.commitCheckpoint(0, 3);
    expect(c.isCheckpointCommitted(0, 3)).toBe(true);
    expect(c.isCheckpointCommitted(0, 2)).toBe(false);
    expect(c.isCheckpointCommitted(1, 3)).toBe(false);
  });
});

const KEYS = 7;

const reference = (n: number): string[] => countReference(n, KEYS);

async function runCountJob(o: { n: number; parallelism: number; failAt: number[]; checkpointIntervalMs?: number; sendDelayMs?: number }) {
  const failAt = new Set(o.failAt);
  let seen = 0;
  const store = new Store<string>();
  const committer = new InMemoryCheckpointCommitter();
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    ...(o.checkpointIntervalMs === undefined ? {} : { 'execution.checkpointing.interval': o.checkpointIntervalMs }),
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 10,
    'restart-strategy.fixed-delay.delay': 10,
  });
  env
    .fromSource(numberSource({ count: o.n, eventsPerSecond: 100_000 }), 'numbers')
    .map((n) => {
      seen++;
      if (failAt.has(seen)) {
        failAt.delete(seen);
        throw new Error(`injected failure at record ${seen}`);
      }
      return n;
    })
    .keyBy((n) => n % KEYS)
    .process<string>(new CountPerKey())
    .sinkTo(new StoreSink(store, committer, o.sendDelayMs ?? 0), 'write-ahead store');
  const result = await env.executeAsync(undefined, { log: () => {} }).result;
  return { store, committer, numRestarts: result.numRestarts, completedCheckpoints: result.completedCheckpoints };
}

function expectExactly(rows: readonly string[], expected: readonly string[]): void {
  const actual = [...rows].sort();
  const dups = actual.length - new Set(actual).size;
  const actualSet = new Set(actual);
  const missing = expected.filter((r) => !actualSet.has(r)).length;
  expect({ dups, missing, total: actual.length }).toEqual({ dups: 0, missing: 0, total: expected.length });
  expect(actual).toEqual(expected);
}

/** Each (subtask, checkpoint) was written once, and the committer knows every one written. */
function expectOneWritePerCheckpoint(store: Store<string>, committer: InMemoryCheckpointCommitter): void {
  const keys = store.sends.map(([s, id]) => `${s}/${id}`);
  expect(keys.length).toBe(new Set(keys).size);
  for (const [s, id] of store.sends) expect(committer.isCheckpointCommitted(s, id)).toBe(true);
  // Per subtask, checkpoints were written in increasing order.
  const last = new Map<number, number>();
  for (const [s, id] of store.sends) {
    expect(id).toBeGreaterThan(last.get(s) ?? 0);
    last.set(s, id);
  }
}

describe('WriteAheadSink in jobs with failures', () => {
  for (const parallelism of [1, 3]) {
    it(`parallelism ${parallelism}, checkpoints every 30 ms, three injected failures: the store holds exactly the reference`, async () => {
      const n = 30_000;
      const run = await runCountJob({ n, parallelism, failAt: [4_000, 13_000, 22_000], checkpointIntervalMs: 30 });
      expect(run.numRestarts).toBe(3);
      expect(run.completedCheckpoints).toBeGreaterThan(3);
      expectExactly(run.store.rows, reference(n));
      expectOneWritePerCheckpoint(run.store, run.committer);
      expect(run.store.sends.length).toBeGreaterThan(parallelism);
    });
  }

  it('writes slower than the checkpoint interval, with failures: still exactly the reference', async () => {
    const n = 20_000;
    const run = await runCountJob({ n, parallelism: 2, failAt: [3_000, 11_000], checkpointIntervalMs: 20, sendDelayMs: 40 });
    expect(run.numRestarts).toBe(2);
    expectExactly(run.store.rows, reference(n));
    expectOneWritePerCheckpoint(run.store, run.committer);
  });

  it('a bounded job whose only checkpoint is the final one writes all its records through it', async () => {
    const n = 5_000;
    const run = await runCountJob({ n, parallelism: 3, failAt: [], checkpointIntervalMs: 600_000, sendDelayMs: 20 });
    expect(run.completedCheckpoints).toBe(1);
    expectExactly(run.store.rows, reference(n));
    const ids = new Set(run.store.sends.map(([, id]) => id));
    expect(ids.size).toBe(1);
  });

  it('without checkpointing: written at the end of input, also after a restart from scratch', async () => {
    const n = 20_000;
    for (const failAt of [[], [9_000]]) {
      const run = await runCountJob({ n, parallelism: 3, failAt });
      expect(run.numRestarts).toBe(failAt.length);
      expect(run.completedCheckpoints).toBe(0);
      expectExactly(run.store.rows, reference(n));
      expect(run.store.sends.every(([, id]) => id === END_OF_INPUT_CHECKPOINT_ID)).toBe(true);
      expectOneWritePerCheckpoint(run.store, run.committer);
    }
  });
});
