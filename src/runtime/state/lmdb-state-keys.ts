import type { KeyType } from './key-group.js';
import { createStatePackr } from './serializer.js';

/**
 * Layout of an entry's key in the on-disk store: key group first, so a key-group range is one
 * contiguous key range (cut on rescale, scanned per group in a snapshot), then the state id,
 * then the record key and (namespaced states) the namespace.
 *
 *   [key group: u16 BE][state id: u16 BE][msgpack(key)][msgpack(namespace)]?
 *
 * msgpack is a prefix-free code, so the entries of one key are contiguous and a key's bytes
 * are never a prefix of another key's; -0 is written as 0 (they are one Map key on the heap).
 */
export const STATE_KEY_PREFIX_BYTES = 4;
/** The largest key LMDB (as built by lmdb-js) accepts. */
export const STATE_KEY_BYTES_MAX = 1978;
/** State ids are u16; the last one is kept free so `prefix(kg, id + 1)` always exists. */
export const STATE_ID_MAX = 0xfffe;

const packr = createStatePackr();

export function stateKeyPrefix(keyGroup: number, stateId: number): Buffer {
  const b = Buffer.allocUnsafe(STATE_KEY_PREFIX_BYTES);
  b.writeUInt16BE(keyGroup, 0);
  b.writeUInt16BE(stateId, 2);
  return b;
}

export function encodeStateKey(keyGroup: number, stateId: number, key: KeyType, namespace: number | undefined): Buffer {
  const k = packr.pack(Object.is(key, -0) ? 0 : key);
  const ns = namespace === undefined ? undefined : packr.pack(Object.is(namespace, -0) ? 0 : namespace);
  const length = STATE_KEY_PREFIX_BYTES + k.length + (ns === undefined ? 0 : ns.length);
  if (length > STATE_KEY_BYTES_MAX) {
    throw new Error(
      `a state key of ${length} bytes is longer than the lmdb state backend accepts (${STATE_KEY_BYTES_MAX}): ` +
        `use shorter keys (a hash of the long value, for example) or the hashmap backend`,
    );
  }
  const b = Buffer.allocUnsafe(length);
  b.writeUInt16BE(keyGroup, 0);
  b.writeUInt16BE(stateId, 2);
  k.copy(b, STATE_KEY_PREFIX_BYTES);
  if (ns !== undefined) ns.copy(b, STATE_KEY_PREFIX_BYTES + k.length);
  return b;
}

/** The first key after every key that starts with `prefix` (for a range over a key's namespaces). */
export function prefixEnd(prefix: Uint8Array): Buffer {
  let n = prefix.length;
  while (n > 0 && prefix[n - 1] === 0xff) n--;
  if (n === 0) throw new Error('a prefix of only 0xff bytes has no end');
  const end = Buffer.from(prefix.subarray(0, n));
  end[n - 1]!++;
  return end;
}

/** The record key and namespace (0 when not namespaced) of a stored entry's key. */
export function decodeStateKey(bytes: Uint8Array, namespaced: boolean): [KeyType, number] {
  const rest = bytes.subarray(STATE_KEY_PREFIX_BYTES);
  if (!namespaced) return [packr.unpack(rest) as KeyType, 0];
  const [key, ns] = packr.unpackMultiple(rest) as [KeyType, number];
  return [key, ns];
}

export function packStoredValue(encoded: unknown): Buffer {
  return packr.pack(encoded);
}

export function unpackStoredValue(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}
