import type { KeyGroupRange } from '../state/key-group.js';
import { stateHandleSizeBytes, type KeyGroupsStateHandle } from './snapshot-format.js';

/**
 * Reading a subset of the key groups of a keyed state handle, for restores with another
 * parallelism. Pure: byte ranges only, the caller reads the bytes.
 */

/** Byte range [startByte, endByte) of one key group in the handle's data. */
export interface KeyGroupSlice {
  readonly keyGroup: number;
  readonly startByte: number;
  readonly endByte: number;
}

/**
 * The slices of the key groups of `handle` that lie in `range`, in key-group order; empty
 * when they do not meet. A key group ends where the next one starts, the last at the end
 * of the data, so slices are always computed on the handle as written.
 */
export function keyGroupSlices(handle: KeyGroupsStateHandle, range: KeyGroupRange): KeyGroupSlice[] {
  const { startKeyGroup, endKeyGroup } = handle.keyGroupRange;
  const from = Math.max(startKeyGroup, range.startKeyGroup);
  const to = Math.min(endKeyGroup, range.endKeyGroup);
  const offsets = handle.keyGroupOffsetsBytes;
  const size = stateHandleSizeBytes(handle.data);
  const out: KeyGroupSlice[] = [];
  for (let kg = from; kg <= to; kg++) {
    const i = kg - startKeyGroup;
    const startByte = offsets[i]!;
    const endByte = i + 1 < offsets.length ? offsets[i + 1]! : size;
    out.push({ keyGroup: kg, startByte, endByte });
  }
  return out;
}
