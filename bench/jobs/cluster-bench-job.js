// Jobs of the cluster benchmarks (bench/cluster-benchmarks.js), submitted to a JobManager as
// a bundled module: args <query> <events> [output file].
//   tcp-nexmark-q0   Nexmark events, keyBy(auction or person) shuffle, map, discard
//   tcp-nexmark-q5   Nexmark q5 (sliding 10 s / 2 s hot items), as bench/queries.js: bids
//                    projected to their auction id before the keyBy, as in Beam's Query5
//   tcp-wordcount    lines -> (word, 1) tuples -> keyBy(word) -> rolling sum per word (a state
//                    read and write per word; Flink's WordCount), discard the (word, count) tuples
//   recovery         numbers at 5,000/s -> keyBy -> sink appending "<attempt> <time>" lines to a file
import { appendFileSync } from 'node:fs';
import { defineJob, SlidingEventTimeWindows, WatermarkStrategy } from 'sluice';
import { DiscardingSink, GeneratorSource, nexmarkSource, numberSource } from 'sluice/connectors';
import { lineAt } from './word-lines.js';

const keyOf = (e) => (e.kind === 'bid' ? e.auction : e.kind === 'auction' ? e.id : e.id);

class TimestampSink {
  constructor(file) {
    this.file = file;
  }
  createWriter(ctx) {
    const file = this.file;
    return {
      write() {
        appendFileSync(file, `${ctx.attemptNumber} ${Date.now()}\n`);
      },
    };
  }
}

export default defineJob((env, args) => {
  const [query, eventsText, file] = args;
  const events = Number(eventsText);
  switch (query) {
    case 'tcp-nexmark-q0':
      env
        .fromSource(nexmarkSource({ events }), "nexmark")
        .keyBy(keyOf)
        .process({ processElement: (e, _ctx, out) => out.collect(e) })
        .sinkTo(new DiscardingSink());
      return;
    case 'tcp-nexmark-q5': {
      env
        .fromSource(nexmarkSource({ events }), 'nexmark')
        .filter((e) => e.kind === 'bid')
        .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness(0))
        .map((b) => b.auction)
        .keyBy((a) => a)
        .window(SlidingEventTimeWindows.of(10_000, 2_000))
        .aggregate(
          { createAccumulator: () => 0, add: (_a, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
          { process: (auction, ctx, c, out) => out.collect({ auction, count: c[0], windowEnd: ctx.window.end }) },
        )
        .keyBy((c) => c.windowEnd)
        .reduce((a, b) => (b.count > a.count ? b : a))
        .sinkTo(new DiscardingSink());
      return;
    }
    case 'tcp-wordcount': {
      const lines = new GeneratorSource({ count: events, generate: lineAt });
      env
        .fromSource(lines, 'lines')
        .flatMap((line, out) => {
          for (const w of line.split(' ')) out.collect([w, 1]);
        })
        .keyBy((t) => t[0])
        .reduce((a, b) => [a[0], a[1] + b[1]])
        .sinkTo(new DiscardingSink());
      return;
    }
    case 'recovery':
      env
        .fromSource(numberSource({ count: events, eventsPerSecond: 5_000 }), 'numbers')
        .uid('numbers')
        .keyBy((n) => n % 16)
        .process({ processElement: (n, _ctx, out) => out.collect(n) })
        .uid('forward')
        .sinkTo(new TimestampSink(file))
        .uid('sink');
      return;
    default:
      throw new Error(`unknown query ${query}`);
  }
});
