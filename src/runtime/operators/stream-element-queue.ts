import { assert } from '../../util/assert.js';
import { RingQueue } from '../channel/ring-queue.js';

/**
 * The queue of an async operator (Flink's StreamElementQueue): the records whose asynchronous
 * calls are under way or done but not yet emitted, and the watermarks between them. Pure
 * bookkeeping: the operator adds, completes and emits; the queue decides what may go out.
 *
 * - ordered: results leave in the order the records came, watermarks in their place;
 * - unordered: a record's results leave as soon as they are there, but never across a
 *   watermark (the records before a watermark, then the watermark, then those after it),
 *   so no result is late for the watermark that went out before it.
 */

/** A record in the queue: its input, and its results once its call completed. */
export interface AsyncRecordEntry<OUT> {
  readonly value: unknown;
  readonly timestampMs: number;
  /** Undefined until the call completed. */
  results: readonly OUT[] | undefined;
}

/** Where emitted elements go (the operator's output). */
export interface QueueOutput<OUT> {
  record(results: readonly OUT[], timestampMs: number): void;
  watermark(watermarkMs: number): void;
}

export interface StreamElementQueue<OUT> {
  /** Records and watermarks in the queue. */
  readonly size: number;
  readonly capacity: number;
  /** `size >= capacity`: the operator takes no more input until something was emitted. */
  isFull(): boolean;
  addRecord(value: unknown, timestampMs: number): AsyncRecordEntry<OUT>;
  addWatermark(watermarkMs: number): void;
  /** The call of `entry` completed with `results`. */
  complete(entry: AsyncRecordEntry<OUT>, results: readonly OUT[]): void;
  /** Emits what may go out now, in order; returns how many elements left the queue. */
  emitCompleted(out: QueueOutput<OUT>): number;
  /** The records still in the queue (called or completed, not emitted), for a snapshot. */
  records(): AsyncRecordEntry<OUT>[];
}

export function streamElementQueue<OUT>(ordered: boolean, capacity: number): StreamElementQueue<OUT> {
  assert(Number.isInteger(capacity) && capacity >= 1, 'an async queue holds at least one element');
  return ordered ? new OrderedStreamElementQueue<OUT>(capacity) : new UnorderedStreamElementQueue<OUT>(capacity);
}

interface WatermarkEntry {
  readonly watermarkMs: number;
}

type QueueEntry<OUT> = AsyncRecordEntry<OUT> | WatermarkEntry;

function isWatermark<OUT>(e: QueueEntry<OUT>): e is WatermarkEntry {
  return 'watermarkMs' in e;
}

function newRecord<OUT>(value: unknown, timestampMs: number): AsyncRecordEntry<OUT> {
  return { value, timestampMs, results: undefined };
}

function completeEntry<OUT>(entry: AsyncRecordEntry<OUT>, results: readonly OUT[]): void {
  assert(entry.results === undefined, 'an async call completes once');
  entry.results = results;
}

class OrderedStreamElementQueue<OUT> implements StreamElementQueue<OUT> {
  private readonly entries = new RingQueue<QueueEntry<OUT>>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  isFull(): boolean {
    return this.entries.size >= this.capacity;
  }

  addRecord(value: unknown, timestampMs: number): AsyncRecordEntry<OUT> {
    const entry = newRecord<OUT>(value, timestampMs);
    this.entries.push(entry);
    return entry;
  }

  addWatermark(watermarkMs: number): void {
    this.entries.push({ watermarkMs });
  }

  complete(entry: AsyncRecordEntry<OUT>, results: readonly OUT[]): void {
    completeEntry(entry, results);
  }

  emitCompleted(out: QueueOutput<OUT>): number {
    let emitted = 0;
    for (let head = this.entries.peek(); head !== undefined; head = this.entries.peek()) {
      if (isWatermark(head)) {
        this.entries.shift();
        out.watermark(head.watermarkMs);
      } else if (head.results !== undefined) {
        this.entries.shift();
        out.record(head.results, head.timestampMs);
      } else {
        break;
      }
      emitted++;
    }
    return emitted;
  }

  records(): AsyncRecordEntry<OUT>[] {
    const out: AsyncRecordEntry<OUT>[] = [];
    for (const e of this.entries) if (!isWatermark(e)) out.push(e);
    return out;
  }
}

/** Records between two watermarks (any order among themselves), or one watermark. */
interface Segment<OUT> {
  readonly watermarkMs: number | undefined;
  /** Records whose call is under way, in arrival order. */
  readonly incomplete: Set<AsyncRecordEntry<OUT>>;
  /** Records whose results are there, in completion order. */
  readonly completed: RingQueue<AsyncRecordEntry<OUT>>;
}

class UnorderedStreamElementQueue<OUT> implements StreamElementQueue<OUT> {
  private readonly segments = new RingQueue<Segment<OUT>>();
  /** The segment of every record still in the queue. */
  private readonly segmentOf = new Map<AsyncRecordEntry<OUT>, Segment<OUT>>();
  private count = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.capacity;
  }

  addRecord(value: unknown, timestampMs: number): AsyncRecordEntry<OUT> {
    let last = this.segments.peekLast();
    if (last === undefined || last.watermarkMs !== undefined) {
      last = { watermarkMs: undefined, incomplete: new Set(), completed: new RingQueue() };
      this.segments.push(last);
    }
    const entry = newRecord<OUT>(value, timestampMs);
    last.incomplete.add(entry);
    this.segmentOf.set(entry, last);
    this.count++;
    return entry;
  }

  addWatermark(watermarkMs: number): void {
    this.segments.push({ watermarkMs, incomplete: new Set(), completed: new RingQueue() });
    this.count++;
  }

  complete(entry: AsyncRecordEntry<OUT>, results: readonly OUT[]): void {
    const segment = this.segmentOf.get(entry);
    assert(segment !== undefined && segment.incomplete.delete(entry), 'a completed async call is in the queue, under way');
    completeEntry(entry, results);
    segment.completed.push(entry);
  }

  emitCompleted(out: QueueOutput<OUT>): number {
    let emitted = 0;
    for (let first = this.segments.peek(); first !== undefined; first = this.segments.peek()) {
      if (first.watermarkMs !== undefined) {
        this.segments.shift();
        this.count--;
        emitted++;
        out.watermark(first.watermarkMs);
        continue;
      }
      for (let e = first.completed.shift(); e !== undefined; e = first.completed.shift()) {
        this.segmentOf.delete(e);
        this.count--;
        emitted++;
        out.record(e.results!, e.timestampMs);
      }
      // Records still under way hold back the watermark after them (and all that follows).
      if (first.incomplete.size > 0) break;
      this.segments.shift();
    }
    return emitted;
  }

  records(): AsyncRecordEntry<OUT>[] {
    const out: AsyncRecordEntry<OUT>[] = [];
    for (const s of this.segments) {
      for (const e of s.completed) out.push(e);
      for (const e of s.incomplete) out.push(e);
    }
    return out;
  }
}
