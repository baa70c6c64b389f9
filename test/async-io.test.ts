// Async I/O (Flink's AsyncDataStream): calls to an external system under way side by side,
// results in order or as they come (never across a watermark), a bounded number of calls,
// timeouts and retries, and the records whose calls are under way kept in checkpoints, so the
// output stays exactly-once across failures and a restore at another parallelism.
import { describe, expect, it } from 'vitest';
import {
  AsyncDataStream,
  AsyncRetryStrategies,
  RetryPredicates,
  StreamExecutionEnvironment,
  WatermarkStrategy,
  type AsyncFunction,
  type ResultFuture,
} from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { tempDirs } from './support/temp-dirs.js';
import { failoverConfig } from './support/failover-config.js';

const tempDir = tempDirs('sluice-async-');
const quiet = { log: () => {} };

/** What the "external system" answers for n: none for multiples of 10, two for multiples of 7, else one. */
function answer(n: number): string[] {
  if (n % 10 === 0) return [];
  if (n % 7 === 0) return [`${n}:a`, `${n}:b`];
  return [`${n}:${n * 2}`];
}

function reference(records: number): string[] {
  return Array.from({ length: records }, (_, n) => answer(n)).flat();
}

/** A lookup answering after a seeded random delay of up to `maxDelayMs`. */
function lookup(seed: number, maxDelayMs: number): AsyncFunction<number, string> {
  const rnd = seededRandom(seed);
  return {
    asyncInvoke(n, result) {
      setTimeout(() => result.complete(answer(n)), Math.floor(rnd() * (maxDelayMs + 1)));
    },
  };
}

interface JobOptions {
  readonly parallelism: number;
  readonly records: number;
  readonly eventsPerSecond: number;
  readonly out: string;
  readonly ordered: boolean;
  readonly maxDelayMs: number;
  readonly capacity: number;
  readonly plan?: FaultPlan;
  readonly config?: Record<string, string | number | boolean>;
}

function exactlyOnceJob(o: JobOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({
    ...failoverConfig(o.parallelism),
    ...o.config,
  });
  let numbers = env.fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond }), 'numbers').uid('numbers');
  if (o.plan !== undefined) numbers = numbers.process(o.plan.failingProcess<number>()).uid('faults');
  const wait = o.ordered ? AsyncDataStream.orderedWait : AsyncDataStream.unorderedWait;
  wait(numbers, lookup(o.plan?.faults.length ?? 1, o.maxDelayMs), 10_000, o.capacity)
    .uid('lookup')
    .sinkTo(new ExactlyOnceFileSink<string>(o.out))
    .uid('sink');
  return env;
}

async function run(env: StreamExecutionEnvironment): Promise<Awaited<ReturnType<LocalExecutor['run']>>> {
  return new LocalExecutor(env.getJobGraph(), env.config, quiet).run();
}

