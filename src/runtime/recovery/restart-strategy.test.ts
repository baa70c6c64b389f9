import { describe, expect, it } from 'vitest';
import { ConfigError, Configuration } from '../../config/configuration.js';
import {
  createRestartStrategy,
  defaultExponentialDelayOptions,
  ExponentialDelayRestartStrategy,
  FailureRateRestartStrategy,
  FixedDelayRestartStrategy,
  INTEGER_MAX_VALUE,
  parseRestartStrategyName,
  type ExponentialDelayOptions,
  type RestartBackoffTimeStrategy,
} from './restart-strategy.js';

const boom = new Error('task failed');
/** random() that yields no jitter: floor(0.5 * (2o + 1)) - o = 0. */
const noJitter = (): number => 0.5;
const config = (entries: Record<string, string | number>): Configuration => new Configuration(Object.entries(entries));

/** Notifies a failure at each time and records what the scheduler would see. */
function drive(s: RestartBackoffTimeStrategy, timesMs: readonly number[]): { restart: boolean; backoffMs: number }[] {
  return timesMs.map((t) => {
    s.notifyFailure(boom, t);
    return { restart: s.canRestart(), backoffMs: s.getBackoffTimeMs() };
  });
}

function exponential(overrides: Partial<ExponentialDelayOptions>, random: () => number = noJitter): ExponentialDelayRestartStrategy {
  return new ExponentialDelayRestartStrategy({ ...defaultExponentialDelayOptions(), jitterFactor: 0, ...overrides }, random);
}

describe('createRestartStrategy defaults', () => {
  it('is none when checkpointing is off', () => {
    const s = createRestartStrategy(new Configuration(), false, noJitter);
    expect(s.name).toBe('none');
    expect(s.canRestart()).toBe(false);
    s.notifyFailure(boom, 0);
    expect(s.canRestart()).toBe(false);
    expect(s.givingUpReason()).toMatch(/^none: /);
  });

  it('is exponential-delay with Flink defaults when checkpointing is on', () => {
    const s = createRestartStrategy(new Configuration(), true, noJitter);
    expect(s.name).toBe('exponential-delay');
    expect(s.describe()).toContain('initialBackoffMs=1000, maxBackoffMs=60000, backoffMultiplier=1.5');
    expect(s.describe()).toContain('resetBackoffThresholdMs=3600000, jitterFactor=0.1');
    expect(s.describe()).toContain(`attemptsBeforeResetBackoff=${INTEGER_MAX_VALUE}`);
    // Failures right after each scheduled restart: 1000 * 1.5^n truncated, capped at 1 min.
    const seen: number[] = [];
    let t = 0;
    for (let i = 0; i < 13; i++) {
      s.notifyFailure(boom, t);
      expect(s.canRestart()).toBe(true);
      seen.push(s.getBackoffTimeMs());
      t += s.getBackoffTimeMs() + 1;
    }
    expect(seen).toEqual([1000, 1500, 2250, 3375, 5062, 7593, 11390, 17085, 25628, 38443, 57665, 60000, 60000]);
  });

  it('as in Flink, the default ignores exponential-delay keys unless the type is set', () => {
    const c = config({ 'restart-strategy.exponential-delay.max-backoff': '5 s' });
    expect(createRestartStrategy(c, true, noJitter).describe()).toContain('maxBackoffMs=60000');
    c.set('restart-strategy.type', 'exponential-delay');
    expect(createRestartStrategy(c, true, noJitter).describe()).toContain('maxBackoffMs=5000');
  });

  it('an explicit type wins over the checkpointing default', () => {
    expect(createRestartStrategy(config({ 'restart-strategy.type': 'none' }), true, noJitter).name).toBe('none');
    expect(createRestartStrategy(config({ 'restart-strategy.type': 'fixed-delay' }), false, noJitter).name).toBe('fixed-delay');
  });
});

