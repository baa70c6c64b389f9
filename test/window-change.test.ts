// A job restored from a savepoint with another window: the restored windows fire at their own
// end with exactly their records (as in Flink, whose window namespace is the window), new
// records go to the new windows, and a change the restored state cannot take is a clear error.
import { describe, expect, it } from 'vitest';
import {
  CountEvictor,
  CountTrigger,
  EventTimeSessionWindows,
  type Evictor,
  type Trigger,
  type SingleOutputStream,
  SlidingEventTimeWindows,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type WindowAssigner,
} from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { inspectSnapshot, openSnapshot, type StateInspection } from '../src/cli/savepoint-inspect.js';
import { tempDirs } from './support/temp-dirs.js';

const KEYS = 7;
const tempDir = tempDirs('sluice-window-change-');

interface JobOptions {
  readonly assigner: WindowAssigner;
  /** process: every window lists its records; reduce / aggregate: sums (aggregate with merge() slices sliding windows). */
  readonly fn: 'process' | 'reduce' | 'aggregate';
  readonly records: number;
  readonly eventsPerSecond: number;
  readonly out: string;
  readonly parallelism: number;
  readonly latenessMs?: number;
  readonly trigger?: Trigger<number>;
  readonly evictor?: Evictor<number>;
}

/** Records 0..n-1 at event time n from one source subtask, key n % KEYS; a window writes "key:start:end:records" (process) or "key:start:end:sum". */
function windowJob(o: JobOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'none',
    'pipeline.auto-watermark-interval': 5,
  });
  let windowed = env
    // One source subtask: the savepoint cuts the records at one offset (with several, each split has its own).
    .fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond }), 'numbers')
    .setParallelism(1)
    .uid('numbers')
    .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n))
    .uid('timestamps')
    .keyBy((n) => n % KEYS)
    .window(o.assigner);
  if (o.latenessMs !== undefined) windowed = windowed.allowedLateness(o.latenessMs);
  if (o.trigger !== undefined) windowed = windowed.trigger(o.trigger);
  if (o.evictor !== undefined) windowed = windowed.evictor(o.evictor);
  const line = (key: number, w: { start: number; end: number }, v: string) => `${key}:${w.start}:${w.end}:${v}`;
  const windows: SingleOutputStream<string> =
    o.fn === 'process'
      ? windowed.process<string>({ process: (key, ctx, xs, out) => out.collect(line(key, ctx.window, [...xs].sort((a, b) => a - b).join(','))) })
      : o.fn === 'reduce'
        ? windowed.reduce<string>((a, b) => a + b, { process: (key, ctx, sums, out) => out.collect(line(key, ctx.window, String(sums[0]))) })
        : windowed.aggregate<number, number, string>(
            { createAccumulator: () => 0, add: (n: number, acc: number) => acc + n, getResult: (acc: number) => acc, merge: (a: number, b: number) => a + b },
            { process: (key, ctx, sums, out) => out.collect(line(key, ctx.window, String(sums[0]))) },
          );
  windows.uid('windows').sinkTo(new ExactlyOnceFileSink<string>(o.out)).uid('sink');
  return env;
}

/** Runs a job until it completed two checkpoints (and `until`, when given), then stops it with a savepoint (no drain: windows stay open). */
async function runAndStop(o: JobOptions, restoreFrom?: string, until?: () => Promise<boolean>): Promise<string> {
  const env = windowJob(o);
  const executor = new LocalExecutor(env.getJobGraph(), env.config, {
    log: () => {},
    ...(restoreFrom === undefined ? {} : { restoreFrom: { path: restoreFrom, allowNonRestoredState: false } }),
  });
  const done = executor.run();
  while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
  if (until !== undefined) while (!(await until())) await new Promise((r) => setTimeout(r, 20));
  const savepoint = await executor.stopWithSavepoint(tempDir(), false);
  expect((await done).status).toBe('FINISHED');
  return savepoint.pointer;
}

async function runToEnd(o: JobOptions, restoreFrom: string): Promise<void> {
  const env = windowJob(o);
  const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: restoreFrom, allowNonRestoredState: false } });
  expect((await executor.run()).status).toBe('FINISHED');
}

/** The window operator's namespaced states in a snapshot, every entry sampled. */
async function windowStates(pointer: string): Promise<StateInspection[]> {
  const i = await inspectSnapshot(await openSnapshot(pointer), { operatorUid: 'windows', samples: 1_000_000 });
  return i.operators[0]!.keyedState?.states.filter((s) => s.namespaced) ?? [];
}

