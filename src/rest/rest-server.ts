import { HIDDEN_VALUE, isSensitiveKey } from '../config/configuration.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { JobExecutor } from '../runtime/job-executor.js';
import { checkpointCoordinatorConfig } from '../runtime/checkpoint/coordinator-decisions.js';
import { checkpointDetailsJson, checkpointsJson } from './checkpoint-json.js';
import { disposeSavepoint } from '../runtime/storage/savepoint-directory.js';
import { RawResponse, RestError, type RestHandler as Handler, type RestRoute } from './rest-route.js';
import { MetricRegistry } from '../metrics/metric-registry.js';
import type { MetricSample } from '../metrics/metric-group.js';
import { registerJobMetrics } from '../metrics/job-metrics.js';
import { metricsRoutes } from '../metrics/metrics-routes.js';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import { checkpointTasksJson } from '../dashboard/checkpoint-task-json.js';
import { embeddedTaskManager, type TaskManagerInfo } from '../dashboard/task-managers.js';
import { aggregateVertexState, countStates, lastFailureJson, subtaskStatuses, waitingForSlotsJson, type SubtaskStatus } from './job-status-json.js';
import type { JobVertex } from '../graph/job-graph.js';
import { ioMetricsJson } from './io-metrics-json.js';
import { serializedThrowableJson } from './java-serialized-throwable.js';
import { jobConfigJson, jobExecutionResultJson, jobStatusTimestamps, SLOT_SHARING_GROUP_ID } from './job-result-json.js';
import { jobManagerRoutes } from './jobmanager-routes.js';

export { RestError } from './rest-route.js';

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  readonly handler: Handler;
  /** Served without the bearer token (the dashboard's files). */
  readonly public: boolean;
  readonly maxBodyBytes: number;
}

/** What an asynchronous operation is; its trigger id answers only at its own kind's path (and job). */
type OperationKind = 'checkpoint' | 'savepoint' | 'disposal';

interface Operation {
  readonly kind: OperationKind;
  /** The job it belongs to (none for a savepoint disposal). */
  readonly jobId: string | undefined;
  status: 'IN_PROGRESS' | 'COMPLETED';
  /** When it completed (completed operations are kept for OPERATION_RESULT_RETENTION_MS). */
  completedAtMs?: number;
  operation?: Record<string, unknown>;
  /** The client saw the result (a stopping job's server waits for that). */
  reported?: boolean;
}

/** How long a server that goes away with its job still answers for the results of operations (a `sluice stop` polls every 200 ms). */
export const OPERATION_RESULT_GRACE_MS = 3000;

/** How long the result of a completed operation can be fetched (Flink's rest.async.store-duration, 5 min). */
export const OPERATION_RESULT_RETENTION_MS = 5 * 60_000;

export interface RestServerOptions {
  readonly address?: string;
  readonly port?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  readonly authToken?: string;
  /** The metrics served at `/metrics` (default: a registry of this server's own). */
  readonly metrics?: MetricRegistry;
  /** What `/taskmanagers` lists (default: the embedded runtime as one TaskManager). */
  readonly taskManagers?: () => readonly TaskManagerInfo[];
  /** The cluster's configuration (`/jobmanager/config`; default none: the embedded runtime has only its jobs'). */
  readonly clusterConfig?: () => readonly (readonly [string, unknown])[];
  /** More routes (the JobManager's job submission). */
  readonly routes?: readonly RestRoute[];
  /** Metrics of the jobs that live in other processes (a cluster's TaskManagers), for the metric queries. */
  readonly remoteMetrics?: (jobId: string) => Promise<readonly MetricSample[]>;
}

/** Largest request body a route takes unless it says otherwise (a JobManager's job submission takes bundles). */
export const MAX_BODY_BYTES = 1 << 20;

/**
 * The REST API in Flink's shapes (/overview, /jobs, /jobs/:id, /jobs/:id/checkpoints, ...)
 * for the jobs of this process. Binds to 127.0.0.1 unless told otherwise; malformed requests
 * get a 4xx with `{"errors": [...]}`, never a crash.
 */
export class RestServer {
  private readonly jobs = new Map<string, JobExecutor>();
  private readonly operations = new Map<string, Operation>();
  private readonly routes: Route[] = [];
  private server: Server | undefined;
  /** Job, task and operator metrics of the registered jobs (`/metrics`, metric queries, dashboard). */
  readonly metrics: MetricRegistry;
  private readonly jobMetrics = new Map<string, () => void>();

