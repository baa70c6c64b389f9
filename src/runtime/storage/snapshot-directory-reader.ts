import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { decode } from './checksummed-file.js';
import { checksumHex } from './crc32c.js';
import type { CheckpointRef } from './checkpoint-storage.js';
import { METADATA_FILE_NAME, parseCheckpointDirName, SHARED_DIR_NAME } from './checkpoint-paths.js';
import { decodeMetadata } from './metadata-codec.js';
import type { CheckpointMetadata, FileStateHandle, StateHandle } from './snapshot-format.js';
import { CheckpointStorageError, CorruptCheckpointError, isNotDirectory, isNotFound, noMetadataError, snapshotNotFoundError } from './storage-errors.js';

/** A directory holding `_metadata`: a retained checkpoint (chk-N) or a savepoint, wherever it now lives. */
export interface SnapshotDirectory {
  /** Absolute path of the directory. */
  readonly dir: string;
  readonly metadataFile: string;
  /** N for a `chk-N` directory, undefined otherwise. */
  readonly checkpointIdFromName: number | undefined;
}

/**
 * Finds the snapshot a pointer names: a snapshot directory or its `_metadata` file. Throws
 * CheckpointStorageError when it does not exist, is some other file, or has no `_metadata`.
 */
export async function locateSnapshot(pointer: string): Promise<SnapshotDirectory> {
  const path = resolve(pointer);
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (e) {
    if (isNotFound(e) || isNotDirectory(e)) throw snapshotNotFoundError(path);
    throw e;
  }
  let dir: string;
  if (isDirectory) dir = path;
  else if (basename(path) === METADATA_FILE_NAME) dir = dirname(path);
  else {
    throw new CheckpointStorageError(
      'not-a-snapshot-directory',
      `not a checkpoint or savepoint directory: ${path} is a file; pass the directory that contains _metadata, or the _metadata file itself`,
    );
  }
  const metadataFile = join(dir, METADATA_FILE_NAME);
  let found: boolean;
  try {
    found = (await stat(metadataFile)).isFile();
  } catch (e) {
    if (!isNotFound(e)) throw e;
    found = false;
  }
  if (!found) throw noMetadataError(dir, await completedCheckpointsInside(dir));
  return { dir, metadataFile, checkpointIdFromName: parseCheckpointDirName(basename(dir)) };
}

/** Whether `dir` holds a `_metadata` file. */
async function hasMetadata(dir: string): Promise<boolean> {
  try {
    return (await stat(join(dir, METADATA_FILE_NAME))).isFile();
  } catch {
    return false;
  }
}

/** The newest chk-N with a `_metadata` directly in `dir`, if any. */
async function newestCompletedCheckpoint(dir: string, except?: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const ids = names
    .map((n) => parseCheckpointDirName(n))
    .filter((id): id is number => id !== undefined)
    .sort((a, b) => b - a);
  for (const id of ids) if (join(dir, `chk-${id}`) !== except && (await hasMetadata(join(dir, `chk-${id}`)))) return join(dir, `chk-${id}`);
  return undefined;
}

/**
 * What `sluice run --resume <dir>` resumes from: `dir` itself when it is a snapshot, else the
 * newest completed checkpoint under it: of a job's directory (<dir>/chk-N), or, for the
 * checkpoint directory (`execution.checkpointing.dir`, <dir>/<jobId>/chk-N), of the job whose
 * newest checkpoint completed last (a resumed run writes under its own new job id, so the
 * newest is the latest run's). Undefined when there is none.
 */
export async function newestSnapshotUnder(dir: string): Promise<string | undefined> {
  const root = resolve(dir);
  if (await hasMetadata(root)) return root;
  const own = await newestCompletedCheckpoint(root);
  if (own !== undefined) return own;
  let entries: Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return undefined;
  }
  let newest: { path: string; completedMs: number } | undefined;
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const path = await newestCompletedCheckpoint(join(root, e.name));
    if (path === undefined) continue;
    const completedMs = (await stat(join(path, METADATA_FILE_NAME))).mtimeMs;
    if (newest === undefined || completedMs > newest.completedMs) newest = { path, completedMs };
  }
  return newest?.path;
}

/**
 * What to do about a snapshot that cannot be read, for its error: the newest other completed
 * checkpoint beside a retained checkpoint, or another snapshot in general.
 */
export async function otherSnapshotHint(dir: string): Promise<string> {
  const other = parseCheckpointDirName(basename(dir)) === undefined ? undefined : await newestCompletedCheckpoint(dirname(dir), dir);
  return other === undefined
    ? '; restore from another savepoint or retained checkpoint of the job'
    : `; restore from another completed checkpoint of the job, such as ${other} (newest first), or from a savepoint`;
}

