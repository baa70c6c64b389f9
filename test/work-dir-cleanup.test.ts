import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterProcesses, freePort, jobState, restGet, sleep, submitJob } from './support/cluster-processes.js';

/**
 * Work directories of SIGKILLed JobManager and TaskManager processes (job bundles, lmdb
 * working copies) are removed by the next process that makes one in the same temp directory,
 * and the directories of processes still running are not touched.
 */
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
const processes = new ClusterProcesses('sluice-workdirs-');
afterAll(() => processes.cleanUp());

const named = (tmp: string, prefix: string): string[] => readdirSync(tmp).filter((n) => n.startsWith(prefix)).sort();
const ownedBy = (names: readonly string[], prefix: string, pid: number): string[] => names.filter((n) => n.startsWith(`${prefix}${pid}-`));
const exited = (p: { once: (e: 'exit', f: () => void) => unknown }): Promise<void> => new Promise((r) => p.once('exit', () => r()));

async function finished(rest: string, jobId: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  let state = '';
  while (Date.now() < deadline && !['FINISHED', 'FAILED', 'CANCELED'].includes(state)) {
    await sleep(200);
    state = await jobState(rest, jobId);
  }
  return state;
}

describe('work directories of killed processes', () => {
  it('a SIGKILLed JobManager and TaskManager leave theirs; the next JobManager and TaskManager remove them, not those of the TaskManager still running', async () => {
    const tmp = processes.tempDir();
    // Every process of the test makes its work directories here (os.tmpdir() reads TMPDIR).
    const env = { ...process.env, TMPDIR: tmp };
    const rpcPort = await freePort();
    const jm = ['jobmanager', '--rpc-port', String(rpcPort), '--rest-port', '0'];
    const tm = (id: string): string[] => ['taskmanager', '--jobmanager', `127.0.0.1:${rpcPort}`, '--id', id];
    const rest1 = /REST API at http:\/\/(\S+)/;
    const jm1 = await processes.start(jm, rest1, env);
    const tmKilled = await processes.start(tm('tm-killed'), /registered at the JobManager/, env);
    const tmLive = await processes.start(tm('tm-live'), /registered at the JobManager/, env);
    // A keyed job on the lmdb backend, running on both: each TaskManager has a working copy.
    const slow = await submitJob(jm1.match[1]!, JOB, [processes.tempDir(), '100000', '5', '2000'], ['-D', 'state.backend.type=lmdb']);
    while ((await restGet<{ counts: { completed: number } }>(jm1.match[1]!, `/jobs/${slow}/checkpoints`)).counts.completed < 1) await sleep(100);
    const killedPid = tmKilled.child.pid!;
    const livePid = tmLive.child.pid!;
    const before = { jm: named(tmp, 'sluice-jm-'), tm: named(tmp, 'sluice-tm-'), lmdb: named(tmp, 'sluice-lmdb-') };
    expect(before.jm).toHaveLength(1);
    expect(before.tm).toHaveLength(2);
    expect(ownedBy(before.lmdb, 'sluice-lmdb-', killedPid), before.lmdb.join()).toHaveLength(1);
    jm1.child.kill('SIGKILL');
    tmKilled.child.kill('SIGKILL');
    await Promise.all([exited(jm1.child), exited(tmKilled.child)]);
    // Killed: nothing of theirs went.
    expect(named(tmp, 'sluice-jm-')).toEqual(before.jm);
    expect(ownedBy(named(tmp, 'sluice-lmdb-'), 'sluice-lmdb-', killedPid)).toHaveLength(1);

    const jm2 = await processes.start([...jm, '--log-level', 'debug'], rest1, env);
    const jmDirs = named(tmp, 'sluice-jm-');
    expect(jmDirs, jm2.output()).toHaveLength(1);
    expect(jmDirs).not.toEqual(before.jm);
    expect(jm2.output()).toContain('removed 1 work directory that JobManager processes no longer running left');
    // tm-live reconnects to the new JobManager; a new TaskManager takes the killed one's place.
    const tmNew = await processes.start(tm('tm-new'), /registered at the JobManager/, env);
    const tmDirs = named(tmp, 'sluice-tm-');
    expect(ownedBy(tmDirs, 'sluice-tm-', livePid), tmDirs.join()).toHaveLength(1);
    expect(ownedBy(tmDirs, 'sluice-tm-', killedPid), tmDirs.join()).toEqual([]);
    expect(ownedBy(tmDirs, 'sluice-tm-', tmNew.child.pid!)).toHaveLength(1);
    expect(tmDirs).toHaveLength(2);
    // A job on both: the live TaskManager still stores bundles in its directory; the new one
    // sweeps the killed one's lmdb working copy when it makes its own.
    while ((await restGet<{ taskmanagers: unknown[] }>(jm2.match[1]!, '/taskmanagers')).taskmanagers.length < 2) await sleep(100);
    const again = await submitJob(jm2.match[1]!, JOB, [processes.tempDir(), '2000', '5', '20000'], ['-D', 'state.backend.type=lmdb']);
    expect(await finished(jm2.match[1]!, again)).toBe('FINISHED');
    expect(ownedBy(named(tmp, 'sluice-lmdb-'), 'sluice-lmdb-', killedPid)).toEqual([]);
  }, 120_000);
});
