import { PacedSource } from './support/paced-source.js';
import { describe, expect, it, vi } from 'vitest';
import {
  mapState,
  OutputTag,
  StreamExecutionEnvironment,
  valueState,
  WatermarkStrategy,
  type CoProcessFunction,
  type DataStream,
  type KeyedCoProcessFunction,
  type KeyedProcessFunction,
  type MapState,
  type ProcessFunction,
  type ValueState,
  type WatermarkGenerator,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';

// ---------------------------------------------------------------------------------------
// helpers

/** Sorted copy by a canonical JSON form: compares multisets of records. */
function sorted<T>(xs: readonly T[]): T[] {
  return [...xs].sort((a, b) => {
    const x = canon(a);
    const y = canon(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
function canon(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}
function expectSameMultiset<T>(actual: readonly T[], expected: readonly T[]): void {
  expect(actual.length).toBe(expected.length);
  expect(sorted(actual)).toEqual(sorted(expected));
}
function groupBy<T, K>(xs: readonly T[], key: (x: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const x of xs) {
    const l = m.get(key(x));
    if (l === undefined) m.set(key(x), [x]);
    else l.push(x);
  }
  return m;
}
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Watermarks right behind each event: ts - bound - 1 (deterministic, no periodic emission). */
function punctuated<T>(boundMs: number): () => WatermarkGenerator<T> {
  return () => ({
    onEvent(_e, ts, out) {
      out.emitWatermark(ts - boundMs - 1);
    },
    onPeriodicEmit() {},
  });
}


const PARALLELISMS = [1, 2, 3, 4] as const;

// ---------------------------------------------------------------------------------------

describe('stateless operators', () => {
  for (const p of PARALLELISMS) {
    it(`map, filter, flatMap (parallelism ${p})`, async () => {
      const input = range(2000);
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<string>();
      env
        .fromElements(...input)
        .map((n) => n * 3 + 1)
        .filter((n) => n % 4 !== 0)
        .flatMap<string>((n, out) => {
          for (let j = 0; j < n % 3; j++) out.collect(`${n}:${j}`);
        })
        .sinkTo(sink);
      await env.execute();
      const expected: string[] = [];
      for (const i of input) {
        const n = i * 3 + 1;
        if (n % 4 === 0) continue;
        for (let j = 0; j < n % 3; j++) expected.push(`${n}:${j}`);
      }
      expectSameMultiset(sink.values, expected);
    });
  }

  it('keeps order through a chain at parallelism 1', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<number>();
    env
      .fromElements(...range(500))
      .map((n) => n + 1)
      .filter((n) => n % 2 === 0)
      .sinkTo(sink);
    await env.execute();
    expect(sink.values).toEqual(range(500).map((n) => n + 1).filter((n) => n % 2 === 0));
  });

  it('records keep their timestamps through map/filter/flatMap; records without one have none', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 0 });
    const withTs = new CollectSink<number>();
    const withoutTs = new CollectSink<number>();
    const src = env.fromElements(...range(100));
    src.map((n) => n).sinkTo(withoutTs);
    src
      .assignTimestampsAndWatermarks(WatermarkStrategy.noWatermarks<number>().withTimestampAssigner((n) => 1000 + n * 10))
      .map((n) => n * 2)
      .filter((n) => n % 3 !== 0)
      .flatMap<number>((n, out) => out.collect(n))
      .sinkTo(withTs);
    await env.execute();
    expect(withoutTs.timestamps.every((t) => t === undefined)).toBe(true);
    const pairs = withTs.values.map((v, i) => [v, withTs.timestamps[i]]);
    expectSameMultiset(
      pairs,
      range(100)
        .filter((n) => (n * 2) % 3 !== 0)
        .map((n) => [n * 2, 1000 + n * 10]),
    );
  });
});

describe('process function, side outputs, union', () => {
  for (const p of PARALLELISMS) {
    it(`process with ctx.timestamp() and two side outputs (parallelism ${p})`, async () => {
      const odd = new OutputTag<string>('odd');
      const five = new OutputTag<{ n: number; ts: number | undefined }>('five');
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p, 'pipeline.auto-watermark-interval': 0 });
      const main = new CollectSink<[number, number | undefined]>();
      const oddSink = new CollectSink<string>();
      const fiveSink = new CollectSink<{ n: number; ts: number | undefined }>();
      const fn: ProcessFunction<number, [number, number | undefined]> = {
        processElement(n, ctx, out) {
          if (n % 5 === 0) ctx.output(five, { n, ts: ctx.timestamp() });
          if (n % 2 === 0) out.collect([n, ctx.timestamp()]);
          else ctx.output(odd, `odd-${n}`);
        },
      };
      const processed = env
        .fromElements(...range(1000))
        .assignTimestampsAndWatermarks(WatermarkStrategy.noWatermarks<number>().withTimestampAssigner((n) => n * 7))
        .process(fn);
      processed.sinkTo(main);
      processed.getSideOutput(odd).map((s) => s.toUpperCase().toLowerCase()).sinkTo(oddSink);
      processed.getSideOutput(five).rebalance().sinkTo(fiveSink);
      await env.execute();
      const input = range(1000);
      expectSameMultiset(
        main.values,
        input.filter((n) => n % 2 === 0).map((n) => [n, n * 7]),
      );
      expect(main.timestamps.every((t, i) => t === main.values[i]![1])).toBe(true);
      expectSameMultiset(
        oddSink.values,
        input.filter((n) => n % 2 === 1).map((n) => `odd-${n}`),
      );
      expectSameMultiset(
        fiveSink.values,
        input.filter((n) => n % 5 === 0).map((n) => ({ n, ts: n * 7 })),
      );
      // side output records carry the timestamp of the record being processed
      expect(fiveSink.timestamps.every((t, i) => t === fiveSink.values[i]!.ts)).toBe(true);
    });
  }

  it('ctx.timestamp() is undefined for records without a timestamp', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<boolean>();
    env
      .fromElements(...range(50))
      .process<boolean>({ processElement: (_n, ctx, out) => out.collect(ctx.timestamp() === undefined) })
      .sinkTo(sink);
    await env.execute();
    expect(sink.values).toEqual(range(50).map(() => true));
  });

  for (const p of PARALLELISMS) {
    it(`union of three streams with different parallelism (parallelism ${p})`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<string>();
      const a = env.fromElements(...range(300)).map((n) => `a${n}`);
      const b = env
        .fromElements(...range(200))
        .map((n) => `b${n}`)
        .setParallelism(3);
      const c = env
        .fromElements(...range(100))
        .filter((n) => n % 2 === 0)
        .map((n) => `c${n}`)
        .setParallelism(1);
      a.union(b, c)
        .map((s) => s + '!')
        .sinkTo(sink);
      await env.execute();
      const expected = [...range(300).map((n) => `a${n}!`), ...range(200).map((n) => `b${n}!`), ...range(100).filter((n) => n % 2 === 0).map((n) => `c${n}!`)];
      expectSameMultiset(sink.values, expected);
    });
  }
});

