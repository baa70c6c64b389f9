package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q2, selection (bench/nexmark/q2.js). */
public class Q2 implements NexmarkQuery<Q2.Row> {
  public record Row(long auction, long price) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return events.filter(e -> e.bid != null && e.bid.auction % 123 == 0).map(e -> new Row(e.bid.auction, e.bid.price)).returns(Row.class);
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.price());
  }
}
