/**
 * Test harnesses for process functions, as Flink's `ProcessFunctionTestHarnesses` and
 * `KeyedOneInputStreamOperatorTestHarness`: one subtask's operator driven by hand, with no
 * job, no threads and no wall clock. A test pushes records with their timestamps, advances the
 * watermark (event-time timers fire) and the processing time (processing-time timers fire),
 * reads what the function emitted (records, side outputs, watermarks), and can snapshot the
 * state and timers and restore them into a new harness, as a restart would.
 */
import type { KeyedProcessFunction, KeySelector, OutputTypeNotInferred, ProcessFunction } from '../api/functions.js';
import type { OutputTag } from '../api/output-tag.js';
import { KeyedProcessOperator } from '../runtime/operators/keyed-process-operator.js';
import { ProcessOperator } from '../runtime/operators/process-operator.js';
import { MAX_WATERMARK, NO_TIMESTAMP } from '../runtime/channel/stream-element.js';
import type { Clock } from '../runtime/task/clock.js';
import type { OperatorRuntime } from '../runtime/task/operator-runtime.js';
import type { Output } from '../runtime/task/output.js';
import { ProcessingTimeService } from '../runtime/task/processing-time-service.js';
import type { StreamOperator } from '../runtime/task/stream-operator.js';
import { computeDefaultMaxParallelism, keyGroupRangeForOperator, type KeyType } from '../runtime/state/key-group.js';
import type { KeyedStateBackend } from '../runtime/state/keyed-state-backend.js';
import type { KeyedStateSnapshot } from '../runtime/state/keyed-state-snapshot.js';
import { OperatorStateBackend, type OperatorStateEntry } from '../runtime/state/operator-state-backend.js';
import { createKeyedStateBackend } from '../runtime/state/state-backend-factory.js';
import { assert } from '../util/assert.js';

/** What a harness's function emitted, in order: records with their timestamps, and watermarks. */
export type HarnessOutput<T> =
  | { readonly kind: 'record'; readonly value: T; readonly timestampMs: number | undefined }
  | { readonly kind: 'watermark'; readonly watermarkMs: number };

/** A harness's state and timers at one moment: restore it into a new harness with `restoreFrom`. */
export class HarnessSnapshot {
  /** @internal */
  constructor(
    /** @internal */ readonly keyed: readonly KeyedStateSnapshot[],
    /** @internal */ readonly operatorState: readonly OperatorStateEntry[],
    /** The processing time when it was taken: a harness restored from it starts there. */
    readonly processingTimeMs: number,
  ) {}
}

export interface HarnessOptions {
  /** The processing time the harness starts at (default 0). */
  readonly processingTimeMs?: number;
  /** State and timers to start from (from `snapshot()` of another harness). */
  readonly restoreFrom?: HarnessSnapshot;
  /** The subtask this harness plays and the operator's parallelism (default 0 of 1): with a keyed function, which key groups it owns. */
  readonly subtaskIndex?: number;
  readonly parallelism?: number;
  /** The operator's max parallelism, the number of key groups (default as a job's: 128 for parallelism 1). */
  readonly maxParallelism?: number;
}

/** Processing time that moves only when the test says so. */
class ManualClock implements Clock {
  private readonly due: { atMs: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  constructor(public timeMs: number) {}

  nowMs(): number {
    return this.timeMs;
  }

  schedule(delayMs: number, fn: () => void): () => void {
    const entry = { atMs: this.timeMs + Math.max(0, Number.isNaN(delayMs) ? 0 : delayMs), seq: this.seq++, fn };
    this.due.push(entry);
    return () => {
      const i = this.due.indexOf(entry);
      if (i >= 0) this.due.splice(i, 1);
    };
  }

  /** The earliest callback due at or before `timeMs`, taken off the list; undefined if none. */
  takeDue(timeMs: number): (() => void) | undefined {
    let best = -1;
    for (let i = 0; i < this.due.length; i++) {
      const d = this.due[i]!;
      if (d.atMs > timeMs) continue;
      if (best < 0 || d.atMs < this.due[best]!.atMs || (d.atMs === this.due[best]!.atMs && d.seq < this.due[best]!.seq)) best = i;
    }
    if (best < 0) return undefined;
    const [d] = this.due.splice(best, 1);
    this.timeMs = Math.max(this.timeMs, d!.atMs);
    return d!.fn;
  }
}

class RecordingOutput<T> implements Output<T> {
  readonly elements: HarnessOutput<T>[] = [];
  readonly sides = new Map<string, { value: unknown; timestampMs: number | undefined }[]>();

