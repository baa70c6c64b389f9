import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cancelJob, ClusterProcesses, execFileAsync, restGet, SLUICE_BIN, sleep, submitJob } from './support/cluster-processes.js';

/**
 * What operators see of a job that lost a TaskManager, on real processes: a `sluice
 * jobmanager` and `sluice taskmanager`s with one slot each. One TaskManager is SIGKILLed, the
 * job restarts and its next attempt waits for the slot that is gone: the REST API, `sluice
 * info` and `sluice list` say so (slots needed and free, when it gives up), show its subtasks
 * SCHEDULED instead of running with the last attempt's counts, its restart and last failure;
 * once another TaskManager registers, it runs again.
 */

const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
const SLOT_REQUEST_TIMEOUT_MS = 600_000;

interface Vertex {
  id: string;
  name: string;
  parallelism: number;
  status: string;
  tasks: Record<string, number>;
  metrics: { 'read-records': number; 'write-records': number };
}

interface Details {
  state: string;
  vertices: Vertex[];
  tasks: Record<string, number>;
  'num-restarts': number;
  'last-failure': { timestamp: number; message: string; task: string | null } | null;
  'waiting-for-slots': { required: number; available: number; since: number; 'timeout-at': number } | null;
}

const processes = new ClusterProcesses('sluice-job-status-');
afterAll(() => processes.cleanUp());

async function sluice(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [SLUICE_BIN, ...args]);
  return stdout;
}

/** Polls the job's details until `done` holds for them (the test's timeout bounds the wait). */
async function detailsWhen(rest: string, jobId: string, done: (d: Details) => boolean): Promise<Details> {
  for (;;) {
    const d = await restGet<Details>(rest, `/jobs/${jobId}`);
    if (done(d)) return d;
    if (d.state === 'FAILED' || d.state === 'CANCELED') throw new Error(`job ${jobId} is ${d.state}: ${JSON.stringify(d['last-failure'])}`);
    await sleep(100);
  }
}

function taskManager(rpc: string, id: string) {
  return processes.start(['taskmanager', '--jobmanager', rpc, '--slots', '1', '--id', id], /registered at the JobManager/);
}

describe('a job that lost a TaskManager and waits for slots', () => {
  it('says so (REST, sluice info, sluice list) while it waits, and runs again when a TaskManager comes back', async () => {
    const jm = await processes.start(
      ['jobmanager', '--rpc-port', '0', '--rest-port', '0', '-D', `slot.request.timeout=${SLOT_REQUEST_TIMEOUT_MS}`],
      /TaskManagers connect to (\S+); REST API at http:\/\/(\S+)/,
    );
    const [rpc, rest] = [jm.match[1]!, jm.match[2]!];
    await taskManager(rpc, 'tm-a');
    const b = await taskManager(rpc, 'tm-b');
    const jobId = await submitJob(rest, JOB, [processes.tempDir(), '100000000', '7', '2000']);
    const running = await detailsWhen(rest, jobId, (d) => d.state === 'RUNNING' && d.vertices.every((v) => v.status === 'RUNNING'));
    expect(running['waiting-for-slots']).toBeNull();
    expect(running['num-restarts']).toBe(0);
    expect(running['last-failure']).toBeNull();

    b.child.kill('SIGKILL');
    const waiting = await detailsWhen(rest, jobId, (d) => d['waiting-for-slots'] !== null);
    // Restarted once; its attempt needs 2 slots and 1 is left, until slot.request.timeout.
    expect(waiting.state).toBe('RESTARTING');
    expect(waiting['num-restarts']).toBe(1);
    expect(waiting['last-failure']!.message).toMatch(/^TaskManager tm-b \(pid \d+, [^)]+\) was lost: /);
    const w = waiting['waiting-for-slots']!;
    expect({ required: w.required, available: w.available, timeout: w['timeout-at'] - w.since }).toEqual({ required: 2, available: 1, timeout: SLOT_REQUEST_TIMEOUT_MS });
    // Flink's states: subtasks SCHEDULED, so the vertices CREATED; no records of the attempt that is gone.
    for (const v of waiting.vertices) {
      expect(v.status, v.name).toBe('CREATED');
      expect(v.tasks.SCHEDULED, v.name).toBe(v.parallelism);
      expect(v.tasks.RUNNING, v.name).toBe(0);
      expect(v.metrics['read-records'], v.name).toBe(0);
    }
    expect(waiting.tasks.scheduled).toBe(waiting.tasks.total);
    const subtasks = await restGet<{ subtasks: { status: string }[] }>(rest, `/jobs/${jobId}/vertices/${waiting.vertices[0]!.id}`);
    expect(subtasks.subtasks.map((s) => s.status)).toEqual(['SCHEDULED', 'SCHEDULED']);

    const info = await sluice('info', '-m', rest, jobId);
    expect(info).toMatch(/\nState: +RESTARTING\n/);
    expect(info).toMatch(/\nWaiting: +for 2 slots, 1 available, gives up at \d\d:\d\d:\d\d \(in (9|10) min \d+ s; slot\.request\.timeout\)\n/);
    expect(info).toMatch(/\nRestarts: +1\n/);
    expect(info).toMatch(/\nLast failure: \d{4}-\d\d-\d\dT[\d:.]+Z: TaskManager tm-b \(pid \d+, .*\) was lost: /);
    const rows = info.split('Vertices:\n')[1]!.trim().split('\n').slice(1);
    expect(rows.length).toBe(waiting.vertices.length);
    for (const r of rows) expect(r).toMatch(/ 0 +0 +CREATED \(2 SCHEDULED\)$/);

    const list = await sluice('list', '-m', rest);
    const [header, row, ...notes] = list.trimEnd().split('\n');
    expect(header).toMatch(/^job id +state +restarts +started +duration +name$/);
    expect(row).toMatch(new RegExp(`^${jobId} +RESTARTING +1 +`));
    expect(notes[0]).toMatch(/^ {2}waiting for 2 slots, 1 available, gives up at \d\d:\d\d:\d\d /);
    expect(notes[1]).toMatch(/^ {2}last failure \d{4}-.*Z: TaskManager tm-b .* was lost: /);

    // A TaskManager comes back: the attempt gets its slots and runs, without another restart.
    await taskManager(rpc, 'tm-c');
    const again = await detailsWhen(rest, jobId, (d) => d.state === 'RUNNING' && d.vertices.every((v) => v.status === 'RUNNING'));
    expect(again['waiting-for-slots']).toBeNull();
    expect(again['num-restarts']).toBe(1);
    expect(again.vertices.map((v) => v.tasks.RUNNING)).toEqual(again.vertices.map((v) => v.parallelism));
    const after = await sluice('list', '-m', rest);
    expect(after).toMatch(new RegExp(`\\n${jobId} +RUNNING +1 +`));
    expect(after).not.toMatch(/waiting for/);
    expect(after).toMatch(/\n {2}last failure .*TaskManager tm-b .* was lost/);
    await cancelJob(rest, jobId);
  });
});
