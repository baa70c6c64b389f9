import { Packr } from 'msgpackr';
import type { KeyGroupRange, KeyType } from './key-group.js';

/**
 * The serialized keyed state of one operator subtask, by key group, so a restore at another
 * parallelism can take exactly the key groups it owns. Timers are part of keyed state.
 */
export interface KeyedStateSnapshot {
  readonly formatVersion: 1;
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** Per state: name, kind, whether namespaced, and the bytes of each non-empty key group. */
  readonly states: readonly StateSnapshot[];
  /** Timers by key group: [domain, timestamp, key, namespace] rows, packed per group. */
  readonly timers: ReadonlyMap<number, Uint8Array>;
}

export interface StateSnapshot {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly groups: ReadonlyMap<number, Uint8Array>;
}

export type TimerRow = [domain: 0 | 1, timestampMs: number, key: KeyType, namespace: number];

const packr = new Packr({ useRecords: false, moreTypes: false, int64AsType: 'bigint', mapsAsObjects: false });

/** Keys keep their JavaScript type through a snapshot: a bigint key is tagged. */
export function encodeKey(k: KeyType): unknown {
  return typeof k === 'bigint' ? { b: k.toString() } : k;
}

export function decodeKey(e: unknown): KeyType {
  if (typeof e === 'object' && e !== null) return BigInt((e as { b: string }).b);
  return e as KeyType;
}

export function packGroup(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function unpackGroup(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

export function encodeKeyedStateSnapshot(s: KeyedStateSnapshot): Uint8Array {
  return packr.pack({
    v: s.formatVersion,
    maxP: s.maxParallelism,
    range: [s.keyGroupRange.startKeyGroup, s.keyGroupRange.endKeyGroup],
    states: s.states.map((st) => ({ name: st.name, kind: st.kind, ns: st.namespaced, groups: st.groups })),
    timers: s.timers,
  });
}

export function decodeKeyedStateSnapshot(bytes: Uint8Array): KeyedStateSnapshot {
  const o = packr.unpack(bytes) as {
    v: number;
    maxP: number;
    range: [number, number];
    states: { name: string; kind: string; ns: boolean; groups: Map<number, Uint8Array> }[];
    timers: Map<number, Uint8Array>;
  };
  if (o.v !== 1) throw new Error(`keyed state snapshot format version ${o.v} is not supported (this Sluice reads version 1)`);
  return {
    formatVersion: 1,
    maxParallelism: o.maxP,
    keyGroupRange: { startKeyGroup: o.range[0], endKeyGroup: o.range[1] },
    states: o.states.map((s) => ({ name: s.name, kind: s.kind, namespaced: s.ns, groups: s.groups })),
    timers: o.timers,
  };
}
