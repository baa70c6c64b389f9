import pg from 'pg';
import { isUnchangedToast, type CdcRow, type ChangeRecord } from '../../src/connectors/postgres-cdc/index.js';
import { seededRandom } from '../../src/testing/seeded-random.js';

/**
 * The seeded workload of the CDC tests (test/postgres-cdc.test.ts in one process,
 * test/postgres-cdc-cluster.test.ts on a cluster) and its independent reference: the changes
 * each statement makes, and mirrors of the tables built from a job's output.
 */

export interface Order extends CdcRow {
  id: number;
  customer: string;
  amount: string;
  qty: bigint;
  paid: boolean;
  meta: unknown;
  created: string;
  note: string | null;
}
export interface Item extends CdcRow {
  id: number;
  name: string;
  payload: Buffer;
  big: string | null;
}
export type Tables = { 'public.cdc_orders': Order; cdc_items: Item };
export type Change = ChangeRecord<Order, 'public.cdc_orders'> | ChangeRecord<Item, 'cdc_items'>;

/** A statement of the workload and the changes it makes, as `table|op|beforeId|afterId`. */
export interface Statement {
  readonly text: string;
  readonly values: unknown[];
  readonly changes: string[];
}

/**
 * A seeded workload on two tables: inserts, updates of other columns, updates of the primary
 * key, deletes, large TOASTed text values and later updates of those rows that leave the text
 * unchanged, in transactions of 1-5 statements, plus two large transactions (a 600-row insert
 * and 200 updates) that span several polls of the source. `cdc_orders` has REPLICA IDENTITY
 * DEFAULT (before: the key, only when it changes), `cdc_items` FULL (before: the old row).
 */
export function workload(seed: number): Statement[][] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const orders = new Set<number>();
  const items = new Set<number>();
  const toasted = new Set<number>();
  let nextId = 1;
  const bigText = (n: number): string => {
    const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/';
    let s = '';
    for (let i = 0; i < n; i++) s += abc[Math.floor(rnd() * 64)];
    return s;
  };
  const orderValues = (id: number, note: string | null): unknown[] => [
    id,
    `customer-${Math.floor(rnd() * 50)}`,
    (Math.floor(rnd() * 1_000_000) / 100).toFixed(2),
    String(BigInt(Math.floor(rnd() * 1e9)) * 10_000_000n + 7n),
    rnd() < 0.5,
    JSON.stringify({ tags: [pick(['a', 'b', 'c'])], n: Math.floor(rnd() * 10) }),
    new Date(Date.UTC(2026, 11, 7, 0, 0, 0, Math.floor(rnd() * 86_400_000))).toISOString(),
    note,
  ];
  const statement = (): Statement => {
    const r = rnd();
    const orderIds = [...orders];
    const itemIds = [...items];
    if (r < 0.3 || orderIds.length < 3) {
      const id = nextId++;
      orders.add(id);
      const toast = rnd() < 0.02 || toasted.size === 0;
      if (toast) toasted.add(id);
      return { text: 'INSERT INTO cdc_orders VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', values: orderValues(id, toast ? bigText(120_000) : rnd() < 0.3 ? null : 'short'), changes: [`public.cdc_orders|c|-|${id}`] };
    }
    if (r < 0.42 || itemIds.length < 3) {
      const id = nextId++;
      items.add(id);
      const big = rnd() < 0.05 ? bigText(60_000) : null;
      return { text: 'INSERT INTO cdc_items VALUES ($1, $2, $3, $4)', values: [id, `item-${id}`, Buffer.from([id & 255, 0, 255]), big], changes: [`cdc_items|c|-|${id}`] };
    }
    if (r < 0.62) {
      // Mostly the TOASTed rows: their note stays unchanged (pgoutput's 'u').
      const id = toasted.size > 0 && rnd() < 0.5 ? pick([...toasted]) : pick(orderIds);
      return { text: 'UPDATE cdc_orders SET qty = qty + 1, paid = NOT paid WHERE id = $1', values: [id], changes: [`public.cdc_orders|u|-|${id}`] };
    }
    if (r < 0.7) {
      const id = pick(orderIds);
      const to = nextId++;
      orders.delete(id);
      orders.add(to);
      if (toasted.delete(id)) toasted.add(to);
      return { text: 'UPDATE cdc_orders SET id = $2 WHERE id = $1', values: [id, to], changes: [`public.cdc_orders|u|${id}|${to}`] };
    }
    if (r < 0.8) {
      const id = pick(itemIds);
      return { text: "UPDATE cdc_items SET name = name || '+' WHERE id = $1", values: [id], changes: [`cdc_items|u|${id}|${id}`] };
    }
    if (r < 0.85) {
      const id = pick(itemIds);
      const to = nextId++;
      items.delete(id);
      items.add(to);
      return { text: 'UPDATE cdc_items SET id = $2 WHERE id = $1', values: [id, to], changes: [`cdc_items|u|${id}|${to}`] };
    }
    if (r < 0.93) {
      const id = pick(orderIds);
      orders.delete(id);
      toasted.delete(id);
      return { text: 'DELETE FROM cdc_orders WHERE id = $1', values: [id], changes: [`public.cdc_orders|d|${id}|-`] };
    }
    const id = pick(itemIds);
    items.delete(id);
    return { text: 'DELETE FROM cdc_items WHERE id = $1', values: [id], changes: [`cdc_items|d|${id}|-`] };
  };
  const txns: Statement[][] = [];
  for (let t = 0; t < 260; t++) {
    if (t === 80 || t === 190) {
      // Large transactions: a 600-row insert, then 200 single-row updates.
      const ids = Array.from({ length: 600 }, () => nextId++);
      for (const id of ids) items.add(id);
      const bulk: Statement = {
        text: `INSERT INTO cdc_items (id, name, payload) VALUES ${ids.map((_, i) => `($${i + 1}, 'bulk', '\\x00')`).join(', ')}`,
        values: ids,
        changes: ids.map((id) => `cdc_items|c|-|${id}`),
      };
      const updates = ids.slice(0, 200).map((id): Statement => ({ text: "UPDATE cdc_items SET name = name || '*' WHERE id = $1", values: [id], changes: [`cdc_items|u|${id}|${id}`] }));
      txns.push([bulk, ...updates]);
      continue;
    }
    txns.push(Array.from({ length: 1 + Math.floor(rnd() * 5) }, statement));
  }
  return txns;
}

