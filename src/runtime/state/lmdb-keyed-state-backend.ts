import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { open, type RootDatabase, type Transaction } from 'lmdb';
import type { KeyedStateDescriptor } from '../../api/state-descriptors.js';
import { TimerQueue } from '../task/timer-queue.js';
import type { ChangedEntries } from './changed-entries.js';
import { BackendIncrements, type SnapshotPlan } from './incremental-snapshots.js';
import { applyDeltaChanges, packDeltaGroup, restoredChains, type DeltaGroup } from './keyed-state-delta.js';
import { captureTimers } from './timer-snapshot.js';
import { assignToKeyGroup, KeyGroupHints, keyGroupRangeContains, keyGroupRangeSize, ownedKeyGroup, type KeyGroupRange, type KeyType } from './key-group.js';
import type { InternalState, KeyedStateBackend, SnapshotRequest } from './keyed-state-backend.js';
import { decodeKey, decodeTimerGroup, packGroup, snapshotBytes, unpackGroup, type KeyedStateSnapshot, type StateSnapshot } from './keyed-state-snapshot.js';
import { createStateHandle } from './state-handles.js';
import { STATE_ID_MAX, STATE_KEY_PREFIX_BYTES, decodeStateKey, encodeStateKey, packStoredValue, prefixEnd, stateKeyPrefix, unpackStoredValue } from './lmdb-state-keys.js';
import { WriteBackCache, type CachedStateTable } from './lmdb-write-back-cache.js';
import type { KeyedSnapshotResult } from './keyed-state-file.js';
import { packStateNames } from './packed-key-groups.js';
import { SpillFileWriter } from './spill-file-writer.js';
import type { SpilledKeyedStateSnapshot } from './spilled-keyed-state-snapshot.js';
import { PackedGroupWriter } from './packed-group-writer.js';
import { msgpackElementEnd, msgpackMapHeader, msgpackNumberAt } from './msgpack-scan.js';
import { stateCodec } from './state-codec.js';
import { restoredStateMismatch, storedStateKind } from './ttl.js';
import { reregisteredStateMismatch } from './state-registration.js';
import { keyTypeBit, restoredKeyTypeMismatch, restoredKeyTypes } from './restored-key-types.js';
import { makeDirectoriesSync } from '../../util/make-directories.js';
import { makeOwnedDir, removeDeadProcessWorkDirs } from '../../util/process-work-dir.js';

export interface LmdbBackendOptions {
  /**
   * Parent of the backend's working directory (`state.backend.lmdb.localdir`); default the OS
   * temp dir. Full snapshots written to checkpoint storage are spilled here too.
   */
  readonly localDir?: string | undefined;
  /** Entries kept as objects in the write-back cache (`state.backend.lmdb.cache-entries`). */
  readonly cacheEntriesMax?: number | undefined;
}

export const DEFAULT_CACHE_ENTRIES = 100_000;

