import type { StateFileSource } from '../storage/checkpoint-storage.js';
import type { KeyGroupRange } from './key-group.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';

/**
 * A full keyed state snapshot whose bytes are not on the task thread's heap: the keyed state
 * file's payload (`packKeyGroups` of the snapshot, byte for byte), held where it was
 * assembled until it is written as a state file there (`writeFile`) or brought here
 * (`bytes`). Two kinds: the snapshot thread's (HeldKeyedStateSnapshot, heap backend) and a
 * spill file on local disk (SpilledKeyedStateSnapshot, lmdb backend).
 *
 * Used up by the first `writeFile` or `bytes`. One that will not be written (its checkpoint
 * was aborted or failed, its acknowledgement dropped) is `discard`ed; both kinds also let go
 * when garbage collected unused.
 */
export interface KeyedStateFile extends StateFileSource {
  readonly formatVersion: 1;
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  /** Where each key group of the range starts in the payload. */
  readonly keyGroupOffsets: readonly number[];
  /** Lets go of the bytes unwritten; nothing when used already. Idempotent. */
  discard(): void;
}

/** What an operator's keyed backend gives a checkpoint: the snapshot, or a full one held outside the heap. */
export type KeyedSnapshotResult = KeyedStateSnapshot | KeyedStateFile;

export function isKeyedStateFile(s: KeyedSnapshotResult): s is KeyedStateFile {
  return typeof (s as Partial<KeyedStateFile>).writeFile === 'function';
}

/** Discards a snapshot that will not be written (a no-op for one on the heap). */
export function discardKeyedSnapshot(s: KeyedSnapshotResult | undefined): void {
  if (s !== undefined && isKeyedStateFile(s)) s.discard();
}
