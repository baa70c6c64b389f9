package sluice.bench.flink;

import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;

/** The counts of q15, q16 and q17 (bench/nexmark/bid-statistics.js). */
public final class BidStatistics {
  private final ValueState<long[]> bids;
  private final MapState<Long, Integer> bidders;
  private final MapState<Long, Integer> auctions;

  public BidStatistics(RuntimeContext ctx) {
    bids = ctx.getState(new ValueStateDescriptor<>("bids", long[].class));
    bidders = ctx.getMapState(new MapStateDescriptor<>("bidders", Types.LONG, Types.INT));
    auctions = ctx.getMapState(new MapStateDescriptor<>("auctions", Types.LONG, Types.INT));
  }

  /** Adds a bid; true when it is the group's first. */
  public boolean add(Bid b) throws Exception {
    int rank = Common.priceRank(b.price);
    long[] counts = bids.value();
    boolean first = counts == null;
    if (first) counts = new long[4];
    counts[0]++;
    counts[rank]++;
    bids.update(counts);
    int bit = 1 << rank;
    Integer bidder = bidders.get(b.bidder);
    int bidderRanks = bidder == null ? 0 : bidder;
    if ((bidderRanks & bit) == 0) bidders.put(b.bidder, bidderRanks | bit);
    Integer auction = auctions.get(b.auction);
    int auctionRanks = auction == null ? 0 : auction;
    if ((auctionRanks & bit) == 0) auctions.put(b.auction, auctionRanks | bit);
    return first;
  }

  /** [total, rank 1, rank 2, rank 3] x [bids, bidders, auctions]. */
  public long[] statistics() throws Exception {
    long[] s = new long[12];
    System.arraycopy(bids.value(), 0, s, 0, 4);
    distinct(bidders, s, 4);
    distinct(auctions, s, 8);
    return s;
  }

  private static void distinct(MapState<Long, Integer> map, long[] s, int at) throws Exception {
    for (Integer ranks : map.values()) {
      s[at]++;
      for (int r = 1; r <= 3; r++) if ((ranks & (1 << r)) != 0) s[at + r]++;
    }
  }
}
