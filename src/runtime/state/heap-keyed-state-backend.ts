import type {
  AggregatingStateDescriptor,
  KeyedStateDescriptor,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  ValueStateDescriptor,
} from '../../api/state-descriptors.js';
import { GroupCapture, decodeTableGroupInto } from './heap-snapshot.js';
import { BackendIncrements, type SnapshotPlan } from './incremental-snapshots.js';
import { heapDeltaGroup } from './keyed-state-delta.js';
import { captureTimers } from './timer-snapshot.js';
import { HeapStateTable } from './heap-state-table.js';
import { keyGroupRangeSize, ownedKeyGroup, type KeyGroupRange, type KeyType } from './key-group.js';
import { decodeTimerGroup, snapshotBytes, type KeyedStateSnapshot, type StateSnapshot } from './keyed-state-snapshot.js';
import { TimerQueue } from '../task/timer-queue.js';
import { stateCodec } from './state-codec.js';
import type { InternalState, KeyedStateBackend, SnapshotRequest } from './keyed-state-backend.js';
import { serializerOr, type TypeSerializer } from './serializer.js';
import { isExpired, resolveTtl, type ResolvedTtl, type TtlValue } from './ttl.js';

/** Keyed state held as objects on the JavaScript heap (Flink's HashMapStateBackend). */
export class HeapKeyedStateBackend implements KeyedStateBackend {
  /** Read by state handles on every access. */
  currentKey: KeyType = '';
  currentGroupIndex = -1;
  private currentKeyGroup = -1;
  readonly tables = new Map<string, HeapStateTable>();
  private readonly states = new Map<string, { descriptor: KeyedStateDescriptor; handle: InternalState }>();
  /** Restored key groups of states not registered yet, decoded when the state is registered. */
  private readonly restored = new Map<string, { kind: string; namespaced: boolean; groups: Map<number, Uint8Array> }>();
  /** Restored timers by key group, decoded into the timer queues when they are created. */
  private restoredTimers = new Map<number, Uint8Array>();
  /** Event-time (0) and processing-time (1) timers of the operator, per key group. */
  private readonly timerQueues: [TimerQueue | undefined, TimerQueue | undefined] = [undefined, undefined];
  /** Set from the first incremental checkpoint (or changelog segment) on. */
  increments: BackendIncrements | undefined;

  constructor(
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
    readonly nowMs: () => number = Date.now,
  ) {}

