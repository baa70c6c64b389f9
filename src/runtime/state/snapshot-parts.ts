import { assert } from '../../util/assert.js';
import { isColumnsGroup } from './delta-group-writer.js';
import type { StateSnapshot } from './keyed-state-snapshot.js';

/**
 * The states and timers of a keyed state snapshot (full or delta) as they cross between the
 * task thread and the snapshot thread: every group's bytes copied into one buffer that is
 * transferred, not cloned (a group's bytes are often a view into a much larger buffer, which a
 * structured clone would copy whole). Groups are `[keyGroup, offset, length]` triples.
 */
export interface SnapshotParts {
  readonly buffer: ArrayBuffer;
  readonly states: readonly {
    readonly name: string;
    readonly kind: string;
    readonly namespaced: boolean;
    readonly groups: readonly number[];
    /** Groups moved in a buffer of their own: `[keyGroup, index into own]` pairs. */
    readonly ownGroups?: readonly number[];
  }[];
  readonly timers: readonly number[];
  /** Buffers transferred as they are, each one group's bytes whole. */
  readonly own?: readonly ArrayBuffer[];
}

/** The buffers to transfer with the parts. */
export function transferListOf(parts: SnapshotParts): ArrayBuffer[] {
  return [parts.buffer, ...(parts.own ?? [])];
}

export interface UnpackedParts {
  readonly states: StateSnapshot[];
  readonly timers: Map<number, Uint8Array>;
}

/**
 * Copies the groups of `states` and `timers` into one new buffer. With `moveColumns`, a
 * columns group (a numeric table's group, delta-group-writer.ts) that fills its buffer is
 * moved instead of copied: it is the largest part of a delta for the snapshot thread, and its
 * buffer is its own (the caller must not read those groups afterwards: they are detached).
 */
export function toSnapshotParts(states: readonly StateSnapshot[], timers: ReadonlyMap<number, Uint8Array>, moveColumns = false): SnapshotParts {
  const movable = (bytes: Uint8Array): boolean => moveColumns && isColumnsGroup(bytes) && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  let total = 0;
  for (const st of states) for (const b of st.groups.values()) if (!movable(b)) total += b.length;
  for (const b of timers.values()) total += b.length;
  const buffer = new ArrayBuffer(total);
  const out = new Uint8Array(buffer);
  let offset = 0;
  const place = (triples: number[], kg: number, bytes: Uint8Array): void => {
    out.set(bytes, offset);
    triples.push(kg, offset, bytes.length);
    offset += bytes.length;
  };
  const own: ArrayBuffer[] = [];
  const partsStates = states.map((st) => {
    const groups: number[] = [];
    const ownGroups: number[] = [];
    for (const [kg, bytes] of st.groups) {
      if (!movable(bytes)) place(groups, kg, bytes);
      else {
        ownGroups.push(kg, own.length);
        own.push(bytes.buffer as ArrayBuffer);
      }
    }
    return { name: st.name, kind: st.kind, namespaced: st.namespaced, groups, ...(ownGroups.length > 0 ? { ownGroups } : {}) };
  });
  const partsTimers: number[] = [];
  for (const [kg, bytes] of timers) place(partsTimers, kg, bytes);
  assert(offset === total, 'every group was copied into the transfer buffer');
  return { buffer, states: partsStates, timers: partsTimers, ...(own.length > 0 ? { own } : {}) };
}

/** Views into the parts' buffer (nothing is copied). */
export function fromSnapshotParts(parts: SnapshotParts): UnpackedParts {
  const view = (triples: readonly number[]): Map<number, Uint8Array> => {
    assert(triples.length % 3 === 0, 'groups are [keyGroup, offset, length] triples');
    const groups = new Map<number, Uint8Array>();
    for (let i = 0; i < triples.length; i += 3) {
      const offset = triples[i + 1]!;
      const length = triples[i + 2]!;
      assert(offset >= 0 && offset + length <= parts.buffer.byteLength, `group bytes [${offset}, ${offset + length}) inside the transfer buffer of ${parts.buffer.byteLength} bytes`);
      groups.set(triples[i]!, Buffer.from(parts.buffer, offset, length));
    }
    return groups;
  };
  const withOwn = (groups: Map<number, Uint8Array>, ownGroups: readonly number[] | undefined): Map<number, Uint8Array> => {
    for (let i = 0; ownGroups !== undefined && i < ownGroups.length; i += 2) {
      const buffer = parts.own?.[ownGroups[i + 1]!];
      assert(buffer !== undefined, `own buffer ${ownGroups[i + 1]} of key group ${ownGroups[i]} was transferred`);
      groups.set(ownGroups[i]!, new Uint8Array(buffer));
    }
    return groups;
  };
  return {
    states: parts.states.map((st) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups: withOwn(view(st.groups), st.ownGroups) })),
    timers: view(parts.timers),
  };
}
