import { objectMapKeyProblem } from './map-key.js';
import type {
  AggregatingStateDescriptor,
  KeyedStateDescriptor,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  StateTtlConfig,
  ValueStateDescriptor,
} from '../../api/state-descriptors.js';
import type { KeyType } from './key-group.js';
import type { InternalState } from './keyed-state-backend.js';
import { serializerOr, type TypeSerializer } from './serializer.js';
import { isExpired, resolveTtl, type ResolvedTtl, type TtlValue } from './ttl.js';

/**
 * Reducing, aggregating and list state as operators of the runtime use them: `add` says
 * whether the state had no value before (the first element of a window, say), which the
 * public `add` (returning void) keeps to itself.
 */
export interface AddingInternalState {
  add(value: unknown): boolean;
}

/** What a state handle reads from its backend on every access. */
export interface KeyContext {
  readonly currentKey: KeyType;
  /** Where the current key's entries are in the backend's table (its key group, or its index in the range); -1: no current key. */
  readonly currentSlot: number;
  nowMs(): number;
}

/**
 * The entries of one keyed state in a backend: by slot (see KeyContext), key and namespace.
 * The heap backend's table holds objects; the lmdb backend's is its write-back cache.
 */
export interface StateTable {
  readonly name: string;
  get(slot: number, key: KeyType, namespace: number): unknown;
  put(slot: number, key: KeyType, namespace: number, value: unknown): void;
  remove(slot: number, key: KeyType, namespace: number): void;
}

/**
 * The state handles of every keyed state backend (value, list, map, reducing, aggregating, with
 * TTL as Flink's TTL decorator): one implementation over `StateTable`, so the backends differ
 * only in where entries live (the conformance suite runs them all). An object changed in place
 * (a list appended to, a map) is written back with `put`, which is how a backend learns of the
 * change (the lmdb cache marks it dirty, an incremental snapshot marks the key changed).
 */
export function createStateHandle(ctx: KeyContext, table: StateTable, d: KeyedStateDescriptor): InternalState {
  switch (d.kind) {
    case 'value':
      return new ValueStateHandle(ctx, table, d);
    case 'list':
      return new ListStateHandle(ctx, table, d);
    case 'map':
      return new MapStateHandle(ctx, table, d);
    case 'reducing':
      return new ReducingStateHandle(ctx, table, d);
    case 'aggregating':
      return new AggregatingStateHandle(ctx, table, d);
  }
}

abstract class KeyedStateHandle<S> {
  protected namespace = 0;
  protected readonly ttl: ResolvedTtl | undefined;
  protected readonly serializer: TypeSerializer<S>;

  constructor(
    protected readonly ctx: KeyContext,
    protected readonly table: StateTable,
    descriptor: { name: string; serializer?: TypeSerializer<S> | undefined; ttl?: StateTtlConfig | undefined },
  ) {
    this.ttl = resolveTtl(descriptor.ttl);
    this.serializer = serializerOr(descriptor.serializer);
  }

  setCurrentNamespace(namespace: number): void {
    this.namespace = namespace;
  }

  private slot(): number {
    const slot = this.ctx.currentSlot;
    if (slot < 0) throw new Error(`state '${this.table.name}' accessed outside a keyed context (no current key)`);
    return slot;
  }

  protected raw(): unknown {
    return this.table.get(this.slot(), this.ctx.currentKey, this.namespace);
  }

  protected setRaw(value: unknown): void {
    this.table.put(this.slot(), this.ctx.currentKey, this.namespace, value);
  }

  clear(): void {
    this.table.remove(this.slot(), this.ctx.currentKey, this.namespace);
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
    const now = this.ctx.nowMs();
    if (isExpired(ttl, stored, now)) {
      drop();
      return ttl.returnExpired ? stored.v : undefined;
    }
    if (ttl.refreshOnRead) rewrap({ v: stored.v, t: now });
    return stored.v;
  }

  protected wrap<T>(v: T): TtlValue<T> {
    return { v, t: this.ctx.nowMs() };
  }
}

