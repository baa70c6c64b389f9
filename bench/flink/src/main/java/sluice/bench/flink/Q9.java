package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q9, winning bids (bench/nexmark/q9.js). */
public class Q9 implements NexmarkQuery<WinningBids.Winner> {
  @Override
  public DataStream<WinningBids.Winner> build(DataStream<Event> events, Options options) {
    return WinningBids.of(events);
  }

  @Override
  public String format(WinningBids.Winner w) {
    Auction a = w.auction();
    Bid b = w.bid();
    return Common.line(a.id, a.itemName, a.description, a.initialBid, a.reserve, a.dateTime, a.expires, a.seller, a.category, a.extra, b.auction, b.bidder, b.price, b.dateTime, b.extra);
  }
}
