/**
 * The functions of map, filter, flatMap and process run synchronously: the runtime emits what
 * they collected when they return and does not wait for a promise. An `async` function would
 * have its records after an `await` dropped and its rejection lost (crashing the process), so a
 * promise where a function returns nothing (flatMap, process) or a record or a boolean (map,
 * filter) fails the subtask with a message that says what to use instead.
 */

/** `returned` is what a function that returns nothing returned; undefined, the fast path, passes. */
export function expectNothingReturned(returned: unknown, fn: string): void {
  if (returned !== undefined && isThenable(returned)) refuse(returned, fn);
}

/** A map function's result: a record, not a promise and not undefined. */
export function expectRecord(returned: unknown, fn: string): void {
  if (returned === undefined) {
    throw new Error(`the ${fn} returned undefined, which cannot be a record; return a value (a missing return statement?), or use flatMap to emit nothing for some inputs`);
  }
  if (returned instanceof Promise) refuse(returned, fn);
}

/** A filter function's result that is not a boolean: a promise is refused, anything else counts by its truth. */
export function expectCondition(returned: unknown, fn: string): void {
  if (isThenable(returned)) refuse(returned, fn);
}

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function refuse(returned: PromiseLike<unknown>, fn: string): never {
  // Its rejection, if it comes, is this error's business now, not an unhandled rejection.
  Promise.resolve(returned).catch(() => {});
  throw new Error(
    `the ${fn} returned a promise (an async function?): these functions run synchronously, the runtime does not wait for a promise, ` +
      'and records collected after an await would be lost. Do the asynchronous work with AsyncDataStream.orderedWait or unorderedWait, or make the function synchronous',
  );
}
