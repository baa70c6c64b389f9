import type { ChangedEntries } from './changed-entries.js';
import type { RootDatabase } from 'lmdb';
import { assert } from '../../util/assert.js';
import type { KeyType } from './key-group.js';
import { encodeStateKey, packStoredValue, unpackStoredValue } from './lmdb-state-keys.js';
import type { StateCodec } from './state-codec.js';

/** One (key, namespace) entry in the cache: its stored form (undefined = absent), and whether the store has it. */
interface Slot {
  value: unknown;
  dirty: boolean;
  /** Accessed since the last sweep; a sweep drops clean entries that were not. */
  hot: boolean;
  /** The store holds an entry for it (so removing it needs a write; an entry created and removed in the cache needs none). */
  inStore: boolean;
  /** Changed since an incremental snapshot last captured it (or since it was flushed): a change to track. */
  changed: boolean;
  /** What the last capture encoded (store key, stored form), reused while the entry does not change. */
  captured?: { readonly key: string; readonly value: Buffer | undefined } | undefined;
  readonly keyGroup: number;
}

/**
 * The entries of one keyed state held as objects, in front of the store: reads of cached
 * entries cost what the heap backend's do, a miss is one synchronous LMDB read (absent
 * entries are cached too), and writes stay in memory until the cache flushes them in one
 * sorted write transaction (when it is full, and at the synchronous point of a snapshot).
 *
 * A state handle that changes a stored object in place (a list it appends to) calls `put`
 * with it afterwards, so the entry is marked dirty.
 */
export class CachedStateTable {
  private readonly slots = new Map<KeyType, Slot | Map<number, Slot>>();

  constructor(
    readonly name: string,
    readonly stateId: number,
    readonly namespaced: boolean,
    readonly codec: StateCodec,
    private readonly cache: WriteBackCache,
  ) {}

  get(keyGroup: number, key: KeyType, namespace: number): unknown {
    const slot = this.slot(key, namespace);
    if (slot !== undefined) {
      slot.hot = true;
      return slot.value;
    }
    const value = this.cache.read(keyGroup, this, key, namespace);
    this.insert(key, namespace, { value, dirty: false, hot: true, inStore: value !== undefined, changed: false, keyGroup });
    return value;
  }

  put(keyGroup: number, key: KeyType, namespace: number, value: unknown): void {
    const slot = this.slot(key, namespace);
    if (slot !== undefined) {
      slot.value = value;
      slot.hot = true;
      slot.changed = true;
      if (!slot.dirty) {
        slot.dirty = true;
        this.cache.dirtyCount++;
      }
      return;
    }
    // Not read before: whether the store has it is unknown, so a removal is written.
    this.insert(key, namespace, { value, dirty: true, hot: true, inStore: true, changed: true, keyGroup });
    this.cache.dirtyCount++;
  }

  remove(keyGroup: number, key: KeyType, namespace: number): void {
    this.put(keyGroup, key, namespace, undefined);
  }

  private slot(key: KeyType, namespace: number): Slot | undefined {
    const s = this.slots.get(key);
    if (!this.namespaced || s === undefined) return s as Slot | undefined;
    return (s as Map<number, Slot>).get(namespace);
  }

  private insert(key: KeyType, namespace: number, slot: Slot): void {
    this.cache.makeRoom();
    if (!this.namespaced) {
      this.slots.set(key, slot);
    } else {
      let byNs = this.slots.get(key) as Map<number, Slot> | undefined;
      if (byNs === undefined) this.slots.set(key, (byNs = new Map()));
      byNs.set(namespace, slot);
    }
    this.cache.size++;
  }

  /** Calls `write` for every dirty entry (with whether it changed since it was last captured) and marks it clean. */
  drainDirty(write: (keyGroup: number, key: KeyType, namespace: number | undefined, value: unknown, changed: boolean) => void): void {
    this.visitDirty((key, ns, slot) => {
      if (slot.value !== undefined || slot.inStore) write(slot.keyGroup, key, ns, slot.value, slot.changed);
      slot.inStore = slot.value !== undefined;
      slot.dirty = false;
      slot.changed = false;
      slot.captured = undefined;
    });
  }

  /**
   * Calls `capture` for every dirty entry (its value is not in the store yet), with whether it
   * changed since it was last captured; it counts as captured afterwards. The entries stay dirty.
   */
  captureDirty(encode: (keyGroup: number, key: KeyType, namespace: number | undefined, value: unknown) => { key: string; value: Buffer | undefined }, capture: (keyGroup: number, entry: { readonly key: string; readonly value: Buffer | undefined }, changed: boolean) => void): void {
    this.visitDirty((key, ns, slot) => {
      if (slot.changed || slot.captured === undefined) slot.captured = encode(slot.keyGroup, key, ns, slot.value);
      capture(slot.keyGroup, slot.captured, slot.changed);
      slot.changed = false;
    });
  }

