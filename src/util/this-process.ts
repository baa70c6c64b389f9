import { hostname } from 'node:os';

/**
 * What this process is, for messages about what a connector found in its environment: a
 * connector runs where its subtask runs, which on a cluster is a TaskManager process started
 * long before the job was submitted, with its own environment variables, files and network.
 */
let taskManagerId: string | undefined;

/** Said once by a process that is one TaskManager (`sluice taskmanager`). */
export function markTaskManagerProcess(id: string): void {
  taskManagerId = id;
}

/** Whether this process is a TaskManager (`sluice taskmanager`, also those `sluice run` and `sluice cluster` start). */
export function isTaskManagerProcess(): boolean {
  return taskManagerId !== undefined;
}

/** `TaskManager tm-1 on host h (pid 123)`, or `this process on host h (pid 123)`. */
export function describeThisProcess(): string {
  return `${taskManagerId === undefined ? 'this process' : `TaskManager ${taskManagerId}`} on host ${hostname()} (pid ${process.pid})`;
}
