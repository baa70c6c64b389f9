import type { StateTtlConfig } from '../../api/state-descriptors.js';

/** A value stored with the processing time of its last access. */
export interface TtlValue<T> {
  readonly v: T;
  readonly t: number;
}

export interface ResolvedTtl {
  readonly ttlMs: number;
  readonly refreshOnRead: boolean;
  readonly returnExpired: boolean;
}

export function resolveTtl(ttl: StateTtlConfig | undefined): ResolvedTtl | undefined {
  if (ttl === undefined) return undefined;
  if (!(ttl.ttlMs > 0)) throw new RangeError(`state TTL must be > 0 ms, got ${ttl.ttlMs}`);
  return {
    ttlMs: ttl.ttlMs,
    refreshOnRead: ttl.updateType === 'OnReadAndWrite',
    returnExpired: ttl.stateVisibility === 'ReturnExpiredIfNotCleanedUp',
  };
}

export function isExpired(ttl: ResolvedTtl, value: TtlValue<unknown>, nowMs: number): boolean {
  return value.t + ttl.ttlMs <= nowMs;
}

/**
 * The kind a snapshot records for a state: its kind, with ' with TTL' when its values carry
 * their last access time. A state cannot take on or drop a TTL across a restore (its stored
 * values have another shape), as in Flink, where that is a StateMigrationException.
 */
export function storedStateKind(descriptor: { readonly kind: string; readonly ttl?: StateTtlConfig | undefined }): string {
  return descriptor.ttl === undefined ? descriptor.kind : `${descriptor.kind}${TTL_SUFFIX}`;
}

const TTL_SUFFIX = ' with TTL';

/**
 * Why a restored state cannot be registered with `descriptor`, or undefined when it can: a
 * different kind, namespacing, or TTL setting.
 */
export function restoredStateMismatch(
  restored: { readonly kind: string; readonly namespaced: boolean },
  descriptor: { readonly name: string; readonly kind: string; readonly ttl?: StateTtlConfig | undefined },
  namespaced: boolean,
): string | undefined {
  const kind = storedStateKind(descriptor);
  if (restored.kind === kind && restored.namespaced === namespaced) return undefined;
  const restoredTtl = restored.kind.endsWith(TTL_SUFFIX);
  const restoredBase = restoredTtl ? restored.kind.slice(0, -TTL_SUFFIX.length) : restored.kind;
  if (restoredBase === descriptor.kind && restored.namespaced === namespaced) {
    return (
      `state '${descriptor.name}' was checkpointed ${restoredTtl ? 'with' : 'without'} a TTL and is now registered ${restoredTtl ? 'without' : 'with'} one: ` +
      `its stored values ${restoredTtl ? 'carry' : 'lack'} the last access time a TTL needs, so it cannot be restored (Flink: StateMigrationException). ` +
      `${restoredTtl ? 'Keep its ttl option' : 'Register it without the ttl option, as before,'} to restore it, or give the state another name to start it empty`
    );
  }
  return (
    `state '${descriptor.name}' was restored as ${restored.kind} state and is now registered as ${kind} state: ` +
    'a state keeps its kind across job versions (give the new state another name)'
  );
}
