/**
 * Flink's restart strategies (`restart-strategy.type`) as small objects with Flink's
 * RestartBackoffTimeStrategy API: the scheduler calls `notifyFailure(cause, nowMs)` on every
 * failure, then asks `canRestart()` and `getBackoffTimeMs()`. No clock or timer lives here: time
 * comes in as `nowMs` (pass a monotonic clock) and jitter takes randomness from an injected
 * `random()` so a seed reproduces a run.
 *
 * Semantics follow flink-runtime's `executiongraph/failover/*RestartBackoffTimeStrategy.java`:
 * - fixed-delay: `attempts` restarts, then give up; every delay is `delay`.
 * - failure-rate: give up when more than `max-failures-per-interval` failures fall inside a
 *   sliding window of `failure-rate-interval` (strictly longer than the interval = allowed).
 * - exponential-delay: delay = initial * multiplier^attempt (truncated to ms) plus jitter drawn
 *   uniformly from [-d*jitter, +d*jitter], clamped to [initial, max]; failures that arrive before
 *   the scheduled restart are merged into one attempt; when the failure comes at least
 *   `reset-backoff-threshold` after the scheduled restart time the attempt counter resets; gives
 *   up after `attempts-before-reset-backoff` attempts without a reset.
 *
 * `canRestart()` and `getBackoffTimeMs()` answer for the time of the latest `notifyFailure`,
 * which is when Flink's scheduler asks them.
 */
import { ConfigError, Configuration } from '../../config/configuration.js';

export type RestartStrategyName = 'none' | 'fixed-delay' | 'failure-rate' | 'exponential-delay';

export interface RestartBackoffTimeStrategy {
  readonly name: RestartStrategyName;
  /**
   * Records a failure at `nowMs`. Returns whether it starts a new restart attempt; only
   * exponential-delay returns false (a failure before the already scheduled restart is merged
   * into that attempt). Flink 1.x declared this void; callers may ignore the result.
   */
  notifyFailure(cause: Error, nowMs: number): boolean;
  /** Whether the job may restart after the failures notified so far. */
  canRestart(): boolean;
  /** How long to wait before restarting, measured from the latest failure. */
  getBackoffTimeMs(): number;
  /** How many restarts the job gets in all, when that is a fixed number (fixed-delay's attempts); undefined otherwise. */
  readonly restartsMax: number | undefined;
  /** The strategy, its options and its progress (for tests and debugging; not for users' messages). */
  describe(): string;
  /** Why `canRestart()` is false (for the job's failure message); undefined while it is true. */
  givingUpReason(): string | undefined;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new ConfigError(message);
}

function assertTimeMs(nowMs: number, previousMs: number | undefined, who: string): void {
  if (!Number.isFinite(nowMs)) throw new Error(`${who}: nowMs must be a finite number, got ${nowMs}`);
  if (previousMs !== undefined && nowMs < previousMs) {
    throw new Error(`${who}: time went backwards (${nowMs} < ${previousMs}); pass a monotonic clock`);
  }
}

// ---------------------------------------------------------------------------------------------

/** `none` (aliases `off`, `disable`): never restart. */
export class NoRestartStrategy implements RestartBackoffTimeStrategy {
  readonly name = 'none';
  readonly restartsMax = 0;

  notifyFailure(_cause: Error, nowMs: number): boolean {
    assertTimeMs(nowMs, undefined, 'none');
    return true;
  }

  canRestart(): boolean {
    return false;
  }

  getBackoffTimeMs(): number {
    return 0;
  }

  describe(): string {
    return 'none';
  }

  givingUpReason(): string {
    return 'none: restarts are disabled (restart-strategy.type)';
  }
}

// ---------------------------------------------------------------------------------------------

export interface FixedDelayOptions {
  /** Restarts allowed before the job fails (Flink `attempts`, default 1). */
  readonly attempts: number;
  readonly delayMs: number;
}

/** `fixed-delay` (alias `fixeddelay`). */
export class FixedDelayRestartStrategy implements RestartBackoffTimeStrategy {
  readonly name = 'fixed-delay';
  readonly restartsMax: number;
  private readonly attempts: number;
  private readonly delayMs: number;
  private failureCount = 0;
  private lastFailureMs: number | undefined = undefined;

  constructor(options: FixedDelayOptions) {
    check(Number.isInteger(options.attempts) && options.attempts >= 0, `restart-strategy.fixed-delay.attempts must be an integer >= 0, got ${options.attempts}`);
    check(Number.isFinite(options.delayMs) && options.delayMs >= 0, `restart-strategy.fixed-delay.delay must be >= 0 ms, got ${options.delayMs}`);
    this.attempts = options.attempts;
    this.restartsMax = options.attempts;
    this.delayMs = options.delayMs;
  }