describe('connected streams', () => {
  for (const p of PARALLELISMS) {
    it(`connect + CoProcessFunction over two types (parallelism ${p})`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<string>();
      const side = new OutputTag<number>('long-words');
      const sideSink = new CollectSink<number>();
      const fn: CoProcessFunction<number, string, string> = {
        processElement1: (n, _ctx, out) => out.collect(`n:${n * 2}`),
        processElement2: (s, ctx, out) => {
          out.collect(`s:${s.length}`);
          if (s.length > 3) ctx.output(side, s.length);
        },
      };
      const words = range(150).map((i) => 'x'.repeat(1 + (i % 6)));
      const co = env
        .fromElements(...range(400))
        .connect(env.fromElements(...words).setParallelism(1))
        .process(fn);
      co.sinkTo(sink);
      co.getSideOutput(side).sinkTo(sideSink);
      await env.execute();
      expectSameMultiset(sink.values, [...range(400).map((n) => `n:${n * 2}`), ...words.map((w) => `s:${w.length}`)]);
      expectSameMultiset(
        sideSink.values,
        words.filter((w) => w.length > 3).map((w) => w.length),
      );
    });

    it(`keyBy(...).connect(keyBy(...)) + KeyedCoProcessFunction shares keyed state across inputs (parallelism ${p})`, async () => {
      type Order = { customer: string; amount: number };
      type Payment = { who: string; paid: number };
      type Out = { key: string; balance: number; from: 1 | 2; n: number };
      const orders: Order[] = range(900).map((i) => ({ customer: `c${(i * 13) % 17}`, amount: 1 + (i % 9) }));
      const payments: Payment[] = range(600).map((i) => ({ who: `c${(i * 5) % 17}`, paid: 1 + (i % 4) }));
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<Out>();
      const fn: KeyedCoProcessFunction<string, Order, Payment, Out> & { balance: ValueState<number>; n: ValueState<number> } = {
        balance: undefined as unknown as ValueState<number>,
        n: undefined as unknown as ValueState<number>,
        open(ctx) {
          this.balance = ctx.getState(valueState<number>('balance', { defaultValue: 0 }));
          this.n = ctx.getState(valueState<number>('n', { defaultValue: 0 }));
        },
        processElement1(o, ctx, out) {
          expect(ctx.getCurrentKey()).toBe(o.customer);
          this.balance.update(this.balance.value()! + o.amount);
          this.n.update(this.n.value()! + 1);
          out.collect({ key: o.customer, balance: this.balance.value()!, from: 1, n: this.n.value()! });
        },
        processElement2(pm, ctx, out) {
          expect(ctx.getCurrentKey()).toBe(pm.who);
          this.balance.update(this.balance.value()! - pm.paid);
          this.n.update(this.n.value()! + 1);
          out.collect({ key: pm.who, balance: this.balance.value()!, from: 2, n: this.n.value()! });
        },
      };
      env
        .fromElements(...orders)
        .keyBy((o) => o.customer)
        .connect(env.fromElements(...payments).keyBy((pm) => pm.who))
        .process(fn)
        .sinkTo(sink);
      await env.execute();

      const finalBalance = new Map<string, number>();
      const count = new Map<string, number>();
      for (const o of orders) {
        finalBalance.set(o.customer, (finalBalance.get(o.customer) ?? 0) + o.amount);
        count.set(o.customer, (count.get(o.customer) ?? 0) + 1);
      }
      for (const pm of payments) {
        finalBalance.set(pm.who, (finalBalance.get(pm.who) ?? 0) - pm.paid);
        count.set(pm.who, (count.get(pm.who) ?? 0) + 1);
      }
      const byKey = groupBy(sink.values, (o) => o.key);
      expect(new Set(byKey.keys())).toEqual(new Set(finalBalance.keys()));
      for (const [k, outs] of byKey) {
        expect(outs.length).toBe(count.get(k));
        // one state per key, seen by both inputs: n counts 1..N in emission order
        expect(outs.map((o) => o.n)).toEqual(range(outs.length).map((i) => i + 1));
        expect(outs.at(-1)!.balance).toBe(finalBalance.get(k));
        // every step changes the balance by exactly the amount of that record's input
        let prev = 0;
        const deltas1: number[] = [];
        const deltas2: number[] = [];
        for (const o of outs) {
          (o.from === 1 ? deltas1 : deltas2).push(o.balance - prev);
          prev = o.balance;
        }
        expect(deltas1).toEqual(orders.filter((o) => o.customer === k).map((o) => o.amount));
        expect(deltas2).toEqual(payments.filter((pm) => pm.who === k).map((pm) => -pm.paid));
      }
    });
  }

  it('ConnectedStreams.map and flatMap: one function per input (CoMap, CoFlatMap), also after keyBy', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const mapped = new CollectSink<string>();
    const flat = new CollectSink<string>();
    const keyed = new CollectSink<string>();
    const numbers = env.fromElements(...range(200));
    const words = env.fromElements(...range(100).map((i) => `w${i}`));
    numbers.connect(words).map((n) => `n${n}`, (w) => w.toUpperCase()).sinkTo(mapped);
    numbers
      .connect(words)
      .flatMap<string>(
        (n, out) => {
          if (n % 2 === 0) out.collect(`even${n}`);
        },
        (w, out) => {
          out.collect(w);
          out.collect(w);
        },
      )
      .sinkTo(flat);
    numbers
      .keyBy((n) => n % 10)
      .connect(words.keyBy((w) => Number(w.slice(1)) % 10))
      .map((n) => `${n % 10}`, (w) => `${Number(w.slice(1)) % 10}`)
      .sinkTo(keyed);
    await env.execute();
    expectSameMultiset(mapped.values, [...range(200).map((n) => `n${n}`), ...range(100).map((i) => `W${i}`)]);
    expectSameMultiset(flat.values, [...range(100).map((i) => `even${2 * i}`), ...range(100).flatMap((i) => [`w${i}`, `w${i}`])]);
    expect(keyed.values.length).toBe(300);
    // Partitioned by key: each key's records of both inputs reached one subtask.
    const subtaskOf = new Map<string, number>();
    for (const [s, values] of keyed.bySubtask) for (const k of values) expect(subtaskOf.get(k) ?? s).toBe(s), subtaskOf.set(k, s);
    expect(subtaskOf.size).toBe(10);
  });

  it('ConnectedStreams.keyBy(k1, k2) partitions both inputs by key', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<[number, string]>();
    env
      .fromElements(...range(300))
      .connect(env.fromElements(...range(300).map((i) => `${i % 10}`)))
      .keyBy(
        (n) => n % 10,
        (s) => Number(s),
      )
      .process<[number, string]>({
        processElement1: (n, ctx, out) => out.collect([ctx.getCurrentKey(), `n${n}`]),
        processElement2: (s, ctx, out) => out.collect([ctx.getCurrentKey(), `s${s}`]),
      })
      .sinkTo(sink);
    await env.execute();
    expectSameMultiset(sink.values, [...range(300).map((n): [number, string] => [n % 10, `n${n}`]), ...range(300).map((i): [number, string] => [i % 10, `s${i % 10}`])]);
  });

  it('KeyedCoProcessFunction: event-time timers fire once the watermark of both inputs passes them', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<[string, number, number]>();
    const a = env.fromElements(...range(100).map((i) => ({ k: `k${i % 3}`, ts: i * 10 }))).assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<{ k: string; ts: number }>(0)).withTimestampAssigner((e) => e.ts));
    const b = env.fromElements(...range(10).map((i) => ({ k: `k${i % 3}`, ts: i * 100 }))).assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<{ k: string; ts: number }>(0)).withTimestampAssigner((e) => e.ts));
    a.keyBy((e) => e.k)
      .connect(b.keyBy((e) => e.k))
      .process<[string, number, number]>({
        processElement1(e, ctx) {
          ctx.timerService().registerEventTimeTimer(Math.floor(e.ts / 250) * 250 + 249);
        },
        processElement2(e, ctx) {
          ctx.timerService().registerEventTimeTimer(Math.floor(e.ts / 250) * 250 + 249);
        },
        onTimer(ts, ctx, out) {
          out.collect([ctx.getCurrentKey(), ts, ctx.timerService().currentWatermark() >= ts ? 1 : 0]);
        },
      })
      .sinkTo(sink);
    await env.execute();
    const expected = new Set<string>();
    for (let i = 0; i < 100; i++) expected.add(canon([`k${i % 3}`, Math.floor((i * 10) / 250) * 250 + 249, 1]));
    for (let i = 0; i < 10; i++) expected.add(canon([`k${i % 3}`, Math.floor((i * 100) / 250) * 250 + 249, 1]));
    expect(sink.values.map(canon).sort()).toEqual([...expected].sort());
  });
});

