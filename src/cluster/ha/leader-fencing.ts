import { FENCED_MESSAGES, type JobManagerMessage } from '../control-messages.js';

/**
 * Fencing on a TaskManager (pure): the leader session of a JobManager message that must be
 * ignored because it is not `expected` (the session of the leader the TaskManager follows),
 * else undefined. Only fenced messages (deploy, start, trigger, complete) carry a session; a
 * message without one (a JobManager without high availability), or a TaskManager that
 * follows no leader session yet, is not fenced.
 */
export function staleLeaderSession(m: JobManagerMessage, expected: string | undefined): string | undefined {
  if (!FENCED_MESSAGES.has(m.t)) return undefined;
  const session = (m as { readonly leaderSessionId?: string }).leaderSessionId;
  if (session === undefined || expected === undefined || session === expected) return undefined;
  return session;
}
