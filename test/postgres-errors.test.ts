import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobExecutionError, StreamExecutionEnvironment } from '../src/index.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { PostgresUpsertSink } from '../src/connectors/postgres/upsert-sink.js';
import { PostgresTwoPhaseCommitSink } from '../src/connectors/postgres/two-phase-commit-sink.js';
import { PostgresWriteAheadSink } from '../src/connectors/postgres/write-ahead-sink.js';
import type { PostgresConnectionOptions } from '../src/connectors/postgres/options.js';
import type { Sink } from '../src/api/sink.js';
import { machineServer, sql, startThrowawayCluster, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

/**
 * Failures of the PostgreSQL sinks against real servers, classified as Flink classifies
 * failures: credentials, a database or table that does not exist, a server without prepared
 * transactions fail the job at once, whatever the restart strategy; a server that cannot be
 * reached restarts it as the strategy allows. Refused credentials say where each part came
 * from in the process that connected. The machine's server trusts every local connection, so
 * refused passwords are tried on a throwaway cluster that asks for one (scram-sha-256).
 */

const RESTARTS = 3;

interface Outcome {
  readonly error: Error;
  readonly restarts: number;
  readonly log: readonly string[];
}

/** Ten numbers into `sink`, with RESTARTS restarts allowed 1 ms apart; the job must fail. */
async function failureOf(sink: Sink<number>, checkpoints = false): Promise<Outcome> {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 1,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': RESTARTS,
    'restart-strategy.fixed-delay.delay': 1,
    ...(checkpoints ? { 'execution.checkpointing.interval': 50 } : {}),
  });
  env.fromSource(numberSource({ count: 10 }), 'numbers').sinkTo(sink, 'pg-sink');
  const log: string[] = [];
  const executor = new LocalExecutor(env.getJobGraph('pg-errors'), env.config, { log: (m) => log.push(m) });
  const error = await executor.run().then(
    (r) => new Error(`the job ended ${r.status}; it should have failed`),
    (e: Error) => e,
  );
  expect(error, error.stack).toBeInstanceOf(JobExecutionError);
  return { error, restarts: executor.progress().numRestarts, log };
}

const upsert = (connection: PostgresConnectionOptions, table = 'never_written'): Sink<number> =>
  new PostgresUpsertSink<number, 'k'>({ connection, table, row: { fields: { k: (n) => n } }, keyColumns: ['k'] });

const NOT_RESTARTED = /\(not restarted: a restart cannot fix this failure\)$/;

