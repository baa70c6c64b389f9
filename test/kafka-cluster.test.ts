import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { KafkaSource } from '../src/connectors/kafka/kafka-source.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, uniqueTopic } from './services/kafka-test-client.js';
import {
  cancelJob as cancel,
  ClusterProcesses,
  execFileAsync as run,
  freePort,
  jobState,
  producePaced as producePacedTo,
  restGet as get,
  SLUICE_BIN as BIN,
  sleep,
  submitJob,
} from './support/cluster-processes.js';

/**
 * Kafka -> keyed count -> Kafka exactly-once on a cluster of real processes (a JobManager and
 * TaskManager processes started by `sluice cluster run`, the job submitted with `sluice run
 * --jobmanager`): TaskManagers SIGKILLed at seeded random moments, a JobManager killed and
 * started again, stop-with-savepoint and restore. The output, read with read_committed by
 * Kafka's own Java consumer, must equal the reference exactly.
 */

const brokers = inject('kafka');
const JOB = join(import.meta.dirname, 'fixtures', 'kafka', 'keyed-count-kafka-job.ts');
const KEYS = 7;
const INPUT_PARTITIONS = 4;

const cluster = new ClusterProcesses('sluice-kafka-cluster-');
const tempDir = (): string => cluster.tempDir();
const start = (args: string[], ready: RegExp) => cluster.start(args, ready);
afterAll(() => cluster.cleanUp());

/** Submits the fixture job; resolves with its id. */
const submit = (rest: string, input: string, output: string, extra: readonly string[] = []): Promise<string> =>
  submitJob(rest, JOB, [brokers.bootstrap, input, output, String(KEYS)], extra);

/** Writes numbers [from, to) to the input topic (acks=all), `perSecond` records a second. */
const producePaced = (topic: string, from: number, to: number, perSecond: number): Promise<void> =>
  producePacedTo(brokers.bootstrap, topic, from, to, perSecond, INPUT_PARTITIONS);

/** The committed output so far (read_committed, read by a local bounded job up to the current end). */
async function committedCount(topic: string): Promise<number> {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
  const sink = new CollectSink<string>();
  env.fromSource(new KafkaSource<string>({ bootstrapServers: brokers.bootstrap, topics: topic, stoppingOffsets: 'latest' }), 'out').sinkTo(sink);
  await env.executeAsync(undefined, { log: () => {} }).result;
  return sink.values.length;
}

async function waitForOutput(rest: string, jobId: string, topic: string, expected: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let n = 0;
  while (Date.now() < deadline) {
    n = await committedCount(topic);
    if (n >= expected) return n;
    const state = await jobState(rest, jobId);
    if (state === 'FAILED' || state === 'CANCELED') throw new Error(`job ${jobId} is ${state} with ${n} of ${expected} records out`);
    await sleep(300);
  }
  return n;
}

async function checkExact(output: string, records: number, label: string): Promise<void> {
  const committed = await readTopicWithJavaConsumer(brokers.bootstrap, output, { idleMs: 3000 });
  expect(compareMultisets(committed, countReference(records, KEYS)), label).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
}

async function topics(label: string): Promise<{ input: string; output: string }> {
  const input = uniqueTopic(`${label}-in`);
  const output = uniqueTopic(`${label}-out`);
  await createTopics(brokers.bootstrap, [
    { name: input, partitions: INPUT_PARTITIONS },
    { name: output, partitions: 2 },
  ]);
  return { input, output };
}

