package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q16, channel statistics report (bench/nexmark/q16.js). */
public class Q16 implements NexmarkQuery<Q16.Row> {
  public record Row(String channel, String day, String minute, long[] counts) {}

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .keyBy(b -> b.channel + "|" + Common.dayOf(b.dateTime), Types.STRING)
        .process(new Report())
        .returns(Row.class);
  }

  static class Report extends KeyedProcessFunction<String, Bid, Row> {
    private transient BidStatistics stats;
    private transient ValueState<Bid> last;

    @Override
    public void open(OpenContext ctx) {
      stats = new BidStatistics(getRuntimeContext());
      last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Bid.class));
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Row> out) throws Exception {
      if (stats.add(b)) ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
      Bid l = last.value();
      if (l == null || b.dateTime > l.dateTime) last.update(b);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      Bid l = last.value();
      out.collect(new Row(l.channel, Common.formatDay(Common.dayOf(l.dateTime)), Common.formatHourMinute(l.dateTime), stats.statistics()));
    }
  }

  @Override
  public String format(Row r) {
    Object[] fields = new Object[15];
    fields[0] = r.channel();
    fields[1] = r.day();
    fields[2] = r.minute();
    for (int i = 0; i < 12; i++) fields[i + 3] = r.counts()[i];
    return Common.line(fields);
  }
}
