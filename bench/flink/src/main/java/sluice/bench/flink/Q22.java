package sluice.bench.flink;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Nexmark q22, get URL directories (bench/nexmark/q22.js). */
public class Q22 implements NexmarkQuery<Q22.Row> {
  public record Row(long auction, long bidder, long price, String channel, String dir1, String dir2, String dir3) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .map(b -> {
          String[] parts = b.url.split("/", -1);
          return new Row(b.auction, b.bidder, b.price, b.channel, part(parts, 3), part(parts, 4), part(parts, 5));
        })
        .returns(Row.class);
  }

  private static String part(String[] parts, int i) {
    return i < parts.length ? parts[i] : null;
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), r.price(), r.channel(), r.dir1(), r.dir2(), r.dir3());
  }
}
