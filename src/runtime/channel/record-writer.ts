import type { OutputChannel } from './channel.js';
import type { ChannelSelector } from './partitioner.js';
import { newRecordBatch, type RecordBatch, type StreamEvent } from './stream-element.js';

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
  recordsOut = 0;

  constructor(
    readonly channels: readonly OutputChannel[],
    private readonly selector: ChannelSelector,
    private readonly batchSizeRecords: number,
    private readonly availability: OutputAvailability,
  ) {
    if (channels.length === 0) throw new Error('a record writer needs at least one channel');
    this.pending = channels.map(() => null);
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
      batch = newRecordBatch();
      this.pending[c] = batch;
    }
    batch.values.push(value);
    batch.timestamps.push(timestampMs);
    if (batch.values.length >= this.batchSizeRecords) this.flushChannel(c);
  }

  private flushChannel(c: number): void {
    const batch = this.pending[c];
    if (batch === null || batch === undefined) return;
    this.pending[c] = null;
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