  notifyFailure(_cause: Error, nowMs: number): boolean {
    assertTimeMs(nowMs, this.lastFailureMs, 'fixed-delay');
    this.lastFailureMs = nowMs;
    this.failureCount++;
    return true;
  }

  canRestart(): boolean {
    return this.failureCount <= this.attempts;
  }

  getBackoffTimeMs(): number {
    return this.delayMs;
  }

  describe(): string {
    return `fixed-delay(attempts=${this.attempts}, delayMs=${this.delayMs}, failures=${this.failureCount})`;
  }

  givingUpReason(): string | undefined {
    if (this.canRestart()) return undefined;
    return `fixed-delay: ${this.attempts} restart attempts exhausted`;
  }
}

// ---------------------------------------------------------------------------------------------

export interface FailureRateOptions {
  readonly maxFailuresPerInterval: number;
  readonly failureRateIntervalMs: number;
  readonly delayMs: number;
}

/** `failure-rate` (alias `failurerate`). */
export class FailureRateRestartStrategy implements RestartBackoffTimeStrategy {
  readonly name = 'failure-rate';
  readonly restartsMax = undefined;
  private readonly maxFailuresPerInterval: number;
  private readonly failureRateIntervalMs: number;
  private readonly delayMs: number;
  /** Times of the latest failures, oldest first; at most maxFailuresPerInterval + 1 entries. */
  private readonly failureTimesMs: number[] = [];

  constructor(options: FailureRateOptions) {
    check(
      Number.isInteger(options.maxFailuresPerInterval) && options.maxFailuresPerInterval > 0,
      `restart-strategy.failure-rate.max-failures-per-interval must be an integer > 0, got ${options.maxFailuresPerInterval}`,
    );
    check(
      Number.isFinite(options.failureRateIntervalMs) && options.failureRateIntervalMs > 0,
      `restart-strategy.failure-rate.failure-rate-interval must be > 0 ms, got ${options.failureRateIntervalMs}`,
    );
    check(Number.isFinite(options.delayMs) && options.delayMs >= 0, `restart-strategy.failure-rate.delay must be >= 0 ms, got ${options.delayMs}`);
    this.maxFailuresPerInterval = options.maxFailuresPerInterval;
    this.failureRateIntervalMs = options.failureRateIntervalMs;
    this.delayMs = options.delayMs;
  }

  notifyFailure(_cause: Error, nowMs: number): boolean {
    assertTimeMs(nowMs, this.failureTimesMs.at(-1), 'failure-rate');
    if (this.isWindowFull()) this.failureTimesMs.shift();
    this.failureTimesMs.push(nowMs);
    if (this.failureTimesMs.length > this.maxFailuresPerInterval + 1) {
      throw new Error('failure-rate: failure window grew beyond max-failures-per-interval + 1');
    }
    return true;
  }

  canRestart(): boolean {
    if (!this.isWindowFull()) return true;
    const latestMs = this.failureTimesMs.at(-1)!;
    const earliestMs = this.failureTimesMs[0]!;
    return latestMs - earliestMs > this.failureRateIntervalMs;
  }

  getBackoffTimeMs(): number {
    return this.delayMs;
  }

  describe(): string {
    return (
      `failure-rate(maxFailuresPerInterval=${this.maxFailuresPerInterval}, ` +
      `failureRateIntervalMs=${this.failureRateIntervalMs}, delayMs=${this.delayMs}, ` +
      `recentFailuresMs=[${this.failureTimesMs.join(', ')}])`
    );
  }

  givingUpReason(): string | undefined {
    if (this.canRestart()) return undefined;
    const spanMs = this.failureTimesMs.at(-1)! - this.failureTimesMs[0]!;
    return (
      `failure-rate: ${this.failureTimesMs.length} failures within ${spanMs} ms exceed ` +
      `${this.maxFailuresPerInterval} per ${this.failureRateIntervalMs} ms`
    );
  }

  private isWindowFull(): boolean {
    return this.failureTimesMs.length > this.maxFailuresPerInterval;
  }
}

// ---------------------------------------------------------------------------------------------

export interface ExponentialDelayOptions {
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly resetBackoffThresholdMs: number;
  readonly jitterFactor: number;
  readonly attemptsBeforeResetBackoff: number;
}

/** Java's Integer.MAX_VALUE, Flink's default for attempts-before-reset-backoff. */
export const INTEGER_MAX_VALUE = 2_147_483_647;

/** `exponential-delay` (alias `exponentialdelay`). */
export class ExponentialDelayRestartStrategy implements RestartBackoffTimeStrategy {
  readonly name = 'exponential-delay';
  readonly restartsMax = undefined;
  private readonly options: ExponentialDelayOptions;
  private readonly random: () => number;
  /** Attempts since the last reset; Flink's currentRestartAttempt. */
  private attempt = 0;
  /** When the restart of the current attempt is due; undefined before the first failure. */
  private nextRestartMs: number | undefined = undefined;
  private lastFailureMs: number | undefined = undefined;

