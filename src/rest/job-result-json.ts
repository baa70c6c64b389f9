import { HIDDEN_VALUE, isSensitiveKey } from '../config/configuration.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import { serializedThrowableJson } from './java-serialized-throwable.js';

/**
 * Flink's shapes for what its RestClusterClient asks of a job beyond its details: the job's
 * result (`/jobs/:id/execution-result`), its configuration (`/jobs/:id/config`) and the
 * times its status was entered (`timestamps` of the details). Pure functions of the executor.
 */

/** Flink's JobStatus values: `timestamps` holds each, 0 for a status the job never entered. */
const FLINK_JOB_STATUSES = ['INITIALIZING', 'CREATED', 'RUNNING', 'FAILING', 'FAILED', 'CANCELLING', 'CANCELED', 'FINISHED', 'RESTARTING', 'SUSPENDED', 'RECONCILING'] as const;

/** Sluice runs every vertex in one slot-sharing group; Flink names a group with 32 hex characters. */
export const SLOT_SHARING_GROUP_ID = '0'.repeat(32);

const GLOBALLY_TERMINAL = new Set(['FINISHED', 'FAILED', 'CANCELED']);

/** When the job entered each status, as far as Sluice keeps it: its start and, once ended, its end. */
export function jobStatusTimestamps(j: JobExecutor): Record<string, number> {
  const t: Record<string, number> = Object.fromEntries(FLINK_JOB_STATUSES.map((s) => [s, 0]));
  t.INITIALIZING = j.startTimeMs;
  t.CREATED = j.startTimeMs;
  if (j.status !== 'INITIALIZING') t.RUNNING = j.startTimeMs;
  if (j.endTimeMs !== undefined) t[j.status] = j.endTimeMs;
  return t;
}

/** Flink's ApplicationStatus of an ended job (the `application-status` of its result). */
function applicationStatus(status: string): 'SUCCEEDED' | 'FAILED' | 'CANCELED' | 'UNKNOWN' {
  if (status === 'FINISHED') return 'SUCCEEDED';
  if (status === 'FAILED') return 'FAILED';
  if (status === 'CANCELED') return 'CANCELED';
  return 'UNKNOWN';
}

/**
 * `/jobs/:id/execution-result`: IN_PROGRESS until the job ended for good (finished, failed
 * or cancelled), then its JobResult: status, net runtime, no accumulators (Sluice has none),
 * and for a failed job its cause as a SerializedThrowable that Flink's client can read.
 */
export function jobExecutionResultJson(j: JobExecutor): Record<string, unknown> {
  if (!GLOBALLY_TERMINAL.has(j.status)) return { status: { id: 'IN_PROGRESS' } };
  const end = j.endTimeMs ?? Date.now();
  const result: Record<string, unknown> = {
    id: j.jobId,
    name: j.jobGraph.jobName,
    'application-status': applicationStatus(j.status),
    'accumulator-results': {},
    'net-runtime': Math.max(0, end - j.startTimeMs),
  };
  const last = j.exceptions.at(-1);
  if (j.status === 'FAILED') {
    const stack = last?.stack ?? last?.message ?? 'the job failed (no cause was recorded)';
    const className = /^([A-Za-z_$][\w$.]*)(?::|$)/.exec(stack.split('\n', 1)[0]!)?.[1] ?? 'Error';
    result['failure-cause'] = serializedThrowableJson({ className, message: last?.message ?? stack, stackTrace: stack });
  }
  result['start-time'] = j.startTimeMs;
  result['end-time'] = end;
  return { status: { id: 'COMPLETED' }, 'job-execution-result': result };
}

/** `/jobs/:id/config`: Flink's JobConfigInfo (the restart strategy as configured, the job's parallelism, its `pipeline.global-job-parameters` as user config). */
export function jobConfigJson(j: JobExecutor): Record<string, unknown> {
  const c = j.config;
  const userConfig: Record<string, string> = {};
  for (const [key, value] of c.entries()) {
    if (key.startsWith('pipeline.global-job-parameters.')) {
      const k = key.slice('pipeline.global-job-parameters.'.length);
      userConfig[k] = isSensitiveKey(k) ? HIDDEN_VALUE : String(value);
    }
  }
  return {
    jid: j.jobId,
    name: j.jobGraph.jobName,
    'execution-config': {
      // Flink 2.x's shape: Flink 1.x also wants `execution-mode`, which 2.x's parser refuses.
      'restart-strategy': c.getString('restart-strategy.type') ?? (c.getOptionalNumber('execution.checkpointing.interval') === undefined ? 'none' : 'exponential-delay'),
      'job-parallelism': c.getNumber('parallelism.default'),
      'object-reuse-mode': false,
      'user-config': userConfig,
    },
  };
}
