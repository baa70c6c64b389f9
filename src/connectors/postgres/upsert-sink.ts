import type pg from 'pg';
import type { Sink, SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { checkPostgresSinkOptions, connect, quoteTable } from './connection.js';
import type { PostgresConnectionOptions, TableName } from './options.js';
import { compileMapping, keyPositions, type CompiledMapping, type RowMapping } from './row-mapping.js';
import { mapRecordOrDeadLetter, RowBuffer, RowStatements, writeRows } from './row-writer.js';
import type { PostgresDeadLetter } from './bad-record-error.js';

export interface PostgresUpsertSinkOptions<T, C extends string> {
  /** Where to connect; unset parts come from the PG* environment variables. */
  readonly connection?: PostgresConnectionOptions;
  /** `table` or `schema.table` (taken literally, case-sensitive), or `{ schema, name }`. */
  readonly table: TableName;
  /** Record to row: `{ columns, toRow }` or `{ fields }`. */
  readonly row: RowMapping<T, C>;
  /** The columns of the table's primary key or a unique constraint: the `ON CONFLICT` target. */
  readonly keyColumns: readonly NoInfer<C>[];
  /** Columns overwritten when the key exists; default every mapped column that is not a key column (none: `DO NOTHING`). */
  readonly updateColumns?: readonly NoInfer<C>[];
  /** Rows per statement; a full batch is written at once. Default 500 (fewer when 65 535 parameters would not hold them). */
  readonly batchRows?: number;
  /**
   * Called with a record that cannot be written (the row mapping threw, or PostgreSQL refused the
   * row: SQLSTATE class 22 data exception or 23 constraint violation) and the error, instead of
   * failing the job (the default, naming the record). Awaited before the checkpoint can
   * complete; after a failure and replay it may be called again for the same record.
   */
  readonly deadLetter?: PostgresDeadLetter<T>;
}

const UPSERT_OPTION_NAMES = { connection: true, table: true, row: true, keyColumns: true, updateColumns: true, batchRows: true, deadLetter: true } as const satisfies Record<keyof PostgresUpsertSinkOptions<unknown, string>, true>;

/**
 * Writes records as upserts, `INSERT ... ON CONFLICT (key) DO UPDATE`, in multi-row
 * statements: when a batch fills, at every checkpoint barrier (before the checkpoint can
 * complete) and at the end of input. After a failure the job replays from the last checkpoint
 * and rewrites the same rows, so with a deterministic job the table converges to what a run
 * without failures writes (effectively once); in between, a reader may see rows of records
 * after the checkpoint, and older values of a key while the replay catches up.
 *
 * Within a batch, a later record with the same key replaces an earlier one. A record the
 * database refuses (class 22 / 23 errors) fails the job with an error that names it.
 */
export class PostgresUpsertSink<T, C extends string = string> implements Sink<T> {
  private readonly mapping: CompiledMapping<T>;
  private readonly keys: number[];
  private readonly options: PostgresUpsertSinkOptions<T, C>;

  constructor(options: PostgresUpsertSinkOptions<T, C>) {
    const what = 'PostgreSQL upsert sink';
    checkPostgresSinkOptions(what, options, UPSERT_OPTION_NAMES);
    this.options = options;
    this.mapping = compileMapping(options.row, what);
    this.keys = keyPositions(this.mapping.columns, options.keyColumns, what);
    const batchRows = options.batchRows ?? 500;
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`${what}: batchRows must be an integer >= 1, got ${options.batchRows}`);
    // Validates the columns now rather than at the first write.
    this.statements();
  }

  private statements(): RowStatements {
    return new RowStatements(
      {
        table: quoteTable(this.options.table),
        columns: this.mapping.columns,
        keyColumns: this.options.keyColumns,
        ...(this.options.updateColumns === undefined ? {} : { updateColumns: this.options.updateColumns }),
      },
      this.options.batchRows ?? 500,
    );
  }

  async createWriter(ctx: SinkWriterContext): Promise<SinkWriter<T>> {
    const what = `PostgreSQL upsert sink (subtask ${ctx.subtaskIndex})`;
    const client = await connect(this.options.connection ?? {}, what);
    return new UpsertWriter<T>(client, this.statements(), this.mapping, new RowBuffer<T>(this.keys), what, this.options.deadLetter);
  }
}

class UpsertWriter<T> implements SinkWriter<T> {
  /** Flushes run one after the other. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: pg.Client,
    private readonly stmts: RowStatements,
    private readonly mapping: CompiledMapping<T>,
    private readonly buffer: RowBuffer<T>,
    private readonly what: string,
    private readonly deadLetter: PostgresDeadLetter<T> | undefined,
  ) {}

  write(value: T): void | Promise<void> {
    const row = mapRecordOrDeadLetter(this.mapping, value, this.what, this.deadLetter, this.buffer.keyPositions);
    if (row === undefined || row instanceof Promise) return row;
    this.buffer.add(value, row);
    if (this.buffer.size >= this.stmts.maxRows) return this.flush();
  }

  flush(): Promise<void> {
    const p = this.flushing.then(async () => {
      if (this.buffer.size === 0) return;
      await writeRows(this.client, this.stmts, this.buffer.take(), { what: this.what, inTransaction: false, deadLetter: this.deadLetter });
    });
    this.flushing = p.catch(() => {});
    return p;
  }

  prepareCommit(): Promise<void> {
    return this.flush();
  }

  async close(): Promise<void> {
    // Buffered rows are not written here: after a failure they belong to records the job
    // replays; at the end of input flush(true) wrote them already.
    await this.flushing;
    await this.client.end().catch(() => {});
  }
}
