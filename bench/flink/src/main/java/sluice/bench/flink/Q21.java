package sluice.bench.flink;

import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.util.Collector;

/** Nexmark q21, add channel id (bench/nexmark/q21.js). */
public class Q21 implements NexmarkQuery<Q21.Row> {
  public record Row(long auction, long bidder, long price, String channel, String channelId) {}

  private static final Map<String, String> KNOWN = Map.of("apple", "0", "google", "1", "facebook", "2", "baidu", "3");
  private static final Pattern CHANNEL_ID = Pattern.compile("(&|^)channel_id=([^&]*)");

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events).flatMap(new WithChannelId()).returns(Row.class);
  }

  static class WithChannelId implements FlatMapFunction<Bid, Row> {
    @Override
    public void flatMap(Bid b, Collector<Row> out) {
      String id = KNOWN.get(b.channel.toLowerCase(Locale.ROOT));
      if (id == null) {
        Matcher m = CHANNEL_ID.matcher(b.url);
        if (m.find()) id = m.group(2);
      }
      if (id != null) out.collect(new Row(b.auction, b.bidder, b.price, b.channel, id));
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), r.price(), r.channel(), r.channelId());
  }
}
