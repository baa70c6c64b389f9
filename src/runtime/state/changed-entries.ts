/**
 * The entries of one keyed state (or timer queue) changed since a checkpoint, per key group,
 * for incremental snapshots. Changes are collected in generations: `seal(checkpointId)` at a
 * snapshot closes the current one; the changes of checkpoint N over its base B are the union
 * of the generations sealed after B, up to N; `drop(id)` forgets generations a completed
 * checkpoint made useless. Entries are whatever identifies a stored entry: a record key, or
 * an encoded store key.
 */
export class ChangedEntries<K> {
  private current: Set<K>[];
  /** Sealed generations, oldest first. */
  private sealed: { checkpointId: number; changed: Set<K>[] }[] = [];

  constructor(private readonly groupCount: number) {
    this.current = emptySets<K>(groupCount);
  }

  /** The set and entry marked last: a run of marks of one entry (a window operator's windows of one record) adds it once. */
  private lastSet: Set<K> | null = null;
  private lastEntry: K | undefined = undefined;

  mark(groupIndex: number, entry: K): void {
    const set = this.current[groupIndex]!;
    if (set === this.lastSet && entry === this.lastEntry) return;
    set.add(entry);
    this.lastSet = set;
    this.lastEntry = entry;
  }

  seal(checkpointId: number): void {
    this.sealed.push({ checkpointId, changed: this.current });
    this.current = emptySets<K>(this.groupCount);
    this.lastSet = null;
    this.lastEntry = undefined;
  }

  /** Changes of the generations sealed after `baseCheckpointId`, up to and including `uptoCheckpointId`; read-only sets. */
  since(baseCheckpointId: number, uptoCheckpointId: number): (groupIndex: number) => ReadonlySet<K> {
    const gens = this.sealed.filter((g) => g.checkpointId > baseCheckpointId && g.checkpointId <= uptoCheckpointId).map((g) => g.changed);
    return (groupIndex) => {
      if (gens.length === 1) return gens[0]![groupIndex]!;
      const union = new Set<K>();
      for (const g of gens) for (const e of g[groupIndex]!) union.add(e);
      return union;
    };
  }

  /** Forgets the generations sealed at or before `checkpointId`. */
  drop(checkpointId: number): void {
    if (this.sealed.length > 0 && this.sealed[0]!.checkpointId <= checkpointId) this.sealed = this.sealed.filter((g) => g.checkpointId > checkpointId);
  }
}

function emptySets<K>(n: number): Set<K>[] {
  const out = new Array<Set<K>>(n);
  for (let i = 0; i < n; i++) out[i] = new Set();
  return out;
}
