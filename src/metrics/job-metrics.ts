import type { StreamNode } from '../graph/stream-graph.js';
import type { TaskView } from '../runtime/deploy/deployer.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import { OperatorOutput } from '../runtime/task/output.js';
import { SourceStreamTask } from '../runtime/task/source-stream-task.js';
import { StreamTask } from '../runtime/task/stream-task.js';
import { MetricGroup } from './metric-group.js';
import type { MetricRegistry } from './metric-registry.js';

/** Flink's scopes, as Prometheus name prefixes: flink_jobmanager_job_..., flink_taskmanager_job_task_... */
export const JOB_SCOPE = ['jobmanager', 'job'] as const;
export const TASK_SCOPE = ['taskmanager', 'job', 'task'] as const;
export const OPERATOR_SCOPE = 'operator';

export interface JobMetricsOptions {
  readonly host: string;
  /** The TaskManager of tasks that do not name theirs (the embedded runtime's, this process: `/taskmanagers`). */
  readonly taskManagerId: string;
}

/** The 32-hex id of a vertex, as in the REST API. */
export function vertexIdHex(vertexId: number): string {
  return String(vertexId).padStart(32, '0');
}

function operatorCount(o: unknown): number {
  return o instanceof OperatorOutput ? o.recordsOut : Number.NaN;
}

/**
 * Registers a job's metrics with Flink's names: job metrics (uptime, numRestarts,
 * checkpoint counts and the last checkpoint's duration and size) and, for the tasks of the
 * current attempt, task and operator metrics (numRecordsIn/Out and their rates;
 * back-pressured, idle and busy time per second). Task metrics are rebuilt when the job restarts, as Flink's
 * are for new task attempts. Returns a function that unregisters everything.
 */
export function registerJobMetrics(registry: MetricRegistry, job: JobExecutor, o: JobMetricsOptions): () => void {
  const jobVariables = { host: o.host, job_id: job.jobId, job_name: job.jobGraph.jobName };
  const jobGroup = registry.addGroup(JOB_SCOPE, jobVariables);
  const stats = job.checkpointStats;
  const lastCompleted = (): { endToEndDurationMs: number | undefined; stateSizeBytes: number } | undefined => stats.entries().find((e) => e.status === 'COMPLETED');
  jobGroup.gauge('uptime', () => {
    if (job.status === 'FINISHED' || job.status === 'FAILED' || job.status === 'CANCELED' || job.status === 'SUSPENDED') return -1;
    if (job.status !== 'RUNNING') return 0;
    // Running without interruption: since the start, or since the last failure's restart.
    const since = Math.max(job.startTimeMs, job.exceptions.at(-1)?.timestampMs ?? 0);
    return Date.now() - since;
  });
  jobGroup.gauge('numRestarts', () => job.progress().numRestarts);
  jobGroup.gauge('lastCheckpointDuration', () => lastCompleted()?.endToEndDurationMs ?? -1);
  jobGroup.gauge('lastCheckpointSize', () => lastCompleted()?.stateSizeBytes ?? -1);
  jobGroup.gauge('numberOfCompletedCheckpoints', () => stats.counts.completed);
  jobGroup.gauge('numberOfFailedCheckpoints', () => stats.counts.failed);
  jobGroup.gauge('numberOfInProgressCheckpoints', () => stats.counts.inProgress);
  jobGroup.gauge('totalNumberOfCheckpoints', () => stats.counts.total);
  jobGroup.gauge('lastCheckpointRestoreTimestamp', () => stats.latestRestored?.restoreTimestampMs ?? -1);

  let boundTasks: readonly TaskView[] | undefined;
  let taskGroups: MetricGroup[] = [];
  const sync = (): void => {
    if (job.tasks === boundTasks) return;
    for (const g of taskGroups) registry.removeGroup(g);
    boundTasks = job.tasks;
    // Each task under its own TaskManager (a cluster's tasks run on several).
    taskGroups = boundTasks.map((t) => {
      const variables = { ...jobVariables, tm_id: t.taskManagerId ?? o.taskManagerId };
      return t instanceof StreamTask ? registerTaskMetrics(registry, t, variables) : registerTaskViewMetrics(registry, t, variables);
    });
  };
  const removeCollector = registry.addCollector(sync);
  return () => {
    removeCollector();
    for (const g of taskGroups) registry.removeGroup(g);
    registry.removeGroup(jobGroup);
  };
}

