// Nexmark q19, auction top-10 price: the 10 highest bids of every auction, ranked.
//   SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
//   WHERE rank_number <= 10
// Final at the end of the input; bids of one price are ordered by common.js.
import { valueState } from 'sluice';
import { bidLine, compareBidsByPriceDesc, END_OF_INPUT } from './common.js';

const TOP = 10;

export default {
  name: 'q19',
  title: 'auction top-10 price',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => b.auction)
      .process({
        open(ctx) {
          this.top = ctx.getState(valueState('top'));
        },
        processElement(b, ctx) {
          const top = this.top.value();
          if (top === undefined) {
            this.top.update([b]);
            ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
            return;
          }
          if (top.length === TOP && compareBidsByPriceDesc(b, top[TOP - 1]) >= 0) return;
          let i = top.length;
          while (i > 0 && compareBidsByPriceDesc(b, top[i - 1]) < 0) i--;
          const next = [...top.slice(0, i), b, ...top.slice(i, TOP - 1)];
          this.top.update(next);
        },
        onTimer(_t, _ctx, out) {
          this.top.value().forEach((bid, i) => out.collect({ bid, rank: i + 1 }));
        },
      }),
  format: (r) => `${bidLine(r.bid)}|${r.rank}`,
};
