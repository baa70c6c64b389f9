import { CountPerKey, countReference } from './support/counting-job.js';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { SinkWriter, SinkWriterContext } from '../src/api/sink.js';
import type { TwoPhaseCommitState } from '../src/api/two-phase-commit-sink.js';
import { CollectSink, ExactlyOnceFileSink, FileSource, committedFileName, readCommittedLines, type FileTransaction } from '../src/connectors/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';

let root: string;
let dirs = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sluice-eo-file-sink-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function freshDir(): string {
  return join(root, `out-${dirs++}`);
}

function ctx(subtaskIndex: number, attemptNumber = 0, checkpointing = true, parallelism = 1): SinkWriterContext {
  return { subtaskIndex, parallelism, attemptNumber, checkpointing };
}

async function listing(dir: string): Promise<{ visible: string[]; hidden: string[] }> {
  const names = (await readdir(dir)).sort();
  return { visible: names.filter((n) => !n.startsWith('.')), hidden: names.filter((n) => n.startsWith('.')) };
}

async function writeAll<T>(w: SinkWriter<T>, values: readonly T[]): Promise<void> {
  for (const v of values) await w.write(v, undefined);
}

/** A checkpoint as the sink operator drives it: prepare, snapshot (the state to restore from). */
async function checkpoint<T>(w: SinkWriter<T>, id: number): Promise<unknown[]> {
  const prepared = w.prepareCommit?.(id);
  const state = w.snapshotState?.(id) ?? [];
  await prepared;
  return state;
}

function pendingTxns(state: readonly unknown[]): FileTransaction[] {
  return (state as TwoPhaseCommitState<FileTransaction>[]).flatMap((s) => s.pending.map(([, t]) => t));
}

