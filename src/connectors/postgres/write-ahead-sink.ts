import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { WriteAheadSink, type PendingCheckpointValues } from '../../api/write-ahead-sink.js';
import { checkPostgresSinkOptions, createPool, poolClient, quoteTable, sqlState } from './connection.js';
import { pgFailure } from './pg-failures.js';
import type { PostgresConnectionOptions, TableName } from './options.js';
import { compileMapping, keyPositions, type CompiledMapping, type RowMapping } from './row-mapping.js';
import { describePgError, mapRecordOrDeadLetter, RowBuffer, RowStatements, writeRows } from './row-writer.js';
import type { PostgresDeadLetter } from './bad-record-error.js';

export interface PostgresWriteAheadSinkOptions<T, C extends string> {
  /** Where to connect; unset parts come from the PG* environment variables. */
  readonly connection?: PostgresConnectionOptions;
  /** `table` or `schema.table` (taken literally, case-sensitive), or `{ schema, name }`. */
  readonly table: TableName;
  /** Record to row: `{ columns, toRow }` or `{ fields }`. */
  readonly row: RowMapping<T, C>;
  /** Names this sink in the marker table: one per job and sink. */
  readonly sinkId: string;
  /** With key columns, rows are upserted (`ON CONFLICT (key) DO UPDATE`); without, inserted. */
  readonly keyColumns?: readonly NoInfer<C>[];
  /** Columns overwritten on conflict; default every mapped non-key column. */
  readonly updateColumns?: readonly NoInfer<C>[];
  /** Rows per statement. Default 500. */
  readonly batchRows?: number;
  /** Where written checkpoints are marked; created if missing. Default `sluice_write_ahead_checkpoints`. */
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

/** A pending checkpoint as this sink keeps it in state: with the run whose writer took it. */
type TaggedValues<T> = PendingCheckpointValues<T> & { readonly runId?: string };

/** Markers older than this many checkpoints of the same subtask and run are deleted with the next write. */
const MARKER_RETENTION_CHECKPOINTS = 1000;

const WRITE_AHEAD_OPTION_NAMES = { connection: true, table: true, row: true, sinkId: true, keyColumns: true, updateColumns: true, batchRows: true, markerTable: true, deadLetter: true } as const satisfies Record<keyof PostgresWriteAheadSinkOptions<unknown, string>, true>;

/**
 * Flink's write-ahead sink into PostgreSQL (E4), for tables where prepared transactions are
 * not wanted: the records of a checkpoint are kept in the checkpoint (so they must be plain
 * data) and written when it completes, in one transaction together with a marker row
 * (sink id, run, subtask, checkpoint id) in the marker table. A replay consults the marker in
 * that same transaction and writes a checkpoint's records only if it is not marked, so no
 * record is written twice, also when a failure falls between the database's commit and the
 * job learning of it. Readers see the records of a checkpoint after it completed.
 *
 * Markers carry a random id of the run that took the checkpoint (kept with the records in
 * state), so a new run of the same job, whose checkpoint ids start at 1 again, is not
 * mistaken for a replay.
 */
export class PostgresWriteAheadSink<T, C extends string = string> extends WriteAheadSink<T> {
  private readonly options: PostgresWriteAheadSinkOptions<T, C>;
  private readonly mapping: CompiledMapping<T>;
  private readonly keys: number[] | undefined;
  private readonly stmts: RowStatements;
  private readonly markerTable: string;
  private readonly what: string;
  /** This run (this sink object): restarts in this process keep it, a new run gets another. */
  private readonly runId = randomUUID();
  /** The run of restored pending checkpoints, by subtask and checkpoint id. */
  private readonly runOf = new Map<string, string>();
  private pool: pg.Pool | undefined;
  private openWriters = 0;
  private markerTableReady: Promise<void> | undefined;

  constructor(options: PostgresWriteAheadSinkOptions<T, C>) {
    // sendValues checks and writes the marker in the records' transaction: nothing is known committed before.
    super({ isCheckpointCommitted: () => false, commitCheckpoint: () => {} });
    checkPostgresSinkOptions('PostgreSQL write-ahead sink', options, WRITE_AHEAD_OPTION_NAMES);
    this.what = `PostgreSQL write-ahead sink '${options.sinkId}'`;
    if (typeof options.sinkId !== 'string' || options.sinkId.length === 0) throw new Error('PostgreSQL write-ahead sink: sinkId is required (one per job and sink: it names the sink in the marker table)');
    this.options = options;
    this.mapping = compileMapping(options.row, this.what);
    this.keys = options.keyColumns === undefined ? undefined : keyPositions(this.mapping.columns, options.keyColumns, this.what);
    const batchRows = options.batchRows ?? 500;
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`${this.what}: batchRows must be an integer >= 1, got ${options.batchRows}`);
    this.stmts = new RowStatements(
      {
        table: quoteTable(options.table),
        columns: this.mapping.columns,
        ...(options.keyColumns === undefined ? {} : { keyColumns: options.keyColumns }),
        ...(options.updateColumns === undefined ? {} : { updateColumns: options.updateColumns }),
      },
      batchRows,
    );
    this.markerTable = quoteTable(options.markerTable ?? 'sluice_write_ahead_checkpoints');
  }

