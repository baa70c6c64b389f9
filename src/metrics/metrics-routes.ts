import type { JobExecutor } from '../runtime/job-executor.js';
import { RawResponse, RestError, type RestRoute } from '../rest/rest-route.js';
import { JOB_SCOPE, OPERATOR_SCOPE, TASK_SCOPE, vertexIdHex } from './job-metrics.js';
import type { MetricSample } from './metric-group.js';
import type { MetricRegistry } from './metric-registry.js';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './prometheus-format.js';

export interface MetricsRoutesContext {
  readonly registry: MetricRegistry;
  /** The job with this id; throws the REST error (400, 404) otherwise. */
  readonly job: (jobId: string) => JobExecutor;
  /**
   * The job's metrics that live in other processes (a cluster's TaskManagers; see
   * metric-fetcher.ts). Where a sample of the same subtask and metric is in the registry too
   * (the JobManager's view of a remote task), the remote one is taken.
   */
  readonly remote?: (jobId: string) => Promise<readonly MetricSample[]>;
}

/** A sample's identity across processes: its job, vertex, subtask, groups and name. */
function sampleKey(s: MetricSample): string {
  return `${s.variables.job_id}/${s.variables.task_id}/${s.scope.join('.')}/${vertexMetricId(s)}`;
}

/** Flink's levels: a ratio of back-pressured time up to 10% is ok, up to 50% low, above high. */
export function backPressureLevel(ratio: number): 'ok' | 'low' | 'high' {
  if (ratio <= 0.1) return 'ok';
  if (ratio <= 0.5) return 'low';
  return 'high';
}

const AGGREGATIONS = ['min', 'max', 'avg', 'sum'] as const;
type Aggregation = (typeof AGGREGATIONS)[number];

function startsWith(scope: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((c, i) => scope[i] === c);
}

function isJobMetric(s: MetricSample, jobId: string): boolean {
  return s.variables.job_id === jobId && s.scope.length === JOB_SCOPE.length && startsWith(s.scope, JOB_SCOPE);
}

function isVertexMetric(s: MetricSample, jobId: string, vertexId: string): boolean {
  return s.variables.job_id === jobId && s.variables.task_id === vertexId && startsWith(s.scope, TASK_SCOPE);
}

/**
 * Flink's id of a vertex metric: `<subtask>.<metric>` for task metrics,
 * `<subtask>.<operator name>.<groups>.<metric>` below (key-value groups as `key.value`).
 */
function vertexMetricId(s: MetricSample): string {
  const parts = [s.variables.subtask_index ?? '0'];
  for (const c of s.scope.slice(TASK_SCOPE.length)) {
    if (c === OPERATOR_SCOPE) parts.push(s.variables.operator_name ?? OPERATOR_SCOPE);
    else if (s.variables[c] !== undefined) parts.push(c, s.variables[c]!);
    else parts.push(c);
  }
  parts.push(s.name);
  return parts.join('.');
}

