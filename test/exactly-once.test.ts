import { CountPerKey, countReference as sharedCountReference } from './support/counting-job.js';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';

const KEYS = 13;

const countReference = (n: number): string[] => sharedCountReference(n, KEYS);

interface RunOptions {
  /** Write through the exactly-once file sink (real files) instead of the in-memory store. */
  readonly files?: boolean;
  readonly parallelism: number;
  readonly config: Record<string, string | number | boolean>;
  readonly plan: FaultPlan;
  readonly records: number;
  readonly emitRecord?: boolean;
}

async function runCountingJob(o: RunOptions) {
  const store = new TxnStore<string>();
  const dir = o.files === true ? mkdtempSync(join(tmpdir(), 'sluice-eo-')) : undefined;
  const logs: string[] = [];
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
    ...o.config,
  });
  env
    .fromSource(numberSource({ count: o.records, eventsPerSecond: 40_000 }), 'numbers')
    .process(o.plan.failingProcess<number>())
    .name('faults')
    .keyBy((n) => n % KEYS)
    .process(new CountPerKey(o.emitRecord ?? false))
    .uid('count')
    .sinkTo(o.plan.wrapSink(dir === undefined ? new TxnStoreSink(store) : new ExactlyOnceFileSink<string>(dir)));
  try {
    const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
    if (dir === undefined) return { result, committed: store.committed, logs, leftovers: [] as string[] };
    const committed = await readCommittedLines(dir);
    // Readers see only committed files; nothing in progress or pending is left behind.
    const leftovers = readdirSync(dir).filter((f) => f.startsWith('.'));
    return { result, committed, logs, leftovers };
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

const modes = [
  { name: 'aligned exactly-once', config: {} },
  { name: 'unaligned exactly-once', config: { 'execution.checkpointing.unaligned.enabled': true } },
] as const;

describe('exactly-once under injected failures (exactly-once file sink)', () => {
  for (const mode of modes) {
    for (const parallelism of [1, 2, 3, 4]) {
      it(`${mode.name}, parallelism ${parallelism}: >= 5 failures, the committed files equal the reference`, async () => {
        const records = 12_000;
        const seed = 1000 * parallelism + (mode.name.startsWith('aligned') ? 1 : 2);
        const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: records });
        const { result, committed, leftovers } = await runCountingJob({ parallelism, config: mode.config, plan, records, files: true });
        const diff = compareMultisets(committed, countReference(records));
        expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
        expect(diff, plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
        expect(committed.length, plan.describe()).toBe(records);
        expect(leftovers, plan.describe()).toEqual([]);
      });
    }
  }

  for (const parallelism of [1, 2, 3, 4]) {
    it(`at-least-once, parallelism ${parallelism}: >= 5 failures, no record lost`, async () => {
      const records = 12_000;
      const plan = FaultPlan.seeded({ seed: 77 + parallelism, recordFaults: 5, recordRange: records });
      const { result, committed } = await runCountingJob({
        parallelism,
        config: { 'execution.checkpointing.mode': 'AT_LEAST_ONCE' },
        plan,
        records,
        emitRecord: true,
        files: true,
      });
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      const seen = new Set(committed);
      const lost = Array.from({ length: records }, (_, i) => String(i)).filter((r) => !seen.has(r));
      expect(lost.length, plan.describe()).toBe(0);
    });
  }

  it('failures in the synchronous and asynchronous snapshot phases and while committing: restored, still exact', { timeout: 20_000 }, async () => {
    const records = 12_000;
    const plan = FaultPlan.seeded({ seed: 4242, recordFaults: 2, recordRange: records, snapshotSyncFaults: 2, snapshotAsyncFaults: 2, commitFaults: 2, checkpointRange: 12 });
    const { result, committed, logs } = await runCountingJob({ parallelism: 2, config: {}, plan, records });
    expect(plan.fired.length, `${plan.describe()}\n${logs.join('\n')}`).toBe(plan.faults.length);
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(plan.faults.filter((f) => f.kind !== 'snapshot-async').length);
    expect(compareMultisets(committed, countReference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('tolerable failed checkpoints: declined checkpoints within the budget cause no restart', async () => {
    const records = 12_000;
    const plan = FaultPlan.seeded({ seed: 9, snapshotAsyncFaults: 3, checkpointRange: 10 });
    const { result, committed } = await runCountingJob({
      parallelism: 2,
      config: { 'execution.checkpointing.tolerable-failed-checkpoints': 5 },
      plan,
      records,
    });
    expect(plan.fired.length, plan.describe()).toBe(3);
    expect(result.numRestarts, plan.describe()).toBe(0);
    expect(compareMultisets(committed, countReference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('with no tolerable failures, a declined checkpoint fails the job over', async () => {
    const records = 8_000;
    const plan = FaultPlan.seeded({ seed: 11, snapshotAsyncFaults: 1, checkpointRange: 4 });
    const { result, committed, logs } = await runCountingJob({ parallelism: 2, config: {}, plan, records });
    expect(result.numRestarts, logs.join('\n')).toBe(1);
    expect(logs.some((l) => /Exceeded checkpoint tolerable failure threshold/.test(l)), logs.join('\n')).toBe(true);
    expect(compareMultisets(committed, countReference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