  constructor(private readonly o: RestServerOptions = {}) {
    this.metrics = o.metrics ?? new MetricRegistry();
    this.route('GET', '/overview', () => [200, this.overview()]);
    this.route('GET', '/config', () => [
      200,
      { 'refresh-interval': 3000, 'timezone-name': 'UTC', 'timezone-offset': 0, 'flink-version': 'sluice', 'flink-revision': '', features: { 'web-submit': false, 'web-cancel': true, 'web-rescale': false, 'web-history': false } },
    ]);
    this.route('GET', '/jobs', () => [200, { jobs: [...this.jobs.values()].map((j) => ({ id: j.jobId, status: j.status })) }]);
    this.route('GET', '/jobs/overview', () => [200, { jobs: [...this.jobs.values()].map((j) => this.jobOverview(j)) }]);
    this.route('GET', '/jobs/:jobid', (p) => [200, this.jobDetails(this.job(p.jobid!))]);
    this.route('GET', '/jobs/:jobid/plan', (p) => [200, { plan: this.jobPlan(this.job(p.jobid!)) }]);
    // What Flink's RestClusterClient asks of a job: its status, its result once it ended, its accumulators (Sluice has none).
    this.route('GET', '/jobs/:jobid/status', (p) => [200, { status: this.job(p.jobid!).status }]);
    this.route('GET', '/jobs/:jobid/execution-result', (p) => [200, jobExecutionResultJson(this.job(p.jobid!))]);
    this.route('GET', '/jobs/:jobid/accumulators', () => [200, { 'job-accumulators': [], 'user-task-accumulators': [], 'serialized-user-task-accumulators': {} }]);
    this.route('GET', '/jobs/:jobid/config', (p) => [200, jobConfigJson(this.job(p.jobid!))]);
    // Flink's "job configuration" tab: the configuration the job runs with, secrets hidden.
    this.route('GET', '/jobs/:jobid/jobmanager/config', (p) => [
      200,
      this.job(p.jobid!)
        .config.entries()
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => ({ key, value: isSensitiveKey(key) ? HIDDEN_VALUE : String(value) })),
    ]);
    this.route('PATCH', '/jobs/:jobid', (p, _b, url) => {
      const mode = url.searchParams.get('mode') ?? 'cancel';
      if (mode !== 'cancel') throw new RestError(400, `unknown mode '${mode}'; PATCH /jobs/:jobid?mode=cancel cancels the job`);
      const j = this.job(p.jobid!);
      // As Flink's JobCancellationHandler: a canceled job is acknowledged again, a job that ended otherwise is a conflict.
      if (j.status === 'FINISHED' || j.status === 'FAILED') {
        throw new RestError(409, `Job cancellation failed because the job has already reached another terminal state (${j.status}).`);
      }
      j.cancel();
      return [202, {}];
    });
    this.route('GET', '/jobs/:jobid/exceptions', (p) => {
      const j = this.job(p.jobid!);
      const last = j.exceptions.at(-1);
      return [
        200,
        {
          'root-exception': last?.stack ?? last?.message ?? null,
          timestamp: last?.timestampMs ?? null,
          'all-exceptions': [],
          truncated: false,
          exceptionHistory: {
            // Flink's RootExceptionInfo; Sluice keeps no concurrent exceptions, labels nor endpoints.
            entries: [...j.exceptions].reverse().map((e) => ({
              exceptionName: 'Error',
              stacktrace: e.stack ?? e.message,
              timestamp: e.timestampMs,
              taskName: e.taskName ?? null,
              endpoint: null,
              taskManagerId: null,
              failureLabels: {},
              concurrentExceptions: [],
            })),
            truncated: false,
          },
        },
      ];
    });
    this.route('GET', '/jobs/:jobid/checkpoints', (p) => [200, checkpointsJson(this.job(p.jobid!).checkpointStats)]);
    this.route('GET', '/jobs/:jobid/checkpoints/config', (p) => [200, this.checkpointConfig(this.job(p.jobid!))]);
    this.route('GET', '/jobs/:jobid/checkpoints/details/:checkpointid', (p) => {
      const id = Number(p.checkpointid);
      if (!Number.isInteger(id)) throw new RestError(400, `checkpoint id '${p.checkpointid}' is not a number`);
      const e = this.job(p.jobid!).checkpointStats.get(id);
      if (e === undefined) throw new RestError(404, `checkpoint ${id} of job ${p.jobid} is not in the statistics history`);
      return [200, { ...checkpointDetailsJson(e), tasks: checkpointTasksJson(e, this.job(p.jobid!).jobGraph.vertices) }];
    });
    this.route('POST', '/jobs/:jobid/checkpoints', (p, body) => {
      const j = this.job(p.jobid!);
      const type = (body as { checkpointType?: unknown } | undefined)?.checkpointType ?? 'CONFIGURED';
      if (type !== 'CONFIGURED' && type !== 'FULL' && type !== 'INCREMENTAL') {
        throw new RestError(400, `checkpointType must be CONFIGURED, FULL or INCREMENTAL, got ${JSON.stringify(type)}`);
      }
      return this.operation('checkpoint', j.jobId, (op) =>
        j.triggerCheckpoint(type === 'FULL').then((c) => {
          op.operation = { checkpointId: c.checkpointId };
        }),
      );
    });
    this.route('POST', '/jobs/:jobid/savepoints', (p, body) => {
      const j = this.job(p.jobid!);
      const b = (body ?? {}) as { 'target-directory'?: unknown; 'cancel-job'?: unknown; formatType?: unknown; triggerId?: unknown };
      if (b['cancel-job'] !== undefined && typeof b['cancel-job'] !== 'boolean') throw new RestError(400, `cancel-job must be true or false (a JSON boolean), got ${JSON.stringify(b['cancel-job'])}`);
      const target = b['target-directory'];
      if (target !== undefined && target !== null && typeof target !== 'string') throw new RestError(400, 'target-directory must be a string');
      const format = b.formatType ?? 'CANONICAL';
      if (format !== 'CANONICAL' && format !== 'NATIVE') throw new RestError(400, `formatType must be CANONICAL or NATIVE, got ${JSON.stringify(format)}`);
      const cancel = b['cancel-job'] === true;
      return this.operation('savepoint', j.jobId, (op) =>
        j.triggerSavepoint(typeof target === 'string' ? target : undefined, format).then((c) => {
          op.operation = { location: c.pointer };
          if (cancel) j.cancel();
        }),
        202,
        b.triggerId,
      );
    });
    this.route('POST', '/jobs/:jobid/stop', (p, body) => {
      const j = this.job(p.jobid!);
      const b = (body ?? {}) as { targetDirectory?: unknown; drain?: unknown; formatType?: unknown; triggerId?: unknown };
      if (b.targetDirectory !== undefined && b.targetDirectory !== null && typeof b.targetDirectory !== 'string') throw new RestError(400, 'targetDirectory must be a string');
      if (b.drain !== undefined && typeof b.drain !== 'boolean') throw new RestError(400, 'drain must be true or false');
      const format = b.formatType ?? 'CANONICAL';
      if (format !== 'CANONICAL' && format !== 'NATIVE') throw new RestError(400, `formatType must be CANONICAL or NATIVE, got ${JSON.stringify(format)}`);
      return this.operation('savepoint', j.jobId, (op) =>
        j.stopWithSavepoint(typeof b.targetDirectory === 'string' ? b.targetDirectory : undefined, b.drain === true, format).then((c) => {
          op.operation = { location: c.pointer };
        }),
        202,
        b.triggerId,
      );
    });
    this.route('GET', '/jobs/:jobid/savepoints/:triggerid', (p) => this.operationStatus('savepoint', this.job(p.jobid!).jobId, p.triggerid!));
    this.route('POST', '/savepoint-disposal', (_p, body) => {
      const path = (body as { 'savepoint-path'?: unknown } | undefined)?.['savepoint-path'];
      if (typeof path !== 'string' || path === '') throw new RestError(400, 'give the savepoint to dispose as {"savepoint-path": "<dir>"}');
      return this.operation(
        'disposal',
        undefined,
        async (op) => {
          await disposeSavepoint(path);
          op.operation = {};
        },
        200,
      );
    });
    this.route('GET', '/savepoint-disposal/:triggerid', (p) => this.operationStatus('disposal', undefined, p.triggerid!));
    this.route('GET', '/jobs/:jobid/checkpoints/:triggerid', (p) => this.operationStatus('checkpoint', this.job(p.jobid!).jobId, p.triggerid!));
    const job = (id: string): JobExecutor => this.job(id);
    const taskManagers = o.taskManagers ?? (() => [embeddedTaskManager([...this.jobs.values()].filter((j) => j.status === 'RUNNING').length)]);
    for (const r of [...metricsRoutes({ registry: this.metrics, job, ...(o.remoteMetrics === undefined ? {} : { remote: o.remoteMetrics }) }), ...dashboardRoutes({ job, taskManagers }), ...jobManagerRoutes({ job, config: o.clusterConfig ?? (() => []) }), ...(o.routes ?? [])]) this.route(r.method, r.path, r.handler, r.public, r.maxBodyBytes);
  }

  /** Starts an asynchronous operation; its status is polled by trigger id (Flink's pattern). */
  private operation(kind: OperationKind, jobId: string | undefined, run: (op: Operation) => Promise<void>, status = 202, requested?: unknown): [number, unknown] {
    this.pruneOperations();
    // Flink's optional triggerId makes a trigger idempotent: the same id again is the same
    // operation (a client retrying after a lost answer), not a second savepoint.
    // Flink's clients send `"triggerId": null` for "pick one".
    if (requested === null) requested = undefined;
    if (requested !== undefined && (typeof requested !== 'string' || !/^[0-9a-f]{32}$/.test(requested))) {
      throw new RestError(400, `triggerId must be 32 hex characters, got ${JSON.stringify(requested)}`);
    }
    const existing = requested === undefined ? undefined : this.operations.get(requested);
    if (existing !== undefined) {
      if (existing.kind !== kind || existing.jobId !== jobId) throw new RestError(409, `triggerId ${requested as string} is taken by another operation; give a new one`);
      return [status, { 'request-id': requested }];
    }
    const triggerId = requested ?? randomBytes(16).toString('hex');
    const op: Operation = { kind, jobId, status: 'IN_PROGRESS' };
    this.operations.set(triggerId, op);
    run(op).then(
      () => {
        op.status = 'COMPLETED';
        op.completedAtMs = Date.now();
      },
      (e: unknown) => {
        op.status = 'COMPLETED';
        op.completedAtMs = Date.now();
        const err = e instanceof Error ? e : new Error(String(e));
        op.operation = { 'failure-cause': serializedThrowableJson({ className: err.name, message: err.message, stackTrace: err.message }) };
      },
    );
    return [status, { 'request-id': triggerId }];
  }

  /** Forgets operations that completed more than OPERATION_RESULT_RETENTION_MS ago. */
  private pruneOperations(): void {
    const before = Date.now() - OPERATION_RESULT_RETENTION_MS;
    for (const [id, op] of this.operations) if (op.completedAtMs !== undefined && op.completedAtMs < before) this.operations.delete(id);
  }

  private operationStatus(kind: OperationKind, jobId: string | undefined, triggerId: string): [number, unknown] {
    this.pruneOperations();
    const op = this.operations.get(triggerId);
    if (op === undefined || op.kind !== kind || op.jobId !== jobId) {
      const what = kind === 'checkpoint' ? 'checkpoint trigger' : kind === 'savepoint' ? 'savepoint or stop operation' : 'savepoint disposal';
      throw new RestError(404, `no ${what} with trigger id ${triggerId}${jobId === undefined ? '' : ` for job ${jobId}`} (results are kept for ${OPERATION_RESULT_RETENTION_MS / 60_000} minutes)`);
    }
    if (op.status === 'COMPLETED') op.reported = true;
    return [200, { status: { id: op.status }, ...(op.operation === undefined ? {} : { operation: op.operation }) }];
  }

  register(executor: JobExecutor): void {
    this.jobs.set(executor.jobId, executor);
    this.jobMetrics.get(executor.jobId)?.();
    // Tasks on a TaskManager process name theirs; the others run in this process.
    this.jobMetrics.set(executor.jobId, registerJobMetrics(this.metrics, executor, { host: hostname(), taskManagerId: embeddedTaskManager(0).id }));
  }

  /** Starts listening; resolves with the base URL. */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    this.metrics.start();
    const address = this.o.address ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port ?? 8081, address, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  /** Stops serving; first gives clients up to `graceMs` to fetch results of operations they triggered (a stop). */
  async stop(graceMs = OPERATION_RESULT_GRACE_MS): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && [...this.operations.values()].some((o) => !o.reported)) {
      await new Promise((r) => setTimeout(r, 50));
    }
    this.metrics.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private route(method: string, path: string, handler: Handler, isPublic = false, maxBodyBytes = MAX_BODY_BYTES): void {
    const names: string[] = [];
    const pattern = new RegExp(`^${path.replace(/:([a-z]+)/g, (_m, n: string) => (names.push(n), '([^/]+)'))}$`);
    this.routes.push({ method, pattern, names, handler, public: isPublic, maxBodyBytes });
  }

  private job(id: string): JobExecutor {
    if (!/^[0-9a-f]{32}$/.test(id)) throw new RestError(400, `'${id}' is not a job id (32 hex characters)`);
    const j = this.jobs.get(id);
    if (j === undefined) throw new RestError(404, `job ${id} not found; GET /jobs lists the jobs`);
    return j;
  }

  private authorized(req: IncomingMessage): boolean {
    const token = this.o.authToken;
    if (token === undefined || token === '') return true;
    const header = req.headers.authorization ?? '';
    const expected = Buffer.from(`Bearer ${token}`);
    const given = Buffer.from(header);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = url.pathname.replace(/^\/v1\//, '/').replace(/\/+$/, '') || '/';
      const candidates = this.routes.filter((r) => r.pattern.test(path));
      const publicPath = candidates.length > 0 && candidates.every((r) => r.public);
      if (!publicPath && !this.authorized(req)) throw new RestError(401, 'missing or wrong bearer token (rest.auth.token): send Authorization: Bearer <token>');
      if (candidates.length === 0) throw new RestError(404, `no such REST path: ${path}`);
      const route = candidates.find((r) => r.method === req.method);
      if (route === undefined) throw new RestError(405, `${req.method} is not allowed on ${path} (allowed: ${candidates.map((r) => r.method).join(', ')})`);
      const m = route.pattern.exec(path)!;
      const params: Record<string, string> = {};
      route.names.forEach((n, i) => (params[n] = decodePathSegment(m[i + 1]!)));
      const body = await readJsonBody(req, route.maxBodyBytes);
      const [status, answer] = await route.handler(params, body, url);
      if (answer instanceof RawResponse) {
        res.writeHead(status, { ...answer.headers, 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.body) });
        res.end(answer.body);
      } else send(status, answer);
    } catch (e) {
      if (e instanceof RestError) send(e.status, { errors: [e.message] });
      else send(500, { errors: [`internal error: ${(e as Error).message}`] });
    }
  }

  private overview(): Record<string, unknown> {
    const all = [...this.jobs.values()];
    const count = (s: string): number => all.filter((j) => j.status === s).length;
    // A JobManager counts its registered TaskManagers; the embedded runtime is one with one slot.
    const tms = this.o.taskManagers?.();
    return {
      taskmanagers: tms === undefined ? 1 : tms.length,
      'slots-total': tms === undefined ? 1 : tms.reduce((n, t) => n + t.slotsNumber, 0),
      'slots-available': tms === undefined ? 0 : tms.reduce((n, t) => n + t.freeSlots, 0),
      'jobs-running': count('RUNNING') + count('RESTARTING') + count('INITIALIZING'),
      'jobs-finished': count('FINISHED'),
      'jobs-cancelled': count('CANCELED'),
      'jobs-failed': count('FAILED'),
      'flink-version': 'sluice',
      'flink-commit': '',
    };
  }

  /** Each vertex's subtasks as the REST API shows them (see job-status-json.ts). */
  private subtasksByVertex(j: JobExecutor): Map<JobVertex, SubtaskStatus[]> {
    const waitingForSlots = j.pendingSlotRequest() !== undefined;
    return new Map(j.jobGraph.vertices.map((v) => [v, subtaskStatuses({ vertex: v, tasks: j.tasks.filter((t) => t.vertex === v), waitingForSlots })]));
  }

  private jobOverview(j: JobExecutor): Record<string, unknown> {
    const end = j.endTimeMs ?? -1;
    const counts = countStates([...this.subtasksByVertex(j).values()].flat().map((s) => s.state));
    const tasks = {
      ...Object.fromEntries(Object.entries(counts).map(([state, n]) => [state.toLowerCase(), n])),
      total: Object.values(counts).reduce((a, n) => a + n, 0),
    };
    return {
      jid: j.jobId,
      name: j.jobGraph.jobName,
      state: j.status === 'CANCELED' ? 'CANCELED' : j.status,
      'start-time': j.startTimeMs,
      'end-time': end,
      duration: (j.endTimeMs ?? Date.now()) - j.startTimeMs,
      'last-modification': j.endTimeMs ?? Date.now(),
      tasks,
      'pending-operators': 0,
      jobType: 'STREAMING',
      schedulerType: 'Default',
      // Sluice's own (Flink has the restarts as the job metric numRestarts, the failures at /jobs/:id/exceptions, no slot request).
      'num-restarts': j.progress().numRestarts,
      'last-failure': lastFailureJson(j.exceptions),
      'waiting-for-slots': waitingForSlotsJson(j.pendingSlotRequest()),
    };
  }

  private jobDetails(j: JobExecutor): Record<string, unknown> {
    const vertices = [...this.subtasksByVertex(j)].map(([v, subtasks]) => {
      const tasks = countStates(subtasks.map((s) => s.state));
      const ts = subtasks.flatMap((s) => (s.task === undefined ? [] : [s.task]));
      return {
        id: String(v.id).padStart(32, '0'),
        name: v.name,
        maxParallelism: v.maxParallelism,
        parallelism: v.parallelism,
        status: aggregateVertexState(tasks, v.parallelism),
        tasks,
        metrics: ioMetricsJson(ts),
        // Sluice runs each vertex's subtasks in one slot-sharing group; its times are the job's.
        slotSharingGroupId: SLOT_SHARING_GROUP_ID,
        'start-time': ts.length === 0 ? -1 : j.startTimeMs,
        'end-time': j.endTimeMs ?? -1,
        duration: ts.length === 0 ? -1 : (j.endTimeMs ?? Date.now()) - j.startTimeMs,
      };
    });
    return {
      ...this.jobOverview(j),
      isStoppable: false,
      'job-type': 'STREAMING',
      // Flink 2.x runs jobs within applications; Sluice has none.
      'application-id': null,
      maxParallelism: -1,
      now: Date.now(),
      timestamps: jobStatusTimestamps(j),
      vertices,
      'status-counts': countStates(vertices.map((v) => v.status)),
      plan: this.jobPlan(j),
    };
  }

  /** The job graph as Flink's `plan`: vertices with their inputs and how records reach them. */
  private jobPlan(j: JobExecutor): Record<string, unknown> {
    return {
      jid: j.jobId,
      name: j.jobGraph.jobName,
      type: 'STREAMING',
      nodes: j.jobGraph.vertices.map((v) => ({
        id: String(v.id).padStart(32, '0'),
        parallelism: v.parallelism,
        operator: '',
        operator_strategy: '',
        description: v.name,
        optimizer_properties: {},
        inputs: v.inputs.map((e, num) => ({
          num,
          id: String(e.source.id).padStart(32, '0'),
          ship_strategy: e.streamEdge.partitioning.kind.toUpperCase(),
          exchange: 'pipelined_bounded',
        })),
      })),
    };
  }

  private checkpointConfig(j: JobExecutor): Record<string, unknown> {
    const c = j.config;
    if (c.getOptionalNumber('execution.checkpointing.interval') === undefined) {
      throw new RestError(404, `checkpointing is not enabled for job ${j.jobId}`);
    }
    const cc = checkpointCoordinatorConfig(c);
    return {
      mode: cc.mode === 'EXACTLY_ONCE' ? 'exactly_once' : 'at_least_once',
      interval: cc.intervalMs,
      timeout: cc.timeoutMs,
      min_pause: cc.minPauseMs,
      max_concurrent: cc.maxConcurrentCheckpoints,
      externalization: {
        enabled: c.getString('execution.checkpointing.externalized-checkpoint-retention') !== 'NO_EXTERNALIZED_CHECKPOINTS',
        delete_on_cancellation: c.getString('execution.checkpointing.externalized-checkpoint-retention') !== 'RETAIN_ON_CANCELLATION',
      },
      state_backend: c.getString('state.backend.type'),
      checkpoint_storage: c.getString('execution.checkpointing.storage') ?? (c.getString('execution.checkpointing.dir') === undefined ? 'jobmanager' : 'filesystem'),
      unaligned_checkpoints: cc.unaligned,
      tolerable_failed_checkpoints: cc.tolerableFailedCheckpoints,
      aligned_checkpoint_timeout: cc.alignedCheckpointTimeoutMs,
      checkpoints_after_tasks_finish: c.getBoolean('execution.checkpointing.checkpoints-after-tasks-finish'),
      state_changelog_enabled: c.getBoolean('state.backend.changelog.enabled'),
      // Sluice has no changelog state backend: Flink's values when it is off.
      changelog_periodic_materialization_interval: 0,
      changelog_storage: '',
    };
  }
}

async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new RestError(413, `request body larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RestError(400, 'the request body is not valid JSON');
  }
  // Every request body of the API is an object; `null`, `[]`, `true` or `5` is a mistake, not "no options".
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RestError(400, `the request body must be a JSON object ({...}), got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`}`);
  }
  return body;
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RestError(400, `the path segment '${segment}' holds a malformed percent-escape`);
  }
}
