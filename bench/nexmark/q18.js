// Nexmark q18, last bid: every bidder's latest bid on each auction.
//   SELECT auction, bidder, price, channel, url, dateTime, extra
//   FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number FROM bid)
//   WHERE rank_number <= 1
// Final at the end of the input; bids at the same time are ordered by common.js.
import { valueState } from 'sluice';
import { bidLine, compareBidsByTimeDesc, END_OF_INPUT } from './common.js';

export default {
  name: 'q18',
  title: 'last bid',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => `${b.bidder}|${b.auction}`)
      .process({
        open(ctx) {
          this.last = ctx.getState(valueState('last'));
        },
        processElement(b, ctx) {
          const last = this.last.value();
          if (last === undefined) ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
          if (last === undefined || compareBidsByTimeDesc(b, last) < 0) this.last.update(b);
        },
        onTimer(_t, _ctx, out) {
          out.collect(this.last.value());
        },
      }),
  format: bidLine,
};
