/**
 * Where a record holds something a checkpoint cannot store faithfully: the path of the first
 * function or symbol in it (msgpack drops them without a word), or undefined. Walks arrays,
 * Maps, Sets and the own enumerable properties of objects, as msgpack packs them; a cycle is
 * walked once.
 */
export function unstorablePart(value: unknown, path = 'record', seen: Set<object> = new Set()): string | undefined {
  switch (typeof value) {
    case 'function':
      return `${path} is a function`;
    case 'symbol':
      return `${path} is a symbol`;
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null || seen.has(value) || ArrayBuffer.isView(value) || value instanceof Date) return undefined;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorablePart(value[i], `${path}[${i}]`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const found = unstorablePart(k, `${path}<key>`, seen) ?? unstorablePart(v, `${path}.get(${String(k)})`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value instanceof Set) {
    for (const v of value) {
      const found = unstorablePart(v, `${path}<element>`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    const found = unstorablePart((value as Record<string, unknown>)[k], `${path}.${k}`, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}
