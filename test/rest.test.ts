import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { DiscardingSink } from '../src/connectors/discarding-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { RestServer } from '../src/rest/rest-server.js';

let server: RestServer;
let base: string;
let executor: LocalExecutor;
let done: Promise<unknown>;
const TOKEN = 's3cret';

async function call(method: string, path: string, body?: string, token: string | null = TOKEN): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, json: await res.json() };
}

// The CLI runs as a child process while this process serves the API: no spawnSync here.
function sluice(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/sluice.js', ...args], { env: { ...process.env, SLUICE_REST_TOKEN: TOKEN }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ status: err === null ? 0 : ((err as { code?: number }).code ?? 1), stdout, stderr }),
    );
  });
}


beforeAll(async () => {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 100 });
  env
    .fromSource(numberSource({ eventsPerSecond: 20_000 }), 'numbers')
    .keyBy((n) => n % 10)
    .reduce((a, b) => a + b)
    .sinkTo(new DiscardingSink<number>());
  executor = new LocalExecutor(env.getJobGraph('rest-test'), env.config, { log: () => {} });
  server = new RestServer({ port: 0, authToken: TOKEN });
  base = await server.start();
  server.register(executor);
  done = executor.run().catch(() => {});
  while (executor.status !== 'RUNNING') await new Promise((r) => setTimeout(r, 10));
});

afterAll(async () => {
  executor.cancel();
  await done;
  await server.stop();
});

