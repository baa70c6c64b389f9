import { assert } from '../../util/assert.js';
import type { StateSnapshot } from './keyed-state-snapshot.js';

/**
 * The states and timers of a keyed state snapshot (full or delta) as they cross between the
 * task thread and the snapshot thread: every group's bytes copied into one buffer that is
 * transferred, not cloned (a group's bytes are often a view into a much larger buffer, which a
 * structured clone would copy whole). Groups are `[keyGroup, offset, length]` triples.
 */
export interface SnapshotParts {
  readonly buffer: ArrayBuffer;
  readonly states: readonly { readonly name: string; readonly kind: string; readonly namespaced: boolean; readonly groups: readonly number[] }[];
  readonly timers: readonly number[];
}

export interface UnpackedParts {
  readonly states: StateSnapshot[];
  readonly timers: Map<number, Uint8Array>;
}

/** Copies the groups of `states` and `timers` into one new buffer. */
export function toSnapshotParts(states: readonly StateSnapshot[], timers: ReadonlyMap<number, Uint8Array>): SnapshotParts {
  let total = 0;
  for (const st of states) for (const b of st.groups.values()) total += b.length;
  for (const b of timers.values()) total += b.length;
  const buffer = new ArrayBuffer(total);
  const out = new Uint8Array(buffer);
  let offset = 0;
  const place = (triples: number[], kg: number, bytes: Uint8Array): void => {
    out.set(bytes, offset);
    triples.push(kg, offset, bytes.length);
    offset += bytes.length;
  };
  const partsStates = states.map((st) => {
    const groups: number[] = [];
    for (const [kg, bytes] of st.groups) place(groups, kg, bytes);
    return { name: st.name, kind: st.kind, namespaced: st.namespaced, groups };
  });
  const partsTimers: number[] = [];
  for (const [kg, bytes] of timers) place(partsTimers, kg, bytes);
  assert(offset === total, 'every group was copied into the transfer buffer');
  return { buffer, states: partsStates, timers: partsTimers };
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
  return {
    states: parts.states.map((st) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups: view(st.groups) })),
    timers: view(parts.timers),
  };
}
