import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { SinkWriter, SinkWriterContext } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { PostgresTwoPhaseCommitSink } from '../src/connectors/postgres/two-phase-commit-sink.js';
import { lingeringToRollBack, parseTransactionId, PREFIX_LENGTH_MAX, transactionId } from '../src/connectors/postgres/transaction-ids.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { machineServer, preparedTransactionsServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

const KEYS = 13;

describe('transaction ids and the choice of lingering transactions (pure)', () => {
  it('<prefix>-<subtask>-<checkpointId>, parsed back; other prefixes and shapes are not ours', () => {
    expect(transactionId('job-a', 3, 17)).toBe('job-a-3-17');
    expect(transactionId('job-a', 0, 'final')).toBe('job-a-0-final');
    expect(parseTransactionId('job-a', 'job-a-3-17')).toEqual({ subtask: 3, checkpointId: 17 });
    expect(parseTransactionId('job-a', 'job-a-0-final')).toEqual({ subtask: 0, checkpointId: undefined });
    expect(parseTransactionId('job', 'job-a-3-17')).toBeUndefined();
    expect(parseTransactionId('job-a', 'job-a-3')).toBeUndefined();
    expect(parseTransactionId('job-a', 'other-3-17')).toBeUndefined();
  });

  it('the longest prefix keeps the longest gid within 199 characters; a longer one is refused', () => {
    const prefix = 'p'.repeat(PREFIX_LENGTH_MAX);
    expect(transactionId(prefix, 32767, Number.MAX_SAFE_INTEGER).length).toBeLessThanOrEqual(199);
    expect(
      () =>
        new PostgresTwoPhaseCommitSink<string>({
          table: 't',
          row: { columns: ['a'], toRow: (s) => [s] },
          transactionalIdPrefix: prefix + 'p',
        }),
    ).toThrow(/at most 176,/);
    expect(() => new PostgresTwoPhaseCommitSink<string>({ table: 't', row: { columns: ['a'], toRow: (s) => [s] }, transactionalIdPrefix: "it's" })).toThrow(/may contain only/);
  });

  it('a fresh start rolls back every gid j with j % parallelism == subtask; restored gids and other prefixes stay', () => {
    const prepared = ['p-0-4', 'p-1-4', 'p-2-9', 'p-3-9', 'p-0-final', 'q-0-4', 'p-0-5'];
    const base = { prefix: 'p', prepared, parallelism: 2, restoredSubtasks: [], restoredParallelism: undefined, keep: new Set<string>() };
    expect(lingeringToRollBack({ ...base, subtask: 0 })).toEqual(['p-0-4', 'p-0-5', 'p-0-final', 'p-2-9']);
    expect(lingeringToRollBack({ ...base, subtask: 1 })).toEqual(['p-1-4', 'p-3-9']);
    // Restored: subtask 0 holds old subtask 0's state (which pre-committed p-0-4).
    expect(lingeringToRollBack({ ...base, subtask: 0, restoredSubtasks: [0], restoredParallelism: 2, keep: new Set(['p-0-4']) })).toEqual(['p-0-5', 'p-0-final', 'p-2-9']);
  });

  it('after a scale-down, a subtask is responsible for the old subtasks whose state it restored', () => {
    const prepared = ['p-0-8', 'p-1-8', 'p-2-8', 'p-3-8', 'p-5-1'];
    const base = { prefix: 'p', prepared, parallelism: 2, restoredParallelism: 4, keep: new Set(['p-1-8']) };
    // Contiguous shares: new 0 restored old 0 and 1, new 1 restored old 2 and 3.
    expect(lingeringToRollBack({ ...base, subtask: 0, restoredSubtasks: [0, 1] })).toEqual(['p-0-8']);
    expect(lingeringToRollBack({ ...base, subtask: 1, restoredSubtasks: [2, 3] })).toEqual(['p-2-8', 'p-3-8', 'p-5-1']);
  });
});

