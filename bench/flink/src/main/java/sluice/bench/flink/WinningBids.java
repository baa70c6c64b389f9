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

/** The winning bid of every auction (bench/nexmark/winning-bids.js), at the end of the input. */
public final class WinningBids {
  private WinningBids() {}

  public record Winner(Auction auction, Bid bid) {}

  public static DataStream<Winner> of(DataStream<Event> events) {
    return Streams.auctions(events)
        .keyBy(a -> a.id, Types.LONG)
        .connect(Streams.bids(events).keyBy(b -> b.auction, Types.LONG))
        .process(new Pick())
        .returns(Winner.class);
  }

  static class Pick extends KeyedCoProcessFunction<Long, Auction, Bid, Winner> {
    private transient ValueState<Auction> auction;
    private transient ValueState<Bid> best;
    private transient ListState<Bid> early;

    @Override
    public void open(OpenContext ctx) {
      auction = getRuntimeContext().getState(new ValueStateDescriptor<>("auction", Auction.class));
      best = getRuntimeContext().getState(new ValueStateDescriptor<>("best", Bid.class));
      early = getRuntimeContext().getListState(new ListStateDescriptor<>("early-bids", Bid.class));
    }

    @Override
    public void processElement1(Auction a, Context ctx, Collector<Winner> out) throws Exception {
      auction.update(a);
      for (Bid b : early.get()) offer(a, b);
      early.clear();
      ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
    }

    @Override
    public void processElement2(Bid b, Context ctx, Collector<Winner> out) throws Exception {
      Auction a = auction.value();
      if (a == null) early.add(b);
      else offer(a, b);
    }

    private void offer(Auction a, Bid b) throws Exception {
      if (b.dateTime < a.dateTime || b.dateTime > a.expires) return;
      Bid current = best.value();
      if (current == null || Common.BY_PRICE_DESC.compare(b, current) < 0) best.update(b);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Winner> out) throws Exception {
      Bid b = best.value();
      if (b != null) out.collect(new Winner(auction.value(), b));
    }
  }
}
