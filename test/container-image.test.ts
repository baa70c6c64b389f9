// Sluice's container image (deploy/container), built and run for real with Debian's buildah,
// podman and runc: a JobManager and two TaskManagers in containers on their own podman network,
// a keyed exactly-once job submitted from this host, one TaskManager container SIGKILLed while
// the job runs and another started in its place; the output equals the reference with no loss and no duplicate.
//
// .ci/run installs podman, buildah and runc when they are missing. Without them (a developer's
// machine without root) this file says so and skips; CI's skip check refuses that.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { freePort, jobState, latestCompletedCheckpoint, numRestarts, runSluice } from './support/cluster-processes.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
/** runc and rlimits this VM allows (see the file's comment). */
const CONTAINERS_CONF = join(ROOT, 'deploy', 'container', 'podman', 'containers.conf');
const TAG = `localhost/sluice:test-${process.pid}`;

function has(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const missing = ['podman', 'buildah', 'runc'].filter((c) => !has(c));
if (missing.length > 0) console.warn(`container-image.test.ts: ${missing.join(', ')} not installed (Debian: apt-get install podman buildah runc); skipped`);

const env = { ...process.env, CONTAINERS_CONF };
const podman = async (...args: string[]): Promise<string> => (await exec('podman', args, { env, maxBuffer: 16 << 20 })).stdout.trim();

describe.skipIf(missing.length > 0)('the container image', () => {
  const network = `sluice-test-${process.pid}`;
  const containers: string[] = [];
  const data = mkdtempSync(join(tmpdir(), 'sluice-container-'));
  // The containers run as uid 1000; the volume is the shared disk of checkpoints and output.
  chmodSync(data, 0o777);

  afterAll(async () => {
    for (const c of containers) await podman('rm', '-f', '-t', '0', c).catch(() => undefined);
    await podman('network', 'rm', '-f', network).catch(() => undefined);
    await podman('rmi', '-f', TAG).catch(() => undefined);
    rmSync(data, { recursive: true, force: true });
  });

  it('builds from the Node binary of the npm registry, runs as non-root, and runs a job exactly-once across a killed TaskManager container', { timeout: 600_000 }, async () => {
    const build = await exec('bash', [join(ROOT, 'deploy', 'container', 'build-image.sh'), '--local-base', '--no-build', '--tag', TAG], { env, cwd: ROOT, maxBuffer: 16 << 20 });
    const size = /\((\d+) bytes\)/.exec(build.stdout)?.[1];
    console.log(`image ${TAG}: ${size === undefined ? '?' : `${(Number(size) / 1e6).toFixed(0)} MB`}`);
    expect(await podman('run', '--rm', TAG, '--version')).toMatch(/^sluice \d+\.\d+\.\d+ \(Node\.js v22\./);

    await podman('network', 'create', network);
    const restPort = await freePort();
    const volume = `${data}:/data`;
    const run = async (name: string, ...args: string[]): Promise<void> => {
      containers.push(name);
      await podman('run', '-d', '--name', name, '--hostname', name, '--network', network, '-v', volume, ...args);
    };
    const jm = `jm-${process.pid}`;
    await run(jm, '-p', `127.0.0.1:${restPort}:8081`, TAG, 'jobmanager', '-D', 'execution.checkpointing.dir=file:///data/checkpoints');
    // One slot each: at parallelism 2 both TaskManagers run a part of the job.
    const taskManager = (tm: string): Promise<void> => run(tm, TAG, 'taskmanager', '--jobmanager', `${jm}:6123`, '--slots', '1', '-D', `taskmanager.host=${tm}`);
    const [tm1, tm2, tm3] = ['tm1', 'tm2', 'tm3'].map((t) => `${t}-${process.pid}`) as [string, string, string];
    await taskManager(tm1);
    await taskManager(tm2);
    expect(await podman('top', jm, 'user')).toMatch(/^USER\s+(1000|node)$/m);

    const rest = `127.0.0.1:${restPort}`;
    for (let i = 0; ; i++) {
      const overview = await fetch(`http://${rest}/overview`).then((r) => r.json() as Promise<{ taskmanagers: number }>).catch(() => ({ taskmanagers: 0 }));
      if (overview.taskmanagers === 2) break;
      if (i > 120) throw new Error(`the TaskManager containers did not register: ${await podman('logs', jm)}`);
      await new Promise((r) => setTimeout(r, 500));
    }

    const records = 30_000;
    const keys = 13;
    const submitted = await runSluice(['run', '-d', '--jobmanager', rest, '-p', '2', '-D', 'execution.checkpointing.interval=300ms', '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=10', '-D', 'restart-strategy.fixed-delay.delay=1s', JOB, '/data/out', String(records), String(keys), '5000', '2']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobId = /\b([0-9a-f]{32})\b/.exec(submitted.stdout)![1]!;

    // After a checkpoint completes, SIGKILL a TaskManager container; a new one takes its place
    // (as Kubernetes replaces a pod).
    for (let i = 0; (await latestCompletedCheckpoint(rest, jobId)).id < 2; i++) {
      if (i > 240) throw new Error('no checkpoint completed in the containers');
      await new Promise((r) => setTimeout(r, 250));
    }
    await podman('kill', '-s', 'KILL', tm1);
    await taskManager(tm3);

    for (let i = 0; ; i++) {
      const state = await jobState(rest, jobId);
      if (state === 'FINISHED') break;
      if (state === 'FAILED' || i > 600) throw new Error(`job ${state}: ${await podman('logs', jm)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await numRestarts(rest, jobId), 'the kill hit the running job').toBeGreaterThanOrEqual(1);
    const committed = await readCommittedLines(join(data, 'out'));
    expect(compareMultisets(committed, countReference(records, keys))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
