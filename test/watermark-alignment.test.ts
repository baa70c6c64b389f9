import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, WatermarkStrategy } from '../src/index.js';
import type { InputStatus, ReaderOutput, Source, SourceReader } from '../src/api/source.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import type { MetricSample } from '../src/metrics/metric-group.js';
import { SourceStreamTask } from '../src/runtime/task/source-stream-task.js';

const RECORDS = 3000;

/**
 * Two sources read at the same rate of records, one 100 times faster in event time (a backlog
 * next to a live feed): how far the fast source's event time ran ahead of the slow one's while
 * the slow one was still reading.
 */
async function leadOfFastSource(aligned: boolean): Promise<{ leadMs: number; records: number; slowDone: boolean; driftMaxMs: number }> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'pipeline.auto-watermark-interval': 5 });
  // Watermarks after every record, so the measure does not depend on how many records fall
  // between two periodic watermarks on a busy machine.
  const timed = (stepMs: number): WatermarkStrategy<number> => {
    const s = WatermarkStrategy.forGenerator<number>(() => ({ onEvent: (_n, t, out) => out.emitWatermark(t - 1), onPeriodicEmit: () => {} })).withTimestampAssigner((n) => n * stepMs);
    return aligned ? s.withWatermarkAlignment('feeds', 1_000, 10) : s;
  };
  // Measured where the sources emit (the maps are chained to them; both run in this process),
  // not downstream, where the channels' buffers reorder the two streams.
  let latestSlow = 0;
  let slowSeen = 0;
  let leadMs = 0;
  let records = 0;
  const fast = env.fromSource(numberSource({ count: RECORDS, eventsPerSecond: 3_000 }), timed(100), 'fast').map((n) => {
    if (slowSeen < RECORDS) leadMs = Math.max(leadMs, n * 100 - latestSlow);
    return n;
  });
  const slow = env.fromSource(numberSource({ count: RECORDS, eventsPerSecond: 3_000 }), timed(1), 'slow').map((n) => {
    latestSlow = n;
    slowSeen++;
    return n;
  });
  fast.union(slow).sinkTo({ createWriter: () => ({ write: () => void records++ }) });
  // The fast source's watermarkAlignmentDrift gauge (Flink's), sampled while the job runs.
  let fastTask: SourceStreamTask | undefined;
  let driftMaxMs = 0;
  const sampler = setInterval(() => {
    const samples: MetricSample[] = [];
    fastTask?.readerMetrics.collect(samples);
    for (const m of samples) if (m.name === 'watermarkAlignmentDrift') driftMaxMs = Math.max(driftMaxMs, m.value);
  }, 2);
  const client = env.executeAsync(undefined, {
    log: () => {},
    onAttemptStarted: (a) => {
      fastTask = a.tasks.find((t): t is SourceStreamTask => t instanceof SourceStreamTask && t.name.startsWith('fast'));
    },
  });
  const result = await client.result.finally(() => clearInterval(sampler));
  expect(result.status).toBe('FINISHED');
  return { leadMs, records, slowDone: slowSeen === RECORDS, driftMaxMs };
}

