/**
 * Column values of a change, from the text form pgoutput sends to JavaScript values, by the
 * column's type OID. The replication connection runs with `TimeZone=UTC`, `DateStyle=ISO`,
 * `bytea_output=hex` and `extra_float_digits=3` (see replication-stream.ts), so the forms
 * below are the only ones that arrive. Pure.
 *
 * | type | value |
 * |---|---|
 * | int2, int4, oid | number |
 * | int8 | bigint (exact; JSON.stringify needs a replacer) |
 * | float4, float8 | number (NaN and +-Infinity included) |
 * | numeric, money | string (exact, as PostgreSQL writes it) |
 * | bool | boolean |
 * | json, jsonb | the parsed JSON value |
 * | timestamptz | ISO 8601 string in UTC with the microseconds sent: `2026-12-07T20:50:10.123456Z` |
 * | timestamp | ISO 8601 string without zone: `2026-12-07T20:50:10.123456` |
 * | bytea | Buffer |
 * | anything else (text, varchar, uuid, date, time, interval, arrays, enums, ...) | the text form |
 *
 * `infinity` / `-infinity` timestamps and BC dates stay in PostgreSQL's text form.
 */

export const TYPE_OIDS = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  money: 790,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

/** A function of the text a column's type OID selects. */
export type TextDecoder = (text: string) => unknown;

const identity: TextDecoder = (s) => s;

const DECODERS = new Map<number, TextDecoder>([
  [TYPE_OIDS.bool, (s) => s === 't'],
  [TYPE_OIDS.bytea, decodeBytea],
  [TYPE_OIDS.int2, Number],
  [TYPE_OIDS.int4, Number],
  [TYPE_OIDS.oid, Number],
  [TYPE_OIDS.int8, BigInt],
  [TYPE_OIDS.float4, Number],
  [TYPE_OIDS.float8, Number],
  [TYPE_OIDS.json, (s) => JSON.parse(s) as unknown],
  [TYPE_OIDS.jsonb, (s) => JSON.parse(s) as unknown],
  [TYPE_OIDS.timestamptz, timestamptzToIso],
  [TYPE_OIDS.timestamp, (s) => (/^\d{4,}-\d\d-\d\d \d/.test(s) && !s.endsWith(' BC') ? s.replace(' ', 'T') : s)],
]);

export function textDecoderFor(typeOid: number): TextDecoder {
  return DECODERS.get(typeOid) ?? identity;
}

/** `\x0a0b` (bytea_output = hex) -> Buffer. */
export function decodeBytea(s: string): Buffer {
  if (!s.startsWith('\\x')) throw new Error(`bytea value not in hex form (bytea_output must be hex): ${s.slice(0, 20)}`);
  return Buffer.from(s.slice(2), 'hex');
}

const TIMESTAMPTZ = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d{1,6})?([+-])(\d\d)(?::(\d\d)(?::(\d\d))?)?$/;

/**
 * `2026-12-07 20:50:10.123456+00` -> `2026-12-07T20:50:10.123456Z`, also from another offset
 * (the fraction is kept as sent; Date would cut it to milliseconds).
 */
export function timestamptzToIso(s: string): string {
  const m = TIMESTAMPTZ.exec(s);
  if (m === null) return s; // infinity, -infinity, BC
  const [, y, mo, d, h, mi, sec, frac = '', sign, oh, om = '0', os = '0'] = m;
  const offsetS = (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60 + Number(os));
  if (offsetS === 0) return `${y}-${mo}-${d}T${h}:${mi}:${sec}${frac}Z`;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(sec) - offsetS, 0);
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z (or +YYYYYY- for far years)
  return `${iso.slice(0, iso.length - 5)}${frac}Z`;
}

/** Microseconds since 2000-01-01 (PostgreSQL's epoch) -> epoch milliseconds. */
export function pgMicrosToEpochMs(us: bigint): number {
  return Number(us / 1000n) + PG_EPOCH_MS;
}

/** Microseconds since 2000-01-01 -> ISO 8601 with microseconds in UTC. */
export function pgMicrosToIso(us: bigint): string {
  const ms = us / 1000n;
  const micros = Number(((us % 1000n) + 1000n) % 1000n);
  const wholeMs = us < 0n && micros !== 0 ? ms - 1n : ms;
  const iso = new Date(Number(wholeMs) + PG_EPOCH_MS).toISOString();
  return `${iso.slice(0, iso.length - 1)}${String(micros).padStart(3, '0')}Z`;
}

export const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
