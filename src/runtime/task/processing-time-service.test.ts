import { describe, expect, it } from 'vitest';
import type { Clock } from './clock.js';
import { ProcessingTimeService } from './processing-time-service.js';

/** A clock driven by the test: `advance` runs the callbacks that became due. */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    nowMs: () => now,
    schedule(delayMs, fn) {
      const t = { at: now + Math.max(0, delayMs), fn };
      timers.push(t);
      return () => {
        if (timers.includes(t)) timers.splice(timers.indexOf(t), 1);
      };
    },
    advance(ms) {
      now += ms;
      for (const t of timers.filter((x) => x.at <= now).sort((a, b) => a.at - b.at)) {
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
    },
  };
}

describe('ProcessingTimeService', () => {
  it('due timers go to the mailbox and run from there, in order', () => {
    const clock = manualClock();
    const mailbox: (() => void)[] = [];
    const pts = new ProcessingTimeService(clock, (m) => mailbox.push(m));
    const ran: number[] = [];
    pts.registerTimer(20, (t) => ran.push(t));
    pts.registerTimer(10, (t) => ran.push(t));
    clock.advance(25);
    expect(ran).toEqual([]);
    for (const m of mailbox.splice(0)) m();
    expect(ran).toEqual([10, 20]);
  });

  it('a timer already waiting in the mailbox does not run once the service is quiesced (a synchronous savepoint came first)', () => {
    // The periodic watermark's mail ran after the stop-with-savepoint barrier: it fired a
    // window after the savepoint, and the resumed job fired it again (test/stop-without-drain).
    const clock = manualClock();
    const mailbox: (() => void)[] = [];
    const pts = new ProcessingTimeService(clock, (m) => mailbox.push(m));
    const ran: number[] = [];
    pts.scheduleAtFixedRate(200, (t) => ran.push(t));
    pts.registerTimer(150, (t) => ran.push(t));
    clock.advance(200);
    expect(mailbox.length).toBe(2);
    pts.quiesce();
    for (const m of mailbox.splice(0)) m();
    clock.advance(1000);
    expect(mailbox).toEqual([]);
    expect(ran).toEqual([]);
  });
});
