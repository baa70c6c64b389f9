import type { JobVertex } from '../graph/job-graph.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import { RestError, type RestRoute } from '../rest/rest-route.js';
import { checkpointSubtasksJson } from './checkpoint-task-json.js';
import { StaticAssets } from './static-assets.js';
import { subtaskStatuses, type SubtaskStatus } from '../rest/job-status-json.js';
import type { TaskManagerInfo } from './task-managers.js';

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

function subtaskJson(job: JobExecutor, s: SubtaskStatus, embeddedTaskManagerId: string): Record<string, unknown> {
  const t = s.task;
  if (t === undefined) return pendingSubtaskJson(job, s);
  const end = job.endTimeMs ?? -1;
  const taskManagerId = t.taskManagerId ?? embeddedTaskManagerId;
  return {
    subtask: t.subtaskIndex,
    status: s.state,
    attempt: t.attemptNumber,
    endpoint: taskManagerId,
    'start-time': job.startTimeMs,
    'end-time': end,
    duration: (job.endTimeMs ?? Date.now()) - job.startTimeMs,
    metrics: {
      'read-records': t.recordsIn,
      'read-records-complete': t.state === 'finished',
      'write-records': t.recordsOut(),
      'write-records-complete': t.state === 'finished',
      'accumulated-backpressured-time': t.backPressuredTimeMsTotal(),
    },
    'taskmanager-id': taskManagerId,
  };
}

/** A subtask without a task yet (CREATED, or SCHEDULED while its attempt waits for slots): no TaskManager, no records. */
function pendingSubtaskJson(job: JobExecutor, s: SubtaskStatus): Record<string, unknown> {
  const metrics = { 'read-records': 0, 'read-records-complete': false, 'write-records': 0, 'write-records-complete': false, 'accumulated-backpressured-time': 0 };
  return { subtask: s.subtask, status: s.state, attempt: job.progress().numRestarts, endpoint: '(unassigned)', 'start-time': -1, 'end-time': -1, duration: -1, metrics, 'taskmanager-id': '(unassigned)' };
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
      handler: () => [200, { taskmanagers: ctx.taskManagers().map(({ metrics: _m, ...tm }) => tm) }],
    },
    {
      method: 'GET',
      path: '/taskmanagers/:taskmanagerid',
      handler: (p) => {
        const tm = ctx.taskManagers().find((t) => t.id === p.taskmanagerid);
        if (tm === undefined) throw new RestError(404, `no TaskManager ${p.taskmanagerid}; GET /taskmanagers lists them`);
        return [200, tm];
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid',
      handler: (p) => {
        const job = ctx.job(p.jobid!);
        const v = vertexOf(job, p.vertexid!);
        const tm = taskManagerId();
        return [
          200,
          {
            id: p.vertexid,
            name: v.name,
            maxParallelism: v.maxParallelism,
            parallelism: v.parallelism,
            now: Date.now(),
            subtasks: subtaskStatuses({ vertex: v, tasks: job.tasks.filter((t) => t.vertex === v), waitingForSlots: job.pendingSlotRequest() !== undefined }).map((s) => subtaskJson(job, s, tm)),
          },
        ];
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
