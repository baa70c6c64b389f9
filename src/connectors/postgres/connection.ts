import pg from 'pg';
import type { PostgresConnectionOptions, TableName } from './options.js';

export type { PostgresConnectionOptions, TableName };

/** The pg configuration of a connection (internal). */
export function clientConfig(o: PostgresConnectionOptions): pg.ClientConfig {
  const config: pg.ClientConfig = {
    application_name: o.applicationName ?? 'sluice',
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
  };
  if (o.connectionString !== undefined) config.connectionString = o.connectionString;
  if (o.host !== undefined) config.host = o.host;
  if (o.port !== undefined) {
    if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65_535) {
      throw new Error(`PostgreSQL connection: port must be an integer from 1 to 65535, got ${JSON.stringify(o.port) ?? String(o.port)} (or leave it out: 5432, or PGPORT)`);
    }
    config.port = o.port;
  }
  if (o.connectTimeoutMs !== undefined && !(Number.isFinite(o.connectTimeoutMs) && o.connectTimeoutMs >= 0)) {
    throw new Error(`PostgreSQL connection: connectTimeoutMs must be a number of milliseconds >= 0, got ${JSON.stringify(o.connectTimeoutMs) ?? String(o.connectTimeoutMs)}`);
  }
  if (o.user !== undefined) config.user = o.user;
  if (o.password !== undefined) config.password = o.password;
  if (o.database !== undefined) config.database = o.database;
  return config;
}

/** `user@host:port/database` of a connected client, for messages (never the password). */
export function describeClient(c: pg.ClientBase): string {
  const p = c as unknown as { user?: string; host?: string; port?: number; database?: string };
  return `${p.user ?? '?'}@${p.host ?? '?'}:${p.port ?? '?'}/${p.database ?? '?'}`;
}

/** Opens one connection; the error names the server. */
export async function connect(o: PostgresConnectionOptions, what: string): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(o));
  // Errors outside of a query (also a connect that failed, whose timer may still fire) are the
  // next query's business; unheard, an 'error' event would end the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw new Error(`${what}: cannot connect to PostgreSQL at ${describeClient(client)}: ${(e as Error).message}`, { cause: e });
  }
  return client;
}

/** A pool of connections of one writer; the error of a failed connect names the server. */
export function createPool(o: PostgresConnectionOptions, max: number): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(o), max, idleTimeoutMillis: 30_000 });
  pool.on('error', () => {}); // an idle client broke: it is dropped from the pool
  // A connection that breaks outside of a query: the next query on it reports the error.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export async function poolClient(pool: pg.Pool, what: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (e) {
    const p = pool.options as { user?: string; host?: string; port?: number; database?: string };
    throw new Error(`${what}: cannot connect to PostgreSQL at ${p.user ?? process.env['PGUSER'] ?? '?'}@${p.host ?? process.env['PGHOST'] ?? 'localhost'}:${p.port ?? process.env['PGPORT'] ?? 5432}/${p.database ?? process.env['PGDATABASE'] ?? '?'}: ${(e as Error).message}`, { cause: e });
  }
}

/** A quoted identifier: `"name"`, with `"` doubled. Names are taken literally (case-sensitive). */
export function quoteIdent(name: string): string {
  if (name.length === 0) throw new Error('PostgreSQL sink: an empty identifier');
  if (name.includes('\0')) throw new Error(`PostgreSQL sink: identifier ${JSON.stringify(name)} contains a NUL character`);
  return `"${name.replace(/"/g, '""')}"`;
}

/** A quoted table name: `schema.table` or `table` (then the search path decides). */
export function quoteTable(t: TableName): string {
  if (typeof t !== 'string') return t.schema === undefined ? quoteIdent(t.name) : `${quoteIdent(t.schema)}.${quoteIdent(t.name)}`;
  const parts = t.split('.');
  if (parts.length > 2) throw new Error(`PostgreSQL sink: table name '${t}' has more than one dot; give { schema, name } instead`);
  return parts.map(quoteIdent).join('.');
}

/** A single-quoted SQL string literal (for statements that take no parameters, e.g. PREPARE TRANSACTION). */
export function quoteLiteral(s: string): string {
  if (s.includes('\0')) throw new Error(`PostgreSQL sink: literal contains a NUL character`);
  return `'${s.replace(/'/g, "''")}'`;
}

/** The SQLSTATE of a server error, if it is one. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
