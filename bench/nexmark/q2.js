// Nexmark q2, selection: the bids on a few auctions.
//   SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0
import { line } from './common.js';

export default {
  name: 'q2',
  title: 'selection',
  build: (events) => events.filter((e) => e.kind === 'bid' && e.auction % 123 === 0).map((b) => ({ auction: b.auction, price: b.price })),
  format: (r) => line(r.auction, r.price),
};
