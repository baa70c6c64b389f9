/**
 * Where a record holds something a checkpoint cannot store faithfully: the path of the first
 * function or symbol in it (msgpack drops them without a word), or undefined. Walks arrays,
 * Maps, Sets and the own enumerable properties of objects, as msgpack packs them; a cycle is
 * walked once.
 */
export function unstorablePart(value: unknown): string | undefined {
  // Records are checked one by one as they are captured: the common case (data, no cycles)
  // takes a walk that builds no paths and allocates nothing; the first doubt takes the slow one.
  return plainData(value, 0) ? undefined : findUnstorable(value, 'record', new Set());
}

/** Nesting beyond which the fast walk gives up (a cycle, or very deep data) and the slow walk decides. */
const FAST_WALK_MAX_DEPTH = 32;

/** True when `value` is certainly storable; false when it may not be (the slow walk decides). */
function plainData(value: unknown, depth: number): boolean {
  if (typeof value !== 'object') return typeof value !== 'function' && typeof value !== 'symbol';
  if (value === null || ArrayBuffer.isView(value) || value instanceof Date) return true;
  if (depth >= FAST_WALK_MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!plainData(value[i], depth + 1)) return false;
    return true;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) if (!plainData(k, depth + 1) || !plainData(v, depth + 1)) return false;
    return true;
  }
  if (value instanceof Set) {
    for (const v of value) if (!plainData(v, depth + 1)) return false;
    return true;
  }
  const o = value as Record<string, unknown>;
  for (const k in o) if (Object.hasOwn(o, k) && !plainData(o[k], depth + 1)) return false;
  return true;
}

function findUnstorable(value: unknown, path: string, seen: Set<object>): string | undefined {
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
      const found = findUnstorable(value[i], `${path}[${i}]`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const found = findUnstorable(k, `${path}<key>`, seen) ?? findUnstorable(v, `${path}.get(${String(k)})`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value instanceof Set) {
    for (const v of value) {
      const found = findUnstorable(v, `${path}<element>`, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    const found = findUnstorable((value as Record<string, unknown>)[k], `${path}.${k}`, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}
