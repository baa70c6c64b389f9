import type { OutputTag } from '../../api/output-tag.js';
import type { RecordWriter } from '../channel/record-writer.js';
import { watermarkEvent, ACTIVE_STATUS, IDLE_STATUS } from '../channel/stream-element.js';

/** Where an operator emits: records with timestamps, side outputs, watermarks. */
export interface Output<T> {
  collect(value: T, timestampMs: number): void;
  collectSide(tag: OutputTag<unknown>, value: unknown, timestampMs: number): void;
  emitWatermark(watermarkMs: number): void;
  emitWatermarkStatus(idle: boolean): void;
}

/** What an output hands records to: the next chained operator, or a record writer. */
export interface RecordSink {
  push(value: unknown, timestampMs: number): void;
  pushWatermark(watermarkMs: number): void;
  pushWatermarkStatus(idle: boolean): void;
}

export class WriterSink implements RecordSink {
  constructor(readonly writer: RecordWriter) {}
  push(value: unknown, timestampMs: number): void {
    this.writer.emit(value, timestampMs);
  }
  pushWatermark(watermarkMs: number): void {
    this.writer.broadcastEvent(watermarkEvent(watermarkMs));
  }
  pushWatermarkStatus(idle: boolean): void {
    this.writer.broadcastEvent(idle ? IDLE_STATUS : ACTIVE_STATUS);
  }
}

class FanOut implements RecordSink {
  constructor(private readonly sinks: readonly RecordSink[]) {}
  push(value: unknown, timestampMs: number): void {
    for (let i = 0; i < this.sinks.length; i++) this.sinks[i]!.push(value, timestampMs);
  }
  pushWatermark(watermarkMs: number): void {
    for (const s of this.sinks) s.pushWatermark(watermarkMs);
  }
  pushWatermarkStatus(idle: boolean): void {
    for (const s of this.sinks) s.pushWatermarkStatus(idle);
  }
}

const discard: RecordSink = { push() {}, pushWatermark() {}, pushWatermarkStatus() {} };

export function fanOut(sinks: readonly RecordSink[]): RecordSink {
  if (sinks.length === 0) return discard;
  if (sinks.length === 1) return sinks[0]!;
  return new FanOut(sinks);
}

/**
 * A side output nobody reads is dropped, as in Flink; but a tag that is not an OutputTag (a
 * string, a tag's id) would drop every record sent to it without a word.
 */
function checkOutputTag(tag: unknown): void {
  if (typeof tag === 'object' && tag !== null && typeof (tag as { id?: unknown }).id === 'string' && typeof (tag as { tagId?: unknown }).tagId === 'number') return;
  const shown = typeof tag === 'string' ? `the string '${tag}'` : typeof tag === 'object' && tag !== null ? 'an object that is not an OutputTag' : String(tag);
  throw new TypeError(
    `ctx.output(tag, value) takes an OutputTag, got ${shown}: create the tag once (const late = new OutputTag<T>('late')), pass it to ctx.output and to getSideOutput`,
  );
}

/**
 * The output of one operator in a chain: the main output goes to `main`, side outputs by
 * tag. Watermarks go everywhere.
 */
export class OperatorOutput<T> implements Output<T> {
  recordsOut = 0;
  constructor(
    private readonly main: RecordSink,
    private readonly sides: ReadonlyMap<string, RecordSink>,
  ) {}

  collect(value: T, timestampMs: number): void {
    this.recordsOut++;
    this.main.push(value, timestampMs);
  }

  collectSide(tag: OutputTag<unknown>, value: unknown, timestampMs: number): void {
    const sink = this.sides.get(tag.id);
    if (sink !== undefined) sink.push(value, timestampMs);
    else checkOutputTag(tag);
  }

  emitWatermark(watermarkMs: number): void {
    this.main.pushWatermark(watermarkMs);
    for (const s of this.sides.values()) s.pushWatermark(watermarkMs);
  }

  emitWatermarkStatus(idle: boolean): void {
    this.main.pushWatermarkStatus(idle);
    for (const s of this.sides.values()) s.pushWatermarkStatus(idle);
  }
}
