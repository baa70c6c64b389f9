import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, valueState, type Collector, type KeyedProcessContext, type KeyedProcessFunction, type KeyedRuntimeContext, type ValueState } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { tempDirs } from './support/temp-dirs.js';
import { FilesystemCheckpointStorage } from '../src/runtime/storage/filesystem-checkpoint-storage.js';
import { sharedPathsOf } from '../src/runtime/checkpoint/shared-state-registry.js';
import type { CheckpointStatsEntry } from '../src/runtime/checkpoint/checkpoint-stats.js';
import { inspectSnapshot, openSnapshot } from '../src/cli/savepoint-inspect.js';
import { readKeyedState } from '../src/runtime/checkpoint/state-persistence.js';
import { resolveDeltas } from '../src/runtime/state/keyed-state-delta.js';
import { unpackGroup } from '../src/runtime/state/keyed-state-snapshot.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';

/**
 * Incremental checkpoints (execution.checkpointing.incremental) end to end: keyed state goes
 * to the job's shared/ directory as a full snapshot followed by deltas; jobs with injected
 * failures restore from those chains and give exactly the reference; shared files are
 * deleted once no retained checkpoint references them; a retained incremental checkpoint
 * restores another run.
 */

const KEYS = 3000;
/** Records are spread over the keys so each checkpoint changes only some of them. */
const keyOf = (n: number): number => (n * 7919) % KEYS;

class CountPerKey implements KeyedProcessFunction<number, number, string> {
  private count!: ValueState<number>;
  open(ctx: KeyedRuntimeContext<number>): void {
    this.count = ctx.getState(valueState<number>('count'));
  }
  processElement(_n: number, ctx: KeyedProcessContext<number>, out: Collector<string>): void {
    const c = (this.count.value() ?? 0) + 1;
    this.count.update(c);
    out.collect(`${ctx.getCurrentKey()}:${c}`);
  }
}

/** Independent reference: key k sees counts 1..c_k once each. */
function reference(from: number, to: number, startCounts = new Map<number, number>()): string[] {
  const counts = new Map(startCounts);
  const out: string[] = [];
  for (let n = from; n < to; n++) {
    const k = keyOf(n);
    const c = (counts.get(k) ?? 0) + 1;
    counts.set(k, c);
    out.push(`${k}:${c}`);
  }
  return out.sort();
}

const tempDir = tempDirs('sluice-incremental-');

interface Run {
  readonly backend: 'hashmap' | 'lmdb';
  readonly records: number;
  readonly plan: FaultPlan;
  readonly dir: string;
  readonly config?: Record<string, string | number | boolean>;
  /** Take checkpoints by hand once the source emitted this many records, then cancel the job. */
  readonly cancelAfter?: number;
  /** The source's rate (default 30,000/s, or 4,000/s with cancelAfter). */
  readonly eventsPerSecond?: number;
  readonly from?: number;
  readonly restoreFrom?: string;
}

async function run(o: Run) {
  const store = new TxnStore<string>();
  const logs: string[] = [];
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 2,
    'execution.checkpointing.interval': o.cancelAfter === undefined ? 25 : 3_600_000,
    'execution.checkpointing.dir': o.dir,
    'execution.checkpointing.incremental': true,
    'execution.checkpointing.data-inline-threshold': 0,
    'state.backend.type': o.backend,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
    ...o.config,
  });
  const from = o.from ?? 0;
  env
    .fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond ?? (o.cancelAfter === undefined ? 30_000 : 4_000) }), 'numbers')
    // A restored run reads new records: only the counts come from the checkpoint.
    .uid(o.restoreFrom === undefined ? 'numbers' : 'numbers-restored')
    .map((n) => n + from)
    .process(o.plan.failingProcess<number>())
    .name('faults')
    .keyBy(keyOf)
    .process(new CountPerKey())
    .uid('count')
    .sinkTo(o.plan.wrapSink(new TxnStoreSink(store)))
    // A restored run has a sink of its own: the first run's pending transaction is not its business.
    .uid(o.restoreFrom === undefined ? 'sink' : 'sink-restored');
  const client = env.executeAsync(undefined, {
    log: (m) => logs.push(m),
    ...(o.restoreFrom === undefined ? {} : { restoreFrom: { path: o.restoreFrom, allowNonRestoredState: true } }),
  });
  if (o.cancelAfter !== undefined) {
    // Checkpoints by hand: a full one once every key has state, then three small deltas.
    while (client.progress().sourceRecords < o.cancelAfter) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 4; i++) {
      await client.triggerCheckpoint(false);
      await new Promise((r) => setTimeout(r, 50));
    }
    client.cancel();
  }
  const result = await client.result;
  return { result, committed: store.committed, logs, checkpoints: client.checkpoints() as readonly CheckpointStatsEntry[], jobId: result.jobId };
}

