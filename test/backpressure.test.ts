import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { GeneratorSource } from '../src/connectors/generator/generator-source.js';
import type { Sink } from '../src/api/sink.js';

/** A sink that takes 1 ms for every 100 records, and measures records in flight. */
function slowSink(emitted: () => number, stats: { received: number; maxInFlight: number }): Sink<number> {
  return {
    createWriter: () => ({
      write: () => {
        stats.received++;
        const inFlight = emitted() - stats.received;
        if (inFlight > stats.maxInFlight) stats.maxInFlight = inFlight;
        if (stats.received % 100 === 0) return new Promise<void>((r) => setTimeout(r, 1));
      },
    }),
  };
}

describe('backpressure', () => {
  it.each([
    ['forward (separate subtasks)', 1, false],
    ['keyBy shuffle at parallelism 2', 2, true],
  ])('a slow sink bounds the records in flight: %s', async (_name, parallelism, keyed) => {
    const total = 200_000;
    let emitted = 0;
    const stats = { received: 0, maxInFlight: 0 };
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': parallelism,
      'pipeline.operator-chaining.enabled': false,
      'execution.buffer-batch-size': 64,
    });
    const numbers = env.fromSource(
      new GeneratorSource<number>({
        count: total,
        generate: (i) => {
          emitted++;
          return i;
        },
      }),
      'numbers',
    );
    const mapped = numbers.map((n) => n + 1);
    (keyed ? mapped.keyBy((n) => n % 1000).process<number>({ processElement: (v, _c, out) => out.collect(v) }) : mapped).sinkTo(
      slowSink(() => emitted, stats),
    );
    const heapBefore = process.memoryUsage().heapUsed;
    await env.execute();
    expect(stats.received).toBe(total);
    // At most (2 + ceil(8 / channels of the gate)) buffers of 64 records per channel, plus a
    // partly filled buffer per channel: under 100 buffers in all. Without backpressure the
    // source would run 100k+ records ahead of the sink.
    expect(stats.maxInFlight).toBeLessThan(100 * 64);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});
