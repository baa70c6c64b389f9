import type { KeyGroupRange, KeyType } from './key-group.js';
import { decodeKey, packGroup, unpackGroup, type KeyedStateSnapshot, type StateSnapshot } from './keyed-state-snapshot.js';
import type { HeapStateTable } from './heap-state-table.js';
import type { StateCodec } from './state-codec.js';
import { writeHeapDeltaGroup } from './delta-group-writer.js';
import { decodeTimerDelta, forEachEncodedTimer, TimerColumns } from '../task/timer-queue.js';

/**
 * The delta format of incremental snapshots, and how a chain (a full snapshot, then deltas)
 * becomes one full snapshot again on restore.
 *
 * In a delta snapshot (`baseCheckpointId` set), a state's group is a packed
 * `[upserts, deletedKeys, deletedEntries]`: deleted keys are removed first (every namespace of
 * a namespaced key), then single (key, namespace) entries, then the upserts are written
 * (key -> value, or key -> namespace -> value). A key group's timers in a delta are
 * `[event, processing, TIMER_DELTA_BY_KEY]`, each domain null (unchanged) or a delta that
 * replaces every timer of the keys it names (`TimerQueue.encodeGroupDelta`). Deltas written
 * before timers were tracked per key hold `[event, processing]` that replaces the group's
 * timers (an emptied group is `[null, null]`).
 */
export type DeltaGroup = [upserts: Map<unknown, unknown>, deletedKeys: unknown[], deletedEntries: [unknown, number][]];

export function packDeltaGroup(d: DeltaGroup): Uint8Array {
  return packGroup(d);
}

/** The timer bytes of a key group that has no timers (in the earlier delta format, replaces the group's timers). */
export const EMPTY_TIMER_GROUP = packGroup([null, null]);

/** Marks a key group's timers in a delta as per-key replacements (the third element). */
export const TIMER_DELTA_BY_KEY = 'by-key';

/** A key group's timers while a chain is folded: per domain, key -> [timestamp, namespace, ...]. */
export type FoldedTimers = [Map<KeyType, number[]>, Map<KeyType, number[]>];

export function unfoldTimers(bytes: Uint8Array): FoldedTimers {
  const folded: FoldedTimers = [new Map(), new Map()];
  const parts = unpackGroup(bytes) as (Uint8Array | null)[];
  for (const domain of [0, 1] as const) {
    const part = parts[domain];
    if (part === null || part === undefined) continue;
    const byKey = folded[domain];
    forEachEncodedTimer(part, (t, k, ns) => pushTimer(byKey, t, k, ns));
  }
  return folded;
}

function pushTimer(byKey: Map<KeyType, number[]>, t: number, k: KeyType, ns: number): void {
  const xs = byKey.get(k);
  if (xs === undefined) byKey.set(k, [t, ns]);
  else xs.push(t, ns);
}

/** Applies `[event, processing, TIMER_DELTA_BY_KEY]` of a delta to a key group's folded timers. */
export function applyTimerDelta(folded: FoldedTimers, parts: (Uint8Array | null)[]): void {
  for (const domain of [0, 1] as const) {
    const part = parts[domain];
    if (part === null || part === undefined) continue;
    const byKey = folded[domain];
    const delta = decodeTimerDelta(part);
    for (let i = 0; i < delta.replacedKeys.length; i++) byKey.delete(delta.replacedKeys[i]!);
    delta.forEach((t, k, ns) => pushTimer(byKey, t, k, ns));
  }
}

/** Folded timers packed as a full key group's timer bytes (undefined when there are none). */
export function packFoldedTimers(folded: FoldedTimers): Uint8Array | undefined {
  const parts = folded.map((byKey) => {
    const columns = new TimerColumns();
    for (const [k, xs] of byKey) for (let i = 0; i < xs.length; i += 2) columns.add(xs[i]!, k, xs[i + 1]!);
    return columns.size === 0 ? null : packGroup(columns.columns());
  });
  return parts[0] === null && parts[1] === null ? undefined : packGroup(parts);
}

/** Where a delta group's changes go (a decoded group, a heap table, a store), in the order the format defines. */
export interface DeltaTarget {
  /** Every namespace of a namespaced key, or the key's value. */
  removeKey(key: KeyType): void;
  removeEntry(key: KeyType, namespace: number): void;
  /** `value` as encoded in the snapshot; `namespace` undefined in a non-namespaced state. */
  put(key: KeyType, namespace: number | undefined, value: unknown): void;
}

