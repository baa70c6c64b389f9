import type { OutputChannel } from '../../runtime/channel/channel.js';
import { RingQueue } from '../../runtime/channel/ring-queue.js';
import type { ChannelElement } from '../../runtime/channel/stream-element.js';
import type { Connection } from '../wire/connection.js';
import type { DataMessage } from './data-messages.js';

const noop = (): void => {};

/**
 * The producer's end of a channel to a subtask in another process, with credit-based flow
 * control (Flink's): a batch goes out only when the consumer has announced room for it, so
 * at most the consumer's capacity is in flight; the rest waits here, bounded by
 * `capacityBuffers`, and a full queue backpressures the producing task. Events need no
 * credit but keep their place behind waiting batches.
 */
export class RemoteOutputChannel implements OutputChannel {
  private credits = 0;
  private readonly waiting = new RingQueue<ChannelElement>(16);
  private waitingBuffers = 0;
  private writable: () => void = noop;

  constructor(
    readonly connection: Connection<DataMessage, DataMessage>,
    readonly id: number,
    readonly capacityBuffers: number,
  ) {
    if (!(capacityBuffers >= 1)) throw new RangeError(`channel capacity must be >= 1, got ${capacityBuffers}`);
    connection.send({ t: 'open', ch: id });
  }

  /** Batches waiting for credit. */
  get queuedBuffers(): number {
    return this.waitingBuffers;
  }

  push(element: ChannelElement): void {
    if (this.waiting.size === 0 && (element.kind !== 'batch' || this.credits > 0)) {
      this.send(element);
      return;
    }
    this.waiting.push(element);
    if (element.kind === 'batch') this.waitingBuffers++;
  }

  pushPriority(element: ChannelElement): ChannelElement[] {
    const rest = this.waiting.drain();
    this.waitingBuffers = 0;
    if (element.kind !== 'barrier') throw new Error(`only a checkpoint barrier overtakes data, not ${element.kind}`);
    this.connection.send({ t: 'prio', ch: this.id, barrier: element, rest });
    this.notifyWritable();
    return rest;
  }

  /** Everything pushed has been sent (nothing waits for credit). */
  isDrained(): boolean {
    return this.waiting.size === 0;
  }

  isFull(): boolean {
    return this.waitingBuffers >= this.capacityBuffers;
  }

  onWritable(listener: () => void): void {
    this.writable = listener;
  }

  /** The consumer announced room for `n` more batches. */
  addCredit(n: number): void {
    const wasFull = this.isFull();
    this.credits += n;
    while (this.waiting.size > 0) {
      const next = this.waiting.peek()!;
      if (next.kind === 'batch') {
        if (this.credits === 0) break;
        this.waitingBuffers--;
      }
      this.waiting.shift();
      this.send(next);
    }
    if (wasFull && !this.isFull()) this.notifyWritable();
  }

  /** The end of partition went out: the consumer needs nothing more from this channel. */
  ended = false;

  private send(element: ChannelElement): void {
    if (element.kind === 'batch') this.credits--;
    else if (element.kind === 'end-of-partition') this.ended = true;
    this.connection.send({ t: 'el', ch: this.id, e: element });
  }

  private notifyWritable(): void {
    this.writable();
  }
}
