import { PacedSource } from './support/paced-source.js';
import { describe, expect, it } from 'vitest';
import {
  EventTimeSessionWindows,
  OutputTag,
  ProcessingTimeSessionWindows,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  valueState,
  WatermarkStrategy,
  type AggregateFunction,
  type ProcessWindowFunction,
  type ValueState,
  type WatermarkGenerator,
  type WindowAssigner,
  type TimeWindowAssigner,
  type WindowContext,
  type Collector,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { WindowOperator } from '../src/runtime/operators/window-operator.js';

// ---------------------------------------------------------------------------------------
// helpers

type Ev = { id: number; k: string; v: number; ts: number };

function canon(x: unknown): string {
  return JSON.stringify(x);
}
function sorted<T>(xs: readonly T[]): T[] {
  return [...xs].sort((a, b) => {
    const x = canon(a);
    const y = canon(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
function expectSameMultiset<T>(actual: readonly T[], expected: readonly T[]): void {
  expect(actual.length).toBe(expected.length);
  expect(sorted(actual)).toEqual(sorted(expected));
}
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Events for `keys` keys whose timestamps advance by 0..maxStep with an occasional jump
 * (so sessions end), delivered out of order by a random local shuffle. Also returns the
 * largest lateness in arrival order, so a bound > that keeps every event on time.
 */
function makeEvents(seed: number, n: number, keys: number, maxStep: number, jumpEvery: number, jump: number, startTs = 1000): { events: Ev[]; maxLag: number } {
  const rnd = mulberry32(seed);
  const inOrder: Ev[] = [];
  let ts = startTs;
  for (let i = 0; i < n; i++) {
    ts += Math.floor(rnd() * (maxStep + 1));
    if (jumpEvery > 0 && rnd() < 1 / jumpEvery) ts += jump;
    inOrder.push({ id: i, k: `k${Math.floor(rnd() * keys)}`, v: Math.floor(rnd() * 100) - 20, ts });
  }
  // local shuffle: sort by position + noise
  const noisy = inOrder.map((e, i) => ({ e, p: i + rnd() * 12 }));
  noisy.sort((a, b) => a.p - b.p);
  const events = noisy.map((x) => x.e);
  let maxTs = Number.NEGATIVE_INFINITY;
  let maxLag = 0;
  for (const e of events) {
    maxTs = Math.max(maxTs, e.ts);
    maxLag = Math.max(maxLag, maxTs - e.ts);
  }
  return { events, maxLag };
}

/** Watermarks right behind each event: ts - bound - 1 (deterministic, no periodic emission). */
function punctuated<T>(boundMs: number): () => WatermarkGenerator<T> {
  return () => ({
    onEvent(_e, ts, out) {
      out.emitWatermark(ts - boundMs - 1);
    },
    onPeriodicEmit() {},
  });
}

function strategy(boundMs: number): WatermarkStrategy<Ev> {
  return WatermarkStrategy.forGenerator(punctuated<Ev>(boundMs)).withTimestampAssigner((e) => e.ts);
}

// ---------------------------------------------------------------------------------------
// The reference: windows computed with plain loops over the input in arrival order, with
// the watermark of a single punctuated generator (max over events so far of ts - bound - 1).

type Spec = { kind: 'sliding'; size: number; slide: number; offset: number } | { kind: 'session'; gap: number | ((e: Ev) => number) };

interface Firing {
  k: string;
  start: number;
  end: number;
  elems: Ev[];
}

/** Starts of the windows of [start, start+size) with start ≡ offset (mod slide) that contain ts. */
function slidingStarts(ts: number, size: number, slide: number, offset: number): number[] {
  const starts: number[] = [];
  // smallest k with k*slide + offset > ts - size, largest with k*slide + offset <= ts
  const lo = Math.floor((ts - size - offset) / slide) + 1;
  const hi = Math.floor((ts - offset) / slide);
  for (let k = lo; k <= hi; k++) starts.push(k * slide + offset);
  return starts;
}

function simulate(events: readonly Ev[], spec: Spec, boundMs: number, latenessMs: number): { firings: Firing[]; late: Ev[] } {
  const firings: Firing[] = [];
  const late: Ev[] = [];
  // alive windows per key
  const alive = new Map<string, { start: number; end: number; elems: Ev[]; fired: boolean }[]>();
  let wm = Number.NEGATIVE_INFINITY;
  const fire = (k: string, w: { start: number; end: number; elems: Ev[] }): void => {
    firings.push({ k, start: w.start, end: w.end, elems: [...w.elems] });
  };
  const advance = (to: number): void => {
    if (to <= wm) return;
    for (const [k, ws] of alive) {
      for (const w of [...ws]) {
        if (w.end - 1 <= to && !w.fired) {
          fire(k, w);
          w.fired = true;
        }
        if (w.end - 1 + latenessMs <= to) ws.splice(ws.indexOf(w), 1);
      }
    }
    wm = to;
  };
  for (const e of events) {
    const ws = alive.get(e.k) ?? [];
    alive.set(e.k, ws);
    if (spec.kind === 'sliding') {
      const starts = slidingStarts(e.ts, spec.size, spec.slide, spec.offset);
      let assigned = false;
      for (const start of starts) {
        const end = start + spec.size;
        if (end - 1 + latenessMs <= wm) continue;
        assigned = true;
        let w = ws.find((x) => x.start === start);
        if (w === undefined) {
          w = { start, end, elems: [], fired: false };
          ws.push(w);
        }
        w.elems.push(e);
        if (end - 1 <= wm) {
          fire(e.k, w);
          w.fired = true;
        }
      }
      if (!assigned && starts.length > 0) late.push(e);
    } else {
      let start = e.ts;
      let end = e.ts + (typeof spec.gap === 'function' ? spec.gap(e) : spec.gap);
      const merged = ws.filter((w) => w.start <= end && w.end >= start);
      for (const w of merged) {
        start = Math.min(start, w.start);
        end = Math.max(end, w.end);
      }
      if (end - 1 + latenessMs <= wm) {
        late.push(e);
        continue;
      }
      const elems = merged.flatMap((w) => w.elems);
      for (const w of merged) ws.splice(ws.indexOf(w), 1);
      const w = { start, end, elems: [...elems, e], fired: false };
      ws.push(w);
      if (end - 1 <= wm) {
        fire(e.k, w);
        w.fired = true;
      }
    }
    advance(Math.max(wm, e.ts - boundMs - 1));
  }
  advance(Number.POSITIVE_INFINITY);
  return { firings, late };
}

// ---------------------------------------------------------------------------------------
// The window functions under test and what they must produce from a firing.

type Fn = 'reduce' | 'aggregate' | 'process' | 'aggregate+process' | 'reduce+process' | 'sum' | 'sum+process';
/** `sum`: an aggregate with a number accumulator and merge(), which sliding windows slice (window-slicing.ts). */
const FNS: Fn[] = ['reduce', 'aggregate', 'process', 'aggregate+process', 'reduce+process', 'sum', 'sum+process'];

type Acc = { n: number; sum: number; minId: number; maxTs: number };
const accFn: AggregateFunction<Ev, Acc, Acc> = {
  createAccumulator: () => ({ n: 0, sum: 0, minId: Number.MAX_SAFE_INTEGER, maxTs: Number.MIN_SAFE_INTEGER }),
  add: (e, a) => ({ n: a.n + 1, sum: a.sum + e.v, minId: Math.min(a.minId, e.id), maxTs: Math.max(a.maxTs, e.ts) }),
  getResult: (a) => a,
  merge: (a, b) => ({ n: a.n + b.n, sum: a.sum + b.sum, minId: Math.min(a.minId, b.minId), maxTs: Math.max(a.maxTs, b.maxTs) }),
};
/** A number accumulator: sum * 1000 + count (the values are small), so both are checked. */
const sumFn: AggregateFunction<Ev, number, number> = {
  createAccumulator: () => 0,
  add: (e, a) => a + e.v * 1000 + 1,
  getResult: (a) => a,
  merge: (a, b) => a + b,
};
const reduceFn = (a: Ev, b: Ev): Ev => ({ id: Math.min(a.id, b.id), k: a.k, v: a.v + b.v, ts: Math.max(a.ts, b.ts) });

type Row = unknown[];

function expectedRow(fn: Fn, f: Firing): Row {
  const n = f.elems.length;
  const sum = f.elems.reduce((s, e) => s + e.v, 0);
  const minId = Math.min(...f.elems.map((e) => e.id));
  const maxTs = Math.max(...f.elems.map((e) => e.ts));
  switch (fn) {
    case 'reduce':
      return ['reduce', f.k, sum, minId, maxTs, f.end - 1];
    case 'aggregate':
      return ['aggregate', n, sum, minId, maxTs, f.end - 1];
    case 'process':
      return ['process', f.k, f.start, f.end, f.elems.map((e) => e.id).sort((a, b) => a - b), f.end - 1];
    case 'aggregate+process':
      return ['aggregate+process', f.k, f.start, f.end, n, sum, minId, maxTs, f.end - 1];
    case 'reduce+process':
      return ['reduce+process', f.k, f.start, f.end, sum, minId, maxTs, f.end - 1];
    case 'sum':
      return ['sum', sum * 1000 + n, f.end - 1];
    case 'sum+process':
      return ['sum+process', f.k, f.start, f.end, sum * 1000 + n, f.end - 1];
  }
}

interface WindowJob {
  assigner: TimeWindowAssigner;
  fn: Fn;
  parallelism: number;
  events: readonly Ev[];
  boundMs: number;
  /** Parallelism of the timestamp/watermark assigner; default: the job's (several watermark channels). */
  assignerParallelism?: number;
  latenessMs?: number;
  lateTag?: OutputTag<Ev>;
}

/** Runs the windowed job; returns rows [..., sink timestamp], late side output, dropped count. */
async function runWindowJob(job: WindowJob): Promise<{ rows: Row[]; late: Ev[]; lateTimestamps: (number | undefined)[]; dropped: number; sliced: boolean }> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': job.parallelism, 'pipeline.auto-watermark-interval': 0 });
  const sink = new CollectSink<Row>();
  const lateSink = new CollectSink<Ev>();
  let timed = env.fromElements(...job.events).assignTimestampsAndWatermarks(strategy(job.boundMs));
  if (job.assignerParallelism !== undefined) timed = timed.setParallelism(job.assignerParallelism);
  let windowed = timed.keyBy((e) => e.k).window(job.assigner);
  if (job.latenessMs !== undefined) windowed = windowed.allowedLateness(job.latenessMs);
  if (job.lateTag !== undefined) windowed = windowed.sideOutputLateData(job.lateTag);
  const pwf = <IN>(row: (key: string, start: number, end: number, e: IN) => Row): ProcessWindowFunction<IN, Row, string> => ({
    process(key, ctx, elements, out) {
      expect(elements.length).toBe(1);
      expect(ctx.currentWatermark()).toBeGreaterThanOrEqual(ctx.window.end - 1);
      out.collect(row(key, ctx.window.start, ctx.window.end, elements[0]!));
    },
  });
  let result;
  /** The window operator's own output: late records are its side output. */
  let windowOut: { getSideOutput<X>(tag: OutputTag<X>): { sinkTo(s: CollectSink<X>): unknown } } | undefined;
  switch (job.fn) {
    case 'reduce': {
      const w = windowed.reduce(reduceFn);
      windowOut = w;
      result = w.map((e): Row => ['reduce', e.k, e.v, e.id, e.ts]);
      break;
    }
    case 'aggregate': {
      const w = windowed.aggregate(accFn);
      windowOut = w;
      result = w.map((a): Row => ['aggregate', a.n, a.sum, a.minId, a.maxTs]);
      break;
    }
    case 'process':
      result = windowed.process<Row>({
        process(key, ctx, elements, out) {
          expect(elements.every((e) => e.k === key)).toBe(true);
          out.collect(['process', key, ctx.window.start, ctx.window.end, elements.map((e) => e.id).sort((a, b) => a - b)]);
        },
      });
      break;
    case 'aggregate+process':
      result = windowed.aggregate(
        accFn,
        pwf<Acc>((key, start, end, a) => ['aggregate+process', key, start, end, a.n, a.sum, a.minId, a.maxTs]),
      );
      break;
    case 'reduce+process':
      result = windowed.reduce(
        reduceFn,
        pwf<Ev>((key, start, end, e) => ['reduce+process', key, start, end, e.v, e.id, e.ts]),
      );
      break;
    case 'sum': {
      const w = windowed.aggregate(sumFn);
      windowOut = w;
      result = w.map((n): Row => ['sum', n]);
      break;
    }
    case 'sum+process':
      result = windowed.aggregate(
        sumFn,
        pwf<number>((key, start, end, n) => ['sum+process', key, start, end, n]),
      );
      break;
  }
  result.sinkTo(sink);
  if (job.lateTag !== undefined) (windowOut ?? result).getSideOutput(job.lateTag).sinkTo(lateSink);
  const executor = new LocalExecutor(env.getJobGraph(), env.config);
  await executor.run();
  let dropped = 0;
  let sliced = false;
  for (const t of executor.streamTasks) {
    for (const c of t.chain.operators) {
      if (!(c.operator instanceof WindowOperator)) continue;
      dropped += c.operator.numLateRecordsDropped;
      if (c.operator.sliced) sliced = true;
    }
  }
  return { rows: sink.values.map((r, i) => [...r, sink.timestamps[i]]), late: lateSink.values, lateTimestamps: lateSink.timestamps, dropped, sliced };
}

function specOf(a: TimeWindowAssigner): Spec {
  if (a.kind === 'sliding') return { kind: 'sliding', size: a.sizeMs, slide: a.slideMs, offset: a.offsetMs };
  const gapOf = a.gapOf;
  return { kind: 'session', gap: gapOf === undefined ? a.gapMs : (e) => gapOf(e) };
}

function describeAssigner(a: TimeWindowAssigner): string {
  if (a.kind === 'session') return a.gapOf === undefined ? `session(gap ${a.gapMs})` : 'session(dynamic gap)';
  if (a.sizeMs === a.slideMs) return `tumbling(${a.sizeMs}${a.offsetMs ? `, offset ${a.offsetMs}` : ''})`;
  return `sliding(${a.sizeMs}, ${a.slideMs}${a.offsetMs ? `, offset ${a.offsetMs}` : ''})`;
}

// ---------------------------------------------------------------------------------------

describe('the reference itself', () => {
  it('slidingStarts matches a brute-force scan', () => {
    for (const [size, slide, offset] of [
      [100, 100, 0],
      [100, 30, 0],
      [25, 10, 3],
      [5, 10, 0],
      [30, 20, -7],
    ] as const) {
      for (let ts = -250; ts < 250; ts++) {
        const brute: number[] = [];
        for (let s = -1000; s <= 1000; s++) if ((((s - offset) % slide) + slide) % slide === 0 && s <= ts && ts < s + size) brute.push(s);
        expect(slidingStarts(ts, size, slide, offset)).toEqual(brute);
      }
    }
  });
});

describe('event-time windows against the reference (on-time input, several watermark channels)', () => {
  const assigners: TimeWindowAssigner[] = [
    TumblingEventTimeWindows.of(100),
    TumblingEventTimeWindows.of(100, 30),
    SlidingEventTimeWindows.of(100, 50),
    SlidingEventTimeWindows.of(90, 30, 7), // sliced with an offset
    SlidingEventTimeWindows.of(100, 30), // size not a multiple of the slide
    SlidingEventTimeWindows.of(25, 10, 3),
    EventTimeSessionWindows.withGap(40),
    // Flink's DynamicEventTimeSessionWindows: a gap of 20, 40 or 60 ms by record.
    EventTimeSessionWindows.withDynamicGap((e: Ev) => 20 + (e.id % 3) * 20),
  ];
  const { events, maxLag } = makeEvents(7, 700, 6, 6, 40, 150);
  const bound = maxLag + 1;

  for (const assigner of assigners) {
    const ref = simulate(events, specOf(assigner), bound, 0);
    it(`${describeAssigner(assigner)}: the reference has no late events and several windows`, () => {
      expect(ref.late).toEqual([]);
      expect(ref.firings.length).toBeGreaterThan(20);
    });
    for (const parallelism of [1, 2, 3, 4]) {
      it(`${describeAssigner(assigner)} at parallelism ${parallelism}: every window function`, async () => {
        for (const fn of FNS) {
          const { rows, dropped, sliced } = await runWindowJob({ assigner, fn, parallelism, events, boundMs: bound });
          expect(sliced).toBe(fn.startsWith('sum') && assigner.kind === 'sliding' && assigner.sizeMs > assigner.slideMs && assigner.sizeMs % assigner.slideMs === 0);
          expectSameMultiset(
            rows,
            ref.firings.map((f) => expectedRow(fn, f)),
          );
          expect(dropped).toBe(0);
        }
      });
    }
  }

  it('negative timestamps and offsets', async () => {
    const { events: evs, maxLag } = makeEvents(11, 300, 3, 5, 0, 0, -800);
    for (const assigner of [TumblingEventTimeWindows.of(60, -20), SlidingEventTimeWindows.of(60, 25, 10), EventTimeSessionWindows.withGap(8)]) {
      const ref = simulate(evs, specOf(assigner), maxLag + 1, 0);
      expect(ref.late).toEqual([]);
      const { rows } = await runWindowJob({ assigner, fn: 'process', parallelism: 3, events: evs, boundMs: maxLag + 1 });
      expectSameMultiset(
        rows,
        ref.firings.map((f) => expectedRow('process', f)),
      );
    }
  });
});

describe('watermarks from several inputs', () => {
  it('the window operator uses the minimum watermark of its input channels: a slow stream is not late', async () => {
    // fast: timestamps far ahead; slow: timestamps far behind. Each is on time for its own
    // watermark; only the minimum over both channels keeps the slow one on time.
    const fast: Ev[] = range(300).map((i) => ({ id: i, k: `k${i % 3}`, v: 1, ts: 100_000 + i * 10 }));
    const slow: Ev[] = range(300).map((i) => ({ id: 1000 + i, k: `k${i % 3}`, v: 1, ts: i * 10 }));
    for (const parallelism of [1, 2, 4]) {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism, 'pipeline.auto-watermark-interval': 0 });
      const sink = new CollectSink<Row>();
      const a = env.fromElements(...fast).assignTimestampsAndWatermarks(strategy(0)).setParallelism(1);
      const b = env.fromElements(...slow).assignTimestampsAndWatermarks(strategy(0)).setParallelism(1);
      a.union(b)
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(500))
        .process<Row>({
          process(key, ctx, elements, out) {
            out.collect([key, ctx.window.start, elements.length]);
          },
        })
        .sinkTo(sink);
      await env.execute();
      const expected = new Map<string, number>();
      for (const e of [...fast, ...slow]) {
        const id = canon([e.k, Math.floor(e.ts / 500) * 500]);
        expected.set(id, (expected.get(id) ?? 0) + 1);
      }
      expectSameMultiset(
        sink.values,
        [...expected].map(([id, n]) => [...(JSON.parse(id) as [string, number]), n]),
      );
    }
  });

  it('a finished input no longer holds the watermark back', async () => {
    // one input ends at once (its final watermark must not count as "max" while the other
    // is still running, and must not hold the other back once finished)
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<Row>();
    const shortOne = env.fromElements<Ev>({ id: 0, k: 'a', v: 1, ts: 5 }).assignTimestampsAndWatermarks(strategy(0)).setParallelism(1);
    const longOne = env
      .fromElements(...range(500).map((i): Ev => ({ id: i + 1, k: `k${i % 4}`, v: 1, ts: i * 2 })))
      .assignTimestampsAndWatermarks(strategy(0))
      .setParallelism(1);
    shortOne
      .union(longOne)
      .keyBy((e) => e.k)
      .window(TumblingEventTimeWindows.of(100))
      .aggregate(accFn)
      .map((a): Row => [a.n, a.sum])
      .sinkTo(sink);
    await env.execute();
    const total = sink.values.reduce((s, r) => s + (r[0] as number), 0);
    expect(total).toBe(501);
  });
});

describe('late data', () => {
  /** In-order events with every 9th event sent again much later (so it is late). */
  function withLateEvents(seed: number): Ev[] {
    const rnd = mulberry32(seed);
    const out: Ev[] = [];
    let ts = 0;
    let id = 0;
    const history: Ev[] = [];
    for (let i = 0; i < 500; i++) {
      ts += 1 + Math.floor(rnd() * 6);
      if (rnd() < 0.03) ts += 80;
      const e: Ev = { id: id++, k: `k${Math.floor(rnd() * 4)}`, v: Math.floor(rnd() * 50), ts };
      out.push(e);
      history.push(e);
      if (i % 9 === 8) {
        // late by 10..200 ms relative to the newest timestamp
        const lag = 10 + Math.floor(rnd() * 190);
        out.push({ id: id++, k: `k${Math.floor(rnd() * 4)}`, v: 1000, ts: ts - lag });
      }
    }
    return out;
  }
  const events = withLateEvents(3);
  const bound = 5;
  const assigners: TimeWindowAssigner[] = [TumblingEventTimeWindows.of(50), SlidingEventTimeWindows.of(60, 25), SlidingEventTimeWindows.of(75, 25), EventTimeSessionWindows.withGap(15)];

  for (const assigner of assigners) {
    const ref = simulate(events, specOf(assigner), bound, 0);
    it(`${describeAssigner(assigner)}: late records are dropped and counted (parallelism 1-4)`, async () => {
      expect(ref.late.length).toBeGreaterThan(10);
      expect(ref.late.length).toBeLessThan(events.length / 5);
      for (const parallelism of [1, 2, 3, 4]) {
        for (const fn of ['process', 'aggregate', 'sum'] as const) {
          const { rows, dropped } = await runWindowJob({ assigner, fn, parallelism, events, boundMs: bound, assignerParallelism: 1 });
          expectSameMultiset(
            rows,
            ref.firings.map((f) => expectedRow(fn, f)),
          );
          expect(dropped).toBe(ref.late.length);
        }
      }
    });

    it(`${describeAssigner(assigner)}: sideOutputLateData emits exactly the late records, with their timestamps (parallelism 1-4)`, async () => {
      for (const [parallelism, fn] of [[1, 'reduce'], [2, 'sum'], [3, 'reduce'], [4, 'sum']] as const) {
        const tag = new OutputTag<Ev>('late');
        const { rows, late, lateTimestamps, dropped } = await runWindowJob({ assigner, fn, parallelism, events, boundMs: bound, assignerParallelism: 1, lateTag: tag });
        expectSameMultiset(
          rows,
          ref.firings.map((f) => expectedRow(fn, f)),
        );
        expectSameMultiset(late, ref.late);
        expect(lateTimestamps).toEqual(late.map((e) => e.ts));
        expect(dropped).toBe(0);
      }
    });
  }

  for (const assigner of assigners) {
    it(`${describeAssigner(assigner)}: allowedLateness fires again with updated results; later records are late (parallelism 1-4)`, async () => {
      const lateness = 60;
      const ref = simulate(events, specOf(assigner), bound, lateness);
      // the scenario must exercise both: late firings and records beyond the lateness
      const perWindow = new Map<string, number>();
      for (const f of ref.firings) perWindow.set(canon([f.k, f.start]), (perWindow.get(canon([f.k, f.start])) ?? 0) + 1);
      expect([...perWindow.values()].some((n) => n > 1)).toBe(true);
      expect(ref.late.length).toBeGreaterThan(0);
      for (const parallelism of [1, 2, 3, 4]) {
        for (const fn of ['process', 'aggregate+process', 'sum+process'] as const) {
          const tag = new OutputTag<Ev>('too-late');
          const { rows, late } = await runWindowJob({ assigner, fn, parallelism, events, boundMs: bound, assignerParallelism: 1, latenessMs: lateness, lateTag: tag });
          expectSameMultiset(
            rows,
            ref.firings.map((f) => expectedRow(fn, f)),
          );
          expectSameMultiset(late, ref.late);
        }
      }
    });
  }

  it('a hand-checked allowed-lateness scenario', async () => {
    // tumbling 10 ms, bound 0, lateness 20: wm after an event at ts is ts - 1
    const evs: Ev[] = [
      { id: 0, k: 'a', v: 1, ts: 1 },
      { id: 1, k: 'a', v: 2, ts: 12 }, // wm 11: [0,10) fires with {0}
      { id: 2, k: 'a', v: 4, ts: 5 }, // late, within lateness: [0,10) fires with {0,2}
      { id: 3, k: 'a', v: 8, ts: 31 }, // wm 30: [10,20) fires with {1}; [0,10) cleaned (9 + 20 <= 30)
      { id: 4, k: 'a', v: 16, ts: 7 }, // beyond lateness: side output
      { id: 5, k: 'a', v: 32, ts: 15 }, // [10,20) within lateness (19 + 20 > 30): fires with {1,5}
    ];
    const tag = new OutputTag<Ev>('late');
    const { rows, late } = await runWindowJob({ assigner: TumblingEventTimeWindows.of(10), fn: 'process', parallelism: 2, events: evs, boundMs: 0, assignerParallelism: 1, latenessMs: 20, lateTag: tag });
    expect(sorted(rows)).toEqual(
      sorted([
        ['process', 'a', 0, 10, [0], 9],
        ['process', 'a', 0, 10, [0, 2], 9],
        ['process', 'a', 10, 20, [1], 19],
        ['process', 'a', 10, 20, [1, 5], 19],
        ['process', 'a', 30, 40, [3], 39],
      ]),
    );
    expect(late.map((e) => e.id)).toEqual([4]);
  });

  it('sliding windows with size < slide: records in the gaps belong to no window and are not late', async () => {
    const evs: Ev[] = range(100).map((i) => ({ id: i, k: `k${i % 2}`, v: 1, ts: i }));
    const tag = new OutputTag<Ev>('late');
    const assigner = SlidingEventTimeWindows.of(5, 10);
    const ref = simulate(evs, specOf(assigner), 0, 0);
    const { rows, late, dropped } = await runWindowJob({ assigner, fn: 'process', parallelism: 2, events: evs, boundMs: 0, assignerParallelism: 1, lateTag: tag });
    expectSameMultiset(
      rows,
      ref.firings.map((f) => expectedRow('process', f)),
    );
    expect(late).toEqual([]);
    expect(dropped).toBe(0);
  });
});

describe('window functions: context and lifecycle', () => {
  it('a ProcessWindowFunction can emit side outputs at the window time and use keyed state per subtask', async () => {
    const { events, maxLag } = makeEvents(5, 400, 5, 5, 0, 0);
    const side = new OutputTag<[string, number]>('sizes');
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<[string, number, number]>();
    const sideSink = new CollectSink<[string, number]>();
    const fn: ProcessWindowFunction<Ev, [string, number, number], string> & { fired: ValueState<number> } = {
      fired: undefined as unknown as ValueState<number>,
      open(ctx) {
        this.fired = ctx.getState(valueState<number>('fired', { defaultValue: 0 }));
      },
      process(key, ctx, elements, out) {
        const n = this.fired.value()! + 1;
        this.fired.update(n);
        out.collect([key, ctx.window.start, n]);
        ctx.output(side, [key, elements.length]);
      },
    };
    const result = env
      .fromElements(...events)
      .assignTimestampsAndWatermarks(strategy(maxLag + 1))
      .keyBy((e) => e.k)
      .window(TumblingEventTimeWindows.of(50))
      .process(fn);
    result.sinkTo(sink);
    result.getSideOutput(side).sinkTo(sideSink);
    await env.execute();
    const ref = simulate(events, specOf(TumblingEventTimeWindows.of(50)), maxLag + 1, 0);
    // per key, the n-th window (in time order) sees fired == n
    const byKey = new Map<string, number[]>();
    for (const f of ref.firings) byKey.set(f.k, [...(byKey.get(f.k) ?? []), f.start]);
    const expected: [string, number, number][] = [];
    for (const [k, starts] of byKey) starts.sort((a, b) => a - b).forEach((s, i) => expected.push([k, s, i + 1]));
    expectSameMultiset(sink.values, expected);
    expectSameMultiset(
      sideSink.values,
      ref.firings.map((f): [string, number] => [f.k, f.elems.length]),
    );
    expect(sideSink.timestamps.every((t, i) => t !== undefined && (t + 1) % 50 === 0 && sideSink.values[i] !== undefined)).toBe(true);
  });

  it('session windows with aggregate need merge(): a clear error otherwise', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 0 });
    env
      .fromElements<Ev>({ id: 0, k: 'a', v: 1, ts: 10 }, { id: 1, k: 'a', v: 1, ts: 30 }, { id: 2, k: 'a', v: 1, ts: 20 })
      .assignTimestampsAndWatermarks(strategy(100))
      .keyBy((e) => e.k)
      .window(EventTimeSessionWindows.withGap(15))
      .aggregate({ createAccumulator: () => 0, add: (_e: Ev, n: number) => n + 1, getResult: (n: number) => n })
      .sinkTo(new CollectSink<number>());
    await expect(env.execute()).rejects.toThrow(/merge/);
  });

  it('an event-time window on records without timestamps fails with a clear error', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    env
      .fromElements(1, 2, 3)
      .keyBy((n) => n)
      .window(TumblingEventTimeWindows.of(10))
      .reduce((a, b) => a + b)
      .sinkTo(new CollectSink<number>());
    await expect(env.execute()).rejects.toThrow(/timestamp/);
  });

  it('window assigners validate their arguments', () => {
    expect(() => TumblingEventTimeWindows.of(0)).toThrow(RangeError);
    expect(() => TumblingEventTimeWindows.of(10, 10)).toThrow(/offset/);
    expect(() => SlidingEventTimeWindows.of(10, 0)).toThrow(RangeError);
    expect(() => SlidingEventTimeWindows.of(10, 5, 5)).toThrow(/offset/);
    expect(() => EventTimeSessionWindows.withGap(-1)).toThrow(RangeError);
    expect(() => SlidingEventTimeWindows.of(10, 5, -4)).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------
// Processing time: results depend on timing, so check what does not: every record is in
// exactly as many windows as it must be, and windows are aligned.


describe('processing-time windows', () => {
  const items = range(600).map((i) => ({ id: i, k: `k${i % 5}` }));
  type Item = (typeof items)[number];
  const collectIds: ProcessWindowFunction<Item, [string, number, number, number[]], string> = {
    process(key, ctx, elements, out) {
      out.collect([key, ctx.window.start, ctx.window.end, elements.map((e) => e.id)]);
    },
  };

  it('tumbling: every record is in exactly one window, windows are aligned', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<[string, number, number, number[]]>();
    env
      .fromSource(new PacedSource(items, 40, 8, 120), 'paced')
      .setParallelism(1)
      .keyBy((e) => e.k)
      .window(TumblingProcessingTimeWindows.of(20))
      .process(collectIds)
      .sinkTo(sink);
    await env.execute();
    const seen = sink.values.flatMap(([k, , , ids]) => ids.map((id) => [k, id]));
    expectSameMultiset(
      seen,
      items.map((e) => [e.k, e.id]),
    );
    for (const [, start, end] of sink.values) {
      expect(end - start).toBe(20);
      expect(start % 20).toBe(0);
    }
    expect(sink.timestamps.every((t, i) => t === sink.values[i]![2] - 1)).toBe(true);
  });

  it('sliding: every record is in exactly size/slide windows', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[string, number, number, number[]]>();
    env
      .fromSource(new PacedSource(items, 60, 10, 150), 'paced')
      .setParallelism(1)
      .keyBy((e) => e.k)
      .window(SlidingProcessingTimeWindows.of(40, 20))
      .process(collectIds)
      .sinkTo(sink);
    await env.execute();
    const count = new Map<number, number>();
    for (const [, start, end, ids] of sink.values) {
      expect(end - start).toBe(40);
      expect(start % 20).toBe(0);
      for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
    }
    expect(count.size).toBe(items.length);
    expect([...count.values()].every((n) => n === 2)).toBe(true);
  });

  it('sliding with sliced accumulators (chained processing-time timers): every record is counted in exactly size/slide windows', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[string, number, number, number]>();
    const ids: AggregateFunction<Item, number, number> = { createAccumulator: () => 0, add: (e, a) => a + 2 ** (e.id % 20), getResult: (a) => a, merge: (a, b) => a + b };
    env
      .fromSource(new PacedSource(items, 60, 10, 150), 'paced')
      .setParallelism(1)
      .keyBy((e) => e.k)
      .window(SlidingProcessingTimeWindows.of(60, 20))
      .aggregate(ids, {
        process(key: string, ctx: WindowContext, sums: readonly number[], out: Collector<[string, number, number, number]>) {
          out.collect([key, ctx.window.start, ctx.window.end, sums[0]!]);
        },
      })
      .sinkTo(sink);
    await env.execute();
    let total = 0;
    for (const [, start, end, sum] of sink.values) {
      expect(end - start).toBe(60);
      expect(start % 20).toBe(0);
      total += sum;
    }
    expect(total).toBe(3 * items.reduce((s, e) => s + 2 ** (e.id % 20), 0));
    // one result per key and window
    expect(new Set(sink.values.map(([k, start]) => `${k}/${start}`)).size).toBe(sink.values.length);
  });

  it('sessions: every record is in exactly one session; reduce counts add up', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<{ k: string; n: number }>();
    env
      .fromSource(new PacedSource(items, 100, 120, 150), 'paced')
      .setParallelism(1)
      .map((e) => ({ k: e.k, n: 1 }))
      .keyBy((e) => e.k)
      .window(ProcessingTimeSessionWindows.withGap(15))
      .reduce((a, b) => ({ k: a.k, n: a.n + b.n }))
      .sinkTo(sink);
    await env.execute();
    const total = new Map<string, number>();
    for (const r of sink.values) total.set(r.k, (total.get(r.k) ?? 0) + r.n);
    expect(Object.fromEntries(total)).toEqual({ k0: 120, k1: 120, k2: 120, k3: 120, k4: 120 });
    // bursts are 120 ms apart and the gap 15 ms: at least one session per burst per key. Two bursts
    // share a session only when the window operator stalls for over 100 ms (a busy CI machine at
    // 40 ms apart did: 27 sessions), so the spacing leaves that much slack.
    expect(sink.values.length).toBeGreaterThanOrEqual(6 * 5);
  });

  it('allowedLateness is rejected for processing-time windows', () => {
    const env = StreamExecutionEnvironment.create();
    expect(() =>
      env
        .fromElements(1)
        .keyBy((n) => n)
        .window(TumblingProcessingTimeWindows.of(10))
        .allowedLateness(5),
    ).toThrow(/event-time/);
  });

  it('window sizes, slides, offsets and gaps are whole milliseconds; window() without an assigner fails where it is called', () => {
    expect(() => TumblingEventTimeWindows.of(10.5)).toThrow(/window size must be a positive whole number of milliseconds, got 10.5/);
    expect(() => SlidingEventTimeWindows.of(100, 0.5)).toThrow(/window slide must be a positive whole number/);
    expect(() => TumblingProcessingTimeWindows.of(100, 2.5)).toThrow(/window offset must be a whole number of milliseconds, got 2.5/);
    expect(() => EventTimeSessionWindows.withGap(Number.NaN)).toThrow(/session gap must be a positive whole number/);
    expect(() => EventTimeSessionWindows.withDynamicGap(40 as unknown as () => number)).toThrow(/withDynamicGap needs a function of the record/);
    const keyed = StreamExecutionEnvironment.create().fromElements(1).keyBy((n) => n);
    expect(() => keyed.window(undefined as unknown as WindowAssigner)).toThrow(/window\(\.\.\.\) needs a window assigner, such as TumblingEventTimeWindows.of\(60_000\).*got undefined/);
  });

  it("withDynamicGap takes Flink's extractor object too; a gap that is not positive fails the job naming it", async () => {
    const run = async (extract: (n: number) => number): Promise<number[]> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      const sink = new CollectSink<number>();
      env
        .fromElements(1, 2, 30, 31)
        .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n))
        .keyBy(() => 'k')
        .window(EventTimeSessionWindows.withDynamicGap({ extract }))
        .reduce((a, b) => a + b)
        .sinkTo(sink);
      await env.execute();
      return sink.values;
    };
    expect(await run((n) => (n < 10 ? 5 : 50))).toEqual([3, 61]);
    expect(await run((n) => (n < 10 ? 50 : 5))).toEqual([64]);
    await expect(run((n) => (n === 30 ? 0 : 5))).rejects.toThrow(/withDynamicGap: the gap extractor returned 0; a session gap must be a positive whole number of milliseconds/);
  });

  it('a timestamp assigner that returns a fraction of a millisecond fails the job with the fix', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
    env
      .fromElements(1, 2)
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n + 0.25))
      .keyBy((n) => n)
      .window(TumblingEventTimeWindows.of(10))
      .reduce((a, b) => a + b)
      .sinkTo(new CollectSink<number>());
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    await expect(executor.run()).rejects.toThrow(/the timestamp assigner returned 1.25 \(a whole number of epoch milliseconds is needed: round it, e.g. Math.floor\(\.\.\.\)\)/);
  });
});

