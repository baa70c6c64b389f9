import type { InputChannel } from '../channel/channel.js';
import type { ChannelElement } from '../channel/stream-element.js';

/**
 * The channels of one logical input of a subtask, read round-robin. A channel can be
 * blocked (aligned checkpoints) and is finished after its end-of-partition.
 */
export class InputGate {
  private next = 0;
  private readonly blocked: boolean[];
  private readonly finished: boolean[];
  private numFinished = 0;
  private readonly dataEnded: boolean[];
  private numDataEnded = 0;
  /** The channel of the element most recently returned by poll(). */
  lastChannel = -1;

  constructor(
    readonly inputIndex: number,
    readonly channels: readonly InputChannel[],
  ) {
    this.blocked = channels.map(() => false);
    this.finished = channels.map(() => false);
    this.dataEnded = channels.map(() => false);
  }

  /** Every channel delivered end-of-data (or ended without it). */
  get isDataEnded(): boolean {
    return this.numDataEnded === this.channels.length;
  }

  markDataEnded(channel: number): void {
    if (this.dataEnded[channel]) return;
    this.dataEnded[channel] = true;
    this.numDataEnded++;
  }

  get isFinished(): boolean {
    return this.numFinished === this.channels.length;
  }

  poll(): ChannelElement | undefined {
    const n = this.channels.length;
    for (let k = 0; k < n; k++) {
      const i = (this.next + k) % n;
      if (this.blocked[i] || this.finished[i]) continue;
      const element = this.channels[i]!.poll();
      if (element !== undefined) {
        this.next = i + 1 === n ? 0 : i + 1;
        this.lastChannel = i;
        return element;
      }
    }
    this.next = (this.next + 1) % n;
    return undefined;
  }

  markFinished(channel: number): void {
    if (this.finished[channel]) throw new Error(`channel ${channel} of input ${this.inputIndex} finished twice`);
    this.finished[channel] = true;
    this.numFinished++;
    this.markDataEnded(channel);
  }

  isBlocked(channel: number): boolean {
    return this.blocked[channel]! || this.finished[channel]!;
  }

  setBlocked(channel: number, blocked: boolean): void {
    this.blocked[channel] = blocked;
  }

  unblockAll(): void {
    this.blocked.fill(false);
  }
}
