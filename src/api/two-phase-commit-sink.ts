import type { Sink, SinkWriter, SinkWriterContext } from './sink.js';

/** What a two-phase-commit sink keeps in a checkpoint: its pre-committed and its open transaction. */
export interface TwoPhaseCommitState<Txn> {
  /** Pre-committed transactions by checkpoint id, waiting for the checkpoint to complete. */
  readonly pending: readonly [checkpointId: number, txn: Txn][];
  /** The transaction open at the checkpoint (records after the barrier): aborted on restore. */
  readonly current: Txn | undefined;
}

export interface TwoPhaseCommitContext extends SinkWriterContext {
  /** Whether the job checkpoints; without checkpoints a transaction commits at the end of input. */
  readonly checkpointing: boolean;
}

/**
 * Flink's TwoPhaseCommitSinkFunction: a transaction per checkpoint. At the barrier the open
 * transaction is pre-committed (flushed: from then on commit must succeed) and kept in state
 * under the checkpoint's id, and a new one begins; when the checkpoint completes, every
 * pending transaction up to it commits. After a restore the pending transactions found in
 * state are committed again (commit must be idempotent) and the open one is aborted.
 * Transactions are kept in checkpoints, so `Txn` must be plain data.
 */
export abstract class TwoPhaseCommitSink<T, Txn> implements Sink<T> {
  /**
   * Starts a transaction and returns its (plain data) handle, synchronously: records after a
   * barrier must have their transaction at once, and the handle is kept in the checkpoint.
   * Do the external I/O lazily (first invoke) or in preCommit.
   */
  abstract beginTransaction(ctx: TwoPhaseCommitContext): Txn;
  abstract invoke(txn: Txn, value: T, timestampMs: number | undefined): void | Promise<void>;
  /** Flush everything of the transaction; after this, commit must not fail for lack of data. */
  abstract preCommit(txn: Txn): void | Promise<void>;
  /** Make the transaction visible. Must be idempotent: it may run again after a restore. */
  abstract commit(txn: Txn): void | Promise<void>;
  abstract abort(txn: Txn): void | Promise<void>;

  /** A pre-committed transaction found in state after a restore. */
  recoverAndCommit(txn: Txn): void | Promise<void> {
    return this.commit(txn);
  }

  /** The transaction that was open at the restored checkpoint. */
  recoverAndAbort(txn: Txn): void | Promise<void> {
    return this.abort(txn);
  }

  /** Whether the job checkpoints; set by the runtime through `checkpointing` of the context. */
  protected checkpointingEnabled(ctx: SinkWriterContext): boolean {
    return (ctx as Partial<TwoPhaseCommitContext>).checkpointing ?? false;
  }

  async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    const tctx: TwoPhaseCommitContext = { ...ctx, checkpointing: this.checkpointingEnabled(ctx) };
    for (const s of restoredState as TwoPhaseCommitState<Txn>[]) {
      for (const [, txn] of s.pending) await this.recoverAndCommit(txn);
      if (s.current !== undefined) await this.recoverAndAbort(s.current);
    }
    return new TwoPhaseCommitWriter<T, Txn>(this, tctx, this.beginTransaction(tctx));
  }
}

class TwoPhaseCommitWriter<T, Txn> implements SinkWriter<T> {
  private readonly pending: [number, Txn][] = [];
  private current: Txn;

  constructor(
    private readonly sink: TwoPhaseCommitSink<T, Txn>,
    private readonly ctx: TwoPhaseCommitContext,
    first: Txn,
  ) {
    this.current = first;
  }

  write(value: T, timestampMs: number | undefined): void | Promise<void> {
    return this.sink.invoke(this.current, value, timestampMs);
  }

  prepareCommit(checkpointId: number): void | Promise<void> {
    const txn = this.current;
    this.pending.push([checkpointId, txn]);
    // Records after the barrier go to a new transaction.
    this.current = this.sink.beginTransaction(this.ctx);
    return this.sink.preCommit(txn);
  }

  snapshotState(): unknown[] {
    const state: TwoPhaseCommitState<Txn> = { pending: this.pending.map(([id, t]) => [id, t]), current: this.current };
    return [state];
  }

  /** The runtime calls this in checkpoint order, one at a time. */
  async notifyCheckpointComplete(checkpointId: number): Promise<void> {
    while (this.pending.length > 0 && this.pending[0]![0] <= checkpointId) {
      const [, txn] = this.pending[0]!;
      await this.sink.commit(txn);
      this.pending.shift();
    }
  }

  async flush(endOfInput: boolean): Promise<void> {
    if (!endOfInput || this.ctx.checkpointing) return; // with checkpoints, the final checkpoint commits
    const txn = this.current;
    this.current = this.sink.beginTransaction(this.ctx);
    await this.sink.preCommit(txn);
    await this.sink.commit(txn);
  }

  async close(): Promise<void> {
    // The open transaction will never be committed: abort it (pending ones stay for recovery).
    await this.sink.abort(this.current);
  }
}
