/**
 * Nexmark "hot items" (query 5): every 2 seconds of event time, the auction with the most
 * bids in the last 10 seconds. Run: npx sluice run examples/nexmark-hot-items.ts [events]
 */
import { defineJob, SlidingEventTimeWindows, type ProcessWindowFunction, valueState, WatermarkStrategy, type KeyedProcessFunction, type ValueState } from 'sluice';
import { nexmarkSource, PrintSink, type Bid, type NexmarkEvent } from 'sluice/connectors';

interface AuctionCount {
  auction: number;
  bids: number;
  windowEnd: number;
}

/** Keeps the best auction of each window and emits it when the watermark passes the window's end. */
const hottest: KeyedProcessFunction<number, AuctionCount, string> = {
  best: undefined as unknown as ValueState<AuctionCount>,
  open(ctx) {
    this.best = ctx.getState(valueState<AuctionCount>('best'));
  },
  processElement(c, ctx) {
    const best = this.best.value();
    if (best === undefined) ctx.timerService().registerEventTimeTimer(c.windowEnd - 1);
    if (best === undefined || c.bids > best.bids || (c.bids === best.bids && c.auction < best.auction)) this.best.update(c);
  },
  onTimer(_ts, _ctx, out) {
    const best = this.best.value()!;
    out.collect(`window ending ${new Date(best.windowEnd).toISOString()}: auction ${best.auction} with ${best.bids} bids`);
    this.best.clear();
  },
} as KeyedProcessFunction<number, AuctionCount, string> & { best: ValueState<AuctionCount> };

/** Turns the bid count of a window into a record that names the window. */
const windowResult: ProcessWindowFunction<number, AuctionCount, number> = {
  process(auction, ctx, counts, out) {
    out.collect({ auction, bids: counts[0]!, windowEnd: ctx.window.end });
  },
};

export default defineJob((env, args) => {
  const events = Number(args[0] ?? 3_000_000);
  if (!Number.isSafeInteger(events) || events < 1) throw new Error(`events must be a positive integer, got '${args[0]}'`);
  env
    .fromSource(nexmarkSource({ events, config: { firstEventRate: 100_000 } }), 'Nexmark')
    .filter((e: NexmarkEvent): e is Bid => e.kind === 'bid')
    .map((e) => e as Bid)
    .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<Bid>(0))
    .keyBy((bid) => bid.auction)
    .window(SlidingEventTimeWindows.of(10_000, 2_000))
    .aggregate(
      { createAccumulator: () => 0, add: (_bid: Bid, n: number) => n + 1, getResult: (n: number) => n, merge: (a: number, b: number) => a + b },
      windowResult,
    )
    .name('bids per auction')
    .uid('bids-per-auction')
    .keyBy((c) => c.windowEnd)
    .process(hottest)
    .name('hottest auction')
    .uid('hottest-auction')
    .sinkTo(new PrintSink<string>())
    .setParallelism(1);
});
