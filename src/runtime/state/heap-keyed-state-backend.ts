import type { KeyedStateDescriptor } from '../../api/state-descriptors.js';
import { GroupCapture, decodeTableGroupInto, encodeTableGroup } from './heap-snapshot.js';
import { BackendIncrements, type SnapshotPlan } from './incremental-snapshots.js';
import { applyDeltaGroupToTable, foldGroupChain, foldGroupChains, heapDeltaGroup, restoredChains, type RestoredChains } from './keyed-state-delta.js';
import { captureTimers } from './timer-snapshot.js';
import { columnsGroupBytes, wholeGroupBytes, writeNumericDeltaGroup } from './delta-group-writer.js';
import { HeapStateTable } from './heap-state-table.js';
import { KeyGroupHints, keyGroupRangeSize, ownedKeyGroup, type KeyGroupRange, type KeyType } from './key-group.js';
import { decodeTimerGroup, snapshotBytes, type KeyedStateSnapshot, type StateSnapshot } from './keyed-state-snapshot.js';
import { TimerQueue } from '../task/timer-queue.js';
import { stateCodec } from './state-codec.js';
import { restoredStateMismatch, storedStateKind } from './ttl.js';
import { reregisteredStateMismatch } from './state-registration.js';
import { keyTypeBit, restoredKeyTypeMismatch, restoredKeyTypes } from './restored-key-types.js';
import type { InternalState, KeyedStateBackend, SnapshotRequest } from './keyed-state-backend.js';
import { createStateHandle } from './state-handles.js';
import type { HeapSnapshotReplica, SnapshotThread } from './snapshot-thread.js';
import type { TransferArena } from './snapshot-parts.js';
import type { KeyedSnapshotResult } from './keyed-state-file.js';

/** Keyed state held as objects on the JavaScript heap (Flink's HashMapStateBackend). */
export class HeapKeyedStateBackend implements KeyedStateBackend {
  /** Read by state handles on every access. */
  currentKey: KeyType = '';
  /** The current key's key group as an index into the range (tables are arrays of groups). */
  currentSlot = -1;
  private currentKeyGroup = -1;
  readonly tables = new Map<string, HeapStateTable>();
  private readonly states = new Map<string, { descriptor: KeyedStateDescriptor; handle: InternalState }>();
  /** Restored key groups of states not registered yet (per key group a full group and deltas), decoded when the state is registered. */
  private restored: RestoredChains['states'] = new Map();
  /** Restored timers by key group, decoded into the timer queues when they are created. */
  private restoredTimers = new Map<number, Uint8Array>();
  /** Event-time (0) and processing-time (1) timers of the operator, per key group. */
  private readonly timerQueues: [TimerQueue | undefined, TimerQueue | undefined] = [undefined, undefined];
  /** Whether the timer queues' changes are tracked along with the states' (not on the snapshot thread's path). */
  private timersTracked = true;
  /** Set from the first incremental checkpoint (or changelog segment) on. */
  increments: BackendIncrements | undefined;

  /** This backend's replica in the snapshot thread, from the first snapshot on. */
  private replica: HeapSnapshotReplica | undefined;
  /** Positions of snapshots taken through the snapshot thread (1, 2, ...). */
  private replicaPosition = 0;

  constructor(
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
    readonly nowMs: () => number = Date.now,
    /**
     * `state.backend.hashmap.snapshot-thread`: full snapshots are assembled by this thread
     * from a replica (see snapshot-thread.ts). Only for jobs whose checkpoints are neither
     * incremental nor changelog (those capture only changes already).
     */
    private readonly snapshotThread?: SnapshotThread,
  ) {
    this.hints = new KeyGroupHints(keyGroupRange, maxParallelism);
  }

  private readonly hints: KeyGroupHints;

  /** The types of the restored keys (restored-key-types.ts); 0 when nothing was restored. */
  private restoredKeyTypeMask = 0;

  setCurrentKey(key: KeyType): void {
    if (this.restoredKeyTypeMask !== 0 && (this.restoredKeyTypeMask & keyTypeBit(key)) === 0) throw restoredKeyTypeMismatch(this.restoredKeyTypeMask, key);
    const kg = ownedKeyGroup(key, this.keyGroupRange, this.maxParallelism);
    this.currentKey = key;
    this.currentKeyGroup = kg;
    this.currentSlot = kg - this.keyGroupRange.startKeyGroup;
  }

