import type { DebeziumJsonMessage } from './cdc-types.js';
import { decodeBytea, timestamptzToIso, TYPE_OIDS } from './pg-text-values.js';
import { UNCHANGED_TOASTED, type PgOutputMessage, type Relation, type TupleValue } from './pgoutput-decoder.js';

/**
 * Changes in the JSON shape of Debezium's PostgreSQL connector (its value with
 * `value.converter.schemas.enable=false`; key likewise), built from the values as pgoutput sent
 * them, by type OID, so that consumers of Debezium topics read them unchanged. Pure. Debezium's
 * behaviour followed: an update of the key is a delete of the old key, a tombstone and a
 * create; a delete is followed by a tombstone (`tombstones.on.delete`); an unchanged TOASTed
 * value is `__debezium_unavailable_value`. Settings whose defaults give values only a schema
 * can read are taken as the readable alternative: numeric as a string
 * (`decimal.handling.mode=string`), bytea as base64 (`binary.handling.mode=base64`).
 */

export const UNAVAILABLE_VALUE = '__debezium_unavailable_value';
const DATE_OID = 1082;
const TIME_OID = 1083;
const DAY_MS = 86_400_000;

export interface DebeziumContext {
  readonly topicPrefix: string;
  readonly database: string;
  readonly relation: Relation;
  /** The table's primary key columns (the message key; none: a null key, as Debezium). */
  readonly keyColumns: readonly string[];
  readonly lsn: bigint;
  readonly commitLsn: bigint;
  readonly txId: number;
  readonly commitMs: number;
  readonly nowMs: number;
}

/** A JSON text: a value already written as JSON (int8 digits stay exact). */
class Raw {
  constructor(readonly json: string) {}
}

function value(typeOid: number, v: TupleValue): unknown {
  if (v === null) return null;
  if (v === UNCHANGED_TOASTED) return UNAVAILABLE_VALUE;
  switch (typeOid) {
    case TYPE_OIDS.bool:
      return v === 't';
    case TYPE_OIDS.int2:
    case TYPE_OIDS.int4:
    case TYPE_OIDS.oid:
      return Number(v);
    case TYPE_OIDS.int8:
      return new Raw(v);
    case TYPE_OIDS.float4:
    case TYPE_OIDS.float8: {
      const n = Number(v);
      return Number.isFinite(n) ? n : v; // NaN, Infinity: JSON has no number for them
    }
    case TYPE_OIDS.bytea:
      return decodeBytea(v).toString('base64');
    case TYPE_OIDS.timestamptz:
      return timestamptzToIso(v);
    case TYPE_OIDS.timestamp: {
      // io.debezium.time.MicroTimestamp: microseconds since the epoch.
      const m = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(v);
      if (m === null) return v;
      const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
      return new Raw((BigInt(ms) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0') || '0')).toString());
    }
    case DATE_OID: {
      // io.debezium.time.Date: days since the epoch.
      const m = /^(\d{4,})-(\d\d)-(\d\d)$/.exec(v);
      return m === null ? v : Math.floor(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS);
    }
    case TIME_OID: {
      // io.debezium.time.MicroTime: microseconds since midnight.
      const m = /^(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(v);
      return m === null ? v : (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1_000_000 + Number((m[4] ?? '').padEnd(6, '0') || '0');
    }
    default:
      return v; // numeric, text, json(b) as its text, uuid, ...
  }
}

function row(relation: Relation, tuple: readonly TupleValue[], keysOnly: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  relation.columns.forEach((c, i) => {
    if (!keysOnly || c.isKey) out[c.name] = value(c.typeOid, tuple[i]!);
  });
  return out;
}

/** JSON text with Raw values written as they are. */
function stringify(v: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(v, (_k, x: unknown) => (x instanceof Raw ? `\u0000raw${raws.push(x.json) - 1}\u0000` : x));
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!);
}

/** The Kafka messages of one pgoutput change (several for a key change and for a delete). */
export function debeziumMessages(m: PgOutputMessage, ctx: DebeziumContext): DebeziumJsonMessage[] {
  const r = ctx.relation;
  const topic = `${ctx.topicPrefix}.${r.schema}.${r.table}`;
  const source = {
    version: 'sluice',
    connector: 'postgresql',
    name: ctx.topicPrefix,
    ts_ms: ctx.commitMs,
    snapshot: 'false',
    db: ctx.database,
    sequence: JSON.stringify([ctx.commitLsn.toString(), ctx.lsn.toString()]),
    schema: r.schema,
    table: r.table,
    txId: ctx.txId,
    lsn: new Raw(ctx.lsn.toString()),
    xmin: null,
  };
  const event = (op: string, before: unknown, after: unknown, key: unknown): DebeziumJsonMessage => ({
    topic,
    key: key === null ? null : stringify(key),
    value: stringify({ before, after, source, op, ts_ms: ctx.nowMs, transaction: null }),
  });
  const tombstone = (key: unknown): DebeziumJsonMessage => ({ topic, key: key === null ? null : stringify(key), value: null });
  const keyOf = (tuple: readonly TupleValue[]): unknown => {
    if (ctx.keyColumns.length === 0) return null;
    const key: Record<string, unknown> = {};
    r.columns.forEach((c, i) => {
      if (ctx.keyColumns.includes(c.name)) key[c.name] = value(c.typeOid, tuple[i]!);
    });
    return key;
  };
  switch (m.tag) {
    case 'insert':
      return [event('c', null, row(r, m.newTuple, false), keyOf(m.newTuple))];
    case 'update': {
      const after = row(r, m.newTuple, false);
      const before = m.oldTuple === undefined ? null : row(r, m.oldTuple, m.oldKind === 'K');
      if (m.oldKind === 'K' && m.oldTuple !== undefined) {
        // The key changed: Debezium's delete, tombstone, create.
        const oldKey = keyOf(m.oldTuple);
        return [event('d', before, null, oldKey), tombstone(oldKey), event('c', null, after, keyOf(m.newTuple))];
      }
      return [event('u', before, after, keyOf(m.newTuple))];
    }
    case 'delete': {
      const key = keyOf(m.oldTuple);
      return [event('d', row(r, m.oldTuple, m.oldKind === 'K'), null, key), tombstone(key)];
    }
    case 'truncate':
      return [event('t', null, null, null)];
    default:
      return [];
  }
}
