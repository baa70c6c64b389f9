package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q14, calculation (bench/nexmark/q14.js). */
public class Q14 implements NexmarkQuery<Q14.Row> {
  public record Row(long auction, long bidder, long price, String bidTimeType, long dateTime, String extra, long cCounts) {}

  static String timeType(long dateTime) {
    long hour = Math.floorDiv(dateTime, 3_600_000L) % 24;
    return hour >= 8 && hour <= 18 ? "dayTime" : hour <= 6 || hour >= 20 ? "nightTime" : "otherTime";
  }

  static long countC(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) if (s.charAt(i) == 'c') n++;
    return n;
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .filter(b -> b.price * 908 > 1_000_000_000L && b.price * 908 < 50_000_000_000L)
        .map(b -> new Row(b.auction, b.bidder, b.price * 908, timeType(b.dateTime), b.dateTime, b.extra, countC(b.extra)))
        .returns(Row.class);
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), Common.decimal3(r.price()), r.bidTimeType(), r.dateTime(), r.extra(), r.cCounts());
  }
}
