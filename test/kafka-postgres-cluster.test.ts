import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seededRandom } from '../src/testing/seeded-random.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import {
  cancelJob,
  ClusterProcesses,
  killTaskManagers,
  numRestarts,
  producePaced,
  readTopicValues,
  submitJob,
  waitUntilSettled,
} from './support/cluster-processes.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, uniqueTopic } from './services/kafka-test-client.js';
import { preparedTransactionsServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

/**
 * Kafka -> keyed count -> PostgreSQL (the two-phase-commit, upsert and write-ahead sinks) and
 * Kafka -> keyed count -> Kafka at-least-once, on a cluster of real processes (a JobManager
 * and two TaskManager processes started by `sluice cluster run`, the jobs submitted with
 * `sluice run --jobmanager`), with the failure schedule of test/kafka-cluster.test.ts: >= 10
 * SIGKILLs of TaskManager processes at seeded random moments (pauses of 400..1300 ms) while
 * the input is written, plus (killTaskManagers' `progressOf`) a completed checkpoint between
 * two kills and kills aimed at checkpoints in progress and just completed, so that the
 * sinks' recovery of pre-committed and prepared-but-incomplete transactions is exercised
 * (with the plain schedule the job mostly restores the same early checkpoint again and again).
 * Each test prints its seed; SLUICE_SEED=<seed> reruns it with the same schedule (the
 * moments also depend on the machine's timing).
 */

const brokers = inject('kafka');
const PG_JOB = join(import.meta.dirname, 'fixtures', 'kafka', 'keyed-count-postgres-job.ts');
const KAFKA_JOB = join(import.meta.dirname, 'fixtures', 'kafka', 'keyed-count-kafka-job.ts');
const KEYS = 7;
const INPUT_PARTITIONS = 4;
const RECORDS = 24_000;
const PER_SECOND = 1000;
const KILLS = 10;

const cluster = new ClusterProcesses('sluice-kafka-pg-cluster-');
let server: PostgresServer;
let rest = '';

beforeAll(async () => {
  const t0 = Date.now();
  // A throwaway server with max_prepared_transactions > 0 (as the two-phase-commit tests), for all three sinks.
  [server, rest] = await Promise.all([preparedTransactionsServer(), cluster.startCluster(2)]);
  console.log(`PostgreSQL: ${server.description}; cluster REST ${rest}; ready in ${Date.now() - t0} ms`);
}, 60_000);

afterAll(async () => {
  await cluster.cleanUp();
  await server?.stop();
});

function seedFor(label: string): number {
  const seed = Number(process.env.SLUICE_SEED ?? Date.now() % 100_000);
  console.log(`${label} seed: ${seed} (rerun with SLUICE_SEED=${seed})`);
  return seed;
}

function connectionString(): string {
  const c = server.connection;
  return `postgresql://${c.user ?? 'postgres'}@${c.host ?? '127.0.0.1'}:${c.port ?? 5432}/${c.database ?? 'postgres'}`;
}

async function inputTopic(label: string): Promise<string> {
  const input = uniqueTopic(`${label}-in`);
  await createTopics(brokers.bootstrap, [{ name: input, partitions: INPUT_PARTITIONS }]);
  return input;
}

/**
 * Submits the job, writes RECORDS numbers to `input` at PER_SECOND while SIGKILLing
 * TaskManagers on the seeded schedule, then waits until `done()` holds and is covered by a
 * completed checkpoint (waitUntilSettled), and cancels the job.
 */
async function runWithKills(o: {
  label: string;
  seed: number;
  input: string;
  jobFile: string;
  args: readonly string[];
  done: () => Promise<boolean>;
  timeoutMs?: number;
}): Promise<{ kills: number; restarts: number; settled: boolean; ms: number }> {
  const t0 = Date.now();
  const next = seededRandom(o.seed);
  const jobId = await submitJob(rest, o.jobFile, o.args, ['-D', `execution.checkpointing.dir=${cluster.tempDir()}`]);
  try {
    const producing = producePaced(brokers.bootstrap, o.input, 0, RECORDS, PER_SECOND, INPUT_PARTITIONS);
    const { kills, checkpointsAtKills, phases } = await killTaskManagers(rest, next, { kills: KILLS, progressOf: jobId });
    console.log(`${o.label} seed ${o.seed}: kills (latest completed checkpoint/phase): ${checkpointsAtKills.map((c, i) => `${c}/${phases[i]}`).join(' ')}`);
    await producing;
    const settled = await waitUntilSettled(rest, jobId, o.done, o.timeoutMs ?? 45_000);
    const restarts = await numRestarts(rest, jobId);
    return { kills, restarts, settled, ms: Date.now() - t0 };
  } finally {
    await cancelJob(rest, jobId);
  }
}

async function recs(table: string): Promise<string[]> {
  return (await sql<{ rec: string }>(server, `SELECT rec FROM ${table}`)).map((r) => r.rec);
}

async function rowCount(table: string): Promise<number> {
  return Number((await sql<{ n: string }>(server, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
}

/** The reference's final count per key. */
function referenceLatest(): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < RECORDS; i++) m.set(i % KEYS, (m.get(i % KEYS) ?? 0) + 1);
  return m;
}

describe('Kafka -> PostgreSQL on a cluster of processes, >= 10 SIGKILLs of TaskManagers at seeded random moments', () => {
  it('two-phase-commit sink (PREPARE TRANSACTION): the table holds every (key, count) exactly once', async () => {
    const seed = seedFor('kafka -> postgres two-phase-commit');
    const input = await inputTopic('pg-2pc');
    const table = uniqueTableName('kpc_2pc');
    await sql(server, `CREATE TABLE ${table} (rec text NOT NULL)`);
    const r = await runWithKills({
      label: '2pc',
      seed,
      input,
      jobFile: PG_JOB,
      args: [brokers.bootstrap, input, 'two-phase-commit', connectionString(), table, String(KEYS)],
      done: async () => (await rowCount(table)) >= RECORDS,
    });
    const rows = await recs(table);
    const diff = compareMultisets(rows, countReference(RECORDS, KEYS));
    const prepared = await sql<{ gid: string }>(server, 'SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, $1)', [`${table}-`]);
    console.log(
      `kafka -> postgres two-phase-commit seed ${seed}: ${r.kills} kills, ${r.restarts} restarts, ${rows.length} rows, ` +
        `${JSON.stringify(diff)}, ${prepared.length} prepared transactions left after cancel, ${r.ms} ms`,
    );
    expect(r.kills, `seed ${seed}`).toBeGreaterThanOrEqual(KILLS);
    expect(r.restarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    expect(r.settled, `seed ${seed}: ${rows.length} of ${RECORDS} rows`).toBe(true);
    expect(diff, `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(rows.length, `seed ${seed}`).toBe(RECORDS);
  }, 90_000);

  it('upsert sink: the latest count per key equals the reference, and every (key, count) was written (no loss)', async () => {
    const seed = seedFor('kafka -> postgres upsert');
    const input = await inputTopic('pg-upsert');
    const table = uniqueTableName('kpc_ups');
    await sql(server, `CREATE TABLE ${table}_latest (k integer PRIMARY KEY, c integer NOT NULL)`);
    // Every record upserts its (k, c) row here; a rewrite (a replay) counts up `seen` instead of overwriting it.
    await sql(server, `CREATE TABLE ${table}_history (k integer NOT NULL, c integer NOT NULL, seen integer NOT NULL, PRIMARY KEY (k, c))`);
    await sql(server, `CREATE FUNCTION ${table}_count_rewrites() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.seen := OLD.seen + 1; RETURN NEW; END $$`);
    await sql(server, `CREATE TRIGGER ${table}_rewrites BEFORE UPDATE ON ${table}_history FOR EACH ROW EXECUTE FUNCTION ${table}_count_rewrites()`);
    const want = referenceLatest();
    const latest = async (): Promise<Map<number, number>> => new Map((await sql<{ k: number; c: number }>(server, `SELECT k, c FROM ${table}_latest`)).map((x) => [x.k, x.c]));
    const matches = (got: Map<number, number>): boolean => got.size === want.size && [...want].every(([k, c]) => got.get(k) === c);
    const r = await runWithKills({
      label: 'upsert',
      seed,
      input,
      jobFile: PG_JOB,
      args: [brokers.bootstrap, input, 'upsert', connectionString(), table, String(KEYS)],
      done: async () => matches(await latest()) && (await rowCount(`${table}_history`)) >= RECORDS,
    });
    const got = await latest();
    const history = await sql<{ k: number; c: number; seen: number }>(server, `SELECT k, c, seen FROM ${table}_history`);
    const diff = compareMultisets(
      history.map((h) => `${h.k}:${h.c}`),
      countReference(RECORDS, KEYS),
    );
    const rewrites = history.reduce((n, h) => n + h.seen - 1, 0);
    console.log(
      `kafka -> postgres upsert seed ${seed}: ${r.kills} kills, ${r.restarts} restarts, latest ${JSON.stringify(Object.fromEntries(got))}, ` +
        `history ${history.length} rows ${JSON.stringify(diff)}, ${rewrites} rows rewritten by replays, ${r.ms} ms`,
    );
    expect(r.kills, `seed ${seed}`).toBeGreaterThanOrEqual(KILLS);
    expect(r.restarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    expect(r.settled, `seed ${seed}`).toBe(true);
    expect(Object.fromEntries(got), `seed ${seed}`).toEqual(Object.fromEntries(want));
    expect(diff, `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  }, 90_000);

  it('write-ahead sink: the table holds every (key, count) exactly once', async () => {
    const seed = seedFor('kafka -> postgres write-ahead');
    const input = await inputTopic('pg-wal');
    const table = uniqueTableName('kpc_wal');
    await sql(server, `CREATE TABLE ${table} (rec text NOT NULL)`);
    const r = await runWithKills({
      label: 'write-ahead',
      seed,
      input,
      jobFile: PG_JOB,
      args: [brokers.bootstrap, input, 'write-ahead', connectionString(), table, String(KEYS)],
      done: async () => (await rowCount(table)) >= RECORDS,
    });
    const rows = await recs(table);
    const diff = compareMultisets(rows, countReference(RECORDS, KEYS));
    console.log(`kafka -> postgres write-ahead seed ${seed}: ${r.kills} kills, ${r.restarts} restarts, ${rows.length} rows, ${JSON.stringify(diff)}, ${r.ms} ms`);
    expect(r.kills, `seed ${seed}`).toBeGreaterThanOrEqual(KILLS);
    expect(r.restarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    expect(r.settled, `seed ${seed}: ${rows.length} of ${RECORDS} rows`).toBe(true);
    expect(diff, `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(rows.length, `seed ${seed}`).toBe(RECORDS);
  }, 90_000);
});

describe('Kafka -> Kafka at-least-once on a cluster of processes, >= 10 SIGKILLs of TaskManagers at seeded random moments', () => {
  it('every reference record is in the output at least once (no loss); duplicates are counted', async () => {
    const seed = seedFor('kafka at-least-once');
    const input = await inputTopic('alo');
    const output = uniqueTopic('alo-out');
    await createTopics(brokers.bootstrap, [{ name: output, partitions: 2 }]);
    const reference = countReference(RECORDS, KEYS);
    const r = await runWithKills({
      label: 'at-least-once',
      seed,
      input,
      jobFile: KAFKA_JOB,
      args: [brokers.bootstrap, input, output, String(KEYS), 'at-least-once'],
      done: async () => compareMultisets(await readTopicValues(brokers.bootstrap, output), reference).missing === 0,
    });
    const out = await readTopicWithJavaConsumer(brokers.bootstrap, output, { idleMs: 3000 });
    const diff = compareMultisets(out, reference);
    console.log(
      `kafka at-least-once seed ${seed}: ${r.kills} kills, ${r.restarts} restarts, ${out.length} records out for ${RECORDS}, ` +
        `${diff.duplicates} duplicates, ${diff.missing} missing, ${diff.unexpected} unexpected, ${r.ms} ms`,
    );
    expect(r.kills, `seed ${seed}`).toBeGreaterThanOrEqual(KILLS);
    expect(r.restarts, `seed ${seed}`).toBeGreaterThanOrEqual(1);
    expect(r.settled, `seed ${seed}`).toBe(true);
    expect(diff.missing, `seed ${seed}`).toBe(0);
    expect(diff.unexpected, `seed ${seed}`).toBe(0);
  }, 90_000);
});
