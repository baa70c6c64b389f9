/**
 * A record that a PostgreSQL sink cannot write: the database refused it (a data error, class
 * 22, or a constraint violation, class 23) or the row mapping threw. The job fails with it,
 * naming the record; the record is never dropped silently.
 */
export class BadRecordError extends Error {
  override readonly name = 'BadRecordError';
  constructor(
    message: string,
    readonly record: unknown,
    readonly sqlState: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}


/**
 * Where a PostgreSQL sink sends a record it cannot write (the row mapping threw, or the database
 * refused the row with SQLSTATE class 22 or 23) instead of failing the job. Awaited before the
 * write goes on; the rows of the other records are written.
 */
export type PostgresDeadLetter<T> = (record: T, error: BadRecordError) => void | Promise<void>;
