import { CountPerKey, countReference } from './support/counting-job.js';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { Sink } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import type { CheckpointStatsEntry } from '../src/runtime/checkpoint/checkpoint-stats.js';
import type { RunningAttempt } from '../src/runtime/local-executor.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { decodeMetadata } from '../src/runtime/storage/metadata-codec.js';
import { systemClock, type Clock } from '../src/runtime/task/clock.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';

/** Passes records on, taking 1 ms for every `every` records: backpressure upstream. */
function slowly<T>(inner: Sink<T>, every: number): Sink<T> {
  return FaultPlan.slowSink(inner, { everyRecords: every, delayMs: 1 });
}

const KEYS = 7;
const reference = (records: number): string[] => countReference(records, KEYS);

interface Run {
  readonly committed: string[];
  readonly stats: readonly CheckpointStatsEntry[];
  readonly numRestarts: number;
  readonly logs: string[];
}

async function run(config: Record<string, string | number | boolean>, o: { records: number; slowEvery?: number; plan?: FaultPlan; onStart?: (a: RunningAttempt, x: LocalExecutor) => void; hook?: (n: number) => void }): Promise<Run> {
  const store = new TxnStore<string>();
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 2,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 20,
    'restart-strategy.fixed-delay.delay': 5,
    ...config,
  });
  const plan = o.plan ?? new FaultPlan(0, []);
  let seen = 0;
  let sink: Sink<string> = new TxnStoreSink(store);
  if (o.slowEvery !== undefined) sink = slowly(sink, o.slowEvery);
  env
    .fromSource(numberSource({ count: o.records }), 'numbers')
    .map((n) => {
      o.hook?.(++seen);
      return n;
    })
    .process(plan.failingProcess<number>())
    .keyBy((n) => n % KEYS)
    .process(new CountPerKey())
    .sinkTo(sink);
  const logs: string[] = [];
  const executor = new LocalExecutor(env.getJobGraph(), env.config, {
    log: (m) => logs.push(m),
    onAttemptStarted: (a) => o.onStart?.(a, executor),
  });
  const result = await executor.run();
  return { committed: store.committed, stats: executor.checkpointStats.entries(), numRestarts: result.numRestarts, logs };
}

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('checkpoint behaviour', () => {
  it('unaligned checkpoints complete under backpressure by persisting in-flight data; aligned ones wait for the queued data', async () => {
    const common = { 'execution.checkpointing.interval': 50, 'execution.buffer-batch-size': 64 };
    const aligned = await run(common, { records: 20_000, slowEvery: 20 });
    const unaligned = await run({ ...common, 'execution.checkpointing.unaligned.enabled': true }, { records: 20_000, slowEvery: 20 });
    for (const r of [aligned, unaligned]) expect(compareMultisets(r.committed, reference(20_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    const done = (r: Run) => r.stats.filter((e) => e.status === 'COMPLETED' && e.checkpointType !== 'SAVEPOINT');
    expect(done(aligned).length).toBeGreaterThan(1);
    expect(done(unaligned).length).toBeGreaterThan(1);
    expect(done(aligned).every((e) => e.persistedInFlightRecords === 0)).toBe(true);
    expect(done(unaligned).some((e) => e.persistedInFlightRecords > 0)).toBe(true);
    expect(done(unaligned).every((e) => e.checkpointType === 'UNALIGNED_CHECKPOINT')).toBe(true);
    const alignedP50 = p50(done(aligned).map((e) => e.endToEndDurationMs!));
    const unalignedP50 = p50(done(unaligned).map((e) => e.endToEndDurationMs!));
    expect(unalignedP50, `aligned p50 ${alignedP50} ms, unaligned p50 ${unalignedP50} ms`).toBeLessThan(alignedP50);
  });

  it('an unaligned checkpoint whose in-flight records hold a function is declined, naming the record and the fix', async () => {
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'execution.checkpointing.interval': 20,
      'execution.checkpointing.unaligned.enabled': true,
      'execution.checkpointing.tolerable-failed-checkpoints': 1000,
      'execution.buffer-batch-size': 64,
    });
    const store = new TxnStore<string>();
    env
      .fromSource(numberSource({ count: 20_000 }), 'numbers')
      .map((n) => ({ n, describe: () => `record ${n}` }))
      .keyBy((r) => r.n % KEYS)
      .process<string>({ processElement: (r, _ctx, out) => out.collect(r.describe()) })
      .sinkTo(slowly(new TxnStoreSink(store), 20));
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const result = await executor.run();
    expect(result.status).toBe('FINISHED');
    const failed = executor.checkpointStats.entries().filter((e) => e.status === 'FAILED');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.some((e) => /record\.describe is a function.*create functions and symbols in the operator that uses them, or use aligned checkpoints/.test(e.failureMessage ?? ''))).toBe(true);
    // No completed checkpoint stored records in flight (they all held the function).
    expect(executor.checkpointStats.entries().filter((e) => e.status === 'COMPLETED').every((e) => e.persistedInFlightRecords === 0)).toBe(true);
  });

  it('in-flight data of an unaligned checkpoint is restored after failures: still exactly-once', async () => {
    const records = 20_000;
    const plan = FaultPlan.seeded({ seed: 31, recordFaults: 5, recordRange: records });
    const r = await run(
      { 'execution.checkpointing.interval': 30, 'execution.buffer-batch-size': 64, 'execution.checkpointing.unaligned.enabled': true },
      { records, slowEvery: 20, plan },
    );
    expect(r.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(r.stats.some((e) => e.persistedInFlightRecords > 0), plan.describe()).toBe(true);
    expect(compareMultisets(r.committed, reference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('aligned checkpoints with a timeout switch to unaligned when the alignment takes too long', async () => {
    const r = await run(
      {
        'execution.checkpointing.interval': 50,
        'execution.buffer-batch-size': 64,
        'execution.checkpointing.unaligned.enabled': true,
        'execution.checkpointing.aligned-checkpoint-timeout': 1,
      },
      { records: 20_000, slowEvery: 10 },
    );
    expect(compareMultisets(r.committed, reference(20_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    const switched = r.stats.filter((e) => e.status === 'COMPLETED' && e.subtasks.some((s) => s.unaligned));
    expect(switched.length).toBeGreaterThan(0);
    // The history says which ones switched, as Flink's checkpoint_type does.
    for (const e of r.stats.filter((x) => x.status === 'COMPLETED')) {
      expect(e.checkpointType, `checkpoint ${e.id}`).toBe(e.subtasks.some((s) => s.unaligned) ? 'UNALIGNED_CHECKPOINT' : 'CHECKPOINT');
    }
  });

  it('no checkpoint is triggered after the final one: a finished job shows no failed checkpoint', async () => {
    // Checkpoints every 10 ms while the job ends: one triggered after the final checkpoint was
    // aborted as the coordinator stopped ('Checkpoint Coordinator is suspending.').
    for (let round = 0; round < 6; round++) {
      const records = 3_000 + round * 137;
      const r = await run({ 'execution.checkpointing.interval': 10 }, { records, slowEvery: 200 });
      expect(compareMultisets(r.committed, reference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      expect(r.stats.filter((e) => e.status !== 'COMPLETED').map((e) => `${e.id} ${e.status}: ${e.failureMessage}`)).toEqual([]);
    }
  });

  it('a stop-with-savepoint whose attempt fails before its sources stopped is answered with an error, not left pending', async () => {
    // The request waited for the sources to stop; the attempt failed over first, and the
    // request was never answered: `sluice stop` polled forever.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-stop-failover-'));
    try {
      const records = 20_000;
      let executor: LocalExecutor | undefined;
      let stop: Promise<unknown> | undefined;
      const r = await run(
        { 'execution.checkpointing.interval': 50 },
        {
          records,
          slowEvery: 100,
          onStart: (_a, x) => (executor = x),
          hook: (n) => {
            if (n !== 5_000) return;
            stop = executor!.stopWithSavepoint(dir);
            stop.catch(() => {});
            throw new Error('injected failure as the stop is requested');
          },
        },
      );
      expect(r.numRestarts).toBeGreaterThanOrEqual(1);
      const outcome = await Promise.race([
        stop!.then(
          () => 'savepoint taken',
          (e: unknown) => (e as Error).message,
        ),
        new Promise((res) => setTimeout(() => res('still pending after the job finished'), 2_000)),
      ]);
      expect(outcome).toMatch(/failed over before its sources stopped.*no savepoint was taken.*try again/);
      expect(compareMultisets(r.committed, reference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a checkpoint timer that fires early leaves the checkpoint running and is armed again: the stuck checkpoint expires once, at its time', async () => {
    // Before: the early timer marked the checkpoint FAILED while the coordinator kept it
    // running (not expired yet), and no timer was left: a stuck checkpoint never expired.
    const early: Clock = { nowMs: () => Date.now(), schedule: (delayMs, fn) => systemClock.schedule(delayMs - 150, fn) };
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 1,
      'execution.checkpointing.interval': 50,
      'execution.checkpointing.timeout': 400,
      'execution.checkpointing.tolerable-failed-checkpoints': 10,
    });
    const written: number[] = [];
    env.fromSource(numberSource({ count: 2_000, eventsPerSecond: 2_000 }), 'numbers').sinkTo({
      createWriter: () => ({
        write: (n: number) => void written.push(n),
        // Checkpoint 1 is stuck in the sink for 1.5 s, well past its 400 ms timeout.
        prepareCommit: (id: number) => (id === 1 ? new Promise<void>((r) => setTimeout(r, 1_500)) : undefined),
      }),
    });
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, clock: early });
    const result = await executor.run();
    expect(result.status).toBe('FINISHED');
    const first = executor.checkpointStats.entries().find((e) => e.id === 1)!;
    expect(first.status).toBe('FAILED');
    expect(first.failureMessage).toBe('Checkpoint expired before completing.');
    // It expired at its timeout, not 150 ms early and not when the sink let go after 1.5 s.
    expect(first.endToEndDurationMs).toBeGreaterThanOrEqual(400);
    expect(first.endToEndDurationMs).toBeLessThan(1_400);
    expect(executor.checkpointStats.entries().filter((e) => e.status === 'COMPLETED').length).toBeGreaterThan(0);
    expect(written.length).toBe(2_000);
  });

  it('min-pause and max-concurrent are obeyed', async () => {
    const minPauseMs = 40;
    const r = await run(
      { 'execution.checkpointing.interval': 10, 'execution.checkpointing.min-pause': minPauseMs, 'execution.buffer-batch-size': 64 },
      { records: 20_000, slowEvery: 40 },
    );
    const done = [...r.stats].filter((e) => e.status === 'COMPLETED').sort((a, b) => a.id - b.id);
    expect(done.length).toBeGreaterThan(2);
    // min-pause counts from the completion (the last acknowledgement) of the previous checkpoint.
    // The final checkpoint (the last) is requested when the sources end and does not wait.
    for (let i = 1; i < done.length - 1; i++) {
      expect(done[i]!.triggerTimestampMs - done[i - 1]!.latestAckTimestampMs!).toBeGreaterThanOrEqual(minPauseMs);
    }
    // max-concurrent 1: no two checkpoints overlap.
    const all = [...r.stats].sort((a, b) => a.id - b.id);
    for (let i = 1; i < all.length; i++) {
      const prev = all[i - 1]!;
      expect(all[i]!.triggerTimestampMs).toBeGreaterThanOrEqual(prev.triggerTimestampMs + (prev.endToEndDurationMs ?? 0));
    }
  });

  it('falls back to an older retained checkpoint when the latest cannot be read, and logs why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fallback-'));
    try {
      let executor: LocalExecutor | undefined;
      let corrupted = false;
      const records = 60_000;
      const r = await run(
        {
          // Periodic checkpoints effectively off: the test triggers them, so none is pending at the crash.
          'execution.checkpointing.interval': 600_000,
          'execution.checkpointing.dir': dir,
          'execution.checkpointing.num-retained': 3,
          'execution.checkpointing.data-inline-threshold': 0,
          'execution.buffer-batch-size': 64,
        },
        {
          records,
          slowEvery: 50,
          onStart: (_a, x) => {
            executor = x;
          },
          hook: (n) => {
            if (corrupted) return;
            const stats = executor!.checkpointStats;
            const done = stats.entries().filter((e) => e.status === 'COMPLETED');
            // Three checkpoints, one at a time: on a busy machine one may take longer than a few
            // thousand records, so the next is triggered only once none is under way.
            if (done.length < 3) {
              if (n >= 3_000 && n % 1_000 === 0 && stats.counts.inProgress === 0) executor!.triggerCheckpoint().catch(() => {});
              return;
            }
            if (stats.counts.inProgress > 0) return;
            // Flip one byte of every state file of the newest completed checkpoint, then fail.
            const newest = done[0]!;
            const chk = newest.externalPath!;
            for (const f of readdirSync(chk)) {
              if (f === '_metadata') continue;
              const p = join(chk, f);
              const bytes = readFileSync(p);
              bytes[bytes.length - 1] ^= 0xff;
              writeFileSync(p, bytes);
            }
            corrupted = true;
            throw new Error(`crash after corrupting checkpoint ${newest.id}`);
          },
        },
      );
      expect(corrupted).toBe(true);
      expect(r.logs.some((l) => /checkpoint \d+ cannot be read \(.*corrupt.*\), falling back to checkpoint \d+/.test(l)), r.logs.join('\n')).toBe(true);
      // The corrupted checkpoint had completed, so its transactions were committed: replaying from
      // an older checkpoint writes their records again (as in Flink). Nothing is lost.
      const diff = compareMultisets(r.committed, reference(records));
      expect({ missing: diff.missing, unexpected: diff.unexpected }).toEqual({ missing: 0, unexpected: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checkpoints go on being triggered after ones that failed writing their state (the periodic trigger came due meanwhile and was not armed again); once the storage is back, a full one starts a new chain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-write-fails-'));
    try {
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': 2,
        'execution.checkpointing.interval': 10,
        'execution.checkpointing.dir': dir,
        'execution.checkpointing.incremental': true,
        'execution.checkpointing.data-inline-threshold': 0,
        'execution.checkpointing.tolerable-failed-checkpoints': 1_000_000,
      });
      env
        .fromSource(numberSource({ count: 1e9, eventsPerSecond: 5_000 }), 'numbers')
        .keyBy((n) => n % 500)
        .process(new CountPerKey())
        .sinkTo(new TxnStoreSink(new TxnStore<string>()));
      const logs: string[] = [];
      const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: (m) => logs.push(m) });
      const done = executor.run();
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      try {
        while (executor.checkpointStats.counts.completed < 2) await sleep(5);
        // Every checkpoint from now on fails writing its state files: shared/ is a file.
        const shared = join(dir, executor.jobId, 'shared');
        rmSync(shared, { recursive: true, force: true });
        writeFileSync(shared, 'not a directory');
        await sleep(500);
        const failedBefore = executor.checkpointStats.counts.failed;
        await sleep(1_000);
        const failedAfter = executor.checkpointStats.counts.failed;
        expect(executor.status).toBe('RUNNING');
        // At a 10 ms interval a second gives many attempts; before the fix they stopped for good
        // after the first failure that outlasted an interval.
        expect(failedAfter - failedBefore, logs.slice(-5).join('\n')).toBeGreaterThanOrEqual(10);
        const failed = executor.checkpointStats.entries().find((e) => e.status === 'FAILED');
        expect(failed?.failureMessage).toMatch(/writing the state of .* failed: .*shared/);
        // The storage is back (shared/ is made again), but the files of the chain are gone: the
        // next checkpoint is full, and deltas build on it.
        rmSync(shared);
        const completedBefore = executor.checkpointStats.counts.completed;
        const deadline = Date.now() + 10_000;
        while (executor.checkpointStats.counts.completed < completedBefore + 3 && Date.now() < deadline) await sleep(10);
        expect(executor.checkpointStats.counts.completed, logs.slice(-5).join('\n')).toBeGreaterThanOrEqual(completedBefore + 3);
        const latest = executor.checkpointStats.entries().find((e) => e.status === 'COMPLETED')!;
        const metadata = decodeMetadata(readFileSync(join(latest.externalPath!, '_metadata')), { file: '_metadata', checkpointId: latest.id });
        const chains = metadata.operators.flatMap((o) => o.subtasks.map((st) => st.keyedState)).filter((c) => c.length > 0);
        expect(chains.length).toBeGreaterThan(0);
        for (const chain of chains) {
          // Every file of the chain exists: it starts at or after the recovery's full checkpoint.
          for (const k of chain) if (k.data.kind === 'file') expect(existsSync(join(k.data.scope === 'shared' ? shared : latest.externalPath!, k.data.path))).toBe(true);
        }
      } finally {
        executor.cancel();
        await done.catch(() => {});
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the final checkpoint commits the last records of a bounded job', async () => {
    // A long interval: without the final checkpoint, nothing would ever be committed.
    const r = await run({ 'execution.checkpointing.interval': 60_000 }, { records: 5_000 });
    expect(compareMultisets(r.committed, reference(5_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(r.stats.filter((e) => e.status === 'COMPLETED').length).toBe(1);
  });
});

describe('checkpoint sizes (Flink\'s state_size and checkpointed_size)', () => {
  // checkpointed_size counted keyed state only: a full checkpoint reported fewer bytes
  // written than its size (source splits, in-flight data and coordinator state left out).
  it.each([
    ['aligned', false],
    ['unaligned, with in-flight data', true],
  ])('%s, full checkpoints: written equals the size, per checkpoint and per subtask', { timeout: 30_000 }, async (_name, unaligned) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sizes-'));
    try {
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': 2,
        'execution.checkpointing.interval': 20,
        'execution.checkpointing.dir': dir,
        'execution.checkpointing.unaligned.enabled': unaligned,
        'execution.checkpointing.data-inline-threshold': 0,
      });
      env
        .fromSource(numberSource({ count: 20_000, eventsPerSecond: 40_000 }), 'numbers')
        .keyBy((n) => n % 13)
        .reduce((a, b) => a + b)
        .sinkTo(FaultPlan.slowSink(new TxnStoreSink(new TxnStore()), { everyRecords: 100, delayMs: 1 }));
      const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
      expect((await executor.run()).status).toBe('FINISHED');
      const done = executor.checkpointStats.entries().filter((e) => e.status === 'COMPLETED');
      expect(done.length).toBeGreaterThan(2);
      for (const e of done) {
        expect(e.stateSizeBytes, `checkpoint ${e.id}`).toBeGreaterThan(0);
        expect(e.checkpointedSizeBytes, `checkpoint ${e.id}`).toBe(e.stateSizeBytes);
        for (const s of e.subtasks) expect(s.checkpointedSizeBytes, `checkpoint ${e.id}, subtask ${s.subtask}`).toBe(s.stateSizeBytes);
      }
      // The sources' splits are in every checkpoint's size.
      expect(done.every((e) => e.subtasks.filter((s) => s.subtask.startsWith('0/')).every((s) => s.stateSizeBytes > 0))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
