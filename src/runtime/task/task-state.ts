/** Lifecycle of a subtask; moves are declared here and asserted. */
export type TaskState = 'created' | 'initializing' | 'running' | 'finished' | 'failed' | 'canceled';

const allowed: Record<TaskState, readonly TaskState[]> = {
  created: ['initializing', 'failed', 'canceled'],
  initializing: ['running', 'failed', 'canceled'],
  running: ['finished', 'failed', 'canceled'],
  finished: [],
  failed: [],
  canceled: [],
};

export function assertTransition(from: TaskState, to: TaskState, what: string): void {
  if (!allowed[from].includes(to)) throw new Error(`illegal task state transition ${from} -> ${to} (${what})`);
}

export function isTerminal(s: TaskState): boolean {
  return s === 'finished' || s === 'failed' || s === 'canceled';
}
