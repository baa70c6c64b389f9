// FileSink (at least once, one part file per subtask): what a run without state, a restart, a
// savepoint resume and a rescale leave in the part files, against an independent reference.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { ExactlyOnceFileSink, FileSink, FileSource } from '../src/connectors/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { tempDirs } from './support/temp-dirs.js';
import { runUnprivileged, unprivilegedDirs } from './support/unprivileged.js';
import { compareMultisets } from './support/txn-store-sink.js';

const tempDir = tempDirs('sluice-file-sink-');
const RECORDS = 20_000;
const reference = (): string[] => Array.from({ length: RECORDS }, (_, n) => `n=${n}`);

/** Every line of every part file in `dir`. */
function lines(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('part-'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').slice(0, -1));
}

/** numbers -> `n=<n>` lines, with a failure after the records in `failAt` (counted over all attempts of the process). */
function job(o: { parallelism: number; out: string; checkpointIntervalMs?: number; checkpoints?: string; failAt?: number[]; eventsPerSecond?: number }): StreamExecutionEnvironment {
  const failAt = new Set(o.failAt ?? []);
  let seen = 0;
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': o.parallelism,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 10,
    'restart-strategy.fixed-delay.delay': 10,
    ...(o.checkpointIntervalMs === undefined ? {} : { 'execution.checkpointing.interval': o.checkpointIntervalMs }),
    ...(o.checkpoints === undefined ? {} : { 'execution.checkpointing.dir': o.checkpoints }),
  });
  env
    .fromSource(numberSource({ count: RECORDS, eventsPerSecond: o.eventsPerSecond ?? 100_000 }), 'numbers')
    .uid('numbers')
    .map((n) => {
      seen++;
      if (failAt.delete(seen)) throw new Error(`injected failure at record ${seen}`);
      return `n=${n}`;
    })
    .uid('format')
    .sinkTo(new FileSink<string>(o.out, { bufferBytes: 256 }))
    .uid('files');
  return env;
}