  setCurrentKey(key: KeyType): void {
    const kg = ownedKeyGroup(key, this.keyGroupRange, this.maxParallelism);
    this.currentKey = key;
    this.currentKeyGroup = kg;
    this.currentGroupIndex = kg - this.keyGroupRange.startKeyGroup;
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
      if (existing.descriptor.kind !== descriptor.kind) {
        throw new Error(`state '${descriptor.name}' was registered as ${existing.descriptor.kind} state and is now requested as ${descriptor.kind} state`);
      }
      return existing.handle;
    }
    const table = new HeapStateTable(descriptor.name, this.keyGroupRange, namespaced);
    const restored = this.restored.get(descriptor.name);
    if (restored !== undefined) {
      if (restored.kind !== descriptor.kind || restored.namespaced !== namespaced) {
        throw new Error(
          `state '${descriptor.name}' was restored as ${restored.kind} state and is now registered as ${descriptor.kind} state: ` +
            'a state keeps its kind across job versions (give the new state another name)',
        );
      }
      const codec = stateCodec(descriptor);
      for (const [kg, bytes] of restored.groups) decodeTableGroupInto(table, kg - this.keyGroupRange.startKeyGroup, bytes, codec);
      this.restored.delete(descriptor.name);
    }
    // Restored entries were in the snapshots already (carried over): only later writes are changes.
    if (this.increments !== undefined) table.changes = this.increments.track();
    this.tables.set(descriptor.name, table);
    const handle = createHeapState(this, table, descriptor);
    this.states.set(descriptor.name, { descriptor, handle });
    return handle;
  }

  /** The operator's timers of a time domain (0 event time, 1 processing time), with the restored ones. */
  timerQueue(domain: 0 | 1): TimerQueue {
    let q = this.timerQueues[domain];
    if (q !== undefined) return q;
    const start = this.keyGroupRange.startKeyGroup;
    q = new TimerQueue(keyGroupRangeSize(this.keyGroupRange), (key) => {
      if (key === this.currentKey && this.currentGroupIndex >= 0) return this.currentGroupIndex;
      return ownedKeyGroup(key, this.keyGroupRange, this.maxParallelism) - start;
    });
    this.timerQueues[domain] = q;
    for (const bytes of this.restoredTimers.values()) decodeTimerGroup(bytes, domain, q);
    if (this.increments !== undefined) q.changes = this.increments.track();
    return q;
  }

  /**
   * Synchronous part of a snapshot: marks every key group of every state and timer queue for
   * capture (nothing is copied now). The returned function serializes the rest while records
   * keep flowing; a record touching a group not serialized yet serializes it first. With
   * `incremental`, a checkpoint after a completed one captures only the keys changed since
   * (a delta, see keyed-state-delta.ts).
   */
  snapshot(request?: SnapshotRequest): () => Promise<KeyedStateSnapshot> {
    const plan = this.planSnapshot(request);
    const delta = plan.kind === 'delta' ? { base: plan.baseCheckpointId, upto: request!.checkpointId } : undefined;
    const captures: { name: string; kind: string; namespaced: boolean; capture: GroupCapture }[] = [];
    for (const [name, { descriptor }] of this.states) {
      const table = this.tables.get(name)!;
      table.capture?.completeNow(); // an older snapshot still capturing finishes first
      const codec = stateCodec(descriptor);
      let capture: GroupCapture;
      if (delta === undefined || table.changes === null) capture = GroupCapture.ofTable(table, codec);
      else {
        const changed = table.changes.since(delta.base, delta.upto);
        const encode = codec.passthrough ? undefined : (v: unknown): unknown => codec.encode(v);
        capture = new GroupCapture(table, this.keyGroupRange.startKeyGroup, (i) => heapDeltaGroup(table.groups[i]!, changed(i), table.namespaced, encode));
      }
      table.capture = capture;
      captures.push({ name, kind: descriptor.kind, namespaced: table.namespaced, capture });
    }
    const timers = captureTimers(
      [this.timerQueue(0), this.timerQueue(1)],
      this.keyGroupRange.startKeyGroup,
      delta === undefined ? undefined : (c) => c.since(delta.base, delta.upto),
    );
    // Restored state nobody registered (yet) is carried over unchanged (a delta has no changes of it).
    const carried: StateSnapshot[] = delta !== undefined ? [] : [...this.restored].map(([name, r]) => ({ name, kind: r.kind, namespaced: r.namespaced, groups: new Map(r.groups) }));
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
      if (request?.incremental === true) this.increments?.plans.written(request.checkpointId, snapshotBytes(snapshot));
      return snapshot;
    };
  }

  /** Starts change tracking at the first incremental snapshot; plans full or delta. */
  private planSnapshot(request: SnapshotRequest | undefined): SnapshotPlan {
    return BackendIncrements.plan(this, request, (inc) => {
        for (const t of this.tables.values()) t.changes = inc.track();
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
   * Takes the key groups of this subtask's range from snapshots of any parallelism (same max
   * parallelism). States are decoded when registered; timers are returned by `takeRestoredTimers`.
   */
  restore(snapshots: readonly KeyedStateSnapshot[]): void {
    if (this.states.size > 0 || this.timerQueues.some((q) => q !== undefined)) throw new Error('restore must happen before any state or timer is registered');
    const { startKeyGroup, endKeyGroup } = this.keyGroupRange;
    for (const snap of snapshots) {
      if (snap.maxParallelism !== this.maxParallelism) {
        throw new Error(
          `the snapshot was taken with max parallelism ${snap.maxParallelism} and the operator now has ${this.maxParallelism}: ` +
            'the max parallelism (number of key groups) cannot change; set it back with setMaxParallelism()',
        );
      }
      for (const st of snap.states) {
        let r = this.restored.get(st.name);
        if (r === undefined) this.restored.set(st.name, (r = { kind: st.kind, namespaced: st.namespaced, groups: new Map() }));
        for (const [kg, bytes] of st.groups) if (kg >= startKeyGroup && kg <= endKeyGroup) r.groups.set(kg, bytes);
      }
      for (const [kg, bytes] of snap.timers) if (kg >= startKeyGroup && kg <= endKeyGroup) this.restoredTimers.set(kg, bytes);
    }
  }

  numEntries(stateName: string): number {
    return this.tables.get(stateName)?.numEntries() ?? 0;
  }

  dispose(): void {
    this.tables.clear();
    this.states.clear();
  }
}

function createHeapState(b: HeapKeyedStateBackend, table: HeapStateTable, d: KeyedStateDescriptor): InternalState {
  switch (d.kind) {
    case 'value':
      return new HeapValueState(b, table, d);
    case 'list':
      return new HeapListState(b, table, d);
    case 'map':
      return new HeapMapState(b, table, d);
    case 'reducing':
      return new HeapReducingState(b, table, d);
    case 'aggregating':
      return new HeapAggregatingState(b, table, d);
  }
}

/** Shared plumbing: current key and namespace, TTL wrapping, serializer checks. */
abstract class HeapState<S> {
  protected namespace = 0;
  protected readonly ttl: ResolvedTtl | undefined;
  protected readonly serializer: TypeSerializer<S>;

  constructor(
    protected readonly backend: HeapKeyedStateBackend,
    protected readonly table: HeapStateTable,
    descriptor: { name: string; serializer?: TypeSerializer<S> | undefined; ttl?: import('../../api/state-descriptors.js').StateTtlConfig | undefined },
  ) {
    this.ttl = resolveTtl(descriptor.ttl);
    this.serializer = serializerOr(descriptor.serializer);
  }

  setCurrentNamespace(namespace: number): void {
    this.namespace = namespace;
  }

  private groupIndex(): number {
    const i = this.backend.currentGroupIndex;
    if (i < 0) throw new Error(`state '${this.table.name}' accessed outside a keyed context (no current key)`);
    return i;
  }

  protected raw(): unknown {
    return this.table.get(this.groupIndex(), this.backend.currentKey, this.namespace);
  }

  protected setRaw(value: unknown): void {
    this.table.put(this.groupIndex(), this.backend.currentKey, this.namespace, value);
  }

  clear(): void {
    this.table.remove(this.groupIndex(), this.backend.currentKey, this.namespace);
  }

  /** The stored object of the current key was changed in place (a list or map): an incremental snapshot must include it. */
  protected markChanged(): void {
    const changes = this.table.changes;
    if (changes !== null) changes.mark(this.groupIndex(), this.backend.currentKey);
  }

  protected check(value: S, serializer: TypeSerializer<S> = this.serializer, what = ''): void {
    try {
      serializer.check(value);
    } catch (e) {
      throw new Error(`cannot write to state '${this.table.name}'${what}: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * Unwraps a TTL value; undefined when expired and not to be returned. As Flink's TTL
   * decorator: an expired entry is removed (`drop`) by the access that finds it, and may be
   * returned that one time with ReturnExpiredIfNotCleanedUp; a live one is refreshed on read
   * with OnReadAndWrite.
   */
  protected unwrap<T>(stored: TtlValue<T> | undefined, rewrap: (v: TtlValue<T>) => void, drop: () => void): T | undefined {
    if (stored === undefined) return undefined;
    const ttl = this.ttl!;
    const now = this.backend.nowMs();
    if (isExpired(ttl, stored, now)) {
      drop();
      return ttl.returnExpired ? stored.v : undefined;
    }
    if (ttl.refreshOnRead) rewrap({ v: stored.v, t: now });
    return stored.v;
  }

  protected wrap<T>(v: T): TtlValue<T> {
    return { v, t: this.backend.nowMs() };
  }
}

/** A single value per key: value state, and the base of reducing and aggregating state. */
abstract class HeapSingleValueState<S> extends HeapState<S> {
  protected getValue(): S | undefined {
    const stored = this.raw();
    if (this.ttl === undefined) return stored as S | undefined;
    return this.unwrap(
      stored as TtlValue<S> | undefined,
      (w) => this.setRaw(w),
      () => this.clear(),
    );
  }

  protected setValue(value: S): void {
    this.setRaw(this.ttl === undefined ? value : this.wrap(value));
  }

  getInternal(): unknown {
    return this.getValue();
  }

  updateInternal(value: unknown): void {
    if (value === undefined) this.clear();
    else this.setValue(value as S);
  }
}

class HeapValueState extends HeapSingleValueState<unknown> {
  private readonly defaultValue: unknown;
  constructor(b: HeapKeyedStateBackend, t: HeapStateTable, d: ValueStateDescriptor<unknown>) {
    super(b, t, d);
    this.defaultValue = d.defaultValue;
  }
  value(): unknown {
    const v = this.getValue();
    return v === undefined ? this.defaultValue : v;
  }
  update(value: unknown): void {
    if (value === undefined) {
      this.clear();
      return;
    }
    this.check(value);
    this.setValue(value);
  }
}

class HeapReducingState extends HeapSingleValueState<unknown> {
  private readonly reduce: (a: unknown, b: unknown) => unknown;
  constructor(b: HeapKeyedStateBackend, t: HeapStateTable, d: ReducingStateDescriptor<unknown>) {
    super(b, t, d);
    this.reduce = d.reduce;
  }
  get(): unknown {
    return this.getValue();
  }
  add(value: unknown): void {
    const current = this.getValue();
    const next = current === undefined ? value : this.reduce(current, value);
    this.check(next);
    this.setValue(next);
  }
}

class HeapAggregatingState extends HeapSingleValueState<unknown> {
  private readonly agg: AggregatingStateDescriptor<unknown, unknown, unknown>['aggregate'];
  constructor(b: HeapKeyedStateBackend, t: HeapStateTable, d: AggregatingStateDescriptor<unknown, unknown, unknown>) {
    super(b, t, d);
    this.agg = d.aggregate;
  }
  get(): unknown {
    const acc = this.getValue();
    return acc === undefined ? undefined : this.agg.getResult(acc);
  }
  add(value: unknown): void {
    const acc = this.getValue();
    const next = this.agg.add(value, acc === undefined ? this.agg.createAccumulator() : acc);
    this.check(next);
    this.setValue(next);
  }
}

class HeapListState extends HeapState<unknown> {
  constructor(b: HeapKeyedStateBackend, t: HeapStateTable, d: ListStateDescriptor<unknown>) {
    super(b, t, d);
  }
  get(): readonly unknown[] {
    const stored = this.raw() as unknown[] | undefined;
    if (stored === undefined) return [];
    if (this.ttl === undefined) return stored;
    const now = this.backend.nowMs();
    const ttl = this.ttl;
    const live = (stored as TtlValue<unknown>[]).filter((e) => ttl.returnExpired || !isExpired(ttl, e, now));
    if (live.length !== stored.length) {
      if (live.length === 0) this.clear();
      else this.setRaw(live);
    }
    if (ttl.refreshOnRead && live.length > 0) this.setRaw(live.map((e) => ({ v: e.v, t: now })));
    return live.map((e) => e.v);
  }
  private checkElement(value: unknown): void {
    if (value === undefined || value === null) throw new Error(`cannot add ${value} to list state '${this.table.name}'`);
    this.check(value);
  }
  add(value: unknown): void {
    this.checkElement(value);
    this.append([value]);
  }
  /** All or nothing: a bad element leaves the list as it was. */
  addAll(values: readonly unknown[]): void {
    for (const v of values) this.checkElement(v);
    this.append(values);
  }
  private append(values: readonly unknown[]): void {
    if (values.length === 0) return;
    const elements = this.ttl === undefined ? values : values.map((v) => this.wrap(v));
    const stored = this.raw() as unknown[] | undefined;
    if (stored === undefined) this.setRaw([...elements]);
    else {
      for (const e of elements) stored.push(e);
      this.markChanged();
    }
  }
  getInternal(): unknown {
    const values = this.get();
    return values.length === 0 ? undefined : values;
  }
  updateInternal(value: unknown): void {
    this.update((value as unknown[] | undefined) ?? []);
  }
  /** All or nothing: a bad element leaves the list as it was. */
  update(values: readonly unknown[]): void {
    for (const v of values) this.checkElement(v);
    const copy = [...values];
    this.clear();
    this.append(copy);
  }
}

class HeapMapState extends HeapState<unknown> {
  private readonly keySerializer: TypeSerializer<unknown>;
  constructor(b: HeapKeyedStateBackend, t: HeapStateTable, d: MapStateDescriptor<unknown, unknown>) {
    super(b, t, d);
    this.keySerializer = serializerOr(d.keySerializer);
  }
  private map(create: boolean): Map<unknown, unknown> | undefined {
    let m = this.raw() as Map<unknown, unknown> | undefined;
    if (m === undefined && create) {
      m = new Map();
      this.setRaw(m);
    }
    return m;
  }
  private live(m: Map<unknown, unknown>, k: unknown, stored: unknown): unknown {
    if (this.ttl === undefined) return stored;
    return this.unwrap(
      stored as TtlValue<unknown> | undefined,
      (w) => {
        m.set(k, w);
        this.markChanged();
      },
      () => {
        m.delete(k);
        this.markChanged();
        if (m.size === 0 && this.raw() === m) this.clear();
      },
    );
  }
  get(key: unknown): unknown {
    const m = this.map(false);
    if (m === undefined) return undefined;
    return this.live(m, key, m.get(key));
  }
  put(key: unknown, value: unknown): void {
    this.check(key, this.keySerializer, ' (map key)');
    this.check(value);
    this.map(true)!.set(key, this.ttl === undefined ? value : this.wrap(value));
    this.markChanged();
  }
  putAll(entries: Iterable<readonly [unknown, unknown]>): void {
    for (const [k, v] of entries) this.put(k, v);
  }
  remove(key: unknown): void {
    const m = this.map(false);
    if (m === undefined) return;
    m.delete(key);
    this.markChanged();
    if (m.size === 0) this.clear();
  }
  contains(key: unknown): boolean {
    return this.get(key) !== undefined;
  }
  *entries(): IterableIterator<[unknown, unknown]> {
    const m = this.map(false);
    if (m === undefined) return;
    for (const [k, stored] of [...m]) {
      const v = this.live(m, k, stored);
      if (v !== undefined) yield [k, v];
    }
  }
  *keys(): IterableIterator<unknown> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): IterableIterator<unknown> {
    for (const [, v] of this.entries()) yield v;
  }
  isEmpty(): boolean {
    return this.entries().next().done === true;
  }
  getInternal(): unknown {
    const m = this.map(false);
    return m === undefined ? undefined : new Map(this.entries());
  }
  updateInternal(value: unknown): void {
    this.clear();
    if (value !== undefined) this.putAll(value as Map<unknown, unknown>);
  }
}