/**
 * Sends the keys `fired` emits through another subtask that logs 'received' for each, runs
 * the job, and checks every key 0..keys-1 arrived once.
 */
async function runLogged(fired: DataStream<number>, log: string[], keys: number): Promise<void> {
  const sink = new CollectSink<number>();
  fired
    .rebalance()
    .map((k) => {
      log.push('received');
      return k;
    })
    .sinkTo(sink);
  await fired.env.execute();
  expect([...sink.values].sort((a, b) => a - b)).toEqual(range(keys));
}

describe('keyed process function', () => {
  type Ev = { k: string; v: number; ts: number };
  /** Out of order within `bound` ms: blocks of 8 events are reversed. */
  function outOfOrder(n: number, keys: number): Ev[] {
    const evs: Ev[] = range(n).map((i) => ({ k: `k${(i * 7) % keys}`, v: i % 13, ts: 1000 + i * 5 }));
    const out: Ev[] = [];
    for (let i = 0; i < evs.length; i += 8) out.push(...evs.slice(i, i + 8).reverse());
    return out;
  }

  for (const p of PARALLELISMS) {
    it(`event-time timers per key with map state: bucket sums, output at the timer's time (parallelism ${p})`, async () => {
      const bound = 40; // a block of 8 spans 35 ms
      const input = outOfOrder(1200, 11);
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p, 'pipeline.auto-watermark-interval': 0 });
      type Out = { k: string; bucketEnd: number; sum: number; n: number; domain: string; tsOk: boolean };
      const sink = new CollectSink<Out>();
      const fn: KeyedProcessFunction<string, Ev, Out> & { buckets: MapState<number, [number, number]> } = {
        buckets: undefined as unknown as MapState<number, [number, number]>,
        open(ctx) {
          this.buckets = ctx.getMapState(mapState<number, [number, number]>('buckets'));
        },
        processElement(e, ctx) {
          expect(ctx.timestamp()).toBe(e.ts);
          const end = Math.floor(e.ts / 100) * 100 + 100;
          const [s, n] = this.buckets.get(end) ?? [0, 0];
          this.buckets.put(end, [s + e.v, n + 1]);
          ctx.timerService().registerEventTimeTimer(end - 1);
        },
        onTimer(ts, ctx, out) {
          const end = ts + 1;
          const [sum, n] = this.buckets.get(end)!;
          this.buckets.remove(end);
          out.collect({ k: ctx.getCurrentKey(), bucketEnd: end, sum, n, domain: ctx.timeDomain(), tsOk: ctx.timestamp() === ts && ctx.timerService().currentWatermark() >= ts });
        },
      };
      env
        .fromElements(...input)
        .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<Ev>(bound)).withTimestampAssigner((e) => e.ts))
        .keyBy((e) => e.k)
        .process(fn)
        .sinkTo(sink);
      await env.execute();
      const ref = new Map<string, Out>();
      for (const e of input) {
        const end = Math.floor(e.ts / 100) * 100 + 100;
        const id = `${e.k}@${end}`;
        const o = ref.get(id) ?? { k: e.k, bucketEnd: end, sum: 0, n: 0, domain: 'EVENT_TIME', tsOk: true };
        o.sum += e.v;
        o.n++;
        ref.set(id, o);
      }
      expectSameMultiset(sink.values, [...ref.values()]);
      expect(sink.timestamps).toEqual(sink.values.map((o) => o.bucketEnd - 1));
      // per key, timers fire in timestamp order
      for (const outs of groupBy(sink.values, (o) => o.k).values()) {
        const ends = outs.map((o) => o.bucketEnd);
        expect(ends).toEqual([...ends].sort((a, b) => a - b));
      }
    });
  }

  it('a watermark with many due timers fires them in slices: other subtasks run in between, input waits, every timer fires once', async () => {
    const keys = 100_000;
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 0 });
    const log: string[] = [];
    // Every key at 1000, then one record at 5000 whose watermark (4999) fires them all, then one more record.
    const input = [...range(keys).map((k) => ({ k, ts: 1000 })), { k: -1, ts: 5000 }, { k: -2, ts: 6000 }];
    const fired = env
      .fromElements(...input)
      .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<{ k: number; ts: number }>(0)).withTimestampAssigner((e) => e.ts))
      .keyBy((e) => e.k)
      .process<number>({
        processElement(e, ctx) {
          if (e.k === -2) log.push('record after the watermark');
          else if (e.k >= 0) ctx.timerService().registerEventTimeTimer(2000);
        },
        onTimer(ts, ctx, out) {
          expect(ts).toBe(2000);
          expect(ctx.timerService().currentWatermark()).toBe(4999);
          log.push('fire');
          out.collect(ctx.getCurrentKey());
        },
      });
    await runLogged(fired, log, keys);
    const lastFire = log.lastIndexOf('fire');
    expect(log.indexOf('received'), 'the downstream subtask ran while the timers fired').toBeLessThan(lastFire);
    expect(log.indexOf('record after the watermark'), 'the next record waited for the last timer').toBeGreaterThan(lastFire);
  });

  it('many processing-time timers due at once fire in slices too: other subtasks run in between, input and mail wait', async () => {
    const keys = 100_000;
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const log: string[] = [];
    const at = Date.now() + 1000;
    // The keys at once, and one marker record every 5 ms for 1.5 s, across the timers' time.
    const fired = env
      .fromElements(...range(keys))
      .union(env.fromSource(new PacedSource(range(300).map((i) => -1 - i), 1, 5, 50), 'markers'))
      .keyBy((k) => k)
      .process<number>({
        processElement(k, ctx) {
          if (k < 0) log.push('record');
          else ctx.timerService().registerProcessingTimeTimer(at);
        },
        onTimer(ts, ctx, out) {
          expect(ts).toBe(at);
          log.push('fire');
          out.collect(ctx.getCurrentKey());
        },
      });
    await runLogged(fired, log, keys);
    const firstFire = log.indexOf('fire');
    const lastFire = log.lastIndexOf('fire');
    const during = log.slice(firstFire, lastFire);
    expect(during.includes('received'), 'the downstream subtask ran while the timers fired').toBe(true);
    expect(during.includes('record'), 'no record was processed while the timers fired').toBe(false);
    expect(log.lastIndexOf('record'), 'records came after the timers too').toBeGreaterThan(lastFire);
  });

  it('a deleted event-time timer does not fire; duplicates fire once', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<[number, number]>();
    env
      .fromElements(...range(60))
      .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<number>(0)).withTimestampAssigner((n) => n * 10))
      .keyBy((n) => n % 4)
      .process<[number, number]>({
        processElement(n, ctx) {
          const t = ctx.timerService();
          t.registerEventTimeTimer(10_000 + n);
          t.registerEventTimeTimer(20_000); // the same timer for every record of the key
          if (n % 2 === 1) t.deleteEventTimeTimer(10_000 + n);
        },
        onTimer(ts, ctx, out) {
          out.collect([ctx.getCurrentKey(), ts]);
        },
      })
      .sinkTo(sink);
    await env.execute();
    const expected: [number, number][] = [];
    for (let n = 0; n < 60; n += 2) expected.push([n % 4, 10_000 + n]);
    for (let k = 0; k < 4; k++) expected.push([k, 20_000]);
    expectSameMultiset(sink.values, expected);
  });

  it('timers registered in onTimer fire too (chained timers), at the watermark that reaches them', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<[string, number]>();
    env
      .fromElements('a', 'b', 'c')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(punctuated<string>(0)).withTimestampAssigner(() => 100))
      .keyBy((s) => s)
      .process<[string, number]>({
        processElement(_s, ctx) {
          ctx.timerService().registerEventTimeTimer(200);
        },
        onTimer(ts, ctx, out) {
          out.collect([ctx.getCurrentKey(), ts]);
          if (ts < 600) ctx.timerService().registerEventTimeTimer(ts + 100);
        },
      })
      .sinkTo(sink);
    await env.execute();
    expectSameMultiset(
      sink.values,
      ['a', 'b', 'c'].flatMap((k) => [200, 300, 400, 500, 600].map((t): [string, number] => [k, t])),
    );
  });

  it('processing-time timers: every record is counted exactly once, output without event timestamp', async () => {
    const input = range(400).map((i) => `k${i % 5}`);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    type Out = { k: string; n: number; domain: string; late: boolean };
    const sink = new CollectSink<Out>();
    const fn: KeyedProcessFunction<string, string, Out> & { pending: ValueState<number>; timer: ValueState<number> } = {
      pending: undefined as unknown as ValueState<number>,
      timer: undefined as unknown as ValueState<number>,
      open(ctx) {
        this.pending = ctx.getState(valueState<number>('pending', { defaultValue: 0 }));
        this.timer = ctx.getState(valueState<number>('timer'));
      },
      processElement(_s, ctx) {
        this.pending.update(this.pending.value()! + 1);
        if (this.timer.value() === undefined) {
          const at = ctx.timerService().currentProcessingTime() + 15;
          this.timer.update(at);
          ctx.timerService().registerProcessingTimeTimer(at);
        }
      },
      onTimer(ts, ctx, out) {
        out.collect({ k: ctx.getCurrentKey(), n: this.pending.value()!, domain: ctx.timeDomain(), late: ctx.timerService().currentProcessingTime() < ts || ctx.timestamp() !== ts });
        this.pending.clear();
        this.timer.clear();
      },
    };
    env
      .fromSource(new PacedSource(input, 50, 10, 150), 'paced')
      .setParallelism(1)
      .keyBy((s) => s)
      .process(fn)
      .sinkTo(sink);
    await env.execute();
    const total = new Map<string, number>();
    for (const o of sink.values) {
      expect(o.domain).toBe('PROCESSING_TIME');
      expect(o.late).toBe(false);
      total.set(o.k, (total.get(o.k) ?? 0) + o.n);
    }
    const expected = new Map<string, number>();
    for (const k of input) expected.set(k, (expected.get(k) ?? 0) + 1);
    expect(Object.fromEntries(total)).toEqual(Object.fromEntries(expected));
    // As Flink: records emitted from a processing-time timer have no event timestamp.
    expect(sink.timestamps.every((t) => t === undefined)).toBe(true);
  });

  it('a deleted processing-time timer does not fire', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<string>();
    env
      .fromSource(new PacedSource(['keep', 'drop'], 10, 0, 120), 'paced')
      .keyBy((s) => s)
      .process<string>({
        processElement(s, ctx) {
          const at = ctx.timerService().currentProcessingTime() + 10;
          ctx.timerService().registerProcessingTimeTimer(at);
          if (s === 'drop') ctx.timerService().deleteProcessingTimeTimer(at);
        },
        onTimer(_ts, ctx, out) {
          out.collect(ctx.getCurrentKey());
        },
      })
      .sinkTo(sink);
    await env.execute();
    expect(sink.values).toEqual(['keep']);
  });
});

