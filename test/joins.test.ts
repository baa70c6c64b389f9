import { describe, expect, it } from 'vitest';
import {
  EventTimeSessionWindows,
  mapState,
  SlidingEventTimeWindows,
  TumblingEventTimeWindows,
  type WindowAssigner,
  OutputTag,
  StreamExecutionEnvironment,
  WatermarkStrategy,
  type MapState,
  type ProcessJoinFunction,
  type WatermarkGenerator,
} from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { GeneratorSource } from '../src/connectors/generator/generator-source.js';
import { LEFT_BUFFER, RIGHT_BUFFER } from '../src/runtime/operators/interval-join-operator.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { PacedSource } from './support/paced-source.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { tempDirs } from './support/temp-dirs.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';

const tempDir = tempDirs('sluice-joins-');

// Records of both sides are functions of their index, so sources replay them after a restart
// and the reference can be computed from the indexes alone.
interface Rec {
  readonly side: 'L' | 'R';
  readonly id: number;
  readonly k: number;
  readonly ts: number;
}
const KEYS = 7;
const hash = (i: number, salt: number): number => (Math.imul(i ^ salt, 0x9e3779b1) >>> 0) % KEYS;
// Timestamps are even: no two differ by an odd session gap, where Flink's (and Sluice's) sessions
// would merge or not depending on whether the first one fired before the second record came.
const leftAt = (i: number): Rec => ({ side: 'L', id: i, k: hash(i, 11), ts: 4 * i });
const rightAt = (i: number): Rec => ({ side: 'R', id: i, k: hash(i, 23), ts: 6 * i + 2 });

function recordSource(at: (i: number) => Rec, count: number, eventsPerSecond?: number): GeneratorSource<Rec> {
  return new GeneratorSource<Rec>({ generate: at, timestampOf: (i) => at(i).ts, count, ...(eventsPerSecond === undefined ? {} : { eventsPerSecond }) });
}

