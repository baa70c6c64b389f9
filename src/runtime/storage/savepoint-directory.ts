import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { checkJobId, isSavepointDirName, isSnapshotFileName, METADATA_FILE_NAME, savepointDirName } from './checkpoint-paths.js';
import type { CompletedCheckpointHandle, StateFileSource } from './checkpoint-storage.js';
import { fsyncDirectory } from './durable-file.js';
import { DATA_INLINE_THRESHOLD_BYTES_DEFAULT } from './filesystem-checkpoint-storage.js';
import { cryptoRandomBytes, randomHex, type RandomBytes } from './random-bytes.js';
import { readSnapshotMetadata } from './snapshot-directory-reader.js';
import { SnapshotDirectoryWriter } from './snapshot-directory-writer.js';
import type { CheckpointMetadata, StateHandle } from './snapshot-format.js';
import type { Configuration } from '../../config/configuration.js';
import { CheckpointStorageError, CorruptCheckpointError, isNotDirectory, isNotFound, storageWriteError } from './storage-errors.js';
import { makeDirectories } from '../../util/make-directories.js';

/**
 * Savepoints: `<targetDir>/savepoint-<6 hex of jobId>-<12 hex>/` holding `_metadata` and
 * state files. Every path in `_metadata` is relative to that directory (no shared files),
 * so the directory can be moved or copied and restored from its new place.
 */

export interface SavepointLocation {
  /** Absolute path of the savepoint directory: the pointer to give to `run -s`. */
  readonly dir: string;
  readonly jobId: string;
  /** Inline below the data-inline threshold, else a checksummed file in the directory. */
  writeStateFile(bytes: Uint8Array): Promise<StateHandle>;
  /** As writeStateFile, for bytes another thread holds (see CheckpointStorageLocation.writeStateFileFrom). */
  writeStateFileFrom?(source: StateFileSource): Promise<StateHandle>;
  /** Writes `_metadata` last and atomically; `metadata.type` must be 'savepoint'. */
  finalize(metadata: CheckpointMetadata): Promise<CompletedCheckpointHandle>;
  /** Removes the directory of an unfinished savepoint. */
  abort(): Promise<void>;
}

export interface SavepointLocationOptions {
  readonly dataInlineThresholdBytes?: number;
  readonly random?: RandomBytes;
  /** For an s3:// target directory: the s3.* options (the AWS_* variables fill in what is unset). */
  readonly config?: Configuration;
}

const S3_URI = /^s3[ap]?:\/\//i;

const NAME_ATTEMPTS_MAX = 4;

export async function createSavepointLocation(targetDir: string, jobId: string, options: SavepointLocationOptions = {}): Promise<SavepointLocation> {
  checkJobId(jobId);
  if (S3_URI.test(targetDir)) {
    const { createS3SavepointLocation, s3ClientFrom } = await import('./s3-checkpoint-storage.js');
    return createS3SavepointLocation(targetDir, jobId, s3ClientFrom(options.config), options);
  }
  const random = options.random ?? cryptoRandomBytes;
  const parent = resolve(targetDir);
  try {
    await makeDirectories(parent);
  } catch (e) {
    throw storageWriteError(e, parent, 'savepoint directory');
  }
  let dir: string | undefined;
  for (let attempt = 0; dir === undefined; attempt++) {
    const candidate = join(parent, savepointDirName(jobId, randomHex(random, 6)));
    try {
      await mkdir(candidate);
      dir = candidate;
    } catch (e) {
      const taken = (e as { code?: unknown }).code === 'EEXIST' && attempt + 1 < NAME_ATTEMPTS_MAX && (await isDirectory(candidate));
      if (!taken) throw storageWriteError(e, parent, 'savepoint directory');
    }
  }
  const writer = new SnapshotDirectoryWriter({
    dir,
    role: 'savepoint directory',
    label: `savepoint ${dir}`,
    sharedDir: undefined,
    dataInlineThresholdBytes: options.dataInlineThresholdBytes ?? DATA_INLINE_THRESHOLD_BYTES_DEFAULT,
    random,
  });
  const savepointDir = dir;
  return {
    dir: savepointDir,
    jobId,
    writeStateFile: (bytes) => writer.writeStateFile(bytes),
    writeStateFileFrom: (source) => writer.writeStateFileFrom(source),
    async finalize(metadata) {
      if (metadata.type !== 'savepoint') throw new Error(`savepoint ${savepointDir} handed metadata of type ${metadata.type}`);
      if (metadata.jobId !== jobId) throw new Error(`savepoint ${savepointDir} of job ${jobId} handed metadata of job ${metadata.jobId}`);
      await writer.finalize(metadata);
      return { jobId, checkpointId: metadata.checkpointId, pointer: savepointDir };
    },
    async abort() {
      await writer.abort();
      await rm(savepointDir, { recursive: true, force: true });
    },
  };
}

/**
 * Removes a savepoint directory (`flink savepoint -d <path>`). Refuses, with the reason, a
 * path that is not a directory, holds a file Sluice did not write, holds a checkpoint's
 * `_metadata`, or has neither a savepoint `_metadata` nor a savepoint directory name. A
 * savepoint whose `_metadata` is corrupt can still be disposed when its name is one.
 */
export async function disposeSavepoint(path: string, config?: Configuration): Promise<void> {
  if (S3_URI.test(path)) {
    const { disposeS3Savepoint, s3ClientFrom } = await import('./s3-checkpoint-storage.js');
    return disposeS3Savepoint(path, s3ClientFrom(config));
  }
  const dir = resolve(path);
  const refuse = (why: string): CheckpointStorageError =>
    new CheckpointStorageError('not-a-savepoint-directory', `refusing to dispose ${dir}: ${why}; pass the savepoint directory printed when the savepoint was taken`);
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw refuse('it is a file, not a savepoint directory');
    entries = await readdir(dir);
  } catch (e) {
    if (isNotFound(e) || isNotDirectory(e)) throw refuse('it does not exist');
    throw e;
  }
  const foreign = entries.filter((n) => !isSnapshotFileName(n));
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, ... (${foreign.length} in all)` : '');
    throw refuse(`it holds ${shown}, which Sluice did not write, so it is not a savepoint directory`);
  }
  let isSavepoint = isSavepointDirName(basename(dir));
  if (entries.includes(METADATA_FILE_NAME)) {
    try {
      const metadata = await readSnapshotMetadata({ dir, metadataFile: join(dir, METADATA_FILE_NAME), checkpointIdFromName: undefined });
      if (metadata.type !== 'savepoint') {
        throw refuse(`it holds checkpoint ${metadata.checkpointId} of job ${metadata.jobId}, not a savepoint; retained checkpoints are removed by their job (num-retained) or by deleting them by hand`);
      }
      isSavepoint = true;
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
    }
  }
  if (!isSavepoint) throw refuse('it has no readable savepoint _metadata and its name is not savepoint-<jobId>-<random>');
  await rm(dir, { recursive: true, force: true });
  await fsyncDirectory(dirname(dir)).catch(() => undefined);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
