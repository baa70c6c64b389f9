import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from './clock.js';

describe('systemClock', () => {
  afterEach(() => vi.useRealTimers());

  it('never runs a callback before its due time by nowMs, even when setTimeout fires early', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const fired: number[] = [];
    const start = Date.now();
    systemClock.schedule(100, () => fired.push(Date.now() - start));
    // setTimeout fires after its 100 ms, but Date.now says 2 ms are still to go (as when a
    // timer rounds down, or the clock stepped back).
    vi.setSystemTime(start - 2);
    vi.advanceTimersToNextTimer();
    expect(Date.now() - start).toBe(98);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(fired).toEqual([100]);
  });

  it('a delay longer than setTimeout takes (2^31 - 1 ms) waits, it does not fire at once', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let fired = false;
    const thirtyDaysMs = 30 * 24 * 3600 * 1000;
    systemClock.schedule(thirtyDaysMs, () => (fired = true));
    vi.advanceTimersByTime(2 ** 31);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(thirtyDaysMs - 2 ** 31 - 1);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(true);
  });

  it('cancel stops a long wait in any of its steps; NaN and negative delays run soon', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let fired = 0;
    const cancel = systemClock.schedule(2 ** 32, () => fired++);
    vi.advanceTimersByTime(2 ** 31);
    cancel();
    vi.advanceTimersByTime(2 ** 32);
    expect(fired).toBe(0);
    systemClock.schedule(Number.NaN, () => fired++);
    systemClock.schedule(-5, () => fired++);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(2);
  });
});