describe('async I/O', () => {
  it('orderedWait: every result, in input order per subtask, with the input timestamp; calls overlap', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<string>();
    let inFlight = 0;
    let maxInFlight = 0;
    const rnd = seededRandom(11);
    const source = env
      .fromSource(numberSource({ count: 2_000 }), 'numbers')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n * 10));
    AsyncDataStream.orderedWait<number, string>(
      source,
      (n, result) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          result.complete(answer(n));
        }, Math.floor(rnd() * 4));
      },
      10_000,
      16,
    ).sinkTo(sink);
    expect((await run(env)).status).toBe('FINISHED');
    expect(sink.values).toEqual(reference(2_000));
    // Each result carries its record's timestamp.
    expect(sink.timestamps).toEqual(reference(2_000).map((s) => Number(s.split(':')[0]) * 10));
    // At most `capacity` calls at once (the source feeds the operator directly: no fan-out before it), and they overlap.
    expect(maxInFlight).toBe(16);
  });

  it('unorderedWait: results as they come, but no result after a watermark that followed its record', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 1 });
    const late: string[] = [];
    const seen: string[] = [];
    const rnd = seededRandom(12);
    const source = env
      .fromSource(numberSource({ count: 3_000, eventsPerSecond: 30_000 }), 'numbers')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n));
    AsyncDataStream.unorderedWait<number, string>(
      source,
      (n, result) => {
        setTimeout(() => result.complete(answer(n)), Math.floor(rnd() * 8));
      },
      10_000,
      64,
    )
      .process<string>({
        processElement(s, ctx, out) {
          // A result whose timestamp is not above the watermark would be late for event-time operators after this one.
          if (ctx.timestamp()! <= ctx.timerService().currentWatermark()) late.push(s);
          seen.push(s);
          out.collect(s);
        },
      })
      .sinkTo(new CollectSink<string>());
    expect((await run(env)).status).toBe('FINISHED');
    expect(late).toEqual([]);
    expect(compareMultisets(seen, reference(3_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // Unordered does reorder: the delays are random.
    const order = seen.map((s) => Number(s.split(':')[0]));
    expect(order.some((n, i) => i > 0 && n < order[i - 1]!)).toBe(true);
  });

  const variants: { name: string; ordered: boolean; config: Record<string, boolean> }[] = [
    { name: 'aligned, unordered', ordered: false, config: {} },
    { name: 'unaligned, ordered', ordered: true, config: { 'execution.checkpointing.unaligned.enabled': true } },
  ];
  for (const variant of variants) {
    it(`>= 5 injected failures (${variant.name} checkpoints): the calls under way come back from the checkpoint; exactly once`, { timeout: 60_000 }, async () => {
      const out = tempDir();
      const records = 6_000;
      const plan = FaultPlan.seeded({ seed: 7300 + (variant.ordered ? 1 : 0), recordFaults: 5, recordRange: records });
      // Slow calls (up to 15 ms) and a large queue: every checkpoint holds records whose calls are under way.
      const env = exactlyOnceJob({ parallelism: 2, records, eventsPerSecond: 20_000, out, ordered: variant.ordered, maxDelayMs: 15, capacity: 200, plan, config: variant.config });
      const result = await run(env);
      expect(result.status, plan.describe()).toBe('FINISHED');
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      expect(compareMultisets(await readCommittedLines(out), reference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });
  }

  it('stop with a savepoint while calls are under way, restore at parallelism 2 -> 3: exactly once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const first = exactlyOnceJob({ parallelism: 2, records, eventsPerSecond: 8_000, out, ordered: false, maxDelayMs: 40, capacity: 300 });
    const a = new LocalExecutor(first.getJobGraph(), first.config, quiet);
    const done = a.run();
    while (a.checkpointStats.counts.completed < 3) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await a.stopWithSavepoint(tempDir(), false);
    expect((await done).status).toBe('FINISHED');
    expect((await readCommittedLines(out)).length).toBeLessThan(reference(records).length);
    const second = exactlyOnceJob({ parallelism: 3, records, eventsPerSecond: 100_000, out, ordered: false, maxDelayMs: 5, capacity: 300 });
    const b = new LocalExecutor(second.getJobGraph(), second.config, { ...quiet, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
    expect((await b.run()).status).toBe('FINISHED');
    expect(compareMultisets(await readCommittedLines(out), reference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('a call that does not complete in time fails the job, naming the record and the fix; timeout() may answer instead', { timeout: 30_000 }, async () => {
    const job = (fn: AsyncFunction<number, string>): StreamExecutionEnvironment => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      const sink = new CollectSink<string>();
      AsyncDataStream.orderedWait(env.fromElements(1, 2, 3), fn, 30).sinkTo(sink);
      return env;
    };
    const hangsOnTwo = (n: number, result: ResultFuture<string>): void => {
      if (n !== 2) result.complete([`${n}`]);
    };
    await expect(run(job({ asyncInvoke: hangsOnTwo }))).rejects.toThrow(
      /the async call for record 2 did not complete within 30 ms; raise the timeout of AsyncDataStream\.orderedWait\/unorderedWait, or give the function a timeout\(input, resultFuture\)/,
    );
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<string>();
    AsyncDataStream.orderedWait<number, string>(env.fromElements(1, 2, 3), { asyncInvoke: hangsOnTwo, timeout: (n, r) => r.complete([`${n}:default`]) }, 30).sinkTo(sink);
    expect((await run(env)).status).toBe('FINISHED');
    expect(sink.values).toEqual(['1', '2:default', '3']);
  });

  it('a failed call fails the job (and restarts it); a bad complete() argument says how to call it', async () => {
    const job = (fn: (n: number, r: ResultFuture<string>) => void | Promise<void>): Promise<unknown> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      AsyncDataStream.unorderedWait(env.fromElements(1, 2), fn, 1_000).sinkTo(new CollectSink<string>());
      return run(env);
    };
    await expect(job(async (n) => Promise.reject(new Error(`lookup of ${n} refused`)))).rejects.toThrow(/the async call for record 1 failed: lookup of 1 refused/);
    await expect(job((n, r) => r.complete('text' as unknown as string[]))).rejects.toThrow(/ResultFuture.complete takes the call's results as an array .*got a string: pass complete\(\[result\]\)/);
    expect(() => AsyncDataStream.orderedWait(StreamExecutionEnvironment.create().fromElements(1), () => {}, -1)).toThrow(/the timeout must be a finite number of milliseconds >= 0/);
    expect(() => AsyncDataStream.unorderedWait(StreamExecutionEnvironment.create().fromElements(1), () => {}, 10, 0)).toThrow(/the capacity must be an integer >= 1/);
  });

  it('retries: failed and empty calls are called again after the backoff, up to maxAttempts retries', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
    const sink = new CollectSink<string>();
    const calls = new Map<number, number>();
    const strategy = AsyncRetryStrategies.fixedDelay<string>(3, 2).ifResult(RetryPredicates.EMPTY_RESULT_PREDICATE).ifException(RetryPredicates.HAS_EXCEPTION_PREDICATE).build();
    AsyncDataStream.unorderedWaitWithRetry<number, string>(
      env.fromElements(1, 2, 3, 4),
      (n, result) => {
        const c = (calls.get(n) ?? 0) + 1;
        calls.set(n, c);
        // 1: fails twice, then answers; 2: empty three times, then answers; 3: answers; 4: empty every time.
        if (n === 1 && c <= 2) result.completeExceptionally(new Error('busy'));
        else if ((n === 2 && c <= 3) || n === 4) result.complete([]);
        else result.complete([`${n}@${c}`]);
      },
      5_000,
      10,
      strategy,
    ).sinkTo(sink);
    expect((await run(env)).status).toBe('FINISHED');
    expect([...sink.values].sort()).toEqual(['1@3', '2@4', '3@1']);
    // 4 was retried 3 times (4 calls), then its empty result stands.
    expect(Object.fromEntries(calls)).toEqual({ 1: 3, 2: 4, 3: 1, 4: 4 });
  });
});
