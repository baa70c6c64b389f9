package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q20, expand bid with auction (bench/nexmark/q20.js). */
public class Q20 implements NexmarkQuery<Q20.Row> {
  public record Row(Bid bid, Auction auction) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.auctions(events)
        .keyBy(a -> a.id, Types.LONG)
        .connect(Streams.bids(events).keyBy(b -> b.auction, Types.LONG))
        .process(new Join())
        .returns(Row.class);
  }

  static class Join extends KeyedCoProcessFunction<Long, Auction, Bid, Row> {
    /** The auction if its category is 10; `other` if another. */
    private transient ValueState<Auction> auction;
    private transient ValueState<Boolean> other;
    private transient ListState<Bid> early;

    @Override
    public void open(OpenContext ctx) {
      auction = getRuntimeContext().getState(new ValueStateDescriptor<>("auction", Auction.class));
      other = getRuntimeContext().getState(new ValueStateDescriptor<>("other-category", Types.BOOLEAN));
      early = getRuntimeContext().getListState(new ListStateDescriptor<>("early-bids", Bid.class));
    }

    @Override
    public void processElement1(Auction a, Context ctx, Collector<Row> out) throws Exception {
      if (a.category == 10) {
        auction.update(a);
        for (Bid b : early.get()) out.collect(new Row(b, a));
      } else other.update(true);
      early.clear();
    }

    @Override
    public void processElement2(Bid b, Context ctx, Collector<Row> out) throws Exception {
      Auction a = auction.value();
      if (a != null) out.collect(new Row(b, a));
      else if (other.value() == null) early.add(b);
    }
  }

  @Override
  public String format(Row r) {
    Bid b = r.bid();
    Auction a = r.auction();
    return Common.line(b.auction, b.bidder, b.price, b.channel, b.url, b.dateTime, b.extra, a.itemName, a.description, a.initialBid, a.reserve, a.dateTime, a.expires, a.seller, a.category, a.extra);
  }
}
