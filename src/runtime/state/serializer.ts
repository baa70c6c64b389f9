import { Packr } from 'msgpackr';

/**
 * Turns state values into bytes for snapshots. `check` runs when a value is written to
 * state, so a value that cannot be serialized fails at the write that introduced it.
 */
export interface TypeSerializer<T> {
  readonly id: string;
  encode(value: T): Uint8Array;
  decode(bytes: Uint8Array): T;
  /** Throws a SerializationError naming the offending part of the value. */
  check(value: T): void;
}

export class SerializationError extends Error {
  override readonly name = 'SerializationError';
}

/**
 * The msgpack settings for state: plain objects stay objects (as msgpackr records), Maps stay
 * Maps, bigints stay bigints (any size) and numbers stay numbers, Sets and Dates survive
 * (moreTypes). No structuredClone: state values are trees (cycles are refused when written),
 * and reference tracking made packing three times slower. Every message is self-contained.
 */
export function createStatePackr(): Packr {
  return new Packr({ useRecords: true, mapsAsObjects: false, moreTypes: true, useBigIntExtension: true, int64AsType: 'bigint' });
}

const packr = createStatePackr();

/**
 * Walks a value and throws for anything msgpack cannot carry faithfully: functions,
 * symbols, class instances other than Date/Map/Set/typed arrays, cycles, undefined in arrays.
 */
export function checkMsgpackValue(value: unknown, path = 'value', seen: Set<object> = new Set()): void {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
      return;
    case 'undefined':
      return;
    case 'function':
      throw new SerializationError(`${path} is a function, which state cannot hold; store plain data (numbers, strings, arrays, plain objects)`);
    case 'symbol':
      throw new SerializationError(`${path} is a symbol, which state cannot hold`);
  }
  if (value === null) return;
  const obj = value as object;
  if (seen.has(obj)) throw new SerializationError(`${path} refers back to itself (a cycle); state values must be trees`);
  if (obj instanceof Date || obj instanceof Uint8Array) return;
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) checkMsgpackValue(obj[i], `${path}[${i}]`, seen);
      return;
    }
    if (obj instanceof Map) {
      for (const [k, v] of obj) {
        checkMsgpackValue(k, `${path}<key>`, seen);
        checkMsgpackValue(v, `${path}.get(${String(k)})`, seen);
      }
      return;
    }
    if (obj instanceof Set) {
      for (const v of obj) checkMsgpackValue(v, `${path}<element>`, seen);
      return;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      throw new SerializationError(
        `${path} is an instance of class ${name}; state holds plain objects only (or declare a serializer for this state)`,
      );
    }
    for (const k of Object.keys(obj)) checkMsgpackValue((obj as Record<string, unknown>)[k], `${path}.${k}`, seen);
  } finally {
    seen.delete(obj);
  }
}

/** The default serializer: msgpack (msgpackr) for plain data. */
export class MsgpackSerializer<T> implements TypeSerializer<T> {
  readonly id = 'msgpack';
  encode(value: T): Uint8Array {
    return packr.pack(value);
  }
  decode(bytes: Uint8Array): T {
    return packr.unpack(bytes) as T;
  }
  check(value: T): void {
    const t = typeof value;
    if (t === 'number' || t === 'string' || t === 'boolean' || value === null) return;
    checkMsgpackValue(value);
  }
}

export const defaultSerializer: TypeSerializer<never> = new MsgpackSerializer<never>();

export function serializerOr<T>(s: TypeSerializer<T> | undefined): TypeSerializer<T> {
  return s ?? (defaultSerializer as TypeSerializer<T>);
}
