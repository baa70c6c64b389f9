import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { SinkWriterContext } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { PostgresUpsertSink } from '../src/connectors/postgres/upsert-sink.js';
import { PostgresTwoPhaseCommitSink } from '../src/connectors/postgres/two-phase-commit-sink.js';
import { PostgresWriteAheadSink } from '../src/connectors/postgres/write-ahead-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { machineServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

const KEYS = 11;

interface Count {
  readonly k: number;
  readonly c: number;
}

function parseCount(s: string): Count {
  const [k, c] = s.split(':');
  return { k: Number(k), c: Number(c) };
}

/** Independent reference: the last count of every key. */
function finalCounts(records: number): Count[] {
  const last = new Map<number, number>();
  for (const r of countReference(records, KEYS)) {
    const { k, c } = parseCount(r);
    last.set(k, Math.max(last.get(k) ?? 0, c));
  }
  return [...last].map(([k, c]) => ({ k, c })).sort((a, b) => a.k - b.k);
}

describe('PostgresUpsertSink against the machine server', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await machineServer();
    console.log(`PostgreSQL for the upsert tests: ${server.description}`);
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function createTable(base: string, columns: string): Promise<string> {
    const table = uniqueTableName(base);
    await sql(server, `CREATE TABLE ${table} (${columns})`);
    return table;
  }

  async function dropTable(table: string): Promise<void> {
    await sql(server, `DROP TABLE IF EXISTS ${table}`);
  }

  async function runJob(o: { parallelism: number; plan: FaultPlan; records: number; countsTable: string; recordsTable: string }) {
    const logs: string[] = [];
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': o.parallelism,
      'execution.checkpointing.interval': 30,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 50,
      'restart-strategy.fixed-delay.delay': 5,
    });
    const counts = env
      .fromSource(numberSource({ count: o.records, eventsPerSecond: 30_000 }), 'numbers')
      .process(o.plan.failingProcess<number>())
      .name('faults')
      .keyBy((n) => n % KEYS)
      .process(new CountPerKey())
      .uid('count');
    // Latest count per key: a replay moves a key back to an older count for a while, then forward again.
    counts.map(parseCount).sinkTo(
      new PostgresUpsertSink<Count, 'k' | 'c'>({ connection: server.connection, table: o.countsTable, row: { fields: { k: (r) => r.k, c: (r) => r.c } }, keyColumns: ['k'], batchRows: 100 }),
      'counts',
    );
    // Every record under its own key: a replay rewrites the same rows.
    counts.sinkTo(
      new PostgresUpsertSink<string, 'rec' | 'key'>({
        connection: server.connection,
        table: o.recordsTable,
        row: { columns: ['rec', 'key'], toRow: (r) => [r, Number(r.split(':')[0])] },
        keyColumns: ['rec'],
      }),
      'records',
    );
    const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
    return { result, logs };
  }

  for (const parallelism of [1, 3]) {
    it(`keyed job, parallelism ${parallelism}, >= 5 injected failures: the tables converge to the reference`, { timeout: 60_000 }, async () => {
      const records = 12_000;
      const plan = FaultPlan.seeded({ seed: Number(process.env['SLUICE_SEED'] ?? 7_100 + parallelism), recordFaults: 5, recordRange: records });
      console.log(`upsert sink, parallelism ${parallelism}: ${plan.describe()}`);
      const countsTable = await createTable('ups_counts', 'k integer PRIMARY KEY, c integer NOT NULL');
      const recordsTable = await createTable('ups_records', 'rec text PRIMARY KEY, key integer NOT NULL');
      try {
        const { result, logs } = await runJob({ parallelism, plan, records, countsTable, recordsTable });
        expect(result.numRestarts, `${plan.describe()}\n${logs.join('\n')}`).toBeGreaterThanOrEqual(5);
        expect(await sql(server, `SELECT k, c FROM ${countsTable} ORDER BY k`), plan.describe()).toEqual(finalCounts(records));
        const rows = (await sql<{ rec: string }>(server, `SELECT rec FROM ${recordsTable}`)).map((r) => r.rec).sort();
        expect(rows, plan.describe()).toEqual(countReference(records, KEYS));
      } finally {
        await dropTable(countsTable);
        await dropTable(recordsTable);
      }
    });
  }

  const ctx: SinkWriterContext = { subtaskIndex: 0, parallelism: 1, attemptNumber: 0, checkpointing: true };

  it('writes a batch when it fills, the rest at the barrier; the last record of a key in a batch wins', async () => {
    const table = await createTable('ups_batches', 'k integer PRIMARY KEY, v text NOT NULL');
    try {
      const sink = new PostgresUpsertSink<[number, string], 'k' | 'v'>({
        connection: server.connection,
        table,
        row: { columns: ['k', 'v'], toRow: ([k, v]) => [k, v] },
        keyColumns: ['k'],
        batchRows: 3,
      });
      const w = await sink.createWriter(ctx);
      await w.write([1, 'a'], undefined);
      await w.write([1, 'b'], undefined); // same key: replaces [1, 'a'] in the batch
      await w.write([2, 'c'], undefined);
      expect(await sql(server, `SELECT count(*)::int AS n FROM ${table}`)).toEqual([{ n: 0 }]);
      await w.write([3, 'd'], undefined); // the third distinct row fills the batch
      expect(await sql(server, `SELECT k, v FROM ${table} ORDER BY k`)).toEqual([
        { k: 1, v: 'b' },
        { k: 2, v: 'c' },
        { k: 3, v: 'd' },
      ]);
      await w.write([2, 'e'], undefined);
      await w.prepareCommit!(1);
      expect(await sql(server, `SELECT k, v FROM ${table} ORDER BY k`)).toEqual([
        { k: 1, v: 'b' },
        { k: 2, v: 'e' },
        { k: 3, v: 'd' },
      ]);
      await w.close!();
    } finally {
      await dropTable(table);
    }
  });

  it('a record the database refuses fails the job with an error that names it', async () => {
    const table = await createTable('ups_bad', 'k integer PRIMARY KEY, c integer NOT NULL CHECK (c >= 0)');
    try {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      env
        .fromElements<Count>({ k: 1, c: 1 }, { k: 2, c: 2 }, { k: 3, c: -7 }, { k: 4, c: 4 })
        .sinkTo(new PostgresUpsertSink<Count, 'k' | 'c'>({ connection: server.connection, table, row: { fields: { k: (r) => r.k, c: (r) => r.c } }, keyColumns: ['k'] }));
      await expect(env.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(/record \{"k":3,"c":-7\} cannot be written to .*check constraint.*SQLSTATE 23514/);
    } finally {
      await dropTable(table);
    }
  });

  it('a record without a value for a key column is a bad record (in a UNIQUE column that allows null, such records replaced each other in a batch and added a row at every replay)', async () => {
    const table = await createTable('ups_nullkey', 'id integer UNIQUE, name text');
    type Named = { id?: number; name: string };
    const sinkFor = (deadLetter?: (r: Named, e: Error) => void) =>
      new PostgresUpsertSink<Named, 'id' | 'name'>({
        connection: server.connection,
        table,
        row: { fields: { id: (r) => r.id ?? null, name: (r) => r.name } },
        keyColumns: ['id'],
        ...(deadLetter === undefined ? {} : { deadLetter }),
      });
    try {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      env.fromElements<Named>({ name: 'first' }, { name: 'second' }, { id: 1, name: 'third' }).sinkTo(sinkFor());
      await expect(env.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(
        /record \{"name":"first"\} has no value for the key column 'id' \(null or missing\): rows are found by their key.* or send these elsewhere with deadLetter/,
      );
      // With a dead letter: the keyless records go there, each once; the others are written.
      const dead: string[] = [];
      for (let run = 0; run < 2; run++) {
        const again = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
        again.fromElements<Named>({ name: 'first' }, { name: 'second' }, { id: 1, name: 'third' }).sinkTo(sinkFor((r) => dead.push(r.name)));
        await again.execute();
      }
      expect(dead).toEqual(['first', 'second', 'first', 'second']);
      expect(await sql(server, `SELECT id, name FROM ${table} ORDER BY id`)).toEqual([{ id: 1, name: 'third' }]);
    } finally {
      await dropTable(table);
    }
  });

  it('a connection port that is not a port fails the sink\'s constructor naming it (a string crashed the process at connect: an unhandled error event)', () => {
    for (const port of ['abc', 0, 70_000, 5432.5]) {
      expect(
        () => new PostgresUpsertSink<Count, 'k' | 'c'>({ connection: { ...server.connection, port: port as number }, table: 'never_written', row: { fields: { k: (r) => r.k, c: (r) => r.c } }, keyColumns: ['k'] }),
        String(port),
      ).toThrow(new RegExp(`^PostgreSQL connection: port must be an integer from 1 to 65535, got ${JSON.stringify(port).replace('.', '\\.')} \\(or leave it out: 5432, or PGPORT\\)`));
    }
  });

  it('misspelt option names and malformed connection strings fail the constructors, naming the fix and never the password', () => {
    const row = { fields: { k: (r: Count) => r.k, c: (r: Count) => r.c } };
    const upsert = (o: Record<string, unknown>) => () => new PostgresUpsertSink<Count, 'k' | 'c'>({ table: 't', row, keyColumns: ['k'], ...o } as never);
    // keyColumn: no key columns given, so the constructor said "keyColumns is empty" at best.
    expect(upsert({ keyColumn: ['k'] })).toThrow(/^PostgreSQL upsert sink: unknown option 'keyColumn' \(did you mean 'keyColumns'\?\); its options are connection, table, row, keyColumns, updateColumns, batchRows, deadLetter$/);
    // db: the default database (named like the user) instead, without a word.
    expect(upsert({ connection: { host: '127.0.0.1', db: 'orders' } })).toThrow(/^PostgreSQL connection: unknown option 'db'; its options are connectionString, host, port, user, password, database, applicationName, connectTimeoutMs$/);
    expect(upsert({ connection: { pasword: 'secret' } })).toThrow(/^PostgreSQL connection: unknown option 'pasword' \(did you mean 'password'\?\)/);
    expect(upsert({ connection: { password: 1234 } })).toThrow(/^PostgreSQL connection: password must be a string, got number$/);
    // pg took it for a host name: "getaddrinfo ENOTFOUND base".
    expect(upsert({ connection: { connectionString: 'not a url' } })).toThrow(/^PostgreSQL connection: connectionString is not a URL: it must look like postgresql:\/\/user:password@host:5432\/database/);
    expect(upsert({ connection: { connectionString: 'mysql://u:hunter2@db/x' } })).toThrow(/^PostgreSQL connection: connectionString has the scheme 'mysql:\/\/'/);
    expect(upsert({ connection: { connectionString: 'postgres://u:hunter2@db:abc/x' } })).toThrow(/^PostgreSQL connection: connectionString is not a valid URL \(is the port a number\? one host only\)/);
    expect(upsert({ connection: { connectionString: 'postgres://u:hunter2@db:abc/x' } })).not.toThrow(/hunter2/);
    expect(upsert({ connection: 'postgres://localhost/db' })).toThrow(/^PostgreSQL upsert sink: connection must be an object \(\{ connectionString \} or/);
    expect(upsert({ connection: { connectionString: 'postgresql://u:p%40ss@127.0.0.1:5432/test', applicationName: 'billing', connectTimeoutMs: 500 } })).not.toThrow();
    expect(upsert({ connection: { connectionString: '/var/run/postgresql test' } })).not.toThrow();
    // A host left out (a socket directory in the query) is one pg takes, though not a URL to Node.
    expect(upsert({ connection: { connectionString: 'postgresql://user@/dbname?host=/tmp' } })).not.toThrow();
    expect(upsert({ connection: { connectionString: 'postgresql://h1:5432,h2:5432/db' } })).toThrow(/is not a valid URL \(is the port a number\? one host only\)/);
    expect(upsert({ connection: { host: 'db', ssl: true } })).toThrow(/^PostgreSQL connection: there is no ssl option; for TLS put sslmode in the connection string/);
    expect(() => new PostgresUpsertSink(undefined as never)).toThrow(/^PostgreSQL upsert sink: the options must be an object/);
    expect(() => new PostgresWriteAheadSink({ table: 't', row, sinkId: 's', batchrows: 10 } as never)).toThrow(/^PostgreSQL write-ahead sink: unknown option 'batchrows' \(did you mean 'batchRows'\?\)/);
    expect(() => new PostgresTwoPhaseCommitSink({ table: 't', row, transactionalIdPrefix: 'p', markertable: 'm' } as never)).toThrow(
      /^PostgreSQL two-phase-commit sink: unknown option 'markertable' \(did you mean 'markerTable'\?\)/,
    );
  });

  it('declares: the key columns must be mapped columns, checked by the compiler and at construction', () => {
    const make = (keys: readonly ('k' | 'c')[]) => () =>
      new PostgresUpsertSink<Count, 'k' | 'c'>({ table: 't', row: { fields: { k: (r) => r.k, c: (r) => r.c } }, keyColumns: keys });
    expect(make(['k'])).not.toThrow();
    expect(make([])).toThrow(/keyColumns is empty/);
    const typo = () =>
      new PostgresUpsertSink({
        table: 't',
        row: { columns: ['k', 'c'], toRow: (r: Count) => [r.k, r.c] },
        // @ts-expect-error 'x' is not a mapped column
        keyColumns: ['x'],
      });
    expect(typo).toThrow(/key column 'x' is not among the mapped columns/);
  });
});