describe('aliases', () => {
  it.each([
    ['none', 'none'],
    ['off', 'none'],
    ['disable', 'none'],
    ['fixed-delay', 'fixed-delay'],
    ['fixeddelay', 'fixed-delay'],
    ['FixedDelay', 'fixed-delay'],
    ['failure-rate', 'failure-rate'],
    ['failurerate', 'failure-rate'],
    ['exponential-delay', 'exponential-delay'],
    ['exponentialdelay', 'exponential-delay'],
    ['OFF', 'none'],
  ])('%s -> %s', (alias, name) => {
    expect(parseRestartStrategyName(alias)).toBe(name);
    expect(createRestartStrategy(config({ 'restart-strategy.type': alias }), false, noJitter).name).toBe(name);
  });

  it('rejects an unknown name', () => {
    expect(() => parseRestartStrategyName('sometimes')).toThrow(ConfigError);
    expect(() => config({ 'restart-strategy.type': 'sometimes' })).toThrow(ConfigError);
  });
});

describe('fixed-delay', () => {
  it('defaults: 1 attempt, 1 s delay', () => {
    const s = createRestartStrategy(config({ 'restart-strategy.type': 'fixed-delay' }), false, noJitter);
    expect(drive(s, [0, 5_000])).toEqual([
      { restart: true, backoffMs: 1000 },
      { restart: false, backoffMs: 1000 },
    ]);
    expect(s.givingUpReason()).toBe('fixed-delay: 1 restart attempts exhausted');
  });

  it('restarts `attempts` times with the configured delay, then gives up', () => {
    const s = createRestartStrategy(
      config({ 'restart-strategy.type': 'fixed-delay', 'restart-strategy.fixed-delay.attempts': 3, 'restart-strategy.fixed-delay.delay': '10 s' }),
      true,
      noJitter,
    );
    expect(s.givingUpReason()).toBeUndefined();
    expect(drive(s, [0, 1, 2, 3]).map((d) => d.restart)).toEqual([true, true, true, false]);
    expect(s.getBackoffTimeMs()).toBe(10_000);
    expect(s.givingUpReason()).toBe('fixed-delay: 3 restart attempts exhausted');
    expect(s.describe()).toBe('fixed-delay(attempts=3, delayMs=10000, failures=4)');
  });

  it('attempts 0 never restarts', () => {
    const s = new FixedDelayRestartStrategy({ attempts: 0, delayMs: 0 });
    expect(s.canRestart()).toBe(true);
    s.notifyFailure(boom, 0);
    expect(s.canRestart()).toBe(false);
  });
});

describe('failure-rate', () => {
  const rate = (max: number, intervalMs: number): FailureRateRestartStrategy =>
    new FailureRateRestartStrategy({ maxFailuresPerInterval: max, failureRateIntervalMs: intervalMs, delayMs: 5_000 });

  it('defaults: 1 failure per minute, 1 s delay; the window is strictly longer than the interval', () => {
    const at = (times: number[]): boolean[] => {
      const s = createRestartStrategy(config({ 'restart-strategy.type': 'failure-rate' }), false, noJitter);
      return drive(s, times).map((d) => d.restart);
    };
    expect(at([0])).toEqual([true]);
    expect(at([0, 60_000])).toEqual([true, false]);
    expect(at([0, 60_001])).toEqual([true, true]);
    const s = createRestartStrategy(config({ 'restart-strategy.type': 'failure-rate' }), false, noJitter);
    s.notifyFailure(boom, 0);
    expect(s.getBackoffTimeMs()).toBe(1000);
  });

  it.each([
    // max 2 per 60 s: the third failure decides by the distance to the oldest of the last three
    { times: [0, 10_000, 20_000], expected: [true, true, false] },
    { times: [0, 30_000, 60_000], expected: [true, true, false] },
    { times: [0, 30_000, 60_001], expected: [true, true, true] },
    // sliding: once 0 leaves the window, [30 s, 61 s, 100 s] spans 70 s > 60 s
    { times: [0, 30_000, 61_000, 100_000], expected: [true, true, true, true] },
    { times: [0, 30_000, 61_000, 90_000], expected: [true, true, true, false] },
    // recovers after a quiet period
    { times: [0, 1, 2, 200_000], expected: [true, true, false, true] },
  ])('max 2 / 60 s at $times', ({ times, expected }) => {
    expect(drive(rate(2, 60_000), times)).toEqual(expected.map((restart) => ({ restart, backoffMs: 5_000 })));
  });

  it('names the rate when giving up', () => {
    const s = rate(2, 60_000);
    drive(s, [0, 10_000, 20_000]);
    expect(s.givingUpReason()).toBe('failure-rate: 3 failures within 20000 ms exceed 2 per 60000 ms');
  });
});

