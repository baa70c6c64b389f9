package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q18, last bid (bench/nexmark/q18.js). */
public class Q18 implements NexmarkQuery<Bid> {
  @Override
  public DataStream<Bid> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .keyBy(b -> b.bidder + "|" + b.auction, Types.STRING)
        .process(new Last())
        .returns(Bid.class);
  }

  static class Last extends KeyedProcessFunction<String, Bid, Bid> {
    private transient ValueState<Bid> last;

    @Override
    public void open(OpenContext ctx) {
      last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Bid.class));
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Bid> out) throws Exception {
      Bid l = last.value();
      if (l == null) ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
      if (l == null || Common.BY_TIME_DESC.compare(b, l) < 0) last.update(b);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Bid> out) throws Exception {
      out.collect(last.value());
    }
  }

  @Override
  public String format(Bid b) {
    return Common.bidLine(b);
  }
}
