import { HIDDEN_VALUE, isSensitiveKey } from '../config/configuration.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import type { RestRoute } from './rest-route.js';

export interface JobManagerRoutesContext {
  /** The job with this id; throws the REST error (400, 404) otherwise. */
  readonly job: (jobId: string) => JobExecutor;
  /** The cluster's configuration as given at start (`sluice cluster`'s -D options, the config file). */
  readonly config: () => readonly (readonly [string, unknown])[];
}

/** Flink's EnvironmentInfo of this process: Flink's `jvm` is the runtime (Node.js), the class path is empty. */
function environmentJson(): Record<string, unknown> {
  return { jvm: { version: `Node.js ${process.version}`, arch: process.arch, options: [...process.execArgv] }, classpath: [] };
}

function configEntries(entries: readonly (readonly [string, unknown])[]): { key: string; value: string }[] {
  return [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value: isSensitiveKey(key) ? HIDDEN_VALUE : String(value) }));
}

/**
 * The JobManager's own pages of Flink's REST API: its configuration, its environment, its
 * metrics (none: Sluice's JobManager reports its jobs' metrics), the environment a job runs
 * in, and Flink 2.x's applications (Sluice runs jobs, not applications: none).
 */
export function jobManagerRoutes(ctx: JobManagerRoutesContext): RestRoute[] {
  return [
    { method: 'GET', path: '/jobmanager/config', handler: () => [200, configEntries(ctx.config())] },
    { method: 'GET', path: '/jobmanager/environment', handler: () => [200, environmentJson()] },
    { method: 'GET', path: '/jobmanager/metrics', handler: () => [200, []] },
    {
      method: 'GET',
      path: '/jobs/:jobid/jobmanager/environment',
      handler: (p) => {
        ctx.job(p.jobid!);
        return [200, environmentJson()];
      },
    },
    { method: 'GET', path: '/applications/overview', handler: () => [200, { applications: [] }] },
  ];
}
