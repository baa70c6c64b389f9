import { describe, expectTypeOf, it } from 'vitest';
import {
  aggregatingState,
  AsyncDataStream,
  AsyncRetryStrategies,
  RetryPredicates,
  broadcastState,
  BroadcastStream,
  CountEvictor,
  CountTrigger,
  DeltaEvictor,
  type Trigger,
  DataStream,
  KeyedStream,
  listState,
  mapState,
  OutputTag,
  reducingState,
  SingleOutputStream,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  valueState,
  WatermarkStrategy,
  WindowedStream,
  type AggregatingState,
  type KeyedProcessFunction,
  type KeyedRuntimeContext,
  type KeyType,
  type ListState,
  type MapState,
  type ProcessFunction,
  type ProcessWindowFunction,
  type ReducingState,
  type ResultFuture,
  type RuntimeContext,
  type ValueState,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { CollectionSource } from '../src/connectors/collection-source.js';
import type { CollectResultIterator } from '../src/api/collect-result-iterator.js';

interface Bid {
  auction: number;
  bidder: string;
  price: number;
}

const env = StreamExecutionEnvironment.create();
const bids = env.fromElements<Bid>({ auction: 1, bidder: 'a', price: 10 });

describe('keyed state is reachable only on keyed streams', () => {
  it('a KeyedProcessFunction gets a KeyedRuntimeContext with getState', () => {
    bids
      .keyBy((b) => b.auction)
      .process<number>({
        open(ctx) {
          expectTypeOf(ctx).toEqualTypeOf<KeyedRuntimeContext<number>>();
          const s = ctx.getState(valueState<number>('n'));
          expectTypeOf(s).toEqualTypeOf<ValueState<number>>();
        },
        processElement(b, ctx, out) {
          expectTypeOf(b).toEqualTypeOf<Bid>();
          expectTypeOf(ctx.getCurrentKey()).toEqualTypeOf<number>();
          ctx.timerService().registerEventTimeTimer(1);
          out.collect(b.price);
        },
      });
  });

  it("a ProcessFunction's open context has no keyed state", () => {
    bids.process<number>({
      open(ctx) {
        expectTypeOf(ctx).toEqualTypeOf<RuntimeContext>();
        // @ts-expect-error keyed state only exists on keyed streams
        ctx.getState(valueState<number>('n'));
        // @ts-expect-error
        ctx.getMapState(mapState<string, number>('m'));
      },
      processElement(b, ctx, out) {
        // @ts-expect-error a non-keyed context has no current key
        ctx.getCurrentKey();
        // @ts-expect-error timers need a keyed stream
        ctx.timerService().registerEventTimeTimer(1);
        out.collect(b.price);
      },
    });
    expectTypeOf<RuntimeContext>().not.toHaveProperty('getState');
    expectTypeOf<KeyedRuntimeContext<string>>().toHaveProperty('getState');
  });

  it('a CoProcessFunction on unkeyed connected streams has no keyed state; a KeyedCoProcessFunction has', () => {
    const other = env.fromElements('x');
    bids.connect(other).process<string>({
      open(ctx) {
        // @ts-expect-error
        ctx.getListState(listState<number>('l'));
      },
      processElement1: () => {},
      processElement2: () => {},
    });
    bids
      .keyBy((b) => b.bidder)
      .connect(other.keyBy((s) => s))
      .process<string>({
        open(ctx) {
          expectTypeOf(ctx.getListState(listState<number>('l'))).toEqualTypeOf<ListState<number>>();
        },
        processElement1: (_b, ctx) => expectTypeOf(ctx.getCurrentKey()).toEqualTypeOf<string>(),
        processElement2: (_s, ctx) => expectTypeOf(ctx.getCurrentKey()).toEqualTypeOf<string>(),
      });
  });

  it('connecting keyed streams needs the same key type', () => {
    const byNumber = bids.keyBy((b) => b.auction);
    const byString = env.fromElements('x').keyBy((s) => s);
    // @ts-expect-error key types differ (number vs string)
    byNumber.connect(byString);
  });
});

describe('windows exist only on keyed streams', () => {
  it('DataStream has no window()', () => {
    // @ts-expect-error windows need keyBy first
    bids.window(TumblingEventTimeWindows.of(1000));
    expectTypeOf<DataStream<Bid>>().not.toHaveProperty('window');
  });

  it('KeyedStream.window gives a WindowedStream with the key type', () => {
    const w = bids.keyBy((b) => b.bidder).window(TumblingEventTimeWindows.of(1000));
    expectTypeOf(w).toEqualTypeOf<WindowedStream<Bid, string>>();
    expectTypeOf(w.reduce((a, b) => (a.price > b.price ? a : b))).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(w.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n: number) => `${n}` })).toEqualTypeOf<
      SingleOutputStream<string>
    >();
    const pwf: ProcessWindowFunction<number, [string, number], string> = {
      process(key, ctx, elements, out) {
        expectTypeOf(key).toEqualTypeOf<string>();
        expectTypeOf(ctx.window.end).toEqualTypeOf<number>();
        out.collect([key, elements[0]!]);
      },
    };
    expectTypeOf(w.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n: number) => n }, pwf)).toEqualTypeOf<
      SingleOutputStream<[string, number]>
    >();
    // @ts-expect-error the window function's input must be the aggregate's result (number, not string)
    w.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n: number) => `${n}` }, pwf);
    const wrongKey: ProcessWindowFunction<Bid, number, number> = { process: () => {} };
    // @ts-expect-error the window function's key type must be the stream's (string)
    w.process(wrongKey);
    // @ts-expect-error the late-data tag must carry the stream's type
    w.sideOutputLateData(new OutputTag<string>('late'));
  });
});