describe('rolling reduce and aggregate', () => {
  type Ev = { k: number; v: number };
  const input: Ev[] = range(1500).map((i) => ({ k: (i * 37) % 19, v: (i * 11) % 23 }));

  for (const p of PARALLELISMS) {
    it(`reduce emits the running value per key, in order (parallelism ${p})`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<Ev>();
      env
        .fromElements(...input)
        .keyBy((e) => e.k)
        .reduce((a, b) => ({ k: a.k, v: a.v + b.v }))
        .sinkTo(sink);
      await env.execute();
      const running = new Map<number, number>();
      const expected = new Map<number, number[]>();
      for (const e of input) {
        const s = (running.get(e.k) ?? 0) + e.v;
        running.set(e.k, s);
        expected.set(e.k, [...(expected.get(e.k) ?? []), s]);
      }
      const actual = groupBy(sink.values, (e) => e.k);
      expect(actual.size).toBe(expected.size);
      for (const [k, seq] of expected) expect(actual.get(k)!.map((e) => e.v)).toEqual(seq);
    });

    it(`aggregate emits the running result per key, in order (parallelism ${p})`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<[number, number, number]>();
      env
        .fromElements(...input)
        .keyBy((e) => e.k)
        .aggregate({
          createAccumulator: () => ({ k: -1, min: Infinity, n: 0 }),
          add: (e: Ev, acc: { k: number; min: number; n: number }) => ({ k: e.k, min: Math.min(acc.min, e.v), n: acc.n + 1 }),
          getResult: (acc): [number, number, number] => [acc.k, acc.min, acc.n],
        })
        .sinkTo(sink);
      await env.execute();
      const st = new Map<number, [number, number]>();
      const expected = new Map<number, [number, number, number][]>();
      for (const e of input) {
        const [min, n] = st.get(e.k) ?? [Infinity, 0];
        const next: [number, number] = [Math.min(min, e.v), n + 1];
        st.set(e.k, next);
        expected.set(e.k, [...(expected.get(e.k) ?? []), [e.k, next[0], next[1]]]);
      }
      const actual = groupBy(sink.values, (r) => r[0]);
      for (const [k, seq] of expected) expect(actual.get(k)).toEqual(seq);
    });
  }

  it('a reduce to a primitive that mostly stays (a running max, -0 against 0, NaN) or an object changed in place keeps the right value per key', async () => {
    const values = [0, -0, 4, 3, 1, 2, 7, 7, 5, 6, NaN, 9, -0];
    const input = range(650).map((i) => values[i % values.length]!);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    // A running max that tells -0 from 0 (100 when the state holds -0: a state left at 0 when -0
    // came would show), and keeps NaN once it came.
    const reduce = (a: number, b: number): number => (Object.is(b, -0) ? b : Object.is(a, -0) ? 100 : Number.isNaN(a) || b > a ? (Number.isNaN(a) ? a : b) : a);
    const keyOf = (v: number): string => (Number.isNaN(v) ? 'nan' : v >= 5 ? 'high' : 'low');
    const maxSink = new CollectSink<number>();
    // One source subtask feeds each key, so every key sees its records in input order.
    env.fromElements(...input).keyBy(keyOf).reduce(reduce).sinkTo(maxSink);
    const inPlace = new CollectSink<number>();
    env
      .fromElements(...input.map((v, i) => ({ k: i % 6, total: 1, v })))
      .keyBy((e) => e.k)
      .reduce((a, b) => {
        a.total += b.total;
        return a;
      })
      .map((e) => e.total)
      .sinkTo(inPlace);
    await env.execute();
    // Reference: the same reduce over each key's values in input order.
    const state = new Map<string, number>();
    const expected: number[] = [];
    for (const v of input) {
      const a = state.get(keyOf(v));
      const next = a === undefined ? v : reduce(a, v);
      state.set(keyOf(v), next);
      expected.push(next);
    }
    const asText = (n: number) => (Object.is(n, -0) ? '-0' : String(n));
    expect(maxSink.values.map(asText).sort()).toEqual(expected.map(asText).sort());
    expect(expected.filter((n) => n === 100).length).toBeGreaterThan(0);
    // In place: every key's totals count up 1, 2, ..., its number of records.
    expect([...inPlace.values].sort((a, b) => a - b)).toEqual(range(6).flatMap((k) => range(input.filter((_, i) => i % 6 === k).length).map((i) => i + 1)).sort((a, b) => a - b));
  });

  it('keys of every KeyType (string, number, bigint, boolean) are kept apart', async () => {
    const keys: Array<string | number | bigint | boolean> = ['1', 1, 1n, true, 'true', 0, -0.5, 2 ** 40, 'x'];
    const input = range(360).map((i) => ({ key: keys[i % keys.length]!, v: 1 }));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<{ key: string | number | bigint | boolean; v: number }>();
    env
      .fromElements(...input)
      .keyBy((e) => e.key)
      .reduce((a, b) => ({ key: a.key, v: a.v + b.v }))
      .sinkTo(sink);
    await env.execute();
    const max = new Map<unknown, number>();
    for (const r of sink.values) max.set(r.key, Math.max(max.get(r.key) ?? 0, r.v));
    expect(max.size).toBe(keys.length);
    for (const k of keys) expect(max.get(k)).toBe(360 / keys.length);
  });
});

