import type { JobVertex } from '../graph/job-graph.js';
import type { SlotRequest, TaskView } from '../runtime/deploy/deployer.js';
import type { TaskState } from '../runtime/task/task-state.js';

/**
 * What the REST API says about a job's and its subtasks' progress, in Flink's terms where
 * Flink has them (ExecutionState per subtask, a vertex's aggregate state, task counts per
 * state) and in Sluice's own fields where it has none (restarts, the last failure, the slots
 * a job waits for). Pure functions of the executor's facts.
 */

/** Flink's ExecutionState: a subtask's state in the REST API. */
export const EXECUTION_STATES = ['CREATED', 'SCHEDULED', 'DEPLOYING', 'RUNNING', 'FINISHED', 'CANCELING', 'CANCELED', 'FAILED', 'RECONCILING', 'INITIALIZING'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

/** A task that exists was deployed (or is being): Flink's DEPLOYING until it initializes. */
const OF_TASK_STATE: Readonly<Record<TaskState, ExecutionState>> = {
  created: 'DEPLOYING',
  initializing: 'INITIALIZING',
  running: 'RUNNING',
  finished: 'FINISHED',
  failed: 'FAILED',
  canceled: 'CANCELED',
};

/** What the executor knows about one vertex's subtasks. */
export interface VertexFacts {
  readonly vertex: JobVertex;
  /** The current attempt's tasks of this vertex (none before the first deployment). */
  readonly tasks: readonly TaskView[];
  /** The next attempt waits for slots: its subtasks are SCHEDULED, the tasks above are the last attempt's. */
  readonly waitingForSlots: boolean;
}

/** One subtask as the REST API shows it: its state and the records of its current attempt. */
export interface SubtaskStatus {
  readonly subtask: number;
  readonly state: ExecutionState;
  /** The task of the current attempt; undefined while the subtask is CREATED or SCHEDULED. */
  readonly task: TaskView | undefined;
}

/**
 * Each subtask of the vertex: SCHEDULED while the attempt waits for slots (the last
 * attempt's tasks and counts are not shown as if they ran), CREATED before the first
 * deployment, otherwise its task's state.
 */
export function subtaskStatuses(f: VertexFacts): SubtaskStatus[] {
  const out: SubtaskStatus[] = [];
  for (let i = 0; i < f.vertex.parallelism; i++) {
    const task = f.waitingForSlots ? undefined : f.tasks.find((t) => t.subtaskIndex === i);
    out.push({ subtask: i, state: task === undefined ? (f.waitingForSlots ? 'SCHEDULED' : 'CREATED') : OF_TASK_STATE[task.state], task });
  }
  return out;
}

/** Subtasks per state, every state present (Flink's `tasks` of a vertex, `status-counts`). */
export function countStates(states: readonly ExecutionState[]): Record<ExecutionState, number> {
  const counts = Object.fromEntries(EXECUTION_STATES.map((s) => [s, 0])) as Record<ExecutionState, number>;
  for (const s of states) counts[s]++;
  return counts;
}

/**
 * A vertex's state from its subtasks', as Flink's ExecutionJobVertex.getAggregateJobVertexState:
 * any failed, canceling, canceled, initializing or running subtask (in that order) decides;
 * all finished is FINISHED, some finished RUNNING; everything else (scheduled, deploying)
 * collapses into CREATED.
 */
export function aggregateVertexState(counts: Readonly<Record<ExecutionState, number>>, parallelism: number): ExecutionState {
  if (counts.FAILED > 0) return 'FAILED';
  if (counts.CANCELING > 0) return 'CANCELING';
  if (counts.CANCELED > 0) return 'CANCELED';
  if (counts.INITIALIZING > 0) return 'INITIALIZING';
  if (counts.RUNNING > 0) return 'RUNNING';
  if (counts.FINISHED > 0) return counts.FINISHED === parallelism ? 'FINISHED' : 'RUNNING';
  return 'CREATED';
}

/** Sluice's `waiting-for-slots` (Flink has no field for it): null when the job waits for none. */
export function waitingForSlotsJson(r: SlotRequest | undefined): Record<string, number> | null {
  if (r === undefined) return null;
  return { required: r.required, available: r.available, since: r.sinceMs, 'timeout-at': r.timeoutAtMs };
}

/** Sluice's `last-failure`: when and the first line of why the job last failed (all of it: /jobs/:id/exceptions); null if never. */
export function lastFailureJson(exceptions: readonly { timestampMs: number; message: string; taskName: string | undefined }[]): Record<string, unknown> | null {
  const last = exceptions.at(-1);
  if (last === undefined) return null;
  return { timestamp: last.timestampMs, message: last.message.split('\n', 1)[0]!, task: last.taskName ?? null };
}