  constructor(options: ExponentialDelayOptions, random: () => number) {
    const o = options;
    const key = 'restart-strategy.exponential-delay';
    check(Number.isFinite(o.initialBackoffMs) && o.initialBackoffMs >= 1, `${key}.initial-backoff must be at least 1 ms, got ${o.initialBackoffMs}`);
    check(Number.isFinite(o.maxBackoffMs) && o.maxBackoffMs >= 1, `${key}.max-backoff must be at least 1 ms, got ${o.maxBackoffMs}`);
    check(o.initialBackoffMs <= o.maxBackoffMs, `${key}.initial-backoff (${o.initialBackoffMs} ms) cannot be higher than ${key}.max-backoff (${o.maxBackoffMs} ms)`);
    check(Number.isFinite(o.backoffMultiplier) && o.backoffMultiplier > 1, `${key}.backoff-multiplier must be greater than 1, got ${o.backoffMultiplier}`);
    check(Number.isFinite(o.resetBackoffThresholdMs) && o.resetBackoffThresholdMs >= 1, `${key}.reset-backoff-threshold must be at least 1 ms, got ${o.resetBackoffThresholdMs}`);
    check(Number.isFinite(o.jitterFactor) && o.jitterFactor >= 0 && o.jitterFactor <= 1, `${key}.jitter-factor must be >= 0 and <= 1, got ${o.jitterFactor}`);
    check(Number.isInteger(o.attemptsBeforeResetBackoff) && o.attemptsBeforeResetBackoff >= 1, `${key}.attempts-before-reset-backoff must be an integer >= 1, got ${o.attemptsBeforeResetBackoff}`);
    this.options = { ...o };
    this.random = random;
  }

  notifyFailure(_cause: Error, nowMs: number): boolean {
    assertTimeMs(nowMs, this.lastFailureMs, 'exponential-delay');
    this.lastFailureMs = nowMs;
    // Failures before the scheduled restart belong to the attempt already under way.
    if (this.nextRestartMs !== undefined && nowMs <= this.nextRestartMs) return false;
    if (this.nextRestartMs === undefined || nowMs - this.nextRestartMs >= this.options.resetBackoffThresholdMs) {
      this.attempt = 0;
    }
    this.nextRestartMs = nowMs + this.actualBackoffMs();
    this.attempt++;
    return true;
  }

  canRestart(): boolean {
    return this.attempt <= this.options.attemptsBeforeResetBackoff;
  }

  getBackoffTimeMs(): number {
    if (this.nextRestartMs === undefined || this.lastFailureMs === undefined) {
      throw new Error('exponential-delay: getBackoffTimeMs() before notifyFailure()');
    }
    return Math.max(0, this.nextRestartMs - this.lastFailureMs);
  }

  describe(): string {
    const o = this.options;
    return (
      `exponential-delay(initialBackoffMs=${o.initialBackoffMs}, maxBackoffMs=${o.maxBackoffMs}, ` +
      `backoffMultiplier=${o.backoffMultiplier}, resetBackoffThresholdMs=${o.resetBackoffThresholdMs}, ` +
      `jitterFactor=${o.jitterFactor}, attemptsBeforeResetBackoff=${o.attemptsBeforeResetBackoff}, ` +
      `attempt=${this.attempt}, nextRestartMs=${this.nextRestartMs ?? 'none'})`
    );
  }

  givingUpReason(): string | undefined {
    if (this.canRestart()) return undefined;
    return `exponential-delay: ${this.options.attemptsBeforeResetBackoff} restart attempts exhausted without a backoff reset`;
  }