interface Window {
  readonly key: number;
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

function parse(lines: readonly string[]): Window[] {
  return lines.map((l) => {
    const [key, start, end, value] = l.split(':') as [string, string, string, string];
    return { key: Number(key), start: Number(start), end: Number(end), value };
  });
}

/**
 * Checks windows that list their records against records 0..n-1: each record in exactly one
 * window, of its key, inside it; tumbling windows of `sizesMs` aligned to their size; per key,
 * the records of the first size all come before those of the second (the savepoint's cut).
 */
function checkTumblingRecords(windows: readonly Window[], records: number, sizesMs: readonly [number, number]): { bySize: number[] } {
  const seen = new Uint8Array(records);
  const lastOfFirst = new Array<number>(KEYS).fill(-1);
  const firstOfSecond = new Array<number>(KEYS).fill(Number.POSITIVE_INFINITY);
  const bySize = [0, 0];
  for (const w of windows) {
    const size = w.end - w.start;
    const which = sizesMs.indexOf(size);
    expect(which, `window ${JSON.stringify(w)} has neither size ${sizesMs.join(' nor ')}`).toBeGreaterThanOrEqual(0);
    expect(w.start % size, `window ${JSON.stringify(w)} is aligned`).toBe(0);
    bySize[which]!++;
    for (const n of w.value.split(',').map(Number)) {
      expect(n % KEYS, `record ${n} in a window of key ${w.key}`).toBe(w.key);
      expect(n >= w.start && n < w.end, `record ${n} inside [${w.start}, ${w.end})`).toBe(true);
      expect(seen[n], `record ${n} in one window only`).toBe(0);
      seen[n] = 1;
      if (which === 0) lastOfFirst[w.key] = Math.max(lastOfFirst[w.key]!, n);
      else firstOfSecond[w.key] = Math.min(firstOfSecond[w.key]!, n);
    }
  }
  const missing = [...seen.keys()].filter((n) => seen[n] === 0);
  expect(missing.slice(0, 10), `${missing.length} records missing`).toEqual([]);
  for (let k = 0; k < KEYS; k++) expect(lastOfFirst[k]!, `key ${k}: the first size's records come first`).toBeLessThan(firstOfSecond[k]!);
  return { bySize };
}

describe('a job restored with another window size', () => {
  it('tumbling 50 ms -> 80 ms, records listed, parallelism 2 -> 3: the restored windows fire at their own end; every record exactly once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const first = { assigner: TumblingEventTimeWindows.of(50), fn: 'process', records, eventsPerSecond: 10_000, out, parallelism: 2 } as const;
    const savepoint = await runAndStop(first);
    const open = await windowStates(savepoint);
    expect(open.map((s) => s.name)).toEqual(['_window-contents@size=50ms']);
    expect(open[0]!.entries, 'the savepoint holds open windows').toBeGreaterThan(0);
    await runToEnd({ ...first, assigner: TumblingEventTimeWindows.of(80), parallelism: 3, eventsPerSecond: 200_000 }, savepoint);
    const windows = parse(await readCommittedLines(out));
    const { bySize } = checkTumblingRecords(windows, records, [50, 80]);
    expect(bySize[1], 'new windows have the new size').toBeGreaterThan(0);
    // Windows of 50 ms that were open at the savepoint fired after the restore, with their records only.
    const restoredStarts = new Set(open[0]!.samples.map((s) => s.namespace));
    const firedRestored = windows.filter((w) => w.end - w.start === 50 && restoredStarts.has(w.start));
    expect(firedRestored.length).toBeGreaterThan(0);
  });

  it('tumbling 80 ms -> 50 ms with reduce: per key the sums of all windows add up to the sums of its records', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const first = { assigner: TumblingEventTimeWindows.of(80), fn: 'reduce', records, eventsPerSecond: 10_000, out, parallelism: 2 } as const;
    const savepoint = await runAndStop(first);
    expect((await windowStates(savepoint))[0]!.entries).toBeGreaterThan(0);
    await runToEnd({ ...first, assigner: TumblingEventTimeWindows.of(50), eventsPerSecond: 200_000 }, savepoint);
    const windows = parse(await readCommittedLines(out));
    const expected = new Array<number>(KEYS).fill(0);
    for (let n = 0; n < records; n++) expected[n % KEYS]! += n;
    const got = new Array<number>(KEYS).fill(0);
    const ids = new Set<string>();
    for (const w of windows) {
      const id = `${w.key}:${w.start}:${w.end}`;
      expect(ids.has(id), `window ${id} fired once`).toBe(false);
      ids.add(id);
      expect([50, 80]).toContain(w.end - w.start);
      got[w.key]! += Number(w.value);
    }
    expect(got).toEqual(expected);
    expect(windows.some((w) => w.end - w.start === 80) && windows.some((w) => w.end - w.start === 50)).toBe(true);
  });

