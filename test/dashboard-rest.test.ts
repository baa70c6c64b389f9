import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, WatermarkStrategy } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { DiscardingSink } from '../src/connectors/discarding-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { RestServer } from '../src/rest/rest-server.js';

/** The REST endpoints the dashboard adds to the core API, and its files. */

const TOKEN = 'dash';
let server: RestServer;
let base: string;
let executor: LocalExecutor;
let done: Promise<unknown>;
const V0 = '0'.repeat(32);
const V1 = `${'0'.repeat(31)}1`;

async function call(path: string, token: string | null = TOKEN): Promise<{ status: number; type: string; body: string; json: () => any }> {
  const res = await fetch(`${base}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  const body = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', body, json: () => JSON.parse(body) };
}

beforeAll(async () => {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 100, 'rest.auth.token': 'hush' });
  env
    .fromSource(numberSource({ eventsPerSecond: 20_000 }), WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => 1_000_000 + n), 'numbers')
    .keyBy((n) => n % 10)
    .reduce((a, b) => a + b)
    .sinkTo(new DiscardingSink<number>());
  executor = new LocalExecutor(env.getJobGraph('dashboard-rest'), env.config, { log: () => {} });
  server = new RestServer({ port: 0, authToken: TOKEN });
  base = await server.start();
  server.register(executor);
  done = executor.run().catch(() => {});
  while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 20));
});

afterAll(async () => {
  executor.cancel();
  await done;
  await server.stop(0);
});

describe('dashboard files', () => {
  it('serves the page and its bundle without a token, and nothing outside the bundle', async () => {
    const page = await call('/', null);
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('assets/app.js');
    expect(page.body).not.toMatch(/https?:\/\//); // no CDN
    const js = await call('/assets/app.js', null);
    expect(js.status).toBe(200);
    expect(js.type).toBe('text/javascript; charset=utf-8');
    expect((await call('/assets/app.css', null)).status).toBe(200);
    expect((await call('/assets/..%2Fpackage.json', null)).status).toBe(404);
    expect((await call('/assets/nope.js', null)).status).toBe(404);
    expect((await call('/jobs', null)).status).toBe(401);
  });
});

describe('REST endpoints for the dashboard (Flink shapes)', () => {
  it('GET /jobs/:id/vertices/:vid lists the subtasks with their records', async () => {
    const r = await call(`/jobs/${executor.jobId}/vertices/${V0}`);
    expect(r.status).toBe(200);
    const v = r.json();
    expect(v).toMatchObject({ id: V0, name: 'numbers', parallelism: 2 });
    expect(v.subtasks.map((s: { subtask: number }) => s.subtask)).toEqual([0, 1]);
    expect(v.subtasks[0]).toMatchObject({ status: 'RUNNING', attempt: 0 });
    expect(v.subtasks[0].metrics['write-records']).toBeGreaterThan(0);
    expect(v.subtasks[0].metrics['accumulated-backpressured-time']).toBeGreaterThanOrEqual(0);
    expect((await call(`/jobs/${executor.jobId}/vertices/${'7'.repeat(32)}`)).status).toBe(404);
  });

  it('GET /jobs/:id/vertices/:vid/watermarks: each subtask\'s input watermark as Flink reports it; GET /jobs/:id/plan: the graph', async () => {
    const source = (await call(`/jobs/${executor.jobId}/vertices/${V0}/watermarks`)).json();
    expect(source).toEqual([
      { id: '0.currentInputWatermark', value: '-9223372036854775808' },
      { id: '1.currentInputWatermark', value: '-9223372036854775808' },
    ]);
    let reduce: { id: string; value: string }[] = [];
    for (let i = 0; i < 100; i++) {
      reduce = (await call(`/jobs/${executor.jobId}/vertices/${V1}/watermarks`)).json();
      if (reduce.every((w) => Number(w.value) > 1_000_000)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(reduce.map((w) => w.id)).toEqual(['0.currentInputWatermark', '1.currentInputWatermark']);
    // The records' timestamps are 1,000,000 + n; a subtask's input watermark is the least of its inputs'.
    for (const w of reduce) expect(Number(w.value)).toBeGreaterThan(1_000_000);
    expect((await call(`/jobs/${executor.jobId}/vertices/${'7'.repeat(32)}/watermarks`)).status).toBe(404);

    // The job's configuration, as Flink's job configuration tab: sorted, secrets hidden.
    const config = (await call(`/jobs/${executor.jobId}/jobmanager/config`)).json();
    expect(config).toEqual([
      { key: 'execution.checkpointing.interval', value: '100' },
      { key: 'parallelism.default', value: '2' },
      { key: 'rest.auth.token', value: '******' },
    ]);
    expect((await call(`/jobs/${'7'.repeat(32)}/jobmanager/config`)).status).toBe(404);

    const plan = (await call(`/jobs/${executor.jobId}/plan`)).json().plan;
    expect(plan).toMatchObject({ jid: executor.jobId, name: 'dashboard-rest', type: 'STREAMING' });
    expect(plan.nodes.map((n: { id: string; parallelism: number; inputs: unknown[] }) => [n.id, n.parallelism, n.inputs])).toEqual([
      [V0, 2, []],
      [V1, 2, [{ num: 0, id: V0, ship_strategy: 'HASH', exchange: 'pipelined_bounded' }]],
    ]);
  });

  it('checkpoint details have per-vertex statistics, and per-subtask detail with alignment and in-flight data', async () => {
    const id = executor.checkpointStats.entries().find((e) => e.status === 'COMPLETED')!.id;
    const d = (await call(`/jobs/${executor.jobId}/checkpoints/details/${id}`)).json();
    expect(Object.keys(d.tasks).sort()).toEqual([V0, V1]);
    expect(d.tasks[V1]).toMatchObject({ id, status: 'COMPLETED', num_subtasks: 2, num_acknowledged_subtasks: 2 });
    const s = await call(`/jobs/${executor.jobId}/checkpoints/details/${id}/subtasks/${V1}`);
    expect(s.status).toBe(200);
    const body = s.json();
    expect(body).toMatchObject({ id, num_subtasks: 2, num_acknowledged_subtasks: 2 });
    expect(body.state_size).toBeGreaterThan(0);
    expect(Object.keys(body.summary).sort()).toEqual(['alignment', 'checkpoint_duration', 'checkpointed_size', 'end_to_end_duration', 'start_delay', 'state_size']);
    expect(body.subtasks).toHaveLength(2);
    expect(body.subtasks[1]).toMatchObject({ index: 1, status: 'completed', unaligned_checkpoint: false, aborted: false });
    for (const k of ['ack_timestamp', 'end_to_end_duration', 'state_size', 'checkpointed_size', 'start_delay']) expect(body.subtasks[1]).toHaveProperty(k);
    expect(Object.keys(body.subtasks[1].alignment).sort()).toEqual(['buffered', 'duration', 'persisted', 'processed']);
    expect(Object.keys(body.subtasks[1].checkpoint).sort()).toEqual(['async', 'sync']);
    expect((await call(`/jobs/${executor.jobId}/checkpoints/details/${id}/subtasks/${'7'.repeat(32)}`)).status).toBe(404);
    expect((await call(`/jobs/${executor.jobId}/checkpoints/details/x/subtasks/${V1}`)).status).toBe(400);
    expect((await call(`/jobs/${executor.jobId}/checkpoints/details/99999/subtasks/${V1}`)).status).toBe(404);
  });

  it('GET /taskmanagers lists the embedded runtime as one TaskManager; /taskmanagers/:id has its memory', async () => {
    const list = (await call('/taskmanagers')).json();
    expect(list.taskmanagers).toHaveLength(1);
    const tm = list.taskmanagers[0];
    expect(tm).toMatchObject({ slotsNumber: 1, freeSlots: 0 });
    expect(tm.hardware.cpuCores).toBeGreaterThan(0);
    const one = (await call(`/taskmanagers/${encodeURIComponent(tm.id)}`)).json();
    expect(one.metrics.heapUsed).toBeGreaterThan(0);
    expect((await call('/taskmanagers/nope')).status).toBe(404);
  });
});