/** A state known to the store: registered by the operator, or restored and not registered yet. */
interface StoredState {
  readonly name: string;
  readonly stateId: number;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** Key groups serialized per event-loop turn in the asynchronous part of a snapshot. */
const SNAPSHOT_GROUPS_PER_TURN = 8;
/** Working copies: `sluice-lmdb-<pid>-<start>-XXXXXX` (process-work-dir.ts). */
const LMDB_DIR_PREFIX = 'sluice-lmdb-';
/** The directories this process has swept of working copies that killed processes left. */
const sweptLocalDirs = new Set<string>();
/** Writes per transaction when restoring (key groups are batched until they reach it; larger transactions were slower). */
const RESTORE_ENTRIES_PER_TXN = 10_000;

/**
 * Keyed state in an embedded LMDB database on local disk, for state larger than memory
 * (Sluice's counterpart of Flink's EmbeddedRocksDBStateBackend; why LMDB: docs/state.md).
 *
 * - Entries are keyed key group first (`lmdb-state-keys.ts`), values are the state's
 *   serializer's form packed with msgpack, so one key group of one state is one key range.
 * - Reads are synchronous (a memory-mapped B+tree); a write-back cache keeps hot entries as
 *   objects and writes dirty ones in sorted batches.
 * - Snapshot: the synchronous part flushes the cache and opens a read transaction (LMDB's
 *   MVCC gives a consistent view at that instant); the asynchronous part scans it key group
 *   by key group into the canonical format, the same bytes the heap backend writes, so a
 *   snapshot restores into either backend at any parallelism. A full snapshot the caller
 *   writes to checkpoint storage (`hold`) goes key group by key group into a spill file, the
 *   keyed state file itself (SpilledKeyedStateSnapshot), so it never is on the heap whole.
 * - Timers stay on the heap, per key group, as in Flink with `timer-service.factory: HEAP`.
 */
export class LmdbKeyedStateBackend implements KeyedStateBackend {
  currentKey: KeyType = '';
  currentKeyGroup = -1;
  /** Read by state handles: the write-back cache is addressed by key group. */
  currentSlot = -1;
  readonly path: string;
  /** Where full snapshots are spilled: the parent of `path`. */
  private readonly spillDir: string;
  private readonly db: RootDatabase<Buffer, Buffer>;
  private readonly cache: WriteBackCache;
  /** Every state in the store, by name. */
  private readonly stored = new Map<string, StoredState>();
  private readonly handles = new Map<string, { descriptor: KeyedStateDescriptor; handle: InternalState; table: CachedStateTable }>();
  private restoredTimers = new Map<number, Uint8Array>();
  private readonly timerQueues: [TimerQueue | undefined, TimerQueue | undefined] = [undefined, undefined];
  /** Read transactions of snapshots whose asynchronous part has not finished. */
  private readonly openSnapshots = new Set<Transaction>();
  private disposed = false;
  /** Set from the first incremental checkpoint (or changelog segment) on. */
  increments: BackendIncrements | undefined;
  private storeChanges: ChangedEntries<string> | undefined;

  /** Checks the key groups that came with records (setCurrentKeyInGroup). */
  private readonly hints: KeyGroupHints;

  constructor(
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
    readonly nowMs: () => number = Date.now,
    options: LmdbBackendOptions = {},
  ) {
    this.hints = new KeyGroupHints(keyGroupRange, maxParallelism);
    const parent = options.localDir ?? tmpdir();
    try {
      makeDirectoriesSync(parent);
      // The working copies processes killed before left in this directory go first, once per process.
      if (!sweptLocalDirs.has(parent)) {
        sweptLocalDirs.add(parent);
        removeDeadProcessWorkDirs(parent, LMDB_DIR_PREFIX);
      }
      this.path = makeOwnedDir(parent, LMDB_DIR_PREFIX);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'it (or a parent) is a file, not a directory' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? `it is not writable (${code})` : (e as Error).message;
      throw new Error(
        `the lmdb state backend cannot make its working directory in '${parent}' (${options.localDir === undefined ? 'the temporary directory' : 'state.backend.lmdb.localdir'}): ${why}; ` +
          'point state.backend.lmdb.localdir at a writable directory on a local disk',
        { cause: e },
      );
    }
    this.spillDir = parent;
    this.db = open<Buffer, Buffer>({
      path: this.path,
      encoding: 'binary',
      keyEncoding: 'binary',
      // A working copy: durability comes from checkpoints, so no fsync and no page zeroing.
      noSync: true,
      noMemInit: true,
      cache: false,
      compression: false,
    });
    this.cache = new WriteBackCache(this.db, options.cacheEntriesMax ?? DEFAULT_CACHE_ENTRIES);
  }

  /** The types of the restored keys (restored-key-types.ts); 0 when nothing was restored. */
  private restoredKeyTypeMask = 0;

  setCurrentKey(key: KeyType): void {
    if (this.restoredKeyTypeMask !== 0 && (this.restoredKeyTypeMask & keyTypeBit(key)) === 0) throw restoredKeyTypeMismatch(this.restoredKeyTypeMask, key);
    const kg = ownedKeyGroup(key, this.keyGroupRange, this.maxParallelism);
    this.currentKey = key;
    this.currentKeyGroup = kg;
    this.currentSlot = kg;
  }

