import { previewValue } from '../../util/preview.js';
import type { AsyncWaitSettings } from '../../api/async-data-stream.js';
import type { AsyncFunction, ResultFuture } from '../../api/functions.js';
import { operatorListState, type ListState } from '../../api/state-descriptors.js';
import { blame, StreamOperator } from '../task/stream-operator.js';
import { runtimeContext } from './contexts.js';
import { perSubtask } from './keyed-operator.js';
import { streamElementQueue, type AsyncRecordEntry, type QueueOutput, type StreamElementQueue } from './stream-element-queue.js';

/** A call that did not complete within the timeout of orderedWait/unorderedWait (and the function has no timeout()). */
export class AsyncTimeoutError extends Error {
  override readonly name = 'AsyncTimeoutError';
}

/** The operator state holding the records whose calls were under way at a checkpoint: [value, timestamp]. */
export const ASYNC_QUEUE_STATE = '_async-wait-queue';

const noop = (): void => {};

/** One record's call: its attempts, its timeout and its retry timer. */
interface AsyncCall<OUT> {
  readonly entry: AsyncRecordEntry<OUT>;
  /** Retries made so far; a completion of an older attempt (or after the timeout: -1) is ignored. */
  attempt: number;
  /** The record's outcome is decided: results queued, or the job failing. */
  settled: boolean;
  cancelTimeout: () => void;
  cancelRetry: () => void;
}

/** Runs a user method that completes `future`: a throw, or a returned promise that rejects, completes it exceptionally. */
function callUser(method: () => unknown, future: CheckedResultFuture, fn: string): void {
  let r: unknown;
  try {
    r = method();
  } catch (e) {
    future.completeExceptionally(e);
    return;
  }
  if (r === undefined) return;
  if (typeof r === 'object' && r !== null && typeof (r as Promise<unknown>).then === 'function') {
    (r as Promise<unknown>).then(
      (v) => refuseReturnedResult(v, future, fn),
      (e: unknown) => future.completeExceptionally(e),
    );
    return;
  }
  refuseReturnedResult(r, future, fn);
}

/**
 * A result returned (or resolved) instead of passed to the ResultFuture, while the future is
 * still open: the call would wait for its timeout (or forever without one). Only values that
 * look like results count (a primitive, an array, a plain object): a function written as
 * `(x, rf) => setTimeout(() => rf.complete([x]), 10)` returns a timer, which is fine.
 */
function refuseReturnedResult(v: unknown, future: CheckedResultFuture, fn: string): void {
  if (v === undefined || future.done) return;
  const looksLikeResult = typeof v !== 'object' || v === null || Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype;
  if (!looksLikeResult || typeof v === 'function') return;
  future.completeExceptionally(
    new Error(
      `the ${fn} returned ${describe(v)} instead of completing its ResultFuture, so the call would only end at its timeout: ` +
        'pass the results to resultFuture.complete([...]) (e.g. async (input, resultFuture) => resultFuture.complete([await lookup(input)]))',
    ),
  );
}

/** A ResultFuture that knows whether it was completed. */
interface CheckedResultFuture extends ResultFuture<never> {
  readonly done: boolean;
}

/** A short description of a record for an error message. */
function describe(value: unknown): string {
  return previewValue(value, 80);
}

/**
 * Flink's AsyncWaitOperator: starts the user's asynchronous call for each record and emits
 * its results when the queue lets them go (in order, or as they come within watermarks).
 *
 * Everything that changes the queue runs on the subtask's thread: a ResultFuture completed
 * from any callback only enqueues mail, so results are emitted between records, in order with
 * timers and checkpoint barriers. When the queue holds `capacity` elements the operator
 * pauses the subtask's input (mail still runs: the completions that make room, checkpoint
 * triggers, timers). A record fanned out by a chained operator before this one may still add
 * its remaining records before the pause takes effect.
 *
 * At a checkpoint the records still in the queue (called, or completed and not yet emitted)
 * go into operator state; a restored subtask calls them again when it opens. Their results
 * go downstream after the barrier, so a restore from that checkpoint emits them once more,
 * in the attempt that replaces the one whose output was not committed.
 */
