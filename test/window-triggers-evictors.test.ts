import { describe, expect, it } from 'vitest';
import {
  ContinuousEventTimeTrigger,
  ContinuousProcessingTimeTrigger,
  TumblingProcessingTimeWindows,
  CountEvictor,
  DeltaEvictor,
  TimeEvictor,
  CountTrigger,
  EventTimeSessionWindows,
  GlobalWindows,
  PurgingTrigger,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  SlidingEventTimeWindows,
  WatermarkStrategy,
  valueState,
  type DataStream,
  type Trigger,
  type WatermarkGenerator,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { GeneratorSource } from '../src/connectors/generator/generator-source.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';
import { PacedSource } from './support/paced-source.js';

// A stream of data records and ticks. Data records come at 10 j + 3 and 10 j + 7 ms of event
// time; a tick at 10 j ms carries the only watermarks (at its own timestamp) and is dropped
// after the watermarks are assigned, so the records a firing sees do not depend on how records
// and watermarks interleave: a firing at T (a multiple of 10) sees exactly the records before T.
type Ev = { readonly tick: true; readonly ts: number } | { readonly tick: false; readonly id: number; readonly k: number; readonly ts: number };
const KEYS = 3;
const eventAt = (i: number): Ev => {
  const j = Math.floor(i / 3);
  const r = i % 3;
  if (r === 0) return { tick: true, ts: 10 * j };
  const id = 2 * j + r - 1;
  return { tick: false, id, k: (id * 7 + (id >> 3)) % KEYS, ts: 10 * j + (r === 1 ? 3 : 7) };
};
type Rec = Extract<Ev, { tick: false }>;
const dataUpTo = (n: number): Rec[] => Array.from({ length: n }, (_, i) => eventAt(i)).filter((e): e is Rec => !e.tick);

const onTicks = (): WatermarkGenerator<Ev> => ({
  onEvent: (e, ts, out) => {
    if (e.tick) out.emitWatermark(ts);
  },
  onPeriodicEmit: () => {},
});

function records(env: StreamExecutionEnvironment, n: number, eventsPerSecond?: number) {
  return env
    .fromSource(new GeneratorSource<Ev>({ generate: eventAt, timestampOf: (i) => eventAt(i).ts, count: n, ...(eventsPerSecond === undefined ? {} : { eventsPerSecond }) }), 'events')
    .setParallelism(1)
    .assignTimestampsAndWatermarks(WatermarkStrategy.forGenerator(onTicks))
    .setParallelism(1)
    .filter((e): e is Rec => !e.tick)
    .setParallelism(1);
}

/** What `build` makes of the records, collected, on an environment of `parallelism`. */
async function collect<T>(n: number, parallelism: number, build: (recs: DataStream<Rec>) => DataStream<T>): Promise<CollectSink<T>> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
  const sink = new CollectSink<T>();
  build(records(env, n)).sinkTo(sink);
  await env.execute();
  return sink;
}

/**
 * `build` over the records with 5 failures injected at seeded records (one producer before the
 * keyBy keeps each key's order), checkpoints every 20 ms, into a transactional sink: what it committed.
 */
async function underFailures(seed: number, n: number, build: (recs: DataStream<Rec>) => DataStream<string>) {
  const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: (n * 2) / 3 });
  const store = new TxnStore<string>();
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 2,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
  });
  build(records(env, n, 30_000).process(plan.failingProcess<Rec>()).setParallelism(1)).sinkTo(new TxnStoreSink(store));
  const result = await env.execute();
  return { result, committed: store.committed, plan };
}

const ids = (rs: readonly { id: number }[]): string => rs.map((e) => e.id).join(',');

const groupBy = <T, K>(xs: readonly T[], key: (x: T) => K): Map<K, T[]> => {
  const m = new Map<K, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
};

