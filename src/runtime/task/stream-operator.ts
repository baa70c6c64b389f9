import { MIN_WATERMARK } from '../channel/stream-element.js';
import { asError } from '../../util/thrown.js';
import { assert } from '../../util/assert.js';
import type { CheckpointListener } from '../../api/functions.js';
import type { OperatorRuntime } from './operator-runtime.js';
import type { Output, RecordSink } from './output.js';

/**
 * The runtime side of an operator. A subtask runs a chain of them; the head gets the
 * subtask's input, each emits into its Output. Operators never see barriers: they get
 * snapshot and notification hooks (checkpointing).
 */
export abstract class StreamOperator<OUT = unknown> {
  output!: Output<OUT>;
  runtime!: OperatorRuntime;
  protected currentWatermark = MIN_WATERMARK;
  private input1Watermark = MIN_WATERMARK;
  private input2Watermark = MIN_WATERMARK;
  private input1Idle = false;
  private input2Idle = false;
  private outputIdle = false;
  /**
   * The key group of the record being processed, when the batch it came in carries it (a
   * keyBy computed it to pick the channel) and the input's key selector is the keyBy's; -1
   * otherwise. Set by the task before each such record; a keyed operator takes it when it sets
   * the record's key (see KeyedOperator.setKeyOf).
   */
  keyGroupHint = -1;

  setup(runtime: OperatorRuntime, output: Output<OUT>): void {
    this.runtime = runtime;
    this.output = output;
  }

  open(): void | Promise<void> {}

  /** A record on the (first) input. */
  abstract processElement(value: unknown, timestampMs: number): void;

  /** A record on the second input of a two-input operator. */
  processElement2(_value: unknown, _timestampMs: number): void {
    throw new Error(`operator '${this.runtime.name}' has one input`);
  }

  processWatermark(watermarkMs: number): void {
    if (watermarkMs <= this.currentWatermark) return;
    if (this.watermarkUnfinished) throw new Error(`operator '${this.runtime.name}' got watermark ${watermarkMs} before it finished watermark ${this.currentWatermark} (a subtask must resume an unfinished watermark before any other work)`);
    this.currentWatermark = watermarkMs;
    if (this.onWatermark(watermarkMs) === false) {
      // Its timers stopped part-way to give the thread back: the subtask calls resumeWatermark.
      this.watermarkUnfinished = true;
      this.runtime.defer!(() => this.resumeWatermark());
      return;
    }
    this.output.emitWatermark(watermarkMs);
  }

  /** Set while the current watermark's timers have not all fired (it has not gone downstream). */
  private watermarkUnfinished = false;

  /**
   * Continues the watermark whose timers stopped part-way; true when they have all fired and
   * the watermark has gone downstream.
   */
  resumeWatermark(): boolean {
    assert(this.watermarkUnfinished, `operator '${this.runtime.name}' has no watermark to resume`);
    if (this.onWatermark(this.currentWatermark) === false) return false;
    this.watermarkUnfinished = false;
    this.output.emitWatermark(this.currentWatermark);
    return true;
  }

  processWatermark1(watermarkMs: number): void {
    this.input1Watermark = watermarkMs;
    this.combineInputWatermarks();
  }

  processWatermark2(watermarkMs: number): void {
    this.input2Watermark = watermarkMs;
    this.combineInputWatermarks();
  }

  /** Two inputs: the minimum over the inputs that are not idle (Flink's AbstractStreamOperator). */
  private combineInputWatermarks(): void {
    const w1 = this.input1Idle ? Number.POSITIVE_INFINITY : this.input1Watermark;
    const w2 = this.input2Idle ? Number.POSITIVE_INFINITY : this.input2Watermark;
    const combined = Math.min(w1, w2);
    if (Number.isFinite(combined)) this.processWatermark(combined);
  }

  processWatermarkStatus1(idle: boolean): void {
    this.input1Idle = idle;
    this.combineInputStatus();
  }

