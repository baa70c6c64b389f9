import { readdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  checkCheckpointId,
  checkJobId,
  checkpointDirName,
  isSpillFileName,
  jobDir,
  METADATA_FILE_NAME,
  parseCheckpointDirName,
  SHARED_DIR_NAME,
  stateFileName,
  TASK_OWNED_DIR_NAME,
  tempFileName,
} from './checkpoint-paths.js';
import type { CheckpointRef, CheckpointStorage, CheckpointStorageLocation, CompletedCheckpointHandle } from './checkpoint-storage.js';
import { encodeHeader, recordedChecksum } from './checksummed-file.js';
import { fsyncDirectory, writeFileDurably } from './durable-file.js';
import { cryptoRandomBytes, randomHex, type RandomBytes } from './random-bytes.js';
import { locateSnapshot, readSnapshotMetadata, readStateHandleInDirectory } from './snapshot-directory-reader.js';
import { SnapshotDirectoryWriter } from './snapshot-directory-writer.js';
import type { CheckpointMetadata, StateHandle } from './snapshot-format.js';
import { CheckpointStorageError, isNotFound, notADirectoryError, storageWriteError, wrongJobError } from './storage-errors.js';
import { makeDirectories } from '../../util/make-directories.js';

/** Flink's execution.checkpointing.data-inline-threshold default, 20 kb. */
export const DATA_INLINE_THRESHOLD_BYTES_DEFAULT = 20 * 1024;

export interface FilesystemCheckpointStorageOptions {
  /** execution.checkpointing.dir; checkpoints go to `<checkpointsDir>/<jobId>/`. */
  readonly checkpointsDir: string;
  readonly jobId: string;
  /** Default 20 kb; 0 writes every chunk to a file. */
  readonly dataInlineThresholdBytes?: number;
  readonly random?: RandomBytes;
}

/**
 * `filesystem` checkpoint storage: `<dir>/<jobId>/chk-N/_metadata` plus state files
 * `chk-N/<uuid>`, and the job's `shared/` and `taskowned/` directories. A checkpoint is
 * complete exactly when its `_metadata` exists, which finalize writes last and atomically.
 */
export class FilesystemCheckpointStorage implements CheckpointStorage {
  readonly kind = 'filesystem' as const;
  readonly jobDir: string;
  readonly sharedDir: string;
  readonly taskOwnedDir: string;
  private readonly writers = new Map<number, SnapshotDirectoryWriter>();
  private lastCreatedCheckpointId = 0;

  private constructor(
    readonly checkpointsDir: string,
    readonly jobId: string,
    readonly dataInlineThresholdBytes: number,
    private readonly random: RandomBytes,
  ) {
    this.jobDir = jobDir(checkpointsDir, jobId);
    this.sharedDir = join(this.jobDir, SHARED_DIR_NAME);
    this.taskOwnedDir = join(this.jobDir, TASK_OWNED_DIR_NAME);
  }

  /** Creates the job's directories and checks that they are writable. */
  static async open(options: FilesystemCheckpointStorageOptions): Promise<FilesystemCheckpointStorage> {
    checkJobId(options.jobId);
    const threshold = options.dataInlineThresholdBytes ?? DATA_INLINE_THRESHOLD_BYTES_DEFAULT;
    if (!(threshold >= 0)) throw new Error(`data inline threshold must be >= 0 bytes, got ${threshold}`);
    const storage = new FilesystemCheckpointStorage(resolve(options.checkpointsDir), options.jobId, threshold, options.random ?? cryptoRandomBytes);
    await storage.prepareDirectories();
    return storage;
  }