describe('exponential-delay', () => {
  it('multiplies the delay (Flink testBackoffMultiplier: 4, 9, 21)', () => {
    const s = exponential({ initialBackoffMs: 4, maxBackoffMs: 300, backoffMultiplier: 2.3, resetBackoffThresholdMs: INTEGER_MAX_VALUE, attemptsBeforeResetBackoff: 10 });
    expect(drive(s, [0, 301, 602]).map((d) => d.backoffMs)).toEqual([4, 9, 21]);
  });

  it('caps at max-backoff', () => {
    const s = exponential({ initialBackoffMs: 1000, maxBackoffMs: 5000, backoffMultiplier: 3 });
    const delays: number[] = [];
    let t = 0;
    for (let i = 0; i < 5; i++) {
      s.notifyFailure(boom, t);
      delays.push(s.getBackoffTimeMs());
      t += s.getBackoffTimeMs() + 1;
    }
    expect(delays).toEqual([1000, 3000, 5000, 5000, 5000]);
  });

  it('resets to the initial backoff after reset-backoff-threshold without failure, measured from the scheduled restart', () => {
    const s = exponential({ initialBackoffMs: 1000, maxBackoffMs: 60_000, backoffMultiplier: 2, resetBackoffThresholdMs: 10_000 });
    expect(drive(s, [0, 2_000])).toEqual([
      { restart: true, backoffMs: 1000 }, // restart due at 1000
      { restart: true, backoffMs: 2000 }, // restart due at 4000
    ]);
    s.notifyFailure(boom, 4_000 + 9_999); // 9999 ms after the restart: no reset
    expect(s.getBackoffTimeMs()).toBe(4000); // due at 17999
    s.notifyFailure(boom, 17_999 + 10_000); // a full threshold after the restart: reset
    expect(s.getBackoffTimeMs()).toBe(1000);
  });

  it('merges failures that arrive before the scheduled restart into one attempt', () => {
    const s = exponential({ initialBackoffMs: 2, maxBackoffMs: 6, backoffMultiplier: 2, resetBackoffThresholdMs: 80, attemptsBeforeResetBackoff: 3 });
    expect(s.notifyFailure(boom, 0)).toBe(true);
    expect(s.getBackoffTimeMs()).toBe(2);
    expect(s.notifyFailure(boom, 0)).toBe(false);
    expect(s.notifyFailure(boom, 1)).toBe(false);
    expect(s.getBackoffTimeMs()).toBe(1); // still the restart at 2
    expect(s.notifyFailure(boom, 2)).toBe(false);
    expect(s.getBackoffTimeMs()).toBe(0);
    expect(s.notifyFailure(boom, 3)).toBe(true); // after the restart: attempt 2
    expect(s.getBackoffTimeMs()).toBe(4);
    expect(s.notifyFailure(boom, 8)).toBe(true); // attempt 3, capped at 6
    expect(s.getBackoffTimeMs()).toBe(6);
    expect(s.canRestart()).toBe(true);
    expect(s.notifyFailure(boom, 15)).toBe(true); // attempt 4 > 3
    expect(s.canRestart()).toBe(false);
    expect(s.givingUpReason()).toBe('exponential-delay: 3 restart attempts exhausted without a backoff reset');
  });

  it('attempts-before-reset-backoff: N+1 failures without reset give up (Flink testMaxAttempts)', () => {
    const s = exponential({ initialBackoffMs: 1, maxBackoffMs: 3, backoffMultiplier: 1.2, resetBackoffThresholdMs: 10, jitterFactor: 0.25, attemptsBeforeResetBackoff: 13 }, () => 0.3);
    let t = 0;
    for (let i = 0; i <= 13; i++) {
      expect(s.canRestart()).toBe(true);
      expect(s.notifyFailure(boom, t)).toBe(true);
      t += 4;
    }
    expect(s.canRestart()).toBe(false);
  });

  it('jitter draws uniformly from [-d*f, d*f] and stays within [initial, max] (Flink testJitter)', () => {
    const range = (failures: number, options: Partial<ExponentialDelayOptions>): number[] => {
      const seen = new Set<number>();
      for (let i = 0; i < 200; i++) {
        const s = exponential({ resetBackoffThresholdMs: INTEGER_MAX_VALUE, ...options }, () => i / 200);
        for (let f = 1; f <= failures; f++) s.notifyFailure(boom, f * 8);
        seen.add(s.getBackoffTimeMs());
      }
      return [...seen].sort((a, b) => a - b);
    };
    const jitter = { initialBackoffMs: 2, maxBackoffMs: 7, backoffMultiplier: 2, jitterFactor: 0.25 };
    expect(range(2, jitter)).toEqual([3, 4, 5]);
    expect(range(3, jitter)).toEqual([6, 7]);
    expect(range(4, jitter)).toEqual([7]);
    const full = { initialBackoffMs: 1, maxBackoffMs: 7, backoffMultiplier: 2, jitterFactor: 1 };
    expect(range(1, full)).toEqual([1, 2]);
    expect(range(2, full)).toEqual([1, 2, 3, 4]);
    expect(range(3, full)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('jitter with the default 0.1: random 0 gives -10 %, random near 1 gives +10 %, never below initial', () => {
    const low = createRestartStrategy(new Configuration(), true, () => 0);
    const high = createRestartStrategy(new Configuration(), true, () => 0.999_999);
    expect(drive(low, [0, 2_000]).map((d) => d.backoffMs)).toEqual([1000, 1350]);
    expect(drive(high, [0, 2_000]).map((d) => d.backoffMs)).toEqual([1100, 1650]);
  });

  it('getBackoffTimeMs before any failure is a programmer error', () => {
    expect(() => exponential({}).getBackoffTimeMs()).toThrow(/before notifyFailure/);
  });

  it('rejects a random() outside [0, 1)', () => {
    const s = exponential({ jitterFactor: 0.1 }, () => 1);
    expect(() => s.notifyFailure(boom, 0)).toThrow(/random/);
  });
});

describe('time and configuration errors', () => {
  it('time going backwards is a programmer error', () => {
    for (const s of [
      new FixedDelayRestartStrategy({ attempts: 3, delayMs: 0 }),
      new FailureRateRestartStrategy({ maxFailuresPerInterval: 3, failureRateIntervalMs: 10, delayMs: 0 }),
      exponential({}),
    ]) {
      s.notifyFailure(boom, 100);
      expect(() => s.notifyFailure(boom, 99)).toThrow(/backwards/);
    }
  });

  const exp = (entries: Record<string, string | number>): Configuration => config({ 'restart-strategy.type': 'exponential-delay', ...entries });
  it.each([
    ['initial above max', exp({ 'restart-strategy.exponential-delay.initial-backoff': '2 min' }), /cannot be higher/],
    ['initial 0', exp({ 'restart-strategy.exponential-delay.initial-backoff': 0 }), /initial-backoff must be at least 1/],
    ['multiplier 1', exp({ 'restart-strategy.exponential-delay.backoff-multiplier': 1 }), /greater than 1/],
    ['jitter above 1', exp({ 'restart-strategy.exponential-delay.jitter-factor': 1.5 }), /jitter-factor/],
    ['threshold 0', exp({ 'restart-strategy.exponential-delay.reset-backoff-threshold': 0 }), /reset-backoff-threshold/],
    ['failure-rate interval 0', config({ 'restart-strategy.type': 'failure-rate', 'restart-strategy.failure-rate.failure-rate-interval': 0 }), /failure-rate-interval/],
  ])('%s', (_what, c, message) => {
    expect(() => createRestartStrategy(c, true, noJitter)).toThrow(ConfigError);
    expect(() => createRestartStrategy(c, true, noJitter)).toThrow(message);
  });

  it('values the configuration itself rejects', () => {
    expect(() => config({ 'restart-strategy.fixed-delay.attempts': -1 })).toThrow(ConfigError);
    expect(() => config({ 'restart-strategy.failure-rate.max-failures-per-interval': 0 })).toThrow(ConfigError);
    expect(() => config({ 'restart-strategy.exponential-delay.attempts-before-reset-backoff': 0 })).toThrow(ConfigError);
    expect(() => config({ 'restart-strategy.fixed-delay.delay': 'soon' })).toThrow(ConfigError);
  });
});
