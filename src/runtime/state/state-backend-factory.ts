import type { Configuration } from '../../config/configuration.js';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import type { KeyGroupRange } from './key-group.js';
import type { KeyedStateBackend } from './keyed-state-backend.js';
import { LmdbKeyedStateBackend, type LmdbBackendOptions } from './lmdb-keyed-state-backend.js';
import { SnapshotThread } from './snapshot-thread.js';

/** `state.backend.type`: `hashmap` (objects on the heap, Flink's default) or `lmdb` (embedded store on local disk). */
export type StateBackendType = 'hashmap' | 'lmdb';

/** Which keyed state backend a job's keyed operators get, with its options; carried by the stream graph. */
export interface StateBackendSpec {
  readonly type: StateBackendType;
  readonly lmdb?: LmdbBackendOptions | undefined;
  /** `state.backend.hashmap.snapshot-thread` (default true): full snapshots of heap state are assembled off the task thread. */
  readonly snapshotThread?: boolean | undefined;
}

export const HEAP_STATE_BACKEND: StateBackendSpec = { type: 'hashmap' };

export function stateBackendSpec(config: Configuration): StateBackendSpec {
  const type = (config.getString('state.backend.type') ?? 'hashmap') as StateBackendType;
  if (type === 'hashmap') return config.getBoolean('state.backend.hashmap.snapshot-thread') ? HEAP_STATE_BACKEND : { type, snapshotThread: false };
  return {
    type,
    lmdb: { localDir: config.getString('state.backend.lmdb.localdir'), cacheEntriesMax: config.getOptionalNumber('state.backend.lmdb.cache-entries') },
  };
}

/**
 * A keyed operator subtask's backend. `fullSnapshots`: the job's checkpoints are full (neither
 * incremental nor changelog), so a heap backend assembles them on the snapshot thread unless
 * the spec turns it off.
 */
export function createKeyedStateBackend(spec: StateBackendSpec | undefined, range: KeyGroupRange, maxParallelism: number, nowMs: () => number, fullSnapshots = false): KeyedStateBackend {
  switch ((spec ?? HEAP_STATE_BACKEND).type) {
    case 'hashmap':
      return new HeapKeyedStateBackend(range, maxParallelism, nowMs, fullSnapshots && spec?.snapshotThread !== false ? SnapshotThread.shared() : undefined);
    case 'lmdb':
      return new LmdbKeyedStateBackend(range, maxParallelism, nowMs, spec?.lmdb);
  }
}