describe('PostgreSQL sinks against a server that asks for a password', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await startThrowawayCluster({ maxPreparedTransactions: 0, password: 'right-password' });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('a wrong password fails the job at once (upsert, write-ahead and two-phase-commit sinks), saying the password came from the options', async () => {
    const connection = { ...server.connection, password: 'wrong-password' };
    const sinks: [string, Sink<number>, boolean][] = [
      ['upsert', upsert(connection), false],
      ['write-ahead', new PostgresWriteAheadSink<number, 'k'>({ connection, table: 'never_written', row: { fields: { k: (n) => n } }, sinkId: 'pw' }), true],
      ['two-phase-commit', new PostgresTwoPhaseCommitSink<number, 'k'>({ connection, table: 'never_written', row: { fields: { k: (n) => n } }, transactionalIdPrefix: 'pw' }), true],
    ];
    for (const [name, sink, checkpoints] of sinks) {
      const o = await failureOf(sink, checkpoints);
      expect(o.error.message, name).toMatch(/password authentication failed for user "postgres" \(SQLSTATE 28P01\)/);
      expect(o.error.message, name).toMatch(/\(connecting from this process on host \S+ \(pid \d+\): user, password and database from the sink's connection options\)/);
      expect(o.error.message, name).toMatch(NOT_RESTARTED);
      expect(o.restarts, name).toBe(0);
      expect(o.log.filter((l) => /restarting in/.test(l)), name).toEqual([]);
    }
  });

  it('no password at all (none in the options, no PGPASSWORD here): the error says so and that PG* variables are the running process\'s', async () => {
    const saved = process.env['PGPASSWORD'];
    delete process.env['PGPASSWORD'];
    try {
      const { password: _omitted, ...withoutPassword } = server.connection;
      const o = await failureOf(upsert(withoutPassword));
      expect(o.error.message).toMatch(/SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string/);
      expect(o.error.message).toMatch(/no password \(none in the sink's connection options, no PGPASSWORD in that process's environment\); PG\* variables are read in the environment of the process that runs the sink/);
      expect(o.error.message).toMatch(NOT_RESTARTED);
      expect(o.restarts).toBe(0);
    } finally {
      if (saved !== undefined) process.env['PGPASSWORD'] = saved;
    }
  });

  it('the password from PGPASSWORD of this process: named as its source', async () => {
    const saved = process.env['PGPASSWORD'];
    process.env['PGPASSWORD'] = 'wrong-from-the-environment';
    try {
      const { password: _omitted, ...withoutPassword } = server.connection;
      const o = await failureOf(upsert(withoutPassword));
      expect(o.error.message).toMatch(/password authentication failed.*user and database from the sink's connection options, password from PGPASSWORD; PG\* variables are read in/);
      expect(o.restarts).toBe(0);
    } finally {
      if (saved === undefined) delete process.env['PGPASSWORD'];
      else process.env['PGPASSWORD'] = saved;
    }
  });
});

describe('PostgreSQL sinks against the machine server', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await machineServer();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('a database that does not exist fails the job at once', async () => {
    const o = await failureOf(upsert({ ...server.connection, database: `no_such_db_${process.pid}` }));
    expect(o.error.message).toMatch(new RegExp(`database "no_such_db_${process.pid}" does not exist \\(SQLSTATE 3D000\\)`));
    expect(o.error.message).toMatch(NOT_RESTARTED);
    expect(o.restarts).toBe(0);
  });

  it('a table that does not exist fails the job at once (SQLSTATE class 42)', async () => {
    const table = uniqueTableName('missing');
    const o = await failureOf(upsert(server.connection, table));
    expect(o.error.message).toMatch(new RegExp(`relation "${table}" does not exist \\(SQLSTATE 42P01\\)`));
    expect(o.error.message).toMatch(NOT_RESTARTED);
    expect(o.restarts).toBe(0);
  });

  it('the two-phase-commit sink on a server with max_prepared_transactions = 0 fails the job at once', async () => {
    const [{ max_prepared_transactions: max }] = await sql<{ max_prepared_transactions: string }>(server, 'SHOW max_prepared_transactions');
    expect(max, `this test needs a server with max_prepared_transactions = 0: ${server.description}`).toBe('0');
    const sink = new PostgresTwoPhaseCommitSink<number, 'k'>({ connection: server.connection, table: 'never_written', row: { fields: { k: (n) => n } }, transactionalIdPrefix: 'mpt-zero-job' });
    const o = await failureOf(sink, true);
    expect(o.error.message).toMatch(/max_prepared_transactions = 0, so PREPARE TRANSACTION is disabled/);
    expect(o.error.message).toMatch(NOT_RESTARTED);
    expect(o.restarts).toBe(0);
  });

  it('a server that refuses connections is transient: the job restarts as the strategy allows, the repeated cause logged as a count', async () => {
    const o = await failureOf(upsert({ ...server.connection, port: 1 }));
    expect(o.restarts).toBe(RESTARTS);
    expect(o.error.message).toMatch(/cannot connect to PostgreSQL at \S+:1\/\S+: connect ECONNREFUSED \S+:1 \(connecting from this process on host \S+ \(pid \d+\): .*port from the sink's connection options.*\) \(fixed-delay: 3 restart attempts exhausted\)$/);
    const restarts = o.log.filter((l) => /restarting in/.test(l));
    expect(restarts).toHaveLength(RESTARTS);
    expect(restarts[0]).toMatch(/connect ECONNREFUSED \S+:1 \(connecting from .*\); restarting in 1 ms \(restart 1 of 3\)$/);
    expect(restarts[1]).toMatch(/: failed again with the same cause \(2 times since \d\d:\d\d:\d\d\); restarting in 1 ms \(restart 2 of 3\)$/);
    expect(restarts[2]).toMatch(/: failed again with the same cause \(3 times since \d\d:\d\d:\d\d\); restarting in 1 ms \(restart 3 of 3\)$/);
  });
});