describe('keyBy', () => {
  it('infers the key type', () => {
    expectTypeOf(bids.keyBy((b) => b.auction)).toEqualTypeOf<KeyedStream<Bid, number>>();
    expectTypeOf(bids.keyBy((b) => b.bidder)).toEqualTypeOf<KeyedStream<Bid, string>>();
    expectTypeOf(bids.keyBy((b) => BigInt(b.auction))).toEqualTypeOf<KeyedStream<Bid, bigint>>();
    expectTypeOf(bids.keyBy((b) => b.price > 10)).toEqualTypeOf<KeyedStream<Bid, boolean>>();
    expectTypeOf(bids.keyBy((b): string | number => b.bidder)).toEqualTypeOf<KeyedStream<Bid, string | number>>();
  });

  it('key selectors must return string | number | bigint | boolean', () => {
    // @ts-expect-error an object is not a key
    bids.keyBy((b) => ({ a: b.auction }));
    // @ts-expect-error an array is not a key
    bids.keyBy((b) => [b.auction, b.bidder]);
    // @ts-expect-error undefined is not a key
    bids.keyBy(() => undefined);
    // @ts-expect-error null is not a key
    bids.keyBy(() => null);
    // @ts-expect-error a Date is not a key
    bids.keyBy(() => new Date());
    // @ts-expect-error a symbol is not a key
    bids.keyBy(() => Symbol('k'));
    expectTypeOf<KeyType>().toEqualTypeOf<string | number | bigint | boolean>();
  });

  it('the key type flows into keyed functions', () => {
    const fn: KeyedProcessFunction<string, Bid, number> = { processElement: () => {} };
    // @ts-expect-error the function expects string keys; the stream is keyed by number
    bids.keyBy((b) => b.auction).process(fn);
    bids.keyBy((b) => b.bidder).process(fn);
  });
});