/** The pairs an interval join must emit, by plain loops: `left,right@timestamp`. */
function reference(lefts: readonly Rec[], rights: readonly Rec[], lowerMs: number, upperMs: number): string[] {
  const out: string[] = [];
  for (const l of lefts) {
    for (const r of rights) {
      if (l.k === r.k && r.ts >= l.ts + lowerMs && r.ts <= l.ts + upperMs) out.push(`${l.id},${r.id}@${Math.max(l.ts, r.ts)}`);
    }
  }
  return out;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Emits `left,right@timestamp`, and checks the context's timestamps against the records'. */
const pairs: ProcessJoinFunction<Rec, Rec, string> = {
  processElement(l, r, ctx, out) {
    expect([l.side, r.side, l.k]).toEqual(['L', 'R', r.k]);
    expect([ctx.getLeftTimestamp(), ctx.getRightTimestamp(), ctx.getTimestamp()]).toEqual([l.ts, r.ts, Math.max(l.ts, r.ts)]);
    out.collect(`${l.id},${r.id}@${ctx.getTimestamp()}`);
  },
};

describe('interval join', () => {
  const cases = [
    { lower: -20, upper: 20, lowerExclusive: false, upperExclusive: false, parallelism: 1 },
    { lower: -20, upper: 20, lowerExclusive: true, upperExclusive: true, parallelism: 2 },
    { lower: 0, upper: 40, lowerExclusive: false, upperExclusive: false, parallelism: 3 },
    { lower: -50, upper: -10, lowerExclusive: false, upperExclusive: true, parallelism: 2 },
    { lower: 14, upper: 14, lowerExclusive: false, upperExclusive: false, parallelism: 3 },
  ];
  for (const c of cases) {
    const bounds = `${c.lowerExclusive ? '(' : '['}${c.lower}, ${c.upper}${c.upperExclusive ? ')' : ']'}`;
    it(`between ${bounds} ms, parallelism ${c.parallelism}: exactly the pairs of the reference, with the larger timestamp`, async () => {
      const nLeft = 3000;
      const nRight = 1800;
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': c.parallelism, 'pipeline.auto-watermark-interval': 5 });
      const sink = new CollectSink<string>();
      const timed = (at: (i: number) => Rec, n: number) =>
        env
          .fromSource(recordSource(at, n), at === leftAt ? 'lefts' : 'rights')
          .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>())
          .keyBy((r) => r.k);
      let joined = timed(leftAt, nLeft).intervalJoin(timed(rightAt, nRight)).between(c.lower, c.upper);
      if (c.lowerExclusive) joined = joined.lowerBoundExclusive();
      if (c.upperExclusive) joined = joined.upperBoundExclusive();
      joined
        .process(pairs)
        .process<string>({
          processElement(v, ctx, out) {
            // The result's stream timestamp is the one the function saw.
            expect(ctx.timestamp()).toBe(Number(v.split('@')[1]));
            out.collect(v);
          },
        })
        .sinkTo(sink);
      await env.execute();
      const lower = c.lowerExclusive ? c.lower + 1 : c.lower;
      const upper = c.upperExclusive ? c.upper - 1 : c.upper;
      const want = reference(range(nLeft).map(leftAt), range(nRight).map(rightAt), lower, upper);
      expect(want.length).toBeGreaterThan(50);
      expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });
  }

  it('keeps each side only as long as the other side can still join it: the buffers stay small', async () => {
    // Both sides cover 24 s of event time in 1.2 s, so neither runs far ahead of the other.
    const [nLeft, nRight] = [6000, 4000];
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'pipeline.auto-watermark-interval': 5 });
    const sink = new CollectSink<number>();
    const timed = (at: (i: number) => Rec, name: string, n: number) =>
      env
        .fromSource(recordSource(at, n, n / 1.2), name)
        .setParallelism(1)
        .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>())
        .setParallelism(1)
        .keyBy((r) => r.k);
    // Reads the join's own buffers of the current key (same state names): how many timestamps each holds.
    const fn: ProcessJoinFunction<Rec, Rec, number> & { left?: MapState<number, unknown[]>; right?: MapState<number, unknown[]> } = {
      open(ctx) {
        this.left = ctx.getMapState(mapState<number, unknown[]>(LEFT_BUFFER));
        this.right = ctx.getMapState(mapState<number, unknown[]>(RIGHT_BUFFER));
      },
      processElement(_l, _r, _ctx, out) {
        out.collect([...this.left!.keys()].length + [...this.right!.keys()].length);
      },
    };
    timed(leftAt, 'lefts', nLeft).intervalJoin(timed(rightAt, 'rights', nRight)).between(-10, 10).process(fn).sinkTo(sink);
    await env.execute();
    expect(sink.values.length).toBeGreaterThan(500);
    // Without cleanup a key's buffers would end with about (6000 + 4000) / 7 timestamps. The
    // watermark trails the records by some processing time, each millisecond of which is 20 ms
    // of event time, so a busy machine leaves more behind: the bound is loose.
    const max = Math.max(...sink.values);
    console.log(`interval join: at most ${max} buffered timestamps of a key`);
    expect(max).toBeLessThan((nLeft + nRight) / KEYS / 4);
  });

  it('records behind the watermark are late: dropped from the join, or sent to the side outputs', async () => {
    type Ev = { id: string; ts: number };
    const punctuated = (): WatermarkGenerator<Ev> => ({
      onEvent: (_e, ts, out) => out.emitWatermark(ts - 1),
      onPeriodicEmit: () => {},
    });
    const strategy = WatermarkStrategy.forGenerator(punctuated).withTimestampAssigner((e: Ev) => e.ts);
    // Lefts at 0, 500 and 1000 ms of processing time; rights at 0 and 1000 ms. From about 500 ms
    // on, both inputs' watermarks are at 9,999, so the two records that come at 1000 ms are late.
    const lefts: Ev[] = [
      { id: 'a100', ts: 100 },
      { id: 'a10000', ts: 10_000 },
      { id: 'a20-late', ts: 20 },
    ];
    const rights: Ev[] = [
      { id: 'b10000', ts: 10_000 },
      { id: 'b50-late', ts: 50 },
    ];
    for (const routeLate of [false, true]) {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
      const sink = new CollectSink<string>();
      const lateLefts = new CollectSink<string>();
      const lateRights = new CollectSink<string>();
      const leftTag = new OutputTag<Ev>('late-lefts');
      const rightTag = new OutputTag<Ev>('late-rights');
      const left = env.fromSource(new PacedSource(lefts, 1, 500, 600), 'lefts').assignTimestampsAndWatermarks(strategy).keyBy(() => 0);
      const right = env.fromSource(new PacedSource(rights, 1, 1000, 600), 'rights').assignTimestampsAndWatermarks(strategy).keyBy(() => 0);
      let between = left.intervalJoin(right).between(-100, 100);
      if (routeLate) between = between.sideOutputLeftLateData(leftTag).sideOutputRightLateData(rightTag);
      const joined = between.process<string>({ processElement: (l, r, _ctx, out) => out.collect(`${l.id}+${r.id}`) });
      joined.sinkTo(sink);
      joined.getSideOutput(leftTag).map((e) => e.id).sinkTo(lateLefts);
      joined.getSideOutput(rightTag).map((e) => e.id).sinkTo(lateRights);
      await env.execute();
      // b50 would have joined a100 (and a20) had it been on time.
      expect(sink.values).toEqual(['a10000+b10000']);
      expect([lateLefts.values, lateRights.values]).toEqual(routeLate ? [['a20-late'], ['b50-late']] : [[], []]);
    }
  });

  for (const backend of ['hashmap', 'lmdb'] as const) {
    it(`exactly-once under >= 5 injected failures, ${backend} backend: the committed pairs equal the reference`, async () => {
      const nLeft = 4000;
      const nRight = 2400;
      const plan = FaultPlan.seeded({ seed: backend === 'lmdb' ? 4712 : 4711, recordFaults: 5, recordRange: nLeft });
      const store = new TxnStore<string>();
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': 2,
        'state.backend.type': backend,
        'execution.checkpointing.interval': 20,
        'pipeline.auto-watermark-interval': 5,
        'restart-strategy.type': 'fixed-delay',
        'restart-strategy.fixed-delay.attempts': 50,
        'restart-strategy.fixed-delay.delay': 5,
      });
      const left = env
        .fromSource(recordSource(leftAt, nLeft, 20_000), 'lefts')
        .process(plan.failingProcess<Rec>())
        .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>())
        .keyBy((r) => r.k);
      const right = env
        .fromSource(recordSource(rightAt, nRight, 12_000), 'rights')
        .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>())
        .keyBy((r) => r.k);
      left.intervalJoin(right).between(-30, 30).process(pairs).uid('join').sinkTo(new TxnStoreSink(store));
      const result = await env.execute();
      const want = reference(range(nLeft).map(leftAt), range(nRight).map(rightAt), -30, 30);
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      expect(compareMultisets(store.committed, want), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });
  }

  it('rejects bounds that hold no timestamp and records without timestamps, naming the fix', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const a = env.fromElements(1, 2, 3).keyBy((n) => n);
    const b = env.fromElements(1, 2, 3).keyBy((n) => n);
    expect(() => a.intervalJoin(b).between(10, -10)).toThrow(/lower bound \(10 ms\) must not be above the upper bound \(-10 ms\)/);
    expect(() => a.intervalJoin(b).between(0, 1.5)).toThrow(/whole number of milliseconds/);
    expect(() => a.intervalJoin(b).between(5, 5).lowerBoundExclusive().process({ processElement: () => {} })).toThrow(/holds no timestamp/);
    a.intervalJoin(b)
      .between(-1, 1)
      .process<string>({ processElement: (x, y, _c, out) => out.collect(`${x}${y}`) })
      .sinkTo(new CollectSink<string>());
    await expect(env.execute()).rejects.toThrow(/has no event timestamp.*assignTimestampsAndWatermarks/);
  });
});

