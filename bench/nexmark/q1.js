// Nexmark q1, currency conversion: every bid with its price in euros.
//   SELECT auction, bidder, 0.908 * price as price, dateTime, extra FROM bid
// The price is a DECIMAL(23, 3) in SQL: here an exact integer count of thousandths of a cent.
import { decimal3, isBid, line } from './common.js';

export default {
  name: 'q1',
  title: 'currency conversion',
  build: (events) => events.filter(isBid).map((b) => ({ auction: b.auction, bidder: b.bidder, price: b.price * 908, dateTime: b.dateTime, extra: b.extra })),
  format: (r) => line(r.auction, r.bidder, decimal3(r.price), r.dateTime, r.extra),
};
