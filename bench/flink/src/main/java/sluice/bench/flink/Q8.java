package sluice.bench.flink;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.api.common.functions.CoGroupFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;

/** Nexmark q8, monitor new users (bench/nexmark/q8.js): a window coGroup. */
public class Q8 implements NexmarkQuery<Q8.Row> {
  public record Row(long id, String name, long starttime) {}

  private static final long WINDOW_MS = 10_000;

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.persons(events)
        .coGroup(Streams.auctions(events))
        .where(p -> p.id, Types.LONG)
        .equalTo(a -> a.seller, Types.LONG)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
        .apply(new NewSellers(), TypeInformation.of(Row.class));
  }

  static class NewSellers implements CoGroupFunction<Person, Auction, Row> {
    @Override
    public void coGroup(Iterable<Person> registered, Iterable<Auction> opened, Collector<Row> out) {
      if (!opened.iterator().hasNext()) return;
      Set<Long> seen = new HashSet<>();
      for (Person p : registered) {
        if (seen.add(p.id)) out.collect(new Row(p.id, p.name, p.dateTime - p.dateTime % WINDOW_MS));
      }
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.id(), r.name(), r.starttime());
  }
}