describe('Kafka exactly-once on a cluster of processes', () => {
  let rest = '';
  beforeAll(async () => {
    const c = await start(['cluster', 'run', '--taskmanagers', '2', '--rpc-port', '0', '--rest-port', '0'], /cluster ready: rpc \S+ rest http:\/\/(\S+)/);
    rest = c.match[1]!;
  });

  it('>= 10 SIGKILLs of TaskManagers at seeded random moments: the read_committed output equals the reference exactly', async () => {
    const seed = Number(process.env.SLUICE_SEED ?? Date.now() % 100_000);
    console.log(`kafka cluster failover seed: ${seed} (rerun with SLUICE_SEED=${seed})`);
    const next = seededRandom(seed);
    const t0 = Date.now();
    const { input, output } = await topics('tm-kill');
    const records = 24_000;
    const jobId = await submit(rest, input, output, ['-D', `execution.checkpointing.dir=${tempDir()}`]);
    const producing = producePaced(input, 0, records, 2000);
    let kills = 0;
    while (kills < 10) {
      await sleep(400 + Math.floor(next() * 900));
      const { taskmanagers } = await get<{ taskmanagers: { path: string }[] }>(rest, '/taskmanagers');
      const pids = taskmanagers.map((t) => Number(t.path.split('/').at(-1)));
      if (pids.length < 2) continue; // a killed one is still coming back
      try {
        process.kill(pids[Math.floor(next() * pids.length)]!, 'SIGKILL');
        kills++;
      } catch {
        // it exited on its own meanwhile
      }
    }
    await producing;
    const seen = await waitForOutput(rest, jobId, output, records, 60_000);
    const { numRestarts } = await get<{ numRestarts: number }>(rest, `/jobs/${jobId}/result`);
    await cancel(rest, jobId);
    console.log(`kafka cluster failover seed ${seed}: ${kills} kills, ${numRestarts} restarts, ${seen} records out, ${Date.now() - t0} ms`);
    expect(numRestarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    expect(seen, `seed ${seed}`).toBe(records);
    await checkExact(output, records, `seed ${seed}`);
  }, 90_000);

  it.each([2, 1])('stop-with-savepoint, then run -s at parallelism %i: the read_committed output equals the reference exactly', async (resumedParallelism) => {
    const t0 = Date.now();
    const { input, output } = await topics(`savepoint-p${resumedParallelism}`);
    const half = 6_000;
    await producePaced(input, 0, half, 1e9);
    const chk = tempDir();
    const jobId = await submit(rest, input, output, ['-D', `execution.checkpointing.dir=${chk}`]);
    // Stop while records are still coming.
    const producing = producePaced(input, half, 2 * half, 3000);
    await sleep(1500);
    const { stdout } = await run(process.execPath, [BIN, 'stop', '--jobmanager', rest, '--savepoint-path', tempDir(), jobId]);
    const savepoint = /Savepoint: (\S+)/.exec(stdout)![1]!;
    await producing;
    // At parallelism 1, one subtask takes both sources' partitions and both sink writers' transactions.
    const second = await submit(rest, input, output, ['-D', `execution.checkpointing.dir=${chk}`, '-s', savepoint, '-p', String(resumedParallelism)]);
    const seen = await waitForOutput(rest, second, output, 2 * half, 60_000);
    await cancel(rest, second);
    console.log(`kafka savepoint restore at parallelism ${resumedParallelism}: ${seen} records out, ${Date.now() - t0} ms`);
    expect(seen).toBe(2 * half);
    await checkExact(output, 2 * half, `savepoint ${savepoint}`);
  }, 90_000);
});

describe('Kafka exactly-once across a JobManager restart', () => {
  it('a killed JobManager, started again, takes the job back; the read_committed output equals the reference exactly', async () => {
    const t0 = Date.now();
    const { input, output } = await topics('jm-restart');
    const records = 12_000;
    const rpcPort = await freePort();
    const chk = tempDir();
    const jmArgs = ['jobmanager', '--rpc-port', String(rpcPort), '--rest-port', '0', '-D', `execution.checkpointing.dir=${chk}`];
    const first = await start(jmArgs, /REST API at http:\/\/(\S+)/);
    let rest = first.match[1]!;
    for (let i = 0; i < 2; i++) await start(['taskmanager', '--jobmanager', `127.0.0.1:${rpcPort}`, '--id', `tm-${i}`], /registered at the JobManager/);
    const jobId = await submit(rest, input, output, ['-D', `execution.checkpointing.dir=${chk}`]);
    const producing = producePaced(input, 0, records, 2000);
    for (;;) {
      const c = await get<{ counts: { completed: number } }>(rest, `/jobs/${jobId}/checkpoints`);
      if (c.counts.completed >= 3) break;
      await sleep(100);
    }
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const second = await start(jmArgs, /REST API at http:\/\/(\S+)/);
    rest = second.match[1]!;
    await producing;
    const seen = await waitForOutput(rest, jobId, output, records, 60_000);
    const restored = await get<{ latest: { restored: { id: number } | null } }>(rest, `/jobs/${jobId}/checkpoints`);
    await cancel(rest, jobId);
    console.log(`kafka jobmanager restart: restored checkpoint ${restored.latest.restored?.id}, ${seen} records out, ${Date.now() - t0} ms`);
    expect(restored.latest.restored?.id).toBeGreaterThanOrEqual(3);
    expect(seen).toBe(records);
    await checkExact(output, records, 'jobmanager restart');
  }, 90_000);
});
