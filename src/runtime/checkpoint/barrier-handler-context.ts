import type { CheckpointBarrier } from '../channel/stream-element.js';

/**
 * What a barrier handler may do to its task. Channels are numbered over all inputs of the
 * task. The handler decides; the task does the I/O.
 */
export interface BarrierHandlerContext {
  readonly numChannels: number;
  /** Stop reading a channel (its barrier arrived; aligned checkpoints). */
  blockChannel(channel: number): void;
  unblockAllChannels(): void;
  /** Snapshot the operators now and send the barrier on every output (ahead of data when unaligned). */
  snapshot(barrier: CheckpointBarrier, unaligned: boolean): void;
  /** Record the records consumed from this channel as in-flight data of the checkpoint. */
  startCapture(checkpointId: number, channel: number): void;
  stopCapture(checkpointId: number, channel: number): void;
  /**
   * Moves the checkpoint's barrier, queued in the channel, ahead of the channel's data; the
   * overtaken data becomes in-flight state. False when the barrier is not in the queue yet.
   */
  prioritizeBarrier(channel: number, checkpointId: number): boolean;
  /** Every channel delivered the barrier: the task's part of the checkpoint is complete. */
  complete(checkpointId: number): void;
  abort(checkpointId: number, reason: string): void;
  /** Runs `fn` through the task's mailbox after `delayMs`; returns a cancel function. */
  schedule(delayMs: number, fn: () => void): () => void;
  nowMs(): number;
}
