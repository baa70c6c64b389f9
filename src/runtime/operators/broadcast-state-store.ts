import type { BroadcastState, BroadcastStateDescriptor } from '../../api/broadcast-state.js';
import type { ListState } from '../../api/state-descriptors.js';
import { operatorListState } from '../../api/state-descriptors.js';
import type { OperatorRuntime } from '../task/operator-runtime.js';
import { serializerOr } from '../state/serializer.js';
import { objectMapKeyProblem } from '../state/map-key.js';

/** What one subtask's copy of a broadcast state is in a checkpoint: the writer, its parallelism, the entries. */
interface StoredCopy {
  readonly s: number;
  readonly p: number;
  readonly e: [unknown, unknown][];
}

const STATE_PREFIX = '_broadcast-state:';

class MapBroadcastState<K, V> implements BroadcastState<K, V> {
  readonly map: Map<K, V>;
  constructor(
    entries: Iterable<[K, V]>,
    private readonly check: (key: K, value: V) => void,
  ) {
    this.map = new Map(entries);
  }
  get(key: K): V | undefined {
    return this.map.get(key);
  }
  contains(key: K): boolean {
    return this.map.has(key);
  }
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }
  keys(): IterableIterator<K> {
    return this.map.keys();
  }
  get size(): number {
    return this.map.size;
  }
  put(key: K, value: V): void {
    this.check(key, value);
    this.map.set(key, value);
  }
  remove(key: K): void {
    this.map.delete(key);
  }
  clear(): void {
    this.map.clear();
  }
}

/** The read-only face of a broadcast state: its reads, and an error naming the rule for a write. */
function readOnly<K, V>(state: MapBroadcastState<K, V>, name: string): BroadcastState<K, V> {
  const refuse = (): never => {
    throw new Error(
      `broadcast state '${name}' is read-only in processElement: only processBroadcastElement writes it, so that every subtask's copy stays the same`,
    );
  };
  return {
    get: (k) => state.get(k),
    contains: (k) => state.contains(k),
    entries: () => state.entries(),
    keys: () => state.keys(),
    get size() {
      return state.size;
    },
    put: refuse,
    remove: refuse,
    clear: refuse,
  };
}

/**
 * The broadcast states of one operator subtask. Each is kept in a union operator list state:
 * at a checkpoint every subtask writes its own copy (one element: its index, the parallelism
 * and the entries); on a restore every subtask gets all copies and takes the one of the old
 * subtask `index % old parallelism`, as Flink spreads the copies when the parallelism changes.
 */
export class BroadcastStateStore {
  private readonly states = new Map<string, { readonly state: MapBroadcastState<unknown, unknown>; readonly readOnly: BroadcastState<unknown, unknown>; readonly stored: ListState<StoredCopy> }>();

  constructor(
    private readonly rt: OperatorRuntime,
    declared: readonly BroadcastStateDescriptor<unknown, unknown>[],
  ) {
    for (const d of declared) this.open(d);
  }

  private open(d: BroadcastStateDescriptor<unknown, unknown>): void {
    const stored = this.rt.operatorState.getUnionListState(operatorListState<StoredCopy>(`${STATE_PREFIX}${d.name}`));
    const copies = stored.get();
    const oldParallelism = copies[0]?.p ?? 1;
    const own = copies.find((c) => c.s === this.rt.subtaskIndex % oldParallelism) ?? copies[0];
    const serializer = serializerOr(undefined);
    const state = new MapBroadcastState<unknown, unknown>(own?.e ?? [], (k, v) => {
      try {
        serializer.check(k);
        serializer.check(v);
      } catch (e) {
        throw new Error(`cannot write to broadcast state '${d.name}': ${(e as Error).message}`, { cause: e });
      }
      if (typeof k === 'object' && k !== null) throw new Error(`cannot write to broadcast state '${d.name}': ${objectMapKeyProblem(k)}`);
    });
    this.states.set(d.name, { state, readOnly: readOnly(state, d.name), stored });
  }

  get<K, V>(descriptor: BroadcastStateDescriptor<K, V>, writable: boolean): BroadcastState<K, V> {
    const s = this.states.get(descriptor.name);
    if (s === undefined) {
      throw new Error(
        `broadcast state '${descriptor.name}' was not declared on the broadcast stream of operator '${this.rt.name}': ` +
          `pass its descriptor to broadcast(...), e.g. rules.broadcast(broadcastState('${descriptor.name}'))`,
      );
    }
    return (writable ? s.state : s.readOnly) as BroadcastState<K, V>;
  }

  /** At the barrier: every state's copy into its operator list state. */
  snapshot(): void {
    for (const { state, stored } of this.states.values()) {
      stored.update([{ s: this.rt.subtaskIndex, p: this.rt.parallelism, e: [...state.map] }]);
    }
  }
}
