// The counts of q15, q16 and q17: bids, distinct bidders and distinct auctions, in all and per
// price rank (common.js priceRank), of one group.
//   count(*), count(*) filter (where price < 10000), ..., count(distinct bidder), count(distinct
//   bidder) filter (where price < 10000), ..., count(distinct auction), ...
// A distinct bidder or auction is one map entry holding the ranks it was seen in (a bit each).
import { mapState, valueState } from 'sluice';
import { priceRank } from './common.js';

export function openBidStatistics(ctx) {
  return {
    bids: ctx.getState(valueState('bids')),
    bidders: ctx.getMapState(mapState('bidders')),
    auctions: ctx.getMapState(mapState('auctions')),
  };
}

/** Adds a bid; true when it is the group's first. */
export function addBid(s, b) {
  const rank = priceRank(b.price);
  const bids = s.bids.value();
  const first = bids === undefined;
  const counts = first ? [0, 0, 0, 0] : bids;
  counts[0]++;
  counts[rank]++;
  s.bids.update(counts);
  const bit = 1 << rank;
  const bidder = s.bidders.get(b.bidder) ?? 0;
  if ((bidder & bit) === 0) s.bidders.put(b.bidder, bidder | bit);
  const auction = s.auctions.get(b.auction) ?? 0;
  if ((auction & bit) === 0) s.auctions.put(b.auction, auction | bit);
  return first;
}

/** [total, rank 1, rank 2, rank 3] x [bids, bidders, auctions]. */
export function bidStatistics(s) {
  const distinct = (map) => {
    const c = [0, 0, 0, 0];
    for (const ranks of map.values()) {
      c[0]++;
      for (let r = 1; r <= 3; r++) if ((ranks & (1 << r)) !== 0) c[r]++;
    }
    return c;
  };
  return [...s.bids.value(), ...distinct(s.bidders), ...distinct(s.auctions)];
}
