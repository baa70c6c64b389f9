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
  /** Timers by key group: [event-time group, processing-time group] (each packed or null), packed per key group. */
  readonly timers: ReadonlyMap<number, Uint8Array>;
  /**
   * Set on a delta of an incremental checkpoint: the changes since the subtask's snapshot of
   * that completed checkpoint, in the format of keyed-state-delta.ts.
   */
  readonly baseCheckpointId?: number | undefined;
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

/** Where restored timers go: a timer queue of one time domain. */
export interface TimerSink {
  add(timestampMs: number, key: KeyType, namespace: number): unknown;
  addEncodedGroup(bytes: Uint8Array): void;
}

/**
 * Adds the timers of `domain` found in one key group's timer bytes: [event, processing],
 * each a packed timer group or null. Also reads the earlier format, rows of
 * [domain, timestamp, key, namespace].
 */
export function decodeTimerGroup(bytes: Uint8Array, domain: 0 | 1, into: TimerSink): void {
  const v = unpackGroup(bytes) as unknown[];
  if (v.length === 2 && (v[0] === null || v[0] instanceof Uint8Array) && (v[1] === null || v[1] instanceof Uint8Array)) {
    const part = v[domain] as Uint8Array | null;
    if (part !== null) into.addEncodedGroup(part);
    return;
  }
  for (const r of v as TimerRow[]) if (r[0] === domain) into.add(r[1], decodeKey(r[2]), r[3]);
}

export function encodeKeyedStateSnapshot(s: KeyedStateSnapshot): Uint8Array {
  return packr.pack([
    s.formatVersion,
    s.maxParallelism,
    [s.keyGroupRange.startKeyGroup, s.keyGroupRange.endKeyGroup],
    s.states.map((st) => [st.name, st.kind, st.namespaced, st.groups]),
    s.timers,
    s.baseCheckpointId ?? null,
  ]);
}

export function decodeKeyedStateSnapshot(bytes: Uint8Array): KeyedStateSnapshot {
  const o = packr.unpack(bytes) as [number, number, [number, number], [string, string, boolean, Map<number, Uint8Array>][], Map<number, Uint8Array>, (number | null)?];
  if (!Array.isArray(o) || o[0] !== 1) {
    throw new Error(`keyed state snapshot format version ${Array.isArray(o) ? o[0] : 'unknown'} is not supported (this Sluice reads version 1)`);
  }
  return {
    formatVersion: 1,
    maxParallelism: o[1],
    keyGroupRange: { startKeyGroup: o[2][0], endKeyGroup: o[2][1] },
    states: o[3].map(([name, kind, namespaced, groups]) => ({ name, kind, namespaced, groups })),
    timers: o[4],
    ...(typeof o[5] === 'number' ? { baseCheckpointId: o[5] } : {}),
  };
}

/** Serialized bytes of a snapshot's states and timers (what an incremental checkpoint writes). */
export function snapshotBytes(s: KeyedStateSnapshot): number {
  let n = 0;
  for (const st of s.states) for (const b of st.groups.values()) n += b.length;
  for (const b of s.timers.values()) n += b.length;
  return n;
}
