import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import { checkKnownOptions } from '../../util/known-options.js';
import { previewValue } from '../../util/preview.js';
import type { PostgresConnectionOptions, TableName } from './options.js';
import { connectionFailure } from './pg-failures.js';

export type { PostgresConnectionOptions, TableName };

const CONNECTION_OPTION_NAMES = {
  connectionString: true,
  host: true,
  port: true,
  user: true,
  password: true,
  database: true,
  applicationName: true,
  connectTimeoutMs: true,
} as const satisfies Record<keyof PostgresConnectionOptions, true>;

/**
 * Checks a sink's options object, its option names and its connection when the sink is
 * constructed (a bad one failed at the first connect, in every restart): `names` are the
 * sink's option names (see checkKnownOptions).
 */
export function checkPostgresSinkOptions(what: string, options: unknown, names: Readonly<Record<string, true>>): void {
  if (options === null || typeof options !== 'object') throw new Error(`${what}: the options must be an object ({ connection, table, row, ... }), got ${previewValue(options, 80)}`);
  checkKnownOptions(what, options, names);
  const connection = (options as { connection?: unknown }).connection;
  if (connection === undefined) return;
  if (connection === null || typeof connection !== 'object') {
    throw new Error(`${what}: connection must be an object ({ connectionString } or { host, port, user, password, database }), got ${previewValue(connection, 80)}`);
  }
  checkConnectionOptions(connection as PostgresConnectionOptions);
}

/** The values of a connection's options (never showing a password or a connection string, which may hold one). */
function checkConnectionOptions(o: PostgresConnectionOptions): void {
  const what = 'PostgreSQL connection';
  // Ignored, it left the connection unencrypted without a word.
  if ('ssl' in o) throw new Error(`${what}: there is no ssl option; for TLS put sslmode in the connection string (connectionString: 'postgresql://host/db?sslmode=verify-full')`);
  checkKnownOptions(what, o, CONNECTION_OPTION_NAMES);
  for (const name of ['host', 'user', 'password', 'database', 'applicationName'] as const) {
    const v: unknown = o[name];
    if (v !== undefined && typeof v !== 'string') throw new Error(`${what}: ${name} must be a string, got ${name === 'password' ? typeof v : previewValue(v, 80)}`);
  }
  if (o.port !== undefined && !(Number.isInteger(o.port) && o.port >= 1 && o.port <= 65_535)) {
    throw new Error(`${what}: port must be an integer from 1 to 65535, got ${previewValue(o.port, 80)} (or leave it out: 5432, or PGPORT)`);
  }
  if (o.connectTimeoutMs !== undefined && !(typeof o.connectTimeoutMs === 'number' && Number.isFinite(o.connectTimeoutMs) && o.connectTimeoutMs >= 0)) {
    throw new Error(`${what}: connectTimeoutMs must be a number of milliseconds >= 0, got ${previewValue(o.connectTimeoutMs, 80)}`);
  }
  if (o.connectionString !== undefined) checkConnectionString(o.connectionString);
}

/**
 * A connection string pg can read: a postgres:// or postgresql:// URL, or a unix socket
 * directory (`/run/postgresql db`, `socket:`). pg took any other string for a host name
 * ("not a url" became `getaddrinfo ENOTFOUND base`). The string itself is never shown: it may
 * hold a password.
 */
function checkConnectionString(cs: unknown): void {
  const what = 'PostgreSQL connection';
  const form = 'postgresql://user:password@host:5432/database (percent-encode special characters in the user name and password)';
  if (typeof cs !== 'string') throw new Error(`${what}: connectionString must be a string like ${form}, got ${typeof cs}`);
  if (cs.startsWith('/') || cs.startsWith('socket:')) return;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(cs)?.[1];
  if (scheme === undefined) throw new Error(`${what}: connectionString is not a URL: it must look like ${form}`);
  if (!/^postgres(ql)?$/i.test(scheme)) throw new Error(`${what}: connectionString has the scheme '${scheme}://': a PostgreSQL connection string looks like ${form}`);
  try {
    // pg's own parser (what it does with the string at connect).
    parseConnectionString(cs);
  } catch {
    throw new Error(`${what}: connectionString is not a valid URL (is the port a number? one host only): it must look like ${form}`);
  }
}

/** The pg configuration of a connection (internal). */
export function clientConfig(o: PostgresConnectionOptions): pg.ClientConfig {
  checkConnectionOptions(o);
  const config: pg.ClientConfig = {
    application_name: o.applicationName ?? 'sluice',
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
  };
  if (o.connectionString !== undefined) config.connectionString = o.connectionString;
  if (o.host !== undefined) config.host = o.host;
  if (o.port !== undefined) config.port = o.port;
  if (o.user !== undefined) config.user = o.user;
  if (o.password !== undefined) config.password = o.password;
  if (o.database !== undefined) config.database = o.database;
  return config;
}

/** `user@host:port/database` that a configuration connects to in this process, for messages (never the password). */
function describeTarget(c: pg.PoolConfig): string {
  let p: { user?: string | undefined; host?: string | null | undefined; port?: string | number | null | undefined; database?: string | null | undefined } = c;
  try {
    if (c.connectionString !== undefined) p = { ...c, ...parseConnectionString(c.connectionString) };
  } catch {
    // checked when the sink was made
  }
  const env = process.env;
  const user = p.user ?? env['PGUSER'] ?? env['USER'] ?? '?';
  return `${user}@${p.host ?? env['PGHOST'] ?? 'localhost'}:${p.port ?? env['PGPORT'] ?? 5432}/${p.database ?? env['PGDATABASE'] ?? user}`;
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
    throw connectionFailure(what, describeClient(client), e, clientConfig(o));
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
    throw connectionFailure(what, describeTarget(pool.options), e, pool.options);
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

export { sqlState } from './pg-failures.js';
