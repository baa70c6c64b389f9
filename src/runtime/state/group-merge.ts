import { msgpackArrayHeader, msgpackElementEnd, msgpackMapHeader, msgpackNumberAt } from './msgpack-scan.js';
import { packGroup, unpackGroup } from './keyed-state-snapshot.js';

/**
 * Moves a full key group's bytes forward by a delta group (keyed-state-delta.ts's format)
 * without decoding values: the entries of keys the delta names are dropped, every other
 * entry is copied as it is, and the delta's upserts are appended as they are. The snapshot
 * thread's replica does this for every key group a checkpoint touched; decoding each group
 * into maps and packing it again cost it 0.3-0.9 s per checkpoint of 25 MB (q5), about all of
 * its time. Keys are decoded (to compare them), values never are.
 *
 * Only what can be copied alone is merged here: a group or delta holding msgpackr records
 * (plain objects as values) or extensions that refer to later elements, a delta that removes
 * single (key, namespace) entries or adds to a namespaced key's namespaces without deleting the
 * key first, or a group in the earlier column format answers 'decode',
 * and the caller takes the decoding path. Entries come out in another order than that path
 * gives (kept entries first, then the upserts); a group is a map, so nothing depends on it.
 *
 * Returns the merged group, undefined when no entry is left, or 'decode'.
 */
export function mergeDeltaGroupBytes(full: Uint8Array | undefined, delta: Uint8Array, namespaced: boolean): Uint8Array | undefined | 'decode' {
  // The delta: [upserts (map), deletedKeys (array), deletedEntries (array)].
  if (delta[0] !== 0x93) return 'decode';
  const upserts = msgpackMapHeader(delta, 1);
  if (upserts === undefined) return 'decode';
  const replaced = new Set<unknown>();
  const upsertKeys: unknown[] = [];
  let pos = upserts.start;
  for (let i = 0; i < upserts.size; i++) {
    const keyEnd = msgpackElementEnd(delta, pos);
    if (keyEnd < 0) return 'decode';
    const key = keyAt(delta, pos, keyEnd);
    if (key === DECODE) return 'decode';
    upsertKeys.push(key);
    pos = msgpackElementEnd(delta, keyEnd);
    if (pos < 0) return 'decode';
  }
  const upsertBytes = delta.subarray(upserts.start, pos);
  const deleted = msgpackArrayHeader(delta, pos);
  if (deleted === undefined) return 'decode';
  pos = deleted.start;
  for (let i = 0; i < deleted.size; i++) {
    const end = msgpackElementEnd(delta, pos);
    if (end < 0) return 'decode';
    const key = keyAt(delta, pos, end);
    if (key === DECODE) return 'decode';
    replaced.add(key);
    pos = end;
  }
  const deletedEntries = msgpackArrayHeader(delta, pos);
  if (deletedEntries === undefined || deletedEntries.size !== 0 || deletedEntries.start !== delta.length) return 'decode';
  // A namespaced upsert adds to the key's namespaces unless the key is deleted first (the heap
  // backend's deltas replace a changed key whole): only then is dropping its entry right.
  for (const key of upsertKeys) {
    if (namespaced && !replaced.has(key)) return 'decode';
    replaced.add(key);
  }

  // The full group: a map; the runs of entries it keeps are copied whole.
  const runs: number[] = [];
  let kept = 0;
  if (full !== undefined) {
    const header = msgpackMapHeader(full, 0);
    if (header === undefined) return 'decode'; // the earlier column format
    pos = header.start;
    let runStart = pos;
    for (let i = 0; i < header.size; i++) {
      const keyEnd = msgpackElementEnd(full, pos);
      if (keyEnd < 0) return 'decode';
      const key = keyAt(full, pos, keyEnd);
      if (key === DECODE) return 'decode';
      const end = msgpackElementEnd(full, keyEnd);
      if (end < 0) return 'decode';
      if (replaced.has(key)) {
        if (pos > runStart) runs.push(runStart, pos);
        runStart = end;
      } else kept++;
      pos = end;
    }
    if (pos !== full.length) return 'decode';
    if (pos > runStart) runs.push(runStart, pos);
  }
  const count = kept + upserts.size;
  if (count === 0) return undefined;
  let size = mapHeaderSize(count) + upsertBytes.length;
  for (let i = 0; i < runs.length; i += 2) size += runs[i + 1]! - runs[i]!;
  const out = new Uint8Array(size);
  let at = writeMapHeader(out, count);
  for (let i = 0; i < runs.length; i += 2) {
    out.set(full!.subarray(runs[i]!, runs[i + 1]!), at);
    at += runs[i + 1]! - runs[i]!;
  }
  out.set(upsertBytes, at);
  return out;
}

