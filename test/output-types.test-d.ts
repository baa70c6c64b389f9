/**
 * How the output type of a function that collects its results is known (docs/concepts.md,
 * "Output types"). TypeScript infers a type argument from argument types and returned values,
 * never from calls in a function's body, so `out.collect(x)` alone types nothing. The output
 * type comes from a type argument on the call, an annotated collector (or result future), a
 * typed function value, or, for window functions, the one result the function returns. With
 * none of these, the output type is a message naming the fix, and `out.collect(x)` does not
 * compile: never a silent `unknown`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  AsyncDataStream,
  AsyncRetryStrategies,
  broadcastState,
  SingleOutputStream,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  type AggregateFunction,
  type CoProcessFunction,
  type Collector,
  type KeyedProcessFunction,
  type ProcessAllWindowFunction,
  type ProcessWindowFunction,
  type ResultFuture,
  type WindowContext,
  type WindowMapFunction,
  type WindowResultFunction,
} from '../src/index.js';
import { PrintSink } from '../src/connectors/index.js';

interface Bid {
  auction: number;
  bidder: string;
  price: number;
}
interface Total {
  bidder: string;
  end: number;
  total: number;
}
interface Person {
  id: number;
  name: string;
}

const env = StreamExecutionEnvironment.create();
const bids = env.fromElements<Bid>({ auction: 1, bidder: 'a', price: 10 });
const persons = env.fromElements<Person>({ id: 1, name: 'ann' });
const byBidder = bids.keyBy((b) => b.bidder);
const byAuction = bids.keyBy((b) => b.auction);
const windowed = byBidder.window(TumblingEventTimeWindows.of(1_000));
const allWindowed = bids.windowAll(TumblingEventTimeWindows.of(1_000));
const countWindowed = byBidder.countWindow(10);
const sumOfPrices: AggregateFunction<Bid, number, number> = { createAccumulator: () => 0, add: (b, n) => n + b.price, getResult: (n) => n };
const higher = (a: Bid, b: Bid): Bid => (a.price >= b.price ? a : b);
const rules = broadcastState<string, number>('rules');
const broadcastRules = env.fromElements<[string, number]>(['x', 1]).broadcast(rules);

/** The record type of a stream. */
type Out<S> = S extends { readonly __type: infer T } ? T : never;
/** What the output type is when nothing gives it. */
type NotInferred = `output type not inferred${string}`;