// ---------------------------------------------------------------------------------------
// The watermark valve of an input (unit level; Flink's StatusWatermarkValve semantics).

import { WatermarkValve } from '../src/runtime/task/watermark-valve.js';

describe('watermark valve', () => {
  function valve(n: number) {
    const out: Array<number | 'idle' | 'active'> = [];
    const v = new WatermarkValve(
      n,
      (wm) => out.push(wm),
      (idle) => out.push(idle ? 'idle' : 'active'),
    );
    return { v, out };
  }

  it('emits the minimum over channels, only when it advances; a channel never goes back', () => {
    const { v, out } = valve(3);
    v.inputWatermark(0, 10);
    v.inputWatermark(1, 20);
    expect(out).toEqual([]);
    v.inputWatermark(2, 5);
    expect(out).toEqual([5]);
    v.inputWatermark(2, 30);
    expect(out).toEqual([5, 10]);
    v.inputWatermark(0, 8); // lower than channel 0's last: ignored
    v.inputWatermark(0, 40);
    expect(out).toEqual([5, 10, 20]);
    expect(v.currentWatermarkMs).toBe(20);
    v.inputWatermark(1, 20); // same value: nothing
    expect(out).toEqual([5, 10, 20]);
  });

  it('the minimum matches a brute-force reference on random input', () => {
    const rnd = mulberry32(99);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + Math.floor(rnd() * 5);
      const { v, out } = valve(n);
      const per = new Array<number>(n).fill(Number.NEGATIVE_INFINITY);
      let last = Number.NEGATIVE_INFINITY;
      const expected: number[] = [];
      for (let step = 0; step < 100; step++) {
        const ch = Math.floor(rnd() * n);
        const wm = Math.floor(rnd() * 1000);
        v.inputWatermark(ch, wm);
        per[ch] = Math.max(per[ch]!, wm);
        const min = Math.min(...per);
        if (min > last) {
          expected.push(min);
          last = min;
        }
      }
      expect(out).toEqual(expected);
    }
  });

  it('idle channels do not hold the watermark back; all idle makes the output idle once', () => {
    const { v, out } = valve(2);
    v.inputWatermark(0, 10);
    v.inputStatus(1, true);
    expect(out).toEqual([10]);
    v.inputWatermark(0, 15);
    expect(out).toEqual([10, 15]);
    v.inputStatus(0, true);
    expect(out).toEqual([10, 15, 'idle']);
    v.inputStatus(0, true);
    expect(out).toEqual([10, 15, 'idle']);
    v.inputStatus(1, false);
    expect(out).toEqual([10, 15, 'idle', 'active']);
  });

  it('when the last active channel goes idle, the maximum watermark of all channels is flushed (as Flink)', () => {
    const { v, out } = valve(2);
    v.inputWatermark(0, 100);
    v.inputWatermark(1, 50);
    expect(out).toEqual([50]);
    v.inputStatus(0, true); // channel 1 (50) still holds the minimum
    expect(out).toEqual([50]);
    v.inputStatus(1, true); // nothing active any more: flush max(100, 50)
    expect(out).toEqual([50, 100, 'idle']);
  });

  it('watermarks of an idle channel are ignored (as Flink)', () => {
    const { v, out } = valve(2);
    v.inputWatermark(0, 10);
    v.inputWatermark(1, 10);
    v.inputStatus(1, true);
    v.inputWatermark(1, 500);
    v.inputWatermark(0, 20);
    expect(out).toEqual([10, 20]);
    v.inputStatus(1, false);
    v.inputWatermark(0, 30);
    // channel 1's watermark is still 10 (< 20, not aligned): only channel 0 counts
    expect(out).toEqual([10, 20, 30]);
    v.inputWatermark(0, 600); // the 500 sent while idle was not kept
    expect(out).toEqual([10, 20, 30, 600]);
  });

  it('a channel back from idle behind the output watermark does not count until it catches up (as Flink)', () => {
    const { v, out } = valve(2);
    v.inputWatermark(0, 10);
    v.inputWatermark(1, 10);
    expect(out).toEqual([10]);
    v.inputStatus(0, true);
    v.inputWatermark(1, 100);
    expect(out).toEqual([10, 100]);
    v.inputStatus(0, false); // channel 0 is at 10 < 100: unaligned
    v.inputWatermark(1, 200);
    expect(out).toEqual([10, 100, 200]);
    v.inputWatermark(0, 150); // still behind the output: ignored for the minimum
    v.inputWatermark(1, 300);
    expect(out).toEqual([10, 100, 200, 300]);
    v.inputWatermark(0, 350); // caught up: aligned again
    v.inputWatermark(1, 400);
    expect(out).toEqual([10, 100, 200, 300, 350]);
    v.inputWatermark(0, 500);
    expect(out).toEqual([10, 100, 200, 300, 350, 400]);
  });

  it('a channel back from idle at or ahead of the output watermark counts at once', () => {
    const { v, out } = valve(2);
    v.inputWatermark(0, 50);
    v.inputWatermark(1, 10);
    expect(out).toEqual([10]);
    v.inputStatus(0, true);
    expect(out).toEqual([10]);
    v.inputStatus(0, false); // 50 >= 10: aligned
    v.inputWatermark(1, 80);
    expect(out).toEqual([10, 50]);
  });

  it('finished channels stop counting; when every live channel is idle the output is idle', () => {
    const { v, out } = valve(3);
    v.inputWatermark(0, 10);
    v.inputWatermark(1, 20);
    v.inputWatermark(2, 30);
    expect(out).toEqual([10]);
    v.channelFinished(0);
    expect(out).toEqual([10, 20]);
    v.inputWatermark(0, 1000); // after its end: ignored
    expect(out).toEqual([10, 20]);
    v.inputStatus(2, true);
    v.channelFinished(1);
    expect(out).toEqual([10, 20, 'idle']);
    v.channelFinished(2);
    expect(v.currentWatermarkMs).toBe(20);
  });
});

