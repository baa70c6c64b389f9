// A Nexmark query as a whole job: events from a source, timestamps and watermarks, the query
// (index.js), a sink.
import { StreamExecutionEnvironment, WatermarkStrategy } from 'sluice';
import { GeneratorSource, nexmarkSource } from 'sluice/connectors';

/**
 * The watermark strategy of every query, on both sides (bench/flink does the same): event time
 * from dateTime, watermarks right behind the largest timestamp seen (the events are in time
 * order within each split), emitted per split by the source.
 */
export const nexmarkWatermarks = () => WatermarkStrategy.forBoundedOutOfOrderness(0).withTimestampAssigner((e) => e.dateTime);

/**
 * Events preloaded into memory (events-file.js readEventsFile), read by parallel subtasks as
 * Flink's side reads them (bench/flink): subtask i of n reads events i, i + n, i + 2n, ...
 */
export const preloadedSource = (events) => new GeneratorSource({ count: events.length, generate: (i) => events[i] });

/** Sluice's Nexmark generator: `events` events, generated as they are read. */
export const generatedSource = (events, config) => nexmarkSource({ events, ...(config === undefined ? {} : { config }) });

/** Builds `query` on `env` reading `source`, into `sink`; `options` go to the query (q13's sideInput). */
export function buildNexmarkJob(env, query, source, sink, options = {}) {
  const events = env.fromSource(source, nexmarkWatermarks(), 'nexmark');
  query.build(events, options).sinkTo(sink);
  return sink;
}

/** A sink that keeps the formatted line of every record (in-process jobs only). */
export class LinesSink {
  constructor(format) {
    this.format = format;
    this.lines = [];
  }
  createWriter() {
    return {
      write: (r) => {
        this.lines.push(this.format(r));
      },
    };
  }
}

/** Runs `query` in this process on preloaded events; its output lines, in arrival order. */
export async function runToLines(query, events, parallelism, options = {}) {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
  const sink = buildNexmarkJob(env, query, preloadedSource(events), new LinesSink(query.format), options);
  await env.execute(`nexmark-${query.name}`);
  return sink.lines;
}