  override async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    this.openWriters++;
    let inner: SinkWriter<T>;
    try {
      this.pool ??= createPool(this.options.connection ?? {}, 4);
      this.markerTableReady ??= this.createMarkerTable().catch((e: unknown) => {
        this.markerTableReady = undefined;
        throw e;
      });
      await this.markerTableReady;
      for (const p of restoredState as readonly TaggedValues<T>[]) this.runOf.set(valuesKey(p.subtask, p.checkpointId), p.runId ?? this.runId);
      // Writes the restored checkpoints that are not marked yet.
      inner = await super.createWriter(ctx, restoredState);
    } catch (e) {
      await this.writerClosed();
      throw e;
    }
    return {
      write: (v, t) => inner.write(v, t),
      flush: (end) => inner.flush?.(end),
      prepareCommit: (id) => inner.prepareCommit?.(id),
      snapshotState: (id) =>
        (inner.snapshotState?.(id) ?? []).map((x) => {
          const p = x as TaggedValues<T>;
          return { ...p, runId: p.runId ?? this.runOf.get(valuesKey(p.subtask, p.checkpointId)) ?? this.runId };
        }),
      notifyCheckpointComplete: (id) => inner.notifyCheckpointComplete?.(id),
      notifyCheckpointAborted: (id) => inner.notifyCheckpointAborted?.(id),
      close: async () => {
        try {
          await inner.close?.();
        } finally {
          await this.writerClosed();
        }
      },
    };
  }

  /** Writes the records and the marker in one transaction, unless the marker is there already. */
  async sendValues(values: readonly T[], checkpointId: number, subtask: number): Promise<boolean> {
    const key = valuesKey(subtask, checkpointId);
    const runId = this.runOf.get(key) ?? this.runId;
    const what = `${this.what} (subtask ${subtask}, checkpoint ${checkpointId})`;
    const pool = this.pool;
    if (pool === undefined) throw new Error(`${what}: no open writer`);
    const client = await poolClient(pool, what);
    let ok = false;
    try {
      await client.query('BEGIN');
      // Waits for a transaction writing the same checkpoint (an earlier attempt) to end.
      const marked = await client.query(
        `INSERT INTO ${this.markerTable} (sink_id, run_id, subtask, checkpoint_id, records) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [this.options.sinkId, runId, subtask, checkpointId, values.length],
      );
      if (marked.rowCount === 0) {
        await client.query('ROLLBACK');
      } else {
        const buffer = new RowBuffer<T>(this.keys);
        for (const v of values) {
          const row = await mapRecordOrDeadLetter(this.mapping, v, what, this.options.deadLetter, this.keys);
          if (row === undefined) continue;
          buffer.add(v, row);
          if (buffer.size >= this.stmts.maxRows) await writeRows(client, this.stmts, buffer.take(), { what, inTransaction: true, deadLetter: this.options.deadLetter });
        }
        if (buffer.size > 0) await writeRows(client, this.stmts, buffer.take(), { what, inTransaction: true, deadLetter: this.options.deadLetter });
        await client.query(`DELETE FROM ${this.markerTable} WHERE sink_id = $1 AND run_id = $2 AND subtask = $3 AND checkpoint_id < $4`, [
          this.options.sinkId,
          runId,
          subtask,
          checkpointId - MARKER_RETENTION_CHECKPOINTS,
        ]);
        await client.query('COMMIT');
      }
      ok = true;
      this.runOf.delete(key);
      return true;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      if (e instanceof Error && e.message.startsWith(this.what)) throw e;
      throw pgFailure(`${what}: writing ${values.length} records failed: ${describePgError(e)}`, e);
    } finally {
      client.release(!ok);
    }
  }

  private async createMarkerTable(): Promise<void> {
    const client = await poolClient(this.pool!, this.what);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${this.markerTable} (sink_id text NOT NULL, run_id text NOT NULL, subtask integer NOT NULL, ` +
              `checkpoint_id bigint NOT NULL, records integer NOT NULL, written_at timestamptz NOT NULL DEFAULT now(), ` +
              `PRIMARY KEY (sink_id, run_id, subtask, checkpoint_id))`,
          );
          return;
        } catch (e) {
          if ((sqlState(e) === '23505' || sqlState(e) === '42P07') && attempt < 3) continue;
          throw pgFailure(`${this.what}: creating the marker table ${this.markerTable} failed: ${describePgError(e)}`, e);
        }
      }
    } finally {
      client.release();
    }
  }

  private async writerClosed(): Promise<void> {
    if (--this.openWriters > 0) return;
    const pool = this.pool;
    this.pool = undefined;
    this.markerTableReady = undefined;
    await pool?.end().catch(() => {});
  }
}

function valuesKey(subtask: number, checkpointId: number): string {
  return `${subtask}/${checkpointId}`;
}
