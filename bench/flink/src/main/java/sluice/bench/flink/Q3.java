package sluice.bench.flink;

import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/** Nexmark q3, local item suggestion (bench/nexmark/q3.js): a regular join of persons and auctions. */
public class Q3 implements NexmarkQuery<Q3.Row> {
  public record Row(String name, String city, String state, long id) {}

  private static final Set<String> STATES = Set.of("OR", "ID", "CA");

  @Override
  public DataStream<Row> build(DataStream<Event> events, Options options) {
    DataStream<Person> persons = Streams.persons(events).filter(p -> STATES.contains(p.state));
    DataStream<Auction> auctions = Streams.auctions(events).filter(a -> a.category == 10);
    return persons
        .keyBy(p -> p.id, Types.LONG)
        .connect(auctions.keyBy(a -> a.seller, Types.LONG))
        .process(new Join())
        .returns(Row.class);
  }

  static class Join extends KeyedCoProcessFunction<Long, Person, Auction, Row> {
    private transient ValueState<Person> person;
    private transient ListState<Long> waiting;

    @Override
    public void open(OpenContext ctx) {
      person = getRuntimeContext().getState(new ValueStateDescriptor<>("person", Person.class));
      waiting = getRuntimeContext().getListState(new ListStateDescriptor<>("auctions-waiting", Long.class));
    }

    @Override
    public void processElement1(Person p, Context ctx, Collector<Row> out) throws Exception {
      person.update(p);
      for (Long id : waiting.get()) out.collect(new Row(p.name, p.city, p.state, id));
      waiting.clear();
    }

    @Override
    public void processElement2(Auction a, Context ctx, Collector<Row> out) throws Exception {
      Person p = person.value();
      if (p == null) waiting.add(a.id);
      else out.collect(new Row(p.name, p.city, p.state, a.id));
    }
  }

  @Override
  public String format(Row r) {
    return Common.line(r.name(), r.city(), r.state(), r.id());
  }
}
