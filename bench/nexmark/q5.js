// Nexmark q5, hot items: every 2 seconds, the auctions with the most bids in the last 10 seconds
// (all of them when several tie).
//   SELECT AuctionBids.auction, AuctionBids.num FROM (
//     SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
//     FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
//     GROUP BY auction, window_start, window_end) AS AuctionBids
//   JOIN (SELECT max(num) AS maxn, starttime, endtime FROM (... the same counts ...)
//         GROUP BY starttime, endtime) AS MaxBids
//   ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
//      AND AuctionBids.num >= MaxBids.maxn
import { SlidingEventTimeWindows, valueState } from 'sluice';
import { line } from './common.js';

export default {
  name: 'q5',
  title: 'hot items',
  build(events) {
    return (
      events
        .filter((e) => e.kind === 'bid')
        // Only the auction id crosses the keyBy (Flink's SQL plan reads only auction and
        // dateTime); the timestamp travels with the record.
        .map((b) => b.auction)
        .keyBy((auction) => auction)
        .window(SlidingEventTimeWindows.of(10_000, 2_000))
        .aggregate(
          { createAccumulator: () => 0, add: (_auction, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
          (auction, ctx, num) => ({ auction, num, windowEnd: ctx.window.end }),
        )
        .keyBy((c) => c.windowEnd)
        .process({
          open(ctx) {
            this.top = ctx.getState(valueState('top'));
          },
          processElement(c, ctx) {
            const top = this.top.value();
            if (top === undefined) {
              this.top.update({ num: c.num, auctions: [c.auction] });
              ctx.timerService().registerEventTimeTimer(c.windowEnd - 1);
            } else if (c.num > top.num) this.top.update({ num: c.num, auctions: [c.auction] });
            else if (c.num === top.num) this.top.update({ num: top.num, auctions: [...top.auctions, c.auction] });
          },
          onTimer(_t, _ctx, out) {
            const top = this.top.value();
            for (const auction of top.auctions) out.collect({ auction, num: top.num });
            this.top.clear();
          },
        })
    );
  },
  format: (r) => line(r.auction, r.num),
};
