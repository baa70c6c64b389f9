import { msgpackElementEnd, msgpackMapHeader, msgpackNumberAt } from './msgpack-scan.js';
import { unpackGroup } from './keyed-state-snapshot.js';

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
  const deleted = arrayHeader(delta, pos);
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
  const deletedEntries = arrayHeader(delta, pos);
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

function arrayHeader(b: Uint8Array, pos: number): { size: number; start: number } | undefined {
  const t = b[pos];
  if (t === undefined) return undefined;
  if (t >= 0x90 && t < 0xa0) return { size: t & 0x0f, start: pos + 1 };
  if (t === 0xdc && pos + 3 <= b.length) return { size: (b[pos + 1]! << 8) | b[pos + 2]!, start: pos + 3 };
  if (t === 0xdd && pos + 5 <= b.length) return { size: b[pos + 1]! * 0x1000000 + ((b[pos + 2]! << 16) | (b[pos + 3]! << 8) | b[pos + 4]!), start: pos + 5 };
  return undefined;
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
