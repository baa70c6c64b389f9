import type { ChangedEntries } from './changed-entries.js';
import type { GroupCapture } from './heap-snapshot.js';
import { keyGroupRangeSize, type KeyGroupRange, type KeyType } from './key-group.js';
import { NumericEntries } from './numeric-entries.js';

/**
 * The entries of one keyed state on the heap, per key group of the subtask's range, so a
 * snapshot, a restore or a rescale works key group by key group.
 *
 * Two layouts. A table whose values the default serializer writes starts numeric: while every
 * key, namespace and value is a number, each key group is a NumericEntries (typed arrays,
 * no object per entry). The first other key or value turns the table, for good, into one map
 * per key group (key -> value, or in a namespaced table key -> namespace -> value).
 */
export class HeapStateTable {
  /** The map layout's groups (empty while the table is numeric). */
  private readonly maps: Map<KeyType, unknown>[];
  /** The numeric layout's groups; null once the table holds maps. */
  private numeric: NumericEntries[] | null;
  readonly groupCount: number;
  /** Set while a snapshot still has groups of this table to serialize. */
  capture: GroupCapture | null = null;
  /** Set when checkpoints are incremental: the keys written or removed, per key group. */
  changes: ChangedEntries<KeyType> | null = null;
  /**
   * Set by a backend whose snapshots go to the snapshot thread, which gets a numeric table's
   * key groups whole: while numeric, writes are not tracked per key (one Set insertion per
   * write, 8% of q5's task thread). Turning into maps then sets `wholeGroupsOnce`.
   */
  wholeGroupsWhileNumeric = false;
  /** The keys changed before the table turned into maps are not known: the next capture for the snapshot thread sends every key group whole. */
  wholeGroupsOnce = false;

  constructor(
    readonly name: string,
    readonly range: KeyGroupRange,
    readonly namespaced: boolean,
    /** Whether values may be kept in the numeric layout (they are snapshotted as they are). */
    numericValues = false,
  ) {
    const n = keyGroupRangeSize(range);
    this.groupCount = n;
    this.maps = new Array<Map<KeyType, unknown>>(n);
    for (let i = 0; i < n; i++) this.maps[i] = new Map();
    this.numeric = null;
    if (numericValues) {
      this.numeric = new Array<NumericEntries>(n);
      for (let i = 0; i < n; i++) this.numeric[i] = new NumericEntries();
    }
  }

  /** Whether the table is in the numeric layout. */
  get isNumeric(): boolean {
    return this.numeric !== null;
  }

  /** A numeric table's key group (undefined in the map layout). */
  numericGroup(groupIndex: number): NumericEntries | undefined {
    return this.numeric?.[groupIndex];
  }

  /**
   * A key group as a map (key -> value, or key -> namespace -> value): the group itself in the
   * map layout, a copy in the numeric one (for snapshots: do not write to it); with
   * `onlyKeys`, a numeric group's copy holds only those keys.
   */
  groupMap(groupIndex: number, onlyKeys?: ReadonlySet<KeyType>): ReadonlyMap<KeyType, unknown> {
    const numeric = this.numeric?.[groupIndex];
    if (numeric === undefined) return this.maps[groupIndex]!;
    const out = new Map<KeyType, unknown>();
    if (!this.namespaced) numeric.forEach((k, _ns, v) => (onlyKeys === undefined || onlyKeys.has(k)) && out.set(k, v));
    else
      numeric.forEach((k, ns, v) => {
        if (onlyKeys !== undefined && !onlyKeys.has(k)) return;
        let byNs = out.get(k) as Map<number, unknown> | undefined;
        if (byNs === undefined) out.set(k, (byNs = new Map()));
        byNs.set(ns, v);
      });
    return out;
  }