describe('partitioning, parallelism and chaining', () => {
  it('broadcast duplicates every record to each subtask', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<number>();
    env
      .fromElements(...range(100))
      .broadcast()
      .map((n) => n + 1)
      .sinkTo(sink);
    await env.execute();
    expect(sink.bySubtask.size).toBe(3);
    for (const [, values] of sink.bySubtask) expect([...values].sort((a, b) => a - b)).toEqual(range(100).map((n) => n + 1));
    expect(sink.values.length).toBe(300);
  });

  for (const p of [2, 3, 4]) {
    it(`rebalance spreads records evenly, each exactly once (parallelism ${p})`, async () => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': p });
      const sink = new CollectSink<number>();
      env
        .fromElements(...range(1000))
        .rebalance()
        .map((n) => n)
        .sinkTo(sink);
      await env.execute();
      expectSameMultiset(sink.values, range(1000));
      const sizes = [...sink.bySubtask.values()].map((v) => v.length);
      expect(sizes.length).toBe(p);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    });
  }

  it('rescale delivers every record exactly once', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 4 });
    const sink = new CollectSink<number>();
    env
      .fromElements(...range(500))
      .map((n) => n)
      .setParallelism(2)
      .rescale()
      .map((n) => n * 2)
      .sinkTo(sink);
    await env.execute();
    expectSameMultiset(
      sink.values,
      range(500).map((n) => n * 2),
    );
  });

  it('print() writes `subtask> record` lines to stdout, print(id) `id:subtask> record`, printToErr() to stderr', async () => {
    const written = { out: [] as string[], err: [] as string[] };
    const outSpy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.out.push(String(chunk)), true));
    const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.err.push(String(chunk)), true));
    try {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
      const words = env.fromElements('a', 'b', 'c', 'd');
      words.rebalance().map((w) => w).print();
      words.map((w) => ({ w })).print('objects').setParallelism(1);
      words.printToErr('err').setParallelism(1);
      await env.execute();
    } finally {
      outSpy.mockRestore();
      errSpy.mockRestore();
    }
    const lines = (chunks: string[]): string[] => chunks.join('').split('\n').filter((l) => l !== '').sort();
    const out = lines(written.out);
    expect(out.filter((l) => l.startsWith('objects')).sort()).toEqual(['objects> {"w":"a"}', 'objects> {"w":"b"}', 'objects> {"w":"c"}', 'objects> {"w":"d"}']);
    const parallel = out.filter((l) => !l.startsWith('objects'));
    expect(parallel.map((l) => l.replace(/^[12]> /, '')).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(new Set(parallel.map((l) => l.slice(0, 3)))).toEqual(new Set(['1> ', '2> ']));
    expect(lines(written.err)).toEqual(['err> a', 'err> b', 'err> c', 'err> d']);
  });

  it('shuffle delivers every record once, spread over all subtasks, the same way in every run', async () => {
    const run = async (): Promise<Map<number, number[]>> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 4 });
      const sink = new CollectSink<number>();
      env
        .fromElements(...range(4000))
        .shuffle()
        .map((n) => n)
        .sinkTo(sink);
      await env.execute();
      expectSameMultiset(sink.values, range(4000));
      return sink.bySubtask;
    };
    const first = await run();
    const sizes = [...first.values()].map((v) => v.length);
    expect(sizes.length).toBe(4);
    // A fair die: each subtask gets about 1000 (5 standard deviations is about 140).
    for (const n of sizes) expect(Math.abs(n - 1000)).toBeLessThan(150);
    // Not round-robin: some subtask gets two consecutive records.
    expect([...first.values()].some((v) => v.some((n, i) => v[i + 1] === n + 1))).toBe(true);
    // Seeded per producer subtask: a second run sends each record to the same subtask.
    const second = await run();
    for (const [s, values] of first) expect(second.get(s)).toEqual(values);
  });

  it('global sends every record to the first subtask; the others see none but finish', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<number>();
    env
      .fromSequence(1, 900)
      .global()
      .map((n) => n)
      .sinkTo(sink);
    await env.execute();
    expect([...sink.bySubtask].filter(([, v]) => v.length > 0).map(([s]) => s)).toEqual([0]);
    expectSameMultiset(sink.values, range(900).map((n) => n + 1));
  });

  it('partitionCustom sends each record where the partitioner says; a partitioner out of range fails the job, naming the fix', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<{ id: number; region: string }>();
    const regions = ['eu', 'us', 'asia', 'eu-west'];
    env
      .fromElements(...range(400).map((id) => ({ id, region: regions[id % 4]! })))
      .partitionCustom((region: string, n) => (region.startsWith('eu') ? 0 : region === 'us' ? 1 % n : 2 % n), (r) => r.region)
      .map((r) => r)
      .sinkTo(sink);
    await env.execute();
    expect(sink.values.length).toBe(400);
    for (const [s, values] of sink.bySubtask) {
      expect(new Set(values.map((r) => r.region))).toEqual(new Set(s === 0 ? ['eu', 'eu-west'] : s === 1 ? ['us'] : ['asia']));
    }

    const bad = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    bad
      .fromElements(1, 2, 3)
      .partitionCustom((k: number) => k, (n) => n)
      .map((n) => n)
      .sinkTo(new CollectSink<number>());
    await expect(bad.execute()).rejects.toThrow(/partitioner returned 2 for key 2; it must return an integer in \[0, 2\)/);
  });

  it('forward keeps records in the subtask with the same index', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const before = new CollectSink<number>();
    const after = new CollectSink<number>();
    const up = env
      .fromElements(...range(300))
      .rebalance()
      .map((n) => n);
    up.sinkTo(before); // chained: runs in the map's subtask
    up.forward()
      .map((n) => n)
      .disableChaining()
      .sinkTo(after);
    expect(env.getJobGraph().edges.some((e) => e.streamEdge.partitioning.kind === 'forward')).toBe(true);
    await env.execute();
    expectSameMultiset(after.values, range(300));
    for (let s = 0; s < 3; s++) {
      expect(sorted(after.bySubtask.get(s)!)).toEqual(sorted(before.bySubtask.get(s)!));
      expect(after.bySubtask.get(s)!.length).toBe(100);
    }
  });

  it('forward between different parallelisms is rejected', () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    env
      .fromElements(1, 2, 3)
      .forward()
      .map((n) => n)
      .sinkTo(new CollectSink<number>());
    expect(() => env.getJobGraph()).toThrow(/forward/);
  });

  /** Source p=1 -> map p=3 -> filter p=2 -> flatMap p=2 -> keyed reduce p=4 -> map p=1 -> sink p=1. */
  const pipeline = (env: StreamExecutionEnvironment, sink: CollectSink<[number, number, number]>): void => {
    env
      .fromElements(...range(3000))
      .map((n) => n * 7)
      .setParallelism(3)
      .filter((n) => n % 3 !== 1)
      .setParallelism(2)
      .flatMap<[number, number, number]>((n, out) => {
        out.collect([n % 10, n, 1]);
        if (n % 5 === 0) out.collect([(n + 1) % 10, -n, 1]);
      })
      .keyBy((t) => t[0])
      .reduce((a, b) => [a[0], a[1] + b[1], a[2] + b[2]])
      .setParallelism(4)
      .map((t): [number, number, number] => [t[0], t[1], t[2]])
      .setParallelism(1)
      .sinkTo(sink)
      .setParallelism(1);
  };
  /** Per key: [sum, count], which the last record of the key must show. */
  const pipelineReference = (): Map<number, [number, number]> => {
    const ref = new Map<number, [number, number]>();
    const add = (k: number, v: number): void => {
      const [s, c] = ref.get(k) ?? [0, 0];
      ref.set(k, [s + v, c + 1]);
    };
    for (let i = 0; i < 3000; i++) {
      const n = i * 7;
      if (n % 3 === 1) continue;
      add(n % 10, n);
      if (n % 5 === 0) add((n + 1) % 10, -n);
    }
    return ref;
  };
  /** What must not depend on parallelism or chaining: per key, the counts 1..N and the final sum. */
  const summarize = (values: readonly [number, number, number][]): Map<number, [number, number]> => {
    const out = new Map<number, [number, number]>();
    for (const [k, outs] of groupBy(values, (t) => t[0])) {
      // the sink has parallelism 1 and one producer per key: order per key is kept
      expect(outs.map((t) => t[2])).toEqual(range(outs.length).map((i) => i + 1));
      out.set(k, [outs.at(-1)![1], outs.length]);
    }
    return out;
  };

  it('per-operator parallelism: every operator runs with its own parallelism and the result matches', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[number, number, number]>();
    pipeline(env, sink);
    const parallelisms = env.getStreamGraph().nodes.map((n) => [n.name, n.parallelism]);
    expect(parallelisms).toEqual([
      ['Collection Source', 1],
      ['Map', 3],
      ['Filter', 2],
      ['FlatMap', 2],
      ['Reduce', 4],
      ['Map', 1],
      ['Sink', 1],
    ]);
    await env.execute();
    expect(sink.bySubtask.size).toBe(1);
    expect(summarize(sink.values)).toEqual(pipelineReference());
  });

  it('chaining on and off give the same results', async () => {
    const vertices: number[] = [];
    for (const chaining of [true, false]) {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.operator-chaining.enabled': chaining });
      const sink = new CollectSink<[number, number, number]>();
      pipeline(env, sink);
      vertices.push(env.getJobGraph().vertices.length);
      await env.execute();
      expect(summarize(sink.values)).toEqual(pipelineReference());
    }
    expect(vertices[0]).toBeLessThan(vertices[1]!);
    expect(vertices[1]).toBe(7);
  });

  it('chaining on and off give the same results for a deterministic parallel pipeline with side outputs', async () => {
    const results: string[][] = [];
    for (const chaining of [true, false]) {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3, 'pipeline.operator-chaining.enabled': chaining, 'pipeline.auto-watermark-interval': 0 });
      const sink = new CollectSink<string>();
      const tag = new OutputTag<string>('t');
      const p = env
        .fromElements(...range(600))
        .map((n) => n + 1)
        .process<string>({
          processElement(n, ctx, out) {
            if (n % 4 === 0) ctx.output(tag, `side${n}`);
            else out.collect(`main${n}`);
          },
        });
      p.union(p.getSideOutput(tag)).filter((x) => !x.endsWith('7')).sinkTo(sink);
      await env.execute();
      results.push(sorted(sink.values));
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[0]).toEqual(
      sorted(
        range(600)
          .map((n) => n + 1)
          .map((n) => (n % 4 === 0 ? `side${n}` : `main${n}`))
          .filter((x) => !x.endsWith('7')),
      ),
    );
  });

  it('disableChaining and startNewChain split chains without changing results', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<number>();
    env
      .fromElements(...range(200))
      .map((n) => n + 1)
      .disableChaining()
      .map((n) => n * 2)
      .startNewChain()
      .filter((n) => n % 3 === 0)
      .sinkTo(sink);
    const names = env.getJobGraph().vertices.map((v) => v.nodes.length);
    expect(names.length).toBeGreaterThanOrEqual(3);
    await env.execute();
    expectSameMultiset(
      sink.values,
      range(200)
        .map((n) => (n + 1) * 2)
        .filter((n) => n % 3 === 0),
    );
  });
});

