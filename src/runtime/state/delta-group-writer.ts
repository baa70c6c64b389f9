import { assert } from '../../util/assert.js';
import type { KeyType } from './key-group.js';
import type { NumericEntries } from './numeric-entries.js';

/**
 * Writes the delta group of a heap table's changed keys (keyed-state-delta.ts's format:
 * `[upserts, deletedKeys, []]`) straight into msgpack, for keys and values that are numbers,
 * strings, booleans or null: the common state of counts, sums and flags. Building the
 * upserts map and handing it to msgpackr was most of the capture cost of an incremental or
 * snapshot-thread checkpoint on the task thread (q5: msgpackr's pack 4.8% of the thread,
 * the map 1.4%).
 *
 * The bytes decode with the state packer to exactly what msgpackr writes for the same delta:
 * integers of up to 32 bits as the smallest msgpack integer (never a fixint of 0x40-0x7f,
 * which the state packer reads as a record reference), every other number as a float64
 * (-0 as 0, as msgpackr does), strings as UTF-8. Map and array headers whose size is known
 * only at the end are written in their 32-bit form and filled in last.
 *
 * Returns null when a key or value is of another kind (the caller packs the delta with
 * msgpackr), undefined when nothing changed.
 */
export function writeHeapDeltaGroup(group: ReadonlyMap<KeyType, unknown>, changed: ReadonlySet<KeyType>, namespaced: boolean): Uint8Array | undefined | null {
  if (changed.size === 0) return undefined;
  const w = writer;
  w.reset(64 + changed.size * (namespaced ? 64 : 24));
  w.u8(0x93);
  const upsertsAt = w.reserveMapHeader();
  let upserts = 0;
  const deleted: KeyType[] = [];
  for (const k of changed) {
    const v = group.get(k);
    if (namespaced) deleted.push(k); // a namespaced key is replaced whole
    if (v === undefined) {
      if (!namespaced) deleted.push(k);
      continue;
    }
    if (!w.scalar(k)) return null;
    if (!namespaced) {
      if (!w.scalar(v)) return null;
    } else {
      const byNs = v as Map<number, unknown>;
      w.mapHeader(byNs.size);
      for (const [ns, nv] of byNs) if (!w.scalar(ns) || !w.scalar(nv)) return null;
    }
    upserts++;
  }
  w.fillMapHeader(upsertsAt, upserts);
  w.arrayHeader(deleted.length);
  for (const k of deleted) if (!w.scalar(k)) return null;
  w.u8(0x90); // no single-entry removals
  return w.take();
}

/**
 * A numeric key group (numeric-entries.ts) as a full group: the bytes a full snapshot holds
 * for it, `key -> value` or `key -> namespace -> value`, as msgpackr would pack the maps (see
 * above), keys in the order they first occur. `columns` holds (key, namespace, value)
 * triples from index `at`. Undefined when the group is empty.
 */
export function writeFullGroupOfColumns(columns: Float64Array, at: number, count: number, namespaced: boolean): Uint8Array | undefined {
  if (count === 0) return undefined;
  writer.reset(16 + count * (namespaced ? 24 : 16));
  writeColumnsMap(columns, at, count, namespaced);
  return writer.take();
}

/**
 * The delta group (the format above) of a numeric key group's changed keys: the entries of
 * the changed keys straight from the columns, then the deleted keys (in a namespaced table
 * every changed key, which the upserts replace whole; else the changed keys without a value).
 * Null when a changed key is not a number, string, boolean or null (the caller takes the
 * general path).
 */
export function writeNumericDeltaGroup(entries: NumericEntries, changed: ReadonlySet<KeyType>, namespaced: boolean): Uint8Array | undefined | null {
  if (changed.size === 0) return undefined;
  const columns = new Float64Array(3 * entries.size);
  const count = entries.writeColumnsOf(changed, columns, 0) / 3;
  const w = writer;
  w.reset(64 + count * (namespaced ? 24 : 16) + changed.size * 9);
  w.u8(0x93);
  writeColumnsMap(columns, 0, count, namespaced);
  const deleted: KeyType[] = [];
  for (const k of changed) if (namespaced || typeof k !== 'number' || entries.get(k, 0) === undefined) deleted.push(k);
  w.arrayHeader(deleted.length);
  for (const k of deleted) if (!w.scalar(k)) return null; // a key of another kind (only removed: a numeric table holds numbers)
  w.u8(0x90); // no single-entry removals
  return w.take();
}

