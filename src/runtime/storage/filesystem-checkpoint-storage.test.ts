import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseCheckpointStorageKind, createCheckpointStorage } from './checkpoint-storage-factory.js';
import { FilesystemCheckpointStorage } from './filesystem-checkpoint-storage.js';
import { MemoryCheckpointStorage } from './memory-checkpoint-storage.js';
import { encodeMetadata } from './metadata-codec.js';
import type { FileStateHandle } from './snapshot-format.js';
import { seededBytes, TEST_JOB_ID, writeSampleSnapshot, installFastByteEquality } from './snapshot-test-data.js';
import { CheckpointStorageError, CorruptCheckpointError, storageWriteError } from './storage-errors.js';

installFastByteEquality();

const OTHER_JOB_ID = 'fedcba9876543210fedcba9876543210';

describe('filesystem checkpoint storage', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-fs-storage-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const open = (jobId = TEST_JOB_ID, options: { dataInlineThresholdBytes?: number } = {}): Promise<FilesystemCheckpointStorage> =>
    FilesystemCheckpointStorage.open({ checkpointsDir: dir, jobId, ...options });

  async function complete(storage: FilesystemCheckpointStorage, checkpointId: number) {
    const location = await storage.createCheckpointLocation(checkpointId);
    const sample = await writeSampleSnapshot(location, { jobId: storage.jobId, checkpointId });
    return { handle: await storage.finalizeCheckpoint(sample.metadata), sample };
  }

  it('lays out <dir>/<jobId>/chk-N/_metadata, uuid state files, shared/ and taskowned/', async () => {
    const storage = await open();
    expect((await readdir(join(dir, TEST_JOB_ID))).sort()).toEqual(['shared', 'taskowned']);
    const { handle, sample } = await complete(storage, 1);
    expect(handle.pointer).toBe(join(dir, TEST_JOB_ID, 'chk-1'));
    expect((await readdir(join(dir, TEST_JOB_ID))).sort()).toEqual(['chk-1', 'shared', 'taskowned']);
    const files = sample.written.map((w) => w.handle).filter((h): h is FileStateHandle => h.kind === 'file');
    expect(files).toHaveLength(2); // the two 32 KiB keyed-state chunks; the rest is below 20 kb
    const entries = (await readdir(handle.pointer)).sort();
    expect(entries).toEqual(['_metadata', ...files.map((f) => f.path)].sort());
    for (const f of files) expect(f.path).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await readFile(join(handle.pointer, '_metadata'))).toEqual(Buffer.from(encodeMetadata(sample.metadata)));
  });

  it('removes the spill files TaskManagers left in taskowned/, and nothing else there', async () => {
    const storage = await open();
    const spill = join(storage.taskOwnedDir, 'sluice-snapshot-0123456789abcdef.spill');
    const other = join(storage.taskOwnedDir, 'channel-state');
    await writeFile(spill, 'x');
    await writeFile(other, 'y');
    await storage.discardTaskOwnedSpills();
    expect(await readdir(storage.taskOwnedDir)).toEqual(['channel-state']);
    await rm(storage.taskOwnedDir, { recursive: true });
    await storage.discardTaskOwnedSpills(); // gone already: nothing to do
  });

  it('inlines below the 20 kb default threshold', async () => {
    const storage = await open();
    expect(storage.dataInlineThresholdBytes).toBe(20 * 1024);
    const location = await storage.createCheckpointLocation(1);
    expect((await location.writeStateFile(seededBytes(20 * 1024 - 1, 1))).kind).toBe('inline');
    expect((await location.writeStateFile(seededBytes(20 * 1024, 1))).kind).toBe('file');
    const zero = await open(TEST_JOB_ID, { dataInlineThresholdBytes: 0 });
    expect((await (await zero.createCheckpointLocation(2)).writeStateFile(new Uint8Array(0))).kind).toBe('file');
  });

  it('does not list a checkpoint whose _metadata rename never happened (crash), nor read it', async () => {
    const storage = await open();
    await complete(storage, 1);
    const location = await storage.createCheckpointLocation(2);
    const { metadata } = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 2 });
    const chk2 = join(dir, TEST_JOB_ID, 'chk-2');
    // The process died after writing and syncing the temp file, before the rename.
    await writeFile(join(chk2, '_metadata.00112233aabbccdd.tmp'), encodeMetadata(metadata));
    const restarted = await open();
    expect((await restarted.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([1]);
    await expect(restarted.readMetadata(chk2)).rejects.toThrow(`not a checkpoint or savepoint directory: ${chk2} has no _metadata`);
    // Cleaning up the leftovers of the dead attempt.
    await restarted.abortCheckpoint(2);
    await expect(stat(chk2)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("a job's directory or the checkpoint directory passed instead of a chk-N: the error names the newest completed checkpoint to pass", async () => {
    const storage = await open();
    await complete(storage, 1);
    await complete(storage, 3);
    // chk-4 never completed: no _metadata, so it is not named.
    await storage.createCheckpointLocation(4);
    const newest = join(dir, TEST_JOB_ID, 'chk-3');
    await expect(storage.readMetadata(join(dir, TEST_JOB_ID))).rejects.toThrow(
      `not a checkpoint or savepoint directory: ${join(dir, TEST_JOB_ID)} has no _metadata; it holds completed checkpoints: pass one, the newest is ${newest}`,
    );
    await expect(storage.readMetadata(dir)).rejects.toThrow(`${dir} has no _metadata; it holds completed checkpoints: pass one, the newest is ${newest}`);
    const other = 'fedcba9876543210fedcba9876543210';
    await complete(await open(other), 2);
    await expect(storage.readMetadata(dir)).rejects.toThrow(/has no _metadata; it holds the checkpoints of several jobs: pass one; the newest of each job: .*chk-(3|2), .*chk-(3|2)$/);
  });

  it("makes the job's directory again when it was removed while the job ran (as Flink's mkdirs): the next checkpoint completes", async () => {
    const storage = await open();
    await complete(storage, 1);
    await rm(join(dir, TEST_JOB_ID), { recursive: true });
    const { handle } = await complete(storage, 2);
    expect(handle.pointer).toBe(join(dir, TEST_JOB_ID, 'chk-2'));
    expect(await readdir(handle.pointer)).toContain('_metadata');
  });

  it('leaves no temp files behind, and reuses the directory of an incomplete attempt', async () => {
    const first = await open();
    const location = await first.createCheckpointLocation(5);
    await location.writeStateFile(seededBytes(30_000, 1));
    const restarted = await open();
    await complete(restarted, 5);
    const entries = await readdir(join(dir, TEST_JOB_ID, 'chk-5'));
    expect(entries.filter((e) => e.endsWith('.tmp'))).toEqual([]);
    expect(entries).toHaveLength(3); // _metadata + two keyed-state files; the dead attempt's file is gone
  });

  it('discards _metadata first: a directory left half-deleted is not listed', async () => {
    const storage = await open();
    await complete(storage, 1);
    await complete(storage, 2);
    await rm(join(dir, TEST_JOB_ID, 'chk-2', '_metadata')); // as discard does first; then "crash"
    expect((await storage.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([1]);
    await storage.discardCheckpoint(2);
    await storage.discardCheckpoint(1);
    expect((await readdir(join(dir, TEST_JOB_ID))).sort()).toEqual(['shared', 'taskowned']);
  });

  it('catches a state file swapped for another valid one, and a missing one', async () => {
    const storage = await open();
    const { handle, sample } = await complete(storage, 1);
    const [a, b] = sample.written.map((w) => w.handle).filter((h): h is FileStateHandle => h.kind === 'file');
    await cp(join(handle.pointer, b!.path), join(handle.pointer, a!.path));
    await expect(storage.readStateHandle(a!, handle)).rejects.toThrow(
      new RegExp(`^checkpoint 1: file ${join(handle.pointer, a!.path)} is corrupt \\(holds 32768 bytes with checksum [0-9a-f]{8}, _metadata expects 32768 bytes with checksum [0-9a-f]{8}\\)$`),
    );
    await rm(join(handle.pointer, b!.path));
    await expect(storage.readStateHandle(b!, handle)).rejects.toThrow(`checkpoint 1: file ${join(handle.pointer, b!.path)} is corrupt (missing: _metadata refers to it, but it does not exist)`);
    await mkdir(join(handle.pointer, b!.path));
    await expect(storage.readStateHandle(b!, handle)).rejects.toThrow(`checkpoint 1: file ${join(handle.pointer, b!.path)} is corrupt (is a directory: _metadata refers to it as a state file)`);
  });

  it('refuses another job\'s checkpoint in its own directory, and a chk-N holding another id', async () => {
    const storage = await open();
    const other = await open(OTHER_JOB_ID);
    const { handle } = await complete(other, 4);
    const planted = join(dir, TEST_JOB_ID, 'chk-4');
    await cp(handle.pointer, planted, { recursive: true });
    await expect(storage.readMetadata(planted)).rejects.toThrow(
      `checkpoint 4 at ${planted} belongs to job ${OTHER_JOB_ID}, not to job ${TEST_JOB_ID}; a job's checkpoint directory holds only its own checkpoints (was a directory copied?). ` +
        `To start job ${TEST_JOB_ID} from it, restore it explicitly as a savepoint path (flink run -s ${planted})`,
    );
    // Another job's checkpoint given by its own path is a legitimate restore source.
    expect((await storage.readMetadata(handle.pointer)).jobId).toBe(OTHER_JOB_ID);
    const renamed = join(dir, OTHER_JOB_ID, 'chk-9');
    await rename(handle.pointer, renamed);
    const error = await storage.readMetadata(renamed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptCheckpointError);
    expect((error as Error).message).toBe(`checkpoint 9: file ${join(renamed, '_metadata')} is corrupt (it describes checkpoint 4, but lies in chk-9)`);
  });

  it('names a checkpoint directory that is a file, or under a file', async () => {
    const file = join(dir, 'not-a-dir');
    await writeFile(file, 'x');
    const fix = '; remove or rename the file, or point execution.checkpointing.dir at a directory';
    const error = await FilesystemCheckpointStorage.open({ checkpointsDir: file, jobId: TEST_JOB_ID }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointStorageError);
    expect((error as CheckpointStorageError).code).toBe('not-a-directory');
    expect((error as Error).message).toBe(`checkpoint directory ${file} is a file, not a directory${fix}`);
    const below = join(file, 'below');
    await expect(FilesystemCheckpointStorage.open({ checkpointsDir: below, jobId: TEST_JOB_ID })).rejects.toThrow(
      new RegExp(`^checkpoint directory ${below} \\(or one of its parents\\) is a file, not a directory \\(ENOTDIR.*\\)${fix}$`),
    );
    await expect(open().then((s) => s.readMetadata(file))).rejects.toThrow(`not a checkpoint or savepoint directory: ${file} is a file; pass the directory that contains _metadata, or the _metadata file itself`);
  });

  it('names a directory that is not writable', async () => {
    const eacces = Object.assign(new Error("EACCES: permission denied, mkdir '/ro/job'"), { code: 'EACCES' });
    expect(storageWriteError(eacces, '/ro', 'checkpoint directory').message).toBe(
      "checkpoint directory /ro is not writable (EACCES: permission denied, mkdir '/ro/job'); grant write access to the user running Sluice, or point execution.checkpointing.dir at a writable directory",
    );
    expect(storageWriteError(eacces, '/ro', 'savepoint directory').code).toBe('not-writable');
  });

  it('refuses a read-only checkpoint directory', async () => {
    const { chmod } = await import('node:fs/promises');
    const ro = join(dir, 'ro');
    await mkdir(ro);
    await chmod(ro, 0o555);
    try {
      if (process.getuid?.() !== 0) {
        await expect(FilesystemCheckpointStorage.open({ checkpointsDir: ro, jobId: TEST_JOB_ID })).rejects.toMatchObject({ code: 'not-writable' });
        return;
      }
      // Root may write anywhere: try it in a child process that runs as root without the
      // capability to override file permissions (setpriv, util-linux), so the mode applies.
      const { execFileSync } = await import('node:child_process');
      const { fileURLToPath, pathToFileURL } = await import('node:url');
      const module = pathToFileURL(join(fileURLToPath(new URL('.', import.meta.url)), '../../../dist/runtime/storage/filesystem-checkpoint-storage.js')).href;
      const script = `import(${JSON.stringify(module)}).then((m) => m.FilesystemCheckpointStorage.open({ checkpointsDir: ${JSON.stringify(ro)}, jobId: ${JSON.stringify(TEST_JOB_ID)} })).then(() => console.log('opened'), (e) => console.log(e.code))`;
      const noOverride = ['--inh-caps=-dac_override,-dac_read_search', '--bounding-set=-dac_override,-dac_read_search'];
      const out = execFileSync('setpriv', [...noOverride, process.execPath, '-e', script], { encoding: 'utf8' }).trim();
      expect(out).toBe('not-writable');
    } finally {
      await chmod(ro, 0o700);
    }
  });

  it('picks the storage Flink would', async () => {
    expect(chooseCheckpointStorageKind(undefined, undefined)).toBe('jobmanager');
    expect(chooseCheckpointStorageKind(undefined, dir)).toBe('filesystem');
    expect(chooseCheckpointStorageKind('jobmanager', dir)).toBe('jobmanager');
    expect(() => chooseCheckpointStorageKind('filesystem', undefined)).toThrow(/execution.checkpointing.dir is not set/);
    expect(await createCheckpointStorage({ jobId: TEST_JOB_ID })).toBeInstanceOf(MemoryCheckpointStorage);
    expect(await createCheckpointStorage({ jobId: TEST_JOB_ID, checkpointsDir: dir })).toBeInstanceOf(FilesystemCheckpointStorage);
  });
});

describe('memory checkpoint storage', () => {
  it('keeps state inline and bounds its size with a clear error', async () => {
    const storage = new MemoryCheckpointStorage({ jobId: TEST_JOB_ID, stateSizeBytesMax: 1000 });
    const location = await storage.createCheckpointLocation(1);
    expect((await location.writeStateFile(seededBytes(1000, 1))).kind).toBe('inline');
    await expect(location.writeStateFile(seededBytes(1001, 1))).rejects.toThrow(
      'checkpoint 1: a state chunk of 1001 bytes exceeds the 1000-byte limit of jobmanager checkpoint storage; set execution.checkpointing.dir to use filesystem checkpoint storage',
    );
    await expect(storage.readMetadata(`jobmanager://${TEST_JOB_ID}/chk-1`)).rejects.toThrow(/checkpoint 1 \(jobmanager:\/\/.*\/chk-1\) is not retained/);
  });
});
