import type { Sink, SinkWriter } from '../api/sink.js';

/** Drops every record, counting them (benchmarks, Flink's DiscardingSink). */
export class DiscardingSink<T> implements Sink<T> {
  count = 0;
  createWriter(): SinkWriter<T> {
    return {
      write: () => {
        this.count++;
      },
    };
  }
}