// ---------------------------------------------------------------------------------------
// Timers at unit level: the queue and the timer service with a hand-driven clock.

import { TimerQueue } from '../src/runtime/task/timer-queue.js';
import { InternalTimerService } from '../src/runtime/task/internal-timer-service.js';
import { ProcessingTimeService } from '../src/runtime/task/processing-time-service.js';
import type { Clock } from '../src/runtime/task/clock.js';
import type { KeyType } from '../src/runtime/state/key-group.js';
import { packGroup } from '../src/runtime/state/keyed-state-snapshot.js';

describe('timer queue', () => {
  it('fires in timestamp order, deduplicates, deletes, and keeps its size', () => {
    const q = new TimerQueue();
    const rnd = (() => {
      let a = 12345;
      return () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32);
    })();
    const ref = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const t = Math.floor(rnd() * 300);
      const k = `k${Math.floor(rnd() * 7)}`;
      const ns = Math.floor(rnd() * 3);
      const id = `${t}|${k}|${ns}`;
      if (rnd() < 0.25) {
        expect(q.delete(t, k, ns)).toBe(ref.delete(id));
      } else {
        expect(q.add(t, k, ns)).toBe(!ref.has(id));
        ref.add(id);
      }
      expect(q.size).toBe(ref.size);
    }
    expect(new Set([...q.entries()].map(([t, k, ns]) => `${t}|${k}|${ns}`))).toEqual(ref);
    const fired: [number, KeyType, number][] = [];
    q.fireUpTo(150, (t, k, ns) => fired.push([t, k, ns]));
    const expectedFirst = [...ref].filter((id) => Number(id.split('|')[0]) <= 150);
    expect(fired.map(([t, k, ns]) => `${t}|${k}|${ns}`).sort()).toEqual(expectedFirst.sort());
    for (let i = 1; i < fired.length; i++) expect(fired[i]![0]).toBeGreaterThanOrEqual(fired[i - 1]![0]);
    expect(q.size).toBe(ref.size - expectedFirst.length);
    const rest: number[] = [];
    q.fireUpTo(Number.MAX_SAFE_INTEGER, (t) => rest.push(t));
    expect(rest.length).toBe(ref.size - expectedFirst.length);
    expect(rest.every((t) => t > 150)).toBe(true);
    expect(q.size).toBe(0);
    expect(q.peekTime()).toBeUndefined();
  });

  it('timers added while firing fire in the same pass when due, in order', () => {
    const q = new TimerQueue();
    q.add(10, 'a', 0);
    q.add(20, 'a', 0);
    const fired: string[] = [];
    q.fireUpTo(30, (t, k) => {
      fired.push(`${t}${k}`);
      if (t === 10 && k === 'a') {
        q.add(10, 'b', 0); // same time as the one firing
        q.add(15, 'c', 0); // between
        q.add(31, 'd', 0); // not due
      }
    });
    expect(fired).toEqual(['10a', '10b', '15c', '20a']);
    expect(q.size).toBe(1);
    expect(q.peekTime()).toBe(31);
  });

  it('a timer deleted while its timestamp is firing does not fire (as Flink)', () => {
    const q = new TimerQueue();
    q.add(10, 'a', 0);
    q.add(10, 'b', 0);
    q.add(10, 'a', 1);
    const fired: string[] = [];
    q.fireUpTo(10, (t, k, ns) => {
      fired.push(`${k}${ns}`);
      if (k === 'a' && ns === 0) {
        q.delete(10, 'b', 0);
        q.delete(10, 'a', 1);
      }
    });
    expect(fired).toEqual(['a0']);
    expect(q.size).toBe(0);
  });

  it('re-adding a deleted timer works, also after its time was fired', () => {
    const q = new TimerQueue();
    q.add(5, 'a', 0);
    q.delete(5, 'a', 0);
    q.add(5, 'a', 0);
    const fired: number[] = [];
    q.fireUpTo(5, (t) => fired.push(t));
    expect(fired).toEqual([5]);
    q.add(5, 'a', 0);
    q.fireUpTo(5, (t) => fired.push(t));
    expect(fired).toEqual([5, 5]);
  });

  it('a key group\'s timers survive encoding: numeric keys, mixed keys, and the earlier nested-map format', () => {
    const rows = (q: TimerQueue) => [...q.entries()].map(([t, k, ns]) => `${t}|${typeof k}:${String(k)}|${ns}`).sort();
    const cases: KeyType[][] = [
      [1, 2.5, -0, 2 ** 53 - 1, 7],
      [1, 'x', 2n, 'y', 3],
    ];
    for (const keys of cases) {
      const q = new TimerQueue();
      keys.forEach((k, i) => {
        q.add(1_700_000_000_000 + i * 2000, k, i);
        q.add(1_700_000_000_000, k, 9);
      });
      const bytes = q.encodeGroup(0)!;
      const back = new TimerQueue();
      back.addEncodedGroup(bytes);
      expect(rows(back)).toEqual(rows(q));
      expect(back.size).toBe(q.size);
    }
    const earlier = new TimerQueue();
    earlier.addEncodedGroup(packGroup(new Map([[10, new Map<KeyType, number[]>([['a', [0, 1]], [3, [2]]])]])));
    expect(rows(earlier)).toEqual(['10|number:3|2', '10|string:a|0', '10|string:a|1']);
    expect(new TimerQueue().encodeGroup(0)).toBeUndefined();
  });
});

