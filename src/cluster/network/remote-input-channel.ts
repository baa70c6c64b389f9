import type { InputChannel } from '../../runtime/channel/channel.js';
import { LocalChannel } from '../../runtime/channel/local-channel.js';
import type { ChannelElement, CheckpointBarrier, RecordBatch } from '../../runtime/channel/stream-element.js';

/**
 * The consumer's end of a channel from a subtask in another process: a bounded queue the
 * network fills. It grants the producer one credit per batch of room, at the start (its
 * capacity) and again for every batch taken out, so what arrives never exceeds the room
 * announced. Batches that came without credit (restored in-flight data, data overtaken by
 * an unaligned barrier) earn no credit back.
 */
export class RemoteInputChannel implements InputChannel {
  private readonly queue: LocalChannel;
  private readonly uncredited = new WeakSet<RecordBatch>();
  private grant: ((n: number) => void) | undefined;
  private owed = 0;

  constructor(
    readonly id: number,
    readonly capacityBuffers: number,
  ) {
    this.queue = new LocalChannel(capacityBuffers);
  }

  /** The producer opened the channel: credits go back through `grant`, starting with the capacity. */
  connect(grant: (n: number) => void): void {
    this.grant = grant;
    grant(this.capacityBuffers + this.owed);
    this.owed = 0;
  }

  /** The producer sent its end of partition: nothing more comes on this channel. */
  ended = false;

  /** An element from the network, in order. */
  receive(element: ChannelElement): void {
    if (element.kind === 'end-of-partition') this.ended = true;
    this.queue.push(element);
  }

  /** An unaligned barrier: ahead of the queue, with what it overtook at the producer behind. */
  receivePriority(barrier: CheckpointBarrier, rest: readonly ChannelElement[]): void {
    for (const e of rest) if (e.kind === 'batch') this.uncredited.add(e);
    this.queue.pushPriority(barrier, rest);
  }

  /** Restored in-flight data, before the job starts. */
  push(element: ChannelElement): void {
    if (element.kind === 'batch') this.uncredited.add(element);
    this.queue.push(element);
  }

  poll(): ChannelElement | undefined {
    const e = this.queue.poll();
    if (e !== undefined && e.kind === 'batch' && !this.uncredited.delete(e)) {
      if (this.grant === undefined) this.owed++;
      else this.grant(1);
    }
    return e;
  }

  prioritizeBarrier(checkpointId: number): RecordBatch[] | undefined {
    return this.queue.prioritizeBarrier(checkpointId);
  }

  takeOvertaken(checkpointId: number): RecordBatch[] {
    return this.queue.takeOvertaken(checkpointId);
  }

  onReadable(listener: () => void): void {
    this.queue.onReadable(listener);
  }

  onPriorityEvent(listener: () => void): void {
    this.queue.onPriorityEvent(listener);
  }

  peek(): ChannelElement | undefined {
    return this.queue.peek();
  }

  get queuedBuffers(): number {
    return this.queue.queuedBuffers;
  }
}
