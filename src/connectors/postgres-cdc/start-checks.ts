import type pg from 'pg';
import { quoteIdent, quoteLiteral } from '../postgres/connection.js';
import { sqlState } from '../postgres/pg-failures.js';
import { CdcSetupError } from './cdc-setup-error.js';
import type { PostgresCdcSourceOptions } from './cdc-types.js';
import { formatLsn, parseLsn } from './lsn.js';

/**
 * What the CDC source checks (and creates, when its options say so) on the server before it
 * streams, each failure a `CdcSetupError` that names the setting and the fix. Run by
 * `createSplits` at every job start, on an ordinary connection.
 */
export { CdcSetupError };

const WHAT = 'postgres cdc source';

/** A table of the `tables` option: schema and name (without a schema: `public`). */
export interface CapturedTable {
  /** As the user gave it (the records' `table`). */
  readonly given: string;
  readonly schema: string;
  readonly name: string;
}

export function parseTables(tables: readonly string[]): CapturedTable[] {
  return tables.map((given) => {
    const parts = given.split('.');
    if (parts.length > 2 || parts.some((p) => p.length === 0)) throw new Error(`${WHAT}: table '${given}' must be 'table' or 'schema.table'`);
    return parts.length === 2 ? { given, schema: parts[0]!, name: parts[1]! } : { given, schema: 'public', name: parts[0]! };
  });
}

function qualified(t: CapturedTable): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(t.name)}`;
}

export interface SlotRow {
  readonly plugin: string | null;
  readonly slot_type: string;
  readonly database: string | null;
  readonly confirmed_flush_lsn: string | null;
  readonly active_pid: number | null;
}

export async function slotOf(client: pg.Client, slot: string): Promise<SlotRow | undefined> {
  const rows = await client.query<SlotRow>(`SELECT plugin, slot_type, database, confirmed_flush_lsn, active_pid FROM pg_replication_slots WHERE slot_name = ${quoteLiteral(slot)}`);
  return rows.rows[0];
}

/** The slot's problems for this source: another plugin, physical, another database. */
export function checkSlotFits(slot: string, row: SlotRow, database: string): void {
  if (row.slot_type !== 'logical') throw new CdcSetupError(`${WHAT}: replication slot '${slot}' is a ${row.slot_type} slot; logical replication needs a logical slot: name another slot, or drop it (SELECT pg_drop_replication_slot('${slot}'))`);
  if (row.plugin !== 'pgoutput') {
    throw new CdcSetupError(
      `${WHAT}: replication slot '${slot}' uses the plugin '${row.plugin}'; this source reads pgoutput: name another slot, or drop it (SELECT pg_drop_replication_slot('${slot}')) and let the source create it`,
    );
  }
  if (row.database !== database) throw new CdcSetupError(`${WHAT}: replication slot '${slot}' belongs to database '${row.database}', not '${database}': connect to that database or name another slot`);
}

/**
 * Checks the server, the slot, the publication and the tables; creates the slot and the
 * publication when missing and allowed. Returns the LSN a job without state starts at.
 */
export async function prepareServer(client: pg.Client, o: PostgresCdcSourceOptions, log: (m: string) => void): Promise<string> {
  const one = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R> => (await client.query<R>(text, values)).rows[0]!;
  const settings = await one<{ wal_level: string; encoding: string; max_slots: string; user: string; database: string; rolreplication: boolean; rolsuper: boolean; version: number }>(
    `SELECT current_setting('wal_level') AS wal_level, current_setting('server_encoding') AS encoding, current_setting('max_replication_slots') AS max_slots,
            current_user AS user, current_database() AS database, r.rolreplication, r.rolsuper, current_setting('server_version_num')::int AS version
       FROM pg_roles r WHERE r.rolname = current_user`,
  );
  if (settings.version < 100000) throw new CdcSetupError(`${WHAT}: PostgreSQL ${settings.version} has no pgoutput; it needs PostgreSQL 10 or later`);
  if (settings.wal_level !== 'logical') {
    throw new CdcSetupError(
      `${WHAT}: wal_level is '${settings.wal_level}' on the server; logical replication needs wal_level = logical: ALTER SYSTEM SET wal_level = logical; then restart PostgreSQL (or set it in postgresql.conf)`,
    );
  }
  if (!settings.rolreplication && !settings.rolsuper) {
    throw new CdcSetupError(`${WHAT}: the user '${settings.user}' has no REPLICATION attribute, which a replication connection needs: ALTER ROLE ${quoteIdent(settings.user)} WITH REPLICATION; (as a superuser)`);
  }
  if (settings.encoding !== 'UTF8') throw new CdcSetupError(`${WHAT}: the server encoding is ${settings.encoding}; the source reads values as UTF-8 and needs a UTF8 database`);

  const tables = parseTables(o.tables);
  // The tables and their replica identity.
  for (const t of tables) {
    const row = await client.query<{ relreplident: string; has_pk: boolean; relkind: string }>(
      `SELECT c.relreplident, c.relkind, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) AS has_pk
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [t.schema, t.name],
    );
    const r = row.rows[0];
    if (r === undefined) throw new CdcSetupError(`${WHAT}: table ${qualified(t)} (tables: '${t.given}') does not exist in database '${settings.database}'`);
    checkReplicaIdentity(t, r.relreplident, r.has_pk, o.before ?? 'key');
  }

  // The publication.
  const pub = await client.query<{ puballtables: boolean }>('SELECT puballtables FROM pg_publication WHERE pubname = $1', [o.publication]);
  if (pub.rows.length === 0) {
    const create = `CREATE PUBLICATION ${quoteIdent(o.publication)} FOR TABLE ${tables.map(qualified).join(', ')}`;
    if (o.createPublication !== true) throw new CdcSetupError(`${WHAT}: publication '${o.publication}' does not exist: ${create}; or set createPublication: true`);
    await client.query(create);
    log(`${WHAT}: created publication '${o.publication}' for ${tables.map((t) => t.given).join(', ')}`);
  } else {
    const published = new Set((await client.query<{ t: string }>("SELECT schemaname || '.' || tablename AS t FROM pg_publication_tables WHERE pubname = $1", [o.publication])).rows.map((r) => r.t));
    const missing = tables.filter((t) => !published.has(`${t.schema}.${t.name}`));
    if (missing.length > 0) {
      throw new CdcSetupError(
        `${WHAT}: publication '${o.publication}' does not publish ${missing.map((t) => t.given).join(', ')}: ALTER PUBLICATION ${quoteIdent(o.publication)} ADD TABLE ${missing.map(qualified).join(', ')};`,
      );
    }
  }

  // The slot.
  let slot = await slotOf(client, o.slot);
  if (slot === undefined) {
    const create = `SELECT pg_create_logical_replication_slot('${o.slot}', 'pgoutput')`;
    if (o.createSlot === false) throw new CdcSetupError(`${WHAT}: replication slot '${o.slot}' does not exist: ${create}; or leave createSlot at its default (true)`);
    const used = Number((await one<{ n: string }>('SELECT count(*) AS n FROM pg_replication_slots')).n);
    const max = Number(settings.max_slots);
    if (used >= max) throw slotsExhausted(max, used);
    try {
      await client.query(create);
    } catch (e) {
      if (sqlState(e) === '53400') throw slotsExhausted(max, used, e);
      if (sqlState(e) !== '42710') throw e; // 42710: created meanwhile by someone else
    }
    slot = (await slotOf(client, o.slot))!;
    log(`${WHAT}: created replication slot '${o.slot}' (pgoutput) at ${slot.confirmed_flush_lsn}`);
  }
  checkSlotFits(o.slot, slot, settings.database);
  const confirmed = parseLsn(slot.confirmed_flush_lsn ?? '0/0', 'confirmed_flush_lsn');

  const startup = o.startup ?? 'latest';
  if (startup === 'latest') {
    const current = parseLsn((await one<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).lsn);
    return formatLsn(current > confirmed ? current : confirmed);
  }
  const wanted = parseLsn(startup.lsn, 'startup.lsn');
  if (wanted < confirmed) {
    throw new CdcSetupError(
      `${WHAT}: startup.lsn ${startup.lsn} is before the confirmed flush position ${slot.confirmed_flush_lsn} of slot '${o.slot}': the server no longer has the changes between; start at or after ${slot.confirmed_flush_lsn}`,
    );
  }
  return formatLsn(wanted);
}

