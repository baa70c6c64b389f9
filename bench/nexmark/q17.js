// Nexmark q17, auction statistics report: per auction and day, the bids in all and per price
// rank, and the lowest, highest, average and total price.
//   SELECT auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day, count(*) AS total_bids,
//     count(*) filter (where price < 10000) AS rank1_bids, ... rank3_bids,
//     min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
//   FROM bid GROUP BY auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd')
// AVG of BIGINT truncates.
import { valueState } from 'sluice';
import { dayOf, END_OF_INPUT, formatDay, line, priceRank } from './common.js';

export default {
  name: 'q17',
  title: 'auction statistics report',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => `${b.auction}|${dayOf(b.dateTime)}`)
      .process({
        open(ctx) {
          this.stats = ctx.getState(valueState('stats'));
        },
        processElement(b, ctx) {
          let s = this.stats.value();
          if (s === undefined) {
            s = { auction: b.auction, day: dayOf(b.dateTime), bids: [0, 0, 0, 0], min: b.price, max: b.price, sum: 0 };
            ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
          }
          s.bids[0]++;
          s.bids[priceRank(b.price)]++;
          if (b.price < s.min) s.min = b.price;
          if (b.price > s.max) s.max = b.price;
          s.sum += b.price;
          this.stats.update(s);
        },
        onTimer(_t, _ctx, out) {
          const s = this.stats.value();
          out.collect({ auction: s.auction, day: formatDay(s.day), bids: s.bids, min: s.min, max: s.max, avg: Math.trunc(s.sum / s.bids[0]), sum: s.sum });
        },
      }),
  format: (r) => line(r.auction, r.day, ...r.bids, r.min, r.max, r.avg, r.sum),
};