  collect(value: T, timestampMs: number): void {
    this.elements.push({ kind: 'record', value, timestampMs: timestampMs === NO_TIMESTAMP ? undefined : timestampMs });
  }

  collectSide(tag: OutputTag<unknown>, value: unknown, timestampMs: number): void {
    const list = this.sides.get(tag.id) ?? [];
    list.push({ value, timestampMs: timestampMs === NO_TIMESTAMP ? undefined : timestampMs });
    this.sides.set(tag.id, list);
  }

  emitWatermark(watermarkMs: number): void {
    this.elements.push({ kind: 'watermark', watermarkMs });
  }

  emitWatermarkStatus(): void {}
}

/**
 * One subtask of a one-input operator around a process function. Every call runs to the end
 * before it returns: the function's output is there to read at once.
 */
export class OneInputHarness<IN, OUT> {
  private readonly mails: (() => void)[] = [];
  private readonly clock: ManualClock;
  private readonly output = new RecordingOutput<OUT>();
  private readonly operatorState = new OperatorStateBackend();
  private readonly backend: KeyedStateBackend | undefined;
  private closed = false;

  private constructor(
    private readonly operator: StreamOperator<OUT>,
    keySelector: KeySelector<unknown, KeyType> | undefined,
    options: HarnessOptions,
  ) {
    const parallelism = options.parallelism ?? 1;
    const subtaskIndex = options.subtaskIndex ?? 0;
    const maxParallelism = options.maxParallelism ?? computeDefaultMaxParallelism(parallelism);
    assert(Number.isInteger(parallelism) && parallelism >= 1, `harness parallelism must be a whole number >= 1, got ${parallelism}`);
    assert(Number.isInteger(subtaskIndex) && subtaskIndex >= 0 && subtaskIndex < parallelism, `harness subtaskIndex must be in [0, ${parallelism}), got ${subtaskIndex}`);
    const restore = options.restoreFrom;
    this.clock = new ManualClock(options.processingTimeMs ?? restore?.processingTimeMs ?? 0);
    const processingTime = new ProcessingTimeService(this.clock, (mail) => this.mails.push(mail));
    this.backend =
      keySelector === undefined
        ? undefined
        : createKeyedStateBackend(undefined, keyGroupRangeForOperator(maxParallelism, parallelism, subtaskIndex), maxParallelism, () => this.clock.nowMs());
    if (restore !== undefined) {
      this.operatorState.restore(restore.operatorState);
      if (restore.keyed.length > 0) {
        if (this.backend === undefined) throw new Error('the snapshot holds keyed state, but this harness has no key selector: restore it into forKeyedProcessFunction');
        this.backend.restore(restore.keyed);
      }
    }
    const runtime: OperatorRuntime = {
      name: 'harness',
      uid: 'harness',
      subtaskIndex,
      parallelism,
      maxParallelism,
      attemptNumber: 0,
      restoredCheckpointId: restore === undefined ? undefined : 1,
      checkpointing: true,
      processingTime,
      operatorState: this.operatorState,
      keyedBackend: this.backend,
      keySelector1: keySelector,
      keySelector2: undefined,
      waitFor: () => {
        throw new Error('the harness runs synchronous process functions only');
      },
      pauseInput: () => {
        throw new Error('the harness runs synchronous process functions only');
      },
      enqueueMail: (mail) => this.mails.push(mail),
    };
    operator.setup(runtime, this.output);
  }

  /** @internal */
  static async open<IN, OUT>(operator: StreamOperator<OUT>, keySelector: KeySelector<unknown, KeyType> | undefined, options: HarnessOptions): Promise<OneInputHarness<IN, OUT>> {
    const h = new OneInputHarness<IN, OUT>(operator, keySelector, options);
    await operator.open();
    h.runMails();
    return h;
  }

  private runMails(): void {
    for (let mail = this.mails.shift(); mail !== undefined; mail = this.mails.shift()) mail();
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new Error(`harness.${what}: the harness is closed`);
  }

  /** Processes a record, with its event timestamp (none if omitted). */
  processElement(value: IN, timestampMs?: number): void {
    this.checkOpen('processElement');
    if (timestampMs !== undefined && !Number.isFinite(timestampMs)) throw new RangeError(`harness.processElement: the timestamp must be a finite number of milliseconds, got ${timestampMs}`);
    this.operator.processElement(value, timestampMs ?? NO_TIMESTAMP);
    this.runMails();
  }

