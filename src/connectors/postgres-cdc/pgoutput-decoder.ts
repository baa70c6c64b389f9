/**
 * Decodes the messages of PostgreSQL's built-in `pgoutput` logical decoding plugin
 * (protocol version 1: "Logical Replication Message Formats" in PostgreSQL's documentation)
 * from the bytes of an XLogData message. Pure: bytes in, a closed union out. Column values stay
 * in the text form the server sent (`pg-text-values.ts` turns them into JavaScript values).
 */

/** A column value as sent: text, NULL, or an unchanged TOASTed value the server left out. */
export type TupleValue = string | null | typeof UNCHANGED_TOASTED;
/** pgoutput's 'u': an unchanged value stored out of line (TOAST), not sent. */
export const UNCHANGED_TOASTED = Symbol('unchanged TOASTed value');

export interface RelationColumn {
  readonly name: string;
  readonly typeOid: number;
  readonly typeModifier: number;
  /** Part of the replica identity (the key sent for updates and deletes). */
  readonly isKey: boolean;
}

export interface Relation {
  readonly relationId: number;
  /** `pg_catalog` when the server sent an empty namespace (as the protocol says). */
  readonly schema: string;
  readonly table: string;
  /** `d` default (primary key), `n` nothing, `f` full, `i` index. */
  readonly replicaIdentity: 'd' | 'n' | 'f' | 'i';
  readonly columns: readonly RelationColumn[];
}

export type PgOutputMessage =
  | { readonly tag: 'begin'; readonly finalLsn: bigint; readonly commitTimeUs: bigint; readonly xid: number }
  | { readonly tag: 'commit'; readonly commitLsn: bigint; readonly endLsn: bigint; readonly commitTimeUs: bigint }
  | { readonly tag: 'relation'; readonly relation: Relation }
  | { readonly tag: 'insert'; readonly relationId: number; readonly newTuple: readonly TupleValue[] }
  | {
      readonly tag: 'update';
      readonly relationId: number;
      /** 'K': the old key (the key changed), 'O': the whole old row (REPLICA IDENTITY FULL), none: neither. */
      readonly oldKind: 'K' | 'O' | undefined;
      readonly oldTuple: readonly TupleValue[] | undefined;
      readonly newTuple: readonly TupleValue[];
    }
  | { readonly tag: 'delete'; readonly relationId: number; readonly oldKind: 'K' | 'O'; readonly oldTuple: readonly TupleValue[] }
  | { readonly tag: 'truncate'; readonly relationIds: readonly number[]; readonly cascade: boolean; readonly restartIdentity: boolean }
  /** Origin, Type and logical decoding messages: nothing the source uses. */
  | { readonly tag: 'ignored'; readonly kind: string };

/** A message the decoder cannot read: the bytes are not pgoutput protocol 1 as documented. */
export class PgOutputDecodeError extends Error {
  override readonly name = 'PgOutputDecodeError';
}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Buffer) {}

  private need(n: number): void {
    if (this.offset + n > this.bytes.length) throw new PgOutputDecodeError(`pgoutput message ${JSON.stringify(String.fromCharCode(this.bytes[0] ?? 0))} is truncated: needs ${n} bytes at offset ${this.offset} of ${this.bytes.length}`);
  }
  u8(): number {
    this.need(1);
    return this.bytes[this.offset++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.bytes.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.bytes.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.bytes.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }
  i64(): bigint {
    this.need(8);
    const v = this.bytes.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }
  /** A NUL-terminated UTF-8 string. */
  cstring(): string {
    const end = this.bytes.indexOf(0, this.offset);
    if (end < 0) throw new PgOutputDecodeError(`pgoutput message: a string at offset ${this.offset} has no terminating NUL`);
    const s = this.bytes.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return s;
  }
  text(n: number): string {
    this.need(n);
    const s = this.bytes.toString('utf8', this.offset, this.offset + n);
    this.offset += n;
    return s;
  }
}

