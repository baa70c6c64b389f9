/**
 * Runs the Kafka examples (examples/kafka-to-*.ts) the way a user does (`sluice run`) against
 * the real broker of the `kafka` project (and, for kafka-to-postgres, a PostgreSQL server with
 * prepared transactions), and checks what they wrote against a result computed here.
 * test/examples.test.ts runs the other examples and checks that every example is run.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, produce, uniqueTopic } from './services/kafka-test-client.js';
import { preparedTransactionsServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

const brokers = inject('kafka');
const ROOT = join(import.meta.dirname, '..');

function sluiceRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'sluice.js'), 'run', '--no-progress', '--no-typecheck', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** Payments: account a<i % 5> pays i % 13. */
const PAYMENTS = Array.from({ length: 500 }, (_, i) => ({ account: `a${i % 5}`, amount: i % 13 }));

function runningTotals(): string[] {
  const totals = new Map<string, number>();
  return PAYMENTS.map((p) => {
    const t = (totals.get(p.account) ?? 0) + p.amount;
    totals.set(p.account, t);
    return `${p.account},${t}`;
  });
}

describe('Kafka examples', () => {
  let pg: PostgresServer | undefined;
  afterAll(async () => {
    await pg?.stop();
  });

  it('examples/kafka-to-kafka.ts: every running total exactly once, read with read_committed', async () => {
    const input = uniqueTopic('ex-payments');
    const output = uniqueTopic('ex-totals');
    await createTopics(brokers.bootstrap, [
      { name: input, partitions: 3 },
      { name: output, partitions: 2 },
    ]);
    // An account's payments all in one partition: its running totals come out in one order.
    await produce(brokers.bootstrap, input, PAYMENTS.map((p, i) => ({ partition: (i % 5) % 3, key: p.account, value: `${p.account},${p.amount}` })));
    const r = await sluiceRun(['-p', '2', 'examples/kafka-to-kafka.ts', brokers.bootstrap, input, output, 'bounded']);
    expect(r.code, r.stderr).toBe(0);
    const got = await readTopicWithJavaConsumer(brokers.bootstrap, output, { idleMs: 3000 });
    expect([...got].sort()).toEqual(runningTotals().sort());
  }, 60_000);

  it('examples/kafka-to-postgres.ts: the table holds every account total', async () => {
    pg = await preparedTransactionsServer();
    const table = uniqueTableName('ex_totals');
    await sql(pg, `CREATE TABLE ${table} (account text PRIMARY KEY, total double precision NOT NULL, payments integer NOT NULL)`);
    try {
      const input = uniqueTopic('ex-payments-pg');
      await createTopics(brokers.bootstrap, [{ name: input, partitions: 3 }]);
      await produce(brokers.bootstrap, input, PAYMENTS.map((p, i) => ({ partition: i % 3, value: `${p.account},${p.amount}` })));
      const c = pg.connection;
      const env: NodeJS.ProcessEnv = {};
      if (c.host !== undefined) env.PGHOST = c.host;
      if (c.port !== undefined) env.PGPORT = String(c.port);
      if (c.user !== undefined) env.PGUSER = c.user;
      if (c.password !== undefined) env.PGPASSWORD = c.password;
      if (c.database !== undefined) env.PGDATABASE = c.database;
      const r = await sluiceRun(['-p', '2', 'examples/kafka-to-postgres.ts', brokers.bootstrap, input, table, 'bounded'], env);
      expect(r.code, r.stderr).toBe(0);
      const rows = await sql<{ account: string; total: number; payments: number }>(pg, `SELECT account, total, payments FROM ${table} ORDER BY account`);
      const want = new Map<string, { total: number; payments: number }>();
      for (const p of PAYMENTS) {
        const w = want.get(p.account) ?? { total: 0, payments: 0 };
        want.set(p.account, { total: w.total + p.amount, payments: w.payments + 1 });
      }
      expect(rows.map((x) => ({ account: x.account, total: Number(x.total), payments: Number(x.payments) }))).toEqual([...want].sort().map(([account, w]) => ({ account, ...w })));
    } finally {
      await sql(pg, `DROP TABLE IF EXISTS ${table}`);
    }
  }, 60_000);
});
