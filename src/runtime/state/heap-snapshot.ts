import type { HeapStateTable } from './heap-state-table.js';
import { decodeKey, encodeKey, packGroup, unpackGroup } from './keyed-state-snapshot.js';
import type { KeyType } from './key-group.js';
import type { StateCodec } from './state-codec.js';

/**
 * Copy-on-access capture of one heap state table for a snapshot. At the synchronous point
 * every key group is marked pending; the first access to a pending group (read or write)
 * serializes it before the access goes on, and the asynchronous phase serializes the rest.
 * So the snapshot is exactly the state at the barrier, even if a value object is mutated
 * in place afterwards.
 */
export class GroupCapture {
  private readonly pending: boolean[];
  private remaining: number;
  readonly groups = new Map<number, Uint8Array>();

  constructor(
    private readonly table: HeapStateTable,
    private readonly codec: StateCodec,
  ) {
    this.pending = table.groups.map(() => true);
    this.remaining = this.pending.length;
  }

  get done(): boolean {
    return this.remaining === 0;
  }

  touch(groupIndex: number): void {
    if (!this.pending[groupIndex]) return;
    this.pending[groupIndex] = false;
    this.remaining--;
    const bytes = encodeTableGroup(this.table, groupIndex, this.codec);
    if (bytes !== undefined) this.groups.set(this.table.range.startKeyGroup + groupIndex, bytes);
    if (this.remaining === 0 && this.table.capture === this) this.table.capture = null;
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

export function encodeTableGroup(table: HeapStateTable, groupIndex: number, codec: StateCodec): Uint8Array | undefined {
  const group = table.groups[groupIndex]!;
  if (group.size === 0) return undefined;
  const keys: unknown[] = [];
  const values: unknown[] = [];
  for (const [k, v] of group) {
    keys.push(encodeKey(k));
    if (!table.namespaced) {
      values.push(codec.encode(v));
    } else {
      const nss: number[] = [];
      const vs: unknown[] = [];
      for (const [ns, nv] of v as Map<number, unknown>) {
        nss.push(ns);
        vs.push(codec.encode(nv));
      }
      values.push([nss, vs]);
    }
  }
  return packGroup([keys, values]);
}

export function decodeTableGroupInto(table: HeapStateTable, groupIndex: number, bytes: Uint8Array, codec: StateCodec): void {
  const [keys, values] = unpackGroup(bytes) as [unknown[], unknown[]];
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
