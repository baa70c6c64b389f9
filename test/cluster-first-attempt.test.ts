import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelJob, ClusterProcesses, jobState, restGet, runSluice } from './support/cluster-processes.js';
import { startThrowawayCluster, type PostgresServer } from './services/postgres-cluster.js';

/**
 * `sluice run --detached` against a cluster of real processes (`sluice cluster run`, one
 * TaskManager process) waits for the job's first attempt and reports a failure in it, instead
 * of returning while the job restarts for ever. The case that prompted it: PGPASSWORD set in
 * the shell that submits, not in the TaskManagers' environment, so the PostgreSQL sink on the
 * TaskManager has no password. That failure crosses from the TaskManager to the JobManager as
 * non-recoverable: the job fails at once, though restarts are allowed, and the message says
 * whose environment was read.
 */

const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'postgres-sink-job.ts');
const PASSWORD = 'the-right-password';
const cluster = new ClusterProcesses('sluice-first-attempt-');
let server: PostgresServer;
let rest = '';

/** This process's environment without PG* variables: the TaskManagers' (started before anyone set PGPASSWORD). */
function withoutPgVariables(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG')));
}

/** `sluice run --detached` of the fixture job, with restarts allowed (many, 200 ms apart). */
function submitDetached(jobArgs: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const restarts = ['-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=1000', '-D', 'restart-strategy.fixed-delay.delay=200 ms'];
  return runSluice(['run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '1', ...restarts, JOB, ...jobArgs], env);
}

function jobIdOf(stdout: string): string {
  const id = stdout.trim().split('\n').at(-1)!.trim();
  expect(id).toMatch(/^[0-9a-f]{32}$/);
  return id;
}

beforeAll(async () => {
  [server, rest] = await Promise.all([startThrowawayCluster({ maxPreparedTransactions: 0, password: PASSWORD }), cluster.startCluster(1, withoutPgVariables())]);
}, 60_000);

afterAll(async () => {
  await cluster.cleanUp();
  await server?.stop();
});

describe('sluice run --detached reports the first attempt of a job on a cluster', () => {
  it('PGPASSWORD in the submitting shell only: the job fails at once, and the error says the TaskManager read its own environment', async () => {
    const c = server.connection;
    const r = await submitDetached(['upsert', c.host!, String(c.port), c.user!, c.database!, 'never_written'], { ...process.env, PGPASSWORD: PASSWORD });
    expect(r.code, r.stderr).toBe(1);
    const jobId = jobIdOf(r.stdout);
    expect(r.stderr).toMatch(new RegExp(`Job ${jobId} failed: .*SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string`));
    expect(r.stderr).toMatch(/connecting from TaskManager tm-\S+ on host \S+ \(pid \d+\): user and database from the sink's connection options, no password \(none in the sink's connection options, no PGPASSWORD in that process's environment\)/);
    expect(r.stderr).toMatch(/PG\* variables are read in the TaskManager's environment, not the submitting shell's/);
    expect(r.stderr).toMatch(/\(not restarted: a restart cannot fix this failure\)/);
    // Failed for good on the JobManager, not restarting: the classification crossed the process boundary.
    expect(await restGet<{ status: string; numRestarts: number }>(rest, `/jobs/${jobId}/result`)).toMatchObject({ status: 'FAILED', numRestarts: 0 });
  });

  it('a transient failure of the first attempt (a port nobody listens on): reported, with how to follow and cancel the job, which restarts', async () => {
    const c = server.connection;
    const r = await submitDetached(['upsert', c.host!, '1', c.user!, c.database!, 'never_written'], process.env);
    const jobId = jobIdOf(r.stdout);
    try {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`Job ${jobId} failed in its first attempt: .*cannot connect to PostgreSQL at \\S+:1/\\S+: connect ECONNREFUSED`));
      expect(r.stderr).toMatch(/\(connecting from TaskManager tm-\S+ on host \S+ \(pid \d+\): host and port from the sink's connection options\)/);
      expect(r.stderr).toContain(`follow it with: sluice info --jobmanager ${rest} ${jobId}`);
      expect(r.stderr).toContain(`or cancel it: sluice cancel --jobmanager ${rest} ${jobId}`);
      expect(await jobState(rest, jobId)).not.toBe('FAILED');
    } finally {
      await cancelJob(rest, jobId);
    }
    expect(await jobState(rest, jobId)).toBe('CANCELED');
  });

  it('a job whose tasks all run: reported running, exit 0', async () => {
    const r = await submitDetached(['discard'], process.env);
    const jobId = jobIdOf(r.stdout);
    try {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`Job ${jobId} is running (1 task)`);
      expect(await jobState(rest, jobId)).toBe('RUNNING');
    } finally {
      await cancelJob(rest, jobId);
    }
  });
});
