package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q15, bidding statistics report (bench/nexmark/q15.js). */
public class Q15 implements NexmarkQuery<Q15.Row> {
  public record Row(String day, long[] counts) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events).keyBy(b -> Common.dayOf(b.dateTime), Types.LONG).process(new Report()).returns(Row.class);
  }

  static class Report extends KeyedProcessFunction<Long, Bid, Row> {
    private transient BidStatistics stats;

    @Override
    public void open(OpenContext ctx) {
      stats = new BidStatistics(getRuntimeContext());
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Row> out) throws Exception {
      if (stats.add(b)) ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      out.collect(new Row(Common.formatDay(ctx.getCurrentKey()), stats.statistics()));
    }
  }

  @Override
  public String format(Row r) {
    Object[] fields = new Object[13];
    fields[0] = r.day();
    for (int i = 0; i < 12; i++) fields[i + 1] = r.counts()[i];
    return Common.line(fields);
  }
}