  private async prepareDirectories(): Promise<void> {
    const dir = this.checkpointsDir;
    try {
      const s = await stat(dir);
      if (!s.isDirectory()) throw notADirectoryError(dir, 'checkpoint directory');
    } catch (e) {
      if (!isNotFound(e)) throw storageWriteError(e, dir, 'checkpoint directory');
    }
    try {
      await makeDirectories(this.sharedDir);
      await makeDirectories(this.taskOwnedDir);
      // mkdir succeeds on an existing read-only directory: probe with a file.
      const probe = join(this.jobDir, tempFileName('.write-probe', randomHex(this.random, 8)));
      await writeFile(probe, new Uint8Array(0));
      await unlink(probe);
    } catch (e) {
      throw storageWriteError(e, dir, 'checkpoint directory');
    }
  }

  checkpointDir(checkpointId: number): string {
    return join(this.jobDir, checkpointDirName(checkpointId));
  }

  async createCheckpointLocation(checkpointId: number): Promise<CheckpointStorageLocation> {
    checkCheckpointId(checkpointId);
    if (checkpointId <= this.lastCreatedCheckpointId) {
      throw new Error(`checkpoint ${checkpointId} was created after checkpoint ${this.lastCreatedCheckpointId}; checkpoint ids strictly increase`);
    }
    this.lastCreatedCheckpointId = checkpointId;
    const dir = this.checkpointDir(checkpointId);
    if (await this.isComplete(checkpointId)) {
      throw new Error(`checkpoint ${checkpointId} already exists complete at ${dir}; a restored job continues with ids after the checkpoint it restored`);
    }
    try {
      await rm(dir, { recursive: true, force: true }); // leftovers of an attempt that crashed before _metadata
      // With its parents, as Flink's mkdirs: a job directory (or its shared/ or taskowned/)
      // removed while the job ran is made again, so checkpoints complete again (the coordinator
      // makes the one after a failed checkpoint full: deltas would build on files that are gone).
      await makeDirectories(dir);
      await makeDirectories(this.sharedDir);
      await makeDirectories(this.taskOwnedDir);
    } catch (e) {
      throw storageWriteError(e, this.jobDir, 'checkpoint directory');
    }
    const writer = new SnapshotDirectoryWriter({
      dir,
      role: 'checkpoint directory',
      label: `checkpoint ${checkpointId}`,
      sharedDir: this.sharedDir,
      dataInlineThresholdBytes: this.dataInlineThresholdBytes,
      random: this.random,
    });
    this.writers.set(checkpointId, writer);
    return { checkpointId, writeStateFile: (bytes, scope) => writer.writeStateFile(bytes, scope), writeStateFileFrom: (source, scope) => writer.writeStateFileFrom(source, scope) };
  }

  async finalizeCheckpoint(metadata: CheckpointMetadata): Promise<CompletedCheckpointHandle> {
    const id = metadata.checkpointId;
    if (metadata.jobId !== this.jobId) throw new Error(`checkpoint ${id} of job ${metadata.jobId} handed to the storage of job ${this.jobId}`);
    if (metadata.type !== 'checkpoint') throw new Error(`checkpoint ${id} has type ${metadata.type}; savepoints go to createSavepointLocation`);
    const writer = this.writers.get(id);
    if (writer === undefined) throw new Error(`cannot finalize checkpoint ${id}: no location was created for it (or it was finalized or aborted already)`);
    await writer.finalize(metadata);
    this.writers.delete(id);
    return { jobId: this.jobId, checkpointId: id, pointer: writer.dir };
  }

  async abortCheckpoint(checkpointId: number): Promise<void> {
    const writer = this.writers.get(checkpointId);
    this.writers.delete(checkpointId);
    if (writer !== undefined) await writer.abort();
    else if (await this.isComplete(checkpointId)) throw new Error(`checkpoint ${checkpointId} is complete; discard it instead of aborting it`);
    await this.removeCheckpointDir(checkpointId);
  }