describe('record types flow through the graph', () => {
  it("a map's output type reaches the sink", () => {
    const strings = bids.map((b) => `${b.auction}`);
    expectTypeOf(strings).toEqualTypeOf<SingleOutputStream<string>>();
    strings.sinkTo(new CollectSink<string>());
    // @ts-expect-error a CollectSink<number> cannot take strings
    strings.sinkTo(new CollectSink<number>());
    bids.map((b) => b.price).sinkTo(new CollectSink<number>());
    // @ts-expect-error records are Bids, not numbers
    bids.sinkTo(new CollectSink<number>());
  });
  it('fromSource takes a watermark strategy of the source\'s record type', () => {
    const source = new CollectionSource<Bid>([]);
    expectTypeOf(env.fromSource(source, 'bids')).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(env.fromSource(source, WatermarkStrategy.forMonotonousTimestamps<Bid>().withTimestampAssigner((b) => b.price), 'bids')).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error a strategy for strings cannot time Bids
    env.fromSource(source, WatermarkStrategy.forMonotonousTimestamps<string>().withTimestampAssigner((s) => s.length), 'bids');
  });

  it('executeAndCollect yields the stream\'s records: an iterator, or a list with a limit', () => {
    const prices = bids.map((b) => b.price);
    expectTypeOf(prices.executeAndCollect()).toEqualTypeOf<CollectResultIterator<number>>();
    expectTypeOf(prices.executeAndCollect('job')).toEqualTypeOf<CollectResultIterator<number>>();
    expectTypeOf(prices.executeAndCollect(10)).toEqualTypeOf<Promise<number[]>>();
    expectTypeOf(prices.executeAndCollect('job', 10)).toEqualTypeOf<Promise<number[]>>();
    // @ts-expect-error the limit comes after the job name
    prices.executeAndCollect(10, 'job');
  });

  it('filter keeps the type; flatMap, process and rolling aggregations produce their declared types', () => {
    expectTypeOf(bids.filter((b) => b.price > 1)).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(bids.flatMap<string>((b, out) => out.collect(b.bidder))).toEqualTypeOf<SingleOutputStream<string>>();
    const pf: ProcessFunction<Bid, [number, string]> = { processElement: (b, _ctx, out) => out.collect([b.auction, b.bidder]) };
    expectTypeOf(bids.process(pf)).toEqualTypeOf<SingleOutputStream<[number, string]>>();
    const keyed = bids.keyBy((b) => b.auction);
    expectTypeOf(keyed.reduce((a, b) => ({ ...a, price: a.price + b.price }))).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error a rolling reduce must return the record type
    keyed.reduce((a, b) => a.price + b.price);
    expectTypeOf(keyed.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n: number) => n > 0 })).toEqualTypeOf<
      SingleOutputStream<boolean>
    >();
  });

  it('union needs the same type; connect keeps both', () => {
    const other = env.fromElements<Bid>({ auction: 2, bidder: 'b', price: 1 });
    expectTypeOf(bids.union(other, other)).toEqualTypeOf<DataStream<Bid>>();
    // @ts-expect-error a stream of strings cannot be unioned with Bids
    bids.union(env.fromElements('x'));
    const co = bids.connect(env.fromElements('x')).process<number>({
      processElement1: (b, _ctx, out) => {
        expectTypeOf(b).toEqualTypeOf<Bid>();
        out.collect(b.price);
      },
      processElement2: (s, _ctx, out) => {
        expectTypeOf(s).toEqualTypeOf<string>();
        out.collect(s.length);
      },
    });
    expectTypeOf(co).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('side outputs carry the type of their tag', () => {
    const tag = new OutputTag<string>('t');
    const main = bids.process<number>({
      processElement(b, ctx, out) {
        ctx.output(tag, b.bidder);
        // @ts-expect-error the tag carries strings
        ctx.output(tag, b.price);
        out.collect(b.price);
      },
    });
    expectTypeOf(main.getSideOutput(tag)).toEqualTypeOf<DataStream<string>>();
    // @ts-expect-error the side output is a stream of strings
    main.getSideOutput(tag).sinkTo(new CollectSink<number>());
  });

  it('partitioning keeps the type', () => {
    expectTypeOf(bids.rebalance()).toEqualTypeOf<DataStream<Bid>>();
    expectTypeOf(bids.broadcast()).toEqualTypeOf<DataStream<Bid>>();
    expectTypeOf(bids.forward()).toEqualTypeOf<DataStream<Bid>>();
    // setParallelism/uid/name exist only on an operator's own output
    // @ts-expect-error a partitioned stream is not an operator
    bids.rebalance().setParallelism(2);
  });
});