describe('watermark alignment (withWatermarkAlignment on fromSource)', () => {
  it('a source far ahead in event time waits for the slow one of its group: its lead stays near the allowed drift; every record arrives', { timeout: 30_000 }, async () => {
    const unaligned = await leadOfFastSource(false);
    const aligned = await leadOfFastSource(true);
    // Without alignment the fast source reads its 300 s of event time while the slow one reads 3 s.
    expect(unaligned.leadMs).toBeGreaterThan(100_000);
    // With it: the drift (1 s), plus how far the slow source moved since its last report (10 ms
    // of reading: 30 ms of its event time; more when the machine stalls).
    expect(aligned.leadMs).toBeLessThan(10_000);
    // Its drift gauge showed it ahead of the group's least, by about the allowed drift; unaligned it has none.
    expect(aligned.driftMaxMs).toBeGreaterThan(200);
    expect(aligned.driftMaxMs).toBeLessThan(10_000);
    expect(unaligned.driftMaxMs).toBe(0);
    for (const r of [aligned, unaligned]) {
      expect(r.records).toBe(2 * RECORDS);
      expect(r.slowDone).toBe(true);
    }
  });

  it('is refused where it cannot pause a source, and checks its arguments', () => {
    const env = StreamExecutionEnvironment.create();
    const s = WatermarkStrategy.forMonotonousTimestamps<number>().withWatermarkAlignment('g', 1_000);
    expect(() => env.fromElements(1).assignTimestampsAndWatermarks(s)).toThrow(/watermark alignment \(group 'g'\) pauses sources.*env\.fromSource\(source, strategy, name\)/);
    expect(() => WatermarkStrategy.forMonotonousTimestamps().withWatermarkAlignment('', 1)).toThrow(/non-empty name/);
    expect(() => WatermarkStrategy.forMonotonousTimestamps().withWatermarkAlignment('g', -1)).toThrow(/drift/);
    expect(() => WatermarkStrategy.forMonotonousTimestamps().withWatermarkAlignment('g', 1, 0)).toThrow(/update interval/);
  });

  it('a reader of several splits that cannot pause one fails the job when a split runs ahead (as Flink); pipeline.watermark-alignment.allow-unaligned-source-splits lets it align as a whole', async () => {
    /** Two splits read in turn through their own outputs: 'fast' moves 100 ms of event time a record, 'slow' 1 ms; no pauseOrResumeSplits. */
    const twoSplits: Source<{ split: string; t: number }, string> = {
      boundedness: 'bounded',
      createSplits: () => ['fast', 'slow'],
      createReader: (): SourceReader<{ split: string; t: number }, string> => {
        const next = new Map<string, number>();
        let turn = 0;
        // Every 50 records the reader has nothing for a millisecond, so the group's announcements
        // (every 10 ms) reach it long before the end of the data however loaded the machine is.
        let sinceRest = 0;
        return {
          addSplits: (splits) => {
            for (const s of splits) next.set(s, 0);
          },
          noMoreSplits: () => {},
          pollNext: (output: ReaderOutput<{ split: string; t: number }>): InputStatus => {
            const open = [...next].filter(([, i]) => i < 2_000);
            if (open.length === 0) return 'end';
            if (++sinceRest > 50) {
              sinceRest = 0;
              return 'nothing';
            }
            const [split, i] = open[turn++ % open.length]!;
            next.set(split, i + 1);
            const t = split === 'fast' ? i * 100 : i;
            output.createOutputForSplit(split).collect({ split, t }, t);
            return 'more';
          },
          isAvailable: () => new Promise<void>((resolve) => setTimeout(resolve, 1)),
          snapshotState: () => [...next.keys()],
        };
      },
    };
    const run = async (allow: boolean): Promise<{ status: string; failure: string; records: number }> => {
      const env = StreamExecutionEnvironment.create({
        'pipeline.auto-watermark-interval': 5,
        'restart-strategy.type': 'none',
        ...(allow ? { 'pipeline.watermark-alignment.allow-unaligned-source-splits': true } : {}),
      });
      let records = 0;
      env
        .fromSource(twoSplits, WatermarkStrategy.forMonotonousTimestamps<{ split: string; t: number }>().withWatermarkAlignment('splits', 1_000, 10), 'two splits')
        .sinkTo({ createWriter: () => ({ write: () => void records++ }) });
      const result = await env.executeAsync(undefined, { log: () => {} }).result.catch((e: Error) => ({ status: 'FAILED', failure: e }));
      const failure = 'failure' in result && result.failure !== undefined ? String((result.failure as Error).message ?? result.failure) : '';
      return { status: result.status, failure, records };
    };
    const strict = await run(false);
    expect(strict.status).toBe('FAILED');
    expect(strict.failure).toMatch(/watermark alignment \(group 'splits'\): a split of this reader is ahead of what the group allows.*no pauseOrResumeSplits.*allow-unaligned-source-splits: true/s);
    const allowed = await run(true);
    expect(allowed).toMatchObject({ status: 'FINISHED', records: 4_000 });
  });
});