  setCurrentKeyInGroup(key: KeyType, keyGroup: number): void {
    if (this.restoredKeyTypeMask !== 0 && (this.restoredKeyTypeMask & keyTypeBit(key)) === 0) throw restoredKeyTypeMismatch(this.restoredKeyTypeMask, key);
    this.currentSlot = this.hints.slotOf(key, keyGroup);
    this.currentKey = key;
    this.currentKeyGroup = keyGroup;
  }

  getCurrentKey(): KeyType {
    return this.currentKey;
  }

  getCurrentKeyGroup(): number {
    return this.currentKeyGroup;
  }

  getOrCreateState(descriptor: KeyedStateDescriptor, namespaced: boolean): InternalState {
    const existing = this.states.get(descriptor.name);
    if (existing !== undefined) {
      const mismatch = reregisteredStateMismatch(existing.descriptor, descriptor);
      if (mismatch !== undefined) throw new Error(mismatch);
      return existing.handle;
    }
    const codec = stateCodec(descriptor);
    const table = new HeapStateTable(descriptor.name, this.keyGroupRange, namespaced, codec.passthrough);
    const restored = this.restored.get(descriptor.name);
    if (restored !== undefined) {
      const mismatch = restoredStateMismatch(restored, descriptor, namespaced);
      if (mismatch !== undefined) throw new Error(mismatch);
      for (const [kg, chain] of restored.groups) {
        const groupIndex = kg - this.keyGroupRange.startKeyGroup;
        if (table.isNumeric && chain.deltas.length > 0) {
          // A numeric group removes a whole key by a walk over it: fold the chain first (values as stored, which is how a numeric table keeps them).
          const full = foldGroupChain(chain, namespaced);
          if (full !== undefined) decodeTableGroupInto(table, groupIndex, full, codec);
          continue;
        }
        if (chain.full !== undefined) decodeTableGroupInto(table, groupIndex, chain.full, codec);
        for (const delta of chain.deltas) applyDeltaGroupToTable(table, groupIndex, delta, codec);
      }
      this.restored.delete(descriptor.name);
    }
    // Restored entries were in the snapshots already (carried over): only later writes are changes.
    if (this.increments !== undefined) table.changes = this.increments.track();
    table.wholeGroupsWhileNumeric = this.replica !== undefined;
    this.tables.set(descriptor.name, table);
    const handle = createStateHandle(this, table, descriptor);
    this.states.set(descriptor.name, { descriptor, handle });
    return handle;
  }

  /** The operator's timers of a time domain (0 event time, 1 processing time), with the restored ones. */
  timerQueue(domain: 0 | 1): TimerQueue {
    let q = this.timerQueues[domain];
    if (q !== undefined) return q;
    const start = this.keyGroupRange.startKeyGroup;
    q = new TimerQueue(keyGroupRangeSize(this.keyGroupRange), (key) => {
      if (key === this.currentKey && this.currentSlot >= 0) return this.currentSlot;
      return ownedKeyGroup(key, this.keyGroupRange, this.maxParallelism) - start;
    });
    this.timerQueues[domain] = q;
    for (const bytes of this.restoredTimers.values()) decodeTimerGroup(bytes, domain, q);
    if (this.increments !== undefined && this.timersTracked) q.changes = this.increments.track();
    return q;
  }