function requested(url: URL): string[] | undefined {
  const get = url.searchParams.get('get');
  if (get === null) return undefined;
  return get
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** Flink's metric query answer: the ids alone, or `[{id, value}]` (values as strings) for `?get=a,b`. */
function metricQuery(byId: Map<string, number>, url: URL): [number, unknown] {
  const names = requested(url);
  if (names === undefined) return [200, [...byId.keys()].map((id) => ({ id }))];
  return [200, names.filter((n) => byId.has(n)).map((id) => ({ id, value: String(byId.get(id)) }))];
}

/**
 * `/metrics` (Prometheus text) and Flink's metric REST endpoints: job metrics, vertex
 * metrics, metrics aggregated over subtasks, and back pressure per vertex.
 */
export function metricsRoutes(ctx: MetricsRoutesContext): RestRoute[] {
  const vertexOf = (jobId: string, vertexId: string): JobExecutor => {
    const job = ctx.job(jobId);
    if (!job.jobGraph.vertices.some((v) => vertexIdHex(v.id) === vertexId)) {
      throw new RestError(404, `vertex ${vertexId} is not part of job ${jobId}; GET /jobs/${jobId} lists its vertices`);
    }
    return job;
  };
  const vertexSamples = async (jobId: string, vertexId: string): Promise<MetricSample[]> => {
    const local = ctx.registry.collect().filter((s) => isVertexMetric(s, jobId, vertexId));
    const remote = ctx.remote === undefined ? [] : (await ctx.remote(jobId)).filter((s) => isVertexMetric(s, jobId, vertexId));
    if (remote.length === 0) return local;
    const byKey = new Map<string, MetricSample>();
    for (const s of [...local, ...remote]) byKey.set(sampleKey(s), s);
    return [...byKey.values()];
  };
  return [
    {
      method: 'GET',
      path: '/metrics',
      handler: () => [200, new RawResponse(PROMETHEUS_CONTENT_TYPE, renderPrometheus(ctx.registry.collect()))],
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/metrics',
      handler: (p, _b, url) => {
        ctx.job(p.jobid!);
        const byId = new Map<string, number>();
        for (const s of ctx.registry.collect()) if (isJobMetric(s, p.jobid!)) byId.set(s.name, s.value);
        return metricQuery(byId, url);
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/metrics',
      handler: async (p, _b, url) => {
        vertexOf(p.jobid!, p.vertexid!);
        const byId = new Map<string, number>();
        for (const s of await vertexSamples(p.jobid!, p.vertexid!)) byId.set(vertexMetricId(s), s.value);
        return metricQuery(byId, url);
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/subtasks/metrics',
      handler: async (p, _b, url) => {
        vertexOf(p.jobid!, p.vertexid!);
        const byName = new Map<string, number[]>();
        for (const s of await vertexSamples(p.jobid!, p.vertexid!)) {
          if (s.scope.length !== TASK_SCOPE.length) continue;
          const list = byName.get(s.name) ?? [];
          list.push(s.value);
          byName.set(s.name, list);
        }
        const names = requested(url);
        if (names === undefined) return [200, [...byName.keys()].map((id) => ({ id }))];
        const aggParam = url.searchParams.get('agg');
        const aggs = aggParam === null ? [...AGGREGATIONS] : aggParam.split(',').map((a) => a.trim());
        for (const a of aggs) {
          if (!(AGGREGATIONS as readonly string[]).includes(a)) throw new RestError(400, `unknown aggregation '${a}': use ${AGGREGATIONS.join(', ')}`);
        }
        return [
          200,
          names
            .filter((n) => byName.has(n))
            .map((id) => {
              const values = byName.get(id)!;
              const sum = values.reduce((a, b) => a + b, 0);
              const all: Record<Aggregation, number> = { min: Math.min(...values), max: Math.max(...values), avg: sum / values.length, sum };
              const answer: Record<string, unknown> = { id };
              for (const a of aggs as Aggregation[]) answer[a] = all[a];
              return answer;
            }),
        ];
      },
    },
    {
      method: 'GET',
      path: '/jobs/:jobid/vertices/:vertexid/backpressure',
      handler: async (p) => {
        const job = vertexOf(p.jobid!, p.vertexid!);
        const taskSamples = (await vertexSamples(p.jobid!, p.vertexid!)).filter((s) => s.scope.length === TASK_SCOPE.length);
        const ratioOf = (name: string, subtask: string): number | undefined => {
          const s = taskSamples.find((x) => x.name === name && x.variables.subtask_index === subtask);
          return s === undefined ? undefined : Math.round(Math.min(1, Math.max(0, s.value / 1000)) * 100) / 100;
        };
        const subtasks = taskSamples
          .filter((s) => s.name === 'backPressuredTimeMsPerSecond')
          .map((s) => {
            const index = s.variables.subtask_index ?? '0';
            const ratio = ratioOf(s.name, index)!;
            const idle = ratioOf('idleTimeMsPerSecond', index);
            const busy = ratioOf('busyTimeMsPerSecond', index);
            return {
              subtask: Number(index),
              'attempt-number': Number(s.variables.task_attempt_num ?? 0),
              'backpressure-level': backPressureLevel(ratio),
              backpressureLevel: backPressureLevel(ratio),
              ratio,
              // Flink's neutral ratio for a subtask that reported none yet.
              idleRatio: idle ?? 0,
              busyRatio: busy ?? 0,
            };
          })
          .sort((a, b) => a.subtask - b.subtask);
        const max = subtasks.reduce((m, s) => Math.max(m, s.ratio), 0);
        return [
          200,
          {
            status: 'ok',
            'backpressure-level': backPressureLevel(max),
            backpressureLevel: backPressureLevel(max),
            'end-timestamp': job.status === 'RUNNING' ? Date.now() : (job.endTimeMs ?? Date.now()),
            subtasks,
          },
        ];
      },
    },
  ];
}