/** Writes (key, namespace, value) triples as a map, `key -> value` or `key -> namespace -> value`, keys in the order they first occur. */
function writeColumnsMap(columns: Float64Array, at: number, count: number, namespaced: boolean): void {
  const w = writer;
  const end = at + 3 * count;
  if (!namespaced) {
    w.mapHeader(count);
    for (let i = at; i < end; i += 3) {
      w.scalar(columns[i]!);
      w.scalar(columns[i + 2]!);
    }
    return;
  }
  // Entries of one key are spread over the table: chain them per key (first and next entry).
  const first = new Map<number, number>();
  const next = new Int32Array(count).fill(-1);
  const last = new Int32Array(count);
  for (let e = 0; e < count; e++) {
    const key = columns[at + 3 * e]!;
    const head = first.get(key);
    if (head === undefined) {
      first.set(key, e);
      last[e] = e;
    } else {
      next[last[head]!] = e;
      last[head] = e;
    }
  }
  w.mapHeader(first.size);
  for (const [key, head] of first) {
    w.scalar(key);
    let n = 0;
    for (let e = head; e >= 0; e = next[e]!) n++;
    w.mapHeader(n);
    for (let e = head; e >= 0; e = next[e]!) {
      w.scalar(columns[at + 3 * e + 1]!);
      w.scalar(columns[at + 3 * e + 2]!);
    }
  }
}

/**
 * First byte of a numeric key group sent whole to the snapshot thread as raw columns (0xc1
 * is never used in msgpack, so no full or delta group starts with it). The bytes are an
 * 8-byte header (the marker, then 1 when namespaced) and (key, namespace, value) float64
 * triples. Only the snapshot thread's replica reads them (`fullGroupOfColumns`); they never
 * reach checkpoint storage.
 */
export const COLUMNS_GROUP_MARKER = 0xc1;

/** A numeric key group as a columns group (in `arena` when given); an empty group too (it tells the replica the group is empty now). */
export function columnsGroupBytes(entries: NumericEntries | undefined, namespaced: boolean, arena?: { alloc(n: number): Uint8Array }): Uint8Array {
  const count = entries?.size ?? 0;
  const bytes = arena === undefined ? new Uint8Array(8 * (1 + 3 * count)) : arena.alloc(8 * (1 + 3 * count));
  assert(bytes.byteOffset % 8 === 0, 'a columns group starts at an 8-byte aligned offset');
  const columns = new Float64Array(bytes.buffer, bytes.byteOffset, 1 + 3 * count);
  bytes[0] = COLUMNS_GROUP_MARKER;
  bytes[1] = namespaced ? 1 : 0;
  entries?.writeColumns(columns, 1);
  return bytes;
}

/**
 * A key group sent whole to the snapshot thread as its full group's bytes (`full` undefined:
 * the group is empty): the columns marker with flag 2, then the bytes from offset 8.
 */
export function wholeGroupBytes(full: Uint8Array | undefined, arena?: { alloc(n: number): Uint8Array }): Uint8Array {
  const n = 8 + (full?.length ?? 0);
  const bytes = arena === undefined ? new Uint8Array(n) : arena.alloc(n);
  bytes.fill(0, 0, 8);
  bytes[0] = COLUMNS_GROUP_MARKER;
  bytes[1] = 2;
  if (full !== undefined) bytes.set(full, 8);
  return bytes;
}

export function isColumnsGroup(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && bytes[0] === COLUMNS_GROUP_MARKER;
}

/** The full group of a columns group or of a whole group (undefined when it is empty). */
export function fullGroupOfColumns(bytes: Uint8Array): Uint8Array | undefined {
  if (isColumnsGroup(bytes) && bytes[1] === 2) return bytes.length > 8 ? Uint8Array.prototype.slice.call(bytes, 8) : undefined; // a copy: the buffer goes back to be written again
  assert(isColumnsGroup(bytes) && bytes.length % 8 === 0, `a columns group is an 8-byte header and float64 triples (got ${bytes.length} bytes)`);
  const columns = bytes.byteOffset % 8 === 0 ? new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8) : new Float64Array(new Uint8Array(bytes).buffer); // a copy (a Buffer's slice is a view)
  const count = (columns.length - 1) / 3;
  assert(Number.isInteger(count), 'a columns group holds whole (key, namespace, value) triples');
  return writeFullGroupOfColumns(columns, 1, count, bytes[1] === 1);
}

/** A growable msgpack buffer for the scalars above. */
class ScalarWriter {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  private at = 0;
  private readonly encoder = new TextEncoder();