// ---------------------------------------------------------------------------------------
// Periodic watermarks and generators.

import { BoundedOutOfOrdernessWatermarks, WatermarksWithIdleness } from '../src/api/watermark-strategy.js';

describe('periodic watermarks', () => {
  it('forBoundedOutOfOrderness with a 1 ms interval: on-time input gives the reference result whatever the timing', async () => {
    const { events, maxLag } = makeEvents(21, 3000, 7, 4, 60, 100);
    const assigners: TimeWindowAssigner[] = [TumblingEventTimeWindows.of(80), SlidingEventTimeWindows.of(90, 40), EventTimeSessionWindows.withGap(25)];
    for (const assigner of assigners) {
      const ref = simulate(events, specOf(assigner), maxLag + 1, 0);
      expect(ref.late).toEqual([]);
      for (const parallelism of [1, 3]) {
        const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism, 'pipeline.auto-watermark-interval': 1, 'execution.buffer-batch-size': 16 });
        const sink = new CollectSink<Row>();
        const dropped = new OutputTag<Ev>('late');
        const lateSink = new CollectSink<Ev>();
        const w = env
          .fromElements(...events)
          .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<Ev>(maxLag).withTimestampAssigner((e) => e.ts))
          .keyBy((e) => e.k)
          .window(assigner)
          .sideOutputLateData(dropped)
          .process<Row>({
            process(key, ctx, elements, out) {
              out.collect(['process', key, ctx.window.start, ctx.window.end, elements.map((e) => e.id).sort((a, b) => a - b)]);
            },
          });
        w.sinkTo(sink);
        w.getSideOutput(dropped).sinkTo(lateSink);
        await env.execute();
        expect(lateSink.values).toEqual([]);
        expectSameMultiset(
          sink.values.map((r, i) => [...r, sink.timestamps[i]]),
          ref.firings.map((f) => expectedRow('process', f)),
        );
      }
    }
  });

  it('window results flow into a second window stage on time (results precede the watermark)', async () => {
    const { events, maxLag } = makeEvents(8, 1500, 9, 5, 0, 0);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<[number, number, number]>();
    const lateTag = new OutputTag<[string, number, number]>('late');
    const lateSink = new CollectSink<[string, number, number]>();
    const perKey = env
      .fromElements(...events)
      .assignTimestampsAndWatermarks(strategy(maxLag + 1))
      .keyBy((e) => e.k)
      .window(TumblingEventTimeWindows.of(100))
      .process<[string, number, number]>({
        process(key, ctx, elements, out) {
          out.collect([key, ctx.window.start, elements.length]);
        },
      });
    const totals = perKey
      .keyBy((r) => r[1])
      .window(TumblingEventTimeWindows.of(100))
      .sideOutputLateData(lateTag)
      .process<[number, number, number]>({
        process(start, ctx, elements, out) {
          out.collect([start, ctx.window.start, elements.reduce((s, r) => s + r[2], 0)]);
        },
      })
      .setParallelism(2);
    totals.sinkTo(sink);
    totals.getSideOutput(lateTag).sinkTo(lateSink);
    await env.execute();
    expect(lateSink.values).toEqual([]);
    const expected = new Map<number, number>();
    for (const e of events) {
      const s = Math.floor(e.ts / 100) * 100;
      expected.set(s, (expected.get(s) ?? 0) + 1);
    }
    expectSameMultiset(
      sink.values,
      [...expected].map(([s, n]): [number, number, number] => [s, s, n]),
    );
  });
});