const DECODE: unique symbol = Symbol('decode');

/** The key encoded in b[start, end): numbers and short strings read here, others through the state packer; DECODE for a record. */
function keyAt(b: Uint8Array, start: number, end: number): unknown {
  const t = b[start]!;
  if (t >= 0x40 && t < 0x80) return DECODE; // a record reference: not alone
  const n = msgpackNumberAt(b, start);
  if (n !== undefined) return n;
  return unpackGroup(b.subarray(start, end));
}

function mapHeaderSize(count: number): number {
  return count < 16 ? 1 : count < 0x10000 ? 3 : 5;
}

function writeMapHeader(out: Uint8Array, count: number): number {
  if (count < 16) {
    out[0] = 0x80 | count;
    return 1;
  }
  if (count < 0x10000) {
    out[0] = 0xde;
    out[1] = count >>> 8;
    out[2] = count & 0xff;
    return 3;
  }
  out[0] = 0xdf;
  out[1] = count >>> 24;
  out[2] = (count >>> 16) & 0xff;
  out[3] = (count >>> 8) & 0xff;
  out[4] = count & 0xff;
  return 5;
}

/** A packed timer domain: a timestamp and a namespace per timer, and the timers' keys (numbers while all are). */
type TimerColumnsOf = [timesAndNamespaces: Float64Array, keys: Float64Array | unknown[]];

/**
 * Moves a key group's full timer bytes (`[event, processing]`, each a packed column group or
 * null) forward by the delta's parts (`[event, processing]`, each null when the domain did not
 * change, else columns plus the keys whose timers they replace), column by column: a domain
 * the delta leaves alone keeps its bytes, a changed one keeps the rows of other keys and
 * appends the delta's. Folding every timer into per-key maps and packing them again was half
 * of the snapshot thread's time once state groups were merged as bytes.
 *
 * Returns the merged bytes, undefined when no timer is left, or 'decode' for the earlier
 * nested-map format.
 */
export function mergeTimerDeltaBytes(full: Uint8Array | undefined, deltaParts: readonly (Uint8Array | null)[]): Uint8Array | undefined | 'decode' {
  const fullParts = full === undefined ? [null, null] : (unpackGroup(full) as (Uint8Array | null)[]);
  const out: (Uint8Array | null)[] = [];
  for (const domain of [0, 1] as const) {
    const change = deltaParts[domain] ?? null;
    const before = fullParts[domain] ?? null;
    if (change === null) {
      out.push(before);
      continue;
    }
    const [dTimes, dKeys, replacedKeys] = unpackGroup(change) as [Float64Array, Float64Array | unknown[], ArrayLike<unknown>];
    let old: TimerColumnsOf | undefined;
    if (before !== null) {
      const decoded = unpackGroup(before) as TimerColumnsOf | Map<unknown, unknown>;
      if (!Array.isArray(decoded)) return 'decode'; // nested maps, written before columns
      old = decoded;
    }
    out.push(mergeTimerColumns(old, dTimes, dKeys, replacedKeys));
  }
  return out[0] === null && out[1] === null ? undefined : packGroup(out);
}

/** The rows of `old` whose key is not replaced, then the delta's rows, packed (null when none). */
function mergeTimerColumns(old: TimerColumnsOf | undefined, dTimes: Float64Array, dKeys: Float64Array | unknown[], replacedKeys: ArrayLike<unknown>): Uint8Array | null {
  const replaced = new Set<unknown>();
  for (let i = 0; i < replacedKeys.length; i++) replaced.add(replacedKeys[i]);
  const oldKeys = old?.[1];
  const oldTimes = old?.[0];
  const oldCount = oldKeys?.length ?? 0;
  const keep: number[] = [];
  for (let i = 0; i < oldCount; i++) if (!replaced.has(oldKeys![i])) keep.push(i);
  const count = keep.length + dKeys.length;
  if (count === 0) return null;
  const times = new Float64Array(2 * count);
  const numeric = (oldKeys === undefined || oldKeys instanceof Float64Array) && dKeys instanceof Float64Array;
  const keys: Float64Array | unknown[] = numeric ? new Float64Array(count) : new Array<unknown>(count);
  let row = 0;
  for (const i of keep) {
    times[2 * row] = oldTimes![2 * i]!;
    times[2 * row + 1] = oldTimes![2 * i + 1]!;
    keys[row++] = oldKeys![i];
  }
  times.set(dTimes, 2 * row);
  for (let i = 0; i < dKeys.length; i++) keys[row++] = dKeys[i];
  return packGroup([times, keys]);
}