  private visitDirty(visit: (key: KeyType, ns: number | undefined, slot: Slot) => void): void {
    for (const [key, s] of this.slots) {
      if (!this.namespaced) {
        if ((s as Slot).dirty) visit(key, undefined, s as Slot);
      } else for (const [ns, slot] of s as Map<number, Slot>) if (slot.dirty) visit(key, ns, slot);
    }
  }

  /** Drops clean entries not accessed since the last sweep (all clean ones with `all`); returns how many. */
  sweep(all: boolean): number {
    let dropped = 0;
    const keep = (slot: Slot): boolean => {
      if (slot.dirty || (!all && slot.hot)) {
        slot.hot = false;
        return true;
      }
      dropped++;
      return false;
    };
    for (const [key, s] of this.slots) {
      if (!this.namespaced) {
        if (!keep(s as Slot)) this.slots.delete(key);
        continue;
      }
      const byNs = s as Map<number, Slot>;
      for (const [ns, slot] of byNs) if (!keep(slot)) byNs.delete(ns);
      if (byNs.size === 0) this.slots.delete(key);
    }
    return dropped;
  }
}

interface PendingWrite {
  readonly key: Buffer;
  readonly value: Buffer | undefined;
}

/** The cache of all states of one backend, bounded by a number of entries. */
export class WriteBackCache {
  size = 0;
  dirtyCount = 0;
  private readonly tables: CachedStateTable[] = [];
  /** Statistics, for tests and the benchmarks. */
  readonly stats = { storeReads: 0, flushes: 0, entriesWritten: 0 };
  /** Set when checkpoints are incremental: the store keys written or removed, per key-group index. */
  changes: ChangedEntries<string> | null = null;
  /** First key group of the backend's range (to index `changes`). */
  startKeyGroup = 0;

  constructor(
    private readonly db: RootDatabase<Buffer, Buffer>,
    readonly entriesMax: number,
  ) {
    assert(entriesMax >= 1, 'the state cache holds at least one entry');
  }

  table(name: string, stateId: number, namespaced: boolean, codec: StateCodec): CachedStateTable {
    const t = new CachedStateTable(name, stateId, namespaced, codec, this);
    this.tables.push(t);
    return t;
  }

  read(keyGroup: number, table: CachedStateTable, key: KeyType, namespace: number): unknown {
    this.stats.storeReads++;
    const bytes = this.db.getBinaryFast(encodeStateKey(keyGroup, table.stateId, key, table.namespaced ? namespace : undefined));
    if (bytes === undefined) return undefined;
    return table.codec.decode(unpackStoredValue(bytes));
  }

  /** Called before an entry is added: when full, flushes and drops cold entries (all clean ones if that is not enough). */
  makeRoom(): void {
    if (this.size < this.entriesMax) return;
    this.flush();
    for (const t of this.tables) this.size -= t.sweep(false);
    if (this.size > this.entriesMax / 2) for (const t of this.tables) this.size -= t.sweep(true);
  }

  /**
   * The synchronous point of an incremental snapshot, without writing to the store: the stored
   * form of every dirty entry by store key (latin1), undefined for a removal. Entries changed
   * since the last capture are marked in `changes` (the generation being sealed), so the
   * snapshot and later deltas over older checkpoints know them.
   */
  captureDirty(): Map<string, Buffer | undefined> {
    const out = new Map<string, Buffer | undefined>();
    const changes = this.changes;
    for (const t of this.tables) {
      t.captureDirty(
        (kg, key, ns, value) => ({ key: encodeStateKey(kg, t.stateId, key, ns).toString('latin1'), value: value === undefined ? undefined : packStoredValue(t.codec.encode(value)) }),
        (kg, entry, changed) => {
          out.set(entry.key, entry.value);
          if (changes !== null && changed) changes.mark(kg - this.startKeyGroup, entry.key);
        },
      );
    }
    return out;
  }

  /** Writes every dirty entry in one transaction, keys in order (LMDB pages are then touched once each). */
  flush(): void {
    if (this.dirtyCount === 0) return;
    const writes: PendingWrite[] = [];
    const changes = this.changes;
    for (const t of this.tables) {
      t.drainDirty((kg, key, ns, value, changed) => {
        const w = { key: encodeStateKey(kg, t.stateId, key, ns), value: value === undefined ? undefined : packStoredValue(t.codec.encode(value)) };
        writes.push(w);
        // An entry an incremental snapshot captured from the cache, unchanged since, is no new change.
        if (changes !== null && changed) changes.mark(kg - this.startKeyGroup, w.key.toString('latin1'));
      });
    }
    writes.sort((a, b) => Buffer.compare(a.key, b.key));
    this.db.transactionSync(() => {
      for (const w of writes) {
        if (w.value === undefined) this.db.removeSync(w.key);
        else this.db.putSync(w.key, w.value);
      }
    });
    this.stats.flushes++;
    this.stats.entriesWritten += writes.length;
    this.dirtyCount = 0;
  }
}
