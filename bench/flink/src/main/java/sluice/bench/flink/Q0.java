package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q0, pass-through (bench/nexmark/q0.js). */
public class Q0 implements NexmarkQuery<Q0.Row> {
  public record Row(long auction, long bidder, long price, long dateTime, String extra) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events).map(b -> new Row(b.auction, b.bidder, b.price, b.dateTime, b.extra)).returns(Row.class);
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), r.price(), r.dateTime(), r.extra());
  }
}