describe('ExactlyOnceFileSink: transaction lifecycle', () => {
  it('keeps records hidden until the checkpoint completes, then commits them atomically; commit is idempotent', async () => {
    const dir = freshDir();
    const sink = new ExactlyOnceFileSink<string>(dir, { bufferBytes: 4 });
    const w = await sink.createWriter(ctx(0), []);
    await writeAll(w, ['a', 'b', 'c']);
    let l = await listing(dir);
    expect(l.visible).toEqual([]);
    expect(l.hidden).toHaveLength(1);
    expect(l.hidden[0]).toMatch(/^\.part-0-0-0-[0-9a-f]+\.inprogress$/);

    const state = await checkpoint(w, 1);
    const [txn] = pendingTxns(state);
    expect(txn).toBeDefined();
    expect(JSON.parse(JSON.stringify(txn))).toEqual(txn); // plain data
    l = await listing(dir);
    expect(l.visible).toEqual([]);
    expect(l.hidden).toEqual([`.${committedFileName(txn!)}.pending`]);
    expect(await readCommittedLines(dir)).toEqual([]);

    await writeAll(w, ['d']); // the next transaction, after the barrier
    await w.notifyCheckpointComplete!(1);
    l = await listing(dir);
    expect(l.visible).toEqual([committedFileName(txn!)]);
    expect(await readCommittedLines(dir)).toEqual(['a', 'b', 'c']);

    // Again, twice at once, and as a recovery after a restore: nothing changes.
    await sink.commit(txn!);
    await Promise.all([sink.commit(txn!), sink.commit(txn!)]);
    await new ExactlyOnceFileSink<string>(dir).commit(txn!);
    const again = await new ExactlyOnceFileSink<string>(dir).createWriter(ctx(0, 1), state);
    expect(await readCommittedLines(dir)).toEqual(['a', 'b', 'c']);
    await again.close!();

    await w.close!(); // aborts the open transaction holding 'd'
    l = await listing(dir);
    expect(l).toEqual({ visible: [committedFileName(txn!)], hidden: [] });
  });

  it('abort deletes the in-progress and the pending file of the transaction, and nothing committed', async () => {
    const dir = freshDir();
    const sink = new ExactlyOnceFileSink<string>(dir, { bufferBytes: 1 });
    const w = await sink.createWriter(ctx(0), []);
    await writeAll(w, ['x']);
    const s1 = await checkpoint(w, 1);
    await w.notifyCheckpointComplete!(1);
    await writeAll(w, ['y']);
    const s2 = await checkpoint(w, 2); // pre-committed, checkpoint 2 never completes
    await writeAll(w, ['z']); // in progress
    expect((await listing(dir)).hidden).toHaveLength(2);
    expect(pendingTxns(s2)).toHaveLength(1); // checkpoint 1 committed and left the state
    await sink.abort(pendingTxns(s2)[0]!);
    await w.close!();
    expect(await listing(dir)).toEqual({ visible: [committedFileName(pendingTxns(s1)[0]!)], hidden: [] });
    expect(await readCommittedLines(dir)).toEqual(['x']);
    // Aborting twice is fine.
    await sink.abort(pendingTxns(s2)[0]!);
    expect(await readCommittedLines(dir)).toEqual(['x']);
  });

  it('after a crash, a restored writer (new process) commits the pending transactions, aborts the open one and deletes lingering files', async () => {
    const dir = freshDir();
    const before = new ExactlyOnceFileSink<string>(dir, { bufferBytes: 1 });
    const w1 = await before.createWriter(ctx(0, 0), []);
    await writeAll(w1, ['a', 'b']);
    const s1 = await checkpoint(w1, 1); // completes, but the crash comes before the notification
    await writeAll(w1, ['c', 'd']);
    await checkpoint(w1, 2); // never completes
    await writeAll(w1, ['e']);
    expect(await listing(dir)).toMatchObject({ visible: [] });
    expect((await listing(dir)).hidden.map((n) => n.replace(/-[0-9a-f]+\./, '.'))).toEqual([
      '.part-0-0-0.pending',
      '.part-0-0-1.pending',
      '.part-0-0-2.inprogress',
    ]);

    const after = new ExactlyOnceFileSink<string>(dir, { bufferBytes: 1 });
    const w2 = await after.createWriter(ctx(0, 1), s1);
    expect(await listing(dir)).toEqual({ visible: [committedFileName(pendingTxns(s1)[0]!)], hidden: [] });
    expect(await readCommittedLines(dir)).toEqual(['a', 'b']);
    // The source replays from checkpoint 1.
    await writeAll(w2, ['c', 'd', 'e']);
    await checkpoint(w2, 3);
    await w2.notifyCheckpointComplete!(3);
    await w2.close!();
    expect((await listing(dir)).hidden).toEqual([]);
    expect(await readCommittedLines(dir)).toEqual(['a', 'b', 'c', 'd', 'e']);
    // The crashed writer, closed late (a zombie), deletes nothing committed.
    await w1.close!();
    expect(await readCommittedLines(dir)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect((await listing(dir)).hidden).toEqual([]);
  });

  it('a restore after the commit already happened commits nothing twice', async () => {
    const dir = freshDir();
    const sink = new ExactlyOnceFileSink<number>(dir);
    const w1 = await sink.createWriter(ctx(0), []);
    await writeAll(w1, [1, 2]);
    const s1 = await checkpoint(w1, 1);
    await w1.notifyCheckpointComplete!(1);
    await writeAll(w1, [3]); // lost with the crash; replayed
    const w2 = await new ExactlyOnceFileSink<number>(dir).createWriter(ctx(0, 1), s1);
    await writeAll(w2, [3]);
    await checkpoint(w2, 2);
    await w2.notifyCheckpointComplete!(2);
    await w2.close!();
    expect(await readCommittedLines(dir)).toEqual(['1', '2', '3']);
    expect((await listing(dir)).hidden).toEqual([]);
  });

  it('names never collide: other attempts and other runs of the same subtask get other files', async () => {
    const dir = freshDir();
    const names = new Set<string>();
    for (const attempt of [0, 0, 1]) {
      const sink = new ExactlyOnceFileSink<string>(dir);
      const w = await sink.createWriter(ctx(0, attempt), []);
      await writeAll(w, [`attempt ${attempt}`]);
      const s = await checkpoint(w, 1);
      names.add(committedFileName(pendingTxns(s)[0]!));
      await w.notifyCheckpointComplete!(1);
      await w.close!();
    }
    expect(names.size).toBe(3);
    expect((await listing(dir)).visible.sort()).toEqual([...names].sort());
    expect((await readCommittedLines(dir)).sort()).toEqual(['attempt 0', 'attempt 0', 'attempt 1']);
  });

  it('an empty transaction commits without a file, with and without checkpointing', async () => {
    const dir = freshDir();
    const sink = new ExactlyOnceFileSink<string>(dir);
    const w = await sink.createWriter(ctx(0), []);
    const s = await checkpoint(w, 1);
    await w.notifyCheckpointComplete!(1);
    await sink.commit(pendingTxns(s)[0]!);
    await w.close!();
    const w2 = await sink.createWriter(ctx(1, 0, false), []);
    await w2.flush!(true);
    await w2.close!();
    expect(await readdir(dir)).toEqual([]);
  });

  it('without checkpointing, a subtask commits one file at the end of its input', async () => {
    const dir = freshDir();
    const sink = new ExactlyOnceFileSink<{ n: number }>(dir, { bufferBytes: 16 });
    const w = await sink.createWriter(ctx(0, 0, false), []);
    await writeAll(
      w,
      Array.from({ length: 100 }, (_, n) => ({ n })),
    );
    expect((await listing(dir)).visible).toEqual([]);
    await w.flush!(true);
    await w.close!();
    const l = await listing(dir);
    expect(l.visible).toHaveLength(1);
    expect(l.hidden).toEqual([]);
    expect(await readCommittedLines(dir)).toEqual(Array.from({ length: 100 }, (_, n) => JSON.stringify({ n })));
  });

  it('formats: strings as they are, other values as JSON, or a given function; a line break is refused', async () => {
    const dir = freshDir();
    const w = await new ExactlyOnceFileSink<unknown>(dir).createWriter(ctx(0, 0, false), []);
    await writeAll(w, ['plain', 7, { a: [1, 'x'] }, null]);
    expect(() => w.write('two\nlines', undefined)).toThrow(/line break/);
    await w.flush!(true);
    await w.close!();
    expect(await readCommittedLines(dir)).toEqual(['plain', '7', '{"a":[1,"x"]}', 'null']);

    const dir2 = freshDir();
    const w2 = await new ExactlyOnceFileSink<number>(dir2, { format: (n) => `#${n}` }).createWriter(ctx(0, 0, false), []);
    await writeAll(w2, [1, 2]);
    await w2.flush!(true);
    await w2.close!();
    expect(await readCommittedLines(dir2)).toEqual(['#1', '#2']);
  });

  it('says clearly when the directory is not writable', async () => {
    const file = join(root, 'a-regular-file');
    await writeFile(file, 'x');
    await expect(new ExactlyOnceFileSink<string>(join(file, 'out')).createWriter(ctx(0), [])).rejects.toThrow(
      /exactly-once file sink: output directory '.*a-regular-file\/out' is not writable/,
    );
  });

  // '' resolved to the working directory, which got the part files.
  it('an empty directory path is refused by the constructor', () => {
    expect(() => new ExactlyOnceFileSink<string>('')).toThrow(`exactly-once file sink: the path is empty; give a directory for the part files ('.' for the working directory)`);
  });

  it('readCommittedLines of a missing directory is empty', async () => {
    expect(await readCommittedLines(join(root, 'never-written'))).toEqual([]);
  });
});

const KEYS = 7;

const reference = (n: number): string[] => countReference(n, KEYS);

/**
 * Watches the directory while the job runs: every visible file is read when first seen. A
 * visible file that later changes or vanishes would mean something uncommitted was visible.
 */
class VisibilityMonitor {
  readonly seen = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling: Promise<void> | undefined;

  constructor(private readonly dir: string) {}

  start(): void {
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => (this.polling = undefined));
    }, 5);
  }

  private async poll(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => !n.startsWith('.'));
    } catch {
      return; // not created yet
    }
    for (const n of names) if (!this.seen.has(n)) this.seen.set(n, await readFile(join(this.dir, n), 'utf8'));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
  }

  /** Names of files that changed or vanished after they became visible. */
  async changed(): Promise<string[]> {
    const out: string[] = [];
    for (const [n, text] of this.seen) {
      const now = await readFile(join(this.dir, n), 'utf8').catch(() => undefined);
      if (now !== text) out.push(n);
    }
    return out;
  }
}

