import { checkCheckpointId, checkJobId } from './checkpoint-paths.js';
import type { CheckpointRef, CheckpointStorage, CheckpointStorageLocation, CompletedCheckpointHandle } from './checkpoint-storage.js';
import { decodeMetadata, encodeMetadata } from './metadata-codec.js';
import { locateSnapshot, readSnapshotMetadata, readStateHandleInDirectory } from './snapshot-directory-reader.js';
import { stateHandlesOf, type CheckpointMetadata, type StateHandle } from './snapshot-format.js';
import { CheckpointStorageError, wrongJobError } from './storage-errors.js';

/** Flink's default max state size of jobmanager storage (MemoryStateBackend), 5 MiB. */
export const JOBMANAGER_STATE_SIZE_BYTES_MAX_DEFAULT = 5 * 1024 * 1024;

const POINTER_PATTERN = /^jobmanager:\/\/([^/]+)\/chk-([1-9][0-9]*)$/;

export function memoryCheckpointPointer(jobId: string, checkpointId: number): string {
  return `jobmanager://${jobId}/chk-${checkpointId}`;
}

export interface MemoryCheckpointStorageOptions {
  readonly jobId: string;
  /** Largest state chunk accepted; larger state needs filesystem storage. Default 5 MiB. */
  readonly stateSizeBytesMax?: number;
  /**
   * Encoded `_metadata` of completed checkpoints by id. Pass a map to share it between
   * instances (a restarted coordinator in the same process) or to inspect it in tests.
   */
  readonly store?: Map<number, Uint8Array>;
}

type LocationState = 'open' | 'aborted';

/**
 * `jobmanager` checkpoint storage: state is always inlined and `_metadata` is kept, encoded
 * and checksummed like on disk, in a map. Nothing survives the process. Pointers look like
 * `jobmanager://<jobId>/chk-N`; other pointers are read as checkpoint or savepoint
 * directories, so a job with this storage can restore from a savepoint.
 */
export class MemoryCheckpointStorage implements CheckpointStorage {
  readonly kind = 'jobmanager' as const;
  readonly jobId: string;
  readonly dataInlineThresholdBytes = Number.POSITIVE_INFINITY;
  readonly stateSizeBytesMax: number;
  private readonly store: Map<number, Uint8Array>;
  private readonly locations = new Map<number, { state: LocationState }>();
  private lastCreatedCheckpointId = 0;

  constructor(options: MemoryCheckpointStorageOptions) {
    checkJobId(options.jobId);
    this.jobId = options.jobId;
    this.stateSizeBytesMax = options.stateSizeBytesMax ?? JOBMANAGER_STATE_SIZE_BYTES_MAX_DEFAULT;
    this.store = options.store ?? new Map();
    for (const id of this.store.keys()) this.lastCreatedCheckpointId = Math.max(this.lastCreatedCheckpointId, id);
  }

  async createCheckpointLocation(checkpointId: number): Promise<CheckpointStorageLocation> {
    checkCheckpointId(checkpointId);
    if (checkpointId <= this.lastCreatedCheckpointId) {
      throw new Error(`checkpoint ${checkpointId} was created after checkpoint ${this.lastCreatedCheckpointId}; checkpoint ids strictly increase`);
    }
    this.lastCreatedCheckpointId = checkpointId;
    const location = { state: 'open' as LocationState };
    this.locations.set(checkpointId, location);
    return {
      checkpointId,
      writeStateFile: async (bytes: Uint8Array): Promise<StateHandle> => {
        if (location.state !== 'open') throw new Error(`cannot write state: checkpoint ${checkpointId} is ${location.state}`);
        if (bytes.length > this.stateSizeBytesMax) {
          throw new CheckpointStorageError(
            'state-too-large',
            `checkpoint ${checkpointId}: a state chunk of ${bytes.length} bytes exceeds the ${this.stateSizeBytesMax}-byte limit of jobmanager checkpoint storage; ` +
              `set execution.checkpointing.dir to use filesystem checkpoint storage`,
          );
        }
        return { kind: 'inline', bytes: new Uint8Array(bytes) };
      },
    };
  }

