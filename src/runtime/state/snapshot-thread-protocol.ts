import type { KeyGroupRange } from './key-group.js';
import type { SnapshotParts } from './snapshot-parts.js';

/** Messages from a task thread to the snapshot thread (snapshot-thread.ts, snapshot-thread-main.ts). */
export type SnapshotThreadRequest =
  /** Replaces replica `replica` with a full snapshot taken at `position`. */
  | { readonly op: 'reset'; readonly request: number; readonly replica: number; readonly position: number; readonly parts: SnapshotParts }
  /** Moves replica `replica` from `base` to `position` and answers with the full snapshot there. */
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
    }
  /** Forgets replica `replica` (its backend was disposed). */
  | { readonly op: 'drop'; readonly request: number; readonly replica: number };

/** The snapshot thread's answer to a request: a full snapshot for `apply`, nothing for the others, or why it failed. */
export type SnapshotThreadReply =
  | {
      readonly request: number;
      readonly ok: true;
      /** For `apply`: the full snapshot, its buffer the keyed state file's payload and the groups views into it. */
      readonly parts?: SnapshotParts | undefined;
      /** For `apply`: where each key group starts in the payload. */
      readonly keyGroupOffsets?: number[] | undefined;
      readonly busyMs: number;
    }
  | { readonly request: number; readonly ok: false; readonly error: string };
