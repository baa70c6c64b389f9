import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../src/index.js';
import type { Source } from '../src/api/source.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { DiscardingSink } from '../src/connectors/discarding-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { RestServer } from '../src/rest/rest-server.js';

/** parse-prometheus-text-format: Prometheus' own text parser (prom2json's output shape). */
interface MetricFamily {
  name: string;
  help: string;
  type: string;
  metrics: { value: string; labels?: Record<string, string> }[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => MetricFamily[];

const TOKEN = 'metrics-token';
let server: RestServer;
let base: string;
let executor: LocalExecutor;
let done: Promise<unknown>;

/** A source that registers gauges into its metric group, as the Kafka source does for its lag. */
function lagReportingSource(): Source<number> {
  const inner = numberSource({ eventsPerSecond: 200_000 });
  return {
    boundedness: inner.boundedness,
    createSplits: (p) => inner.createSplits(p),
    createReader: (ctx) => {
      ctx.metricGroup?.addGroup('KafkaSourceReader').addGroup('topic', 'orders').addGroup('partition', String(ctx.subtaskIndex)).gauge('recordsLag', () => 40 + ctx.subtaskIndex);
      return inner.createReader(ctx) as ReturnType<Source<number>['createReader']>;
    },
  };
}

async function get(path: string, token: string | null = TOKEN): Promise<Response> {
  return fetch(`${base}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

async function scrape(): Promise<Map<string, MetricFamily>> {
  const res = await get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return new Map(parsePrometheus(await res.text()).map((f) => [f.name, f]));
}

function values(f: MetricFamily | undefined, where: Record<string, string> = {}): number[] {
  expect(f, 'metric family present').toBeDefined();
  return f!.metrics.filter((m) => Object.entries(where).every(([k, v]) => m.labels?.[k] === v)).map((m) => Number(m.value));
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

beforeAll(async () => {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 100, 'pipeline.name': 'metrics test' });
  env
    .fromSource(lagReportingSource(), 'numbers')
    .map((n) => n * 2)
    .name('double')
    .keyBy((n) => n % 10)
    .reduce((a, b) => a + b)
    .sinkTo(FaultPlan.slowSink(new DiscardingSink<number>(), { everyRecords: 200, delayMs: 2 }));
  // Event time 100 then 5, 7 (late for [0, 10) once the watermark is 99), then 200.
  env
    .fromElements(100, 5, 7, 200)
    .setParallelism(1)
    .assignTimestampsAndWatermarks(
      // Punctuated: a watermark with every record, so the late ones are late when they arrive.
      WatermarkStrategy.forGenerator<number>(() => ({ onEvent: (_n, ts, out) => out.emitWatermark(ts - 1), onPeriodicEmit: () => {} })).withTimestampAssigner((n) => n),
    )
    .setParallelism(1)
    .keyBy((n) => n % 2)
    .window(TumblingEventTimeWindows.of(10))
    .reduce((a, b) => a + b)
    .name('late windows')
    .sinkTo(new DiscardingSink<number>());
  executor = new LocalExecutor(env.getJobGraph('metrics test'), env.config, { log: () => {} });
  server = new RestServer({ port: 0, authToken: TOKEN });
  base = await server.start();
  server.register(executor);
  done = executor.run().catch(() => {});
  while (executor.status !== 'RUNNING') await new Promise((r) => setTimeout(r, 10));
});

afterAll(async () => {
  executor.cancel();
  await done;
  await server.stop(0);
});

describe('/metrics (Prometheus text format 0.0.4, Flink names)', () => {
  it('has the job, task and operator metrics with Flink labels, and their values move between scrapes', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    const first = await scrape();
    for (const name of [
      'flink_jobmanager_job_uptime',
      'flink_jobmanager_job_numRestarts',
      'flink_jobmanager_job_lastCheckpointDuration',
      'flink_jobmanager_job_lastCheckpointSize',
      'flink_jobmanager_job_numberOfCompletedCheckpoints',
      'flink_jobmanager_job_numberOfFailedCheckpoints',
      'flink_taskmanager_job_task_numRecordsIn',
      'flink_taskmanager_job_task_numRecordsOut',
      'flink_taskmanager_job_task_numRecordsInPerSecond',
      'flink_taskmanager_job_task_numRecordsOutPerSecond',
      'flink_taskmanager_job_task_backPressuredTimeMsPerSecond',
      'flink_taskmanager_job_task_idleTimeMsPerSecond',
      'flink_taskmanager_job_task_busyTimeMsPerSecond',
      'flink_taskmanager_job_task_operator_numRecordsIn',
      'flink_taskmanager_job_task_operator_numRecordsOut',
      'flink_taskmanager_job_task_operator_numRecordsInPerSecond',
      'flink_taskmanager_job_task_operator_numRecordsOutPerSecond',
      'flink_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_recordsLag',
    ]) {
      expect(first.get(name), name).toBeDefined();
      expect(first.get(name)!.type).toBe('GAUGE');
    }
    const uptime = first.get('flink_jobmanager_job_uptime')!.metrics[0]!;
    expect(uptime.labels).toMatchObject({ job_id: executor.jobId, job_name: 'metrics_test' });
    const opIn = first.get('flink_taskmanager_job_task_operator_numRecordsIn')!;
    const double = opIn.metrics.filter((m) => m.labels?.operator_name === 'double');
    expect(double.map((m) => m.labels?.subtask_index).sort()).toEqual(['0', '1']);
    expect(double[0]!.labels).toMatchObject({ job_id: executor.jobId, job_name: 'metrics_test', task_name: 'numbers____double' });
    expect(values(first.get('flink_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_recordsLag'), { topic: 'orders', partition: '1' })).toEqual([41]);

    await new Promise((r) => setTimeout(r, 1200));
    const second = await scrape();
    const moved = (name: string, where: Record<string, string> = {}): [number, number] => [sum(values(first.get(name), where)), sum(values(second.get(name), where))];
    const [in1, in2] = moved('flink_taskmanager_job_task_operator_numRecordsIn', { operator_name: 'double' });
    expect(in2).toBeGreaterThan(in1);
    const [c1, c2] = moved('flink_jobmanager_job_numberOfCompletedCheckpoints');
    expect(c2).toBeGreaterThan(c1);
    const [u1, u2] = moved('flink_jobmanager_job_uptime');
    expect(u2).toBeGreaterThan(u1);
    expect(sum(values(second.get('flink_taskmanager_job_task_operator_numRecordsOutPerSecond'), { operator_name: 'double' }))).toBeGreaterThan(0);
    // The window operator's late records (5 and 7), Flink's numLateRecordsDropped.
    expect(sum(values(second.get('flink_taskmanager_job_task_operator_numLateRecordsDropped'), { operator_name: 'late_windows' }))).toBe(2);
    expect(values(second.get('flink_jobmanager_job_lastCheckpointDuration'))[0]).toBeGreaterThanOrEqual(0);
    expect(values(second.get('flink_jobmanager_job_lastCheckpointSize'))[0]).toBeGreaterThan(0);
    expect(values(second.get('flink_jobmanager_job_numRestarts'))).toEqual([0]);
    // The slow sink backs the upstream tasks up: they wait for room in their output channels.
    const bp = values(second.get('flink_taskmanager_job_task_backPressuredTimeMsPerSecond'));
    expect(Math.max(...bp)).toBeGreaterThan(0);
    for (const v of bp) expect(v).toBeLessThanOrEqual(1000);
    // Each subtask's second is back-pressured, idle or busy.
    const idle = values(second.get('flink_taskmanager_job_task_idleTimeMsPerSecond'));
    const busy = values(second.get('flink_taskmanager_job_task_busyTimeMsPerSecond'));
    expect(Math.max(...idle)).toBeGreaterThan(0);
    for (let i = 0; i < bp.length; i++) expect(bp[i]! + idle[i]! + busy[i]!).toBeGreaterThanOrEqual(999);
  });

  it('needs the bearer token like the rest of the API', async () => {
    expect((await get('/metrics', null)).status).toBe(401);
  });

  it('answers Flink metric queries for the job and its vertices', async () => {
    const job = (await (await get(`/jobs/${executor.jobId}/metrics?get=numRestarts,uptime,nope`)).json()) as { id: string; value: string }[];
    expect(job.map((m) => m.id)).toEqual(['numRestarts', 'uptime']);
    expect(job[0]!.value).toBe('0');
    const list = (await (await get(`/jobs/${executor.jobId}/metrics`)).json()) as { id: string }[];
    expect(list.map((m) => m.id)).toContain('lastCheckpointDuration');
    const source = '0'.repeat(32);
    const agg = (await (await get(`/jobs/${executor.jobId}/vertices/${source}/subtasks/metrics?get=numRecordsOut,numRecordsInPerSecond&agg=sum,max`)).json()) as Record<string, number>[];
    expect(agg[0]).toMatchObject({ id: 'numRecordsOut' });
    expect(agg[0]!.sum).toBeGreaterThan(0);
    expect(Object.keys(agg[1]!).sort()).toEqual(['id', 'max', 'sum']);
    const vertex = (await (await get(`/jobs/${executor.jobId}/vertices/${source}/metrics?get=0.numRecordsIn,1.double.numRecordsOut,0.numbers.KafkaSourceReader.topic.orders.partition.0.recordsLag`)).json()) as { id: string; value: string }[];
    expect(vertex.map((m) => m.id)).toEqual(['0.numRecordsIn', '1.double.numRecordsOut', '0.numbers.KafkaSourceReader.topic.orders.partition.0.recordsLag']);
    expect(vertex[2]!.value).toBe('40');
    expect((await get(`/jobs/${executor.jobId}/vertices/${'9'.repeat(32)}/metrics`)).status).toBe(404);
    expect((await get(`/jobs/${executor.jobId}/vertices/${source}/subtasks/metrics?get=numRecordsIn&agg=median`)).status).toBe(400);
  });

  it('reports back pressure per vertex in Flink shape', async () => {
    const bp = (await (await get(`/jobs/${executor.jobId}/vertices/${'0'.repeat(32)}/backpressure`)).json()) as Record<string, unknown> & { subtasks: Record<string, unknown>[] };
    expect(bp.status).toBe('ok');
    expect(['ok', 'low', 'high']).toContain(bp['backpressure-level']);
    expect(bp.subtasks.map((s) => s.subtask)).toEqual([0, 1]);
    for (const s of bp.subtasks) {
      for (const k of ['ratio', 'idleRatio', 'busyRatio']) {
        expect(s[k]).toBeGreaterThanOrEqual(0);
        expect(s[k]).toBeLessThanOrEqual(1);
      }
    }
  });
});