  async finalizeCheckpoint(metadata: CheckpointMetadata): Promise<CompletedCheckpointHandle> {
    const id = metadata.checkpointId;
    if (metadata.jobId !== this.jobId) throw new Error(`checkpoint ${id} of job ${metadata.jobId} handed to the storage of job ${this.jobId}`);
    if (metadata.type !== 'checkpoint') throw new Error(`checkpoint ${id} has type ${metadata.type}; savepoints go to createSavepointLocation`);
    const location = this.locations.get(id);
    if (location === undefined || location.state !== 'open') {
      throw new Error(`cannot finalize checkpoint ${id}: ${location === undefined ? 'no location was created for it (or it was finalized already)' : 'it was aborted'}`);
    }
    for (const h of stateHandlesOf(metadata)) {
      if (h.kind !== 'inline') throw new Error(`checkpoint ${id} references file ${h.path}, but jobmanager storage holds inline state only`);
    }
    const encoded = encodeMetadata(metadata);
    this.locations.delete(id);
    this.store.set(id, encoded);
    return { jobId: this.jobId, checkpointId: id, pointer: memoryCheckpointPointer(this.jobId, id) };
  }

  async abortCheckpoint(checkpointId: number): Promise<void> {
    if (this.store.has(checkpointId)) throw new Error(`checkpoint ${checkpointId} is complete; discard it instead of aborting it`);
    const location = this.locations.get(checkpointId);
    if (location !== undefined) location.state = 'aborted';
    this.locations.delete(checkpointId);
  }

  async writeSharedStateFile(bytes: Uint8Array): Promise<StateHandle> {
    if (bytes.length > this.stateSizeBytesMax) {
      throw new CheckpointStorageError(
        'state-too-large',
        `a state chunk of ${bytes.length} bytes exceeds the ${this.stateSizeBytesMax}-byte limit of jobmanager checkpoint storage; set execution.checkpointing.dir to use filesystem checkpoint storage`,
      );
    }
    return { kind: 'inline', bytes: new Uint8Array(bytes) };
  }

  /** Memory storage keeps every state inline: no shared files. */
  async discardSharedFiles(_paths: readonly string[]): Promise<void> {}

  async discardCheckpoint(checkpointId: number): Promise<void> {
    if (this.locations.has(checkpointId)) throw new Error(`checkpoint ${checkpointId} is in progress; abort it instead of discarding it`);
    this.store.delete(checkpointId);
  }

  async listRetainedCheckpoints(): Promise<CompletedCheckpointHandle[]> {
    return [...this.store.keys()]
      .sort((a, b) => b - a)
      .map((checkpointId) => ({ jobId: this.jobId, checkpointId, pointer: memoryCheckpointPointer(this.jobId, checkpointId) }));
  }

  async readMetadata(pointer: string): Promise<CheckpointMetadata> {
    const m = POINTER_PATTERN.exec(pointer);
    if (m === null) {
      const snapshot = await locateSnapshot(pointer);
      return readSnapshotMetadata(snapshot);
    }
    const [, jobId, idText] = m;
    const checkpointId = Number(idText);
    const bytes = jobId === this.jobId ? this.store.get(checkpointId) : undefined;
    if (bytes === undefined) {
      throw new CheckpointStorageError(
        'not-found',
        `checkpoint ${checkpointId} (${pointer}) is not retained: jobmanager checkpoint storage keeps checkpoints of the running job in memory only, ` +
          `and this one was discarded or belongs to another job or process; set execution.checkpointing.dir to retain checkpoints on disk`,
      );
    }
    const metadata = decodeMetadata(bytes, { file: pointer, checkpointId });
    if (metadata.jobId !== this.jobId) throw wrongJobError(checkpointId, pointer, metadata.jobId, this.jobId);
    return metadata;
  }

  async readStateHandle(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array> {
    if (handle.kind === 'inline') return handle.bytes;
    if (POINTER_PATTERN.test(checkpoint.pointer)) {
      throw new Error(`checkpoint ${checkpoint.checkpointId} (${checkpoint.pointer}) is held in memory and has no file ${handle.path}`);
    }
    return readStateHandleInDirectory(handle, checkpoint);
  }
}
