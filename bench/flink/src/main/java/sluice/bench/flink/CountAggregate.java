package sluice.bench.flink;

import org.apache.flink.api.common.functions.AggregateFunction;

/** count(*) of a window. */
public class CountAggregate<T> implements AggregateFunction<T, Long, Long> {
  public Long createAccumulator() {
    return 0L;
  }

  public Long add(T value, Long n) {
    return n + 1;
  }

  public Long getResult(Long n) {
    return n;
  }

  public Long merge(Long a, Long b) {
    return a + b;
  }
}
