package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q17, auction statistics report (bench/nexmark/q17.js). */
public class Q17 implements NexmarkQuery<Q17.Row> {
  public record Row(long auction, String day, long[] bids, long min, long max, long avg, long sum) {}

  public static class Stats {
    public long auction;
    public long day;
    public long[] bids = new long[4];
    public long min;
    public long max;
    public long sum;

    public Stats() {}
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return Streams.bids(events)
        .keyBy(b -> b.auction + "|" + Common.dayOf(b.dateTime), Types.STRING)
        .process(new Report())
        .returns(Row.class);
  }

  static class Report extends KeyedProcessFunction<String, Bid, Row> {
    private transient ValueState<Stats> stats;

    @Override
    public void open(OpenContext ctx) {
      stats = getRuntimeContext().getState(new ValueStateDescriptor<>("stats", Stats.class));
    }

    @Override
    public void processElement(Bid b, Context ctx, Collector<Row> out) throws Exception {
      Stats s = stats.value();
      if (s == null) {
        s = new Stats();
        s.auction = b.auction;
        s.day = Common.dayOf(b.dateTime);
        s.min = b.price;
        s.max = b.price;
        ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
      }
      s.bids[0]++;
      s.bids[Common.priceRank(b.price)]++;
      if (b.price < s.min) s.min = b.price;
      if (b.price > s.max) s.max = b.price;
      s.sum += b.price;
      stats.update(s);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      Stats s = stats.value();
      out.collect(new Row(s.auction, Common.formatDay(s.day), s.bids, s.min, s.max, s.sum / s.bids[0], s.sum));
    }
  }

  @Override
  public String format(Row r) {
    long[] b = r.bids();
    return Common.line(r.auction(), r.day(), b[0], b[1], b[2], b[3], r.min(), r.max(), r.avg(), r.sum());
  }
}