interface JobRun {
  readonly dir: string;
  readonly numRestarts: number;
  readonly completedCheckpoints: number;
  readonly monitor: VisibilityMonitor;
}

/** Commits that take longer than the checkpoint interval: notifications overlap, and the final one is still running at the end of input. */
class SlowCommitFileSink<T> extends ExactlyOnceFileSink<T> {
  override async commit(txn: FileTransaction): Promise<void> {
    await new Promise((r) => setTimeout(r, 40));
    return super.commit(txn);
  }
}

async function runCountJob(o: { n: number; parallelism: number; failAt: number[]; checkpointIntervalMs?: number; slowCommits?: boolean; eventsPerSecond?: number }): Promise<JobRun> {
  const dir = freshDir();
  const failAt = new Set(o.failAt);
  let seen = 0;
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    ...(o.checkpointIntervalMs === undefined ? {} : { 'execution.checkpointing.interval': o.checkpointIntervalMs }),
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 10,
    'restart-strategy.fixed-delay.delay': 10,
  });
  env
    .fromSource(numberSource({ count: o.n, eventsPerSecond: o.eventsPerSecond ?? 100_000 }), 'numbers')
    .map((n) => {
      seen++;
      if (failAt.has(seen)) {
        failAt.delete(seen);
        throw new Error(`injected failure at record ${seen}`);
      }
      return n;
    })
    .keyBy((n) => n % KEYS)
    .process<string>(new CountPerKey())
    .sinkTo(o.slowCommits === true ? new SlowCommitFileSink<string>(dir) : new ExactlyOnceFileSink<string>(dir), 'exactly-once files');
  const monitor = new VisibilityMonitor(dir);
  monitor.start();
  try {
    const result = await env.executeAsync(undefined, { log: () => {} }).result;
    return { dir, numRestarts: result.numRestarts, completedCheckpoints: result.completedCheckpoints, monitor };
  } finally {
    await monitor.stop();
  }
}

