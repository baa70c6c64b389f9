/** The public options shared by the PostgreSQL sinks (no pg types: users need no @types/pg). */

/**
 * Where a PostgreSQL sink connects. Every field is optional: what is not given comes from the
 * connection string, then from the PG* environment variables as libpq reads them (`PGHOST`,
 * `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`), then from the defaults (localhost, 5432,
 * the OS user, a database named like the user). A host that starts with `/` is the directory
 * of a unix socket.
 */
export interface PostgresConnectionOptions {
  /** `postgresql://user:password@host:port/database?...`; its parts win over the separate fields. */
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  readonly password?: string;
  readonly database?: string;
  /** Shown in `pg_stat_activity`; default `sluice`. */
  readonly applicationName?: string;
  /** How long a connection attempt may take; default 10 000 ms. */
  readonly connectTimeoutMs?: number;
}

/**
 * A table: `'table'` or `'schema.table'` (each part taken literally, case-sensitive; without a
 * schema the search path decides), or `{ schema, name }` for names that contain a dot.
 */
export type TableName = string | { readonly schema?: string; readonly name: string };

