package sluice.bench.flink;

import java.time.Duration;
import java.util.Arrays;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Nexmark q7, highest bid (bench/nexmark/q7.js): the bids with the highest price per 10-second window. */
public class Q7 implements NexmarkQuery<Q7.Row> {
  public record Row(long auction, long price, long bidder, long dateTime, String extra) {}

  /** The highest bids (all of them when several have its price). */
  public static class Highest {
    public long price = -1;
    public Bid[] bids = new Bid[0];
    public long windowEnd;

    public Highest() {}

    static Highest of(long price, Bid[] bids) {
      Highest h = new Highest();
      h.price = price;
      h.bids = bids;
      return h;
    }
  }

  static Bid[] concat(Bid[] a, Bid[] b) {
    Bid[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .keyBy(b -> b.auction, Types.LONG)
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(10)))
        .aggregate(new HighestBids(), new WithWindowEnd(), Types.POJO(Highest.class), Types.POJO(Highest.class), Types.POJO(Highest.class))
        .keyBy(h -> h.windowEnd, Types.LONG)
        .process(new Top())
        .returns(Row.class);
  }

  static class HighestBids implements AggregateFunction<Bid, Highest, Highest> {
    public Highest createAccumulator() {
      return new Highest();
    }

    public Highest add(Bid b, Highest acc) {
      if (b.price > acc.price) return Highest.of(b.price, new Bid[] {b});
      if (b.price == acc.price) acc.bids = concat(acc.bids, new Bid[] {b});
      return acc;
    }

    public Highest getResult(Highest acc) {
      return acc;
    }

    public Highest merge(Highest x, Highest y) {
      return x.price > y.price ? x : y.price > x.price ? y : Highest.of(x.price, concat(x.bids, y.bids));
    }
  }

  static class WithWindowEnd extends ProcessWindowFunction<Highest, Highest, Long, TimeWindow> {
    @Override
    public void process(Long auction, Context ctx, Iterable<Highest> acc, Collector<Highest> out) {
      Highest h = acc.iterator().next();
      Highest r = Highest.of(h.price, h.bids);
      r.windowEnd = ctx.window().getEnd();
      out.collect(r);
    }
  }

  static class Top extends KeyedProcessFunction<Long, Highest, Row> {
    private transient ValueState<Highest> top;

    @Override
    public void open(OpenContext ctx) {
      top = getRuntimeContext().getState(new ValueStateDescriptor<>("top", Highest.class));
    }

    @Override
    public void processElement(Highest h, Context ctx, Collector<Row> out) throws Exception {
      Highest t = top.value();
      if (t == null) {
        top.update(Highest.of(h.price, h.bids));
        ctx.timerService().registerEventTimeTimer(h.windowEnd - 1);
      } else if (h.price > t.price) top.update(Highest.of(h.price, h.bids));
      else if (h.price == t.price) top.update(Highest.of(t.price, concat(t.bids, h.bids)));
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      for (Bid b : top.value().bids) out.collect(new Row(b.auction, b.price, b.bidder, b.dateTime, b.extra));
      top.clear();
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.price(), r.bidder(), r.dateTime(), r.extra());
  }
}
