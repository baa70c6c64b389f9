import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { main } from '../src/cli/main.js';
import type { SnapshotInspection } from '../src/cli/savepoint-inspect.js';
import { S3Client, s3SettingsFrom } from '../src/runtime/storage/s3-client.js';
import { Configuration } from '../src/config/configuration.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { startS3Server, type S3TestServer } from './services/s3-server.js';

const KEYS = 11;
const RECORDS = 20_000;
const reference = (): string[] => countReference(RECORDS, KEYS);
let srv: S3TestServer;
let client: S3Client;
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-s3-e2e-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  srv = await startS3Server(['sluice']);
  client = new S3Client(s3SettingsFrom(new Configuration(Object.entries(srv.config)), {}));
});
afterAll(async () => {
  await srv.close();
});
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function job(parallelism: number, out: string, config: Record<string, string | number | boolean>, plan?: FaultPlan, eventsPerSecond = 25_000) {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': parallelism,
    'execution.checkpointing.interval': 30,
    'execution.checkpointing.dir': 's3://sluice/checkpoints',
    // Every chunk of state goes to an object of its own, so restores read state files from S3.
    'execution.checkpointing.data-inline-threshold': 0,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 50,
    'restart-strategy.fixed-delay.delay': 5,
    ...srv.config,
    ...config,
  });
  let s = env.fromSource(numberSource({ count: RECORDS, eventsPerSecond }), 'numbers').uid('numbers');
  if (plan !== undefined) s = s.process(plan.failingProcess<number>()).name('faults').uid('faults');
  const sink = new ExactlyOnceFileSink<string>(out);
  s.keyBy((n) => n % KEYS)
    .process(new CountPerKey())
    .uid('count')
    .sinkTo(plan === undefined ? sink : plan.wrapSink(sink))
    .uid('sink');
  return env;
}

describe('checkpoints and savepoints in S3 (s3rver on loopback)', () => {
  it('a keyed job checkpointing to s3:// fails and restores from S3, exactly-once', async () => {
    const out = tempDir();
    const plan = FaultPlan.seeded({ seed: 5, recordFaults: 3, recordRange: RECORDS });
    const env = job(2, out, {}, plan);
    const logs: string[] = [];
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: (m) => logs.push(m) });
    const result = await executor.run();
    expect(result.status, logs.join('\n')).toBe('FINISHED');
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(3);
    expect(executor.checkpointStats.counts.completed).toBeGreaterThan(0);
    expect(compareMultisets(await readCommittedLines(out), reference())).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // The checkpoints were in the bucket: the job's index is there (empty: a finished job's checkpoints are discarded).
    const index = JSON.parse(new TextDecoder().decode((await client.get('sluice', `checkpoints/${executor.jobId}/_checkpoints`))!)) as { checkpoints: number[] };
    expect(index.checkpoints).toEqual([]);
  });

  it('a retained s3:// checkpoint of a canceled job restores into a new run (run -s s3://...)', async () => {
    const out = tempDir();
    const env = job(2, out, { 'execution.checkpointing.externalized-checkpoint-retention': 'RETAIN_ON_CANCELLATION', 'execution.checkpointing.num-retained': 2 });
    const first = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = first.run();
    while (first.checkpointStats.counts.completed < 3) await new Promise((r) => setTimeout(r, 5));
    first.cancel();
    expect((await done).status).toBe('CANCELED');
    const index = JSON.parse(new TextDecoder().decode((await client.get('sluice', `checkpoints/${first.jobId}/_checkpoints`))!)) as { checkpoints: number[] };
    expect(index.checkpoints).toHaveLength(2);
    const path = `s3://sluice/checkpoints/${first.jobId}/chk-${index.checkpoints[0]}`;
    const logs: string[] = [];
    const env2 = job(3, out, {});
    const second = new LocalExecutor(env2.getJobGraph(), env2.config, { log: (m) => logs.push(m), restoreFrom: { path, allowNonRestoredState: false } });
    expect((await second.run()).status).toBe('FINISHED');
    expect(logs.some((l) => l.includes(`restoring from checkpoint ${index.checkpoints[0]} of job ${first.jobId} (${path})`)), logs.join('\n')).toBe(true);
    expect(compareMultisets(await readCommittedLines(out), reference())).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('stop-with-savepoint to s3://, inspect it, restore it with restoreFrom at another parallelism, exactly-once', async () => {
    const out = tempDir();
    // 4 s of data: on a loaded machine the stop must still find the sources reading (a job
    // whose sources ended refuses a stop-with-savepoint; at 25,000/s the data lasted 0.8 s).
    const env = job(2, out, {}, undefined, 5_000);
    const first = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = first.run();
    while (first.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await first.stopWithSavepoint('s3://sluice/savepoints');
    expect((await done).status).toBe('FINISHED');
    expect(savepoint.pointer).toMatch(new RegExp(`^s3://sluice/savepoints/savepoint-${first.jobId.slice(0, 6)}-[0-9a-f]{12}$`));
    const committedAtStop = (await readCommittedLines(out)).length;
    expect(committedAtStop).toBeGreaterThan(0);

    // The inspector reads it from S3 too.
    let stdout = '';
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((stdout += String(c)), true));
    let code: number;
    try {
      code = await main(['savepoint', 'inspect', '--json', '--operator', 'count', ...Object.entries(srv.config).flatMap(([k, v]) => ['-D', `${k}=${v}`]), savepoint.pointer]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    const inspection = JSON.parse(stdout) as SnapshotInspection;
    const counts = inspection.operators[0]!.keyedState!.states.find((s) => s.name === 'count')!;
    expect(counts.keys).toBe(KEYS);

    const env2 = job(3, out, {});
    const second = new LocalExecutor(env2.getJobGraph(), env2.config, { log: () => {}, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
    expect((await second.run()).status).toBe('FINISHED');
    expect(compareMultisets(await readCommittedLines(out), reference())).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    // Sluice never deletes a savepoint.
    expect(await client.head('sluice', `${savepoint.pointer.slice('s3://sluice/'.length)}/_metadata`)).toBeGreaterThan(0);
  });
});