describe('window triggers', () => {
  it('CountTrigger fires a window with every 3rd record of its key, with all its records so far (no purge); the window end does not fire', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .trigger(CountTrigger.of(3))
        .process<string>({
          process: (k, ctx, elements, out) => out.collect(`${k}@${ctx.window.start}:${ids(elements)}`),
        }),
    );
    const want: string[] = [];
    for (const [w, recs] of groupBy(dataUpTo(n), (e) => `${e.k}@${e.ts - (e.ts % 100)}`)) {
      for (let c = 3; c <= recs.length; c += 3) want.push(`${w}:${ids(recs.slice(0, c))}`);
    }
    expect(want.length).toBeGreaterThan(300);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // Every result carries the window's last timestamp.
    expect(sink.timestamps.every((t, i) => t === Number(sink.values[i]!.split('@')[1]!.split(':')[0]) + 99)).toBe(true);
  });

  it('PurgingTrigger.of(CountTrigger) sums each run of 4 records of a key in a sliding window, then starts over', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 3, (recs) =>
      recs
        .map((e) => ({ ...e, n: 1 }))
        .setParallelism(1) // one producer before the keyBy keeps each key's order
        .keyBy((e) => e.k)
        .window(SlidingEventTimeWindows.of(200, 100))
        .trigger(PurgingTrigger.of(CountTrigger.of(4)))
        .reduce<string>(
          (a, b) => ({ ...a, id: Math.max(a.id, b.id), n: a.n + b.n }),
          { process: (k, ctx, [r], out) => out.collect(`${k}@${ctx.window.start}:${r!.n}:${r!.id}`) },
        ),
    );
    const want: string[] = [];
    const windowsOf = (ts: number): number[] => [ts - (ts % 100), ts - (ts % 100) - 100];
    const perWindow = new Map<string, Rec[]>();
    for (const e of dataUpTo(n)) for (const s of windowsOf(e.ts)) perWindow.set(`${e.k}@${s}`, [...(perWindow.get(`${e.k}@${s}`) ?? []), e]);
    for (const [w, recs] of perWindow) for (let c = 4; c <= recs.length; c += 4) want.push(`${w}:4:${recs[c - 1]!.id}`);
    expect(want.length).toBeGreaterThan(300);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('ContinuousEventTimeTrigger gives early results every 20 ms of event time after a window\'s first record, and the final one at its end', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .trigger(ContinuousEventTimeTrigger.of(20))
        .aggregate<number, number, string>(
          { createAccumulator: () => 0, add: (_e: Rec, c: number) => c + 1, getResult: (c: number) => c, merge: (a: number, b: number) => a + b },
          { process: (k, ctx, [c], out) => out.collect(`${k}@${ctx.window.start}:${c}`) },
        ),
    );
    const want: string[] = [];
    for (const [w, recs] of groupBy(dataUpTo(n), (e) => `${e.k}@${e.ts - (e.ts % 100)}`)) {
      const start = Number(w.split('@')[1]);
      // Firings at the 20 ms marks inside the window after its first record, then at its end.
      for (let t = start + 20; t < start + 100; t += 20) if (t > recs[0]!.ts) want.push(`${w}:${recs.filter((e) => e.ts < t).length}`);
      want.push(`${w}:${recs.length}`);
    }
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('ContinuousEventTimeTrigger aligns a negative timestamp as Flink does (its % truncates toward zero): -15 at 10 ms fires first at -1, the window end of [-100, 0)', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 0 });
    const sink = new CollectSink<string>();
    env
      .fromElements({ t: -15 }, { t: -1 })
      .assignTimestampsAndWatermarks(
        WatermarkStrategy.forGenerator<{ t: number }>(() => ({ onEvent: (e, _ts, out) => out.emitWatermark(e.t === -15 ? -10 : -1), onPeriodicEmit: () => {} })).withTimestampAssigner((e) => e.t),
      )
      .keyBy(() => 'k')
      .window(TumblingEventTimeWindows.of(100))
      .trigger(ContinuousEventTimeTrigger.of(10))
      .process<string>({ process: (_k, ctx, els, out) => out.collect(`[${ctx.window.start},${ctx.window.end}) at ${ctx.currentWatermark()}: ${els.map((e) => e.t).join(',')}`) })
      .sinkTo(sink);
    await env.execute();
    // Flink: -15 - (-15 % 10) = -10, next firing min(-10 + 10, -1) = -1; the end of input fires the window again.
    expect(sink.values[0]).toBe('[-100,0) at -1: -15,-1');
    expect(sink.values.filter((v) => v.startsWith('[-100,0) at -10'))).toEqual([]);
  });

  it('ContinuousProcessingTimeTrigger gives running results of a long processing-time window while records come', async () => {
    // 12 bursts of 10 records, 150 ms apart, into a 10-minute window: firings every 100 ms of
    // processing time show the count growing; the window itself does not end during the job.
    const items = Array.from({ length: 120 }, (_, i) => i);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<number>();
    env
      .fromSource(new PacedSource(items, 10, 150, 300), 'paced')
      .keyBy(() => 'all')
      .window(TumblingProcessingTimeWindows.of(600_000))
      .trigger(ContinuousProcessingTimeTrigger.of(100))
      .aggregate({ createAccumulator: () => 0, add: (_x: number, c: number) => c + 1, getResult: (c: number) => c, merge: (a: number, b: number) => a + b })
      .sinkTo(sink);
    await env.execute();
    const counts = sink.values;
    console.log(`continuous processing-time firings: ${counts.join(' ')}`);
    expect(counts.length).toBeGreaterThanOrEqual(5);
    expect(counts.every((c, i) => i === 0 || c >= counts[i - 1]!)).toBe(true);
    expect(counts.at(-1)!).toBeLessThanOrEqual(120);
    expect(counts.at(-1)!).toBeGreaterThan(counts[0]!);
  });

  it('a trigger of your own: its state and timers per key and window, cleared when the window is over', async () => {
    // Counts a window's records in its own state; after every 5th it sets a timer 1 ms later,
    // which fires and purges the window. Counts how often clear() ran.
    const cleared: number[] = [];
    const seenState = valueState<number>('seen');
    const everyFifth: Trigger<Rec> = {
      name: 'every-fifth',
      onElement(e, _ts, _w, ctx) {
        const seen = ctx.getPartitionedState(seenState);
        const c = (seen.value() ?? 0) + 1;
        seen.update(c);
        if (c % 5 === 0) ctx.registerEventTimeTimer(e.ts + 1);
        return 'CONTINUE';
      },
      onEventTime: (time, w) => (time === w.end - 1 ? 'CONTINUE' : 'FIRE_AND_PURGE'),
      onProcessingTime: () => 'CONTINUE',
      clear(w, ctx) {
        cleared.push(w.start);
        ctx.getPartitionedState(seenState).clear();
      },
    };
    const n = 1500;
    const sink = await collect<string>(n, 1, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .trigger(everyFifth)
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}:${els.map((e) => e.id).join(',')}`) }),
    );
    // Reference: the timer after a window's 5th, 10th, ... record fires at the next tick (the
    // first watermark at or past it), with the records since the last firing that came before it.
    const want: string[] = [];
    let windows = 0;
    for (const [w, recs] of groupBy(dataUpTo(n), (e) => `${e.k}@${e.ts - (e.ts % 100)}`)) {
      windows++;
      let from = 0;
      for (let c = 5; c <= recs.length; c += 5) {
        const tick = Math.ceil((recs[c - 1]!.ts + 1) / 10) * 10;
        const upTo = recs.filter((e) => e.ts < tick).length;
        want.push(`${w}:${recs.slice(from, upTo).map((e) => e.id).join(',')}`);
        from = upTo;
      }
    }
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(cleared.length).toBe(windows);
  });

  it('trigger state is in checkpoints: PurgingTrigger.of(CountTrigger) is exactly-once under >= 5 injected failures', async () => {
    const n = 9000;
    const { result, committed, plan } = await underFailures(5150, n, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(1_000_000))
        .trigger(PurgingTrigger.of(CountTrigger.of(5)))
        .process<string>({ process: (k, _ctx, els, out) => out.collect(`${k}:${els.map((e) => e.id).join(',')}`) })
        .uid('windows'),
    );
    const want: string[] = [];
    for (const [k, recs] of groupBy(dataUpTo(n), (e) => e.k)) {
      for (let c = 5; c <= recs.length; c += 5) want.push(`${k}:${recs.slice(c - 5, c).map((e) => e.id).join(',')}`);
    }
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(committed, want), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('rejects a trigger that cannot merge on session windows and a value that is not a trigger, naming the fix', () => {
    const env = StreamExecutionEnvironment.create();
    const keyed = env.fromElements(1, 2, 3).keyBy((x) => x);
    const noMerge: Trigger<number> = { onElement: () => 'CONTINUE', onEventTime: () => 'CONTINUE', onProcessingTime: () => 'CONTINUE', clear: () => {} };
    expect(() => keyed.window(EventTimeSessionWindows.withGap(10)).trigger(noMerge)).toThrow(/session windows merge, and this trigger has no onMerge/);
    expect(() => keyed.window(TumblingEventTimeWindows.of(10)).trigger({} as Trigger<number>)).toThrow(/needs a Trigger, such as CountTrigger.of/);
    expect(() => CountTrigger.of(0)).toThrow(/positive whole number/);
  });
});

describe('window evictors', () => {
  const windowsOf100 = (n: number) => groupBy(dataUpTo(n), (e) => `${e.k}@${e.ts - (e.ts % 100)}`);

  it('CountEvictor keeps the last records before the function: CountTrigger.of(2) + CountEvictor.of(3) sees the 3 latest', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .trigger(CountTrigger.of(2))
        .evictor(CountEvictor.of(3))
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}:${ids(els)}`) }),
    );
    const want: string[] = [];
    for (const [w, recs] of windowsOf100(n)) for (let c = 2; c <= recs.length; c += 2) want.push(`${w}:${ids(recs.slice(Math.max(0, c - 3), c))}`);
    expect(want.length).toBeGreaterThan(300);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('evicting after the function: CountTrigger.of(3) + CountEvictor.of(2, true) keeps two records for the next firing', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 3, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(200))
        .trigger(CountTrigger.of(3))
        .evictor(CountEvictor.of(2, true))
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}:${ids(els)}`) }),
    );
    const want: string[] = [];
    for (const [w, recs] of groupBy(dataUpTo(n), (e) => `${e.k}@${e.ts - (e.ts % 200)}`)) {
      for (let c = 3; c <= recs.length; c += 3) want.push(`${w}:${ids(recs.slice(Math.max(0, c - 5), c))}`);
    }
    expect(want.length).toBeGreaterThan(300);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('TimeEvictor with the default trigger: a reduce at the window end over the records within 30 ms of the newest', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .map((e) => ({ k: e.k, ts: e.ts, ids: String(e.id) }))
        .setParallelism(1)
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .evictor(TimeEvictor.of(30))
        .reduce<string>((a, b) => ({ ...a, ids: `${a.ids},${b.ids}` }), { process: (k, ctx, [r], out) => out.collect(`${k}@${ctx.window.start}:${r!.ids}`) }),
    );
    const want: string[] = [];
    for (const [w, recs] of windowsOf100(n)) {
      const newest = Math.max(...recs.map((e) => e.ts));
      want.push(`${w}:${ids(recs.filter((e) => e.ts > newest - 30))}`);
    }
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('DeltaEvictor drops the records too far from the last one; an aggregate runs over the rest', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .evictor(DeltaEvictor.of<Rec>(10, (e, last) => last.id - e.id))
        .aggregate<number[], number[], string>(
          { createAccumulator: () => [], add: (e: Rec, acc: number[]) => [...acc, e.id], getResult: (acc: number[]) => acc, merge: (a: number[], b: number[]) => [...a, ...b] },
          { process: (k, ctx, [got], out) => out.collect(`${k}@${ctx.window.start}:${got!.join(',')}`) },
        ),
    );
    const want: string[] = [];
    let evicted = 0;
    for (const [w, recs] of windowsOf100(n)) {
      const kept = recs.filter((e) => recs.at(-1)!.id - e.id < 10);
      evicted += recs.length - kept.length;
      want.push(`${w}:${ids(kept)}`);
    }
    expect(evicted).toBeGreaterThan(100);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('an evictor that leaves nothing: the process function still runs, with no elements, and an aggregate emits its empty result (as Flink); a reduce emits nothing', async () => {
    const n = 3000;
    const dropAll = { name: 'drop-all', evictBefore: () => [] };
    const processed = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .evictor(dropAll)
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}:${els.length}`) }),
    );
    const want = [...windowsOf100(n).keys()].map((w) => `${w}:0`);
    expect(want.length).toBeGreaterThan(100);
    expect(compareMultisets(processed.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    const aggregated = await collect<number>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .evictor(dropAll)
        .aggregate({ createAccumulator: () => 0, add: (_e: Rec, acc: number) => acc + 1, getResult: (acc: number) => acc, merge: (a: number, b: number) => a + b }),
    );
    expect(aggregated.values).toEqual(want.map(() => 0));
    const reduced = await collect<Rec>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(TumblingEventTimeWindows.of(100))
        .evictor(dropAll)
        .reduce((a) => a),
    );
    expect(reduced.values).toEqual([]);
  });

  it('rejects values that are not evictors', () => {
    const env = StreamExecutionEnvironment.create();
    const keyed = env.fromElements(1, 2, 3).keyBy((x) => x);
    expect(() => keyed.window(TumblingEventTimeWindows.of(10)).evictor({})).toThrow(/needs an Evictor with evictBefore or evictAfter/);
  });
});

