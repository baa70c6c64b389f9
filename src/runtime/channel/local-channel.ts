import type { InputChannel, OutputChannel } from './channel.js';
import { RingQueue } from './ring-queue.js';
import type { ChannelElement, RecordBatch } from './stream-element.js';

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
  private priority: () => void = noop;
  /** Batches overtaken by priority barriers, by checkpoint id, until the consumer takes them. */
  private readonly overtaken = new Map<number, RecordBatch[]>();

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

  /**
   * `trailing`: elements the priority element overtook before they reached this queue (a
   * remote producer's unsent data); they go behind the queue and count as overtaken too.
   */
  pushPriority(element: ChannelElement, trailing: readonly ChannelElement[] = []): ChannelElement[] {
    const overtaken = [];
    for (let i = 0; i < this.queue.size; i++) overtaken.push(this.queue.at(i));
    this.queue.unshift(element);
    if (element.kind === 'batch') this.buffers++;
    for (const e of trailing) {
      this.queue.push(e);
      if (e.kind === 'batch') this.buffers++;
      overtaken.push(e);
    }
    if (element.kind === 'barrier') this.overtaken.set(element.checkpointId, overtaken.filter((e): e is RecordBatch => e.kind === 'batch'));
    this.readable();
    this.priority();
    return overtaken;
  }

  prioritizeBarrier(checkpointId: number): RecordBatch[] | undefined {
    const items = this.queue.drain();
    const i = items.findIndex((e) => e.kind === 'barrier' && e.checkpointId === checkpointId);
    if (i < 0) {
      for (const e of items) this.queue.push(e);
      return undefined;
    }
    const barrier = items[i]!;
    this.queue.push(barrier);
    for (let k = 0; k < items.length; k++) if (k !== i) this.queue.push(items[k]!);
    return items.slice(0, i).filter((e): e is RecordBatch => e.kind === 'batch');
  }

  takeOvertaken(checkpointId: number): RecordBatch[] {
    const batches = this.overtaken.get(checkpointId) ?? [];
    this.overtaken.delete(checkpointId);
    return batches;
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

  onPriorityEvent(listener: () => void): void {
    this.priority = listener;
  }

  peek(): ChannelElement | undefined {
    return this.queue.peek();
  }

  onReadable(listener: () => void): void {
    this.readable = listener;
  }
}