/** A clock the test advances; scheduled callbacks run when it passes their time. */
class ManualClock implements Clock {
  now = 0;
  private tasks: { at: number; fn: () => void; cancelled: boolean }[] = [];
  nowMs(): number {
    return this.now;
  }
  schedule(delayMs: number, fn: () => void): () => void {
    const task = { at: this.now + Math.max(0, delayMs), fn, cancelled: false };
    this.tasks.push(task);
    return () => {
      task.cancelled = true;
    };
  }
  advanceTo(t: number): void {
    for (;;) {
      const due = this.tasks.filter((x) => !x.cancelled && x.at <= t).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.now = Math.max(this.now, due.at);
      due.cancelled = true;
      due.fn();
    }
    this.now = t;
  }
  get pending(): number {
    return this.tasks.filter((x) => !x.cancelled).length;
  }
}

describe('internal timer service', () => {
  function setup() {
    const clock = new ManualClock();
    const mails: (() => void)[] = [];
    const pts = new ProcessingTimeService(clock, (m) => mails.push(m));
    const fired: string[] = [];
    let currentKey: KeyType = '';
    const svc = new InternalTimerService(
      pts,
      {
        onEventTime: (t, k, ns) => fired.push(`E${t}:${String(k)}:${ns}:${String(currentKey)}`),
        onProcessingTime: (t, k, ns) => fired.push(`P${t}:${String(k)}:${ns}:${String(currentKey)}`),
      },
      (k) => {
        currentKey = k;
      },
    );
    const runMails = (): void => {
      while (mails.length > 0) mails.shift()!();
    };
    return { clock, svc, fired, runMails };
  }

  it('event-time timers fire when the watermark reaches them, with the key set', () => {
    const { svc, fired } = setup();
    svc.registerEventTimeTimer(100, 'a', 0);
    svc.registerEventTimeTimer(50, 'b', 7);
    svc.registerEventTimeTimer(100, 'a', 0);
    svc.advanceWatermark(49);
    expect(fired).toEqual([]);
    svc.advanceWatermark(50);
    expect(fired).toEqual(['E50:b:7:b']);
    svc.deleteEventTimeTimer(100, 'a', 0);
    svc.advanceWatermark(1000);
    expect(fired).toEqual(['E50:b:7:b']);
  });

  it('processing-time timers fire once the clock passes them, through the mailbox, in order', () => {
    const { clock, svc, fired, runMails } = setup();
    svc.registerProcessingTimeTimer(30, 'a', 0);
    svc.registerProcessingTimeTimer(10, 'b', 0); // earlier: the physical timer moves
    svc.registerProcessingTimeTimer(20, 'c', 0);
    svc.registerProcessingTimeTimer(20, 'c', 0);
    clock.advanceTo(9);
    runMails();
    expect(fired).toEqual([]);
    clock.advanceTo(25);
    runMails();
    expect(fired).toEqual(['P10:b:0:b', 'P20:c:0:c']);
    svc.deleteProcessingTimeTimer(30, 'a', 0);
    svc.registerProcessingTimeTimer(40, 'd', 0);
    clock.advanceTo(100);
    runMails();
    expect(fired).toEqual(['P10:b:0:b', 'P20:c:0:c', 'P40:d:0:d']);
    expect(svc.processingTimers.size).toBe(0);
  });

  it('a processing-time timer registered in the past fires at once', () => {
    const { clock, svc, fired, runMails } = setup();
    clock.advanceTo(500);
    svc.registerProcessingTimeTimer(100, 'a', 0);
    clock.advanceTo(500);
    runMails();
    expect(fired).toEqual(['P100:a:0:a']);
  });

  it('a timer registered between the physical timer going off and its mail running is not lost', () => {
    const { clock, svc, fired, runMails } = setup();
    svc.registerProcessingTimeTimer(10, 'a', 0);
    clock.advanceTo(10); // physical timer due: its mail is queued, not run
    svc.registerProcessingTimeTimer(5, 'b', 0); // earlier than the pending physical timer
    svc.registerProcessingTimeTimer(50, 'c', 0);
    clock.advanceTo(10);
    runMails();
    expect(fired.sort()).toEqual(['P10:a:0:a', 'P5:b:0:b'].sort());
    clock.advanceTo(60);
    runMails();
    expect(fired).toContain('P50:c:0:c');
    expect(fired.length).toBe(3);
  });
});