describe("a state descriptor's type flows into the state handle", () => {
  it('value, list, map, reducing and aggregating', () => {
    bids
      .keyBy((b) => b.auction)
      .process<number>({
        open(ctx) {
          const v = ctx.getState(valueState<Bid>('v'));
          expectTypeOf(v.value()).toEqualTypeOf<Bid | undefined>();
          // @ts-expect-error the state holds Bids
          v.update('x');
          const d = ctx.getState(valueState('d', { defaultValue: 0 }));
          expectTypeOf(d).toEqualTypeOf<ValueState<number>>();
          const l = ctx.getListState(listState<string>('l'));
          expectTypeOf(l).toEqualTypeOf<ListState<string>>();
          expectTypeOf(l.get()).toEqualTypeOf<readonly string[]>();
          // @ts-expect-error the list holds strings
          l.add(1);
          const m = ctx.getMapState(mapState<string, Bid>('m'));
          expectTypeOf(m).toEqualTypeOf<MapState<string, Bid>>();
          expectTypeOf(m.get('a')).toEqualTypeOf<Bid | undefined>();
          // @ts-expect-error map keys are strings
          m.put(1, { auction: 1, bidder: 'a', price: 1 });
          const r = ctx.getReducingState(reducingState<number>('r', (a, b) => a + b));
          expectTypeOf(r).toEqualTypeOf<ReducingState<number>>();
          const a = ctx.getAggregatingState(
            aggregatingState('a', { createAccumulator: () => [0, 0] as [number, number], add: (b: Bid, acc: [number, number]) => [acc[0] + b.price, acc[1] + 1] as [number, number], getResult: (acc) => acc[0] / acc[1] }),
          );
          expectTypeOf(a).toEqualTypeOf<AggregatingState<Bid, number>>();
          expectTypeOf(a.get()).toEqualTypeOf<number | undefined>();
          // @ts-expect-error the aggregating state takes Bids
          a.add(3);
          // @ts-expect-error a list descriptor is not a value descriptor
          ctx.getState(listState<number>('x'));
        },
        processElement() {},
      });
  });

  it('a default value must have the state type', () => {
    // @ts-expect-error default value must be a number
    valueState<number>('x', { defaultValue: 'zero' });
  });
});

/**
 * Holes that once compiled and were closed: function contexts are checked strictly
 * (properties, variance annotations), sinks are contravariant, nothing follows a sink.
 */
describe('what must not compile', () => {
  it('a ProcessFunction whose open() declares a KeyedRuntimeContext is accepted (method bivariance in Lifecycle.open, src/api/functions.ts)', () => {
    const sneaky = {
      open(ctx: KeyedRuntimeContext<string>) {
        ctx.getState(valueState<number>('n')); // TypeError at run time: getState is not a function
      },
      processElement() {},
    };
    // @ts-expect-error a non-keyed ProcessFunction's open gets no keyed context
    bids.process<number>(sneaky);
  });

  it('a KeyedProcessFunction for a narrower key type is accepted (method bivariance, src/api/functions.ts)', () => {
    const fn: KeyedProcessFunction<'a' | 'b', Bid, number> = { processElement: () => {} };
    // @ts-expect-error the stream is keyed by number, not 'a' | 'b'
    bids.keyBy((b) => b.bidder).process(fn);
  });

  it('a sink of a narrower type is accepted (method bivariance in SinkWriter.write, src/api/sink.ts)', () => {
    // @ts-expect-error a sink of 'a' cannot take any string
    env.fromElements('x', 'y').sinkTo(new CollectSink<'a'>());
  });

  it('operators can be chained after a sink (sinkTo returns a SingleOutputStream<never>, src/api/data-stream.ts)', () => {
    // @ts-expect-error nothing follows a sink
    bids.sinkTo(new CollectSink<Bid>()).map((x) => x);
  });
});

