// Sliced sliding windows (src/runtime/operators/window-slicing.ts) through checkpoints,
// failures, rescaling and backends, and across the switch between the two state layouts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SlidingEventTimeWindows, StreamExecutionEnvironment, WatermarkStrategy, type AggregateFunction, type ProcessWindowFunction } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { WindowOperator } from '../src/runtime/operators/window-operator.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets } from './support/txn-store-sink.js';

const KEYS = 7;
const SIZE_MS = 50;
const SLIDE_MS = 10;

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-slicing-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Sum of the records with merge(): sliced. Without merge: one accumulator per window. */
const sum = (withMerge: boolean): AggregateFunction<number, number, number> => ({
  createAccumulator: () => 0,
  add: (n, acc) => acc + n,
  getResult: (acc) => acc,
  ...(withMerge ? { merge: (a: number, b: number) => a + b } : {}),
});

/** Independent reference: records 0..n-1 at event time n, key n % KEYS; every non-empty window "key:start:sum". */
function reference(records: number): string[] {
  const sums = new Map<string, number>();
  for (let n = 0; n < records; n++) {
    const lastStart = Math.floor(n / SLIDE_MS) * SLIDE_MS;
    for (let start = lastStart; start > n - SIZE_MS; start -= SLIDE_MS) {
      const id = `${n % KEYS}:${start}`;
      sums.set(id, (sums.get(id) ?? 0) + n);
    }
  }
  return [...sums].map(([id, s]) => `${id}:${s}`).sort();
}

interface JobOptions {
  readonly parallelism: number;
  readonly records: number;
  readonly eventsPerSecond: number;
  readonly out: string;
  readonly merge: boolean;
  readonly config?: Record<string, string | number | boolean>;
  readonly plan?: FaultPlan;
}

const emitSum: ProcessWindowFunction<number, string, number> = {
  process: (key, ctx, sums, out) => out.collect(`${key}:${ctx.window.start}:${sums[0]}`),
};

function windowJob(o: JobOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
    'pipeline.auto-watermark-interval': 5,
    ...o.config,
  });
  let numbers = env.fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond }), 'numbers').uid('numbers');
  if (o.plan !== undefined) numbers = numbers.process(o.plan.failingProcess<number>()).uid('faults');
  numbers
    .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<number>(0).withTimestampAssigner((n) => n))
    .uid('timestamps')
    .keyBy((n) => n % KEYS)
    .window(SlidingEventTimeWindows.of(SIZE_MS, SLIDE_MS))
    .aggregate(sum(o.merge), emitSum)
    .uid('windows')
    .sinkTo(new ExactlyOnceFileSink<string>(o.out))
    .uid('sink');
  return env;
}

function windowsSliced(executor: LocalExecutor): boolean[] {
  const sliced: boolean[] = [];
  for (const t of executor.streamTasks) for (const c of t.chain.operators) if (c.operator instanceof WindowOperator) sliced.push(c.operator.sliced);
  return sliced;
}

describe('sliced sliding windows under failures', () => {
  const configs = [
    { name: 'aligned, heap', config: {} },
    { name: 'unaligned, heap, incremental', config: { 'execution.checkpointing.unaligned.enabled': true, 'execution.checkpointing.incremental': true } },
    { name: 'aligned, lmdb, incremental', config: { 'state.backend.type': 'lmdb', 'execution.checkpointing.incremental': true } },
  ] as const;
  for (const [i, c] of configs.entries()) {
    const parallelism = 1 + i;
    it(`${c.name}, parallelism ${parallelism}: >= 5 failures, every window's sum exactly once`, { timeout: 30_000 }, async () => {
      const records = 8_000;
      const out = tempDir();
      const plan = FaultPlan.seeded({ seed: 4200 + i, recordFaults: 5, recordRange: records });
      const config = { ...c.config, ...('state.backend.type' in c.config ? { 'state.backend.lmdb.localdir': tempDir() } : {}) };
      const env = windowJob({ parallelism, records, eventsPerSecond: 40_000, out, merge: true, config, plan });
      const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
      const result = await executor.run();
      expect(result.status, plan.describe()).toBe('FINISHED');
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      expect(windowsSliced(executor).every((s) => s), plan.describe()).toBe(true);
      expect(compareMultisets(await readCommittedLines(out), reference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });
  }
});

describe('switching between the per-window and the sliced layout through a savepoint', () => {
  async function stopWithSavepoint(o: { merge: boolean; out: string }): Promise<string> {
    const env = windowJob({ parallelism: 2, records: 20_000, eventsPerSecond: 10_000, out: o.out, merge: o.merge });
    const first = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = first.run();
    while (first.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await first.stopWithSavepoint(tempDir(), false);
    expect((await done).status).toBe('FINISHED');
    expect(windowsSliced(first)).toEqual([o.merge, o.merge]);
    return savepoint.pointer;
  }

  it('per-window state restored into a job that could slice keeps its layout; the results stay exact', { timeout: 30_000 }, async () => {
    const out = tempDir();
    const savepoint = await stopWithSavepoint({ merge: false, out });
    const env = windowJob({ parallelism: 3, records: 20_000, eventsPerSecond: 200_000, out, merge: true });
    const second = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: savepoint, allowNonRestoredState: false } });
    expect((await second.run()).status).toBe('FINISHED');
    // Subtasks that got per-window state keep it; one that got none may slice.
    expect(windowsSliced(second).some((s) => !s)).toBe(true);
    expect(compareMultisets(await readCommittedLines(out), reference(20_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('sliced state restored at another parallelism continues exactly', { timeout: 30_000 }, async () => {
    const out = tempDir();
    const savepoint = await stopWithSavepoint({ merge: true, out });
    const env = windowJob({ parallelism: 3, records: 20_000, eventsPerSecond: 200_000, out, merge: true });
    const second = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: savepoint, allowNonRestoredState: false } });
    expect((await second.run()).status).toBe('FINISHED');
    expect(windowsSliced(second)).toEqual([true, true, true]);
    expect(compareMultisets(await readCommittedLines(out), reference(20_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('sliced state restored into a job whose window cannot slice is a clear error', { timeout: 30_000 }, async () => {
    const savepoint = await stopWithSavepoint({ merge: true, out: tempDir() });
    const env = windowJob({ parallelism: 2, records: 20_000, eventsPerSecond: 200_000, out: tempDir(), merge: false, config: { 'restart-strategy.type': 'none' } });
    const second = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: savepoint, allowNonRestoredState: false } });
    await expect(second.run()).rejects.toThrow(/keeps its windows as slices.*restore with the same window assigner and aggregate function/s);
  });
});