  reset(expectedBytes: number): void {
    this.at = 0;
    this.ensure(expectedBytes);
  }

  /** The bytes written, copied out (the buffer is reused, unless one huge group grew it past 16 MB). */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.at);
    if (this.buf.length > 1 << 24) {
      this.buf = new Uint8Array(1 << 16);
      this.view = new DataView(this.buf.buffer);
    }
    return out;
  }

  u8(b: number): void {
    this.ensure(1);
    this.buf[this.at++] = b;
  }

  mapHeader(n: number): void {
    this.header(n, 0x80, 0xde);
  }

  arrayHeader(n: number): void {
    this.header(n, 0x90, 0xdc);
  }

  /** A map or array header: `fix | n` below 16, else `code16` with 16 bits or `code16 + 1` with 32. */
  private header(n: number, fix: number, code16: number): void {
    this.ensure(5);
    if (n < 16) this.buf[this.at++] = fix | n;
    else if (n < 0x10000) {
      this.buf[this.at] = code16;
      this.view.setUint16(this.at + 1, n);
      this.at += 3;
    } else {
      this.buf[this.at] = code16 + 1;
      this.view.setUint32(this.at + 1, n);
      this.at += 5;
    }
  }

  /** A map32 header to fill in later; returns where it is. */
  reserveMapHeader(): number {
    this.ensure(5);
    const at = this.at;
    this.buf[at] = 0xdf;
    this.at += 5;
    return at;
  }

  fillMapHeader(at: number, n: number): void {
    this.view.setUint32(at + 1, n);
  }

  /** Writes a number, string, boolean or null; false (nothing written that matters) for anything else. */
  scalar(v: unknown): boolean {
    switch (typeof v) {
      case 'number':
        this.number(v);
        return true;
      case 'string':
        this.string(v);
        return true;
      case 'boolean':
        this.u8(v ? 0xc3 : 0xc2);
        return true;
      case 'object':
        if (v !== null) return false;
        this.u8(0xc0);
        return true;
      default:
        return false;
    }
  }

  private number(v: number): void {
    this.ensure(9);
    const b = this.buf;
    const at = this.at;
    if (v >>> 0 === v) {
      if (v < 0x40) {
        b[at] = v;
        this.at = at + 1;
      } else if (v < 0x100) {
        b[at] = 0xcc;
        b[at + 1] = v;
        this.at = at + 2;
      } else if (v < 0x10000) {
        b[at] = 0xcd;
        this.view.setUint16(at + 1, v);
        this.at = at + 3;
      } else {
        b[at] = 0xce;
        this.view.setUint32(at + 1, v);
        this.at = at + 5;
      }
    } else if (v >> 0 === v) {
      if (v >= -0x20) {
        b[at] = v & 0xff;
        this.at = at + 1;
      } else if (v >= -0x80) {
        b[at] = 0xd0;
        this.view.setInt8(at + 1, v);
        this.at = at + 2;
      } else if (v >= -0x8000) {
        b[at] = 0xd1;
        this.view.setInt16(at + 1, v);
        this.at = at + 3;
      } else {
        b[at] = 0xd2;
        this.view.setInt32(at + 1, v);
        this.at = at + 5;
      }
    } else {
      b[at] = 0xcb;
      this.view.setFloat64(at + 1, v);
      this.at = at + 9;
    }
  }

  private string(s: string): void {
    const max = 3 * s.length;
    this.ensure(5 + max);
    // Header sized for the longest encoding, then moved down if the string came out shorter.
    const headerBytes = max < 32 ? 1 : max < 0x100 ? 2 : max < 0x10000 ? 3 : 5;
    const start = this.at + headerBytes;
    const n = this.encoder.encodeInto(s, this.buf.subarray(start, start + max)).written;
    const fits = n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    if (fits !== headerBytes) this.buf.copyWithin(this.at + fits, start, start + n);
    const b = this.buf;
    const at = this.at;
    if (fits === 1) b[at] = 0xa0 | n;
    else if (fits === 2) {
      b[at] = 0xd9;
      b[at + 1] = n;
    } else if (fits === 3) {
      b[at] = 0xda;
      this.view.setUint16(at + 1, n);
    } else {
      b[at] = 0xdb;
      this.view.setUint32(at + 1, n);
    }
    this.at = at + fits + n;
  }

  private ensure(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
    this.view = new DataView(grown.buffer);
  }
}

/** One writer per thread: a delta group is written at once, never interleaved with another. */
const writer = new ScalarWriter();