  async discardCheckpoint(checkpointId: number): Promise<void> {
    if (this.writers.has(checkpointId)) throw new Error(`checkpoint ${checkpointId} is in progress; abort it instead of discarding it`);
    const dir = this.checkpointDir(checkpointId);
    try {
      // _metadata first and durably: a crash mid-way leaves an incomplete directory, never a listed checkpoint without its state.
      await unlink(join(dir, METADATA_FILE_NAME));
      await fsyncDirectory(dir);
    } catch (e) {
      if (!isNotFound(e)) throw storageWriteError(e, dir, 'checkpoint directory');
    }
    await this.removeCheckpointDir(checkpointId);
  }

  async writeSharedStateFile(bytes: Uint8Array): Promise<StateHandle> {
    if (bytes.length < this.dataInlineThresholdBytes) return { kind: 'inline', bytes: new Uint8Array(bytes) };
    const name = stateFileName(this.random(16));
    const header = encodeHeader(bytes, 'state');
    try {
      await writeFileDurably(join(this.sharedDir, name), [header, bytes], randomHex(this.random, 8));
    } catch (e) {
      throw storageWriteError(e, this.sharedDir, 'checkpoint directory');
    }
    return { kind: 'file', scope: 'shared', path: name, sizeBytes: bytes.length, checksum: recordedChecksum(header) };
  }

  async discardSharedFiles(paths: readonly string[]): Promise<void> {
    for (const p of paths) {
      if (p.includes('/') || p.includes('..')) throw new Error(`shared state file path ${JSON.stringify(p)} is not a plain file name`);
      try {
        await unlink(join(this.sharedDir, p));
      } catch (e) {
        if (!isNotFound(e)) throw storageWriteError(e, this.sharedDir, 'checkpoint directory');
      }
    }
  }

  /**
   * Removes full snapshots TaskManagers spilled into taskowned/ and never handed over (a
   * TaskManager died with them): once none of the job's tasks runs. Other files stay.
   */
  async discardTaskOwnedSpills(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.taskOwnedDir);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    for (const name of names) if (isSpillFileName(name)) await unlink(join(this.taskOwnedDir, name)).catch(() => undefined);
  }

  private async removeCheckpointDir(checkpointId: number): Promise<void> {
    try {
      await rm(this.checkpointDir(checkpointId), { recursive: true, force: true });
      await fsyncDirectory(this.jobDir);
    } catch (e) {
      throw storageWriteError(e, this.jobDir, 'checkpoint directory');
    }
  }

  async listRetainedCheckpoints(): Promise<CompletedCheckpointHandle[]> {
    const ids: number[] = [];
    let names: string[];
    try {
      names = await readdir(this.jobDir);
    } catch (e) {
      if (isNotFound(e)) return []; // the job directory was removed: nothing is retained
      throw e;
    }
    for (const name of names) {
      const id = parseCheckpointDirName(name);
      if (id !== undefined && (await this.isComplete(id))) ids.push(id);
    }
    return ids.sort((a, b) => b - a).map((checkpointId) => ({ jobId: this.jobId, checkpointId, pointer: this.checkpointDir(checkpointId) }));
  }

  /** Complete = `_metadata` exists (its content is checked when it is read). */
  private async isComplete(checkpointId: number): Promise<boolean> {
    try {
      return (await stat(join(this.checkpointDir(checkpointId), METADATA_FILE_NAME))).isFile();
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  async readMetadata(pointer: string): Promise<CheckpointMetadata> {
    const snapshot = await locateSnapshot(pointer);
    const metadata = await readSnapshotMetadata(snapshot);
    if (dirname(snapshot.dir) === this.jobDir && metadata.jobId !== this.jobId) {
      throw wrongJobError(metadata.checkpointId, snapshot.dir, metadata.jobId, this.jobId);
    }
    return metadata;
  }

  async readStateHandle(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array> {
    if (handle.kind === 'file' && checkpoint.pointer.startsWith('jobmanager://')) {
      throw new CheckpointStorageError('not-found', `checkpoint ${checkpoint.checkpointId} (${checkpoint.pointer}) was held in the memory of a job manager; filesystem storage cannot read it`);
    }
    return readStateHandleInDirectory(handle, checkpoint);
  }
}