function tuple(r: Reader): TupleValue[] {
  const n = r.u16();
  const values: TupleValue[] = new Array<TupleValue>(n);
  for (let i = 0; i < n; i++) {
    const kind = r.u8();
    if (kind === 0x6e /* n */) values[i] = null;
    else if (kind === 0x75 /* u */) values[i] = UNCHANGED_TOASTED;
    else if (kind === 0x74 /* t */) values[i] = r.text(r.i32());
    else throw new PgOutputDecodeError(`pgoutput tuple: column ${i} has the kind byte 0x${kind.toString(16)} (binary values are not requested; expected 'n', 'u' or 't')`);
  }
  return values;
}

function tupleMarker(r: Reader, allowed: string, what: string): string {
  const c = String.fromCharCode(r.u8());
  if (!allowed.includes(c)) throw new PgOutputDecodeError(`pgoutput ${what}: expected one of '${allowed.split('').join("', '")}', got ${JSON.stringify(c)}`);
  return c;
}

const IDENTITIES = new Set(['d', 'n', 'f', 'i']);

/** Decodes one pgoutput message (the payload of an XLogData message). */
export function decodePgOutput(bytes: Buffer): PgOutputMessage {
  const r = new Reader(bytes);
  const tag = String.fromCharCode(r.u8());
  switch (tag) {
    case 'B':
      return { tag: 'begin', finalLsn: r.u64(), commitTimeUs: r.i64(), xid: r.u32() };
    case 'C': {
      r.u8(); // flags, unused
      return { tag: 'commit', commitLsn: r.u64(), endLsn: r.u64(), commitTimeUs: r.i64() };
    }
    case 'R': {
      const relationId = r.u32();
      const schema = r.cstring() || 'pg_catalog';
      const table = r.cstring();
      const identity = String.fromCharCode(r.u8());
      if (!IDENTITIES.has(identity)) throw new PgOutputDecodeError(`pgoutput relation ${schema}.${table}: unknown replica identity ${JSON.stringify(identity)}`);
      const n = r.u16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < n; i++) {
        const flags = r.u8();
        const name = r.cstring();
        columns.push({ name, typeOid: r.u32(), typeModifier: r.i32(), isKey: (flags & 1) === 1 });
      }
      return { tag: 'relation', relation: { relationId, schema, table, replicaIdentity: identity as Relation['replicaIdentity'], columns } };
    }
    case 'I': {
      const relationId = r.u32();
      tupleMarker(r, 'N', 'insert');
      return { tag: 'insert', relationId, newTuple: tuple(r) };
    }
    case 'U': {
      const relationId = r.u32();
      const first = tupleMarker(r, 'KON', 'update');
      if (first === 'N') return { tag: 'update', relationId, oldKind: undefined, oldTuple: undefined, newTuple: tuple(r) };
      const oldTuple = tuple(r);
      tupleMarker(r, 'N', 'update');
      return { tag: 'update', relationId, oldKind: first as 'K' | 'O', oldTuple, newTuple: tuple(r) };
    }
    case 'D': {
      const relationId = r.u32();
      const kind = tupleMarker(r, 'KO', 'delete') as 'K' | 'O';
      return { tag: 'delete', relationId, oldKind: kind, oldTuple: tuple(r) };
    }
    case 'T': {
      const n = r.u32();
      const options = r.u8();
      const relationIds: number[] = [];
      for (let i = 0; i < n; i++) relationIds.push(r.u32());
      return { tag: 'truncate', relationIds, cascade: (options & 1) !== 0, restartIdentity: (options & 2) !== 0 };
    }
    case 'O':
      return { tag: 'ignored', kind: 'origin' };
    case 'Y':
      return { tag: 'ignored', kind: 'type' };
    case 'M':
      return { tag: 'ignored', kind: 'message' };
    default:
      throw new PgOutputDecodeError(
        `pgoutput: unknown message ${JSON.stringify(tag)} (0x${(bytes[0] ?? 0).toString(16)}); the source asks for protocol version 1, which has B, C, R, I, U, D, T, O, Y and M`,
      );
  }
}
