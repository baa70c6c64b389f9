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

  /**
   * In a namespaced table, the namespace map of the key accessed last: a window operator
   * reads and writes several namespaces of one key per record (a sliding window's five
   * windows, each a get and a put), one lookup of the key instead of ten. A key's map only
   * goes away through `remove`/`removeKey`, which forget it.
   */
  private lastGroupIndex = -1;
  private lastKey: KeyType | undefined = undefined;
  private lastByNs: Map<number, unknown> | undefined = undefined;
  /** Entries of a namespaced table, kept by every write: counting them walked every key's map at the barrier. */
  private namespacedEntries = 0;

  private namespacesOf(groupIndex: number, key: KeyType): Map<number, unknown> | undefined {
    if (key === this.lastKey && groupIndex === this.lastGroupIndex) return this.lastByNs;
    const byNs = this.groups[groupIndex]!.get(key) as Map<number, unknown> | undefined;
    if (byNs !== undefined) this.remember(groupIndex, key, byNs);
    return byNs;
  }

  private remember(groupIndex: number, key: KeyType, byNs: Map<number, unknown>): void {
    this.lastGroupIndex = groupIndex;
    this.lastKey = key;
    this.lastByNs = byNs;
  }

  private forgetLast(): void {
    this.lastGroupIndex = -1;
    this.lastKey = undefined;
    this.lastByNs = undefined;
  }

  get(groupIndex: number, key: KeyType, namespace: number): unknown {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (!this.namespaced) return this.groups[groupIndex]!.get(key);
    const byNs = this.namespacesOf(groupIndex, key);
    return byNs === undefined ? undefined : byNs.get(namespace);
  }

  put(groupIndex: number, key: KeyType, namespace: number, value: unknown): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    if (!this.namespaced) {
      this.groups[groupIndex]!.set(key, value);
      return;
    }
    let byNs = this.namespacesOf(groupIndex, key);
    if (byNs === undefined) {
      byNs = new Map();
      this.groups[groupIndex]!.set(key, byNs);
      this.remember(groupIndex, key, byNs);
    }
    const before = byNs.size;
    byNs.set(namespace, value);
    this.namespacedEntries += byNs.size - before;
  }

  remove(groupIndex: number, key: KeyType, namespace: number): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    const group = this.groups[groupIndex]!;
    if (!this.namespaced) {
      group.delete(key);
      return;
    }
    const byNs = this.namespacesOf(groupIndex, key);
    if (byNs === undefined) return;
    if (byNs.delete(namespace)) this.namespacedEntries--;
    if (byNs.size === 0) {
      group.delete(key);
      this.forgetLast();
    }
  }

  /** Removes a key with every namespace (a delta's deleted key, applied on restore). */
  removeKey(groupIndex: number, key: KeyType): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    const group = this.groups[groupIndex]!;
    if (this.namespaced) this.namespacedEntries -= (group.get(key) as Map<number, unknown> | undefined)?.size ?? 0;
    group.delete(key);
    this.forgetLast();
  }

  /** Entries (key and namespace pairs in a namespaced table): cheap, asked at a checkpoint's barrier. */
  numEntries(): number {
    if (this.namespaced) return this.namespacedEntries;
    let n = 0;
    for (const group of this.groups) n += group.size;
    return n;
  }
}
