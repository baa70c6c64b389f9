package sluice.bench.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;

/**
 * The events of bench/nexmark/events-file.js, preloaded into this JVM's memory once, and the
 * source that reads them. Subtask i of n reads events i, i + n, i + 2n, ... as Sluice's
 * GeneratorSource does (bench/nexmark/job.js preloadedSource), so both sides advance through
 * event time together at parallelism 2.
 */
public final class Preloaded {
  private Preloaded() {}

  private static volatile Event[] events = new Event[0];

  public static int load(String path) throws IOException {
    List<Event> list = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(Path.of(path), StandardCharsets.ISO_8859_1)) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (!line.isEmpty()) list.add(Event.parse(line));
      }
    }
    events = list.toArray(new Event[0]);
    return events.length;
  }

  public static int count() {
    return events.length;
  }

  /** A source of the preloaded events at the given parallelism. */
  public static DataGeneratorSource<Event> source(int parallelism) {
    return new DataGeneratorSource<>(new Strided(events.length, parallelism), events.length, TypeInformation.of(Event.class));
  }

  /**
   * DataGeneratorSource hands each of its `parallelism` splits a contiguous range of indexes
   * (NumberSequenceSource: the first `count % parallelism` ranges one longer); index j of range
   * k is event j * parallelism + k.
   */
  static final class Strided implements GeneratorFunction<Long, Event> {
    private final long count;
    private final int parallelism;

    Strided(long count, int parallelism) {
      this.count = count;
      this.parallelism = parallelism;
    }

    @Override
    public void open(SourceReaderContext ctx) {}

    @Override
    public Event map(Long index) {
      long shortLength = count / parallelism;
      long longRanges = count % parallelism;
      long inLong = longRanges * (shortLength + 1);
      long range;
      long j;
      if (index < inLong) {
        range = index / (shortLength + 1);
        j = index % (shortLength + 1);
      } else {
        range = longRanges + (index - inLong) / shortLength;
        j = (index - inLong) % shortLength;
      }
      return events[(int) (j * parallelism + range)];
    }
  }
}
