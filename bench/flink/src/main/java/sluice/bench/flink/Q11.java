package sluice.bench.flink;

import java.time.Duration;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Nexmark q11, user sessions (bench/nexmark/q11.js). */
public class Q11 implements NexmarkQuery<Q11.Row> {
  public record Row(long bidder, long count, long start, long end) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return events
        .filter(e -> e.bid != null)
        .map(e -> e.bid.bidder)
        .returns(Types.LONG)
        .keyBy(bidder -> bidder, Types.LONG)
        .window(EventTimeSessionWindows.withGap(Duration.ofSeconds(10)))
        .aggregate(new CountAggregate<Long>(), new Session(), Types.LONG, Types.LONG, Types.POJO(Row.class));
  }

  static class Session extends ProcessWindowFunction<Long, Row, Long, TimeWindow> {
    @Override
    public void process(Long bidder, Context ctx, Iterable<Long> counts, Collector<Row> out) {
      out.collect(new Row(bidder, counts.iterator().next(), ctx.window().getStart(), ctx.window().getEnd()));
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.bidder(), r.count(), r.start(), r.end());
  }
}
