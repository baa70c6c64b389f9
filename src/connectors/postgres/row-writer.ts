import type pg from 'pg';
import { quoteIdent, sqlState } from './connection.js';
import { pgFailure } from './pg-failures.js';
import { BadRecordError, type PostgresDeadLetter } from './bad-record-error.js';
import type { CompiledMapping, SqlValue } from './row-mapping.js';

export { BadRecordError, type PostgresDeadLetter };

/** PostgreSQL accepts at most 65 535 parameters in one statement. */
const MAX_PARAMETERS = 65_535;

/** What a sink writes: a table, its columns and, for upserts, the conflict key. */
export interface RowTarget {
  /** Quoted table name. */
  readonly table: string;
  readonly columns: readonly string[];
  /** With a key: `INSERT ... ON CONFLICT (key) DO UPDATE`; without: a plain `INSERT`. */
  readonly keyColumns?: readonly string[];
  /** Columns set on conflict; default every column that is not a key column. */
  readonly updateColumns?: readonly string[];
}

/**
 * Multi-row `INSERT` statements for one target, one text per number of rows (cached; full
 * batches reuse a named prepared statement on each connection).
 */
export class RowStatements {
  readonly maxRows: number;
  private readonly head: string;
  private readonly tail: string;
  private readonly texts = new Map<number, string>();
  /** Distinguishes the prepared statements of different sinks on one connection. */
  private readonly id = nextStatementId++;

  constructor(
    readonly target: RowTarget,
    batchRows: number,
  ) {
    const n = target.columns.length;
    this.maxRows = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / n)));
    this.head = `INSERT INTO ${target.table} (${target.columns.map(quoteIdent).join(', ')}) VALUES `;
    if (target.keyColumns === undefined) {
      this.tail = '';
    } else {
      const keys = new Set(target.keyColumns);
      const update = target.updateColumns ?? target.columns.filter((c) => !keys.has(c));
      for (const c of update) if (!target.columns.includes(c)) throw new Error(`PostgreSQL sink: update column '${c}' is not among the mapped columns (${target.columns.join(', ')})`);
      const conflict = `ON CONFLICT (${target.keyColumns.map(quoteIdent).join(', ')})`;
      this.tail = update.length === 0 ? ` ${conflict} DO NOTHING` : ` ${conflict} DO UPDATE SET ${update.map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`).join(', ')}`;
    }
  }

  text(rows: number): string {
    let t = this.texts.get(rows);
    if (t === undefined) {
      const n = this.target.columns.length;
      const tuples: string[] = [];
      for (let r = 0; r < rows; r++) {
        const ps: string[] = [];
        for (let c = 0; c < n; c++) ps.push(`$${r * n + c + 1}`);
        tuples.push(`(${ps.join(', ')})`);
      }
      t = this.head + tuples.join(', ') + this.tail;
      this.texts.set(rows, t);
    }
    return t;
  }

  /** Runs one statement for up to `maxRows` rows. */
  async run(client: pg.ClientBase, rows: readonly SqlValue[][]): Promise<void> {
    const params: unknown[] = [];
    for (const row of rows) for (const v of row) params.push(v);
    const text = this.text(rows.length);
    // Full batches are frequent: prepare them once per connection.
    if (rows.length === this.maxRows) await client.query({ name: `sluice_rows_${this.id}_${rows.length}`, text, values: params });
    else await client.query(text, params);
  }
}

let nextStatementId = 0;

/**
 * Records waiting to be written, with their rows. With key positions, a later record with the
 * same key replaces the earlier one (one statement cannot upsert a row twice).
 */
export class RowBuffer<T> {
  private values: T[] = [];
  private rows: SqlValue[][] = [];
  private byKey = new Map<string, number>();

  constructor(readonly keyPositions: readonly number[] | undefined) {}

  get size(): number {
    return this.rows.length;
  }

  add(value: T, row: SqlValue[]): void {
    if (this.keyPositions !== undefined) {
      const key = this.keyPositions.map((i) => keyString(row[i]!)).join('\u0001');
      const at = this.byKey.get(key);
      if (at !== undefined) {
        this.values[at] = value;
        this.rows[at] = row;
        return;
      }
      this.byKey.set(key, this.rows.length);
    }
    this.values.push(value);
    this.rows.push(row);
  }

  take(): { values: T[]; rows: SqlValue[][] } {
    const out = { values: this.values, rows: this.rows };
    this.values = [];
    this.rows = [];
    this.byKey = new Map();
    return out;
  }
}

function keyString(v: SqlValue): string {
  if (v === null) return 'n';
  if (v instanceof Date) return `d${v.getTime()}`;
  if (v instanceof Uint8Array) return `b${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  if (typeof v === 'object') return `j${JSON.stringify(v)}`;
  return `${typeof v}:${String(v)}`;
}

