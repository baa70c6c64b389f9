import { describe, expect, it } from 'vitest';
import {
  StreamExecutionEnvironment,
  valueState,
  type Collector,
  type KeyedProcessContext,
  type KeyedProcessFunction,
  type KeyedRuntimeContext,
  type ValueState,
} from '../src/index.js';
import { TwoPhaseCommitSink, type TwoPhaseCommitContext } from '../src/api/two-phase-commit-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';

/** An "external system" with transactions: committed rows are what readers see. */
class TxnStore<T> {
  committed: T[] = [];
  open = new Map<string, T[]>();
  committedTxns = new Set<string>();
  nextId = 0;
}

class StoreSink<T> extends TwoPhaseCommitSink<T, { id: string }> {
  constructor(readonly store: TxnStore<T>) {
    super();
  }
  beginTransaction(ctx: TwoPhaseCommitContext) {
    const id = `${ctx.subtaskIndex}-${ctx.attemptNumber}-${this.store.nextId++}`;
    this.store.open.set(id, []);
    return { id };
  }
  invoke(txn: { id: string }, value: T) {
    this.store.open.get(txn.id)!.push(value);
  }
  preCommit() {}
  commit(txn: { id: string }) {
    if (this.store.committedTxns.has(txn.id)) return;
    this.store.committedTxns.add(txn.id);
    this.store.committed.push(...(this.store.open.get(txn.id) ?? []));
    this.store.open.delete(txn.id);
  }
  abort(txn: { id: string }) {
    this.store.open.delete(txn.id);
  }
}

class CountPerKey implements KeyedProcessFunction<number, number, string> {
  private count!: ValueState<number>;
  open(ctx: KeyedRuntimeContext<number>): void {
    this.count = ctx.getState(valueState<number>('count'));
  }
  processElement(n: number, ctx: KeyedProcessContext<number>, out: Collector<string>): void {
    const c = (this.count.value() ?? 0) + 1;
    this.count.update(c);
    out.collect(`${ctx.getCurrentKey()}:${c}`);
  }
}

describe('checkpoints (smoke)', () => {
  it('a keyed count with failures gives exactly the reference through a two-phase-commit sink', async () => {
    const N = 60_000;
    const failAt = new Set<number>([7_000, 23_000, 41_000]);
    let seen = 0;
    const store = new TxnStore<string>();
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'execution.checkpointing.interval': 30,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 10,
      'restart-strategy.fixed-delay.delay': 10,
    });
    env
      .fromSource(numberSource({ count: N, eventsPerSecond: 100_000 }), 'numbers')
      .map((n) => {
        seen++;
        if (failAt.has(seen)) {
          failAt.delete(seen);
          throw new Error(`injected failure at record ${seen}`);
        }
        return n;
      })
      .keyBy((n) => n % 10)
      .process<string>(new CountPerKey())
      .sinkTo(new StoreSink(store));
    const client = env.executeAsync(undefined, { log: () => {} });
    const result = await client.result;
    expect(result.numRestarts).toBe(3);
    // Reference: key k sees counts 1..c_k exactly once each.
    const reference: string[] = [];
    const perKey = new Map<number, number>();
    for (let n = 0; n < N; n++) perKey.set(n % 10, (perKey.get(n % 10) ?? 0) + 1);
    for (const [k, c] of perKey) for (let i = 1; i <= c; i++) reference.push(`${k}:${i}`);
    const actual = [...store.committed].sort();
    const dups = actual.length - new Set(actual).size;
    const actualSet = new Set(actual);
    const missing = reference.filter((r) => !actualSet.has(r)).length;
    expect({ dups, missing, total: actual.length }).toEqual({ dups: 0, missing: 0, total: reference.length });
    expect(actual).toEqual(reference.sort());
  });
});