  setCurrentKeyInGroup(key: KeyType, keyGroup: number): void {
    if (this.restoredKeyTypeMask !== 0 && (this.restoredKeyTypeMask & keyTypeBit(key)) === 0) throw restoredKeyTypeMismatch(this.restoredKeyTypeMask, key);
    this.hints.slotOf(key, keyGroup);
    this.currentKey = key;
    this.currentKeyGroup = keyGroup;
    this.currentSlot = keyGroup;
  }

  getCurrentKey(): KeyType {
    return this.currentKey;
  }

  getCurrentKeyGroup(): number {
    return this.currentKeyGroup;
  }

  getOrCreateState(descriptor: KeyedStateDescriptor, namespaced: boolean): InternalState {
    this.checkOpen();
    const existing = this.handles.get(descriptor.name);
    if (existing !== undefined) {
      const mismatch = reregisteredStateMismatch(existing.descriptor, descriptor);
      if (mismatch !== undefined) throw new Error(mismatch);
      return existing.handle;
    }
    const restored = this.stored.get(descriptor.name);
    const mismatch = restored === undefined ? undefined : restoredStateMismatch(restored, descriptor, namespaced);
    if (mismatch !== undefined) throw new Error(mismatch);
    const st = restored ?? this.addStoredState(descriptor.name, storedStateKind(descriptor), namespaced);
    const table = this.cache.table(st.name, st.stateId, namespaced, stateCodec(descriptor));
    const handle = createStateHandle(this, table, descriptor);
    this.handles.set(descriptor.name, { descriptor, handle, table });
    return handle;
  }

  private addStoredState(name: string, kind: string, namespaced: boolean): StoredState {
    const stateId = this.stored.size;
    if (stateId > STATE_ID_MAX) throw new Error(`an operator can have at most ${STATE_ID_MAX + 1} keyed states with the lmdb backend`);
    const st = { name, stateId, kind, namespaced };
    this.stored.set(name, st);
    return st;
  }

  /** The operator's timers of a time domain (0 event time, 1 processing time), with the restored ones; kept on the heap. */
  timerQueue(domain: 0 | 1): TimerQueue {
    let q = this.timerQueues[domain];
    if (q !== undefined) return q;
    const start = this.keyGroupRange.startKeyGroup;
    q = new TimerQueue(keyGroupRangeSize(this.keyGroupRange), (key) => {
      if (key === this.currentKey && this.currentKeyGroup >= 0) return this.currentKeyGroup - start;
      const kg = assignToKeyGroup(key, this.maxParallelism);
      if (!keyGroupRangeContains(this.keyGroupRange, kg)) throw new Error(`a timer for key ${JSON.stringify(String(key))} (key group ${kg}) is outside this subtask's key groups`);
      return kg - start;
    });
    this.timerQueues[domain] = q;
    for (const bytes of this.restoredTimers.values()) decodeTimerGroup(bytes, domain, q);
    if (this.increments !== undefined) q.changes = this.increments.track();
    return q;
  }

