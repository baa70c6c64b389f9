import type { Sink, SinkWriter, SinkWriterContext } from './sink.js';

/**
 * Marks in the external system which checkpoints a sink subtask has written there (Flink's
 * CheckpointCommitter). A replay consults it so that the records of a checkpoint are not
 * written twice.
 */
export interface CheckpointCommitter {
  isCheckpointCommitted(subtask: number, checkpointId: number): boolean | Promise<boolean>;
  commitCheckpoint(subtask: number, checkpointId: number): void | Promise<void>;
}

/** A committer that remembers in this process (tests, examples): exact (subtask, checkpoint id) pairs. */
export class InMemoryCheckpointCommitter implements CheckpointCommitter {
  private readonly committed = new Map<number, Set<number>>();

  isCheckpointCommitted(subtask: number, checkpointId: number): boolean {
    return this.committed.get(subtask)?.has(checkpointId) ?? false;
  }

  commitCheckpoint(subtask: number, checkpointId: number): void {
    let ids = this.committed.get(subtask);
    if (ids === undefined) this.committed.set(subtask, (ids = new Set()));
    ids.add(checkpointId);
  }

  /** Committed checkpoint ids of a subtask, ascending. */
  committedCheckpoints(subtask: number): number[] {
    return [...(this.committed.get(subtask) ?? [])].sort((a, b) => a - b);
  }
}

/** The records of one subtask between two checkpoints, kept in the checkpoint until they are written. */
export interface PendingCheckpointValues<T> {
  readonly checkpointId: number;
  /** The subtask that received them (the committer's key, also after the state moved to another subtask). */
  readonly subtask: number;
  readonly values: readonly T[];
}

/**
 * The checkpoint id under which a job without checkpointing writes its records, at the end of
 * its input (after every real checkpoint id).
 */
export const END_OF_INPUT_CHECKPOINT_ID = Number.MAX_SAFE_INTEGER;

/**
 * Flink's GenericWriteAheadSink: for external systems without transactions. The records of a
 * checkpoint are kept in the writer's checkpointed state (so they must be plain data); when the
 * checkpoint completes they are handed to `sendValues` and the committer marks the checkpoint
 * as written, so a restored job whose state still holds records of a completed checkpoint does
 * not write them again. Records of a restored checkpoint that the committer does not know are
 * written when the writer starts.
 *
 * Exactly once if `sendValues` and `commitCheckpoint` succeed together; a crash between the two
 * writes that checkpoint's records again on replay, so an idempotent `sendValues` (e.g. upserts
 * keyed by checkpoint and position) closes the gap. Without checkpointing, the records are kept
 * in memory and written at the end of input under `END_OF_INPUT_CHECKPOINT_ID`.
 */
export abstract class WriteAheadSink<T> implements Sink<T> {
  /** Sends under way by subtask and checkpoint, across the writers of this sink (a restarted subtask waits for its predecessor's). */
  private readonly sending = new Map<string, Promise<void>>();

  constructor(protected readonly committer: CheckpointCommitter) {}

  /**
   * Writes the records of a completed checkpoint to the external system. Resolve `false` when
   * they could not all be written: they are kept and offered again when the next checkpoint
   * completes (later checkpoints wait, so the order is kept).
   */
  abstract sendValues(values: readonly T[], checkpointId: number, subtask: number): Promise<boolean | void>;

  async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    const restored = (restoredState as PendingCheckpointValues<T>[]).slice().sort((a, b) => a.checkpointId - b.checkpointId || a.subtask - b.subtask);
    const writer = new WriteAheadWriter<T>(this, ctx, restored);
    // Restored records belong to completed checkpoints (up to the restored one): write what is not committed yet.
    await writer.notifyCheckpointComplete(Number.POSITIVE_INFINITY);
    return writer;
  }

  /**
   * Writes one checkpoint's records unless the committer has them, then commits the checkpoint;
   * false if `sendValues` asked to retry. Used by the writers; one send per subtask and checkpoint at a time.
   */
  send(p: PendingCheckpointValues<T>): Promise<boolean> {
    const key = `${p.subtask}/${p.checkpointId}`;
    const before = this.sending.get(key) ?? Promise.resolve();
    const run = before.catch(() => {}).then(async () => {
      if (await this.committer.isCheckpointCommitted(p.subtask, p.checkpointId)) return true;
      if ((await this.sendValues(p.values, p.checkpointId, p.subtask)) === false) return false;
      await this.committer.commitCheckpoint(p.subtask, p.checkpointId);
      return true;
    });
    const settled = run.then(
      () => {},
      () => {},
    );
    this.sending.set(key, settled);
    void settled.then(() => {
      if (this.sending.get(key) === settled) this.sending.delete(key);
    });
    return run;
  }
}

class WriteAheadWriter<T> implements SinkWriter<T> {
  private current: T[] = [];
  /** By checkpoint id, ascending. */
  private pending: PendingCheckpointValues<T>[];
  /** Notifications run one after the other. */
  private sends: Promise<void> = Promise.resolve();
  private readonly checkpointing: boolean;

  constructor(
    private readonly sink: WriteAheadSink<T>,
    private readonly ctx: SinkWriterContext,
    restored: PendingCheckpointValues<T>[],
  ) {
    this.pending = restored;
    this.checkpointing = ctx.checkpointing ?? false;
  }

  write(value: T): void {
    this.current.push(value);
  }

  snapshotState(checkpointId: number): unknown[] {
    const last = this.pending[this.pending.length - 1];
    if (last !== undefined && last.checkpointId >= checkpointId) {
      throw new Error(`write-ahead sink: checkpoint ${checkpointId} after checkpoint ${last.checkpointId} (ids must increase)`);
    }
    if (this.current.length > 0) {
      this.pending.push({ checkpointId, subtask: this.ctx.subtaskIndex, values: this.current });
      this.current = [];
    }
    return [...this.pending];
  }

  /** Writes the records of every pending checkpoint up to this one, in order. */
  notifyCheckpointComplete(checkpointId: number): Promise<void> {
    const p = this.sends.then(() => this.sendUpTo(checkpointId));
    this.sends = p.catch(() => {});
    return p;
  }

  private async sendUpTo(checkpointId: number): Promise<void> {
    while (this.pending.length > 0 && this.pending[0]!.checkpointId <= checkpointId) {
      if (!(await this.sink.send(this.pending[0]!))) return;
      this.pending.shift();
    }
  }

  async flush(endOfInput: boolean): Promise<void> {
    // With checkpointing, the final checkpoint writes the last records.
    if (!endOfInput || this.checkpointing) return;
    const values = this.current;
    this.current = [];
    if (values.length === 0) return;
    const p: PendingCheckpointValues<T> = { checkpointId: END_OF_INPUT_CHECKPOINT_ID, subtask: this.ctx.subtaskIndex, values };
    if (!(await this.sink.send(p))) {
      throw new Error(`write-ahead sink: subtask ${this.ctx.subtaskIndex} could not write its ${values.length} records at the end of input (sendValues returned false)`);
    }
  }

  async close(): Promise<void> {
    // The writes of completed checkpoints finish first (at the end of a bounded job, the final
    // checkpoint's): the job must not end before its last records are out.
    await this.sends;
  }
}