export function identity(r: Change): string {
  const id = (row: CdcRow | null): string => (row === null || row['id'] === undefined ? '-' : String(row['id']));
  return `${r.table}|${r.op}|${id(r.before)}|${id(r.after)}`;
}

/** A mirror of each table from the changes (an unchanged TOASTed value keeps the mirrored one). */
export function mirror(changes: readonly Change[]): { tables: Map<string, Map<number, CdcRow>>; unchangedToast: number } {
  const tables = new Map<string, Map<number, CdcRow>>([
    ['public.cdc_orders', new Map()],
    ['cdc_items', new Map()],
  ]);
  let unchangedToast = 0;
  for (const c of changes) {
    const t = tables.get(c.table)!;
    if (c.op === 'c') t.set(c.after.id, { ...c.after });
    else if (c.op === 'u') {
      const oldId = c.before?.id ?? c.after.id;
      const old = t.get(oldId as number);
      if (old === undefined) throw new Error(`update of a row not in the mirror: ${identity(c)}`);
      t.delete(oldId as number);
      const row: CdcRow = {};
      for (const [k, v] of Object.entries(c.after)) {
        if (v === null && isUnchangedToast(old[k])) throw new Error('null mistaken for unchanged');
        if (isUnchangedToast(v)) unchangedToast++;
        row[k] = isUnchangedToast(v) ? old[k] : v;
      }
      t.set(row['id'] as number, row);
    } else if (c.op === 'd') t.delete(c.before!.id as number);
  }
  return { tables, unchangedToast };
}

/** Rows in one comparable form, from the mirror (source values) or from pg (its own types). */
export function canonical(table: string, r: CdcRow): string {
  const hex = (b: unknown): string => (Buffer.isBuffer(b) ? b.toString('hex') : String(b));
  if (table === 'public.cdc_orders') {
    return JSON.stringify([r['id'], r['customer'], r['amount'], String(r['qty']), r['paid'], r['meta'], new Date(r['created'] as string).getTime(), r['note']]);
  }
  return JSON.stringify([r['id'], r['name'], hex(r['payload']), r['big']]);
}

/** The workload's tables and a publication of them and of a table the source does not capture. */
export const WORKLOAD_DDL = [
  'CREATE TABLE cdc_orders (id int PRIMARY KEY, customer text, amount numeric(12,2), qty bigint, paid bool, meta jsonb, created timestamptz, note text)',
  'CREATE TABLE cdc_items (id int PRIMARY KEY, name text, payload bytea, big text)',
  'ALTER TABLE cdc_items REPLICA IDENTITY FULL',
  'CREATE TABLE cdc_other (id int PRIMARY KEY)',
  'CREATE PUBLICATION cdc_pub FOR TABLE cdc_orders, cdc_items, cdc_other',
];

/** Runs the workload's transactions on one connection, `pauseMs` between transactions. */
export async function runWorkload(connection: pg.ClientConfig, txns: readonly Statement[][], pauseMs = 0): Promise<void> {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    for (const [i, txn] of txns.entries()) {
      await client.query('BEGIN');
      for (const s of txn) await client.query(s.text, s.values);
      // A change of a table the publication has but the source does not capture.
      if (txn.length === 3) await client.query('INSERT INTO cdc_other VALUES ($1) ON CONFLICT DO NOTHING', [i]);
      await client.query('COMMIT');
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  } finally {
    await client.end();
  }
}
