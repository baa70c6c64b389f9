import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { COLLECT_BUFFER_RECORDS } from '../src/api/collect-result-iterator.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const KEYS = 7;

function env(config: Record<string, string | number | boolean> = {}): StreamExecutionEnvironment {
  return StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'restart-strategy.type': 'none', ...config });
}

async function drain<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

describe('DataStream.executeAndCollect (Flink executeAndCollect)', () => {
  it('without checkpointing, a bounded job at parallelism 2: the iterator yields every record, then ends', async () => {
    const e = env();
    const it = e.fromSource(numberSource({ count: 20_000 }), 'numbers').map((n) => n * 3).executeAndCollect('times three');
    const got = await drain(it);
    expect(got.length).toBe(20_000);
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 20_000 }, (_, i) => i * 3));
    const result = await it.jobClient.result;
    expect(result.status).toBe('FINISHED');
    expect(result.jobName).toBe('times three');
  });

  it('records of one upstream subtask keep their order (the collect sink has parallelism 1)', async () => {
    const got = await drain(env({ 'parallelism.default': 1 }).fromElements(...Array.from({ length: 500 }, (_, i) => i)).executeAndCollect());
    expect(got).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('with a limit: the first `limit` records, the job canceled; fewer when the job ends first', async () => {
    const first = await env().fromSource(numberSource({ count: 10_000_000, eventsPerSecond: 20_000 }), 'numbers').executeAndCollect(25);
    expect(first.length).toBe(25);
    expect(new Set(first).size).toBe(25);
    const all = await env().fromElements(1, 2, 3).executeAndCollect('three', 10);
    expect(all.sort()).toEqual([1, 2, 3]);
  });

  it('leaving the loop early cancels the job', async () => {
    const it = env().fromSource(numberSource({ count: 10_000_000, eventsPerSecond: 20_000 }), 'numbers').executeAndCollect();
    let n = 0;
    for await (const _ of it) if (++n === 10) break;
    expect((await it.jobClient.result).status).toBe('CANCELED');
  });

  it('with checkpointing and >= 5 injected failures: every count exactly once, handed out while the job runs', { timeout: 30_000 }, async () => {
    const records = 12_000;
    const plan = FaultPlan.seeded({ seed: 6060, recordFaults: 5, recordRange: records });
    const e = env({
      'execution.checkpointing.interval': 25,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 20,
      'restart-strategy.fixed-delay.delay': 5,
    });
    const it = e
      .fromSource(numberSource({ count: records, eventsPerSecond: 10_000 }), 'numbers')
      .process(plan.failingProcess<number>())
      .keyBy((n) => n % KEYS)
      .process<string>(new CountPerKey())
      .executeAndCollect();
    const got: string[] = [];
    let beforeEnd = 0;
    let ended = false;
    void it.jobClient.result.finally(() => (ended = true));
    for await (const r of it) {
      got.push(r);
      if (!ended) beforeEnd++;
    }
    const result = await it.jobClient.result;
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(got, countReference(records, KEYS)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(got.length).toBe(records);
    // Handed out checkpoint by checkpoint, not all at the end.
    expect(beforeEnd).toBeGreaterThan(records / 4);
  });

  it('without checkpointing, a restart fails the iterator with an error naming the fix (records handed out would repeat)', async () => {
    let seen = 0;
    const it = env({ 'restart-strategy.type': 'fixed-delay', 'restart-strategy.fixed-delay.attempts': 3, 'restart-strategy.fixed-delay.delay': 0 })
      .fromSource(numberSource({ count: 10_000, eventsPerSecond: 50_000 }), 'numbers')
      .map((n) => {
        if (++seen === 3_000) throw new Error('injected');
        return n;
      })
      .executeAndCollect();
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const v of it) got.push(v);
      })(),
    ).rejects.toThrow(/restarted without checkpointing.*enable checkpointing/);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(10_000);
  });

  it("a job that fails for good: the records handed out first, then the job's error", async () => {
    const it = env()
      .fromSource(numberSource({ count: 10_000, eventsPerSecond: 50_000 }), 'numbers')
      .setParallelism(1)
      .map((n) => {
        if (n === 5_000) throw new Error('record 5000 is bad');
        return n;
      })
      .setParallelism(1)
      .executeAndCollect();
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const v of it) got.push(v);
      })(),
    ).rejects.toThrow(/record 5000 is bad/);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i));
    expect(got.length).toBeGreaterThan(0);
  });

  it('a reader that pauses backpressures the job: the sink holds at most its buffer', async () => {
    const n = 200_000;
    const it = env({ 'parallelism.default': 1 }).fromSource(numberSource({ count: n }), 'numbers').executeAndCollect();
    const got: number[] = [];
    for (let i = 0; i < 10; i++) got.push((await it.next()).value as number);
    await new Promise((r) => setTimeout(r, 400));
    const progress = it.jobClient.progress();
    // Source and sink are chained (parallelism 1): what the source emitted is what the sink took.
    expect(progress.sourceRecords).toBeGreaterThanOrEqual(COLLECT_BUFFER_RECORDS);
    expect(progress.sourceRecords).toBeLessThanOrEqual(COLLECT_BUFFER_RECORDS + 64);
    for await (const v of it) got.push(v);
    expect(got).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('refuses a limit that is not a positive whole number', () => {
    const s = env().fromElements(1);
    expect(() => s.executeAndCollect(0)).toThrow(/positive whole number/);
    expect(() => s.executeAndCollect('x', 1.5)).toThrow(/positive whole number/);
  });
});
