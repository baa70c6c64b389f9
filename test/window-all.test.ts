// windowAll (Flink's AllWindowedStream): windows over a whole stream without keys, on one
// subtask, fed by parallel upstream subtasks; exactly-once through failures.
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy, type AggregateFunction } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { tempDirs } from './support/temp-dirs.js';
import { failoverConfig } from './support/failover-config.js';

const tempDir = tempDirs('sluice-window-all-');
const WINDOW_MS = 100;

/** Independent reference: per window of WINDOW_MS over timestamps n, the count and sum of n in [0, records). */
function reference(records: number): string[] {
  const byWindow = new Map<number, { count: number; sum: number }>();
  for (let n = 0; n < records; n++) {
    const w = Math.floor(n / WINDOW_MS) * WINDOW_MS;
    const a = byWindow.get(w) ?? { count: 0, sum: 0 };
    a.count++;
    a.sum += n;
    byWindow.set(w, a);
  }
  return [...byWindow].map(([w, a]) => `${w}-${w + WINDOW_MS}:${a.count}:${a.sum}`);
}

const countAndSum: AggregateFunction<number, [number, number], [number, number]> = {
  createAccumulator: () => [0, 0],
  add: (n, [c, s]) => [c + 1, s + n],
  getResult: (acc) => acc,
  merge: (a, b) => [a[0] + b[0], a[1] + b[1]],
};

describe('windowAll', () => {
  it('one subtask windows the records of every upstream subtask (-p 3): aggregate + ProcessAllWindowFunction, and sum', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const results = new CollectSink<string>();
    const sums = new CollectSink<[string, number]>();
    const numbers = env
      .fromSource(numberSource({ count: 3_000 }), 'numbers')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<number>(0).withTimestampAssigner((n) => n));
    numbers
      .windowAll(TumblingEventTimeWindows.of(WINDOW_MS))
      .aggregate<[number, number], [number, number], string>(countAndSum, {
        process(ctx, [[count, sum]], out) {
          out.collect(`${ctx.window.start}-${ctx.window.end}:${count}:${sum}`);
        },
      })
      .sinkTo(results);
    numbers
      .map((n): [string, number] => ['all', n])
      .windowAll(TumblingEventTimeWindows.of(WINDOW_MS))
      .sum(1)
      .sinkTo(sums);
    const graph = env.getJobGraph();
    expect(graph.vertices.filter((v) => v.name.includes('Window')).map((v) => v.parallelism)).toEqual([1, 1]);
    expect((await new LocalExecutor(graph, env.config, { log: () => {} }).run()).status).toBe('FINISHED');
    expect(compareMultisets(results.values, reference(3_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(sums.values.map((t) => t[1]).sort((a, b) => a - b)).toEqual(reference(3_000).map((l) => Number(l.split(':')[2])).sort((a, b) => a - b));
  });

  it('>= 5 injected failures with checkpoints: every window once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 8_000;
    const plan = FaultPlan.seeded({ seed: 7400, recordFaults: 5, recordRange: records });
    const env = StreamExecutionEnvironment.create(failoverConfig(2));
    env
      .fromSource(numberSource({ count: records, eventsPerSecond: 20_000 }), 'numbers')
      .uid('numbers')
      .process(plan.failingProcess<number>())
      .uid('faults')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<number>(0).withTimestampAssigner((n) => n))
      .uid('times')
      .windowAll(TumblingEventTimeWindows.of(WINDOW_MS))
      .aggregate<[number, number], [number, number], string>(countAndSum, { process: (ctx, [[count, sum]], o) => o.collect(`${ctx.window.start}-${ctx.window.end}:${count}:${sum}`) })
      .uid('window-all')
      .sinkTo(new ExactlyOnceFileSink<string>(out))
      .uid('sink');
    const result = await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run();
    expect(result.status, plan.describe()).toBe('FINISHED');
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(await readCommittedLines(out), reference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('countWindowAll(size) and countWindowAll(size, slide): windows of the whole stream by count, on one subtask', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const tumbling = new CollectSink<string>();
    const sliding = new CollectSink<string>();
    // One producer, so the one window subtask sees the records in order.
    const numbers = env.fromSequence(0, 99).setParallelism(1);
    numbers.countWindowAll(10).process<string>({ process: (_ctx, xs, out) => out.collect(xs.join(',')) }).sinkTo(tumbling).setParallelism(1);
    numbers.countWindowAll(4, 3).reduce((a, b) => a + b).map(String).setParallelism(1).sinkTo(sliding).setParallelism(1);
    await env.execute();
    expect(tumbling.values).toEqual(Array.from({ length: 10 }, (_, w) => Array.from({ length: 10 }, (_, i) => 10 * w + i).join(',')));
    // Every 3rd record, the sum of the last 4 (fewer at first): 0+1+2, then 2+3+4+5, ...
    const want: string[] = [];
    for (let c = 3; c <= 100; c += 3) {
      let sum = 0;
      for (let n = Math.max(0, c - 4); n < c; n++) sum += n;
      want.push(String(sum));
    }
    expect(sliding.values).toEqual(want);
  });

  it('its parallelism stays 1, with a reason', () => {
    const env = StreamExecutionEnvironment.create();
    const windowed = env.fromElements(1, 2).windowAll(TumblingEventTimeWindows.of(10)).reduce((a, b) => a + b);
    expect(() => windowed.setParallelism(4)).toThrow(/cannot set the parallelism of 'Window\(Reduce\)' to 4: windowAll runs on one subtask/);
    expect(() => windowed.setParallelism(1)).not.toThrow();
  });
});
