package sluice.bench.flink;

import java.util.Arrays;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q19, auction top-10 price (bench/nexmark/q19.js). */
public class Q19 implements NexmarkQuery<Q19.Row> {
  public record Row(Bid bid, long rank) {}

  private static final int TOP = 10;

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events).keyBy(b -> b.auction, Types.LONG).process(new TopBids()).returns(Row.class);
  }

  static class TopBids extends KeyedProcessFunction<Long, Bid, Row> {
    private transient ValueState<Bid[]> top;

    @Override
    public void open(OpenContext ctx) {
      top = getRuntimeContext().getState(new ValueStateDescriptor<>("top", Types.OBJECT_ARRAY(Types.POJO(Bid.class))));
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Row> out) throws Exception {
      Bid[] t = top.value();
      if (t == null) {
        top.update(new Bid[] {b});
        ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
        return;
      }
      if (t.length == TOP && Common.BY_PRICE_DESC.compare(b, t[TOP - 1]) >= 0) return;
      int i = t.length;
      while (i > 0 && Common.BY_PRICE_DESC.compare(b, t[i - 1]) < 0) i--;
      Bid[] next = new Bid[Math.min(t.length + 1, TOP)];
      System.arraycopy(t, 0, next, 0, i);
      next[i] = b;
      System.arraycopy(t, i, next, i + 1, next.length - i - 1);
      top.update(next);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      Bid[] t = top.value();
      for (int i = 0; i < t.length; i++) out.collect(new Row(t[i], i + 1));
    }
  }

  @Override
  public String format(Row r) {
    return Common.bidLine(r.bid()) + "|" + r.rank();
  }
}