describe('PostgresTwoPhaseCommitSink against a real server with prepared transactions', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    const t0 = Date.now();
    server = await preparedTransactionsServer();
    console.log(`PostgreSQL for the two-phase-commit tests: ${server.description}, ready in ${Date.now() - t0} ms`);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  async function createTable(base: string, columns = 'rec text NOT NULL'): Promise<string> {
    const table = uniqueTableName(base);
    await sql(server, `CREATE TABLE ${table} (${columns})`);
    return table;
  }

  async function preparedOf(prefix: string): Promise<string[]> {
    const rows = await sql<{ gid: string }>(server, 'SELECT gid FROM pg_prepared_xacts WHERE left(gid, $2) = $1 ORDER BY gid', [`${prefix}-`, prefix.length + 1]);
    return rows.map((r) => r.gid);
  }

  async function recordsOf(table: string): Promise<string[]> {
    return (await sql<{ rec: string }>(server, `SELECT rec FROM ${table}`)).map((r) => r.rec);
  }

  function sinkFor(table: string, prefix: string): PostgresTwoPhaseCommitSink<string, 'rec'> {
    return new PostgresTwoPhaseCommitSink<string, 'rec'>({
      connection: server.connection,
      table,
      row: { columns: ['rec'], toRow: (r) => [r] },
      transactionalIdPrefix: prefix,
      batchRows: 200,
    });
  }

  async function runJob(o: { table: string; prefix: string; parallelism: number; plan: FaultPlan; records: number; checkpointing?: boolean }) {
    const logs: string[] = [];
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': o.parallelism,
      ...(o.checkpointing === false ? {} : { 'execution.checkpointing.interval': 30 }),
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 50,
      'restart-strategy.fixed-delay.delay': 5,
    });
    env
      .fromSource(numberSource({ count: o.records, eventsPerSecond: 30_000 }), 'numbers')
      .process(o.plan.failingProcess<number>())
      .name('faults')
      .keyBy((n) => n % KEYS)
      .process(new CountPerKey())
      .uid('count')
      .sinkTo(o.plan.wrapSink(sinkFor(o.table, o.prefix)), 'postgres 2pc');
    const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
    return { result, logs };
  }

  for (const parallelism of [1, 3]) {
    it(`keyed job, parallelism ${parallelism}, >= 5 injected failures and failures after PREPARE: the table equals the reference`, { timeout: 60_000 }, async () => {
      const records = 12_000;
      const seed = Number(process.env['SLUICE_SEED'] ?? 6_000 + parallelism);
      const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: records, commitFaults: 2, checkpointRange: 4 });
      console.log(`two-phase-commit sink, parallelism ${parallelism}: ${plan.describe()}`);
      const table = await createTable('eo2pc');
      const prefix = `eo-${table}`;
      const { result, logs } = await runJob({ table, prefix, parallelism, plan, records });
      const committed = await recordsOf(table);
      expect(result.numRestarts, `${plan.describe()}\n${logs.join('\n')}`).toBeGreaterThanOrEqual(5);
      expect(plan.fired.filter((f) => f.kind === 'commit').length, plan.describe()).toBe(2);
      expect(compareMultisets(committed, countReference(records, KEYS)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      expect(committed.length, plan.describe()).toBe(records);
      expect(await preparedOf(prefix), plan.describe()).toEqual([]);
    });
  }

  it('without checkpointing, each subtask commits one transaction at the end of input', async () => {
    const records = 3_000;
    const table = await createTable('eo2pc_nocp');
    const prefix = `nocp-${table}`;
    const plan = new FaultPlan(1, []);
    await runJob({ table, prefix, parallelism: 2, plan, records, checkpointing: false });
    expect(compareMultisets(await recordsOf(table), countReference(records, KEYS))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(await preparedOf(prefix)).toEqual([]);
  });

  const ctx = (subtaskIndex: number, attemptNumber = 0, parallelism = 1): SinkWriterContext => ({ subtaskIndex, parallelism, attemptNumber, checkpointing: true });

  async function writeAndPrepare(w: SinkWriter<string>, values: string[], checkpointId: number): Promise<unknown[]> {
    for (const v of values) await w.write(v, undefined);
    const prepared = w.prepareCommit!(checkpointId);
    const state = w.snapshotState!(checkpointId);
    await prepared;
    return state;
  }

  it('a transaction prepared before a crash is committed by the restored writer, and again without harm; a lost one is an error', async () => {
    const table = await createTable('eo2pc_recover');
    const prefix = `rec-${table}`;
    const w1 = await sinkFor(table, prefix).createWriter(ctx(0), []);
    const state1 = await writeAndPrepare(w1, ['a', 'b', 'c'], 1);
    expect(JSON.parse(JSON.stringify(state1))).toEqual(state1); // plain data
    // The crash: checkpoint 1 completed, but the writer was never notified.
    await w1.close!();
    expect(await preparedOf(prefix)).toEqual([`${prefix}-0-1`]);
    expect(await recordsOf(table)).toEqual([]);

    // Another process restores checkpoint 1.
    const w2 = await sinkFor(table, prefix).createWriter(ctx(0, 1), state1);
    expect((await recordsOf(table)).sort()).toEqual(['a', 'b', 'c']);
    expect(await preparedOf(prefix)).toEqual([]);
    await w2.close!();
    // A second failure before the next checkpoint restores checkpoint 1 again: already committed (marker), fine.
    const w3 = await sinkFor(table, prefix).createWriter(ctx(0, 2), state1);
    expect((await recordsOf(table)).sort()).toEqual(['a', 'b', 'c']);

    // Checkpoint 2 is prepared, then rolled back by someone else: the restore reports the loss.
    const state2 = await writeAndPrepare(w3, ['d'], 2);
    await w3.close!();
    await sql(server, `ROLLBACK PREPARED '${prefix}-0-2'`);
    await expect(Promise.resolve(sinkFor(table, prefix).createWriter(ctx(0, 3), state2))).rejects.toThrow(
      new RegExp(`prepared transaction '${prefix}-0-2' is neither prepared nor committed.*records are lost`),
    );
    expect(await preparedOf(prefix)).toEqual([]);
  });

  it('normal operation: rows become visible only when the checkpoint completes; empty transactions prepare nothing', async () => {
    const table = await createTable('eo2pc_visible');
    const prefix = `vis-${table}`;
    const w = await sinkFor(table, prefix).createWriter(ctx(0), []);
    await writeAndPrepare(w, ['x', 'y'], 1);
    expect(await recordsOf(table)).toEqual([]);
    expect(await preparedOf(prefix)).toEqual([`${prefix}-0-1`]);
    await writeAndPrepare(w, [], 2);
    expect(await preparedOf(prefix)).toEqual([`${prefix}-0-1`]);
    await w.notifyCheckpointComplete!(2);
    expect((await recordsOf(table)).sort()).toEqual(['x', 'y']);
    expect(await preparedOf(prefix)).toEqual([]);
    await w.close!();
  });

  it('on start, lingering prepared transactions of the prefix (this subtask, not in the restored state) are rolled back', async () => {
    const table = await createTable('eo2pc_linger');
    const prefix = `lin-${table}`;
    // Subtask 0 of 2 pre-committed checkpoint 4 (kept in state, checkpoint 4 completed) and 5
    // (checkpoint 5 never completed); subtask 1 pre-committed 5; another job uses another prefix.
    const w0 = await sinkFor(table, prefix).createWriter(ctx(0, 0, 2), []);
    const w1 = await sinkFor(table, prefix).createWriter(ctx(1, 0, 2), []);
    const other = await sinkFor(table, `other-${table}`).createWriter(ctx(0, 0, 2), []);
    const state4 = await writeAndPrepare(w0, ['kept'], 4);
    await writeAndPrepare(w0, ['lingering'], 5);
    await writeAndPrepare(w1, ['of subtask 1'], 5);
    await writeAndPrepare(other, ['other job'], 5);
    for (const w of [w0, w1, other]) await w.close!();
    // An earlier run at parallelism 4 left one behind for subtask 2 (2 % 2 == 0).
    const client = new pg.Client(server.connection);
    await client.connect();
    await client.query('BEGIN');
    await client.query(`INSERT INTO ${table} VALUES ('earlier run')`);
    await client.query(`PREPARE TRANSACTION '${prefix}-2-9'`);
    await client.end();
    expect(await preparedOf(prefix)).toEqual([`${prefix}-0-4`, `${prefix}-0-5`, `${prefix}-1-5`, `${prefix}-2-9`]);

    // Subtask 0 restarts from checkpoint 4.
    const restarted = await sinkFor(table, prefix).createWriter(ctx(0, 1, 2), state4);
    expect(await preparedOf(prefix)).toEqual([`${prefix}-1-5`]);
    expect(await preparedOf(`other-${table}`)).toEqual([`other-${table}-0-5`]);
    expect(await recordsOf(table)).toEqual(['kept']);
    await restarted.close!();
    await sql(server, `ROLLBACK PREPARED '${prefix}-1-5'`);
    await sql(server, `ROLLBACK PREPARED 'other-${table}-0-5'`);
  });

  it('upserts in the transaction with key columns: the last value per key, exactly once', async () => {
    const table = await createTable('eo2pc_upsert', 'k integer PRIMARY KEY, c integer NOT NULL');
    const prefix = `ups-${table}`;
    const sink = new PostgresTwoPhaseCommitSink<{ k: number; c: number }, 'k' | 'c'>({
      connection: server.connection,
      table,
      row: { fields: { k: (r) => r.k, c: (r) => r.c } },
      keyColumns: ['k'],
      transactionalIdPrefix: prefix,
    });
    const w = await sink.createWriter(ctx(0), []);
    for (let i = 1; i <= 10; i++) await w.write({ k: i % 3, c: i }, undefined);
    w.prepareCommit!(1);
    w.snapshotState!(1);
    await w.notifyCheckpointComplete!(1);
    const rows = await sql<{ k: number; c: number }>(server, `SELECT k, c FROM ${table} ORDER BY k`);
    expect(rows).toEqual([
      { k: 0, c: 9 },
      { k: 1, c: 10 },
      { k: 2, c: 8 },
    ]);
    await w.close!();
  });

  it('a restart in the same process does not wait for a write of the failed attempt that waits for a row lock of a prepared transaction', { timeout: 20_000 }, async () => {
    const table = await createTable('eo2pc_lockwait', 'k integer PRIMARY KEY, c integer NOT NULL');
    const prefix = `lock-${table}`;
    const sink = new PostgresTwoPhaseCommitSink<{ k: number; c: number }, 'k' | 'c'>({
      connection: server.connection,
      table,
      row: { fields: { k: (r) => r.k, c: (r) => r.c } },
      keyColumns: ['k'],
      transactionalIdPrefix: prefix,
      batchRows: 1,
    });
    const w1 = await sink.createWriter(ctx(0), []);
    await w1.write({ k: 1, c: 1 }, undefined);
    const prepared = w1.prepareCommit!(1);
    const state = w1.snapshotState!(1);
    await prepared;
    // The next transaction upserts the same key: it waits for the prepared transaction's lock.
    const blocked = Promise.resolve(w1.write({ k: 1, c: 2 }, undefined));
    await new Promise((r) => setTimeout(r, 200));
    // The attempt fails before checkpoint 1's notification; the restarted writer commits checkpoint 1.
    const w2 = await sink.createWriter(ctx(0, 1), state);
    expect(await sql(server, `SELECT k, c FROM ${table}`)).toEqual([{ k: 1, c: 1 }]);
    await expect(blocked).rejects.toThrow();
    await w1.close!();
    await w2.close!();
    expect(await preparedOf(prefix)).toEqual([]);
  });
});

describe('PostgresTwoPhaseCommitSink on a server without prepared transactions', () => {
  it('fails at start with an error that names max_prepared_transactions and the fix', async () => {
    const server = await machineServer();
    try {
      const [{ max_prepared_transactions: max }] = await sql<{ max_prepared_transactions: string }>(server, 'SHOW max_prepared_transactions');
      expect(max, `this test needs a server with max_prepared_transactions = 0: ${server.description}`).toBe('0');
      const sink = new PostgresTwoPhaseCommitSink<string>({
        connection: server.connection,
        table: 'never_written',
        row: { columns: ['a'], toRow: (s) => [s] },
        transactionalIdPrefix: 'mpt-zero',
      });
      const attempt = Promise.resolve(sink.createWriter({ subtaskIndex: 0, parallelism: 1, attemptNumber: 0, checkpointing: true }, []));
      await expect(attempt).rejects.toThrow(/max_prepared_transactions = 0/);
      await expect(attempt).rejects.toThrow(/ALTER SYSTEM SET max_prepared_transactions = \d+.*restart the server/);
    } finally {
      await server.stop();
    }
  });
});
