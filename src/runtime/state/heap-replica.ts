import { assert } from '../../util/assert.js';
import { fullGroupOfColumns, isColumnsGroup } from './delta-group-writer.js';
import { mergeDeltaGroupBytes, mergeTimerDeltaBytes } from './group-merge.js';
import { applyDeltaGroup, applyTimerDelta, decodeFullGroup, packFoldedTimers, TIMER_DELTA_BY_KEY, unfoldTimers, type FoldedTimers } from './keyed-state-delta.js';
import { packGroup, unpackGroup, type StateSnapshot } from './keyed-state-snapshot.js';
import type { UnpackedParts } from './snapshot-parts.js';
import { fullTimerGroupOfWhole, isWholeTimerGroup } from './whole-timer-groups.js';

interface ReplicaState {
  readonly kind: string;
  readonly namespaced: boolean;
  /** Full group bytes (the format of a full snapshot) by key group. */
  readonly groups: Map<number, Uint8Array>;
}

/**
 * A copy of one heap keyed state backend's state, kept as full snapshot groups (bytes) by the
 * snapshot thread: reset from a full snapshot, then moved forward by the delta of every later
 * snapshot (keyed-state-delta.ts's format). Its `snapshot()` is a full snapshot at the
 * position of the last delta, so the task thread only captures what changed and the full
 * snapshot is assembled here, off the task thread. Only the key groups a delta touches change,
 * merged as bytes (group-merge.ts) where their values allow, else decoded and packed again,
 * or replaced whole by a numeric table's columns group (packed here) or a whole group's bytes
 * (a table that turned into maps while its keys were not tracked), and timer groups sent
 * whole (whole-timer-groups.ts); the rest stay as they are.
 *
 * Pure: no threads, no I/O (snapshot-thread-main.ts hosts replicas in a worker).
 */
export class HeapReplica {
  private readonly states = new Map<string, ReplicaState>();
  private timers = new Map<number, Uint8Array>();
  /** The snapshot position the replica is at; undefined before the first reset. */
  position: number | undefined;

  /** Replaces everything with a full snapshot taken at `position`. */
  reset(position: number, full: UnpackedParts): void {
    this.states.clear();
    for (const st of full.states) this.states.set(st.name, { kind: st.kind, namespaced: st.namespaced, groups: new Map(st.groups) });
    this.timers = new Map(full.timers);
    this.position = position;
  }

  /** Moves the replica from `base` to `position` with a delta snapshot's states and timers. */
  apply(base: number, position: number, delta: UnpackedParts): void {
    assert(this.position === base, `a delta from position ${base} applies to a replica at ${base} (it is at ${this.position ?? 'no position'})`);
    assert(position > base, `snapshot positions increase (${base} then ${position})`);
    for (const st of delta.states) {
      let s = this.states.get(st.name);
      if (s === undefined) this.states.set(st.name, (s = { kind: st.kind, namespaced: st.namespaced, groups: new Map() }));
      assert(s.kind === st.kind && s.namespaced === st.namespaced, `state '${st.name}' keeps its kind in a replica`);
      for (const [kg, bytes] of st.groups) {
        if (isColumnsGroup(bytes)) {
          // A key group sent whole (columns of a numeric table, or a whole group's bytes).
          const full = fullGroupOfColumns(bytes);
          if (full === undefined) s.groups.delete(kg);
          else s.groups.set(kg, full);
          continue;
        }
        const previous = s.groups.get(kg);
        const merged = mergeDeltaGroupBytes(previous, bytes, s.namespaced);
        if (merged !== 'decode') {
          if (merged === undefined) s.groups.delete(kg);
          else s.groups.set(kg, merged);
          continue;
        }
        const group = previous === undefined ? new Map<unknown, unknown>() : decodeFullGroup(previous, s.namespaced);
        applyDeltaGroup(group, bytes, s.namespaced);
        if (group.size === 0) s.groups.delete(kg);
        else s.groups.set(kg, packGroup(group));
      }
    }
    for (const [kg, bytes] of delta.timers) {
      if (isWholeTimerGroup(bytes)) {
        const full = fullTimerGroupOfWhole(bytes);
        if (full === undefined) this.timers.delete(kg);
        else this.timers.set(kg, full);
        continue;
      }
      const parts = unpackGroup(bytes) as (Uint8Array | null | string)[];
      assert(parts[2] === TIMER_DELTA_BY_KEY, `the timers of key group ${kg} in a delta are per-key replacements`);
      const previous = this.timers.get(kg);
      const merged = mergeTimerDeltaBytes(previous, parts as (Uint8Array | null)[]);
      if (merged !== 'decode') {
        if (merged === undefined) this.timers.delete(kg);
        else this.timers.set(kg, merged);
        continue;
      }
      const folded: FoldedTimers = previous === undefined ? [new Map(), new Map()] : unfoldTimers(previous);
      applyTimerDelta(folded, parts as (Uint8Array | null)[]);
      const packed = packFoldedTimers(folded);
      if (packed === undefined) this.timers.delete(kg);
      else this.timers.set(kg, packed);
    }
    this.position = position;
  }

  /** The full snapshot at `position`: every state (also empty ones: their kind matters on restore) and the timers. */
  snapshot(): UnpackedParts {
    const states: StateSnapshot[] = [...this.states].map(([name, s]) => ({ name, kind: s.kind, namespaced: s.namespaced, groups: s.groups }));
    return { states, timers: this.timers };
  }
}
