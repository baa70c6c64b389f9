import type { MetricGroup } from '../metrics/metric-group.js';

export type Boundedness = 'bounded' | 'unbounded';

/** What a poll of a source reader found: records emitted and maybe more, nothing now, or the end. */
export type InputStatus = 'more' | 'nothing' | 'end';

/** Where a source reader emits the records of one split (Flink's SourceOutput). */
export interface SourceOutput<T> {
  /** Emits a record; `timestampMs` is its event time when the source knows it. */
  collect(value: T, timestampMs?: number): void;
}

/**
 * Where a source reader emits (Flink's ReaderOutput). A reader that reads several splits at
 * once (Kafka partitions) emits each split's records through the split's own output: with a
 * watermark strategy on `env.fromSource(source, strategy, name)`, each split then gets
 * watermarks of its own and the subtask's watermark is the least of them, so a split that lags
 * behind holds the watermark back instead of its records arriving late. Without a strategy
 * the split outputs are this output.
 */
export interface ReaderOutput<T> extends SourceOutput<T> {
  /** The output of a split (created on first use; the same one until released). */
  createOutputForSplit(splitId: string): SourceOutput<T>;
  /** The split is done (read to its end, or taken away): its watermark no longer counts. */
  releaseOutputForSplit(splitId: string): void;
}

export interface SourceReaderContext {
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly attemptNumber: number;
  nowMs(): number;
  /**
   * Where the reader registers its own metrics (gauges, counters), scoped to the source
   * operator of this subtask; exposed at `/metrics` and in the REST metric queries. See
   * docs/metrics.md (Kafka lag per partition).
   */
  readonly metricGroup?: MetricGroup;
  /**
   * Sources with `splitAssignment: 'on-request'`: asks the JobManager's split enumerator for
   * one more split. The answer comes later, between two polls: `addSplits` with a split, or
   * `noMoreSplits` when none is left. Ask again only after that answer (one request at a time).
   */
  sendSplitRequest(): void;
}

/**
 * Reads the splits assigned to one subtask. `pollNext` must not block: it emits what is
 * at hand and says whether to call again now ('more'), after `isAvailable()` ('nothing'),
 * or never ('end'). Positions live in the splits, so a checkpoint of the reader is the list
 * of its splits (`snapshotState`), and a restored reader starts from them.
 */
export interface SourceReader<T, Split> {
  start?(): void | Promise<void>;
  addSplits(splits: readonly Split[]): void;
  /** No split will be added any more: a bounded reader ends once its splits are done. */
  noMoreSplits(): void;
  pollNext(output: ReaderOutput<T>): InputStatus;
  isAvailable(): Promise<void>;
  snapshotState(checkpointId: number): Split[];
  /**
   * Watermark alignment per split (Flink's `pauseOrResumeSplits`): stop reading the splits in
   * `pause` (ids as given to `createOutputForSplit`), whose watermarks ran ahead of what their
   * group allows, and read on in those of `resume`. Optional: without it, alignment pauses the
   * whole subtask only when the least watermark of its splits is ahead.
   */
  pauseOrResumeSplits?(pause: readonly string[], resume: readonly string[]): void;
  notifyCheckpointComplete?(checkpointId: number): void | Promise<void>;
  close?(): void | Promise<void>;
}

/** A source: how its work is split, and a reader for a subtask (Flink's FLIP-27 shape). */
export interface Source<T, Split = unknown> {
  readonly boundedness: Boundedness;
  /** The splits of the whole source, created once at job start. */
  createSplits(parallelism: number): Split[] | Promise<Split[]>;
  /** Which subtask reads a split (default: round-robin by position in the list). */
  assignSplit?(split: Split, index: number, parallelism: number): number;
  /**
   * How splits reach readers. 'static' (the default): each reader gets its share at start
   * (`assignSplit`) and then `noMoreSplits`. 'on-request': the JobManager's split enumerator
   * holds the splits and hands one to a reader that asks (`ctx.sendSplitRequest()`), as
   * Flink's FLIP-27 enumerators of files and number sequences: a reader that gets through its
   * splits faster takes more, so skew in split sizes or in downstream load evens out. The
   * splits not yet handed out are part of every checkpoint and savepoint.
   */
  readonly splitAssignment?: 'static' | 'on-request';
  /**
   * What this source's splits are (`'kafka'`, `'file'`, ...), saved with them in checkpoints
   * and savepoints. A restore refuses splits of another kind: a source replaced under the
   * same uid would otherwise read positions that mean something else (Flink's split
   * serializer fails there). Optional; sources without it are not checked.
   */
  readonly splitKind?: string;
  createReader(ctx: SourceReaderContext): SourceReader<T, Split>;
}

/** The record type of a source. */
export type SourceType<S> = S extends Source<infer T, unknown> ? T : never;
