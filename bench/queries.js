// Benchmark jobs: Nexmark q0, q1, q2, q5, q7, q8 and a keyed word count. Each function
// builds the job on an environment and returns the sink that counts its output.
import {
  SlidingEventTimeWindows,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  valueState,
  listState,
} from '../dist/index.js';
import { DiscardingSink, GeneratorSource, nexmarkSource } from '../dist/connectors/index.js';
import { lineAt } from './jobs/word-lines.js';

const bidsOnly = (e) => e.kind === 'bid';
const watermarks = () => WatermarkStrategy.forBoundedOutOfOrderness(0);

export const queries = {
  'nexmark-q0': { events: 10_000_000, build: (env, events) => sink(env.fromSource(nexmarkSource({ events }), 'nexmark').map((e) => e)) },
  'nexmark-q1': {
    events: 10_000_000,
    build: (env, events) =>
      sink(
        env
          .fromSource(nexmarkSource({ events }), 'nexmark')
          .filter(bidsOnly)
          .map((b) => ({ auction: b.auction, bidder: b.bidder, price: Math.round(b.price * 0.908), dateTime: b.dateTime })),
      ),
  },
  'nexmark-q2': {
    events: 10_000_000,
    build: (env, events) =>
      sink(
        env
          .fromSource(nexmarkSource({ events }), 'nexmark')
          .filter((e) => e.kind === 'bid' && e.auction % 123 === 0)
          .map((b) => ({ auction: b.auction, price: b.price })),
      ),
  },
  'nexmark-q5': {
    events: 4_000_000,
    // `nexmarkConfig`: generator settings (the checkpoint-overhead benchmarks set firstEventRate).
    build: (env, events, nexmarkConfig) => {
      const counts = env
        .fromSource(nexmarkSource({ events, ...(nexmarkConfig === undefined ? {} : { config: nexmarkConfig }) }), 'nexmark')
        .filter(bidsOnly)
        .assignTimestampsAndWatermarks(watermarks())
        // Only the auction id crosses the keyBy (Beam's Query5 projects BID_TO_AUCTION before
        // counting; Flink's SQL plan reads only auction and dateTime); the timestamp travels
        // with the record.
        .map((b) => b.auction)
        .keyBy((auction) => auction)
        .window(SlidingEventTimeWindows.of(10_000, 2_000))
        .aggregate(
          { createAccumulator: () => 0, add: (_auction, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
          { process: (auction, ctx, c, out) => out.collect({ auction, count: c[0], windowEnd: ctx.window.end }) },
        );
      return sink(counts.keyBy((c) => c.windowEnd).process(maxPerWindow((c) => c.count)));
    },
  },
  // Nexmark q5 with keyed state in the on-disk backend (Sluice's is LMDB: docs/state.md; the
  // name is the one BENCH_FORMAT.md gives the on-disk backend's q5).
  'rocksdb-nexmark-q5': {
    events: 4_000_000,
    config: { 'state.backend.type': 'lmdb' },
    build: (env, events) => queries['nexmark-q5'].build(env, events),
  },
  'nexmark-q7': {
    events: 4_000_000,
    build: (env, events) => {
      const maxPerAuction = env
        .fromSource(nexmarkSource({ events }), 'nexmark')
        .filter(bidsOnly)
        .assignTimestampsAndWatermarks(watermarks())
        .keyBy((b) => b.auction)
        .window(TumblingEventTimeWindows.of(10_000))
        .reduce((a, b) => (b.price > a.price ? b : a), {
          process: (_k, ctx, bids, out) => out.collect({ bid: bids[0], windowEnd: ctx.window.end }),
        });
      return sink(maxPerAuction.keyBy((m) => m.windowEnd).process(maxPerWindow((m) => m.bid.price)));
    },
  },
  'nexmark-q8': {
    events: 4_000_000,
    build: (env, events) => {
      const source = env.fromSource(nexmarkSource({ events }), 'nexmark').assignTimestampsAndWatermarks(watermarks());
      const persons = source.filter((e) => e.kind === 'person');
      const auctions = source.filter((e) => e.kind === 'auction');
      return sink(persons.keyBy((p) => p.id).connect(auctions.keyBy((a) => a.seller)).process(windowJoin(10_000)));
    },
  },
  wordcount: {
    events: 4_000_000,
    build: (env, events) => {
      const lines = new GeneratorSource({ count: events, generate: lineAt });
      return sink(
        env
          .fromSource(lines, 'lines')
          .flatMap((line, out) => {
            for (const w of line.split(' ')) out.collect([w, 1]);
          })
          .keyBy((t) => t[0])
          .reduce((a, b) => [a[0], a[1] + b[1]])
          .map((t) => t),
      );
    },
    // events counted are lines; every word updates its (word, count) tuple, as Flink's WordCount
  },
};

function sink(stream) {
  const s = new DiscardingSink();
  stream.sinkTo(s);
  return s;
}

/** Keyed by window end: keeps the record with the largest score and emits it when the window closes. */
function maxPerWindow(score) {
  return {
    open(ctx) {
      this.best = ctx.getState(valueState('best'));
    },
    processElement(r, ctx) {
      const best = this.best.value();
      if (best === undefined) ctx.timerService().registerEventTimeTimer(r.windowEnd - 1);
      if (best === undefined || score(r) > score(best)) this.best.update(r);
    },
    onTimer(_t, _ctx, out) {
      out.collect(this.best.value());
      this.best.clear();
    },
  };
}

/** Persons joined with the auctions they opened in the same tumbling window (Nexmark q8). */
function windowJoin(sizeMs) {
  const windowOf = (t) => t - (t % sizeMs);
  return {
    open(ctx) {
      this.person = ctx.getState(valueState('person'));
      this.auctions = ctx.getState(listState('auctions'));
    },
    processElement1(p, ctx) {
      this.person.update({ id: p.id, name: p.name, window: windowOf(p.dateTime) });
      ctx.timerService().registerEventTimeTimer(windowOf(p.dateTime) + sizeMs - 1);
    },
    processElement2(a, ctx, out) {
      const p = this.person.value();
      const w = windowOf(a.dateTime);
      if (p !== undefined && p.window === w) out.collect({ id: p.id, name: p.name, reserve: a.reserve });
      else {
        this.auctions.add({ reserve: a.reserve, window: w });
        ctx.timerService().registerEventTimeTimer(w + sizeMs - 1);
      }
    },
    onTimer(t, _ctx, out) {
      const p = this.person.value();
      if (p !== undefined && p.window + sizeMs - 1 === t) {
        for (const a of this.auctions.get()) if (a.window === p.window) out.collect({ id: p.id, name: p.name, reserve: a.reserve });
        this.person.clear();
      }
      const left = this.auctions.get().filter((a) => a.window + sizeMs - 1 > t);
      this.auctions.update(left);
    },
  };
}
