// Nexmark q7, highest bid: the bids with the highest price of every 10-second window.
//   SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra from bid B
//   JOIN (SELECT MAX(price) AS maxprice, window_end as dateTime
//         FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//         GROUP BY window_start, window_end) B1
//   ON B.price = B1.maxprice WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime
// The highest bids per auction and window first (in parallel), then per window. One difference
// from the SQL: BETWEEN's upper bound would also admit a bid at exactly the window's end (the
// first millisecond of the next window) with the same price; here a bid counts in its own
// window only. Flink's DataStream program (bench/flink) does the same.
import { TumblingEventTimeWindows, valueState } from 'sluice';
import { line } from './common.js';

/** The highest bids (all of them when several have its price). */
const highest = {
  createAccumulator: () => ({ price: -1, bids: [] }),
  add(b, acc) {
    if (b.price > acc.price) return { price: b.price, bids: [b] };
    if (b.price === acc.price) acc.bids.push(b);
    return acc;
  },
  getResult: (acc) => acc,
  merge: (x, y) => (x.price > y.price ? x : y.price > x.price ? y : { price: x.price, bids: [...x.bids, ...y.bids] }),
};

export default {
  name: 'q7',
  title: 'highest bid',
  build(events) {
    return events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => b.auction)
      .window(TumblingEventTimeWindows.of(10_000))
      .aggregate(highest, (_auction, ctx, acc) => ({ price: acc.price, bids: acc.bids, windowEnd: ctx.window.end }))
      .keyBy((h) => h.windowEnd)
      .process({
        open(ctx) {
          this.top = ctx.getState(valueState('top'));
        },
        processElement(h, ctx) {
          const top = this.top.value();
          if (top === undefined) {
            this.top.update({ price: h.price, bids: [...h.bids] });
            ctx.timerService().registerEventTimeTimer(h.windowEnd - 1);
          } else if (h.price > top.price) this.top.update({ price: h.price, bids: [...h.bids] });
          else if (h.price === top.price) this.top.update({ price: top.price, bids: [...top.bids, ...h.bids] });
        },
        onTimer(_t, _ctx, out) {
          for (const b of this.top.value().bids) out.collect({ auction: b.auction, price: b.price, bidder: b.bidder, dateTime: b.dateTime, extra: b.extra });
          this.top.clear();
        },
      });
  },
  format: (r) => line(r.auction, r.price, r.bidder, r.dateTime, r.extra),
};
