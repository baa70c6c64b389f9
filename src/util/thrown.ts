/**
 * User code may throw anything: a string, undefined, an object without a prototype, an Error
 * whose `message` getter throws. The runtime turns such values into Errors before it reports
 * them, without calling anything on the value that could throw again.
 */

/** A short description of a thrown value that is not an Error (or of an Error's message), never throwing. */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) {
    try {
      return String(thrown.message);
    } catch {
      return `an Error (${safeTag(thrown)}) whose message cannot be read`;
    }
  }
  switch (typeof thrown) {
    case 'string':
      return thrown;
    case 'undefined':
      return 'undefined';
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(thrown);
    case 'symbol':
      return thrown.toString();
    case 'function':
      return `a function (${safeName(thrown)})`;
    default: {
      if (thrown === null) return 'null';
      try {
        const json = JSON.stringify(thrown);
        if (json !== undefined) return json.length > 200 ? `${json.slice(0, 200)}...` : json;
      } catch {
        // cyclic, or a toJSON that throws
      }
      return safeTag(thrown as object);
    }
  }
}

/** The thrown value as an Error: an Error as it is; anything else wrapped ("a non-Error value was thrown: ..."), the value kept as the cause. */
export function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(`a non-Error value was thrown: ${describeThrown(thrown)} (throw an Error to get a stack trace)`, { cause: thrown });
}

function safeTag(v: object): string {
  try {
    return Object.prototype.toString.call(v);
  } catch {
    return '[object]';
  }
}

function safeName(f: Function): string {
  try {
    return f.name === '' ? 'anonymous' : f.name;
  } catch {
    return 'anonymous';
  }
}
