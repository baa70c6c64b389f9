import type { KeyGroupRange } from './key-group.js';
import type { SnapshotParts } from './snapshot-parts.js';

/** Messages from a task thread to the snapshot thread (snapshot-thread.ts, snapshot-thread-main.ts). */
export type SnapshotThreadRequest =
  /** Replaces replica `replica` with a full snapshot taken at `position`. */
  | { readonly op: 'reset'; readonly request: number; readonly replica: number; readonly position: number; readonly parts: SnapshotParts }
  /**
   * Moves replica `replica` from `base` to `position` and answers with the full snapshot there;
   * with `hold`, keeps the full snapshot and answers with its size and layout only (the task
   * thread then has it written, brought over, or released by the requests below).
   */
  | {
      readonly op: 'apply';
      readonly request: number;
      readonly replica: number;
      readonly base: number;
      readonly position: number;
      readonly parts: SnapshotParts;
      /** Of the backend: the answer is packed as its keyed state file (packed-key-groups.ts). */
      readonly keyGroupRange: KeyGroupRange;
      readonly maxParallelism: number;
      readonly hold: boolean;
    }
  /** Writes the held full snapshot at `position` as a checksummed state file at `path`, then forgets it. */
  | { readonly op: 'write'; readonly request: number; readonly replica: number; readonly position: number; readonly path: string; readonly randomHex16: string }
  /** Answers with the held full snapshot at `position` (as `apply` without `hold` does), then forgets it. */
  | { readonly op: 'take'; readonly request: number; readonly replica: number; readonly position: number }
  /** Forgets the held full snapshot at `position` unused (its checkpoint was dropped). */
  | { readonly op: 'release'; readonly request: number; readonly replica: number; readonly position: number }
  /** Forgets replica `replica` (its backend was disposed). */
  | { readonly op: 'drop'; readonly request: number; readonly replica: number };

/** The snapshot thread's answer to a request: a full snapshot for `apply`, nothing for the others, or why it failed. */
export type SnapshotThreadReply =
  | {
      readonly request: number;
      readonly ok: true;
      /** For `apply` without `hold`, and `take`: the full snapshot, its buffer the keyed state file's payload and the groups views into it. */
      readonly parts?: SnapshotParts | undefined;
      /** For `apply` and `take`: where each key group starts in the payload. */
      readonly keyGroupOffsets?: number[] | undefined;
      /** For `apply` with `hold`: the payload's size. */
      readonly sizeBytes?: number | undefined;
      /** For `apply`: the delta's buffers, given back to be written again (snapshot-parts.ts's BufferPool). */
      readonly recycled?: ArrayBuffer[] | undefined;
      /** For `write`: the CRC-32C of the payload written. */
      readonly checksum?: number | undefined;
      readonly busyMs: number;
    }
  | { readonly request: number; readonly ok: false; readonly error: string };

/** `Omit` over each member of a union (a request as sent, before its id is added). */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A request as the task thread sends it; the thread numbers it. */
export type SnapshotThreadMessage = DistributiveOmit<SnapshotThreadRequest, 'request'>;
