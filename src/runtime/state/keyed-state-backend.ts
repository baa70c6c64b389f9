import type {
  AggregatingState,
  KeyedStateDescriptor,
  ListState,
  MapState,
  ReducingState,
  ValueState,
} from '../../api/state-descriptors.js';
import type { KeyGroupRange, KeyType } from './key-group.js';

/** A keyed state handle that also scopes itself by a namespace (a window, for example). */
export interface NamespacedState {
  setCurrentNamespace(namespace: number): void;
  /** The stored form (accumulator, list) for the current key and namespace, for merging. */
  getInternal(): unknown;
  updateInternal(value: unknown): void;
}

export type InternalState = (
  | ValueState<unknown>
  | ListState<unknown>
  | MapState<unknown, unknown>
  | ReducingState<unknown>
  | AggregatingState<unknown, unknown>
) &
  NamespacedState;

/**
 * Keyed state of one operator subtask, partitioned by key group. Every keyed state goes
 * through this interface so it can be snapshotted, restored, rescaled and swapped for
 * another backend. The current key is set once per record; state handles read it.
 */
export interface KeyedStateBackend {
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  setCurrentKey(key: KeyType): void;
  /**
   * As setCurrentKey, for a key whose key group is known (the keyBy computed it to route the
   * record): the key is not hashed again, except one in many, as a check (KeyGroupHints).
   */
  setCurrentKeyInGroup(key: KeyType, keyGroup: number): void;
  getCurrentKey(): KeyType;
  getCurrentKeyGroup(): number;
  /** Creates the state on first call; later calls with the same name return the same handle. */
  getOrCreateState(descriptor: KeyedStateDescriptor, namespaced: boolean): InternalState;
  /** The operator's timers of a time domain (0 event time, 1 processing time), restored ones included; snapshotted with the state. */
  timerQueue(domain: 0 | 1): import('../task/timer-queue.js').TimerQueue;
  /**
   * Synchronous part of a snapshot, at the barrier; the returned function is the asynchronous
   * part. Mutations after this call are not in the snapshot. Every backend writes the same
   * canonical format, so a snapshot restores into any backend.
   */
  snapshot(request: SnapshotRequest & ({ readonly hold: true } | { readonly spillDir: string })): () => Promise<import('./keyed-state-file.js').KeyedSnapshotResult>;
  snapshot(request?: SnapshotRequest): () => Promise<import('./keyed-state-snapshot.js').KeyedStateSnapshot>;
  /** Checkpoint `checkpointId` completed: an incremental backend's later deltas build on it. */
  notifyCheckpointComplete(checkpointId: number): void;
  notifyCheckpointAborted(checkpointId: number): void;
  /** Takes this subtask's key groups from snapshots of any parallelism; before any state or timer is registered. */
  restore(snapshots: readonly import('./keyed-state-snapshot.js').KeyedStateSnapshot[]): void;
  /**
   * The keys with an entry in `namespace` of a registered state (every key with an entry when
   * the state has no namespaces), in key-group order: a list taken now, so the caller may
   * write to the state while it goes through them (Flink's getKeys, for applyToKeyedState).
   */
  keys(stateName: string, namespace: number): KeyType[];
  /** Number of (key, namespace) entries of a registered state; for tests and metrics. */
  numEntries(stateName: string): number;
  /** Whether a state of this name is registered or was restored (restored entries count once it is registered). */
  hasState(stateName: string): boolean;
  /** Names of the states registered or restored (restored ones until they are registered, too). */
  stateNames(): string[];
  dispose(): void;
}

/** What a snapshot is for. Without it (or without `incremental`) a snapshot is full. */
export interface SnapshotRequest {
  /** The checkpoint; with `changelog`, the position in the log (increasing from 1). */
  readonly checkpointId: number;
  /** A checkpoint (not a savepoint) with execution.checkpointing.incremental: may be a delta over the last completed checkpoint. */
  readonly incremental: boolean;
  /** With `incremental`: a full snapshot all the same (`sluice checkpoint --full`), which later deltas build on. */
  readonly full?: boolean;
  /**
   * state.backend.changelog.enabled: a segment of the state changelog (the changes since the
   * previous segment, or full for the first one) or a materialization (full).
   */
  readonly changelog?: 'segment' | 'materialize';
  /**
   * The caller writes the snapshot to checkpoint storage in this process: a full snapshot may
   * stay where it is assembled until written (keyed-state-file.ts): with the snapshot thread
   * (HeldKeyedStateSnapshot), or in a spill file of the lmdb backend (SpilledKeyedStateSnapshot).
   */
  readonly hold?: boolean;
  /**
   * A directory the writer of the checkpoint reads too (on a TaskManager: the job's
   * `taskowned/` directory of filesystem checkpoint storage, which the JobManager writes
   * from): a backend that spills full snapshots (lmdb) spills them there, and the caller sends
   * their file instead of their bytes. The heap backend ignores it.
   */
  readonly spillDir?: string;
}
