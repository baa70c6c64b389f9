package sluice.bench.flink;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/** Keeps the normalized line of every record (the job runs in this JVM: Main's MiniCluster). */
public class LinesSink<T> implements Sink<T> {
  public static final Queue<String> LINES = new ConcurrentLinkedQueue<>();

  private final NexmarkQuery<T> query;

  public LinesSink(NexmarkQuery<T> query) {
    this.query = query;
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) {
    return new SinkWriter<>() {
      @Override
      public void write(T element, Context ctx) {
        LINES.add(query.format(element));
      }

      @Override
      public void flush(boolean endOfInput) {}

      @Override
      public void close() {}
    };
  }
}