  it('tumbling -> session windows: the restored windows fire; sessions take the new records', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const first = { assigner: TumblingEventTimeWindows.of(50), fn: 'process', records, eventsPerSecond: 10_000, out, parallelism: 2 } as const;
    const savepoint = await runAndStop(first);
    // One record per key every 7 ms: a gap of 3 ms makes a session per record.
    await runToEnd({ ...first, assigner: EventTimeSessionWindows.withGap(3), eventsPerSecond: 200_000 }, savepoint);
    const windows = parse(await readCommittedLines(out));
    const seen = new Uint8Array(records);
    for (const w of windows) {
      for (const n of w.value.split(',').map(Number)) {
        expect(seen[n], `record ${n} once`).toBe(0);
        seen[n] = 1;
        expect(n >= w.start && n < w.end).toBe(true);
      }
      if (w.end - w.start !== 50) expect(w.end - w.start).toBe(3);
    }
    expect(seen.indexOf(0), 'no record missing').toBe(-1);
  });

  it('session -> tumbling windows is a clear error naming both and the fix', { timeout: 60_000 }, async () => {
    const first = { assigner: EventTimeSessionWindows.withGap(20), fn: 'process', records: 100_000, eventsPerSecond: 10_000, out: tempDir(), parallelism: 2 } as const;
    const savepoint = await runAndStop(first);
    const env = windowJob({ ...first, assigner: TumblingEventTimeWindows.of(50) });
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: savepoint, allowNonRestoredState: false } });
    await expect(executor.run()).rejects.toThrow(/open session windows, but this job's window is tumbling windows of 50 ms.*restore with session windows, or stop the old job with `sluice stop --drain`/s);
  });

  it('sliced sliding windows restored with another size is a clear error naming both and the fix', { timeout: 60_000 }, async () => {
    const first = { assigner: SlidingEventTimeWindows.of(50, 10), fn: 'aggregate', records: 100_000, eventsPerSecond: 10_000, out: tempDir(), parallelism: 2 } as const;
    const savepoint = await runAndStop(first);
    expect((await windowStates(savepoint)).map((s) => s.name)).toEqual(['_window-slices@size=50ms,slide=10ms']);
    const restore = (o: JobOptions) => {
      const env = windowJob(o);
      return new LocalExecutor(env.getJobGraph(), env.config, { log: () => {}, restoreFrom: { path: savepoint, allowNonRestoredState: false } }).run();
    };
    await expect(restore({ ...first, assigner: SlidingEventTimeWindows.of(60, 10) })).rejects.toThrow(
      /windows of a sliding window \(size=50ms,slide=10ms\) as slices.*this job's window \(sliding windows of 60 ms every 10 ms \(event time\)\) cannot take them: restore with the same window assigner/s,
    );
    // The same window with a process function (every record kept) cannot take accumulators either.
    await expect(restore({ ...first, fn: 'process' })).rejects.toThrow(/as slices.*\(sliding windows of 50 ms every 10 ms \(event time\)\) cannot take them/s);
  });
});