/** Data exceptions (class 22) and integrity constraint violations (class 23) belong to a record. */
export function isRecordError(e: unknown): boolean {
  const s = sqlState(e);
  return s !== undefined && (s.startsWith('22') || s.startsWith('23'));
}

/** A record for a message: JSON, at most 200 characters. */
export function previewRecord(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/** The server's message with its SQLSTATE, detail and hint. */
export function describePgError(e: unknown): string {
  const x = e as { message?: string; detail?: string; hint?: string };
  const state = sqlState(e);
  return `${x.message ?? String(e)}${state === undefined ? '' : ` (SQLSTATE ${state})`}${x.detail ? `; detail: ${x.detail}` : ''}${x.hint ? `; hint: ${x.hint}` : ''}`;
}

/**
 * Writes rows in statements of up to `maxRows`. When a statement fails because of a row's data,
 * finds the first such record (trying the rows one by one in a transaction that is rolled back)
 * and throws a `BadRecordError` naming it: a record is never dropped silently. Any other error
 * is thrown naming the table. `inTransaction`: the client is inside the caller's transaction
 * (which the error leaves aborted).
 */
export async function writeRows<T>(
  client: pg.ClientBase,
  stmts: RowStatements,
  batch: { readonly values: readonly T[]; readonly rows: readonly SqlValue[][] },
  o: { readonly what: string; readonly inTransaction: boolean; readonly deadLetter?: PostgresDeadLetter<T> | undefined },
): Promise<void> {
  for (let at = 0; at < batch.rows.length; at += stmts.maxRows) {
    const rows = batch.rows.slice(at, at + stmts.maxRows);
    if (o.deadLetter !== undefined) {
      await writeWithDeadLetter(client, stmts, batch.values.slice(at, at + stmts.maxRows), rows, { ...o, deadLetter: o.deadLetter });
      continue;
    }
    try {
      await stmts.run(client, rows);
    } catch (e) {
      if (isRecordError(e)) throw await findBadRecord(client, stmts, batch.values.slice(at, at + stmts.maxRows), rows, e, o);
      throw pgFailure(`${o.what}: writing ${rows.length} rows to ${stmts.target.table} failed: ${describePgError(e)}`, e);
    }
  }
}


/**
 * One statement's rows with a dead-letter output: when the statement fails because of a row's
 * data, the rows are written one by one and the refused ones go to the dead letter. Inside a
 * transaction each try runs under a savepoint, so a refused row does not abort the transaction.
 */
async function writeWithDeadLetter<T>(
  client: pg.ClientBase,
  stmts: RowStatements,
  values: readonly T[],
  rows: readonly SqlValue[][],
  o: { readonly what: string; readonly inTransaction: boolean; readonly deadLetter: PostgresDeadLetter<T> },
): Promise<void> {
  const attempt = async (r: readonly SqlValue[][]): Promise<unknown> => {
    if (o.inTransaction) await client.query('SAVEPOINT sluice_dead_letter');
    try {
      await stmts.run(client, r);
      if (o.inTransaction) await client.query('RELEASE SAVEPOINT sluice_dead_letter');
      return undefined;
    } catch (e) {
      if (!isRecordError(e)) throw pgFailure(`${o.what}: writing ${r.length} rows to ${stmts.target.table} failed: ${describePgError(e)}`, e);
      if (o.inTransaction) await client.query('ROLLBACK TO SAVEPOINT sluice_dead_letter');
      return e;
    }
  };
  const failed = await attempt(rows);
  if (failed === undefined) return;
  for (let i = 0; i < rows.length; i++) {
    const e = rows.length === 1 ? failed : await attempt([rows[i]!]);
    if (e === undefined) continue;
    await o.deadLetter(
      values[i]!,
      new BadRecordError(`${o.what}: record ${previewRecord(values[i])} cannot be written to ${stmts.target.table}: ${describePgError(e)}`, values[i], sqlState(e), { cause: e }),
    );
  }
}

async function findBadRecord<T>(
  client: pg.ClientBase,
  stmts: RowStatements,
  values: readonly T[],
  rows: readonly SqlValue[][],
  error: unknown,
  o: { readonly what: string; readonly inTransaction: boolean },
): Promise<Error> {
  const bad = (value: unknown, e: unknown): BadRecordError =>
    new BadRecordError(`${o.what}: record ${previewRecord(value)} cannot be written to ${stmts.target.table}: ${describePgError(e)}`, value, sqlState(e), { cause: e });
  if (rows.length === 1) return bad(values[0], error);
  try {
    await client.query(o.inTransaction ? 'ROLLBACK' : 'BEGIN');
    if (o.inTransaction) await client.query('BEGIN');
    for (let i = 0; i < rows.length; i++) {
      await client.query('SAVEPOINT sluice_probe');
      try {
        await stmts.run(client, [rows[i]!]);
        await client.query('RELEASE SAVEPOINT sluice_probe');
      } catch (e) {
        if (isRecordError(e)) return bad(values[i], e);
        throw e;
      }
    }
  } catch (e) {
    return new Error(`${o.what}: writing to ${stmts.target.table} failed: ${describePgError(error)} (finding the record failed: ${(e as Error).message})`, { cause: error });
  } finally {
    await client.query('ROLLBACK').catch(() => {});
  }
  // Only together the rows fail (e.g. two records with one key): name the first.
  return bad(values[0], error);
}

/**
 * The row of a record; a mapping function that throws fails the job naming the record. With
 * `keys` (the positions of the key columns), a key column without a value is a bad record
 * too: rows are found by their key (ON CONFLICT, and the batch keeps one row per key), so
 * records without one would overwrite each other in a batch and add a row at every replay.
 */
export function mapRecord<T>(mapping: CompiledMapping<T>, value: T, what: string, keys?: readonly number[]): SqlValue[] {
  let row: SqlValue[];
  try {
    row = mapping.toRow(value);
  } catch (e) {
    throw new BadRecordError(`${what}: the row mapping failed for record ${previewRecord(value)}: ${(e as Error).message}`, value, undefined, { cause: e });
  }
  if (keys !== undefined) {
    for (const i of keys) {
      if (row[i] !== null && row[i] !== undefined) continue;
      throw new BadRecordError(
        `${what}: record ${previewRecord(value)} has no value for the key column '${mapping.columns[i]}' (null or missing): ` +
          'rows are found by their key, so records without one would replace each other and be written again at every replay; give every record its key, or send these elsewhere with deadLetter',
        value,
        undefined,
      );
    }
  }
  return row;
}

/** The row of a record, or, when it is bad (see mapRecord) and a dead letter is configured, `undefined` once the record went there. */
export function mapRecordOrDeadLetter<T>(
  mapping: CompiledMapping<T>,
  value: T,
  what: string,
  deadLetter: PostgresDeadLetter<T> | undefined,
  keys?: readonly number[],
): SqlValue[] | undefined | Promise<undefined> {
  try {
    return mapRecord(mapping, value, what, keys);
  } catch (e) {
    if (deadLetter === undefined || !(e instanceof BadRecordError)) throw e;
    const r = deadLetter(value, e);
    return r instanceof Promise ? r.then(() => undefined) : undefined;
  }
}
