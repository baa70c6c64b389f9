/**
 * What travels through a channel: batches of records and events, as a closed union.
 * Records move in batches (values and timestamps side by side) so the per-record cost of a
 * channel is an array push; events are single elements, in order with the batches.
 */

/** Timestamp of a record that has none. */
export const NO_TIMESTAMP = Number.NEGATIVE_INFINITY;
/** The watermark that closes event time: emitted when a bounded input ends. */
export const MAX_WATERMARK = Number.MAX_SAFE_INTEGER;
export const MIN_WATERMARK = Number.MIN_SAFE_INTEGER;

export interface RecordBatch {
  readonly kind: 'batch';
  readonly values: unknown[];
  readonly timestamps: number[];
  /**
   * Set by a keyBy's writer: each record's key group, computed there to pick the channel, so
   * the keyed operator that receives the batch does not hash the key again (absent: it does).
   */
  readonly keyGroups?: number[] | undefined;
}

export interface WatermarkEvent {
  readonly kind: 'watermark';
  readonly timestampMs: number;
}

export interface WatermarkStatusEvent {
  readonly kind: 'watermark-status';
  readonly idle: boolean;
}

export type CheckpointType = 'checkpoint' | 'savepoint' | 'sync-savepoint';

export interface CheckpointOptions {
  readonly type: CheckpointType;
  /** The barrier may overtake in-flight data (unaligned checkpoint). */
  readonly unaligned: boolean;
  /** > 0: start aligned, switch to unaligned when alignment takes longer. */
  readonly alignedCheckpointTimeoutMs: number;
  /** A checkpoint requested full (`sluice checkpoint --full`): no delta even with incremental checkpoints. */
  readonly full?: boolean;
}

export interface CheckpointBarrier {
  readonly kind: 'barrier';
  readonly checkpointId: number;
  readonly timestampMs: number;
  readonly options: CheckpointOptions;
}

/** Tells downstream tasks to abandon the alignment of a checkpoint. */
export interface CancelCheckpointMarker {
  readonly kind: 'cancel-checkpoint';
  readonly checkpointId: number;
}

/**
 * The producer has emitted its last record (and the final watermark); the channel stays open
 * for the final checkpoint's barrier, then ends with end-of-partition.
 */
export interface EndOfData {
  readonly kind: 'end-of-data';
}

/** The producer of this channel has finished; nothing follows. */
export interface EndOfPartition {
  readonly kind: 'end-of-partition';
  /** Stopped without draining (stop-with-savepoint without --drain): operators do not finish. */
  readonly suspend: boolean;
}

export type StreamEvent = WatermarkEvent | WatermarkStatusEvent | CheckpointBarrier | CancelCheckpointMarker | EndOfData | EndOfPartition;
export type ChannelElement = RecordBatch | StreamEvent;
export type ChannelElementKind = ChannelElement['kind'];

/** One handler per element kind: adding a kind without a handler does not compile. */
export type ChannelElementHandlers<R> = { [K in ChannelElementKind]: (element: Extract<ChannelElement, { kind: K }>) => R };

/**
 * A batch whose arrays have room for `n` records (holes until written): a writer fills them by
 * index and trims them to what it wrote.
 */
export function presizedRecordBatch(n: number, keyed = false): RecordBatch {
  // Timestamps are doubles (NO_TIMESTAMP is -Infinity, epoch milliseconds exceed small
  // integers): filled, the array holds doubles from the start, instead of being copied into a
  // double array at the batch's first record (and the writer's store seeing two array kinds).
  return { kind: 'batch', values: new Array<unknown>(n), timestamps: new Array<number>(n).fill(NO_TIMESTAMP), keyGroups: keyed ? new Array<number>(n) : undefined };
}

export const END_OF_PARTITION: EndOfPartition = Object.freeze({ kind: 'end-of-partition', suspend: false });
export const SUSPEND_PARTITION: EndOfPartition = Object.freeze({ kind: 'end-of-partition', suspend: true });
export const END_OF_DATA: EndOfData = Object.freeze({ kind: 'end-of-data' });

export function watermarkEvent(timestampMs: number): WatermarkEvent {
  return { kind: 'watermark', timestampMs };
}

export const IDLE_STATUS: WatermarkStatusEvent = Object.freeze({ kind: 'watermark-status', idle: true });
export const ACTIVE_STATUS: WatermarkStatusEvent = Object.freeze({ kind: 'watermark-status', idle: false });

/** Whether a batch or an event of this kind is counted against a channel's capacity. */
export function isBuffer(element: ChannelElement): element is RecordBatch {
  return element.kind === 'batch';
}
