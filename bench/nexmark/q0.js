// Nexmark q0, pass-through: every bid, as it is (measures the cost of the plumbing).
//   SELECT auction, bidder, price, dateTime, extra FROM bid
import { isBid, line } from './common.js';

export default {
  name: 'q0',
  title: 'pass-through',
  build: (events) => events.filter(isBid).map((b) => ({ auction: b.auction, bidder: b.bidder, price: b.price, dateTime: b.dateTime, extra: b.extra })),
  format: (r) => line(r.auction, r.bidder, r.price, r.dateTime, r.extra),
};
