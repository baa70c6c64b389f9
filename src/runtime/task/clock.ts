/** Time and delayed callbacks, injected so tests can drive them. */
export interface Clock {
  nowMs(): number;
  /** Runs `fn` after `delayMs`; returns a cancel function. */
  schedule(delayMs: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  schedule(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(t);
  },
};
