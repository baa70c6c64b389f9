package sluice.bench.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q4, average price per category (bench/nexmark/q4.js). */
public class Q4 implements NexmarkQuery<Q4.Row> {
  public record Row(long category, long average) {}

  public static class Total {
    public long sum;
    public long count;

    public Total() {}
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return WinningBids.of(events)
        .keyBy(w -> w.auction().category, Types.LONG)
        .process(new Average())
        .returns(Row.class);
  }

  static class Average extends KeyedProcessFunction<Long, WinningBids.Winner, Row> {
    private transient ValueState<Total> total;

    @Override
    public void open(OpenContext ctx) {
      total = getRuntimeContext().getState(new ValueStateDescriptor<>("total", Total.class));
    }

    @Override
    public void processElement(WinningBids.Winner w, Context ctx, Collector<Row> out) throws Exception {
      Total t = total.value();
      if (t == null) {
        t = new Total();
        ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
      }
      t.sum += w.bid().price;
      t.count++;
      total.update(t);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      Total t = total.value();
      out.collect(new Row(ctx.getCurrentKey(), t.sum / t.count));
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.category(), r.average());
  }
}
