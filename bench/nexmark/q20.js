// Nexmark q20, expand bid with auction: every bid on an auction of category 10, with the auction.
//   SELECT auction, bidder, price, channel, url, B.dateTime, B.extra, itemName, description,
//          initialBid, reserve, A.dateTime, expires, seller, category, A.extra
//   FROM bid AS B INNER JOIN auction AS A on B.auction = A.id WHERE A.category = 10
// A regular join keyed by auction id. Auction ids are unique, so an auction of another category
// is remembered only as "not 10" and its bids are dropped; bids that arrive before their
// auction (the generator lets a few name an auction a few ids ahead) wait for it.
import { listState, valueState } from 'sluice';
import { line } from './common.js';

export default {
  name: 'q20',
  title: 'expand bid with auction',
  build(events) {
    const auctions = events.filter((e) => e.kind === 'auction');
    const bids = events.filter((e) => e.kind === 'bid');
    return auctions
      .keyBy((a) => a.id)
      .connect(bids.keyBy((b) => b.auction))
      .process({
        open(ctx) {
          // The auction if its category is 10, null if another.
          this.auction = ctx.getState(valueState('auction'));
          this.early = ctx.getState(listState('early-bids'));
        },
        processElement1(a, _ctx, out) {
          const wanted = a.category === 10;
          this.auction.update(wanted ? a : null);
          if (wanted) for (const b of this.early.get()) out.collect({ bid: b, auction: a });
          this.early.clear();
        },
        processElement2(b, _ctx, out) {
          const a = this.auction.value();
          if (a === undefined) this.early.add(b);
          else if (a !== null) out.collect({ bid: b, auction: a });
        },
      });
  },
  format: ({ bid: b, auction: a }) =>
    line(b.auction, b.bidder, b.price, b.channel, b.url, b.dateTime, b.extra, a.itemName, a.description, a.initialBid, a.reserve, a.dateTime, a.expires, a.seller, a.category, a.extra),
};