describe('filter with a type guard narrows the stream', () => {
  it('keeps only the guarded type', () => {
    const mixed = env.fromElements<string | number>('a', 1);
    const strings = mixed.filter((v): v is string => typeof v === 'string');
    expectTypeOf(strings).toEqualTypeOf<SingleOutputStream<string>>();
    const same = mixed.filter((v) => v !== 1);
    expectTypeOf(same).toEqualTypeOf<SingleOutputStream<string | number>>();
  });

  it('broadcast state: read-only for the keyed input, writable for the broadcast input, typed by its descriptor', () => {
    const rules = broadcastState<string, number>('rules');
    const broadcast = env.fromElements<[string, number]>(['x', 1]).broadcast(rules);
    expectTypeOf(broadcast).toEqualTypeOf<BroadcastStream<[string, number]>>();
    bids
      .keyBy((b) => b.auction)
      .connect(broadcast)
      .process<string>({
        processElement(b, ctx, out) {
          const state = ctx.getBroadcastState(rules);
          expectTypeOf(state.get('x')).toEqualTypeOf<number | undefined>();
          // @ts-expect-error the keyed input only reads broadcast state
          state.put('x', 2);
          expectTypeOf(ctx.getCurrentKey()).toEqualTypeOf<number>();
          out.collect(String(b.price));
        },
        processBroadcastElement(rule, ctx) {
          ctx.getBroadcastState(rules).put(rule[0], rule[1]);
          // @ts-expect-error the broadcast input has no key
          ctx.getCurrentKey();
          // @ts-expect-error values have the descriptor's type
          ctx.getBroadcastState(rules).put('y', 'two');
          ctx.applyToKeyedState(mapState<string, number>('m'), (key, state) => {
            expectTypeOf(key).toEqualTypeOf<number>();
            expectTypeOf(state).toEqualTypeOf<MapState<string, number>>();
          });
          ctx.applyToKeyedState(valueState<number>('v'), (_key, state) => expectTypeOf(state).toEqualTypeOf<ValueState<number>>());
        },
      });
  });

  it('async I/O: the results type the stream; complete() takes the output type; a retry predicate sees the results', () => {
    const prices = AsyncDataStream.orderedWait(bids, { asyncInvoke: (b, result: ResultFuture<number>) => result.complete([b.price]) }, 1_000);
    expectTypeOf(prices).toEqualTypeOf<SingleOutputStream<number>>();
    const names = AsyncDataStream.unorderedWait<Bid, string>(bids, async (b, result) => result.complete([`${b.auction}`]), 1_000, 10);
    expectTypeOf(names).toEqualTypeOf<SingleOutputStream<string>>();
    AsyncDataStream.orderedWait<Bid, string>(
      bids,
      // @ts-expect-error results have the output type
      (b, result) => result.complete([b.price]),
      1_000,
    );
    const retry = AsyncRetryStrategies.fixedDelay<string>(3, 100).ifResult((r) => r.length === 0 || r[0] === '');
    expectTypeOf(retry.resultPredicate).toEqualTypeOf<((results: readonly string[]) => boolean) | undefined>();
    AsyncDataStream.unorderedWaitWithRetry<Bid, string>(bids, (_b, r) => r.complete([]), 1_000, 10, retry.ifException(RetryPredicates.HAS_EXCEPTION_PREDICATE).build());
  });

  it('field aggregations take number fields only: tuple positions as numbers, object keys as strings', () => {
    const counts = env.fromElements<[string, number]>(['a', 1]).keyBy((t) => t[0]);
    expectTypeOf(counts.sum(1)).toEqualTypeOf<SingleOutputStream<[string, number]>>();
    // @ts-expect-error position 0 holds a string
    counts.sum(0);
    // @ts-expect-error no position 2
    counts.max(2);
    const byAuction = bids.keyBy((b) => b.auction);
    expectTypeOf(byAuction.maxBy('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error bidder is a string
    byAuction.min('bidder');
    expectTypeOf(byAuction.window(TumblingEventTimeWindows.of(1_000)).sum('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
  });

  it('windowAll: a window function without a key sees the stream\'s records', () => {
    const top = bids.windowAll(TumblingEventTimeWindows.of(1_000)).process<string>({
      process(ctx, elements, out) {
        expectTypeOf(elements).toEqualTypeOf<readonly Bid[]>();
        out.collect(`${ctx.window.end}:${elements.length}`);
      },
    });
    expectTypeOf(top).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.windowAll(TumblingEventTimeWindows.of(1_000)).maxBy('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
  });

  it('count windows: the window function gets the key and the records', () => {
    const counts = bids
      .keyBy((b) => b.auction)
      .countWindow(10, 5)
      .process<string>({
        process(key, _ctx, elements, out) {
          expectTypeOf(key).toEqualTypeOf<number>();
          expectTypeOf(elements).toEqualTypeOf<readonly Bid[]>();
          out.collect(`${key}:${elements.length}`);
        },
      });
    expectTypeOf(counts).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.keyBy((b) => b.auction).countWindow(3).maxBy('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
  });

  it('a keyed stream takes map, filter (narrowing), flatMap and sinkTo, as a partitioned stream', () => {
    const keyed = env.fromElements<number | string>(1, 'a').keyBy((v) => String(v));
    expectTypeOf(keyed.map((v) => String(v).length)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(keyed.filter((v): v is number => typeof v === 'number')).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(keyed.flatMap<string>((v, out) => out.collect(String(v)))).toEqualTypeOf<SingleOutputStream<string>>();
    keyed.sinkTo(new CollectSink<number | string>());
  });
});

describe('joins', () => {
  const persons = env.fromElements({ id: 1, name: 'ann' });

  it('an interval join needs keyed streams with the same key type; the function sees both record types', () => {
    const joined = bids
      .keyBy((b) => b.auction)
      .intervalJoin(persons.keyBy((p) => p.id))
      .between(-1_000, 1_000)
      .process<string>({
        processElement(b, p, ctx, out) {
          expectTypeOf(b).toEqualTypeOf<Bid>();
          expectTypeOf(p).toEqualTypeOf<{ id: number; name: string }>();
          expectTypeOf(ctx.getTimestamp()).toEqualTypeOf<number>();
          out.collect(p.name);
        },
      });
    expectTypeOf(joined).toEqualTypeOf<SingleOutputStream<string>>();
    // @ts-expect-error key types differ (number vs string)
    bids.keyBy((b) => b.auction).intervalJoin(persons.keyBy((p) => p.name));
    // @ts-expect-error an interval join is on keyed streams
    bids.intervalJoin(persons);
  });

  it('window joins and coGroup: keys of the same type, a result per pair or per window', () => {
    const window = TumblingEventTimeWindows.of(1_000);
    const pairs = bids
      .join(persons)
      .where((b) => b.auction)
      .equalTo((p) => p.id)
      .window(window)
      .apply((b, p) => ({ price: b.price, name: p.name }));
    expectTypeOf(pairs).toEqualTypeOf<SingleOutputStream<{ price: number; name: string }>>();
    const groups = bids
      .coGroup(persons)
      .where((b) => b.bidder)
      .equalTo((p) => p.name)
      .window(window)
      .apply<number>((bs, ps, out) => {
        expectTypeOf(bs).toEqualTypeOf<readonly Bid[]>();
        expectTypeOf(ps).toEqualTypeOf<readonly { id: number; name: string }[]>();
        out.collect(bs.length + ps.length);
      });
    expectTypeOf(groups).toEqualTypeOf<SingleOutputStream<number>>();
    // @ts-expect-error key types differ (number vs string)
    bids.join(persons).where((b) => b.auction).equalTo((p) => p.name);
  });
});

describe('triggers and evictors', () => {
  it('built-in triggers and evictors fit any window; a trigger of your own sees the record type', () => {
    const windowed = bids.keyBy((b) => b.auction).window(TumblingEventTimeWindows.of(1_000));
    windowed.trigger(CountTrigger.of(10)).evictor(CountEvictor.of(5));
    windowed.evictor(DeltaEvictor.of<Bid>(100, (b, last) => last.price - b.price));
    const own: Trigger<Bid> = {
      onElement: (b) => (b.price > 100 ? 'FIRE' : 'CONTINUE'),
      onEventTime: () => 'CONTINUE',
      onProcessingTime: () => 'CONTINUE',
      clear: () => {},
    };
    windowed.trigger(own);
    // @ts-expect-error a trigger of strings does not fit a window of bids
    windowed.trigger({} as Trigger<string>);
    // @ts-expect-error a delta evictor of strings does not fit a window of bids
    windowed.evictor(DeltaEvictor.of<string>(1, (a, b) => a.length - b.length));
  });
});
