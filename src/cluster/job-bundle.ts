import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobDefinition } from '../api/define-job.js';
import { StreamExecutionEnvironment } from '../api/environment.js';
import { Configuration, type ConfigValue } from '../config/configuration.js';
import type { JobGraph } from '../graph/job-graph.js';

/** A job as shipped to the JobManager and TaskManagers: its module bundled into one file. */
export interface JobBundle {
  readonly id: string;
  readonly code: string;
}

export function jobBundle(code: string): JobBundle {
  return { id: createHash('sha256').update(code).digest('hex').slice(0, 32), code };
}

/** Writes a bundle into `dir` (once per content) and returns its file. */
export function storeBundle(dir: string, bundle: JobBundle): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `job-${bundle.id}.mjs`);
  if (!existsSync(file)) writeFileSync(file, bundle.code);
  return file;
}

/**
 * Imports a stored bundle and runs its job definition on a fresh environment with `config`
 * and `args`: the same graph on every process that does it.
 */
export async function buildJob(file: string, config: readonly (readonly [string, ConfigValue])[], args: readonly string[], jobName: string): Promise<{ graph: JobGraph; env: StreamExecutionEnvironment }> {
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const job = mod.default;
  if (!isJobDefinition(job)) throw new Error(`the job bundle ${file} has no defineJob(...) default export`);
  const env = new StreamExecutionEnvironment(new Configuration(config));
  await job.build(env, args);
  if (env.isEmpty) throw new Error(`the job '${jobName}' built no dataflow: add a source (env.fromSource) and a sink (sinkTo)`);
  return { graph: env.getJobGraph(jobName), env };
}
