import { assert } from '../../util/assert.js';
import { ChangedEntries } from './changed-entries.js';
import { keyGroupRangeSize, type KeyGroupRange } from './key-group.js';
import type { SnapshotRequest } from './keyed-state-backend.js';

/**
 * Whether a keyed state backend's next checkpoint snapshot is full or a delta over the last
 * completed one (`execution.checkpointing.incremental`). A delta must build on a checkpoint
 * that completed: one over an aborted checkpoint would miss that checkpoint's changes. A
 * full snapshot comes first, after a restore, when no checkpoint completed for too long, and
 * when the chain of deltas on the last full snapshot has grown too long or too large to
 * restore quickly (the chain is read whole on restore).
 *
 * Pure bookkeeping, no I/O: the backend asks `plan` at the barrier, reports the size written
 * with `written`, and forwards completions and aborts.
 */
export class IncrementalSnapshots {
  private readonly pending = new Map<number, { base: ConfirmedBase | undefined; bytes: number | undefined; entries: number | undefined }>();
  private base: ConfirmedBase | undefined;
  private lastPlanned = 0;

  constructor(private readonly policy: IncrementalPolicy = DEFAULT_INCREMENTAL_POLICY) {}

  /**
   * `liveEntries`, when the backend can count its entries cheaply, lets the size limit follow
   * a growing state: the deltas are compared with the full snapshot's size scaled by how many
   * entries there are now, so a state that only grows (its deltas all still live) does not
   * get a full snapshot every time the deltas outgrow the first, small one.
   */
  plan(checkpointId: number, liveEntries?: () => number, forceFull = false): SnapshotPlan {
    assert(checkpointId > this.lastPlanned, `checkpoint ids of snapshots increase (${this.lastPlanned} then ${checkpointId})`);
    this.lastPlanned = checkpointId;
    if (this.pending.size >= this.policy.maxUnconfirmed) {
      // Checkpoints stopped completing: start again from a full snapshot.
      this.pending.clear();
      this.base = undefined;
    }
    const b = this.base;
    const full = forceFull || b === undefined || b.deltas >= this.policy.maxDeltas || b.deltaBytes > this.estimatedFullBytes(b, liveEntries) * this.policy.maxDeltaBytesRatio;
    this.pending.set(checkpointId, { base: full ? undefined : b, bytes: undefined, entries: full ? liveEntries?.() : undefined });
    return full ? { kind: 'full' } : { kind: 'delta', baseCheckpointId: b.checkpointId };
  }

  /** The size a full snapshot would have now: the last full one's, scaled by the growth in entries when known. */
  private estimatedFullBytes(b: ConfirmedBase, liveEntries: (() => number) | undefined): number {
    if (b.deltaBytes <= b.fullBytes * this.policy.maxDeltaBytesRatio || liveEntries === undefined || b.fullEntries === undefined || b.fullEntries === 0) return b.fullBytes;
    return b.fullBytes * Math.max(1, liveEntries() / b.fullEntries);
  }

  /** What the snapshot of `checkpointId` serialized, in bytes. */
  written(checkpointId: number, bytes: number): void {
    const p = this.pending.get(checkpointId);
    if (p !== undefined) p.bytes = bytes;
  }

  /** Checkpoint `checkpointId` completed. Returns whether later deltas now build on it. */
  confirm(checkpointId: number): boolean {
    const p = this.pending.get(checkpointId);
    if (p === undefined || p.bytes === undefined) return false; // a savepoint, or not snapshotted here
    this.base =
      p.base === undefined
        ? { checkpointId, deltas: 0, deltaBytes: 0, fullBytes: p.bytes, fullEntries: p.entries }
        : { ...p.base, checkpointId, deltas: p.base.deltas + 1, deltaBytes: p.base.deltaBytes + p.bytes };
    for (const id of this.pending.keys()) if (id <= checkpointId) this.pending.delete(id);
    return true;
  }

  aborted(checkpointId: number): void {
    this.pending.delete(checkpointId);
  }

  /** Whether no completed checkpoint is known to build on (the change sets can be emptied). */
  get hasBase(): boolean {
    return this.base !== undefined;
  }
}

