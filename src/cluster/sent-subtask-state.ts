import { assert } from '../util/assert.js';
import type { OperatorSubtaskState, SubtaskState } from '../runtime/checkpoint/subtask-state.js';
import { isKeyedStateFile } from '../runtime/state/keyed-state-file.js';
import type { KeyedStateSnapshot } from '../runtime/state/keyed-state-snapshot.js';
import { SpilledKeyedStateSnapshot, type SpilledSnapshotFileRef } from '../runtime/state/spilled-keyed-state-snapshot.js';

/** An operator's state as a TaskManager sends it: keyed state as bytes, or a full snapshot spilled into the job's taskowned/ directory. */
export type SentOperatorState = Omit<OperatorSubtaskState, 'keyed'> & { readonly keyed: KeyedStateSnapshot | SpilledSnapshotFileRef | undefined };

/** A subtask's acknowledged state on the control connection. */
export type SentSubtaskState = Omit<SubtaskState, 'operators'> & { readonly operators: readonly SentOperatorState[] };

/**
 * TaskManager side: the state to send. A spilled full snapshot goes as a reference to its
 * file in `spillDir`, which the JobManager reads too (the file is the JobManager's from
 * here); other keyed state is all on this heap (the responder accepts nothing held elsewhere).
 */
export function sentSubtaskState(state: SubtaskState, spillDir: string | undefined): SentSubtaskState {
  const operators = state.operators.map((o): SentOperatorState => {
    if (o.keyed === undefined || !isKeyedStateFile(o.keyed)) return { ...o, keyed: o.keyed };
    assert(o.keyed instanceof SpilledKeyedStateSnapshot && spillDir !== undefined, `operator ${o.operatorUid}: of the keyed snapshots held outside the heap, only spill files in the job's taskowned/ directory go to the JobManager`);
    return { ...o, keyed: o.keyed.handOver(spillDir) };
  });
  return { ...state, operators };
}

/**
 * JobManager side: the state a TaskManager sent, spilled snapshots taken over from
 * `taskOwnedDir` (the job's taskowned/ directory; undefined when checkpoint storage has
 * none, and then a TaskManager sends none).
 */
export function receivedSubtaskState(sent: SentSubtaskState, taskOwnedDir: string | undefined): SubtaskState {
  const operators = sent.operators.map((o): OperatorSubtaskState => {
    const keyed = o.keyed;
    if (keyed === undefined || !isFileRef(keyed)) return { ...o, keyed };
    if (taskOwnedDir === undefined) throw new Error(`operator ${o.operatorUid}: a TaskManager sent a spilled snapshot (${keyed.fileName}), but this job's checkpoint storage has no taskowned/ directory`);
    return { ...o, keyed: SpilledKeyedStateSnapshot.handedOver(keyed, taskOwnedDir) };
  });
  return { ...sent, operators };
}

function isFileRef(k: KeyedStateSnapshot | SpilledSnapshotFileRef): k is SpilledSnapshotFileRef {
  return (k as Partial<SpilledSnapshotFileRef>).kind === 'spilled-keyed-state-file';
}