  /** Moves every numeric group into maps (a key or value that is not a number arrived). */
  private toMaps(): void {
    this.capture?.completeNow(); // a pending group's capture reads the layout it was taken in
    const numeric = this.numeric!;
    this.numeric = null;
    if (this.wholeGroupsWhileNumeric) this.wholeGroupsOnce = true;
    for (let g = 0; g < numeric.length; g++) {
      const group = this.maps[g]!;
      if (!this.namespaced) numeric[g]!.forEach((k, _ns, v) => group.set(k, v));
      else
        numeric[g]!.forEach((k, ns, v) => {
          let byNs = group.get(k) as Map<number, unknown> | undefined;
          if (byNs === undefined) group.set(k, (byNs = new Map()));
          byNs.set(ns, v);
          this.namespacedEntries++;
        });
    }
    this.forgetLast();
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
    const byNs = this.maps[groupIndex]!.get(key) as Map<number, unknown> | undefined;
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

  /** The keys with an entry in `namespace` (every key with an entry when not namespaced), group by group. */
  keys(namespace: number): KeyType[] {
    const out: KeyType[] = [];
    if (this.numeric !== null) {
      const ns = this.namespaced ? namespace : 0;
      for (const group of this.numeric) {
        group.forEach((k, n) => {
          if (n === ns) out.push(k);
        });
      }
      return out;
    }
    for (const group of this.maps) {
      if (!this.namespaced) for (const k of group.keys()) out.push(k);
      else for (const [k, byNs] of group) if ((byNs as Map<number, unknown>).has(namespace)) out.push(k);
    }
    return out;
  }

  get(groupIndex: number, key: KeyType, namespace: number): unknown {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.numeric !== null) return NumericEntries.accepts(key, namespace) ? this.numeric[groupIndex]!.get(key, this.namespaced ? namespace : 0) : undefined;
    if (!this.namespaced) return this.maps[groupIndex]!.get(key);
    const byNs = this.namespacesOf(groupIndex, key);
    return byNs === undefined ? undefined : byNs.get(namespace);
  }

  put(groupIndex: number, key: KeyType, namespace: number, value: unknown): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.numeric !== null) {
      if (typeof value === 'number' && NumericEntries.accepts(key, namespace)) {
        if (this.changes !== null && !this.wholeGroupsWhileNumeric) this.changes.mark(groupIndex, key);
        this.numeric[groupIndex]!.set(key, this.namespaced ? namespace : 0, value);
        return;
      }
      this.toMaps();
    }
    if (this.changes !== null) this.changes.mark(groupIndex, key);
    if (!this.namespaced) {
      this.maps[groupIndex]!.set(key, value);
      return;
    }
    let byNs = this.namespacesOf(groupIndex, key);
    if (byNs === undefined) {
      byNs = new Map();
      this.maps[groupIndex]!.set(key, byNs);
      this.remember(groupIndex, key, byNs);
    }
    const before = byNs.size;
    byNs.set(namespace, value);
    this.namespacedEntries += byNs.size - before;
  }

  remove(groupIndex: number, key: KeyType, namespace: number): void {
    if (this.capture !== null) this.capture.touch(groupIndex);
    if (this.changes !== null && !(this.numeric !== null && this.wholeGroupsWhileNumeric)) this.changes.mark(groupIndex, key);
    if (this.numeric !== null) {
      if (NumericEntries.accepts(key, namespace)) this.numeric[groupIndex]!.delete(key, this.namespaced ? namespace : 0);
      return;
    }
    const group = this.maps[groupIndex]!;
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
    if (this.changes !== null && !(this.numeric !== null && this.wholeGroupsWhileNumeric)) this.changes.mark(groupIndex, key);
    if (this.numeric !== null) {
      if (NumericEntries.accepts(key, 0)) this.numeric[groupIndex]!.deleteKey(key);
      return;
    }
    const group = this.maps[groupIndex]!;
    if (this.namespaced) this.namespacedEntries -= (group.get(key) as Map<number, unknown> | undefined)?.size ?? 0;
    group.delete(key);
    this.forgetLast();
  }

  /** Entries (key and namespace pairs in a namespaced table): cheap, asked at a checkpoint's barrier. */
  numEntries(): number {
    if (this.numeric !== null) {
      let n = 0;
      for (const group of this.numeric) n += group.size;
      return n;
    }
    if (this.namespaced) return this.namespacedEntries;
    let n = 0;
    for (const group of this.maps) n += group.size;
    return n;
  }
}
