/**
 * When an async call is tried again (Flink's AsyncRetryStrategy, from AsyncRetryStrategies):
 * a call whose results match `ifResult`, or whose error matches `ifException`, is called
 * again after a backoff, at most `maxAttempts` more times, all within the call's timeout.
 */
export interface AsyncRetryStrategy<OUT> {
  /** Retries at most (Flink's maxAttempts: a call is made up to maxAttempts + 1 times). */
  readonly maxAttempts: number;
  /** The wait before retry number `attempt` (1 for the first retry), in milliseconds. */
  backoffMs(attempt: number): number;
  /** Results that are retried (none when absent). */
  readonly resultPredicate: ((results: readonly OUT[]) => boolean) | undefined;
  /** Errors that are retried (none when absent). */
  readonly exceptionPredicate: ((error: unknown) => boolean) | undefined;
}

/** Flink's RetryPredicates. */
export const RetryPredicates = {
  /** Retries a call that completed with no results. */
  EMPTY_RESULT_PREDICATE: (results: readonly unknown[]): boolean => results.length === 0,
  /** Retries a call that failed, whatever the error. */
  HAS_EXCEPTION_PREDICATE: (): boolean => true,
} as const;

/** A retry strategy being built: add the predicates that say what is retried. */
export class AsyncRetryStrategyBuilder<OUT> implements AsyncRetryStrategy<OUT> {
  constructor(
    readonly maxAttempts: number,
    private readonly backoff: (attempt: number) => number,
    readonly resultPredicate: ((results: readonly OUT[]) => boolean) | undefined = undefined,
    readonly exceptionPredicate: ((error: unknown) => boolean) | undefined = undefined,
  ) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`an async retry strategy's maxAttempts must be an integer >= 1, not ${maxAttempts}`);
  }

  backoffMs(attempt: number): number {
    return this.backoff(attempt);
  }

  /** Retries calls whose results match. */
  ifResult<R extends OUT>(predicate: (results: readonly R[]) => boolean): AsyncRetryStrategyBuilder<R> {
    return new AsyncRetryStrategyBuilder<R>(this.maxAttempts, this.backoff, predicate, this.exceptionPredicate);
  }

  /** Retries calls that failed with a matching error. */
  ifException(predicate: (error: unknown) => boolean): AsyncRetryStrategyBuilder<OUT> {
    return new AsyncRetryStrategyBuilder<OUT>(this.maxAttempts, this.backoff, this.resultPredicate, predicate);
  }

  /** The strategy (Flink's builders end in build(); this one is usable as it is). */
  build(): AsyncRetryStrategy<OUT> {
    return this;
  }
}

function checkDelay(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`an async retry strategy's ${name} must be a finite number of milliseconds >= 0, not ${ms}`);
  return ms;
}

/** Flink's AsyncRetryStrategies. */
export const AsyncRetryStrategies = {
  /** No call is retried. */
  NO_RETRY_STRATEGY: undefined,
  /** Retries after the same wait each time. */
  fixedDelay<OUT = unknown>(maxAttempts: number, backoffMs: number): AsyncRetryStrategyBuilder<OUT> {
    checkDelay('backoff', backoffMs);
    return new AsyncRetryStrategyBuilder<OUT>(maxAttempts, () => backoffMs);
  },
  /** Retries after `initialDelayMs`, multiplied by `multiplier` each time, at most `maxRetryDelayMs`. */
  exponentialBackoff<OUT = unknown>(maxAttempts: number, initialDelayMs: number, maxRetryDelayMs: number, multiplier: number): AsyncRetryStrategyBuilder<OUT> {
    checkDelay('initial delay', initialDelayMs);
    checkDelay('maximum delay', maxRetryDelayMs);
    if (!Number.isFinite(multiplier) || multiplier < 1) throw new Error(`an async retry strategy's multiplier must be >= 1, not ${multiplier}`);
    return new AsyncRetryStrategyBuilder<OUT>(maxAttempts, (attempt) => Math.min(maxRetryDelayMs, initialDelayMs * multiplier ** (attempt - 1)));
  },
} as const;
