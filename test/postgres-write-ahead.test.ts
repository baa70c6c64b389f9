import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { SinkWriter, SinkWriterContext } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { PostgresWriteAheadSink } from '../src/connectors/postgres/write-ahead-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { machineServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';

const KEYS = 7;

/**
 * The window between writing and marking: in this sink the records and the marker commit in
 * one transaction, so what is left is a failure after the database committed and before the
 * job learned of it (the writer still holds the checkpoint's records, and the restored state
 * holds them too). This sink fails right there, at the planned writes.
 */
class CrashAfterCommitSink<T, C extends string> extends PostgresWriteAheadSink<T, C> {
  private writes = 0;
  readonly fired: string[] = [];

  constructor(
    options: ConstructorParameters<typeof PostgresWriteAheadSink<T, C>>[0],
    private readonly crashAtWrites: Set<number>,
  ) {
    super(options);
  }

  override async sendValues(values: readonly T[], checkpointId: number, subtask: number): Promise<boolean> {
    const r = await super.sendValues(values, checkpointId, subtask);
    const n = ++this.writes;
    if (this.crashAtWrites.delete(n)) {
      this.fired.push(`write #${n} (subtask ${subtask}, checkpoint ${checkpointId})`);
      throw new Error(`injected failure after the database committed checkpoint ${checkpointId} of subtask ${subtask}`);
    }
    return r;
  }
}

