import type { CheckpointStatsEntry, CheckpointStatsTracker } from '../runtime/checkpoint/checkpoint-stats.js';

/** Flink's REST shapes for checkpoint statistics (/jobs/:id/checkpoints and details). */

export function quantiles(values: readonly number[]): Record<string, number> {
  if (values.length === 0) return { min: 0, max: 0, avg: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0 };
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  return {
    min: s[0]!,
    max: s[s.length - 1]!,
    avg: Math.round(s.reduce((a, b) => a + b, 0) / s.length),
    p50: q(0.5),
    p90: q(0.9),
    p95: q(0.95),
    p99: q(0.99),
    p999: q(0.999),
  };
}

export function checkpointEntryJson(e: CheckpointStatsEntry): Record<string, unknown> {
  const base: Record<string, unknown> = {
    // Flink's type ids of CheckpointStatistics' subtypes.
    className: e.status === 'COMPLETED' ? 'completed' : e.status === 'FAILED' ? 'failed' : 'in_progress',
    id: e.id,
    status: e.status,
    is_savepoint: e.isSavepoint,
    savepointFormat: null,
    trigger_timestamp: e.triggerTimestampMs,
    latest_ack_timestamp: e.latestAckTimestampMs ?? -1,
    state_size: e.stateSizeBytes,
    checkpointed_size: e.checkpointedSizeBytes,
    end_to_end_duration: e.endToEndDurationMs ?? -1,
    alignment_buffered: 0,
    processed_data: 0,
    persisted_data: e.persistedInFlightRecords,
    num_subtasks: e.numSubtasks,
    num_acknowledged_subtasks: e.numAcknowledgedSubtasks,
    checkpoint_type: e.checkpointType,
    tasks: {},
  };
  if (e.status === 'COMPLETED') {
    base.external_path = e.externalPath ?? null;
    base.discarded = false;
  }
  if (e.status === 'FAILED') {
    base.failure_timestamp = e.triggerTimestampMs + (e.endToEndDurationMs ?? 0);
    base.failure_message = e.failureMessage;
  }
  return base;
}

export function checkpointDetailsJson(e: CheckpointStatsEntry): Record<string, unknown> {
  return {
    ...checkpointEntryJson(e),
    subtasks: e.subtasks.map((s) => ({
      subtask: s.subtask,
      ack_timestamp: s.ackTimestampMs,
      state_size: s.stateSizeBytes,
      checkpoint: { sync: s.syncDurationMs, async: s.asyncDurationMs },
      alignment: { duration: s.alignmentDurationMs, persisted: s.inFlightRecords },
      start_delay: s.startDelayMs,
      unaligned_checkpoint: s.unaligned,
    })),
  };
}

export function checkpointsJson(stats: CheckpointStatsTracker): Record<string, unknown> {
  const entries = stats.entries();
  const completed = entries.filter((e) => e.status === 'COMPLETED');
  const latest = (pred: (e: CheckpointStatsEntry) => boolean): Record<string, unknown> | null => {
    const e = entries.find(pred);
    return e === undefined ? null : checkpointEntryJson(e);
  };
  return {
    counts: {
      restored: stats.counts.restored,
      total: stats.counts.total,
      in_progress: stats.counts.inProgress,
      completed: stats.counts.completed,
      failed: stats.counts.failed,
    },
    summary: {
      checkpointed_size: quantiles(completed.map((e) => e.checkpointedSizeBytes)),
      state_size: quantiles(completed.map((e) => e.stateSizeBytes)),
      end_to_end_duration: quantiles(completed.map((e) => e.endToEndDurationMs ?? 0)),
      alignment_buffered: quantiles([]),
      processed_data: quantiles([]),
      persisted_data: quantiles(completed.map((e) => e.persistedInFlightRecords)),
    },
    latest: {
      completed: latest((e) => e.status === 'COMPLETED' && !e.isSavepoint),
      savepoint: latest((e) => e.status === 'COMPLETED' && e.isSavepoint),
      failed: latest((e) => e.status === 'FAILED'),
      restored:
        stats.latestRestored === undefined
          ? null
          : {
              id: stats.latestRestored.id,
              restore_timestamp: stats.latestRestored.restoreTimestampMs,
              is_savepoint: stats.latestRestored.isSavepoint,
              external_path: stats.latestRestored.externalPath,
            },
    },
    history: entries.map(checkpointEntryJson),
  };
}
