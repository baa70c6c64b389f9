import { TwoPhaseCommitSink, type TwoPhaseCommitContext } from '../../src/api/two-phase-commit-sink.js';

/**
 * An in-memory "external system" with transactions, living outside the job so it survives
 * restarts: committed rows are what a reader sees.
 */
export class TxnStore<T> {
  committed: T[] = [];
  readonly open = new Map<string, T[]>();
  readonly committedTxns = new Set<string>();
  nextId = 0;
}

export class TxnStoreSink<T> extends TwoPhaseCommitSink<T, { id: string }> {
  constructor(readonly store: TxnStore<T>) {
    super();
  }
  beginTransaction(ctx: TwoPhaseCommitContext): { id: string } {
    const id = `${ctx.subtaskIndex}-${ctx.attemptNumber}-${this.store.nextId++}`;
    this.store.open.set(id, []);
    return { id };
  }
  invoke(txn: { id: string }, value: T): void {
    const rows = this.store.open.get(txn.id);
    if (rows === undefined) throw new Error(`transaction ${txn.id} is not open`);
    rows.push(value);
  }
  preCommit(): void {}
  commit(txn: { id: string }): void {
    if (this.store.committedTxns.has(txn.id)) return;
    const rows = this.store.open.get(txn.id);
    if (rows === undefined) throw new Error(`transaction ${txn.id} was lost before commit`);
    this.store.committedTxns.add(txn.id);
    this.store.committed.push(...rows);
    this.store.open.delete(txn.id);
  }
  abort(txn: { id: string }): void {
    this.store.open.delete(txn.id);
  }
}

/** Duplicates and losses of `actual` against `reference` (multisets of strings). */
export function compareMultisets(actual: readonly string[], reference: readonly string[]): { duplicates: number; missing: number; unexpected: number } {
  const want = new Map<string, number>();
  for (const r of reference) want.set(r, (want.get(r) ?? 0) + 1);
  const got = new Map<string, number>();
  for (const a of actual) got.set(a, (got.get(a) ?? 0) + 1);
  let duplicates = 0;
  let missing = 0;
  let unexpected = 0;
  for (const [k, n] of want) {
    const g = got.get(k) ?? 0;
    if (g < n) missing += n - g;
    if (g > n) duplicates += g - n;
  }
  for (const [k, g] of got) if (!want.has(k)) unexpected += g;
  return { duplicates, missing, unexpected };
}