  /**
   * Synchronous part of a snapshot: writes the cache's dirty entries and opens a read
   * transaction, LMDB's consistent view of this instant; timers are marked for copy-on-access
   * capture as on the heap backend. The returned function scans the view into the canonical
   * format while records keep flowing. With `incremental`, a checkpoint after a completed one
   * reads only the store keys written since (a delta, see keyed-state-delta.ts). With `hold`
   * or a `spillDir`, a full snapshot is spilled to a file (`spillFull`) instead of returned on
   * the heap.
   */
  snapshot(request: SnapshotRequest & ({ readonly hold: true } | { readonly spillDir: string })): () => Promise<KeyedSnapshotResult>;
  snapshot(request?: SnapshotRequest): () => Promise<KeyedStateSnapshot>;
  snapshot(request?: SnapshotRequest): () => Promise<KeyedSnapshotResult> {
    this.checkOpen();
    // With change tracking on, a snapshot that may be a delta takes the cache's dirty entries as
    // they are instead of writing them to the store first (random writes into a large store are
    // what would make the synchronous part slow).
    const tracking = this.increments !== undefined && (request?.incremental === true || request?.changelog !== undefined);
    const fromCache = tracking ? this.cache.captureDirty() : undefined;
    if (!tracking) this.cache.flush();
    const plan = this.planSnapshot(request);
    const delta = plan.kind === 'delta' ? { base: plan.baseCheckpointId, upto: request!.checkpointId } : undefined;
    if (delta === undefined && tracking) this.cache.flush(); // a full snapshot scans the store
    const changed = delta === undefined ? undefined : this.storeChanges!.since(delta.base, delta.upto);
    const txn = this.db.useReadTransaction();
    this.openSnapshots.add(txn);
    const states = [...this.stored.values()];
    const timers = captureTimers(
      [this.timerQueue(0), this.timerQueue(1)],
      this.keyGroupRange.startKeyGroup,
      delta === undefined ? { kind: 'full' } : { kind: 'delta', since: (c) => c.since(delta.base, delta.upto) },
    );
    if (delta === undefined && (request?.hold === true || request?.spillDir !== undefined)) return () => this.spillFull(txn, states, timers, request);
    return async () => {
      let out: StateSnapshot[] = [];
      try {
        if (changed === undefined) {
          let turn = 0;
          for (const st of states) {
            const groups = new Map<number, Uint8Array>();
            for (let kg = this.keyGroupRange.startKeyGroup; kg <= this.keyGroupRange.endKeyGroup; kg++) {
              if (++turn % SNAPSHOT_GROUPS_PER_TURN === 0) await new Promise<void>((r) => setImmediate(r));
              this.checkOpen();
              const bytes = this.encodeGroup(txn, st, kg);
              if (bytes !== undefined) groups.set(kg, bytes);
            }
            out.push({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups });
          }
        } else {
          out = await this.encodeDelta(txn, states, changed, fromCache!);
        }
      } finally {
        if (this.openSnapshots.delete(txn)) txn.done();
      }
      const snapshot: KeyedStateSnapshot = {
        formatVersion: 1,
        maxParallelism: this.maxParallelism,
        keyGroupRange: this.keyGroupRange,
        states: out,
        timers: await timers(),
        ...(delta === undefined ? {} : { baseCheckpointId: delta.base }),
      };
      if (request?.incremental === true) this.increments?.plans.written(request.checkpointId, snapshotBytes(snapshot));
      return snapshot;
    };
  }

  /**
   * The asynchronous part of a full snapshot that is written to checkpoint storage: key group by
   * key group, every state's group read in the snapshot's view goes into the spill file as the
   * keyed state file's segment, so the heap holds one key group at a time (plus the timers,
   * which live on the heap anyway). A failure, or the backend's disposal, removes the file.
   */
  private async spillFull(
    txn: Transaction,
    states: readonly StoredState[],
    timers: () => Promise<ReadonlyMap<number, Uint8Array>>,
    request: SnapshotRequest,
  ): Promise<SpilledKeyedStateSnapshot> {
    let writer: SpillFileWriter | undefined;
    try {
      const timerGroups = await timers();
      this.checkOpen();
      writer = await SpillFileWriter.create(request.spillDir ?? this.spillDir, this.keyGroupRange, this.maxParallelism);
      const names = packStateNames(states);
      // One writer per state, reused for every key group: the groups are views into them until written.
      const writers = states.map((st) => new PackedGroupWriter(st.namespaced));
      let turn = 0;
      let stateBytes = 0;
      for (let kg = this.keyGroupRange.startKeyGroup; kg <= this.keyGroupRange.endKeyGroup; kg++) {
        const groups: (Uint8Array | undefined)[] = [];
        for (const [i, st] of states.entries()) {
          if (++turn % SNAPSHOT_GROUPS_PER_TURN === 0) await new Promise<void>((r) => setImmediate(r));
          this.checkOpen();
          const bytes = this.encodeGroupWith(writers[i]!, txn, st, kg);
          stateBytes += bytes?.length ?? 0;
          groups.push(bytes);
        }
        const timerBytes = timerGroups.get(kg);
        stateBytes += timerBytes?.length ?? 0;
        await writer.append(kg, names, groups, timerBytes);
      }
      const spilled = await writer.finish();
      if (request.incremental) this.increments?.plans.written(request.checkpointId, stateBytes);
      return spilled;
    } catch (e) {
      await writer?.abort();
      throw e;
    } finally {
      if (this.openSnapshots.delete(txn)) txn.done();
    }
  }

