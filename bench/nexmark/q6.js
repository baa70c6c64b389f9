// Nexmark q6, average selling price by seller: for every auction's winning bid, the average of
// it and the seller's 10 winning bids before it (in time).
//   SELECT Q.seller, AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.dateTime
//                                        ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
//   FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
//         FROM (SELECT A.id, A.seller, B.price, B.dateTime FROM auction AS A, bid AS B
//               WHERE A.id = B.auction and B.dateTime between A.dateTime and A.expires)
//         WHERE rownum <= 1) AS Q
// (Flink SQL cannot run it: an OVER aggregation on an updating input.) Here the winning bids
// are final at the end of the input; then each seller's are ordered by time (then auction id)
// and averaged over the window of 11 rows. AVG of BIGINT truncates.
import { listState } from 'sluice';
import { END_OF_INPUT, line } from './common.js';
import { winningBids } from './winning-bids.js';

export default {
  name: 'q6',
  title: 'average selling price by seller',
  build(events) {
    return winningBids(events)
      .map((w) => ({ seller: w.auction.seller, auction: w.auction.id, price: w.bid.price, dateTime: w.bid.dateTime }))
      .keyBy((w) => w.seller)
      .process({
        open(ctx) {
          this.sold = ctx.getState(listState('sold'));
        },
        processElement(w, ctx) {
          this.sold.add(w);
          ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
        },
        onTimer(_t, ctx, out) {
          const sold = [...this.sold.get()].sort((a, b) => a.dateTime - b.dateTime || a.auction - b.auction);
          let sum = 0;
          for (let i = 0; i < sold.length; i++) {
            sum += sold[i].price;
            if (i > 10) sum -= sold[i - 11].price;
            out.collect({ seller: ctx.getCurrentKey(), average: Math.trunc(sum / Math.min(i + 1, 11)) });
          }
        },
      });
  },
  format: (r) => line(r.seller, r.average),
};
