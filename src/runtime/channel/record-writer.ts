import type { OutputChannel } from './channel.js';
import { KeyGroupHash, type ChannelSelector } from './partitioner.js';
import { presizedRecordBatch, type RecordBatch, type StreamEvent } from './stream-element.js';

/** Shared by a task's writers: set when a channel is full, so the task stops emitting. */
export class OutputAvailability {
  blocked = false;
  private readonly writers: RecordWriter[] = [];

  register(writer: RecordWriter): void {
    this.writers.push(writer);
  }

  /** Recomputes `blocked` from the channels; returns true when the task may emit again. */
  recheck(): boolean {
    let full = false;
    for (const w of this.writers) if (w.anyFull()) full = true;
    this.blocked = full;
    return !full;
  }
}

/**
 * Writes one producer subtask's records to the channels of one output edge, in batches of
 * `batchSizeRecords`. Events flush the pending batches first so order is kept per channel.
 */
export class RecordWriter {
  private readonly pending: (RecordBatch | null)[];
  /** Records in each channel's pending batch. */
  private readonly filled: Int32Array;
  /**
   * Each channel's last batch size: the next batch's arrays are allocated at that size, not
   * grown by push (nine reallocations to reach 1,024 records), and a channel that is flushed
   * part-full every slice does not get full-size arrays it leaves empty.
   */
  private readonly lastSize: Int32Array;
  /** A keyBy's selector: its batches carry each record's key group. */
  private readonly keyed: KeyGroupHash | null;
  recordsOut = 0;

  constructor(
    readonly channels: readonly OutputChannel[],
    private readonly selector: ChannelSelector,
    private readonly batchSizeRecords: number,
    private readonly availability: OutputAvailability,
  ) {
    if (channels.length === 0) throw new Error('a record writer needs at least one channel');
    this.pending = channels.map(() => null);
    this.filled = new Int32Array(channels.length);
    this.lastSize = new Int32Array(channels.length).fill(Math.min(batchSizeRecords, 64));
    this.keyed = selector instanceof KeyGroupHash ? selector : null;
    availability.register(this);
  }

  emit(value: unknown, timestampMs: number): void {
    this.recordsOut++;
    const c = this.selector.select(value);
    if (c >= 0) {
      this.append(c, value, timestampMs);
    } else {
      for (let i = 0; i < this.channels.length; i++) this.append(i, value, timestampMs);
    }
  }

  private append(c: number, value: unknown, timestampMs: number): void {
    let batch = this.pending[c]!;
    if (batch === null) {
      batch = presizedRecordBatch(this.lastSize[c]!, this.keyed !== null);
      this.pending[c] = batch;
    }
    const n = this.filled[c]!;
    // Past the presized length this appends (the arrays grow as with push).
    batch.values[n] = value;
    batch.timestamps[n] = timestampMs;
    if (this.keyed !== null) batch.keyGroups![n] = this.keyed.keyGroup;
    this.filled[c] = n + 1;
    if (n + 1 >= this.batchSizeRecords) this.flushChannel(c);
  }

  private flushChannel(c: number): void {
    const batch = this.pending[c];
    if (batch === null || batch === undefined) return;
    this.pending[c] = null;
    const n = this.filled[c]!;
    this.filled[c] = 0;
    this.lastSize[c] = n;
    if (n < batch.values.length) {
      batch.values.length = n;
      batch.timestamps.length = n;
      if (batch.keyGroups !== undefined) batch.keyGroups.length = n;
    }
    const channel = this.channels[c]!;
    channel.push(batch);
    if (channel.isFull()) this.availability.blocked = true;
  }

  /** Pushes partial batches so downstream sees them now (end of a task's time slice). */
  flushAll(): void {
    for (let c = 0; c < this.pending.length; c++) this.flushChannel(c);
  }

  broadcastEvent(event: StreamEvent): void {
    this.flushAll();
    for (const channel of this.channels) channel.push(event);
  }

  /** Unaligned barrier: ahead of everything queued in every channel. */
  broadcastPriority(event: StreamEvent): void {
    this.flushAll();
    for (const channel of this.channels) channel.pushPriority(event);
  }

  anyFull(): boolean {
    for (const channel of this.channels) if (channel.isFull()) return true;
    return false;
  }
}