  /** The changed entries of every state, key group by key group, read in the snapshot's view. */
  private async encodeDelta(
    txn: Transaction,
    states: readonly StoredState[],
    changed: (groupIndex: number) => ReadonlySet<string>,
    fromCache: ReadonlyMap<string, Buffer | undefined>,
  ): Promise<StateSnapshot[]> {
    const byId = new Map(states.map((st) => [st.stateId, { st, groups: new Map<number, Uint8Array>() }]));
    const start = this.keyGroupRange.startKeyGroup;
    for (let kg = start; kg <= this.keyGroupRange.endKeyGroup; kg++) {
      if ((kg - start) % SNAPSHOT_GROUPS_PER_TURN === SNAPSHOT_GROUPS_PER_TURN - 1) await new Promise<void>((r) => setImmediate(r));
      this.checkOpen();
      const perState = new Map<number, DeltaGroup>();
      for (const k of changed(kg - start)) {
        const key = Buffer.from(k, 'latin1');
        const s = byId.get(key.readUInt16BE(2));
        if (s === undefined) continue;
        let d = perState.get(s.st.stateId);
        if (d === undefined) perState.set(s.st.stateId, (d = [new Map(), [], []]));
        const [rk, ns] = decodeStateKey(key, s.st.namespaced);
        // Dirty in the cache at the snapshot: the cache has the value; else the store's view.
        const stored = fromCache.has(k) ? fromCache.get(k) : this.db.get(key, { transaction: txn });
        if (stored === undefined) {
          if (s.st.namespaced) d[2].push([rk, ns]);
          else d[1].push(rk);
        } else if (!s.st.namespaced) d[0].set(rk, unpackStoredValue(stored));
        else {
          let byNs = d[0].get(rk) as Map<number, unknown> | undefined;
          if (byNs === undefined) d[0].set(rk, (byNs = new Map()));
          byNs.set(ns, unpackStoredValue(stored));
        }
      }
      for (const [id, d] of perState) byId.get(id)!.groups.set(kg, packDeltaGroup(d));
    }
    return [...byId.values()].map(({ st, groups }) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups }));
  }

  /** Starts change tracking at the first incremental snapshot; plans full or delta. */
  private planSnapshot(request: SnapshotRequest | undefined): SnapshotPlan {
    return BackendIncrements.plan(this, request, (inc) => {
        this.storeChanges = inc.track();
        this.cache.startKeyGroup = this.keyGroupRange.startKeyGroup;
        this.cache.changes = this.storeChanges;
        for (const q of [this.timerQueue(0), this.timerQueue(1)]) q.changes = inc.track();
    });
  }

  notifyCheckpointComplete(checkpointId: number): void {
    this.increments?.confirm(checkpointId);
  }

  notifyCheckpointAborted(checkpointId: number): void {
    this.increments?.aborted(checkpointId);
  }

  /**
   * One key group of one state in the canonical format: a packed Map key -> value (or key ->
   * namespace -> value). The store holds keys, namespaces and values as msgpack already, so
   * their bytes are copied into the group as they are; a store key whose parts cannot be told
   * apart that way (not expected) makes the group go through decoding.
   */
  private encodeGroup(txn: Transaction, st: StoredState, kg: number): Uint8Array | undefined {
    const writer = new PackedGroupWriter(st.namespaced);
    return this.scanGroup(txn, st, kg, writer) ? writer.finish() : this.encodeGroupDecoded(txn, st, kg);
  }

  /** As `encodeGroup`, with a writer used for every key group: a view into its buffer, valid until its next group. */
  private encodeGroupWith(writer: PackedGroupWriter, txn: Transaction, st: StoredState, kg: number): Uint8Array | undefined {
    writer.reset();
    return this.scanGroup(txn, st, kg, writer) ? writer.finishView() : this.encodeGroupDecoded(txn, st, kg);
  }

  /** Puts one key group of one state into `writer` as the store holds it; false when an entry must be decoded instead. */
  private scanGroup(txn: Transaction, st: StoredState, kg: number, writer: PackedGroupWriter): boolean {
    for (const { key, value } of this.db.getRange({ start: stateKeyPrefix(kg, st.stateId), end: stateKeyPrefix(kg, st.stateId + 1), transaction: txn })) {
      const k = key as Buffer;
      const v = value as Buffer;
      if (!st.namespaced) {
        writer.add(k.subarray(STATE_KEY_PREFIX_BYTES), v);
        continue;
      }
      const keyEnd = msgpackElementEnd(k, STATE_KEY_PREFIX_BYTES);
      if (keyEnd < 0 || msgpackElementEnd(k, keyEnd) !== k.length) return false;
      writer.addNamespaced(k.subarray(STATE_KEY_PREFIX_BYTES, keyEnd), k.subarray(keyEnd), v);
    }
    return true;
  }

  /** As `encodeGroup`, decoding every entry and packing the group again. */
  private encodeGroupDecoded(txn: Transaction, st: StoredState, kg: number): Uint8Array | undefined {
    const group = new Map<KeyType, unknown>();
    for (const { key, value } of this.db.getRange({ start: stateKeyPrefix(kg, st.stateId), end: stateKeyPrefix(kg, st.stateId + 1), transaction: txn })) {
      const [k, ns] = decodeStateKey(key, st.namespaced);
      const v = unpackStoredValue(value);
      if (!st.namespaced) {
        group.set(k, v);
        continue;
      }
      let byNs = group.get(k) as Map<number, unknown> | undefined;
      if (byNs === undefined) group.set(k, (byNs = new Map()));
      byNs.set(ns, v);
    }
    return group.size === 0 ? undefined : packGroup(group);
  }

  /**
   * Loads the key groups of this subtask's range from snapshots of any parallelism (same max
   * parallelism) and of either backend into the store, in chain order: a full group is
   * loaded, then the deltas on it are applied (no folded copy of the state is built); timers
   * go to the timer queues when they are created.
   */
  restore(snapshots: readonly KeyedStateSnapshot[]): void {
    this.checkOpen();
    if (this.handles.size > 0 || this.timerQueues.some((q) => q !== undefined)) throw new Error('restore must happen before any state or timer is registered');
    const chains = restoredChains(snapshots, this.keyGroupRange, this.maxParallelism);
    this.restoredKeyTypeMask = restoredKeyTypes(chains);
    // Each key group's chain, loaded in transactions of about RESTORE_ENTRIES_PER_TXN writes
    // (a commit per group and delta made commits most of a chain's restore).
    const work: (() => number)[] = [];
    for (const [name, s] of chains.states) {
      const st = this.stored.get(name) ?? this.addStoredState(name, s.kind, s.namespaced);
      for (const [kg, chain] of s.groups) {
        work.push(() => {
          let writes = chain.full === undefined ? 0 : this.loadGroup(st, kg, chain.full);
          for (const delta of chain.deltas) writes += this.applyDeltaGroup(st, kg, delta);
          return writes;
        });
      }
    }
    for (let next = 0; next < work.length; ) {
      this.db.transactionSync(() => {
        for (let writes = 0; next < work.length && writes < RESTORE_ENTRIES_PER_TXN; ) writes += work[next++]!();
      });
    }
    for (const [kg, bytes] of chains.timers) this.restoredTimers.set(kg, bytes);
  }

  /** Applies one delta group (keyed-state-delta.ts) to the store, inside the caller's transaction; returns the writes. */
  private applyDeltaGroup(st: StoredState, kg: number, bytes: Uint8Array): number {
    let writes = 0;
    applyDeltaChanges(bytes, st.namespaced, {
      removeKey: (key) => {
        writes++;
        const prefix = encodeStateKey(kg, st.stateId, key, undefined);
        if (!st.namespaced) this.db.removeSync(prefix);
        // Every namespace of the key: msgpack is prefix-free, so they share the key's prefix.
        else for (const stored of this.db.getKeys({ start: prefix, end: prefixEnd(prefix) })) this.db.removeSync(stored as Buffer);
      },
      removeEntry: (key, ns) => {
        writes++;
        this.db.removeSync(encodeStateKey(kg, st.stateId, key, ns));
      },
      put: (key, ns, value) => {
        writes++;
        this.restorePut(encodeStateKey(kg, st.stateId, key, ns), packStoredValue(value));
      },
    });
    return writes;
  }

  private restorePut(key: Buffer, value: Buffer): void {
    this.db.putSync(key, value);
    if (this.restoreMaxKey === undefined || Buffer.compare(key, this.restoreMaxKey) > 0) this.restoreMaxKey = key;
  }

  /** The greatest key restore wrote so far: a sorted group beyond it is appended (MDB_APPEND: no search, full pages). */
  private restoreMaxKey: Buffer | undefined;

  /** Loads a full key group into the store, inside the caller's transaction; returns the writes. */
  private loadGroup(st: StoredState, kg: number, bytes: Uint8Array): number {
    const entries = scannedGroupEntries(kg, st, bytes) ?? decodedGroupEntries(kg, st, bytes);
    if (entries.length === 0) return 0;
    // Groups an lmdb backend wrote come in key order already; the heap backend's do not.
    let sorted = true;
    for (let i = 1; i < entries.length && sorted; i++) sorted = Buffer.compare(entries[i - 1]!.key, entries[i]!.key) < 0;
    if (!sorted) entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const append = this.restoreMaxKey === undefined || Buffer.compare(entries[0]!.key, this.restoreMaxKey) > 0;
    const last = entries[entries.length - 1]!.key;
    if (this.restoreMaxKey === undefined || Buffer.compare(last, this.restoreMaxKey) > 0) this.restoreMaxKey = last;
    const options = { append };
    // lmdb-js takes any Uint8Array as a binary value (a view here: no copy until LMDB's own).
    for (const e of entries) this.db.putSync(e.key, e.value as Buffer, options);
    return entries.length;
  }

  hasState(stateName: string): boolean {
    return this.stored.has(stateName);
  }

  stateNames(): string[] {
    return [...this.stored.keys()];
  }

  keys(stateName: string, namespace: number): KeyType[] {
    const st = this.stored.get(stateName);
    if (st === undefined) return [];
    this.cache.flush();
    const out: KeyType[] = [];
    for (let kg = this.keyGroupRange.startKeyGroup; kg <= this.keyGroupRange.endKeyGroup; kg++) {
      for (const stored of this.db.getKeys({ start: stateKeyPrefix(kg, st.stateId), end: stateKeyPrefix(kg, st.stateId + 1) })) {
        const [key, ns] = decodeStateKey(stored as Uint8Array, st.namespaced);
        // A key's entries are contiguous (one per namespace): each key once.
        if (!st.namespaced || ns === namespace) out.push(key);
      }
    }
    return out;
  }

  numEntries(stateName: string): number {
    const st = this.stored.get(stateName);
    if (st === undefined) return 0;
    this.cache.flush();
    let n = 0;
    for (let kg = this.keyGroupRange.startKeyGroup; kg <= this.keyGroupRange.endKeyGroup; kg++) {
      n += this.db.getKeysCount({ start: stateKeyPrefix(kg, st.stateId), end: stateKeyPrefix(kg, st.stateId + 1) });
    }
    return n;
  }

  /** Cache statistics, for tests and benchmarks. */
  cacheStats(): { readonly entries: number; readonly storeReads: number; readonly flushes: number; readonly entriesWritten: number } {
    return { entries: this.cache.size, ...this.cache.stats };
  }

  private checkOpen(): void {
    if (this.disposed) throw new Error(`the lmdb state backend at ${this.path} was disposed`);
  }

  /** Closes the store and deletes its working directory. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const txn of this.openSnapshots) txn.done();
    this.openSnapshots.clear();
    this.handles.clear();
    const remove = (): void => rmSync(this.path, { recursive: true, force: true });
    void this.db.close().then(remove, remove);
  }
}

type RestoredEntry = { key: Buffer; value: Uint8Array };

/**
 * A packed key group's entries with each value's bytes taken as they are (a view, no copy):
 * the store keeps values packed by the same packer, so decoding and packing them again is
 * wasted. Undefined when a value does not stand alone (msgpackr records, Sets...) or the
 * group is in another format: then the group is decoded.
 */