/** Feeds one delta group's changes to `target`: removed keys, then removed entries, then upserts. */
export function applyDeltaChanges(bytes: Uint8Array, namespaced: boolean, target: DeltaTarget): void {
  const [upserts, deletedKeys, deletedEntries] = unpackGroup(bytes) as DeltaGroup;
  for (const k of deletedKeys) target.removeKey(decodeKey(k));
  for (const [k, ns] of deletedEntries) target.removeEntry(decodeKey(k), ns);
  for (const [k, v] of upserts) {
    const key = decodeKey(k);
    if (!namespaced) target.put(key, undefined, v);
    else for (const [ns, nv] of v as Map<number, unknown>) target.put(key, ns, nv);
  }
}

/** Applies one delta group to a decoded group map (key -> value, or key -> namespace -> value). */
export function applyDeltaGroup(group: Map<unknown, unknown>, bytes: Uint8Array, namespaced: boolean): void {
  applyDeltaChanges(bytes, namespaced, {
    removeKey: (k) => group.delete(k),
    removeEntry: (k, ns) => {
      const byNs = group.get(k) as Map<number, unknown> | undefined;
      if (byNs === undefined) return;
      byNs.delete(ns);
      if (byNs.size === 0) group.delete(k);
    },
    put: (k, ns, v) => {
      if (ns === undefined) {
        group.set(k, v);
        return;
      }
      let byNs = group.get(k) as Map<number, unknown> | undefined;
      if (byNs === undefined) group.set(k, (byNs = new Map()));
      byNs.set(ns, v);
    },
  });
}

/** A full group's bytes as a map (the earlier column format included). */
export function decodeFullGroup(bytes: Uint8Array, namespaced: boolean): Map<unknown, unknown> {
  const packed = unpackGroup(bytes) as Map<unknown, unknown> | [unknown[], unknown[]];
  if (!Array.isArray(packed)) return packed;
  const [keys, values] = packed;
  const out = new Map<unknown, unknown>();
  for (let i = 0; i < keys.length; i++) {
    if (!namespaced) out.set(keys[i], values[i]);
    else {
      const [nss, vs] = values[i] as [number[], unknown[]];
      out.set(keys[i], new Map(nss.map((ns, j) => [ns, vs[j]])));
    }
  }
  return out;
}

/** One key group of one state as a chain restores it: the full snapshot's bytes (if it had the group), then the deltas on it, in order. */
export interface GroupChain {
  full: Uint8Array | undefined;
  readonly deltas: Uint8Array[];
}

/** What a backend restores from snapshots in chain order: per state, the chain of each key group; timers folded. */
export interface RestoredChains {
  readonly states: Map<string, { readonly kind: string; readonly namespaced: boolean; readonly groups: Map<number, GroupChain> }>;
  /** Per key group, the timer bytes of a full snapshot (`[event, processing]`). */
  readonly timers: Map<number, Uint8Array>;
}

/**
 * Takes the key groups in `range` of snapshots in chain order (each old subtask's full
 * snapshot, then its deltas; chains of different old subtasks cover different key groups).
 * State groups stay encoded, as chains the backend loads and applies itself (no full copy of
 * the state is built); timers, which are small, are folded here.
 */
export function restoredChains(snapshots: readonly KeyedStateSnapshot[], range: KeyGroupRange, maxParallelism: number): RestoredChains {
  const states: RestoredChains['states'] = new Map();
  const timers = new Map<number, Uint8Array | FoldedTimers>();
  const inRange = (kg: number): boolean => kg >= range.startKeyGroup && kg <= range.endKeyGroup;
  for (const snap of snapshots) {
    if (snap.maxParallelism !== maxParallelism) {
      throw new Error(
        `the snapshot was taken with max parallelism ${snap.maxParallelism} and the operator now has ${maxParallelism}: ` +
          'the max parallelism (number of key groups) cannot change; set it back with setMaxParallelism()',
      );
    }
    const delta = snap.baseCheckpointId !== undefined;
    for (const st of snap.states) {
      let s = states.get(st.name);
      if (s === undefined) states.set(st.name, (s = { kind: st.kind, namespaced: st.namespaced, groups: new Map() }));
      if (!delta) {
        // A full state starts the chains of its key groups (a chain starts with its full snapshot).
        for (const [kg, bytes] of st.groups) if (inRange(kg)) s.groups.set(kg, { full: bytes, deltas: [] });
        continue;
      }
      for (const [kg, bytes] of st.groups) {
        if (!inRange(kg)) continue;
        let g = s.groups.get(kg);
        if (g === undefined) s.groups.set(kg, (g = { full: undefined, deltas: [] }));
        g.deltas.push(bytes);
      }
    }
    for (const [kg, bytes] of snap.timers) {
      if (!inRange(kg)) continue;
      const parts = delta ? (unpackGroup(bytes) as (Uint8Array | null | string)[]) : undefined;
      if (parts === undefined || parts[2] !== TIMER_DELTA_BY_KEY) {
        timers.set(kg, bytes); // a full snapshot's group, or an earlier delta's replacement
        continue;
      }
      let folded = timers.get(kg);
      if (folded === undefined) folded = [new Map(), new Map()];
      else if (folded instanceof Uint8Array) folded = unfoldTimers(folded);
      applyTimerDelta(folded, parts as (Uint8Array | null)[]);
      timers.set(kg, folded);
    }
  }
  const timerBytes = new Map<number, Uint8Array>();
  for (const [kg, t] of timers) {
    const bytes = t instanceof Uint8Array ? t : packFoldedTimers(t);
    if (bytes === undefined || (bytes.length === EMPTY_TIMER_GROUP.length && Buffer.compare(bytes, EMPTY_TIMER_GROUP) === 0)) continue;
    timerBytes.set(kg, bytes);
  }
  return { states, timers: timerBytes };
}

