package sluice.bench.flink;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q6, average selling price by seller (bench/nexmark/q6.js). */
public class Q6 implements NexmarkQuery<Q6.Row> {
  public record Row(long seller, long average) {}

  public static class Sold {
    public long seller;
    public long auction;
    public long price;
    public long dateTime;

    public Sold() {}
  }

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    return WinningBids.of(events)
        .map(w -> {
          Sold s = new Sold();
          s.seller = w.auction().seller;
          s.auction = w.auction().id;
          s.price = w.bid().price;
          s.dateTime = w.bid().dateTime;
          return s;
        })
        .returns(Sold.class)
        .keyBy(s -> s.seller, Types.LONG)
        .process(new Average())
        .returns(Row.class);
  }

  static class Average extends KeyedProcessFunction<Long, Sold, Row> {
    private transient ListState<Sold> sold;

    @Override
    public void open(OpenContext ctx) {
      sold = getRuntimeContext().getListState(new ListStateDescriptor<>("sold", Sold.class));
    }

    @Override
    public void processElement(Sold s, Context ctx, Collector<Row> out) throws Exception {
      sold.add(s);
      ctx.timerService().registerEventTimeTimer(Common.END_OF_INPUT);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
      List<Sold> all = new ArrayList<>();
      for (Sold s : sold.get()) all.add(s);
      all.sort(Comparator.<Sold>comparingLong(s -> s.dateTime).thenComparingLong(s -> s.auction));
      long sum = 0;
      for (int i = 0; i < all.size(); i++) {
        sum += all.get(i).price;
        if (i > 10) sum -= all.get(i - 11).price;
        out.collect(new Row(ctx.getCurrentKey(), sum / Math.min(i + 1, 11)));
      }
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.seller(), r.average());
  }
}
