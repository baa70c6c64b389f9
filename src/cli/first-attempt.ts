/**
 * What `sluice run --detached` tells about a job it submitted to a cluster. It returned as soon
 * as the JobManager took the job, so a job whose every attempt failed (a password its
 * TaskManagers did not have) looked submitted and fine while it restarted for ever. It now
 * waits, briefly, for the first attempt: every task running (or finished), or a failure. A
 * pure decision on the JobManager's GET /jobs/:id/result; the command polls it.
 */

/** GET /jobs/:id/result of a JobManager (`tasks`: of the current attempt; absent from older JobManagers). */
export interface JobResultView {
  readonly status: string;
  readonly numRestarts: number;
  readonly failure?: string | undefined;
  readonly tasks?: { readonly running: number; readonly finished: number; readonly total: number } | undefined;
  /** Set while the attempt waits for TaskManager slots (Sluice's `waiting-for-slots` of GET /jobs/:id). */
  readonly 'waiting-for-slots'?: { readonly required: number; readonly available: number } | null | undefined;
}

export type FirstAttempt =
  | { readonly kind: 'waiting' }
  /** Every task of the first attempt runs (or has finished already). */
  | { readonly kind: 'running'; readonly tasks: number }
  /** The first attempt waits for slots: it starts when TaskManagers with free slots join. */
  | { readonly kind: 'waiting-for-slots'; readonly required: number; readonly available: number }
  | { readonly kind: 'ended'; readonly status: 'FINISHED' | 'CANCELED' | 'SUSPENDED' }
  /** The job failed for good (a non-recoverable failure, or no restart allowed). */
  | { readonly kind: 'failed'; readonly cause: string }
  /** The first attempt failed; the job restarts as its strategy allows. */
  | { readonly kind: 'restarting'; readonly cause: string };

/** How long `sluice run --detached` waits for the first attempt before it says how to follow the job. */
export const FIRST_ATTEMPT_WAIT_MS = 30_000;

export function firstAttemptOutcome(r: JobResultView): FirstAttempt {
  if (r.status === 'FAILED') return { kind: 'failed', cause: r.failure ?? 'unknown cause' };
  if (r.status === 'FINISHED' || r.status === 'CANCELED' || r.status === 'SUSPENDED') return { kind: 'ended', status: r.status };
  // Failures are kept in the job's history: one seen while polling a restarted job is the first attempt's.
  if (r.failure !== undefined || r.numRestarts > 0) return { kind: 'restarting', cause: r.failure ?? 'unknown cause' };
  const slots = r['waiting-for-slots'];
  if (slots !== undefined && slots !== null) return { kind: 'waiting-for-slots', required: slots.required, available: slots.available };
  const t = r.tasks;
  if (r.status === 'RUNNING' && t !== undefined && t.total > 0 && t.running + t.finished === t.total) return { kind: 'running', tasks: t.total };
  return { kind: 'waiting' };
}

/** What `sluice run --detached` says about an outcome (lines without the last newline), and its exit code. `target`: the options that reach the JobManager (`--jobmanager host:port`, or '' for the default address). */
export function reportFirstAttempt(jobId: string, outcome: Exclude<FirstAttempt, { kind: 'waiting' }>, target: string): { text: string; exitCode: number } {
  switch (outcome.kind) {
    case 'running':
      return { text: `Job ${jobId} is running (${outcome.tasks} task${outcome.tasks === 1 ? '' : 's'})`, exitCode: 0 };
    case 'waiting-for-slots':
      return {
        text:
          `Job ${jobId} waits for ${outcome.required} slot${outcome.required === 1 ? '' : 's'} (${outcome.available} free): it starts when TaskManagers with free slots join ` +
          `(sluice taskmanager, or sluice cluster start --taskmanagers N); follow it with: ${command('info', target, jobId)}`,
        exitCode: 0,
      };
    case 'ended':
      return { text: `Job ${jobId} ${outcome.status.toLowerCase()}`, exitCode: outcome.status === 'SUSPENDED' ? 1 : 0 };
    case 'failed':
      return { text: `Job ${jobId} failed: ${outcome.cause}`, exitCode: 1 };
    case 'restarting':
      return {
        text:
          `Job ${jobId} failed in its first attempt: ${outcome.cause}\n` +
          `It restarts as its restart strategy allows; follow it with: ${command('info', target, jobId)}\n` +
          `or cancel it: ${command('cancel', target, jobId)}`,
        exitCode: 1,
      };
  }
}

/** What `sluice run --detached` says when the first attempt has not started running within FIRST_ATTEMPT_WAIT_MS. */
export function stillStarting(jobId: string, r: JobResultView | undefined, waitedMs: number, target: string): string {
  const where = r === undefined ? '' : ` (${r.status.toLowerCase()}${r.tasks === undefined || r.tasks.total === 0 ? '' : `, ${r.tasks.running} of ${r.tasks.total} tasks running`})`;
  return `Job ${jobId} is not running yet after ${Math.round(waitedMs / 1000)} s${where}; follow it with: ${command('info', target, jobId)}`;
}

/** `sluice <name> [target] <jobId>`. */
function command(name: string, target: string, jobId: string): string {
  return ['sluice', name, target, jobId].filter((w) => w !== '').join(' ');
}
