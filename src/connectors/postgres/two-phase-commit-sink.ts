import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { TwoPhaseCommitSink, type TwoPhaseCommitContext, type TwoPhaseCommitState } from '../../api/two-phase-commit-sink.js';
import { checkPostgresSinkOptions, createPool, poolClient, quoteIdent, quoteLiteral, quoteTable, sqlState } from './connection.js';
import { pgFailure } from './pg-failures.js';
import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';
import type { PostgresConnectionOptions, TableName } from './options.js';
import { compileMapping, keyPositions, type CompiledMapping, type RowMapping } from './row-mapping.js';
import { describePgError, mapRecordOrDeadLetter, RowBuffer, RowStatements, writeRows } from './row-writer.js';
import type { PostgresDeadLetter } from './bad-record-error.js';
import { END_OF_INPUT_SUFFIX, checkPrefix, lingeringToRollBack, transactionId } from './transaction-ids.js';

export interface PostgresTwoPhaseCommitSinkOptions<T, C extends string> {
  /** Where to connect; unset parts come from the PG* environment variables. */
  readonly connection?: PostgresConnectionOptions;
  /** `table` or `schema.table` (taken literally, case-sensitive), or `{ schema, name }`. */
  readonly table: TableName;
  /** Record to row: `{ columns, toRow }` or `{ fields }`. */
  readonly row: RowMapping<T, C>;
  /**
   * Names the prepared transactions, `<prefix>-<subtask>-<checkpointId>`: one per job and sink,
   * never shared (a starting subtask rolls back the prepared transactions of its prefix that
   * its state does not hold). Letters, digits, `_ . : -`; at most 176 characters (PostgreSQL allows 199 in a gid).
   */
  readonly transactionalIdPrefix: string;
  /** With key columns, rows are upserted (`ON CONFLICT (key) DO UPDATE`); without, inserted. */
  readonly keyColumns?: readonly NoInfer<C>[];
  /** Columns overwritten on conflict; default every mapped non-key column. */
  readonly updateColumns?: readonly NoInfer<C>[];
  /** Rows per statement. Default 500. */
  readonly batchRows?: number;
  /**
   * The table where a transaction leaves its marker (gid and a random token), written inside
   * the prepared transaction, so a later commit tells "already committed" from "lost".
   * Created if missing. Default `sluice_prepared_transactions`.
   */
  readonly markerTable?: TableName;
  /**
   * Called with a record that cannot be written (the row mapping threw, or PostgreSQL refused the
   * row: SQLSTATE class 22 data exception or 23 constraint violation) and the error, instead of
   * failing the job (the default, naming the record). The other rows of the transaction are
   * written (a refused row is tried under a savepoint). Awaited before the checkpoint can
   * complete; if the transaction is later rolled back and replayed, it may be called again
   * for the same record (at-least-once).
   */
  readonly deadLetter?: PostgresDeadLetter<T>;
}

/**
 * A transaction of one subtask between two checkpoints, as kept in checkpoints (plain data).
 * `gid` is set in the copies kept for pre-committed transactions: the identifier it was
 * prepared under, or null when it had no records (nothing was prepared).
 */
export interface PostgresTransaction {
  readonly subtask: number;
  readonly parallelism: number;
  /** Random: the marker of a committed transaction carries it. */
  readonly token: string;
  readonly gid?: string | null;
}

type Phase = 'open' | 'preparing' | 'prepared' | 'aborted';

/** What this process knows of a transaction it began; gone once committed or aborted. */
interface LiveTransaction<T> {
  readonly txn: PostgresTransaction;
  readonly writer: WriterResources;
  readonly buffer: RowBuffer<T>;
  records: number;
  client: pg.PoolClient | undefined;
  phase: Phase;
  /** Known from the pre-commit on: the identifier, or null without records. */
  gid: string | null | undefined;
  /** PREPARE TRANSACTION was sent: from then on the connection is not cut (the gid would be left behind unnoticed). */
  prepareSent: boolean;
  /** Database operations of the transaction, one after the other. */
  queue: Promise<void>;
}

/** The connections and barrier of one writer (subtask and attempt). */
interface WriterResources {
  readonly subtask: number;
  readonly attempt: number;
  readonly pool: pg.Pool;
  readonly what: string;
  /** The checkpoint of the barrier being handled: the id of the transaction pre-committed now. */
  barrierCheckpointId: number | undefined;
  closed: boolean;
  /** Settles when the writer released everything. */
  done: Promise<void> | undefined;
}