/** The other completed checkpoints (chk-N with a `_metadata`) beside the retained checkpoint in `dir`. */
export async function otherCompletedCheckpoints(dir: string): Promise<string[]> {
  const parent = dirname(dir);
  const out: string[] = [];
  for (const name of await readdir(parent)) {
    const other = join(parent, name);
    if (other !== dir && parseCheckpointDirName(name) !== undefined && (await hasMetadata(other))) out.push(other);
  }
  return out;
}

/**
 * The completed checkpoints a directory passed instead of one holds, newest of each job: a
 * job's directory (<dir>/<jobId>: its newest chk-N) or the checkpoint directory itself (the
 * newest chk-N of each job directory in it, at most 3). Named in the error, as the path to pass.
 */
async function completedCheckpointsInside(dir: string): Promise<string[]> {
  const own = await newestCompletedCheckpoint(dir);
  if (own !== undefined) return [own];
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const newest = await newestCompletedCheckpoint(join(dir, e.name));
    if (newest !== undefined) out.push(newest);
    if (out.length === 3) break;
  }
  return out;
}

/** Reads and checks `_metadata` of a located snapshot. A chk-N directory must hold checkpoint N. */
export async function readSnapshotMetadata(snapshot: SnapshotDirectory): Promise<CheckpointMetadata> {
  const file = snapshot.metadataFile;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (e) {
    if (isNotFound(e)) throw noMetadataError(snapshot.dir);
    throw e;
  }
  const metadata = decodeMetadata(bytes, { file, checkpointId: snapshot.checkpointIdFromName });
  const named = snapshot.checkpointIdFromName;
  if (named !== undefined && metadata.type === 'checkpoint' && metadata.checkpointId !== named) {
    throw new CorruptCheckpointError(file, named, `it describes checkpoint ${metadata.checkpointId}, but lies in ${basename(snapshot.dir)}`);
  }
  return metadata;
}

/** Where a file handle lives, given its snapshot's directory and the job's shared/ directory. */
export function resolveStateFilePath(handle: FileStateHandle, dir: string, sharedDir: string | undefined): string {
  if (handle.scope === 'exclusive') return join(dir, handle.path);
  if (sharedDir === undefined) throw new Error(`shared state file ${handle.path} cannot be resolved: this snapshot has no shared directory`);
  return join(sharedDir, handle.path);
}

/**
 * Reads a state file and checks it end to end: envelope, kind, and that size and checksum
 * are the ones `_metadata` recorded (so a file swapped for another valid one is caught).
 */
export async function readStateFile(handle: FileStateHandle, path: string, checkpointId: number | undefined): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    if (isNotFound(e)) throw new CorruptCheckpointError(path, checkpointId, 'missing: _metadata refers to it, but it does not exist');
    if ((e as NodeJS.ErrnoException).code === 'EISDIR') throw new CorruptCheckpointError(path, checkpointId, 'is a directory: _metadata refers to it as a state file');
    throw e;
  }
  const { payload, checksum } = decode(bytes, { file: path, checkpointId, expectedKind: 'state' });
  if (payload.length !== handle.sizeBytes || checksum !== handle.checksum) {
    throw new CorruptCheckpointError(
      path,
      checkpointId,
      `holds ${payload.length} bytes with checksum ${checksumHex(checksum)}, _metadata expects ${handle.sizeBytes} bytes with checksum ${checksumHex(handle.checksum)}`,
    );
  }
  return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
}

/** The directory a file-system pointer names (a snapshot directory or its `_metadata`). */
export function snapshotDirOfPointer(pointer: string): string {
  const path = resolve(pointer);
  return basename(path) === METADATA_FILE_NAME ? dirname(path) : path;
}

/** The job's shared/ directory of a retained checkpoint `<dir>/<jobId>/chk-N`; undefined for savepoints. */
export function sharedDirOfSnapshot(dir: string): string | undefined {
  return parseCheckpointDirName(basename(dir)) === undefined ? undefined : join(dirname(dir), SHARED_DIR_NAME);
}

/** Reads a handle of a snapshot that lives in a directory (a retained checkpoint or a savepoint). */
export async function readStateHandleInDirectory(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array> {
  if (handle.kind === 'inline') return handle.bytes;
  const dir = snapshotDirOfPointer(checkpoint.pointer);
  return readStateFile(handle, resolveStateFilePath(handle, dir, sharedDirOfSnapshot(dir)), checkpoint.checkpointId);
}