describe('REST API', () => {
  it('answers the overview and job listings in Flink shapes', async () => {
    const o = await call('GET', '/overview');
    expect(o.status).toBe(200);
    expect(o.json['jobs-running']).toBe(1);
    const jobs = await call('GET', '/jobs');
    expect(jobs.json).toEqual({ jobs: [{ id: executor.jobId, status: 'RUNNING' }] });
    const ov = await call('GET', '/jobs/overview');
    expect(ov.json.jobs[0]).toMatchObject({ jid: executor.jobId, name: 'rest-test', state: 'RUNNING' });
    const d = await call('GET', `/jobs/${executor.jobId}`);
    expect(d.json.vertices.length).toBe(2);
    expect(d.json.vertices[0].parallelism).toBe(2);
  });

  it('triggers a checkpoint and reports its completion; history has Flink fields', async () => {
    const t = await call('POST', `/jobs/${executor.jobId}/checkpoints`, JSON.stringify({ checkpointType: 'FULL' }));
    expect(t.status).toBe(202);
    const triggerId = t.json['request-id'];
    let r;
    for (let i = 0; i < 100; i++) {
      r = await call('GET', `/jobs/${executor.jobId}/checkpoints/${triggerId}`);
      if (r.json.status.id === 'COMPLETED') break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(r!.json.status.id).toBe('COMPLETED');
    const id = r!.json.operation.checkpointId;
    expect(Number.isInteger(id)).toBe(true);
    const c = await call('GET', `/jobs/${executor.jobId}/checkpoints`);
    expect(c.json.counts.completed).toBeGreaterThanOrEqual(1);
    const entry = c.json.history.find((h: { id: number }) => h.id === id);
    expect(entry).toMatchObject({ id, status: 'COMPLETED', is_savepoint: false, checkpoint_type: 'CHECKPOINT', num_subtasks: 4, num_acknowledged_subtasks: 4 });
    for (const k of ['trigger_timestamp', 'latest_ack_timestamp', 'state_size', 'end_to_end_duration', 'external_path']) expect(entry).toHaveProperty(k);
    const details = await call('GET', `/jobs/${executor.jobId}/checkpoints/details/${id}`);
    expect(details.json.subtasks.length).toBe(4);
    const config = await call('GET', `/jobs/${executor.jobId}/checkpoints/config`);
    expect(config.json).toMatchObject({ mode: 'exactly_once', interval: 100, max_concurrent: 1 });
  });

  it('sluice checkpoint and sluice checkpoints work against it', async () => {
    const port = new URL(base).port;
    const r = await sluice('checkpoint', '-m', `127.0.0.1:${port}`, executor.jobId);
    expect(r.stdout).toMatch(new RegExp(`Checkpoint \\d+ of job ${executor.jobId} completed`));
    expect(r.status).toBe(0);
    const h = await sluice('checkpoints', '-m', `127.0.0.1:${port}`, executor.jobId);
    expect(h.stdout).toMatch(/completed \d+, failed \d+/);
    expect(h.stdout).toMatch(/COMPLETED\s+CHECKPOINT/);
    const bad = await sluice('checkpoint', '-m', `127.0.0.1:${port}`, 'nope');
    expect(bad.stderr).toMatch(/'nope' is not a job id/);
    const down = await sluice('list', '-m', '127.0.0.1:1');
    expect(down.stderr).toMatch(/cannot reach the Sluice REST API at http:\/\/127\.0\.0\.1:1/);
  });

  it('takes a savepoint (REST and sluice savepoint) and disposes of it', async () => {
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sp-'));
    try {
      const t = await call('POST', `/jobs/${executor.jobId}/savepoints`, JSON.stringify({ 'target-directory': dir }));
      expect(t.status).toBe(202);
      let r;
      for (let i = 0; i < 100; i++) {
        r = await call('GET', `/jobs/${executor.jobId}/savepoints/${t.json['request-id']}`);
        if (r.json.status.id === 'COMPLETED') break;
        await new Promise((res) => setTimeout(res, 50));
      }
      const location = r!.json.operation.location as string;
      expect(location.startsWith(dir)).toBe(true);
      expect(readdirSync(location)).toContain('_metadata');
      const d = await call('POST', '/savepoint-disposal', JSON.stringify({ 'savepoint-path': location }));
      expect(d.status).toBe(200);
      for (let i = 0; i < 100 && readdirSync(dir).length > 0; i++) await new Promise((res) => setTimeout(res, 20));
      expect(readdirSync(dir)).toEqual([]);
      const port = new URL(base).port;
      const cli = await sluice('savepoint', '-m', `127.0.0.1:${port}`, executor.jobId, dir);
      expect(cli.stdout).toMatch(/Savepoint completed\. Path: .*savepoint-[0-9a-f]{6}-[0-9a-f]{12}/);
      const path = /Path: (\S+)/.exec(cli.stdout)![1]!;
      const disposed = await sluice('savepoint', '--dispose', path);
      expect(disposed.stdout).toMatch(/Disposed savepoint/);
      expect(readdirSync(dir)).toEqual([]);
      const bad = await call('POST', `/jobs/${executor.jobId}/savepoints`, JSON.stringify({ formatType: 'WEIRD' }));
      expect(bad.status).toBe(400);
      // "cancel-job": "true" (a string) was taken as false: the job went on running.
      const stringCancel = await call('POST', `/jobs/${executor.jobId}/savepoints`, JSON.stringify({ 'target-directory': dir, 'cancel-job': 'true' }));
      expect([stringCancel.status, stringCancel.json.errors[0]]).toEqual([400, 'cancel-job must be true or false (a JSON boolean), got "true"']);
      // Flink's triggerId: the same id again is the same operation, not a second savepoint.
      const triggerId = 'ab'.repeat(16);
      const once = await call('POST', `/jobs/${executor.jobId}/savepoints`, JSON.stringify({ 'target-directory': dir, triggerId }));
      const again = await call('POST', `/jobs/${executor.jobId}/savepoints`, JSON.stringify({ 'target-directory': dir, triggerId }));
      expect([once.status, once.json['request-id'], again.status, again.json['request-id']]).toEqual([202, triggerId, 202, triggerId]);
      for (let i = 0; i < 200 && (await call('GET', `/jobs/${executor.jobId}/savepoints/${triggerId}`)).json.status.id !== 'COMPLETED'; i++) await new Promise((res) => setTimeout(res, 50));
      expect(readdirSync(dir).length).toBe(1);
      const taken = await call('POST', `/jobs/${executor.jobId}/checkpoints`, JSON.stringify({}));
      expect(taken.status).toBe(202);
      const badId = await call('POST', `/jobs/${executor.jobId}/stop`, JSON.stringify({ triggerId: 'nope' }));
      expect([badId.status, badId.json.errors[0]]).toEqual([400, 'triggerId must be 32 hex characters, got "nope"']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers malformed requests with 4xx and a JSON error, never a crash', async () => {
    expect((await call('GET', '/jobs', undefined, null)).status).toBe(401);
    expect((await call('GET', '/jobs', undefined, 'wrong')).status).toBe(401);
    const badJson = await call('POST', `/jobs/${executor.jobId}/checkpoints`, '{nope');
    expect(badJson.status).toBe(400);
    expect(badJson.json.errors[0]).toMatch(/not valid JSON/);
    expect((await call('POST', `/jobs/${executor.jobId}/checkpoints`, JSON.stringify({ checkpointType: 'HALF' }))).status).toBe(400);
    expect((await call('GET', '/jobs/not-a-job')).status).toBe(400);
    expect((await call('GET', `/jobs/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await call('GET', '/no/such/path')).status).toBe(404);
    expect((await call('DELETE', '/jobs')).status).toBe(405);
    expect((await call('GET', `/jobs/${executor.jobId}/checkpoints/details/x`)).status).toBe(400);
    // A malformed percent-escape in a path: 400, not an internal error.
    const escape = await call('GET', '/jobs/%zz');
    expect([escape.status, escape.json.errors[0]]).toEqual([400, "the path segment '%zz' holds a malformed percent-escape"]);
    // A body that is JSON but not an object is refused, not taken as "no options".
    for (const [body, what] of [['null', 'null'], ['true', 'a boolean'], ['5', 'a number'], ['[]', 'an array'], ['"x"', 'a string']] as const) {
      const r = await call('POST', `/jobs/${executor.jobId}/stop`, body);
      expect([r.status, r.json.errors[0]], body).toEqual([400, `the request body must be a JSON object ({...}), got ${what}`]);
    }
    const big = await call('POST', `/jobs/${executor.jobId}/checkpoints`, JSON.stringify({ pad: 'x'.repeat(1 << 20) }));
    expect([big.status, big.json.errors[0]]).toEqual([413, 'request body larger than 1048576 bytes']);
    expect((await call('GET', '/overview')).status).toBe(200);
    expect(executor.status).toBe('RUNNING');
  });

  it("a trigger id answers only at its own operation's path and job", async () => {
    const t = await call('POST', `/jobs/${executor.jobId}/checkpoints`, JSON.stringify({}));
    const id = t.json['request-id'] as string;
    expect((await call('GET', `/jobs/${executor.jobId}/checkpoints/${id}`)).status).toBe(200);
    const asSavepoint = await call('GET', `/jobs/${executor.jobId}/savepoints/${id}`);
    expect([asSavepoint.status, asSavepoint.json.errors[0]]).toEqual([404, `no savepoint or stop operation with trigger id ${id} for job ${executor.jobId} (results are kept for 5 minutes)`]);
    expect((await call('GET', `/savepoint-disposal/${id}`)).status).toBe(404);
  });
});
