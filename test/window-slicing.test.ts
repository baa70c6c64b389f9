// Sliced sliding windows (src/runtime/operators/window-slicing.ts) through checkpoints,
// failures, rescaling and backends, and across the switch between the two state layouts.
import { describe, expect, it } from 'vitest';
import { SlidingEventTimeWindows, StreamExecutionEnvironment, WatermarkStrategy, type AggregateFunction, type ProcessWindowFunction, type WatermarkGenerator } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { tempDirs } from './support/temp-dirs.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { WindowOperator } from '../src/runtime/operators/window-operator.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets } from './support/txn-store-sink.js';

const KEYS = 7;
const SIZE_MS = 50;
const SLIDE_MS = 10;

const tempDir = tempDirs('sluice-slicing-');

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
    await expect(second.run()).rejects.toThrow(/as slices.*restore with the same window assigner and aggregate function/s);
  });
});

describe('a watermark that passes several windows of a key at once', () => {
  it('fires each window once, a key\'s windows one after the other in order of their end, the same sums as with and without slices', async () => {
    // Runs of records with gaps; the watermark trails the records by 31 ms, so each slice of a
    // run registers its window's timer before any of them fires, and the first record after a
    // gap moves the watermark past several windows at once: a chain fires windows whose timers
    // later slices registered (they must not fire again).
    const records = [...Array.from({ length: 400 }, (_, n) => n)].filter((n) => n % 100 < 25 || (n % 100 >= 75 && n % 100 < 90));
    const run = async (merge: boolean): Promise<string[]> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 0 });
      const out: string[] = [];
      const trailing = (): WatermarkGenerator<number> => ({ onEvent: (_n, ts, o) => o.emitWatermark(ts - 31), onPeriodicEmit: () => {} });
      env
        .fromElements(...records)
        .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(trailing).withTimestampAssigner((n) => n))
        .keyBy((n) => n % KEYS)
        .window(SlidingEventTimeWindows.of(SIZE_MS, SLIDE_MS))
        .aggregate(sum(merge), emitSum)
        .sinkTo({ createWriter: () => ({ write: (line: string) => void out.push(line) }) });
      await env.execute();
      return out;
    };
    const expected = new Map<string, number>();
    for (const n of records) {
      for (let start = Math.floor(n / SLIDE_MS) * SLIDE_MS; start > n - SIZE_MS; start -= SLIDE_MS) {
        const id = `${n % KEYS}:${start}`;
        expected.set(id, (expected.get(id) ?? 0) + n);
      }
    }
    const sliced = await run(true);
    expect(compareMultisets(sliced, [...expected].map(([id, s]) => `${id}:${s}`))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect([...(await run(false))].sort()).toEqual([...sliced].sort());
    // Per key, windows in order of their start; each key's windows of one run of slices together.
    const starts = new Map<number, number[]>();
    for (const line of sliced) {
      const [key, start] = line.split(':').map(Number) as [number, number];
      starts.set(key, [...(starts.get(key) ?? []), start]);
    }
    for (const s of starts.values()) expect(s).toEqual([...s].sort((a, b) => a - b));
    // The record at 75 moved the watermark from -7 to 44: every key's windows ending at 10 to 40, key by key.
    const firstKey = Number(sliced[0]!.split(':')[0]);
    const firstRun = sliced.slice(0, 4).map((line) => Number(line.split(':')[0]));
    expect(firstRun, 'the first key\'s first windows came one after the other').toEqual([firstKey, firstKey, firstKey, firstKey]);
  });
});

describe('disableSlicing()', () => {
  /** Out-of-order records of one key, one slice each (slide 10): arrival order differs from time order. */
  const events = [25, 5, 15, 35, 30].map((ts) => ({ ts, s: String.fromCharCode(97 + ts / 5) }));

  async function concatenated(disable: boolean): Promise<{ sliced: boolean[]; rows: string[] }> {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<string>();
    let windowed = env
      .fromElements(...events)
      .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<{ ts: number; s: string }>(100).withTimestampAssigner((e) => e.ts))
      .keyBy(() => 0)
      .window(SlidingEventTimeWindows.of(40, 10));
    if (disable) windowed = windowed.disableSlicing();
    windowed
      .aggregate<string, string, string>(
        // An order-sensitive accumulator: merge() concatenates as add() would only for records in time order.
        { createAccumulator: () => '', add: (e, acc) => acc + e.s, getResult: (acc) => acc, merge: (a, b) => a + b },
        { process: (_key, ctx, xs, out) => out.collect(`${ctx.window.start}:${xs[0]}`) },
      )
      .sinkTo(sink);
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    expect((await executor.run()).status).toBe('FINISHED');
    return { sliced: windowsSliced(executor), rows: [...sink.values].sort() };
  }

  it('keeps one accumulator per window: add() sees each window\'s records in arrival order, as Flink\'s DataStream windows', async () => {
    const perWindow = await concatenated(true);
    expect(perWindow.sliced).toEqual([false]);
    // Arrival order: 25 (f), 5 (b), 15 (d), 35 (h), 30 (g).
    expect(perWindow.rows).toEqual(['-30:b', '-20:bd', '-10:fbd', '0:fbdhg', '10:fdhg', '20:fhg', '30:hg'].sort());
    // Sliced, a window is its slices merged in time order (records of one slice in arrival order): the same for order-insensitive functions only.
    const sliced = await concatenated(false);
    expect(sliced.sliced).toEqual([true]);
    expect(sliced.rows).toEqual(['-30:b', '-20:bd', '-10:bdf', '0:bdfhg', '10:dfhg', '20:fhg', '30:hg'].sort());
  });
});
