// The winning bid of every auction (q4, q6, q9): the highest bid placed between the auction's
// opening and its expiry, by common.js's compareBidsByPriceDesc.
//   ... FROM auction A, bid B WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
// A regular join keyed by auction id: the auction is kept, bids that arrive before it (a bid may
// name an auction a few ids ahead) wait for it. Emitted once per auction with a winner, at the
// end of the input: { auction, bid }.
import { listState, valueState } from 'sluice';
import { compareBidsByPriceDesc, END_OF_INPUT } from './common.js';

const inTime = (a, b) => b.dateTime >= a.dateTime && b.dateTime <= a.expires;

export function winningBids(events) {
  const auctions = events.filter((e) => e.kind === 'auction');
  const bids = events.filter((e) => e.kind === 'bid');
  return auctions
    .keyBy((a) => a.id)
    .connect(bids.keyBy((b) => b.auction))
    .process({
      open(ctx) {
        this.auction = ctx.getState(valueState('auction'));
        this.best = ctx.getState(valueState('best'));
        this.early = ctx.getState(listState('early-bids'));
      },
      processElement1(a, ctx) {
        this.auction.update(a);
        for (const b of this.early.get()) this.offer(a, b);
        this.early.clear();
        ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
      },
      processElement2(b) {
        const a = this.auction.value();
        if (a === undefined) this.early.add(b);
        else this.offer(a, b);
      },
      offer(a, b) {
        if (!inTime(a, b)) return;
        const best = this.best.value();
        if (best === undefined || compareBidsByPriceDesc(b, best) < 0) this.best.update(b);
      },
      onTimer(_t, _ctx, out) {
        const bid = this.best.value();
        if (bid !== undefined) out.collect({ auction: this.auction.value(), bid });
      },
    });
}
