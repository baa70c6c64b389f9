import { assert } from '../../util/assert.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { createStatePackr } from './serializer.js';

const packr = createStatePackr();

/** A keyed state file's payload: the key groups one after another, and where each starts. */
export interface PackedKeyGroups {
  readonly data: Uint8Array;
  readonly offsets: number[];
}

/** Where `packKeyGroups` put a group's bytes: state index (-1: timers), key group, offset in `data`, length. */
export type GroupPlaced = (state: number, keyGroup: number, offset: number, length: number) => void;

const packedBySnapshot = new WeakMap<KeyedStateSnapshot, PackedKeyGroups>();

/**
 * Records that `packed` is `packKeyGroups(snapshot)`, computed elsewhere (the snapshot thread
 * packs the full snapshots it assembles, and the snapshot's groups are views into `data`), so
 * writing the snapshot does not pack it again. Kept beside the snapshot, not in it: a snapshot
 * sent to another process carries only its groups.
 */
export function attachPackedKeyGroups(snapshot: KeyedStateSnapshot, packed: PackedKeyGroups): void {
  packedBySnapshot.set(snapshot, packed);
}

export function packedKeyGroupsOf(snapshot: KeyedStateSnapshot): PackedKeyGroups | undefined {
  return packedBySnapshot.get(snapshot);
}

/** A state's name and kind packed once, as every key group segment repeats them. */
export interface PackedStateName {
  readonly name: Uint8Array;
  readonly kind: Uint8Array;
  readonly namespaced: boolean;
}

export function packStateNames(states: readonly { readonly name: string; readonly kind: string; readonly namespaced: boolean }[]): PackedStateName[] {
  return states.map((st) => ({ name: packr.pack(st.name), kind: packr.pack(st.kind), namespaced: st.namespaced }));
}

/**
 * The bytes of one key group's segment: `groups[i]` is state i's group (undefined: the state
 * has nothing in this key group). 0 for an empty key group, which takes no bytes.
 */
export function segmentSizeBytes(names: readonly PackedStateName[], groups: readonly (Uint8Array | undefined)[], timers: Uint8Array | undefined): number {
  assert(groups.length === names.length, 'a segment has a group (or undefined) for every state');
  let size = 0;
  let count = 0;
  for (let i = 0; i < names.length; i++) {
    const bytes = groups[i];
    if (bytes === undefined) continue;
    count++;
    size += 2 + names[i]!.name.length + names[i]!.kind.length + bytesExtSize(bytes.length);
  }
  if (count === 0 && timers === undefined) return 0;
  return size + 1 + arrayHeaderSize(count) + (timers === undefined ? 1 : bytesExtSize(timers.length));
}

/**
 * Writes one key group's segment at `at` in `data` (exactly `segmentSizeBytes` bytes, which
 * the caller made room for; nothing for an empty key group); returns where it ends.
 */
export function writeSegment(
  data: Uint8Array,
  view: DataView,
  at: number,
  names: readonly PackedStateName[],
  groups: readonly (Uint8Array | undefined)[],
  timers: Uint8Array | undefined,
  placed?: (state: number, offset: number, length: number) => void,
): number {
  let count = 0;
  for (const g of groups) if (g !== undefined) count++;
  if (count === 0 && timers === undefined) return at;
  data[at++] = 0x92;
  at = writeArrayHeader(view, at, count);
  for (let i = 0; i < names.length; i++) {
    const bytes = groups[i];
    if (bytes === undefined) continue;
    const n = names[i]!;
    data[at++] = 0x94;
    data.set(n.name, at);
    at += n.name.length;
    data.set(n.kind, at);
    at += n.kind.length;
    data[at++] = n.namespaced ? 0xc3 : 0xc2;
    at = writeBytesExt(data, view, at, bytes);
    placed?.(i, at - bytes.length, bytes.length);
  }
  if (timers === undefined) data[at++] = 0xc0;
  else {
    at = writeBytesExt(data, view, at, timers);
    placed?.(-1, at - timers.length, timers.length);
  }
  return at;
}

/**
 * The key groups of a snapshot one after another, each `[[name, kind, namespaced, bytes]...,
 * timers | null]` in msgpack (what `packr.pack` writes for it, bytes as Uint8Array
 * extensions), written straight into one buffer: a group's bytes are copied once. Packing
 * every segment and joining them copied the whole state twice. (The lmdb backend streams the
 * same segments into a file, one key group at a time: spill-file-writer.ts.)
 */
export function packKeyGroups(s: KeyedStateSnapshot, placed?: GroupPlaced): PackedKeyGroups {
  const { startKeyGroup, endKeyGroup } = s.keyGroupRange;
  const names = packStateNames(s.states);
  const groupsOf: (Uint8Array | undefined)[][] = [];
  const sizes: number[] = [];
  let total = 0;
  for (let kg = startKeyGroup; kg <= endKeyGroup; kg++) {
    const groups = s.states.map((st) => st.groups.get(kg));
    const size = segmentSizeBytes(names, groups, s.timers.get(kg));
    groupsOf.push(groups);
    sizes.push(size);
    total += size;
  }
  const data = new Uint8Array(total);
  const view = new DataView(data.buffer);
  const offsets: number[] = [];
  let at = 0;
  for (let kg = startKeyGroup; kg <= endKeyGroup; kg++) {
    offsets.push(at);
    const end = at + sizes[kg - startKeyGroup]!;
    at = writeSegment(data, view, at, names, groupsOf[kg - startKeyGroup]!, s.timers.get(kg), placed === undefined ? undefined : (i, offset, length) => placed(i, kg, offset, length));
    assert(at === end, 'a key group segment fills exactly the bytes counted for it');
  }
  return { data, offsets };
}

function arrayHeaderSize(n: number): number {
  return n < 0x10 ? 1 : n < 0x10000 ? 3 : 5;
}

function writeArrayHeader(view: DataView, at: number, n: number): number {
  if (n < 0x10) {
    view.setUint8(at, 0x90 | n);
    return at + 1;
  }
  if (n < 0x10000) {
    view.setUint8(at, 0xdc);
    view.setUint16(at + 1, n);
    return at + 3;
  }
  view.setUint8(at, 0xdd);
  view.setUint32(at + 1, n);
  return at + 5;
}

/** msgpackr's typed-array extension (type 0x74, then the array type: 1 = Uint8Array), as ext 8/16/32. */
const TYPED_ARRAY_EXT = 0x74;
const UINT8_ARRAY_CODE = 1;

function bytesExtSize(n: number): number {
  const length = n + 1;
  return (length < 0x100 ? 3 : length < 0x10000 ? 4 : 6) + length;
}

function writeBytesExt(data: Uint8Array, view: DataView, at: number, bytes: Uint8Array): number {
  const length = bytes.length + 1;
  if (length < 0x100) {
    view.setUint8(at, 0xc7);
    view.setUint8(at + 1, length);
    at += 2;
  } else if (length < 0x10000) {
    view.setUint8(at, 0xc8);
    view.setUint16(at + 1, length);
    at += 3;
  } else {
    view.setUint8(at, 0xc9);
    view.setUint32(at + 1, length);
    at += 5;
  }
  data[at++] = TYPED_ARRAY_EXT;
  data[at++] = UINT8_ARRAY_CODE;
  data.set(bytes, at);
  return at + bytes.length;
}
