import { isDeepStrictEqual } from 'node:util';
import { previewValue } from '../../util/preview.js';
import type { KeyedStateDescriptor, StateTtlConfig } from '../../api/state-descriptors.js';

/**
 * Why `requested` cannot be served by the state already registered under its name, or
 * undefined when it can. One name is one state: asking again (in open, or per record) with
 * the same kind and options returns it; another kind, default value or TTL would silently get
 * the first registration's (Flink refuses another kind as well, and keeps the first
 * descriptor's default). Functions (reduce, aggregate, serializers) are not compared: a
 * descriptor made per call has new closures each time.
 */
export function reregisteredStateMismatch(registered: KeyedStateDescriptor, requested: KeyedStateDescriptor): string | undefined {
  if (registered === requested) return undefined;
  const name = requested.name;
  if (registered.kind !== requested.kind) {
    return `state '${name}' was registered as ${registered.kind} state and is now requested as ${requested.kind} state: give the second state another name`;
  }
  if (registered.kind === 'value' && requested.kind === 'value' && !isDeepStrictEqual(registered.defaultValue, requested.defaultValue)) {
    return (
      `state '${name}' was registered with the default value ${shown(registered.defaultValue)} and is now requested with ${shown(requested.defaultValue)}: ` +
      'one name is one state, so the second default would be ignored; use the same default, or give the second state another name'
    );
  }
  if (!sameTtl(registered.ttl, requested.ttl)) {
    return (
      `state '${name}' was registered with the TTL ${shownTtl(registered.ttl)} and is now requested with ${shownTtl(requested.ttl)}: ` +
      'one name is one state, so the second TTL would be ignored; use the same ttl option, or give the second state another name'
    );
  }
  return undefined;
}

function sameTtl(a: StateTtlConfig | undefined, b: StateTtlConfig | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.ttlMs === b.ttlMs && (a.updateType ?? 'OnCreateAndWrite') === (b.updateType ?? 'OnCreateAndWrite') && (a.stateVisibility ?? 'NeverReturnExpired') === (b.stateVisibility ?? 'NeverReturnExpired');
}

function shownTtl(ttl: StateTtlConfig | undefined): string {
  return ttl === undefined ? 'none' : JSON.stringify(ttl);
}

function shown(v: unknown): string {
  if (v === undefined) return 'none';
  return typeof v === 'bigint' ? `${v}n` : previewValue(v, 60);
}