abstract class SingleValueStateHandle<S> extends KeyedStateHandle<S> {
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

class ValueStateHandle extends SingleValueStateHandle<unknown> {
  private readonly defaultValue: unknown;
  constructor(ctx: KeyContext, t: StateTable, d: ValueStateDescriptor<unknown>) {
    super(ctx, t, d);
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

class ReducingStateHandle extends SingleValueStateHandle<unknown> {
  private readonly reduce: (a: unknown, b: unknown) => unknown;
  constructor(ctx: KeyContext, t: StateTable, d: ReducingStateDescriptor<unknown>) {
    super(ctx, t, d);
    this.reduce = d.reduce;
  }
  get(): unknown {
    return this.getValue();
  }
  /** True when the state had no value before (see AddingInternalState). */
  add(value: unknown): boolean {
    const current = this.getValue();
    const next = current === undefined ? value : this.reduce(current, value);
    this.check(next);
    this.setValue(next);
    return current === undefined;
  }
}

class AggregatingStateHandle extends SingleValueStateHandle<unknown> {
  private readonly agg: AggregatingStateDescriptor<unknown, unknown, unknown>['aggregate'];
  constructor(ctx: KeyContext, t: StateTable, d: AggregatingStateDescriptor<unknown, unknown, unknown>) {
    super(ctx, t, d);
    this.agg = d.aggregate;
  }
  get(): unknown {
    const acc = this.getValue();
    return acc === undefined ? undefined : this.agg.getResult(acc);
  }
  /** True when the state had no value before (see AddingInternalState). */
  add(value: unknown): boolean {
    const acc = this.getValue();
    const next = this.agg.add(value, acc === undefined ? this.agg.createAccumulator() : acc);
    this.check(next);
    this.setValue(next);
    return acc === undefined;
  }
}

class ListStateHandle extends KeyedStateHandle<unknown> {
  constructor(ctx: KeyContext, t: StateTable, d: ListStateDescriptor<unknown>) {
    super(ctx, t, d);
  }
  get(): readonly unknown[] {
    const stored = this.raw() as unknown[] | undefined;
    if (stored === undefined) return [];
    if (this.ttl === undefined) return stored;
    const now = this.ctx.nowMs();
    const ttl = this.ttl;
    const elements = stored as TtlValue<unknown>[];
    const live = elements.filter((e) => !isExpired(ttl, e, now));
    // Expired elements leave the list at this read; with ReturnExpiredIfNotCleanedUp they are
    // returned by it, once (Flink's TtlListState: only unexpired ones are written back with a
    // new timestamp, and a list of expired ones only is cleared by the read that returns it).
    if (live.length === 0) this.clear();
    else if (ttl.refreshOnRead) this.setRaw(live.map((e) => ({ v: e.v, t: now })));
    else if (live.length !== elements.length) this.setRaw(live);
    return (ttl.returnExpired ? elements : live).map((e) => e.v);
  }
  private checkElement(value: unknown): void {
    if (value === undefined || value === null) throw new Error(`cannot add ${value} to list state '${this.table.name}'`);
    this.check(value);
  }
  /** True when the list was empty before (see AddingInternalState). */
  add(value: unknown): boolean {
    this.checkElement(value);
    return this.append([value]);
  }
  /** All or nothing: a bad element leaves the list as it was. */
  addAll(values: readonly unknown[]): void {
    for (const v of values) this.checkElement(v);
    this.append(values);
  }
  /** True when the list was empty before. */
  private append(values: readonly unknown[]): boolean {
    if (values.length === 0) return false;
    const stored = this.raw() as unknown[] | undefined;
    const elements = this.ttl === undefined ? values : values.map((v) => this.wrap(v));
    if (stored === undefined) {
      this.setRaw([...elements]);
      return true;
    }
    for (const e of elements) stored.push(e);
    this.setRaw(stored);
    return false;
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

/** A map state's entries of one (key, namespace) are stored together, as one Map. */
class MapStateHandle extends KeyedStateHandle<unknown> {
  private readonly keySerializer: TypeSerializer<unknown>;
  constructor(ctx: KeyContext, t: StateTable, d: MapStateDescriptor<unknown, unknown>) {
    super(ctx, t, d);
    this.keySerializer = serializerOr(d.keySerializer);
  }
  private map(): Map<unknown, unknown> | undefined {
    return this.raw() as Map<unknown, unknown> | undefined;
  }
  /** Writes the map back (marks it dirty), or clears the entry when it became empty. */
  private store(m: Map<unknown, unknown>): void {
    if (m.size === 0) this.clear();
    else this.setRaw(m);
  }
  private live(m: Map<unknown, unknown>, k: unknown, stored: unknown): unknown {
    if (this.ttl === undefined) return stored;
    return this.unwrap(
      stored as TtlValue<unknown> | undefined,
      (w) => {
        m.set(k, w);
        this.setRaw(m);
      },
      () => {
        m.delete(k);
        if (this.raw() === m) this.store(m);
      },
    );
  }
  get(key: unknown): unknown {
    const m = this.map();
    if (m === undefined) return undefined;
    return this.live(m, key, m.get(key));
  }
  put(key: unknown, value: unknown): void {
    this.check(key, this.keySerializer, ' (map key)');
    if (typeof key === 'object' && key !== null) throw new Error(`cannot write to state '${this.table.name}' (map key): ${objectMapKeyProblem(key)}`);
    this.check(value);
    const m = this.map() ?? new Map<unknown, unknown>();
    m.set(key, this.ttl === undefined ? value : this.wrap(value));
    this.setRaw(m);
  }
  putAll(entries: Iterable<readonly [unknown, unknown]>): void {
    for (const [k, v] of entries) this.put(k, v);
  }
  remove(key: unknown): void {
    const m = this.map();
    if (m === undefined || !m.delete(key)) return;
    this.store(m);
  }
  contains(key: unknown): boolean {
    return this.get(key) !== undefined;
  }
  *entries(): IterableIterator<[unknown, unknown]> {
    const m = this.map();
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
    const m = this.map();
    return m === undefined ? undefined : new Map(this.entries());
  }
  updateInternal(value: unknown): void {
    this.clear();
    if (value !== undefined) this.putAll(value as Map<unknown, unknown>);
  }
}
