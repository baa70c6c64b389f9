/** The REST API's JSON, as the dashboard reads it (Flink's shapes). */

export interface ClusterOverview {
  taskmanagers: number;
  'slots-total': number;
  'slots-available': number;
  'jobs-running': number;
  'jobs-finished': number;
  'jobs-cancelled': number;
  'jobs-failed': number;
  'flink-version': string;
}

export type JobState = 'INITIALIZING' | 'RUNNING' | 'RESTARTING' | 'FINISHED' | 'FAILED' | 'CANCELED' | 'CANCELLING' | 'SUSPENDED';

export interface JobOverview {
  jid: string;
  name: string;
  state: JobState;
  'start-time': number;
  'end-time': number;
  duration: number;
  tasks: { running: number; finished: number; canceled: number; failed: number; scheduled?: number; total: number };
  /** Sluice's: restarts after failures. */
  'num-restarts'?: number;
  /** Sluice's: when and why (first line) the job last failed. */
  'last-failure'?: { timestamp: number; message: string; task: string | null } | null;
  /** Sluice's: the TaskManager slots the job's next attempt waits for. */
  'waiting-for-slots'?: { required: number; available: number; since: number; 'timeout-at': number } | null;
}

export interface VertexInfo {
  id: string;
  name: string;
  parallelism: number;
  maxParallelism: number;
  status: string;
  /** Subtasks per state (Flink's ExecutionState names). */
  tasks?: Record<string, number>;
  metrics: { 'read-records': number; 'write-records': number };
}

export interface PlanNode {
  id: string;
  parallelism: number;
  description: string;
  inputs: { id: string; ship_strategy: string }[];
}

export interface JobDetails extends JobOverview {
  vertices: VertexInfo[];
  plan: { nodes: PlanNode[] };
}

export interface AggregatedMetric {
  id: string;
  min?: number;
  max?: number;
  avg?: number;
  sum?: number;
}

/** `GET /jobs/:id/vertices/:vid/watermarks`: `<subtask>.currentInputWatermark`, ms as a string. */
export interface WatermarkMetric {
  id: string;
  value: string;
}

export type BackPressureLevel = 'ok' | 'low' | 'high';

export interface BackPressure {
  status: string;
  'backpressure-level': BackPressureLevel;
  'end-timestamp': number;
  subtasks: { subtask: number; 'attempt-number': number; 'backpressure-level': BackPressureLevel; ratio: number; idleRatio?: number; busyRatio?: number }[];
}

export interface VertexDetails {
  id: string;
  name: string;
  parallelism: number;
  subtasks: {
    subtask: number;
    status: string;
    attempt: number;
    'taskmanager-id': string;
    metrics: { 'read-records': number; 'write-records': number; 'accumulated-backpressured-time': number };
  }[];
}

export interface Stat {
  min: number;
  max: number;
  avg: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
}

export interface CheckpointEntry {
  className: string;
  id: number;
  status: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  is_savepoint: boolean;
  checkpoint_type: string;
  trigger_timestamp: number;
  latest_ack_timestamp: number;
  state_size: number;
  checkpointed_size: number;
  end_to_end_duration: number;
  alignment_buffered: number;
  processed_data: number;
  persisted_data: number;
  num_subtasks: number;
  num_acknowledged_subtasks: number;
  external_path?: string;
  discarded?: boolean;
  failure_timestamp?: number;
  failure_message?: string;
}

export interface CheckpointStats {
  counts: { restored: number; total: number; in_progress: number; completed: number; failed: number };
  summary: Record<'checkpointed_size' | 'state_size' | 'end_to_end_duration' | 'alignment_buffered' | 'processed_data' | 'persisted_data', Stat>;
  latest: {
    completed: CheckpointEntry | null;
    savepoint: CheckpointEntry | null;
    failed: CheckpointEntry | null;
    restored: { id: number; restore_timestamp: number; is_savepoint: boolean; external_path: string } | null;
  };
  history: CheckpointEntry[];
}

export interface TaskCheckpointStats {
  id: number;
  status: string;
  latest_ack_timestamp: number;
  checkpointed_size: number;
  state_size: number;
  end_to_end_duration: number;
  persisted_data: number;
  num_subtasks: number;
  num_acknowledged_subtasks: number;
}

export interface CheckpointDetails extends CheckpointEntry {
  tasks: Record<string, TaskCheckpointStats>;
}

export interface SubtaskCheckpointStats {
  index: number;
  status: 'completed' | 'pending_or_failed';
  ack_timestamp?: number;
  end_to_end_duration?: number;
  state_size?: number;
  checkpointed_size?: number;
  checkpoint?: { sync: number; async: number };
  alignment?: { buffered: number; processed: number; persisted: number; duration: number };
  start_delay?: number;
  unaligned_checkpoint?: boolean;
}

export interface CheckpointSubtasks extends TaskCheckpointStats {
  summary: {
    end_to_end_duration: Stat;
    state_size: Stat;
    checkpoint_duration: { sync: Stat; async: Stat };
    alignment: { persisted: Stat; duration: Stat };
    start_delay: Stat;
  };
  subtasks: SubtaskCheckpointStats[];
}

export interface CheckpointConfig {
  mode: string;
  interval: number;
  timeout: number;
  min_pause: number;
  max_concurrent: number;
  externalization: { enabled: boolean; delete_on_cancellation: boolean };
  state_backend: string;
  checkpoint_storage: string;
  unaligned_checkpoints: boolean;
  tolerable_failed_checkpoints: number;
  aligned_checkpoint_timeout: number;
  checkpoints_after_tasks_finish: boolean;
  state_changelog_enabled: boolean;
}

export interface Exceptions {
  'root-exception': string | null;
  timestamp: number | null;
  exceptionHistory: { entries: { exceptionName: string; stacktrace: string; timestamp: number; taskName: string | null }[]; truncated: boolean };
}

export interface TaskManager {
  id: string;
  path: string;
  dataPort: number;
  timeSinceLastHeartbeat: number;
  slotsNumber: number;
  freeSlots: number;
  hardware: { cpuCores: number; physicalMemory: number; freeMemory: number; managedMemory: number };
  metrics?: Record<string, number>;
}

export interface MetricValue {
  id: string;
  value: string;
}
