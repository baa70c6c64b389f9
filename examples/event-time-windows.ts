/**
 * Event-time windows: sensor readings that arrive out of order, counted per sensor in
 * tumbling 10-second windows of event time, with allowed lateness and late data sent to a
 * side output instead of being dropped.
 *
 *   npx sluice run examples/event-time-windows.ts [readings]     (default 400 readings)
 *   npx sluice run -p 2 examples/event-time-windows.ts 2000
 *
 * Reading i is taken at about 00:00:05 + i * 250 ms (1 January 2024, UTC) and arrives up to
 * 800 ms out of order; every 23rd reading arrives 6 seconds late. Watermarks trail the
 * largest timestamp seen by 1 second (bounded out-of-orderness), so the ordinary disorder is
 * absorbed. A straggler whose window has not fired yet simply joins it; one whose window
 * fired less than 2 seconds (the allowed lateness) ago fires that window again with the
 * updated result; one that is later still goes to the side output.
 *
 * Output lines:
 *   sensor-1 00:00:10-00:00:20 count=13 min=3 max=96     a window result
 *   late sensor-2 00:00:14.500 value=35                  a reading too late for its window
 */
import {
  BoundedOutOfOrdernessWatermarks,
  defineJob,
  OutputTag,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type AggregateFunction,
  type ProcessWindowFunction,
  type WatermarkGenerator,
} from 'sluice';
import { GeneratorSource, PrintSink } from 'sluice/connectors';

interface Reading {
  sensor: string;
  value: number;
  /** Event time, epoch milliseconds. */
  ts: number;
}

const START = Date.UTC(2024, 0, 1);
const OUT_OF_ORDERNESS_MS = 1000;
const WINDOW_MS = 10_000;
const ALLOWED_LATENESS_MS = 2000;

/** Reading i: a pure function of i, so the source can replay it after a failure. */
function reading(i: number): Reading {
  let ts = START + 5000 + i * 250 - ((i * 7919) % 800);
  if (i % 23 === 22) ts -= 6000;
  return { sensor: `sensor-${i % 3}`, value: (i * 37) % 100, ts };
}

interface Stats {
  count: number;
  min: number;
  max: number;
}

const stats: AggregateFunction<Reading, Stats, Stats> = {
  createAccumulator: () => ({ count: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY }),
  add: (r, acc) => ({ count: acc.count + 1, min: Math.min(acc.min, r.value), max: Math.max(acc.max, r.value) }),
  getResult: (acc) => acc,
  merge: (a, b) => ({ count: a.count + b.count, min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) }),
};

const time = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const timeMs = (ms: number): string => new Date(ms).toISOString().slice(11, 23);

/** Names the window's sensor and time range next to the pre-aggregated result. */
const describe: ProcessWindowFunction<Stats, string, string> = {
  process(sensor, ctx, [s], out) {
    out.collect(`${sensor} ${time(ctx.window.start)}-${time(ctx.window.end)} count=${s!.count} min=${s!.min} max=${s!.max}`);
  },
};

/**
 * Bounded out-of-orderness, but the watermark is emitted after every reading instead of
 * every `pipeline.auto-watermark-interval` (200 ms of wall-clock time). That makes what is
 * late a function of the data alone, so every run prints the same lines.
 */
function perReadingWatermarks(): WatermarkStrategy<Reading> {
  return WatermarkStrategy.forGenerator<Reading>(() => {
    const inner: WatermarkGenerator<Reading> = new BoundedOutOfOrdernessWatermarks<Reading>(OUT_OF_ORDERNESS_MS);
    return {
      onEvent(r, ts, output) {
        inner.onEvent(r, ts, output);
        inner.onPeriodicEmit(output);
      },
      onPeriodicEmit() {},
    };
  }).withTimestampAssigner((r) => r.ts);
}

export default defineJob((env, args) => {
  const count = Number(args[0] ?? 400);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`usage: sluice run examples/event-time-windows.ts [readings]: readings must be a positive integer, got '${args[0]}'`);
  const lateReadings = new OutputTag<Reading>('late-readings');

  const windows = env
    // Timestamps and watermarks made in the source (Flink's fromSource(source, strategy, name)).
    .fromSource(new GeneratorSource<Reading>({ generate: reading, count }), perReadingWatermarks(), 'sensor readings')
    .setParallelism(1) // one watermark generator sees the readings in order: same output every run
    .keyBy((r) => r.sensor)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .allowedLateness(ALLOWED_LATENESS_MS)
    .sideOutputLateData(lateReadings)
    .aggregate(stats, describe)
    .name('stats per sensor and window')
    .uid('stats-per-sensor');

  windows.sinkTo(new PrintSink<string>(), 'print windows').setParallelism(1);
  windows
    .getSideOutput(lateReadings)
    .map((r) => `late ${r.sensor} ${timeMs(r.ts)} value=${r.value}`)
    .sinkTo(new PrintSink<string>(), 'print late readings')
    .setParallelism(1);
});
