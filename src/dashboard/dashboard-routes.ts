import type { JobVertex } from '../graph/job-graph.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import { RestError, type RestRoute } from '../rest/rest-route.js';
import { checkpointSubtasksJson } from './checkpoint-task-json.js';
import { StaticAssets } from './static-assets.js';
import { aggregateVertexState, countStates, subtaskStatuses, type SubtaskStatus } from '../rest/job-status-json.js';
import { aggregatedTaskDetailsJson, ioMetricsJson } from '../rest/io-metrics-json.js';
import { flinkTaskManagerDetailsJson, flinkTaskManagerJson, type TaskManagerInfo } from './task-managers.js';

export interface DashboardRoutesContext {
  readonly job: (jobId: string) => JobExecutor;
  readonly taskManagers: () => readonly TaskManagerInfo[];
  readonly assets?: StaticAssets;
}

function vertexOf(job: JobExecutor, vertexId: string): JobVertex {
  const v = job.jobGraph.vertices.find((x) => String(x.id).padStart(32, '0') === vertexId);
  if (v === undefined) throw new RestError(404, `vertex ${vertexId} is not part of job ${job.jobId}; GET /jobs/${job.jobId} lists its vertices`);
  return v;
}

/** Flink's `status-duration` of a subtask: time in each state before and while running; Sluice keeps only the job's start. */
function statusDurationJson(job: JobExecutor, s: SubtaskStatus): Record<string, number> {
  const running = s.task === undefined ? 0 : Math.max(0, (job.endTimeMs ?? Date.now()) - job.startTimeMs);
  return { CREATED: 0, SCHEDULED: 0, DEPLOYING: 0, INITIALIZING: 0, RUNNING: running };
}

function subtaskJson(job: JobExecutor, s: SubtaskStatus, embeddedTaskManagerId: string): Record<string, unknown> {
  const t = s.task;
  if (t === undefined) return pendingSubtaskJson(job, s);
  const end = job.endTimeMs ?? -1;
  const taskManagerId = t.taskManagerId ?? embeddedTaskManagerId;
  return {
    subtask: t.subtaskIndex,
    status: s.state,
    attempt: t.attemptNumber,
    // Flink 1.x's name of the endpoint.
    host: taskManagerId,
    endpoint: taskManagerId,
    'start-time': job.startTimeMs,
    start_time: job.startTimeMs,
    'end-time': end,
    duration: (job.endTimeMs ?? Date.now()) - job.startTimeMs,
    metrics: ioMetricsJson([t]),
    'taskmanager-id': taskManagerId,
    'status-duration': statusDurationJson(job, s),
  };
}

/** A subtask without a task yet (CREATED, or SCHEDULED while its attempt waits for slots): no TaskManager, no records. */
function pendingSubtaskJson(job: JobExecutor, s: SubtaskStatus): Record<string, unknown> {
  return {
    subtask: s.subtask,
    status: s.state,
    attempt: job.progress().numRestarts,
    host: '(unassigned)',
    endpoint: '(unassigned)',
    'start-time': -1,
    start_time: -1,
    'end-time': -1,
    duration: -1,
    metrics: ioMetricsJson([]),
    'taskmanager-id': '(unassigned)',
    'status-duration': statusDurationJson(job, s),
  };
}

function vertexSubtasks(job: JobExecutor, v: JobVertex): SubtaskStatus[] {
  return subtaskStatuses({ vertex: v, tasks: job.tasks.filter((t) => t.vertex === v), waitingForSlots: job.pendingSlotRequest() !== undefined });
}

/** A watermark as Flink's metric reports it: a decimal string, Long.MIN_VALUE before the first one. */
function watermarkValue(ms: number): string {
  return ms <= Number.MIN_SAFE_INTEGER ? '-9223372036854775808' : String(ms);
}

/**
 * The dashboard's files at `/` and `/assets/*` (no token needed: they hold no job data), and
 * the REST endpoints it reads beyond the core API, in Flink's shapes: a vertex's subtasks,
 * a checkpoint's per-subtask detail for one vertex, and the TaskManagers.
 */
