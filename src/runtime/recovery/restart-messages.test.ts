import { describe, expect, it } from 'vitest';
import { causeKey, formatDelay, RestartMessages, type RestartNotice } from './restart-messages.js';

/** RestartMessages' texts, checking that `repeated` says whether a text is a repetition. */
function messages(): { line(n: RestartNotice): string } {
  const m = new RestartMessages();
  return {
    line: (n) => {
      const { text, repeated } = m.line(n);
      expect(repeated).toBe(text.startsWith('failed again'));
      return text;
    },
  };
}

/** 2026-12-07 17:02:10 local time. */
const T0 = new Date(2026, 11, 7, 17, 2, 10).getTime();

describe('RestartMessages: a restart loop of one cause prints it once, then a count', () => {
  it('the first failure in full; the same cause again as a count since the first; another cause in full again', () => {
    const m = messages();
    const cause = (checkpoint: number, subtask: number): string =>
      `operator 'pg' in task pg (${subtask}/2) failed: PREPARE TRANSACTION 'job-${subtask}-${checkpoint}' failed: connection refused`;
    expect(m.line({ cause: cause(4, 1), atMs: T0, restart: 1, restartsMax: undefined, delayMs: 1000 })).toBe(`${cause(4, 1)}; restarting in 1 s (restart 1)`);
    expect(m.line({ cause: cause(5, 2), atMs: T0 + 2000, restart: 2, restartsMax: undefined, delayMs: 1500 })).toBe(
      'failed again with the same cause (2 times since 17:02:10); restarting in 1.5 s (restart 2)',
    );
    expect(m.line({ cause: cause(9, 1), atMs: T0 + 5000, restart: 3, restartsMax: undefined, delayMs: 4000 })).toBe(
      'failed again with the same cause (3 times since 17:02:10); restarting in 4 s (restart 3)',
    );
    expect(m.line({ cause: 'TaskManager tm-1a2b3c4d (pid 12, 127.0.0.1) was lost: no heartbeat', atMs: T0 + 9000, restart: 4, restartsMax: 10, delayMs: 250 })).toBe(
      'TaskManager tm-1a2b3c4d (pid 12, 127.0.0.1) was lost: no heartbeat; restarting in 250 ms (restart 4 of 10)',
    );
    // The first cause again, after another one: in full again, counted anew.
    expect(m.line({ cause: cause(10, 1), atMs: T0 + 12_000, restart: 5, restartsMax: 10, delayMs: 250 })).toBe(`${cause(10, 1)}; restarting in 250 ms (restart 5 of 10)`);
    expect(m.line({ cause: cause(11, 1), atMs: T0 + 13_000, restart: 6, restartsMax: 10, delayMs: 250 })).toMatch(/^failed again with the same cause \(2 times since 17:02:22\);/);
  });

  it('a first occurrence a day or more ago is shown with its date', () => {
    const m = messages();
    m.line({ cause: 'boom', atMs: T0, restart: 1, restartsMax: undefined, delayMs: 60_000 });
    expect(m.line({ cause: 'boom', atMs: T0 + 25 * 3600_000, restart: 2, restartsMax: undefined, delayMs: 60_000 })).toBe(
      'failed again with the same cause (2 times since 2026-12-07 17:02:10); restarting in 1 min (restart 2)',
    );
  });

  it('causeKey leaves out numbers and hexadecimal ids, not words', () => {
    expect(causeKey('job 3248ae7bdeadbeef01 on tm-3fa2b1c0 failed at 12')).toBe(causeKey('job 99aa00ffeeddccbb02 on tm-0000ffff failed at 7'));
    expect(causeKey('a deadbeefcafe word')).toBe('a deadbeefcafe word');
    expect(causeKey('table a failed')).not.toBe(causeKey('table b failed'));
  });

  it('formatDelay says a delay in words', () => {
    expect(formatDelay(0)).toBe('0 ms');
    expect(formatDelay(999)).toBe('999 ms');
    expect(formatDelay(1000)).toBe('1 s');
    expect(formatDelay(1549)).toBe('1.5 s');
    expect(formatDelay(12_400)).toBe('12 s');
    expect(formatDelay(60_000)).toBe('1 min');
    expect(formatDelay(125_000)).toBe('2 min 5 s');
  });
});
