import { describeKey, type KeyType } from './key-group.js';
import type { RestoredChains } from './keyed-state-delta.js';
import { decodeKey, unpackGroup } from './keyed-state-snapshot.js';

/**
 * The types of the keys of restored keyed state, as a mask of `keyTypeBit`s (0: unknown, no
 * state). A job whose key selector now returns another type (`'k3'` where the snapshot has
 * `3`) would read none of its restored state and keep it for ever under keys no record has;
 * Flink refuses such a restore (the key serializer is incompatible). The types come from the
 * keys of a few full key groups of each state, decoded here (a few groups: the backend
 * decodes or copies them all anyway).
 */
export function restoredKeyTypes(chains: RestoredChains, groupsPerState = 8): number {
  let mask = 0;
  for (const s of chains.states.values()) {
    let sampled = 0;
    for (const chain of s.groups.values()) {
      if (chain.full === undefined) continue;
      const packed = unpackGroup(chain.full) as Map<unknown, unknown> | [unknown[], unknown[]];
      const keys: Iterable<unknown> = Array.isArray(packed) ? packed[0] : packed.keys();
      for (const k of keys) mask |= keyTypeBit(decodeKey(k));
      if (++sampled === groupsPerState) break;
    }
  }
  return mask;
}

/** One bit per key type: string, number, bigint, boolean. */
export function keyTypeBit(key: KeyType): number {
  return typeof key === 'string' ? 1 : typeof key === 'number' ? 2 : typeof key === 'bigint' ? 4 : 8;
}

const TYPE_NAMES = ['strings', 'numbers', 'bigints', 'booleans'];

/** The error for a key whose type is not among the restored keys' `mask`. */
export function restoredKeyTypeMismatch(mask: number, key: KeyType): Error {
  const had = TYPE_NAMES.filter((_, i) => (mask & (1 << i)) !== 0).join(' and ');
  return new Error(
    `the keyed state restored for this operator has keys that are ${had}, and the job now gives the key ${describeKey(key)} (${typeof key}): ` +
      `no restored state would ever be read again (1 and '1' are different keys; Flink refuses a restore whose key type changed). ` +
      'Make the key selector return the type it returned before, or start the operator without its state: give it a new uid and run with --allow-non-restored-state',
  );
}
