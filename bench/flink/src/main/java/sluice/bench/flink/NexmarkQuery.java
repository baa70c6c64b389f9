package sluice.bench.flink;

import java.io.Serializable;
import org.apache.flink.streaming.api.datastream.DataStream;

/** A Nexmark query (bench/nexmark/qN.js in Java): the result stream of the events, and its output line. */
public interface NexmarkQuery<T> extends Serializable {
  /** `events`: every event, timestamps from dateTime, watermarks bounded by 0 ms of out-of-orderness. */
  DataStream<T> build(DataStream<Event> events, Options options);

  /** The normalized output line of a result record, as the JavaScript module's `format`. */
  String format(T record);

  /** What a query may need besides the events. */
  /** sideInputPath: q13's side input file; filesDir: where q10 writes its files (null: nowhere). */
  record Options(String sideInputPath, String filesDir) implements Serializable {}
}
