package sluice.bench.flink;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * An order-independent digest of the output lines, bench/nexmark/events-file.js LinesDigest in
 * Java: the line count and the sums (mod 2^32) of two 32-bit FNV-1a hashes of each line.
 */
public class Digest<T> implements Sink<T> {
  private static final AtomicLong COUNT = new AtomicLong();
  private static final AtomicLong SUM1 = new AtomicLong();
  private static final AtomicLong SUM2 = new AtomicLong();

  private final NexmarkQuery<T> query;

  public Digest(NexmarkQuery<T> query) {
    this.query = query;
  }

  public static void reset() {
    COUNT.set(0);
    SUM1.set(0);
    SUM2.set(0);
  }

  public static long count() {
    return COUNT.get();
  }

  public static String value() {
    return COUNT.get() + ":" + Long.toHexString(SUM1.get() & 0xffffffffL) + ":" + Long.toHexString(SUM2.get() & 0xffffffffL);
  }

  static void add(String line) {
    int h1 = 0x811c9dc5;
    int h2 = 0x050c5d1f;
    for (int i = 0; i < line.length(); i++) {
      int c = line.charAt(i);
      h1 = (h1 ^ c) * 0x01000193;
      h2 = ((h2 ^ c) * 0x01000193) ^ (h2 >>> 15);
    }
    COUNT.incrementAndGet();
    SUM1.addAndGet(h1 & 0xffffffffL);
    SUM2.addAndGet(h2 & 0xffffffffL);
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) {
    return new SinkWriter<>() {
      @Override
      public void write(T element, Context ctx) {
        add(query.format(element));
      }

      @Override
      public void flush(boolean endOfInput) {}

      @Override
      public void close() {}
    };
  }
}
