import { discardKeyedSnapshot, type KeyedSnapshotResult } from '../state/keyed-state-file.js';
import type { KeyedStateSnapshot } from '../state/keyed-state-snapshot.js';
import type { OperatorStateEntry } from '../state/operator-state-backend.js';
import type { CheckpointFailureReason } from './coordinator-decisions.js';

/** The state one operator of a subtask contributes to a checkpoint. */
export interface OperatorSubtaskState {
  readonly operatorUid: string;
  /** Held outside the heap (keyed-state-file.ts) only where the responder accepts it (`acceptsHeldKeyedState`). */
  readonly keyed: KeyedSnapshotResult | undefined;
  /** Changelog: the keyed state is the operator subtask's log up to this position (appended before the acknowledgement). */
  readonly changelogPosition?: number | undefined;
  readonly operatorState: readonly OperatorStateEntry[];
}

/** Lets go of the keyed snapshots of state that will not be acknowledged or written (spill files, snapshots the snapshot thread holds). */
export function discardOperatorStates(operators: readonly OperatorSubtaskState[] | undefined): void {
  for (const o of operators ?? []) discardKeyedSnapshot(o.keyed);
}

/** Records that were in flight in an input channel at an unaligned checkpoint, in order. */
export interface InFlightBatch {
  /** 0 or 1: the logical input of the task. */
  readonly input: number;
  /** Channel index within that input. */
  readonly channel: number;
  readonly values: readonly unknown[];
  readonly timestamps: readonly number[];
}

/** Everything one subtask acknowledges for a checkpoint. */
export interface SubtaskState {
  readonly operators: readonly OperatorSubtaskState[];
  /** A source subtask's splits with their positions. */
  readonly sourceSplits: readonly unknown[] | undefined;
  readonly inFlight: readonly InFlightBatch[];
}

export interface SubtaskCheckpointMetrics {
  readonly syncDurationMs: number;
  readonly asyncDurationMs: number;
  readonly alignmentDurationMs: number;
  /** From the checkpoint's trigger to the barrier's arrival here. */
  readonly startDelayMs: number;
  readonly unaligned: boolean;
  readonly inFlightRecords: number;
}

/** Where subtasks report checkpoint results: the coordinator, or its remote gateway. */
export interface CheckpointResponder {
  /**
   * The responder writes acknowledged state to checkpoint storage in this process (the
   * coordinator), so full snapshots held outside the task thread's heap (keyed-state-file.ts:
   * the snapshot thread's, lmdb spill files) can stay there until written. Responders that
   * send state elsewhere get every snapshot on the task thread's heap.
   */
  readonly acceptsHeldKeyedState?: boolean;
  /**
   * Where keyed backends may spill full snapshots for a responder that sends state elsewhere
   * but shares this directory with the writer (a TaskManager and the job's `taskowned/`
   * directory): it sends the spilled file, not its bytes (SnapshotRequest.spillDir).
   */
  readonly keyedStateSpillDir?: string | undefined;
  acknowledge(vertexId: number, subtaskIndex: number, checkpointId: number, state: SubtaskState, metrics: SubtaskCheckpointMetrics): void;
  decline(vertexId: number, subtaskIndex: number, checkpointId: number, reason: CheckpointFailureReason, message: string): void;
  /** Appends a segment of an operator subtask's state changelog (state.backend.changelog.enabled); in position order. */
  appendChangelog(vertexId: number, subtaskIndex: number, operatorUid: string, position: number, snapshot: KeyedStateSnapshot): void;
  /** A source subtask emitted its last record and waits for a final checkpoint. */
  dataFinished(vertexId: number, subtaskIndex: number): void;
}

/** What a subtask starts from after a restore, already redistributed to it. */
export interface SubtaskRestore {
  /** The checkpoint or savepoint restored (every subtask of the job gets one, with state or not). */
  readonly checkpointId: number;
  /** By operator uid. Keyed snapshots of every old subtask that owned some of this subtask's key groups. */
  readonly operators: ReadonlyMap<string, { readonly keyed: readonly KeyedStateSnapshot[]; readonly operatorState: readonly OperatorStateEntry[] }>;
  readonly sourceSplits: readonly unknown[] | undefined;
  readonly inFlight: readonly InFlightBatch[];
}
