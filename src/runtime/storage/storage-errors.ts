/**
 * Operating errors of checkpoint storage. Each message names the path, the problem and
 * what to do about it. Programmer errors (a checkpoint id going backwards, finalizing twice,
 * malformed metadata handed to `finalizeCheckpoint`) are plain `Error`s from assertions.
 */

export type CheckpointStorageErrorCode =
  | 'corrupt'
  | 'not-writable'
  | 'not-a-directory'
  | 'not-found'
  | 'not-a-snapshot-directory'
  | 'not-a-savepoint-directory'
  | 'wrong-job'
  | 'state-too-large'
  | 'io';

export class CheckpointStorageError extends Error {
  override readonly name: string = 'CheckpointStorageError';
  constructor(
    readonly code: CheckpointStorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A file Sluice wrote cannot be trusted: bad magic, unknown format version, truncated,
 * checksum mismatch, missing, or malformed content. Restore falls back to an older
 * checkpoint (see chooseCheckpointToRestore).
 */
export class CorruptCheckpointError extends CheckpointStorageError {
  override readonly name = 'CorruptCheckpointError';
  constructor(
    /** The file (absolute path, or a jobmanager:// pointer for in-memory metadata). */
    readonly file: string,
    /** The checkpoint the file belongs to; undefined when not known yet (a savepoint's _metadata). */
    readonly checkpointId: number | undefined,
    /** What is wrong, e.g. "checksum mismatch: expected 1a2b3c4d, found 00ff00ff". */
    readonly reason: string,
  ) {
    super('corrupt', `${checkpointId === undefined ? 'snapshot' : `checkpoint ${checkpointId}`}: file ${file} is corrupt (${reason})`);
  }
}

/** What a directory is for, so a message can name the setting that chose it. */
export type DirectoryRole = 'checkpoint directory' | 'savepoint directory';

const SETTING_OF_ROLE: Record<DirectoryRole, string> = {
  'checkpoint directory': 'execution.checkpointing.dir',
  'savepoint directory': 'the savepoint target directory (or execution.checkpointing.savepoint-dir)',
};

interface ErrnoLike {
  code?: unknown;
  message?: unknown;
}

function errnoOf(e: unknown): string | undefined {
  const code = (e as ErrnoLike | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Turns a Node file-system error met while creating or writing under `dir` into a
 * CheckpointStorageError that names the problem and the fix. Pure: the decision is a
 * function of the error code, so it is testable without a read-only file system (tests
 * run as root, which ignores permission bits).
 */
export function storageWriteError(e: unknown, dir: string, role: DirectoryRole): CheckpointStorageError {
  if (e instanceof CheckpointStorageError) return e;
  const errno = errnoOf(e);
  const detail = (e as ErrnoLike | null)?.message;
  const cause = typeof detail === 'string' ? ` (${detail})` : '';
  const setting = SETTING_OF_ROLE[role];
  switch (errno) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new CheckpointStorageError(
        'not-writable',
        `${role} ${dir} is not writable${cause}; grant write access to the user running Sluice, or point ${setting} at a writable directory`,
        { cause: e },
      );
    case 'ENOTDIR':
    case 'EEXIST':
      return notADirectoryError(dir, role, `(or one of its parents) `, cause, e);
    case 'ENOSPC':
    case 'EDQUOT':
      return new CheckpointStorageError('io', `${role} ${dir} is full${cause}; free space, lower num-retained, or point ${setting} at a larger volume`, { cause: e });
    default:
      return new CheckpointStorageError('io', `cannot write to ${role} ${dir}${cause}`, { cause: e });
  }
}

/** "<role> <path> is a file, not a directory", with the fix. */
export function notADirectoryError(path: string, role: DirectoryRole, which = '', cause = '', error?: unknown): CheckpointStorageError {
  return new CheckpointStorageError(
    'not-a-directory',
    `${role} ${path} ${which}is a file, not a directory${cause}; remove or rename the file, or point ${SETTING_OF_ROLE[role]} at a directory`,
    error === undefined ? undefined : { cause: error },
  );
}

/** True for the errno of a path that does not exist. */
export function isNotFound(e: unknown): boolean {
  return errnoOf(e) === 'ENOENT';
}

/** True for the errno of a path whose parent is not a directory. */
export function isNotDirectory(e: unknown): boolean {
  return errnoOf(e) === 'ENOTDIR';
}

/**
 * "not a checkpoint or savepoint directory: <path> has no _metadata", with the fix; `inside`:
 * completed checkpoints found under the path (a job's directory or the checkpoint directory
 * passed instead of a chk-N), named as what to pass.
 */
export function noMetadataError(path: string, inside: readonly string[] = []): CheckpointStorageError {
  const fix =
    inside.length === 1
      ? `it holds completed checkpoints: pass one, the newest is ${inside[0]}`
      : inside.length > 1
        ? `it holds the checkpoints of several jobs: pass one; the newest of each job: ${inside.join(', ')}`
        : 'pass the directory of a completed checkpoint (<dir>/<jobId>/chk-N) or of a savepoint (savepoint-<jobId>-<random>), or its _metadata file';
  return new CheckpointStorageError('not-a-snapshot-directory', `not a checkpoint or savepoint directory: ${path} has no _metadata; ${fix}`);
}

export function snapshotNotFoundError(path: string): CheckpointStorageError {
  return new CheckpointStorageError(
    'not-found',
    `not a checkpoint or savepoint directory: ${path} does not exist; check the path (a retained checkpoint lives in <dir>/<jobId>/chk-N)`,
  );
}

export function wrongJobError(checkpointId: number, path: string, foundJobId: string, expectedJobId: string): CheckpointStorageError {
  return new CheckpointStorageError(
    'wrong-job',
    `checkpoint ${checkpointId} at ${path} belongs to job ${foundJobId}, not to job ${expectedJobId}; ` +
      `a job's checkpoint directory holds only its own checkpoints (was a directory copied?). ` +
      `To start job ${expectedJobId} from it, restore it explicitly as a savepoint path (flink run -s ${path})`,
  );
}
