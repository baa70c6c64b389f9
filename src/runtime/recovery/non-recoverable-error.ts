/**
 * Flink's ThrowableType, of the kinds Sluice tells apart: a `NonRecoverableError` anywhere in
 * a failure's cause chain fails the job at once, whatever the restart strategy (Flink's
 * `ThrowableType.NonRecoverableError`, e.g. `SuppressRestartsException`); anything else is
 * recoverable and restarts as the strategy allows.
 */
export type ThrowableType = 'NonRecoverableError' | 'RecoverableError';

/**
 * An error that a restart cannot fix: wrong configuration or credentials, a server that lacks
 * a feature the job needs, something missing that the job does not create. Thrown from a
 * task (or anywhere in the cause chain of its failure) it fails the job at once instead of
 * restarting it, in process and on a cluster. Job code may throw it, or wrap a caught error
 * with `nonRecoverable(e)`, to say "do not retry this".
 *
 * Any error class can say the same by declaring `throwableType = 'NonRecoverableError'` (as
 * Flink annotates exception classes with `@ThrowableAnnotation`); it is the property, not the
 * class, that is checked, so it also survives the trip from a TaskManager to the JobManager.
 */
export class NonRecoverableError extends Error {
  override name = 'NonRecoverableError';
  readonly throwableType: ThrowableType = 'NonRecoverableError';
}

/**
 * `cause` (any thrown value) as a NonRecoverableError with its message, keeping it as the
 * cause: `catch (e) { throw nonRecoverable(e); }` fails the job without restarts.
 */
export function nonRecoverable(cause: unknown): NonRecoverableError {
  let message: string;
  try {
    message = cause instanceof Error ? String(cause.message) : typeof cause === 'string' ? cause : String(cause);
  } catch {
    message = 'a value that cannot be shown was thrown';
  }
  return new NonRecoverableError(message, { cause });
}

/** Whether this one error (not its causes) declares itself non-recoverable. */
export function declaresNonRecoverable(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return false;
  try {
    return (e as { throwableType?: unknown }).throwableType === 'NonRecoverableError';
  } catch {
    return false; // a getter that throws
  }
}
