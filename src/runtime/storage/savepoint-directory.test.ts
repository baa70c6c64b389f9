import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FilesystemCheckpointStorage } from './filesystem-checkpoint-storage.js';
import { MemoryCheckpointStorage } from './memory-checkpoint-storage.js';
import { createSavepointLocation, disposeSavepoint } from './savepoint-directory.js';
import { stateHandlesOf } from './snapshot-format.js';
import { TEST_JOB_ID, writeSampleSnapshot, installFastByteEquality } from './snapshot-test-data.js';

installFastByteEquality();

/** Deterministic "random" bytes: 0, 1, 2, ... */
function counterRandom(): (size: number) => Uint8Array {
  let next = 0;
  return (size) => Uint8Array.from({ length: size }, () => next++ & 0xff);
}

describe('savepoint directories', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-savepoints-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function takeSavepoint(targetDir = join(root, 'savepoints'), random = counterRandom()) {
    const location = await createSavepointLocation(targetDir, TEST_JOB_ID, { random });
    const sample = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 17, type: 'savepoint' });
    const handle = await location.finalize(sample.metadata);
    return { location, sample, handle };
  }

  it('names the directory savepoint-<6 hex of the job id>-<12 random hex> and keeps paths relative', async () => {
    const { handle, sample } = await takeSavepoint();
    expect(handle.pointer).toBe(join(root, 'savepoints', 'savepoint-012345-000102030405'));
    expect(handle.checkpointId).toBe(17);
    const files = [...stateHandlesOf(sample.metadata)].filter((h) => h.kind === 'file');
    expect(files.length).toBe(2);
    for (const f of files) expect(f).toMatchObject({ scope: 'exclusive', path: expect.not.stringContaining('/') });
    expect((await readdir(handle.pointer)).sort()).toEqual(['_metadata', ...files.map((f) => (f.kind === 'file' ? f.path : ''))].sort());
  });

  it('is readable after the directory was moved, by either storage', async () => {
    const { handle, sample } = await takeSavepoint();
    const moved = join(root, 'elsewhere', 'renamed');
    await mkdir(join(root, 'elsewhere'));
    await rename(handle.pointer, moved);
    const fsStorage = await FilesystemCheckpointStorage.open({ checkpointsDir: join(root, 'checkpoints'), jobId: 'ffffffffffffffffffffffffffffffff' });
    for (const storage of [fsStorage, new MemoryCheckpointStorage({ jobId: 'ffffffffffffffffffffffffffffffff' })]) {
      expect(await storage.readMetadata(moved)).toEqual(sample.metadata);
      for (const w of sample.written) expect(await storage.readStateHandle(w.handle, { pointer: moved, checkpointId: 17 })).toEqual(w.bytes);
    }
  });

  it('finds a free name when the random one is taken', async () => {
    await mkdir(join(root, 'savepoints', 'savepoint-012345-000000000000'), { recursive: true });
    let calls = 0;
    const location = await createSavepointLocation(join(root, 'savepoints'), TEST_JOB_ID, { random: (n) => new Uint8Array(n).fill(calls++ < 1 ? 0 : 0xab) });
    expect(basename(location.dir)).toBe('savepoint-012345-abababababab');
    await location.abort();
    await expect(stat(location.dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('checks what it finalizes', async () => {
    const location = await createSavepointLocation(join(root, 'sp'), TEST_JOB_ID);
    const { metadata } = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 3, type: 'savepoint' });
    await expect(location.finalize({ ...metadata, type: 'checkpoint', savepointFormat: undefined })).rejects.toThrow(/handed metadata of type checkpoint/);
    await expect(location.finalize({ ...metadata, jobId: 'ffffffffffffffffffffffffffffffff' })).rejects.toThrow(/handed metadata of job ffff/);
  });

  it('names a target directory that is a file', async () => {
    const file = join(root, 'file');
    await writeFile(file, 'x');
    await expect(createSavepointLocation(file, TEST_JOB_ID)).rejects.toThrow(
      new RegExp(`^savepoint directory ${file} \\(or one of its parents\\) is a file, not a directory`),
    );
  });

  it('disposes a savepoint directory, also a moved or corrupt one', async () => {
    const { handle } = await takeSavepoint();
    await disposeSavepoint(handle.pointer);
    await expect(stat(handle.pointer)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(join(root, 'savepoints'))).toEqual([]);

    const moved = await takeSavepoint(join(root, 'savepoints'), counterRandom());
    const renamed = join(root, 'my-savepoint');
    await rename(moved.handle.pointer, renamed);
    await disposeSavepoint(renamed);
    await expect(stat(renamed)).rejects.toMatchObject({ code: 'ENOENT' });

    const corrupt = await takeSavepoint();
    await writeFile(join(corrupt.handle.pointer, '_metadata'), 'garbage');
    await disposeSavepoint(corrupt.handle.pointer);
    await expect(stat(corrupt.handle.pointer)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to dispose what is not a savepoint directory', async () => {
    const fix = '; pass the savepoint directory printed when the savepoint was taken';
    await expect(disposeSavepoint(join(root, 'nothing'))).rejects.toThrow(`refusing to dispose ${join(root, 'nothing')}: it does not exist${fix}`);
    const file = join(root, 'file.txt');
    await writeFile(file, 'x');
    await expect(disposeSavepoint(file)).rejects.toThrow(`refusing to dispose ${file}: it is a file, not a savepoint directory${fix}`);
    const plain = join(root, 'plain');
    await mkdir(plain);
    await expect(disposeSavepoint(plain)).rejects.toThrow(`refusing to dispose ${plain}: it has no readable savepoint _metadata and its name is not savepoint-<jobId>-<random>${fix}`);
    await expect(disposeSavepoint(root)).rejects.toThrow(/it holds file.txt, plain, which Sluice did not write/);

    const { handle } = await takeSavepoint();
    await writeFile(join(handle.pointer, 'notes.txt'), 'mine');
    await expect(disposeSavepoint(handle.pointer)).rejects.toThrow(`refusing to dispose ${handle.pointer}: it holds notes.txt, which Sluice did not write, so it is not a savepoint directory${fix}`);

    const checkpoints = await FilesystemCheckpointStorage.open({ checkpointsDir: join(root, 'checkpoints'), jobId: TEST_JOB_ID });
    const location = await checkpoints.createCheckpointLocation(2);
    const done = await checkpoints.finalizeCheckpoint((await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 2 })).metadata);
    await expect(disposeSavepoint(done.pointer)).rejects.toThrow(/it holds checkpoint 2 of job 0123456789abcdef0123456789abcdef, not a savepoint/);
    expect((await checkpoints.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([2]);
  });
});
