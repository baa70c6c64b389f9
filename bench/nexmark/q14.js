// Nexmark q14, calculation: bids in a price range, converted, with the time of day and a count
// of the 'c's in their extra field (Nexmark's count_char function).
//   SELECT auction, bidder, 0.908 * price as price,
//     CASE WHEN HOUR(dateTime) >= 8 AND HOUR(dateTime) <= 18 THEN 'dayTime'
//          WHEN HOUR(dateTime) <= 6 OR HOUR(dateTime) >= 20 THEN 'nightTime'
//          ELSE 'otherTime' END AS bidTimeType,
//     dateTime, extra, count_char(extra, 'c') AS c_counts
//   FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
// Prices in thousandths (q1); hours in UTC.
import { decimal3, line } from './common.js';

function timeType(dateTime) {
  const hour = Math.floor(dateTime / 3_600_000) % 24;
  return hour >= 8 && hour <= 18 ? 'dayTime' : hour <= 6 || hour >= 20 ? 'nightTime' : 'otherTime';
}

function countC(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 99) n++;
  return n;
}

export default {
  name: 'q14',
  title: 'calculation',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid' && e.price * 908 > 1_000_000_000 && e.price * 908 < 50_000_000_000)
      .map((b) => ({
        auction: b.auction,
        bidder: b.bidder,
        price: b.price * 908,
        bidTimeType: timeType(b.dateTime),
        dateTime: b.dateTime,
        extra: b.extra,
        cCounts: countC(b.extra),
      })),
  format: (r) => line(r.auction, r.bidder, decimal3(r.price), r.bidTimeType, r.dateTime, r.extra, r.cCounts),
};