function sharedFiles(dir: string, jobId: string): string[] {
  const shared = join(dir, jobId, 'shared');
  return existsSync(shared) ? readdirSync(shared).filter((f) => !f.startsWith('.')).sort() : [];
}

describe('state changelog (state.backend.changelog.enabled)', () => {
  for (const backend of ['hashmap', 'lmdb'] as const) {
    it(`${backend}: >= 5 injected failures, restored from materializations + log segments: the output equals the reference; a finished job leaves no shared file`, { timeout: 60_000 }, async () => {
      const records = 15_000;
      const seed = backend === 'hashmap' ? 601 : 602;
      const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: records });
      const dir = tempDir();
      const { result, committed, checkpoints, jobId, logs } = await run({
        backend,
        records,
        plan,
        dir,
        // About 1.5 s of records (more on a loaded machine), so that at 25 ms checkpoints and
        // 150 ms materializations several checkpoints fall between materializations whatever
        // the load: at 30,000/s a loaded machine completed only two of those in the run.
        eventsPerSecond: 10_000,
        config: { 'state.backend.changelog.enabled': true, 'state.changelog.dstl.dfs.batch.persist-delay': 5, 'state.backend.changelog.periodic-materialize.interval': 150 },
      });
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      expect(compareMultisets(committed, reference(0, records)), `${plan.describe()}\n${logs.slice(-20).join('\n')}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      const done = checkpoints.filter((c) => c.status === 'COMPLETED' && !c.isSavepoint);
      const tails = done.filter((c) => c.checkpointedSizeBytes < c.stateSizeBytes / 2).length;
      expect(tails, `${plan.describe()}: checkpoints that only added a small tail, of ${done.length} completed`).toBeGreaterThan(2);
      expect(sharedFiles(dir, jobId), 'a finished job discards its checkpoints and their shared files').toEqual([]);
    });
  }

  it('a process whose changelog job ended exits at once (no timer of the 10-minute materialization interval left behind)', { timeout: 60_000 }, () => {
    expect(existsSync(join(import.meta.dirname, '..', 'dist', 'index.js')), 'npm run build first (npm test does)').toBe(true);
    const dir = tempDir();
    const script = `
      const { StreamExecutionEnvironment } = await import(${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'index.js'))});
      const { numberSource, DiscardingSink } = await import(${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'connectors', 'index.js'))});
      const env = StreamExecutionEnvironment.create({
        'execution.checkpointing.interval': 20,
        'execution.checkpointing.dir': ${JSON.stringify(dir)},
        'state.backend.changelog.enabled': true,
        'state.changelog.dstl.dfs.batch.persist-delay': 10,
      });
      env.fromSource(numberSource({ count: 20000, eventsPerSecond: 40000 }), 'numbers').keyBy((n) => n % 50).reduce((a, b) => a + b).sinkTo(new DiscardingSink());
      const result = await env.execute('changelog-exit');
      process.stdout.write(JSON.stringify({ endedAt: Date.now(), state: result.state ?? 'finished' }) + String.fromCharCode(10));
    `;
    const started = Date.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 45_000 });
    const exitedAt = Date.now();
    expect(r.error?.message, 'the process did not exit within 45 s').toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    const { endedAt } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { endedAt: number };
    expect(endedAt - started).toBeLessThan(45_000);
    expect(exitedAt - endedAt, 'time from the end of the job to the exit of its process').toBeLessThan(5_000);
  });
});

describe('incremental checkpoints', () => {
  for (const backend of ['hashmap', 'lmdb'] as const) {
    it(`${backend}: >= 5 injected failures, restored from chains of deltas: the output equals the reference; a finished job leaves no shared file`, { timeout: 60_000 }, async () => {
      const records = 15_000;
      const seed = backend === 'hashmap' ? 501 : 502;
      const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: records });
      const dir = tempDir();
      const { result, committed, checkpoints, jobId, logs } = await run({ backend, records, plan, dir });
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      expect(compareMultisets(committed, reference(0, records)), `${plan.describe()}\n${logs.slice(-20).join('\n')}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      const done = checkpoints.filter((c) => c.status === 'COMPLETED' && !c.isSavepoint);
      const deltas = done.filter((c) => c.checkpointedSizeBytes < c.stateSizeBytes);
      expect(deltas.length, `${plan.describe()}: some checkpoints wrote only a delta`).toBeGreaterThan(2);
      expect(sharedFiles(dir, jobId), 'a finished job discards its checkpoints and their shared files').toEqual([]);
    });
  }

  it('a canceled job keeps its retained incremental checkpoint with exactly the shared files it references; a new run restores from it', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const first = await run({
      backend: 'hashmap',
      records: 1_000_000,
      plan: FaultPlan.seeded({ seed: 503 }),
      dir,
      config: { 'execution.checkpointing.externalized-checkpoint-retention': 'RETAIN_ON_CANCELLATION' },
      cancelAfter: 6_000,
    });
    expect(first.result.status).toBe('CANCELED');
    const storage = await FilesystemCheckpointStorage.open({ checkpointsDir: dir, jobId: first.jobId });
    const retained = await storage.listRetainedCheckpoints();
    expect(retained.length).toBe(1);
    const metadata = await storage.readMetadata(retained[0]!.pointer);
    const referenced = [...new Set(sharedPathsOf(metadata))].sort();
    const chains = metadata.operators.find((o) => o.operatorUid === 'count')!.subtasks.map((s) => s.keyedState.length);
    expect(Math.max(...chains), `the retained checkpoint ${metadata.checkpointId} is a chain of a full snapshot and deltas: ${JSON.stringify(first.checkpoints.map((c) => [c.id, c.status, c.stateSizeBytes, c.checkpointedSizeBytes]))}`).toBeGreaterThan(1);
    expect(sharedFiles(dir, first.jobId), 'no shared file of a subsumed or aborted checkpoint is left, none referenced is missing').toEqual(referenced);

    // The counts in the checkpoint, read offline from its chains (full + deltas): at least what
    // the first run committed, and what the second run continues from.
    const counts = new Map<number, number>();
    for (const sub of metadata.operators.find((o) => o.operatorUid === 'count')!.subtasks) {
      const range = { startKeyGroup: 0, endKeyGroup: 127 };
      const snaps = [];
      for (const h of sub.keyedState) {
        const snap = await readKeyedState(h, range, 128, storage, retained[0]!);
        if (snap !== undefined) snaps.push(snap);
      }
      for (const snap of resolveDeltas(snaps)) {
        for (const bytes of snap.states.find((st) => st.name === 'count')?.groups.values() ?? []) {
          for (const [k, c] of unpackGroup(bytes) as Map<number, number>) counts.set(k, c);
        }
      }
    }
    // The inspector folds the chains too: one entry per key, the same counts.
    const inspection = await inspectSnapshot(await openSnapshot(retained[0]!.pointer));
    const countState = inspection.operators.find((o) => o.uid === 'count')!.keyedState!.states.find((st) => st.name === 'count')!;
    expect(countState.entries).toBe(counts.size);
    for (const line of first.committed) {
      const [k, c] = line.split(':').map(Number) as [number, number];
      expect(c, `key ${k}: the checkpoint has at least the committed count`).toBeLessThanOrEqual(counts.get(k) ?? 0);
    }
    const second = await run({
      backend: 'lmdb',
      records: 6_000,
      plan: FaultPlan.seeded({ seed: 504, recordFaults: 2, recordRange: 6_000 }),
      dir,
      restoreFrom: retained[0]!.pointer,
      from: 10_000_000,
    });
    expect(compareMultisets(second.committed, reference(10_000_000, 10_006_000, counts))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
