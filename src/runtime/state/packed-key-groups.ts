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

/**
 * The key groups of a snapshot one after another, each `[[name, kind, namespaced, bytes]...,
 * timers | null]` in msgpack (what `packr.pack` writes for it, bytes as Uint8Array
 * extensions), written straight into one buffer: a group's bytes are copied once. Packing
 * every segment and joining them copied the whole state twice.
 */
export function packKeyGroups(s: KeyedStateSnapshot, placed?: GroupPlaced): PackedKeyGroups {
  const { startKeyGroup, endKeyGroup } = s.keyGroupRange;
  const names = s.states.map((st) => [packr.pack(st.name), packr.pack(st.kind)] as const);
  const sizes: number[] = [];
  const counts: number[] = [];
  let total = 0;
  for (let kg = startKeyGroup; kg <= endKeyGroup; kg++) {
    let size = 0;
    let count = 0;
    for (let i = 0; i < s.states.length; i++) {
      const bytes = s.states[i]!.groups.get(kg);
      if (bytes === undefined) continue;
      count++;
      size += 2 + names[i]![0].length + names[i]![1].length + bytesExtSize(bytes.length);
    }
    const timers = s.timers.get(kg);
    counts.push(count);
    if (count === 0 && timers === undefined) {
      sizes.push(0); // empty key group: zero bytes
      continue;
    }
    size += 1 + arrayHeaderSize(count) + (timers === undefined ? 1 : bytesExtSize(timers.length));
    sizes.push(size);
    total += size;
  }
  const data = new Uint8Array(total);
  const view = new DataView(data.buffer);
  const offsets: number[] = [];
  let at = 0;
  for (let kg = startKeyGroup; kg <= endKeyGroup; kg++) {
    offsets.push(at);
    const size = sizes[kg - startKeyGroup]!;
    if (size === 0) continue;
    const end = at + size;
    data[at++] = 0x92;
    at = writeArrayHeader(view, at, counts[kg - startKeyGroup]!);
    for (let i = 0; i < s.states.length; i++) {
      const st = s.states[i]!;
      const bytes = st.groups.get(kg);
      if (bytes === undefined) continue;
      data[at++] = 0x94;
      data.set(names[i]![0], at);
      at += names[i]![0].length;
      data.set(names[i]![1], at);
      at += names[i]![1].length;
      data[at++] = st.namespaced ? 0xc3 : 0xc2;
      at = writeBytesExt(data, view, at, bytes);
      placed?.(i, kg, at - bytes.length, bytes.length);
    }
    const timers = s.timers.get(kg);
    if (timers === undefined) data[at++] = 0xc0;
    else {
      at = writeBytesExt(data, view, at, timers);
      placed?.(-1, kg, at - timers.length, timers.length);
    }
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