/** The committed output against the reference: counts first (readable on failure), then the full lists. */
async function expectExactly(dir: string, expected: readonly string[]): Promise<void> {
  const actual = (await readCommittedLines(dir)).sort();
  const dups = actual.length - new Set(actual).size;
  const actualSet = new Set(actual);
  const missing = expected.filter((r) => !actualSet.has(r)).length;
  expect({ dups, missing, total: actual.length }).toEqual({ dups: 0, missing: 0, total: expected.length });
  expect(actual).toEqual(expected);
}

describe('ExactlyOnceFileSink in jobs with failures', () => {
  for (const parallelism of [1, 3]) {
    it(`parallelism ${parallelism}, checkpoints every 30 ms, three injected failures: the committed files hold exactly the reference`, async () => {
      const n = 30_000;
      // 1.5 s of data (at 100,000/s, 0.3 s: on a loaded machine 2 or 3 checkpoints completed, not the 4 this asks for).
      const run = await runCountJob({ n, parallelism, failAt: [4_000, 13_000, 22_000], checkpointIntervalMs: 30, eventsPerSecond: 20_000 });
      expect(run.numRestarts).toBe(3);
      expect(run.completedCheckpoints).toBeGreaterThan(3);
      await expectExactly(run.dir, reference(n));
      const l = await listing(run.dir);
      expect(l.hidden).toEqual([]);
      // Files became visible while the job ran (one per subtask and checkpoint with records), and never changed after.
      expect(run.monitor.seen.size).toBeGreaterThan(parallelism);
      expect(await run.monitor.changed()).toEqual([]);
      for (const name of l.visible) expect(name).toMatch(/^part-\d+-\d+-\d+-[0-9a-f]+$/);
    });
  }

  it('commits slower than the checkpoint interval (overlapping notifications, final commit still running at the end of input)', async () => {
    const n = 20_000;
    const run = await runCountJob({ n, parallelism: 2, failAt: [3_000, 11_000], checkpointIntervalMs: 20, slowCommits: true });
    expect(run.numRestarts).toBe(2);
    await expectExactly(run.dir, reference(n));
    expect((await listing(run.dir)).hidden).toEqual([]);
    expect(await run.monitor.changed()).toEqual([]);
  });

  it('a bounded job whose only checkpoint is the final one commits all its records through it', async () => {
    const n = 5_000;
    const run = await runCountJob({ n, parallelism: 3, failAt: [], checkpointIntervalMs: 600_000 });
    expect(run.completedCheckpoints).toBe(1);
    await expectExactly(run.dir, reference(n));
    expect((await listing(run.dir)).hidden).toEqual([]);
  });

  it('without checkpointing: one commit per subtask at the end of input, also after a restart from scratch', async () => {
    const n = 20_000;
    const clean = await runCountJob({ n, parallelism: 3, failAt: [] });
    expect(clean.completedCheckpoints).toBe(0);
    await expectExactly(clean.dir, reference(n));
    // One file per subtask that received records, all from the first attempt.
    const subtasks = (await listing(clean.dir)).visible.map((name) => /^part-(\d+)-0-0-[0-9a-f]+$/.exec(name)?.[1]);
    expect(subtasks.every((s) => s !== undefined)).toBe(true);
    expect(new Set(subtasks).size).toBe(subtasks.length);
    expect(subtasks.length).toBeGreaterThanOrEqual(1);
    expect(subtasks.length).toBeLessThanOrEqual(3);
    expect((await listing(clean.dir)).hidden).toEqual([]);

    const failed = await runCountJob({ n, parallelism: 3, failAt: [9_000] });
    expect(failed.numRestarts).toBe(1);
    await expectExactly(failed.dir, reference(n));
    expect(await listing(failed.dir)).toMatchObject({ hidden: [] });
    expect(await failed.monitor.changed()).toEqual([]);
  });

  it('the committed files read back through FileSource, one record per line', async () => {
    const n = 3_000;
    const run = await runCountJob({ n, parallelism: 2, failAt: [1_000], checkpointIntervalMs: 20 });
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const collected = new CollectSink<string>();
    env.fromSource(new FileSource(run.dir), 'committed files').sinkTo(collected);
    await env.execute();
    expect([...collected.values].sort()).toEqual(reference(n));
  });
});

describe('ExactlyOnceFileSink: a stale attempt', () => {
  it('a writer of an older attempt that opens late leaves the pending files of a newer attempt alone', async () => {
    // On a cluster, a TaskManager the JobManager gave up on may still open the sink writer of
    // the canceled attempt while the attempt that replaced it has pre-committed transactions.
    const dir = freshDir();
    const newer = await new ExactlyOnceFileSink<string>(dir).createWriter(ctx(0, 1), []);
    await writeAll(newer, ['a', 'b']);
    await checkpoint(newer, 1);
    const stale = await new ExactlyOnceFileSink<string>(dir).createWriter(ctx(0, 0), []);
    await stale.close!();
    await newer.notifyCheckpointComplete!(1);
    await newer.close!();
    expect(await readCommittedLines(dir)).toEqual(['a', 'b']);
  });
});