const DEFAULT_MARKER_TABLE = 'sluice_prepared_transactions';
/** Markers older than this many checkpoints of the same subtask are deleted with the next transaction. */
const MARKER_RETENTION_CHECKPOINTS = 1000;

const TWO_PHASE_COMMIT_OPTION_NAMES = { connection: true, table: true, row: true, transactionalIdPrefix: true, keyColumns: true, updateColumns: true, batchRows: true, markerTable: true, deadLetter: true } as const satisfies Record<keyof PostgresTwoPhaseCommitSinkOptions<unknown, string>, true>;

/**
 * Exactly-once writes into PostgreSQL with prepared transactions (Flink's two-phase commit):
 * one database transaction per subtask and checkpoint. Records go into the open transaction
 * (its connection is taken at its first batch); at the checkpoint barrier the rest is
 * flushed and the transaction prepared, `PREPARE TRANSACTION '<prefix>-<subtask>-<checkpointId>'`
 * (the connection is then free again); when the checkpoint completes it is committed,
 * `COMMIT PREPARED`. Readers see a checkpoint's rows only once it completed, each once.
 *
 * After a restore, the prepared transactions of the restored checkpoint are committed again: a
 * gid that is no longer prepared is fine when its marker (written inside the transaction)
 * shows it committed, and an error ("lost") otherwise. Prepared transactions of the prefix
 * that the restored state does not hold are rolled back on start. Needs
 * `max_prepared_transactions` > 0 on the server.
 */
export class PostgresTwoPhaseCommitSink<T, C extends string = string> extends TwoPhaseCommitSink<T, PostgresTransaction> {
  private readonly options: PostgresTwoPhaseCommitSinkOptions<T, C>;
  private readonly mapping: CompiledMapping<T>;
  private readonly keys: number[] | undefined;
  private readonly stmts: RowStatements;
  private readonly prefix: string;
  private readonly markerTable: string;
  private readonly live = new Map<string, LiveTransaction<T>>();
  /** Writers of this sink in this process, by subtask and attempt. */
  private readonly writers = new Map<string, WriterResources>();
  /** Commits under way by gid. */
  private readonly committing = new Map<string, Promise<void>>();
  private markerTableReady: Promise<void> | undefined;

