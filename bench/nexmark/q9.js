// Nexmark q9, winning bids: every auction with its winning bid.
//   SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra,
//          auction, bidder, price, bid_dateTime, bid_extra
//   FROM (SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
//           ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.dateTime ASC) AS rownum
//         FROM auction A, bid B WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires)
//   WHERE rownum <= 1
// Final at the end of the input (winning-bids.js).
import { line } from './common.js';
import { winningBids } from './winning-bids.js';

export default {
  name: 'q9',
  title: 'winning bids',
  build: (events) => winningBids(events),
  format: ({ auction: a, bid: b }) =>
    line(a.id, a.itemName, a.description, a.initialBid, a.reserve, a.dateTime, a.expires, a.seller, a.category, a.extra, b.auction, b.bidder, b.price, b.dateTime, b.extra),
};
