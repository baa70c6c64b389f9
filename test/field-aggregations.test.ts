// sum / min / max / minBy / maxBy on keyed and windowed streams (Flink's field aggregations),
// compared with results computed here.
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy, type KeyedStream, type SingleOutputStream } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';

interface Trade {
  readonly symbol: string;
  readonly price: number;
  readonly seq: number;
}

const trades: Trade[] = [
  { symbol: 'A', price: 5, seq: 1 },
  { symbol: 'B', price: 7, seq: 2 },
  { symbol: 'A', price: 3, seq: 3 },
  { symbol: 'A', price: 3, seq: 4 },
  { symbol: 'B', price: 9, seq: 5 },
  { symbol: 'A', price: 8, seq: 6 },
];

/** The rolling aggregation `apply` makes of the trades keyed by symbol, at parallelism 1 (one order). */
async function rolling(apply: (keyed: KeyedStream<Trade, string>) => SingleOutputStream<Trade>): Promise<string[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
  const sink = new CollectSink<Trade>();
  apply(env.fromElements(...trades).keyBy((t) => t.symbol)).sinkTo(sink);
  expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
  return sink.values.map((t) => `${t.symbol}${t.price}#${t.seq}`);
}

describe('field aggregations', () => {
  it('keyed sum on a tuple position: word count as Flink writes it (.sum(1)), at parallelism 3', async () => {
    const words = 'to be or not to be that is the question to be'.split(' ');
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<[string, number]>();
    env
      .fromElements(...words)
      .map((w): [string, number] => [w, 1])
      .keyBy((t) => t[0])
      .sum(1)
      .sinkTo(sink);
    expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
    const want: string[] = [];
    const counts = new Map<string, number>();
    for (const w of words) {
      counts.set(w, (counts.get(w) ?? 0) + 1);
      want.push(`${w}:${counts.get(w)}`);
    }
    expect(sink.values.map(([w, n]) => `${w}:${n}`).sort()).toEqual(want.sort());
  });

  it('min/max keep the first record\'s other fields; minBy/maxBy keep the whole record (first or last on a tie)', async () => {
    expect(await rolling((k) => k.min('price'))).toEqual(['A5#1', 'B7#2', 'A3#1', 'A3#1', 'B7#2', 'A3#1']);
    expect(await rolling((k) => k.max('price'))).toEqual(['A5#1', 'B7#2', 'A5#1', 'A5#1', 'B9#2', 'A8#1']);
    expect(await rolling((k) => k.minBy('price'))).toEqual(['A5#1', 'B7#2', 'A3#3', 'A3#3', 'B7#2', 'A3#3']);
    expect(await rolling((k) => k.minBy('price', false))).toEqual(['A5#1', 'B7#2', 'A3#3', 'A3#4', 'B7#2', 'A3#4']);
    expect(await rolling((k) => k.maxBy('price'))).toEqual(['A5#1', 'B7#2', 'A5#1', 'A5#1', 'B9#5', 'A8#6']);
    expect(await rolling((k) => k.sum('price'))).toEqual(['A5#1', 'B7#2', 'A8#1', 'A11#1', 'B16#2', 'A19#1']);
  });

  it('per window: sum and maxBy of event-time tumbling windows', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sums = new CollectSink<Trade>();
    const best = new CollectSink<Trade>();
    const windowed = env
      .fromElements(...trades)
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Trade>().withTimestampAssigner((t) => t.seq * 10))
      .keyBy((t) => t.symbol)
      .window(TumblingEventTimeWindows.of(35));
    windowed.sum('price').sinkTo(sums);
    windowed.maxBy('price').sinkTo(best);
    expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
    // Windows [0,35): seq 1-3, [35,70): seq 4-6.
    expect(sums.values.map((t) => `${t.symbol}${t.price}`).sort()).toEqual(['A8', 'A11', 'B7', 'B9'].sort());
    expect(best.values.map((t) => `${t.symbol}${t.price}#${t.seq}`).sort()).toEqual(['A5#1', 'A8#6', 'B7#2', 'B9#5'].sort());
  });

  it('a field that is not a number fails the job naming the aggregation and the field', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
    env
      .fromElements<[string, number]>(['a', 1], ['a', 2])
      .map((t) => [t[0], String(t[1])] as unknown as [string, number])
      .keyBy((t) => t[0])
      .sum(1)
      .sinkTo(new CollectSink());
    await expect(new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).rejects.toThrow(/sum\(1\): the field of a record is string, not a number/);
  });
});
