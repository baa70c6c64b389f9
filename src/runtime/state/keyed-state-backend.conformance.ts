/**
 * The one test suite every keyed state backend passes (STYLE.md #10): every state kind,
 * namespaces, TTL, declared serializers, snapshot-at-the-synchronous-point, restore at
 * another parallelism (1 -> 3 -> 2 with exact key ownership), timers with their key groups,
 * and switching backends through snapshots. Run by one test file per backend configuration.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  aggregatingState,
  listState,
  mapState,
  reducingState,
  valueState,
  type AggregateFunction,
  type AggregatingState,
  type ListState,
  type MapState,
  type ReducingState,
  type StateTtlConfig,
  type ValueState,
} from '../../api/state-descriptors.js';
import { assignToKeyGroup, keyGroupRangeContains, keyGroupRangeForOperator, type KeyGroupRange, type KeyType } from './key-group.js';
import type { KeyedStateBackend, NamespacedState, SnapshotRequest } from './keyed-state-backend.js';
import { decodeKeyedStateSnapshot, encodeKeyedStateSnapshot, snapshotBytes, type KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { resolveDeltas } from './keyed-state-delta.js';
import { isKeyedStateFile } from './keyed-state-file.js';
import { readKeyedState, writeKeyedState } from '../checkpoint/state-persistence.js';
import { FilesystemCheckpointStorage } from '../storage/filesystem-checkpoint-storage.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TypeSerializer } from './serializer.js';

export type BackendFactory = (range: KeyGroupRange, maxParallelism: number, nowMs: () => number) => KeyedStateBackend;

export interface BackendUnderTest {
  readonly name: string;
  readonly create: BackendFactory;
}

const MAXP = 128;

type Ns = { setCurrentNamespace(n: number): void };

const sumAgg: AggregateFunction<number, { sum: number; n: number }, number> = {
  createAccumulator: () => ({ sum: 0, n: 0 }),
  add: (v, acc) => ({ sum: acc.sum + v, n: acc.n + 1 }),
  getResult: (acc) => acc.sum / acc.n,
  merge: (a, b) => ({ sum: a.sum + b.sum, n: a.n + b.n }),
};

/** A declared serializer: values become JSON bytes (so the stored form is not the value). */
class JsonSerializer<T> implements TypeSerializer<T> {
  readonly id = 'json-test';
  encode(value: T): Uint8Array {
    return Buffer.from(JSON.stringify(value));
  }
  decode(bytes: Uint8Array): T {
    return JSON.parse(Buffer.from(bytes).toString()) as T;
  }
  check(value: T): void {
    if (typeof value === 'function') throw new Error('a function');
  }
}

/** Deterministic pseudo-random numbers (mulberry32): a failure is replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const roundTrip = (s: KeyedStateSnapshot): KeyedStateSnapshot => decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(s));

/** The fixture of the snapshot and rescale tests: four states over 500 keys of three key types. */
const counts = valueState<number>('count');
const items = listState<string>('items');
const attrs = mapState<string, number>('attrs');
const sums = reducingState<number>('sum', (a, b) => a + b);
const fixtureKeys: KeyType[] = Array.from({ length: 500 }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? `k${i}` : BigInt(i)));

function fixtureHandles(b: KeyedStateBackend) {
  return {
    count: b.getOrCreateState(counts, false) as unknown as ValueState<number>,
    items: b.getOrCreateState(items, false) as unknown as ListState<string>,
    attrs: b.getOrCreateState(attrs, false) as unknown as MapState<string, number>,
    sum: b.getOrCreateState(sums, true) as unknown as ReducingState<number> & Ns,
  };
}

function ownerOf(bs: readonly KeyedStateBackend[], k: KeyType): KeyedStateBackend {
  const owners = bs.filter((x) => keyGroupRangeContains(x.keyGroupRange, assignToKeyGroup(k, MAXP)));
  expect(owners).toHaveLength(1);
  return owners[0]!;
}

function fillFixture(bs: readonly KeyedStateBackend[]): void {
  for (const k of fixtureKeys) {
    const b = ownerOf(bs, k);
    const h = fixtureHandles(b);
    b.setCurrentKey(k);
    h.count.update(Number(k.toString().replace('k', '')));
    h.items.add(`a${k}`);
    h.items.add(`b${k}`);
    h.attrs.put('x', 1);
    h.sum.setCurrentNamespace(10);
    h.sum.add(2);
    h.sum.setCurrentNamespace(20);
    h.sum.add(3);
  }
}

function checkFixture(bs: readonly KeyedStateBackend[]): void {
  let seen = 0;
  for (const b of bs) {
    fixtureHandles(b); // restored states are registered first (the heap backend counts registered ones)
    seen += b.numEntries('count');
  }
  expect(seen).toBe(fixtureKeys.length);
  for (const k of fixtureKeys) {
    const b = ownerOf(bs, k);
    const h = fixtureHandles(b);
    b.setCurrentKey(k);
    expect(h.count.value()).toBe(Number(k.toString().replace('k', '')));
    expect(h.items.get()).toEqual([`a${k}`, `b${k}`]);
    expect(h.attrs.get('x')).toBe(1);
    h.sum.setCurrentNamespace(10);
    expect(h.sum.get()).toBe(2);
    h.sum.setCurrentNamespace(20);
    expect(h.sum.get()).toBe(3);
  }
}

async function snapshotAll(bs: readonly KeyedStateBackend[]): Promise<KeyedStateSnapshot[]> {
  const finishers = bs.map((b) => (b instanceof ChainedSnapshots ? () => b.snapshotChain() : b.snapshot()));
  return Promise.all(finishers.map(async (f) => roundTrip(await f())));
}

/**
 * How the suite's snapshots are taken: `full`; or as a chain folded the way a restore folds
 * it: an empty full snapshot before the first write (or right after a restore), then a delta
 * of an incremental checkpoint, or a changelog segment, holding everything since; or
 * `written`: full snapshots held where the backend assembles them (`hold`: the snapshot
 * thread, a spill file) and written as keyed state files to filesystem checkpoint storage,
 * then read back from there (a delta of the suite's own incremental requests stays on the heap).
 */
export type SnapshotMode = 'full' | 'incremental' | 'changelog' | 'written';

/** Passes every call to the backend it wraps. */
class ForwardingBackend implements KeyedStateBackend {
  constructor(protected readonly inner: KeyedStateBackend) {}

