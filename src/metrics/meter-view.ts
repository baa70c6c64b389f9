/**
 * A rate per second of a cumulative count (records, milliseconds), averaged over the last
 * `windowMs`, as Flink's MeterView. Pure: the caller samples it with the time and the count.
 * A count that goes down (a restarted task counts from 0 again) starts a new window.
 */
export class MeterView {
  private readonly times: number[] = [];
  private readonly counts: number[] = [];

  constructor(private readonly windowMs: number) {
    if (!(windowMs > 0)) throw new RangeError(`a meter's window must be > 0 ms, got ${windowMs}`);
  }

  sample(nowMs: number, count: number): void {
    const last = this.times.length - 1;
    if (last >= 0 && nowMs < this.times[last]!) throw new Error(`meter sampled back in time: ${nowMs} < ${this.times[last]}`);
    if (last >= 0 && count < this.counts[last]!) {
      this.times.length = 0;
      this.counts.length = 0;
    }
    this.times.push(nowMs);
    this.counts.push(count);
    // Keep one sample at or before the window's start, so the rate spans the whole window.
    while (this.times.length > 2 && this.times[1]! <= nowMs - this.windowMs) {
      this.times.shift();
      this.counts.shift();
    }
  }

  /** Per second; 0 until two samples are apart in time. */
  rate(): number {
    const n = this.times.length;
    if (n < 2) return 0;
    const dtMs = this.times[n - 1]! - this.times[0]!;
    if (dtMs <= 0) return 0;
    return ((this.counts[n - 1]! - this.counts[0]!) * 1000) / dtMs;
  }
}
