import { userInfo } from 'node:os';
import { parse as parseConnectionString } from 'pg-connection-string';
import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';
import { describeThisProcess, isTaskManagerProcess } from '../../util/this-process.js';

/**
 * Which PostgreSQL failures a restart cannot fix, and what a failed connection says about the
 * environment it was made from. A PostgreSQL sink connects from the process its subtask runs
 * in: on a cluster that is a TaskManager, whose PG* variables are those it was started with,
 * not those of the shell that submitted the job (a job submitted with PGPASSWORD set in that
 * shell restarted for ever on TaskManagers that had none).
 */

/** The SQLSTATE of a server error, if it is one. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Whether PostgreSQL refused for a reason a restart does not change: the credentials or the
 * database (class 28, 3D000), a statement the table does not take (class 42: a missing table
 * or column, no privilege, no unique constraint for ON CONFLICT), prepared transactions
 * disabled; or the client found that the server wants a password and none was given, or
 * wants TLS it does not offer. Connection losses, timeouts, too many connections, deadlocks
 * and serialization failures are transient.
 */
export function isPermanentPgError(e: unknown): boolean {
  const state = sqlState(e);
  if (state !== undefined) {
    if (state.startsWith('28') || state.startsWith('42') || state === '3D000') return true;
    return state === '55000' && PREPARED_TRANSACTIONS_DISABLED.test(message(e));
  }
  return NO_PASSWORD.test(message(e)) || NO_SSL.test(message(e));
}

/** What a server with max_prepared_transactions = 0 answers PREPARE TRANSACTION. */
export const PREPARED_TRANSACTIONS_DISABLED = /prepared transactions are disabled/i;
/** pg's own errors when the server asks for a password and none was given (SCRAM). */
const NO_PASSWORD = /^SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a (non-empty )?string/;
const NO_SSL = /^The server does not support SSL connections/;

function message(e: unknown): string {
  const m = (e as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : '';
}

/** The sink's error for a failed PostgreSQL operation: non-recoverable when the cause is permanent. */
export function pgFailure(text: string, cause: unknown): Error {
  return isPermanentPgError(cause) ? new NonRecoverableError(text, { cause }) : new Error(text, { cause });
}

/** The fields of a pg connection configuration that say where and as whom to connect (pg's ClientConfig / pool options). */
export interface ConnectionFields {
  readonly connectionString?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly user?: string | undefined;
  readonly password?: unknown;
  readonly database?: string | undefined;
}

type Field = 'host' | 'port' | 'user' | 'password' | 'database';

/** What a source is called when a part was given in the sink's options. */
const OPTIONS = "the sink's connection options";

/**
 * Where pg takes each part of a connection from, in a process with environment `env`: the
 * sink's connection options (the connection string's parts first), else PGHOST, PGPORT,
 * PGUSER, PGPASSWORD, PGDATABASE, else its defaults (localhost, 5432, the OS user, no password
 * but ~/.pgpass of the process's user, a database named like the user). pg's own order
 * (ConnectionParameters). `undefined` for a password given nowhere.
 */
export function connectionSources(c: ConnectionFields, env: NodeJS.ProcessEnv): Record<Field, string | undefined> {
  let fromString: { host?: string | null | undefined; port?: string | null | undefined; user?: string | undefined; password?: string | undefined; database?: string | null | undefined } = {};
  try {
    if (c.connectionString !== undefined) fromString = parseConnectionString(c.connectionString);
  } catch {
    // checked when the sink was made
  }
  const source = (given: unknown, variable: string, fallback: string | undefined): string | undefined => {
    if (given !== undefined && given !== null && given !== '') return OPTIONS;
    if (env[variable] !== undefined && env[variable] !== '') return variable;
    return fallback;
  };
  return {
    host: source(fromString.host ?? c.host, 'PGHOST', 'the default (localhost)'),
    port: source(fromString.port ?? c.port, 'PGPORT', 'the default (5432)'),
    user: source(fromString.user ?? c.user, 'PGUSER', `the OS user (${osUser(env)})`),
    password: source(fromString.password ?? c.password, 'PGPASSWORD', undefined),
    database: source(fromString.database ?? c.database, 'PGDATABASE', 'the user name'),
  };
}

function osUser(env: NodeJS.ProcessEnv): string {
  try {
    return env['USER'] ?? userInfo().username;
  } catch {
    return '?';
  }
}

/**
 * The error of a connection that failed: names the server, where the process connected from
 * and where it took the parts that matter for the failure (see environmentNote). When
 * PostgreSQL refused the credentials or the database, it is non-recoverable.
 */
export function connectionFailure(what: string, server: string, cause: unknown, c: ConnectionFields, env: NodeJS.ProcessEnv = process.env): Error {
  const text = `${what}: cannot connect to PostgreSQL at ${server}: ${describeCause(cause)} (${environmentNote(cause, c, env)})`;
  return isPermanentPgError(cause) ? new NonRecoverableError(text, { cause }) : new Error(text, { cause });
}

/**
 * Where the process connected from, and where it took the parts of the connection that
 * matter for `cause`: host and port for a server it did not reach, user, password and
 * database for a refused password, user and database for other refusals. When any came from
 * its environment or pg's defaults, that these are that process's, not the submitting shell's.
 */
export function environmentNote(cause: unknown, c: ConnectionFields, env: NodeJS.ProcessEnv, where = describeThisProcess(), onTaskManager = isTaskManagerProcess()): string {
  const s = connectionSources(c, env);
  const aboutPassword = sqlState(cause) === '28P01' || NO_PASSWORD.test(message(cause));
  const reachedServer = sqlState(cause) !== undefined || aboutPassword || NO_SSL.test(message(cause));
  const fields: readonly Field[] = !reachedServer ? ['host', 'port'] : aboutPassword ? ['user', 'password', 'database'] : ['user', 'database'];
  const bySource = new Map<string, Field[]>();
  for (const field of fields) {
    const source = s[field];
    if (source !== undefined) bySource.set(source, [...(bySource.get(source) ?? []), field]);
  }
  const sources = [...bySource].map(([source, f]) => `${f.length === 3 ? `${f[0]}, ${f[1]} and ${f[2]}` : f.join(' and ')} from ${source}`);
  const passwordMissing = aboutPassword && s.password === undefined;
  if (passwordMissing) sources.push(`no password (none in ${OPTIONS}, no PGPASSWORD in that process's environment)`);
  const note = `connecting from ${where}: ${sources.join(', ')}`;
  if ([...bySource.keys()].every((source) => source === OPTIONS) && !passwordMissing) return note;
  const whose = onTaskManager ? "the TaskManager's environment" : 'the environment of the process that runs the sink (on a cluster, a TaskManager)';
  return `${note}; PG* variables are read in ${whose}, not the submitting shell's: give them in ${OPTIONS}, or set them where the TaskManagers are started`;
}

/** The server's message with its SQLSTATE (pg's own errors have none). */
function describeCause(e: unknown): string {
  const state = sqlState(e);
  return `${message(e) || String(e)}${state === undefined ? '' : ` (SQLSTATE ${state})`}`;
}