function slotsExhausted(max: number, used: number, cause?: unknown): CdcSetupError {
  return new CdcSetupError(
    `${WHAT}: all replication slots are in use (max_replication_slots = ${max}, ${used} exist): drop slots no longer needed ` +
      `(SELECT slot_name, active FROM pg_replication_slots; SELECT pg_drop_replication_slot('<name>')) or raise max_replication_slots (ALTER SYSTEM SET max_replication_slots = ${max + 10}; then restart PostgreSQL)`,
    cause === undefined ? undefined : { cause },
  );
}

/** Whether a table's REPLICA IDENTITY gives the `before` image asked for. */
export function checkReplicaIdentity(t: CapturedTable, relreplident: string, hasPrimaryKey: boolean, before: 'key' | 'full'): void {
  const name = qualified(t);
  const full = `ALTER TABLE ${name} REPLICA IDENTITY FULL`;
  if (before === 'full') {
    if (relreplident !== 'f') throw new CdcSetupError(`${WHAT}: before: 'full' needs the whole old row, but table ${name} has REPLICA IDENTITY ${identityName(relreplident)}: ${full};`);
    return;
  }
  if (relreplident === 'n') throw new CdcSetupError(`${WHAT}: table ${name} has REPLICA IDENTITY NOTHING, so updates and deletes carry no old key: ${full}; (or DEFAULT with a primary key)`);
  if (relreplident === 'd' && !hasPrimaryKey) {
    throw new CdcSetupError(`${WHAT}: table ${name} has REPLICA IDENTITY DEFAULT but no primary key, so deletes carry no old key: add a primary key, or ${full};`);
  }
}

function identityName(relreplident: string): string {
  return ({ d: 'DEFAULT', n: 'NOTHING', f: 'FULL', i: 'USING INDEX' } as Record<string, string>)[relreplident] ?? relreplident;
}