  /** Advances event time: event-time timers at or before it fire, then the watermark goes to the output. */
  processWatermark(watermarkMs: number): void {
    this.checkOpen('processWatermark');
    if (!Number.isFinite(watermarkMs)) throw new RangeError(`harness.processWatermark: give a finite number of milliseconds, got ${watermarkMs}`);
    this.operator.processWatermark(watermarkMs);
    this.runMails();
  }

  /** Advances processing time to `timeMs`: processing-time timers due by then fire, in time order. */
  setProcessingTime(timeMs: number): void {
    this.checkOpen('setProcessingTime');
    if (!Number.isFinite(timeMs)) throw new RangeError(`harness.setProcessingTime: give a finite number of milliseconds, got ${timeMs}`);
    if (timeMs < this.clock.timeMs) throw new RangeError(`harness.setProcessingTime: processing time cannot go back (now ${this.clock.timeMs}, asked ${timeMs})`);
    for (let due = this.clock.takeDue(timeMs); due !== undefined; due = this.clock.takeDue(timeMs)) {
      due();
      this.runMails();
    }
    this.clock.timeMs = timeMs;
  }

  getProcessingTime(): number {
    return this.clock.timeMs;
  }

  /** Everything emitted so far, records and watermarks, in order. */
  getOutput(): readonly HarnessOutput<OUT>[] {
    return this.output.elements;
  }

  /** The records emitted so far (their values), in order. */
  extractOutputValues(): OUT[] {
    return this.output.elements.flatMap((e) => (e.kind === 'record' ? [e.value] : []));
  }

  /** The records sent to a side output so far, in order. */
  getSideOutput<X>(tag: OutputTag<X>): X[] {
    return (this.output.sides.get(tag.id) ?? []).map((e) => e.value as X);
  }

  /** Forgets the output collected so far (state and timers stay). */
  clearOutput(): void {
    this.output.elements.length = 0;
    this.output.sides.clear();
  }

  /** The state and timers now, as a checkpoint would take them. */
  async snapshot(): Promise<HarnessSnapshot> {
    this.checkOpen('snapshot');
    const keyed = this.backend === undefined ? [] : [await this.backend.snapshot()()];
    return new HarnessSnapshot(keyed, this.operatorState.snapshot(), this.clock.timeMs);
  }

  /** Ends the input, as at the end of a bounded stream: the final watermark (every event-time timer fires), then the operator's finish. */
  async endInput(): Promise<void> {
    this.checkOpen('endInput');
    this.processWatermark(MAX_WATERMARK);
    await this.operator.finish();
    this.runMails();
  }

  /** Closes the function and frees the state. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.operator.close();
    } finally {
      this.backend?.dispose();
    }
  }
}

/** An inline function object's output type, which TypeScript cannot infer from its body (see docs/concepts.md, Output types). */
type HarnessOutputNotInferred = OutputTypeNotInferred<'pass a typed function (a class, or an object typed ProcessFunction<In, Out>), or annotate out: Collector<Out>'>;

/** Harnesses for process functions (Flink's `ProcessFunctionTestHarnesses`). */
export const ProcessFunctionTestHarnesses = {
  /** A ProcessFunction on a non-keyed stream. */
  forProcessFunction<IN, OUT = HarnessOutputNotInferred>(fn: ProcessFunction<IN, OUT>, options: HarnessOptions = {}): Promise<OneInputHarness<IN, OUT>> {
    return OneInputHarness.open<IN, OUT>(new ProcessOperator<IN, OUT>(fn) as StreamOperator<OUT>, undefined, options);
  },

  /** A KeyedProcessFunction, its records keyed by `keySelector` (as `keyBy(keySelector).process(fn)`): keyed state and timers. */
  forKeyedProcessFunction<K extends KeyType, IN, OUT = HarnessOutputNotInferred>(
    fn: KeyedProcessFunction<K, IN, OUT>,
    keySelector: KeySelector<IN, K>,
    options: HarnessOptions = {},
  ): Promise<OneInputHarness<IN, OUT>> {
    if (typeof keySelector !== 'function') throw new TypeError('forKeyedProcessFunction needs a key selector (record) => key');
    return OneInputHarness.open<IN, OUT>(new KeyedProcessOperator<K, IN, OUT>(fn) as StreamOperator<OUT>, keySelector as KeySelector<unknown, KeyType>, options);
  },
};