describe('a job restored with another allowed lateness', () => {
  /**
   * Runs a job with `fromMs` of allowed lateness, restores it with `toMs`, and stops the second
   * job once its windows are far past the restored ones: by then every restored window is
   * gone from the state (a window whose cleanup timer was set under the old lateness was kept
   * for ever).
   */
  async function restoredWindowsLeft(fromMs: number, toMs: number): Promise<{ restored: number; left: number[] }> {
    const out = tempDir();
    const first = { assigner: TumblingEventTimeWindows.of(50), fn: 'reduce', records: 1_000_000, eventsPerSecond: 10_000, out, parallelism: 2, latenessMs: fromMs } as const;
    const savepoint = await runAndStop(first);
    const before = await windowStates(savepoint);
    const restoredStarts = before.flatMap((s) => s.samples.map((e) => e.namespace!));
    const lastRestored = Math.max(...restoredStarts);
    const farPast = async () => parse(await readCommittedLines(out)).some((w) => w.start > lastRestored + fromMs + toMs + 500);
    const second = await runAndStop({ ...first, latenessMs: toMs, eventsPerSecond: 40_000 }, savepoint, farPast);
    const after = await windowStates(second);
    const left = after.flatMap((s) => s.samples.map((e) => e.namespace!)).filter((start) => start <= lastRestored);
    return { restored: restoredStarts.length, left };
  }

  it('smaller (1000 ms -> 0): the windows kept for the old lateness are cleared at their old cleanup time', { timeout: 60_000 }, async () => {
    const { restored, left } = await restoredWindowsLeft(1_000, 0);
    expect(restored, 'the savepoint holds windows kept for lateness').toBeGreaterThan(KEYS * 2);
    expect(left).toEqual([]);
  });

  it('larger (0 -> 200 ms): the restored windows get a cleanup timer when they fire', { timeout: 60_000 }, async () => {
    const { restored, left } = await restoredWindowsLeft(0, 200);
    expect(restored).toBeGreaterThan(0);
    expect(left).toEqual([]);
  });
});

describe('a job restored with another trigger or evictor', () => {
  it('with the same CountTrigger, parallelism 2 -> 3: the trigger\'s counts go on where they were, every firing exactly once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const first = { assigner: TumblingEventTimeWindows.of(50), fn: 'process', records, eventsPerSecond: 10_000, out, parallelism: 2, trigger: CountTrigger.of(3) } as const;
    const savepoint = await runAndStop(first);
    await runToEnd({ ...first, parallelism: 3, eventsPerSecond: 200_000 }, savepoint);
    // Reference: a window of a key with m records fires with 3, 6, ... <= m of them, each firing
    // holding the records of the one before (which ones come first depends on how the two
    // timestamp subtasks' records interleave).
    const perWindow = new Map<string, number>();
    for (let n = 0; n < records; n++) {
      const id = `${n % KEYS}:${n - (n % 50)}:${n - (n % 50) + 50}`;
      perWindow.set(id, (perWindow.get(id) ?? 0) + 1);
    }
    const firings = new Map<string, number[][]>();
    for (const w of parse(await readCommittedLines(out))) {
      const id = `${w.key}:${w.start}:${w.end}`;
      const ns = w.value.split(',').map(Number);
      for (const n of ns) expect(n % KEYS === w.key && n >= w.start && n < w.end, `record ${n} in window ${id}`).toBe(true);
      firings.set(id, [...(firings.get(id) ?? []), ns]);
    }
    for (const [id, m] of perWindow) {
      const fired = (firings.get(id) ?? []).sort((a, b) => a.length - b.length);
      expect(fired.map((f) => f.length), `window ${id}`).toEqual(Array.from({ length: Math.floor(m / 3) }, (_, i) => 3 * (i + 1)));
      for (let i = 1; i < fired.length; i++) expect(fired[i - 1]!.every((n) => fired[i]!.includes(n)), `window ${id}: each firing holds the one before`).toBe(true);
    }
    expect(firings.size).toBe([...perWindow.values()].filter((m) => m >= 3).length);
  });

  it('adding an evictor, or removing a trigger from session windows, is a clear error naming the fix', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 12_000;
    const plain = { assigner: TumblingEventTimeWindows.of(50), fn: 'reduce', records, eventsPerSecond: 10_000, out, parallelism: 2 } as const;
    const savepoint = await runAndStop(plain);
    await expect(runToEnd({ ...plain, evictor: CountEvictor.of(2) }, savepoint)).rejects.toThrow(/open windows kept as accumulators.*restore without the evictor, or stop the old job with `sluice stop --drain`/);

    const sessions = { ...plain, assigner: EventTimeSessionWindows.withGap(20), trigger: CountTrigger.of(2), out: tempDir() } as const;
    const sessionSavepoint = await runAndStop(sessions);
    const { trigger: _dropped, ...withoutTrigger } = sessions;
    await expect(runToEnd(withoutTrigger, sessionSavepoint)).rejects.toThrow(/open windows of a window with a trigger or evictor.*restore with the same trigger and evictor, or stop the old job with `sluice stop --drain`/);
  });
});
