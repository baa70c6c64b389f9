import { hostname } from 'node:os';

/**
 * What this process is, for messages about what a connector found in its environment: a
 * connector runs where its subtask runs, which on a cluster is a TaskManager process started
 * long before the job was submitted, with its own environment variables, files and network.
 */
let role: string | undefined;

/** Said once by a process that is one TaskManager (`sluice taskmanager`): `TaskManager tm-1`. */
export function setProcessRole(description: string): void {
  role = description;
}

/** Whether this process said it is a TaskManager. */
export function isTaskManagerProcess(): boolean {
  return role !== undefined && role.startsWith('TaskManager');
}

/** `TaskManager tm-1 on host h (pid 123)`, or `this process on host h (pid 123)`. */
export function describeThisProcess(): string {
  return `${role ?? 'this process'} on host ${hostname()} (pid ${process.pid})`;
}
