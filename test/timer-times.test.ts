import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

/** Timers at times JavaScript makes easy to write: NaN must be refused, huge ones fire at the end of input. */
async function timersAt(at: (ctxTimestamp: number | undefined) => number): Promise<number[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
  const sink = new CollectSink<number>();
  env
    .fromElements('a', 'b', 'a')
    .keyBy((w) => w)
    .process<number>({
      processElement: (_w, ctx) => ctx.timerService().registerEventTimeTimer(at(ctx.timestamp())),
      onTimer: (t, _ctx, out) => out.collect(t),
    })
    .sinkTo(sink);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return sink.values;
}

describe('event-time timer times', () => {
  it('a NaN timer (a record without a timestamp) fails the job naming the cause, instead of hanging it', async () => {
    await expect(timersAt((ts) => (ts as number) + 1000)).rejects.toThrow(/timer's timestamp must be a number of milliseconds, got NaN .*without a timestamp/);
  });

  it.each([Number.MAX_VALUE, Infinity])('a timer at %s fires at the end of input, once per key', async (t) => {
    const fired = await timersAt(() => t);
    expect(fired).toEqual([Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
  });
});
