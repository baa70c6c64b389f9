import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { Sink } from '../src/api/sink.js';
import { BadRecordError } from '../src/connectors/postgres/bad-record-error.js';
import { PostgresTwoPhaseCommitSink } from '../src/connectors/postgres/two-phase-commit-sink.js';
import { PostgresUpsertSink } from '../src/connectors/postgres/upsert-sink.js';
import { PostgresWriteAheadSink } from '../src/connectors/postgres/write-ahead-sink.js';
import { preparedTransactionsServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

/**
 * Dead letters of the PostgreSQL sinks: a record PostgreSQL refuses (SQLSTATE class 22/23) or
 * whose row mapping throws goes to the configured dead-letter function with the error; the
 * other records are written (in the transactional sinks the refused row is tried under a
 * savepoint, so the transaction goes on). Against a real server.
 */

interface Row {
  readonly k: number;
  readonly c: number;
}

// 3: violates CHECK (23514); 5: out of integer range (22003); 7: the row mapping throws.
const INPUT: Row[] = Array.from({ length: 12 }, (_, i) => ({ k: i, c: i === 3 ? -1 : i === 5 ? 2 ** 40 : i }));

describe('PostgreSQL sinks: dead-letter output', () => {
  let server: PostgresServer;
  const tables: string[] = [];
  beforeAll(async () => {
    server = await preparedTransactionsServer();
  });
  afterAll(async () => {
    for (const t of tables) await sql(server, `DROP TABLE IF EXISTS ${t}`).catch(() => {});
    await server?.stop();
  });

  async function table(base: string): Promise<string> {
    const t = uniqueTableName(base);
    tables.push(t);
    await sql(server, `CREATE TABLE ${t} (k integer PRIMARY KEY, c integer NOT NULL CHECK (c >= 0))`);
    return t;
  }

  const row = {
    fields: {
      k: (r: Row) => r.k,
      c: (r: Row) => {
        if (r.k === 7) throw new Error('seven is not allowed');
        return r.c;
      },
    },
  };

  async function runInto(sink: Sink<Row>): Promise<void> {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 50, 'restart-strategy.type': 'none' });
    env.fromElements<Row>(...INPUT).sinkTo(sink);
    await env.executeAsync(undefined, { log: () => {} }).result;
  }

  async function check(t: string, letters: { record: Row; error: BadRecordError }[]): Promise<void> {
    const rows = await sql<{ k: number }>(server, `SELECT k FROM ${t} ORDER BY k`);
    expect(rows.map((r) => r.k)).toEqual([0, 1, 2, 4, 6, 8, 9, 10, 11]);
    const byKey = new Map(letters.map((l) => [l.record.k, l.error]));
    expect([...byKey.keys()].sort((a, b) => a - b)).toEqual([3, 5, 7]);
    expect(byKey.get(3)!.sqlState).toBe('23514');
    expect(byKey.get(3)!.message).toMatch(/record \{"k":3,"c":-1\} cannot be written to .*check constraint/);
    expect(byKey.get(5)!.sqlState).toBe('22003');
    expect(byKey.get(7)!.message).toMatch(/row mapping failed for record \{"k":7,"c":7\}: seven is not allowed/);
  }

  it('upsert sink: refused and unmappable records go to the dead letter, the rest is written', async () => {
    const t = await table('dl_upsert');
    const letters: { record: Row; error: BadRecordError }[] = [];
    await runInto(new PostgresUpsertSink<Row, 'k' | 'c'>({ connection: server.connection, table: t, row, keyColumns: ['k'], batchRows: 4, deadLetter: (record, error) => void letters.push({ record, error }) }));
    await check(t, letters);
  });

  it('two-phase-commit sink: a refused row does not abort the transaction; it goes to the dead letter', async () => {
    const t = await table('dl_2pc');
    const letters: { record: Row; error: BadRecordError }[] = [];
    await runInto(
      new PostgresTwoPhaseCommitSink<Row, 'k' | 'c'>({
        connection: server.connection,
        table: t,
        row,
        transactionalIdPrefix: t,
        batchRows: 4,
        deadLetter: async (record, error) => {
          await new Promise((r) => setTimeout(r, 1)); // awaited
          letters.push({ record, error });
        },
      }),
    );
    await check(t, letters);
  });

  it('write-ahead sink: the same', async () => {
    const t = await table('dl_wal');
    const letters: { record: Row; error: BadRecordError }[] = [];
    await runInto(new PostgresWriteAheadSink<Row, 'k' | 'c'>({ connection: server.connection, table: t, row, sinkId: t, batchRows: 4, deadLetter: (record, error) => void letters.push({ record, error }) }));
    await check(t, letters);
  });

  it('without a dead letter the job still fails naming the record', async () => {
    const t = await table('dl_none');
    await expect(runInto(new PostgresUpsertSink<Row, 'k' | 'c'>({ connection: server.connection, table: t, row, keyColumns: ['k'] }))).rejects.toThrow(/(record \{"k":3,"c":-1\} cannot be written|row mapping failed for record \{"k":7,"c":7\})/);
  });
});
