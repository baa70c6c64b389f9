/** Thrown when an internal invariant does not hold: a bug in Sluice, not in the job. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
}

/** Checks an internal invariant; the message says what must hold. */
export function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new InvariantError(`invariant violated: ${message}`);
}
