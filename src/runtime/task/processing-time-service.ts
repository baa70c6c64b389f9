import type { Clock } from './clock.js';

/**
 * Processing-time timers of one subtask. A due timer does not run on its own: it is put in
 * the subtask's mailbox, so it runs between records, in order with everything else.
 */
export class ProcessingTimeService {
  private readonly cancels = new Set<() => void>();
  private quiesced = false;

  constructor(
    private readonly clock: Clock,
    private readonly enqueueMail: (mail: () => void) => void,
  ) {}

  nowMs(): number {
    return this.clock.nowMs();
  }

  registerTimer(timestampMs: number, callback: (timestampMs: number) => void): () => void {
    if (this.quiesced) return () => {};
    let cancel: (() => void) | undefined;
    const wrapped = (): void => {
      if (cancel) this.cancels.delete(cancel);
      if (!this.quiesced) this.enqueueMail(() => callback(timestampMs));
    };
    cancel = this.clock.schedule(timestampMs - this.clock.nowMs(), wrapped);
    const c = cancel;
    this.cancels.add(c);
    return () => {
      c();
      this.cancels.delete(c);
    };
  }

  /** Calls `callback` every `periodMs` until the service is quiesced. */
  scheduleAtFixedRate(periodMs: number, callback: (timestampMs: number) => void): void {
    const next = (at: number): void => {
      this.registerTimer(at, (t) => {
        callback(t);
        next(Math.max(at + periodMs, this.clock.nowMs()));
      });
    };
    next(this.clock.nowMs() + periodMs);
  }

  /** Cancels every timer; no new ones run. */
  quiesce(): void {
    this.quiesced = true;
    for (const c of this.cancels) c();
    this.cancels.clear();
  }
}
