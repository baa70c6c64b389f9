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
    let cancelCurrent: () => void = () => {};
    const cancel = (): void => {
      cancelCurrent();
      this.cancels.delete(cancel);
    };
    const arm = (): void => {
      cancelCurrent = this.clock.schedule(timestampMs - this.clock.nowMs(), () => {
        if (this.quiesced) return;
        // Timers may fire a little early by the wall clock: a timer never runs before its time.
        if (this.clock.nowMs() < timestampMs) {
          arm();
          return;
        }
        this.cancels.delete(cancel);
        // Quiesced while the mail waited (a synchronous savepoint ahead of it in the mailbox):
        // it must not run, or its output (a periodic watermark firing windows) would follow
        // the savepoint, and the resumed job would produce it again.
        this.enqueueMail(() => {
          if (!this.quiesced) callback(timestampMs);
        });
      });
    };
    arm();
    this.cancels.add(cancel);
    return cancel;
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

  /** Cancels every timer; no new ones run, nor those already waiting in the mailbox. */
  quiesce(): void {
    this.quiesced = true;
    for (const c of this.cancels) c();
    this.cancels.clear();
  }
}
