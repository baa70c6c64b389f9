import type { ChangedEntries } from './changed-entries.js';
import type { GroupCapture } from './heap-snapshot.js';
import { keyGroupRangeSize, type KeyGroupRange, type KeyType } from './key-group.js';

/**
 * The entries of one keyed state on the heap: one map per key group of the subtask's range,
 * so a snapshot, a restore or a rescale works key group by key group. In a namespaced table
 * each key maps to a map from namespace to value.
 */
export class HeapStateTable {
  readonly groups: Map<KeyType, unknown>[];
  /** Set while a snapshot still has groups of this table to serialize. */
  capture: GroupCapture | null = null;
  /** Set when checkpoints are incremental: the keys written or removed, per key group. */
  changes: ChangedEntries<KeyType> | null = null;

  constructor(
    readonly name: string,
    readonly range: KeyGroupRange,
    readonly namespaced: boolean,
  ) {
    const n = keyGroupRangeSize(range);
    this.groups = new Array<Map<KeyType, unknown>>(n);
    for (let i = 0; i < n; i++) this.groups[i] = new Map();
  }

  get(groupIndex: number, key: KeyType, namespace: number): unknown {
    if (this.capture !== null) this.capture.touch(groupIndex);
    const group = this.groups[groupIndex]!;
    if (!this.namespaced) return group.get(key);
    const byNs = group.get(key) as Map<number, unknown> | undefined;
    return byNs === undefined ? undefined : byNs.get(namespace);
  }

  put(groupIndex: number, key: KeyType, namespace: number, value: unknown): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    const group = this.groups[groupIndex]!;
    if (!this.namespaced) {
      group.set(key, value);
      return;
    }
    let byNs = group.get(key) as Map<number, unknown> | undefined;
    if (byNs === undefined) {
      byNs = new Map();
      group.set(key, byNs);
    }
    byNs.set(namespace, value);
  }

  remove(groupIndex: number, key: KeyType, namespace: number): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    const group = this.groups[groupIndex]!;
    if (!this.namespaced) {
      group.delete(key);
      return;
    }
    const byNs = group.get(key) as Map<number, unknown> | undefined;
    if (byNs === undefined) return;
    byNs.delete(namespace);
    if (byNs.size === 0) group.delete(key);
  }

  numEntries(): number {
    let n = 0;
    for (const group of this.groups) {
      if (!this.namespaced) n += group.size;
      else for (const byNs of group.values()) n += (byNs as Map<number, unknown>).size;
    }
    return n;
  }
}