function scannedGroupEntries(kg: number, st: StoredState, bytes: Uint8Array): RestoredEntry[] | undefined {
  const header = msgpackMapHeader(bytes, 0);
  if (header === undefined) return undefined;
  const entries: RestoredEntry[] = [];
  let pos = header.start;
  for (let i = 0; i < header.size; i++) {
    const keyEnd = msgpackElementEnd(bytes, pos);
    if (keyEnd < 0) return undefined;
    const key = decodeKey(msgpackNumberAt(bytes, pos) ?? unpackGroup(bytes.subarray(pos, keyEnd)));
    pos = keyEnd;
    if (!st.namespaced) {
      const valueEnd = msgpackElementEnd(bytes, pos);
      if (valueEnd < 0) return undefined;
      entries.push({ key: encodeStateKey(kg, st.stateId, key, undefined), value: bytes.subarray(pos, valueEnd) });
      pos = valueEnd;
      continue;
    }
    const byNs = msgpackMapHeader(bytes, pos);
    if (byNs === undefined) return undefined;
    pos = byNs.start;
    for (let j = 0; j < byNs.size; j++) {
      const nsEnd = msgpackElementEnd(bytes, pos);
      if (nsEnd < 0) return undefined;
      const ns = msgpackNumberAt(bytes, pos) ?? unpackGroup(bytes.subarray(pos, nsEnd));
      if (typeof ns !== 'number') return undefined;
      const valueEnd = msgpackElementEnd(bytes, nsEnd);
      if (valueEnd < 0) return undefined;
      entries.push({ key: encodeStateKey(kg, st.stateId, key, ns), value: bytes.subarray(nsEnd, valueEnd) });
      pos = valueEnd;
    }
  }
  return pos === bytes.length ? entries : undefined;
}