  /**
   * Synchronous part of a snapshot: marks every key group of every state and timer queue for
   * capture (nothing is copied now). The returned function serializes the rest while records
   * keep flowing; a record touching a group not serialized yet serializes it first. With
   * `incremental`, a checkpoint after a completed one captures only the keys changed since
   * (a delta, see keyed-state-delta.ts).
   */
  snapshot(request: SnapshotRequest & ({ readonly hold: true } | { readonly spillDir: string })): () => Promise<KeyedSnapshotResult>;
  snapshot(request?: SnapshotRequest): () => Promise<KeyedStateSnapshot>;
  snapshot(request?: SnapshotRequest): () => Promise<KeyedSnapshotResult> {
    if (this.snapshotThread !== undefined && (this.replica !== undefined || this.increments === undefined)) {
      // The first snapshot decides: a backend whose snapshots are incremental or changelog segments tracks changes for those.
      const full = request?.incremental !== true && request?.changelog === undefined;
      if (full) return this.snapshotThroughThread(this.snapshotThread, request?.hold === true);
      if (this.replica !== undefined) throw new Error('a heap backend that assembles full snapshots on the snapshot thread cannot also take incremental or changelog snapshots');
    }
    const plan = this.planSnapshot(request);
    const finish = this.capture(plan.kind === 'delta' ? { base: plan.baseCheckpointId, upto: request!.checkpointId } : undefined);
    if (request?.incremental !== true) return finish;
    return async () => {
      const snapshot = await finish();
      this.increments?.plans.written(request.checkpointId, snapshotBytes(snapshot));
      return snapshot;
    };
  }

  /**
   * A full snapshot assembled by the snapshot thread: this thread captures the changes since
   * the previous snapshot (a delta, as an incremental checkpoint does), the thread applies
   * them to its replica and answers with the full snapshot. The first snapshot, and the first
   * after the replica was lost, is captured whole here and resets the replica.
   */
  private snapshotThroughThread(thread: SnapshotThread, hold: boolean): () => Promise<KeyedSnapshotResult> {
    const replica = (this.replica ??= thread.replica());
    const position = ++this.replicaPosition;
    const base = position - 1;
    const increments = this.increments ?? this.startTracking(undefined, false);
    for (const t of this.tables.values()) t.wholeGroupsWhileNumeric = true;
    const delta = replica.readyFor(base);
    increments.beginSegment(position, !delta);
    // A delta's groups are written into an arena whose buffers go to the thread and come back (a reset's stay in the replica).
    const arena = delta ? thread.arena() : undefined;
    const finish = this.capture(delta ? { base, upto: position } : undefined, arena);
    const turn = replica.turn(delta ? base : undefined, position);
    // Started now, not when the caller asks: later snapshots wait for this one's turn.
    const result = (async () => {
      let captured: KeyedStateSnapshot;
      try {
        await Promise.resolve(); // not inside the synchronous part
        captured = await finish();
      } catch (e) {
        turn.abandon();
        throw e;
      }
      return turn.complete(captured, hold, arena);
    })();
    result.catch(() => {}); // the caller sees the failure when it asks
    return () => result;
  }

  /**
   * Tracks the changes of every state and timer queue from now on; timer queues not when
   * `timers` is false (the snapshot thread's path sends their key groups whole).
   */
  private startTracking(inc = new BackendIncrements(keyGroupRangeSize(this.keyGroupRange)), timers = true): BackendIncrements {
    this.increments = inc;
    this.timersTracked = timers;
    for (const t of this.tables.values()) t.changes = inc.track();
    if (timers) for (const q of [this.timerQueue(0), this.timerQueue(1)]) q.changes = inc.track();
    return inc;
  }

