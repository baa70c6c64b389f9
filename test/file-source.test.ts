import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { FileSource } from '../src/connectors/file/file-source.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { latestCheckpoint, tempDirs } from './support/temp-dirs.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { runUnprivileged, unprivilegedDirs } from './support/unprivileged.js';
import { collectingReaderOutput } from '../src/testing/reader-output.js';

const tempDir = tempDirs('sluice-file-source-');

/** Files 'f00'..: `sizes[i]` lines each, "f<i>:<line>"; returns every line (the reference). */
function writeFiles(dir: string, sizes: readonly number[]): string[] {
  const all: string[] = [];
  sizes.forEach((n, i) => {
    const name = `f${String(i).padStart(2, '0')}`;
    const lines = Array.from({ length: n }, (_, k) => `${name}:${k}`);
    all.push(...lines);
    writeFileSync(join(dir, name), lines.join('\n') + '\n');
  });
  return all.sort();
}

describe('FileSource split assignment', () => {
  // One large file and many small ones at parallelism 2: with files handed out on request, the
  // reader that is not in the large file reads the small ones; statically, each reader gets
  // every other file whatever their sizes.
  it.each(['on-request', 'static'] as const)('one large file and 20 small ones, %s', async (splitAssignment) => {
    const dir = tempDir();
    const sizes = [20_000, ...Array.from({ length: 20 }, () => 200)];
    const reference = writeFiles(dir, sizes);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<string>();
    env.fromSource(new FileSource(dir, { splitAssignment, chunkBytes: 4096 }), 'files').sinkTo(sink);
    await env.execute();
    expect([...sink.values].sort()).toEqual(reference);
    const filesOf = (subtask: number): Set<string> => new Set((sink.bySubtask.get(subtask) ?? []).map((l) => l.split(':')[0]!));
    const bigReader = filesOf(0).has('f00') ? 0 : 1;
    if (splitAssignment === 'static') {
      expect(filesOf(bigReader).size).toBe(11); // f00 and every other small file
    } else {
      // The large file's reader took little besides it: a small file it asked for ahead near
      // the large one's end, and maybe one before or after it. The other reader read the rest.
      expect(filesOf(bigReader).size).toBeLessThanOrEqual(3);
      expect(filesOf(1 - bigReader).size).toBeGreaterThanOrEqual(18);
    }
  });

  // Two large files at parallelism 2: the reader that asks first does not take both (it asks
  // for its next file only once its current file's last chunk is in).
  it('two large files on request at parallelism 2: a file each', async () => {
    const dir = tempDir();
    const reference = writeFiles(dir, [20_000, 20_000]);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<string>();
    env.fromSource(new FileSource(dir, { chunkBytes: 4096 }), 'files').sinkTo(sink);
    await env.execute();
    expect([...sink.values].sort()).toEqual(reference);
    const filesOf = (subtask: number): string[] => [...new Set((sink.bySubtask.get(subtask) ?? []).map((l) => l.split(':')[0]!))].sort();
    expect([filesOf(0), filesOf(1)].sort()).toEqual([['f00'], ['f01']]);
  });

  // A reader driven by hand: it asks for its second file only once the last chunk of its
  // first is in, not while the other reader may still be about to ask for its first.
  it('a reader asks for its next file once its current file is read to the end', async () => {
    const dir = tempDir();
    writeFiles(dir, [20_000, 20_000]);
    const source = new FileSource(dir, { chunkBytes: 4096 });
    const [first] = await source.createSplits();
    let requests = 0;
    const reader = source.createReader({ subtaskIndex: 0, parallelism: 2, attemptNumber: 0, nowMs: () => 0, sendSplitRequest: () => void requests++ });
    const lines: string[] = [];
    const output = collectingReaderOutput((l: string) => void lines.push(l));
    reader.pollNext(output);
    expect(requests).toBe(1);
    reader.addSplits([first!]);
    const requestedAt: number[] = [];
    for (let guard = 0; guard < 1_000_000 && lines.length < 20_000; guard++) {
      if (reader.pollNext(output) === 'nothing') await reader.isAvailable();
      if (requests > 1 && requestedAt.length === 0) requestedAt.push(lines.length);
    }
    expect(lines.length).toBe(20_000);
    // Asked once more, within the last chunk (4,096 bytes: a few hundred lines of "f00:12345").
    expect(requests).toBe(2);
    expect(requestedAt[0]).toBeGreaterThan(20_000 - 4096 / 8);
  });

  // Files handed out on request while the job is canceled after seeded checkpoints and restored
  // from its retained checkpoint at another parallelism: every line arrives exactly once (the
  // files not handed out yet are in the enumerator's part of each checkpoint).
  it.each([5201, 5203])('canceled and restored at seeded parallelisms (seed %i): every line exactly once', async (seed) => {
    const random = seededRandom(seed);
    const input = tempDir();
    const reference = writeFiles(input, Array.from({ length: 24 }, (_, i) => 300 + ((i * 7919) % 900)));
    const checkpoints = tempDir();
    const out = tempDir();
    let restoreFrom: string | undefined;
    let parallelism = 2;
    const path: string[] = [];
    for (let hop = 0; hop < 4; hop++) {
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': parallelism,
        'execution.checkpointing.interval': 20,
        'execution.checkpointing.dir': checkpoints,
        'execution.checkpointing.externalized-checkpoint-retention': 'RETAIN_ON_CANCELLATION',
      });
      // Small chunks and a slow map: the job runs for many checkpoints.
      env
        .fromSource(new FileSource(input, { chunkBytes: 512 }), 'files')
        .uid('files')
        .map((line: string) => {
          const until = performance.now() + 0.03;
          while (performance.now() < until);
          return line;
        })
        .uid('slow')
        .sinkTo(new ExactlyOnceFileSink<string>(out))
        .uid('sink');
      const executor = new LocalExecutor(env.getJobGraph(), env.config, {
        log: () => {},
        ...(restoreFrom === undefined ? {} : { restoreFrom: { path: restoreFrom, allowNonRestoredState: false } }),
      });
      const done = executor.run();
      path.push(`p${parallelism}`);
      if (hop === 3) {
        expect((await done).status, `seed ${seed}: ${path.join(' -> ')}`).toBe('FINISHED');
        break;
      }
      let ended = false;
      void done.then(() => (ended = true), () => (ended = true));
      const wanted = 2 + Math.floor(random() * 4);
      while (!ended && executor.checkpointStats.counts.completed < wanted) await new Promise((r) => setTimeout(r, 3));
      if (ended) break;
      executor.cancel();
      const status = (await done).status;
      // The job may read its last line between the check above and the cancel: then it is done.
      if (status === 'FINISHED') break;
      expect(status, `seed ${seed}: ${path.join(' -> ')}`).toBe('CANCELED');
      restoreFrom = latestCheckpoint(checkpoints, executor.jobId);
      expect(restoreFrom, `seed ${seed}: a retained checkpoint of run ${hop}`).toBeDefined();
      let next = parallelism;
      while (next === parallelism) next = 1 + Math.floor(random() * 3);
      parallelism = next;
    }
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, reference), `seed ${seed}: parallelisms ${path.join(' -> ')}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  }, 60_000);
});

/** Every line a job reading `source` at parallelism 1 collects, and how it ended. */
async function readAll(source: FileSource): Promise<string[]> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
  const sink = new CollectSink<string>();
  env.fromSource(source, 'files').sinkTo(sink);
  await env.execute();
  return [...sink.values];
}

/** Permissions are not enforced for root: the test that needs them runs without capabilities then. */
const unprivilegedDir = unprivilegedDirs('sluice-file-source-nobody-');

describe('FileSource bad input', () => {
  // 0 read nothing and the job finished; -1 and NaN failed with a bare RangeError of
  // Buffer.allocUnsafe at the first read, 1.5 with ERR_OUT_OF_RANGE; 2^31 aborts Node's read.
  it.each([0, -1, Number.NaN, 1.5, 2 ** 31, Number.POSITIVE_INFINITY, '4096'])('chunkBytes %s is refused by the constructor, naming the option and the value', (chunkBytes) => {
    expect(() => new FileSource(tempDir(), { chunkBytes: chunkBytes as number })).toThrow(
      new RangeError(`file source: chunkBytes (the bytes read at a time) must be an integer in [1, 2147483647], got ${typeof chunkBytes === 'string' ? `the string '${chunkBytes}'` : String(chunkBytes)}`),
    );
  });

  it('chunkBytes 1 (the smallest) reads every line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'ab\r\n\nc\nlast');
    expect(() => new FileSource(dir, { chunkBytes: 2 ** 31 - 1 })).not.toThrow();
    expect(await readAll(new FileSource(dir, { chunkBytes: 1 }))).toEqual(['ab', '', 'c', 'last']);
  });

  // '' resolved to the working directory, whose files were read; Flink refuses an empty Path.
  it('an empty path or one that is not a string is refused by the constructor', () => {
    expect(() => new FileSource('')).toThrow(new Error(`file source: the path is empty; give a file or a directory to read ('.' for the working directory)`));
    expect(() => new FileSource(undefined as unknown as string)).toThrow(new TypeError('file source: the path must be a string, got undefined; give a file or a directory to read'));
    expect(() => new FileSource(42 as unknown as string)).toThrow(/file source: the path must be a string, got 42/);
  });

  // Symbolic links were skipped without a word (Dirent.isFile() is false for a link); Flink's
  // listing follows them.
  it('a symbolic link to a file in the directory is read as the file; links to directories are skipped as subdirectories are', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    writeFileSync(join(dir, 'a'), 'a:0\na:1\n');
    writeFileSync(join(elsewhere, 'target'), 'b:0\n');
    symlinkSync(join(elsewhere, 'target'), join(dir, 'b'));
    symlinkSync('a', join(dir, 'c')); // relative, to a file of the same directory
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'inner'), 'not read\n');
    symlinkSync(elsewhere, join(dir, 'to-dir'));
    const source = new FileSource(dir);
    expect((await source.createSplits()).map((s) => s.path)).toEqual(['a', 'b', 'c'].map((n) => join(dir, n)));
    expect((await readAll(source)).sort()).toEqual(['a:0', 'a:0', 'a:1', 'a:1', 'b:0']);
  });

  it('a broken symbolic link fails the job at start, naming the link and its target', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a'), 'a\n');
    symlinkSync(join(dir, 'gone'), join(dir, 'b'));
    await expect(readAll(new FileSource(dir))).rejects.toThrow(`file source: '${join(dir, 'b')}' is a symbolic link to '${join(dir, 'gone')}', which does not exist; fix or remove the link`);
    // The path itself a broken link: not "does not exist" without a word about the link.
    await expect(new FileSource(join(dir, 'b')).createSplits()).rejects.toThrow(`file source: '${join(dir, 'b')}' is a symbolic link to '${join(dir, 'gone')}', which does not exist`);
    const loops = tempDir();
    symlinkSync('loop', join(loops, 'loop'));
    await expect(new FileSource(loops).createSplits()).rejects.toThrow(`file source: '${join(loops, 'loop')}' is a symbolic link in a loop (ELOOP); fix or remove the link`);
    await expect(new FileSource(join(loops, 'loop')).createSplits()).rejects.toThrow(/^file source: cannot read '.*\/loop' \(resolved to .*\): ELOOP/);
  });

  it('a missing path fails the job at start, saying so', async () => {
    const missing = join(tempDir(), 'missing');
    await expect(readAll(new FileSource(missing))).rejects.toThrow(`file source: '${missing}' does not exist (resolved to ${missing}); check the path`);
  });

  // Every stat error was "does not exist"; readdir's EACCES came bare, without 'file source:'.
  it('a path it may not read is a permission error naming the path, not "does not exist"', () => {
    const dir = unprivilegedDir();
    const inside = join(dir, 'locked', 'f');
    // Run as a user without access (root without capabilities when this is root): test/fixtures/unprivileged/file-source-permissions.mjs.
    expect(runUnprivileged<(string | null)[]>('file-source-permissions', [dir])).toEqual([
      expect.stringContaining(`file source: cannot list the directory '${join(dir, 'locked')}': permission denied (EACCES); grant read access to it and its parent directories, or give another path`),
      expect.stringContaining(`file source: cannot read '${inside}' (resolved to ${inside}): permission denied (EACCES); grant read access to it and its parent directories, or give another path`),
    ]);
  });

  // As Flink's text format: not an error (documented in docs/connectors.md).
  it('invalid UTF-8 is read as U+FFFD', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), Buffer.from([0x61, 0xff, 0x62, 0x0a, 0xc3, 0x0a]));
    expect(await readAll(new FileSource(dir))).toEqual(['a\ufffdb', '\ufffd']);
  });
});
