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