describe('triggers and evictors on session windows', () => {
  const GAP = 15; // record timestamps differ by even amounts: never exactly a gap apart
  /** Each key's sessions, by plain loops: a record within the gap of the session's last one joins it. */
  function sessionsOf(n: number): { k: number; recs: Rec[] }[] {
    const out: { k: number; recs: Rec[] }[] = [];
    for (const [k, recs] of groupBy(dataUpTo(n), (e) => e.k)) {
      let cur: Rec[] = [];
      for (const r of recs) {
        if (cur.length > 0 && r.ts > cur.at(-1)!.ts + GAP) {
          out.push({ k, recs: cur });
          cur = [];
        }
        cur.push(r);
      }
      if (cur.length > 0) out.push({ k, recs: cur });
    }
    return out;
  }
  const window = (recs: readonly Rec[]): string => `${recs[0]!.ts}-${recs.at(-1)!.ts + GAP}`;

  it('CountTrigger.of(3) on sessions: the count merges with the sessions; each firing sees the session so far', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(EventTimeSessionWindows.withGap(GAP))
        .trigger(CountTrigger.of(3))
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}-${ctx.window.end}:${ids(els)}`) }),
    );
    const want: string[] = [];
    for (const { k, recs } of sessionsOf(n)) for (let c = 3; c <= recs.length; c += 3) want.push(`${k}@${window(recs.slice(0, c))}:${ids(recs.slice(0, c))}`);
    expect(want.length).toBeGreaterThan(100);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // Results carry the window's last timestamp at the firing.
    expect(sink.timestamps.every((t, i) => t === Number(sink.values[i]!.split('-')[1]!.split(':')[0]) - 1)).toBe(true);
  });

  it('an evictor on sessions with the default trigger: each session once at its end, with its last 2 records', async () => {
    const n = 3000;
    const sink = await collect<string>(n, 3, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(EventTimeSessionWindows.withGap(GAP))
        .evictor(CountEvictor.of(2))
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}-${ctx.window.end}:${ids(els)}`) }),
    );
    const all = sessionsOf(n);
    expect(all.some((x) => x.recs.length > 2)).toBe(true);
    const want = all.map(({ k, recs }) => `${k}@${window(recs)}:${ids(recs.slice(-2))}`);
    expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('session windows with a trigger are exactly-once under >= 5 injected failures (sessions, counts and contents in checkpoints)', async () => {
    const n = 9000;
    const { result, committed, plan } = await underFailures(5151, n, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(EventTimeSessionWindows.withGap(GAP))
        .trigger(PurgingTrigger.of(CountTrigger.of(3)))
        .process<string>({ process: (k, ctx, els, out) => out.collect(`${k}@${ctx.window.start}:${ids(els)}`) })
        .uid('sessions'),
    );
    // Purged at each firing: each result holds the 3 records since the last; the window keeps its start.
    const want: string[] = [];
    for (const { k, recs } of sessionsOf(n)) for (let c = 3; c <= recs.length; c += 3) want.push(`${k}@${recs[0]!.ts}:${ids(recs.slice(c - 3, c))}`);
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(committed, want), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});

