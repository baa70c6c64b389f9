import { describe, expect, it } from 'vitest';
import {
  CountTrigger,
  SlidingEventTimeWindows,
  EventTimeSessionWindows,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  valueState,
  WatermarkStrategy,
  type ProcessWindowFunction,
  type WatermarkGenerator,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

type Ev = { k: string; ts: number };
/** A watermark right behind each record, in the order of the (single) source. */
const punctuated = (): WatermarkGenerator<Ev> => ({ onEvent: (_e, ts, out) => out.emitWatermark(ts - 1), onPeriodicEmit: () => {} });
const strategy = WatermarkStrategy.forGenerator(punctuated).withTimestampAssigner((e: Ev) => e.ts);

const firings = valueState<number>('firings');
const keyFirings = valueState<number>('key-firings');

/** Counts each window's firings in its window state and the key's in its global state; reports what clear() finds. */
function counting(cleared: string[]): ProcessWindowFunction<Ev, string, string> {
  return {
    process(key, ctx, elements, out) {
      const n = (ctx.windowState().getState(firings).value() ?? 0) + 1;
      ctx.windowState().getState(firings).update(n);
      const g = (ctx.globalState().getState(keyFirings).value() ?? 0) + 1;
      ctx.globalState().getState(keyFirings).update(g);
      out.collect(`${key}@${ctx.window.start} firing ${n} (key's ${g}) with ${elements.length}`);
    },
    clear(ctx) {
      const state = ctx.windowState().getState(firings);
      cleared.push(`${ctx.window.start}:${state.value()}`);
      state.clear();
    },
  };
}

describe('per-window state in ProcessWindowFunction', () => {
  // a@10 b@20 a@50 | a@150 fires [0,100) | late a@60 fires a's again | a@250 | late b@70 fires b's again | a@400
  const events: Ev[] = [
    { k: 'a', ts: 10 },
    { k: 'b', ts: 20 },
    { k: 'a', ts: 50 },
    { k: 'a', ts: 150 },
    { k: 'a', ts: 60 },
    { k: 'a', ts: 250 },
    { k: 'b', ts: 70 },
    { k: 'a', ts: 400 },
  ];

  for (const withTrigger of [false, true]) {
    it(`windowState() counts a window's firings (late ones too), globalState() the key's; clear() sees the count when the window is over${withTrigger ? ' (window with a trigger)' : ''}`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
      const sink = new CollectSink<string>();
      const cleared: string[] = [];
      let windowed = env
        .fromElements(...events)
        .assignTimestampsAndWatermarks(strategy)
        .setParallelism(1) // one producer: records and watermarks reach the windows in the source's order
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .allowedLateness(200);
      // A trigger of 1 record fires with every record (the late ones too): counts differ accordingly.
      if (withTrigger) windowed = windowed.trigger(CountTrigger.of(1));
      windowed.process(counting(cleared)).sinkTo(sink);
      await env.execute();
      const want = withTrigger
        ? [
            'a@0 firing 1 (key\'s 1) with 1',
            'b@0 firing 1 (key\'s 1) with 1',
            'a@0 firing 2 (key\'s 2) with 2',
            'a@100 firing 1 (key\'s 3) with 1',
            'a@0 firing 3 (key\'s 4) with 3',
            'a@200 firing 1 (key\'s 5) with 1',
            'b@0 firing 2 (key\'s 2) with 2',
            'a@400 firing 1 (key\'s 6) with 1',
          ]
        : [
            'a@0 firing 1 (key\'s 1) with 2',
            'b@0 firing 1 (key\'s 1) with 1',
            'a@0 firing 2 (key\'s 2) with 3',
            'a@100 firing 1 (key\'s 3) with 1',
            'b@0 firing 2 (key\'s 2) with 2',
            'a@200 firing 1 (key\'s 4) with 1',
            'a@400 firing 1 (key\'s 5) with 1',
          ];
      expect([...sink.values].sort()).toEqual([...want].sort());
      // Each key's results in order (one subtask per key).
      for (const k of ['a', 'b']) expect(sink.values.filter((v) => v.startsWith(k))).toEqual(want.filter((v) => v.startsWith(k)));
      // clear() once per window and key, after its last firing, with its state still there.
      const perWindow = new Map<string, number>();
      for (const w of want) {
        const [, start, n] = /^.@(\d+) firing (\d+)/.exec(w)!;
        perWindow.set(`${w[0]}${start}`, Math.max(perWindow.get(`${w[0]}${start}`) ?? 0, Number(n)));
      }
      expect([...cleared].sort()).toEqual([...perWindow].map(([kw, n]) => `${kw.slice(1)}:${n}`).sort());
    });
  }

  it('sliding windows sharing slices: clear() once for every window of every key, after it fired', async () => {
    const evs: Ev[] = Array.from({ length: 400 }, (_, i) => ({ k: `k${i % 3}`, ts: 7 * i }));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<string>();
    const cleared: string[] = [];
    env
      .fromElements(...evs)
      .assignTimestampsAndWatermarks(strategy)
      .setParallelism(1)
      .keyBy((e) => e.k)
      .window(SlidingEventTimeWindows.of(200, 50))
      .aggregate<number, number, string>(
        { createAccumulator: () => 0, add: (_e: Ev, n: number) => n + 1, getResult: (n: number) => n, merge: (a: number, b: number) => a + b },
        {
          process(key, ctx, [n], out) {
            ctx.windowState().getState(firings).update(n!);
            out.collect(`${key}@${ctx.window.start}`);
          },
          clear(ctx) {
            cleared.push(`${ctx.window.start}:${ctx.windowState().getState(firings).value()}`);
            ctx.windowState().getState(firings).clear();
          },
        },
      )
      .sinkTo(sink);
    await env.execute();
    // Every key has records in every window from -150 on: one result and one clear() per (key, window).
    expect(sink.values.length).toBe(new Set(sink.values).size);
    expect(cleared.length).toBe(sink.values.length);
    const counts = new Map<string, number>();
    for (const e of evs) {
      for (let start = e.ts - (e.ts % 50); start > e.ts - 200; start -= 50) counts.set(`${start}`, (counts.get(`${start}`) ?? 0) + 1);
    }
    // What clear() found is each window's count over all keys, summed: the state was the window's.
    const sums = new Map<string, number>();
    for (const c of cleared) {
      const [start, n] = c.split(':');
      sums.set(start!, (sums.get(start!) ?? 0) + Number(n));
    }
    expect(sums).toEqual(counts);
  });

  it('windowState() on session windows is refused, as in Flink', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    env
      .fromElements(...events)
      .assignTimestampsAndWatermarks(strategy)
      .keyBy((e) => e.k)
      .window(EventTimeSessionWindows.withGap(30))
      .process(counting([]))
      .sinkTo(new CollectSink<string>());
    await expect(env.execute()).rejects.toThrow(/per-window state is not allowed on session windows/);
  });
});
