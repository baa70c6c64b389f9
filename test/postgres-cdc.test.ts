import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { ReaderOutput, SourceReaderContext } from '../src/api/source.js';
import {
  postgresCdcSource,
  type CdcRow,
  type ChangeRecord,
  type PostgresCdcSourceOptions,
  type PostgresCdcSplit,
} from '../src/connectors/postgres-cdc/index.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';
import { canonical, identity, mirror, runWorkload, workload, WORKLOAD_DDL, type Change, type Tables } from './support/cdc-workload.js';
import { logicalReplicationServer, machineServer, sql, type PostgresServer } from './services/postgres-cluster.js';

/**
 * The PostgreSQL CDC source against a throwaway cluster with wal_level = logical (one for the
 * file, ~3 s to start): a seeded workload under injected failures compared with an independent
 * reference, a restore inside a transaction, the slot's confirmed position, and each start-time
 * error.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('postgres cdc source against a real server (wal_level = logical)', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    const t0 = Date.now();
    server = await logicalReplicationServer({ maxReplicationSlots: 4 });
    console.log(`PostgreSQL for the CDC tests: ${server.description}, ready in ${Date.now() - t0} ms`);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  type RecordOptions<T extends object> = PostgresCdcSourceOptions<T> & { readonly format?: 'records' };
  const options = <T extends object = Record<string, CdcRow>>(o: Partial<RecordOptions<T>> & Pick<RecordOptions<T>, 'slot' | 'publication' | 'tables'>): RecordOptions<T> => ({
    connection: server.connection,
    log: () => {},
    ...o,
  });

  async function waitForSlot(slot: string, active: boolean): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const r = await sql<{ active: boolean }>(server, 'SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
      if ((r[0]?.active ?? false) === active) return;
      await sleep(50);
    }
    throw new Error(`slot ${slot} did not become ${active ? 'active' : 'inactive'}`);
  }

  async function confirmedFlush(slot: string): Promise<string> {
    return (await sql<{ lsn: string }>(server, 'SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [slot]))[0]!.lsn;
  }

  it('a seeded workload on two tables under injected failures: every change once, in commit order; the mirrors equal the tables', { timeout: 60_000 }, async () => {
    const seed = Number(process.env['SLUICE_SEED'] ?? 4901);
    const txns = workload(seed);
    const expected = txns.flatMap((t) => t.flatMap((s) => s.changes));
    const plan = FaultPlan.seeded({ seed, recordFaults: 4, recordRange: expected.length, snapshotSyncFaults: 1, commitFaults: 1, checkpointRange: 10 });
    console.log(`cdc workload: seed ${seed}, ${txns.length} transactions, ${expected.length} changes; ${plan.describe()}`);
    for (const ddl of WORKLOAD_DDL) await sql(server, ddl);

    const store = new TxnStore<Change>();
    const logs: string[] = [];
    const started = Date.now();
    const log = (m: string): void => void logs.push(`${Date.now() - started} ms: ${m}`);
    const env = StreamExecutionEnvironment.create({
      'execution.checkpointing.interval': 20,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 50,
      'restart-strategy.fixed-delay.delay': 5,
    });
    env
      .fromSource(postgresCdcSource<Tables>(options<Tables>({ slot: 'cdc_job', publication: 'cdc_pub', tables: ['public.cdc_orders', 'cdc_items'], log })), 'cdc')
      .process(plan.failingProcess<Change>())
      .name('faults')
      .sinkTo(plan.wrapSink(new TxnStoreSink(store)), 'store');
    const job = env.executeAsync(undefined, { log });
    let jobEnded = false;
    void job.result.then(
      () => (jobEnded = true),
      () => (jobEnded = true),
    );
    const t0 = Date.now();
    try {
      await waitForSlot('cdc_job', true);
      await runWorkload(server.connection, txns);
      const workloadMs = Date.now() - t0;
      for (let i = 0; i < 1200 && store.committed.length < expected.length && !jobEnded; i++) {
        await sleep(25);
        if (i % 20 === 0) log(`committed ${store.committed.length} of ${expected.length}`);
      }
      // A few more checkpoints: duplicates arriving late would show.
      const lastCompleted = (): number => Math.max(0, ...job.checkpoints().filter((c) => c.status === 'COMPLETED').map((c) => c.id));
      const completed = lastCompleted();
      for (let i = 0; i < 400 && lastCompleted() < completed + 3 && !jobEnded; i++) await sleep(25);
      console.log(`cdc workload: ${workloadMs} ms, all changes committed ${Date.now() - t0} ms after the start, ${job.progress().numRestarts ?? '?'} restarts`);
    } finally {
      job.cancel();
    }
    const result = await job.result.catch((e: unknown) => e);
    if (process.env['SLUICE_CDC_LOG'] !== undefined) console.log(logs.filter((l) => !/checkpoint \d+ completed/.test(l)).join('\n'));
    const why = `${plan.describe()}\n${logs.slice(-40).join('\n')}`;
    const got = store.committed.map(identity);
    expect(compareMultisets(got, expected), why).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(got, why).toEqual(expected); // commit order, and the order inside each transaction
    expect(plan.fired.length, why).toBe(plan.faults.length);
    expect((result as { numRestarts?: number }).numRestarts ?? logs.filter((l) => /restarting in/.test(l)).length, why).toBeGreaterThanOrEqual(5);

    // The mirrors (the changes applied in order) equal the tables.
    const { tables, unchangedToast } = mirror(store.committed);
    expect(unchangedToast, 'updates of rows with TOASTed notes leave them out').toBeGreaterThan(0);
    for (const [name, rows] of tables) {
      const actual = await sql<CdcRow>(server, `SELECT * FROM ${name} ORDER BY id`);
      expect([...rows.values()].sort((a, b) => (a['id'] as number) - (b['id'] as number)).map((r) => canonical(name, r)), name).toEqual(actual.map((r) => canonical(name, r)));
    }
    // Types as documented.
    const order = store.committed.find((c): c is Extract<Change, { op: 'c'; table: 'public.cdc_orders' }> => c.op === 'c' && c.table === 'public.cdc_orders')!;
    expect(typeof order.after.qty).toBe('bigint');
    expect(order.after.created).toMatch(/^2026-12-07T\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(order.source.commitTs).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // The slot confirmed up to the last committed change, no further than completed checkpoints.
    await waitForSlot('cdc_job', false);
    const last = store.committed.at(-1)!.source.commitLsn;
    expect(BigInt(`0x${(await confirmedFlush('cdc_job')).replace('/', '').padStart(16, '0')}`) > 0n).toBe(true);
    const [hi, lo] = (await confirmedFlush('cdc_job')).split('/');
    const [lhi, llo] = last.split('/');
    expect((BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`), why).toBeGreaterThan((BigInt(`0x${lhi}`) << 32n) | BigInt(`0x${llo}`));
    await sql(server, "SELECT pg_drop_replication_slot('cdc_job')");
  });

  const gauges = new Map<string, () => number | boolean>();
  const metricGroup = {
    addGroup: () => metricGroup,
    gauge: (name: string, read: () => number | boolean) => void gauges.set(name, read),
  } as unknown as NonNullable<SourceReaderContext['metricGroup']>;
  const ctx: SourceReaderContext = { subtaskIndex: 0, parallelism: 1, attemptNumber: 0, nowMs: () => Date.now(), sendSplitRequest: () => {}, metricGroup };
  function collector<T>(into: T[]): ReaderOutput<T> {
    const out: ReaderOutput<T> = { collect: (v) => void into.push(v), createOutputForSplit: () => out, releaseOutputForSplit: () => {} };
    return out;
  }
  async function pollUntil<T>(reader: { pollNext(o: ReaderOutput<T>): string; isAvailable(): Promise<void> }, into: T[], n: number): Promise<void> {
    const out = collector(into);
    for (let i = 0; i < 2000 && into.length < n; i++) {
      if (reader.pollNext(out) === 'nothing') await Promise.race([reader.isAvailable(), sleep(20)]);
    }
  }

  it('restored from a checkpoint in the middle of a transaction, a reader emits the rest of it once; the slot confirms only completed checkpoints', async () => {
    await sql(server, 'CREATE TABLE midtx (id int PRIMARY KEY, v text)');
    const source = postgresCdcSource<{ midtx: { id: number; v: string } }>(options<{ midtx: { id: number; v: string } }>({ slot: 'midtx', publication: 'midtx', createPublication: true, tables: ['midtx'] }));
    const [split] = await source.createSplits(1);
    const confirmedAtStart = await confirmedFlush('midtx');
    const r1 = source.createReader(ctx);
    r1.addSplits([split!]);
    r1.noMoreSplits();
    await waitForSlot('midtx', true);
    await sql(server, "INSERT INTO midtx SELECT g, 'v' || g FROM generate_series(1, 1500) g");
    const first: ChangeRecord[] = [];
    await pollUntil(r1, first, 1);
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThan(1500); // a poll emits at most 512
    // Behind: the rest of the transaction is received (give it a moment), not emitted.
    await sleep(300);
    expect(gauges.get('replicationLagBytes')!()).toBeGreaterThan(0);
    expect(gauges.get('replicationLagMs')!()).toBeGreaterThanOrEqual(0);
    const [inside] = r1.snapshotState(1) as PostgresCdcSplit[];
    expect(inside!.partial).toEqual({ commitLsn: first[0]!.source.commitLsn, emitted: first.length });
    // Checkpoint 1 never completes: the slot keeps everything, the next reader gets the transaction again.
    await r1.close!();
    expect(await confirmedFlush('midtx')).toBe(confirmedAtStart);

    const r2 = source.createReader({ ...ctx, attemptNumber: 1 });
    r2.addSplits([inside!]);
    r2.noMoreSplits();
    const rest: ChangeRecord[] = [];
    await pollUntil(r2, rest, 1500 - first.length);
    const out = collector(rest);
    for (const until = Date.now() + 300; Date.now() < until; ) if (r2.pollNext(out) === 'nothing') await sleep(10); // anything more would be a duplicate
    const ids = [...first, ...rest].map((c) => c.after!['id']);
    expect(ids).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
    expect(rest[0]!.source.seq).toBe(first.length + 1);

    expect(gauges.get('replicationLagMs')!()).toBe(0); // everything received is emitted
    const [done] = r2.snapshotState(2) as PostgresCdcSplit[];
    expect(done!.partial).toBeUndefined();
    expect(await confirmedFlush('midtx')).toBe(confirmedAtStart);
    await r2.notifyCheckpointComplete!(2);
    for (let i = 0; i < 100 && (await confirmedFlush('midtx')) !== done!.resumeLsn; i++) await sleep(20);
    expect(await confirmedFlush('midtx')).toBe(done!.resumeLsn);
    await r2.close!();
    await sql(server, "SELECT pg_drop_replication_slot('midtx')");
  });

  it("format 'debezium-json': Debezium's topics, keys and values; a key change is delete, tombstone, create", async () => {
    await sql(server, 'CREATE TABLE dbz (id int PRIMARY KEY, n bigint, amount numeric(10,2), flag bool, doc jsonb, ts timestamptz, t timestamp, d date, b bytea, big text)');
    const source = postgresCdcSource({ connection: server.connection, log: () => {}, slot: 'dbz', publication: 'dbz', createPublication: true, tables: ['dbz'], format: 'debezium-json', topicPrefix: 'shop' });
    const [split] = await source.createSplits(1);
    const reader = source.createReader(ctx);
    reader.addSplits([split!]);
    reader.noMoreSplits();
    await waitForSlot('dbz', true);
    const big = Array.from({ length: 40_000 }, (_, i) => ((i * 7919) % 9973).toString(36)).join('');
    await sql(server, "INSERT INTO dbz VALUES (1, 9007199254740993, 1.50, true, '{\"a\": 1}', '2026-12-07 20:50:10.123456+00', '2026-12-07 20:50:10.5', '1970-01-11', '\\x0102', $1)", [big]);
    await sql(server, 'UPDATE dbz SET n = n + 1 WHERE id = 1');
    await sql(server, 'UPDATE dbz SET id = 2 WHERE id = 1');
    await sql(server, 'DELETE FROM dbz WHERE id = 2');
    const messages: { topic: string; key: string | null; value: string | null }[] = [];
    await pollUntil(reader, messages, 7);
    await reader.close!();
    await sql(server, "SELECT pg_drop_replication_slot('dbz')");
    expect(messages.map((m) => m.topic)).toEqual(Array(7).fill('shop.public.dbz'));
    expect(messages.map((m) => m.key)).toEqual(['{"id":1}', '{"id":1}', '{"id":1}', '{"id":1}', '{"id":2}', '{"id":2}', '{"id":2}']);
    const values = messages.map((m) => (m.value === null ? null : (JSON.parse(m.value) as { op: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null; source: Record<string, unknown> })));
    expect(values.map((v) => v?.op ?? null)).toEqual(['c', 'u', 'd', null, 'c', 'd', null]);
    expect(messages[0]!.value).toContain('"n":9007199254740993,'); // int8 digits exact
    expect(values[0]!.after).toEqual({ id: 1, n: 9007199254740992, amount: '1.50', flag: true, doc: '{"a": 1}', ts: '2026-12-07T20:50:10.123456Z', t: 1796676610500000, d: 10, b: 'AQI=', big });
    expect(values[1]!.after!['big']).toBe('__debezium_unavailable_value');
    expect(values[2]!.before).toEqual({ id: 1 });
    expect(values[0]!.source).toMatchObject({ connector: 'postgresql', name: 'shop', db: 'postgres', schema: 'public', table: 'dbz', snapshot: 'false' });
    expect(typeof values[0]!.source['lsn']).toBe('number');
  });

  describe('start-time checks fail naming the setting and the fix', () => {
    const base = { slot: 'checks', publication: 'checks_pub', tables: ['checks_t'] };

    beforeAll(async () => {
      await sql(server, 'CREATE TABLE checks_t (id int PRIMARY KEY)');
      await sql(server, 'CREATE TABLE checks_nopk (v int)');
      await sql(server, 'CREATE PUBLICATION checks_pub FOR TABLE checks_t, checks_nopk');
    });

    it('wal_level not logical (the machine server), through a job: fails at start without restarts', async (t) => {
      const machine = await machineServer();
      const level = (await sql<{ wal_level: string }>(machine, 'SHOW wal_level'))[0]!.wal_level;
      if (level === 'logical') t.skip(); // the machine's server is the one with logical replication
      const env = StreamExecutionEnvironment.create({ 'restart-strategy.type': 'fixed-delay', 'restart-strategy.fixed-delay.attempts': 5 });
      env.fromSource(postgresCdcSource({ ...base, connection: machine.connection, log: () => {} }), 'cdc').sinkTo(new TxnStoreSink(new TxnStore()));
      await expect(env.execute()).rejects.toThrow(/wal_level is 'replica'.*needs wal_level = logical: ALTER SYSTEM SET wal_level = logical; then restart PostgreSQL/);
    });

    it('no REPLICATION attribute', async () => {
      await sql(server, 'CREATE ROLE cdc_plain LOGIN');
      await expect(postgresCdcSource(options({ ...base, connection: { ...server.connection, user: 'cdc_plain' } })).createSplits(1)).rejects.toThrow(
        /user 'cdc_plain' has no REPLICATION attribute.*ALTER ROLE "cdc_plain" WITH REPLICATION/,
      );
    });

    it('max_replication_slots exhausted', async () => {
      const n = Number((await sql<{ n: string }>(server, 'SELECT count(*) AS n FROM pg_replication_slots'))[0]!.n);
      const fillers = Array.from({ length: 4 - n }, (_, i) => `filler_${i}`);
      for (const f of fillers) await sql(server, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [f]);
      try {
        await expect(postgresCdcSource(options(base)).createSplits(1)).rejects.toThrow(/all replication slots are in use \(max_replication_slots = 4, 4 exist\): drop slots.*or raise max_replication_slots/);
      } finally {
        for (const f of fillers) await sql(server, 'SELECT pg_drop_replication_slot($1)', [f]);
      }
    });

    it('a slot of another plugin', async () => {
      await sql(server, "SELECT pg_create_logical_replication_slot('checks_td', 'test_decoding')");
      try {
        await expect(postgresCdcSource(options({ ...base, slot: 'checks_td' })).createSplits(1)).rejects.toThrow(/slot 'checks_td' uses the plugin 'test_decoding'; this source reads pgoutput: name another slot, or drop it/);
      } finally {
        await sql(server, "SELECT pg_drop_replication_slot('checks_td')");
      }
    });

    it('a missing slot with createSlot: false; a missing publication; a table the publication lacks', async () => {
      await expect(postgresCdcSource(options({ ...base, createSlot: false })).createSplits(1)).rejects.toThrow(/slot 'checks' does not exist: SELECT pg_create_logical_replication_slot\('checks', 'pgoutput'\)/);
      await expect(postgresCdcSource(options({ ...base, publication: 'nopub' })).createSplits(1)).rejects.toThrow(/publication 'nopub' does not exist: CREATE PUBLICATION "nopub" FOR TABLE "public"."checks_t"; or set createPublication: true/);
      await sql(server, 'CREATE TABLE checks_unpublished (id int PRIMARY KEY)');
      await expect(postgresCdcSource(options({ ...base, tables: ['checks_t', 'checks_unpublished'] })).createSplits(1)).rejects.toThrow(
        /does not publish checks_unpublished: ALTER PUBLICATION "checks_pub" ADD TABLE "public"."checks_unpublished"/,
      );
    });

    it('REPLICA IDENTITY: DEFAULT without a primary key; not FULL when before: full', async () => {
      await expect(postgresCdcSource(options({ ...base, tables: ['checks_nopk'] })).createSplits(1)).rejects.toThrow(/checks_nopk" has REPLICA IDENTITY DEFAULT but no primary key.*REPLICA IDENTITY FULL/);
      await expect(postgresCdcSource(options({ ...base, before: 'full' })).createSplits(1)).rejects.toThrow(/before: 'full' needs the whole old row, but table "public"."checks_t" has REPLICA IDENTITY DEFAULT: ALTER TABLE/);
    });

    it('startup at an LSN the slot no longer has; startup initial is not there yet', async () => {
      const source = postgresCdcSource(options(base));
      const [split] = await source.createSplits(1);
      expect(split!.resumeLsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      await expect(postgresCdcSource(options({ ...base, startup: { lsn: '0/10' } })).createSplits(1)).rejects.toThrow(/startup.lsn 0\/10 is before the confirmed flush position .* of slot 'checks'/);
      expect(() => postgresCdcSource(options({ ...base, startup: 'initial' as unknown as 'latest' }))).toThrow(/startup 'initial'.*not supported yet/);
      await sql(server, "SELECT pg_drop_replication_slot('checks')");
    });
  });
});
