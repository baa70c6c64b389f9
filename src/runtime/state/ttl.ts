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