export class AsyncWaitOperator<IN, OUT> extends StreamOperator<OUT> {
  private readonly fn: AsyncFunction<IN, OUT>;
  private queue!: StreamElementQueue<OUT>;
  private state!: ListState<[unknown, number]>;
  private readonly calls = new Set<AsyncCall<OUT>>();
  /** Resolves the input pause once the queue has room. */
  private room: (() => void) | null = null;
  /** Resolves finish() once the queue is empty. */
  private drained: (() => void) | null = null;
  private closed = false;
  private readonly queueOutput: QueueOutput<OUT> = {
    record: (results, timestampMs) => {
      for (const r of results) this.output.collect(r, timestampMs);
    },
    watermark: (watermarkMs) => this.output.emitWatermark(watermarkMs),
  };

  constructor(
    fn: AsyncFunction<IN, OUT>,
    private readonly settings: AsyncWaitSettings<OUT>,
  ) {
    super();
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
  }

  override async open(): Promise<void> {
    const rt = this.runtime;
    this.queue = streamElementQueue<OUT>(this.settings.ordered, this.settings.capacity);
    this.state = rt.operatorState.getListState(operatorListState<[unknown, number]>(ASYNC_QUEUE_STATE));
    await this.fn.open?.(runtimeContext(rt));
    // The records whose calls were under way at the checkpoint: called again, in their order.
    for (const [value, timestampMs] of this.state.get()) this.startCall(this.queue.addRecord(value, timestampMs));
    if (this.queue.isFull()) this.pauseInput();
  }

  processElement(value: unknown, timestampMs: number): void {
    this.startCall(this.queue.addRecord(value, timestampMs));
    if (this.queue.isFull()) this.pauseInput();
  }

  override processWatermark(watermarkMs: number): void {
    if (watermarkMs <= this.currentWatermark) return;
    this.currentWatermark = watermarkMs;
    // In the queue: it goes out after the results of the records before it.
    this.queue.addWatermark(watermarkMs);
    this.emit();
    if (this.queue.isFull()) this.pauseInput();
  }

  override snapshotState(checkpointId: number): void | Promise<void> {
    this.state.update(this.queue.records().map((e): [unknown, number] => [e.value, e.timestampMs]));
    return super.snapshotState(checkpointId);
  }

