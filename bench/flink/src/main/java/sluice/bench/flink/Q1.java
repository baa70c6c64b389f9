package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q1, currency conversion (bench/nexmark/q1.js): the price in thousandths. */
public class Q1 implements NexmarkQuery<Q0.Row> {
  @Override
  public DataStream<Q0.Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events).map(b -> new Q0.Row(b.auction, b.bidder, b.price * 908, b.dateTime, b.extra)).returns(Q0.Row.class);
  }

  @Override
  public String format(Q0.Row r) {
    return Common.line(r.auction(), r.bidder(), Common.decimal3(r.price()), r.dateTime(), r.extra());
  }
}
