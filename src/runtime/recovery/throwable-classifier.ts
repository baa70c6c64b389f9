import { declaresNonRecoverable, type ThrowableType } from './non-recoverable-error.js';

/** How deep a cause chain is searched (chains are short; a cycle must not hang the JobManager). */
const MAX_CAUSE_DEPTH = 32;

/**
 * Flink's ThrowableClassifier.findThrowableOfThrowableType for NonRecoverableError: the first
 * error in `e`'s cause chain (`e` itself first) that declares itself non-recoverable.
 */
export function findNonRecoverable(e: unknown): object | undefined {
  let c: unknown = e;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && c !== null && typeof c === 'object'; depth++) {
    if (declaresNonRecoverable(c)) return c;
    try {
      c = (c as { cause?: unknown }).cause;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The kind of a failure: NonRecoverableError when anything in its cause chain says so. */
export function classifyThrowable(e: unknown): ThrowableType {
  return findNonRecoverable(e) === undefined ? 'RecoverableError' : 'NonRecoverableError';
}