  /** End of input: every call completes and its results go out before the operators after this one finish. */
  override async finish(): Promise<void> {
    while (this.queue.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  override close(): void | Promise<void> {
    this.closed = true;
    for (const call of this.calls) {
      call.cancelTimeout();
      call.cancelRetry();
    }
    this.calls.clear();
    return super.close();
  }

  private pauseInput(): void {
    if (this.room !== null) return;
    this.runtime.pauseInput(new Promise<void>((resolve) => (this.room = resolve)));
  }

  private startCall(entry: AsyncRecordEntry<OUT>): void {
    const call: AsyncCall<OUT> = { entry, attempt: 0, settled: false, cancelTimeout: noop, cancelRetry: noop };
    this.calls.add(call);
    const timeoutMs = this.settings.timeoutMs;
    if (timeoutMs > 0) {
      const pts = this.runtime.processingTime;
      call.cancelTimeout = pts.registerTimer(pts.nowMs() + timeoutMs, () => this.onTimeout(call));
    }
    this.invoke(call);
  }

  /** Starts the current attempt of a call. */
  private invoke(call: AsyncCall<OUT>): void {
    const attempt = call.attempt;
    const future = this.resultFuture(
      (results) => this.onResults(call, attempt, results),
      (error) => this.onError(call, attempt, error),
    );
    callUser(() => this.fn.asyncInvoke(call.entry.value as IN, future), future, 'asyncInvoke function');
  }

  /** A ResultFuture whose first completion runs `ok` or `failed` as mail of the subtask. */
  private resultFuture(ok: (results: readonly OUT[]) => void, failed: (error: unknown) => void): ResultFuture<OUT> & { readonly done: boolean } {
    let used = false;
    return {
      get done() {
        return used;
      },
      complete: (results) => {
        if (used) return;
        used = true;
        if (results === null || typeof results !== 'object' || typeof (results as Iterable<OUT>)[Symbol.iterator] !== 'function') {
          const got = typeof results === 'string' ? 'a string' : describe(results);
          this.runtime.enqueueMail(() => failed(new TypeError(`ResultFuture.complete takes the call's results as an array (or another iterable), got ${got}: pass complete([result])`)));
          return;
        }
        const copy = Array.from(results);
        this.runtime.enqueueMail(() => ok(copy));
      },
      completeExceptionally: (error) => {
        if (used) return;
        used = true;
        this.runtime.enqueueMail(() => failed(error));
      },
    };
  }

  private onResults(call: AsyncCall<OUT>, attempt: number, results: readonly OUT[]): void {
    if (call.settled || this.closed || attempt !== call.attempt) return;
    const retry = this.settings.retry;
    if (retry !== undefined && call.attempt < retry.maxAttempts && retry.resultPredicate?.(results) === true) {
      this.scheduleRetry(call);
      return;
    }
    this.settle(call, results);
  }

  private onError(call: AsyncCall<OUT>, attempt: number, error: unknown): void {
    if (call.settled || this.closed || attempt !== call.attempt) return;
    const retry = this.settings.retry;
    if (retry !== undefined && call.attempt < retry.maxAttempts && retry.exceptionPredicate?.(error) === true) {
      this.scheduleRetry(call);
      return;
    }
    this.fail(call, error, `the async call for record ${describe(call.entry.value)} failed${call.attempt > 0 ? ` (after ${call.attempt} retries)` : ''}`);
  }

  private scheduleRetry(call: AsyncCall<OUT>): void {
    call.attempt++;
    const pts = this.runtime.processingTime;
    const delayMs = this.settings.retry!.backoffMs(call.attempt);
    call.cancelRetry = pts.registerTimer(pts.nowMs() + delayMs, () => {
      call.cancelRetry = noop;
      if (!call.settled && !this.closed) this.invoke(call);
    });
  }

  private onTimeout(call: AsyncCall<OUT>): void {
    if (call.settled || this.closed) return;
    call.cancelTimeout = noop;
    call.cancelRetry();
    // Completions of the attempt still under way no longer count.
    call.attempt = -1;
    const timeout = this.fn.timeout;
    const what = `the async call for record ${describe(call.entry.value)} did not complete within ${this.settings.timeoutMs} ms`;
    if (timeout === undefined) {
      this.fail(call, new AsyncTimeoutError(`${what}; raise the timeout of AsyncDataStream.orderedWait/unorderedWait, or give the function a timeout(input, resultFuture) that completes it (a default result, or none)`), undefined);
      return;
    }
    const future = this.resultFuture(
      (results) => {
        if (!call.settled && !this.closed) this.settle(call, results);
      },
      (error) => {
        if (!call.settled && !this.closed) this.fail(call, error, `${what}, and its timeout() failed`);
      },
    );
    callUser(() => timeout.call(this.fn, call.entry.value as IN, future), future, 'timeout function');
  }

  private settle(call: AsyncCall<OUT>, results: readonly OUT[]): void {
    call.settled = true;
    call.cancelTimeout();
    call.cancelRetry();
    this.calls.delete(call);
    this.queue.complete(call.entry, results);
    this.emit();
  }

  /** Fails the subtask (this runs as mail: the throw reaches the task loop). */
  private fail(call: AsyncCall<OUT>, error: unknown, context: string | undefined): never {
    call.settled = true;
    call.cancelTimeout();
    call.cancelRetry();
    const e = error instanceof Error ? error : new Error(String(error));
    throw blame(context === undefined ? e : new Error(`${context}: ${e.message}`, { cause: e }), this);
  }

  private emit(): void {
    if (this.queue.emitCompleted(this.queueOutput) === 0) return;
    if (this.room !== null && !this.queue.isFull()) {
      const resume = this.room;
      this.room = null;
      resume();
    }
    if (this.drained !== null && this.queue.size === 0) {
      const done = this.drained;
      this.drained = null;
      done();
    }
  }
}
