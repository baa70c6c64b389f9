import type { CompletedCheckpointInfo } from '../../runtime/checkpoint/checkpoint-coordinator.js';

/** How a new leader takes a job's checkpoints back (pure). */
export interface RecoveredCheckpoints {
  /** Kept as the job's retained checkpoints, oldest first; the newest is the one ZooKeeper recorded (restored from). */
  readonly retained: CompletedCheckpointInfo[];
  /** chk-N directories newer than the recorded one: written, never recorded, never committed (deleted). */
  readonly unrecorded: CompletedCheckpointInfo[];
  /** The job's next checkpoint id: past ZooKeeper's counter and every chk-N directory there is. */
  readonly nextCheckpointId: number;
}

/**
 * `latest`: ZooKeeper's latest completed checkpoint; `counter`: its next id; `onDisk`: the
 * chk-N directories with a _metadata; `highestDirectoryId`: the highest N of any chk-N
 * directory (complete or not). The job restores from `latest` (never an older checkpoint,
 * nor a newer one no sink was told of), keeps the older complete ones as retained, and its
 * ids go on past everything used before.
 */
export function recoveredCheckpoints(o: {
  readonly latest: CompletedCheckpointInfo | undefined;
  readonly counter: number;
  readonly onDisk: readonly CompletedCheckpointInfo[];
  readonly highestDirectoryId: number;
}): RecoveredCheckpoints {
  const latestId = o.latest?.checkpointId ?? 0;
  const older = o.onDisk.filter((c) => c.checkpointId < latestId);
  const retained = [...older, ...(o.latest === undefined ? [] : [o.latest])].sort((a, b) => a.checkpointId - b.checkpointId);
  const unrecorded = o.onDisk.filter((c) => c.checkpointId > latestId).sort((a, b) => a.checkpointId - b.checkpointId);
  const nextCheckpointId = Math.max(o.counter, latestId + 1, o.highestDirectoryId + 1);
  return { retained, unrecorded, nextCheckpointId };
}