  /** Flink's calculateActualBackoffTime for the current attempt. */
  private actualBackoffMs(): number {
    const o = this.options;
    const raw = Math.trunc(o.initialBackoffMs * Math.pow(o.backoffMultiplier, this.attempt));
    // Java's (long) cast saturates; keep the arithmetic finite and exact.
    const currentMs = Number.isFinite(raw) ? Math.min(raw, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
    return Math.max(o.initialBackoffMs, Math.min(currentMs + this.jitterMs(currentMs), o.maxBackoffMs));
  }

  /** Uniform integer in [-offset, offset] with offset = trunc(current * jitterFactor). */
  private jitterMs(currentMs: number): number {
    if (this.options.jitterFactor === 0) return 0;
    const offsetMs = Math.trunc(currentMs * this.options.jitterFactor);
    const r = this.random();
    if (!(r >= 0 && r < 1)) throw new Error(`exponential-delay: random() must return a number in [0, 1), got ${r}`);
    return -offsetMs + Math.floor(r * (2 * offsetMs + 1));
  }
}

// ---------------------------------------------------------------------------------------------

const ALIASES: Readonly<Record<string, RestartStrategyName>> = {
  none: 'none',
  off: 'none',
  disable: 'none',
  'fixed-delay': 'fixed-delay',
  fixeddelay: 'fixed-delay',
  'failure-rate': 'failure-rate',
  failurerate: 'failure-rate',
  'exponential-delay': 'exponential-delay',
  exponentialdelay: 'exponential-delay',
};

/** Canonical name of a `restart-strategy.type` value (case-insensitive, Flink's aliases). */
export function parseRestartStrategyName(value: string): RestartStrategyName {
  const name = ALIASES[value.trim().toLowerCase()];
  if (name === undefined) {
    throw new ConfigError(`unknown restart strategy '${value}' for 'restart-strategy.type'; expected one of ${Object.keys(ALIASES).join(', ')}`);
  }
  return name;
}

const KEY_TYPE = 'restart-strategy.type';

/**
 * Flink's RestartBackoffTimeStrategyFactoryLoader: the configured `restart-strategy.type`, or
 * by default `none` without checkpointing and `exponential-delay` with checkpointing. As in
 * Flink, that default uses the exponential-delay option *defaults*: `restart-strategy.exponential-delay.*`
 * keys only apply when `restart-strategy.type` names the strategy. One strategy object per job.
 */
export function createRestartStrategy(config: Configuration, checkpointingEnabled: boolean, random: () => number): RestartBackoffTimeStrategy {
  const configured = config.has(KEY_TYPE) ? config.getString(KEY_TYPE) : undefined;
  if (configured === undefined) {
    return checkpointingEnabled ? new ExponentialDelayRestartStrategy(defaultExponentialDelayOptions(), random) : new NoRestartStrategy();
  }
  const name = parseRestartStrategyName(configured);
  switch (name) {
    case 'none':
      return new NoRestartStrategy();
    case 'fixed-delay':
      return new FixedDelayRestartStrategy({
        attempts: config.getNumber('restart-strategy.fixed-delay.attempts'),
        delayMs: config.getNumber('restart-strategy.fixed-delay.delay'),
      });
    case 'failure-rate':
      return new FailureRateRestartStrategy({
        maxFailuresPerInterval: config.getNumber('restart-strategy.failure-rate.max-failures-per-interval'),
        failureRateIntervalMs: config.getNumber('restart-strategy.failure-rate.failure-rate-interval'),
        delayMs: config.getNumber('restart-strategy.failure-rate.delay'),
      });
    case 'exponential-delay':
      return new ExponentialDelayRestartStrategy(exponentialDelayOptions(config), random);
  }
}

function exponentialDelayOptions(config: Configuration): ExponentialDelayOptions {
  const key = 'restart-strategy.exponential-delay';
  return {
    initialBackoffMs: config.getNumber(`${key}.initial-backoff`),
    maxBackoffMs: config.getNumber(`${key}.max-backoff`),
    backoffMultiplier: config.getNumber(`${key}.backoff-multiplier`),
    resetBackoffThresholdMs: config.getNumber(`${key}.reset-backoff-threshold`),
    jitterFactor: config.getNumber(`${key}.jitter-factor`),
    attemptsBeforeResetBackoff: config.getNumber(`${key}.attempts-before-reset-backoff`),
  };
}

/** The exponential-delay option defaults (Flink's RestartStrategyOptions, via options.ts). */
export function defaultExponentialDelayOptions(): ExponentialDelayOptions {
  return exponentialDelayOptions(new Configuration());
}

/**
 * The longest delay the configured restart strategy may wait before a restart (exponential
 * delay: its max backoff plus jitter); 0 for `none`. What a transaction that must survive a
 * restart has to outlast, together with the checkpoint timeout.
 */
export function maxRestartDelayMs(config: Configuration, checkpointingEnabled: boolean): number {
  const configured = config.has(KEY_TYPE) ? config.getString(KEY_TYPE) : undefined;
  const name = configured === undefined ? (checkpointingEnabled ? 'exponential-delay' : 'none') : parseRestartStrategyName(configured);
  switch (name) {
    case 'none':
      return 0;
    case 'fixed-delay':
      return config.getNumber('restart-strategy.fixed-delay.delay');
    case 'failure-rate':
      return config.getNumber('restart-strategy.failure-rate.delay');
    case 'exponential-delay': {
      const o = configured === undefined ? defaultExponentialDelayOptions() : exponentialDelayOptions(config);
      return Math.ceil(o.maxBackoffMs * (1 + o.jitterFactor));
    }
  }
}
