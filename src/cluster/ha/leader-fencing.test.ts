import { describe, expect, it } from 'vitest';
import { staleLeaderSession } from './leader-fencing.js';

describe('staleLeaderSession', () => {
  const trigger = (leaderSessionId?: string) => ({
    t: 'trigger' as const,
    jobId: 'j',
    attempt: 0,
    barrier: { kind: 'barrier' as const, checkpointId: 1, timestampMs: 0, options: { type: 'checkpoint' as const, unaligned: false, alignedCheckpointTimeoutMs: 0 } },
    ...(leaderSessionId === undefined ? {} : { leaderSessionId }),
  });

  it("ignores a fenced message of another leader session, and only that", () => {
    expect(staleLeaderSession(trigger('old'), 'new')).toBe('old');
    expect(staleLeaderSession(trigger('new'), 'new')).toBeUndefined();
    expect(staleLeaderSession({ t: 'start', jobId: 'j', attempt: 0, leaderSessionId: 'old' }, 'new')).toBe('old');
    expect(staleLeaderSession({ t: 'complete', jobId: 'j', attempt: 0, checkpointId: 1, final: false, leaderSessionId: 'old' }, 'new')).toBe('old');
  });

  it('does not fence without high availability: no session on the message, or none followed yet', () => {
    expect(staleLeaderSession(trigger(), 'new')).toBeUndefined();
    expect(staleLeaderSession(trigger('old'), undefined)).toBeUndefined();
    expect(staleLeaderSession({ t: 'heartbeat' }, 'new')).toBeUndefined();
  });
});
