// Nexmark q15, bidding statistics report: per day, bids, bidders and auctions, in all and per
// price rank.
//   SELECT DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day, count(*) AS total_bids,
//     count(*) filter (where price < 10000) AS rank1_bids, ... rank3_bids,
//     count(distinct bidder) AS total_bidders, ... rank3_bidders,
//     count(distinct auction) AS total_auctions, ... rank3_auctions
//   FROM bid GROUP BY DATE_FORMAT(dateTime, 'yyyy-MM-dd')
// An updating GROUP BY: final values at the end of the input.
import { addBid, bidStatistics, openBidStatistics } from './bid-statistics.js';
import { dayOf, END_OF_INPUT, formatDay, line } from './common.js';

export default {
  name: 'q15',
  title: 'bidding statistics report',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => dayOf(b.dateTime))
      .process({
        open(ctx) {
          this.stats = openBidStatistics(ctx);
        },
        processElement(b, ctx) {
          if (addBid(this.stats, b)) ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
        },
        onTimer(_t, ctx, out) {
          out.collect({ day: formatDay(ctx.getCurrentKey()), counts: bidStatistics(this.stats) });
        },
      }),
  format: (r) => line(r.day, ...r.counts),
};
