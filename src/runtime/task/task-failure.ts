/**
 * A subtask failed: the error its task fails with, naming the task (`numbers -> map (1/2)`)
 * as Flink's exception history does. `cause` is what the operator threw; its stack holds the
 * lines of the job's code.
 */
export class TaskFailure extends Error {
  constructor(
    readonly taskName: string,
    message: string,
    options: { readonly cause: Error },
  ) {
    super(message, options);
  }
}

/** The task named by the first TaskFailure in an error's cause chain. */
export function failedTaskName(e: Error): string | undefined {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 32; c = c.cause, depth++) {
    if (c instanceof TaskFailure) return c.taskName;
  }
  return undefined;
}