// ---------------------------------------------------------------------------------------
// Window joins and coGroup: the reference assigns windows with plain arithmetic.

type WindowSpec = { kind: 'sliding'; size: number; slide: number } | { kind: 'session'; gap: number };

function assignerOf(w: WindowSpec): WindowAssigner {
  return w.kind === 'session' ? EventTimeSessionWindows.withGap(w.gap) : SlidingEventTimeWindows.of(w.size, w.slide);
}

/** Each key's windows with the records of both inputs in them, as `key@start-end`. */
function windowContents(lefts: readonly Rec[], rights: readonly Rec[], w: WindowSpec): Map<string, { k: number; end: number; lefts: Rec[]; rights: Rec[] }> {
  const groups = new Map<string, { k: number; end: number; lefts: Rec[]; rights: Rec[] }>();
  const add = (r: Rec, start: number, end: number): void => {
    const id = `${r.k}@${start}-${end}`;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = { k: r.k, end, lefts: [], rights: [] }));
    (r.side === 'L' ? g.lefts : g.rights).push(r);
  };
  if (w.kind === 'sliding') {
    for (const r of [...lefts, ...rights]) {
      for (let start = r.ts - (r.ts % w.slide); start > r.ts - w.size; start -= w.slide) add(r, start, start + w.size);
    }
    return groups;
  }
  // Sessions: per key, over both inputs, a record within `gap` of the session's last one extends it.
  const byKey = new Map<number, Rec[]>();
  for (const r of [...lefts, ...rights]) byKey.set(r.k, [...(byKey.get(r.k) ?? []), r]);
  for (const recs of byKey.values()) {
    recs.sort((a, b) => a.ts - b.ts);
    let session: Rec[] = [];
    const close = (): void => {
      const start = session[0]!.ts;
      const end = session.at(-1)!.ts + w.gap;
      for (const r of session) add(r, start, end);
    };
    for (const r of recs) {
      if (session.length > 0 && r.ts >= session.at(-1)!.ts + w.gap) {
        close();
        session = [];
      }
      session.push(r);
    }
    if (session.length > 0) close();
  }
  return groups;
}

