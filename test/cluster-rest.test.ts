// The JobManager's REST API: answers for a cluster job, errors for malformed submissions,
// the bearer token, the cluster secret of TaskManager connections, and `sluice info`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { MsgpackMessageCodec } from '../src/cluster/wire/connection.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Configuration, type ConfigValue } from '../src/config/configuration.js';
import { JobManager } from '../src/cluster/job-manager.js';
import { TaskManager } from '../src/cluster/task-manager.js';
import { LocalCluster } from '../src/cluster/local-cluster.js';
import { bundleJob } from '../src/cli/job-loader.js';
import { main } from '../src/cli/main.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'cluster');
const BIN = join(import.meta.dirname, '..', 'bin', 'sluice.js');
const TOKEN = 'rest-test-token';
const SECRET = 'rest-test-secret';

const cleanups: (() => Promise<void> | void)[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-cluster-rest-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

let jm: JobManager;
const jmLog: string[] = [];
let base = '';
let countBundle = '';

beforeAll(async () => {
  jm = new JobManager({
    config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0], ['rest.auth.token', TOKEN], ['cluster.secret', SECRET]]),
    log: (m) => jmLog.push(m),
  });
  await jm.start();
  cleanups.push(() => jm.stop());
  base = jm.restUrl;
  for (const id of ['tm-a', 'tm-b']) {
    const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 2, host: '127.0.0.1', id, secret: SECRET, log: () => {} });
    await tm.start();
    cleanups.push(() => tm.stop());
  }
  countBundle = await bundleJob(join(FIXTURES, 'keyed-count-job.ts'), join(tempDir(), 'job.mjs'));
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function errorsOf(r: { json: Record<string, unknown> }): string {
  expect(Array.isArray(r.json.errors), JSON.stringify(r.json)).toBe(true);
  return (r.json.errors as string[]).join('\n');
}

