import { describe, expect, it } from 'vitest';
import { decodePgOutput, PgOutputDecodeError, UNCHANGED_TOASTED } from './pgoutput-decoder.js';
import { pgMicrosToIso, textDecoderFor, timestamptzToIso, TYPE_OIDS } from './pg-text-values.js';

function bytes(...parts: (number[] | string | Buffer)[]): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p + '\0') : Buffer.isBuffer(p) ? p : Buffer.from(p))));
}
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u64 = (n: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};
const text = (s: string): Buffer => Buffer.concat([Buffer.from('t'), u32(Buffer.byteLength(s)), Buffer.from(s)]);

describe('pgoutput decoder (pure)', () => {
  it('decodes Begin, Relation, an Update with an old key and an unchanged TOASTed value, Truncate and Commit', () => {
    expect(decodePgOutput(bytes([0x42], u64(0x1_0000_0010n), u64(5n), u32(726)))).toEqual({ tag: 'begin', finalLsn: 0x1_0000_0010n, commitTimeUs: 5n, xid: 726 });
    const rel = decodePgOutput(bytes([0x52], u32(16384), '', 'orders', [0x64], [0, 2], [1], 'id', u32(23), u32(0xffffffff), [0], 'note', u32(25), u32(0xffffffff)));
    expect(rel).toEqual({
      tag: 'relation',
      relation: {
        relationId: 16384,
        schema: 'pg_catalog',
        table: 'orders',
        replicaIdentity: 'd',
        columns: [
          { name: 'id', typeOid: 23, typeModifier: -1, isKey: true },
          { name: 'note', typeOid: 25, typeModifier: -1, isKey: false },
        ],
      },
    });
    const update = decodePgOutput(bytes([0x55], u32(16384), [0x4b, 0, 2], text('1'), [0x6e, 0x4e, 0, 2], text('2'), [0x75]));
    expect(update).toEqual({ tag: 'update', relationId: 16384, oldKind: 'K', oldTuple: ['1', null], newTuple: ['2', UNCHANGED_TOASTED] });
    expect(decodePgOutput(bytes([0x54], u32(2), [3], u32(1), u32(2)))).toEqual({ tag: 'truncate', relationIds: [1, 2], cascade: true, restartIdentity: true });
    expect(decodePgOutput(bytes([0x43, 0], u64(16n), u64(48n), u64(7n)))).toEqual({ tag: 'commit', commitLsn: 16n, endLsn: 48n, commitTimeUs: 7n });
  });

  it('refuses unknown messages and truncated ones', () => {
    expect(() => decodePgOutput(Buffer.from('S'))).toThrow(PgOutputDecodeError);
    expect(() => decodePgOutput(bytes([0x42], [0, 1]))).toThrow(/truncated/);
  });
});

describe('text values by type OID (pure)', () => {
  it('numbers, bigint, numeric, bool, json, bytea, timestamps', () => {
    expect(textDecoderFor(TYPE_OIDS.int4)('-12')).toBe(-12);
    expect(textDecoderFor(TYPE_OIDS.int8)('9007199254740993')).toBe(9007199254740993n);
    expect(textDecoderFor(TYPE_OIDS.numeric)('1.50')).toBe('1.50');
    expect(textDecoderFor(TYPE_OIDS.float8)('NaN')).toBeNaN();
    expect(textDecoderFor(TYPE_OIDS.bool)('f')).toBe(false);
    expect(textDecoderFor(TYPE_OIDS.jsonb)('{"a": [1, null]}')).toEqual({ a: [1, null] });
    expect(textDecoderFor(TYPE_OIDS.bytea)('\\x00ff')).toEqual(Buffer.from([0, 255]));
    expect(textDecoderFor(TYPE_OIDS.timestamp)('2026-12-07 20:50:10.5')).toBe('2026-12-07T20:50:10.5');
    expect(timestamptzToIso('2026-12-07 20:50:10.123456+00')).toBe('2026-12-07T20:50:10.123456Z');
    expect(timestamptzToIso('2026-12-07 00:50:10.123456+05:30')).toBe('2026-12-06T19:20:10.123456Z');
    expect(timestamptzToIso('infinity')).toBe('infinity');
    expect(textDecoderFor(25)('x')).toBe('x');
    expect(pgMicrosToIso(1_000_001n)).toBe('2000-01-01T00:00:01.000001Z');
  });
});