export function dashboardRoutes(ctx: DashboardRoutesContext): RestRoute[] {
  const assets = ctx.assets ?? new StaticAssets();
  const taskManagerId = (): string => ctx.taskManagers()[0]?.id ?? 'embedded';
  return [
    { method: 'GET', path: '/', public: true, handler: () => [200, assets.get('index.html')] },
    { method: 'GET', path: '/index.html', public: true, handler: () => [200, assets.get('index.html')] },
    {
      method: 'GET',
      path: '/assets/:file',
      public: true,
      handler: (p) => {
        if (!/^[A-Za-z0-9_.-]+$/.test(p.file!) || p.file!.startsWith('.')) throw new RestError(404, `no dashboard file ${p.file}`);
        return [200, assets.get(p.file!)];
      },
    },
    {
      method: 'GET',
      path: '/taskmanagers',
      handler: () => [200, { taskmanagers: ctx.taskManagers().map(flinkTaskManagerJson) }],
    },
    {
      method: 'GET',
      path: '/taskmanagers/:taskmanagerid',
      handler: (p) => {
        const tm = ctx.taskManagers().find((t) => t.id === p.taskmanagerid);
        if (tm === undefined) throw new RestError(404, `no TaskManager ${p.taskmanagerid}; GET /taskmanagers lists them`);
        return [200, flinkTaskManagerDetailsJson(tm)];
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const tm = taskManagerId();
        const statuses = vertexSubtasks(job, v);
        const subtasks = statuses.map((s) => subtaskJson(job, s, tm));
        return [
          200,
          {
            id: p.vertexid,
            name: v.name,
            maxParallelism: v.maxParallelism,
            parallelism: v.parallelism,
            now: Date.now(),
            subtasks,
            aggregated: aggregatedTaskDetailsJson(
              subtasks.map((s) => s.metrics as Record<string, number | boolean>),
              statuses.map((s) => statusDurationJson(job, s)),
            ),
          },
        ];
      },
    },
    {
      // One subtask's current attempt.
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/subtasks/:subtaskindex',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const index = Number(p.subtaskindex);
        if (!Number.isInteger(index) || index < 0 || index >= v.parallelism) {
          throw new RestError(404, `vertex ${p.vertexid} has subtasks 0..${v.parallelism - 1}, not '${p.subtaskindex}'`);
        }
        return [200, subtaskJson(job, vertexSubtasks(job, v)[index]!, taskManagerId())];
      },
    },
    {
      // Flink's subtask times: when each subtask entered its states (Sluice keeps the job's start).
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/subtasktimes',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const tm = taskManagerId();
        return [
          200,
          {
            id: p.vertexid,
            name: v.name,
            now: Date.now(),
            subtasks: vertexSubtasks(job, v).map((s) => ({
              subtask: s.subtask,
              host: s.task === undefined ? '(unassigned)' : (s.task.taskManagerId ?? tm),
              endpoint: s.task === undefined ? '(unassigned)' : (s.task.taskManagerId ?? tm),
              duration: s.task === undefined ? -1 : (job.endTimeMs ?? Date.now()) - job.startTimeMs,
              timestamps: s.task === undefined ? {} : { CREATED: job.startTimeMs, DEPLOYING: job.startTimeMs, INITIALIZING: job.startTimeMs, RUNNING: job.startTimeMs },
            })),
          },
        ];
      },
    },
    {
      // The vertex's subtasks grouped by the TaskManager they run on.
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/taskmanagers',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const tm = taskManagerId();
        const byTm = new Map<string, SubtaskStatus[]>();
        for (const s of vertexSubtasks(job, v)) {
          if (s.task === undefined) continue;
          const id = s.task.taskManagerId ?? tm;
          byTm.set(id, [...(byTm.get(id) ?? []), s]);
        }
        const taskmanagers = [...byTm].map(([id, subtasks]) => {
          const counts = countStates(subtasks.map((s) => s.state));
          const tasks = subtasks.flatMap((s) => (s.task === undefined ? [] : [s.task]));
          return {
            host: id,
            endpoint: id,
            status: aggregateVertexState(counts, subtasks.length),
            'start-time': job.startTimeMs,
            'end-time': job.endTimeMs ?? -1,
            duration: (job.endTimeMs ?? Date.now()) - job.startTimeMs,
            metrics: ioMetricsJson(tasks),
            'status-counts': counts,
            'taskmanager-id': id,
            aggregated: aggregatedTaskDetailsJson(
              tasks.map((t) => ioMetricsJson([t])),
              subtasks.map((s) => statusDurationJson(job, s)),
            ),
          };
        });
        return [200, { id: p.vertexid, name: v.name, now: Date.now(), taskmanagers }];
      },
    },
    {
      // Sluice has no accumulators.
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/accumulators',
      handler: (p) => {
        vertexOf(ctx.job(p.jobid!), p.vertexid!);
        return [200, { id: p.vertexid, 'user-accumulators': [] }];
      },
    },
    {
      // Flink's watermarks tab: each subtask's input watermark as a metric, "no watermark" as Long.MIN_VALUE.
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/watermarks',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const subtasks = job.tasks.filter((t) => t.vertex === v).sort((a, b) => a.subtaskIndex - b.subtaskIndex);
        return [200, subtasks.map((t) => ({ id: `${t.subtaskIndex}.currentInputWatermark`, value: watermarkValue(t.inputWatermarkMs()) }))];
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const id = Number(p.checkpointid);
        if (!Number.isInteger(id)) throw new RestError(400, `checkpoint id '${p.checkpointid}' is not a number`);
        const v = vertexOf(job, p.vertexid!);
        const e = job.checkpointStats.get(id);
        if (e === undefined) throw new RestError(404, `checkpoint ${id} of job ${p.jobid} is not in the statistics history`);
        return [200, checkpointSubtasksJson(e, v)];
      },
    },
  ];
}