/** A key group's chain folded into a full group's bytes (undefined when it ends empty). */
export function foldGroupChain(chain: GroupChain, namespaced: boolean): Uint8Array | undefined {
  if (chain.deltas.length === 0) return chain.full;
  const g = chain.full === undefined ? new Map<unknown, unknown>() : decodeFullGroup(chain.full, namespaced);
  for (const d of chain.deltas) applyDeltaGroup(g, d, namespaced);
  return g.size === 0 ? undefined : packGroup(g);
}

/** Every key group's chain folded (groups that end empty left out). */
export function foldGroupChains(groups: ReadonlyMap<number, GroupChain>, namespaced: boolean): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  for (const [kg, chain] of groups) {
    const bytes = foldGroupChain(chain, namespaced);
    if (bytes !== undefined) out.set(kg, bytes);
  }
  return out;
}

/** Applies one delta group to a key group of a heap table (values decoded by `codec`). */
export function applyDeltaGroupToTable(table: HeapStateTable, groupIndex: number, bytes: Uint8Array, codec: StateCodec): void {
  applyDeltaChanges(bytes, table.namespaced, {
    removeKey: (k) => table.removeKey(groupIndex, k),
    removeEntry: (k, ns) => table.remove(groupIndex, k, ns),
    put: (k, ns, v) => table.put(groupIndex, k, ns ?? 0, codec.decode(v)),
  });
}

/**
 * Folds snapshots in chain order into one full snapshot (what the inspector shows).
 * Snapshots without deltas come back as they are.
 */
export function resolveDeltas(snapshots: readonly KeyedStateSnapshot[]): KeyedStateSnapshot[] {
  if (!snapshots.some((s) => s.baseCheckpointId !== undefined)) return [...snapshots];
  const range = {
    startKeyGroup: Math.min(...snapshots.map((s) => s.keyGroupRange.startKeyGroup)),
    endKeyGroup: Math.max(...snapshots.map((s) => s.keyGroupRange.endKeyGroup)),
  };
  const maxParallelism = snapshots[0]!.maxParallelism;
  const chains = restoredChains(snapshots, range, maxParallelism);
  const states: StateSnapshot[] = [...chains.states].map(([name, s]) => ({ name, kind: s.kind, namespaced: s.namespaced, groups: foldGroupChains(s.groups, s.namespaced) }));
  return [{ formatVersion: 1, maxParallelism, keyGroupRange: range, states, timers: chains.timers }];
}

/** The changed (key, value) pairs of a non-namespaced key group of a heap table, as a delta group. */
export function heapDeltaGroup(
  group: ReadonlyMap<KeyType, unknown>,
  changed: ReadonlySet<KeyType>,
  namespaced: boolean,
  encode: ((v: unknown) => unknown) | undefined,
): Uint8Array | undefined {
  if (changed.size === 0) return undefined;
  if (encode === undefined) {
    const written = writeHeapDeltaGroup(group, changed, namespaced);
    if (written !== null) return written;
  }
  const upserts = new Map<unknown, unknown>();
  const deletedKeys: unknown[] = [];
  for (const k of changed) {
    const v = group.get(k);
    if (!namespaced) {
      if (v === undefined) deletedKeys.push(k);
      else upserts.set(k, encode === undefined ? v : encode(v));
      continue;
    }
    // A namespaced key is replaced whole: every namespace removed, the current ones written.
    deletedKeys.push(k);
    if (v === undefined) continue;
    if (encode === undefined) upserts.set(k, v);
    else {
      const byNs = new Map<number, unknown>();
      for (const [ns, nv] of v as Map<number, unknown>) byNs.set(ns, encode(nv));
      upserts.set(k, byNs);
    }
  }
  return packDeltaGroup([upserts, deletedKeys, []]);
}
