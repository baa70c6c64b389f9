package sluice.bench.flink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q13, bounded side input join (bench/nexmark/q13.js): the side input loaded in open(). */
public class Q13 implements NexmarkQuery<Q13.Row> {
  public record Row(long auction, long bidder, long price, long dateTime, String value) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    if (options.sideInputPath() == null) throw new IllegalArgumentException("q13 needs the side input file");
    return Streams.bids(events).process(new Lookup(options.sideInputPath())).returns(Row.class);
  }

  static class Lookup extends ProcessFunction<Bid, Row> {
    private final String path;
    private transient Map<Long, String> side;

    Lookup(String path) {
      this.path = path;
    }

    @Override
    public void open(OpenContext ctx) throws IOException {
      side = new HashMap<>();
      for (String row : Files.readAllLines(Path.of(path), StandardCharsets.UTF_8)) {
        if (row.isEmpty()) continue;
        int tab = row.indexOf('\t');
        side.put(Long.parseLong(row.substring(0, tab)), row.substring(tab + 1));
      }
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Row> out) {
      String value = side.get(b.auction % 10_000);
      if (value != null) out.collect(new Row(b.auction, b.bidder, b.price, b.dateTime, value));
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), r.price(), r.dateTime(), r.value());
  }
}