describe('watermark generators', () => {
  it('BoundedOutOfOrdernessWatermarks emits max timestamp - bound - 1, never going back', () => {
    const g: WatermarkGenerator<number> = new BoundedOutOfOrdernessWatermarks<number>(10);
    const out: number[] = [];
    const output = { emitWatermark: (w: number) => out.push(w), markIdle() {}, markActive() {} };
    g.onPeriodicEmit(output);
    expect(out).toEqual([Number.MIN_SAFE_INTEGER]);
    g.onEvent(0, 100, output);
    g.onEvent(0, 50, output);
    g.onPeriodicEmit(output);
    g.onEvent(0, 120, output);
    g.onEvent(0, 119, output);
    g.onPeriodicEmit(output);
    expect(out).toEqual([Number.MIN_SAFE_INTEGER, 89, 109]);
    expect(() => new BoundedOutOfOrdernessWatermarks(-1)).toThrow(RangeError);
  });

  it('WatermarksWithIdleness marks idle after the timeout without events, active again on the next event', () => {
    let now = 0;
    const inner = new BoundedOutOfOrdernessWatermarks<number>(0);
    const g = new WatermarksWithIdleness(inner, 100, () => now);
    const out: Array<number | string> = [];
    const output = { emitWatermark: (w: number) => out.push(w), markIdle: () => out.push('idle'), markActive: () => out.push('active') };
    g.onEvent(1, 10, output);
    now = 50;
    g.onPeriodicEmit(output);
    expect(out).toEqual([9]);
    now = 99;
    g.onPeriodicEmit(output);
    now = 100;
    g.onPeriodicEmit(output);
    now = 150;
    g.onPeriodicEmit(output);
    expect(out).toEqual([9, 9, 'idle']);
    g.onEvent(2, 20, output);
    g.onPeriodicEmit(output);
    expect(out).toEqual([9, 9, 'idle', 'active', 19]);
  });

  it('strategies validate their arguments and keep the assigner', () => {
    expect(() => WatermarkStrategy.forBoundedOutOfOrderness(-5)).toThrow(RangeError);
    expect(() => WatermarkStrategy.forMonotonousTimestamps<number>().withIdleness(0)).toThrow(RangeError);
    const s = WatermarkStrategy.forMonotonousTimestamps<number>()
      .withTimestampAssigner((n) => n * 2)
      .withIdleness(50);
    expect(s.timestampAssigner?.(21, undefined)).toBe(42);
    expect(s.idleTimeoutMs).toBe(50);
    expect(s.generator(() => 0)).toBeInstanceOf(WatermarksWithIdleness);
  });
});
