import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { PostgresConnectionOptions } from '../../src/connectors/postgres/options.js';

/**
 * PostgreSQL servers for the tests, no mocks:
 *
 * - `machineServer()`: the machine's server, 127.0.0.1:5432 database `test` user `postgres`, or
 *   what the PG* variables say; if it does not answer (and we may), a throwaway cluster.
 * - `preparedTransactionsServer()`: a server with max_prepared_transactions > 0, for the
 *   two-phase-commit sink. The machine's server keeps its configuration (0); as root with
 *   PostgreSQL's binaries installed, a throwaway cluster is started instead: initdb into a
 *   temporary directory as the `postgres` OS user, `-c max_prepared_transactions=20` on a
 *   free loopback port, its unix socket in that directory. Otherwise the PG* server is used if
 *   it allows prepared transactions.
 *
 * `stop()` stops a throwaway cluster and deletes its directory; also done at process exit.
 */
export interface PostgresServer {
  readonly connection: PostgresConnectionOptions;
  readonly description: string;
  readonly throwaway: boolean;
  stop(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/14/bin'];
const run = promisify(execFile);

function pgBinDir(): string | undefined {
  if (process.env['SLUICE_PG_BIN'] !== undefined) return process.env['SLUICE_PG_BIN'];
  return BIN_DIRS.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')));
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

async function probe(connection: PostgresConnectionOptions): Promise<{ ok: true; maxPrepared: number } | { ok: false; error: string }> {
  const c = new pg.Client({ ...connection, connectionTimeoutMillis: 3000 });
  c.on('error', () => {});
  try {
    await c.connect();
    const r = await c.query<{ max_prepared_transactions: string }>('SHOW max_prepared_transactions');
    return { ok: true, maxPrepared: Number(r.rows[0]!.max_prepared_transactions) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  } finally {
    await c.end().catch(() => {});
  }
}

function fromEnvironment(): PostgresConnectionOptions | undefined {
  const env = process.env;
  if (env['PGHOST'] === undefined && env['PGPORT'] === undefined && env['PGDATABASE'] === undefined) return undefined;
  // pg itself reads PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE.
  return {};
}

function describe(c: PostgresConnectionOptions): string {
  const env = process.env;
  return `${c.user ?? env['PGUSER'] ?? '?'}@${c.host ?? env['PGHOST'] ?? 'localhost'}:${c.port ?? env['PGPORT'] ?? 5432}/${c.database ?? env['PGDATABASE'] ?? '?'}`;
}

/** The machine's server (or the PG* one); a throwaway cluster if it does not answer. */
export async function machineServer(): Promise<PostgresServer> {
  const connection = fromEnvironment() ?? { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' };
  const p = await probe(connection);
  if (p.ok) return { connection, description: describe(connection), throwaway: false, stop: async () => {} };
  if (isRoot() && pgBinDir() !== undefined) return startThrowawayCluster({ maxPreparedTransactions: 0 });
  throw new Error(`PostgreSQL tests: no server at ${describe(connection)} (${p.error}); start it or set PGHOST/PGPORT/PGUSER/PGDATABASE`);
}

/** A server with max_prepared_transactions > 0. */
export async function preparedTransactionsServer(): Promise<PostgresServer> {
  if (isRoot() && pgBinDir() !== undefined) return startThrowawayCluster({ maxPreparedTransactions: 20 });
  const env = fromEnvironment();
  if (env !== undefined) {
    const p = await probe(env);
    if (p.ok && p.maxPrepared > 0) return { connection: env, description: describe(env), throwaway: false, stop: async () => {} };
    throw new Error(
      `PostgreSQL two-phase-commit tests: the server at ${describe(env)} ` +
        (p.ok ? 'has max_prepared_transactions = 0 (ALTER SYSTEM SET max_prepared_transactions = 20; then restart it)' : `does not answer (${p.error})`),
    );
  }
  throw new Error(
    'PostgreSQL two-phase-commit tests need a server with max_prepared_transactions > 0: run them as root with PostgreSQL installed ' +
      `(initdb and postgres under ${BIN_DIRS.join(' or ')}, or SLUICE_PG_BIN) to start a throwaway cluster, or point PGHOST/PGPORT/PGUSER/PGDATABASE at such a server`,
  );
}

/**
 * A throwaway cluster with `wal_level = logical`, for the change-data-capture source (a
 * setting that needs a restart, so the machine's server keeps its own): `max_replication_slots`
 * as given (the test of exhausted slots fills them).
 * Root and PostgreSQL's binaries needed, as for preparedTransactionsServer.
 */
export async function logicalReplicationServer(o: { maxReplicationSlots?: number } = {}): Promise<PostgresServer> {
  if (!isRoot() || pgBinDir() === undefined) {
    throw new Error(
      'PostgreSQL CDC tests need a throwaway cluster with wal_level = logical: run them as root with PostgreSQL installed ' +
        `(initdb and postgres under ${BIN_DIRS.join(' or ')}, or SLUICE_PG_BIN)`,
    );
  }
  // synchronous_commit on (fsync stays off, so it costs little): a walsender sends only WAL that
  // was flushed, and with it off the last commits of a workload waited for the WAL writer, which
  // sleeps up to 25 x wal_writer_delay when idle (11 s for the last 21 changes of a test).
  return startThrowawayCluster({
    maxPreparedTransactions: 0,
    settings: ['wal_level=logical', `max_replication_slots=${o.maxReplicationSlots ?? 10}`, 'max_wal_senders=10', 'synchronous_commit=on'],
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const running = new Set<{ child: ChildProcess; dir: string }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of running) {
      try {
        c.child.kill('SIGQUIT');
      } catch {}
      try {
        rmSync(c.dir, { recursive: true, force: true });
      } catch {}
    }
  });
}

/**
 * initdb + postgres as the `postgres` OS user in a temporary directory; about a second.
 * `password`: connections over TCP must give it (scram-sha-256; the superuser `postgres` has
 * it), for tests of refused credentials; without it every connection is trusted.
 */
export async function startThrowawayCluster(o: { maxPreparedTransactions: number; password?: string; settings?: readonly string[] }): Promise<PostgresServer> {
  const bin = pgBinDir();
  if (bin === undefined) throw new Error(`PostgreSQL tests: initdb not found under ${BIN_DIRS.join(', ')} (set SLUICE_PG_BIN)`);
  if (!isRoot()) throw new Error('PostgreSQL tests: a throwaway cluster is started as the postgres OS user, which needs root');
  const { stdout: ids } = await run('id', ['-u', 'postgres']);
  const uid = Number(ids.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const asPostgres = (cmd: string, args: string[]): [string, string[]] => ['setpriv', ['--reuid', String(uid), '--regid', String(gid), '--init-groups', '--', cmd, ...args]];
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('PG')) delete env[k];
  try {
    const auth = o.password === undefined ? ['-A', 'trust'] : ['--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${join(dir, 'pwfile')}`];
    if (o.password !== undefined) {
      writeFileSync(join(dir, 'pwfile'), `${o.password}\n`);
      chownSync(join(dir, 'pwfile'), uid, gid);
    }
    const [c, a] = asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', ...auth, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    await run(c, a, { env, cwd: dir, timeout: 60_000 });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL tests: initdb failed: ${(e as { stderr?: string }).stderr ?? (e as Error).message}`, { cause: e });
  }
  const port = await freePort();
  const settings = [
    `max_prepared_transactions=${o.maxPreparedTransactions}`,
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${dir}`,
    'fsync=off',
    'synchronous_commit=off',
    'full_page_writes=off',
    'shared_buffers=32MB',
    'max_connections=100',
    'logging_collector=off',
    ...(o.settings ?? []),
  ];
  const [c, a] = asPostgres(join(bin, 'postgres'), ['-D', data, '-p', String(port), ...settings.flatMap((s) => ['-c', s])]);
  const child = spawn(c, a, { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const entry = { child, dir };
  running.add(entry);
  installExitHook();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (!running.has(entry)) return;
    running.delete(entry);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // fast shutdown: disconnects the clients
      const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killed);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const connection: PostgresConnectionOptions = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres', ...(o.password === undefined ? {} : { password: o.password }) };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`PostgreSQL tests: the throwaway server exited at start: ${stderr}`);
    }
    const p = await probe(connection);
    if (p.ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`PostgreSQL tests: the throwaway server did not accept connections within 30 s: ${p.error}; ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { connection, description: `throwaway cluster on 127.0.0.1:${port} (${dir})`, throwaway: true, stop };
}

/** A table name unique to this process and call, for tests sharing a database. */
let tableSeq = 0;
export function uniqueTableName(base: string): string {
  return `${base}_${process.pid}_${Date.now().toString(36)}_${tableSeq++}`;
}

/** Runs SQL on a short-lived connection. */
export async function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(server: PostgresServer, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client(server.connection);
  c.on('error', () => {});
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}