describe('FileSink', () => {
  it('a run without state starts its part file anew; a restored writer appends', async () => {
    const out = tempDir();
    writeFileSync(join(out, 'part-0'), 'left over from an earlier run\n');
    const sink = new FileSink<string>(out);
    const fresh = await sink.createWriter({ subtaskIndex: 0, parallelism: 1, attemptNumber: 0 });
    await fresh.write('a', undefined);
    await fresh.prepareCommit!(1);
    await fresh.close!();
    expect(readFileSync(join(out, 'part-0'), 'utf8')).toBe('a\n');
    const restored = await sink.createWriter({ subtaskIndex: 0, parallelism: 1, attemptNumber: 1, restoredCheckpointId: 1 });
    await restored.write('b', undefined);
    await restored.close!();
    expect(readFileSync(join(out, 'part-0'), 'utf8')).toBe('a\nb\n');
  });

  it('failures after checkpoints (parallelism 2): every record is in the files, none unexpected; a record appears at most once more per failure', async () => {
    const out = tempDir();
    const env = job({ parallelism: 2, out, checkpointIntervalMs: 30, failAt: [4_000, 11_000, 17_000], eventsPerSecond: 50_000 });
    const result = await env.executeAsync(undefined, { log: () => {} }).result;
    expect(result.numRestarts).toBe(3);
    expect(result.completedCheckpoints).toBeGreaterThan(3);
    const got = lines(out);
    const diff = compareMultisets(got, reference());
    console.log(`FileSink with 3 failures: ${got.length} lines for ${RECORDS} records, ${diff.duplicates} duplicates (replayed after a checkpoint)`);
    expect({ missing: diff.missing, unexpected: diff.unexpected }).toEqual({ missing: 0, unexpected: 0 });
    const counts = new Map<string, number>();
    for (const l of got) counts.set(l, (counts.get(l) ?? 0) + 1);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(4);
  });

  it('a failure before any checkpoint: the restarted run begins the files again, so the output is the reference exactly', async () => {
    const out = tempDir();
    const result = await job({ parallelism: 2, out, failAt: [6_000] }).executeAsync(undefined, { log: () => {} }).result;
    expect(result.numRestarts).toBe(1);
    expect(result.completedCheckpoints).toBe(0);
    expect(compareMultisets(lines(out), reference())).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it.each([
    [2, 1],
    [1, 3],
  ])('stop with a savepoint at parallelism %i, resume at %i: the output before the stop stays, and the files hold the reference exactly', async (p1, p2) => {
    const out = tempDir();
    const first = job({ parallelism: p1, out, checkpointIntervalMs: 50, checkpoints: tempDir(), eventsPerSecond: 10_000 });
    const executor = new LocalExecutor(first.getJobGraph(), first.config, { log: () => {} });
    const done = executor.run();
    while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await executor.stopWithSavepoint(tempDir());
    expect((await done).status).toBe('FINISHED');
    const atStop = lines(out);
    expect(atStop.length).toBeGreaterThan(0);
    expect(atStop.length).toBeLessThan(RECORDS);

    const second = job({ parallelism: p2, out, checkpointIntervalMs: 50, checkpoints: tempDir() });
    const resumed = new LocalExecutor(second.getJobGraph(), second.config, { log: () => {}, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
    expect((await resumed.run()).status).toBe('FINISHED');
    // Until 2026-12-07 the resumed run truncated the part files: the lines before the stop were lost.
    expect(compareMultisets(lines(out), reference())).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});

/** Permissions are not enforced for root: the test that needs them runs without capabilities then. */
const unprivilegedDir = unprivilegedDirs('sluice-file-sink-nobody-');
const writerContext = { subtaskIndex: 0, parallelism: 1, attemptNumber: 0 };

describe('FileSink bad input', () => {
  // '' resolved to the working directory, which got a part-0; Flink refuses an empty Path.
  it('an empty directory path or one that is not a string is refused by the constructor', () => {
    expect(() => new FileSink<string>('')).toThrow(new Error(`file sink: the path is empty; give a directory for the part files ('.' for the working directory)`));
    expect(() => new FileSink<string>(null as unknown as string)).toThrow(new TypeError('file sink: the path must be a string, got null; give a directory for the part files'));
  });

  // NaN never flushed before a checkpoint; -1 and 0 flushed at every record, as 1 does.
  it.each([0, -1, Number.NaN, 1.5, '64'])('bufferBytes %s is refused by the constructor, naming the option and the value', (bufferBytes) => {
    expect(() => new FileSink<string>(tempDir(), { bufferBytes: bufferBytes as number })).toThrow(
      new RangeError(`file sink: bufferBytes (the characters buffered before a write) must be an integer >= 1, got ${typeof bufferBytes === 'string' ? `the string '${bufferBytes}'` : String(bufferBytes)}`),
    );
  });

  // A misspelt name was ignored (the default used), a format that is not a function failed at the first record.
  it('option names are checked, and format must be a function, for the file source and both file sinks', () => {
    expect(() => new FileSink<string>(tempDir(), { bufferSize: 10 } as never)).toThrow(/^file sink: unknown option 'bufferSize'; its options are format, bufferBytes$/);
    expect(() => new FileSink<string>(tempDir(), { format: 'json' } as never)).toThrow(new TypeError("file sink: format must be a function (record) => line, got the string 'json'"));
    expect(() => new FileSink<string>(tempDir(), 'json' as never)).toThrow(/^file sink: the options must be an object \(\{ format, bufferBytes \}\), got the string 'json'$/);
    expect(() => new ExactlyOnceFileSink<string>(tempDir(), { bufferbytes: 10 } as never)).toThrow(/^exactly-once file sink: unknown option 'bufferbytes' \(did you mean 'bufferBytes'\?\)/);
    // 1.5 and '64' passed its check (> 0) before.
    expect(() => new ExactlyOnceFileSink<string>(tempDir(), { bufferBytes: 1.5 })).toThrow(/^exactly-once file sink: bufferBytes \(the characters buffered before a write\) must be an integer >= 1, got 1\.5$/);
    expect(() => new FileSource(tempDir(), { splitAssigment: 'static' } as never)).toThrow(/^file source: unknown option 'splitAssigment' \(did you mean 'splitAssignment'\?\); its options are chunkBytes, splitAssignment$/);
    expect(() => new FileSource(tempDir(), { chunkBytes: 1024, splitAssignment: 'static' })).not.toThrow();
    expect(() => new ExactlyOnceFileSink<string>(tempDir(), { format: (s) => s, bufferBytes: 1 })).not.toThrow();
  });

  // Was `ENOTDIR: not a directory, mkdir ...` with Node's stack.
  it('a file where the directory should be: an error naming it and the fix', async () => {
    const file = join(tempDir(), 'outfile');
    writeFileSync(file, 'x');
    await expect(new FileSink<string>(file).createWriter(writerContext)).rejects.toThrow(`file sink: '${file}' is a file, not a directory; give a directory for the part files`);
    await expect(new FileSink<string>(join(file, 'sub', 'out')).createWriter(writerContext)).rejects.toThrow(
      `file sink: '${file}' (on the way to '${join(file, 'sub', 'out')}') is a file, not a directory; give a directory for the part files`,
    );
    const out = tempDir();
    mkdirSync(join(out, 'part-0'));
    await expect(new FileSink<string>(out).createWriter(writerContext)).rejects.toThrow(`file sink: '${join(out, 'part-0')}' is a directory, not a part file; remove it or give another directory`);
  });

  // Was a bare `EACCES: permission denied, open ...`.
  it('a directory it may not write into: an error naming it and the fix', () => {
    const dir = unprivilegedDir();
    const locked = join(dir, 'locked');
    // Run as a user without access (root without capabilities when this is root): test/fixtures/unprivileged/file-sink-permissions.mjs.
    expect(runUnprivileged<(string | null)[]>('file-sink-permissions', [dir])).toEqual([
      expect.stringContaining(`file sink: cannot write into '${locked}' (EACCES): grant write access or give another directory`),
      expect.stringContaining(`file sink: cannot create '${join(locked, 'out')}' (EACCES): grant write access to '${locked}' or give another directory`),
      expect.stringContaining(`file sink: cannot write '${join(locked, 'part-0')}' (EACCES): grant write access to it or give another directory`),
    ]);
  });
});
