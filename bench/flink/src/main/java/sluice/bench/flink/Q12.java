package sluice.bench.flink;

import java.time.Duration;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;

/** Nexmark q12, processing-time windows (bench/nexmark/q12.js): not deterministic. */
public class Q12 implements NexmarkQuery<Q11.Row> {
  @Override
  public DataStream<Q11.Row> build(DataStream<Event> events, Options options) {
    return events
        .filter(e -> e.bid != null)
        .map(e -> e.bid.bidder)
        .returns(Types.LONG)
        .keyBy(bidder -> bidder, Types.LONG)
        .window(TumblingProcessingTimeWindows.of(Duration.ofSeconds(10)))
        .aggregate(new CountAggregate<Long>(), new Q11.Session(), Types.LONG, Types.LONG, Types.POJO(Q11.Row.class));
  }

  @Override
  public String format(Q11.Row r) {
    return Common.line(r.bidder(), r.count(), r.start(), r.end());
  }
}
