// Nexmark q4, average price per category: the average of the winning (highest) bids of the
// auctions of each category.
//   SELECT Q.category, AVG(Q.final) FROM (
//     SELECT MAX(B.price) AS final, A.category FROM auction A, bid B
//     WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
//     GROUP BY A.id, A.category) Q
//   GROUP BY Q.category
// Both GROUP BYs are updating SQL results: each emits its final value at the end of the input
// (common.js, END_OF_INPUT). AVG of BIGINT truncates, as SQL's.
import { valueState } from 'sluice';
import { END_OF_INPUT, line } from './common.js';
import { winningBids } from './winning-bids.js';

export default {
  name: 'q4',
  title: 'average price per category',
  build(events) {
    return winningBids(events)
      .keyBy((w) => w.auction.category)
      .process({
        open(ctx) {
          this.total = ctx.getState(valueState('total'));
        },
        processElement(w, ctx) {
          const t = this.total.value();
          if (t === undefined) {
            this.total.update({ sum: w.bid.price, count: 1 });
            ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
          } else this.total.update({ sum: t.sum + w.bid.price, count: t.count + 1 });
        },
        onTimer(_t, ctx, out) {
          const t = this.total.value();
          out.collect({ category: ctx.getCurrentKey(), average: Math.trunc(t.sum / t.count) });
        },
      });
  },
  format: (r) => line(r.category, r.average),
};