function taskVariables(t: TaskView, variables: Readonly<Record<string, string>>): Record<string, string> {
  return {
    ...variables,
    task_id: vertexIdHex(t.vertex.id),
    task_name: t.vertex.name,
    subtask_index: String(t.subtaskIndex),
    task_attempt_num: String(t.attemptNumber),
  };
}

function recordMetrics(g: MetricGroup, recordsIn: () => number, recordsOut: () => number): void {
  g.gauge('numRecordsIn', recordsIn);
  g.gauge('numRecordsOut', recordsOut);
  g.meter('numRecordsInPerSecond', recordsIn);
  g.meter('numRecordsOutPerSecond', recordsOut);
}

/** A task the JobManager only sees through its view (it runs on a TaskManager): record counts. */
function registerTaskViewMetrics(registry: MetricRegistry, t: TaskView, variables: Readonly<Record<string, string>>): MetricGroup {
  const g = registry.addGroup(TASK_SCOPE, taskVariables(t, variables));
  recordMetrics(
    g,
    () => t.recordsIn,
    () => t.recordsOut(),
  );
  return g;
}

/**
 * The metrics of a task running in this process, and of its operators: what a TaskManager
 * registers for each of its tasks. `variables` are the job's and the TaskManager's
 * (host, tm_id, job_id, job_name).
 */
export function registerTaskMetrics(registry: MetricRegistry, t: StreamTask, variables: Readonly<Record<string, string>>): MetricGroup {
  const v = t.vertex;
  const g = registry.addGroup(TASK_SCOPE, taskVariables(t, variables));
  recordMetrics(
    g,
    () => t.recordsIn,
    () => t.recordsOut(),
  );
  // Milliseconds per second: rates of the time waiting for output room and for input; busy is the rest.
  const backPressured = g.meter('backPressuredTimeMsPerSecond', () => t.backPressuredTimeMsTotal());
  const idle = g.meter('idleTimeMsPerSecond', () => t.idleTimeMsTotal());
  g.gauge('busyTimeMsPerSecond', () => Math.min(1000, Math.max(0, 1000 - backPressured() - idle())));
  g.gauge('isBackPressured', () => t.isBackPressured());

  // Operators: records into an operator are those its chained predecessor emitted.
  const outputOf = new Map<StreamNode, () => number>();
  const source = t instanceof SourceStreamTask ? v.nodes[0] : undefined;
  if (source !== undefined && t instanceof SourceStreamTask) {
    const out = (): number => operatorCount(t.chain.sourceOutput);
    outputOf.set(source, out);
    const og = operatorGroup(g, source);
    recordMetrics(og, out, out);
    og.adopt(t.readerMetrics);
  }
  for (const c of t.chain.operators) {
    const out = (): number => operatorCount(c.operator.output);
    const upstream = c.node.inEdges.length === 1 ? outputOf.get(c.node.inEdges[0]!.source) : undefined;
    const input = upstream ?? ((): number => t.recordsIn);
    outputOf.set(c.node, out);
    const og = operatorGroup(g, c.node);
    recordMetrics(og, input, out);
    // A window operator's count of records too late for every window (Flink's name); without a late-data side output.
    const op = c.operator as { numLateRecordsDropped?: unknown };
    if (typeof op.numLateRecordsDropped === 'number') og.gauge('numLateRecordsDropped', () => op.numLateRecordsDropped as number);
  }
  return g;
}

function operatorGroup(task: MetricGroup, node: StreamNode): MetricGroup {
  const g = new MetricGroup([OPERATOR_SCOPE], { operator_id: node.operatorUid, operator_name: node.name });
  task.adopt(g);
  return g;
}
