import type { KeyedStateDescriptor } from '../../api/state-descriptors.js';
import { MsgpackSerializer, defaultSerializer, type TypeSerializer } from './serializer.js';
import type { TtlValue } from './ttl.js';

/**
 * Converts what a heap state table stores for one (key, namespace) into a msgpack-ready
 * form and back. Values of the default serializer pass through (the whole key group is then
 * packed at once, which is fast); values of a declared serializer become its bytes. TTL
 * wrappers keep their timestamps.
 */
export interface StateCodec {
  /** Encoding is the identity: stored values are packed as they are. */
  readonly passthrough?: boolean;
  encode(stored: unknown): unknown;
  decode(encoded: unknown): unknown;
}

const identity: StateCodec = { passthrough: true, encode: (s) => s, decode: (e) => e };

export function isDefaultSerializer(s: TypeSerializer<unknown> | undefined): boolean {
  return s === undefined || s === defaultSerializer || s instanceof MsgpackSerializer;
}

export function stateCodec(d: Pick<KeyedStateDescriptor, 'kind' | 'serializer' | 'ttl'>): StateCodec {
  const s = d.serializer as TypeSerializer<unknown> | undefined;
  const ttl = d.ttl !== undefined;
  if (isDefaultSerializer(s)) return identity;
  const ser = s!;
  const one = (v: unknown): unknown => (ttl ? { v: ser.encode((v as TtlValue<unknown>).v), t: (v as TtlValue<unknown>).t } : ser.encode(v));
  const unOne = (e: unknown): unknown =>
    ttl ? { v: ser.decode((e as TtlValue<Uint8Array>).v), t: (e as TtlValue<Uint8Array>).t } : ser.decode(e as Uint8Array);
  switch (d.kind) {
    case 'list':
      return { encode: (s) => (s as unknown[]).map(one), decode: (e) => (e as unknown[]).map(unOne) };
    case 'map':
      return {
        encode: (s) => new Map([...(s as Map<unknown, unknown>)].map(([k, v]) => [k, one(v)])),
        decode: (e) => new Map([...(e as Map<unknown, unknown>)].map(([k, v]) => [k, unOne(v)])),
      };
    default:
      return { encode: one, decode: unOne };
  }
}
