import type { ChannelElement, RecordBatch } from './stream-element.js';

/**
 * The producer's end of a channel between two subtasks. A local channel hands elements over
 * in memory; a network channel (cluster runtime) serializes them and counts credits. Either
 * way the producer only learns whether the channel has room.
 */
export interface OutputChannel {
  /** Appends a batch or an event; the channel may go over capacity by this element. */
  push(element: ChannelElement): void;
  /** Puts an event at the head, ahead of queued data; returns the elements it overtook. */
  pushPriority(element: ChannelElement): ChannelElement[];
  /** True when the channel holds as many buffers as its capacity: the producer must wait. */
  isFull(): boolean;
  /** Called when the channel goes from full to not full. */
  onWritable(listener: () => void): void;
}

/** The consumer's end of a channel. */
export interface InputChannel {
  poll(): ChannelElement | undefined;
  /**
   * Unaligned checkpoints: moves the queued barrier of the checkpoint ahead of the data and
   * returns the record batches it overtook; undefined when that barrier is not queued.
   */
  prioritizeBarrier(checkpointId: number): RecordBatch[] | undefined;
  /** The record batches a priority barrier of this checkpoint overtook when it was pushed. */
  takeOvertaken(checkpointId: number): RecordBatch[];
  /** Called when an element arrives in an empty channel. */
  onReadable(listener: () => void): void;
  /** Called when a priority event (an unaligned barrier) was put at the head of the channel. */
  onPriorityEvent(listener: () => void): void;
  /** The element poll() would return next, without taking it. */
  peek(): ChannelElement | undefined;
  readonly queuedBuffers: number;
}