describe('a window function returns its one result: the output type is inferred from it', () => {
  it("keyed windows: the issue's aggregate with a window function, reduce and process", () => {
    const totals = windowed.aggregate(sumOfPrices, (bidder, ctx, total) => ({ bidder, end: ctx.window.end, total }));
    expectTypeOf(totals).toEqualTypeOf<SingleOutputStream<Total>>();
    totals.sinkTo(new PrintSink<Total>());
    const highest = windowed.reduce(higher, (bidder, ctx, bid) => {
      expectTypeOf(bid).toEqualTypeOf<Bid>();
      return { bidder, end: ctx.window.end, total: bid.price };
    });
    expectTypeOf(highest).toEqualTypeOf<SingleOutputStream<Total>>();
    const counts = windowed.process((bidder, ctx, elements) => {
      expectTypeOf(elements).toEqualTypeOf<readonly Bid[]>();
      expectTypeOf(ctx).toEqualTypeOf<WindowContext>();
      return [bidder, elements.length] as const;
    });
    expectTypeOf(counts).toEqualTypeOf<SingleOutputStream<readonly [string, number]>>();
  });

  it('count windows and windows without keys', () => {
    expectTypeOf(countWindowed.aggregate(sumOfPrices, (bidder, _ctx, total) => `${bidder}:${total}`)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(countWindowed.reduce(higher, (_bidder, _ctx, bid) => bid.price)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(countWindowed.process((bidder, _ctx, elements) => ({ bidder, n: elements.length }))).toEqualTypeOf<SingleOutputStream<{ bidder: string; n: number }>>();
    expectTypeOf(allWindowed.aggregate(sumOfPrices, (ctx, total) => ({ end: ctx.window.end, total }))).toEqualTypeOf<SingleOutputStream<{ end: number; total: number }>>();
    expectTypeOf(allWindowed.reduce(higher, (_ctx, bid) => bid.bidder)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(allWindowed.process((_ctx, elements) => elements.length > 0)).toEqualTypeOf<SingleOutputStream<boolean>>();
  });

  it('a declared function type gives the output type; its input and key must fit the window', () => {
    const fn: WindowResultFunction<number, Total, string> = (bidder, ctx, total) => ({ bidder, end: ctx.window.end, total });
    expectTypeOf(windowed.aggregate(sumOfPrices, fn)).toEqualTypeOf<SingleOutputStream<Total>>();
    const byNumber: WindowMapFunction<Bid, number, number> = (_key, _ctx, elements) => elements.length;
    // @ts-expect-error the window is keyed by string, not number
    windowed.process(byNumber);
    // @ts-expect-error the aggregate's result is a number, not a Bid
    windowed.aggregate(sumOfPrices, (_bidder: string, _ctx: WindowContext, bid: Bid) => bid.price);
  });
});

describe('a type argument on the call gives the output type', () => {
  it('process on streams, keyed streams, connected and broadcast-connected streams, interval joins', () => {
    expectTypeOf(bids.process<number>({ processElement: (b, _ctx, out) => out.collect(b.price) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(byBidder.process<number>({ processElement: (b, _ctx, out) => out.collect(b.price) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(
      bids.connect(persons).process<string>({ processElement1: (b, _ctx, out) => out.collect(b.bidder), processElement2: (p, _ctx, out) => out.collect(p.name) }),
    ).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(
      byAuction.connect(persons.keyBy((p) => p.id)).process<string>({ processElement1: (b, _ctx, out) => out.collect(b.bidder), processElement2: (p, _ctx, out) => out.collect(p.name) }),
    ).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.connect(broadcastRules).process<number>({ processElement: (b, _ctx, out) => out.collect(b.price), processBroadcastElement: () => {} })).toEqualTypeOf<
      SingleOutputStream<number>
    >();
    expectTypeOf(byAuction.connect(broadcastRules).process<number>({ processElement: (b, _ctx, out) => out.collect(b.price), processBroadcastElement: () => {} })).toEqualTypeOf<
      SingleOutputStream<number>
    >();
    const joined = byAuction
      .intervalJoin(persons.keyBy((p) => p.id))
      .between(-1, 1)
      .process<[Bid, Person]>({ processElement: (b, p, _ctx, out) => out.collect([b, p]) });
    expectTypeOf(joined).toEqualTypeOf<SingleOutputStream<[Bid, Person]>>();
  });

  it('flatMap, coGroup apply and join flatApply', () => {
    expectTypeOf(bids.flatMap<string>((b, out) => out.collect(b.bidder))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(byBidder.flatMap<string>((b, out) => out.collect(b.bidder))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.connect(persons).flatMap<string>((b, out) => out.collect(b.bidder), (p, out) => out.collect(p.name))).toEqualTypeOf<SingleOutputStream<string>>();
    const window = TumblingEventTimeWindows.of(1_000);
    const groups = bids
      .coGroup(persons)
      .where((b) => b.auction)
      .equalTo((p) => p.id)
      .window(window)
      .apply<number>((bs, ps, out) => out.collect(bs.length + ps.length));
    expectTypeOf(groups).toEqualTypeOf<SingleOutputStream<number>>();
    const pairs = bids
      .join(persons)
      .where((b) => b.auction)
      .equalTo((p) => p.id)
      .window(window)
      .flatApply<string>((b, p, out) => out.collect(`${b.price}:${p.name}`));
    expectTypeOf(pairs).toEqualTypeOf<SingleOutputStream<string>>();
  });

  it('window process functions that collect', () => {
    expectTypeOf(windowed.process<number>({ process: (_k, _ctx, elements, out) => out.collect(elements.length) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(countWindowed.process<number>({ process: (_k, _ctx, elements, out) => out.collect(elements.length) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(allWindowed.process<number>({ process: (_ctx, elements, out) => out.collect(elements.length) })).toEqualTypeOf<SingleOutputStream<number>>();
    // With a pre-aggregation, every type parameter: the aggregate's accumulator and result, then the output.
    expectTypeOf(windowed.aggregate<number, number, string>(sumOfPrices, { process: (k, _ctx, [total], out) => out.collect(`${k}:${total}`) })).toEqualTypeOf<
      SingleOutputStream<string>
    >();
  });

  it('async I/O: both types', () => {
    expectTypeOf(AsyncDataStream.orderedWait<Bid, number>(bids, (b, result) => result.complete([b.price]), 1_000)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(AsyncDataStream.unorderedWait<Bid, number>(bids, (b, result) => result.complete([b.price]), 1_000)).toEqualTypeOf<SingleOutputStream<number>>();
  });
});

describe('an annotated collector, result future or function value gives the output type', () => {
  it('an annotated out: one annotation, the other parameters still contextually typed', () => {
    const totals = windowed.aggregate(sumOfPrices, {
      process(bidder, ctx, [total], out: Collector<Total>) {
        expectTypeOf(total).toEqualTypeOf<number>();
        out.collect({ bidder, end: ctx.window.end, total });
      },
    });
    expectTypeOf(totals).toEqualTypeOf<SingleOutputStream<Total>>();
    expectTypeOf(bids.process({ processElement: (b, _ctx, out: Collector<number>) => out.collect(b.price) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(
      byBidder.process({
        processElement: (b, _ctx, out: Collector<string>) => out.collect(b.bidder),
        onTimer: (_t, ctx, out) => out.collect(ctx.getCurrentKey()),
      }),
    ).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.flatMap((b, out: Collector<string>) => out.collect(b.bidder))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(allWindowed.reduce(higher, { process: (_ctx, [bid], out: Collector<number>) => out.collect(bid.price) })).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('an annotated result future, or a retry strategy of the output type', () => {
    expectTypeOf(AsyncDataStream.orderedWait(bids, (b, result: ResultFuture<string>) => result.complete([b.bidder]), 1_000)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(AsyncDataStream.unorderedWait(bids, { asyncInvoke: (b, result: ResultFuture<number>) => result.complete([b.price]) }, 1_000)).toEqualTypeOf<
      SingleOutputStream<number>
    >();
    const retry = AsyncRetryStrategies.fixedDelay<number>(3, 10).build();
    expectTypeOf(AsyncDataStream.orderedWaitWithRetry(bids, (b, result) => result.complete([b.price]), 1_000, 10, retry)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(AsyncDataStream.unorderedWaitWithRetry(bids, (b, result) => result.complete([b.price]), 1_000, 10, retry)).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('a function declared with its type', () => {
    const keyedFn: KeyedProcessFunction<string, Bid, Total> = { processElement: (b, ctx, out) => out.collect({ bidder: ctx.getCurrentKey(), end: 0, total: b.price }) };
    expectTypeOf(byBidder.process(keyedFn)).toEqualTypeOf<SingleOutputStream<Total>>();
    const coFn: CoProcessFunction<Bid, Person, number> = { processElement1: (b, _ctx, out) => out.collect(b.price), processElement2: (p, _ctx, out) => out.collect(p.id) };
    expectTypeOf(bids.connect(persons).process(coFn)).toEqualTypeOf<SingleOutputStream<number>>();
    const windowFn: ProcessWindowFunction<number, Total, string> = { process: (bidder, ctx, [total], out) => out.collect({ bidder, end: ctx.window.end, total }) };
    expectTypeOf(windowed.aggregate(sumOfPrices, windowFn)).toEqualTypeOf<SingleOutputStream<Total>>();
    expectTypeOf(countWindowed.aggregate(sumOfPrices, windowFn)).toEqualTypeOf<SingleOutputStream<Total>>();
    const allFn: ProcessAllWindowFunction<Bid, number> = { process: (_ctx, elements, out) => out.collect(elements.length) };
    expectTypeOf(allWindowed.process(allFn)).toEqualTypeOf<SingleOutputStream<number>>();
    // A helper that returns a typed function keeps working as before.
    const collectPrices = (): ((b: Bid, out: Collector<number>) => void) => (b, out) => out.collect(b.price);
    expectTypeOf(bids.flatMap(collectPrices())).toEqualTypeOf<SingleOutputStream<number>>();
  });
});

describe('with nothing to infer from, out.collect(x) does not compile and the output type names the fix', () => {
  it('process on every kind of stream', () => {
    const plain = bids.process({
      processElement(b, _ctx, out) {
        // @ts-expect-error output type not inferred: give it as process<Out>(...), or annotate out: Collector<Out>
        out.collect(b.price);
      },
    });
    expectTypeOf<Out<typeof plain>>().toExtend<NotInferred>();
    expectTypeOf<Out<typeof plain>>().not.toBeUnknown();
    const keyed = byBidder.process({
      processElement(b, _ctx, out) {
        // @ts-expect-error output type not inferred
        out.collect(b.price);
      },
    });
    expectTypeOf<Out<typeof keyed>>().toExtend<NotInferred>();
    const connected = bids.connect(persons).process({
      // @ts-expect-error output type not inferred
      processElement1: (b, _ctx, out) => out.collect(b.price),
      processElement2: () => {},
    });
    expectTypeOf<Out<typeof connected>>().toExtend<NotInferred>();
    const connectedKeyed = byAuction.connect(persons.keyBy((p) => p.id)).process({
      processElement1: () => {},
      // @ts-expect-error output type not inferred
      processElement2: (p, _ctx, out) => out.collect(p.name),
    });
    expectTypeOf<Out<typeof connectedKeyed>>().toExtend<NotInferred>();
    const broadcastConnected = bids.connect(broadcastRules).process({
      // @ts-expect-error output type not inferred
      processElement: (b, _ctx, out) => out.collect(b.price),
      processBroadcastElement: () => {},
    });
    expectTypeOf<Out<typeof broadcastConnected>>().toExtend<NotInferred>();
    const keyedBroadcastConnected = byAuction.connect(broadcastRules).process({
      // @ts-expect-error output type not inferred
      processElement: (b, _ctx, out) => out.collect(b.price),
      processBroadcastElement: () => {},
    });
    expectTypeOf<Out<typeof keyedBroadcastConnected>>().toExtend<NotInferred>();
    const intervalJoined = byAuction
      .intervalJoin(persons.keyBy((p) => p.id))
      .between(-1, 1)
      .process({
        // @ts-expect-error output type not inferred
        processElement: (b, p, _ctx, out) => out.collect([b, p]),
      });
    expectTypeOf<Out<typeof intervalJoined>>().toExtend<NotInferred>();
  });

  it('window functions that collect: the message names the returning form too', () => {
    // The example.
    const totals = windowed.aggregate(sumOfPrices, {
      process(bidder, ctx, [total], out) {
        // @ts-expect-error output type not inferred: annotate out: Collector<Out>, or return the one result: (key, ctx, result) => output
        out.collect({ bidder, end: ctx.window.end, total });
      },
    });
    expectTypeOf<Out<typeof totals>>().toExtend<NotInferred>();
    expectTypeOf<Out<typeof totals>>().toExtend<`${string}return the one result: (key, ctx, result) => output`>();
    // @ts-expect-error a stream whose type was not inferred cannot reach a sink of Totals
    totals.sinkTo(new PrintSink<Total>());
    const reduced = windowed.reduce(higher, {
      // @ts-expect-error output type not inferred
      process: (_k, _ctx, [bid], out) => out.collect(bid),
    });
    expectTypeOf<Out<typeof reduced>>().toExtend<NotInferred>();
    const processed = windowed.process({
      // @ts-expect-error output type not inferred
      process: (_k, _ctx, elements, out) => out.collect(elements.length),
    });
    expectTypeOf<Out<typeof processed>>().toExtend<`${string}process((key, ctx, elements) => result)`>();
    const counted = countWindowed.process({
      // @ts-expect-error output type not inferred
      process: (_k, _ctx, elements, out) => out.collect(elements.length),
    });
    expectTypeOf<Out<typeof counted>>().toExtend<NotInferred>();
    const countAggregated = countWindowed.aggregate(sumOfPrices, {
      // @ts-expect-error output type not inferred
      process: (_k, _ctx, [total], out) => out.collect(total),
    });
    expectTypeOf<Out<typeof countAggregated>>().toExtend<NotInferred>();
    const all = allWindowed.process({
      // @ts-expect-error output type not inferred
      process: (_ctx, elements, out) => out.collect(elements.length),
    });
    expectTypeOf<Out<typeof all>>().toExtend<`${string}process((ctx, elements) => result)`>();
    const allAggregated = allWindowed.aggregate(sumOfPrices, {
      // @ts-expect-error output type not inferred
      process: (_ctx, [total], out) => out.collect(total),
    });
    expectTypeOf<Out<typeof allAggregated>>().toExtend<`${string}(ctx, result) => output`>();
    const allReduced = allWindowed.reduce(higher, {
      // @ts-expect-error output type not inferred
      process: (_ctx, [bid], out) => out.collect(bid),
    });
    expectTypeOf<Out<typeof allReduced>>().toExtend<NotInferred>();
  });

  it('flatMap, coGroup apply, join flatApply', () => {
    // @ts-expect-error output type not inferred: give it as flatMap<Out>(...), or annotate out: Collector<Out>
    const flat = bids.flatMap((b, out) => out.collect(b.bidder));
    expectTypeOf<Out<typeof flat>>().toExtend<`${string}flatMap<Out>(...)${string}`>();
    // @ts-expect-error output type not inferred
    byBidder.flatMap((b, out) => out.collect(b.bidder));
    bids.connect(persons).flatMap(
      // @ts-expect-error output type not inferred
      (b, out) => out.collect(b.bidder),
      () => {},
    );
    const window = TumblingEventTimeWindows.of(1_000);
    const groups = bids
      .coGroup(persons)
      .where((b) => b.auction)
      .equalTo((p) => p.id)
      .window(window)
      // @ts-expect-error output type not inferred
      .apply((bs, ps, out) => out.collect(bs.length + ps.length));
    expectTypeOf<Out<typeof groups>>().toExtend<`${string}apply<Out>(...)${string}`>();
    const pairs = bids
      .join(persons)
      .where((b) => b.auction)
      .equalTo((p) => p.id)
      .window(window)
      // @ts-expect-error output type not inferred
      .flatApply((b, p, out) => out.collect(`${b.price}:${p.name}`));
    expectTypeOf<Out<typeof pairs>>().toExtend<NotInferred>();
  });

  it('async I/O: result.complete(...) does not compile', () => {
    // @ts-expect-error output type not inferred: give both types as orderedWait<In, Out>(...), or annotate the result future
    const ordered = AsyncDataStream.orderedWait(bids, (b, result) => result.complete([b.price]), 1_000);
    expectTypeOf<Out<typeof ordered>>().toExtend<`${string}orderedWait<In, Out>(...)${string}`>();
    // @ts-expect-error output type not inferred
    AsyncDataStream.unorderedWait(bids, (b, result) => result.complete([b.price]), 1_000);
    // @ts-expect-error output type not inferred
    AsyncDataStream.orderedWaitWithRetry(bids, (b, result) => result.complete([b.price]), 1_000, 10, undefined);
    // @ts-expect-error output type not inferred
    AsyncDataStream.unorderedWaitWithRetry(bids, { asyncInvoke: (b, result) => result.complete([b.price]) }, 1_000, 10, undefined);
  });

  it('a function that collects nothing (side outputs only) compiles; its stream says why it has no type', () => {
    const none = bids.process({ processElement: () => {} });
    expectTypeOf<Out<typeof none>>().toExtend<NotInferred>();
    // @ts-expect-error the records have no known type
    none.map((x) => x.price);
  });
});
