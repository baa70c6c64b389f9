import { describe, expect, it } from 'vitest';
import type { JobVertex } from '../graph/job-graph.js';
import type { TaskView } from '../runtime/deploy/deployer.js';
import type { TaskState } from '../runtime/task/task-state.js';
import { aggregateVertexState, countStates, lastFailureJson, subtaskStatuses, waitingForSlotsJson, type ExecutionState } from './job-status-json.js';

const vertex = { id: 0, name: 'numbers', parallelism: 2 } as unknown as JobVertex;
const task = (subtaskIndex: number, state: TaskState): TaskView => ({ vertex, subtaskIndex, state }) as unknown as TaskView;
const aggregate = (...states: ExecutionState[]): ExecutionState => aggregateVertexState(countStates(states), states.length);

describe('job status in Flink terms', () => {
  it('subtasks: CREATED before the first deployment, SCHEDULED while waiting for slots (not the last attempt\'s tasks), else their task\'s state', () => {
    expect(subtaskStatuses({ vertex, tasks: [], waitingForSlots: false }).map((s) => s.state)).toEqual(['CREATED', 'CREATED']);
    const lastAttempt = [task(0, 'failed'), task(1, 'canceled')];
    const waiting = subtaskStatuses({ vertex, tasks: lastAttempt, waitingForSlots: true });
    expect(waiting.map((s) => s.state)).toEqual(['SCHEDULED', 'SCHEDULED']);
    expect(waiting.map((s) => s.task)).toEqual([undefined, undefined]);
    expect(subtaskStatuses({ vertex, tasks: lastAttempt, waitingForSlots: false }).map((s) => s.state)).toEqual(['FAILED', 'CANCELED']);
    expect(subtaskStatuses({ vertex, tasks: [task(1, 'running'), task(0, 'created')], waitingForSlots: false }).map((s) => s.state)).toEqual(['DEPLOYING', 'RUNNING']);
  });

  it('a vertex aggregates its subtasks as Flink does', () => {
    expect(aggregate('SCHEDULED', 'SCHEDULED')).toBe('CREATED');
    expect(aggregate('DEPLOYING', 'SCHEDULED')).toBe('CREATED');
    expect(aggregate('RUNNING', 'DEPLOYING')).toBe('RUNNING');
    expect(aggregate('RUNNING', 'INITIALIZING')).toBe('INITIALIZING');
    expect(aggregate('FINISHED', 'RUNNING')).toBe('RUNNING');
    expect(aggregate('FINISHED', 'SCHEDULED')).toBe('RUNNING');
    expect(aggregate('FINISHED', 'FINISHED')).toBe('FINISHED');
    expect(aggregate('CANCELED', 'RUNNING')).toBe('CANCELED');
    expect(aggregate('CANCELED', 'FAILED')).toBe('FAILED');
  });

  it('Sluice\'s fields: the slots waited for, the last failure\'s first line; null when none', () => {
    expect(waitingForSlotsJson(undefined)).toBeNull();
    expect(waitingForSlotsJson({ required: 2, available: 1, sinceMs: 10, timeoutAtMs: 300_010 })).toEqual({ required: 2, available: 1, since: 10, 'timeout-at': 300_010 });
    expect(lastFailureJson([])).toBeNull();
    expect(
      lastFailureJson([
        { timestampMs: 1, message: 'old', taskName: undefined },
        { timestampMs: 2, message: 'boom\n  more', taskName: 'numbers (1/2)' },
      ]),
    ).toEqual({ timestamp: 2, message: 'boom', task: 'numbers (1/2)' });
  });
});
