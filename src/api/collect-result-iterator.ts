import { assert } from '../util/assert.js';
import type { JobClient } from './environment.js';
import type { SinkWriter, SinkWriterContext } from './sink.js';
import { InMemoryCheckpointCommitter, WriteAheadSink } from './write-ahead-sink.js';

/** Records the iterator holds before the collect sink waits for the reader (Flink bounds its buffer too). */
export const COLLECT_BUFFER_RECORDS = 8192;

/**
 * The results of `stream.executeAndCollect()` (Flink's CollectResultIterator): the records of
 * the job running in this process, as they are committed. `for await (const r of it)` reads
 * them; leaving the loop early (or `close()`) cancels the job.
 *
 * With checkpointing, a record is handed out once the checkpoint after it completed (at the
 * end of a bounded job, the final checkpoint), so a job that fails and restarts from a
 * checkpoint hands out every record exactly once. Without checkpointing, records are handed out
 * as they arrive, and a restart (which would start over and repeat them) fails the iterator.
 */
export class CollectResultIterator<T> implements AsyncIterableIterator<T> {
  private readonly buffer: T[] = [];
  private head = 0;
  private done = false;
  private failure: unknown = undefined;
  /** The reader waiting for a record or the end. */
  private wakeReader: (() => void) | undefined;
  /** Writers waiting for room. */
  private readonly wakeWriters: (() => void)[] = [];
  private client: JobClient | undefined;

  /** The job's client: progress, checkpoints, cancel. */
  get jobClient(): JobClient {
    assert(this.client !== undefined, 'the collect iterator is not attached to a job');
    return this.client;
  }

  /** Used by executeAndCollect: the job whose results these are. */
  attach(client: JobClient): void {
    assert(this.client === undefined, 'the collect iterator is attached to a job already');
    this.client = client;
    client.result.then(
      () => this.end(undefined),
      (e: unknown) => this.end(e),
    );
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      if (this.head < this.buffer.length) {
        const value = this.buffer[this.head]!;
        this.head++;
        if (this.head === this.buffer.length) {
          this.buffer.length = 0;
          this.head = 0;
        }
        if (this.wakeWriters.length > 0 && this.size() < COLLECT_BUFFER_RECORDS) this.releaseWriters();
        return { value, done: false };
      }
      if (this.done) {
        if (this.failure !== undefined) {
          const e = this.failure;
          this.failure = undefined;
          throw e;
        }
        return { value: undefined, done: true };
      }
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }

  /** Leaving a `for await` loop early: cancels the job. */
  async return(): Promise<IteratorResult<T, undefined>> {
    await this.close();
    return { value: undefined, done: true };
  }

  /** Cancels the job (if it still runs) and waits for it to end; buffered records are dropped. */
  async close(): Promise<void> {
    const running = !this.done;
    this.done = true;
    this.failure = undefined;
    this.buffer.length = 0;
    this.head = 0;
    // Writers waiting for room go on (and hand nothing more out) while the job is canceled.
    this.releaseWriters();
    const client = this.client;
    if (client === undefined) return;
    if (running) client.cancel();
    await client.result.catch(() => {});
  }

  /** Hands records to the reader; resolves when there is room for more (backpressure). */
  offer(values: readonly T[]): Promise<void> | undefined {
    if (this.done) return undefined;
    for (const v of values) this.buffer.push(v);
    this.wakeReader?.();
    this.wakeReader = undefined;
    if (this.size() < COLLECT_BUFFER_RECORDS) return undefined;
    return new Promise<void>((resolve) => this.wakeWriters.push(resolve));
  }

  /** The job cannot go on handing out results: the reader gets `error` after what it was handed. */
  fail(error: Error): void {
    if (this.done) return;
    this.end(error);
    this.client?.cancel();
  }

  private end(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failure = error;
    this.wakeReader?.();
    this.wakeReader = undefined;
    this.releaseWriters();
  }

  private size(): number {
    return this.buffer.length - this.head;
  }

  private releaseWriters(): void {
    for (const wake of this.wakeWriters.splice(0)) wake();
  }
}

/**
 * The sink executeAndCollect adds (parallelism 1, as Flink's collect sink). With checkpointing
 * it is a write-ahead sink whose committer is this process's memory: a checkpoint's records go
 * to the iterator when it completes, once. Without, records go straight to the iterator.
 */
export class CollectResultSink<T> extends WriteAheadSink<T> {
  constructor(private readonly results: CollectResultIterator<T>) {
    super(new InMemoryCheckpointCommitter());
  }

  override async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    if (ctx.checkpointing === true) return super.createWriter(ctx, restoredState);
    if (ctx.attemptNumber > 0) {
      const error = new Error(
        'executeAndCollect: the job restarted without checkpointing, so it starts over and would hand out records it handed out before; ' +
          'enable checkpointing (env.enableCheckpointing(interval)) to collect exactly once across restarts, or set restart-strategy.type: none',
      );
      this.results.fail(error);
      throw error;
    }
    const results = this.results;
    const one: T[] = [];
    return {
      write(value: T): Promise<void> | undefined {
        one[0] = value;
        return results.offer(one);
      },
    };
  }

  override sendValues(values: readonly T[]): Promise<void> {
    return this.results.offer(values) ?? Promise.resolve();
  }
}