/** A long-running keyed job on the cluster (cancel it when done). */
async function submitCountJob(config: [string, ConfigValue][] = []): Promise<string> {
  const r = await call('POST', '/jobs', {
    bundle: countBundle,
    config: [['parallelism.default', 2], ...config],
    args: [tempDir(), '10000000', '5', '2000'],
    name: 'rest-count',
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.jobid as string;
}

async function untilState(jobId: string, states: string[]): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { json } = await call('GET', `/jobs/${jobId}`);
    if (states.includes(json.state as string)) return json.state as string;
    if (Date.now() > deadline) throw new Error(`job ${jobId} is ${String(json.state)}, not ${states.join('/')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('JobManager REST API: submission errors', () => {
  it('POST /jobs without a body: 400 naming the missing bundle', async () => {
    const r = await call('POST', '/jobs');
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/"bundle"/);
  });

  it('POST /jobs with a body that is not JSON: 400', async () => {
    const r = await call('POST', '/jobs', '{"bundle": ');
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/not valid JSON/);
  });

  it('POST /jobs with a bundle that is not a string: 400', async () => {
    const r = await call('POST', '/jobs', { bundle: 42 });
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/"bundle"/);
  });

  it('POST /jobs with a bundle whose job throws while building: 400 with its message', async () => {
    const bundle = await bundleJob(join(FIXTURES, 'throwing-job.ts'), join(tempDir(), 'job.mjs'));
    const r = await call('POST', '/jobs', { bundle, config: [], args: [], name: 'throwing' });
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/cannot be submitted: .*this job refuses to build/);
  });

  it('POST /jobs with a bundle that is not JavaScript: 400', async () => {
    const r = await call('POST', '/jobs', { bundle: 'this is not ( javascript', config: [], args: [], name: 'garbage' });
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/cannot be submitted/);
  });

  it('POST /jobs with a bundle without a job definition: 400', async () => {
    const r = await call('POST', '/jobs', { bundle: 'export default 42;', config: [], args: [], name: 'nothing' });
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/no defineJob\(\.\.\.\) default export/);
  });

  it('POST /jobs with an unknown configuration key: 400 naming the key', async () => {
    const r = await call('POST', '/jobs', { bundle: countBundle, config: [['parallelism.defualt', 2]], args: [tempDir(), '10', '2', '100'], name: 'typo' });
    expect(r.status).toBe(400);
    expect(errorsOf(r)).toMatch(/unknown configuration key 'parallelism.defualt'; did you mean 'parallelism.default'/);
  });

  it('unknown jobs and paths: 404; wrong methods: 405; malformed ids: 400', async () => {
    const unknown = 'f'.repeat(32);
    const result = await call('GET', `/jobs/${unknown}/result`);
    expect(result.status).toBe(404);
    expect(errorsOf(result)).toMatch(new RegExp(unknown));
    expect((await call('GET', `/jobs/${unknown}`)).status).toBe(404);
    expect((await call('PATCH', `/jobs/${unknown}`)).status).toBe(404);
    expect((await call('GET', '/jobs/not-a-job-id')).status).toBe(400);
    expect((await call('GET', '/no/such/path')).status).toBe(404);
    expect((await call('DELETE', '/jobs')).status).toBe(405);
    // Nothing of the above was registered as a job.
    expect((await call('GET', '/jobs')).json.jobs).toEqual([]);
  });
});

describe('JobManager REST API: a cluster job', () => {
  it('GET /taskmanagers lists the registered TaskManagers with their slots', async () => {
    const r = await call('GET', '/taskmanagers');
    expect(r.status).toBe(200);
    const tms = r.json.taskmanagers as { id: string; path: string; slotsNumber: number; freeSlots: number; dataPort: number }[];
    expect(tms.map((t) => [t.id, t.slotsNumber, t.freeSlots]).sort()).toEqual([
      ['tm-a', 2, 2],
      ['tm-b', 2, 2],
    ]);
    for (const t of tms) expect(t.path).toBe(`tcp://127.0.0.1:${t.dataPort}/${process.pid}`);
    const overview = await call('GET', '/overview');
    expect(overview.json).toMatchObject({ taskmanagers: 2, 'slots-total': 4, 'slots-available': 4, 'jobs-running': 0 });
  });

  it('/jobs, /jobs/overview, /jobs/:id, /jobs/:id/result, slots taken, PATCH /jobs/:id cancels', async () => {
    const jobId = await submitCountJob();
    expect(jobId).toMatch(/^[0-9a-f]{32}$/);
    await untilState(jobId, ['RUNNING']);
    const jobs = await call('GET', '/jobs');
    expect(jobs.json.jobs).toContainEqual({ id: jobId, status: 'RUNNING' });
    const overview = (await call('GET', '/jobs/overview')).json.jobs as { jid: string; name: string; state: string; 'start-time': number }[];
    const mine = overview.find((j) => j.jid === jobId)!;
    expect(mine).toMatchObject({ name: 'rest-count', state: 'RUNNING' });
    expect(mine['start-time']).toBeGreaterThan(Date.now() - 60_000);
    const details = (await call('GET', `/jobs/${jobId}`)).json as { jid: string; vertices: { name: string; parallelism: number }[] };
    expect(details.jid).toBe(jobId);
    expect(details.vertices.length).toBeGreaterThanOrEqual(2);
    for (const v of details.vertices) expect(v.parallelism).toBe(2);
    // Each subtask names the TaskManager it runs on: one pipeline on each.
    const vertexId = (details.vertices[0] as unknown as { id: string }).id;
    const subtasks = (await call('GET', `/jobs/${jobId}/vertices/${vertexId}`)).json.subtasks as { subtask: number; attempt: number; 'taskmanager-id': string; metrics: Record<string, number> }[];
    for (const t of subtasks) expect(t.metrics['accumulated-backpressured-time']).toBeGreaterThanOrEqual(0);
    expect(subtasks.map((t) => t['taskmanager-id']).sort()).toEqual(['tm-a', 'tm-b']);
    expect(subtasks.map((t) => t.attempt)).toEqual([0, 0]);
    // The JobManager's /metrics labels each subtask's series with its own TaskManager and attempt.
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const series = metrics
      .split('\n')
      .filter((l) => l.startsWith('flink_taskmanager_job_task_numRecordsIn{') && l.includes(`job_id="${jobId}"`) && l.includes(`task_id="${vertexId}"`))
      .map((l) => Object.fromEntries([...l.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]])));
    expect(series.map((s) => [Number(s.subtask_index), s.tm_id, s.task_attempt_num]).sort()).toEqual(
      subtasks.map((t) => [t.subtask, t['taskmanager-id'].replace('-', '_'), '0']).sort(),
    );
    const tms = (await call('GET', '/taskmanagers')).json.taskmanagers as { freeSlots: number }[];
    expect(tms.map((t) => t.freeSlots)).toEqual([1, 1]);
    expect((await call('GET', '/overview')).json).toMatchObject({ taskmanagers: 2, 'slots-total': 4, 'slots-available': 2, 'jobs-running': 1 });
    const result = await call('GET', `/jobs/${jobId}/result`);
    expect(result).toMatchObject({ status: 200, json: { status: 'RUNNING', numRestarts: 0 } });

    const cancel = await call('PATCH', `/jobs/${jobId}?mode=cancel`);
    expect(cancel.status).toBe(202);
    expect(await untilState(jobId, ['CANCELED', 'FAILED', 'FINISHED'])).toBe('CANCELED');
    expect((await call('PATCH', `/jobs/${jobId}?mode=stop`)).status).toBe(400);
    // As Flink: canceling a canceled job is acknowledged again; a finished job is a conflict.
    expect((await call('PATCH', `/jobs/${jobId}?mode=cancel`)).status).toBe(202);
    const finished = await call('POST', '/jobs', { bundle: countBundle, config: [['parallelism.default', 2]], args: [tempDir(), '100', '5', '100000'], name: 'rest-count-short' });
    expect(finished.status, JSON.stringify(finished.json)).toBe(200);
    expect(await untilState(finished.json.jobid as string, ['CANCELED', 'FAILED', 'FINISHED'])).toBe('FINISHED');
    const conflict = await call('PATCH', `/jobs/${finished.json.jobid as string}?mode=cancel`);
    expect([conflict.status, errorsOf(conflict)]).toEqual([409, 'Job cancellation failed because the job has already reached another terminal state (FINISHED).']);
    // Only a job submission takes a body over 1 MiB.
    const big = await call('POST', `/jobs/${jobId}/checkpoints`, { pad: 'x'.repeat(1 << 20) });
    expect([big.status, errorsOf(big)]).toEqual([413, 'request body larger than 1048576 bytes']);
    // The slots are free again.
    const after = (await call('GET', '/taskmanagers')).json.taskmanagers as { freeSlots: number }[];
    expect(after.map((t) => t.freeSlots)).toEqual([2, 2]);
  });

  it("GET /jobs/:id/exceptions of a cluster job: the job code's own error and stack (not only the runtime's), and the failed task", async () => {
    const bundle = await bundleJob(join(import.meta.dirname, '..', 'examples', 'checkpointed-count.ts'), join(tempDir(), 'job.mjs'));
    const r = await call('POST', '/jobs', { bundle, config: [['parallelism.default', 2], ['execution.checkpointing.interval', 100]], args: [tempDir(), '3000', '1000'], name: 'fails-once' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const jobId = r.json.jobid as string;
    expect(await untilState(jobId, ['CANCELED', 'FAILED', 'FINISHED'])).toBe('FINISHED');
    const ex = (await call('GET', `/jobs/${jobId}/exceptions`)).json as { 'root-exception': string; exceptionHistory: { entries: { stacktrace: string; taskName: string | null }[] } };
    expect(ex['root-exception']).toMatch(/^Error: injected failure at number 1000\n +at .*checkpointed-count\.ts:\d+:\d+/);
    expect(ex.exceptionHistory.entries).toHaveLength(1);
    expect(ex.exceptionHistory.entries[0]!.taskName).toMatch(/^numbers -> fail once \([12]\/2\)$/);
    // The subtasks that finished the job are those of the second attempt.
    const vertexId = ((await call('GET', `/jobs/${jobId}`)).json.vertices as { id: string }[])[0]!.id;
    const subtasks = (await call('GET', `/jobs/${jobId}/vertices/${vertexId}`)).json.subtasks as { attempt: number; status: string }[];
    expect(subtasks.map((t) => [t.attempt, t.status])).toEqual([
      [1, 'FINISHED'],
      [1, 'FINISHED'],
    ]);
  });

  it('a job that fails before it runs (a savepoint path that does not exist) says why in /result and /exceptions', async () => {
    const missing = join(tempDir(), 'no-such-savepoint');
    const r = await call('POST', '/jobs', { bundle: countBundle, config: [['parallelism.default', 2]], args: [tempDir(), '100', '5', '1000'], name: 'bad-restore', savepointPath: missing });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const jobId = r.json.jobid as string;
    expect(await untilState(jobId, ['CANCELED', 'FAILED', 'FINISHED'])).toBe('FAILED');
    const result = (await call('GET', `/jobs/${jobId}/result`)).json as { failure?: string };
    expect(result.failure).toMatch(new RegExp(`not a checkpoint or savepoint directory: ${missing} does not exist`));
    const ex = (await call('GET', `/jobs/${jobId}/exceptions`)).json as { 'root-exception': string | null };
    expect(ex['root-exception']).toMatch(/does not exist/);
  });

  it('sluice info prints the job: name, state, times, vertices with parallelism, records, status', async () => {
    const jobId = await submitCountJob();
    await untilState(jobId, ['RUNNING']);
    // Let some records flow (progress reports come every 500 ms).
    await new Promise((r) => setTimeout(r, 1200));
    const out: string[] = [];
    const err: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    let code: number;
    let noToken: number;
    let unknown: number;
    let badId: number;
    try {
      const address = base.replace(/^http:\/\//, '');
      code = await main(['info', '--jobmanager', address, '--token', TOKEN, jobId]);
      noToken = await main(['info', '--jobmanager', address, jobId]);
      unknown = await main(['info', '--jobmanager', address, '--token', TOKEN, 'e'.repeat(32)]);
      badId = await main(['info', '--jobmanager', address, 'nope']);
    } finally {
      o.mockRestore();
      e.mockRestore();
    }
    await call('PATCH', `/jobs/${jobId}`);
    await untilState(jobId, ['CANCELED']);
    expect(code, err.join('')).toBe(0);
    const text = out.join('');
    expect(text).toMatch(new RegExp(`^Job ${jobId}: rest-count\\n`));
    expect(text).toMatch(/\nState: +RUNNING\n/);
    expect(text).toMatch(/\nStarted: +\d{4}-\d\d-\d\dT/);
    expect(text).toMatch(/\nDuration: +\d/);
    expect(text).toMatch(/\n {2}name +parallelism +records in +records out +status\n/);
    const rows = text.split('Vertices:\n')[1]!.trim().split('\n').slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const numbers = rows.map((r) => r.trim().split(/ {2,}/)).map((cells) => cells.slice(-4));
    for (const [parallelism, , , status] of numbers) {
      expect(parallelism).toBe('2');
      expect(status).toBe('RUNNING');
    }
    expect(Number(numbers[0]![2])).toBeGreaterThan(0); // the source wrote records
    expect(noToken).toBe(1);
    expect(err.join('')).toMatch(/401 missing or wrong bearer token/);
    expect(unknown).toBe(1);
    expect(err.join('')).toMatch(/404 job e{32} not found/);
    expect(badId).toBe(2);
  });
});

describe('JobManager REST API: access', () => {
  it('rest.auth.token: requests without it or with a wrong one get 401', async () => {
    for (const path of ['/overview', '/jobs', '/jobs/overview', '/taskmanagers', `/jobs/${'a'.repeat(32)}`]) {
      const none = await call('GET', path, undefined, null);
      expect(none.status, path).toBe(401);
      expect(errorsOf(none)).toMatch(/bearer token/);
      expect((await call('GET', path, undefined, 'wrong')).status, path).toBe(401);
    }
    expect((await call('POST', '/jobs', { bundle: countBundle }, null)).status).toBe(401);
    expect((await call('PATCH', `/jobs/${'a'.repeat(32)}`, undefined, 'wrong')).status).toBe(401);
    expect((await call('GET', '/overview')).status).toBe(200);
  });

  it('cluster.secret: a TaskManager with a wrong secret is refused and says why; one with the right secret registers', async () => {
    const logs: Record<string, string[]> = { wrong: [], none: [], right: [] };
    const secrets: Record<string, string | undefined> = { wrong: 'not-the-secret', none: undefined, right: SECRET };
    const tms = Object.entries(secrets).map(
      ([name, secret]) => new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 1, host: '127.0.0.1', id: `tm-${name}`, secret, log: (m) => logs[name]!.push(m) }),
    );
    try {
      void tms[0]!.start();
      void tms[1]!.start();
      await tms[2]!.start();
      await new Promise((r) => setTimeout(r, 1500));
      const ids = ((await call('GET', '/taskmanagers')).json.taskmanagers as { id: string }[]).map((t) => t.id).sort();
      expect(ids).toEqual(['tm-a', 'tm-b', 'tm-right']);
      expect(jmLog.join('\n')).toMatch(/refused a TaskManager connection from \S+: wrong cluster secret \(cluster\.secret\)/);
      for (const name of ['wrong', 'none']) {
        expect(logs[name]!.join('\n'), name).toMatch(/refused.*cluster\.secret/);
        expect(logs[name]!.join('\n'), name).not.toMatch(/registered at the JobManager/);
        // A refused TaskManager retries slowly, not in a tight loop.
        expect(logs[name]!.filter((l) => /refused/.test(l)).length, name).toBe(1);
      }
      expect(logs.right!.join('\n')).toMatch(/registered at the JobManager/);
    } finally {
      for (const tm of tms) await tm.stop();
    }
  });

  it('the secret travels in the environment (SLUICE_CLUSTER_SECRET), never on a command line: a sluice taskmanager process registers with it; the local cluster\'s TaskManagers get it so', async () => {
    // A standalone TaskManager process, the secret only in its environment.
    const child = spawn(process.execPath, [BIN, 'taskmanager', '--jobmanager', `127.0.0.1:${jm.rpcPort}`, '--id', 'tm-env'], {
      env: { ...process.env, SLUICE_CLUSTER_SECRET: SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (out += String(d)));
    try {
      const deadline = Date.now() + 20_000;
      let ids: string[] = [];
      while (!ids.includes('tm-env') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        ids = ((await call('GET', '/taskmanagers')).json.taskmanagers as { id: string }[]).map((t) => t.id);
      }
      expect(ids, out).toContain('tm-env');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    // A local cluster with a secret: its TaskManagers register, and `ps` does not show the secret.
    const cluster = new LocalCluster({
      config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0], ['cluster.secret', 'local-cluster-secret']]),
      taskManagers: 1,
      slotsPerTaskManager: 1,
      taskManagerOutput: 'ignore',
      log: () => {},
    });
    try {
      await cluster.start();
      await cluster.waitForTaskManagers(1, 20_000);
      const cmdline = readFileSync(`/proc/${cluster.taskManagers[0]!.process.pid}/cmdline`, 'utf8');
      expect(cmdline).toMatch(/taskmanager/);
      expect(cmdline).not.toMatch(/local-cluster-secret|cluster\.secret/);
    } finally {
      await cluster.stop();
    }
  });

  it('a TaskManager pointed at a port that accepts and closes (the REST port) retries slowly and says which port it wants', async () => {
    const restPort = Number(new URL(base).port);
    const logs: string[] = [];
    const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: restPort, slots: 1, host: '127.0.0.1', id: 'tm-wrong-port', log: (m) => logs.push(m) });
    void tm.start();
    try {
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      await tm.stop();
    }
    expect(logs, logs.slice(0, 5).join('\n')).toHaveLength(1);
    expect(logs[0]).toMatch(/closed the connection before registering this TaskManager \(.*frame of \d+ bytes exceeds.*\); is it the JobManager's RPC port \(jobmanager\.rpc\.port, default 6123\), not its REST port\? retrying/);
  });

  it('a peer sending null, a number or a malformed registration to the RPC port or a data port is refused; the processes go on', async () => {
    // Encoded as a peer of this version would: a new codec for each connection.
    const frame = (value: unknown): Buffer => new MsgpackMessageCodec<never, never>().encodeFrame(value as never);
    /** Sends one frame and waits until the peer closes the connection. */
    const sendAndWaitForClose = async (port: number, bytes: Buffer): Promise<void> => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      socket.on('data', () => {});
      await once(socket, 'connect');
      socket.write(bytes);
      await Promise.race([once(socket, 'close'), new Promise((r) => setTimeout(r, 5000))]);
      socket.destroy();
    };
    const tms = (await call('GET', '/taskmanagers')).json.taskmanagers as { id: string; dataPort: number }[];
    const dataPort = tms.find((t) => t.id === 'tm-a')!.dataPort;
    const malformedRegistration = { t: 'register', tm: 'evil', slots: 'abc', dataHost: '127.0.0.1', dataPort: 'y', pid: 'z', proof: '' };
    for (const bytes of [frame(null), frame(5), frame([1, 2]), frame({ x: 1 }), frame(malformedRegistration)]) {
      await sendAndWaitForClose(jm.rpcPort, bytes);
      await sendAndWaitForClose(dataPort, bytes);
    }
    await sendAndWaitForClose(dataPort, frame({ t: 'hello', jobId: null, attempt: 'x', from: 7, proof: '' }));
    expect(jmLog.join('\n')).toMatch(/a message that is not a Sluice message \(null\)/);
    expect(jmLog.join('\n')).toMatch(/refused a TaskManager connection from \S+: a malformed registration: slots must be an integer >= 1, got "abc"/);
    // Both processes still answer: the JobManager its REST API, the TaskManagers stay registered.
    const after = (await call('GET', '/taskmanagers')).json.taskmanagers as { id: string; slotsNumber: number }[];
    expect(after.map((t) => t.id).sort()).toEqual(['tm-a', 'tm-b']);
    expect((await call('GET', '/overview')).json['slots-total']).toBe(4);
  });
});
