import type { SnapshotType } from './coordinator-decisions.js';
import type { SubtaskCheckpointMetrics } from './subtask-state.js';

export type CheckpointStatus = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

export interface SubtaskCheckpointStats extends SubtaskCheckpointMetrics {
  readonly subtask: string;
  readonly ackTimestampMs: number;
  readonly stateSizeBytes: number;
  /** Bytes this checkpoint wrote for the subtask (less than stateSizeBytes when incremental). */
  readonly checkpointedSizeBytes?: number;
}

/** One checkpoint's statistics, as Flink's REST history entries name them. */
export interface CheckpointStatsEntry {
  readonly id: number;
  status: CheckpointStatus;
  readonly isSavepoint: boolean;
  /**
   * CHECKPOINT, UNALIGNED_CHECKPOINT, SAVEPOINT, SYNC_SAVEPOINT. An aligned checkpoint with a
   * timeout becomes UNALIGNED_CHECKPOINT once a subtask reports it switched (as in Flink).
   */
  checkpointType: string;
  readonly triggerTimestampMs: number;
  latestAckTimestampMs: number | undefined;
  stateSizeBytes: number;
  /** Bytes written by this checkpoint (Flink's checkpointed_size); the rest is shared with earlier checkpoints. */
  checkpointedSizeBytes: number;
  endToEndDurationMs: number | undefined;
  numSubtasks: number;
  numAcknowledgedSubtasks: number;
  alignmentDurationMsMax: number;
  persistedInFlightRecords: number;
  externalPath: string | undefined;
  failureMessage: string | undefined;
  readonly subtasks: SubtaskCheckpointStats[];
}

export function checkpointTypeName(snapshotType: SnapshotType, unaligned: boolean): string {
  switch (snapshotType) {
    case 'SAVEPOINT':
      return 'SAVEPOINT';
    case 'SYNC_SAVEPOINT':
      return 'SYNC_SAVEPOINT';
    default:
      return unaligned ? 'UNALIGNED_CHECKPOINT' : 'CHECKPOINT';
  }
}

/** Keeps the statistics of recent checkpoints (bounded history) and the counts. */
export class CheckpointStatsTracker {
  private readonly history: CheckpointStatsEntry[] = [];
  counts = { restored: 0, total: 0, inProgress: 0, completed: 0, failed: 0 };
  latestRestored: { id: number; restoreTimestampMs: number; externalPath: string; isSavepoint: boolean } | undefined;

  constructor(private readonly historySize = 100) {}

  started(e: Omit<CheckpointStatsEntry, 'status' | 'latestAckTimestampMs' | 'stateSizeBytes' | 'checkpointedSizeBytes' | 'endToEndDurationMs' | 'numAcknowledgedSubtasks' | 'alignmentDurationMsMax' | 'persistedInFlightRecords' | 'externalPath' | 'failureMessage' | 'subtasks'>): void {
    this.history.push({
      ...e,
      status: 'IN_PROGRESS',
      latestAckTimestampMs: undefined,
      stateSizeBytes: 0,
      checkpointedSizeBytes: 0,
      endToEndDurationMs: undefined,
      numAcknowledgedSubtasks: 0,
      alignmentDurationMsMax: 0,
      persistedInFlightRecords: 0,
      externalPath: undefined,
      failureMessage: undefined,
      subtasks: [],
    });
    while (this.history.length > this.historySize) this.history.shift();
    this.counts.total++;
    this.counts.inProgress++;
  }

  acknowledged(id: number, s: SubtaskCheckpointStats): void {
    const e = this.get(id);
    if (e === undefined || e.status !== 'IN_PROGRESS') return;
    e.subtasks.push(s);
    e.numAcknowledgedSubtasks++;
    e.latestAckTimestampMs = s.ackTimestampMs;
    e.stateSizeBytes += s.stateSizeBytes;
    e.checkpointedSizeBytes += s.checkpointedSizeBytes ?? s.stateSizeBytes;
    e.alignmentDurationMsMax = Math.max(e.alignmentDurationMsMax, s.alignmentDurationMs);
    e.persistedInFlightRecords += s.inFlightRecords;
    if (s.unaligned && e.checkpointType === 'CHECKPOINT') e.checkpointType = 'UNALIGNED_CHECKPOINT';
  }

  completed(id: number, nowMs: number, externalPath: string, stateSizeBytes: number): void {
    const e = this.get(id);
    if (e === undefined || e.status !== 'IN_PROGRESS') return;
    e.status = 'COMPLETED';
    e.endToEndDurationMs = nowMs - e.triggerTimestampMs;
    e.externalPath = externalPath;
    // The snapshot's total also holds what no subtask acknowledged (source coordinators'
    // state), written whole by this checkpoint.
    e.checkpointedSizeBytes += Math.max(0, stateSizeBytes - e.stateSizeBytes);
    e.stateSizeBytes = stateSizeBytes;
    this.counts.inProgress--;
    this.counts.completed++;
  }

  failed(id: number, nowMs: number, message: string): void {
    const e = this.get(id);
    if (e === undefined || e.status !== 'IN_PROGRESS') return;
    e.status = 'FAILED';
    e.endToEndDurationMs = nowMs - e.triggerTimestampMs;
    e.failureMessage = message;
    this.counts.inProgress--;
    this.counts.failed++;
  }

  get(id: number): CheckpointStatsEntry | undefined {
    return this.history.find((e) => e.id === id);
  }

  /** Newest first. */
  entries(): readonly CheckpointStatsEntry[] {
    return [...this.history].reverse();
  }
}