describe('PostgresWriteAheadSink against the machine server', () => {
  let server: PostgresServer;
  const tables: string[] = [];

  beforeAll(async () => {
    server = await machineServer();
    console.log(`PostgreSQL for the write-ahead tests: ${server.description}`);
  });

  afterAll(async () => {
    for (const t of tables) await sql(server, `DROP TABLE IF EXISTS ${t}`).catch(() => {});
    await server?.stop();
  });

  async function createTable(base: string, columns = 'rec text NOT NULL'): Promise<string> {
    const table = uniqueTableName(base);
    await sql(server, `CREATE TABLE ${table} (${columns})`);
    tables.push(table);
    return table;
  }

  async function recordsOf(table: string): Promise<string[]> {
    return (await sql<{ rec: string }>(server, `SELECT rec FROM ${table}`)).map((r) => r.rec);
  }

  const options = (table: string, sinkId = table) => ({
    connection: server.connection,
    table,
    row: { columns: ['rec'] as const, toRow: (r: string) => [r] },
    sinkId,
    batchRows: 150,
  });

  for (const parallelism of [1, 3]) {
    it(`keyed job, parallelism ${parallelism}: failures before writing, after the database committed, and at records: no duplicate, no loss`, { timeout: 60_000 }, async () => {
      const records = 12_000;
      const seed = Number(process.env['SLUICE_SEED'] ?? 8_200 + parallelism);
      const plan = FaultPlan.seeded({ seed, recordFaults: 5, recordRange: records, commitFaults: 2, checkpointRange: 4 });
      const table = await createTable('wa_job');
      const sink = new CrashAfterCommitSink<string, 'rec'>(options(table), new Set([2, 4]));
      console.log(`write-ahead sink, parallelism ${parallelism}: ${plan.describe()}, and after the database committed writes #2 and #4`);
      const logs: string[] = [];
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': parallelism,
        'execution.checkpointing.interval': 30,
        'restart-strategy.type': 'fixed-delay',
        'restart-strategy.fixed-delay.attempts': 50,
        'restart-strategy.fixed-delay.delay': 5,
      });
      env
        .fromSource(numberSource({ count: records, eventsPerSecond: 20_000 }), 'numbers')
        .process(plan.failingProcess<number>())
        .name('faults')
        .keyBy((n) => n % KEYS)
        .process(new CountPerKey())
        .uid('count')
        .sinkTo(plan.wrapSink(sink), 'postgres write-ahead');
      const result = await env.executeAsync(undefined, { log: (m) => logs.push(m) }).result;
      const what = `${plan.describe()}; ${sink.fired.join(', ')}\n${logs.join('\n')}`;
      const committed = await recordsOf(table);
      expect(compareMultisets(committed, countReference(records, KEYS)), what).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      expect(committed.length, what).toBe(records);
      expect(sink.fired.length, what).toBe(2);
      expect(plan.fired.length, what).toBe(plan.faults.length);
      expect(result.numRestarts, what).toBeGreaterThanOrEqual(5);
    });
  }

  const ctx = (subtaskIndex: number, attemptNumber = 0): SinkWriterContext => ({ subtaskIndex, parallelism: 1, attemptNumber, checkpointing: true });

  function checkpoint(w: SinkWriter<string>, values: string[], id: number): unknown[] {
    for (const v of values) void w.write(v, undefined);
    void w.prepareCommit?.(id);
    return w.snapshotState!(id);
  }

  it('records are written when their checkpoint completes; a restored state whose checkpoint was written is not written again', async () => {
    const table = await createTable('wa_replay');
    const w1 = await new PostgresWriteAheadSink<string, 'rec'>(options(table)).createWriter(ctx(0), []);
    const s1 = checkpoint(w1, ['a', 'b'], 1);
    expect(JSON.parse(JSON.stringify(s1))).toEqual(s1); // plain data
    expect(await recordsOf(table)).toEqual([]);
    await w1.notifyCheckpointComplete!(1);
    expect((await recordsOf(table)).sort()).toEqual(['a', 'b']);
    // The process dies before it learns that the write committed; another one restores checkpoint 1, twice.
    await w1.close!();
    for (const attempt of [1, 2]) {
      const w = await new PostgresWriteAheadSink<string, 'rec'>(options(table)).createWriter(ctx(0, attempt), s1);
      expect((await recordsOf(table)).sort()).toEqual(['a', 'b']);
      await w.close!();
    }
  });

  it('a restored checkpoint that was not written yet is written at start, once', async () => {
    const table = await createTable('wa_pending');
    const w1 = await new PostgresWriteAheadSink<string, 'rec'>(options(table)).createWriter(ctx(0), []);
    const s1 = checkpoint(w1, ['a'], 1);
    const s2 = checkpoint(w1, ['b'], 2);
    await w1.close!(); // checkpoint 2 completed, nobody was notified
    expect(await recordsOf(table)).toEqual([]);
    const w2 = await new PostgresWriteAheadSink<string, 'rec'>(options(table)).createWriter(ctx(0, 1), s2);
    expect((await recordsOf(table)).sort()).toEqual(['a', 'b']);
    await w2.close!();
    // An older checkpoint restored later (e.g. the newest could not be read): its records are marked.
    const w3 = await new PostgresWriteAheadSink<string, 'rec'>(options(table)).createWriter(ctx(0, 2), s1);
    expect((await recordsOf(table)).sort()).toEqual(['a', 'b']);
    await w3.close!();
  });

  it('a new run of the job (checkpoint ids from 1 again, nothing restored) is not mistaken for a replay', async () => {
    const table = await createTable('wa_runs');
    for (const run of ['first', 'second']) {
      const w = await new PostgresWriteAheadSink<string, 'rec'>(options(table, `${table}-job`)).createWriter(ctx(0), []);
      checkpoint(w, [`${run} run`], 1);
      await w.notifyCheckpointComplete!(1);
      await w.close!();
    }
    expect((await recordsOf(table)).sort()).toEqual(['first run', 'second run']);
  });

  it('without checkpointing, the records are written at the end of input, once also after a restart from scratch', async () => {
    const table = await createTable('wa_nocp');
    const sink = new PostgresWriteAheadSink<string, 'rec'>(options(table));
    for (const attempt of [0, 1]) {
      const w = await sink.createWriter({ subtaskIndex: 0, parallelism: 1, attemptNumber: attempt, checkpointing: false }, []);
      for (const v of ['x', 'y']) void w.write(v, undefined);
      await w.flush!(true);
      await w.close!();
    }
    expect((await recordsOf(table)).sort()).toEqual(['x', 'y']);
  });
});
