import type { InputChannel, OutputChannel } from './channel.js';
import { RingQueue } from './ring-queue.js';
import type { ChannelElement } from './stream-element.js';

const noop = (): void => {};

/**
 * A bounded in-memory channel between two subtasks of one process. Records are handed over
 * without serialization. Capacity counts record batches (Flink's network buffers); events
 * do not count, so a watermark or a barrier never waits for room.
 */
export class LocalChannel implements OutputChannel, InputChannel {
  private readonly queue = new RingQueue<ChannelElement>(16);
  private buffers = 0;
  private writable: () => void = noop;
  private readable: () => void = noop;

  constructor(readonly capacityBuffers: number) {
    if (!(capacityBuffers >= 1)) throw new RangeError(`channel capacity must be >= 1, got ${capacityBuffers}`);
  }

  get queuedBuffers(): number {
    return this.buffers;
  }

  get queuedElements(): number {
    return this.queue.size;
  }

  push(element: ChannelElement): void {
    if (element.kind === 'batch') this.buffers++;
    this.queue.push(element);
    if (this.queue.size === 1) this.readable();
  }

  pushPriority(element: ChannelElement): ChannelElement[] {
    const overtaken = [];
    for (let i = 0; i < this.queue.size; i++) overtaken.push(this.queue.at(i));
    this.queue.unshift(element);
    if (element.kind === 'batch') this.buffers++;
    this.readable();
    return overtaken;
  }

  isFull(): boolean {
    return this.buffers >= this.capacityBuffers;
  }

  poll(): ChannelElement | undefined {
    const element = this.queue.shift();
    if (element !== undefined && element.kind === 'batch') {
      this.buffers--;
      if (this.buffers === this.capacityBuffers - 1) this.writable();
    }
    return element;
  }

  onWritable(listener: () => void): void {
    this.writable = listener;
  }

  onReadable(listener: () => void): void {
    this.readable = listener;
  }
}
