package sluice.bench.flink;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.serialization.Encoder;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;

/**
 * Nexmark q10, log to file system (bench/nexmark/q10.js): the rows, written by Flink's FileSink
 * into buckets dt=<day>/hm=<minute> when a directory is given. Without checkpoints the part
 * files stay in progress (FileSink commits them at checkpoints); their content is written.
 */
public class Q10 implements NexmarkQuery<Q10.Row> {
  public record Row(long auction, long bidder, long price, long dateTime, String extra, String dt, String hm) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    DataStream<Row> rows = Streams.bids(events)
        .map(b -> new Row(b.auction, b.bidder, b.price, b.dateTime, b.extra, Common.formatDay(Common.dayOf(b.dateTime)), Common.formatHourMinute(b.dateTime)))
        .returns(Row.class);
    if (options.filesDir() != null) {
      rows.sinkTo(FileSink.forRowFormat(new Path(options.filesDir()), new Csv()).withBucketAssigner(new ByPartition()).build());
    }
    return rows;
  }

  static class Csv implements Encoder<Row> {
    @Override
    public void encode(Row r, OutputStream out) throws IOException {
      out.write((r.auction() + "," + r.bidder() + "," + r.price() + "," + r.dateTime() + "," + r.extra() + "\n").getBytes(StandardCharsets.UTF_8));
    }
  }

  static class ByPartition implements BucketAssigner<Row, String> {
    @Override
    public String getBucketId(Row r, Context ctx) {
      return "dt=" + r.dt() + "/hm=" + r.hm();
    }

    @Override
    public SimpleVersionedSerializer<String> getSerializer() {
      return SimpleVersionedStringSerializer.INSTANCE;
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.auction(), r.bidder(), r.price(), r.dateTime(), r.extra(), r.dt(), r.hm());
  }
}
