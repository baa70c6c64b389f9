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
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Nexmark q5, hot items (bench/nexmark/q5.js): every tie of the most bids per sliding window. */
public class Q5 implements NexmarkQuery<Q5.Row> {
  public record Row(long auction, long num) {}

  public record Count(long auction, long num, long windowEnd) {}

  public static class Top {
    public long num;
    public long[] auctions;

    public Top() {}
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return events
        .filter(e -> e.bid != null)
        .map(e -> e.bid.auction)
        .returns(Types.LONG)
        .keyBy(auction -> auction, Types.LONG)
        .window(SlidingEventTimeWindows.of(Duration.ofSeconds(10), Duration.ofSeconds(2)))
        .aggregate(new CountBids(), new ToCount(), Types.LONG, Types.LONG, Types.POJO(Count.class))
        .keyBy(c -> c.windowEnd(), Types.LONG)
        .process(new Hottest())
        .returns(Row.class);
  }

  static class CountBids implements AggregateFunction<Long, Long, Long> {
    public Long createAccumulator() {
      return 0L;
    }

    public Long add(Long auction, Long n) {
      return n + 1;
    }

    public Long getResult(Long n) {
      return n;
    }

    public Long merge(Long a, Long b) {
      return a + b;
    }
  }

  static class ToCount extends ProcessWindowFunction<Long, Count, Long, TimeWindow> {
    @Override
    public void process(Long auction, Context ctx, Iterable<Long> counts, Collector<Count> out) {
      out.collect(new Count(auction, counts.iterator().next(), ctx.window().getEnd()));
    }
  }

  static class Hottest extends KeyedProcessFunction<Long, Count, Row> {
    private transient ValueState<Top> top;

    @Override
    public void open(OpenContext ctx) {
      top = getRuntimeContext().getState(new ValueStateDescriptor<>("top", Top.class));
    }

    @Override
    public void processElement(Count c, Context ctx, Collector<Row> out) throws Exception {
      Top t = top.value();
      if (t == null) {
        ctx.timerService().registerEventTimeTimer(c.windowEnd() - 1);
      }
      if (t == null || c.num() > t.num) {
        t = new Top();
        t.num = c.num();
        t.auctions = new long[] {c.auction()};
      } else if (c.num() == t.num) {
        t.auctions = Arrays.copyOf(t.auctions, t.auctions.length + 1);
        t.auctions[t.auctions.length - 1] = c.auction();
      }
      top.update(t);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      Top t = top.value();
      for (long auction : t.auctions) out.collect(new Row(auction, t.num));
      top.clear();
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.num());
  }
}
