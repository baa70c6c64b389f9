import type { KeyGroupRange, KeyType } from './key-group.js';
import { createStatePackr } from './serializer.js';

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

const packr = createStatePackr();

/** Keys keep their JavaScript type through a snapshot (the state packr keeps bigints apart from numbers). */
export function encodeKey(k: KeyType): unknown {
  return k;
}

export function decodeKey(e: unknown): KeyType {
  return e as KeyType;
}

export function packGroup(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function unpackGroup(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

export function encodeKeyedStateSnapshot(s: KeyedStateSnapshot): Uint8Array {
  return packr.pack([
    s.formatVersion,
    s.maxParallelism,
    [s.keyGroupRange.startKeyGroup, s.keyGroupRange.endKeyGroup],
    s.states.map((st) => [st.name, st.kind, st.namespaced, st.groups]),
    s.timers,
  ]);
}

export function decodeKeyedStateSnapshot(bytes: Uint8Array): KeyedStateSnapshot {
  const o = packr.unpack(bytes) as [number, number, [number, number], [string, string, boolean, Map<number, Uint8Array>][], Map<number, Uint8Array>];
  if (!Array.isArray(o) || o[0] !== 1) {
    throw new Error(`keyed state snapshot format version ${Array.isArray(o) ? o[0] : 'unknown'} is not supported (this Sluice reads version 1)`);
  }
  return {
    formatVersion: 1,
    maxParallelism: o[1],
    keyGroupRange: { startKeyGroup: o[2][0], endKeyGroup: o[2][1] },
    states: o[3].map(([name, kind, namespaced, groups]) => ({ name, kind, namespaced, groups })),
    timers: o[4],
  };
}
