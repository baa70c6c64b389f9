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
 * Runs on every state write, so it allocates nothing for a value that passes (the path in
 * the message is built only on the way out of a failure).
 */
export function checkMsgpackValue(value: unknown, path = 'value'): void {
  if (typeof value !== 'object' || value === null) {
    const problem = scalarProblem(value);
    if (problem !== undefined) throw new SerializationError(`${path}${problem}`);
    return;
  }
  if (Array.isArray(value) ? isFlatArray(value) : isFlatPlainObject(value)) return;
  const failure = objectProblem(value, []);
  if (failure !== undefined) throw new SerializationError(`${path}${failure.path.reverse().join('')}${failure.problem}`);
}

/**
 * The common case, checked without the walk's bookkeeping: a plain object whose fields are
 * all scalars msgpack carries (an aggregate, a result record). Anything else (a nested
 * object, a function, a class instance) is left to the walk, which names the problem.
 */
function isFlatPlainObject(obj: object): boolean {
  if (Object.getPrototypeOf(obj) !== Object.prototype) return false;
  for (const k in obj) if (!isCarriedScalar((obj as Record<string, unknown>)[k])) return false;
  return true;
}

/** A number, string, boolean, undefined, bigint or null: what the flat checks accept without the walk. */
function isCarriedScalar(v: unknown): boolean {
  // Comparisons with `typeof` rather than a switch on it, which calls the Typeof builtin.
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || v === undefined || v === null || typeof v === 'bigint';
}

/** The same for an array of scalars (a tuple, as `[word, count]`). */
function isFlatArray(a: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (!isCarriedScalar(a[i])) return false;
  return true;
}

/** What follows the path in the message, for a value that is not an object; undefined when fine. */
function scalarProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'function':
      return ' is a function, which state cannot hold; store plain data (numbers, strings, arrays, plain objects)';
    case 'symbol':
      return ' is a symbol, which state cannot hold';
    default:
      return undefined;
  }
}

interface Failure {
  /** Path segments from the failing value up (reversed when the message is built). */
  readonly path: string[];
  readonly problem: string;
}

function valueProblem(value: unknown, ancestors: object[]): Failure | undefined {
  if (typeof value !== 'object' || value === null) {
    const problem = scalarProblem(value);
    return problem === undefined ? undefined : { path: [], problem };
  }
  return objectProblem(value, ancestors);
}

function objectProblem(obj: object, ancestors: object[]): Failure | undefined {
  if (ancestors.includes(obj)) return { path: [], problem: ' refers back to itself (a cycle); state values must be trees' };
  if (obj instanceof Date || obj instanceof Uint8Array) return undefined;
  // A subclass of Array, Map or Set would come back from a snapshot as its base class (a Map
  // subclass as an empty object): refused as other class instances are.
  const proto = Object.getPrototypeOf(obj) as object | null;
  if ((obj instanceof Map && proto !== Map.prototype) || (obj instanceof Set && proto !== Set.prototype) || (Array.isArray(obj) && proto !== Array.prototype)) {
    const name = (proto as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'unknown';
    return { path: [], problem: ` is an instance of class ${name} (a subclass); state holds plain Arrays, Maps and Sets only (or declare a serializer for this state)` };
  }
  ancestors.push(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const f = valueProblem(obj[i], ancestors);
        if (f !== undefined) return at(f, `[${i}]`);
      }
      return undefined;
    }
    if (obj instanceof Map) {
      for (const [k, v] of obj) {
        const fk = valueProblem(k, ancestors);
        if (fk !== undefined) return at(fk, '<key>');
        const fv = valueProblem(v, ancestors);
        if (fv !== undefined) return at(fv, `.get(${String(k)})`);
      }
      return undefined;
    }
    if (obj instanceof Set) {
      for (const v of obj) {
        const f = valueProblem(v, ancestors);
        if (f !== undefined) return at(f, '<element>');
      }
      return undefined;
    }
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      return { path: [], problem: ` is an instance of class ${name}; state holds plain objects only (or declare a serializer for this state)` };
    }
    for (const k in obj) {
      if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
      const f = valueProblem((obj as Record<string, unknown>)[k], ancestors);
      if (f !== undefined) return at(f, `.${k}`);
    }
    return undefined;
  } finally {
    ancestors.pop();
  }
}

function at(f: Failure, segment: string): Failure {
  f.path.push(segment);
  return f;
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