describe('GlobalWindows', () => {
  it('with CountTrigger.of(2) and CountEvictor.of(5): every 2nd record of a key, its last 5 records (Flink\'s countWindow(5, 2)); as countWindow(5, 2) here', async () => {
    const n = 3000;
    const fmt = (k: number, els: readonly Rec[]): string => `${k}:${ids(els)}`;
    const viaGlobal = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(GlobalWindows.create())
        .trigger(CountTrigger.of(2))
        .evictor(CountEvictor.of(5))
        .process<string>({ process: (k, ctx, els, out) => {
          expect(ctx.window.end).toBe(Number.MAX_SAFE_INTEGER);
          out.collect(fmt(k, els));
        } }),
    );
    const viaCountWindow = await collect<string>(n, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .countWindow(5, 2)
        .process<string>({ process: (k, _ctx, els, out) => out.collect(fmt(k, els)) }),
    );
    const want: string[] = [];
    for (const [k, recs] of groupBy(dataUpTo(n), (e) => e.k)) for (let c = 2; c <= recs.length; c += 2) want.push(fmt(k, recs.slice(Math.max(0, c - 5), c)));
    expect(compareMultisets(viaGlobal.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(compareMultisets(viaCountWindow.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(viaGlobal.timestamps.every((t) => t === Number.MAX_SAFE_INTEGER - 1)).toBe(true);
  });

  it('without a trigger they never fire (as in Flink)', async () => {
    const sink = await collect<number>(600, 2, (recs) =>
      recs
        .keyBy((e) => e.k)
        .window(GlobalWindows.create())
        .aggregate({ createAccumulator: () => 0, add: (_e: Rec, c: number) => c + 1, getResult: (c: number) => c, merge: (a: number, b: number) => a + b }),
    );
    expect(sink.values).toEqual([]);
  });
});
