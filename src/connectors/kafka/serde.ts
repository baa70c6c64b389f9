import { describeValue, didYouMean } from './kafka-options.js';

/**
 * Turning record parts into bytes and back. A serializer may return `undefined` (no key; or,
 * for a value, a tombstone); a deserializer gets `undefined` for a missing key or value.
 */
export type Serializer<T> = (value: T) => Buffer | undefined;
export type Deserializer<T> = (bytes: Buffer | undefined) => T;

/** Built-in formats by name, or a function. */
export type SerializerSpec<T> = 'string' | 'json' | 'bytes' | Serializer<T>;
export type DeserializerSpec<T> = 'string' | 'json' | 'bytes' | Deserializer<T>;

export const stringSerializer: Serializer<string> = (v) => (v === undefined || v === null ? undefined : Buffer.from(String(v), 'utf8'));
export const jsonSerializer: Serializer<unknown> = (v) => (v === undefined ? undefined : Buffer.from(JSON.stringify(v), 'utf8'));
export const bytesSerializer: Serializer<Uint8Array> = (v) =>
  v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export const stringDeserializer: Deserializer<string | undefined> = (b) => b?.toString('utf8');
export const jsonDeserializer: Deserializer<unknown> = (b) => (b === undefined ? undefined : JSON.parse(b.toString('utf8')));
export const bytesDeserializer: Deserializer<Buffer | undefined> = (b) => b;

/** `owner` and `option` name the option in the error for an unknown name ('kafka sink', 'valueSerializer'). */
export function resolveSerializer<T>(spec: SerializerSpec<T> | undefined, fallback: 'string' | 'json', owner = 'kafka', option = 'serializer'): Serializer<T> {
  const s = spec ?? fallback;
  switch (s) {
    case 'string':
      return stringSerializer as Serializer<T>;
    case 'json':
      return jsonSerializer as Serializer<T>;
    case 'bytes':
      return bytesSerializer as Serializer<T>;
    default:
      if (typeof s !== 'function') throw unknownFormat(owner, option, s, '(value) => Buffer | undefined');
      return s;
  }
}

export function resolveDeserializer<T>(spec: DeserializerSpec<T> | undefined, fallback: 'string' | 'json', owner = 'kafka', option = 'deserializer'): Deserializer<T> {
  const s = spec ?? fallback;
  switch (s) {
    case 'string':
      return stringDeserializer as Deserializer<T>;
    case 'json':
      return jsonDeserializer as Deserializer<T>;
    case 'bytes':
      return bytesDeserializer as Deserializer<T>;
    default:
      if (typeof s !== 'function') throw unknownFormat(owner, option, s, '(bytes: Buffer | undefined) => T');
      return s;
  }
}

const FORMATS = ['string', 'json', 'bytes'];

function unknownFormat(owner: string, option: string, value: unknown, shape: string): Error {
  return new Error(`${owner}: ${option} must be 'string', 'json', 'bytes' or a function ${shape}, got ${describeValue(value)}${didYouMean(value, FORMATS)}`);
}
