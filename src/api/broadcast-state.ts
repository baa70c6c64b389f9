/**
 * Broadcast state (Flink's broadcast state pattern): a map that a stream broadcast to every
 * subtask of a two-input operator writes, and that the other input reads. Every subtask
 * keeps its own copy; since every subtask sees the same broadcast records, the copies agree
 * as long as `processBroadcastElement` does the same with each (no randomness, no clock).
 */

/** Names a broadcast state and types its keys and values (Flink: a MapStateDescriptor). */
export interface BroadcastStateDescriptor<K, V> {
  readonly kind: 'broadcast';
  readonly name: string;
  /** Types only: never set. */
  readonly types?: { readonly key: K; readonly value: V };
}

export function broadcastState<K, V>(name: string): BroadcastStateDescriptor<K, V> {
  if (typeof name !== 'string' || name === '') throw new TypeError('broadcastState(name) needs a non-empty name');
  return { kind: 'broadcast', name };
}

/** What the non-broadcast input sees: read only, so that the subtasks' copies stay the same. */
export interface ReadOnlyBroadcastState<K, V> {
  get(key: K): V | undefined;
  contains(key: K): boolean;
  entries(): IterableIterator<[K, V]>;
  keys(): IterableIterator<K>;
  readonly size: number;
}

/** What the broadcast input sees. Keys and values must be what checkpoints can store (msgpack values). */
export interface BroadcastState<K, V> extends ReadOnlyBroadcastState<K, V> {
  put(key: K, value: V): void;
  remove(key: K): void;
  clear(): void;
}