/** A packed key group's entries, decoded and each value packed again (any value; also the earlier [keys, values] format). */
function decodedGroupEntries(kg: number, st: StoredState, bytes: Uint8Array): RestoredEntry[] {
  const entries: RestoredEntry[] = [];
  const add = (key: KeyType, ns: number | undefined, encoded: unknown): void => {
    entries.push({ key: encodeStateKey(kg, st.stateId, key, ns), value: packStoredValue(encoded) });
  };
  const packed = unpackGroup(bytes) as Map<unknown, unknown> | [unknown[], unknown[]];
  if (Array.isArray(packed)) {
    // Format of snapshots taken before groups were packed as maps: [keys, values] columns.
    const [keys, values] = packed;
    for (let i = 0; i < keys.length; i++) {
      const key = decodeKey(keys[i]);
      if (!st.namespaced) add(key, undefined, values[i]);
      else {
        const [nss, vs] = values[i] as [number[], unknown[]];
        for (let j = 0; j < nss.length; j++) add(key, nss[j]!, vs[j]);
      }
    }
  } else {
    for (const [k, v] of packed) {
      const key = decodeKey(k);
      if (!st.namespaced) add(key, undefined, v);
      else for (const [ns, nv] of v as Map<number, unknown>) add(key, ns, nv);
    }
  }
  return entries;
}
