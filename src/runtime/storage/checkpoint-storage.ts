import type { CheckpointMetadata, FileScope, StateHandle } from './snapshot-format.js';

/**
 * Where completed checkpoints live (Flink's CheckpointStorage): `jobmanager` keeps them in
 * memory (memory-checkpoint-storage.ts), `filesystem` under `<dir>/<jobId>/chk-N/`
 * (filesystem-checkpoint-storage.ts). Both pass checkpoint-storage.conformance.ts.
 * Savepoints always go to a directory: see savepoint-directory.ts.
 *
 * Protocol for one checkpoint: createCheckpointLocation(id) -> tasks call writeStateFile
 * for each state chunk and put the returned handles into their acknowledgement ->
 * finalizeCheckpoint(metadata) writes `_metadata` last, which is what makes it complete;
 * or abortCheckpoint(id) removes what was written.
 */
export interface CheckpointStorage {
  readonly kind: CheckpointStorageKind;
  readonly jobId: string;
  /** State chunks smaller than this are inlined into `_metadata` (Infinity: always inlined). */
  readonly dataInlineThresholdBytes: number;

  /** Ids strictly increase across calls; an id that goes backwards is a bug and throws. */
  createCheckpointLocation(checkpointId: number): Promise<CheckpointStorageLocation>;
  /** Writes `_metadata` last and atomically; `metadata.checkpointId` names the location. */
  finalizeCheckpoint(metadata: CheckpointMetadata): Promise<CompletedCheckpointHandle>;
  /** Removes what an unfinished checkpoint wrote; writes still in flight fail. Idempotent. */
  abortCheckpoint(checkpointId: number): Promise<void>;
  /** Removes a completed checkpoint (`_metadata` first, so it is never listed half-deleted). Idempotent. Its shared files stay. */
  discardCheckpoint(checkpointId: number): Promise<void>;
  /**
   * Writes state that belongs to no checkpoint yet into the job's shared/ directory (a segment
   * of a state changelog): inline below the data-inline threshold, else a checksummed file
   * written durably. The caller references it from checkpoints and removes it with
   * discardSharedFiles.
   */
  writeSharedStateFile(bytes: Uint8Array): Promise<StateHandle>;
  /** Removes files of the job's shared/ directory (paths as in their handles) that no retained checkpoint references any more. Idempotent. */
  discardSharedFiles(paths: readonly string[]): Promise<void>;
  /** Completed checkpoints of this job, newest first; a checkpoint without `_metadata` is not listed. */
  listRetainedCheckpoints(): Promise<CompletedCheckpointHandle[]>;

  /** Reads and checks `_metadata` of a pointer: this storage's own, or a checkpoint/savepoint directory. */
  readMetadata(pointer: string): Promise<CheckpointMetadata>;
  /** The state bytes of a handle from the snapshot `checkpoint`, checked against its checksum. */
  readStateHandle(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array>;
}

export type CheckpointStorageKind = 'jobmanager' | 'filesystem';

/** Where the tasks of one checkpoint write their state. */
export interface CheckpointStorageLocation {
  readonly checkpointId: number;
  /**
   * Inline below the data-inline threshold, else a checksummed file written durably: in the
   * checkpoint's own directory, or with `scope` 'shared' in the job's shared/ directory, for
   * state later checkpoints reference too (incremental checkpoints; an aborted checkpoint
   * removes its shared files, a completed one hands them to the coordinator's reference counts).
   * `bytes` may be written as they are, without a copy: they must not change until the
   * returned promise settles.
   */
  writeStateFile(bytes: Uint8Array, scope?: FileScope): Promise<StateHandle>;
  /**
   * As writeStateFile, for state bytes another thread holds and writes itself (the snapshot
   * thread's full snapshots), so they never pass through the thread that runs the tasks.
   * Locations without it take the bytes (`writeStateFileFrom` below does).
   */
  writeStateFileFrom?(source: StateFileSource, scope?: FileScope): Promise<StateHandle>;
}

/**
 * State bytes held elsewhere that can be written as a state file where they are. Used up by
 * the first `bytes` or `writeFile`.
 */
export interface StateFileSource {
  readonly sizeBytes: number;
  /** The bytes, brought to this thread (state inlined into `_metadata`, storages without files). */
  bytes(): Promise<Uint8Array>;
  /**
   * Writes the bytes as a checksummed state file at `path`, durably (durable-file.ts's
   * writeChecksummedFileDurably); resolves with the payload's CRC-32C.
   */
  writeFile(path: string, randomHex16: string): Promise<number>;
  /**
   * The checksummed state file (header, then payload) in pieces of `pieceBytes` (the last
   * one shorter), for storage that uploads it in parts (S3 multipart) without having it whole
   * in memory; absent where the bytes are not in a file. Uses the source up as `writeFile`
   * does, also when the iteration stops early.
   */
  filePieces?(pieceBytes: number): AsyncIterable<Uint8Array>;
}

/** Writes `source` at `location`: where it is held when the location can, else through this thread. */
export async function writeStateFileFrom(location: CheckpointStorageLocation, source: StateFileSource, scope?: FileScope): Promise<StateHandle> {
  if (location.writeStateFileFrom !== undefined) return location.writeStateFileFrom(source, scope);
  return location.writeStateFile(await source.bytes(), scope);
}

/** Names a snapshot whose state files can be read: its pointer and its checkpoint id. */
export interface CheckpointRef {
  /** A snapshot directory (or its `_metadata` file), or a `jobmanager://` pointer. */
  readonly pointer: string;
  /** Named in errors. */
  readonly checkpointId: number;
}

export interface CompletedCheckpointHandle extends CheckpointRef {
  readonly jobId: string;
}