  processWatermarkStatus2(idle: boolean): void {
    this.input2Idle = idle;
    this.combineInputStatus();
  }

  private combineInputStatus(): void {
    const idle = this.input1Idle && this.input2Idle;
    if (idle !== this.outputIdle) {
      this.outputIdle = idle;
      this.output.emitWatermarkStatus(idle);
    }
    if (!idle) this.combineInputWatermarks();
  }

  /**
   * Event time advanced: fire timers before the watermark moves on. Returns false when it
   * stopped part-way (only when the runtime's `shouldYield` said so); it is then called again
   * with the same watermark until it returns anything else.
   */
  protected onWatermark(_watermarkMs: number): boolean | void {}

  processWatermarkStatus(idle: boolean): void {
    this.output.emitWatermarkStatus(idle);
  }

  /** End of input: emit what is still buffered. */
  finish(): void | Promise<void> {}

  /**
   * Synchronous part of a checkpoint, called at the barrier: capture what the operator keeps
   * outside its state backends. The returned promise (if any) is the asynchronous part and
   * must settle before the checkpoint is acknowledged (e.g. a sink's pre-commit flush).
   */
  snapshotState(checkpointId: number): void | Promise<void> {
    return this.userFunction?.snapshotState?.(checkpointId);
  }

  notifyCheckpointComplete(checkpointId: number): void | Promise<void> {
    return this.userFunction?.notifyCheckpointComplete?.(checkpointId);
  }

  notifyCheckpointAborted(checkpointId: number): void | Promise<void> {
    return this.userFunction?.notifyCheckpointAborted?.(checkpointId);
  }

  /** The user function whose checkpoint hooks and close() the operator forwards, if any. */
  protected userFunction: (CheckpointListener & { close?: () => void | Promise<void> }) | undefined;

  close(): void | Promise<void> {
    return this.userFunction?.close?.();
  }
}

/** Hands records from one operator to the next in the same chain, without a channel. */
export class ChainedInput implements RecordSink {
  constructor(readonly operator: StreamOperator) {}
  push(value: unknown, timestampMs: number): void {
    try {
      this.operator.processElement(value, timestampMs);
    } catch (e) {
      throw blame(e, this.operator);
    }
  }
  pushWatermark(watermarkMs: number): void {
    this.operator.processWatermark(watermarkMs);
  }
  pushWatermarkStatus(idle: boolean): void {
    this.operator.processWatermarkStatus(idle);
  }
}

const BLAMED = Symbol.for('sluice.operator');

/** Tags an error with the innermost operator it came from (once), for the failure message. */
export function blame(e: unknown, operator: StreamOperator): Error {
  return blameOperatorNamed(e, operator.runtime?.name ?? 'unknown');
}

/** `blame` by the operator's name (a source, which has no StreamOperator). */
export function blameOperatorNamed(e: unknown, name: string): Error {
  // A thrown string or undefined is wrapped, so that it too names the operator that threw it.
  const error = asError(e);
  if (!(BLAMED in error)) Object.defineProperty(error, BLAMED, { value: name, enumerable: false });
  return error;
}

export function blamedOperator(e: unknown): string | undefined {
  if (!(e instanceof Error) || !(BLAMED in e)) return undefined;
  const operator = (e as unknown as Record<symbol, unknown>)[BLAMED];
  return typeof operator === 'string' ? operator : undefined;
}

/** Whether `e` was marked by notAnOperatorFault. */
export function isUnblamable(e: unknown): boolean {
  return e instanceof Error && BLAMED in e && (e as unknown as Record<symbol, unknown>)[BLAMED] === null;
}

/** Marks an error no operator is to blame for (a lost connection between processes), whichever operator it reaches first. */
export function notAnOperatorFault(e: Error): void {
  Object.defineProperty(e, BLAMED, { value: null, enumerable: false });
}