  constructor(options: PostgresTwoPhaseCommitSinkOptions<T, C>) {
    super();
    const what = 'PostgreSQL two-phase-commit sink';
    checkPostgresSinkOptions(what, options, TWO_PHASE_COMMIT_OPTION_NAMES);
    this.options = options;
    checkPrefix(options.transactionalIdPrefix, what);
    this.prefix = options.transactionalIdPrefix;
    this.mapping = compileMapping(options.row, what);
    this.keys = options.keyColumns === undefined ? undefined : keyPositions(this.mapping.columns, options.keyColumns, what);
    const batchRows = options.batchRows ?? 500;
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`${what}: batchRows must be an integer >= 1, got ${options.batchRows}`);
    this.stmts = new RowStatements(
      {
        table: quoteTable(options.table),
        columns: this.mapping.columns,
        ...(options.keyColumns === undefined ? {} : { keyColumns: options.keyColumns }),
        ...(options.updateColumns === undefined ? {} : { updateColumns: options.updateColumns }),
      },
      batchRows,
    );
    this.markerTable = quoteTable(options.markerTable ?? DEFAULT_MARKER_TABLE);
  }

  override async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    const what = `PostgreSQL two-phase-commit sink '${this.prefix}' (subtask ${ctx.subtaskIndex})`;
    // Earlier attempts of this subtask in this process can no longer reach a completed checkpoint.
    await Promise.all([...this.writers.values()].filter((w) => w.subtask === ctx.subtaskIndex).map((w) => this.release(w)));
    const writer: WriterResources = {
      subtask: ctx.subtaskIndex,
      attempt: ctx.attemptNumber,
      pool: createPool(this.options.connection ?? {}, 4),
      what,
      barrierCheckpointId: undefined,
      closed: false,
      done: undefined,
    };
    this.writers.set(writerKey(ctx.subtaskIndex, ctx.attemptNumber), writer);
    try {
      await this.checkServer(writer);
      await this.recover(writer, ctx, restoredState as readonly TwoPhaseCommitState<PostgresTransaction>[]);
    } catch (e) {
      await this.release(writer);
      throw e;
    }
    // Recovery is done: the base class starts with nothing pending.
    const inner = await super.createWriter(ctx, []);
    return new PostgresTwoPhaseWriter<T>(inner, writer, this.live, () => this.release(writer));
  }

  beginTransaction(ctx: TwoPhaseCommitContext): PostgresTransaction {
    const writer = this.writers.get(writerKey(ctx.subtaskIndex, ctx.attemptNumber));
    if (writer === undefined) throw new Error(`PostgreSQL two-phase-commit sink: no writer for subtask ${ctx.subtaskIndex} (attempt ${ctx.attemptNumber})`);
    const txn: PostgresTransaction = { subtask: ctx.subtaskIndex, parallelism: ctx.parallelism, token: randomUUID() };
    this.live.set(txn.token, { txn, writer, buffer: new RowBuffer<T>(this.keys), records: 0, client: undefined, phase: 'open', gid: undefined, prepareSent: false, queue: Promise.resolve() });
    return txn;
  }

  invoke(txn: PostgresTransaction, value: T): void | Promise<void> {
    const t = this.liveOrThrow(txn, 'write to');
    if (t.phase !== 'open') throw new Error(`${t.writer.what}: write to a transaction that is ${t.phase}`);
    const row = mapRecordOrDeadLetter(this.mapping, value, t.writer.what, this.options.deadLetter, this.keys);
    if (row === undefined || row instanceof Promise) return row;
    t.buffer.add(value, row);
    t.records++;
    if (t.buffer.size >= this.stmts.maxRows) return this.enqueue(t, () => this.flushBuffer(t));
  }

  /**
   * Flushes and prepares the transaction. Its identifier is fixed synchronously (the barrier's
   * checkpoint id), before the writer's state is snapshotted.
   */
  preCommit(txn: PostgresTransaction): Promise<void> {
    const t = this.liveOrThrow(txn, 'pre-commit');
    if (t.phase !== 'open') throw new Error(`${t.writer.what}: pre-commit of a transaction that is ${t.phase}`);
    const checkpointId = t.writer.barrierCheckpointId ?? END_OF_INPUT_SUFFIX;
    t.writer.barrierCheckpointId = undefined;
    t.phase = 'preparing';
    t.gid = t.records === 0 ? null : transactionId(this.prefix, txn.subtask, checkpointId);
    const gid = t.gid;
    return this.enqueue(t, async () => {
      if (gid === null) {
        t.phase = 'prepared';
        return;
      }
      await this.flushBuffer(t);
      const client = t.client;
      if (isAborted(t)) return;
      if (client === undefined) throw new Error(`${t.writer.what}: transaction '${gid}' has ${t.records} records but no connection`);
      const markerCheckpoint = checkpointId === END_OF_INPUT_SUFFIX ? -1 : checkpointId;
      try {
        await client.query(
          `WITH old AS (DELETE FROM ${this.markerTable} WHERE prefix = $3 AND subtask = $4 AND checkpoint_id < $6) ` +
            `INSERT INTO ${this.markerTable} (gid, token, prefix, subtask, checkpoint_id) VALUES ($1, $2, $3, $4, $5) ` +
            `ON CONFLICT (gid) DO UPDATE SET token = EXCLUDED.token, checkpoint_id = EXCLUDED.checkpoint_id, prepared_at = now()`,
          [gid, txn.token, this.prefix, txn.subtask, markerCheckpoint, markerCheckpoint - MARKER_RETENTION_CHECKPOINTS],
        );
        t.prepareSent = true;
        await client.query(`PREPARE TRANSACTION ${quoteLiteral(gid)}`);
      } catch (e) {
        throw pgFailure(`${t.writer.what}: PREPARE TRANSACTION '${gid}' failed: ${describePgError(e)}${preparedTransactionsHint(e)}`, e);
      }
      t.client = undefined;
      client.release();
      if (isAborted(t)) {
        // The writer closed while this was under way: no checkpoint can hold it any more.
        await this.rollbackPrepared(t.writer, gid);
        return;
      }
      t.phase = 'prepared';
    });
  }

  /** `COMMIT PREPARED`; idempotent: a gid that was committed before (its marker says so) is fine. */
  commit(txn: PostgresTransaction): Promise<void> {
    const t = this.liveOrThrow(txn, 'commit');
    return (async () => {
      await t.queue;
      if (t.phase !== 'prepared') throw new Error(`${t.writer.what}: commit of a transaction that is ${t.phase}`);
      if (t.gid !== null && t.gid !== undefined) await this.commitPrepared(t.writer, t.gid, txn.token);
      this.live.delete(txn.token);
    })();
  }

  /** Rolls the transaction back: the open one on its connection, a prepared one by its gid. */
  abort(txn: PostgresTransaction): Promise<void> {
    const t = this.live.get(txn.token);
    if (t === undefined) return Promise.resolve();
    const wasPrepared = t.phase === 'prepared';
    t.phase = 'aborted';
    this.live.delete(txn.token);
    return this.enqueue(t, async () => {
      if (wasPrepared && typeof t.gid === 'string') await this.rollbackPrepared(t.writer, t.gid);
      releaseAborted(t);
    });
  }

  private liveOrThrow(txn: PostgresTransaction, what: string): LiveTransaction<T> {
    const t = this.live.get(txn.token);
    if (t === undefined) throw new Error(`PostgreSQL two-phase-commit sink '${this.prefix}': ${what} transaction ${txn.token} of subtask ${txn.subtask}, which this process did not begin or already ended`);
    return t;
  }

  private enqueue(t: LiveTransaction<T>, op: () => Promise<void>): Promise<void> {
    const p = t.queue.then(op);
    t.queue = p.catch(() => {});
    return p;
  }

  private async flushBuffer(t: LiveTransaction<T>): Promise<void> {
    if (t.phase === 'aborted' || t.buffer.size === 0) return;
    if (t.client === undefined) {
      const client = await poolClient(t.writer.pool, t.writer.what);
      if (isAborted(t)) {
        client.release();
        return;
      }
      t.client = client;
      await client.query('BEGIN');
    }
    await writeRows(t.client, this.stmts, t.buffer.take(), { what: t.writer.what, inTransaction: true, deadLetter: this.options.deadLetter });
  }

  private async commitPrepared(writer: WriterResources, gid: string, token: string): Promise<void> {
    // A commit of the same gid under way (e.g. by the attempt that failed) finishes first.
    await this.committing.get(gid)?.catch(() => {});
    const p = this.commitPreparedOnce(writer, gid, token);
    this.committing.set(gid, p);
    try {
      await p;
    } finally {
      if (this.committing.get(gid) === p) this.committing.delete(gid);
    }
  }

  private async commitPreparedOnce(writer: WriterResources, gid: string, token: string): Promise<void> {
    const client = await poolClient(writer.pool, writer.what);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query(`COMMIT PREPARED ${quoteLiteral(gid)}`);
          return;
        } catch (e) {
          const state = sqlState(e);
          if (state === '42704') {
            // Not prepared (any more): committed before, or lost.
            const r = await client.query<{ token: string }>(`SELECT token FROM ${this.markerTable} WHERE gid = $1`, [gid]);
            const marker = r.rows[0]?.token;
            if (marker === token) return;
            throw new Error(
              `${writer.what}: prepared transaction '${gid}' is neither prepared nor committed ` +
                (marker === undefined
                  ? 'and left no commit marker'
                  : `(the marker of '${gid}' belongs to another transaction: another job or an earlier run uses transactionalIdPrefix '${this.prefix}')`) +
                `: it was rolled back outside this job (ROLLBACK PREPARED by hand or by another job with the same prefix); its records are lost`,
              { cause: e },
            );
          }
          // Another session is committing or rolling back the same gid right now.
          if (state === '55000' && attempt < 50) {
            await new Promise((r) => setTimeout(r, 20));
            continue;
          }
          throw pgFailure(`${writer.what}: COMMIT PREPARED '${gid}' failed: ${describePgError(e)}`, e);
        }
      }
    } finally {
      client.release();
    }
  }

  private async rollbackPrepared(writer: WriterResources, gid: string): Promise<void> {
    const client = await poolClient(writer.pool, writer.what);
    try {
      await client.query(`ROLLBACK PREPARED ${quoteLiteral(gid)}`);
    } catch (e) {
      if (sqlState(e) !== '42704') throw pgFailure(`${writer.what}: ROLLBACK PREPARED '${gid}' failed: ${describePgError(e)}`, e);
    } finally {
      client.release();
    }
  }

  /** Prepared transactions must be enabled; the marker table must exist. */
  private async checkServer(writer: WriterResources): Promise<void> {
    const client = await poolClient(writer.pool, writer.what);
    try {
      const r = await client.query<{ max_prepared_transactions: string }>('SHOW max_prepared_transactions');
      const max = Number(r.rows[0]?.max_prepared_transactions ?? '0');
      if (max === 0) {
        // A restart finds the same server: the setting takes effect only when the server restarts.
        throw new NonRecoverableError(
          `${writer.what}: the PostgreSQL server at ${describeServer(client)} has max_prepared_transactions = 0, so PREPARE TRANSACTION is disabled. ` +
            `Enable it as a superuser with ALTER SYSTEM SET max_prepared_transactions = 100; (at least parallelism x 2 for each job using this sink, ` +
            `and no less than max_connections is the usual choice) and restart the server (the setting takes effect only at server start). ` +
            `Or write with PostgresUpsertSink or PostgresWriteAheadSink, which need no prepared transactions.`,
        );
      }
    } finally {
      client.release();
    }
    this.markerTableReady ??= this.createMarkerTable(writer).catch((e: unknown) => {
      this.markerTableReady = undefined;
      throw e;
    });
    await this.markerTableReady;
  }

  private async createMarkerTable(writer: WriterResources): Promise<void> {
    const client = await poolClient(writer.pool, writer.what);
    const name = this.options.markerTable ?? DEFAULT_MARKER_TABLE;
    const indexName = quoteIdent(`${typeof name === 'string' ? name.split('.').pop()! : name.name}_subtask_idx`.slice(0, 63));
    try {
      // Only when missing: CREATE INDEX would wait for the prepared transactions that wrote markers.
      const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [this.markerTable]);
      if (exists.rows[0]?.t !== null && exists.rows[0]?.t !== undefined) return;
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query('BEGIN');
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${this.markerTable} (gid text PRIMARY KEY, token text NOT NULL, prefix text NOT NULL, ` +
              `subtask integer NOT NULL, checkpoint_id bigint NOT NULL, prepared_at timestamptz NOT NULL DEFAULT now())`,
          );
          await client.query(`CREATE INDEX IF NOT EXISTS ${indexName} ON ${this.markerTable} (prefix, subtask, checkpoint_id)`);
          await client.query('COMMIT');
          return;
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          // Another job created it at the same moment.
          if ((sqlState(e) === '23505' || sqlState(e) === '42P07') && attempt < 3) continue;
          throw pgFailure(`${writer.what}: creating the marker table ${this.markerTable} failed: ${describePgError(e)}`, e);
        }
      }
    } finally {
      client.release();
    }
  }

  /**
   * Commits the pre-committed transactions of the restored state, then rolls back the prepared
   * transactions of the prefix this subtask is responsible for that the state does not hold.
   * The transaction open at the restored checkpoint was never prepared: its connection is
   * gone and the server rolled it back.
   */
  private async recover(writer: WriterResources, ctx: SinkWriterContext, restored: readonly TwoPhaseCommitState<PostgresTransaction>[]): Promise<void> {
    const keep = new Set<string>();
    const restoredSubtasks: number[] = [];
    let restoredParallelism: number | undefined;
    for (const s of restored) {
      for (const [checkpointId, txn] of s.pending) {
        restoredSubtasks.push(txn.subtask);
        restoredParallelism = txn.parallelism;
        if (txn.gid === undefined) throw new Error(`${writer.what}: the restored transaction of checkpoint ${checkpointId} has no identifier (state written by another sink?)`);
        if (txn.gid === null) continue;
        keep.add(txn.gid);
        await this.commitPrepared(writer, txn.gid, txn.token);
      }
      if (s.current !== undefined) {
        restoredSubtasks.push(s.current.subtask);
        restoredParallelism = s.current.parallelism;
      }
    }
    const client = await poolClient(writer.pool, writer.what);
    let prepared: string[];
    try {
      const r = await client.query<{ gid: string }>('SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND left(gid, $2) = $1', [
        `${this.prefix}-`,
        this.prefix.length + 1,
      ]);
      prepared = r.rows.map((x) => x.gid);
    } finally {
      client.release();
    }
    const rollBack = lingeringToRollBack({
      prefix: this.prefix,
      prepared,
      subtask: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      restoredSubtasks,
      restoredParallelism,
      keep,
    });
    for (const gid of rollBack) await this.rollbackPrepared(writer, gid);
  }

  /** The writer is done (closed, failed, or replaced by a newer attempt): abort its open work, wait, close its connections. */
  private release(writer: WriterResources): Promise<void> {
    if (writer.done !== undefined) return writer.done;
    writer.closed = true;
    writer.done = (async () => {
      const waits: Promise<void>[] = [];
      for (const t of [...this.live.values()]) {
        if (t.writer !== writer) continue;
        if (t.phase === 'open' || t.phase === 'preparing') {
          t.phase = 'aborted';
          this.live.delete(t.txn.token);
          if (t.prepareSent) {
            // Rolled back when its PREPARE returns (see preCommit).
            waits.push(t.queue);
          } else {
            // Cut the connection at once, without waiting: a statement of it may be waiting for
            // a row lock of a prepared transaction that only the next attempt commits. The
            // server rolls the transaction back; its PREPARE is never sent.
            const client = t.client;
            t.client = undefined;
            client?.release(true);
          }
        } else {
          // Prepared: kept for recovery (a restored checkpoint may hold it); forget it here.
          waits.push(t.queue);
          this.live.delete(t.txn.token);
        }
      }
      await Promise.all(waits);
      await Promise.all([...this.committing.values()].map((p) => p.catch(() => {})));
      for (const [k, w] of this.writers) if (w === writer) this.writers.delete(k);
      await writer.pool.end().catch(() => {});
    })();
    return writer.done;
  }
}

/** Whether the transaction was aborted (read after an await: another path may have set it). */
function isAborted<T>(t: LiveTransaction<T>): boolean {
  return t.phase === 'aborted';
}

/** An aborted transaction's connection: rolled back and returned, or dropped when that fails. */
function releaseAborted<T>(t: LiveTransaction<T>): void {
  const client = t.client;
  t.client = undefined;
  if (client === undefined) return;
  client.query('ROLLBACK').then(
    () => client.release(),
    () => client.release(true),
  );
}

function preparedTransactionsHint(e: unknown): string {
  const msg = (e as Error).message ?? '';
  if (/prepared transactions are disabled/i.test(msg)) return ' (set max_prepared_transactions > 0: ALTER SYSTEM SET max_prepared_transactions = 100; then restart the server)';
  if (/maximum number of prepared transactions reached/i.test(msg)) return ' (raise max_prepared_transactions: ALTER SYSTEM SET max_prepared_transactions = <more>; then restart the server)';
  return '';
}

function describeServer(c: pg.ClientBase): string {
  const p = c as unknown as { host?: string; port?: number; database?: string };
  return `${p.host ?? '?'}:${p.port ?? '?'} (database ${p.database ?? '?'})`;
}

function writerKey(subtask: number, attempt: number): string {
  return `${subtask}/${attempt}`;
}

/**
 * The base class's writer, plus: the barrier's checkpoint id handed to `preCommit` (it names the
 * prepared transaction), identifiers in the snapshot of pre-committed transactions,
 * notifications one at a time, and `close` releasing the connections.
 */
class PostgresTwoPhaseWriter<T> implements SinkWriter<T> {
  private notifications: Promise<void> = Promise.resolve();

  constructor(
    private readonly inner: SinkWriter<T>,
    private readonly writer: WriterResources,
    private readonly live: ReadonlyMap<string, LiveTransaction<T>>,
    private readonly onClosed: () => Promise<void>,
  ) {}

  write(value: T, timestampMs: number | undefined): void | Promise<void> {
    return this.inner.write(value, timestampMs);
  }

  flush(endOfInput: boolean): void | Promise<void> {
    return this.inner.flush?.(endOfInput);
  }

  prepareCommit(checkpointId: number): void | Promise<void> {
    this.writer.barrierCheckpointId = checkpointId;
    try {
      return this.inner.prepareCommit?.(checkpointId);
    } finally {
      this.writer.barrierCheckpointId = undefined;
    }
  }

  snapshotState(checkpointId: number): unknown[] {
    const states = (this.inner.snapshotState?.(checkpointId) ?? []) as TwoPhaseCommitState<PostgresTransaction>[];
    return states.map((s): TwoPhaseCommitState<PostgresTransaction> => ({
      pending: s.pending.map(([id, txn]) => {
        const t = this.live.get(txn.token);
        if (t === undefined || t.gid === undefined) throw new Error(`${this.writer.what}: snapshot of checkpoint ${checkpointId}: pre-committed transaction of checkpoint ${id} is unknown`);
        return [id, { ...txn, gid: t.gid }];
      }),
      current: s.current,
    }));
  }

  notifyCheckpointComplete(checkpointId: number): Promise<void> {
    const p = this.notifications.then(() => this.inner.notifyCheckpointComplete?.(checkpointId));
    this.notifications = p.catch(() => {});
    return p;
  }

  async close(): Promise<void> {
    // First stop what can no longer commit (synchronously), then let commits under way finish.
    const released = this.onClosed();
    try {
      await this.notifications;
    } finally {
      await released;
    }
  }
}

