import type { KeyType } from './key-group.js';
import { packGroup, unpackGroup, type KeyedStateSnapshot, type StateSnapshot } from './keyed-state-snapshot.js';
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
type FoldedTimers = [Map<KeyType, number[]>, Map<KeyType, number[]>];

function unfoldTimers(bytes: Uint8Array): FoldedTimers {
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
function applyTimerDelta(folded: FoldedTimers, parts: (Uint8Array | null)[]): void {
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
function packFoldedTimers(folded: FoldedTimers): Uint8Array | undefined {
  const parts = folded.map((byKey) => {
    const columns = new TimerColumns();
    for (const [k, xs] of byKey) for (let i = 0; i < xs.length; i += 2) columns.add(xs[i]!, k, xs[i + 1]!);
    return columns.size === 0 ? null : packGroup(columns.columns());
  });
  return parts[0] === null && parts[1] === null ? undefined : packGroup(parts);
}

/** Applies one delta group to a decoded group map (key -> value, or key -> namespace -> value). */
export function applyDeltaGroup(group: Map<unknown, unknown>, bytes: Uint8Array, namespaced: boolean): void {
  const [upserts, deletedKeys, deletedEntries] = unpackGroup(bytes) as DeltaGroup;
  for (const k of deletedKeys) group.delete(k);
  for (const [k, ns] of deletedEntries) {
    const byNs = group.get(k) as Map<number, unknown> | undefined;
    if (byNs === undefined) continue;
    byNs.delete(ns);
    if (byNs.size === 0) group.delete(k);
  }
  for (const [k, v] of upserts) {
    if (!namespaced) {
      group.set(k, v);
      continue;
    }
    let byNs = group.get(k) as Map<number, unknown> | undefined;
    if (byNs === undefined) group.set(k, (byNs = new Map()));
    for (const [ns, nv] of v as Map<number, unknown>) byNs.set(ns, nv);
  }
}

/** A full group's bytes as a map (the earlier column format included). */
function decodeFullGroup(bytes: Uint8Array, namespaced: boolean): Map<unknown, unknown> {
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

/**
 * Folds snapshots in chain order (each old subtask's full snapshot, then its deltas; chains of
 * different old subtasks cover different key groups) into full snapshots. Snapshots without
 * deltas come back as they are.
 */
export function resolveDeltas(snapshots: readonly KeyedStateSnapshot[]): KeyedStateSnapshot[] {
  if (!snapshots.some((s) => s.baseCheckpointId !== undefined)) return [...snapshots];
  const first = snapshots[0]!;
  // Per state: kind, namespaced, and per key group the full bytes or the decoded map.
  const states = new Map<string, { kind: string; namespaced: boolean; groups: Map<number, Uint8Array | Map<unknown, unknown>> }>();
  const timers = new Map<number, Uint8Array | FoldedTimers>();
  let start = Infinity;
  let end = -Infinity;
  for (const snap of snapshots) {
    start = Math.min(start, snap.keyGroupRange.startKeyGroup);
    end = Math.max(end, snap.keyGroupRange.endKeyGroup);
    const delta = snap.baseCheckpointId !== undefined;
    for (const st of snap.states) {
      let s = states.get(st.name);
      if (s === undefined) states.set(st.name, (s = { kind: st.kind, namespaced: st.namespaced, groups: new Map() }));
      if (!delta) {
        // A full state: its groups within this snapshot's range replace what was there.
        for (const kg of [...s.groups.keys()]) if (kg >= snap.keyGroupRange.startKeyGroup && kg <= snap.keyGroupRange.endKeyGroup) s.groups.delete(kg);
        for (const [kg, bytes] of st.groups) s.groups.set(kg, bytes);
        continue;
      }
      for (const [kg, bytes] of st.groups) {
        let g = s.groups.get(kg);
        if (g === undefined) g = new Map();
        else if (g instanceof Uint8Array) g = decodeFullGroup(g, st.namespaced);
        applyDeltaGroup(g, bytes, st.namespaced);
        s.groups.set(kg, g);
      }
    }
    for (const [kg, bytes] of snap.timers) {
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
  const out: StateSnapshot[] = [];
  for (const [name, s] of states) {
    const groups = new Map<number, Uint8Array>();
    for (const [kg, g] of s.groups) {
      if (g instanceof Uint8Array) groups.set(kg, g);
      else if (g.size > 0) groups.set(kg, packGroup(g));
    }
    out.push({ name, kind: s.kind, namespaced: s.namespaced, groups });
  }
  const timerBytes = new Map<number, Uint8Array>();
  for (const [kg, t] of timers) {
    const bytes = t instanceof Uint8Array ? t : packFoldedTimers(t);
    if (bytes === undefined || (bytes.length === EMPTY_TIMER_GROUP.length && Buffer.compare(bytes, EMPTY_TIMER_GROUP) === 0)) continue;
    timerBytes.set(kg, bytes);
  }
  return [{ formatVersion: 1, maxParallelism: first.maxParallelism, keyGroupRange: { startKeyGroup: start, endKeyGroup: end }, states: out, timers: timerBytes }];
}

/** The changed (key, value) pairs of a non-namespaced key group of a heap table, as a delta group. */
export function heapDeltaGroup(
  group: Map<KeyType, unknown>,
  changed: ReadonlySet<KeyType>,
  namespaced: boolean,
  encode: ((v: unknown) => unknown) | undefined,
): Uint8Array | undefined {
  if (changed.size === 0) return undefined;
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