export interface IncrementalPolicy {
  /** At most this many deltas on one full snapshot. */
  readonly maxDeltas: number;
  /** A full snapshot once the deltas on the last full one together exceed this times its size. */
  readonly maxDeltaBytesRatio: number;
  /** Snapshots waiting for completion beyond which the backend gives up on deltas until a full one completes. */
  readonly maxUnconfirmed: number;
}

export const DEFAULT_INCREMENTAL_POLICY: IncrementalPolicy = { maxDeltas: 64, maxDeltaBytesRatio: 1, maxUnconfirmed: 32 };

export type SnapshotPlan = { readonly kind: 'full' } | { readonly kind: 'delta'; readonly baseCheckpointId: number };

/**
 * A backend's incremental bookkeeping: the plan per snapshot and the change sets of its
 * states and timer queues, sealed together at each barrier and dropped together when a
 * checkpoint completes.
 */
export class BackendIncrements {
  readonly plans = new IncrementalSnapshots();
  private readonly sets: ChangedEntries<unknown>[] = [];

  constructor(private readonly groupCount: number) {}

  /** A new change set (for a state or a timer queue), tracked from now on. */
  track<K>(): ChangedEntries<K> {
    const c = new ChangedEntries<K>(this.groupCount);
    this.sets.push(c as ChangedEntries<unknown>);
    return c;
  }

  /**
   * What a snapshot request is: full without incremental or changelog; else the change sets
   * are sealed and the snapshot planned (a checkpoint's delta, a log segment, or full).
   */
  static plan(
    backend: { increments: BackendIncrements | undefined; readonly keyGroupRange: KeyGroupRange },
    request: SnapshotRequest | undefined,
    startTracking: (increments: BackendIncrements) => void,
    liveEntries?: () => number,
  ): SnapshotPlan {
    if (request?.incremental !== true && request?.changelog === undefined) return { kind: 'full' };
    let inc = backend.increments;
    if (inc === undefined) {
      inc = backend.increments = new BackendIncrements(keyGroupRangeSize(backend.keyGroupRange));
      startTracking(inc);
    }
    if (request.changelog !== undefined) return inc.beginSegment(request.checkpointId, request.changelog === 'materialize');
    return inc.begin(request.checkpointId, liveEntries, request.full === true);
  }

  /** At the barrier of checkpoint `checkpointId`: seals every change set and plans the snapshot (`full`: whatever the policy says). */
  begin(checkpointId: number, liveEntries?: () => number, full = false): SnapshotPlan {
    const plan = this.plans.plan(checkpointId, liveEntries, full);
    for (const s of this.sets) s.seal(checkpointId);
    // Nothing to build on: only changes after this snapshot will matter.
    if (!this.plans.hasBase) for (const s of this.sets) s.drop(checkpointId);
    return plan;
  }

  confirm(checkpointId: number): void {
    if (this.plans.confirm(checkpointId)) for (const s of this.sets) s.drop(checkpointId);
  }

  private lastSegment: number | undefined;

  /**
   * Changelog mode: seals every change set at log position `position`; the snapshot is the
   * changes since the previous position, or full (the first one, or a materialization).
   * Log segments are durable once written, whatever happens to checkpoints: no confirmation.
   */
  beginSegment(position: number, materialize: boolean): SnapshotPlan {
    const previous = this.lastSegment;
    assert(previous === undefined || position > previous, `changelog positions increase (${previous} then ${position})`);
    this.lastSegment = position;
    for (const s of this.sets) {
      s.seal(position);
      // Only the generation just sealed matters for this segment; earlier ones were in earlier segments.
      if (previous !== undefined) s.drop(previous);
    }
    if (materialize || previous === undefined) return { kind: 'full' };
    return { kind: 'delta', baseCheckpointId: previous };
  }

  aborted(checkpointId: number): void {
    this.plans.aborted(checkpointId);
  }
}

interface ConfirmedBase {
  readonly checkpointId: number;
  /** Deltas on the last full snapshot, this one included. */
  readonly deltas: number;
  readonly deltaBytes: number;
  readonly fullBytes: number;
  /** Entries of the state at the full snapshot, when the backend counts them. */
  readonly fullEntries: number | undefined;
}
