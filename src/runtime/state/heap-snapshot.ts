import { writeFullGroupOfColumns } from './delta-group-writer.js';
import type { HeapStateTable } from './heap-state-table.js';
import { decodeKey, encodeKey, packGroup, unpackGroup } from './keyed-state-snapshot.js';
import type { KeyType } from './key-group.js';
import type { StateCodec } from './state-codec.js';

/** Something kept per key group that a snapshot captures group by group: a state table or a timer queue. */
export interface CapturedGroups {
  readonly groupCount: number;
  /** Set while a snapshot still has groups to serialize; every access to a group calls `touch` first. */
  capture: GroupCapture | null;
}

/**
 * Copy-on-access capture of one heap state table (or timer queue) for a snapshot. At the
 * synchronous point every key group is marked pending; the first access to a pending group
 * (read or write) serializes it before the access goes on, and the asynchronous phase
 * serializes the rest. So the snapshot is exactly the state at the barrier, even if a value
 * object is mutated in place afterwards.
 */
export class GroupCapture {
  private readonly pending: boolean[];
  private remaining: number;
  /** Serialized non-empty groups by key group (not index). */
  readonly groups = new Map<number, Uint8Array>();

  constructor(
    private readonly target: CapturedGroups,
    private readonly startKeyGroup: number,
    private readonly encode: (groupIndex: number) => Uint8Array | undefined,
  ) {
    this.pending = new Array<boolean>(target.groupCount).fill(true);
    this.remaining = this.pending.length;
  }

  /** Captures a heap state table. */
  static ofTable(table: HeapStateTable, codec: StateCodec): GroupCapture {
    return new GroupCapture(table, table.range.startKeyGroup, (i) => encodeTableGroup(table, i, codec));
  }

  get done(): boolean {
    return this.remaining === 0;
  }

  touch(groupIndex: number): void {
    if (!this.pending[groupIndex]) return;
    this.pending[groupIndex] = false;
    this.remaining--;
    const bytes = this.encode(groupIndex);
    if (bytes !== undefined) this.groups.set(this.startKeyGroup + groupIndex, bytes);
    if (this.remaining === 0 && this.target.capture === this) this.target.capture = null;
  }

  /** Serializes every pending group; yields to the event loop between chunks. */
  async completeAsync(yieldEvery = 8): Promise<void> {
    for (let i = 0; i < this.pending.length; i++) {
      this.touch(i);
      if (i % yieldEvery === yieldEvery - 1 && !this.done) await new Promise<void>((r) => setImmediate(r));
    }
  }

  completeNow(): void {
    for (let i = 0; i < this.pending.length; i++) this.touch(i);
  }
}

/**
 * One key group of a table as a packed map: key -> value, or key -> (namespace -> value) in
 * a namespaced table. With the default serializer the group's own map is packed as it is,
 * without building anything first; a declared serializer's values are encoded into a copy.
 */
export function encodeTableGroup(table: HeapStateTable, groupIndex: number, codec: StateCodec): Uint8Array | undefined {
  const numeric = table.numericGroup(groupIndex);
  if (numeric !== undefined) {
    const columns = new Float64Array(3 * numeric.size);
    numeric.writeColumns(columns, 0);
    return writeFullGroupOfColumns(columns, 0, numeric.size, table.namespaced);
  }
  const group = table.groupMap(groupIndex);
  if (group.size === 0) return undefined;
  if (codec.passthrough) return packGroup(group);
  const encoded = new Map<unknown, unknown>();
  for (const [k, v] of group) {
    if (!table.namespaced) {
      encoded.set(encodeKey(k), codec.encode(v));
    } else {
      const byNs = new Map<number, unknown>();
      for (const [ns, nv] of v as Map<number, unknown>) byNs.set(ns, codec.encode(nv));
      encoded.set(encodeKey(k), byNs);
    }
  }
  return packGroup(encoded);
}

export function decodeTableGroupInto(table: HeapStateTable, groupIndex: number, bytes: Uint8Array, codec: StateCodec): void {
  const packed = unpackGroup(bytes) as Map<unknown, unknown> | [unknown[], unknown[]];
  if (Array.isArray(packed)) {
    decodeColumnsInto(table, groupIndex, packed, codec);
    return;
  }
  for (const [k, v] of packed) {
    const key: KeyType = decodeKey(k);
    if (!table.namespaced) table.put(groupIndex, key, 0, codec.decode(v));
    else for (const [ns, nv] of v as Map<number, unknown>) table.put(groupIndex, key, ns, codec.decode(nv));
  }
}

/** Format of snapshots taken before groups were packed as maps: [keys, values] columns. */
function decodeColumnsInto(table: HeapStateTable, groupIndex: number, [keys, values]: [unknown[], unknown[]], codec: StateCodec): void {
  for (let i = 0; i < keys.length; i++) {
    const key: KeyType = decodeKey(keys[i]);
    if (!table.namespaced) {
      table.put(groupIndex, key, 0, codec.decode(values[i]));
    } else {
      const [nss, vs] = values[i] as [number[], unknown[]];
      for (let j = 0; j < nss.length; j++) table.put(groupIndex, key, nss[j]!, codec.decode(vs[j]));
    }
  }
}