function joinReference(lefts: readonly Rec[], rights: readonly Rec[], w: WindowSpec): string[] {
  const out: string[] = [];
  for (const g of windowContents(lefts, rights, w).values()) for (const l of g.lefts) for (const r of g.rights) out.push(`${l.id},${r.id}@${g.end - 1}`);
  return out;
}

const ids = (rs: readonly Rec[]): string => rs.map((r) => r.id).sort((a, b) => a - b).join(' ');

describe('window join and coGroup', () => {
  const windows: WindowSpec[] = [
    { kind: 'sliding', size: 40, slide: 40 },
    { kind: 'sliding', size: 60, slide: 20 },
    { kind: 'session', gap: 9 },
  ];
  const timedSources = (env: StreamExecutionEnvironment, nLeft: number, nRight: number) => {
    const timed = (at: (i: number) => Rec, n: number, name: string) =>
      env.fromSource(recordSource(at, n), name).assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>());
    return [timed(leftAt, nLeft, 'lefts'), timed(rightAt, nRight, 'rights')] as const;
  };

  for (const [i, w] of windows.entries()) {
    const parallelism = 1 + (i % 3);
    const label = w.kind === 'session' ? `session windows (gap ${w.gap} ms)` : `sliding windows (${w.size} ms every ${w.slide} ms)`;
    it(`join over ${label}, parallelism ${parallelism}: every pair of the reference once, with the window's timestamp`, async () => {
      const [nLeft, nRight] = [2400, 1500];
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism, 'pipeline.auto-watermark-interval': 5 });
      const sink = new CollectSink<string>();
      const [lefts, rights] = timedSources(env, nLeft, nRight);
      lefts
        .join(rights)
        .where((l) => l.k)
        .equalTo((r) => r.k)
        .window(assignerOf(w))
        .apply((l, r) => `${l.id},${r.id}`)
        .process<string>({
          processElement(v, ctx, out) {
            out.collect(`${v}@${ctx.timestamp()}`);
          },
        })
        .sinkTo(sink);
      await env.execute();
      const want = joinReference(range(nLeft).map(leftAt), range(nRight).map(rightAt), w);
      expect(want.length).toBeGreaterThan(200);
      expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });

    it(`coGroup over ${label}, parallelism ${parallelism}: one call per key and window with both sides' records`, async () => {
      const [nLeft, nRight] = [2400, 1500];
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism, 'pipeline.auto-watermark-interval': 5 });
      const sink = new CollectSink<string>();
      const [lefts, rights] = timedSources(env, nLeft, nRight);
      lefts
        .coGroup(rights)
        .where((l) => l.k)
        .equalTo((r) => r.k)
        .window(assignerOf(w))
        .apply<string>((ls, rs, out) => {
          const k = (ls[0] ?? rs[0])!.k;
          expect([...ls, ...rs].every((r) => r.k === k)).toBe(true);
          out.collect(`${k}:${ids(ls)}|${ids(rs)}@${Math.max(...[...ls, ...rs].map((r) => r.ts))}`);
        })
        .process<string>({
          processElement(v, ctx, out) {
            // The window's last timestamp, at or after its latest record.
            expect(ctx.timestamp()).toBeGreaterThanOrEqual(Number(v.split('@')[1]));
            out.collect(`${v.split('@')[0]}@${ctx.timestamp()}`);
          },
        })
        .sinkTo(sink);
      await env.execute();
      const want = [...windowContents(range(nLeft).map(leftAt), range(nRight).map(rightAt), w).values()].map((g) => `${g.k}:${ids(g.lefts)}|${ids(g.rights)}@${g.end - 1}`);
      // Windows with records of one input only are called too (an inner join would skip them).
      expect(want.some((g) => g.includes(':|') || g.includes('|@'))).toBe(true);
      expect(compareMultisets(sink.values, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    });
  }

  it('a window join is exactly-once under >= 5 injected failures', async () => {
    const [nLeft, nRight] = [4000, 2400];
    const plan = FaultPlan.seeded({ seed: 4713, recordFaults: 5, recordRange: nLeft });
    const store = new TxnStore<string>();
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'execution.checkpointing.interval': 20,
      'pipeline.auto-watermark-interval': 5,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 50,
      'restart-strategy.fixed-delay.delay': 5,
    });
    const lefts = env
      .fromSource(recordSource(leftAt, nLeft, 20_000), 'lefts')
      .process(plan.failingProcess<Rec>())
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>());
    const rights = env.fromSource(recordSource(rightAt, nRight, 12_000), 'rights').assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>());
    lefts
      .join(rights)
      .where((l) => l.k)
      .equalTo((r) => r.k)
      .window(TumblingEventTimeWindows.of(50))
      .apply((l, r) => `${l.id},${r.id}@${50 * Math.floor(Math.max(l.ts, r.ts) / 50) + 49}`)
      .uid('join')
      .sinkTo(new TxnStoreSink(store));
    const result = await env.execute();
    const want = joinReference(range(nLeft).map(leftAt), range(nRight).map(rightAt), { kind: 'sliding', size: 50, slide: 50 });
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(store.committed, want), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});

