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

/** The fields of a pg connection configuration that say whom to connect as (pg's ClientConfig / pool options). */
export interface ConnectionFields {
  readonly connectionString?: string | undefined;
  readonly user?: string | undefined;
  readonly password?: unknown;
  readonly database?: string | undefined;
}

/**
 * Where pg takes the user, password and database from, in a process with environment `env`:
 * the sink's connection options (the connection string's parts first), else PGUSER,
 * PGPASSWORD, PGDATABASE, else its defaults (the OS user; no password, or ~/.pgpass of the
 * process's user; a database named like the user). pg's own order (ConnectionParameters).
 */
export function connectionSources(c: ConnectionFields, env: NodeJS.ProcessEnv): { user: string; password: string; database: string; passwordMissing: boolean } {
  let fromString: { user?: string | undefined; password?: string | undefined; database?: string | null | undefined } = {};
  try {
    if (c.connectionString !== undefined) fromString = parseConnectionString(c.connectionString);
  } catch {
    // checked when the sink was made
  }
  const source = (given: unknown, variable: string, fallback: string): string => {
    if (given !== undefined && given !== null && given !== '') return "the sink's connection options";
    if (env[variable] !== undefined && env[variable] !== '') return variable;
    return fallback;
  };
  const password = source(fromString.password ?? c.password, 'PGPASSWORD', 'none');
  return {
    user: source(fromString.user ?? c.user, 'PGUSER', `the OS user (${osUser(env)})`),
    password,
    database: source(fromString.database ?? c.database, 'PGDATABASE', 'the user name'),
    passwordMissing: password === 'none',
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
 * The error of a connection that failed: names the server; when PostgreSQL refused the
 * credentials or the database, it is non-recoverable and says where each came from in the
 * process that connected, and that PG* variables are that process's.
 */
export function connectionFailure(what: string, server: string, cause: unknown, c: ConnectionFields, env: NodeJS.ProcessEnv = process.env): Error {
  const text = `${what}: cannot connect to PostgreSQL at ${server}: ${describeCause(cause)}`;
  if (!isPermanentPgError(cause)) return new Error(text, { cause });
  return new NonRecoverableError(`${text} (${environmentNote(cause, c, env)})`, { cause });
}

/**
 * For a refused connection: where the process connected from, where it took the user,
 * password and database from (the password only when it was refused or missing), and, when
 * any came from its environment or pg's defaults, that these are that process's.
 */
export function environmentNote(cause: unknown, c: ConnectionFields, env: NodeJS.ProcessEnv, where = describeThisProcess(), onTaskManager = isTaskManagerProcess()): string {
  const s = connectionSources(c, env);
  const aboutPassword = sqlState(cause) === '28P01' || NO_PASSWORD.test(message(cause));
  const bySource = new Map<string, string[]>();
  for (const [field, source] of [['user', s.user], ['password', s.password], ['database', s.database]] as const) {
    if (field === 'password' && (s.passwordMissing || !aboutPassword)) continue;
    bySource.set(source, [...(bySource.get(source) ?? []), field]);
  }
  const sources = [...bySource].map(([source, fields]) => `${fields.length === 3 ? `${fields[0]}, ${fields[1]} and ${fields[2]}` : fields.join(' and ')} from ${source}`);
  if (s.passwordMissing && aboutPassword) sources.push("no password (none in the sink's connection options, no PGPASSWORD in that process's environment)");
  const note = `connecting from ${where}: ${sources.join(', ')}`;
  const options = "the sink's connection options";
  if ([...bySource.keys()].every((source) => source === options) && !(s.passwordMissing && aboutPassword)) return note;
  const whose = onTaskManager ? "the TaskManager's environment" : 'the environment of the process that runs the sink (on a cluster, a TaskManager)';
  return `${note}; PG* variables are read in ${whose}, not the submitting shell's: give them in ${options}, or set them where the TaskManagers are started`;
}

/** The server's message with its SQLSTATE (pg's own errors have none). */
function describeCause(e: unknown): string {
  const state = sqlState(e);
  return `${message(e) || String(e)}${state === undefined ? '' : ` (SQLSTATE ${state})`}`;
}