  get keyGroupRange(): KeyGroupRange {
    return this.inner.keyGroupRange;
  }
  get maxParallelism(): number {
    return this.inner.maxParallelism;
  }
  setCurrentKey(key: KeyType): void {
    this.inner.setCurrentKey(key);
  }
  setCurrentKeyInGroup(key: KeyType, keyGroup: number): void {
    this.inner.setCurrentKeyInGroup(key, keyGroup);
  }
  getCurrentKey(): KeyType {
    return this.inner.getCurrentKey();
  }
  getCurrentKeyGroup(): number {
    return this.inner.getCurrentKeyGroup();
  }
  getOrCreateState(descriptor: Parameters<KeyedStateBackend['getOrCreateState']>[0], namespaced: boolean): ReturnType<KeyedStateBackend['getOrCreateState']> {
    return this.inner.getOrCreateState(descriptor, namespaced);
  }
  timerQueue(domain: 0 | 1): ReturnType<KeyedStateBackend['timerQueue']> {
    return this.inner.timerQueue(domain);
  }
  snapshot(request?: SnapshotRequest): () => Promise<KeyedStateSnapshot> {
    return this.inner.snapshot(request);
  }
  notifyCheckpointComplete(checkpointId: number): void {
    this.inner.notifyCheckpointComplete(checkpointId);
  }
  notifyCheckpointAborted(checkpointId: number): void {
    this.inner.notifyCheckpointAborted(checkpointId);
  }
  restore(snapshots: readonly KeyedStateSnapshot[]): void {
    this.inner.restore(snapshots);
  }
  keys(stateName: string, namespace: number): KeyType[] {
    return this.inner.keys(stateName, namespace);
  }
  numEntries(stateName: string): number {
    return this.inner.numEntries(stateName);
  }
  hasState(stateName: string): boolean {
    return this.inner.hasState(stateName);
  }
  stateNames(): string[] {
    return this.inner.stateNames();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

/** A backend whose suite snapshots go through chains of `mode`. */
class ChainedSnapshots extends ForwardingBackend {
  private chain: Promise<KeyedStateSnapshot>[] = [];
  private position = 0;

  constructor(
    inner: KeyedStateBackend,
    private readonly mode: 'incremental' | 'changelog',
  ) {
    super(inner);
  }

  private request(): SnapshotRequest {
    const checkpointId = ++this.position;
    return this.mode === 'incremental' ? { checkpointId, incremental: true } : { checkpointId, incremental: false, changelog: 'segment' };
  }

  /** The empty base, taken before the first write. */
  private start(): void {
    if (this.chain.length > 0) return;
    const base = this.inner.snapshot(this.request())().then(roundTrip);
    base.catch(() => {}); // a test that never snapshots disposes the backend before this ends
    this.chain.push(base);
  }

  /** The chain so far plus a delta with what changed since, folded. */
  async snapshotChain(): Promise<KeyedStateSnapshot> {
    this.start();
    const before = await Promise.all(this.chain);
    // An incremental delta builds on a completed checkpoint.
    if (this.mode === 'incremental') this.inner.notifyCheckpointComplete(this.position);
    const delta = roundTrip(await this.inner.snapshot(this.request())());
    if (delta.baseCheckpointId === undefined) throw new Error(`expected a ${this.mode} delta, got a full snapshot`);
    this.chain.push(Promise.resolve(delta));
    const folded = resolveDeltas([...before, delta]);
    if (folded.length !== 1) throw new Error(`a chain folds into one snapshot, got ${folded.length}`);
    return folded[0]!;
  }

  override setCurrentKey(key: KeyType): void {
    this.start();
    super.setCurrentKey(key);
  }
  override setCurrentKeyInGroup(key: KeyType, keyGroup: number): void {
    this.start();
    super.setCurrentKeyInGroup(key, keyGroup);
  }
  override getOrCreateState(descriptor: Parameters<KeyedStateBackend['getOrCreateState']>[0], namespaced: boolean): ReturnType<KeyedStateBackend['getOrCreateState']> {
    this.start();
    return super.getOrCreateState(descriptor, namespaced);
  }
  override timerQueue(domain: 0 | 1): ReturnType<KeyedStateBackend['timerQueue']> {
    this.start();
    return super.timerQueue(domain);
  }
  override restore(snapshots: readonly KeyedStateSnapshot[]): void {
    super.restore(snapshots);
    this.start();
  }
}

/** A backend whose full snapshots are held where assembled, then written to and read back from filesystem checkpoint storage. */
class WrittenSnapshots extends ForwardingBackend {
  private dir: string | undefined;
  private storage: Promise<FilesystemCheckpointStorage> | undefined;
  private checkpointId = 0;

  /** Opened at the first snapshot written (most tests never write one). */
  private openStorage(): Promise<FilesystemCheckpointStorage> {
    this.dir ??= mkdtempSync(join(tmpdir(), 'sluice-conformance-written-'));
    this.storage ??= FilesystemCheckpointStorage.open({ checkpointsDir: this.dir, jobId: 'a'.repeat(32), dataInlineThresholdBytes: 0 });
    return this.storage;
  }

  override snapshot(request?: SnapshotRequest): () => Promise<KeyedStateSnapshot> {
    const finish = this.inner.snapshot({ ...(request ?? { checkpointId: 0, incremental: false }), hold: true });
    return async () => {
      const s = await finish();
      if (!isKeyedStateFile(s)) return s;
      const storage = await this.openStorage();
      const checkpointId = ++this.checkpointId;
      const location = await storage.createCheckpointLocation(checkpointId);
      const handle = await writeKeyedState(s, location);
      expect(handle.data.kind, 'a full snapshot held outside the heap is written as a file').toBe('file');
      const read = await readKeyedState(handle, s.keyGroupRange, s.maxParallelism, storage, { pointer: storage.checkpointDir(checkpointId), checkpointId });
      await storage.abortCheckpoint(checkpointId);
      return read ?? { formatVersion: 1, maxParallelism: s.maxParallelism, keyGroupRange: s.keyGroupRange, states: [], timers: new Map() };
    };
  }

  override dispose(): void {
    super.dispose();
    const dir = this.dir;
    // After the storage is open (the directory is not removed under it).
    if (dir !== undefined) void this.storage?.finally(() => rmSync(dir, { recursive: true, force: true })).catch(() => undefined);
  }
}

/** Runs the suite against one backend; `others` are backends it must switch to and from through snapshots. */
export function describeKeyedStateBackend(subject: BackendUnderTest, others: readonly BackendUnderTest[] = [], mode: SnapshotMode = 'full'): void {
  const created: KeyedStateBackend[] = [];
  const label = mode === 'full' ? subject.name : `${subject.name}, ${mode} snapshots`;
  afterEach(() => {
    for (const b of created.splice(0)) b.dispose();
  });
  const make = (p = 1, i = 0, nowMs: () => number = () => 0, via: BackendUnderTest = subject, maxP = MAXP): KeyedStateBackend => {
    const inner = via.create(keyGroupRangeForOperator(maxP, p, i), maxP, nowMs);
    const b = mode === 'full' ? inner : mode === 'written' ? new WrittenSnapshots(inner) : new ChainedSnapshots(inner, mode);
    created.push(b);
    return b;
  };
  const withClock = () => {
    const clock = { now: 0 };
    return { backend: make(1, 0, () => clock.now), clock };
  };
  const restoreAt = (p: number, snaps: KeyedStateSnapshot[], via: BackendUnderTest = subject): KeyedStateBackend[] =>
    Array.from({ length: p }, (_, i) => {
      const b = make(p, i, () => 0, via);
      b.restore(snaps);
      return b;
    });

  describe(`${label} keyed state backend (conformance): state kinds`, () => {
    it('value state: default value, update, clear, update(undefined), keys of every type', () => {
      const b = make();
      const s = b.getOrCreateState(valueState<number>('v', { defaultValue: -1 }), false) as unknown as ValueState<number>;
      const keys: KeyType[] = ['a', 'b', 0, 1, -1, 2.5, 10n, true, false, '', 2 ** 40, -(2 ** 40), 2n ** 70n];
      for (const k of keys) {
        b.setCurrentKey(k);
        expect(s.value()).toBe(-1);
      }
      keys.forEach((k, i) => {
        b.setCurrentKey(k);
        s.update(i * 10);
      });
      keys.forEach((k, i) => {
        b.setCurrentKey(k);
        expect(s.value()).toBe(i * 10);
      });
      b.setCurrentKey('a');
      s.clear();
      expect(s.value()).toBe(-1);
      b.setCurrentKey('b');
      s.update(undefined as unknown as number);
      expect(s.value()).toBe(-1);
      b.setCurrentKey('1'); // the string '1' and the number 1 are different keys
      expect(s.value()).toBe(-1);
      b.setCurrentKey(1);
      expect(s.value()).toBe(30);
      b.setCurrentKey(10); // the number 10 and the bigint 10n are different keys
      expect(s.value()).toBe(-1);
      b.setCurrentKey(-0); // -0 and 0 are one key
      expect(s.value()).toBe(20);
      expect(b.numEntries('v')).toBe(keys.length - 2);
    });

    it('keys(): the keys with an entry, per namespace, after writes and removals, through a restore at another parallelism; writing while going through them is safe', async () => {
      const b = make();
      const v = b.getOrCreateState(valueState<number>('kv'), false) as unknown as ValueState<number>;
      const n = b.getOrCreateState(valueState<number>('kn'), true) as unknown as ValueState<number> & NamespacedState;
      const keys: KeyType[] = ['a', 'b', 0, 7, 2.5, 10n, 'zz'];
      for (const k of keys) {
        b.setCurrentKey(k);
        v.update(1);
        n.setCurrentNamespace(typeof k === 'string' ? 1 : 2);
        n.update(1);
      }
      b.setCurrentKey('b');
      v.clear();
      const sortKeys = (ks: KeyType[]): string[] => ks.map((k) => `${typeof k}:${String(k)}`).sort();
      expect(sortKeys(b.keys('kv', 0))).toEqual(sortKeys(keys.filter((k) => k !== 'b')));
      expect(sortKeys(b.keys('kn', 1))).toEqual(sortKeys(['a', 'b', 'zz']));
      expect(sortKeys(b.keys('kn', 2))).toEqual(sortKeys([0, 7, 2.5, 10n]));
      expect(b.keys('kn', 3)).toEqual([]);
      expect(b.keys('unknown', 0)).toEqual([]);
      // Writes (and removals) while going through the keys: each key taken once.
      let seen = 0;
      for (const k of b.keys('kv', 0)) {
        b.setCurrentKey(k);
        seen++;
        if (k === 'a') v.clear();
        else v.update(v.value()! + 1);
        b.setCurrentKey(`new-${String(k)}`);
        v.update(0);
      }
      expect(seen).toBe(keys.length - 1);
      expect(b.keys('kv', 0).length).toBe(2 * (keys.length - 1) - 1);
      const snap = await b.snapshot()();
      const restored = restoreAt(3, [snap]);
      const all: KeyType[] = [];
      for (const r of restored) {
        r.getOrCreateState(valueState<number>('kv'), false);
        all.push(...r.keys('kv', 0));
      }
      expect(sortKeys(all)).toEqual(sortKeys(b.keys('kv', 0)));
    });

    it('values of every msgpack type come back equal', () => {
      const b = make();
      const s = b.getOrCreateState(valueState<unknown>('v'), false) as unknown as ValueState<unknown>;
      const values: unknown[] = [
        { a: 1, b: [1, 2, { c: 'x' }], d: null },
        new Map<unknown, unknown>([
          ['k', 1],
          [2, 'two'],
        ]),
        new Set([1, 'a']),
        new Date(1700000000000),
        12345678901234567890n,
        Number.MAX_SAFE_INTEGER,
        -1.25,
        'üñï©ødé',
        new Uint8Array([1, 2, 3]),
      ];
      values.forEach((v, i) => {
        b.setCurrentKey(i);
        s.update(v);
      });
      values.forEach((v, i) => {
        b.setCurrentKey(i);
        expect(s.value()).toEqual(v);
      });
    });

    it('list state: add, addAll, update, get, clear, per key; all or nothing', () => {
      const b = make();
      const s = b.getOrCreateState(listState<number>('l'), false) as unknown as ListState<number>;
      const ref = new Map<string, number[]>();
      for (let i = 0; i < 200; i++) {
        const k = `k${(i * 7) % 13}`;
        b.setCurrentKey(k);
        if (i % 17 === 0) {
          s.update([i, i + 1]);
          ref.set(k, [i, i + 1]);
        } else if (i % 11 === 0) {
          s.addAll([i, -i]);
          ref.set(k, [...(ref.get(k) ?? []), i, -i]);
        } else if (i % 23 === 0) {
          s.clear();
          ref.delete(k);
        } else {
          s.add(i);
          ref.set(k, [...(ref.get(k) ?? []), i]);
        }
      }
      for (let j = 0; j < 13; j++) {
        b.setCurrentKey(`k${j}`);
        expect([...s.get()]).toEqual(ref.get(`k${j}`) ?? []);
      }
      b.setCurrentKey('k1');
      const before = [...s.get()];
      expect(() => s.addAll([1, null as unknown as number])).toThrow(/list state 'l'/);
      expect([...s.get()]).toEqual(before);
      s.update(s.get()); // aliasing: update with the list just read
      expect([...s.get()]).toEqual(before);
      b.setCurrentKey('nobody');
      expect([...s.get()]).toEqual([]);
      s.update([]);
      expect([...s.get()]).toEqual([]);
      expect(b.numEntries('l')).toBe([...ref.keys()].length);
    });

    it('map state: put, get, contains, remove, entries, keys, values, isEmpty, putAll, clear', () => {
      const b = make();
      const s = b.getOrCreateState(mapState<unknown, number>('m'), false) as unknown as MapState<unknown, number>;
      b.setCurrentKey(1);
      expect(s.isEmpty()).toBe(true);
      s.put('a', 1);
      s.putAll([
        ['b', 2],
        [3, 3],
        [4n, 4],
      ]);
      s.put('a', 10);
      expect(s.get('a')).toBe(10);
      expect(s.get(3)).toBe(3);
      expect(s.get('3')).toBeUndefined();
      expect(s.get(4n)).toBe(4);
      expect(s.contains('b')).toBe(true);
      expect(s.contains('z')).toBe(false);
      expect(new Map(s.entries())).toEqual(
        new Map<unknown, number>([
          ['a', 10],
          ['b', 2],
          [3, 3],
          [4n, 4],
        ]),
      );
      expect(new Set(s.keys())).toEqual(new Set(['a', 'b', 3, 4n]));
      expect([...s.values()].sort((x, y) => x - y)).toEqual([2, 3, 4, 10]);
      s.remove('b');
      s.remove('never there');
      expect(s.contains('b')).toBe(false);
      b.setCurrentKey(2);
      expect(s.isEmpty()).toBe(true);
      s.put('a', 99);
      b.setCurrentKey(1);
      expect(s.get('a')).toBe(10);
      s.clear();
      expect(s.isEmpty()).toBe(true);
      b.setCurrentKey(2);
      expect(s.get('a')).toBe(99);
      s.remove('a'); // the last entry: the key has no map any more
      expect(b.numEntries('m')).toBe(0);
    });

    it('reducing and aggregating state', () => {
      const b = make();
      const r = b.getOrCreateState(reducingState<number>('r', (x, y) => Math.max(x, y)), false) as unknown as ReducingState<number>;
      const a = b.getOrCreateState(aggregatingState('a', sumAgg), false) as unknown as AggregatingState<number, number>;
      const refMax = new Map<number, number>();
      const refSum = new Map<number, [number, number]>();
      for (let i = 0; i < 300; i++) {
        const k = (i * 31) % 7;
        const v = (i * 7919) % 101;
        b.setCurrentKey(k);
        r.add(v);
        a.add(v);
        refMax.set(k, Math.max(refMax.get(k) ?? -Infinity, v));
        const [sum, n] = refSum.get(k) ?? [0, 0];
        refSum.set(k, [sum + v, n + 1]);
      }
      for (let k = 0; k < 7; k++) {
        b.setCurrentKey(k);
        expect(r.get()).toBe(refMax.get(k));
        const [sum, n] = refSum.get(k)!;
        expect(a.get()).toBeCloseTo(sum / n, 10);
      }
      b.setCurrentKey(100);
      expect(r.get()).toBeUndefined();
      expect(a.get()).toBeUndefined();
      b.setCurrentKey(3);
      r.clear();
      a.clear();
      expect(r.get()).toBeUndefined();
      expect(a.get()).toBeUndefined();
    });

    it('the same name with another kind is rejected; the same name and kind gives the same handle', () => {
      const b = make();
      const h1 = b.getOrCreateState(valueState<number>('x'), false);
      expect(b.getOrCreateState(valueState<number>('x'), false)).toBe(h1);
      expect(() => b.getOrCreateState(listState<number>('x'), false)).toThrow(/'x'.*value.*list/);
    });

    it('namespaces isolate entries of one key; getInternal / updateInternal move whole entries (window merging)', () => {
      const b = make();
      const s = b.getOrCreateState(listState<number>('ns'), true);
      const list = s as unknown as ListState<number>;
      b.setCurrentKey('k');
      for (let ns = 0; ns < 5; ns++) {
        s.setCurrentNamespace(ns * 1000);
        for (let i = 0; i <= ns; i++) list.add(ns * 10 + i);
      }
      for (let ns = 0; ns < 5; ns++) {
        s.setCurrentNamespace(ns * 1000);
        expect([...list.get()]).toEqual(Array.from({ length: ns + 1 }, (_, i) => ns * 10 + i));
      }
      expect(b.numEntries('ns')).toBe(5);
      s.setCurrentNamespace(2000);
      list.clear();
      expect(b.numEntries('ns')).toBe(4);
      // merge namespace 3000 into 4000
      s.setCurrentNamespace(3000);
      const moved = s.getInternal() as number[];
      s.updateInternal(undefined);
      s.setCurrentNamespace(4000);
      s.updateInternal([...(s.getInternal() as number[]), ...moved]);
      expect([...list.get()]).toEqual([40, 41, 42, 43, 44, 30, 31, 32, 33]);
      s.setCurrentNamespace(3000);
      expect([...list.get()]).toEqual([]);
      const m = b.getOrCreateState(mapState<string, number>('nm'), true);
      m.setCurrentNamespace(-5);
      (m as unknown as MapState<string, number>).put('a', 1);
      m.setCurrentNamespace(1.5e12);
      expect(m.getInternal()).toBeUndefined();
      m.updateInternal(new Map([['b', 2]]));
      expect([...(m as unknown as MapState<string, number>).entries()]).toEqual([['b', 2]]);
      m.setCurrentNamespace(-5);
      expect(m.getInternal()).toEqual(new Map([['a', 1]]));
      b.setCurrentKey('other');
      expect([...list.get()]).toEqual([]);
    });

    it('state without a current key is an error naming the state; a key outside the range is refused', () => {
      const b = make(2, 0);
      const v = b.getOrCreateState(valueState<number>('noKey'), false) as unknown as ValueState<number>;
      expect(() => v.value()).toThrow(/'noKey'.*keyed context/);
      expect(() => v.update(1)).toThrow(/'noKey'.*keyed context/);
      let outside = 0;
      while (keyGroupRangeContains(b.keyGroupRange, assignToKeyGroup(outside, MAXP))) outside++;
      expect(() => b.setCurrentKey(outside)).toThrow(/outside this subtask's range/);
    });

    it('values that cannot be serialized are refused at the write, and the entry is unchanged', () => {
      const b = make();
      const v = b.getOrCreateState(valueState<unknown>('bad'), false) as unknown as ValueState<unknown>;
      b.setCurrentKey('k');
      v.update({ ok: 1 });
      expect(() => v.update({ f: () => 1 })).toThrow(/state 'bad'.*function/);
      class NotPlain {
        constructor(readonly x: number) {}
      }
      expect(() => v.update(new NotPlain(1))).toThrow(/NotPlain/);
      expect(v.value()).toEqual({ ok: 1 });
    });

    it('a declared serializer: values and TTL timestamps survive a snapshot into a fresh backend', async () => {
      const ser = new JsonSerializer<{ n: number }>();
      const b = make();
      const v = b.getOrCreateState(valueState('jv', { serializer: ser }), false) as unknown as ValueState<{ n: number }>;
      const l = b.getOrCreateState(listState('jl', { serializer: ser, ttl: { ttlMs: 1000 } }), false) as unknown as ListState<{ n: number }>;
      const m = b.getOrCreateState(mapState<string, { n: number }>('jm', { serializer: ser }), true) as unknown as MapState<string, { n: number }> & Ns;
      for (let i = 0; i < 50; i++) {
        b.setCurrentKey(i);
        v.update({ n: i });
        l.add({ n: i });
        l.add({ n: -i - 1 });
        m.setCurrentNamespace(i % 3);
        m.put(`x${i}`, { n: i * 2 });
      }
      const [snap] = await snapshotAll([b]);
      const r = restoreAt(1, [snap!])[0]!;
      const rv = r.getOrCreateState(valueState('jv', { serializer: ser }), false) as unknown as ValueState<{ n: number }>;
      const rl = r.getOrCreateState(listState('jl', { serializer: ser, ttl: { ttlMs: 1000 } }), false) as unknown as ListState<{ n: number }>;
      const rm = r.getOrCreateState(mapState<string, { n: number }>('jm', { serializer: ser }), true) as unknown as MapState<string, { n: number }> & Ns;
      for (let i = 0; i < 50; i++) {
        r.setCurrentKey(i);
        expect(rv.value()).toEqual({ n: i });
        expect(rl.get()).toEqual([{ n: i }, { n: -i - 1 }]);
        rm.setCurrentNamespace(i % 3);
        expect(rm.get(`x${i}`)).toEqual({ n: i * 2 });
      }
    });
  });

  describe(`${label} keyed state backend (conformance): TTL`, () => {
    const ttl = (updateType: StateTtlConfig['updateType'], stateVisibility: StateTtlConfig['stateVisibility'] = 'NeverReturnExpired'): StateTtlConfig => ({
      ttlMs: 100,
      updateType,
      stateVisibility,
    });

    it('rejects a TTL <= 0', () => {
      const b = make();
      expect(() => b.getOrCreateState(valueState<number>('t', { ttl: { ttlMs: 0 } }), false)).toThrow(/TTL/);
    });

    it('OnCreateAndWrite: reads do not extend the lifetime, writes do; an expired entry is removed when read', () => {
      const { backend: b, clock } = withClock();
      const s = b.getOrCreateState(valueState<number>('v', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ValueState<number>;
      b.setCurrentKey('k');
      clock.now = 1000;
      s.update(1);
      clock.now = 1099;
      expect(s.value()).toBe(1);
      clock.now = 1100;
      expect(s.value()).toBeUndefined();
      expect(b.numEntries('v')).toBe(0);
      s.update(2);
      clock.now = 1150;
      s.update(3);
      clock.now = 1249;
      expect(s.value()).toBe(3);
      clock.now = 1250;
      expect(s.value()).toBeUndefined();
    });

    it('OnReadAndWrite: each read extends the lifetime', () => {
      const { backend: b, clock } = withClock();
      const s = b.getOrCreateState(valueState<number>('v', { ttl: ttl('OnReadAndWrite') }), false) as unknown as ValueState<number>;
      b.setCurrentKey('k');
      s.update(1);
      for (let t = 90; t <= 900; t += 90) {
        clock.now = t;
        expect(s.value()).toBe(1);
      }
      clock.now = 1000;
      expect(s.value()).toBeUndefined();
    });

    it('ReturnExpiredIfNotCleanedUp returns an expired value once; the default value stands in for an expired one', () => {
      const { backend: b, clock } = withClock();
      const s = b.getOrCreateState(valueState<number>('v', { ttl: ttl('OnCreateAndWrite', 'ReturnExpiredIfNotCleanedUp') }), false) as unknown as ValueState<number>;
      const d = b.getOrCreateState(valueState<number>('d', { defaultValue: 42, ttl: ttl('OnCreateAndWrite') }), false) as unknown as ValueState<number>;
      b.setCurrentKey('k');
      s.update(7);
      d.update(8);
      clock.now = 500;
      expect(s.value()).toBe(7);
      expect(s.value()).toBeUndefined();
      expect(d.value()).toBe(42);
    });

    it('list and map elements expire one by one', () => {
      const { backend: b, clock } = withClock();
      const l = b.getOrCreateState(listState<number>('l', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ListState<number>;
      const m = b.getOrCreateState(mapState<string, number>('m', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as MapState<string, number>;
      b.setCurrentKey('k');
      l.add(1);
      m.put('a', 1);
      clock.now = 60;
      l.add(2);
      m.put('b', 2);
      clock.now = 120;
      expect([...l.get()]).toEqual([2]);
      expect([...m.entries()]).toEqual([['b', 2]]);
      expect(m.get('a')).toBeUndefined();
      clock.now = 200;
      expect([...l.get()]).toEqual([]);
      expect(m.isEmpty()).toBe(true);
      expect(b.numEntries('l')).toBe(0);
      expect(b.numEntries('m')).toBe(0);
    });

    it('TTL timestamps go through a snapshot', async () => {
      const { backend: b, clock } = withClock();
      const s = b.getOrCreateState(valueState<number>('v', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ValueState<number>;
      b.setCurrentKey('k');
      clock.now = 1000;
      s.update(1);
      const [snap] = await snapshotAll([b]);
      const clock2 = { now: 1099 };
      const r = make(1, 0, () => clock2.now);
      r.restore([snap!]);
      const rs = r.getOrCreateState(valueState<number>('v', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ValueState<number>;
      r.setCurrentKey('k');
      expect(rs.value()).toBe(1);
      clock2.now = 1100;
      expect(rs.value()).toBeUndefined();
    });

    it('a state cannot take on or drop a TTL across a restore: a clear error, not misread values', async () => {
      const { backend: b } = withClock();
      const plain = b.getOrCreateState(valueState<number>('plain'), false) as unknown as ValueState<number>;
      const timed = b.getOrCreateState(listState<number>('timed', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ListState<number>;
      b.setCurrentKey('k');
      plain.update(7);
      timed.add(8);
      const [snap] = await snapshotAll([b]);
      const gainsTtl = make();
      gainsTtl.restore([snap!]);
      expect(() => gainsTtl.getOrCreateState(valueState<number>('plain', { ttl: ttl('OnCreateAndWrite') }), false)).toThrow(
        /state 'plain' was checkpointed without a TTL and is now registered with one.*another name/,
      );
      const dropsTtl = make();
      dropsTtl.restore([snap!]);
      expect(() => dropsTtl.getOrCreateState(listState<number>('timed'), false)).toThrow(/state 'timed' was checkpointed with a TTL and is now registered without one.*Keep its ttl option/);
      const same = make();
      same.restore([snap!]);
      const rp = same.getOrCreateState(valueState<number>('plain'), false) as unknown as ValueState<number>;
      const rt = same.getOrCreateState(listState<number>('timed', { ttl: ttl('OnCreateAndWrite') }), false) as unknown as ListState<number>;
      same.setCurrentKey('k');
      expect(rp.value()).toBe(7);
      expect(rt.get()).toEqual([8]);
    });
  });

  describe(`${label} keyed state backend (conformance): snapshots`, () => {
    it('restore at parallelism 1 -> 3 -> 2 keeps every entry with its exact owner; keys keep their types', async () => {
      const one = [make()];
      fillFixture(one);
      const three = restoreAt(3, await snapshotAll(one));
      checkFixture(three);
      const two = restoreAt(2, await snapshotAll(three));
      checkFixture(two);
    });

    it('the snapshot is the state at the synchronous point, whatever changes afterwards (also in place)', async () => {
      const b = make();
      const h = fixtureHandles(b);
      b.setCurrentKey('a');
      h.count.update(1);
      h.items.add('x');
      h.attrs.put('p', 1);
      b.setCurrentKey('gone');
      h.count.update(9);
      const finish = b.snapshot();
      b.setCurrentKey('a');
      h.count.update(2);
      (h.items.get() as string[]).push('mutated in place');
      h.items.add('y');
      h.attrs.put('q', 2);
      b.setCurrentKey('b');
      h.count.update(5);
      b.setCurrentKey('gone');
      h.count.clear();
      const r = restoreAt(1, [roundTrip(await finish())])[0]!;
      const rh = fixtureHandles(r);
      r.setCurrentKey('a');
      expect(rh.count.value()).toBe(1);
      expect(rh.items.get()).toEqual(['x']);
      expect([...rh.attrs.entries()]).toEqual([['p', 1]]);
      r.setCurrentKey('b');
      expect(rh.count.value()).toBeUndefined();
      r.setCurrentKey('gone');
      expect(rh.count.value()).toBe(9);
      // and the live backend has the later changes
      b.setCurrentKey('a');
      expect(h.count.value()).toBe(2);
    });

    it('two snapshots in flight each see their own synchronous point', async () => {
      const b = make();
      const h = fixtureHandles(b);
      b.setCurrentKey('k');
      h.count.update(1);
      const first = b.snapshot();
      h.count.update(2);
      const second = b.snapshot();
      h.count.update(3);
      const [s2, s1] = [await second(), await first()];
      for (const [snap, want] of [
        [s1, 1],
        [s2, 2],
      ] as const) {
        const r = restoreAt(1, [roundTrip(snap)])[0]!;
        r.setCurrentKey('k');
        expect(fixtureHandles(r).count.value()).toBe(want);
      }
    });

    it('timers go with their key groups; the snapshot holds the timers of the synchronous point', async () => {
      const b = make();
      fixtureHandles(b);
      for (const [i, k] of fixtureKeys.entries()) {
        b.timerQueue(0).add(1000 + i, k, 7);
        b.timerQueue(1).add(5000 + i, k, 8);
      }
      const finish = b.snapshot();
      b.timerQueue(0).fireUpTo(1000 + Math.floor(fixtureKeys.length / 2), () => {});
      b.timerQueue(1).add(9999, fixtureKeys[0]!, 1);
      b.timerQueue(1).delete(5000, fixtureKeys[0]!, 8);
      const two = restoreAt(2, [roundTrip(await finish())]);
      for (const domain of [0, 1] as const) {
        const all = two.flatMap((x) => [...x.timerQueue(domain).entries()].map(([t, k, ns]) => ({ x, t, k, ns })));
        expect(all.length).toBe(fixtureKeys.length);
        for (const { x, t, k, ns } of all) {
          expect(keyGroupRangeContains(x.keyGroupRange, assignToKeyGroup(k, MAXP))).toBe(true);
          expect(t).toBe((domain === 0 ? 1000 : 5000) + fixtureKeys.indexOf(k));
          expect(ns).toBe(domain === 0 ? 7 : 8);
        }
      }
    });

    it('restored state not registered yet is carried into the next snapshot unchanged', async () => {
      const b = make();
      fillFixture([b]);
      const r = restoreAt(1, await snapshotAll([b]))[0]!;
      expect([r.hasState(counts.name), r.hasState('never-written')]).toEqual([true, false]);
      expect(r.stateNames()).toContain(counts.name);
      expect(r.stateNames()).not.toContain('never-written');
      r.getOrCreateState(counts, false); // only one of the four states is registered
      expect(r.hasState(counts.name)).toBe(true);
      checkFixture(restoreAt(1, await snapshotAll([r])));
    });

    it('refuses another max parallelism and a changed state kind, naming the fix', async () => {
      const b = make();
      b.setCurrentKey('a');
      fixtureHandles(b).count.update(1);
      const snaps = await snapshotAll([b]);
      const other = make(1, 0, () => 0, subject, 256);
      expect(() => other.restore(snaps)).toThrow(/max parallelism 128 .* now has 256.*cannot change/);
      const c = restoreAt(1, snaps)[0]!;
      expect(() => c.getOrCreateState(listState('count'), false)).toThrow(/restored as value state and is now registered as list state/);
    });

    it('a seeded random workload matches a reference model, through snapshot and restore at other parallelism', async () => {
      const seed = 0x5eed;
      const rand = rng(seed);
      const b = make();
      const v = b.getOrCreateState(valueState<number>('rv'), false) as unknown as ValueState<number>;
      const l = b.getOrCreateState(listState<number>('rl'), true) as unknown as ListState<number> & Ns;
      const model = new Map<string, number>();
      const listModel = new Map<string, number[]>();
      for (let i = 0; i < 20_000; i++) {
        const k = Math.floor(rand() * 3000);
        const ns = Math.floor(rand() * 3);
        b.setCurrentKey(k);
        const op = rand();
        if (op < 0.5) {
          v.update(i);
          model.set(String(k), i);
        } else if (op < 0.6) {
          v.clear();
          model.delete(String(k));
        } else if (op < 0.75) {
          expect(v.value(), `seed ${seed} step ${i}`).toBe(model.get(String(k)));
        } else {
          l.setCurrentNamespace(ns);
          l.add(i);
          const lk = `${k}/${ns}`;
          listModel.set(lk, [...(listModel.get(lk) ?? []), i]);
        }
      }
      const check = (bs: readonly KeyedStateBackend[]): void => {
        for (let k = 0; k < 3000; k++) {
          const x = ownerOf(bs, k);
          x.setCurrentKey(k);
          expect((x.getOrCreateState(valueState<number>('rv'), false) as unknown as ValueState<number>).value()).toBe(model.get(String(k)));
          const xl = x.getOrCreateState(listState<number>('rl'), true) as unknown as ListState<number> & Ns;
          for (let ns = 0; ns < 3; ns++) {
            xl.setCurrentNamespace(ns);
            expect([...xl.get()]).toEqual(listModel.get(`${k}/${ns}`) ?? []);
          }
        }
      };
      check([b]);
      const three = restoreAt(3, await snapshotAll([b]));
      check(three);
      check(restoreAt(2, await snapshotAll(three)));
    });
  });

  /** A seeded workload over value, list (namespaced), map state and timers, with a model of what it wrote. */
  const deltaWorkload = (seed: number) => {
    const rand = rng(seed);
    const b = make();
    const KEYS = 400;
    const v = b.getOrCreateState(valueState<number>('iv'), false) as unknown as ValueState<number>;
    const l = b.getOrCreateState(listState<number>('il'), true) as unknown as ListState<number> & Ns;
    const m = b.getOrCreateState(mapState<string, number>('im'), false) as unknown as MapState<string, number>;
    const timers = [b.timerQueue(0), b.timerQueue(1)] as const;
    const model = { v: new Map<number, number>(), l: new Map<string, number[]>(), m: new Map<number, Map<string, number>>(), t: new Set<string>() };
    const copy = (): typeof model => ({
      v: new Map(model.v),
      l: new Map([...model.l].map(([k, xs]) => [k, [...xs]])),
      m: new Map([...model.m].map(([k, x]) => [k, new Map(x)])),
      t: new Set(model.t),
    });
    let step = 0;
    const work = (ops: number, hot: number): void => {
      for (let i = 0; i < ops; i++, step++) {
        const k = Math.floor(rand() * hot);
        b.setCurrentKey(k);
        const op = rand();
        if (op < 0.3) {
          v.update(step);
          model.v.set(k, step);
        } else if (op < 0.38) {
          v.clear();
          model.v.delete(k);
        } else if (op < 0.55) {
          const ns = Math.floor(rand() * 3);
          l.setCurrentNamespace(ns);
          if (rand() < 0.85) {
            l.add(step);
            model.l.set(`${k}/${ns}`, [...(model.l.get(`${k}/${ns}`) ?? []), step]);
          } else {
            l.clear();
            model.l.delete(`${k}/${ns}`);
          }
        } else if (op < 0.8) {
          const mk = `f${Math.floor(rand() * 4)}`;
          let mm = model.m.get(k);
          if (rand() < 0.8) {
            m.put(mk, step);
            if (mm === undefined) model.m.set(k, (mm = new Map()));
            mm.set(mk, step);
          } else {
            m.remove(mk);
            mm?.delete(mk);
            if (mm?.size === 0) model.m.delete(k);
          }
        } else {
          // Both time domains: a delta must not lose one domain's timers when only the other changed.
          const domain = rand() < 0.5 ? 0 : 1;
          const t = 1000 + Math.floor(rand() * 20);
          if (rand() < 0.7) {
            timers[domain].add(t, k, 0);
            model.t.add(`${domain}/${t}/${k}`);
          } else {
            timers[domain].delete(t, k, 0);
            model.t.delete(`${domain}/${t}/${k}`);
          }
        }
      }
    };
    /** The restored backends hold exactly the modelled state `atLastCompleted`. */
    const check = (restored: readonly KeyedStateBackend[], atLastCompleted: ReturnType<typeof copy>): void => {
      for (let k = 0; k < KEYS; k++) {
        const x = ownerOf(restored, k);
        x.setCurrentKey(k);
        const where = `seed ${seed}, key ${k}`;
        expect((x.getOrCreateState(valueState<number>('iv'), false) as unknown as ValueState<number>).value(), where).toBe(atLastCompleted.v.get(k));
        const xl = x.getOrCreateState(listState<number>('il'), true) as unknown as ListState<number> & Ns;
        for (let ns = 0; ns < 3; ns++) {
          xl.setCurrentNamespace(ns);
          expect([...xl.get()], where).toEqual(atLastCompleted.l.get(`${k}/${ns}`) ?? []);
        }
        const xm = x.getOrCreateState(mapState<string, number>('im'), false) as unknown as MapState<string, number>;
        expect(new Map(xm.entries()), where).toEqual(atLastCompleted.m.get(k) ?? new Map());
      }
      const restoredTimers = new Set(restored.flatMap((x) => ([0, 1] as const).flatMap((d) => [...x.timerQueue(d).entries()].map(([t, k]) => `${d}/${t}/${String(k)}`))));
      expect(restoredTimers).toEqual(atLastCompleted.t);
    };
    return { b, KEYS, copy, work, check };
  };

  // Drives the backend's own snapshot requests: only where the suite does not chain them itself.
  if (mode === 'full' || mode === 'written')
  describe(`${label} keyed state backend (conformance): incremental checkpoints`, () => {
    it('a chain of full and delta snapshots (aborted checkpoints, writes during the asynchronous part) restores exactly the state at the last completed barrier, at another parallelism', async () => {
      const seed = 0x1ac;
      const { b, KEYS, copy, work, check } = deltaWorkload(seed);
      work(3000, KEYS);
      let chain: KeyedStateSnapshot[] = [];
      let lastCompleted: number | undefined;
      let atLastCompleted = copy();
      let deltas = 0;
      let fullBytes = 0;
      let deltaBytesMax = 0;
      for (let cp = 1; cp <= 14; cp++) {
        const finish = b.snapshot({ checkpointId: cp, incremental: true });
        const atBarrier = copy();
        work(150, KEYS); // between the barrier and the end of the asynchronous part
        const snap = roundTrip(await finish());
        work(150, 40); // a few hot keys change between checkpoints
        if (cp % 4 === 3) {
          b.notifyCheckpointAborted(cp);
          continue;
        }
        b.notifyCheckpointComplete(cp);
        const size = snapshotBytes(snap);
        if (snap.baseCheckpointId === undefined) {
          chain = [snap];
          fullBytes = size;
        } else {
          expect(snap.baseCheckpointId, `seed ${seed}: a delta builds on the last completed checkpoint`).toBe(lastCompleted);
          chain.push(snap);
          deltas++;
          deltaBytesMax = Math.max(deltaBytesMax, size);
        }
        lastCompleted = cp;
        atLastCompleted = atBarrier;
      }
      expect(deltas, 'some snapshots were deltas').toBeGreaterThan(3);
      expect(deltaBytesMax, 'a delta is smaller than the full snapshot').toBeLessThan(fullBytes);
      // Backends restore the chain itself (full groups loaded, deltas applied), also the other backends; the folded chain restores the same.
      for (const via of [subject, ...others]) check(restoreAt(3, chain, via), atLastCompleted);
      check(restoreAt(3, resolveDeltas(chain)), atLastCompleted);
    });

    it('changelog: segments and materializations (writes during the asynchronous part) fold into exactly the state at the last position, at another parallelism', async () => {
      const seed = 0xc1a;
      const { b, KEYS, copy, work, check } = deltaWorkload(seed);
      work(3000, KEYS);
      let chain: KeyedStateSnapshot[] = [];
            let atLastCompleted = copy();
      let deltas = 0;
      let fullBytes = 0;
      let deltaBytesMax = 0;
      for (let cp = 1; cp <= 14; cp++) {
        const kind = cp === 6 || cp === 11 ? 'materialize' : 'segment';
        const finish = b.snapshot({ checkpointId: cp, incremental: false, changelog: kind });
        const atBarrier = copy();
        work(150, KEYS); // between the capture and the end of the asynchronous part
        const snap = roundTrip(await finish());
        work(150, 40);
        const size = snapshotBytes(snap);
        if (snap.baseCheckpointId === undefined) {
          expect(cp === 1 || kind === 'materialize', `seed ${seed}: full only first and when materializing`).toBe(true);
          chain = [snap];
          fullBytes = size;
        } else {
          expect(snap.baseCheckpointId, `seed ${seed}: a segment follows the previous position`).toBe(cp - 1);
          chain.push(snap);
          deltas++;
          deltaBytesMax = Math.max(deltaBytesMax, size);
        }
        atLastCompleted = atBarrier;
      }
      expect(deltas, 'some snapshots were deltas').toBeGreaterThan(3);
      expect(deltaBytesMax, 'a delta is smaller than the full snapshot').toBeLessThan(fullBytes);
      // Backends restore the chain itself (full groups loaded, deltas applied), also the other backends; the folded chain restores the same.
      for (const via of [subject, ...others]) check(restoreAt(3, chain, via), atLastCompleted);
      check(restoreAt(3, resolveDeltas(chain)), atLastCompleted);
    });

    it('savepoints and checkpoints without incremental are full and never a base', async () => {
      const b = make();
      const v = b.getOrCreateState(valueState<number>('sv'), false) as unknown as ValueState<number>;
      for (let k = 0; k < 50; k++) {
        b.setCurrentKey(k);
        v.update(k);
      }
      expect((await b.snapshot({ checkpointId: 1, incremental: true })()).baseCheckpointId).toBeUndefined();
      b.notifyCheckpointComplete(1);
      b.setCurrentKey(3);
      v.update(33);
      const savepoint = await b.snapshot({ checkpointId: 2, incremental: false })();
      expect(savepoint.baseCheckpointId).toBeUndefined();
      expect(savepoint.states[0]!.groups.size).toBeGreaterThan(1);
      b.notifyCheckpointComplete(2);
      const delta = await b.snapshot({ checkpointId: 3, incremental: true })();
      expect(delta.baseCheckpointId, 'the delta builds on checkpoint 1, not on the savepoint').toBe(1);
      expect([...delta.states[0]!.groups.keys()]).toEqual([assignToKeyGroup(3, MAXP)]);
    });
  });

  for (const other of others) {
    describe(`${label} keyed state backend (conformance): switching through snapshots`, () => {
      it(`${subject.name} -> ${other.name} -> ${subject.name}, rescaling 1 -> 3 -> 2 on the way`, async () => {
        const one = [make()];
        fillFixture(one);
        for (const [i, k] of fixtureKeys.entries()) one[0]!.timerQueue(0).add(100 + i, k, 1);
        const three = restoreAt(3, await snapshotAll(one), other);
        checkFixture(three);
        const two = restoreAt(2, await snapshotAll(three), subject);
        checkFixture(two);
        expect(two.reduce((n, x) => n + x.timerQueue(0).size, 0)).toBe(fixtureKeys.length);
      });

      it(`${other.name} -> ${subject.name} -> ${other.name}`, async () => {
        const one = [make(1, 0, () => 0, other)];
        fillFixture(one);
        const two = restoreAt(2, await snapshotAll(one), subject);
        checkFixture(two);
        checkFixture(restoreAt(1, await snapshotAll(two), other));
      });
    });
  }
}
