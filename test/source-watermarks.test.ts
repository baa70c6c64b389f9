import { describe, expect, it } from 'vitest';
import { OutputTag, StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../src/index.js';
import type { InputStatus, ReaderOutput, Source, SourceReader } from '../src/api/source.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

/** One record of a split: its event time. */
interface Ev {
  readonly split: string;
  readonly t: number;
}

interface Split {
  readonly id: string;
  /** Event time grows by this much a record. */
  readonly stepMs: number;
  readonly records: number;
  next: number;
}

/**
 * Two splits read by one reader at the same rate of records, one ten times faster in event time
 * than the other (a partition catching up on a backlog next to one that is live): each split's
 * own timestamps only grow, but interleaved the slow split's fall far behind the fast one's.
 */
class TwoSpeedSource implements Source<Ev, Split> {
  readonly boundedness = 'bounded' as const;
  constructor(private readonly records: number) {}
  createSplits(): Split[] {
    return [
      { id: 'fast', stepMs: 100, records: this.records, next: 0 },
      { id: 'slow', stepMs: 10, records: this.records, next: 0 },
    ];
  }
  assignSplit(): number {
    return 0;
  }
  createReader(): SourceReader<Ev, Split> {
    const splits: Split[] = [];
    let turn = 0;
    return {
      addSplits: (s) => void splits.push(...s.map((x) => ({ ...x }))),
      noMoreSplits: () => {},
      pollNext(output: ReaderOutput<Ev>): InputStatus {
        const open = splits.filter((s) => s.next < s.records);
        if (open.length === 0) return 'end';
        const s = open[turn++ % open.length]!;
        const t = s.next * s.stepMs;
        s.next++;
        output.createOutputForSplit(s.id).collect({ split: s.id, t }, t);
        if (s.next === s.records) output.releaseOutputForSplit(s.id);
        return 'more';
      },
      isAvailable: () => Promise.resolve(),
      snapshotState: () => splits.map((s) => ({ ...s })),
    };
  }
}

const RECORDS = 20_000;
const WINDOW_MS = 1_000;

/** Independent reference: records per (split, window start). */
function reference(): string[] {
  const counts = new Map<string, number>();
  for (const [split, step] of [['fast', 100], ['slow', 10]] as const) {
    for (let i = 0; i < RECORDS; i++) {
      const k = `${split}@${Math.floor((i * step) / WINDOW_MS) * WINDOW_MS}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  return [...counts].map(([k, c]) => `${k}=${c}`).sort();
}

async function windowCounts(perSplit: boolean): Promise<{ counts: string[]; late: number }> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 1 });
  const strategy = WatermarkStrategy.forMonotonousTimestamps<Ev>();
  const events = perSplit
    ? env.fromSource(new TwoSpeedSource(RECORDS), strategy, 'two speeds')
    : env.fromSource(new TwoSpeedSource(RECORDS), 'two speeds').assignTimestampsAndWatermarks(strategy);
  const lateTag = new OutputTag<Ev>('late');
  const windowed = events
    .keyBy((e) => e.split)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .sideOutputLateData(lateTag)
    .aggregate<number, number, string>(
      { createAccumulator: () => 0, add: (_e: Ev, n: number) => n + 1, getResult: (n: number) => n, merge: (a: number, b: number) => a + b },
      { process: (split, ctx, counts, out) => out.collect(`${split}@${ctx.window.start}=${counts[0]}`) },
    );
  const sink = new CollectSink<string>();
  const late = new CollectSink<Ev>();
  windowed.sinkTo(sink);
  windowed.getSideOutput(lateTag).sinkTo(late);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return { counts: [...sink.values].sort(), late: late.values.length };
}

describe('fromSource(source, watermarkStrategy, name): watermarks per split', () => {
  it('a split far behind another in event time loses no record to lateness: the window counts equal the reference', async () => {
    const { counts, late } = await windowCounts(true);
    expect(late).toBe(0);
    expect(counts).toEqual(reference());
  });

  it('(the same job with one watermark for the whole stream, after the source, drops the slow split as late: what per-split watermarks prevent)', async () => {
    const { counts, late } = await windowCounts(false);
    expect(late).toBeGreaterThan(RECORDS / 2);
    expect(counts).not.toEqual(reference());
  });

  it('refuses a second argument that is neither a WatermarkStrategy nor a name', () => {
    const env = StreamExecutionEnvironment.create();
    expect(() => env.fromSource(new TwoSpeedSource(1), {} as WatermarkStrategy<Ev>, 'x')).toThrow(/fromSource\('x'\): the second argument must be a WatermarkStrategy/);
  });
});
