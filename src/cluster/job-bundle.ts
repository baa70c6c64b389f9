import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobDefinition } from '../api/define-job.js';
import { StreamExecutionEnvironment } from '../api/environment.js';
import { Configuration, type ConfigValue } from '../config/configuration.js';
import type { JobGraph } from '../graph/job-graph.js';
import { linkRuntime } from './runtime-link.js';

/** A job as shipped to the JobManager and TaskManagers: its module bundled into one file. */
export interface JobBundle {
  readonly id: string;
  readonly code: string;
}

export function jobBundle(code: string): JobBundle {
  return { id: createHash('sha256').update(code).digest('hex').slice(0, 32), code };
}

/** Writes a bundle into `dir` (once per content), linked to this process's Sluice, and returns its file. */
export function storeBundle(dir: string, bundle: JobBundle): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `job-${bundle.id}.mjs`);
  if (!existsSync(file)) writeFileSync(file, linkRuntime(bundle.code));
  return file;
}

/**
 * Imports a stored bundle and runs its job definition on a fresh environment with `config`
 * and `args`: the same graph on every process that does it.
 */
export async function buildJob(file: string, config: readonly (readonly [string, ConfigValue])[], args: readonly string[], jobName: string): Promise<{ graph: JobGraph; env: StreamExecutionEnvironment }> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    // A package with native code is not in the bundle: it is loaded where it was installed
    // on the machine that bundled the job (src/cli/native-packages.ts).
    const missing = /Cannot find (?:module|package) '([^']*node_modules[^']*)'/.exec((e as Error).message);
    if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && missing !== null) {
      throw new Error(
        `the job imports a package with native code, which is not bundled but loaded from where it was installed when the job was submitted: ${missing[1]} is not on this host. ` +
          'Install the job\'s dependencies at the same path on every TaskManager host (or submit from a checkout at the path the TaskManagers have)',
        { cause: e },
      );
    }
    throw e;
  }
  const job = mod.default;
  if (!isJobDefinition(job)) throw new Error(`the job bundle ${file} has no defineJob(...) default export`);
  const env = StreamExecutionEnvironment.forJobDefinition(new Configuration(config));
  await job.build(env, args);
  if (env.isEmpty) throw new Error(`the job '${jobName}' built no dataflow: add a source (env.fromSource) and a sink (sinkTo)`);
  return { graph: env.getJobGraph(jobName), env };
}
