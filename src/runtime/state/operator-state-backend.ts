import type { OperatorStateStore } from '../../api/functions.js';
import type { ListState, OperatorListStateDescriptor } from '../../api/state-descriptors.js';
import { serializerOr } from './serializer.js';

/** How an operator list state is redistributed when the parallelism changes. */
export type RedistributionMode = 'split' | 'union';

class OperatorListState<T> implements ListState<T> {
  values: T[] = [];
  constructor(
    readonly name: string,
    readonly mode: RedistributionMode,
    private readonly check: (v: T) => void,
  ) {}
  get(): readonly T[] {
    return this.values;
  }
  add(value: T): void {
    this.check(value);
    this.values.push(value);
  }
  addAll(values: readonly T[]): void {
    for (const v of values) this.add(v);
  }
  update(values: readonly T[]): void {
    this.values = [];
    this.addAll(values);
  }
  clear(): void {
    this.values = [];
  }
}

/** One operator list state in a snapshot. */
export interface OperatorStateEntry {
  readonly name: string;
  readonly mode: RedistributionMode;
  readonly values: readonly unknown[];
}

/** Non-keyed state of one operator subtask: named lists with split or union redistribution. */
export class OperatorStateBackend implements OperatorStateStore {
  readonly states = new Map<string, OperatorListState<unknown>>();
  /** Restored lists (already redistributed for this subtask), taken when a state is registered. */
  private readonly restored = new Map<string, OperatorStateEntry>();

  restore(entries: readonly OperatorStateEntry[]): void {
    for (const e of entries) this.restored.set(e.name, e);
  }

  /** Copies every list: the synchronous (and only) part of an operator state snapshot. */
  snapshot(): OperatorStateEntry[] {
    const out: OperatorStateEntry[] = [...this.states.values()].map((s) => ({ name: s.name, mode: s.mode, values: [...s.values] }));
    for (const [name, e] of this.restored) if (!this.states.has(name)) out.push(e);
    return out;
  }

  getListState<T>(descriptor: OperatorListStateDescriptor<T>): ListState<T> {
    return this.get(descriptor, 'split');
  }

  getUnionListState<T>(descriptor: OperatorListStateDescriptor<T>): ListState<T> {
    return this.get(descriptor, 'union');
  }

  private get<T>(d: OperatorListStateDescriptor<T>, mode: RedistributionMode): ListState<T> {
    const existing = this.states.get(d.name);
    if (existing !== undefined) {
      if (existing.mode !== mode) throw new Error(`operator state '${d.name}' was registered as ${existing.mode} list state, now requested as ${mode}`);
      return existing as unknown as ListState<T>;
    }
    const serializer = serializerOr(d.serializer);
    const s = new OperatorListState<T>(d.name, mode, (v) => {
      try {
        serializer.check(v);
      } catch (e) {
        throw new Error(`cannot write to operator state '${d.name}': ${(e as Error).message}`, { cause: e });
      }
    });
    const restored = this.restored.get(d.name);
    if (restored !== undefined) {
      if (restored.mode !== mode) throw new Error(`operator state '${d.name}' was restored as ${restored.mode} list state, now requested as ${mode}`);
      s.values = [...(restored.values as T[])];
      this.restored.delete(d.name);
    }
    this.states.set(d.name, s as OperatorListState<unknown>);
    return s;
  }
}
