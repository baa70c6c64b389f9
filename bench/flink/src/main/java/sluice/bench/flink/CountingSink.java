package sluice.bench.flink;

import java.util.concurrent.atomic.LongAdder;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/** Drops every record, counting them (Sluice's DiscardingSink; the job runs in this JVM). */
public class CountingSink<T> implements Sink<T> {
  public static final LongAdder COUNT = new LongAdder();

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) {
    return new SinkWriter<>() {
      @Override
      public void write(T element, Context ctx) {
        COUNT.increment();
      }

      @Override
      public void flush(boolean endOfInput) {}

      @Override
      public void close() {}
    };
  }
}
