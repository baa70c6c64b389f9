// Stop-with-savepoint without drain (a synchronous savepoint): nothing after the savepoint may
// change the output, so the first run's output plus the resumed run's is exactly a run without
// a stop. Two sources run at different speeds in event time: when the first of them ends
// after the savepoint, the window must not see the other's watermark alone (windows would fire
// with half their records, and fire again after the restore), and no periodic watermark may
// pass the savepoint.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy, type Collector } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { compareMultisets } from './support/txn-store-sink.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-stop-no-drain-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const COUNT = 6000;
/** Event time of number n: 10 ms apart, so a 1 s window holds 100 numbers of each source. */
const eventTime = (n: number): number => n * 10;

/** Counts per 1 s window over a fast and a slow source; written at once (not transactional), as "end:count". */
function job(out: string[], checkpoints: string, rates: { fast: number; slow: number }, inSource = false): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 100, 'execution.checkpointing.dir': checkpoints });
  const timed = WatermarkStrategy.forBoundedOutOfOrderness<number>(0).withTimestampAssigner(eventTime);
  // Watermarks made after the source by an operator, or in the source (fromSource with the strategy).
  const source = (name: string, eventsPerSecond: number) =>
    inSource
      ? env.fromSource(numberSource({ count: COUNT, eventsPerSecond }), timed, name).uid(name)
      : env.fromSource(numberSource({ count: COUNT, eventsPerSecond }), name).uid(name).assignTimestampsAndWatermarks(timed).uid(`${name}-wm`);
  const fast = source('fast', rates.fast);
  const slow = source('slow', rates.slow);
  fast
    .union(slow)
    .keyBy(() => 0)
    .window(TumblingEventTimeWindows.of(1000))
    .aggregate(
      { createAccumulator: () => 0, add: (_n: number, c: number) => c + 1, getResult: (c: number) => c, merge: (a: number, b: number) => a + b },
      { process: (_k: number, ctx, counts, o: Collector<string>) => o.collect(`${ctx.window.end}:${counts[0]}`) },
    )
    .uid('count')
    .sinkTo({ createWriter: () => ({ write: (line: string) => void out.push(line) }) })
    .uid('sink');
  return env;
}

/** Every window holds 100 numbers of each source. */
const reference = (): string[] => Array.from({ length: COUNT / 100 }, (_, w) => `${(w + 1) * 1000}:200`);

describe('stop-with-savepoint without drain', () => {
  it.each([
    ['by an operator after each source', false],
    ['in the sources (fromSource with the strategy)', true],
  ])('emits nothing after the savepoint, watermarks made %s: the stopped run and the resumed run together give each window once, complete', { timeout: 60_000 }, async (_where, inSource) => {
    for (let round = 0; round < 3; round++) {
      const out: string[] = [];
      // The fast source has 3 s of data: the stop comes while both still read, also on a loaded machine.
      const env = job(out, tempDir(), { fast: 2000, slow: 500 }, inSource);
      const first = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
      const done = first.run();
      while (first.checkpointStats.counts.completed < 3) await new Promise((r) => setTimeout(r, 5));
      const savepoint = await first.stopWithSavepoint(tempDir(), false);
      expect((await done).status).toBe('FINISHED');
      const stoppedWith = out.length;
      const resumedEnv = job(out, tempDir(), { fast: 100_000, slow: 100_000 }, inSource);
      const second = new LocalExecutor(resumedEnv.getJobGraph(), resumedEnv.config, { log: () => {}, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
      expect((await second.run()).status).toBe('FINISHED');
      expect(compareMultisets(out, reference()), `round ${round}; the stopped run wrote ${stoppedWith} window(s): ${out.slice(0, stoppedWith).join(' ')}; the resumed run began with ${out.slice(stoppedWith, stoppedWith + 3).join(' ')}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    }
  });

  it('a job whose sources already ended (its final checkpoint still committing): the stop is refused at once, naming why, and the job finishes', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 20 });
    let commits = 0;
    env
      .fromSource(numberSource({ count: 100 }), 'numbers')
      .sinkTo({
        createWriter: () => ({
          write: () => {},
          // The final checkpoint's commit takes a while: the job is finishing meanwhile.
          notifyCheckpointComplete: () => new Promise<void>((r) => setTimeout(() => r(void commits++), 300)),
        }),
      });
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = executor.run();
    while (executor.progress().sourceRecords < 100 || executor.checkpointStats.counts.completed < 1) await new Promise((r) => setTimeout(r, 2));
    await expect(executor.stopWithSavepoint(tempDir(), false)).rejects.toThrow(/the job is finishing: its sources have ended their data/);
    expect((await done).status).toBe('FINISHED');
    expect(commits).toBeGreaterThan(0);
  });
});