describe('functions are per subtask', () => {
  it('what a CoProcessFunction stores in open() belongs to its subtask', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<[number, number]>();
    const fn: CoProcessFunction<number, number, [number, number]> & { idx: number } = {
      idx: -1,
      open(ctx) {
        this.idx = ctx.subtaskIndex;
      },
      processElement1(n, _ctx, out) {
        out.collect([n, this.idx]);
      },
      processElement2(n, _ctx, out) {
        out.collect([n, this.idx]);
      },
    };
    env
      .fromElements(...range(90))
      .rebalance()
      .map((n) => n)
      .connect(env.fromElements(...range(30).map((n) => 1000 + n)).rebalance().map((n) => n))
      .process(fn)
      .sinkTo(sink);
    await env.execute();
    expect(sink.values.length).toBe(120);
    // the sink is chained to the co-process operator: same subtask
    for (const [sub, values] of sink.bySubtask) for (const [, idx] of values) expect(idx).toBe(sub);
    expect(fn.idx).toBe(-1);
  });

  it('what a KeyedProcessFunction stores in open() belongs to its subtask (the pattern of examples/nexmark-hot-items.ts)', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 4 });
    const sink = new CollectSink<[string, number]>();
    const fn: KeyedProcessFunction<string, string, [string, number]> & { count: ValueState<number> } = {
      count: undefined as unknown as ValueState<number>,
      open(ctx) {
        this.count = ctx.getState(valueState<number>('count', { defaultValue: 0 }));
      },
      processElement(s, _ctx, out) {
        this.count.update(this.count.value()! + 1);
        out.collect([s, this.count.value()!]);
      },
    };
    const input = range(400).map((i) => `k${(i * 7) % 31}`);
    env
      .fromElements(...input)
      .keyBy((s) => s)
      .process(fn)
      .sinkTo(sink);
    await env.execute();
    const seen = new Map<string, number>();
    const expected: [string, number][] = [];
    for (const k of input) {
      seen.set(k, (seen.get(k) ?? 0) + 1);
      expected.push([k, seen.get(k)!]);
    }
    expectSameMultiset(sink.values, expected);
  });

  // A non-keyed ProcessFunction object is given to every subtask; each works on its own
  // copy (perSubtask), so what open() stores on `this` stays per subtask.
  it('what a ProcessFunction stores in open() belongs to its subtask', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<[number, number]>();
    const fn: ProcessFunction<number, [number, number]> & { idx: number } = {
      idx: -1,
      open(ctx) {
        this.idx = ctx.subtaskIndex;
      },
      processElement(n, _ctx, out) {
        out.collect([n, this.idx]);
      },
    };
    env
      .fromElements(...range(90))
      .rebalance()
      .process(fn)
      .sinkTo(sink);
    await env.execute();
    for (const [sub, values] of sink.bySubtask) for (const [, idx] of values) expect(idx).toBe(sub);
  });
});

describe('two-input operators and idleness', () => {
  it('an idle input does not hold back the watermark of the other input, and idle is only emitted when both are idle', async () => {
    const { StreamOperator } = await import('../src/runtime/task/stream-operator.js');
    class Probe extends StreamOperator<unknown> {
      processElement(): void {}
    }
    const events: string[] = [];
    const op = new Probe();
    op.setup({} as never, {
      collect() {},
      collectSide() {},
      emitWatermark: (w: number) => events.push(`wm ${w}`),
      emitWatermarkStatus: (idle: boolean) => events.push(idle ? 'idle' : 'active'),
    });
    op.processWatermarkStatus2(true);
    op.processWatermark1(100);
    op.processWatermark1(200);
    expect(events).toEqual(['wm 100', 'wm 200']);
    op.processWatermarkStatus1(true);
    expect(events.at(-1)).toBe('idle');
    op.processWatermarkStatus2(false);
    op.processWatermark2(300);
    expect(events.slice(-2)).toEqual(['active', 'wm 300']);
  });
});

describe('map, filter, flatMap and sinks on a keyed stream (a stream partitioned by key, as in Flink)', () => {
  it('each key reaches one subtask, its records in order; the operators see every record', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const mapped = new CollectSink<string>();
    const sunk = new CollectSink<number>();
    const numbers = env.fromSource(numberSource({ count: 600 }), 'numbers').setParallelism(1);
    const keyed = numbers.keyBy((n) => n % 10);
    keyed
      .filter((n) => n % 3 !== 0)
      .flatMap<number>((n, out) => {
        out.collect(n);
        if (n % 2 === 0) out.collect(-n);
      })
      .map((n) => `${Math.abs(n) % 10}:${n}`)
      .sinkTo(mapped);
    keyed.sinkTo(sunk);
    await env.execute();
    const want: string[] = [];
    for (let n = 0; n < 600; n++) {
      if (n % 3 === 0) continue;
      want.push(`${n % 10}:${n}`);
      if (n % 2 === 0) want.push(`${n % 10}:${-n}`);
    }
    expect(sorted(mapped.values)).toEqual(sorted(want));
    // Every key in one subtask of the sink, in the order the source emitted it.
    const owner = new Map<number, number>();
    for (const [subtask, values] of sunk.bySubtask) {
      for (const n of values) {
        expect(owner.get(n % 10) ?? subtask).toBe(subtask);
        owner.set(n % 10, subtask);
      }
      for (let k = 0; k < 10; k++) {
        const ofKey = values.filter((n) => n % 10 === k);
        expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
      }
    }
    expect(owner.size).toBe(10);
    expect(new Set(owner.values()).size).toBeGreaterThan(1);
  });
});

describe('fromSequence and fromCollection (Flink\'s)', () => {
  it('fromSequence reads every integer of the range once, in parallel; fromCollection takes any iterable', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const seq = new CollectSink<number>();
    const col = new CollectSink<string>();
    env.fromSequence(-5, 994).sinkTo(seq);
    env.fromCollection(new Set(['a', 'b', 'c'])).sinkTo(col);
    await env.execute();
    expect([...seq.values].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i - 5));
    expect([...seq.bySubtask.values()].filter((v) => v.length > 0).length).toBe(3);
    expect(col.values).toEqual(['a', 'b', 'c']);
    expect(() => env.fromSequence(5, 1)).toThrow(/fromSequence\(5, 1\): from and to must be whole numbers with from <= to/);
  });
});
