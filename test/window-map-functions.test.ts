// Window functions that return their one result instead of collecting it (the form whose output
// type TypeScript infers): process, and the window function of reduce and aggregate, on time
// windows (with and without a trigger), count windows and windows without keys. Each runs
// beside the same window with a collecting ProcessWindowFunction, and both must agree.
import { describe, expect, it } from 'vitest';
import {
  CountTrigger,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type AggregateFunction,
  type Collector,
  type DataStream,
  type WindowContext,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

const WINDOW_MS = 10;
const sum: AggregateFunction<number, number, number> = { createAccumulator: () => 0, add: (n, s) => s + n, getResult: (s) => s, merge: (a, b) => a + b };
const add = (a: number, b: number): number => a + b;
const describeWindow = (ctx: WindowContext): string => `${ctx.window.start}-${ctx.window.end}`;

/** Runs the job; returns both sinks' records, sorted, to compare. */
async function both<T>(env: StreamExecutionEnvironment, returned: DataStream<T>, collected: DataStream<T>): Promise<[T[], T[]]> {
  const a = new CollectSink<T>();
  const b = new CollectSink<T>();
  returned.sinkTo(a);
  collected.sinkTo(b);
  await env.execute();
  const sorted = (xs: readonly T[]): T[] => [...xs].sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
  return [sorted(a.values), sorted(b.values)];
}

function numbers(env: StreamExecutionEnvironment): DataStream<number> {
  return env.fromSequence(0, 99).assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n));
}

describe('window functions that return their result', () => {
  it('keyed time windows: process, reduce and aggregate', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const windowed = () => numbers(env).keyBy((n) => n % 3).window(TumblingEventTimeWindows.of(WINDOW_MS));
    const returned = windowed()
      .process((key, ctx, xs) => `process ${key} ${describeWindow(ctx)} ${xs.length}`)
      .union(
        windowed().reduce(add, (key, ctx, total) => `reduce ${key} ${describeWindow(ctx)} ${total}`),
        windowed().aggregate(sum, (key, ctx, total) => `aggregate ${key} ${describeWindow(ctx)} ${total}`),
      );
    const collected = windowed()
      .process<string>({ process: (key, ctx, xs, out) => out.collect(`process ${key} ${describeWindow(ctx)} ${xs.length}`) })
      .union(
        windowed().reduce(add, { process: (key, ctx, [total], out: Collector<string>) => out.collect(`reduce ${key} ${describeWindow(ctx)} ${total}`) }),
        windowed().aggregate(sum, { process: (key, ctx, [total], out: Collector<string>) => out.collect(`aggregate ${key} ${describeWindow(ctx)} ${total}`) }),
      );
    const [a, b] = await both(env, returned, collected);
    expect(a).toEqual(b);
    expect(a).toHaveLength(3 * 10 * 3);
    expect(a).toContain('aggregate 0 0-10 18');
  });

  it('keyed time windows with a trigger (the operator for triggers and evictors)', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const windowed = () => numbers(env).keyBy((n) => n % 3).window(TumblingEventTimeWindows.of(WINDOW_MS)).trigger(CountTrigger.of(2));
    const returned = windowed()
      .process((key, ctx, xs) => `process ${key} ${describeWindow(ctx)} ${xs.join(',')}`)
      .union(windowed().aggregate(sum, (key, ctx, total) => `aggregate ${key} ${describeWindow(ctx)} ${total}`));
    const collected = windowed()
      .process<string>({ process: (key, ctx, xs, out) => out.collect(`process ${key} ${describeWindow(ctx)} ${xs.join(',')}`) })
      .union(windowed().aggregate(sum, { process: (key, ctx, [total], out: Collector<string>) => out.collect(`aggregate ${key} ${describeWindow(ctx)} ${total}`) }));
    const [a, b] = await both(env, returned, collected);
    expect(a).toEqual(b);
    expect(a.filter((r) => r.startsWith('process 0 0-10 '))).toHaveLength(2);
  });

  it('count windows: process, reduce and aggregate', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    // One producer before the keyBy: each key's records stay in order.
    const windowed = () => env.fromSequence(0, 99).setParallelism(1).keyBy((n) => n % 3).countWindow(4, 2);
    const returned = windowed()
      .process((key, _ctx, xs) => `process ${key} ${xs.join(',')}`)
      .union(windowed().reduce(add, (key, _ctx, total) => `reduce ${key} ${total}`), windowed().aggregate(sum, (key, _ctx, total) => `aggregate ${key} ${total}`));
    const collected = windowed()
      .process<string>({ process: (key, _ctx, xs, out) => out.collect(`process ${key} ${xs.join(',')}`) })
      .union(
        windowed().reduce(add, { process: (key, _ctx, [total], out: Collector<string>) => out.collect(`reduce ${key} ${total}`) }),
        windowed().aggregate(sum, { process: (key, _ctx, [total], out: Collector<string>) => out.collect(`aggregate ${key} ${total}`) }),
      );
    const [a, b] = await both(env, returned, collected);
    expect(a).toEqual(b);
    expect(a).toContain('process 0 0,3,6,9');
  });

  it('windows without keys: process, reduce and aggregate', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const windowed = () => numbers(env).windowAll(TumblingEventTimeWindows.of(WINDOW_MS));
    const returned = windowed()
      .process((ctx, xs) => `process ${describeWindow(ctx)} ${xs.length}`)
      .union(
        windowed().reduce(add, (ctx, total) => `reduce ${describeWindow(ctx)} ${total}`),
        windowed().aggregate(sum, (ctx, total) => `aggregate ${describeWindow(ctx)} ${total}`),
      );
    const collected = windowed()
      .process<string>({ process: (ctx, xs, out) => out.collect(`process ${describeWindow(ctx)} ${xs.length}`) })
      .union(
        windowed().reduce(add, { process: (ctx, [total], out: Collector<string>) => out.collect(`reduce ${describeWindow(ctx)} ${total}`) }),
        windowed().aggregate(sum, { process: (ctx, [total], out: Collector<string>) => out.collect(`aggregate ${describeWindow(ctx)} ${total}`) }),
      );
    const [a, b] = await both(env, returned, collected);
    expect(a).toEqual(b);
    expect(a).toHaveLength(3 * 10);
    expect(a).toContain('aggregate 0-10 45');
  });
});