describe('interval join across a savepoint', () => {
  it('stop with a savepoint mid-stream, restore at parallelism 2 -> 3: buffers and cleanup timers move with their key groups; every pair exactly once', { timeout: 60_000 }, async () => {
    const [nLeft, nRight] = [6000, 4000];
    const out = tempDir();
    const job = (parallelism: number, rate: number): StreamExecutionEnvironment => {
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': parallelism,
        'execution.checkpointing.interval': 20,
        'pipeline.auto-watermark-interval': 5,
        'restart-strategy.type': 'none',
      });
      const timed = (at: (i: number) => Rec, n: number, name: string) =>
        env
          .fromSource(recordSource(at, n, (rate * n) / nLeft), name)
          .uid(name)
          .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Rec>())
          .uid(`${name}-timestamps`)
          .keyBy((r) => r.k);
      timed(leftAt, nLeft, 'lefts')
        .intervalJoin(timed(rightAt, nRight, 'rights'))
        .between(-40, 40)
        .process(pairs)
        .uid('join')
        .sinkTo(new ExactlyOnceFileSink<string>(out))
        .uid('sink');
      return env;
    };
    // Slow enough (3 s of data) that the stop comes while the sources still read, also when the
    // first checkpoints take most of a second on a loaded machine.
    const first = job(2, 2_000);
    const running = new LocalExecutor(first.getJobGraph(), first.config, { log: () => {} });
    const done = running.run();
    while (running.checkpointStats.counts.completed < 3) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await running.stopWithSavepoint(tempDir(), false);
    expect((await done).status).toBe('FINISHED');
    const before = (await readCommittedLines(out)).length;
    const second = job(3, 200_000);
    const restored = new LocalExecutor(second.getJobGraph(), second.config, { log: () => {}, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
    expect((await restored.run()).status).toBe('FINISHED');
    const want = reference(range(nLeft).map(leftAt), range(nRight).map(rightAt), -40, 40);
    const got = await readCommittedLines(out);
    // The savepoint cut the pairs: some came before it, the rest after the restore.
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(want.length);
    expect(compareMultisets(got, want)).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
