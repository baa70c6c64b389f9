/** Time and delayed callbacks, injected so tests can drive them. */
export interface Clock {
  nowMs(): number;
  /** Runs `fn` after `delayMs`; returns a cancel function. */
  schedule(delayMs: number, fn: () => void): () => void;
}

/** The longest delay setTimeout takes; a longer one fires at once (with a TimeoutOverflowWarning). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Date.now and setTimeout, with two of setTimeout's surprises taken out: a callback never runs
 * before `nowMs()` reached its due time (setTimeout may fire a millisecond early by Date.now,
 * and a checkpoint timer that fired early saw its checkpoint not yet expired), and a delay
 * longer than MAX_TIMER_DELAY_MS (about 24.8 days) waits in steps instead of firing at once.
 */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  schedule(delayMs, fn) {
    const wait = Number.isNaN(delayMs) ? 0 : Math.max(0, delayMs);
    const dueMs = Date.now() + wait;
    let timer: NodeJS.Timeout;
    const check = (): void => {
      const leftMs = dueMs - Date.now();
      if (leftMs <= 0) fn();
      else timer = setTimeout(check, Math.min(leftMs, MAX_TIMER_DELAY_MS));
    };
    timer = setTimeout(check, Math.min(wait, MAX_TIMER_DELAY_MS));
    return () => clearTimeout(timer);
  },
};
