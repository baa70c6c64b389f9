import type { Clock } from './clock.js';

/**
 * The time a task spends in one kind of wait (back-pressured by a full output channel, idle
 * for lack of input): periods that start and end, summed. Read for Flink's
 * backPressuredTimeMsPerSecond and idleTimeMsPerSecond.
 */
export class WaitTimer {
  private endedMs = 0;
  private sinceMs: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** A wait begins; a wait already running goes on. */
  start(): void {
    this.sinceMs ??= this.clock.nowMs();
  }

  /** The wait (if any) ends. */
  stop(): void {
    if (this.sinceMs === undefined) return;
    this.endedMs += Math.max(0, this.clock.nowMs() - this.sinceMs);
    this.sinceMs = undefined;
  }

  get waiting(): boolean {
    return this.sinceMs !== undefined;
  }

  /** Every wait so far, with the running one up to now unless `ended` (the task is over). */
  totalMs(ended = false): number {
    if (this.sinceMs === undefined || ended) return this.endedMs;
    return this.endedMs + Math.max(0, this.clock.nowMs() - this.sinceMs);
  }
}