  /**
   * The synchronous part of a full snapshot (`delta` undefined) or of the changes between two
   * positions; returns the asynchronous part. With `arena` (a delta for the snapshot thread's
   * replica), a numeric table's key groups go whole, as raw columns written into the arena
   * (delta-group-writer.ts's columns groups): copying typed arrays costs this thread far less
   * than visiting every changed key, and the thread packs them. So do, once, the groups of a
   * table that turned into maps while its keys were not tracked.
   */
  private capture(delta: { base: number; upto: number } | undefined, arena?: TransferArena): () => Promise<KeyedStateSnapshot> {
    const captures: { name: string; kind: string; namespaced: boolean; capture: GroupCapture }[] = [];
    for (const [name, { descriptor }] of this.states) {
      const table = this.tables.get(name)!;
      table.capture?.completeNow(); // an older snapshot still capturing finishes first
      const codec = stateCodec(descriptor);
      let capture: GroupCapture;
      const whole = table.wholeGroupsOnce;
      if (delta === undefined || arena !== undefined) table.wholeGroupsOnce = false; // a full capture, or the one that sends them
      if (delta === undefined || table.changes === null) capture = GroupCapture.ofTable(table, codec);
      else {
        const changed = table.changes.since(delta.base, delta.upto);
        const encode = codec.passthrough ? undefined : (v: unknown): unknown => codec.encode(v);
        capture = new GroupCapture(table, this.keyGroupRange.startKeyGroup, (i) => {
          if (whole && arena !== undefined) return wholeGroupBytes(encodeTableGroup(table, i, codec), arena);
          const keys = changed(i);
          const numeric = table.numericGroup(i);
          if (numeric !== undefined) {
            if (arena !== undefined) return columnsGroupBytes(numeric, table.namespaced, arena);
            const written = writeNumericDeltaGroup(numeric, keys, table.namespaced);
            if (written !== null) return written;
          }
          return keys.size === 0 ? undefined : heapDeltaGroup(table.groupMap(i, keys), keys, table.namespaced, encode);
        });
      }
      table.capture = capture;
      captures.push({ name, kind: storedStateKind(descriptor), namespaced: table.namespaced, capture });
    }
    const timers = captureTimers(
      [this.timerQueue(0), this.timerQueue(1)],
      this.keyGroupRange.startKeyGroup,
      // For the snapshot thread, every key group's timers go whole (their changes are not tracked on that path).
      delta === undefined ? { kind: 'full' } : arena !== undefined ? { kind: 'whole', arena } : { kind: 'delta', since: (c) => c.since(delta.base, delta.upto) },
    );
    // Restored state nobody registered (yet) is carried over unchanged (a delta has no changes of it).
    const carried: StateSnapshot[] = delta !== undefined ? [] : [...this.restored].map(([name, r]) => ({ name, kind: r.kind, namespaced: r.namespaced, groups: foldGroupChains(r.groups, r.namespaced) }));
    return async () => {
      for (const c of captures) await c.capture.completeAsync();
      const snapshot: KeyedStateSnapshot = {
        formatVersion: 1,
        maxParallelism: this.maxParallelism,
        keyGroupRange: this.keyGroupRange,
        states: [...captures.map((c) => ({ name: c.name, kind: c.kind, namespaced: c.namespaced, groups: c.capture.groups })), ...carried],
        timers: await timers(),
        ...(delta === undefined ? {} : { baseCheckpointId: delta.base }),
      };
      return snapshot;
    };
  }

  /** Starts change tracking at the first incremental snapshot; plans full or delta. */
  private planSnapshot(request: SnapshotRequest | undefined): SnapshotPlan {
    return BackendIncrements.plan(
      this,
      request,
      (inc) => this.startTracking(inc),
      () => {
        let n = this.timerQueue(0).size + this.timerQueue(1).size;
        for (const t of this.tables.values()) n += t.numEntries();
        return n;
      },
    );
  }

  notifyCheckpointComplete(checkpointId: number): void {
    this.increments?.confirm(checkpointId);
  }

  notifyCheckpointAborted(checkpointId: number): void {
    this.increments?.aborted(checkpointId);
  }

  /**
   * Takes the key groups of this subtask's range from snapshots of any parallelism (same max
   * parallelism), in chain order (full snapshots, then deltas on them). States are decoded
   * when registered; timers when their queue is created.
   */
  restore(snapshots: readonly KeyedStateSnapshot[]): void {
    if (this.states.size > 0 || this.timerQueues.some((q) => q !== undefined)) throw new Error('restore must happen before any state or timer is registered');
    const chains = restoredChains(snapshots, this.keyGroupRange, this.maxParallelism);
    this.restoredKeyTypeMask = restoredKeyTypes(chains);
    this.restored = chains.states;
    this.restoredTimers = chains.timers;
  }

  keys(stateName: string, namespace: number): KeyType[] {
    return this.tables.get(stateName)?.keys(namespace) ?? [];
  }

  numEntries(stateName: string): number {
    return this.tables.get(stateName)?.numEntries() ?? 0;
  }

  hasState(stateName: string): boolean {
    return this.states.has(stateName) || this.restored.has(stateName);
  }

  stateNames(): string[] {
    return [...new Set([...this.states.keys(), ...this.restored.keys()])];
  }

  dispose(): void {
    this.replica?.drop();
    this.tables.clear();
    this.states.clear();
  }
}
