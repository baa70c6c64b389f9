import type { JobVertex } from '../graph/job-graph.js';
import type { CheckpointStatsEntry, SubtaskCheckpointStats } from '../runtime/checkpoint/checkpoint-stats.js';
import { quantiles } from '../rest/checkpoint-json.js';

/** Flink's per-vertex checkpoint statistics (`tasks` of a checkpoint's details, and its subtasks endpoint). */

function acksOf(e: CheckpointStatsEntry, v: JobVertex): SubtaskCheckpointStats[] {
  const prefix = `${v.id}/`;
  return e.subtasks.filter((s) => s.subtask.startsWith(prefix));
}

/** Bytes a subtask's checkpoint wrote (incremental: its delta; before they were counted: all). */
function checkpointed(s: SubtaskCheckpointStats): number {
  return s.checkpointedSizeBytes ?? s.stateSizeBytes;
}

function subtaskIndex(s: SubtaskCheckpointStats): number {
  return Number(s.subtask.slice(s.subtask.indexOf('/') + 1));
}

/** Flink's TaskCheckpointStatistics for one vertex. */
export function checkpointTaskJson(e: CheckpointStatsEntry, v: JobVertex): Record<string, unknown> {
  const acks = acksOf(e, v);
  const latestAck = acks.reduce((m, s) => Math.max(m, s.ackTimestampMs), -1);
  return {
    id: e.id,
    status: e.status,
    latest_ack_timestamp: latestAck,
    checkpointed_size: acks.reduce((a, s) => a + checkpointed(s), 0),
    state_size: acks.reduce((a, s) => a + s.stateSizeBytes, 0),
    end_to_end_duration: latestAck < 0 ? -1 : Math.max(0, latestAck - e.triggerTimestampMs),
    alignment_buffered: 0,
    processed_data: 0,
    persisted_data: acks.reduce((a, s) => a + s.inFlightRecords, 0),
    num_subtasks: v.parallelism,
    num_acknowledged_subtasks: acks.length,
  };
}

/** `tasks` of `/jobs/:jobid/checkpoints/details/:checkpointid`: by vertex id (32 hex). */
export function checkpointTasksJson(e: CheckpointStatsEntry, vertices: readonly JobVertex[]): Record<string, unknown> {
  const tasks: Record<string, unknown> = {};
  for (const v of vertices) tasks[String(v.id).padStart(32, '0')] = checkpointTaskJson(e, v);
  return tasks;
}

/**
 * `/jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid`: the vertex's
 * statistics, their summary over subtasks, and each subtask (alignment duration, in-flight
 * records persisted by an unaligned checkpoint, sync and async durations, start delay).
 */
export function checkpointSubtasksJson(e: CheckpointStatsEntry, v: JobVertex): Record<string, unknown> {
  const acks = acksOf(e, v);
  const byIndex = new Map(acks.map((s) => [subtaskIndex(s), s]));
  const duration = (s: SubtaskCheckpointStats): number => Math.max(0, s.ackTimestampMs - e.triggerTimestampMs);
  const subtasks = Array.from({ length: v.parallelism }, (_, index) => {
    const s = byIndex.get(index);
    // Flink's type ids of SubtaskCheckpointStatistics' subtypes are `className`; `status` is a field.
    if (s === undefined) return { className: 'pending', index, status: 'pending_or_failed' };
    return {
      className: 'completed',
      index,
      status: 'completed',
      ack_timestamp: s.ackTimestampMs,
      end_to_end_duration: duration(s),
      state_size: s.stateSizeBytes,
      checkpointed_size: checkpointed(s),
      checkpoint: { sync: s.syncDurationMs, async: s.asyncDurationMs },
      alignment: { buffered: 0, processed: 0, persisted: s.inFlightRecords, duration: s.alignmentDurationMs },
      start_delay: s.startDelayMs,
      unaligned_checkpoint: s.unaligned,
      aborted: false,
    };
  });
  return {
    ...checkpointTaskJson(e, v),
    summary: {
      checkpointed_size: quantiles(acks.map(checkpointed)),
      state_size: quantiles(acks.map((s) => s.stateSizeBytes)),
      end_to_end_duration: quantiles(acks.map(duration)),
      checkpoint_duration: { sync: quantiles(acks.map((s) => s.syncDurationMs)), async: quantiles(acks.map((s) => s.asyncDurationMs)) },
      alignment: {
        buffered: quantiles([]),
        processed: quantiles([]),
        persisted: quantiles(acks.map((s) => s.inFlightRecords)),
        duration: quantiles(acks.map((s) => s.alignmentDurationMs)),
      },
      start_delay: quantiles(acks.map((s) => s.startDelayMs)),
    },
    subtasks,
  };
}
